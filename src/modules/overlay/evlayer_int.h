/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* evlayer_int.h: the event layer's state, shared by its parts.
 *
 * The event layer (events.h is its contract) is one state machine in
 * eight files, which call one way, top to bottom: events.c (the entry
 * points: receiving, timers, statistics); evsync.c (rank 0's SYNC) and
 * evjoin.c (where a joining broker starts); evrepair.c (gap repair and
 * loss) and evroot.c (rank 0: learning the sequence after a start, batching,
 * publishing); evsign.c (rank 0's signature); evdeliver.c (delivery,
 * the buffers, the tree); evstore.c (the sorted batch stores).  Nothing
 * outside them includes this header.
 */
#ifndef BGN_OVERLAY_EVLAYER_INT_H
#define BGN_OVERLAY_EVLAYER_INT_H

#include <stddef.h>
#include <stdint.h>

#include "events.h"
#include "sigbudget.h"

#define REPAIR_TIMEOUT 0.5        /* s before asking the next peer */
#define REPAIR_ROUND_DELAY 1.0    /* s between rounds that declared nothing */
#define REPAIR_ROOT_GRACE 5.0     /* s rounds go on while every peer asked
                                     lacks a gap (rank 0 down here, most
                                     often) before it is declared lost
                                     (evrepair.c) */
#define REPAIR_MAX_BATCHES 64     /* per answer */
#define REPAIR_MAX_BYTES (1u << 20)
#define RECENT_ASKS 8             /* answers to these may still arrive */
#define CONGESTION_RETRY 0.001    /* s */
#define QUERY_INTERVAL 1.0        /* s, a learning rank 0's SEQ_QUERY (hellos
                                     usually tell first) */
#define SEQ_SANE (1u << 30)       /* a seq this far past ours is refused */
#define MAX_CHILDREN 256
#define MAX_ANCESTORS 64
#define LOG_EVERY 1000            /* repeated warnings: 1st, then every Nth */
#define TAG_MAX_RANKS 256         /* rank 0 tags batches up to this size:
                                     a MAC per rank per batch (0.3 us), at
                                     256 about one signature check */
#define TAG_REKEY_DELAY 5.0       /* s between asks for a fresh tag key */
#define PEND_MAX 32               /* tree batches waiting for one signature
                                     check at the end of a read (evsign.c) */
#define PEND_BATCH_MAX 16384      /* ... only batches this small wait */
#define PEND_BYTES_MAX (256u << 10)   /* ... and this much in all */
#define SIG_RATE 1000.0           /* signature checks a second per link
                                     (7 % of a core at 70 us) ... */
#define SIG_BURST 1000.0          /* ... and this many at once */
#define START_RETRY 0.5           /* s between a joining broker's asks for
                                     rank 0's word on the sequence */
#define START_RATE 200.0          /* rank 0 signs at most this many START
                                     answers a second ... */
#define START_HINTS 64            /* neighbours' hellos kept while a
                                     joining broker waits (2 log2 N is 32
                                     at N = 65536) */
#define START_BURST 256.0         /* ... and this many at once (a start) */
#define SIDE_GRACE 0.3            /* s a gap that only a SYNC from another
                                     path told of waits for the tree
                                     before it is repaired */
#define PARENT_FAILS 3            /* a tree parent that failed this often ...
                                     */
#define PARENT_WINDOW 30.0        /* ... within this many s is suspect ... */
#define PARENT_HOLD 30.0          /* ... until this long after its last
                                     failure */
#define MAX_NEIGHBOURS 256
#define ADOPT_REFRESH 1.0         /* s between a broker's asks to the
                                     neighbour it takes the tree from in a
                                     suspect parent's place ... */
#define ADOPT_TTL 4.0             /* ... which sends for this long after
                                     the last ask */
#define ADOPT_MAX 16              /* neighbours one broker sends for */

struct held {
    uint32_t first, last;
    uint32_t count;
    size_t bytes;
    struct frame *f;
};

/* Batches sorted by first seq, disjoint: a ring of entries (a deque), so
 * that the oldest drop out and the newest come in at no cost. */
struct store {
    struct held *v;
    int head, n, cap;
    uint64_t events;
    size_t bytes;
};

struct token {
    void *token;
    uint32_t seq;
};

/* A closed batch at rank 0, waiting to be sent. */
struct outbatch {
    struct frame *f;
    uint32_t first, last, count;
    size_t bytes;
    struct token *tok;
    int ntok, captok;
};

struct ask {
    uint32_t peer, from, to;
};

/* A neighbour that takes the tree from us in a suspect parent's place. */
struct adoptee {
    uint32_t rank;
    double until;
};

