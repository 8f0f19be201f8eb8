/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* ovcore.c: the core's read-only observers (ovcore.h).
 *
 * What a user of the core (the protocol simulator, a test) may learn of
 * its state without seeing the hub or the parts: each call asks the part
 * that owns the answer.
 */
#include <errno.h>

#include "overlay.h"
#include "fence.h"
#include "peer.h"
#include "route.h"

bool overlay_is_fenced (struct overlay *ov, uint32_t rank)
{
    return fence_is_fenced (ov, rank);
}

int overlay_backlog_deepest (struct overlay *ov)
{
    int deepest = 0;

    for (int i = 0; i < ov->peers->n; i++)
        if (ov->peers->v[i]->backlog.count > deepest)
            deepest = ov->peers->v[i]->backlog.count;
    return deepest;
}

int overlay_next_hops (struct overlay *ov, uint32_t dest, uint32_t *hops,
                       int max)
{
    uint32_t all[MAX_HOPS_LIST];
    bool live = false;
    int n = route_next_hops (ov, dest, all, MAX_HOPS_LIST, &live);
    int up = 0;

    for (int i = 0; i < n && up < max; i++) {
        struct peer *p = peers_lookup (ov->peers, all[i]);
        if (p && peer_is_up (p))
            hops[up++] = all[i];
    }
    return n < 0 ? -1 : up;
}
