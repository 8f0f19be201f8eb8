/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* ovcore.h: the overlay's protocol core as its users see it.
 *
 * What the module (module.c, with sock.c) and the protocol simulator
 * (src/sim) may call: the core is an opaque struct overlay, made for one
 * broker (its identity, its settings, the io it talks to the world
 * through, io.h), fed what the transport receives and sees, woken when
 * its timers are due, and asked to send, publish and serve the
 * "overlay" methods.  The hub's own header, overlay.h, and the parts'
 * headers are the core's business: a user reads the core's state only
 * through the calls at the end of this header.
 *
 * The entry points live in overlay.c; the read-only observers in
 * ovcore.c.
 */
#ifndef BGN_OVERLAY_OVCORE_H
#define BGN_OVERLAY_OVCORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "src/common/libmsg/message.h"
#include "src/include/bgn/module.h"
#include "io.h"
#include "ovconf.h"

struct overlay;

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
    const char *version;        /* the software's version, told to peers
                                   in hellos and shown in status; NULL or
                                   "" (the simulator): none told */
};

/* ---- entry points (overlay.c) ------------------------------------------ */

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

/* The host has begun to end the whole instance: from now on brokers
 * leave on purpose and in the host's order, and fence reports about them
 * are lost with the brokers that carried them.  Ranks out of reach are
 * then not a partition: rank 0 does not call them lost, and a broker
 * that cannot reach rank 0 does not stop with exit 3 (fence.c). */
void overlay_ending (struct overlay *ov);

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

/* ---- observers (ovcore.c): read-only, for a simulator or a test ------ */

/* Is rank fenced in this broker's view? */
bool overlay_is_fenced (struct overlay *ov, uint32_t rank);

/* The most messages waiting in one peer's backlog (for a peer that is
 * not up, or whose queue is full), 0 if none waits. */
int overlay_backlog_deepest (struct overlay *ov);

/* The next hops toward dest whose links are up, best first, at most max
 * of them: the routing's equal-cost hops (the topology's, less the ranks
 * fenced here; live shortest paths when those are all fenced).  0 if
 * dest is this broker or none of those links is up, -1 with errno if
 * the routing has no hop toward dest. */
int overlay_next_hops (struct overlay *ov, uint32_t dest, uint32_t *hops,
                       int max);

#endif
