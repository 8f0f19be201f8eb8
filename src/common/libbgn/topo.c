/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* topo.c: topology construction, neighbours, distances and spanning trees.
 *
 * Two families live here.  Circulant binomial graphs ("bgn", "bgn:R") are
 * stored as a sorted list of offsets; rank i's neighbours are i + d mod N.
 * Because they are vertex-transitive, all failure-free distances come from
 * one lazily built table dist0[x] = hops from 0 to x (N bytes).  Trees
 * ("kary:K", "binomial") are pure arithmetic on parent/children and use
 * the lowest common ancestor for distances.  Nothing here does I/O.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bgn.h"
#include "topo_private.h"

enum topo_kind {
    TOPO_CIRCULANT,
    TOPO_KARY,
    TOPO_BINOMIAL,
};

#define DIST_UNSEEN 0xff

struct bgn_topo {
    enum topo_kind kind;
    uint32_t size;
    uint32_t radix;          /* R for circulant, K for kary, 2 for binomial */
    char name[32];
    uint32_t *offsets;       /* circulant: sorted, unique, in (0, size) */
    int noffsets;
    int min_degree;
    int max_degree;
    uint8_t *dist0;          /* circulant: lazy distance-from-0 table */
    int diameter;            /* -1 until computed */
};

/* ------------------------------------------------------------ parsing */

/* Strict unsigned decimal in [lo, hi]: digits only, no sign or spaces. */
static int parse_bounded_uint (const char *s, uint64_t lo, uint64_t hi,
                               uint32_t *out)
{
    uint64_t value = 0;

    if (*s == '\0')
        return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        value = value * 10 + (uint64_t)(*s - '0');
        if (value > hi)
            return -1;
    }
    if (value < lo)
        return -1;
    *out = (uint32_t)value;
    return 0;
}

static int parse_spec (const char *spec, enum topo_kind *kind,
                       uint32_t *radix)
{
    if (!strcmp (spec, "bgn")) {
        *kind = TOPO_CIRCULANT;
        *radix = 2;
        return 0;
    }
    if (!strcmp (spec, "binomial")) {
        *kind = TOPO_BINOMIAL;
        *radix = 2;
        return 0;
    }
    if (!strncmp (spec, "bgn:", 4)) {
        *kind = TOPO_CIRCULANT;
        return parse_bounded_uint (spec + 4, 2, 64, radix);
    }
    if (!strncmp (spec, "kary:", 5)) {
        *kind = TOPO_KARY;
        return parse_bounded_uint (spec + 5, 1, BGN_SIZE_MAX, radix);
    }
    return -1;
}

static void format_name (struct bgn_topo *t)
{
    if (t->kind == TOPO_BINOMIAL)
        snprintf (t->name, sizeof (t->name), "binomial");
    else if (t->kind == TOPO_KARY)
        snprintf (t->name, sizeof (t->name), "kary:%u", t->radix);
    else if (t->radix == 2)
        snprintf (t->name, sizeof (t->name), "bgn");
    else
        snprintf (t->name, sizeof (t->name), "bgn:%u", t->radix);
}

/* ----------------------------------------------------- circulant setup */

