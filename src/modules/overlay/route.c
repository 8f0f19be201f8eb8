/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* route.c: next hop, detours, backlogs, the TTL step, sending (route.h).
 *
 * State: each peer's backlog (struct pending in a FIFO on the peer:
 * messages that wait for a peer still connecting, or whose queue was
 * full), the responses held for a rank fenced here until its rejoin
 * (route.held, dropped after a peer timeout), and one retry timer that
 * drains the backlogs.  A message leaves by route_out: the TTL step,
 * then the first usable hop of the router's shortest ones (one flow
 * keeps one hop, so it stays in order), else a detour, else the backlog
 * of the chosen hop.  Order is kept per peer: nothing is sent straight
 * while older messages wait in that peer's backlog (try_send).  Every
 * byte held counts against overlay.backlog_bytes or overlay.held_bytes,
 * so a dead or slow peer costs bounded memory.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "body.h"
#include "overlay.h"
#include "ovlog.h"
#include "route.h"
#include "trace.h"

#define RETRY_DELAY 0.005   /* backlog retry, seconds */

static void retry_cb (void *arg);

int route_init (struct overlay *ov)
{
    if (!(ov->route.retry = ovtimer_create (ov->timers, retry_cb, ov)))
        return -1;
    return 0;
}

void route_fini (struct overlay *ov)
{
    struct pending *pd;

    ovtimer_destroy (&ov->route.retry);
    while ((pd = backlog_pop (&ov->route.held)))
        pending_destroy (&pd);
}

int route_ttl_step (struct envelope *env)
{
    if (env->ttl == 0)
        return -1;
    env->ttl--;
    env->hops++;
    return 0;
}

/* The wire frame for [env][frames]: for ENV_DATA the one frame the
 * message already is (body_encode), written in place unless someone else
 * holds it too; for control kinds a new frame packing the body. */
static struct frame *wire_frame (const struct envelope *env,
                                 struct frame **frames, int n)
{
    if (env->kind != ENV_DATA)
        return body_pack (NULL, frames, n);
    if (n != 1) {
        errno = EINVAL;
        return NULL;
    }
    if (frame_refs (frames[0]) > 1)
        return frame_create (frame_data (frames[0]), frame_size (frames[0]));
    return frames[0];
}

static int send_raw (struct overlay *ov, struct peer *p, struct envelope *env,
                     struct frame **frames, int n)
{
    struct trace_info ti = { 0 };
    struct frame *w, *out;
    bool in_place;
    size_t bytes;

    env->sender_inc = ov->incarnation;
    if (!(w = wire_frame (env, frames, n)))
        return -1;
    in_place = env->kind == ENV_DATA && w == frames[0];
    envelope_encode (env, frame_data (w));
    bytes = frame_size (w);
    /* The frame is gone once sent: look at it first if anyone traces. */
    if (trace_wanted (ov))
        trace_capture (ov, env, w, &ti);
    out = w;
    if (ov->io->send (ov->ctx, p->rank, &out) < 0) {
        int saved = errno;
        if (!in_place)
            frame_decref (&w);
        if (saved == EHOSTUNREACH && peer_is_up (p)) {
            p->route.unreachable = true;
            ov->peers->unreachable = true;
        }
        errno = saved;
        return -1;
    }
    if (in_place)
        frames[0] = NULL;       /* the very frame went */
    else
        frame_decref_all (frames, n);
    p->route.tx_msgs++;
    p->route.tx_bytes += bytes;
    p->route.last_sent = ovl_now (ov);
    if (ti.valid)
        trace_emit (ov, "tx", p->rank, env, &ti);
    return 0;
}

int route_send_now (struct overlay *ov, struct peer *p, struct envelope *env,
                    struct frame **frames, int n)
{
    env->receiver_inc = p->hello.incarnation;
    return send_raw (ov, p, env, frames, n);
}

