/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* live.c: keepalives, suspect and lost (see live.h). */
#include <stdbool.h>
#include <stdio.h>

#include "fence.h"
#include "live.h"
#include "overlay.h"
#include "ovlog.h"
#include "partition.h"
#include "route.h"

#define SUSPECT_INTERVALS 3
#define QUIET_INTERVALS 1.5      /* the higher end speaks after this */
#define RTT_INTERVALS 10         /* the higher end measures its RTT this often */
#define DOUBT_MIN 3              /* silent peers that make a broker doubt */

void live_set_state (struct overlay *ov, struct peer *p, int state)
{
    int old = peers_set_state (ov->peers, p, state, ovl_now (ov));

    if (old == state)
        return;
    if (peer_is_up (p)) {
        p->live.leaving = false;      /* back: its goodbye is history */
        route_take_unreachable (p);   /* and a failed send before it */
    }
    ovl_log (ov, LOG_DEBUG, "peer %u: %s -> %s", (unsigned)p->rank,
             peer_state_str (old), peer_state_str (state));
    if (peer_is_up (p) || state == PEER_DOWN)
        route_flush (ov);
}

void live_heard (struct peer *p, double now)
{
    p->live.last_heard = now;
}

void live_goodbye (struct peer *p)
{
    p->live.leaving = true;
}

void live_peer_lost (struct overlay *ov, struct peer *p, const char *why)
{
    if (p->state == PEER_DOWN)
        return;
    ovl_log (ov, p->live.leaving ? LOG_INFO : LOG_WARNING, "peer %u lost: %s",
             (unsigned)p->rank, why);
    live_set_state (ov, p, PEER_DOWN);
    fence_apply (ov, p->rank, p->hello.incarnation, true, why, FROM_HERE);
}

void live_check_unreachable (struct overlay *ov)
{
    if (!ov->peers->unreachable)
        return;
    ov->peers->unreachable = false;
    for (int i = 0; i < ov->peers->n; i++) {
        struct peer *p = ov->peers->v[i];
        if (route_take_unreachable (p) && peer_is_up (p))
            live_peer_lost (ov, p, "connection gone (EHOSTUNREACH)");
    }
}

/* Keepalives carry the digest of our fence view (8 bytes), so peers
 * whose views differ find out and repair them. */
static void send_keepalive (struct overlay *ov, struct peer *p, int echo)
{
    struct envelope ka = { .kind = ENV_KEEPALIVE, .flags = echo, .ttl = 1,
                           .source = ov->rank, .dest = p->rank };
    uint64_t d = fence_digest (ov);
    uint8_t buf[8];
    struct frame *f;

    for (int i = 0; i < 8; i++)
        buf[i] = (uint8_t)(d >> (56 - 8 * i));
    if (!(f = frame_create (buf, sizeof (buf))))
        return;
    if (route_send_now (ov, p, &ka, &f, 1) < 0)
        frame_decref (&f);
}

bool live_stalled (struct overlay *ov, double now)
{
    double idle = now - ov->last_tick;

    if (!ov->started || idle <= ov->cfg.peer_timeout / 2)
        return false;
    ovl_log (ov, LOG_WARNING, "this broker did not run for %.1fs", idle);
    partition_stalled (ov, now);
    ov->last_tick = now;
    /* Do not fence peers for our own silence. */
    for (int i = 0; i < ov->peers->n; i++)
        ov->peers->v[i]->live.last_heard = now;
    return true;
}

void live_never_joined (struct overlay *ov, double now)
{
    double limit = ov->cfg.join_timeout > 0 ? ov->cfg.join_timeout
                                            : 3 * ov->cfg.peer_timeout;

    for (int i = 0; i < ov->peers->n; i++) {
        struct peer *p = ov->peers->v[i];
        if (p->state != PEER_CONNECTING || p->hello.incarnation != 0
            || now - p->state_since < limit || fence_is_fenced (ov, p->rank))
            continue;
        /* Some node is always down at boot: fence it (incarnation 0, which
         * any real incarnation is above) so health says degraded and
         * requests to it fail at once; its first hello lifts the fence. */
        ov->live.never_joined++;
        fence_apply (ov, p->rank, 0, true, "never joined", FROM_HERE);
    }
}

