/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test/topo.c: topology parsing, neighbours, degrees, distances, diameters.
 *
 * Neighbour sets are compared with naive.h's adjacency built straight from
 * the definitions; distances and diameters with its BFS.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "src/common/libtap/tap.h"
#include "src/common/libbgn/bgn.h"
#include "naive.h"

#define MAX_N 300

static void test_parse (void)
{
    static const char *bad[] = {
        "", "bgn:", "bgn:1", "bgn:0", "bgn:65", "bgn:2x", "bgn:-2", "bgn:+2",
        " bgn", "bgn ", "Bgn", "bgn:8:1", "kary", "kary:", "kary:0",
        "kary:-1", "kary:1.5", "kary:99999999999", "binomial:2", "tree",
        "kary:2 ",
    };
    static const struct { const char *spec, *name; bool tree; } good[] = {
        { "bgn", "bgn", false },       { "bgn:2", "bgn", false },
        { "bgn:8", "bgn:8", false },   { "bgn:64", "bgn:64", false },
        { "kary:1", "kary:1", true },  { "kary:16", "kary:16", true },
        { "binomial", "binomial", true },
    };
    int failures = 0;

    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        errno = 0;
        struct bgn_topo *t = bgn_topo_create (bad[i], 16);
        if (t || errno != EINVAL) {
            diag ("'%s' was accepted", bad[i]);
            failures++;
        }
        bgn_topo_destroy (&t);
    }
    ok (failures == 0, "%zu bad specs rejected with EINVAL",
        sizeof (bad) / sizeof (bad[0]));
    errno = 0;
    ok (bgn_topo_create (NULL, 16) == NULL && errno == EINVAL, "NULL spec: EINVAL");
    errno = 0;
    ok (bgn_topo_create ("bgn", 0) == NULL && errno == EINVAL, "size 0: EINVAL");
    errno = 0;
    ok (bgn_topo_create ("bgn", BGN_SIZE_MAX + 1) == NULL && errno == EINVAL,
        "size > BGN_SIZE_MAX: EINVAL");
    for (size_t i = 0; i < sizeof (good) / sizeof (good[0]); i++) {
        struct bgn_topo *t = bgn_topo_create (good[i].spec, 10);
        ok (t && !strcmp (bgn_topo_name (t), good[i].name)
            && bgn_topo_is_tree (t) == good[i].tree && bgn_topo_size (t) == 10,
            "'%s' parses: name %s, %s", good[i].spec, good[i].name,
            good[i].tree ? "tree" : "graph");
        bgn_topo_destroy (&t);
    }
}

/* Neighbours, degree, linked and parent against the naive model. */
static void test_neighbours (const struct topo_case *tc)
{
    uint32_t buf[MAX_N];
    int failures = 0;

    for (int n = 1; n <= MAX_N; n++) {
        struct bgn_topo *t = bgn_topo_create (tc->spec, (uint32_t)n);
        struct naive *g = naive_create (tc->kind, tc->param, n);
        int min = n, max = 0;
        for (int r = 0; r < n; r++) {
            int want = g->first[r + 1] - g->first[r];
            int got = bgn_topo_neighbours (t, (uint32_t)r, buf, MAX_N);
            if (got != want || bgn_topo_degree (t, (uint32_t)r) != want) {
                failures++;
                continue;
            }
            for (int i = 0; i < got; i++)
                if (buf[i] != (uint32_t)g->list[g->first[r] + i])
                    failures++;
            for (int v = 0; v < n; v++)
                if (bgn_topo_linked (t, (uint32_t)r, (uint32_t)v)
                    != naive_linked (g, r, v))
                    failures++;
            if (tc->kind != 'c') {
                int p = r == 0 ? -1 : tc->kind == 'k' ? (r - 1) / tc->param
                                                     : (r & (r - 1));
                if (bgn_topo_parent (t, (uint32_t)r) != p)
                    failures++;
            }
            else if (bgn_topo_parent (t, (uint32_t)r) != -1)
                failures++;
            min = want < min ? want : min;
            max = want > max ? want : max;
        }
        if (n > 1 && (bgn_topo_min_degree (t) != min
                      || bgn_topo_max_degree (t) != max))
            failures++;
        if (failures && failures < 3)
            diag ("%s N=%d: first failure here", tc->spec, n);
        naive_destroy (g);
        bgn_topo_destroy (&t);
    }
    ok (failures == 0, "%s N=1..%d: neighbours/degree/linked/parent match definition",
        tc->spec, MAX_N);
}

