/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* moved.c: telling the peers that dial us where we listen (moved.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <jansson.h>

#include "fence.h"
#include "hello.h"
#include "moved.h"
#include "overlay.h"
#include "ovlog.h"
#include "ovsign.h"

static void send_moved (struct overlay *ov, struct peer *p, double now)
{
    json_t *o = json_pack ("{s:i s:s}", "rank", (int)ov->rank, "endpoint",
                           ov->endpoint);
    char *payload = o ? json_dumps (o, JSON_COMPACT) : NULL;
    char topic[64];
    msg_t *msg = payload ? msg_request_create (ovconf_topic (&ov->cfg, "moved",
                                                             topic,
                                                             sizeof (topic)),
                                               p->rank, payload)
                         : NULL;

    json_decref (o);
    free (payload);
    p->moved.sent = now;
    if (!msg)
        return;
    msg_set_flags (msg, msg_get_flags (msg) | MSGFLAG_NORESPONSE);
    ov->io->request (ov->ctx, msg);
}

static bool endpoint_ok (const char *ep, size_t max);

/* Dial p at ep from now on (its link is not up). */
static void redial (struct overlay *ov, struct peer *p, const char *ep,
                    const char *who)
{
    ovl_log (ov, LOG_NOTICE, "peer %u listens at %s now (was %s, %s): "
             "dialling it there", (unsigned)p->rank, ep, p->endpoint, who);
    ov->io->disconnect (ov->ctx, p->rank, p->endpoint);
    peer_set_contact (p, ep, NULL);
    hello_redial (ov, p);
}

/* Ask the bootstrap where p listens; dial it there if that moved. */
static void reread (struct overlay *ov, struct peer *p, double now)
{
    char ep[sizeof (p->endpoint)];

    p->moved.reread_at = now;
    p->moved.reread_backoff = p->moved.reread_backoff < REREAD_MIN
                                  ? REREAD_MIN
                                  : p->moved.reread_backoff * 2 > REREAD_MAX
                                        ? REREAD_MAX
                                        : p->moved.reread_backoff * 2;
    if (!ov->io->peer_endpoint
        || ov->io->peer_endpoint (ov->ctx, p->rank, ep, sizeof (ep)) < 0)
        return;
    ov->moved.endpoint_rereads++;
    if (endpoint_ok (ep, sizeof (ep)) && strcmp (ep, p->endpoint) != 0
        && !peer_is_up (p))
        redial (ov, p, ep, "says the bootstrap");
}

static bool dialled_away (const struct peer *p)
{
    return p->connector && !p->substitute && !peer_is_up (p);
}

void moved_neighbours_back (struct overlay *ov)
{
    double now = ovl_now (ov);

    for (int i = 0; i < ov->peers->n; i++) {
        struct peer *p = ov->peers->v[i];
        if (dialled_away (p) && now - p->moved.reread_at >= 1.0)
            reread (ov, p, now);
    }
}

/* Diallers: ask the bootstrap again for a neighbour away for a while. */
static void reread_tick (struct overlay *ov, double now)
{
    for (int i = 0; i < ov->peers->n; i++) {
        struct peer *p = ov->peers->v[i];
        if (!dialled_away (p)) {
            p->moved.reread_backoff = 0;
            continue;
        }
        /* away: not heard from (its state may go back and forth between
         * down and connecting as we dial) */
        if (now - p->live.last_heard >= REREAD_AFTER
            && now - ov->started_at >= REREAD_AFTER
            && now - p->moved.reread_at >= p->moved.reread_backoff)
            reread (ov, p, now);
    }
}

void moved_tick (struct overlay *ov, double now)
{
    if (ov->started)
        reread_tick (ov, now);
    if (!ov->started || !ov->endpoint[0] || ov->peers->up == 0)
        return;   /* with no link up, nothing could carry it */
    if (now - ov->started_at < MOVED_AFTER
        || now - hello_rejoined_at (ov) < MOVED_AFTER)
        return;
    for (int i = 0; i < ov->peers->n; i++) {
        struct peer *p = ov->peers->v[i];
        if (p->connector || p->substitute || peer_is_up (p)
            || fence_is_fenced (ov, p->rank)
            || now - p->state_since < MOVED_AFTER
            || (p->moved.sent > 0 && now - p->moved.sent < MOVED_EVERY))
            continue;
        send_moved (ov, p, now);
    }
}

/* The rank that sent the request into the overlay: the top of its
 * route stack, in canonical decimal; -1 if none. */
static long origin_of (const msg_t *req)
{
    const char *top = msg_route_first (req);
    char want[16];
    char *end;
    long r;

    if (!top || *top < '0' || *top > '9')
        return -1;
    r = strtol (top, &end, 10);
    snprintf (want, sizeof (want), "%ld", r);
    return *end || strcmp (want, top) ? -1 : r;
}

static bool endpoint_ok (const char *ep, size_t max)
{
    return strlen (ep) < max
           && (!strncmp (ep, "tcp://", 6) || !strncmp (ep, "ipc://", 6));
}

static const char *moved_apply (struct overlay *ov, const msg_t *req,
                                const struct bgn_msg_info *info)
{
    json_t *o = json_loads (msg_get_payload (req, NULL) ?: "", 0, NULL);
    const char *ep = NULL;
    struct peer *p;
    int rank = -1;
    const char *why = NULL;

    if (!o || json_unpack (o, "{s:i s:s}", "rank", &rank, "endpoint", &ep))
        why = "need rank and endpoint";
    else if (rank < 0 || origin_of (req) != rank
             || ovsign_origin_problem (info, (uint32_t)rank))
        why = "a broker says only where it listens itself";
    else if (!(p = peers_lookup (ov->peers, (uint32_t)rank)) || !p->connector
             || p->substitute)
        why = "this broker does not dial that rank";
    else if (!endpoint_ok (ep, sizeof (p->endpoint)))
        why = "not a tcp:// or ipc:// endpoint";
    else if (strcmp (p->endpoint, ep) != 0 && !peer_is_up (p))
        redial (ov, p, ep, "says the rank");
    json_decref (o);
    return why;
}

void moved_request (struct overlay *ov, const msg_t *req,
                    const struct bgn_msg_info *info)
{
    const char *why = moved_apply (ov, req, info);

    if (why) {
        ov->moved.refused++;
        ovl_log_limited (ov, LOG_WARNING, "refused overlay.moved: %s", why);
        ov->io->respond_error (ov->ctx, req, EPERM, why);
    }
    else
        ov->io->respond (ov->ctx, req, NULL);
}
