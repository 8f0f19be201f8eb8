/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* body.h: what travels between two peers, as one frame.
 *
 * Every overlay message is one wire frame (one ZeroMQ frame, so CURVE
 * encrypts it once per hop):
 *
 *     [envelope, ENV_SIZE bytes][packed frame list (libmsg/packed.h)]
 *
 * For ENV_DATA the list is the broker message's frames as libmsg encodes
 * them ([route...][delimiter][topic][payload][proto]); for the overlay's
 * own kinds it is their body (none, or one frame of JSON or records).
 *
 * A broker message is packed once, at its origin, into a frame with room
 * left for the envelope; every hop writes its envelope into that room
 * and sends the same frame on (an intermediate broker never looks past
 * the envelope); the destination decodes it once.  Control messages are
 * packed as they are sent, and their bodies come out of a received frame
 * as slices of it (no copies).
 */
#ifndef BGN_OVERLAY_BODY_H
#define BGN_OVERLAY_BODY_H

#include <stddef.h>
#include <stdint.h>

#include "src/common/libmsg/message.h"
#include "frame.h"

/* msg's wire frame: ENV_SIZE bytes of room (zeroed) for the envelope,
 * then msg's frames packed.  NULL with errno EINVAL (msg does not
 * encode) or ENOMEM. */
struct frame *body_encode (msg_t *msg);

/* Decode the broker message in wire frame w (borrowed; the envelope is
 * not looked at).  NULL with errno EPROTO and, if errbuf is given, a
 * one-line reason when malformed (the packing or the message). */
msg_t *body_decode (const struct frame *w, char *errbuf, size_t errlen);

/* The same for the first len bytes of w (a signed request: what comes
 * before its signature block, ovsign.h). */
msg_t *body_decode_len (const struct frame *w, size_t len, char *errbuf,
                        size_t errlen);

/* A new wire frame: env (ENV_SIZE bytes, or NULL for zeroes) then
 * frames[0..n-1] (borrowed) packed.  NULL with errno E2BIG (n above
 * PACKED_MAX_FRAMES), EMSGSIZE or ENOMEM. */
struct frame *body_pack (const uint8_t *env, struct frame *const *frames,
                         int n);

/* The frames packed in wire frame w, as new frames[0..n-1] that point
 * into w's bytes and each hold a reference to w (dropped with
 * frame_decref).  Returns n (at most max), or -1 with errno EPROTO or
 * E2BIG and a static reason in *why (packed_read); nothing is left
 * allocated. */
int body_unpack (struct frame *w, struct frame **frames, int max,
                 const char **why);

#endif
