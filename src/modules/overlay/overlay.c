/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* overlay.c: the protocol core's entry points and its coordinator.
 *
 * Everything that enters the core comes through here: messages from the
 * socket (dispatched by envelope kind), socket events, timers, the
 * broker's overlay ops (send, publish, health) and the "overlay" service
 * (dispatched by method).  The parts below do the work (see overlay.h for
 * the layering); this file decides which part handles what, and runs the
 * reactions that concern several parts at once at the end of the
 * outermost entry point (settle): peers found unreachable while sending
 * are lost, and readiness is looked at again after peers or fences
 * changed (and, after fences changed, whether rank 0 is in reach).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/common/libmsg/packed.h"
#include "body.h"
#include "deliver.h"
#include "dedup.h"
#include "evglue.h"
#include "events.h"
#include "fence.h"
#include "fenceview.h"
#include "heal.h"
#include "health.h"
#include "moved.h"
#include "ovsign.h"
#include "hello.h"
#include "live.h"
#include "membership.h"
#include "livesig.h"
#include "overlay.h"
#include "ovlog.h"
#include "ovservice.h"
#include "partition.h"
#include "route.h"
#include "status.h"
#include "statusall.h"
#include "trace.h"
#include "tracker.h"

#define SETTLE_ROUNDS 16

/* ---- settling: cross-part reactions, deferred ------------------------ */

static void settle (struct overlay *ov)
{
    ov->depth++;   /* what settling calls must not settle again */
    for (int round = 0; round < SETTLE_ROUNDS; round++) {
        bool ready_check = peers_changed (ov->peers) || fence_changed (ov)
                           || health_dirty (ov);
        if (!ov->peers->unreachable && !ready_check)
            break;
        live_check_unreachable (ov);
        if (ready_check) {
            if (fence_changed (ov))
                partition_check_later (ov);
            fence_changed_seen (ov);
            health_dirty_seen (ov);
            health_check_ready (ov);
        }
    }
    ov->depth--;
}

static void enter (struct overlay *ov)
{
    if (ov->depth == 0)
        ovl_now_hold (ov);      /* one clock read for the whole entry */
    /* A broker that did not run for a while takes a new incarnation
     * before it reads anything: what was sent to the old one may have
     * been reported failed, and must not run now. */
    if (ov->depth == 0 && live_stalled (ov, ovl_now (ov))) {
        ov->depth++;
        hello_rejoin_stalled (ov);
        ov->depth--;
    }
    ov->depth++;
}

static void leave (struct overlay *ov)
{
    if (--ov->depth == 0) {
        settle (ov);
        ovl_now_release (ov);
    }
}

/* ---- life cycle -------------------------------------------------------- */

static void wakeup_notify (void *arg, double when)
{
    struct overlay *ov = arg;
    ov->io->wakeup (ov->ctx, when);
}

/* A rank fenced here: rank 0's readiness count forgets it, so that it
 * reports ready again when it is back. */
static void fenced_cb (struct overlay *ov, uint32_t rank, uint64_t inc)
{
    health_forget (ov, rank, inc);
}

static void tick_cb (void *arg);
static double next_tick (const struct overlay *ov, double now);

static int make_peers (struct overlay *ov)
{
    int deg = bgn_topo_degree (ov->topo, ov->rank);
    uint32_t *ranks;
    int n;

    if (deg < 0 || !(ranks = calloc (deg + 1, sizeof (*ranks))))
        return -1;
    n = bgn_topo_neighbours (ov->topo, ov->rank, ranks, deg);
    ov->peers = peers_create (ov->rank, ranks, n < deg ? n : deg,
                              ovl_now (ov));
    free (ranks);
    return ov->peers ? 0 : -1;
}

