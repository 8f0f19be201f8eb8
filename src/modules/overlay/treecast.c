/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* treecast.c: multicast targets around down ranks (see treecast.h). */
#include "treecast.h"

#define MAX_KIDS 256
#define MAX_DEPTH 64

static int add_subtree (struct bgn_topo *topo, uint32_t root, uint32_t rank,
                        treecast_down_f is_down, void *arg, uint32_t *out,
                        int n, int max, int depth)
{
    uint32_t kids[MAX_KIDS];
    int k;

    if (n >= max)
        return n;
    if (!is_down (arg, rank)) {
        out[n++] = rank;
        return n;
    }
    if (depth > MAX_DEPTH)
        return n;
    k = bgn_topo_bcast_children (topo, root, rank, kids, MAX_KIDS);
    for (int i = 0; i < k && i < MAX_KIDS; i++)
        n = add_subtree (topo, root, kids[i], is_down, arg, out, n, max,
                         depth + 1);
    return n;
}

int treecast_targets (struct bgn_topo *topo, uint32_t root, uint32_t rank,
                      treecast_down_f is_down, void *arg, uint32_t *out,
                      int max)
{
    uint32_t kids[MAX_KIDS];
    int k = bgn_topo_bcast_children (topo, root, rank, kids, MAX_KIDS);
    int n = 0;

    for (int i = 0; i < k && i < MAX_KIDS; i++)
        n = add_subtree (topo, root, kids[i], is_down, arg, out, n, max, 0);
    return n;
}
