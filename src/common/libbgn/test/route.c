/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test/route.c: exhaustive next-hop tests against a naive reference.
 *
 * For every topology in naive.h's list and every N in 1..MAX_N, each pair
 * (self, dest) is checked: the returned hop set must equal exactly the
 * live neighbours n of self with dist(n, dest) == dist(self, dest) - 1 as
 * measured by a plain BFS over an independently built adjacency matrix,
 * walking first hops and random equal-cost hops must arrive in exactly
 * dist(self, dest) steps, and -1/EHOSTUNREACH must come back exactly when
 * the BFS finds no path.  This runs with nothing down, with three random
 * down sets per N (5%, 10%, 20%) and with random substitute links.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "src/common/libtap/tap.h"
#include "src/common/libbgn/bgn.h"
#include "naive.h"

#define MAX_N 300
#define MAX_REPORTS 5

struct stats {
    long pairs;
    long walks;
    long unreachable;
    long set_fail;
    long walk_fail;
    long random_walk_fail;
    long reach_fail;
    long distance_fail;
    long reachable_fail;      /* bgn_router_reachable disagrees with BFS */
    long route_walks;
    long route_fail;          /* bgn_router_route walk lost or bad hop */
    long route_searches;      /* walks that needed the search fallback */
    int reports;
};

struct scenario {
    struct bgn_router *router;
    const struct naive *g;
    const bool *down;
    const char *what;
    struct test_rng *rng;
    int dest_sample;        /* 0: every dest, else this many random dests */
    int walk_one_in;        /* walk 1 pair in this many (1: every pair) */
};

/* BGN_TEST_EXHAUSTIVE=1 checks every pair and walks every path in every
 * scenario (minutes); the default samples the slow parts (seconds).
 */
static bool exhaustive;

static void set_sampling (struct scenario *sc, bool with_failures)
{
    int n = sc->g->n;
    if (exhaustive || n <= 48) {
        sc->dest_sample = 0;
        sc->walk_one_in = 1;
    }
    else if (!with_failures) {
        sc->dest_sample = 0;      /* all pairs for hop sets */
        sc->walk_one_in = 32;
    }
    else {
        sc->dest_sample = 10;
        sc->walk_one_in = 2;
    }
}

static void report (struct stats *st, const struct scenario *sc, int self,
                    int dest, const char *msg)
{
    if (st->reports++ < MAX_REPORTS)
        diag ("%s N=%d %s: self=%d dest=%d: %s",
              bgn_topo_name (bgn_router_topo (sc->router)), sc->g->n,
              sc->what, self, dest, msg);
}

/* Expected hops from self toward the BFS-from-dest labelling dist. */
static int expected_hops (const struct scenario *sc, int self, const int *dist,
                          uint32_t *out)
{
    const struct naive *g = sc->g;
    int count = 0;

    for (int i = g->first[self]; i < g->first[self + 1]; i++) {
        int v = g->list[i];
        if (!(sc->down && sc->down[v]) && dist[v] == dist[self] - 1)
            out[count++] = (uint32_t)v;
    }
    return count;   /* adjacency lists are ascending */
}

/* Follow hops from self to dest; pick first hop or a random one. */
static bool walk_ok (const struct scenario *sc, int self, int dest,
                     int want_steps, bool random_choice)
{
    uint32_t hops[MAX_N];
    int cur = self;
    int steps = 0;

    while (cur != dest) {
        int n = bgn_router_next_hop (sc->router, (uint32_t)cur,
                                     (uint32_t)dest, hops, MAX_N);
        if (n <= 0 || steps > want_steps)
            return false;
        int next = (int)hops[random_choice ? rng_below (sc->rng, (uint32_t)n) : 0];
        if (!naive_linked (sc->g, cur, next) || (sc->down && sc->down[next]))
            return false;
        cur = next;
        steps++;
    }
    return steps == want_steps;
}

/* Forward as the overlay does: bgn_router_route until it reports the
 * fallback, then live shortest paths.  Every hop must be a live
 * neighbour, and the walk must arrive (it is reachable) without a loop
 * longer than the graph. */
