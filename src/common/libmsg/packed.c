/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* packed.c: frame lists packed into one buffer (see packed.h).
 *
 * Reading checks the count against the caller's bound before it looks
 * at any frame, and each length against the bytes still unread, so a
 * hostile count or length can neither overrun the buffer nor the
 * caller's array.
 */
#include <errno.h>
#include <string.h>

#include "src/common/libutil/wire.h"
#include "packed.h"

size_t packed_size (const struct msg_frame *frames, size_t n)
{
    size_t bytes = PACKED_HDR;

    for (size_t i = 0; i < n; i++)
        bytes += PACKED_HDR + frames[i].size;
    return bytes;
}

long packed_write (void *buf, size_t len, const struct msg_frame *frames,
                   size_t n)
{
    uint8_t *p = buf;
    size_t need;

    if (n > PACKED_MAX_FRAMES) {
        errno = E2BIG;
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        if ((uint64_t)frames[i].size > UINT32_MAX) {
            errno = EMSGSIZE;
            return -1;
        }
    }
    if ((need = packed_size (frames, n)) > len) {
        errno = ENOSPC;
        return -1;
    }
    wire_put32 (p, (uint32_t)n);
    p += PACKED_HDR;
    for (size_t i = 0; i < n; i++) {
        wire_put32 (p, (uint32_t)frames[i].size);
        p += PACKED_HDR;
        if (frames[i].size)
            memcpy (p, frames[i].data, frames[i].size);
        p += frames[i].size;
    }
    return (long)need;
}

static int fail (int errnum, const char *reason, const char **why)
{
    if (why)
        *why = reason;
    errno = errnum;
    return -1;
}

int packed_read (const void *buf, size_t len, struct msg_frame *frames,
                 size_t max, const char **why)
{
    const uint8_t *p = buf;
    size_t left = len;
    uint32_t count;

    if (left < PACKED_HDR)
        return fail (EPROTO, "packed frame list: count cut short", why);
    count = wire_get32 (p);
    p += PACKED_HDR;
    left -= PACKED_HDR;
    if (count > max)
        return fail (E2BIG, "packed frame list: too many frames", why);
    for (uint32_t i = 0; i < count; i++) {
        uint32_t size;
        if (left < PACKED_HDR)
            return fail (EPROTO, "packed frame list: length cut short", why);
        size = wire_get32 (p);
        p += PACKED_HDR;
        left -= PACKED_HDR;
        if (size > left)
            return fail (EPROTO, "packed frame list: a frame runs past "
                         "the end", why);
        frames[i].data = p;
        frames[i].size = size;
        p += size;
        left -= size;
    }
    if (left > 0)
        return fail (EPROTO, "packed frame list: trailing bytes", why);
    return (int)count;
}
