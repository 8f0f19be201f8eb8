/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* peer.h: the overlay's peer table (data only, no reactions).
 *
 * One entry per graph neighbour, plus substitute links made by
 * self-healing, sorted by rank so lookups bisect.  Each peer carries its
 * connection facts (endpoint, key, incarnation, who connects), its state,
 * counters for overlay-status, and its backlog: messages that wait for a
 * connection or for room in the transport's queue.
 *
 * Changing a peer's state here only records it; what follows from it
 * (rerouting, readiness, fencing) is decided by the parts above
 * (live.c, and the coordinator in overlay.c).
 */
#ifndef BGN_OVERLAY_PEER_H
#define BGN_OVERLAY_PEER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "envelope.h"
#include "frame.h"
#include "sigbudget.h"

enum peer_state {
    PEER_CONNECTING = 0,   /* no hello yet */
    PEER_UP,
    PEER_SUSPECT,          /* silent for a few keepalive intervals */
    PEER_DOWN,
};

const char *peer_state_str (int state);

/* A message waiting for a peer: its envelope and body frames (owned). */
struct pending {
    struct pending *next;
    struct envelope env;
    double queued;           /* when it was queued */
    size_t cost;             /* heap it holds, set by backlog_push */
    int nframes;
    struct frame *frames[];
};

struct backlog {
    struct pending *head, *tail;
    int count;
    size_t bytes;            /* heap its messages hold (pending_cost) */
};

/* Each part's facts about a peer, in a struct marked with the part that
 * writes them (t/scripts/layout.py rule 11): another part reads them or
 * asks the owner (hello_link_lost, live_heard, ...).  peer.c, which
 * creates a peer, gives them their first values. */
struct peer_hello {          /* hello.c: admission */
    uint64_t incarnation;    /* from its hello */
    char hostname[64];
    char version[64];        /* the bgn it runs, from its hello; "" unknown */
    bool refused;            /* it refused our hello: stop saying it */
    uint32_t seq;            /* highest event seq it knew of */
    uint64_t view;           /* the fence digest in its hello */
    double backoff;          /* hello retries, doubling */
    bool link_broken;        /* we connect: the transport said our
                                connection closed, and not yet that it
                                is back (no hello would get through) */
    bool queued;             /* we connect: a hello was queued on the
                                new connection before its handshake, so
                                the handshake need not trigger another */
    double redial_at;        /* next time to redial a stuck link */
    double redial_backoff;
};

struct peer_live {           /* live.c: keepalives, RTT, goodbyes */
    double last_heard;
    double rtt_us;           /* -1: not measured yet */
    double rtt_at;           /* when rtt_us was measured */
    double ka_sent_at;       /* keepalive awaiting echo, for RTT */
    bool leaving;            /* said goodbye: its down is orderly */
};

struct peer_route {          /* route.c: what was sent to it */
    uint64_t tx_msgs, tx_bytes, reroutes, backlog_drops;
    double last_sent;
    bool unreachable;        /* a send failed with EHOSTUNREACH */
};

struct peer_rx {             /* overlay.c: what came from it */
    uint64_t rx_msgs, rx_bytes, ttl_drops;
};

struct peer_moved {          /* moved.c */
    double sent;             /* it dials us: when we last told it where
                                we listen */
    double reread_at;        /* we dial it: when we last asked the
                                bootstrap where it listens */
    double reread_backoff;
};

struct peer_fence {          /* fence.c */
    double told;             /* when we last told it it is fenced */
    int view_mismatch;       /* keepalives in a row with another digest */
    double view_sent;        /* when we last sent it our view */
};

struct peer_livesig {        /* livesig.c */
    struct sigbudget sigs;   /* live-record signatures that failed from
                                this link */
};

struct fencepower {          /* suspect.c: its fences refuted */
    uint32_t refuted;        /* within SUSPECT_WINDOW of each other */
    double last;
    double ban, until;       /* the last back-off's length, its end */
    uint64_t total;
};