/* A tree batch that passed the cheap checks, its signature not yet
 * checked: it waits for the end of the read it came in (evl_settle). */
struct pending {
    struct frame *f;            /* our own copy (frame_keep) */
    struct frame *tags;         /* what came beside it (kept), or NULL */
    struct evbatch_hdr h;
    uint32_t via;               /* the neighbour it came through */
};

/* What checking one link's signatures may cost (evsign.c): a token
 * bucket of checks, and the failures that lead to a back-off. */
struct siglink {
    double tokens, refill;
    struct sigbudget fails;     /* sigbudget.h: failures, back-offs */
};

struct evlayer {
    struct bgn_topo *topo;
    uint32_t rank;
    struct evlayer_config cfg;
    const struct evlayer_ops *ops;
    void *arg;
    double now;
    uint32_t ancestors[MAX_ANCESTORS];  /* parent first, rank 0 last */
    int nanc;

    int have_base;
    uint32_t last;              /* delivered (or declared lost) up to */
    uint32_t high;              /* highest seq known to exist */
    uint32_t gone;              /* highest seq dropped from the replay buffer */
    struct store ring, early;

    /* joining, where rank 0 signs (events.c): no base yet, rank 0 asked
     * for its signed word on where the sequence is (START_QUERY with a
     * nonce); meanwhile signed batches wait in 'early' and start_floor is
     * the lowest seq that signed news puts the base at, for a rank 0 that
     * never answers */
    uint64_t start_nonce;
    double start_asked, start_since;
    uint32_t start_floor;
    uint32_t start_hints[START_HINTS];  /* the seqs neighbours' hellos
                                   said while we wait (the highest kept) */
    int nstart_hints;
    uint64_t start_asks, hints_ignored;
    /* rank 0: the answers' token bucket */
    double start_tokens, start_refill;
    uint64_t start_answers, start_throttled;

    /* what rank 0's syncs said */
    uint64_t root_epoch;
    uint32_t root_base, root_gone, sync_seq;
    double sync_passed;         /* a SYNC last went down the tree from us */

    /* rank 0 */
    int can_publish, learning;
    double learn_start, last_query;
    uint32_t *reported;         /* ranks that told their seq, sorted */
    int nreported, capreported;
    uint32_t learned;           /* largest seq they told */
    uint32_t next_seq;          /* last seq assigned */
    uint32_t sent_seq;          /* last seq sent down the tree */
    struct evbatch_writer w;
    struct token *wtok;
    int nwtok, capwtok;
    double w_opened;
    struct outbatch *outq;
    int nout, capout;
    size_t queued_bytes, queued_max;    /* records accepted, not sent */
    size_t granted;             /* room evlayer_room gave a group of
                                   events, not yet published */
    double last_flush, last_sync, armed;
    uint32_t synced_seq, synced_gone, synced_base;  /* the last SYNC's */

    /* repair */
    struct {
        int active;
        uint32_t id, peer;
        double deadline;
        uint32_t mark;          /* 'last' when the current ask went out */
        int cand;               /* next candidate index */
        int asked_root;
        int asked, naks;        /* this round */
        uint32_t nak_to;        /* every nak'ing peer lacks last+1..nak_to */
        double next_round;
        double lacked_since;    /* end of the first round in which every
                                   peer asked lacked the gap (0: none) */
        double hold_until;      /* a gap only a side SYNC told of waits
                                   for the tree until then */
        uint64_t filled;        /* events repaired since the ask went out */
        int blamed;             /* the tree parent was blamed this round */
    } rep;
    /* our tree parent (the nearest live ancestor), when it keeps failing
     * to pass events on (evrepair.c): gaps other peers filled, asks it
     * left unanswered */
    struct {
        uint32_t rank;          /* whom the failures below are of */
        int fails;              /* within the window */
        double window_start, last_fail;
        uint32_t suspect;       /* the suspected parent, UINT32_MAX none */
        uint32_t seen;          /* the highest seq it sent us by the tree */
        uint32_t substitute;    /* whom we take the tree from instead */
        double asked;           /* when we last asked it (ADOPT) */
    } par;
    struct adoptee adopted[ADOPT_MAX];  /* those we send the tree to in
                                           their suspect parent's place */
    int nadopted;
    uint64_t adoptions, adopt_refused;
    uint32_t next_id;
    struct ask recent[RECENT_ASKS];
    int nrecent;

