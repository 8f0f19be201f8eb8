/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* suspect.h: a fence on another broker's word is a suspicion first.
 *
 * Any admitted peer can send a fence record, and a rank fenced at the
 * incarnation it lives with used to rejoin at once, everywhere: a bad
 * node could make a healthy rank flap, and a lossy host evicted healthy
 * neighbours on its own word (issue 42).  As SWIM does, such a record is
 * now a suspicion: routing does not change, the record spreads on as
 * before (so the accused hears of it), and the accused refutes it with
 * its own signed live record one incarnation up, keeping its links.  A
 * suspicion nobody refutes within half a keepalive interval is believed
 * (a dead rank refutes nothing), so a crash found by a neighbour after
 * the peer timeout is known everywhere within peer_timeout +
 * keepalive_interval.  A neighbour of the accused that heard it within
 * two keepalive intervals never believes it: its ears are better word.
 *
 * Suspicions apply only to ranks with a signing key known (they alone
 * can refute), to records that would fence the live incarnation held
 * here or one ahead of it, or a rank never fenced (no record here), and
 * never to what this broker found itself.
 *
 * A peer whose suspicions are refuted SUSPECT_REFUTED times within
 * SUSPECT_WINDOW loses the power to fence here: its fence records are
 * dropped, counted and logged once, for a back-off of 10 s doubling up
 * to 5 min (struct fencepower, peer.h).  Only what is its sender's own
 * word is charged: a view (what it believes: views carry no
 * suspicions), or a report from a neighbour of the accused, which could
 * have found the loss itself; not a report it only passed on, nor a
 * root's batch (everyone's word: charging it would silence every tree
 * parent).  A relay that is also the accused's neighbour is charged for
 * another's false fence too; it keeps its links, only its fences wait.
 */
#ifndef BGN_OVERLAY_SUSPECT_H
#define BGN_OVERLAY_SUSPECT_H

#include <stdbool.h>
#include <stdint.h>

struct overlay;

#define SUSPECT_REFUTED 3
#define SUSPECT_WINDOW 60.0     /* s */
#define SUSPECT_BAN_MIN 10.0    /* s */
#define SUSPECT_BAN_MAX 300.0   /* s */

/* One suspicion: rank fenced at inc on peer via's word, since 'since'. */
struct fence_suspect {
    uint64_t inc;
    double since;
    uint32_t via;
    uint8_t reason;          /* fence_reason() index */
    bool charge;             /* refuted, it is charged to via */
};

struct suspect_state {          /* suspect.c */
    struct idmap *suspects;     /* rank -> struct fence_suspect */
    struct ovtimer *timer;
    uint64_t suspected;         /* fences held as suspicions */
    uint64_t refuted;           /* ... that their rank refuted */
    uint64_t confirmed;         /* ... that nobody refuted: believed */
    uint64_t fences_ignored;    /* from peers without the power to fence */
    uint64_t power_lost;        /* times a peer lost it */
    void (*confirm) (struct overlay *ov, uint32_t rank, uint64_t inc,
                     uint8_t reason);
                                /* believe a suspicion nobody refuted in
                                   time: fence.c's fence_confirm, handed
                                   over at init (fence.c is above) */
};

/* 'confirm' is called for a suspicion that expired unrefuted. */
int suspect_init (struct overlay *ov,
                  void (*confirm) (struct overlay *ov, uint32_t rank,
                                   uint64_t inc, uint8_t reason));
void suspect_fini (struct overlay *ov);

/* A fence record of rank at inc from peer 'via' (not found here): true
 * if it is held as a suspicion, or dropped (via lost the power to
 * fence), and must not be applied now; false to apply it as before.
 * 'settled': the record held here fences rank already or is newer than
 * inc (no suspicion then).  'charge': if refuted, it counts against via
 * (fence.c says when). */
bool suspect_hold (struct overlay *ov, uint32_t rank, uint64_t inc,
                   bool settled, uint8_t reason, uint32_t via, bool charge);

/* rank's record changed to inc (fenced or live): a suspicion it settles
 * is forgotten; one a newer live record settles was refuted, and the
 * peer that brought it is charged. */
void suspect_settle (struct overlay *ov, uint32_t rank, uint64_t inc,
                     bool fenced);

/* The suspicion held of rank, or NULL (for the records sent on). */
const struct fence_suspect *suspect_lookup (struct overlay *ov,
                                            uint32_t rank);

/* Has peer 'rank' lost the power to fence here? */
bool suspect_powerless (struct overlay *ov, uint32_t rank);

#endif
