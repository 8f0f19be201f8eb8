/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* partition.c: the partition check and its policy (partition.h).
 *
 * Apart from fence.c because it is a reading of the fence view, not a
 * rule of it: it looks at the router's live graph some time after the
 * view changed and decides whether this broker stops.  Its state is only
 * the few facts that decide it (formed, stalled, ending).
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "fence.h"
#include "overlay.h"
#include "ovlog.h"
#include "partition.h"
#include "peer.h"
#include "timer.h"

static void partition_cb (void *arg);

int partition_init (struct overlay *ov)
{
    if (!(ov->partition.timer = ovtimer_create (ov->timers, partition_cb,
                                                ov)))
        return -1;
    return 0;
}

void partition_fini (struct overlay *ov)
{
    ovtimer_destroy (&ov->partition.timer);
}

void partition_formed (struct overlay *ov)
{
    ov->partition.formed = true;
}

void partition_stalled (struct overlay *ov, double now)
{
    ov->partition.stalled_at = now;
}

bool partition_found (struct overlay *ov)
{
    return ov->partition.partitioned;
}

void partition_ending (struct overlay *ov)
{
    if (ov->partition.ending)
        return;
    ov->partition.ending = true;
    ovl_log (ov, LOG_INFO, "the instance is ending: ranks out of reach "
             "are not a partition from now on");
}

void partition_check_later (struct overlay *ov)
{
    if (ovtimer_armed (ov->partition.timer))
        return;
    ovtimer_arm (ov->partition.timer,
                 ovl_now (ov) + ov->cfg.keepalive_interval * 2 + 0.001);
}

static bool left_on_purpose (struct overlay *ov, uint32_t rank)
{
    const struct fence_entry *f = fence_lookup (ov, rank);
    const char *why = f && f->fenced ? fence_reason (ov, f) : NULL;

    return why && !strcmp (why, "left the instance");
}

/* Every peer of ours said goodbye to us: they were stopped on purpose
 * (the whole instance is, when a launcher signals every broker at once
 * and ours is the last to run), so being out of rank 0's reach is no
 * partition.  We wait, degraded: our own stop is on its way, or they
 * come back and we rejoin. */
static bool all_peers_left (struct overlay *ov)
{
    if (ov->peers->n == 0 || ov->peers->up > 0)
        return false;
    for (int i = 0; i < ov->peers->n; i++)
        if (!ov->peers->v[i]->live.leaving)
            return false;
    return true;
}

/* Not rank 0: stop (exit 3) if rank 0 is out of reach and that is a
 * partition. */
static void check_from_below (struct overlay *ov, double now)
{
    struct partition_state *ps = &ov->partition;
    bool left;

    /* Not before the overlay first formed around us, nor while we catch
     * up after a stall of our own; a dead (fenced) rank 0 is not a
     * partition either -- unless every peer is gone too, which means
     * this broker is the one cut off. */
    if (!ps->formed || ps->ending
        || now - ps->stalled_at < 2 * ov->cfg.peer_timeout)
        return;
    if ((fence_is_fenced (ov, 0) && ov->peers->up > 0)
        || bgn_router_reachable (ov->router, ov->rank, 0) == 1)
        return;
    /* rank 0 said goodbye (its overlay was unloaded or its broker
     * stopped): alone is then no partition, only the end */
    left = left_on_purpose (ov, 0);
    if (!left && all_peers_left (ov)) {
        if (!ps->peers_left_logged)
            ovl_log (ov, LOG_INFO, "every peer left the instance: rank 0 "
                     "is out of reach, but nothing was cut; waiting");
        ps->peers_left_logged = true;
        return;
    }
    ps->peers_left_logged = false;
    ovl_log (ov, left ? LOG_NOTICE : LOG_CRIT, "%s (%d ranks fenced); "
             "asking the broker to stop (exit 3)",
             left ? "rank 0 left the instance and no peer is up here"
                  : "partitioned: rank 0 is unreachable from here",
             fence_count (ov));
    ov->io->stop (ov->ctx, 3);
}

/* Rank 0: count the live ranks it cannot reach; a partition unless the
 * instance is ending. */
static void check_from_root (struct overlay *ov)
{
    struct partition_state *ps = &ov->partition;
    uint32_t lost = 0;

    for (uint32_t r = 1; r < ov->size; r++) {
        if (bgn_router_is_down (ov->router, r))
            continue;
        if (bgn_router_distance (ov->router, r, 0) < 0)
            lost++;
    }
    ps->unreachable_live = lost;
    if (ps->ending)
        return;
    if (lost && !ps->partitioned)
        ovl_log (ov, LOG_CRIT, "partitioned: %u live ranks cannot be reached "
                 "from rank 0; they are lost", (unsigned)lost);
    ps->partitioned = lost > 0;
}

static void partition_cb (void *arg)
{
    struct overlay *ov = arg;

    if (ov->rank != 0)
        check_from_below (ov, ovl_now (ov));
    else
        check_from_root (ov);
}
