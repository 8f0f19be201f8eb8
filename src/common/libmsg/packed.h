/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* packed.h: a list of frames packed into one buffer.
 *
 * The overlay sends each message between brokers as one ZeroMQ frame
 * (CURVE then encrypts once per hop, not once per part): its 32-byte
 * envelope followed by the message's frames in this form.  All integers
 * are unsigned 32-bit, network byte order:
 *
 *     count                      0 .. PACKED_MAX_FRAMES
 *     count times: length, then 'length' bytes
 *
 * and nothing after the last frame.  The codec is pure (no I/O, no
 * allocation, no state): packed_read is a trust boundary, since its
 * input comes off the network, and never reads outside the buffer it is
 * given.
 */
#ifndef BGN_LIBMSG_PACKED_H
#define BGN_LIBMSG_PACKED_H

#include <stddef.h>
#include <stdint.h>

#include "message.h"

/* Frames in one packed list: a broker message's most (its routes, the
 * delimiter, topic, payload and proto). */
#define PACKED_MAX_FRAMES MSG_MAX_FRAMES

/* Bytes of the count and of each length. */
#define PACKED_HDR 4

/* Bytes the packed form of frames[0..n-1] takes. */
size_t packed_size (const struct msg_frame *frames, size_t n);

/* Write the packed form of frames[0..n-1] at buf (room for len bytes).
 * Returns the bytes written (packed_size), or -1 with errno E2BIG (n
 * above PACKED_MAX_FRAMES), EMSGSIZE (a frame of 2^32 bytes or more) or
 * ENOSPC (len too small); nothing useful is written on failure. */
long packed_write (void *buf, size_t len, const struct msg_frame *frames,
                   size_t n);

/* Read the packed list in buf[0..len): frames[i] point into buf
 * (borrowed: valid while buf is).  Returns the count (at most max, which
 * should be PACKED_MAX_FRAMES), or -1 with errno and, if why is given, a
 * static one-line reason:
 *   EPROTO  truncated (a count or length cut short, a frame longer than
 *           the bytes left) or trailing bytes after the last frame;
 *   E2BIG   a count above max.
 */
int packed_read (const void *buf, size_t len, struct msg_frame *frames,
                 size_t max, const char **why);

#endif
