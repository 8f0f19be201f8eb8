/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* bgn.h: topology and routing maths for the bgn overlay (no I/O).
 *
 * This header is the contract shared by the overlay module and bgn-sim.
 * It knows three families of graphs over ranks 0..N-1:
 *
 *   "bgn"       binomial graph: rank i is linked to (i + 2^k) mod N and
 *               (i - 2^k) mod N for every 2^k < N.  Same as "bgn:2".
 *   "bgn:R"     radix-R binomial graph, 2 <= R <= 64: offsets +/- j*R^k
 *               (mod N) for j = 1..R-1 and every R^k < N.  Offsets that are
 *               0 mod N (self links) are dropped, duplicates merged.
 *               At N = 16384, bgn:8 has degree 59 and diameter 5.
 *   "kary:K"    K-ary tree, K >= 1: parent(r) = (r-1)/K, rank 0 is root.
 *   "binomial"  binomial tree as in Flux: parent(r) = r & (r-1).
 *
 * bgn graphs are circulant, hence vertex-transitive: the failure-free
 * distance from a to b depends only on (b - a) mod N and is read from a
 * table of N bytes filled by one BFS from rank 0 (computed lazily on first
 * need, O(N * degree) time once; about 1 MiB and a fraction of a second at
 * N = 2^20).  Tree distances use the lowest common ancestor: O(depth),
 * O(1) for kary:1.
 *
 * Objects are opaque, created with *_create and freed with *_destroy (&p),
 * which sets p to NULL and accepts NULL.  Functions that fail return -1 or
 * NULL and set errno (EINVAL for bad arguments, ENOMEM, EHOSTUNREACH).
 * Ranks are uint32_t and N is at most BGN_SIZE_MAX, so any rank also fits
 * in an int.  No function keeps global state; an object is not safe for
 * concurrent use from several threads (lazy caches are filled on read).
 *
 * Output arrays: functions taking (out, max) write at most max entries,
 * sorted ascending unless stated otherwise, and return the total count,
 * which may be larger than max (like snprintf).  out may be NULL if max is 0.
 */
#ifndef BGN_LIBBGN_BGN_H
#define BGN_LIBBGN_BGN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BGN_SIZE_MAX (1u << 30)   /* largest supported N */

/* ---------------------------------------------------------------- ranksets
 * A fixed-size bitmap over ranks 0..size-1 with a maintained count.
 * add/remove/test O(1), count O(1), clear O(size/64),
 * first/next O(distance to the next member / 64).
 */
struct bgn_rankset;

struct bgn_rankset *bgn_rankset_create (uint32_t size);     /* EINVAL if 0 */
void bgn_rankset_destroy (struct bgn_rankset **sp);
uint32_t bgn_rankset_size (const struct bgn_rankset *s);
/* add/remove return 1 if the set changed, 0 if not, -1/EINVAL if out of range */
int bgn_rankset_add (struct bgn_rankset *s, uint32_t rank);
int bgn_rankset_remove (struct bgn_rankset *s, uint32_t rank);
bool bgn_rankset_test (const struct bgn_rankset *s, uint32_t rank);
uint32_t bgn_rankset_count (const struct bgn_rankset *s);
void bgn_rankset_clear (struct bgn_rankset *s);
/* Iteration: first member, or the first member > after; -1 when none.
 *   for (int r = bgn_rankset_first (s); r >= 0; r = bgn_rankset_next (s, r))
 */
int bgn_rankset_first (const struct bgn_rankset *s);
int bgn_rankset_next (const struct bgn_rankset *s, uint32_t after);

/* -------------------------------------------------------------- topologies */
struct bgn_topo;

/* Parse spec ("bgn", "bgn:R", "kary:K", "binomial") for N = size ranks.
 * NULL/EINVAL for a bad spec, size 0 or size > BGN_SIZE_MAX.  O(degree).
 */
struct bgn_topo *bgn_topo_create (const char *spec, uint32_t size);
void bgn_topo_destroy (struct bgn_topo **tp);

/* Canonical name: "bgn" (radix 2), "bgn:R", "kary:K", "binomial". */
const char *bgn_topo_name (const struct bgn_topo *t);
uint32_t bgn_topo_size (const struct bgn_topo *t);
bool bgn_topo_is_tree (const struct bgn_topo *t);
/* Radix R for bgn graphs, fan-out K for kary, 2 for binomial. */
uint32_t bgn_topo_radix (const struct bgn_topo *t);

