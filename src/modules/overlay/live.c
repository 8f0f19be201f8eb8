/* live.c: keepalives, suspect and lost (see live.h). */
#include <stdio.h>

#include "fence.h"
#include "health.h"
#include "live.h"
#include "overlay.h"
#include "route.h"

#define SUSPECT_INTERVALS 3

void live_set_state (struct overlay *ov, struct peer *p, int state)
{
    int old = peers_set_state (ov->peers, p, state, ovl_now (ov));

    if (old == state)
        return;
    ovl_log (ov, LOG_DEBUG, "peer %u: %s -> %s", (unsigned)p->rank,
             peer_state_str (old), peer_state_str (state));
    if (peer_is_up (p) || state == PEER_DOWN)
        route_flush (ov);
}

int live_fence (struct overlay *ov, uint32_t rank, uint64_t inc,
                const char *reason, int from)
{
    int flags = fence_apply (ov, rank, inc, reason, from);

    if (flags & FENCE_NEWS)
        health_fenced (ov, rank);   /* it reports ready again when back */
    return flags;
}

void live_peer_lost (struct overlay *ov, struct peer *p, const char *why)
{
    if (p->state == PEER_DOWN)
        return;
    ovl_log (ov, p->leaving ? LOG_INFO : LOG_WARNING, "peer %u lost: %s",
             (unsigned)p->rank, why);
    live_set_state (ov, p, PEER_DOWN);
    live_fence (ov, p->rank, p->incarnation, why, -1);
}

void live_check_unreachable (struct overlay *ov)
{
    if (!ov->peers->unreachable)
        return;
    ov->peers->unreachable = false;
    for (int i = 0; i < ov->peers->n; i++) {
        struct peer *p = ov->peers->v[i];
        if (p->unreachable && peer_is_up (p))
            live_peer_lost (ov, p, "connection gone (EHOSTUNREACH)");
        p->unreachable = false;
    }
}

static void send_keepalive (struct overlay *ov, struct peer *p, int echo)
{
    struct envelope ka = { .kind = ENV_KEEPALIVE, .flags = echo, .ttl = 1,
                           .source = ov->rank, .dest = p->rank };
    route_send_now (ov, p, &ka, NULL, 0);
}

void live_check_stall (struct overlay *ov, double now)
{
    /* Do not fence peers for our own silence; they will tell us if we
     * were fenced. */
    if (now - ov->last_tick > ov->cfg.peer_timeout / 2) {
        ovl_log (ov, LOG_WARNING, "this broker did not run for %.1fs; "
                 "restarting peer liveness checks", now - ov->last_tick);
        for (int i = 0; i < ov->peers->n; i++)
            ov->peers->v[i]->last_heard = now;
    }
    ov->last_tick = now;
}

void live_tick (struct overlay *ov, double now)
{
    double interval = ov->cfg.keepalive_interval;
    double timeout = ov->cfg.peer_timeout;

    for (int i = 0; i < ov->peers->n; i++) {
        struct peer *p = ov->peers->v[i];
        double silent = now - p->last_heard;
        if (!peer_is_up (p))
            continue;
        if (silent >= timeout) {
            char why[64];
            snprintf (why, sizeof (why), "silent for %.1fs", silent);
            live_peer_lost (ov, p, why);
            continue;
        }
        if (silent >= SUSPECT_INTERVALS * interval)
            live_set_state (ov, p, PEER_SUSPECT);
        if (now - p->last_sent >= interval * 0.9) {
            if (p->ka_sent_at == 0 || now - p->ka_sent_at > timeout)
                p->ka_sent_at = now;
            send_keepalive (ov, p, 0);
        }
    }
}

void live_keepalive (struct overlay *ov, struct peer *p,
                     const struct envelope *env)
{
    if (env->flags == 0)
        send_keepalive (ov, p, 1);   /* echo, so the sender gets an RTT */
    else if (p->ka_sent_at > 0) {
        p->rtt_us = (ovl_now (ov) - p->ka_sent_at) * 1e6;
        p->ka_sent_at = 0;
    }
}
