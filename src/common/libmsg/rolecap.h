/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* rolecap.h: the role a request keeps when it arrives from another broker.
 *
 * A request that crossed the overlay carries the role its origin wrote:
 * a claim.  Every host of the overlay (bgn-broker's dispatch, bgn.so and
 * bgn-overlay.so under Flux) grants it by this one rule.  The owner role
 * stays only if the request's route stack names, on top, the rank the
 * overlay says sent it, and either
 *   - its topic is one of the protocol's broker-to-broker methods (each
 *     checks its caller by a rule of its own), or
 *   - that rank is an admin rank here and the request is its own word:
 *     signed by it end to end (checked by the overlay), or, where the
 *     rank has no signing key, handed over by the rank itself on its own
 *     link rather than relayed by another peer.
 * Otherwise the request becomes a guest's (MSG_ROLE_USER).
 *
 * The protocol's methods of the overlay's core (ready, contact, gather,
 * moved) are named here once; each host adds its own under its service
 * name (the broker's "overlay.", Flux's "bgn.").
 *
 * Pure: no I/O, no allocation.
 */
#ifndef BGN_LIBMSG_ROLECAP_H
#define BGN_LIBMSG_ROLECAP_H

#include <stdbool.h>
#include <stdint.h>

#include "message.h"

/* Who the overlay says sent a request, and how sure it is. */
struct rolecap_origin {
    uint32_t rank;
    int signed_by_origin;   /* 1: signed by it and checked; 0: it has no
                               signing key; -1: it has one and this
                               request is not validly signed by it */
    bool unverified;        /* another peer handed the request over */
    bool admin;             /* rank is one of this broker's admin ranks */
};

/* Apply the rule to 'req' ('peer_method': its topic is a protocol method
 * that checks its caller).  Returns true if the owner role was taken
 * away (the request is now a guest's), false if it had none or keeps it. */
bool rolecap_apply (msg_t *req, const struct rolecap_origin *origin,
                    bool peer_method);

/* The method part of 'topic' if it is "SERVICE.method", else NULL. */
const char *rolecap_method (const char *topic, const char *service);

/* Is 'method' one the core's peers call on each other (under the host's
 * service name)?  These keep any broker's owner role. */
bool rolecap_core_method (const char *method);

/* Does the core's peer 'method' look at its origin's signature, so that
 * the origin must sign it (ready, moved)? */
bool rolecap_core_signed (const char *method);

#endif
