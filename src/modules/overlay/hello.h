/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* hello.h: admission of peers.
 *
 * The connecting side of each link says HELLO (protocol version, rank,
 * instance, incarnation, hostname, topology, last event seq); the other
 * side checks it and answers HELLO_ACK with its own hello, or HELLO_NAK
 * with a reason.  A hello from an incarnation that is fenced (or older
 * than one known live) is refused with "fenced": that broker must come
 * back as a new incarnation (hello_rejoin), so nothing it sent before it
 * was fenced is taken for current.  An accepted hello brings the peer up,
 * tells it the fence view, and lifts any fence of its new incarnation
 * everywhere.
 */
#ifndef BGN_OVERLAY_HELLO_H
#define BGN_OVERLAY_HELLO_H

#include <stdint.h>

#include "envelope.h"
#include "frame.h"

struct overlay;
struct peer;
struct ovtimer;

struct hello_state {            /* hello.c */
    double rejoined_at;         /* last rejoin, for its back-off */
    double rejoin_backoff;      /* the back-off now */
    uint64_t rejoin_floor;      /* the highest fenced incarnation of ours
                                   a HELLO_NAK named */
    struct ovtimer *rejoin;     /* a delayed rejoin */
    uint64_t redials;           /* links dialled again */
    uint64_t stale_drops;       /* messages of, or for, an incarnation
                                   that is not the admitted one */
};

int hello_init (struct overlay *ov);
void hello_fini (struct overlay *ov);

/* Say hello to p (send errors are retried by hello_retry). */
void hello_send (struct overlay *ov, struct peer *p);

/* A HELLO, HELLO_ACK or HELLO_NAK from p.  key_problem: why the
 * connection's CURVE key does not fit the rank it claims, or NULL. */
/* A hello queued on a new connection before its handshake: it goes
 * first, and the handshake need not send another. */
void hello_send_first (struct overlay *ov, struct peer *p);
/* Its incarnation is inc now (it refuted its fence with it). */
void hello_adopt (struct peer *p, uint64_t inc);
/* We dial p: the transport said our connection closed. */
void hello_link_lost (struct peer *p);
/* We dial p at a new endpoint (moved.c): now, afresh. */
void hello_redial (struct overlay *ov, struct peer *p);

/* A message from or for another incarnation than admitted, dropped. */
void hello_count_stale (struct overlay *ov);

void hello_recv (struct overlay *ov, struct peer *p,
                 const struct envelope *env, struct frame *const *body,
                 int n, const char *key_problem);

/* This broker was fenced while alive (it was stopped, or cut off for a
 * while): start over as a new incarnation, above its own and above any
 * fenced one a peer named, so everyone lets it back in.  Rejoins that
 * come too fast are spaced out (0.1 s, doubling to 10 s). */
void hello_rejoin (struct overlay *ov, const char *why);

/* After a stall: rejoin now, whatever the back-off. */
void hello_rejoin_stalled (struct overlay *ov);
/* When this broker last rejoined (0: never). */
double hello_rejoined_at (struct overlay *ov);

/* Peers we connect to that are down but no longer fenced: greet them. */
void hello_neighbours_back (struct overlay *ov);

/* Say hello again to peers we connect to that have not answered (the
 * first hello may have reached a broker that was not listening yet), at
 * doubling intervals from 2 s to a minute -- never to a down peer whose
 * connection the transport said is broken (it says when it is back); dial
 * again links that were refused, at doubling intervals from 1 s to a
 * minute. */
void hello_retry (struct overlay *ov, double now);

/* The transport finished a handshake on our connection to endpoint. */
void hello_connected (struct overlay *ov, const char *endpoint);

/* The transport gave up on our connection to endpoint (its handshake
 * failed: the key refused, say): dial it again later.  'why' (in words)
 * becomes the peer's problem, shown by overlay-status until it is up. */
void hello_handshake_failed (struct overlay *ov, const char *endpoint,
                             const char *why);

#endif
