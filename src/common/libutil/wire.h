/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* wire.h: integers in network order (big-endian), read from and written
 * to byte buffers: the one copy for every binary format of the project
 * (libmsg's message proto frame, packed frame lists and event batches,
 * the overlay's envelope and fence records).  Inline, no state, no
 * alignment needed. */
#ifndef BGN_LIBUTIL_WIRE_H
#define BGN_LIBUTIL_WIRE_H

#include <stdint.h>

static inline void wire_put16 (uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static inline uint16_t wire_get16 (const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

static inline void wire_put32 (uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static inline uint32_t wire_get32 (const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8
           | p[3];
}

static inline void wire_put64 (uint8_t *p, uint64_t v)
{
    wire_put32 (p, (uint32_t)(v >> 32));
    wire_put32 (p + 4, (uint32_t)v);
}

static inline uint64_t wire_get64 (const uint8_t *p)
{
    return (uint64_t)wire_get32 (p) << 32 | wire_get32 (p + 4);
}

#endif
