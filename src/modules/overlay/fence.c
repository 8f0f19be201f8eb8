/* fence.c: the fence view, its floods and the partition check (fence.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/common/libutil/idmap.h"
#include "fence.h"
#include "overlay.h"
#include "route.h"
#include "tracker.h"

static void partition_cb (void *arg);

int fence_init (struct overlay *ov)
{
    if (!(ov->fence.map = idmap_create (sizeof (struct fence_entry)))
        || !(ov->fence.partition = ovtimer_create (ov->timers, partition_cb,
                                                 ov)))
        return -1;
    return 0;
}

void fence_fini (struct overlay *ov)
{
    idmap_destroy (&ov->fence.map);
    ovtimer_destroy (&ov->fence.partition);
}

const struct fence_entry *fence_lookup (struct overlay *ov, uint32_t rank)
{
    return idmap_get (ov->fence.map, rank);
}

bool fence_is_fenced (struct overlay *ov, uint32_t rank)
{
    const struct fence_entry *f = fence_lookup (ov, rank);
    return f && f->fenced;
}

static void router_refresh (struct overlay *ov, uint32_t rank)
{
    bgn_router_set_down (ov->router, rank, fence_is_fenced (ov, rank));
}

static json_t *fence_json (struct overlay *ov, uint32_t rank, uint64_t inc,
                           const char *reason)
{
    return json_pack ("{s:i s:I s:s s:i}", "rank", (int)rank,
                      "incarnation", (json_int_t)inc,
                      "reason", reason ? reason : "",
                      "origin", (int)ov->rank);
}

void fence_flood (struct overlay *ov, int kind, uint32_t rank, uint64_t inc,
                  const char *reason, int except)
{
    json_t *o = fence_json (ov, rank, inc, reason);

    if (!o)
        return;
    for (int i = 0; i < ov->peers->n; i++) {
        struct peer *p = ov->peers->v[i];
        if ((int)p->rank == except || p->rank == rank || !peer_is_up (p))
            continue;
        route_send_control (ov, p, kind, o);
    }
    json_decref (o);
}

void fence_send_view (struct overlay *ov, struct peer *p)
{
    struct idmap_iter it;

    for (struct fence_entry *f = idmap_first (ov->fence.map, &it); f;
         f = idmap_next (&it)) {
        if (!f->fenced)
            continue;
        json_t *o = fence_json (ov, (uint32_t)it.id, f->inc, f->reason);
        if (o)
            route_send_control (ov, p, ENV_FENCE, o);
        json_decref (o);
    }
}

void fence_tell (struct overlay *ov, struct peer *p, uint64_t inc)
{
    double now = ovl_now (ov);
    json_t *o;

    if (now - p->fence_told <= 1.0)
        return;
    if ((o = json_pack ("{s:i s:I s:s}", "rank", (int)p->rank,
                        "incarnation", (json_int_t)inc, "reason", "fenced")))
        route_send_control_inc (ov, p, ENV_FENCE, o, inc);
    json_decref (o);
    p->fence_told = now;
}

/* Rank 0 also publishes membership changes as sequenced events
 * ("overlay.fence", "overlay.unfence"), so every broker's subscribers see
 * them in one global order.  Routing does not wait for them: the flood
 * works while rank 0 is down. */
static void membership_event (struct overlay *ov, const char *topic,
                              uint32_t rank, uint64_t inc, const char *reason)
{
    json_t *o;
    char *payload;
    msg_t *ev;

    if (ov->rank != 0 || !ov->events)
        return;
    o = json_pack ("{s:i s:I s:s}", "rank", (int)rank,
                   "incarnation", (json_int_t)inc,
                   "reason", reason ? reason : "");
    payload = o ? json_dumps (o, JSON_COMPACT) : NULL;
    if (payload && (ev = msg_event_create (topic, payload))) {
        msg_set_matchtag (ev, 0);
        evlayer_publish (ov->events, ev, NULL);
    }
    free (payload);
    json_decref (o);
}

static struct fence_entry *fence_get (struct overlay *ov, uint32_t rank)
{
    return idmap_put (ov->fence.map, rank, NULL);
}

