/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* events.h: the overlay's multicast event layer, as pure logic.
 *
 * Rank 0 numbers events (seq 1, 2, ...) as they are published and packs
 * those that arrive within a short window into one batch (evbatch.h),
 * bounded in time and bytes; an idle rank 0 sends a lone event at once.
 * A batch travels down the binomial spanning tree of the graph rooted at
 * rank 0 (libbgn's bgn_topo_bcast_children) as one frame: each broker
 * forwards the very frame it received to its tree children the first time
 * it sees it (a child that is down is skipped and its own children are
 * sent to directly, so the tree re-forms around failures), keeps it for
 * repairs, and delivers its events to local subscribers exactly once and
 * in seq order: batches that arrive early wait, duplicates are dropped.
 *
 * Gaps are repaired by asking the tree parent, then other live peers,
 * then rank 0, one at a time; each request carries an id and only the
 * answer to the current request counts.  A gap is declared lost (one
 * "lost" callback for the whole range, never a loop over it) only when
 * rank 0 says it no longer has those events, or when every live peer
 * asked in a round said it lacks them; a peer that does not answer, or
 * a late answer to an older request, never leads to a loss.  Rank 0
 * sends a SYNC with its latest seq and what it has dropped from its
 * buffer down the tree every sync period, so a gap at the end of a burst
 * is noticed and a gap older than rank 0's buffer is reported at once.
 *
 * Trust: a tree batch or SYNC is taken only from a tree ancestor, a
 * repair answer only from the peer asked (the authenticated neighbour it
 * came through, never just the envelope's source field), and only batches
 * that overlap the range asked; repair requests are answered only to the
 * neighbour that sent them, and bounded.
 *
 * Authenticity (evsign.c): rank 0 signs every batch and SYNC, and every
 * other broker checks before it delivers, keeps or forwards.  Cheaper
 * ways to the same proof, where they apply: a tag (a MAC under a key
 * only rank 0 and this broker share) beside a tree batch, or, for a run
 * of tree batches read together, the newest one's signature and the
 * digest links that chain the older ones to it.
 *
 * Rank 0 restart: a rank 0 that (re)starts publishes nothing until it
 * has heard the highest seq known from every live tree child (their
 * hellos, or a SEQ_QUERY), and continues after the largest, so it never
 * reuses a number; a child that stays silent for 'learn_timeout' is left
 * out (logged).
 *
 * Joining: a broker (first start, restart) takes where its sequence
 * starts only on rank 0's signed word, where rank 0 signs: its signed
 * answer to a START_QUERY (fresh: it names the asker and its nonce), or,
 * if rank 0 never answers, below the lowest signed batch it saw or
 * after what a signed SYNC says rank 0 no longer holds.  A
 * neighbour's hello seq never moves it, so a lying tree parent cannot
 * make it skip the stream.
 *
 * Back-pressure: rank 0 holds batches while the way to a live tree child
 * is congested (its transport queue full), holds at most 'queue_bytes' of
 * heap for events not yet sent (their batches' allocations, counted as
 * overlay-status shows them, besides the open batch's reused buffer;
 * EAGAIN beyond), and tells each publisher its
 * seq once the batch has left, so a publisher that waits for its answers
 * is slowed to what the tree drains.
 *
 * Buffers: the replay buffer and the early-arrival buffer hold shared
 * frames (a reference each, no copies), each bounded in events and bytes;
 * overflow is counted and logged (rate-limited).
 *
 * This file does no I/O: the overlay gives it callbacks (evglue.c), so
 * the same logic is unit tested without sockets.  Single-threaded; no
 * global state.
 */
#ifndef BGN_OVERLAY_EVENTS_H
#define BGN_OVERLAY_EVENTS_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "src/common/libbgn/bgn.h"
#include "src/common/libmsg/evbatch.h"
#include "src/common/libmsg/message.h"
#include "frame.h"

enum {
    EV_TREE = 1,        /* a batch travelling down the tree */
    EV_REPAIR = 2,      /* a batch sent to fill a gap (answer to a request) */
};

enum {
    EV_CTL_SYNC = 1,        /* {"seq", "epoch", "gone", "base"}: rank 0's
                               latest seq, down the tree */
    EV_CTL_REPAIR_REQ = 2,  /* {"id", "from", "to"}: send me from..to */
    EV_CTL_REPAIR_END = 3,  /* {"id", "floor", "high", "auth"}: end of an
                               answer: I have nothing below floor */
    EV_CTL_SEQ_QUERY = 4,   /* {}: rank 0 asks for the highest seq known */
    EV_CTL_SEQ_REPORT = 5,  /* {"seq"}: the answer */
    EV_CTL_START_QUERY = 6, /* {"n"}: a broker without a sequence asks
                               rank 0 where it is (n: a nonce, hex) */
    EV_CTL_START = 7,       /* {"n", "seq", "epoch", "gone", "base",
                               "sig"}: rank 0's answer, signed for the
                               asking rank and its nonce */
    EV_CTL_ADOPT = 8,       /* {}: a neighbour whose tree parent is
                               suspect asks us for the tree batches, for
                               ADOPT_TTL (asked again while it needs) */
};

struct evlayer_ops {
    /* Send a batch (kind EV_TREE or EV_REPAIR) to rank 'to' through the
     * overlay, with the tags frame for to's subtree (evbatch.h) beside
     * it, or none (tags NULL).  Frames borrowed (take a reference to
     * keep one). */
    int (*send) (void *arg, uint32_t to, int kind, struct frame *batch,
                 struct frame *tags);
    /* Send a control object (EV_CTL_*) to rank 'to' (o borrowed). */
    int (*control) (void *arg, uint32_t to, int kind, json_t *o);
    /* Is rank down (fenced)? */
    int (*is_down) (void *arg, uint32_t rank);
    /* Is the way to rank 'to' congested: the next hop alive and well but
     * its transport queue full?  May be NULL (never). */
    int (*congested) (void *arg, uint32_t to);
    /* Deliver to local subscribers the events of batch (borrowed) with
     * seq >= from, in order; each event is delivered once. */
    void (*deliver) (void *arg, struct frame *batch, uint32_t from);
    /* Events from..to are lost for good: tell the log and subscribers. */
    void (*lost) (void *arg, uint32_t from, uint32_t to);
    /* The i-th live peer to ask for a repair (0: the tree parent if it is
     * up), UINT32_MAX past the last one. */
    uint32_t (*repair_peer) (void *arg, int i);
    /* Rank 0: the event published with 'token' left in a batch as seq
     * (errnum 0), or was dropped (seq 0, errnum).  May be NULL. */
    void (*published) (void *arg, void *token, uint32_t seq, int errnum);
    /* Call evlayer_flush() at 'when' (INFINITY: not needed). */
    void (*arm) (void *arg, double when);
    /* The monotonic clock, seconds.  May be NULL (the time of the last
     * tick or flush is used). */
    double (*now) (void *arg);
    /* A log line (syslog level). */
    void (*log) (void *arg, int level, const char *fmt, ...)
        __attribute__ ((format (printf, 3, 4)));
    /* Is sig rank 0's signature of data (1 yes, 0 no)?  May be NULL: the
     * key given to evlayer_set_keys is used.  The overlay's asks the
     * bootstrap again for rank 0's key when a signature fails, so a
     * rank 0 restarted with a new key is believed again. */
    int (*verify) (void *arg, const void *data, size_t len,
                   const unsigned char *sig);
    /* The key (32 bytes) rank 0 and 'rank' share for batch tags: 0, or
     * -1 if there is none.  Rank 0 asks it for any rank, the others for
     * themselves (again, at most every few seconds, when theirs did not
     * match), from the keys held now: a failed signature is what asks
     * for a restarted rank 0's new one.  May be NULL: no tags,
     * signatures only. */
    int (*tag_key) (void *arg, uint32_t rank, unsigned char key[32]);
};

struct evlayer_config {
    uint64_t epoch;             /* rank 0: its incarnation */
    int buffer;                 /* replay buffer, events (>= 16) */
    size_t buffer_bytes;        /* ... and bytes; the early-arrival buffer
                                   has the same two bounds */
    double sync_period;         /* rank 0: SYNC interval, s */
    double batch_window;        /* rank 0: batching window, s */
    size_t batch_bytes;         /* rank 0: bytes per batch at most */
    size_t queue_bytes;         /* rank 0: heap of the events accepted,
                                   not yet sent (evlayer_memory) */
    double learn_timeout;       /* rank 0: wait for silent children, s */
};

/* Defaults for every field (the overlay's config overrides them). */
void evlayer_config_defaults (struct evlayer_config *cfg);

struct evlayer;

/* 'topo' is borrowed and must outlive the layer.  NULL with EINVAL (no
 * topo or ops, buffer < 16, zero byte bounds) or ENOMEM. */
struct evlayer *evlayer_create (struct bgn_topo *topo, uint32_t rank,
                                const struct evlayer_config *cfg,
                                const struct evlayer_ops *ops, void *arg);
/* Pending publishes are dropped (published callback with ECANCELED). */
void evlayer_destroy (struct evlayer **evp);

/* The overlay starts (connects to its peers): rank 0's wait for its
 * tree children's seq (learn_timeout) counts from now, not from the
 * layer's creation, however long its host took in between. */
void evlayer_start (struct evlayer *ev, double now);

/* Rank 0: number 'event' (taken in every case) into the open batch.
 * Returns its seq; the publisher hears ops->published (token, seq) once
 * the batch has left.  -1 with errno: EINVAL on another rank or an event
 * without a topic, EAGAIN while a restarted rank 0 is still learning the
 * seq or when 'queue_bytes' are already waiting (ops->published is not
 * called then). */
int64_t evlayer_publish (struct evlayer *ev, msg_t *event, void *token);

/* Rank 0: could 'bytes' of events (evbatch_rec_size) be published now,
 * the queue's heap staying within 'queue_bytes'?  0, and the next
 * evlayer_publish calls for up to 'bytes' are not refused for room; or
 * -1 with errno as evlayer_publish (EAGAIN counted as refused).
 * evlayer_publish alone takes one event into an empty queue whatever its
 * size. */
int evlayer_room (struct evlayer *ev, size_t bytes);

/* The flush timer (ops->arm): close the open batch if its time has come
 * and send what waits, unless the tree is congested. */
void evlayer_flush (struct evlayer *ev, double now);

/* A checked batch (h from evbatch_check) arrived, with a checked tags
 * frame (evtags_check) or none (NULL): 'source' is the envelope's source
 * rank, 'via' the authenticated neighbour it came from; frames
 * borrowed. */
void evlayer_recv_batch (struct evlayer *ev, uint32_t source, uint32_t via,
                         int kind, struct frame *batch, struct frame *tags,
                         const struct evbatch_hdr *h);

/* A control object arrived (source and via as above; o borrowed). */
void evlayer_recv_control (struct evlayer *ev, uint32_t source,
                           uint32_t via, int kind, json_t *o);

/* Timers: call every so often (a few times per sync period). */
void evlayer_tick (struct evlayer *ev, double now);

/* Rank 0's event signing key (Ed25519, libsodium crypto_sign).  Rank 0
 * passes its secret key (64 bytes): it signs every batch it makes and
 * every SYNC.  Every other broker passes rank 0's public key (32 bytes):
 * it then takes a batch (tree or repair) or a SYNC only with rank 0's
 * valid signature, whoever passed it on.  Without a key (a static
 * bootstrap has no exchange to announce it) nothing is signed or
 * checked. */
void evlayer_set_keys (struct evlayer *ev, const unsigned char *sk,
                       const unsigned char *root_pk);

/* Neighbour 'rank' said hello with 'seq' (its evlayer_hello_seq).  A
 * learning rank 0 that does not sign counts it as that rank's report; a
 * broker that has not started its sequence yet starts it there if 'rank'
 * is its tree parent and nothing is signed.  Where rank 0 signs, a hello
 * is a neighbour's word and moves no sequence: a broker without one asks
 * rank 0 (START_QUERY) and starts where its signed answer says, or below
 * it at the first signed batch that came meanwhile. */
void evlayer_seq_hint (struct evlayer *ev, uint32_t rank, uint32_t seq);

/* What this broker says in its hello: the highest seq it knows exists. */
uint32_t evlayer_hello_seq (const struct evlayer *ev);

/* The last seq delivered here (0 if none). */
uint32_t evlayer_last (const struct evlayer *ev);

/* Rank 0 with no peers can publish at once (size 1). */
void evlayer_set_ready (struct evlayer *ev);

/* Counters and buffer levels for overlay.status. */
json_t *evlayer_stats (const struct evlayer *ev);

/* The heap the event layer's stores hold, each with its bound in bytes:
 * {"event_ring": {"bytes", "bound"}, "event_early": {...}} and on rank 0
 * "event_queue" too (the batches waiting for the tree and the open one;
 * its bound is queue_bytes plus the open batch's buffer, which is reused
 * and at most a batch's size, doubled from 4096).  Bytes are allocations
 * (frame_footprint and entries), not payload. */
json_t *evlayer_memory (const struct evlayer *ev);

#endif
