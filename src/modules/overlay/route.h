/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* route.h: moving messages one hop on.
 *
 * Next hop from libbgn's router over the live graph, a fixed pick among
 * equal-cost hops (one flow keeps one path, so it stays in order), a
 * detour through the live neighbour nearest the target when every
 * shortest hop's link is down here, per-peer backlogs for peers that are
 * connecting or whose queue is full, and the one TTL step every message
 * takes as it leaves a broker.  Sending fills in the per-hop incarnations,
 * counts, and shows the message to overlay.trace.
 *
 * A send that finds a peer's connection gone (EHOSTUNREACH) only marks
 * the peer unreachable; the coordinator deals with it once the current
 * entry point is done (never in the middle of a send).
 */
#ifndef BGN_OVERLAY_ROUTE_H
#define BGN_OVERLAY_ROUTE_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>

#include "envelope.h"
#include "frame.h"
#include "peer.h"

struct overlay;
struct ovtimer;

/* route.c's counters, in overlay.status's "counters" under these names:
 * messages dropped (no hops left, no way to their rank, not decodable),
 * passed on, backlogs full or too old, responses held for a fenced rank
 * that expired or found no room. */
#define ROUTE_COUNTS(X) X (ttl_drops) X (no_route_drops) \
    X (malformed_drops) X (forwarded) X (backlog_overflows) \
    X (backlog_expired) X (held_expired) X (held_drops)
#define ROUTE_COUNT_ENUM(name) RC_##name,
enum route_count { ROUTE_COUNTS (ROUTE_COUNT_ENUM) RC_COUNT };

struct route_state {            /* route.c */
    struct ovtimer *retry;        /* backlogs waiting for a peer */
    struct backlog held;          /* responses to ranks fenced here */
    size_t waiting;               /* the tracker's requests waiting for a
                                     rejoin: overlay.held_bytes bounds
                                     them with held (route_set_waiting) */
    uint64_t count[RC_COUNT];     /* enum route_count */
};

int route_init (struct overlay *ov);
void route_fini (struct overlay *ov);

/* The TTL step of a message leaving this broker, at its origin and at
 * every hop: -1 if it has no hops left (it must be dropped), else one
 * hop less to go and one more made. */
int route_ttl_step (struct envelope *env);

/* Count n of 'c' (for the parts that drop a message for route.c's
 * reasons, pass one on or find one malformed); the count now. */
uint64_t route_count (struct overlay *ov, enum route_count c, uint64_t n);

/* Whether a send to p failed with EHOSTUNREACH since last asked. */
bool route_take_unreachable (struct peer *p);

/* Send to p now: [env][frames], env's incarnations set for this hop
 * (sender: ours; receiver: p's, or 'receiver_inc' for _inc).  Frames
 * taken on success; -1 with EAGAIN or EHOSTUNREACH leaves them. */
int route_send_now (struct overlay *ov, struct peer *p, struct envelope *env,
                    struct frame **frames, int n);

/* A control message (hello, fence, ...) of 'kind' with JSON body o (may
 * be NULL) to p now, TTL 1.  -1 with errno if it could not be sent;
 * callers count or retry. */
int route_send_control (struct overlay *ov, struct peer *p, int kind,
                        json_t *o);
int route_send_control_inc (struct overlay *ov, struct peer *p, int kind,
                            json_t *o, uint64_t receiver_inc);

/* A control message whose body is one frame (taken on success) to p
 * now, TTL 1, addressed to p's incarnation receiver_inc. */
int route_send_control_frame (struct overlay *ov, struct peer *p, int kind,
                              struct frame **f, uint64_t receiver_inc);

/* A request waiting in a backlog for too long, or that cannot go on:
 * answer it with errnum (true).  Other messages are left alone (false):
 * the caller drops them. */
bool route_fail_request (struct overlay *ov, struct frame **body, int n,
                         int errnum, const char *errstr);

/* A control message (a fence view, an event frame) passing through for
 * another rank: one TTL step (ttl_drops when it runs out), then onward
 * from the peer 'from' (forwarded), or route_drop.  0 if it went on;
 * the frames are left with the caller either way. */
int route_pass_on (struct overlay *ov, struct envelope *env,
                   struct frame **frames, int n, int from);

