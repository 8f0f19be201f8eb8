/* body.h: the broker message carried after the envelope, as frames.
 *
 * Between peers a broker message travels as the frames libmsg encodes
 * ([route...][delimiter][topic][payload][proto]).  Intermediate brokers
 * never look at them; only a destination (or a broker that must look at
 * a service-addressed request) decodes them.
 */
#ifndef BGN_OVERLAY_BODY_H
#define BGN_OVERLAY_BODY_H

#include <stddef.h>

#include "src/common/libmsg/message.h"
#include "frame.h"

/* Encode msg into new frames[0..n-1] (n returned, at most max).  -1 with
 * EINVAL (too many frames) or ENOMEM; nothing is left allocated. */
int body_encode (msg_t *msg, struct frame **frames, int max);

/* Decode frames[0..n-1] (borrowed).  NULL with errno EPROTO and, if
 * errbuf is given, a one-line reason when malformed or longer than
 * MSG_MAX_FRAMES. */
msg_t *body_decode (struct frame *const *frames, int n, char *errbuf,
                    size_t errlen);

/* Total bytes in frames[0..n-1]. */
size_t body_size (struct frame *const *frames, int n);

#endif
