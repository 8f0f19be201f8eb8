/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* bgn-sim.c: topology and failure simulator on libbgn.
 *
 * Prints degree, diameter and mean hop count of a topology, and under F
 * failed ranks: the fraction of surviving pairs still connected, the mean
 * stretch (hops with failures / failure-free hops) over connected
 * surviving pairs, and how many surviving ranks are cut off from rank 0's
 * component.  Graphs are never stored: neighbours come from libbgn's
 * arithmetic, failures from a rankset, so N = 2^20 fits in a few tens of
 * MiB.  A sample of next-hop walks through bgn_router checks that the
 * routing code agrees with the simulator's own BFS.  See bgn-sim(1).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "src/common/libbgn/bgn.h"
#include "protosim.h"

#define UNSEEN UINT32_MAX
#define DEFAULT_PAIRS 1000000
#define ROUTE_CHECK_SOURCES 4
#define ROUTE_CHECK_WALKS 200

enum fail_mode { FAIL_RANDOM, FAIL_INTERIOR, FAIL_LOWEST };

struct options {
    const char *topology;
    uint32_t size;
    uint32_t fail;
    enum fail_mode mode;
    uint64_t seed;
    uint64_t pairs;
    bool json;
};

struct results {
    int degree_min, degree_max, diameter;
    double mean_hops;
    uint32_t live;
    uint32_t failed_interior;      /* interior mode: how many were interior */
    double connected_fraction;
    uint32_t components, largest_component, cut_off_from_rank0;
    double failed_mean_hops, mean_stretch;
    uint32_t failed_max_hops;
    uint64_t stretch_pairs;
    uint32_t stretch_sources;
    bool stretch_exact;
    int route_walks, route_mismatches;
    double elapsed;
};

/* Scratch for BFS over the live graph. */
struct sim {
    struct bgn_topo *topo;
    struct bgn_rankset *down;
    uint32_t n;
    uint32_t *level;
    uint32_t *queue;
    uint32_t *nbuf;
    uint64_t rng;
};

/* ------------------------------------------------------------- helpers */

static void usage (FILE *f)
{
    fprintf (f,
"Usage: bgn sim --topology T --size N [OPTIONS]\n"
"Simulate a bgn overlay topology with failures.\n"
"\n"
"  -T, --topology T    bgn, bgn:R (2..64), kary:K (K >= 1) or binomial\n"
"  -s, --size N        number of ranks (1..%u)\n"
"      --fail F        number of failed ranks (0..N-1; rank 0 never fails)\n"
"      --fail-mode M   random (default), interior (tree non-leaves first;\n"
"                      random for bgn) or lowest (ranks 1..F)\n"
"      --seed S        random seed (default 1)\n"
"      --pairs P       pair budget for failure statistics (default %d);\n"
"                      all pairs if live*(live-1) <= P, else BFS from\n"
"                      P/(live-1) sampled sources to every live rank\n"
"  -j, --json          print one JSON object instead of text\n"
"  -h, --help          show this help\n",
             BGN_SIZE_MAX, DEFAULT_PAIRS);
}

/* One line, as every bgn command reports a usage mistake. */
static int usage_error (const char *fmt, const char *arg)
{
    fprintf (stderr, "bgn sim: ");
    fprintf (stderr, fmt, arg);
    fprintf (stderr, "; see 'bgn sim --help'\n");
    return -1;
}

static int parse_u64 (const char *s, uint64_t max, uint64_t *out)
{
    char *end;

    if (!s || *s < '0' || *s > '9')
        return -1;
    errno = 0;
    unsigned long long v = strtoull (s, &end, 10);
    if (errno || *end != '\0' || v > max)
        return -1;
    *out = v;
    return 0;
}

static uint64_t rng_next (uint64_t *state)
{
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    return *state * 2685821657736338717ULL;
}

static uint32_t rng_below (uint64_t *state, uint32_t bound)
{
    return bound ? (uint32_t)(rng_next (state) % bound) : 0;
}

static double now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* --------------------------------------------------------- option parse */