    /* signatures (events.h, evlayer_set_keys) */
    int can_sign, verify;
    unsigned char sign_sk[64];      /* rank 0: its secret signing key */
    unsigned char root_pk[32];      /* others: rank 0's public key */
    json_t *sync_proof;             /* others: the last SYNC taken, signed:
                                       proof of a seq (SEQ_REPORT) */
    unsigned char chain_prev[EVBATCH_LINK_SIZE];  /* rank 0: the digest of
                                       the batch it sealed last */
    struct pending pend[PEND_MAX];  /* others: chained tree batches whose
                                       signature is checked as a run */
    int npend;
    size_t pend_bytes;          /* what the waiting frames hold */
    /* tags (evsign.c): rank 0's key per rank (state 0 not asked, 1 have,
     * 2 none, 3 the same as another rank's: not used), or this broker's
     * own */
    unsigned char (*tag_keys)[32];
    uint8_t *tag_state;
    int tag_keys_checked;       /* rank 0: ranks sharing a key found */
    unsigned char tag_key[32];
    int my_tag_state;
    double tag_rekey_at;
    uint64_t seq_unproven;          /* rank 0: seq reports cut to proof */
    struct siglink *links;          /* per neighbour rank, made on first use */
    char sync_sig[2 * 64 + 1];      /* the last SYNC signature checked good */

    /* counters */
    uint64_t bad_signatures;
    uint64_t sig_throttled;     /* dropped unchecked: the link's checks
                                   a second were spent */
    uint64_t sig_refused;       /* dropped unchecked: the link is in a
                                   back-off for failed signatures */
    uint64_t sig_bans;          /* back-offs begun */
    uint64_t sig_checks;        /* Ed25519 verifications of batches */
    uint64_t sig_chained;       /* batches a later one's signature vouched
                                   for through the links */
    uint64_t tags_made;         /* rank 0: batches sent with tags */
    uint64_t tag_ok, tag_bad;   /* others: batches taken on their tag; tags
                                   that did not match (the signature
                                   decided) */
    uint64_t parent_failures, parent_suspects, parent_switches;
    uint64_t syncs_relayed;     /* SYNCs sent to neighbours off the tree */
    uint64_t side_syncs;        /* new SYNCs first heard off the tree */
    uint64_t side_batches;      /* signed tree batches taken from another
                                   sender than the tree parent */
    uint64_t delivered, batches, duplicates, repaired, lost, lost_ranges,
        repair_requests, repairs_served, stale_answers, rejected,
        early_drops, nomem_drops, evictions, published, refused_full,
        congestion_waits, batches_sent;
};

/* ---- events.c ------------------------------------------------------- */
/* Others: check the waiting tree batches (one signature for a linked
 * run) and take those rank 0 signed, in the order they came.  Every
 * entry point runs it first, so nothing overtakes them. */
void evl_settle (struct evlayer *ev);

/* ---- evstore.c: batches sorted by first seq, disjoint ----------------- */
/* The i-th batch (0: the oldest). */
struct held *evstore_at (const struct store *s, int i);
/* Drop every batch (their frames released). */
void evstore_free (struct store *s);
/* Index of the first batch whose last seq is >= seq (n if none). */
int evstore_lower (const struct store *s, uint32_t seq);
/* Does a stored batch share a seq with first..last? */
int evstore_overlaps (const struct store *s, uint32_t first, uint32_t last);
/* Insert h in order (its frame taken); -1 on ENOMEM. */
int evstore_insert (struct store *s, const struct held *h);
/* Take out the i-th batch into *out (its frame now the caller's). */
void evstore_remove (struct store *s, int i, struct held *out);
/* What holding frame f costs: the frame's heap and the entry. */
size_t evstore_cost (const struct frame *f);
/* Heap the store holds: its entries' cost and its array's free slots. */
size_t evstore_memory (const struct store *s);
/* Would count more events and bytes (an entry's cost, and the array's
 * growth if it is full) pass the configured bounds? */
int evstore_full (const struct store *s, const struct evlayer_config *c,
                  uint32_t count, size_t bytes);

/* ---- evdeliver.c: delivery, buffers and the tree, below the others ---- */
/* A repeated warning: the first, then every LOG_EVERY-th. */
void evl_warn_counted (struct evlayer *ev, uint64_t n, const char *what,
                       uint32_t a, uint32_t b);
/* The time now (the ops' clock, remembered in ev->now). */
double evl_now (struct evlayer *ev);
/* The end of the gap after 'last': before the first early batch, or
 * the highest seq known. */
uint32_t evl_gap_end (const struct evlayer *ev);
/* A batch (or, with batch NULL, a SYNC) to our subtree in rank 0's
 * tree, around fenced children; each child gets the entries of 'tags'
 * (a checked tags frame, or NULL) for its own subtree. */
