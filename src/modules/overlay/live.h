/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* live.h: peer liveness.
 *
 * Every keepalive interval a broker sends a keepalive to each live peer
 * it has not sent anything to lately (any traffic counts as one) and
 * looks at when it last heard from each: silent for three intervals is
 * "suspect", silent for the peer timeout is lost, and a lost peer is
 * fenced.  The peer answers a keepalive with an echo, which measures the
 * round-trip time.  A broker that itself did not run for a while
 * (SIGSTOP, a stalled machine) does not blame its peers for the silence.
 *
 * Peer state changes go through live_set_state, which also moves what
 * waits in backlogs (to the peer now up, or around the peer now down).
 */
#ifndef BGN_OVERLAY_LIVE_H
#define BGN_OVERLAY_LIVE_H

#include <stdbool.h>
#include <stdint.h>

#include "envelope.h"
#include "frame.h"

struct overlay;
struct peer;

struct live_state {             /* live.c */
    bool self_doubt;            /* many peers silent at once */
    uint64_t self_doubts;       /* times many peers fell silent at once:
                                   this broker doubted itself */
    uint64_t never_joined;      /* peers that never said hello in time */
};

void live_set_state (struct overlay *ov, struct peer *p, int state);

/* p is gone (why: for the log and the fence): down, and fenced. */
/* It was heard from now; it said goodbye (its loss is orderly). */
void live_heard (struct peer *p, double now);
void live_goodbye (struct peer *p);

void live_peer_lost (struct overlay *ov, struct peer *p, const char *why);

/* Peers whose sends failed with EHOSTUNREACH are lost. */
void live_check_unreachable (struct overlay *ov);

/* Did this broker itself not run for a while (longer than half the peer
 * timeout since its last tick: SIGSTOP, a stalled machine)?  If so its
 * peers' silence is its own doing: their clocks start again, and the
 * caller takes a new incarnation before it reads anything (what was sent
 * to the old one may have been failed already).  Call at every entry. */
bool live_stalled (struct overlay *ov, double now);

/* Fence peers that have not said hello since the overlay started, after
 * overlay.join_timeout (default three peer timeouts). */
void live_never_joined (struct overlay *ov, double now);

/* Keepalives, suspect and lost; call every half keepalive interval. */
void live_tick (struct overlay *ov, double now);

/* A keepalive (or its echo) from p, with its fence digest. */
void live_keepalive (struct overlay *ov, struct peer *p,
                     const struct envelope *env, struct frame *const *body,
                     int n);

#endif