struct overlay *overlay_create (const struct ovl_config *cfg,
                                const struct ovl_identity *id,
                                const struct ovl_io *io, void *ctx)
{
    struct overlay *ov = calloc (1, sizeof (*ov));

    if (!ov)
        return NULL;
    ov->io = io;
    ov->ctx = ctx;
    ov->cfg = *cfg;
    ov->rank = id->rank;
    ov->size = id->size;
    ov->incarnation = id->incarnation;
    ov->wall_offset = id->wall_offset;
    snprintf (ov->hostname, sizeof (ov->hostname), "%s", id->hostname);
    snprintf (ov->version, sizeof (ov->version), "%s",
              id->version ? id->version : "");
    snprintf (ov->instance, sizeof (ov->instance), "%s",
              id->instance ? id->instance : "");
    snprintf (ov->pubkey, sizeof (ov->pubkey), "%s", id->pubkey);
    snprintf (ov->endpoint, sizeof (ov->endpoint), "%s", id->endpoint);
    if (cfg->topo && bgn_topo_size (cfg->topo) == ov->size)
        ov->topo = cfg->topo;
    else if (!(ov->topo = bgn_topo_create (cfg->topology, ov->size))) {
        ovl_log (ov, LOG_ERR, "overlay.topology: '%s' is not a topology",
                 cfg->topology);
        errno = EINVAL;
        goto error;
    }
    snprintf (ov->topo_spec, sizeof (ov->topo_spec), "%s",
              bgn_topo_name (ov->topo));
    ov->diameter = bgn_topo_diameter (ov->topo);
    ov->ttl = ovconf_ttl (cfg, ov->topo);
    if (ovlog_init (ov) < 0
        || !(ov->timers = timerq_create (wakeup_notify, ov))
        || !(ov->router = bgn_router_create (ov->topo))
        || make_peers (ov) < 0
        || route_init (ov) < 0 || fence_init (ov) < 0
        || partition_init (ov) < 0 || livesig_init (ov) < 0
        || fenceview_init (ov) < 0 || membership_init (ov) < 0
        || tracker_init (ov) < 0 || dedup_init (ov) < 0
        || health_init (ov) < 0
        || heal_init (ov) < 0 || status_init (ov) < 0 || hello_init (ov) < 0
        || evglue_init (ov) < 0 || ovsign_init (ov) < 0
        || !(ov->tick = ovtimer_create (ov->timers, tick_cb, ov)))
        goto error;
    fence_on_fenced (ov, fenced_cb);
    return ov;
error:
    overlay_destroy (&ov);
    return NULL;
}

void overlay_destroy (struct overlay **ovp)
{
    struct overlay *ov;

    if (!ovp || !(ov = *ovp))
        return;
    int saved = errno;
    ovtimer_destroy (&ov->tick);
    hello_fini (ov);
    evglue_fini (ov);
    ovsign_fini (ov);
    status_fini (ov);
    heal_fini (ov);
    health_fini (ov);
    trace_fini (ov);
    dedup_fini (ov);
    tracker_fini (ov);
    partition_fini (ov);
    fence_fini (ov);
    livesig_fini (ov);
    membership_fini (ov);
    fenceview_fini (ov);
    route_fini (ov);
    peers_destroy (&ov->peers);
    bgn_router_destroy (&ov->router);
    if (ov->topo != ov->cfg.topo)
        bgn_topo_destroy (&ov->topo);
    timerq_destroy (&ov->timers);
    ovlog_fini (ov);
    free (ov);
    *ovp = NULL;
    errno = saved;
}

void overlay_set_instance (struct overlay *ov, const char *instance)
{
    snprintf (ov->instance, sizeof (ov->instance), "%s", instance);
}

void overlay_set_event_keys (struct overlay *ov, const unsigned char *sk,
                             const unsigned char *root_pk)
{
    evlayer_set_keys (ov->events, sk, root_pk);
}

void overlay_set_sign_key (struct overlay *ov, const unsigned char *sk)
{
    ovsign_set_key (ov, sk);
}

int overlay_peer_count (const struct overlay *ov)
{
    return ov->peers->n;
}

uint32_t overlay_peer_rank (const struct overlay *ov, int i)
{
    return ov->peers->v[i]->rank;
}

int overlay_set_peer (struct overlay *ov, uint32_t rank, const char *endpoint,
                      const char *pubkey)
{
    struct peer *p = peers_lookup (ov->peers, rank);

    if (!p) {
        errno = ENOENT;
        return -1;
    }
    peer_set_contact (p, endpoint, pubkey ? pubkey : "");
    if (ov->cfg.curve && !p->connector) {
        if (strlen (p->pubkey) != 40) {
            ovl_log (ov, LOG_ERR, "peer %u: bad public key", (unsigned)rank);
            errno = EINVAL;
            return -1;
        }
        return ov->io->authorize (ov->ctx, p->pubkey);
    }
    return 0;
}