void evl_forward_down (struct evlayer *ev, struct frame *batch, json_t *ctl,
                       struct frame *tags);
/* A new SYNC (rank 0's, checked) to every live graph neighbour that
 * does not get it down the tree from us, but 'except' (where it came
 * from): rank 0's word on its high-water mark takes every path, so that
 * no one parent or edge can hide it. */
void evl_sync_sideways (struct evlayer *ev, json_t *ctl, uint32_t except);
/* Send the tree to neighbour 'child' too, for ADOPT_TTL (again: from
 * now); -1 if ADOPT_MAX others are adopted already. */
int evl_adopt (struct evlayer *ev, uint32_t child);
/* Our tree parent now: the nearest ancestor that is not fenced
 * (UINT32_MAX: none, rank 0). */
uint32_t evl_tree_parent (struct evlayer *ev);
/* May 'source' send us tree traffic (batches, SYNCs) unsigned, as 'via'
 * passed it on?  Only our tree parent, over its own link if it is a
 * neighbour. */
int evl_tree_sender_ok (struct evlayer *ev, uint32_t source, uint32_t via);
/* The ranks a batch from us goes to now. */
int evl_effective_children (struct evlayer *ev, uint32_t *list, int max);
/* Hand h's events past 'last' to the subscribers; advance 'last'. */
void evl_deliver (struct evlayer *ev, const struct held *h);
/* Keep a delivered batch for repairs (oldest dropped past the bounds). */
void evl_ring_add (struct evlayer *ev, struct held *h);
/* Call evlayer_flush at 'when' (once per distinct time). */
void evl_arm (struct evlayer *ev, double when);
/* Deliver the early batches that are now next in line. */
void evl_drain_early (struct evlayer *ev);
/* Hold a batch that came past a gap (its frame taken); when full, the
 * batch farthest ahead goes (the repair fetches it again). */
void evl_early_add (struct evlayer *ev, struct held *h);
/* from..to will never come: one event.lost notice, 'last' moves on. */
void evl_declare_lost (struct evlayer *ev, uint32_t from, uint32_t to);

/* ---- evsign.c: rank 0's signature ------------------------------------- */
/* evlayer_set_keys, once what waits is settled. */
void evl_set_keys (struct evlayer *ev, const unsigned char *sk,
                   const unsigned char *root_pk);
/* Rank 0: the frame for a sealed batch buf[0..len-1], signed if it can
 * sign.  NULL on ENOMEM. */
struct frame *evl_sealed_frame (struct evlayer *ev, const uint8_t *buf,
                                size_t len);
/* Rank 0: the highest seq a SEQ_REPORT 'o' proves rank 0 numbered (a
 * signed SYNC, or a signed batch, it carries); 0 if none. */
uint32_t evl_report_proven (struct evlayer *ev, json_t *o);
/* Others: add the proof of our highest seq to a SEQ_REPORT. */
void evl_report_proof (struct evlayer *ev, json_t *o);
/* Others: is this checked batch signed by rank 0 (or are we not
 * checking)?  0 counts and logs it. */
int evl_batch_signed_ok (struct evlayer *ev, const struct frame *batch,
                         const struct evbatch_hdr *h, uint32_t via);
/* Rank 0: the tags frame for a sealed batch (a tag for each rank that
 * has a key), or NULL (no keys, too many ranks, no memory). */
struct frame *evl_root_tags (struct evlayer *ev, struct frame *batch);
/* Others: does 'tags' hold a tag of ours that matches the batch?  1 yes
 * (counted), 0 no (absent, or wrong: counted, and our key asked again
 * later). */
int evl_tag_ok (struct evlayer *ev, struct frame *batch, struct frame *tags);
/* Others: which of the n pending batches p[] rank 0 signed (ok[i] 1 or
 * 0, failures counted and logged as evl_batch_signed_ok does).  Walks
 * from the newest: a batch whose successor is good and links to it by
 * digest is good without a signature check of its own. */
void evl_verify_run (struct evlayer *ev, const struct pending *p, int n,
                     char *ok);
/* Rank 0: add "sig" to the SYNC object o.  Others: check it. */
int evl_sync_sign (struct evlayer *ev, json_t *o, json_int_t seq,
                   json_int_t epoch, json_int_t gone, json_int_t base);
int evl_sync_signed_ok (struct evlayer *ev, json_t *o, json_int_t seq,
                        json_int_t epoch, json_int_t gone, json_int_t base,
                        uint32_t via);
