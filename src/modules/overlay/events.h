/* events.h: the overlay's multicast event layer, as pure logic.
 *
 * Rank 0 numbers every event (seq 1, 2, ...) and sends it down the
 * binomial spanning tree of the graph rooted at rank 0 (libbgn's
 * bgn_topo_bcast_children).  Each broker forwards an event to its tree
 * children the first time it sees it; a child that is down is skipped and
 * its own children are sent to directly (routed through the overlay), so
 * the tree re-forms around failures.  Each broker delivers every event to
 * its local subscribers exactly once and in sequence order: events that
 * arrive early wait, duplicates are dropped, and a gap is repaired by
 * asking a peer, which answers from its replay buffer (the last
 * 'buffer' events).  Rank 0 also sends a small SYNC with the latest seq
 * down the tree every sync period, so a gap at the end of a burst is
 * noticed too, and a (re)joining broker starts from the current seq.  A
 * gap no peer can fill is reported as lost (never silently).
 *
 * This file does no I/O: the overlay gives it callbacks to send, to ask
 * who is down and to deliver, so the same logic can be unit tested
 * without sockets.  Single-threaded; no global state.
 */
#ifndef BGN_OVERLAY_EVENTS_H
#define BGN_OVERLAY_EVENTS_H

#include <stdint.h>
#include <jansson.h>

#include "src/common/libbgn/bgn.h"
#include "src/common/libmsg/message.h"

enum {
    EV_TREE = 1,        /* an event travelling down the tree */
    EV_REPAIR = 2,      /* an event sent to fill a gap (not forwarded) */
};

enum {
    EV_CTL_SYNC = 1,        /* {"seq": S}: latest seq, down the tree */
    EV_CTL_REPAIR_REQ = 2,  /* {"from": A, "to": B}: send me A..B */
    EV_CTL_REPAIR_NAK = 3,  /* {"from": A, "to": B}: I do not have A..B */
};

struct evlayer_ops {
    /* Send event (kind EV_TREE or EV_REPAIR) to rank 'to' through the
     * overlay.  The layer keeps ownership of 'event'. */
    int (*send) (void *arg, uint32_t to, int kind, const msg_t *event);
    /* Send a control object (EV_CTL_*) to rank 'to'. */
    int (*control) (void *arg, uint32_t to, int kind, json_t *o);
    /* Is rank down (fenced)? */
    int (*is_down) (void *arg, uint32_t rank);
    /* Deliver to local subscribers (in seq order, once each). */
    void (*deliver) (void *arg, const msg_t *event);
    /* Events from..to are lost for good: tell the log and subscribers. */
    void (*lost) (void *arg, uint32_t from, uint32_t to);
    /* A live peer to ask for a repair; 'attempt' counts from 0.  Return
     * UINT32_MAX if there is none. */
    uint32_t (*repair_peer) (void *arg, int attempt);
};

struct evlayer;

/* 'topo' is borrowed and must outlive the layer.  buffer >= 16. */
struct evlayer *evlayer_create (struct bgn_topo *topo, uint32_t rank,
                                int buffer, double sync_period,
                                const struct evlayer_ops *ops, void *arg);
void evlayer_destroy (struct evlayer **evp);

/* Rank 0: number 'event' (taken over), send it down the tree and deliver
 * it here.  Returns its seq, or -1 with errno EAGAIN while a restarted
 * rank 0 has not yet learned the current seq from a peer (see
 * evlayer_seq_hint), EINVAL on another rank.
 */
int64_t evlayer_publish (struct evlayer *ev, msg_t *event);

/* An event arrived from rank 'from' (kind EV_TREE or EV_REPAIR); taken. */
void evlayer_recv_event (struct evlayer *ev, uint32_t from, int kind,
                         msg_t *event);

/* A control object arrived from rank 'from'. */
void evlayer_recv_control (struct evlayer *ev, uint32_t from, int kind,
                           json_t *o);

/* Timers: call every so often (a few times per sync period). */
void evlayer_tick (struct evlayer *ev, double now);

/* A peer says it has delivered up to seq (from its hello).  A restarted
 * rank 0 continues numbering after the largest hint; the first hint also
 * lets it publish.  On other ranks the first hint sets where this
 * broker's sequence starts (later gaps are repaired or reported). */
void evlayer_seq_hint (struct evlayer *ev, uint32_t seq);

/* The last seq delivered here (0 if none). */
uint32_t evlayer_last (const struct evlayer *ev);

/* Rank 0 with no peers can publish at once (size 1). */
void evlayer_set_ready (struct evlayer *ev);

/* Counters for overlay.status. */
json_t *evlayer_stats (const struct evlayer *ev);

#endif