int overlay_start (struct overlay *ov)
{
    double now = ovl_now (ov);
    int rc = 0;

    enter (ov);
    ov->started = true;
    ov->started_at = now;
    for (int i = 0; i < ov->peers->n; i++) {
        struct peer *p = ov->peers->v[i];
        /* "never joined" counts from now, not from load: a host may take
         * long between the two (the Flux module's rank 0 waits for every
         * rank's bgn to load) */
        if (p->state == PEER_CONNECTING && p->hello.incarnation == 0)
            peer_reset_since (p, now);
        if (!p->connector)
            continue;
        if (ov->io->connect (ov->ctx, p->rank, p->endpoint, p->pubkey) < 0) {
            ovl_log (ov, LOG_ERR, "connect to rank %u at %s: %s",
                     (unsigned)p->rank, p->endpoint, strerror (errno));
            rc = -1;
            break;
        }
        /* queued until the connection is up, then it goes first */
        hello_send_first (ov, p);
    }
    ov->last_tick = now;
    evlayer_start (ov->events, now);
    ovtimer_arm (ov->tick, next_tick (ov, now));
    health_check_later (ov);   /* no peers at all: ready at once */
    ovl_log (ov, LOG_DEBUG, "overlay %s: %d peers, bind %s, ttl %d",
             ov->topo_spec, ov->peers->n, ov->endpoint, ov->ttl);
    leave (ov);
    return rc;
}

void overlay_leave (struct overlay *ov)
{
    enter (ov);
    for (int i = 0; i < ov->peers->n; i++) {
        struct peer *p = ov->peers->v[i];
        if (peer_is_up (p))
            route_send_control (ov, p, ENV_GOODBYE, NULL);
    }
    leave (ov);
}

void overlay_ending (struct overlay *ov)
{
    enter (ov);
    partition_ending (ov);
    leave (ov);
}

/* ---- timers ------------------------------------------------------------ */

/* The next tick: on a grid of half keepalive intervals laid on the wall
 * clock, the same for every broker whose clock agrees (all of one host,
 * and hosts kept in time).  Brokers then tick together: each hears its
 * peers' keepalives in a burst and wakes once for them, where ticks at
 * random phases woke it once per peer. */
static double next_tick (const struct overlay *ov, double now)
{
    double step = ov->cfg.keepalive_interval / 2;
    double at;

    if (!(step > 0))
        return now;
    at = (floor ((now + ov->wall_offset) / step) + 1) * step - ov->wall_offset;
    return at > now ? at : at + step;
}

static void tick_cb (void *arg)
{
    struct overlay *ov = arg;
    double now = ovl_now (ov);

    ov->last_tick = now;
    health_retry (ov, now);
    evlayer_tick (ov->events, now);
    trace_expire (ov, now);
    heal_check (ov, now);
    live_tick (ov, now);
    live_never_joined (ov, now);
    route_expire (ov, now);
    hello_retry (ov, now);
    moved_tick (ov, now);
    ovtimer_arm (ov->tick, next_tick (ov, now));
}

void overlay_run_timers (struct overlay *ov)
{
    enter (ov);
    timerq_run (ov->timers, ovl_now (ov));
    leave (ov);
}

/* ---- messages from peers ---------------------------------------------- */

static void recv_data (struct overlay *ov, struct peer *p,
                       struct envelope *env, struct frame **body, int n)
{
    bool for_us = env->dest == ov->rank || env->dest == NODEID_ANY
                  || env->dest == NODEID_UPSTREAM;
    bool test_loop = ov->cfg.test_loop >= 0
                     && env->dest == (uint32_t)ov->cfg.test_loop;

    if (for_us && !test_loop) {
        deliver_local (ov, p, env, body, n);
        return;
    }
    if (env->dest >= ov->size) {
        route_count (ov, RC_malformed_drops, 1);
        return;
    }
    if (route_ttl_step (env) < 0) {
        p->rx.ttl_drops++;
        route_count (ov, RC_ttl_drops, 1);
        ovl_log (ov, LOG_DEBUG, "TTL expired: message from rank %u to %u "
                 "after %d hops", (unsigned)env->source, (unsigned)env->dest,
                 env->hops);
        route_fail_request (ov, body, n, EHOSTUNREACH,
                            "TTL expired in the overlay (routing loop?)");
        return;
    }
    /* a response for a rank fenced here is held: the rank may have
     * rejoined, the news not yet here (route_forward) */
    if (route_forward (ov, env, body, n, (int)p->rank) < 0) {
        route_drop (ov, env, body, n, errno);
        return;
    }
    route_count (ov, RC_forwarded, 1);
}

