/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* overlay.h: the overlay's protocol core: the hub.
 *
 * The hub (struct overlay) owns every part of the core; each part keeps
 * its state in its own struct, defined in the part's own header (struct
 * fence_state in fence.h, ...; this header includes them) and marked
 * with the part's file, and only that part touches it (its counters too;
 * and its facts about each peer, in struct peer's sub-struct marked the
 * same way in peer.h): another part asks the owner (its calls), and
 * reactions that concern several parts are the coordinator's
 * (overlay.c, which may read every part's state; ovcore.c and status.c,
 * read-only observers, may read it too).  Parts
 * call downward only, in this order: a file calls the files of its own
 * line and of the lines after it, and calls between files of one line go
 * one way (no cycles).  This list is the layering; t/scripts/layout.py
 * reads it from here (and the owner marks from every header).
 *
 *   overlay.c   entry points and the coordinator of cross-part reactions
 *   ovservice.c the "overlay" service's methods: roles, who answers
 *   ovcore.c    read-only observers for the core's users
 *   moved.c     telling the peers that dial us where we listen now
 *   deliver.c   a broker message for this rank: checked, delivered
 *   hello.c     admission: HELLO / ACK / NAK, incarnations, rejoin
 *   live.c      keepalives, RTT, suspect and lost, peer state changes
 *   statusall.c overlay.status-all: the reduction over the tree
 *   status.c    overlay.status: this broker's view
 *   heal.c      substitute links (self-healing)
 *   evglue.c    the event layer's ops carried over the overlay
 *   health.c    readiness reports to rank 0, the one-word health
 *   partition.c is rank 0 out of reach here: the partition policy
 *   fence.c     who is down: fence/unfence rules, floods
 *   suspect.c   a fence on another broker's word held as a suspicion
 *               until refuted or believed; the power to fence
 *   tracker.c   requests injected here, failed once if their rank dies,
 *               sent again if a rank on their way dies
 *   dedup.c     requests run here for others: a copy is not run twice
 *   membership.c rank 0's membership events
 *   livesig.c   each rank's signature of its live record, kept
 *   fenceview.c the fence view's records and digest (data only)
 *   ovsign.c    brokers' own signatures: live records, requests
 *   route.c     next hop, detours, backlogs, the TTL step, sending
 *   trace.c     overlay.trace
 *   peer.c      the peer table (data only)
 *   fencemsg.c, treecast.c   fence records on the wire; a multicast's
 *               children around down ranks
 *   body.c      the wire frame: an envelope and a packed frame list
 *   envelope.c  the per-hop envelope codec
 *   events.c    the event layer (events.h): receiving, timers, statistics
 *   evsync.c, evjoin.c   rank 0's SYNC; where a joining broker starts
 *   evrepair.c, evroot.c   gap repair and loss; rank 0's numbering
 *   evsign.c    rank 0's signature on batches and SYNCs
 *   evdeliver.c the event layer's delivery, buffers and tree
 *   evlayer_int.h, evstore.c   the event layer's state; the batch stores
 *   timer.c, frame.c, ovconf.c, io.h, sigbudget.h   the timer queue,
 *               frames, settings, the io, the back-off of a link whose
 *               signatures fail (integers in network order: libutil's
 *               wire.h)
 *   ovlog.c     logging and the clock, below every part
 *
 * evkey.c (rank 0's signing key in its run directory) is the module's,
 * beside module.c: it touches files.
 *
 * The entry points and the read-only observers are in ovcore.h, the
 * header for the core's users: the module (module.c, sock.c) and the
 * simulator see only that one, with struct overlay opaque.  This header
 * is private to the core: only its .c files (and its unit tests)
 * include it; the parts' headers declare struct overlay and do not.
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
/* the parts' states */
#include "dedup.h"
#include "deliver.h"
#include "evglue.h"
#include "fence.h"
#include "fenceview.h"
#include "heal.h"
#include "health.h"
#include "hello.h"
#include "live.h"
#include "livesig.h"
#include "membership.h"
#include "moved.h"
#include "ovlog.h"
#include "ovsign.h"
#include "partition.h"
#include "route.h"
#include "status.h"
#include "statusall.h"
#include "suspect.h"
#include "trace.h"
#include "tracker.h"

/* The overlay protocol's version: the envelope's, and the hello's. */
#define PROTOCOL_VERSION ENV_VERSION
#define MAX_HOPS_LIST 128

struct ovl_rx {                 /* overlay.c: what the entry points drop */
    uint64_t unknown_peer_drops;  /* from a peer not in the table */
    uint64_t auth_failures;       /* a CURVE key not the rank's */
    uint64_t version_refusals;    /* in another protocol version */
};

struct overlay {
    const struct ovl_io *io;
    void *ctx;
    struct ovl_config cfg;

    uint32_t rank, size;
    uint64_t incarnation;
    char hostname[64];
    char version[64];           /* ovl_identity's, "" without */
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
    int depth;                  /* entry points in progress (settle) */
    bool started;
    double started_at;          /* when overlay_start ran (moved.c) */

    struct peers *peers;
    struct ovl_rx rx;
    struct deliver_state deliver;
    struct live_state live;
    struct moved_state moved;
    struct hello_state hello;
    struct route_state route;
    struct fence_state fence;
    struct fenceview_state fenceview;
    struct membership_state membership;
    struct partition_state partition;
    struct suspect_state suspect;
    struct livesig_state livesig;
    struct tracker_state tracker;
    struct dedup_state dedup;
    struct trace_state trace;
    struct health_state health;
    struct heal_state heal;
    struct status_state status;
    struct sign_state sign;
    struct evlayer *events;
    struct evglue_state evglue;
    struct log_state log;
};

#endif
