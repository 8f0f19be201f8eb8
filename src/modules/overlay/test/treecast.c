/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test/treecast.c: multicast targets around down ranks (treecast.c).
 *
 * - nothing down: a broker's targets are its children in the root's
 *   binomial tree, in the tree's order;
 * - a down child is replaced by its own children, recursively, in its
 *   place; a leaf has no targets; the count never passes max;
 * - whatever is down, a multicast from the root following the targets
 *   reaches every live broker exactly once and no down one (checked over
 *   many random down sets, on bgn and on a kary:2 tree).
 */
#include <stdlib.h>
#include <string.h>

#include "src/common/libtap/tap.h"
#include "src/modules/overlay/treecast.h"

#define N 64

static bool down_of (void *arg, uint32_t rank)
{
    const bool *down = arg;
    return down[rank];
}

static bool same (const uint32_t *got, int n, const uint32_t *want, int m)
{
    return n == m && !memcmp (got, want, (size_t)m * sizeof (*want));
}

static void test_targets (void)
{
    struct bgn_topo *t = bgn_topo_create ("bgn", 16);
    bool down[16] = { false };
    uint32_t out[16];
    int n;

    n = treecast_targets (t, 0, 0, down_of, down, out, 16);
    ok (same (out, n, (uint32_t[]){ 1, 2, 4, 8 }, 4),
        "root 0 of 16, nothing down: 1 2 4 8");
    n = treecast_targets (t, 0, 15, down_of, down, out, 16);
    ok (n == 0, "rank 15 is a leaf: no targets");
    n = treecast_targets (t, 5, 5, down_of, down, out, 16);
    ok (same (out, n, (uint32_t[]){ 6, 7, 9, 13 }, 4),
        "root 5: its children are 5 + 1, 2, 4, 8");

    down[4] = true;
    n = treecast_targets (t, 0, 0, down_of, down, out, 16);
    ok (same (out, n, (uint32_t[]){ 1, 2, 5, 6, 8 }, 5),
        "4 down: its children 5 and 6 take its place");
    down[8] = down[12] = true;
    n = treecast_targets (t, 0, 0, down_of, down, out, 16);
    ok (same (out, n, (uint32_t[]){ 1, 2, 5, 6, 9, 10, 13, 14 }, 8),
        "4, 8 and 12 down: 8's subtree is reached through 9, 10, 13, 14");
    n = treecast_targets (t, 0, 0, down_of, down, out, 3);
    ok (same (out, n, (uint32_t[]){ 1, 2, 5 }, 3), "max 3: the first 3");
    for (int i = 1; i < 16; i++)
        down[i] = true;
    ok (treecast_targets (t, 0, 0, down_of, down, out, 16) == 0,
        "everyone else down: no targets");
    bgn_topo_destroy (&t);
}

/* Multicast from root over the targets; every live rank once, no down
 * rank, nothing twice.  Returns the ranks reached or -1 on a violation. */
static int multicast (struct bgn_topo *t, uint32_t root, const bool *down)
{
    int reached[N] = { 0 }, queue[N], head = 0, tail = 0, count = 1;
    uint32_t out[N];

    reached[root] = 1;
    queue[tail++] = (int)root;
    while (head < tail) {
        int from = queue[head++];
        int n = treecast_targets (t, root, (uint32_t)from, down_of,
                                  (void *)down, out, N);
        for (int i = 0; i < n; i++) {
            if (down[out[i]] || reached[out[i]]++)
                return -1;
            queue[tail++] = (int)out[i];
            count++;
        }
    }
    return count;
}

static void test_every_live_once (const char *spec)
{
    struct bgn_topo *t = bgn_topo_create (spec, N);
    int bad = 0, runs = 0;

    srand (7);
    for (int run = 0; run < 500; run++) {
        bool down[N] = { false };
        uint32_t root = (uint32_t)(rand () % N);
        int ndown = rand () % (N / 2), live = N;
        for (int i = 0; i < ndown; i++) {
            uint32_t r = (uint32_t)(rand () % N);
            if (r != root && !down[r]) {
                down[r] = true;
                live--;
            }
        }
        if (multicast (t, root, down) != live)
            bad++;
        runs++;
    }
    ok (t && bad == 0, "%s, N=%d, %d random roots and down sets: every live "
        "broker reached exactly once, no down one (%d bad)", spec, N, runs,
        bad);
    bgn_topo_destroy (&t);
}

int main (void)
{
    test_targets ();
    test_every_live_once ("bgn");
    test_every_live_once ("kary:2");
    return done_testing ();
}
