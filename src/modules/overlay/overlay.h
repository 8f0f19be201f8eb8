/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* overlay.h: the overlay's protocol core: the hub, the parts' states.
 *
 * The hub (struct overlay) owns every part of the core; each part keeps
 * its state in its own struct below, marked with the part's file, and
 * only that part touches it: another part asks the owner (its calls), and
 * reactions that concern several parts are the coordinator's (overlay.c,
 * which may read every part's state; ovcore.c and status.c, read-only
 * observers, may read it too).  Parts call downward only, in this order:
 * a file calls the files of its own line and of the lines after it, and
 * calls between files of one line go one way (no cycles).  This list is
 * the layering; t/scripts/layout.py reads it from here.
 *
 *   overlay.c   entry points and the coordinator of cross-part reactions
 *   ovcore.c    read-only observers for the core's users
 *   moved.c     telling the peers that dial us where we listen now
 *   hello.c     admission: HELLO / ACK / NAK, incarnations, rejoin
 *   live.c      keepalives, RTT, suspect and lost, peer state changes
 *   status.c    overlay.status and the status-all reduction
 *   heal.c      substitute links (self-healing)
 *   evglue.c    the event layer's ops carried over the overlay
 *   health.c    readiness reports to rank 0, the one-word health
 *   fence.c     who is down: fence/unfence rules, floods, partitions
 *   tracker.c   requests injected here, failed once if their rank dies,
 *               sent again if a rank on their way dies
 *   dedup.c     requests run here for others: a copy is not run twice
 *   ovsign.c    brokers' own signatures: live records, requests
 *   route.c     next hop, detours, backlogs, the TTL step, sending
 *   trace.c     overlay.trace
 *   peer.c      the peer table (data only)
 *   fencemsg.c, treecast.c   fence records on the wire; a multicast's
 *               children around down ranks
 *   body.c      the wire frame: an envelope and a packed frame list
 *   envelope.c  the per-hop envelope codec
 *   events.c    the event layer (events.h): receiving, timers, statistics
 *   evrepair.c, evroot.c   gap repair and loss; rank 0's numbering
 *   evsign.c    rank 0's signature on batches and SYNCs
 *   evdeliver.c the event layer's delivery, buffers and tree
 *   evlayer_int.h, evstore.c   the event layer's state; the batch stores
 *   timer.c, frame.c, ovconf.c, io.h, wire.h   the timer queue, frames,
 *               settings, the io, integers in network order
 *   ovlog.c     logging and the clock, below every part
 *
 * evkey.c (rank 0's signing key in its run directory) is the module's,
 * beside module.c: it touches files.
 *
 * The entry points and the read-only observers are in ovcore.h, the
 * header for the core's users: the simulator sees only that one, with
 * struct overlay opaque (module.c still includes this one).
 *
 * The core touches the world only through struct ovl_io (io.h): no
 * sockets, files, wall clock or reactor, so the module (module.c, with
 * sock.c and curve.c) and the protocol simulator run the same code.
 *
 * Reentrancy: the broker may call back into the core while the core is
 * calling it (delivering a request whose service sends another one, say).
 * Reactions that must not run in the middle of a send (a peer found
 * unreachable, readiness) are deferred to the end of the outermost entry
 * point (overlay.c: settle).
 */
#ifndef BGN_OVERLAY_OVERLAY_H
#define BGN_OVERLAY_OVERLAY_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>

#include "src/common/libbgn/bgn.h"
#include "src/common/libmsg/message.h"
#include "src/include/bgn/module.h"
#include "envelope.h"
#include "events.h"
#include "frame.h"
#include "io.h"
#include "ovconf.h"
#include "ovcore.h"
#include "peer.h"
#include "timer.h"

/* The overlay protocol's version: the envelope's, and the hello's. */
#define PROTOCOL_VERSION ENV_VERSION
#define MAX_HOPS_LIST 128

struct idmap;
struct trace;
struct gather;


struct ovl_counters {
    uint64_t ttl_drops;
    uint64_t unknown_peer_drops;
    uint64_t malformed_drops;
    uint64_t stale_drops;
    uint64_t no_route_drops;
    uint64_t backlog_overflows;
    uint64_t backlog_expired;
    uint64_t forwarded;
    uint64_t delivered;
    uint64_t auth_failures;
    uint64_t redials;
    uint64_t never_joined;
    uint64_t held_expired;      /* responses held for a fenced rank, dropped */
    uint64_t held_drops;        /* ... not held: overlay.held_bytes reached */
    uint64_t version_refusals;  /* messages in another protocol version */
    uint64_t moved_refused;     /* overlay.moved not the rank's own word */
    uint64_t endpoint_rereads;  /* dialled peers' endpoints asked again */
};

struct route_state {            /* route.c */
    struct ovtimer *retry;        /* backlogs waiting for a peer */
    struct backlog held;          /* responses to ranks fenced here */
    size_t waiting;               /* the tracker's requests waiting for a
                                     rejoin: overlay.held_bytes bounds
                                     them with held (route_set_waiting) */
};

struct fence_state {            /* fence.c */
    struct idmap *map;          /* rank -> struct fence_entry */
    struct idmap *livesig;      /* rank -> struct fence_livesig: the rank's
                                   own signature of its live record */
    char reasons[64][48];       /* interned: entries keep an index */
    int nreasons;
    uint64_t digest;            /* of the records, for keepalives */
    int nfenced;
    uint64_t seen;              /* fences applied here */
    uint64_t bad_records;       /* refused: rank or incarnation out of range */
    uint64_t false_claims;      /* records of us at an incarnation we never had */
    uint64_t batches;           /* multicast from here as the root */
    uint64_t views_sent;        /* repairs: whole views to a peer */
    struct idmap *outbox;       /* ranks to report up */
    struct idmap *batch;        /* ranks to multicast down (the root) */
    struct idmap *members;      /* rank 0: fenced or lifted since the last
                                   membership event */
    struct ovtimer *report;       /* the report window */
    struct ovtimer *mcast;        /* the batch window */
    struct ovtimer *partition;    /* deferred partition check */
    bool partitioned;           /* rank 0: live ranks unreachable */
    uint32_t unreachable_live;
    bool changed;               /* news since the last settle */
    bool formed;                /* the overlay formed around us once
                                   (health.c tells: fence_formed) */
    double stalled_at;          /* when we found we had not run (live.c
                                   tells: fence_stalled) */
    uint64_t claimed;           /* the highest incarnation of ours a
                                   record falsely named: rejoin above it */
    void (*fenced_cb) (struct overlay *ov, uint32_t rank);
                                /* the coordinator's reaction to a rank
                                   fenced here (fence_on_fenced) */
};

struct waiting;

struct tracker_state {          /* tracker.c */
    struct idmap *map;          /* key hash -> struct tracked */
    struct ovtimer *sweep;
    uint64_t failed;
    uint64_t dup_drops;
    uint64_t copy_errors;       /* a relay's error for one copy, not told:
                                   another copy was still on its way */
    size_t bytes;               /* heap of the copies kept to send again */
    uint64_t retries;           /* requests sent again (a relay died) */
    uint64_t unkept;            /* not kept: past overlay.retry_bytes */
    size_t answered;            /* entries kept only to drop late copies */
    size_t entry_bytes;         /* heap of the entries' header copies */
    uint64_t untracked;         /* not tracked: TRACKER_MAX or
                                   overlay.tracker_bytes reached */
    struct waiting *wait_head, *wait_tail;   /* waiting for a rejoin */
    int nwaiting;
    size_t wait_bytes;          /* their heap (overlay.held_bytes) */
    struct ovtimer *wait_timer;  /* the first waiting request's deadline */
    uint64_t waits;             /* requests that waited for a rejoin */
    uint64_t wait_expired;      /* ... and failed: no rejoin in time */
};

struct seen;

struct dedup_state {            /* dedup.c */
    struct idmap *map;          /* key hash -> struct seen * */
    struct seen *head, *tail;   /* oldest first */
    size_t bytes;
    uint64_t copies;            /* copies of a request already here */
    uint64_t answered;          /* ... answered again from the cache */
    uint64_t evicted;           /* forgotten early (overlay.dedup_bytes) */
};

struct trace_state {            /* trace.c */
    struct trace *list[8];
    int n;
    bool emitting;              /* never trace the trace responses */
};

struct health_state {           /* health.c */
    struct bgn_rankset *ready;  /* rank 0: ranks that reported ready */
    bool reported;              /* this broker reported ready */
    bool acked;                 /* ... and rank 0 answered */
    bool formed;                /* ready once with links up */
    double sent_at;
    bool dirty;                 /* check readiness at the next settle */
    uint64_t refused;           /* rank 0: reports not the rank's own */
};

struct heal_state {             /* heal.c */
    int threshold;              /* heal below this many peers up */
    int degree;                 /* topology degree, without substitutes */
    int nsubst;
    struct idmap *contacts;     /* asked rank -> lost neighbour */
    double contacts_cleared;
};

struct sign_state {             /* ovsign.c */
    bool can_sign;
    unsigned char sk[64];       /* this broker's secret signing key */
    struct idmap *seen;         /* signed requests taken in the window */
    double floor;               /* nothing signed at or before: taken */
    uint64_t signed_out;        /* requests signed here */
    uint64_t verified;          /* signed requests taken */
    uint64_t bad;               /* signatures that failed */
    uint64_t stale;             /* signed outside the window */
    uint64_t replays;           /* signed requests played again */
    uint64_t unattested;        /* live records refused: not signed by
                                   their rank nor heard from it */
};

struct log_state {              /* ovlog.c */
    struct ratelimit *limit;    /* ovl_log_limited's budget */
};

struct status_state {           /* status.c */
    struct idmap *gathers;      /* matchtag -> struct gather_child */
    uint32_t next_tag;
};

struct overlay {
    const struct ovl_io *io;
    void *ctx;
    struct ovl_config cfg;

    uint32_t rank, size;
    uint64_t incarnation;
    char hostname[64];
    char instance[64];
    char pubkey[41];
    char endpoint[512];
    double wall_offset;

    char topo_spec[64];
    struct bgn_topo *topo;
    struct bgn_router *router;
    int diameter;
    int ttl;

    struct timerq *timers;
    struct ovtimer *tick;         /* keepalive interval / 2 */
    double last_tick;
    double rejoined_at;         /* hello.c: last rejoin, for its
                                   back-off */
    double rejoin_backoff;      /* hello.c: the back-off now */
    uint64_t rejoin_floor;      /* hello.c: the highest fenced incarnation
                                   of ours a HELLO_NAK named */
    struct ovtimer *rejoin;       /* hello.c: a delayed rejoin */
    int depth;                  /* entry points in progress (settle) */
    bool started;
    double started_at;          /* when overlay_start ran (moved.c) */

    struct peers *peers;
    struct route_state route;
    struct fence_state fence;
    struct tracker_state tracker;
    struct dedup_state dedup;
    struct trace_state trace;
    struct health_state health;
    struct heal_state heal;
    struct status_state status;
    struct sign_state sign;
    struct evlayer *events;
    struct ovtimer *evflush;      /* evglue.c: rank 0's event batching
                                     window */
    struct ovl_counters c;
    struct log_state log;
};

#endif