int route_send_control_inc (struct overlay *ov, struct peer *p, int kind,
                            json_t *o, uint64_t receiver_inc)
{
    struct envelope env = { .kind = kind, .ttl = 1, .source = ov->rank,
                            .dest = p->rank, .receiver_inc = receiver_inc };
    struct frame *frame = NULL;
    int rc;

    if (o) {
        char *s = json_dumps (o, JSON_COMPACT);
        if (!s || !(frame = frame_create (s, strlen (s)))) {
            free (s);
            errno = ENOMEM;
            return -1;
        }
        free (s);
    }
    if ((rc = send_raw (ov, p, &env, &frame, frame ? 1 : 0)) < 0)
        frame_decref (&frame);
    return rc;
}

int route_send_control_frame (struct overlay *ov, struct peer *p, int kind,
                              struct frame **f, uint64_t receiver_inc)
{
    struct envelope env = { .kind = kind, .ttl = 1, .source = ov->rank,
                            .dest = p->rank, .receiver_inc = receiver_inc };

    return send_raw (ov, p, &env, f, 1);
}

bool route_fail_request (struct overlay *ov, struct frame **body, int n,
                         int errnum, const char *errstr)
{
    msg_t *msg = n == 1 ? body_decode (body[0], NULL, 0) : NULL;
    bool answered = false;

    if (msg && msg_get_type (msg) == MSGTYPE_REQUEST) {
        ov->io->respond_error (ov->ctx, msg, errnum, errstr);
        answered = true;
    }
    msg_destroy (&msg);
    return answered;
}

/* How a drop is told: the errno of a failed route_out in words. */
static const char *drop_reason (int errnum)
{
    switch (errnum) {
    case ENOBUFS:
        return "overlay backlog full";
    case EHOSTUNREACH:
        return "no route to the destination rank";
    default:
        return "could not be routed";
    }
}

void route_drop (struct overlay *ov, const struct envelope *env,
                 struct frame **body, int n, int errnum)
{
    const char *why = drop_reason (errnum);

    ov->route.count[RC_no_route_drops]++;
    /* a request's client hears why; anything else is told in the log */
    if (!route_fail_request (ov, body, n, errnum == ENOBUFS ? ENOBUFS
                                                            : EHOSTUNREACH,
                             why))
        ovl_log_limited (ov, LOG_NOTICE, "dropped a message from rank %u to "
                         "rank %u: %s", (unsigned)env->source,
                         (unsigned)env->dest, why);
}

int route_pass_on (struct overlay *ov, struct envelope *env,
                   struct frame **frames, int n, int from)
{
    if (route_ttl_step (env) < 0) {
        ov->route.count[RC_ttl_drops]++;
        return -1;
    }
    if (route_out (ov, env, frames, n, from) < 0) {
        route_drop (ov, env, frames, n, errno);
        return -1;
    }
    ov->route.count[RC_forwarded]++;
    return 0;
}

uint64_t route_count (struct overlay *ov, enum route_count c, uint64_t n)
{
    return ov->route.count[c] += n;
}

bool route_take_unreachable (struct peer *p)
{
    bool was = p->route.unreachable;

    p->route.unreachable = false;
    return was;
}

size_t route_backlog_bytes (struct overlay *ov)
{
    size_t total = 0;

    for (int i = 0; i < ov->peers->n; i++)
        total += ov->peers->v[i]->backlog.bytes;
    return total;
}

size_t route_held_bytes (struct overlay *ov)
{
    return ov->route.held.bytes;
}

void route_set_waiting (struct overlay *ov, size_t bytes)
{
    ov->route.waiting = bytes;
}

/* [env][frames] as a pending message for a store that may keep it a
 * peer timeout: frames that wrap a transport buffer are copied
 * (frame_keep).  NULL with errno, frames left with the caller: ENOMEM,
 * or ENOBUFS when it would take the store past 'bound' ('held' bytes
 * held there now). */
