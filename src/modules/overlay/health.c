/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* health.c: readiness and health (see health.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "fence.h"
#include "health.h"
#include "overlay.h"
#include "partition.h"
#include "ovlog.h"
#include "ovsign.h"

int health_init (struct overlay *ov)
{
    if (!(ov->health.ready = bgn_rankset_create (ov->size)))
        return -1;
    if (ov->rank == 0
        && !(ov->health.ready_inc = calloc (ov->size, sizeof (uint64_t))))
        return -1;
    return 0;
}

void health_fini (struct overlay *ov)
{
    bgn_rankset_destroy (&ov->health.ready);
    free (ov->health.ready_inc);
    ov->health.ready_inc = NULL;
}

static void ready_mark (struct overlay *ov, uint32_t rank, uint64_t inc)
{
    if (ov->health.ready_inc)
        ov->health.ready_inc[rank] = inc;
    if (bgn_rankset_add (ov->health.ready, rank) == 1
        && bgn_rankset_count (ov->health.ready) == ov->size)
        ovl_log (ov, LOG_INFO, "overlay complete: all %u ranks connected",
                 (unsigned)ov->size);
}

static void send_ready (struct overlay *ov)
{
    char payload[96];
    msg_t *msg;

    snprintf (payload, sizeof (payload), "{\"rank\":%u,\"incarnation\":%llu}",
              (unsigned)ov->rank, (unsigned long long)ov->incarnation);
    char topic[64];
    if (!(msg = msg_request_create (ovconf_topic (&ov->cfg, "ready", topic,
                                                  sizeof (topic)), 0, payload)))
        return;
    ov->health.sent_at = ovl_now (ov);
    ov->io->request (ov->ctx, msg);
}

static void report_ready (struct overlay *ov)
{
    if (ov->health.reported)
        return;
    ov->health.reported = true;
    ov->health.acked = false;
    ov->health.acked_inc = 0;
    ovl_log (ov, LOG_DEBUG, "all peers up: reporting ready to rank 0");
    if (ov->rank == 0) {
        ready_mark (ov, 0, ov->incarnation);
        ov->health.acked = true;
        return;
    }
    send_ready (ov);
}

void health_check_ready (struct overlay *ov)
{
    if (!ov->started)
        return;
    for (int i = 0; i < ov->peers->n; i++) {
        struct peer *p = ov->peers->v[i];
        if (!peer_is_up (p) && !fence_is_fenced (ov, p->rank))
            return;
    }
    /* Rank 0 announces its incarnation once its links are up, so that
     * after a restart every broker reports ready to it again. */
    if (ov->rank == 0 && !ov->health.reported)
        fence_announce_self (ov);
    /* formed: ready with links actually up (not merely all fenced) */
    if (ov->peers->up > 0 && !ov->health.formed) {
        ov->health.formed = true;
        partition_formed (ov);
    }
    report_ready (ov);
}

void health_report_again (struct overlay *ov)
{
    ov->health.reported = false;
    ov->health.dirty = true;
}

/* Rank 0's incarnation as we know it: 0 if we have no live record. */
static uint64_t root_inc (struct overlay *ov)
{
    const struct fence_entry *f = fence_lookup (ov, 0);

    return f && !f->fenced ? f->inc : 0;
}

void health_root_news (struct overlay *ov)
{
    if (ov->rank != 0 && ov->health.reported
        && (!ov->health.acked || ov->health.acked_inc == root_inc (ov)))
        return;
    health_report_again (ov);
}

void health_forget (struct overlay *ov, uint32_t rank, uint64_t inc)
{
    if (!ov->health.ready)
        return;
    if (ov->health.ready_inc && rank < ov->size
        && inc < ov->health.ready_inc[rank]) {
        ovl_log (ov, LOG_DEBUG, "rank %u fenced as incarnation %llu, "
                 "older than its ready report's (%llu): still ready",
                 (unsigned)rank, (unsigned long long)inc,
                 (unsigned long long)ov->health.ready_inc[rank]);
        return;
    }
    bgn_rankset_remove (ov->health.ready, rank);
}

void health_check_later (struct overlay *ov)
{
    ov->health.dirty = true;
}

bool health_dirty (struct overlay *ov)
{
    return ov->health.dirty;
}

void health_dirty_seen (struct overlay *ov)
{
    ov->health.dirty = false;
}

void health_retry (struct overlay *ov, double now)
{
    if (ov->rank != 0 && ov->health.reported && !ov->health.acked
        && now - ov->health.sent_at > 1.0)
        send_ready (ov);
}

const char *health_word (struct overlay *ov)
{
    if (ov->size == 1)
        return "full";
    if (partition_found (ov))
        return "partitioned";
    if (fence_count (ov) > 0)
        return "degraded";
    if (ov->rank == 0)
        return bgn_rankset_count (ov->health.ready) == ov->size ? "full"
                                                                 : "partial";
    return ov->peers->up == ov->peers->n ? "full" : "partial";
}

/* A broker reports only its own readiness: the rank on top of the
 * route stack (the broker that sent the request into the overlay) must
 * be the one the report names, or any broker could make the health read
 * "full" for ranks that never joined. */
static bool ready_from_self (const msg_t *req, int rank)
{
    char want[16];
    const char *top = msg_route_first (req);

    snprintf (want, sizeof (want), "%d", rank);
    return top && !strcmp (top, want);
}

void health_ready_request (struct overlay *ov, const msg_t *req,
                           const struct bgn_msg_info *info)
{
    json_t *o = json_loads (msg_get_payload (req, NULL) ?: "", 0, NULL);
    const char *why = NULL;
    int rank = -1;

    /* its own word: the route stack names it, and where it has a key,
     * it signed the report (a relay could write any route stack) */
    if (ov->rank == 0 && o && json_unpack (o, "{s:i}", "rank", &rank) == 0
        && rank >= 0 && (uint32_t)rank < ov->size
        && (!ready_from_self (req, rank)
            || (why = ovsign_origin_problem (info, (uint32_t)rank)))) {
        ov->health.refused++;
        ovl_log_limited (ov, LOG_WARNING, "refused a readiness report of "
                         "rank %d: %s", rank,
                         why ? why : "the route stack names another rank");
        ov->io->respond_error (ov->ctx, req, EPERM,
                               "a broker reports only its own readiness");
        json_decref (o);
        return;
    }
    if (ov->rank == 0 && o && json_unpack (o, "{s:i}", "rank", &rank) == 0
        && rank >= 0 && (uint32_t)rank < ov->size) {
        json_int_t inc = 0;
        (void)json_unpack (o, "{s:I}", "incarnation", &inc);
        ovl_log (ov, LOG_DEBUG, "rank %d is ready", rank);
        ready_mark (ov, (uint32_t)rank, inc > 0 ? (uint64_t)inc : 0);
        char answer[48];
        snprintf (answer, sizeof (answer), "{\"incarnation\":%llu}",
                  (unsigned long long)ov->incarnation);
        ov->io->respond (ov->ctx, req, answer);
    }
    else
        ov->io->respond_error (ov->ctx, req, EINVAL,
                               "ready reports go to rank 0");
    json_decref (o);
}

/* The incarnation a ready report's answer names; 0 if none (a rank 0
 * that predates it says nothing). */
static uint64_t answered_by (const msg_t *rsp)
{
    const char *payload = msg_get_payload (rsp, NULL);
    json_t *o = payload ? json_loads (payload, 0, NULL) : NULL;
    json_int_t inc = 0;

    if (o && json_unpack (o, "{s:I}", "incarnation", &inc) < 0)
        inc = 0;
    json_decref (o);
    return inc > 0 ? (uint64_t)inc : 0;
}

void health_ready_response (struct overlay *ov, const msg_t *rsp)
{
    int errnum = 0;

    if (msg_get_errnum (rsp, &errnum) < 0 || errnum != 0)
        return;
    if (!ov->health.reported || ov->health.acked)
        return;                 /* a late copy: the report it answers is gone */
    ov->health.acked = true;
    ov->health.acked_inc = answered_by (rsp);
    /* answered by a rank 0 older than the one we know: the one we know
     * has not heard us.  A newer one has (its record is on its way); an
     * answer naming none (an older rank 0) is taken as before. */
    uint64_t known = root_inc (ov);
    if (ov->health.acked_inc && known && ov->health.acked_inc < known)
        health_report_again (ov);
}
