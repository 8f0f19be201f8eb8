/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* fence.h: who is down, as this broker sees it, and how that spreads.
 *
 * The view is one record per rank ever heard of: its latest known
 * incarnation, fenced (down) or live.  Records only move forward: a
 * record replaces another if its incarnation is newer, or equal and
 * fenced where the other is live, so any two views merge into the same
 * one whatever order the records came in.  The router's down set is the
 * fenced records.
 *
 * How a change spreads (doc/overlay-protocol.md, "Fencing"), with about
 * two messages per broker per batch of changes, however many:
 *  - up: a broker that learns something new (a neighbour lost, a
 *    neighbour back as a new incarnation, a view from a peer) reports it,
 *    after a short window that gathers more, to its parent in the binomial
 *    tree rooted at the fence root (the lowest rank not fenced, rank 0
 *    while it lives), skipping fenced ancestors.  Each broker merges what
 *    its children report into its own report.
 *  - down: the root applies what reaches it and multicasts one batch down
 *    its tree (around fenced children, as events do); brokers forward the
 *    batch frame they received as it is.
 *  - repair: keepalives carry a digest of the view; two brokers whose
 *    digests keep differing send each other their views.  This covers
 *    batches lost with a broker that died on the way.
 * A broker also reports its own new incarnation when it rejoins.
 *
 * What a change does below this layer (routing, the tracker, backlogs,
 * rank 0's membership events) happens here; what it
 * means above (rejoin, readiness, greeting a neighbour that came back) is
 * reported in the returned flags.
 *
 * The partition check that reads this view is partition.c's.
 */
#ifndef BGN_OVERLAY_FENCE_H
#define BGN_OVERLAY_FENCE_H

#include <stdbool.h>
#include <stdint.h>

#include "envelope.h"
#include "fenceview.h"
#include "frame.h"

struct overlay;
struct peer;
struct idmap;
struct ovtimer;

struct fence_state {            /* fence.c */
    uint64_t seen;              /* fences applied here */
    uint64_t bad_records;       /* refused: rank or incarnation out of range */
    uint64_t false_claims;      /* records of us at an incarnation we never had */
    uint32_t via;               /* the peer whose records are being applied
                                   (fence_recv), or UINT32_MAX */
    int via_kind;               /* ... and the kind they came in */
    uint64_t batches;           /* multicast from here as the root */
    uint64_t views_sent;        /* repairs: whole views to a peer */
    struct idmap *outbox;       /* ranks to report up */
    struct idmap *batch;        /* ranks to multicast down (the root) */
    struct ovtimer *report;       /* the report window */
    struct ovtimer *mcast;        /* the batch window */
    bool changed;               /* news since the last settle */
    uint64_t claimed;           /* the highest incarnation of ours a
                                   record falsely named: rejoin above it */
    uint64_t life;              /* the incarnation this broker started or
                                   last rejoined with: its refutations
                                   since then are the same life */
    uint64_t refutations;       /* fences of this broker it refuted */
    void (*fenced_cb) (struct overlay *ov, uint32_t rank, uint64_t inc);
                                /* the coordinator's reaction to a rank
                                   fenced here (fence_on_fenced) */
};

/* Incarnations are microseconds since 1970 at a process's start (or one
 * more than a fenced one): anything at or past 2^53 is garbage. */
#define FENCE_INC_MAX (1ULL << 53)

/* Who says what about an incarnation (doc/overlay-protocol.md 2.3):
 *  - a rank's own word: its HELLO over its own link, a record of itself
 *    sent over its own link, or a live record it signed (ovsign.h; the
 *    signature travels with the record, fencemsg.h);
 *  - anyone else's word: every other record.
 * A fence is believed on anyone's word (suspicion is cheap: a rank that
 * lives proves it by rejoining above it).  A live record that would lift
 * a fence or name an incarnation newer than the one known here is
 * believed only on the rank's own word -- where the rank has a signing
 * key; a rank without one (a static bootstrap names none) is believed
 * on anyone's word, as before keys existed, and the docs say so. */

/* How far ahead of this broker's wall clock an incarnation may be.  Any
 * broker may relay a record, so a record's incarnation is a claim: one
 * that no broker could have taken yet is refused, or a peer could name
 * an incarnation its subject can never beat and keep it out for good.
 * Three nested bounds, so that what a broker accepts, the subject can
 * always follow, and what the subject then takes, every broker accepts
 * (with clocks up to FENCE_INC_AHEAD apart: a year, so that clocks hours
 * apart, or a broker restarted with its clock set back, still agree):
 *   a record on anyone's word (a fence)    < wall clock + 1 x AHEAD
 *   a claim this broker follows (a fence
 *   of itself, a HELLO_NAK "fenced")       < wall clock + 2 x AHEAD
 *   a rank's own word (its HELLO, its own
 *   live record, signed or over its link)  < wall clock + 3 x AHEAD
 * A lying peer can thus make a broker rejoin with an incarnation at most
 * about 2 x AHEAD ahead of the clocks, and the record it rejoins with is
 * its own word, which every broker takes up to 3 x AHEAD: the bound a
 * rank can be pushed to is always within what its peers accept of it. */
#define FENCE_INC_AHEAD (365ULL * 86400 * 1000000)   /* a year */

enum fence_bound {
    FENCE_BOUND_RECORD = 1,
    FENCE_BOUND_FOLLOW = 2,
    FENCE_BOUND_HELLO = 3,
};

/* The first incarnation at or past which a number is refused at 'bound'
 * (now: this broker's wall clock; never past FENCE_INC_MAX). */
uint64_t fence_inc_limit (struct overlay *ov, enum fence_bound bound);

enum {
    FENCE_NEWS = 1,          /* the record changed */
    FENCE_SELF = 2,          /* a fence of this broker's own incarnation */
    FENCE_PEER_DOWN = 4,     /* a neighbour's state went to down */
    FENCE_NEIGHBOUR_BACK = 8,/* a neighbour we connect to is live again */
    FENCE_ROOT_NEW = 16,     /* rank 0 has a new incarnation */
    FENCE_SELF_OLD = 32,     /* a fence of ours we refuted already */
};

/* Where a record came from, which decides whether it is reported up. */
enum fence_source {
    FROM_HERE,               /* found by this broker */
    FROM_PEER,               /* a report or a view from a peer */
    FROM_ROOT,               /* the root's multicast: nothing to report */
};

int fence_init (struct overlay *ov);
void fence_fini (struct overlay *ov);

/* The coordinator's reaction to a rank newly fenced here, called as the
 * fence is applied (overlay.c: rank 0's readiness count forgets it). */
void fence_on_fenced (struct overlay *ov,
                      void (*cb) (struct overlay *ov, uint32_t rank,
                                  uint64_t inc));
/* The highest incarnation of ours a record named that we never had
 * (0 if none): a rejoin goes above it (hello.c). */
uint64_t fence_claimed (struct overlay *ov);

/* News since the last settle (overlay.c), and its reset. */
bool fence_changed (struct overlay *ov);
void fence_changed_seen (struct overlay *ov);
/* A record refused elsewhere (a HELLO_NAK, hello.c): its incarnation out
 * of range, or naming one of ours we never had. */
void fence_count_bad_record (struct overlay *ov);
void fence_count_false_claim (struct overlay *ov);


/* Apply a record found here (FROM_HERE: a fence of our own finding, or a
 * neighbour's HELLO, its own word).  Returns FENCE_* flags (0: old news
 * or refused). */
int fence_apply (struct overlay *ov, uint32_t rank, uint64_t inc,
                 bool fenced, const char *reason, enum fence_source src);

/* Put this broker's own live record (its incarnation) in the view and
 * spread it: rank 0 does when its links are up, so that after a restart
 * every broker hears its new incarnation and reports ready again. */
void fence_announce_self (struct overlay *ov);


/* A peer's digest, from its keepalive: after two that differ from ours,
 * send it our view (at most every two keepalive intervals). */
void fence_peer_digest (struct overlay *ov, struct peer *p, uint64_t digest);

/* Send p our whole view (a peer that comes up with another digest). */
void fence_send_view (struct overlay *ov, struct peer *p);

/* A fence message (ENV_REPORT, ENV_BATCH, ENV_VIEW) from peer p, for this
 * broker; ENV_BATCH is also forwarded down.  frames are taken.  Returns
 * the FENCE_* flags of the records together (FENCE_SELF if any was). */
int fence_recv (struct overlay *ov, struct peer *p, struct envelope *env,
                struct frame **body, int n);

/* p talks with incarnation 'talks_as', which a fence at 'fenced_inc'
 * covers (it was hung, not dead; or someone fenced it above any
 * incarnation it had): tell it, at most once a second, addressed to the
 * incarnation it talks with (any other it would drop as stale), so it
 * rejoins above the fence. */
void fence_tell (struct overlay *ov, struct peer *p, uint64_t talks_as,
                 uint64_t fenced_inc);

/* A peer says this broker is fenced at its current incarnation (or one
 * above it): refute it with a signed live record one incarnation up,
 * keeping every link, instead of rejoining.  -1 if this broker cannot
 * sign (the caller rejoins). */
int fence_refute (struct overlay *ov);

/* Send rank 'to' our signed live record, routed: the answer to a fence
 * of us it sent us itself (suspect.h). */
void fence_answer (struct overlay *ov, uint32_t to);

/* A suspicion nobody refuted in time (suspect.c): believe it. */
void fence_confirm (struct overlay *ov, uint32_t rank, uint64_t inc,
                    uint8_t reason);

/* A rejoin: this broker's life starts again at its new incarnation. */
void fence_new_life (struct overlay *ov);

/* Is inc this broker's own, in its present life (its incarnation now,
 * or one it refuted from since it last started or rejoined)? */
bool fence_own_inc (struct overlay *ov, uint64_t inc);

#endif
