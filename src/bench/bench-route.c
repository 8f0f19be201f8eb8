/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* bench-route.c: the cost of one next-hop lookup with ranks down.
 *
 * For N brokers (default 16,384) and 0, 1 and 100 random ranks down, looks
 * up the next hop from one rank to 1,000 distinct destinations, over and
 * over, with the exact live-graph call (bgn_router_next_hop: a search per
 * destination once anything is down) and the overlay's forwarding call
 * (bgn_router_route: the arithmetic's hops less the down ones).  Prints
 * one line per case: "down=K exact_us=X route_us=Y searches=Z".
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "src/common/libbgn/bgn.h"

#define DESTS 1000

static double now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static uint64_t rng = 0x243f6a8885a308d3ULL;
static uint32_t rnd_below (uint32_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng % n);
}

/* Microseconds per lookup, looking up all dests 'rounds' times. */
static double time_lookups (struct bgn_router *r, const uint32_t *dests,
                            int rounds, bool fast, long *searches)
{
    uint32_t hops[256];
    double t0 = now ();
    long n = 0;

    for (int k = 0; k < rounds; k++)
        for (int i = 0; i < DESTS; i++) {
            bool live = false;
            if (fast)
                bgn_router_route (r, 0, dests[i], hops, 256, &live);
            else
                bgn_router_next_hop (r, 0, dests[i], hops, 256);
            if (live)
                (*searches)++;
            n++;
        }
    return (now () - t0) * 1e6 / n;
}

int main (int argc, char *argv[])
{
    uint32_t size = argc > 1 ? (uint32_t)strtoul (argv[1], NULL, 10) : 16384;
    const char *spec = argc > 2 ? argv[2] : "bgn";
    static const int downs[] = { 0, 1, 100 };
    struct bgn_topo *t = bgn_topo_create (spec, size);
    uint32_t dests[DESTS];

    if (!t || size < DESTS + 200) {
        fprintf (stderr, "bench-route: need a topology and N > %d\n",
                 DESTS + 200);
        return 1;
    }
    bgn_topo_diameter (t);
    for (size_t c = 0; c < sizeof (downs) / sizeof (downs[0]); c++) {
        struct bgn_router *r = bgn_router_create (t);
        long searches = 0, ignore = 0;
        for (int k = 0; k < downs[c];) {
            uint32_t v = 1 + rnd_below (size - 1);
            if (!bgn_router_is_down (r, v)) {
                bgn_router_set_down (r, v, true);
                k++;
            }
        }
        for (int i = 0; i < DESTS;) {
            uint32_t d = 1 + rnd_below (size - 1);
            if (!bgn_router_is_down (r, d))
                dests[i++] = d;
        }
        double exact = time_lookups (r, dests, downs[c] ? 1 : 200, false,
                                     &ignore);
        double route = time_lookups (r, dests, 200, true, &searches);
        printf ("N=%u %s down=%d exact_us=%.3f route_us=%.3f "
                "searches_per_lookup=%.5f\n", (unsigned)size, spec, downs[c],
                exact, route, (double)searches / (200.0 * DESTS));
        bgn_router_destroy (&r);
    }
    bgn_topo_destroy (&t);
    return 0;
}