static void recv_keepalive (struct overlay *ov, struct peer *p,
                            struct envelope *env, struct frame **body, int n)
{
    live_keepalive (ov, p, env, body, n);
}

/* Fence records: what they mean above the fence layer. */
static void recv_view (struct overlay *ov, struct peer *p,
                       struct envelope *env, struct frame **body, int n)
{
    int flags;

    if (env->dest != ov->rank) {   /* routed through us */
        route_pass_on (ov, env, body, n, (int)p->rank);
        return;
    }
    flags = fence_recv (ov, p, env, body, n);
    /* a suspicion of us is refuted, links kept (suspect.h), and a
     * report's sender answered straight back; only a broker that cannot
     * sign rejoins.  A refuted fence may have reached rank 0 first, which
     * then forgot our readiness: we report it again. */
    if ((flags & FENCE_SELF) && fence_refute (ov) < 0)
        hello_rejoin (ov, "a peer says this incarnation is fenced");
    else if (flags & (FENCE_SELF | FENCE_SELF_OLD)) {
        if ((flags & FENCE_SELF) && ov->rank != 0)
            health_report_again (ov);
        if (env->kind == ENV_REPORT)
            fence_answer (ov, env->source);
    }
    if (flags & FENCE_NEIGHBOUR_BACK) {
        hello_neighbours_back (ov);
        moved_neighbours_back (ov);
    }
    if (flags & FENCE_ROOT_NEW)
        health_root_news (ov);
}

static void recv_event (struct overlay *ov, struct peer *p,
                        struct envelope *env, struct frame **body, int n)
{
    evglue_recv (ov, p, env, body, n);
}

static void recv_link (struct overlay *ov, struct peer *p,
                       struct envelope *env, struct frame **body, int n)
{
    json_t *o = n >= 1 ? json_loadb ((const char *)frame_data (body[0]),
                                     frame_size (body[0]), 0, NULL)
                       : NULL;
    const char *op;
    int a, b;

    if (o && json_unpack (o, "{s:s s:i s:i}", "op", &op, "a", &a, "b", &b) == 0
        && a >= 0 && b >= 0)
        heal_link_apply (ov, op, (uint32_t)a, (uint32_t)b, (int)p->rank);
    else
        route_count (ov, RC_malformed_drops, 1);
    json_decref (o);
}

static void recv_goodbye (struct overlay *ov, struct peer *p,
                          struct envelope *env, struct frame **body, int n)
{
    live_goodbye (p);
    live_peer_lost (ov, p, "left the instance");
}

typedef void (*recv_f) (struct overlay *ov, struct peer *p,
                        struct envelope *env, struct frame **body, int n);

/* Handlers for envelopes from an admitted peer, by kind (hellos are
 * looked at before admission, see overlay_recv). */
static const recv_f recv_table[ENV_KIND_MAX + 1] = {
    [ENV_DATA] = recv_data,
    [ENV_KEEPALIVE] = recv_keepalive,
    [ENV_GOODBYE] = recv_goodbye,
    [ENV_REPORT] = recv_view,
    [ENV_BATCH] = recv_view,
    [ENV_VIEW] = recv_view,
    [ENV_EVENT] = recv_event,
    [ENV_EVCTL] = recv_event,
    [ENV_LINK] = recv_link,
};

static bool is_hello (int kind)
{
    return kind == ENV_HELLO || kind == ENV_HELLO_ACK || kind == ENV_HELLO_NAK;
}

/* Which peer sent this?  Counts and logs (rate-limited) unknown ones. */
static struct peer *sender (struct overlay *ov, const void *id, size_t idlen)
{
    struct peer *p = peers_lookup_id (ov->peers, id, idlen);

    if (!p) {
        ov->rx.unknown_peer_drops++;
        ovl_log_limited (ov, LOG_WARNING, "dropped message from unknown peer "
                         "'%.*s' (%llu so far)", (int)(idlen > 16 ? 16 : idlen),
                         (const char *)id,
                         (unsigned long long)ov->rx.unknown_peer_drops);
    }
    return p;
}