/* A message that cannot go on (route_out failed with errnum): counted
 * (no_route_drops); a request is answered with EHOSTUNREACH or ENOBUFS,
 * anything else logged (rate-limited).  Frames are left with the
 * caller. */
void route_drop (struct overlay *ov, const struct envelope *env,
                 struct frame **body, int n, int errnum);

/* Heap every backlog holds (overlay.backlog_bytes bounds it: past it
 * route_out fails with ENOBUFS). */
size_t route_backlog_bytes (struct overlay *ov);
/* Heap the responses held for a rank's rejoin hold (overlay.held_bytes
 * bounds it: route_hold). */
size_t route_held_bytes (struct overlay *ov);
/* The bytes of the requests the tracker keeps waiting for a rejoin: the
 * same bound covers them and the held responses (the tracker tells each
 * change). */
void route_set_waiting (struct overlay *ov, size_t bytes);

/* Fail what waited in a backlog longer than the peer timeout. */
void route_expire (struct overlay *ov, double now);

/* Equal-cost next hops toward dest (rotated so [0] is the preferred
 * one), 0 if dest is this broker, -1/EHOSTUNREACH if unreachable.  The
 * arithmetic's hops less the down ranks (libbgn's bgn_router_route), or,
 * with *live set on entry, live shortest paths; *live is set when the
 * arithmetic had no live hop left and the search answered instead. */
int route_next_hops (struct overlay *ov, uint32_t dest, uint32_t *hops,
                     int max, bool *live);

/* Move [env][frames] one hop toward env->dest (NODEID_ANY/UPSTREAM:
 * toward rank 0), never back to 'from' on a detour (-1: none).  env's
 * TTL step is the caller's.  0: sent or queued, frames taken.  -1 with
 * errno, frames left with the caller: EHOSTUNREACH (no route), ENOBUFS
 * (backlog full), EINVAL (the destination is this broker). */
int route_out (struct overlay *ov, struct envelope *env,
               struct frame **frames, int n, int from);

/* route_out for a message passing through: a response for a rank fenced
 * here is held for its unfence instead (route_hold).  A rank that
 * rejoined is admitted by its neighbours and rank 0 learns it at once,
 * but the unfence reaches the other brokers later (the fence tree), so
 * the answer to its first requests can reach a broker that still has it
 * fenced; a rank really down stays fenced, and the response expires.  A
 * request is held only if its origin waited for the rank's rejoin
 * (ENV_FLAG_WAITED: the origin has it up, so the news is on its way
 * here), for overlay.rejoin_wait, then answered "did not run"; any other
 * request fails at once (route_out): its origin may report it failed
 * meanwhile (the rank's fence reaching it), and it must not run after
 * that.  Returns as route_out (ENOBUFS also when too much is held). */
int route_forward (struct overlay *ov, struct envelope *env,
                   struct frame **frames, int n, int from);

/* Send what waits in backlogs of peers that can take it; what waits for
 * a peer that is down goes another way (it was never sent, so this
 * cannot duplicate it). */
void route_flush (struct overlay *ov);

/* A response to a rank fenced here waits for its unfence, a while: a rank
 * that rejoined may send requests that overtake the news of its rejoin
 * (the unfence travels a tree, the request the shortest path), and the
 * responses can reach brokers the news has not.  Frames are taken (0),
 * or left with the caller (-1, ENOBUFS: overlay.held_bytes reached,
 * counted as held_drops and logged, rate-limited).  After a peer timeout
 * the response is dropped (held_expired, logged). */
int route_hold (struct overlay *ov, const struct envelope *env,
                struct frame **frames, int n);
/* rank was unfenced: send what was held for it. */
void route_release (struct overlay *ov, uint32_t rank);

/* rank was fenced: drop the requests for it that wait in backlogs (a
 * link still connecting, a full queue), counted in no_route_drops.  Their
 * origins report them failed on the same news (the tracker), so sent on
 * later, after a heal or a rejoin, they would run after their client was
 * told they failed.  Nothing is answered from here. */
void route_purge_requests (struct overlay *ov, uint32_t rank);

/* p is leaving the table: route what waits for it another way. */
void route_requeue (struct overlay *ov, struct peer *p);

/* Messages waiting in all backlogs. */
int route_backlog_total (struct overlay *ov);

#endif
