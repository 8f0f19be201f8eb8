/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* evglue.h: the event layer (events.c) carried over the overlay.
 *
 * events.c is pure logic with an ops table; this file is that table:
 * events and event-layer control messages travel as ENV_EVENT and
 * ENV_EVCTL envelopes routed like any message (a tree child that is not
 * a neighbour any more is reached through the live graph), "down" means
 * fenced, "congested" means the next hop's transport queue is full,
 * delivery goes to the broker's subscribers a batch at a time, repairs
 * ask the tree parent first, then other live peers, and a publisher's
 * request is answered with its seq once its batch has left rank 0.
 */
#ifndef BGN_OVERLAY_EVGLUE_H
#define BGN_OVERLAY_EVGLUE_H

#include "src/common/libmsg/message.h"
#include "envelope.h"
#include "frame.h"

struct overlay;
struct peer;
struct ovtimer;

struct evglue_state {           /* evglue.c */
    struct ovtimer *flush;      /* rank 0's event batching window */
};

/* Make ov->events. */
int evglue_init (struct overlay *ov);
void evglue_fini (struct overlay *ov);

/* Rank 0: publish events[0..n-1] (taken, set to NULL) and answer req
 * (borrowed; copied) with {"seq": FIRST, "count": n} once they have
 * left.  All or none: -1 with errno (EAGAIN: not ready or the queue is
 * full), nothing published or answered. */
int evglue_publish (struct overlay *ov, msg_t **events, int n,
                    const msg_t *req);

/* An ENV_EVENT or ENV_EVCTL from peer p: for us, or routed on. */
void evglue_recv (struct overlay *ov, struct peer *p, struct envelope *env,
                  struct frame **body, int n);

#endif