static int compare_u32 (const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a;
    uint32_t y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Sort and drop duplicates in place; returns the new length. */
static int sort_unique_u32 (uint32_t *v, int n)
{
    int out = 0;

    qsort (v, (size_t)n, sizeof (v[0]), compare_u32);
    for (int i = 0; i < n; i++) {
        if (out == 0 || v[out - 1] != v[i])
            v[out++] = v[i];
    }
    return out;
}

static int circulant_build_offsets (struct bgn_topo *t)
{
    uint64_t n = t->size;
    uint64_t r = t->radix;
    int powers = 0;
    int count = 0;

    for (uint64_t p = 1; p < n; p *= r)
        powers++;
    t->offsets = malloc (sizeof (uint32_t) * (size_t)(2 * powers * (r - 1) + 1));
    if (!t->offsets)
        return -1;
    for (uint64_t p = 1; p < n; p *= r) {
        for (uint64_t j = 1; j < r; j++) {
            uint64_t d = (j * p) % n;
            if (d == 0)
                continue;
            t->offsets[count++] = (uint32_t)d;
            t->offsets[count++] = (uint32_t)(n - d);
        }
    }
    t->noffsets = sort_unique_u32 (t->offsets, count);
    t->min_degree = t->max_degree = t->noffsets;
    return 0;
}

/* Fill dist0 by BFS from rank 0 over the offsets. */
static int circulant_build_dist0 (struct bgn_topo *t)
{
    uint32_t n = t->size;
    uint32_t *queue;
    uint8_t *dist;
    size_t head = 0, tail = 0;
    int diameter = 0;

    if (t->dist0)
        return 0;
    if (!(dist = malloc (n)))
        return -1;
    if (!(queue = malloc (sizeof (uint32_t) * (size_t)n))) {
        free (dist);
        return -1;
    }
    memset (dist, DIST_UNSEEN, n);
    dist[0] = 0;
    queue[tail++] = 0;
    while (head < tail) {
        uint32_t u = queue[head++];
        for (int i = 0; i < t->noffsets; i++) {
            uint32_t v = u + t->offsets[i];
            if (v >= n || v < u)
                v -= n;
            if (dist[v] == DIST_UNSEEN) {
                dist[v] = (uint8_t)(dist[u] + 1);
                if (dist[v] > diameter)
                    diameter = dist[v];
                queue[tail++] = v;
            }
        }
    }
    free (queue);
    t->dist0 = dist;
    t->diameter = diameter;
    return 0;
}

static inline uint32_t circulant_delta (const struct bgn_topo *t,
                                        uint32_t a, uint32_t b)
{
    return b >= a ? b - a : t->size - (a - b);
}

/* Index of the first offset >= size - rank: offsets from there on wrap
 * around below rank, so they come first in ascending neighbour order.
 */
static int circulant_wrap_split (const struct bgn_topo *t, uint32_t rank)
{
    uint32_t wrap_at = t->size - rank;
    int lo = 0, hi = t->noffsets;

    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (t->offsets[mid] < wrap_at)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}


/* ----------------------------------------------------------- tree basics */

static void tree_set_degrees (struct bgn_topo *t)
{
    if (t->size == 1) {
        t->min_degree = t->max_degree = 0;
        return;
    }
    t->min_degree = 1;
    t->max_degree = bgn_topo_degree (t, 0);
    if (t->size > 1 && bgn_topo_degree (t, 1) > t->max_degree)
        t->max_degree = bgn_topo_degree (t, 1);
}

bool topo_is_chain (const struct bgn_topo *t)
{
    return t->kind == TOPO_KARY && t->radix == 1;
}

uint32_t topo_tree_parent (const struct bgn_topo *t, uint32_t rank)
{
    if (t->kind == TOPO_BINOMIAL)
        return rank & (rank - 1);
    return (rank - 1) / t->radix;
}

uint32_t topo_tree_depth (const struct bgn_topo *t, uint32_t rank)
{
    uint32_t depth = 0;

    if (t->kind == TOPO_BINOMIAL)
        return (uint32_t)__builtin_popcount (rank);
    if (topo_is_chain (t))
        return rank;
    while (rank > 0) {
        rank = (rank - 1) / t->radix;
        depth++;
    }
    return depth;
}

/* Children of rank, ascending, into buf; returns count. */
static int tree_fill_children (const struct bgn_topo *t, uint32_t rank,
                               uint32_t *buf)
{
    int count = 0;

    if (t->kind == TOPO_BINOMIAL) {
        uint64_t limit = rank ? (rank & -rank) : (uint64_t)t->size;
        for (uint64_t p = 1; p < limit && rank + p < t->size; p <<= 1)
            buf[count++] = (uint32_t)(rank + p);
        return count;
    }
    uint64_t first = (uint64_t)rank * t->radix + 1;
    for (uint64_t c = first; c < first + t->radix && c < t->size; c++)
        buf[count++] = (uint32_t)c;
    return count;
}

static uint32_t tree_lca (const struct bgn_topo *t, uint32_t a, uint32_t b,
                          uint32_t *depth_a, uint32_t *depth_b)
{
    uint32_t da = topo_tree_depth (t, a);
    uint32_t db = topo_tree_depth (t, b);

    *depth_a = da;
    *depth_b = db;
    while (da > db) {
        a = topo_tree_parent (t, a);
        da--;
    }
    while (db > da) {
        b = topo_tree_parent (t, b);
        db--;
    }
    while (a != b) {
        a = topo_tree_parent (t, a);
        b = topo_tree_parent (t, b);
    }
    return a;
}

static uint32_t tree_distance (const struct bgn_topo *t, uint32_t a,
                               uint32_t b)
{
    uint32_t da, db;

    if (topo_is_chain (t))
        return a > b ? a - b : b - a;
    uint32_t lca = tree_lca (t, a, b, &da, &db);
    return da + db - 2 * topo_tree_depth (t, lca);
}

uint32_t topo_tree_next_hop (const struct bgn_topo *t, uint32_t self,
                             uint32_t dest)
{
    if (topo_is_chain (t))
        return dest > self ? self + 1 : self - 1;

    uint32_t self_depth = topo_tree_depth (t, self);
    uint32_t x = dest;
    uint32_t x_depth = topo_tree_depth (t, dest);

    if (x_depth <= self_depth)
        return topo_tree_parent (t, self);
    while (x_depth > self_depth + 1) {
        x = topo_tree_parent (t, x);
        x_depth--;
    }
    if (topo_tree_parent (t, x) == self)
        return x;
    return topo_tree_parent (t, self);
}

/* ------------------------------------------------------------ lifecycle */

struct bgn_topo *bgn_topo_create (const char *spec, uint32_t size)
{
    struct bgn_topo *t;
    enum topo_kind kind;
    uint32_t radix;

    if (!spec || size == 0 || size > BGN_SIZE_MAX
        || parse_spec (spec, &kind, &radix) < 0) {
        errno = EINVAL;
        return NULL;
    }
    if (!(t = calloc (1, sizeof (*t))))
        return NULL;
    t->kind = kind;
    t->size = size;
    t->radix = radix;
    t->diameter = -1;
    format_name (t);
    if (kind == TOPO_CIRCULANT) {
        if (circulant_build_offsets (t) < 0) {
            bgn_topo_destroy (&t);
            return NULL;
        }
    }
    else
        tree_set_degrees (t);
    return t;
}

void bgn_topo_destroy (struct bgn_topo **tp)
{
    if (tp && *tp) {
        int saved_errno = errno;
        free ((*tp)->offsets);
        free ((*tp)->dist0);
        free (*tp);
        *tp = NULL;
        errno = saved_errno;
    }
}

const char *bgn_topo_name (const struct bgn_topo *t)
{
    return t ? t->name : NULL;
}

uint32_t bgn_topo_size (const struct bgn_topo *t)
{
    return t ? t->size : 0;
}

bool bgn_topo_is_tree (const struct bgn_topo *t)
{
    return t && t->kind != TOPO_CIRCULANT;
}

uint32_t bgn_topo_radix (const struct bgn_topo *t)
{
    return t ? t->radix : 0;
}

static bool valid_rank (const struct bgn_topo *t, uint32_t rank)
{
    if (!t || rank >= t->size) {
        errno = EINVAL;
        return false;
    }
    return true;
}

int bgn_topo_parent (const struct bgn_topo *t, uint32_t rank)
{
    if (!valid_rank (t, rank))
        return -1;
    if (t->kind == TOPO_CIRCULANT || rank == 0) {
        errno = 0;
        return -1;
    }
    return (int)topo_tree_parent (t, rank);
}

/* --------------------------------------------------------- neighbours */

int topo_fill_neighbours (const struct bgn_topo *t, uint32_t rank,
                          uint32_t *buf)
{
    int count = 0;

    if (t->kind == TOPO_CIRCULANT) {
        int split = circulant_wrap_split (t, rank);
        uint32_t wrap_at = t->size - rank;
        for (int i = split; i < t->noffsets; i++)
            buf[count++] = t->offsets[i] - wrap_at;
        for (int i = 0; i < split; i++)
            buf[count++] = rank + t->offsets[i];
        return count;
    }
    if (rank > 0)
        buf[count++] = topo_tree_parent (t, rank);
    return count + tree_fill_children (t, rank, buf + count);
}

static int copy_out (const uint32_t *src, int count, uint32_t *out, int max)
{
    if (out && max > 0)
        memcpy (out, src, sizeof (src[0]) * (size_t)(count < max ? count : max));
    return count;
}

int bgn_topo_neighbours (const struct bgn_topo *t, uint32_t rank,
                         uint32_t *out, int max)
{
    if (!valid_rank (t, rank))
        return -1;
    if (out && max >= t->max_degree)
        return topo_fill_neighbours (t, rank, out);

    uint32_t *buf = malloc (sizeof (uint32_t) * (size_t)(t->max_degree + 1));
    if (!buf)
        return -1;
    int count = topo_fill_neighbours (t, rank, buf);
    copy_out (buf, count, out, max);
    free (buf);
    return count;
}

int bgn_topo_degree (const struct bgn_topo *t, uint32_t rank)
{
    if (!valid_rank (t, rank))
        return -1;
    if (t->kind == TOPO_CIRCULANT)
        return t->noffsets;

    int degree = rank > 0 ? 1 : 0;
    if (t->kind == TOPO_BINOMIAL) {
        uint64_t limit = rank ? (rank & -rank) : (uint64_t)t->size;
        for (uint64_t p = 1; p < limit && rank + p < t->size; p <<= 1)
            degree++;
        return degree;
    }
    uint64_t first = (uint64_t)rank * t->radix + 1;
    if (first < t->size) {
        uint64_t avail = t->size - first;
        degree += (int)(avail < t->radix ? avail : t->radix);
    }
    return degree;
}

int bgn_topo_min_degree (const struct bgn_topo *t)
{
    return t ? t->min_degree : -1;
}

int bgn_topo_max_degree (const struct bgn_topo *t)
{
    return t ? t->max_degree : -1;
}

bool bgn_topo_linked (const struct bgn_topo *t, uint32_t a, uint32_t b)
{
    if (!t || a >= t->size || b >= t->size || a == b)
        return false;
    if (t->kind == TOPO_CIRCULANT) {
        uint32_t d = circulant_delta (t, a, b);
        return bsearch (&d, t->offsets, (size_t)t->noffsets,
                        sizeof (uint32_t), compare_u32) != NULL;
    }
    if (a > b) {
        uint32_t tmp = a;
        a = b;
        b = tmp;
    }
    return topo_tree_parent (t, b) == a;
}

/* ---------------------------------------------------------- distances */

/* BFS over a tree from src; returns the farthest rank, sets *far_dist. */
static int tree_farthest (const struct bgn_topo *t, uint32_t src,
                          uint32_t *far_rank, uint32_t *far_dist)
{
    uint32_t n = t->size;
    uint32_t *level = malloc (sizeof (uint32_t) * (size_t)n);
    uint32_t *queue = malloc (sizeof (uint32_t) * (size_t)n);
    uint32_t *nbuf = malloc (sizeof (uint32_t) * (size_t)(t->max_degree + 1));
    size_t head = 0, tail = 0;
    int rc = -1;

    if (!level || !queue || !nbuf)
        goto done;
    memset (level, 0xff, sizeof (uint32_t) * (size_t)n);
    level[src] = 0;
    queue[tail++] = src;
    while (head < tail) {
        uint32_t u = queue[head++];
        int count = topo_fill_neighbours (t, u, nbuf);
        for (int i = 0; i < count; i++) {
            if (level[nbuf[i]] == UINT32_MAX) {
                level[nbuf[i]] = level[u] + 1;
                queue[tail++] = nbuf[i];
            }
        }
    }
    *far_rank = queue[tail - 1];        /* BFS order: last is farthest */
    *far_dist = level[*far_rank];
    rc = 0;
done:
    free (level);
    free (queue);
    free (nbuf);
    return rc;
}

int bgn_topo_diameter (struct bgn_topo *t)
{
    if (!t) {
        errno = EINVAL;
        return -1;
    }
    if (t->diameter >= 0)
        return t->diameter;
    if (t->kind == TOPO_CIRCULANT) {
        if (circulant_build_dist0 (t) < 0)
            return -1;
        return t->diameter;
    }
    uint32_t far_rank, far_dist;
    if (tree_farthest (t, 0, &far_rank, &far_dist) < 0
        || tree_farthest (t, far_rank, &far_rank, &far_dist) < 0)
        return -1;
    t->diameter = (int)far_dist;
    return t->diameter;
}

int bgn_topo_distance (struct bgn_topo *t, uint32_t a, uint32_t b)
{
    if (!valid_rank (t, a) || !valid_rank (t, b))
        return -1;
    if (t->kind != TOPO_CIRCULANT)
        return (int)tree_distance (t, a, b);
    if (!t->dist0 && circulant_build_dist0 (t) < 0)
        return -1;
    return t->dist0[circulant_delta (t, a, b)];
}

/* ----------------------------------------------------------- next hop */

/* Append n to hops if dist(n, dest) == want. */
static inline void consider_hop (const struct bgn_topo *t, uint32_t n,
                                 uint32_t dest, int want, uint32_t *hops,
                                 int max, int *count)
{
    if (t->dist0[circulant_delta (t, n, dest)] == want) {
        if (hops && *count < max)
            hops[*count] = n;
        (*count)++;
    }
}

static int circulant_next_hop (struct bgn_topo *t, uint32_t self,
                               uint32_t dest, uint32_t *hops, int max)
{
    int want = t->dist0[circulant_delta (t, self, dest)] - 1;
    int split = circulant_wrap_split (t, self);
    uint32_t wrap_at = t->size - self;
    int count = 0;

    /* Ascending neighbour order: wrapped offsets first, then the rest. */
    for (int i = split; i < t->noffsets; i++)
        consider_hop (t, t->offsets[i] - wrap_at, dest, want, hops, max, &count);
    for (int i = 0; i < split; i++)
        consider_hop (t, self + t->offsets[i], dest, want, hops, max, &count);
    return count;
}

int bgn_topo_next_hop (struct bgn_topo *t, uint32_t self, uint32_t dest,
                       uint32_t *hops, int max)
{
    if (!valid_rank (t, self) || !valid_rank (t, dest))
        return -1;
    if (self == dest)
        return 0;
    if (t->kind != TOPO_CIRCULANT) {
        if (hops && max > 0)
            hops[0] = topo_tree_next_hop (t, self, dest);
        return 1;
    }
    if (!t->dist0 && circulant_build_dist0 (t) < 0)
        return -1;
    return circulant_next_hop (t, self, dest, hops, max);
}

int bgn_route_next_hop (struct bgn_topo *t, uint32_t self, uint32_t dest,
                        uint32_t *hops, int max)
{
    return bgn_topo_next_hop (t, self, dest, hops, max);
}

/* ------------------------------------------------------ spanning trees */

/* Position of the lowest non-zero base-R digit of v (v > 0) and R^pos. */
static int lowest_digit (uint64_t v, uint64_t radix, uint64_t *place)
{
    int pos = 0;
    uint64_t p = 1;

    while ((v / p) % radix == 0) {
        p *= radix;
        pos++;
    }
    *place = p;
    return pos;
}

static int circulant_bcast_children (const struct bgn_topo *t, uint32_t root,
                                     uint32_t rank, uint32_t *out, int max)
{
    uint64_t n = t->size;
    uint64_t r = t->radix;
    uint64_t v = circulant_delta (t, root, rank);
    uint64_t limit;
    int count = 0;

    if (v == 0)
        limit = n;                      /* all places R^k < N */
    else
        lowest_digit (v, r, &limit);    /* places below the lowest digit */
    for (uint64_t p = 1; p < limit && p < n; p *= r) {
        for (uint64_t j = 1; j < r && v + j * p < n; j++) {
            if (out && count < max)
                out[count] = (uint32_t)((root + v + j * p) % n);
            count++;
        }
    }
    return count;
}

static int tree_bcast_children (const struct bgn_topo *t, uint32_t root,
                                uint32_t rank, uint32_t *out, int max)
{
    uint32_t *buf = malloc (sizeof (uint32_t) * (size_t)(t->max_degree + 1));
    uint32_t up = rank == root ? UINT32_MAX
                               : topo_tree_next_hop (t, rank, root);
    int count = 0;

    if (!buf)
        return -1;
    int n = topo_fill_neighbours (t, rank, buf);
    for (int i = 0; i < n; i++) {
        if (buf[i] == up)
            continue;
        if (out && count < max)
            out[count] = buf[i];
        count++;
    }
    free (buf);
    return count;
}

int bgn_topo_bcast_children (struct bgn_topo *t, uint32_t root,
                             uint32_t rank, uint32_t *out, int max)
{
    if (!valid_rank (t, root) || !valid_rank (t, rank))
        return -1;
    if (t->kind == TOPO_CIRCULANT)
        return circulant_bcast_children (t, root, rank, out, max);
    return tree_bcast_children (t, root, rank, out, max);
}

int bgn_topo_bcast_parent (struct bgn_topo *t, uint32_t root, uint32_t rank)
{
    if (!valid_rank (t, root) || !valid_rank (t, rank))
        return -1;
    if (rank == root) {
        errno = 0;
        return -1;
    }
    if (t->kind != TOPO_CIRCULANT)
        return (int)topo_tree_next_hop (t, rank, root);

    uint64_t place;
    uint64_t v = circulant_delta (t, root, rank);
    lowest_digit (v, t->radix, &place);
    uint64_t digit = (v / place) % t->radix;
    return (int)((root + v - digit * place) % t->size);
}

/* vi: ts=4 sw=4 expandtab
 */
