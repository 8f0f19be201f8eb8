/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* overlay.h: the overlay's protocol core: the hub and its entry points.
 *
 * The hub (struct overlay) owns every part of the core; each part keeps
 * its state in its own struct below and borrows what else it needs
 * through the hub.  Parts call downward only, in this order (a part may
 * call any part listed after it):
 *
 *   overlay.c   entry points and the coordinator of cross-part reactions
 *   moved.c     telling the peers that dial us where we listen now
 *   hello.c     admission: HELLO / ACK / NAK, incarnations, rejoin
 *   live.c      keepalives, RTT, suspect and lost, peer state changes
 *   status.c    overlay.status and the status-all reduction
 *   heal.c      substitute links (self-healing)
 *   evglue.c    the event layer's ops carried over the overlay
 *   health.c    readiness reports to rank 0, the one-word health
 *   fence.c     who is down: fence/unfence rules, floods, partitions
 *   ovsign.c    brokers' own signatures: live records, requests
 *   tracker.c   requests injected here, failed once if their rank dies,
 *               sent again if a rank on their way dies
 *   dedup.c     requests run here for others: a copy is not run twice
 *   route.c     next hop, detours, backlogs, the TTL step, sending
 *   trace.c     overlay.trace
 *   peer.c      the peer table (data only)
 *   timer.c, frame.c, ovconf.c, envelope.c, events.c (with evstore.c,
 *               evrepair.c, evroot.c, evsign.c)   pure helpers
 *
 * evkey.c (rank 0's signing key in its run directory) is the module's,
 * beside module.c: it touches files.
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
#include "peer.h"
#include "timer.h"

/* The overlay protocol's version: the envelope's, and the hello's. */
#define PROTOCOL_VERSION ENV_VERSION
#define MAX_HOPS_LIST 128

struct idmap;
struct trace;
struct gather;

/* What the module tells the core about this broker. */
struct ovl_identity {
    uint32_t rank;
    uint32_t size;
    uint64_t incarnation;       /* greater than any earlier process's */
    const char *hostname;
    const char *instance;       /* same on every broker */
    const char *pubkey;         /* CURVE public key (Z85), "" without */
    const char *endpoint;       /* where peers reach this broker */
    double wall_offset;         /* wall clock - monotonic clock, for the
                                   timestamps of overlay.trace */
};

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
    uint64_t version_refusals;  /* messages in another protocol version */
    uint64_t moved_refused;     /* overlay.moved not the rank's own word */
    uint64_t endpoint_rereads;  /* dialled peers' endpoints asked again */
};

struct route_state {
    struct ovtimer *retry;        /* backlogs waiting for a peer */
    struct backlog held;          /* responses to ranks fenced here */
};

struct fence_state {
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
};