/* Not admitted (connecting or down): drop, and tell a fenced broker that
 * still talks (it was hung) that it is fenced, so it rejoins.  A fence
 * above the incarnation it talks with covers it too (someone fenced it
 * at one it never had): it is told the fence's incarnation, or it would
 * rejoin below it, and nobody would hear it until a hello was refused. */
static void recv_unadmitted (struct overlay *ov, struct peer *p,
                             const struct envelope *env)
{
    const struct fence_entry *f = fence_lookup (ov, p->rank);

    hello_count_stale (ov);
    /* a request that waited here while this broker did not run was
     * reported failed to its client: it must not run now */
    if (env->kind == ENV_DATA && env->receiver_inc != ov->incarnation)
        ovl_log (ov, LOG_NOTICE, "dropped a message from rank %u sent to "
                 "this broker before it rejoined (not run: its sender was "
                 "told it failed)", (unsigned)env->source);
    if (p->state == PEER_DOWN && f && f->fenced && env->sender_inc <= f->inc)
        fence_tell (ov, p, env->sender_inc, f->inc);
}

/* p talks with an incarnation newer than the one we know, over its own
 * link, without a hello: it refuted a fence of itself (fence_refute),
 * links kept, and its word about itself is believed (doc/overlay-
 * protocol.md 3.4).  A peer we took down on that fence is up again. */
static void refuted_here (struct overlay *ov, struct peer *p,
                          const struct envelope *env)
{
    const struct fence_entry *f;

    if (env->sender_inc <= p->hello.incarnation || p->hello.incarnation == 0
        || p->live.leaving || p->state == PEER_CONNECTING
        || !fence_own_inc (ov, env->receiver_inc))
        return;
    fence_apply (ov, p->rank, env->sender_inc, false, "refuted", FROM_HERE);
    if (!(f = fence_lookup (ov, p->rank)) || f->fenced
        || f->inc != env->sender_inc)
        return;
    hello_adopt (p, env->sender_inc);
    if (!peer_is_up (p)) {
        live_heard (p, ovl_now (ov));
        live_set_state (ov, p, PEER_UP);
    }
}

/* On connections peers made to us, CURVE says who they are: the key must
 * be the one the claimed rank published.  (ZAP already refused keys of
 * no neighbour; this stops one neighbour posing as another.) */
static const char *key_problem (struct overlay *ov, struct peer *p,
                                const char *user_id)
{
    if (!ov->cfg.curve || p->connector)
        return NULL;
    if (!user_id || strcmp (user_id, p->pubkey) != 0)
        return "CURVE key does not belong to that rank";
    return NULL;
}

/* A message in another version of the protocol (bytes 0-15 of the
 * envelope keep their layout across versions, envelope.h): refuse the
 * peer, say so once in a while, and let overlay-status show it.  A hello
 * gets a refusal in our version, which a peer that follows this rule
 * reads the same way. */
static void version_refused (struct overlay *ov, struct peer *p,
                             const uint8_t *env, size_t len)
{
    unsigned theirs = env[1];

    ov->rx.version_refusals++;
    peer_set_problem (p, "refused: it speaks overlay "
              "protocol version %u, this broker speaks version %u", theirs,
              ENV_VERSION);
    ovl_log_limited (ov, LOG_ERR, "peer %u%s%s refused: it speaks overlay "
                     "protocol version %u, this broker speaks version %u",
                     (unsigned)p->rank, p->hello.hostname[0] ? " on " : "",
                     p->hello.hostname, theirs, ENV_VERSION);
    if (len > 2 && env[2] == ENV_HELLO) {
        char why[128];
        json_t *o;
        snprintf (why, sizeof (why), "protocol version mismatch: rank %u "
                  "speaks overlay protocol version %u, not %u",
                  (unsigned)ov->rank, ENV_VERSION, theirs);
        if ((o = json_pack ("{s:s}", "reason", why)))
            route_send_control_inc (ov, p, ENV_HELLO_NAK, o, 0);
        json_decref (o);
    }
}

/* Handle one decoded message from p: body[0..n-1] as its kind wants it
 * (body.h), taken or left for the caller to drop. */
