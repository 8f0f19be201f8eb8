/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* router.c: next-hop routing over the live graph (topology - down + links).
 *
 * A router wraps a topology with the broker's current view: which ranks are
 * down and which extra (substitute) links exist.  When the view is pristine
 * it defers to the topology's arithmetic.  Trees without extra links only
 * need a check that the unique path avoids down ranks.  Everything else
 * uses a breadth-first search from the destination over the live graph,
 * kept in a small LRU cache of per-dest tables and resumed lazily, so that
 * repeated calls with an unchanged view are cheap.  A generation counter,
 * bumped on every change of the view, invalidates the cache.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bgn.h"
#include "topo_private.h"

#define LEVEL_UNSEEN UINT32_MAX
#define DEFAULT_CACHE_SLOTS 4

/* A resumable BFS from dest.  Valid while generation matches the router. */
struct search_slot {
    bool used;
    uint32_t dest;
    uint64_t generation;
    uint64_t last_used;
    uint32_t *level;         /* size N, LEVEL_UNSEEN if not reached yet */
    uint32_t *queue;         /* size N */
    uint32_t head, tail;
};

/* One direction of an extra link; both directions are stored. */
struct link_end {
    uint32_t from;
    uint32_t to;
};

struct bgn_router {
    struct bgn_topo *topo;
    uint32_t size;
    struct bgn_rankset *down;
    struct link_end *links;  /* sorted by (from, to) */
    int nlinks;              /* directed entries = 2 * undirected links */
    int links_cap;
    uint64_t generation;
    uint64_t clock;
    struct search_slot *slots;
    int nslots;
    uint32_t *nbuf;          /* topology neighbours, max_degree entries */
    uint32_t *hopbuf;        /* candidate hops */
    int hopbuf_cap;
};

/* ------------------------------------------------------------ lifecycle */

static void slot_release (struct search_slot *slot)
{
    free (slot->level);
    free (slot->queue);
    memset (slot, 0, sizeof (*slot));
}

static void release_slots (struct bgn_router *r)
{
    for (int i = 0; i < r->nslots; i++)
        slot_release (&r->slots[i]);
    free (r->slots);
    r->slots = NULL;
    r->nslots = 0;
}

struct bgn_router *bgn_router_create (struct bgn_topo *t)
{
    struct bgn_router *r;

    if (!t) {
        errno = EINVAL;
        return NULL;
    }
    if (!(r = calloc (1, sizeof (*r))))
        return NULL;
    r->topo = t;
    r->size = bgn_topo_size (t);
    r->nbuf = malloc (sizeof (uint32_t) * (size_t)(bgn_topo_max_degree (t) + 1));
    r->down = bgn_rankset_create (r->size);
    if (!r->nbuf || !r->down || bgn_router_set_cache_slots (r, DEFAULT_CACHE_SLOTS) < 0) {
        bgn_router_destroy (&r);
        return NULL;
    }
    return r;
}

void bgn_router_destroy (struct bgn_router **rp)
{
    if (rp && *rp) {
        int saved_errno = errno;
        struct bgn_router *r = *rp;
        release_slots (r);
        bgn_rankset_destroy (&r->down);
        free (r->links);
        free (r->nbuf);
        free (r->hopbuf);
        free (r);
        *rp = NULL;
        errno = saved_errno;
    }
}

int bgn_router_set_cache_slots (struct bgn_router *r, int slots)
{
    struct search_slot *fresh;

    if (!r || slots < 1) {
        errno = EINVAL;
        return -1;
    }
    if (!(fresh = calloc ((size_t)slots, sizeof (*fresh))))
        return -1;
    release_slots (r);
    r->slots = fresh;
    r->nslots = slots;
    return 0;
}

struct bgn_topo *bgn_router_topo (const struct bgn_router *r)
{
    return r ? r->topo : NULL;
}

static bool valid_rank (const struct bgn_router *r, uint32_t rank)
{
    if (!r || rank >= r->size) {
        errno = EINVAL;
        return false;
    }
    return true;
}

/* ------------------------------------------------------------ down set */

int bgn_router_set_down (struct bgn_router *r, uint32_t rank, bool down)
{
    int changed;

    if (!valid_rank (r, rank))
        return -1;
    if (down)
        changed = bgn_rankset_add (r->down, rank);
    else
        changed = bgn_rankset_remove (r->down, rank);
    if (changed > 0)
        r->generation++;
    return 0;
}

bool bgn_router_is_down (const struct bgn_router *r, uint32_t rank)
{
    return r && bgn_rankset_test (r->down, rank);
}

