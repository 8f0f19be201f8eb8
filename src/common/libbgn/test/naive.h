/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* naive.h: independent reference model for the libbgn unit tests.
 *
 * Builds adjacency straight from the topology definitions (never calling
 * libbgn's neighbour code) as an N x N matrix, and measures distances with
 * a plain BFS over it.  Meant for N up to a few hundred.  Also holds the
 * tests' deterministic PRNG.
 */
#ifndef BGN_TEST_NAIVE_H
#define BGN_TEST_NAIVE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct naive {
    int n;
    bool *adj;          /* n * n */
    int *first;         /* adjacency lists built from adj by naive_finalize */
    int *list;
};

/* Rebuild the adjacency lists after links were added or removed. */
static inline void naive_finalize (struct naive *g)
{
    int count = 0;

    free (g->first);
    free (g->list);
    g->first = malloc (sizeof (int) * (size_t)(g->n + 1));
    for (size_t i = 0; i < (size_t)g->n * g->n; i++)
        count += g->adj[i];
    g->list = malloc (sizeof (int) * (size_t)(count + 1));
    count = 0;
    for (int u = 0; u < g->n; u++) {
        g->first[u] = count;
        for (int v = 0; v < g->n; v++)
            if (g->adj[(size_t)u * g->n + v])
                g->list[count++] = v;
    }
    g->first[g->n] = count;
}

static inline bool naive_linked (const struct naive *g, int a, int b)
{
    return g->adj[(size_t)a * g->n + b];
}

static inline void naive_link (struct naive *g, int a, int b)
{
    if (a == b)
        return;
    g->adj[(size_t)a * g->n + b] = true;
    g->adj[(size_t)b * g->n + a] = true;
}

static inline void naive_unlink (struct naive *g, int a, int b)
{
    g->adj[(size_t)a * g->n + b] = false;
    g->adj[(size_t)b * g->n + a] = false;
}

/* kind: 'c' circulant radix param, 'k' kary param, 'b' binomial. */
static inline struct naive *naive_create (char kind, int param, int n)
{
    struct naive *g = calloc (1, sizeof (*g));
    g->n = n;
    g->adj = calloc ((size_t)n * n, sizeof (bool));
    for (int i = 0; i < n; i++) {
        if (kind == 'c') {
            for (long p = 1; p < n; p *= param) {
                for (long j = 1; j < param; j++) {
                    long off = (j * p) % n;
                    naive_link (g, i, (int)((i + off) % n));
                    naive_link (g, i, (int)(((i - off) % n + n) % n));
                }
            }
        }
        else if (kind == 'k' && i > 0)
            naive_link (g, i, (i - 1) / param);
        else if (kind == 'b' && i > 0)
            naive_link (g, i, i & (i - 1));
    }
    naive_finalize (g);
    return g;
}

static inline void naive_destroy (struct naive *g)
{
    free (g->adj);
    free (g->first);
    free (g->list);
    free (g);
}

/* BFS from src avoiding down[] (may be NULL); dist[v] = -1 if unreachable.
 * A down src reaches nothing.
 */
static inline void naive_bfs (const struct naive *g, int src,
                              const bool *down, int *dist)
{
    int *queue = malloc (sizeof (int) * (size_t)g->n);
    int head = 0, tail = 0;

    for (int i = 0; i < g->n; i++)
        dist[i] = -1;
    if (!down || !down[src]) {
        dist[src] = 0;
        queue[tail++] = src;
    }
    while (head < tail) {
        int u = queue[head++];
        for (int i = g->first[u]; i < g->first[u + 1]; i++) {
            int v = g->list[i];
            if (dist[v] < 0 && !(down && down[v])) {
                dist[v] = dist[u] + 1;
                queue[tail++] = v;
            }
        }
    }
    free (queue);
}

/* All-pairs distances (n*n ints) by n BFS runs. */
static inline int *naive_all_pairs (const struct naive *g, const bool *down)
{
    int *d = malloc (sizeof (int) * (size_t)g->n * g->n);
    for (int s = 0; s < g->n; s++)
        naive_bfs (g, s, down, d + (size_t)s * g->n);
    return d;
}

/* xorshift64*: deterministic, good enough for picking test cases. */
struct test_rng {
    uint64_t state;
};

static inline uint64_t rng_next (struct test_rng *r)
{
    r->state ^= r->state >> 12;
    r->state ^= r->state << 25;
    r->state ^= r->state >> 27;
    return r->state * 2685821657736338717ULL;
}

static inline uint32_t rng_below (struct test_rng *r, uint32_t bound)
{
    return bound ? (uint32_t)(rng_next (r) % bound) : 0;
}

/* Topologies under test, with their naive description. */
struct topo_case {
    const char *spec;
    char kind;
    int param;
};

static const struct topo_case all_cases[] = {
    { "bgn", 'c', 2 },   { "bgn:3", 'c', 3 },  { "bgn:4", 'c', 4 },
    { "bgn:8", 'c', 8 }, { "kary:1", 'k', 1 }, { "kary:2", 'k', 2 },
    { "kary:16", 'k', 16 }, { "binomial", 'b', 2 },
};
#define NCASES ((int)(sizeof (all_cases) / sizeof (all_cases[0])))

#endif /* BGN_TEST_NAIVE_H */