static bool route_walk_ok (struct stats *st, const struct scenario *sc,
                           int self, int dest)
{
    uint32_t hops[MAX_N];
    bool live = false;
    int cur = self;

    for (int steps = 0; steps <= 2 * sc->g->n; steps++) {
        int n;
        if (cur == dest)
            return true;
        if (live)
            n = bgn_router_next_hop (sc->router, (uint32_t)cur,
                                     (uint32_t)dest, hops, MAX_N);
        else {
            n = bgn_router_route (sc->router, (uint32_t)cur, (uint32_t)dest,
                                  hops, MAX_N, &live);
            if (live)
                st->route_searches++;
        }
        if (n <= 0)
            return false;
        int next = (int)hops[0];
        if (!naive_linked (sc->g, cur, next) || (sc->down && sc->down[next]))
            return false;
        cur = next;
    }
    return false;
}

static void check_pair (struct stats *st, const struct scenario *sc,
                        int self, int dest, const int *dist)
{
    uint32_t got[MAX_N], want[MAX_N];
    bool reachable = self == dest || dist[self] >= 0;

    st->pairs++;
    errno = 0;
    int n = bgn_router_next_hop (sc->router, (uint32_t)self, (uint32_t)dest,
                                 got, MAX_N);
    int saved = errno;
    bool self_up = !(sc->down && (sc->down[self] || sc->down[dest]));
    if (bgn_router_reachable (sc->router, (uint32_t)self, (uint32_t)dest)
        != (reachable && self_up ? 1 : 0)) {
        st->reachable_fail++;
        report (st, sc, self, dest, "bgn_router_reachable differs from BFS");
    }
    errno = saved;
    if (!reachable) {
        st->unreachable++;
        if (n != -1 || errno != EHOSTUNREACH) {
            st->reach_fail++;
            report (st, sc, self, dest, "expected EHOSTUNREACH");
        }
        return;
    }
    if (self == dest) {
        if (n != 0) {
            st->set_fail++;
            report (st, sc, self, dest, "self == dest should give 0");
        }
        return;
    }
    int m = expected_hops (sc, self, dist, want);
    if (n != m || memcmp (got, want, sizeof (got[0]) * (size_t)m) != 0) {
        st->set_fail++;
        report (st, sc, self, dest, n < 0 ? "unexpected failure"
                                           : "hop set differs");
        return;
    }
    if (bgn_router_distance (sc->router, (uint32_t)self, (uint32_t)dest)
        != dist[self]) {
        st->distance_fail++;
        report (st, sc, self, dest, "router distance differs");
    }
    if (sc->walk_one_in > 1 && rng_below (sc->rng, (uint32_t)sc->walk_one_in))
        return;
    st->route_walks++;
    if (!route_walk_ok (st, sc, self, dest)) {
        st->route_fail++;
        report (st, sc, self, dest, "bgn_router_route walk did not arrive");
    }
    st->walks++;
    if (!walk_ok (sc, self, dest, dist[self], false)) {
        st->walk_fail++;
        report (st, sc, self, dest, "first-hop walk wrong length");
    }
    if (!walk_ok (sc, self, dest, dist[self], true)) {
        st->random_walk_fail++;
        report (st, sc, self, dest, "random-hop walk wrong length");
    }
}

/* Every pair, dest-major so the router's per-dest cache is exercised. */
static void check_all_pairs (struct stats *st, const struct scenario *sc)
{
    int n = sc->g->n;
    int *dist = malloc (sizeof (int) * (size_t)n);

    int rounds = sc->dest_sample ? sc->dest_sample : n;

    for (int i = 0; i < rounds; i++) {
        int dest = sc->dest_sample ? (int)rng_below (sc->rng, (uint32_t)n) : i;
        naive_bfs (sc->g, dest, sc->down, dist);
        if (sc->down && sc->down[dest])
            for (int i = 0; i < n; i++)
                dist[i] = -1;
        for (int self = 0; self < n; self++)
            check_pair (st, sc, self, dest, dist);
    }
    free (dist);
}

