/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test/bcast.c: spanning trees for multicast (bgn_topo_bcast_children).
 *
 * For every topology, N in 1..MAX_N and a spread of roots: a walk over the
 * children relation from root reaches every rank exactly once, every tree
 * edge is a graph edge (naive model), bcast_parent inverts bcast_children,
 * and for bgn the depth is the largest popcount of a relative rank < N,
 * which is <= ceil(log2 N) with equality when N is a power of two.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "src/common/libtap/tap.h"
#include "src/common/libbgn/bgn.h"
#include "naive.h"

#define MAX_N 300

static int ceil_log2 (int n)
{
    int k = 0;
    while ((1 << k) < n)
        k++;
    return k;
}

static int max_popcount_below (int n)
{
    int best = 0;
    for (int v = 0; v < n; v++)
        if (__builtin_popcount ((unsigned)v) > best)
            best = __builtin_popcount ((unsigned)v);
    return best;
}

/* Returns tree depth, or -1 on any structural failure. */
static int check_tree (struct bgn_topo *t, const struct naive *g, uint32_t root)
{
    int n = g->n;
    int *depth = malloc (sizeof (int) * (size_t)n);
    uint32_t *queue = malloc (sizeof (uint32_t) * (size_t)n);
    uint32_t kids[MAX_N];
    int head = 0, tail = 0, reached = 0, max_depth = 0, bad = 0;

    for (int i = 0; i < n; i++)
        depth[i] = -1;
    depth[root] = 0;
    queue[tail++] = root;
    while (head < tail) {
        uint32_t u = queue[head++];
        reached++;
        int k = bgn_topo_bcast_children (t, root, u, kids, MAX_N);
        for (int i = 0; i < k; i++) {
            uint32_t c = kids[i];
            if (c >= (uint32_t)n || depth[c] >= 0 || !naive_linked (g, (int)u, (int)c)
                || bgn_topo_bcast_parent (t, root, c) != (int)u) {
                bad++;
                continue;
            }
            depth[c] = depth[u] + 1;
            max_depth = depth[c] > max_depth ? depth[c] : max_depth;
            queue[tail++] = c;
        }
    }
    if (reached != n || bgn_topo_bcast_parent (t, root, root) != -1)
        bad++;
    free (depth);
    free (queue);
    return bad ? -1 : max_depth;
}

static void test_case (const struct topo_case *tc)
{
    int failures = 0, depth_failures = 0, trees = 0;

    for (int n = 1; n <= MAX_N; n++) {
        struct bgn_topo *t = bgn_topo_create (tc->spec, (uint32_t)n);
        struct naive *g = naive_create (tc->kind, tc->param, n);
        int step = n <= 40 ? 1 : n / 7;
        for (int root = 0; root < n; root += step) {
            int depth = check_tree (t, g, (uint32_t)root);
            trees++;
            if (depth < 0) {
                if (failures++ < 3)
                    diag ("%s N=%d root=%d: broken tree", tc->spec, n, root);
                continue;
            }
            if (!strcmp (tc->spec, "bgn")
                && (depth != max_popcount_below (n) || depth > ceil_log2 (n)
                    || ((n & (n - 1)) == 0 && depth != ceil_log2 (n))))
                depth_failures++;
            if (tc->kind != 'c' && root == 0 && depth != bgn_topo_diameter (t)
                && tc->kind == 'k' && tc->param == 1)
                depth_failures++;   /* chain rooted at 0: depth N-1 */
        }
        naive_destroy (g);
        bgn_topo_destroy (&t);
    }
    ok (failures == 0, "%s: %d spanning trees reach every rank once over graph edges",
        tc->spec, trees);
    if (!strcmp (tc->spec, "bgn"))
        ok (depth_failures == 0,
            "bgn: tree depth = max popcount(v < N) <= ceil(log2 N), = log2 N for powers of 2");
}

int main (int argc, char *argv[])
{
    plan (NO_PLAN);
    for (int i = 0; i < NCASES; i++)
        test_case (&all_cases[i]);

    struct bgn_topo *t = bgn_topo_create ("bgn", 1u << 20);
    struct naive *dummy = NULL;
    (void)dummy;
    uint32_t kids[32];
    ok (bgn_topo_bcast_children (t, 5, 5, kids, 32) == 20,
        "bgn N=2^20: the root has 20 children");
    ok (bgn_topo_bcast_children (t, 5, 6, kids, 32) == 0,
        "bgn N=2^20: relative rank 1 is a leaf");
    bgn_topo_destroy (&t);
    return done_testing ();
}