static void handle (struct overlay *ov, struct peer *p, struct envelope *env,
                    struct frame **body, int n, const char *user_id)
{
    if (is_hello (env->kind)) {
        hello_recv (ov, p, env, body, n, key_problem (ov, p, user_id));
        return;
    }
    if (env->sender_inc > p->hello.incarnation)
        refuted_here (ov, p, env);   /* may bring p up again */
    if (p->state == PEER_CONNECTING || p->state == PEER_DOWN) {
        recv_unadmitted (ov, p, env);
        return;
    }
    if (env->sender_inc != p->hello.incarnation
        || !fence_own_inc (ov, env->receiver_inc)) {
        hello_count_stale (ov);
        return;
    }
    live_heard (p, ovl_now (ov));
    if (p->state == PEER_SUSPECT)
        live_set_state (ov, p, PEER_UP);
    if (env->kind > ENV_KIND_MAX || !recv_table[env->kind]) {
        route_count (ov, RC_malformed_drops, 1);
        return;
    }
    recv_table[env->kind] (ov, p, env, body, n);
}

static void dispatch (struct overlay *ov, const void *id, size_t idlen,
                      struct frame **frames, int n, const char *user_id)
{
    struct frame *body[PACKED_MAX_FRAMES];
    struct envelope env;
    const char *why = NULL;
    const uint8_t *data;
    size_t len;
    struct peer *p;
    int nb;

    if (n < 1) {
        route_count (ov, RC_malformed_drops, 1);
        return;
    }
    if (!(p = sender (ov, id, idlen)))
        return;
    data = frame_data (frames[0]);
    len = frame_size (frames[0]);
    if (len >= 2 && data[0] == ENV_MAGIC && data[1] != ENV_VERSION) {
        version_refused (ov, p, data, len);
        return;
    }
    if (n > 1)
        why = "a message of several frames (one expected)";
    else if (envelope_decode (data, len, &env, &why) == 0)
        why = NULL;
    if (why) {
        route_count (ov, RC_malformed_drops, 1);
        ovl_log_limited (ov, LOG_WARNING, "peer %u: dropped a malformed "
                         "message: %s", (unsigned)p->rank, why);
        return;
    }
    if (p->problem[0])
        peer_set_problem (p, "%s", "");  /* it talks to us, in our version */
    p->rx.rx_msgs++;
    p->rx.rx_bytes += len;
    if (trace_wanted (ov)) {
        struct trace_info ti = { 0 };
        trace_capture (ov, &env, frames[0], &ti);
        if (ti.valid)
            trace_emit (ov, "rx", p->rank, &env, &ti);
    }
    if (env.kind == ENV_DATA) {
        /* the message stays one frame: forwarded as is, decoded once */
        handle (ov, p, &env, frames, 1, user_id);
        return;
    }
    if ((nb = body_unpack (frames[0], body, PACKED_MAX_FRAMES, &why)) < 0) {
        route_count (ov, RC_malformed_drops, 1);
        ovl_log_limited (ov, LOG_WARNING, "peer %u: dropped a malformed %s "
                         "message: %s", (unsigned)p->rank,
                         envelope_kindstr (env.kind), why);
        return;
    }
    handle (ov, p, &env, body, nb, user_id);
    frame_decref_all (body, nb);
}

void overlay_recv (struct overlay *ov, const void *id, size_t idlen,
                   struct frame **frames, int n, const char *user_id)
{
    enter (ov);
    dispatch (ov, id, idlen, frames, n, user_id);
    frame_decref_all (frames, n);   /* what was not passed on */
    leave (ov);
}

void overlay_sock_event (struct overlay *ov, enum ovl_sock_event ev,
                         const char *endpoint, const char *detail)
{
    enter (ov);
    switch (ev) {
    case OVL_SOCK_CONNECTED:
        hello_connected (ov, endpoint);
        break;
    case OVL_SOCK_DISCONNECTED:
        /* Only connections we made name a peer by endpoint. */
        for (int i = 0; i < ov->peers->n; i++) {
            struct peer *p = ov->peers->v[i];
            if (p->connector && !strcmp (p->endpoint, endpoint)) {
                hello_link_lost (p);
                live_peer_lost (ov, p, "connection closed");
            }
        }
        break;
    case OVL_SOCK_AUTH_FAILED:
    case OVL_SOCK_HANDSHAKE_FAILED:
        ov->rx.auth_failures++;
        ovl_log_limited (ov, LOG_WARNING, "%s: %s", endpoint,
                         detail ? detail : "handshake failed");
        hello_handshake_failed (ov, endpoint, detail ? detail
                                                     : "handshake failed");
        break;
    case OVL_SOCK_HANDSHAKE_LOST:
        ovl_log (ov, LOG_INFO, "%s: %s", endpoint,
                 detail ? detail : "connection lost in the handshake");
        break;
    }
    leave (ov);
}