static struct pending *pending_take (struct overlay *ov,
                                     const struct envelope *env,
                                     struct frame **frames, int n,
                                     size_t held, long long bound)
{
    struct pending *pd = pending_create (env, n, ovl_now (ov));
    int err = ENOMEM;

    if (!pd)
        return NULL;
    for (int i = 0; i < n; i++)
        if (!(pd->frames[i] = frame_keep (frames[i])))
            goto fail;
    if (held + pending_cost (pd) > (size_t)bound) {
        err = ENOBUFS;
        goto fail;
    }
    frame_decref_all (frames, n);
    return pd;
fail:
    pending_destroy (&pd);
    errno = err;
    return NULL;
}

int route_hold (struct overlay *ov, const struct envelope *env,
                struct frame **frames, int n)
{
    /* with the requests waiting for a rejoin at their origin (tracker) */
    struct pending *pd = pending_take (ov, env, frames, n,
                                       route_held_bytes (ov)
                                           + ov->route.waiting,
                                       ov->cfg.held_bytes);

    if (!pd) {
        if (errno == ENOBUFS) {
            ov->route.count[RC_held_drops]++;
            ovl_log_limited (ov, LOG_WARNING, "dropped a response from "
                             "rank %u for rank %u, fenced here: %zu bytes "
                             "are held for rejoins already "
                             "(overlay.held_bytes)", (unsigned)env->source,
                             (unsigned)env->dest, route_held_bytes (ov));
            errno = ENOBUFS;
        }
        return -1;
    }
    backlog_push (&ov->route.held, pd);
    return 0;
}

void route_release (struct overlay *ov, uint32_t rank)
{
    struct backlog keep = { 0 };
    struct pending *pd;

    while ((pd = backlog_pop (&ov->route.held))) {
        if (pd->env.dest != rank) {
            backlog_push (&keep, pd);
            continue;
        }
        if (route_out (ov, &pd->env, pd->frames, pd->nframes, -1) == 0)
            pd->nframes = 0;
        else
            route_drop (ov, &pd->env, pd->frames, pd->nframes, errno);
        pending_destroy (&pd);
    }
    ov->route.held = keep;
}

/* A held request (ENV_FLAG_WAITED) whose rank did not rejoin within
 * overlay.rejoin_wait: it did not run. */
static void expire_request (struct overlay *ov, struct pending *pd)
{
    char errstr[160];

    ov->route.count[RC_held_expired]++;
    snprintf (errstr, sizeof (errstr), "rank %u is down or restarting: no "
              "rejoin within %gs; the request did not run",
              (unsigned)pd->env.dest, ov->cfg.rejoin_wait);
    route_fail_request (ov, pd->frames, pd->nframes, EHOSTUNREACH, errstr);
}

/* Held messages whose rank stayed fenced: a response a peer timeout (the
 * rank is dead), a request overlay.rejoin_wait. */
static void expire_held (struct overlay *ov, double now)
{
    struct backlog keep = { 0 };
    struct pending *pd;

    while ((pd = backlog_pop (&ov->route.held))) {
        bool request = pd->env.flags & ENV_FLAG_WAITED;
        if (now - pd->queued <= (request ? ov->cfg.rejoin_wait
                                         : ov->cfg.peer_timeout)) {
            backlog_push (&keep, pd);
            continue;
        }
        if (request)
            expire_request (ov, pd);
        else {
            ov->route.count[RC_held_expired]++;
            ovl_log_limited (ov, LOG_INFO, "dropped a response from rank "
                             "%u held for the rejoin of rank %u: it stayed "
                             "down %.0fs", (unsigned)pd->env.source,
                             (unsigned)pd->env.dest, now - pd->queued);
        }
        pending_destroy (&pd);
    }
    ov->route.held = keep;
}