/* The top level is peer.c's: who the peer is and how to reach it, set at
 * creation or by peer.c's functions (peer_set_contact, peer_substitute,
 * peer_set_problem, peers_set_state). */
struct peer {
    uint32_t rank;
    char id[16];             /* routing id: the rank in decimal */
    bool connector;          /* this broker connects to it */
    int state;
    double state_since;
    char endpoint[256];
    char pubkey[41];
    struct backlog backlog;
    bool substitute;         /* a self-healing link, not a graph edge */
    int sub_for;             /* substitute: the lost neighbour it stands
                                in for (-1 if it connected to us) */
    char problem[160];       /* why the link is not up, in words (a refused
                                CURVE handshake, say); "" if none known;
                                cleared when it comes up */
    struct peer_hello hello;
    struct peer_live live;
    struct peer_route route;
    struct peer_rx rx;
    struct peer_moved moved;
    struct peer_fence fence;
    struct peer_livesig livesig;
    struct fencepower fencepower;
};

struct peers {
    struct peer **v;         /* sorted by rank */
    uint32_t *ranks;         /* v[i]->rank, for a lookup that stays in one
                                cache line or two */
    int n;
    int up;                  /* peers UP or SUSPECT */
    bool changed;            /* a state changed since peers_changed() */
    bool unreachable;        /* some peer has unreachable set */
};

static inline bool peer_is_up (const struct peer *p)
{
    return p->state == PEER_UP || p->state == PEER_SUSPECT;
}

/* A table of the neighbours ranks[0..n-1] (sorted, as libbgn gives them)
 * of 'self'.  For each edge the lower rank connects.  NULL/ENOMEM. */
struct peers *peers_create (uint32_t self, const uint32_t *ranks, int n,
                            double now);
/* Frees the peers and whatever their backlogs hold. */
void peers_destroy (struct peers **psp);

struct peer *peers_lookup (const struct peers *ps, uint32_t rank);
/* The peer whose routing id is exactly the canonical decimal form of its
 * rank ("1", never "01" or "1 "), or NULL. */
struct peer *peers_lookup_id (const struct peers *ps, const void *id,
                              size_t len);

/* Add a peer for rank (a substitute link), keeping the order; returns
 * the existing one if present.  NULL/ENOMEM. */
struct peer *peers_insert (struct peers *ps, uint32_t self, uint32_t rank,
                           double now);
/* Take the peer for rank out of the table; the caller owns it and must
 * empty its backlog and peer_destroy() it.  NULL if absent. */
struct peer *peers_detach (struct peers *ps, uint32_t rank);
void peer_destroy (struct peer **pp);

/* Record a new state.  Returns the old one.  Keeps ps->up and marks the
 * table changed when the state differs. */
int peers_set_state (struct peers *ps, struct peer *p, int state,
                     double now);

/* peer.c's facts that others learn: where it listens and its key (NULL:
 * unchanged), that it is a substitute link (for the lost neighbour
 * sub_for, or -1), why its link is not up (printf-like), and the start
 * of its state's clock again. */
void peer_set_contact (struct peer *p, const char *endpoint,
                       const char *pubkey);
void peer_substitute (struct peer *p, bool connector, int sub_for);
void peer_set_problem (struct peer *p, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));
void peer_reset_since (struct peer *p, double now);

/* Report and clear the changed mark. */
bool peers_changed (struct peers *ps);

/* Backlog: append (takes 'pd'), take the oldest (caller owns it). */
/* Heap a pending message holds: its allocation and its frames'
 * (frame_footprint; a frame shared with a store counts in both). */
size_t pending_cost (const struct pending *pd);
void backlog_push (struct backlog *bl, struct pending *pd);
struct pending *backlog_pop (struct backlog *bl);
static inline struct pending *backlog_first (const struct backlog *bl)
{
    return bl->head;
}
/* A pending entry with room for n frames; frames are NULL.  ENOMEM. */
struct pending *pending_create (const struct envelope *env, int n,
                                double now);
/* Frees it and drops its frames (NULL-safe). */
void pending_destroy (struct pending **pdp);

#endif
