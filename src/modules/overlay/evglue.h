/* evglue.h: the event layer (events.c) carried over the overlay.
 *
 * events.c is pure logic with an ops table; this file is that table:
 * events and event-layer control messages travel as ENV_EVENT and
 * ENV_EVCTL envelopes routed like any message (a tree child that is not
 * a neighbour any more is reached through the live graph), "down" means
 * fenced, delivery goes to the broker's subscribers, and repairs ask the
 * tree parent first, then other live peers.
 */
#ifndef BGN_OVERLAY_EVGLUE_H
#define BGN_OVERLAY_EVGLUE_H

#include "envelope.h"
#include "frame.h"

struct overlay;
struct peer;

/* Make ov->events. */
int evglue_init (struct overlay *ov);
void evglue_fini (struct overlay *ov);

/* An ENV_EVENT or ENV_EVCTL from peer p: for us, or routed on. */
void evglue_recv (struct overlay *ov, struct peer *p, struct envelope *env,
                  struct frame **body, int n);

#endif