void route_expire (struct overlay *ov, double now)
{
    double limit = ov->cfg.peer_timeout;

    expire_held (ov, now);

    for (int i = 0; i < ov->peers->n; i++) {
        struct peer *p = ov->peers->v[i];
        struct pending *pd;
        char why[96];
        while ((pd = backlog_first (&p->backlog))
               && now - pd->queued > limit) {
            pd = backlog_pop (&p->backlog);
            p->route.backlog_drops++;
            ov->route.count[RC_backlog_expired]++;
            snprintf (why, sizeof (why), "waited %.0fs for rank %u (%s)",
                      now - pd->queued, (unsigned)p->rank,
                      peer_state_str (p->state));
            if (pd->env.kind == ENV_DATA)
                route_fail_request (ov, pd->frames, pd->nframes,
                                    EHOSTUNREACH, why);
            pending_destroy (&pd);
        }
    }
}

int route_send_control (struct overlay *ov, struct peer *p, int kind,
                        json_t *o)
{
    return route_send_control_inc (ov, p, kind, o, p->hello.incarnation);
}

/* Equal-cost hops come from libbgn sorted; a fixed pick per (self,
 * dest) keeps one flow on one path (in order), the rest are fall-backs. */
int route_next_hops (struct overlay *ov, uint32_t dest, uint32_t *hops,
                     int max, bool *live)
{
    uint32_t tmp[MAX_HOPS_LIST];
    int n;

    if (ov->cfg.test_loop >= 0 && dest == (uint32_t)ov->cfg.test_loop) {
        /* Test-only: forward to the lowest neighbour that is not dest, so
         * two brokers bounce a message until its TTL runs out. */
        for (int i = 0; i < ov->peers->n; i++) {
            if (ov->peers->v[i]->rank != dest) {
                hops[0] = ov->peers->v[i]->rank;
                return 1;
            }
        }
    }
    if (*live)
        n = bgn_router_next_hop (ov->router, ov->rank, dest, hops, max);
    else
        n = bgn_router_route (ov->router, ov->rank, dest, hops, max, live);
    if (n <= 1)
        return n;
    if (n > max)
        n = max;
    int first = (int)((ov->rank + dest) % (uint32_t)n);
    for (int i = 0; i < n; i++)
        tmp[i] = hops[(first + i) % n];
    memcpy (hops, tmp, n * sizeof (uint32_t));
    return n;
}

/* Queue [env][frames] for p (frames taken).  -1/ENOBUFS when full. */
static int enqueue (struct overlay *ov, struct peer *p,
                    const struct envelope *env, struct frame **frames, int n)
{
    struct pending *pd = NULL;

    if (p->backlog.count >= ov->cfg.backlog_max)
        errno = ENOBUFS;
    else
        pd = pending_take (ov, env, frames, n, route_backlog_bytes (ov),
                           ov->cfg.backlog_bytes);
    if (!pd) {
        if (errno == ENOBUFS) {
            p->route.backlog_drops++;
            ov->route.count[RC_backlog_overflows]++;
        }
        return -1;
    }
    backlog_push (&p->backlog, pd);
    if (!ovtimer_armed (ov->route.retry))
        ovtimer_arm (ov->route.retry, ovl_now (ov) + RETRY_DELAY);
    return 0;
}

/* Send to p now if nothing waits before the message (order), else -1. */
static int try_send (struct overlay *ov, struct peer *p, struct envelope *env,
                     struct frame **frames, int n)
{
    if (p->backlog.count > 0)
        return -1;
    return route_send_now (ov, p, env, frames, n);
}

/* Every shortest next hop is unusable from here (its link is down):
 * the live neighbour closest to the target, never 'from'.  The TTL
 * bounds any loop this could make. */
static struct peer *detour (struct overlay *ov, uint32_t target, int from)
{
    struct peer *best = NULL;
    int bestd = INT_MAX;

    for (int i = 0; i < ov->peers->n; i++) {
        struct peer *p = ov->peers->v[i];
        int d;
        if (!peer_is_up (p) || (int)p->rank == from)
            continue;
        if (p->rank == target)
            d = 0;
        else if ((d = bgn_router_distance (ov->router, p->rank, target)) < 0)
            continue;
        if (d < bestd) {
            bestd = d;
            best = p;
        }
    }
    return best;
}