static int parse_options (int argc, char *argv[], struct options *o)
{
    static const struct option longopts[] = {
        /* short options mean what they mean in every bgn command (-T
         * topology and -s size as in bgn start); the rest are long only */
        { "topology", required_argument, NULL, 'T' },
        { "size", required_argument, NULL, 'n' },
        { "fail", required_argument, NULL, 'f' },
        { "fail-mode", required_argument, NULL, 'm' },
        { "seed", required_argument, NULL, 'S' },
        { "pairs", required_argument, NULL, 'p' },
        { "json", no_argument, NULL, 'j' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    uint64_t v;
    int c;
    bool have_size = false;

    memset (o, 0, sizeof (*o));
    o->topology = "bgn";
    o->seed = 1;
    o->pairs = DEFAULT_PAIRS;
    opterr = 0;
    while ((c = getopt_long (argc, argv, ":T:s:jh", longopts, NULL)) != -1) {
        switch (c) {
        case 'T':
            o->topology = optarg;
            break;
        case 's':
        case 'n':
            if (parse_u64 (optarg, BGN_SIZE_MAX, &v) < 0 || v == 0)
                return usage_error ("invalid --size '%s'", optarg);
            o->size = (uint32_t)v;
            have_size = true;
            break;
        case 'f':
            if (parse_u64 (optarg, BGN_SIZE_MAX, &v) < 0)
                return usage_error ("invalid --fail '%s'", optarg);
            o->fail = (uint32_t)v;
            break;
        case 'm':
            if (!strcmp (optarg, "random"))
                o->mode = FAIL_RANDOM;
            else if (!strcmp (optarg, "interior"))
                o->mode = FAIL_INTERIOR;
            else if (!strcmp (optarg, "lowest"))
                o->mode = FAIL_LOWEST;
            else
                return usage_error ("invalid --fail-mode '%s'", optarg);
            break;
        case 'S':
            if (parse_u64 (optarg, UINT64_MAX, &v) < 0)
                return usage_error ("invalid --seed '%s'", optarg);
            o->seed = v;
            break;
        case 'p':
            if (parse_u64 (optarg, UINT64_MAX, &v) < 0 || v == 0)
                return usage_error ("invalid --pairs '%s'", optarg);
            o->pairs = v;
            break;
        case 'j':
            o->json = true;
            break;
        case 'h':
            usage (stdout);
            exit (0);
        case ':':
            return usage_error ("option '%s' needs a value", argv[optind - 1]);
        default:
            return usage_error ("unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return usage_error ("unexpected argument '%s'", argv[optind]);
    if (!have_size)
        return usage_error ("%s", "--size is required");
    if (o->fail >= o->size)
        return usage_error ("%s", "--fail must be below --size (rank 0 never fails)");
    return 0;
}

/* --------------------------------------------------- failure-free stats */

/* Exact mean hops over all ordered pairs, O(N). bgn graphs are
 * vertex-transitive (mean of the distances from 0); trees sum, over each
 * edge, the pairs it separates: size(sub) * (N - size(sub)).
 */
static double exact_mean_hops (struct bgn_topo *t)
{
    uint32_t n = bgn_topo_size (t);
    double sum = 0;

    if (n < 2)
        return 0;
    if (!bgn_topo_is_tree (t)) {
        for (uint32_t x = 1; x < n; x++)
            sum += bgn_topo_distance (t, 0, x);
        return sum / (n - 1);
    }
    uint32_t *sub = malloc (sizeof (uint32_t) * n);
    if (!sub)
        return -1;
    for (uint32_t r = 0; r < n; r++)
        sub[r] = 1;
    for (uint32_t r = n - 1; r > 0; r--) {   /* parent(r) < r in every tree */
        sub[bgn_topo_parent (t, r)] += sub[r];
        sum += 2.0 * sub[r] * (double)(n - sub[r]);
    }
    free (sub);
    return sum / ((double)n * (n - 1));
}

/* ----------------------------------------------------------- failures */

static bool is_interior (struct bgn_topo *t, uint32_t r)
{
    return bgn_topo_bcast_children (t, 0, r, NULL, 0) > 0;
}

/* Pick F ranks to fail (never rank 0).  interior: trees' non-leaf ranks
 * first, at random, then random leaves if F exceeds them.
 */
static int choose_failures (struct sim *s, const struct options *o,
                            uint32_t *interior_failed)
{
    uint32_t n = s->n;
    uint32_t placed = 0;

    *interior_failed = 0;
    if (o->mode == FAIL_LOWEST) {
        for (uint32_t r = 1; r <= o->fail; r++)
            bgn_rankset_add (s->down, r);
        return 0;
    }
    if (o->mode == FAIL_INTERIOR && bgn_topo_is_tree (s->topo)) {
        uint32_t count = 0;
        for (uint32_t r = 1; r < n; r++)
            if (is_interior (s->topo, r))
                s->queue[count++] = r;
        /* partial Fisher-Yates over the interior ranks */
        for (uint32_t i = 0; i < count && placed < o->fail; i++) {
            uint32_t j = i + rng_below (&s->rng, count - i);
            uint32_t tmp = s->queue[i];
            s->queue[i] = s->queue[j];
            s->queue[j] = tmp;
            bgn_rankset_add (s->down, s->queue[i]);
            placed++;
        }
        *interior_failed = placed;
    }
    while (placed < o->fail) {
        uint32_t r = 1 + rng_below (&s->rng, n - 1);
        if (bgn_rankset_add (s->down, r) == 1)
            placed++;
    }
    return 0;
}

/* BFS over the live graph from src; returns ranks reached.  level[] holds
 * hop counts (UNSEEN elsewhere), queue[0..reached) the reached ranks.
 */
static uint32_t live_bfs (struct sim *s, uint32_t src)
{
    uint32_t head = 0, tail = 0;

    memset (s->level, 0xff, sizeof (uint32_t) * s->n);
    s->level[src] = 0;
    s->queue[tail++] = src;
    while (head < tail) {
        uint32_t u = s->queue[head++];
        int k = bgn_topo_neighbours (s->topo, u, s->nbuf,
                                     bgn_topo_max_degree (s->topo));
        for (int i = 0; i < k; i++) {
            uint32_t v = s->nbuf[i];
            if (s->level[v] == UNSEEN && !bgn_rankset_test (s->down, v)) {
                s->level[v] = s->level[u] + 1;
                s->queue[tail++] = v;
            }
        }
    }
    return tail;
}

/* Component sizes of the live graph (exact, O(N * degree)). */
static void measure_components (struct sim *s, struct results *res)
{
    bool *done = calloc (s->n, sizeof (bool));
    double connected_pairs = 0;
    uint32_t live = res->live;

    res->components = 0;
    res->largest_component = 0;
    for (uint32_t r = 0; r < s->n; r++) {
        if (done[r] || bgn_rankset_test (s->down, r))
            continue;
        uint32_t size = live_bfs (s, r);
        for (uint32_t i = 0; i < size; i++)
            done[s->queue[i]] = true;
        if (r == 0)
            res->cut_off_from_rank0 = live - size;
        res->components++;
        if (size > res->largest_component)
            res->largest_component = size;
        connected_pairs += (double)size * (size - 1);
    }
    res->connected_fraction =
        live > 1 ? connected_pairs / ((double)live * (live - 1)) : 1.0;
    free (done);
}

/* Stretch and hop counts with failures, from BFS sources. */
static void measure_stretch (struct sim *s, const struct options *o,
                             struct results *res)
{
    uint32_t live = res->live;
    uint64_t all_pairs = (uint64_t)live * (live - 1);
    uint32_t sources;
    double stretch_sum = 0, hops_sum = 0;

    res->stretch_exact = all_pairs <= o->pairs;
    sources = res->stretch_exact ? live
                                 : (uint32_t)(o->pairs / (live - 1 ? live - 1 : 1));
    if (sources < 1)
        sources = 1;
    if (sources > live)
        sources = live;
    uint32_t next_exact = 0;
    for (uint32_t i = 0; i < sources; i++) {
        uint32_t src;
        if (res->stretch_exact) {
            while (bgn_rankset_test (s->down, next_exact))
                next_exact++;
            src = next_exact++;
        }
        else {
            do
                src = rng_below (&s->rng, s->n);
            while (bgn_rankset_test (s->down, src));
        }
        uint32_t reached = live_bfs (s, src);
        for (uint32_t j = 1; j < reached; j++) {
            uint32_t v = s->queue[j];
            int free_hops = bgn_topo_distance (s->topo, src, v);
            stretch_sum += (double)s->level[v] / free_hops;
            hops_sum += s->level[v];
            if (s->level[v] > res->failed_max_hops)
                res->failed_max_hops = s->level[v];
            res->stretch_pairs++;
        }
    }
    res->stretch_sources = sources;
    res->mean_stretch = res->stretch_pairs ? stretch_sum / res->stretch_pairs : 1.0;
    res->failed_mean_hops = res->stretch_pairs ? hops_sum / res->stretch_pairs : 0;
}

/* Walk libbgn next hops toward a few BFS sources; hop counts must match. */
static void check_routing (struct sim *s, struct results *res)
{
    struct bgn_router *r = bgn_router_create (s->topo);
    uint32_t hops[1024];

    if (!r)
        return;
    for (int b = bgn_rankset_first (s->down); b >= 0;
         b = bgn_rankset_next (s->down, (uint32_t)b))
        bgn_router_set_down (r, (uint32_t)b, true);
    for (int i = 0; i < ROUTE_CHECK_SOURCES; i++) {
        uint32_t dest;
        do
            dest = rng_below (&s->rng, s->n);
        while (bgn_rankset_test (s->down, dest));
        uint32_t reached = live_bfs (s, dest);
        for (int w = 0; w < ROUTE_CHECK_WALKS && reached > 1; w++) {
            uint32_t cur = s->queue[1 + rng_below (&s->rng, reached - 1)];
            uint32_t want = s->level[cur], steps = 0;
            while (cur != dest && steps <= want) {
                int k = bgn_router_next_hop (r, cur, dest, hops, 1024);
                if (k <= 0)
                    break;
                cur = hops[rng_below (&s->rng, (uint32_t)(k < 1024 ? k : 1024))];
                steps++;
            }
            res->route_walks++;
            if (cur != dest || steps != want)
                res->route_mismatches++;
        }
    }
    bgn_router_destroy (&r);
}

/* ------------------------------------------------------------- output */

static const char *mode_name (enum fail_mode m)
{
    return m == FAIL_LOWEST ? "lowest" : m == FAIL_INTERIOR ? "interior" : "random";
}

static void print_text (const struct options *o, struct bgn_topo *t,
                        const struct results *r)
{
    printf ("topology     %s, N=%" PRIu32 "\n", bgn_topo_name (t), o->size);
    printf ("degree       min %d, max %d\n", r->degree_min, r->degree_max);
    printf ("diameter     %d\n", r->diameter);
    printf ("mean hops    %.4f (exact, all pairs)\n", r->mean_hops);
    printf ("failures     %" PRIu32 " (%s, seed %" PRIu64 "), %" PRIu32
            " live ranks", o->fail, mode_name (o->mode), o->seed, r->live);
    if (o->mode == FAIL_INTERIOR && bgn_topo_is_tree (t))
        printf (", %" PRIu32 " interior", r->failed_interior);
    printf ("\n");
    printf ("connected    %.6f of surviving pairs\n", r->connected_fraction);
    printf ("components   %" PRIu32 ", largest %" PRIu32
            ", cut off from rank 0: %" PRIu32 "\n",
            r->components, r->largest_component, r->cut_off_from_rank0);
    if (r->stretch_exact)
        printf ("stretch      %.4f mean (exact, %" PRIu64 " connected pairs)\n",
                r->mean_stretch, r->stretch_pairs);
    else
        printf ("stretch      %.4f mean (%" PRIu64 " sampled pairs from %" PRIu32
                " sources)\n", r->mean_stretch, r->stretch_pairs,
                r->stretch_sources);
    printf ("failed hops  mean %.4f, max %" PRIu32 "\n", r->failed_mean_hops,
            r->failed_max_hops);
    printf ("routing      %d next-hop walks, %d disagree with BFS\n",
            r->route_walks, r->route_mismatches);
    printf ("elapsed      %.2f s\n", r->elapsed);
}

static void print_json (const struct options *o, struct bgn_topo *t,
                        const struct results *r)
{
    printf ("{\"topology\":\"%s\",\"size\":%" PRIu32 ",\"degree_min\":%d,"
            "\"degree_max\":%d,\"diameter\":%d,\"mean_hops\":%.6f,"
            "\"mean_hops_exact\":true,",
            bgn_topo_name (t), o->size, r->degree_min, r->degree_max,
            r->diameter, r->mean_hops);
    printf ("\"fail\":%" PRIu32 ",\"fail_mode\":\"%s\",\"failed_interior\":%" PRIu32
            ",\"seed\":%" PRIu64 ",\"live\":%" PRIu32 ",",
            o->fail, mode_name (o->mode), r->failed_interior, o->seed, r->live);
    printf ("\"connected_fraction\":%.6f,\"components\":%" PRIu32
            ",\"largest_component\":%" PRIu32 ",\"cut_off_from_rank0\":%" PRIu32 ",",
            r->connected_fraction, r->components, r->largest_component,
            r->cut_off_from_rank0);
    printf ("\"mean_stretch\":%.6f,\"failed_mean_hops\":%.6f,"
            "\"failed_max_hops\":%" PRIu32 ",\"stretch_pairs\":%" PRIu64
            ",\"stretch_sources\":%" PRIu32 ",\"stretch_exact\":%s,",
            r->mean_stretch, r->failed_mean_hops, r->failed_max_hops,
            r->stretch_pairs, r->stretch_sources,
            r->stretch_exact ? "true" : "false");
    printf ("\"route_check_walks\":%d,\"route_check_mismatches\":%d,"
            "\"elapsed_s\":%.3f}\n",
            r->route_walks, r->route_mismatches, r->elapsed);
}

/* --------------------------------------------------------------- main */

static int sim_init (struct sim *s, struct bgn_topo *t, uint64_t seed)
{
    memset (s, 0, sizeof (*s));
    s->topo = t;
    s->n = bgn_topo_size (t);
    s->rng = seed * 0x9e3779b97f4a7c15ULL + 1;
    s->down = bgn_rankset_create (s->n);
    s->level = malloc (sizeof (uint32_t) * s->n);
    s->queue = malloc (sizeof (uint32_t) * s->n);
    s->nbuf = malloc (sizeof (uint32_t) * (size_t)(bgn_topo_max_degree (t) + 1));
    return s->down && s->level && s->queue && s->nbuf ? 0 : -1;
}

static void sim_fini (struct sim *s)
{
    bgn_rankset_destroy (&s->down);
    free (s->level);
    free (s->queue);
    free (s->nbuf);
}

int main (int argc, char *argv[])
{
    /* --protocol: the overlay's protocol code on a simulated network */
    for (int i = 1; i < argc; i++)
        if (!strcmp (argv[i], "--protocol"))
            return protosim_main (argc, argv);

    struct options o;
    struct results res;
    struct sim s;
    double t0 = now ();

    if (parse_options (argc, argv, &o) < 0)
        return 1;
    struct bgn_topo *t = bgn_topo_create (o.topology, o.size);
    if (!t) {
        fprintf (stderr, "bgn-sim: invalid topology '%s': %s\n", o.topology,
                 strerror (errno));
        usage (stderr);
        return 1;
    }
    if (sim_init (&s, t, o.seed) < 0) {
        fprintf (stderr, "bgn-sim: out of memory\n");
        sim_fini (&s);
        bgn_topo_destroy (&t);
        return 1;
    }
    memset (&res, 0, sizeof (res));
    res.degree_min = bgn_topo_min_degree (t);
    res.degree_max = bgn_topo_max_degree (t);
    res.diameter = bgn_topo_diameter (t);
    res.mean_hops = exact_mean_hops (t);
    choose_failures (&s, &o, &res.failed_interior);
    res.live = o.size - bgn_rankset_count (s.down);
    measure_components (&s, &res);
    measure_stretch (&s, &o, &res);
    check_routing (&s, &res);
    res.elapsed = now () - t0;
    if (o.json)
        print_json (&o, t, &res);
    else
        print_text (&o, t, &res);
    sim_fini (&s);
    bgn_topo_destroy (&t);
    return res.route_mismatches ? 2 : 0;
}

/* vi: ts=4 sw=4 expandtab
 */