/* Tree parent of rank; -1 for the root, for a non-tree (errno 0) or for a
 * bad rank (errno EINVAL).  O(1).
 */
int bgn_topo_parent (const struct bgn_topo *t, uint32_t rank);

/* Neighbours of rank, sorted ascending, no duplicates, never rank itself.
 * -1/EINVAL on bad rank.  O(degree).
 */
int bgn_topo_neighbours (const struct bgn_topo *t, uint32_t rank,
                         uint32_t *out, int max);
int bgn_topo_degree (const struct bgn_topo *t, uint32_t rank); /* O(1)-ish */
int bgn_topo_min_degree (const struct bgn_topo *t);              /* O(1) */
int bgn_topo_max_degree (const struct bgn_topo *t);              /* O(1) */
/* true if a and b are linked.  O(log degree) for bgn, O(1) for trees. */
bool bgn_topo_linked (const struct bgn_topo *t, uint32_t a, uint32_t b);

/* Exact failure-free diameter.  Computed once on first call (one BFS from 0
 * for bgn, two BFS sweeps for trees: O(N * degree)) and cached.
 * -1/ENOMEM on allocation failure.
 */
int bgn_topo_diameter (struct bgn_topo *t);

/* Exact failure-free hop count from a to b.  bgn: O(1) table lookup after
 * the lazy BFS (N bytes); trees: O(depth).  -1/EINVAL on bad ranks,
 * -1/ENOMEM if the table cannot be built.
 */
int bgn_topo_distance (struct bgn_topo *t, uint32_t a, uint32_t b);

/* Failure-free equal-cost next hops: every neighbour n of self with
 * distance(n, dest) == distance(self, dest) - 1.  Returns the count (0 if
 * self == dest), -1/EINVAL on bad ranks.  bgn: O(degree); trees: O(depth),
 * exactly one hop.
 */
int bgn_topo_next_hop (struct bgn_topo *t, uint32_t self, uint32_t dest,
                       uint32_t *hops, int max);

/* Spanning tree rooted at root over the failure-free graph, for multicast.
 * bgn:R: the R-nomial tree on relative ranks v = (rank - root) mod N: with
 * m the position of the lowest non-zero base-R digit of v (v = 0: m = the
 * number of digits), children are v + j*R^k for k < m, j = 1..R-1, below N.
 * For bgn (R = 2) this is the binomial tree, depth ceil(log2 N).  Every
 * tree edge is a graph edge.  Trees (kary, binomial): the topology itself
 * re-rooted at root.  Children are returned in increasing offset order (by
 * k then j), not necessarily ascending rank.  O(degree) for bgn,
 * O(degree + depth) for trees.  -1/EINVAL on bad ranks.
 */
int bgn_topo_bcast_children (struct bgn_topo *t, uint32_t root,
                             uint32_t rank, uint32_t *out, int max);
/* Parent of rank in that spanning tree; -1 for rank == root (errno 0) or
 * bad ranks (errno EINVAL).
 */
int bgn_topo_bcast_parent (struct bgn_topo *t, uint32_t root, uint32_t rank);

/* ----------------------------------------------------------------- routers
 * A router is a topology plus a live view: a set of down ranks and extra
 * ("substitute") links added for self-healing.  The live graph is the
 * topology's edges plus the extra links, minus every edge touching a down
 * rank.  The router keeps a borrowed pointer to the topology, which must
 * outlive it.
 *
 * Next hop complexity:
 *  - nothing down and no extra links: the topology's arithmetic
 *    (bgn: O(degree) with the N-byte table; trees: O(depth)).
 *  - trees with down ranks but no extra links: O(depth) path check.
 *  - otherwise: a breadth-first search from dest over the live graph,
 *    kept per dest in a small LRU cache (default 4 dests, 8*N bytes each,
 *    see bgn_router_set_cache_slots).  The search is resumable: it stops
 *    as soon as self is labelled and resumes on a later query, so nearby
 *    pairs are cheap and a whole BFS costs O(N * degree) at most once per
 *    dest per change of the live view.  A cache hit costs O(degree).
 * Any change to the down set or the extra links invalidates the cache.
 */
