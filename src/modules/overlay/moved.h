/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* moved.h: a restarted broker's new endpoint reaches the peers that dial
 * it.
 *
 * For every graph edge the lower rank connects, to the endpoint it read
 * from the bootstrap once, at start.  A broker restarted with a bind that
 * picks a new port (tcp://HOST:*) listens somewhere else; the bootstrap
 * exchange is over, so its lower neighbours would dial the old address
 * for ever.  So a broker tells each neighbour that dials it and has not
 * come up, through the overlay (routed by the peers that are up), where
 * it listens: the request overlay.moved {"rank", "endpoint"}.  The
 * receiver believes it only about the rank that sent it (the rank on its
 * route stack), and only for a neighbour it dials itself; it then dials
 * the new endpoint (with the key it already has for that rank, so a lie
 * relayed by another broker reaches nobody under CURVE, and the next
 * true message puts it right).
 */
/* That needs a link up at the moved broker.  One all of whose neighbours
 * dial it (rank N-1 of a bgn topology, every leaf of a tree) has none
 * after a restart: so the diallers also ask the bootstrap again
 * (io->peer_endpoint) where a neighbour they dial listens, when it has
 * been away for REREAD_AFTER seconds, then at growing intervals
 * (REREAD_MIN doubling to REREAD_MAX), and at once (at most every
 * second) when news of its rejoin arrives from elsewhere.
 */
#ifndef BGN_OVERLAY_MOVED_H
#define BGN_OVERLAY_MOVED_H

#include "src/common/libmsg/message.h"

struct overlay;
struct bgn_msg_info;

struct moved_state {            /* moved.c */
    uint64_t refused;           /* overlay.moved not the rank's own word */
    uint64_t endpoint_rereads;  /* dialled peers' endpoints asked again */
};

/* Seconds a neighbour that dials us may stay away before we tell it
 * where we listen, and between two tellings. */
#define MOVED_AFTER 2.0
#define MOVED_EVERY 5.0
#define REREAD_AFTER 4.0
#define REREAD_MIN 5.0
#define REREAD_MAX 60.0

/* On the overlay's tick: tell the neighbours that dial us and are not up
 * (nor fenced) where we listen, at most every MOVED_EVERY. */
void moved_tick (struct overlay *ov, double now);

/* News that neighbours we dial are live again (a fence lifted): ask
 * the bootstrap where those whose link is still down listen now. */
void moved_neighbours_back (struct overlay *ov);

/* An overlay.moved request: re-dial the sender at its new endpoint.
 * Believed only as the sender's own word: the rank on its route stack,
 * and where that rank has a signing key, signed by it (ovsign.h). */
void moved_request (struct overlay *ov, const msg_t *req,
                    const struct bgn_msg_info *info);

#endif