/* Whether to send 'p' a keepalive now.  Both ends of a link tick at
 * once (overlay.c's grid), so if both spoke after the same silence,
 * each keepalive would be echoed and a link would carry four messages a
 * second.  The lower rank speaks after 0.9 intervals without sending;
 * the higher one waits QUIET_INTERVALS, so that normally the lower
 * end's keepalive and its echo are all a link carries, and each end
 * still sends something at least that often.  The higher end also
 * speaks now and then to measure its own RTT. */
static bool keepalive_due (struct overlay *ov, struct peer *p, double now)
{
    double interval = ov->cfg.keepalive_interval;
    double silent = now - p->route.last_sent;

    if (ov->rank < p->rank)
        return silent >= interval * 0.9;
    return silent >= interval * QUIET_INTERVALS
           || (silent >= interval * 0.9
               && (p->live.rtt_us < 0
                   || now - p->live.rtt_at >= interval * RTT_INTERVALS));
}

/* Lifeguard's local health: when more than half of this broker's live
 * peers (and at least DOUBT_MIN) fall silent at once, its own link or
 * CPU is the likelier cause, and it does not fence them on its own word
 * until twice the peer timeout; their other neighbours still do, and
 * their word reaches us (suspect.h).  A lossy host so evicts nobody,
 * while a crash is still found by every other neighbour in time. */
static double silence_limit (struct overlay *ov, double now)
{
    double quiet = SUSPECT_INTERVALS * ov->cfg.keepalive_interval;
    int silent = 0, live = 0;
    bool doubt;

    for (int i = 0; i < ov->peers->n; i++) {
        const struct peer *p = ov->peers->v[i];
        if (!peer_is_up (p))
            continue;
        live++;
        if (now - p->live.last_heard >= quiet)
            silent++;
    }
    doubt = silent >= DOUBT_MIN && 2 * silent > live;
    if (doubt && !ov->live.self_doubt) {
        ov->live.self_doubts++;
        ovl_log (ov, LOG_WARNING, "%d of %d live peers silent at once: this "
                 "broker suspects its own link or CPU first, and fences "
                 "none of them on its own word before %.1fs", silent, live,
                 2 * ov->cfg.peer_timeout);
    }
    ov->live.self_doubt = doubt;
    return doubt ? 2 * ov->cfg.peer_timeout : ov->cfg.peer_timeout;
}

void live_tick (struct overlay *ov, double now)
{
    double interval = ov->cfg.keepalive_interval;
    double timeout = silence_limit (ov, now);

    for (int i = 0; i < ov->peers->n; i++) {
        struct peer *p = ov->peers->v[i];
        double silent = now - p->live.last_heard;
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
        if (keepalive_due (ov, p, now)) {
            if (p->live.ka_sent_at == 0 || now - p->live.ka_sent_at > timeout)
                p->live.ka_sent_at = now;
            send_keepalive (ov, p, 0);
        }
    }
}

void live_keepalive (struct overlay *ov, struct peer *p,
                     const struct envelope *env, struct frame *const *body,
                     int n)
{
    if (n >= 1 && frame_size (body[0]) == 8) {
        const uint8_t *b = frame_data (body[0]);
        uint64_t d = 0;
        for (int i = 0; i < 8; i++)
            d = d << 8 | b[i];
        fence_peer_digest (ov, p, d);
    }
    if (env->flags == 0)
        send_keepalive (ov, p, 1);   /* echo, so the sender gets an RTT */
    else if (p->live.ka_sent_at > 0) {
        p->live.rtt_at = ovl_now (ov);
        p->live.rtt_us = (p->live.rtt_at - p->live.ka_sent_at) * 1e6;
        p->live.ka_sent_at = 0;
    }
}