struct tracker_state {
    struct idmap *map;          /* key hash -> struct tracked */
    struct ovtimer *sweep;
    uint64_t failed;
    uint64_t dup_drops;
    size_t bytes;               /* heap of the copies kept to send again */
    uint64_t retries;           /* requests sent again (a relay died) */
    uint64_t unkept;            /* not kept: past overlay.retry_bytes */
    size_t answered;            /* entries kept only to drop late copies */
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

struct trace_state {
    struct trace *list[8];
    int n;
    bool emitting;              /* never trace the trace responses */
};

struct health_state {
    struct bgn_rankset *ready;  /* rank 0: ranks that reported ready */
    bool reported;              /* this broker reported ready */
    bool acked;                 /* ... and rank 0 answered */
    bool formed;                /* ready once with links up */
    double sent_at;
    bool dirty;                 /* check readiness at the next settle */
    uint64_t refused;           /* rank 0: reports not the rank's own */
};

struct heal_state {
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

struct status_state {
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
    double stalled_at;          /* when we found we had not run */
    double rejoined_at;         /* last rejoin, for its back-off */
    double rejoin_backoff;
    uint64_t rejoin_floor;      /* the highest fenced incarnation of ours
                                   a peer named */
    struct ovtimer *rejoin;       /* a delayed rejoin */
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
    struct ovtimer *evflush;      /* rank 0: the event batching window */
    struct ovl_counters c;
    struct ratelimit *drop_warnings;   /* ovl_log_limited's budget */
};

/* Log through the io (printf-style). */
void ovl_log (struct overlay *ov, int level, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));
/* The same for what a peer can make happen again and again (drops of
 * malformed or unknown traffic): one budget for all of them, a few lines
 * a minute, then " (N similar messages suppressed)". */
void ovl_log_limited (struct overlay *ov, int level, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

static inline double ovl_now (struct overlay *ov)
{
    return ov->io->now (ov->ctx);
}

/* ---- entry points (overlay.c) ---------------------------------------- */

/* A core for broker id->rank of id->size on the topology cfg->topology.
 * Strings in id are copied.  NULL with errno (EINVAL: bad topology, with
 * a log line; ENOMEM). */
struct overlay *overlay_create (const struct ovl_config *cfg,
                                const struct ovl_identity *id,
                                const struct ovl_io *io, void *ctx);
void overlay_destroy (struct overlay **ovp);

/* The instance id, once the bootstrap has it (before overlay_start). */
void overlay_set_instance (struct overlay *ov, const char *instance);

/* Rank 0's event signing key (evlayer_set_keys): rank 0 its secret key,
 * the others rank 0's public key (before overlay_start). */
void overlay_set_event_keys (struct overlay *ov, const unsigned char *sk,
                             const unsigned char *root_pk);

/* This broker's own signing key (64 bytes, crypto_sign; ovsign.h), or
 * NULL: none (before overlay_start). */
void overlay_set_sign_key (struct overlay *ov, const unsigned char *sk);

/* Neighbours from the topology: how many, and the i-th one's rank. */
int overlay_peer_count (const struct overlay *ov);
uint32_t overlay_peer_rank (const struct overlay *ov, int i);

/* Where peer 'rank' listens and its CURVE key (from the bootstrap).
 * The key of a peer that connects to us is authorized (io->authorize).
 * -1 with ENOENT (not a peer), EINVAL (bad key), or the io's errno. */
int overlay_set_peer (struct overlay *ov, uint32_t rank,
                      const char *endpoint, const char *pubkey);

/* Connect to the peers this broker is responsible for, say hello, start
 * the timers. */
int overlay_start (struct overlay *ov);

/* Orderly leave: tell every live peer goodbye. */
void overlay_leave (struct overlay *ov);

/* One message from the socket: routing id, then [envelope][body...]
 * frames (taken).  user_id: the CURVE key the transport authenticated
 * the connection with, or NULL (connections this broker made carry none).
 */
void overlay_recv (struct overlay *ov, const void *id, size_t idlen,
                   struct frame **frames, int n, const char *user_id);

/* What the transport saw happen to a connection. */
enum ovl_sock_event {
    OVL_SOCK_CONNECTED,     /* handshake done on a connection we made */
    OVL_SOCK_DISCONNECTED,  /* a connection we made closed */
    OVL_SOCK_AUTH_FAILED,   /* a CURVE key was refused */
    OVL_SOCK_HANDSHAKE_FAILED,  /* ... and given up (libzmq will not
                                   retry it: we dial again) */
    OVL_SOCK_HANDSHAKE_LOST,    /* the connection broke in its handshake
                                   (libzmq retries by itself) */
};
/* detail: the transport's own words for a failure (may be NULL). */
void overlay_sock_event (struct overlay *ov, enum ovl_sock_event ev,
                         const char *endpoint, const char *detail);

/* The io's wakeup time has come: run the timers due. */
void overlay_run_timers (struct overlay *ov);

/* The broker's overlay ops (bgn/module.h). */
int overlay_send (struct overlay *ov, msg_t **msg, uint32_t dest,
                  const struct bgn_msg_info *info);
int64_t overlay_publish (struct overlay *ov, msg_t *event);
/* Rank 0: publish events[0..n-1] and answer 'req' once they have left
 * (see evglue_publish). */
int overlay_publish_req (struct overlay *ov, msg_t **events, int n,
                         const msg_t *req);
const char *overlay_health (struct overlay *ov);
const char *overlay_topology (struct overlay *ov);

/* Requests and responses for the "overlay" service. */
void overlay_service (struct overlay *ov, const msg_t *req,
                      const struct bgn_msg_info *info);

/* Counters and state as overlay.status reports them (caller decrefs). */
json_t *overlay_status (struct overlay *ov);

#endif