/* ---- the broker's overlay ops ------------------------------------------ */

int overlay_send (struct overlay *ov, msg_t **msgp, uint32_t dest,
                  const struct bgn_msg_info *info)
{
    struct frame *frames[1];
    bool onward = info && info->from_overlay;   /* continuing its trip */
    struct envelope env = { .kind = ENV_DATA, .dest = dest };
    uint64_t key = 0;
    int n, rc = -1, saved;
    bool is_response, down;

    if (dest == ov->rank || (dest >= ov->size && dest < NODEID_UPSTREAM)) {
        errno = EHOSTUNREACH;
        return -1;
    }
    enter (ov);
    env.ttl = onward ? info->ttl : ov->ttl;
    env.hops = onward ? info->hops : 0;
    env.source = onward ? info->source : ov->rank;
    if (route_ttl_step (&env) < 0) {
        route_count (ov, RC_ttl_drops, 1);
        errno = EHOSTUNREACH;
        goto done;
    }
    is_response = msg_get_type (*msgp) == MSGTYPE_RESPONSE;
    down = bgn_router_is_down (ov->router, dest < ov->size ? dest : 0);
    /* known down: a request waits a while for the rank's rejoin (it may
     * have restarted, the news not here yet), or fails at once */
    if (!onward && down && !is_response) {
        if (tracker_wait (ov, msgp, dest, info && info->sign) == 0) {
            rc = 0;
            goto done;
        }
        errno = EHOSTUNREACH;
        goto done;
    }
    if (!(frames[0] = body_encode (*msgp)))
        goto done;
    n = 1;
    /* a request starting here names the incarnation it is meant for */
    if (!onward && !is_response && dest < ov->size)
        env.stamp = fence_stamp (ov, dest);
    /* signed end to end: the origin's word, whoever relays it */
    if (!onward && info && info->sign && !is_response
        && ovsign_can_sign (ov)) {
        if (!(frames[0] = ovsign_seal_request (ov, frames[0], dest)))
            goto done;
        env.flags |= ENV_FLAG_SIGNED;
    }
    if (!onward && (key = tracker_add (ov, *msgp, dest)))
        tracker_keep (ov, key, frames[0], env.flags & ENV_FLAG_SIGNED,
                      env.stamp);
    if (!onward && is_response && dest < ov->size)
        dedup_response (ov, *msgp, frames[0]);
    /* a response to a fenced rank waits a while for its rejoin */
    if ((down && is_response && dest < ov->size
         && route_hold (ov, &env, frames, n) == 0)
        || route_out (ov, &env, frames, n, -1) == 0) {
        msg_destroy (msgp);
        rc = 0;
        goto done;
    }
    saved = errno;
    frame_decref_all (frames, n);
    route_count (ov, RC_no_route_drops, 1);
    tracker_forget (ov, key);   /* the broker answers it itself */
    errno = saved;
done:
    saved = errno;
    leave (ov);
    errno = saved;
    return rc;
}

int64_t overlay_publish (struct overlay *ov, msg_t *event)
{
    int64_t seq;
    int saved;

    enter (ov);
    seq = evlayer_publish (ov->events, event, NULL);
    saved = errno;
    leave (ov);
    errno = saved;
    return seq;
}

int overlay_publish_req (struct overlay *ov, msg_t **events, int n,
                         const msg_t *req)
{
    int rc, saved;

    enter (ov);
    rc = evglue_publish (ov, events, n, req);
    saved = errno;
    leave (ov);
    errno = saved;
    return rc;
}

const char *overlay_health (struct overlay *ov)
{
    return health_word (ov);
}

const char *overlay_topology (struct overlay *ov)
{
    return ov->topo_spec;
}

json_t *overlay_status (struct overlay *ov)
{
    return status_json (ov);
}

/* The "overlay" service: its methods are in ovservice.c. */
void overlay_service (struct overlay *ov, const msg_t *msg,
                      const struct bgn_msg_info *info)
{
    int type = msg_get_type (msg);

    if (type != MSGTYPE_REQUEST && type != MSGTYPE_RESPONSE)
        return;
    enter (ov);
    ovservice_handle (ov, msg, info);
    leave (ov);
}
