/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* fluxmsg.h: bgn's broker messages and Flux's, one into the other.
 *
 * Both follow the same framing (Flux RFC 3: topic, payload, a 20-byte
 * proto header with type, flags, userid, rolemask, nodeid / errnum /
 * seq, matchtag), and the flag and role bits have the same values, so a
 * message crosses field by field.  Routes are not copied: each side
 * keeps its own route stack, and the Flux host (fluxhost.c) keeps the
 * mapping between them.
 *
 * bgn carries JSON text payloads only (its messages are checked as
 * such on every hop).  fluxmsg_to_bgn refuses a Flux message whose
 * payload is not a JSON object with EPROTO rather than mangle it;
 * fluxmsg_to_bgn_any carries any payload, wrapping what is not a JSON
 * object (Flux's content blobs, its text answers) as the object
 * {FLUXMSG_WRAP_KEY: Z85 text, "bgn.len": bytes}; fluxmsg_from_bgn and
 * fluxmsg_set_payload unwrap it (EPROTO if the wrapper is malformed).
 *
 * Ownership: the result is new and the caller's; NULL with errno
 * (EPROTO: a payload bgn cannot carry or a message type it does not
 * have; ENOMEM).
 */
#ifndef BGN_FLUX_FLUXMSG_H
#define BGN_FLUX_FLUXMSG_H

#include <flux/core.h>

#include "src/common/libmsg/message.h"

#define FLUXMSG_WRAP_KEY "bgn.z85"

flux_msg_t *fluxmsg_from_bgn (const msg_t *msg);
msg_t *fluxmsg_to_bgn (const flux_msg_t *fmsg);
msg_t *fluxmsg_to_bgn_any (const flux_msg_t *fmsg);
/* Bytes as a wrapped payload of msg (any bytes, a NUL inside too), and
 * back: fluxmsg_unwrap returns the bytes of wrapper text[0..len) with
 * *size set (the caller frees them), NULL if it is not a well-formed
 * wrapper.  -1 with errno / NULL. */
int fluxmsg_wrap (msg_t *msg, const void *buf, size_t size);
void *fluxmsg_unwrap (const char *text, size_t len, size_t *size);
/* Set f's payload from bgn payload text[0..len) (NULL/0: none),
 * unwrapping a wrapped one.  0, or -1 with errno. */
int fluxmsg_set_payload (flux_msg_t *f, const char *text, size_t len);

#endif