int fence_apply (struct overlay *ov, uint32_t rank, uint64_t inc,
                 const char *reason, int from)
{
    struct fence_entry *f;
    struct peer *p;
    int flags = FENCE_NEWS;

    if (rank >= ov->size)
        return 0;
    if (rank == ov->rank)
        return inc == ov->incarnation ? FENCE_SELF : 0;
    if (!(f = fence_get (ov, rank)))
        return 0;
    if ((f->fenced && f->inc >= inc) || (!f->fenced && f->inc > inc))
        return 0;
    f->fenced = true;
    f->inc = inc;
    f->since = ovl_now (ov);
    snprintf (f->reason, sizeof (f->reason), "%s", reason ? reason : "");
    ov->fence.nfenced++;
    ov->fence.seen++;
    ov->fence.changed = true;
    ovl_log (ov, reason && !strcmp (reason, "left the instance") ? LOG_INFO
                                                                 : LOG_NOTICE,
             "rank %u fenced (%s)", (unsigned)rank,
             reason && *reason ? reason : "down");
    if ((p = peers_lookup (ov->peers, rank)) && p->state != PEER_DOWN
        && p->incarnation <= inc) {
        peers_set_state (ov->peers, p, PEER_DOWN, ovl_now (ov));
        flags |= FENCE_PEER_DOWN;
    }
    router_refresh (ov, rank);
    fence_flood (ov, ENV_FENCE, rank, inc, reason, from);
    membership_event (ov, "overlay.fence", rank, inc, reason);
    tracker_fail_dest (ov, rank);
    route_flush (ov);
    fence_schedule_partition_check (ov);
    return flags;
}

int unfence_apply (struct overlay *ov, uint32_t rank, uint64_t inc, int from)
{
    struct fence_entry *f;
    struct peer *p;
    int flags = UNFENCE_NEWS;
    bool was;

    if (rank >= ov->size || rank == ov->rank || !(f = fence_get (ov, rank)))
        return 0;
    if (f->inc >= inc)
        return 0;
    was = f->fenced;
    f->inc = inc;
    f->fenced = false;
    ov->fence.changed = true;
    if (was) {
        ov->fence.nfenced--;
        ovl_log (ov, LOG_NOTICE, "rank %u rejoined (incarnation %llu)",
                 (unsigned)rank, (unsigned long long)inc);
        router_refresh (ov, rank);
        membership_event (ov, "overlay.unfence", rank, inc, "rejoined");
    }
    else if (rank != 0)
        return 0;
    fence_flood (ov, ENV_UNFENCE, rank, inc, "rejoined", from);
    if (was && (p = peers_lookup (ov->peers, rank)) && p->connector
        && p->state == PEER_DOWN)
        flags |= UNFENCE_NEIGHBOUR;
    if (rank == 0)
        flags |= UNFENCE_ROOT;
    fence_schedule_partition_check (ov);
    return flags;
}

static void partition_cb (void *arg)
{
    struct overlay *ov = arg;
    uint32_t lost = 0;

    if (ov->rank != 0) {
        /* A dead (fenced) rank 0 is not a partition: wait for it --
         * unless every peer is gone too, which means this broker is the
         * one cut off. */
        if ((!fence_is_fenced (ov, 0) || ov->peers->up == 0)
            && bgn_router_distance (ov->router, ov->rank, 0) < 0) {
            ovl_log (ov, LOG_CRIT, "partitioned: rank 0 is unreachable from "
                     "here (%d ranks fenced); shutting down (exit 3)",
                     ov->fence.nfenced);
            ov->io->stop (ov->ctx, 3);
        }
        return;
    }
    for (uint32_t r = 1; r < ov->size; r++) {
        if (bgn_router_is_down (ov->router, r))
            continue;
        if (bgn_router_distance (ov->router, r, 0) < 0)
            lost++;
    }
    if (lost && !ov->fence.partitioned)
        ovl_log (ov, LOG_CRIT, "partitioned: %u live ranks cannot be reached "
                 "from rank 0; they are lost", (unsigned)lost);
    ov->fence.partitioned = lost > 0;
    ov->fence.unreachable_live = lost;
}

void fence_schedule_partition_check (struct overlay *ov)
{
    if (ovtimer_armed (ov->fence.partition))
        return;
    ovtimer_arm (ov->fence.partition,
               ovl_now (ov) + ov->cfg.keepalive_interval * 2 + 0.001);
}