static void report_stats (const struct stats *st, const char *spec,
                          const char *what)
{
    ok (st->set_fail == 0, "%s %s: hop sets exact (%ld pairs)", spec, what,
        st->pairs);
    ok (st->walk_fail == 0, "%s %s: first-hop walks take BFS distance (%ld)",
        spec, what, st->walks);
    ok (st->random_walk_fail == 0,
        "%s %s: random equal-cost walks take BFS distance", spec, what);
    ok (st->reach_fail == 0,
        "%s %s: EHOSTUNREACH exactly when BFS finds no path (%ld such)",
        spec, what, st->unreachable);
    ok (st->distance_fail == 0, "%s %s: bgn_router_distance matches BFS",
        spec, what);
    ok (st->reachable_fail == 0, "%s %s: bgn_router_reachable matches BFS",
        spec, what);
    ok (st->route_fail == 0, "%s %s: bgn_router_route walks arrive through "
        "live neighbours (%ld walks, %ld needed the search)", spec, what,
        st->route_walks, st->route_searches);
}

static void mark_random_down (struct bgn_router *r, bool *down, int n,
                              int count, struct test_rng *rng)
{
    memset (down, 0, sizeof (bool) * (size_t)n);
    bgn_router_clear_down (r);
    for (int placed = 0; placed < count;) {
        int v = (int)rng_below (rng, (uint32_t)n);
        if (!down[v]) {
            down[v] = true;
            bgn_router_set_down (r, (uint32_t)v, true);
            placed++;
        }
    }
}

static void test_no_down (const struct topo_case *tc, struct test_rng *rng)
{
    struct stats st = { 0 };

    for (int n = 1; n <= MAX_N; n++) {
        struct bgn_topo *t = bgn_topo_create (tc->spec, (uint32_t)n);
        struct bgn_router *r = bgn_router_create (t);
        struct naive *g = naive_create (tc->kind, tc->param, n);
        struct scenario sc = { r, g, NULL, "no down", rng, 0, 1 };
        set_sampling (&sc, false);
        check_all_pairs (&st, &sc);
        naive_destroy (g);
        bgn_router_destroy (&r);
        bgn_topo_destroy (&t);
    }
    report_stats (&st, tc->spec, "N=1..300 no down");
}

static void test_random_down (const struct topo_case *tc,
                              struct test_rng *rng)
{
    static const int percent[] = { 5, 10, 20 };
    struct stats st = { 0 };

    for (int n = 2; n <= MAX_N; n++) {
        struct bgn_topo *t = bgn_topo_create (tc->spec, (uint32_t)n);
        struct bgn_router *r = bgn_router_create (t);
        struct naive *g = naive_create (tc->kind, tc->param, n);
        bool *down = calloc ((size_t)n, sizeof (bool));
        for (int i = 0; i < 3; i++) {
            int count = (n * percent[i] + 50) / 100;
            if (count < 1)
                count = 1;
            mark_random_down (r, down, n, count, rng);
            struct scenario sc = { r, g, down, "random down", rng, 0, 1 };
            set_sampling (&sc, true);
            check_all_pairs (&st, &sc);
        }
        free (down);
        naive_destroy (g);
        bgn_router_destroy (&r);
        bgn_topo_destroy (&t);
    }
    report_stats (&st, tc->spec, exhaustive ? "N=2..300 x3 down sets (5/10/20%), all pairs" : "N=2..300 x3 down sets (5/10/20%), all pairs N<=48, else 10 dests x all selves");
}

/* Add k random new links (not already edges) to both models. */
static void add_random_links (struct bgn_router *r, struct naive *g, int k,
                              struct test_rng *rng, int *la, int *lb)
{
    int n = g->n;
    for (int placed = 0, tries = 0; placed < k && tries < 1000; tries++) {
        int a = (int)rng_below (rng, (uint32_t)n);
        int b = (int)rng_below (rng, (uint32_t)n);
        if (a == b || naive_linked (g, a, b))
            continue;
        if (bgn_router_add_link (r, (uint32_t)a, (uint32_t)b) < 0)
            continue;
        naive_link (g, a, b);
        la[placed] = a;
        lb[placed] = b;
        placed++;
    }
    naive_finalize (g);
}