struct bgn_router;

struct bgn_router *bgn_router_create (struct bgn_topo *t);
void bgn_router_destroy (struct bgn_router **rp);
struct bgn_topo *bgn_router_topo (const struct bgn_router *r);

/* Mark rank down (true) or up (false).  Returns 0, -1/EINVAL on bad rank. */
int bgn_router_set_down (struct bgn_router *r, uint32_t rank, bool down);
bool bgn_router_is_down (const struct bgn_router *r, uint32_t rank);
uint32_t bgn_router_down_count (const struct bgn_router *r);
/* Read-only view of the down set (valid until the router is destroyed). */
const struct bgn_rankset *bgn_router_down_set (const struct bgn_router *r);
/* Bring every rank up. */
void bgn_router_clear_down (struct bgn_router *r);

/* Extra undirected link a--b (a != b).  add: -1/EEXIST if already added
 * (a link that duplicates a topology edge is accepted and harmless);
 * remove: -1/ENOENT if absent.  O(L) for L extra links.
 */
int bgn_router_add_link (struct bgn_router *r, uint32_t a, uint32_t b);
int bgn_router_remove_link (struct bgn_router *r, uint32_t a, uint32_t b);
int bgn_router_link_count (const struct bgn_router *r);

/* Live neighbours of rank: topology neighbours plus extra links, minus down
 * ranks.  Sorted, no duplicates.  -1/EINVAL on bad rank.
 */
int bgn_router_neighbours (struct bgn_router *r, uint32_t rank,
                           uint32_t *out, int max);

/* The central routing call: all neighbours of self lying on a shortest
 * self->dest path in the live graph (equal-cost first hops), sorted.
 * Returns the count, 0 if self == dest, -1 with errno EHOSTUNREACH if dest
 * (or self) is down or dest is not reachable, EINVAL for bad ranks,
 * ENOMEM if a search table cannot be allocated.
 */
int bgn_router_next_hop (struct bgn_router *r, uint32_t self, uint32_t dest,
                         uint32_t *hops, int max);

/* Live hop count from a to b, -1/EHOSTUNREACH if unreachable. */
int bgn_router_distance (struct bgn_router *r, uint32_t a, uint32_t b);

/* The overlay's forwarding call, cheap whatever is down: the failure-free
 * equal-cost next hops (the topology's arithmetic) that are not down,
 * sorted.  Only when every one of them is down does it fall back to
 * bgn_router_next_hop's search over the live graph, and then sets *live
 * (if given): the caller should route that message by live shortest
 * paths from there on (bgn_router_next_hop), which never loops, where the
 * arithmetic alone could send it back.  Each arithmetic hop brings a
 * message one hop closer in the failure-free graph, so it cannot loop
 * either.  Cost: bgn O(degree) while a shortest hop is up; the search
 * (O(N * degree) once per dest and change of the view, see above) only
 * when none is; trees as bgn_router_next_hop.  Extra links are used only
 * by the search.  Errors as bgn_router_next_hop.
 */
#define BGN_ROUTE_FAST_MAX 256
int bgn_router_route (struct bgn_router *r, uint32_t self, uint32_t dest,
                      uint32_t *hops, int max, bool *live);

/* Is b reachable from a in the live graph?  A search from both ends, a
 * level at a time from the side that has seen less, stopping where they
 * meet: on a BGN that visits a few thousand ranks where a one-sided
 * search visits them all, in memory proportional to what it visits (no
 * N-sized tables).  A partitioned view costs a search of the smaller
 * component.  1 or 0; -1 with errno EINVAL (bad rank) or ENOMEM.
 */
int bgn_router_reachable (struct bgn_router *r, uint32_t a, uint32_t b);

/* Number of per-dest search tables kept (>= 1; default 4).  Resets cache. */
int bgn_router_set_cache_slots (struct bgn_router *r, int slots);

/* Convenience: failure-free next hop on a topology (same as a router with
 * nothing down).  Kept for callers that have no router.
 */
int bgn_route_next_hop (struct bgn_topo *t, uint32_t self, uint32_t dest,
                        uint32_t *hops, int max);

#ifdef __cplusplus
}
#endif

#endif /* BGN_LIBBGN_BGN_H */