/* Distances and diameter against all-pairs naive BFS. */
static void test_distances (const struct topo_case *tc)
{
    int failures = 0;

    for (int n = 1; n <= MAX_N; n += (n < 100 ? 1 : 13)) {
        struct bgn_topo *t = bgn_topo_create (tc->spec, (uint32_t)n);
        struct naive *g = naive_create (tc->kind, tc->param, n);
        int *d = naive_all_pairs (g, NULL);
        int diameter = 0;
        for (int a = 0; a < n; a++)
            for (int b = 0; b < n; b++) {
                int want = d[(size_t)a * n + b];
                diameter = want > diameter ? want : diameter;
                if (bgn_topo_distance (t, (uint32_t)a, (uint32_t)b) != want)
                    failures++;
            }
        if (bgn_topo_diameter (t) != diameter) {
            diag ("%s N=%d: diameter %d, want %d", tc->spec, n,
                  bgn_topo_diameter (t), diameter);
            failures++;
        }
        free (d);
        naive_destroy (g);
        bgn_topo_destroy (&t);
    }
    ok (failures == 0, "%s: distance and diameter match naive BFS", tc->spec);
}

static void test_bgn8_16384 (void)
{
    struct bgn_topo *t = bgn_topo_create ("bgn:8", 16384);
    struct naive_row { bool seen[16384]; } *row = calloc (1, sizeof (*row));
    uint32_t buf[128];
    int want = 0;

    for (long p = 1; p < 16384; p *= 8)
        for (long j = 1; j < 8; j++) {
            long off = (j * p) % 16384;
            long plus = off, minus = (16384 - off) % 16384;
            if (plus && !row->seen[plus]) { row->seen[plus] = true; want++; }
            if (minus && !row->seen[minus]) { row->seen[minus] = true; want++; }
        }
    int n = bgn_topo_neighbours (t, 0, buf, 128);
    int bad = 0;
    for (int i = 0; i < n && i < 128; i++)
        bad += !row->seen[buf[i]];
    ok (n == want && bad == 0, "bgn:8 N=16384: neighbours of 0 match definition");
    cmp_ok (bgn_topo_degree (t, 12345), "==", 59, "bgn:8 N=16384: degree 59");
    cmp_ok (bgn_topo_diameter (t), "==", 5, "bgn:8 N=16384: diameter 5");
    free (row);
    bgn_topo_destroy (&t);

    t = bgn_topo_create ("bgn", 16384);
    cmp_ok (bgn_topo_degree (t, 0), "==", 27, "bgn N=16384: degree 27");
    cmp_ok (bgn_topo_diameter (t), "==", 7, "bgn N=16384: diameter 7");
    bgn_topo_destroy (&t);
}

static void test_greedy_is_not_enough (void)
{
    /* bgn N=64: offset 15 = 16 - 1 is 2 hops, not 4 (8+4+2+1). */
    struct bgn_topo *t = bgn_topo_create ("bgn", 64);
    uint32_t hops[16];
    cmp_ok (bgn_topo_distance (t, 0, 15), "==", 2, "bgn N=64: 0->15 is 2 hops");
    int n = bgn_topo_next_hop (t, 0, 15, hops, 16);
    ok (n == 2 && hops[0] == 16 && hops[1] == 63,
        "bgn N=64: 0->15 next hops are 16 (+16, then -1) and 63 (-1, then +16)");
    bgn_topo_destroy (&t);
}

int main (int argc, char *argv[])
{
    plan (NO_PLAN);
    test_parse ();
    for (int i = 0; i < NCASES; i++) {
        test_neighbours (&all_cases[i]);
        test_distances (&all_cases[i]);
    }
    test_bgn8_16384 ();
    test_greedy_is_not_enough ();
    return done_testing ();
}