static void test_links (const struct topo_case *tc, struct test_rng *rng)
{
    struct stats st = { 0 };

    for (int n = 3; n <= MAX_N; n += (n < 40 ? 1 : 7)) {
        int la[3] = { -1, -1, -1 }, lb[3] = { -1, -1, -1 };
        struct bgn_topo *t = bgn_topo_create (tc->spec, (uint32_t)n);
        struct bgn_router *r = bgn_router_create (t);
        struct naive *g = naive_create (tc->kind, tc->param, n);
        bool *down = calloc ((size_t)n, sizeof (bool));

        add_random_links (r, g, 3, rng, la, lb);
        struct scenario sc = { r, g, NULL, "links", rng, 0, 1 };
        set_sampling (&sc, true);
        check_all_pairs (&st, &sc);

        mark_random_down (r, down, n, n / 10 + 1, rng);
        sc.down = down;
        sc.what = "links+down";
        check_all_pairs (&st, &sc);

        if (la[0] >= 0) {
            bgn_router_remove_link (r, (uint32_t)la[0], (uint32_t)lb[0]);
            naive_unlink (g, la[0], lb[0]);
            naive_finalize (g);
            sc.what = "links-removed+down";
            check_all_pairs (&st, &sc);
        }
        free (down);
        naive_destroy (g);
        bgn_router_destroy (&r);
        bgn_topo_destroy (&t);
    }
    report_stats (&st, tc->spec, "substitute links (+down, -link)");
}

static void test_errors (void)
{
    struct bgn_topo *t = bgn_topo_create ("bgn", 16);
    struct bgn_router *r = bgn_router_create (t);
    uint32_t hops[16];

    errno = 0;
    ok (bgn_router_next_hop (r, 16, 0, hops, 16) == -1 && errno == EINVAL,
        "next_hop: self out of range is EINVAL");
    errno = 0;
    ok (bgn_router_next_hop (r, 0, 99, hops, 16) == -1 && errno == EINVAL,
        "next_hop: dest out of range is EINVAL");
    ok (bgn_router_next_hop (r, 5, 5, hops, 16) == 0, "next_hop: self == dest is 0");
    bgn_router_set_down (r, 9, true);
    ok (bgn_router_is_down (r, 9) && bgn_router_down_count (r) == 1,
        "set_down marks rank down");
    errno = 0;
    ok (bgn_router_next_hop (r, 0, 9, hops, 16) == -1 && errno == EHOSTUNREACH,
        "next_hop: dest down is EHOSTUNREACH");
    errno = 0;
    ok (bgn_router_next_hop (r, 9, 0, hops, 16) == -1 && errno == EHOSTUNREACH,
        "next_hop: self down is EHOSTUNREACH");
    ok (bgn_router_next_hop (r, 0, 3, NULL, 0) == 4,
        "next_hop: max 0 still returns the count (0->3 via 1, 2, 4 or 15)");
    ok (bgn_router_next_hop (r, 0, 3, hops, 1) == 4 && hops[0] == 1,
        "next_hop: truncated output keeps the lowest hop");
    bgn_router_set_down (r, 9, false);
    ok (!bgn_router_is_down (r, 9), "set_down false brings rank up");
    errno = 0;
    ok (bgn_router_add_link (r, 3, 3) == -1 && errno == EINVAL,
        "add_link: self link is EINVAL");
    ok (bgn_router_add_link (r, 3, 12) == 0, "add_link 3--12");
    errno = 0;
    ok (bgn_router_add_link (r, 12, 3) == -1 && errno == EEXIST,
        "add_link: duplicate (either order) is EEXIST");
    ok (bgn_router_link_count (r) == 1, "link_count is 1");
    errno = 0;
    ok (bgn_router_remove_link (r, 3, 11) == -1 && errno == ENOENT,
        "remove_link: absent link is ENOENT");
    ok (bgn_router_remove_link (r, 12, 3) == 0 && bgn_router_link_count (r) == 0,
        "remove_link (reverse order) removes it");
    bgn_router_destroy (&r);
    bgn_router_destroy (&r);
    ok (r == NULL, "router_destroy nulls the pointer and tolerates NULL");
    bgn_topo_destroy (&t);
}