/* Try the hops in order of preference: up before suspect (a suspect peer
 * may be hung: traffic into it waits), the equal-cost pick first among
 * each.  Returns 0 if sent; else the peer to queue on (up or suspect
 * first, then connecting), or NULL.
 *
 * A hop that is the peer the message came from ('from') is never sent to
 * at once.  Shortest paths never lead back to where a message came from
 * when two brokers see the same graph, so a bounce means their views
 * differ: a fence or unfence is still on its way to one of them.  Sent
 * straight back, the message would ping-pong until its TTL ran out; queued
 * on that peer, it leaves at the next backlog retry (RETRY_DELAY), by
 * when the news has usually arrived and the peer routes it right. */
static int send_via (struct overlay *ov, const uint32_t *hops, int nh,
                     struct envelope *env, struct frame **frames, int n,
                     int from, struct peer **queue_on)
{
    struct peer *connecting = NULL, *bounce = NULL;

    *queue_on = NULL;
    for (int pass = 0; pass < 2; pass++) {
        int want = pass == 0 ? PEER_UP : PEER_SUSPECT;
        for (int i = 0; i < nh; i++) {
            struct peer *p = peers_lookup (ov->peers, hops[i]);
            if (!p)
                continue;
            if (p->state == PEER_CONNECTING && !connecting)
                connecting = p;
            if (p->state != want)
                continue;
            if ((int)p->rank == from) {
                if (!bounce)
                    bounce = p;
                continue;
            }
            if (try_send (ov, p, env, frames, n) == 0) {
                if (i > 0 || pass > 0)
                    p->route.reroutes++;
                return 0;
            }
            if (!*queue_on)
                *queue_on = p;
        }
    }
    if (!*queue_on)
        *queue_on = bounce ? bounce : connecting;
    return -1;
}

int route_out (struct overlay *ov, struct envelope *env,
               struct frame **frames, int n, int from)
{
    uint32_t hops[MAX_HOPS_LIST];
    uint32_t target = env->dest;
    bool live = (env->flags & ENV_FLAG_LIVE) && env->kind != ENV_KEEPALIVE;
    struct peer *queue_on, *via;
    int nh;

    if (target == NODEID_ANY || target == NODEID_UPSTREAM)
        target = 0;
    if ((nh = route_next_hops (ov, target, hops, MAX_HOPS_LIST, &live)) < 0)
        return -1;
    if (nh == 0) {
        errno = EINVAL;   /* it is for us: the caller should deliver */
        return -1;
    }
    if (live)
        env->flags |= ENV_FLAG_LIVE;
    if (send_via (ov, hops, nh, env, frames, n, from, &queue_on) == 0)
        return 0;
    /* No shortest hop is up here.  A link still connecting waits for its
     * hello unless a live detour exists (a link stuck connecting must not
     * hold traffic that has another way), and only once per message: a
     * detour gets no closer, and a second one from where it led could
     * lead back (ENV_FLAG_DETOUR). */
    if ((!queue_on || (queue_on->state == PEER_CONNECTING
                       && !(env->flags & ENV_FLAG_DETOUR)))
        && (via = detour (ov, target, from))) {
        via->route.reroutes++;
        env->flags |= ENV_FLAG_LIVE;
        if (queue_on)
            env->flags |= ENV_FLAG_DETOUR;
        if (try_send (ov, via, env, frames, n) == 0)
            return 0;
        queue_on = via;
    }
    if (!queue_on) {
        errno = EHOSTUNREACH;
        return -1;
    }
    return enqueue (ov, queue_on, env, frames, n);
}

/* Do frames carry a broker response?  (Decoded: only for the few
 * messages whose destination is fenced here.) */
static bool carries_response (struct frame **frames, int n)
{
    msg_t *msg = n == 1 ? body_decode (frames[0], NULL, 0) : NULL;
    bool rsp = msg && msg_get_type (msg) == MSGTYPE_RESPONSE;

    msg_destroy (&msg);
    return rsp;
}

