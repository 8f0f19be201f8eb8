/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test/scale.c: N = 1,048,576 construction, routing and memory sanity.
 *
 * Builds bgn, bgn:8, kary:2 and binomial at N = 2^20, checks degree and
 * diameter, routes a few thousand random pairs by walking next hops (each
 * walk must take exactly bgn_topo_distance hops), repeats a smaller number
 * with ranks down (exercising the per-dest search cache), and checks the
 * peak resident set stays far from N^2.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "src/common/libtap/tap.h"
#include "src/common/libbgn/bgn.h"
#include "naive.h"

#define BIG (1u << 20)

static double seconds_since (struct timespec *t0)
{
    struct timespec t1;
    clock_gettime (CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

/* Walk next hops from a to b; returns hop count or -1. */
static int walk (struct bgn_router *r, uint32_t a, uint32_t b,
                 struct test_rng *rng, int limit)
{
    uint32_t hops[512];
    int steps = 0;
    while (a != b) {
        int n = bgn_router_next_hop (r, a, b, hops, 512);
        if (n <= 0 || ++steps > limit)
            return -1;
        a = hops[rng_below (rng, (uint32_t)(n < 512 ? n : 512))];
        if (bgn_router_is_down (r, a))
            return -1;
    }
    return steps;
}

static void test_big (const char *spec, int want_degree, int want_diameter,
                      int pairs, struct test_rng *rng)
{
    struct timespec t0;
    clock_gettime (CLOCK_MONOTONIC, &t0);
    struct bgn_topo *t = bgn_topo_create (spec, BIG);
    struct bgn_router *r = bgn_router_create (t);
    ok (t && r, "%s N=2^20: created", spec);
    if (want_degree >= 0)
        cmp_ok (bgn_topo_max_degree (t), "==", want_degree, "%s N=2^20: degree %d",
                spec, want_degree);
    cmp_ok (bgn_topo_diameter (t), "==", want_diameter, "%s N=2^20: diameter %d",
            spec, want_diameter);
    int bad = 0;
    for (int i = 0; i < pairs; i++) {
        uint32_t a = rng_below (rng, BIG), b = rng_below (rng, BIG);
        if (walk (r, a, b, rng, 100) != bgn_topo_distance (t, a, b))
            bad++;
    }
    ok (bad == 0, "%s N=2^20: %d random walks take exactly distance hops", spec, pairs);
    diag ("%s: create + diameter + %d walks in %.2f s", spec, pairs, seconds_since (&t0));

    /* 1% down; route toward a few dests from many sources. */
    clock_gettime (CLOCK_MONOTONIC, &t0);
    for (uint32_t i = 0; i < BIG / 100; i++)
        bgn_router_set_down (r, rng_below (rng, BIG), true);
    int walks = 0, reached = 0, unreachable = 0, bad_down = 0;
    for (int d = 0; d < 3; d++) {
        uint32_t dest = rng_below (rng, BIG);
        for (int i = 0; i < 300; i++) {
            uint32_t a = rng_below (rng, BIG);
            int free_hops = bgn_topo_distance (t, a, dest);
            int live = bgn_router_distance (r, a, dest);
            int steps = walk (r, a, dest, rng, 1000);
            walks++;
            if (live < 0) {
                unreachable++;
                continue;
            }
            if (steps != live || live < free_hops)
                bad_down++;
            else
                reached++;
        }
    }
    ok (bad_down == 0, "%s N=2^20, 1%% down: %d walks take live distance hops "
        "(%d reached, %d unreachable)", spec, walks, reached, unreachable);
    diag ("%s: 1%% down, %d walks in %.2f s", spec, walks, seconds_since (&t0));
    bgn_router_destroy (&r);
    bgn_topo_destroy (&t);
}

int main (int argc, char *argv[])
{
    struct test_rng rng = { 42 };
    struct rusage ru;

    plan (NO_PLAN);
    /* bgn: offsets +/-2^k, k = 0..19, with +2^19 == -2^19: 39 links;
     * diameter 10 (half the bits).  bgn:8: j*8^k for k = 0..5 give 84
     * distinct +/- offsets, k = 6 adds 2^18, 2^19, 3*2^18: 87.
     * kary:2: rank 2^20-1 alone sits at depth 20, the other side of the
     * root reaches depth 19: 39.  binomial: popcounts 20 + 19 under the
     * root: 39.
     */
    test_big ("bgn", 39, 10, 3000, &rng);
    test_big ("bgn:8", 87, 7, 3000, &rng);
    test_big ("kary:2", 3, 39, 3000, &rng);
    test_big ("binomial", 20, 39, 3000, &rng);
    getrusage (RUSAGE_SELF, &ru);
    diag ("peak RSS %ld KiB", ru.ru_maxrss);
    cmp_ok (ru.ru_maxrss, "<", 256 * 1024, "peak RSS below 256 MiB at N=2^20");
    return done_testing ();
}