/* A chain 0-1-...-99: a substitute link 0--99 shortens 0->99 to one hop. */
static void test_link_changes_distance (void)
{
    struct bgn_topo *t = bgn_topo_create ("kary:1", 100);
    struct bgn_router *r = bgn_router_create (t);
    uint32_t hops[4];

    ok (bgn_router_distance (r, 0, 99) == 99, "chain: distance 0->99 is 99");
    bgn_router_add_link (r, 0, 99);
    ok (bgn_router_distance (r, 0, 99) == 1, "chain + link 0--99: distance 1");
    ok (bgn_router_distance (r, 10, 90) == 20,
        "chain + link: 10->90 goes round the ring (20 hops)");
    ok (bgn_router_next_hop (r, 10, 90, hops, 4) == 1 && hops[0] == 9,
        "chain + link: 10->90 first hop is 9");
    bgn_router_set_down (r, 50, true);
    ok (bgn_router_distance (r, 40, 60) == 80,
        "chain + link, 50 down: 40->60 takes the long way (80)");
    bgn_router_remove_link (r, 0, 99);
    errno = 0;
    ok (bgn_router_distance (r, 40, 60) == -1 && errno == EHOSTUNREACH,
        "chain, 50 down, link removed: 40->60 unreachable");
    bgn_router_destroy (&r);
    bgn_topo_destroy (&t);
}

/* kary:2, N = 31: rank 1 down cuts off its subtree (3,4,7..10,15..22). */
static void test_tree_subtree_cut (void)
{
    struct bgn_topo *t = bgn_topo_create ("kary:2", 31);
    struct bgn_router *r = bgn_router_create (t);
    uint32_t hops[4];
    int cut = 0, wrong = 0;

    bgn_router_set_down (r, 1, true);
    for (uint32_t v = 2; v < 31; v++) {
        uint32_t x = v;
        while (x > 2)
            x = (x - 1) / 2;
        bool in_subtree_of_1 = (x == 1);
        int n = bgn_router_next_hop (r, 0, v, hops, 4);
        if (in_subtree_of_1) {
            cut++;
            if (n != -1 || errno != EHOSTUNREACH)
                wrong++;
        }
        else if (n != 1)
            wrong++;
    }
    ok (wrong == 0 && cut == 14,
        "kary:2 N=31, rank 1 down: its 14 descendants unreachable from 0, rest fine");
    ok (bgn_router_next_hop (r, 3, 4, hops, 4) == -1,
        "siblings under a down parent cannot reach each other");
    bgn_router_destroy (&r);
    bgn_topo_destroy (&t);
}

int main (int argc, char *argv[])
{
    struct test_rng rng = { 0x9e3779b97f4a7c15ULL };

    const char *env = getenv ("BGN_TEST_EXHAUSTIVE");
    exhaustive = env && strcmp (env, "0") != 0;
    plan (NO_PLAN);
    if (exhaustive)
        diag ("BGN_TEST_EXHAUSTIVE: all pairs, all walks, every scenario");
    test_errors ();
    test_link_changes_distance ();
    test_tree_subtree_cut ();
    for (int i = 0; i < NCASES; i++) {
        clock_t t0 = clock ();
        test_no_down (&all_cases[i], &rng);
        clock_t t1 = clock ();
        test_random_down (&all_cases[i], &rng);
        clock_t t2 = clock ();
        test_links (&all_cases[i], &rng);
        diag ("%s: cpu seconds no-down %.2f, down %.2f, links %.2f",
              all_cases[i].spec, (double)(t1 - t0) / CLOCKS_PER_SEC,
              (double)(t2 - t1) / CLOCKS_PER_SEC,
              (double)(clock () - t2) / CLOCKS_PER_SEC);
    }
    return done_testing ();
}

/* vi: ts=4 sw=4 expandtab
 */