int route_forward (struct overlay *ov, struct envelope *env,
                   struct frame **frames, int n, int from)
{
    if (env->kind == ENV_DATA && env->dest < ov->size
        && bgn_router_is_down (ov->router, env->dest)
        && ((env->flags & ENV_FLAG_WAITED) || carries_response (frames, n)))
        return route_hold (ov, env, frames, n);
    return route_out (ov, env, frames, n, from);
}

/* Route a message that waited for p another way (a response for a rank
 * fenced meanwhile waits for its rejoin). */
static void reroute_pending (struct overlay *ov, struct peer *p,
                             struct pending *pd)
{
    p->route.reroutes++;
    if (route_forward (ov, &pd->env, pd->frames, pd->nframes, -1) < 0)
        route_drop (ov, &pd->env, pd->frames, pd->nframes, errno);
    else
        pd->nframes = 0;   /* frames moved on */
    pending_destroy (&pd);
}

void route_flush (struct overlay *ov)
{
    /* Sending may change the table (never here: reactions are deferred),
     * but a reroute can queue onto a peer already passed: the retry
     * timer picks that up. */
    for (int i = 0; i < ov->peers->n; i++) {
        struct peer *p = ov->peers->v[i];
        struct pending *pd;
        while ((pd = backlog_first (&p->backlog))) {
            if (p->state == PEER_CONNECTING)
                break;
            if (p->state == PEER_DOWN) {
                reroute_pending (ov, p, backlog_pop (&p->backlog));
                continue;
            }
            if (route_send_now (ov, p, &pd->env, pd->frames, pd->nframes) < 0)
                break;
            pd->nframes = 0;
            pd = backlog_pop (&p->backlog);
            pending_destroy (&pd);
        }
    }
}

/* Does pd carry a request for rank?  (Decoded only for that rank.) */
static bool request_for (struct pending *pd, uint32_t rank)
{
    return pd->env.kind == ENV_DATA && pd->env.dest == rank
           && !carries_response (pd->frames, pd->nframes);
}

void route_purge_requests (struct overlay *ov, uint32_t rank)
{
    int dropped = 0;

    for (int i = 0; i < ov->peers->n; i++) {
        struct backlog keep = { 0 };
        struct backlog *b = &ov->peers->v[i]->backlog;
        struct pending *pd;
        while ((pd = backlog_pop (b))) {
            if (!request_for (pd, rank)) {
                backlog_push (&keep, pd);
                continue;
            }
            dropped++;
            pending_destroy (&pd);
        }
        *b = keep;
    }
    if (dropped == 0)
        return;
    ov->route.count[RC_no_route_drops] += dropped;
    ovl_log_limited (ov, LOG_INFO, "dropped %d request(s) for rank %u that "
                     "waited here: it was fenced, and their origins report "
                     "them failed", dropped, (unsigned)rank);
}

void route_requeue (struct overlay *ov, struct peer *p)
{
    struct pending *pd;

    while ((pd = backlog_pop (&p->backlog))) {
        if (route_forward (ov, &pd->env, pd->frames, pd->nframes, -1) == 0)
            pd->nframes = 0;
        else
            route_drop (ov, &pd->env, pd->frames, pd->nframes, errno);
        pending_destroy (&pd);
    }
}

int route_backlog_total (struct overlay *ov)
{
    int total = 0;

    for (int i = 0; i < ov->peers->n; i++)
        total += ov->peers->v[i]->backlog.count;
    return total;
}

static void retry_cb (void *arg)
{
    struct overlay *ov = arg;
    int left = 0;

    route_flush (ov);
    for (int i = 0; i < ov->peers->n; i++)
        if (ov->peers->v[i]->state != PEER_CONNECTING)
            left += ov->peers->v[i]->backlog.count;
    if (left && !ovtimer_armed (ov->route.retry))
        ovtimer_arm (ov->route.retry, ovl_now (ov) + RETRY_DELAY);
}