uint32_t bgn_router_down_count (const struct bgn_router *r)
{
    return r ? bgn_rankset_count (r->down) : 0;
}

const struct bgn_rankset *bgn_router_down_set (const struct bgn_router *r)
{
    return r ? r->down : NULL;
}

void bgn_router_clear_down (struct bgn_router *r)
{
    if (r && bgn_rankset_count (r->down) > 0) {
        bgn_rankset_clear (r->down);
        r->generation++;
    }
}

/* --------------------------------------------------------- extra links */

static int link_compare (const struct link_end *a, uint32_t from, uint32_t to)
{
    if (a->from != from)
        return a->from < from ? -1 : 1;
    if (a->to != to)
        return a->to < to ? -1 : 1;
    return 0;
}

/* Index of the first entry >= (from, to). */
static int link_lower_bound (const struct bgn_router *r, uint32_t from,
                             uint32_t to)
{
    int lo = 0, hi = r->nlinks;

    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (link_compare (&r->links[mid], from, to) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static bool link_present (const struct bgn_router *r, uint32_t from,
                          uint32_t to)
{
    int i = link_lower_bound (r, from, to);
    return i < r->nlinks && link_compare (&r->links[i], from, to) == 0;
}

static void link_insert (struct bgn_router *r, uint32_t from, uint32_t to)
{
    int i = link_lower_bound (r, from, to);
    memmove (&r->links[i + 1], &r->links[i],
             sizeof (r->links[0]) * (size_t)(r->nlinks - i));
    r->links[i].from = from;
    r->links[i].to = to;
    r->nlinks++;
}

static void link_erase (struct bgn_router *r, uint32_t from, uint32_t to)
{
    int i = link_lower_bound (r, from, to);
    memmove (&r->links[i], &r->links[i + 1],
             sizeof (r->links[0]) * (size_t)(r->nlinks - i - 1));
    r->nlinks--;
}

int bgn_router_add_link (struct bgn_router *r, uint32_t a, uint32_t b)
{
    if (!valid_rank (r, a) || !valid_rank (r, b))
        return -1;
    if (a == b) {
        errno = EINVAL;
        return -1;
    }
    if (link_present (r, a, b)) {
        errno = EEXIST;
        return -1;
    }
    if (r->nlinks + 2 > r->links_cap) {
        int cap = r->links_cap ? r->links_cap * 2 : 16;
        struct link_end *grown = realloc (r->links, sizeof (*grown) * (size_t)cap);
        if (!grown)
            return -1;
        r->links = grown;
        r->links_cap = cap;
    }
    link_insert (r, a, b);
    link_insert (r, b, a);
    r->generation++;
    return 0;
}

int bgn_router_remove_link (struct bgn_router *r, uint32_t a, uint32_t b)
{
    if (!valid_rank (r, a) || !valid_rank (r, b))
        return -1;
    if (!link_present (r, a, b)) {
        errno = ENOENT;
        return -1;
    }
    link_erase (r, a, b);
    link_erase (r, b, a);
    r->generation++;
    return 0;
}

int bgn_router_link_count (const struct bgn_router *r)
{
    return r ? r->nlinks / 2 : 0;
}

/* Range [*first, *last) of link entries leaving rank. */
static void links_from (const struct bgn_router *r, uint32_t rank,
                        int *first, int *last)
{
    *first = link_lower_bound (r, rank, 0);
    int i = *first;
    while (i < r->nlinks && r->links[i].from == rank)
        i++;
    *last = i;
}

/* ------------------------------------------------------ live neighbours */

static int ensure_hopbuf (struct bgn_router *r, int need)
{
    if (need <= r->hopbuf_cap)
        return 0;
    uint32_t *grown = realloc (r->hopbuf, sizeof (uint32_t) * (size_t)need);
    if (!grown)
        return -1;
    r->hopbuf = grown;
    r->hopbuf_cap = need;
    return 0;
}

static int compare_u32 (const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a;
    uint32_t y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Sort v[0..n), drop duplicates, copy up to max to out; returns unique count. */
static int sort_unique_out (uint32_t *v, int n, uint32_t *out, int max)
{
    int count = 0;

    qsort (v, (size_t)n, sizeof (v[0]), compare_u32);
    for (int i = 0; i < n; i++) {
        if (i > 0 && v[i] == v[i - 1])
            continue;
        if (out && count < max)
            out[count] = v[i];
        count++;
    }
    return count;
}

/* Live neighbours of rank accepted by keep (level test or NULL = all) into
 * r->hopbuf, unsorted and possibly with duplicates.  Returns count or -1.
 */
static int collect_live_neighbours (struct bgn_router *r, uint32_t rank,
                                    const uint32_t *level, uint32_t want)
{
    int first, last;
    int n = topo_fill_neighbours (r->topo, rank, r->nbuf);
    int count = 0;

    links_from (r, rank, &first, &last);
    if (ensure_hopbuf (r, n + (last - first) + 1) < 0)
        return -1;
    for (int i = 0; i < n + (last - first); i++) {
        uint32_t v = i < n ? r->nbuf[i] : r->links[first + i - n].to;
        if (bgn_rankset_test (r->down, v))
            continue;
        if (level && level[v] != want)
            continue;
        r->hopbuf[count++] = v;
    }
    return count;
}

int bgn_router_neighbours (struct bgn_router *r, uint32_t rank,
                           uint32_t *out, int max)
{
    if (!valid_rank (r, rank))
        return -1;
    int n = collect_live_neighbours (r, rank, NULL, 0);
    if (n < 0)
        return -1;
    return sort_unique_out (r->hopbuf, n, out, max);
}

/* ------------------------------------------------------ resumable search */

static struct search_slot *slot_lookup (struct bgn_router *r, uint32_t dest)
{
    struct search_slot *victim = &r->slots[0];

    for (int i = 0; i < r->nslots; i++) {
        struct search_slot *s = &r->slots[i];
        if (s->used && s->dest == dest && s->generation == r->generation) {
            s->last_used = ++r->clock;
            return s;
        }
        if (!s->used || s->generation != r->generation)
            victim = s;
        else if (victim->used && victim->generation == r->generation
                 && s->last_used < victim->last_used)
            victim = s;
    }
    if (!victim->level) {
        victim->level = malloc (sizeof (uint32_t) * (size_t)r->size);
        victim->queue = malloc (sizeof (uint32_t) * (size_t)r->size);
        if (!victim->level || !victim->queue) {
            slot_release (victim);
            errno = ENOMEM;
            return NULL;
        }
    }
    memset (victim->level, 0xff, sizeof (uint32_t) * (size_t)r->size);
    victim->used = true;
    victim->dest = dest;
    victim->generation = r->generation;
    victim->last_used = ++r->clock;
    victim->level[dest] = 0;
    victim->queue[0] = dest;
    victim->head = 0;
    victim->tail = 1;
    return victim;
}

static void search_label (struct search_slot *s, uint32_t v, uint32_t lvl)
{
    if (s->level[v] == LEVEL_UNSEEN) {
        s->level[v] = lvl;
        s->queue[s->tail++] = v;
    }
}

static void search_expand (struct bgn_router *r, struct search_slot *s,
                           uint32_t u)
{
    int first, last;
    uint32_t next = s->level[u] + 1;
    int n = topo_fill_neighbours (r->topo, u, r->nbuf);

    for (int i = 0; i < n; i++) {
        if (!bgn_rankset_test (r->down, r->nbuf[i]))
            search_label (s, r->nbuf[i], next);
    }
    links_from (r, u, &first, &last);
    for (int i = first; i < last; i++) {
        if (!bgn_rankset_test (r->down, r->links[i].to))
            search_label (s, r->links[i].to, next);
    }
}

/* Continue the BFS until target is labelled or the component is exhausted.
 * When target gets level d, every rank at level < d is already labelled.
 */
static uint32_t search_until (struct bgn_router *r, struct search_slot *s,
                              uint32_t target)
{
    while (s->level[target] == LEVEL_UNSEEN && s->head < s->tail)
        search_expand (r, s, s->queue[s->head++]);
    return s->level[target];
}

/* ------------------------------------------------------------- routing */

static bool view_is_pristine (const struct bgn_router *r)
{
    return bgn_rankset_count (r->down) == 0 && r->nlinks == 0;
}

/* True if the unique tree path a..b (inclusive) touches a down rank. */
static bool tree_path_blocked (const struct bgn_router *r, uint32_t a,
                               uint32_t b)
{
    const struct bgn_topo *t = r->topo;

    if (topo_is_chain (t)) {
        uint32_t lo = a < b ? a : b;
        uint32_t hi = a < b ? b : a;
        int d = bgn_rankset_test (r->down, lo) ? (int)lo
                                               : bgn_rankset_next (r->down, lo);
        return d >= 0 && (uint32_t)d <= hi;
    }
    uint32_t da = topo_tree_depth (t, a);
    uint32_t db = topo_tree_depth (t, b);
    for (;;) {
        if (bgn_rankset_test (r->down, a) || bgn_rankset_test (r->down, b))
            return true;
        if (a == b)
            return false;
        if (da >= db) {
            a = topo_tree_parent (t, a);
            da--;
        }
        else {
            b = topo_tree_parent (t, b);
            db--;
        }
    }
}

static bool tree_fast_path (const struct bgn_router *r)
{
    return bgn_topo_is_tree (r->topo) && r->nlinks == 0;
}

static int unreachable (void)
{
    errno = EHOSTUNREACH;
    return -1;
}

static int search_next_hop (struct bgn_router *r, uint32_t self,
                            uint32_t dest, uint32_t *hops, int max)
{
    struct search_slot *s = slot_lookup (r, dest);
    if (!s)
        return -1;
    uint32_t d = search_until (r, s, self);
    if (d == LEVEL_UNSEEN)
        return unreachable ();
    int n = collect_live_neighbours (r, self, s->level, d - 1);
    if (n < 0)
        return -1;
    return sort_unique_out (r->hopbuf, n, hops, max);
}

int bgn_router_next_hop (struct bgn_router *r, uint32_t self, uint32_t dest,
                         uint32_t *hops, int max)
{
    if (!valid_rank (r, self) || !valid_rank (r, dest))
        return -1;
    if (self == dest)
        return 0;
    if (view_is_pristine (r))
        return bgn_topo_next_hop (r->topo, self, dest, hops, max);
    if (bgn_rankset_test (r->down, self) || bgn_rankset_test (r->down, dest))
        return unreachable ();
    if (tree_fast_path (r)) {
        if (tree_path_blocked (r, self, dest))
            return unreachable ();
        return bgn_topo_next_hop (r->topo, self, dest, hops, max);
    }
    return search_next_hop (r, self, dest, hops, max);
}

int bgn_router_route (struct bgn_router *r, uint32_t self, uint32_t dest,
                      uint32_t *hops, int max, bool *live)
{
    uint32_t buf[BGN_ROUTE_FAST_MAX];
    int n, kept = 0;

    if (live)
        *live = false;
    if (!valid_rank (r, self) || !valid_rank (r, dest))
        return -1;
    if (self == dest)
        return 0;
    if (view_is_pristine (r))
        return bgn_topo_next_hop (r->topo, self, dest, hops, max);
    if (bgn_rankset_test (r->down, self) || bgn_rankset_test (r->down, dest))
        return unreachable ();
    if (tree_fast_path (r))
        return bgn_router_next_hop (r, self, dest, hops, max);
    /* the arithmetic's shortest hops, less the ranks that are down */
    n = bgn_topo_next_hop (r->topo, self, dest, buf, BGN_ROUTE_FAST_MAX);
    for (int i = 0; i < n && i < BGN_ROUTE_FAST_MAX; i++) {
        if (bgn_rankset_test (r->down, buf[i]))
            continue;
        if (hops && kept < max)
            hops[kept] = buf[i];
        kept++;
    }
    if (kept > 0)
        return kept;
    if (live)
        *live = true;
    return search_next_hop (r, self, dest, hops, max);
}

/* ---- reachability: a search from both ends ---------------------------- */

/* A set of ranks, open addressing: the search keeps only what it saw. */
struct seen {
    uint32_t *slot;               /* rank + 1, 0 = empty */
    size_t cap, count;
};

static size_t seen_hash (uint32_t v, size_t cap)
{
    return (size_t)((v * 2654435761u) ^ (v >> 16)) & (cap - 1);
}

static int seen_add (struct seen *s, uint32_t v)
{
    if ((s->count + 1) * 2 > s->cap) {
        size_t ncap = s->cap ? s->cap * 2 : 64;
        uint32_t *ns = calloc (ncap, sizeof (*ns));
        if (!ns)
            return -1;
        for (size_t i = 0; i < s->cap; i++) {
            if (!s->slot[i])
                continue;
            size_t j = seen_hash (s->slot[i] - 1, ncap);
            while (ns[j])
                j = (j + 1) & (ncap - 1);
            ns[j] = s->slot[i];
        }
        free (s->slot);
        s->slot = ns;
        s->cap = ncap;
    }
    size_t j = seen_hash (v, s->cap);
    while (s->slot[j]) {
        if (s->slot[j] == v + 1)
            return 0;
        j = (j + 1) & (s->cap - 1);
    }
    s->slot[j] = v + 1;
    s->count++;
    return 1;
}

static bool seen_has (const struct seen *s, uint32_t v)
{
    if (!s->cap)
        return false;
    for (size_t j = seen_hash (v, s->cap); s->slot[j];
         j = (j + 1) & (s->cap - 1))
        if (s->slot[j] == v + 1)
            return true;
    return false;
}

struct side {
    struct seen seen;
    uint32_t *frontier, *next;
    size_t nf, nn, cap;
};

static int side_push (struct side *sd, uint32_t v)
{
    if (sd->nn == sd->cap) {
        size_t cap = sd->cap ? sd->cap * 2 : 64;
        uint32_t *f = realloc (sd->frontier, cap * sizeof (*f));
        uint32_t *n = f ? realloc (sd->next, cap * sizeof (*n)) : NULL;
        if (f)
            sd->frontier = f;
        if (!n)
            return -1;
        sd->next = n;
        sd->cap = cap;
    }
    sd->next[sd->nn++] = v;
    return 0;
}

static void side_free (struct side *sd)
{
    free (sd->seen.slot);
    free (sd->frontier);
    free (sd->next);
}

/* Expand one level of 'grow'; 1 if it touched 'other', 0 if not, 2 if its
 * frontier is exhausted, -1 on ENOMEM. */
static int expand_level (struct bgn_router *r, struct side *grow,
                         const struct side *other)
{
    grow->nn = 0;
    for (size_t i = 0; i < grow->nf; i++) {
        int first, last;
        uint32_t u = grow->frontier[i];
        int n = topo_fill_neighbours (r->topo, u, r->nbuf);
        links_from (r, u, &first, &last);
        for (int k = 0; k < n + (last - first); k++) {
            uint32_t v = k < n ? r->nbuf[k] : r->links[first + k - n].to;
            int added;
            if (bgn_rankset_test (r->down, v))
                continue;
            if (seen_has (&other->seen, v))
                return 1;
            if ((added = seen_add (&grow->seen, v)) < 0
                || (added && side_push (grow, v) < 0))
                return -1;
        }
    }
    if (grow->nn == 0)
        return 2;
    uint32_t *t = grow->frontier;
    grow->frontier = grow->next;
    grow->next = t;
    grow->nf = grow->nn;
    return 0;
}

int bgn_router_reachable (struct bgn_router *r, uint32_t a, uint32_t b)
{
    struct side sa = { 0 }, sb = { 0 };
    int rc = -1;

    if (!valid_rank (r, a) || !valid_rank (r, b))
        return -1;
    if (bgn_rankset_test (r->down, a) || bgn_rankset_test (r->down, b))
        return 0;
    if (a == b || view_is_pristine (r))
        return 1;   /* the topologies are connected */
    if (tree_fast_path (r))
        return tree_path_blocked (r, a, b) ? 0 : 1;
    if (seen_add (&sa.seen, a) < 0 || side_push (&sa, a) < 0
        || seen_add (&sb.seen, b) < 0 || side_push (&sb, b) < 0)
        goto done;
    sa.frontier[0] = a;
    sa.nf = 1;
    sb.frontier[0] = b;
    sb.nf = 1;
    for (;;) {
        /* grow the side that has seen less */
        struct side *g = sa.seen.count <= sb.seen.count ? &sa : &sb;
        int x = expand_level (r, g, g == &sa ? &sb : &sa);
        if (x < 0)
            goto done;
        if (x == 1 || x == 2) {
            rc = x == 1;
            break;
        }
    }
done:
    if (rc < 0)
        errno = ENOMEM;
    side_free (&sa);
    side_free (&sb);
    return rc;
}

int bgn_router_distance (struct bgn_router *r, uint32_t a, uint32_t b)
{
    if (!valid_rank (r, a) || !valid_rank (r, b))
        return -1;
    if (a == b)
        return 0;
    if (view_is_pristine (r))
        return bgn_topo_distance (r->topo, a, b);
    if (bgn_rankset_test (r->down, a) || bgn_rankset_test (r->down, b))
        return unreachable ();
    if (tree_fast_path (r)) {
        if (tree_path_blocked (r, a, b))
            return unreachable ();
        return bgn_topo_distance (r->topo, a, b);
    }
    struct search_slot *s = slot_lookup (r, b);
    if (!s)
        return -1;
    uint32_t d = search_until (r, s, a);
    if (d == LEVEL_UNSEEN)
        return unreachable ();
    return (int)d;
}

/* vi: ts=4 sw=4 expandtab
 */