/* Rank 0: add "sig" to a START answer o for 'rank' (its nonce, and the
 * numbers of a SYNC).  Others: check ours.  Both 0 / 1 as above. */
int evl_start_sign (struct evlayer *ev, json_t *o, uint32_t rank,
                    uint64_t nonce, json_int_t seq, json_int_t epoch,
                    json_int_t gone, json_int_t base);
int evl_start_signed_ok (struct evlayer *ev, json_t *o, uint64_t nonce,
                         json_int_t seq, json_int_t epoch, json_int_t gone,
                         json_int_t base, uint32_t via);
/* Others: may a signature that came through neighbour 'via' be checked
 * now?  0: no (the link's checks a second are spent, or it is in a
 * back-off for failed ones): the item is dropped unchecked, counted.
 * evl_sig_verdict: a check of via's was good or not; SIG_FAIL_MAX
 * failures start a back-off (logged once). */
int evl_sig_admit (struct evlayer *ev, uint32_t via);
void evl_sig_verdict (struct evlayer *ev, uint32_t via, int good);
/* A fresh random nonce. */
uint64_t evl_nonce (void);

/* ---- evsync.c: rank 0's SYNC ----------------------------------------- */
/* Others: a SYNC from 'source' (passed on by 'via'). */
void evsync_recv (struct evlayer *ev, uint32_t source, uint32_t via,
                  json_t *o);
/* Rank 0's timer: a SYNC when one is due. */
void evsync_tick (struct evlayer *ev, double now);

/* ---- evjoin.c: where a joining broker's sequence starts ---------------- */
/* Ask rank 0 where our sequence starts (at most every START_RETRY,
 * while we have none and rank 0 signs). */
void evjoin_ask (struct evlayer *ev);
/* Rank 0 never answered: start after the lowest seq it signed that
 * reached us, after twice learn_timeout. */
void evjoin_fallback (struct evlayer *ev);
/* Rank 0: answer a broker's ask q (signed, rate-bounded). */
void evjoin_answer (struct evlayer *ev, uint32_t source, json_t *q);
/* Others: rank 0's answer o to our ask. */
void evjoin_recv (struct evlayer *ev, uint32_t via, json_t *o);
/* A neighbour's hello said the stream is at seq while we wait: kept (the
 * START_HINTS highest) for where rank 0's answer starts us. */
void evjoin_hint (struct evlayer *ev, uint32_t seq);

/* ---- evrepair.c ------------------------------------------------------ */
/* Is something missing after 'last'? */
int evrepair_have_gap (const struct evlayer *ev);
/* Start a repair if there is a gap and none is running. */
void evrepair_kick (struct evlayer *ev);
/* The current ask was answered (or timed out: answered 0); lack_to:
 * the asked peer lacks last+1..lack_to; auth: rank 0 said so. */
void evrepair_step (struct evlayer *ev, int answered, uint32_t lack_to,
                    int auth);
/* A peer asks us for a range: answer from the replay buffer. */
void evrepair_serve (struct evlayer *ev, uint32_t peer, json_t *o);
/* The end of an answer to one of our asks. */
void evrepair_recv_end (struct evlayer *ev, uint32_t source, uint32_t via,
                        json_t *o);
/* Is 'rank' the tree parent we suspect of withholding events? */
int evrepair_suspect (const struct evlayer *ev, uint32_t rank);
/* Timers: while our tree parent is suspect, take the tree from another
 * neighbour (asked every ADOPT_REFRESH); a suspect parent that still
 * sends us nothing stays suspect. */
void evrepair_parent_tick (struct evlayer *ev);
/* Did we ask peer for a range that first..last is inside? */
int evrepair_asked_for (const struct evlayer *ev, uint32_t peer,
                        uint32_t first, uint32_t last);

/* ---- evroot.c -------------------------------------------------------- */
/* Rank 0's flush timer (evlayer_flush): close the open batch when due,
 * send what waits unless the tree is congested. */
void evroot_flush (struct evlayer *ev, double now);
/* Rank 0 learning: finish when every live child told (or the time is
 * up); with query, ask those that did not. */
void evroot_learn_check (struct evlayer *ev, int query);
/* A child told rank 0 its highest seq. */
void evroot_learn_report (struct evlayer *ev, uint32_t rank, uint32_t seq);
/* Heap rank 0's queue holds: the closed batches (their frames and
 * tokens), the open batch's buffer and the arrays (what
 * overlay.event_queue_bytes bounds). */
size_t evroot_queue_memory (const struct evlayer *ev);
/* The most the open batch's buffer takes (not charged to the bound). */
size_t evroot_writer_reserve (const struct evlayer *ev);

#endif
