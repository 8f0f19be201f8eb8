/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* status.c: overlay.status and the status-all reduction (see status.h). */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/common/libutil/idmap.h"
#include "src/common/libutil/idset.h"
#include "fence.h"
#include "health.h"
#include "overlay.h"
#include "ovlog.h"
#include "status.h"
#include "dedup.h"
#include "route.h"
#include "tracker.h"

#define MAX_KIDS 256
#define MAX_DEPTH 64
#define MISSING_LISTED 1024

struct gather {
    struct overlay *ov;
    msg_t *req;
    json_t *sum;                  /* the subtree's summary so far */
    int outstanding;
    struct ovtimer *timer;
};

struct gather_child {
    struct gather *g;
    uint32_t rank;
};

int status_init (struct overlay *ov)
{
    if (!(ov->status.gathers = idmap_create (sizeof (struct gather_child))))
        return -1;
    return 0;
}

static void gather_destroy (struct gather **gp)
{
    if (gp && *gp) {
        struct gather *g = *gp;
        ovtimer_destroy (&g->timer);
        msg_destroy (&g->req);
        json_decref (g->sum);
        free (g);
        *gp = NULL;
    }
}

void status_fini (struct overlay *ov)
{
    struct idmap_iter it;
    struct gather **gs = NULL;
    size_t n = 0;

    /* each gather appears once per child it still waits for */
    if (ov->status.gathers
        && (gs = calloc (idmap_size (ov->status.gathers) + 1, sizeof (*gs)))) {
        for (struct gather_child *c = idmap_first (ov->status.gathers, &it);
             c; c = idmap_next (&it)) {
            size_t i;
            for (i = 0; i < n && gs[i] != c->g; i++)
                ;
            if (i == n)
                gs[n++] = c->g;
        }
        for (size_t i = 0; i < n; i++)
            gather_destroy (&gs[i]);
    }
    free (gs);
    idmap_destroy (&ov->status.gathers);
}

static json_t *peer_json (struct peer *p, double now)
{
    json_t *o = json_pack ("{s:i s:s s:s s:b s:b s:I s:I s:I s:I s:I s:I s:I"
                           " s:f s:f s:i}",
                           "rank", (int)p->rank,
                           "hostname", p->hostname,
                           "state", peer_state_str (p->state),
                           "substitute", p->substitute,
                           "connector", p->connector,
                           "tx_msgs", (json_int_t)p->tx_msgs,
                           "rx_msgs", (json_int_t)p->rx_msgs,
                           "tx_bytes", (json_int_t)p->tx_bytes,
                           "rx_bytes", (json_int_t)p->rx_bytes,
                           "reroutes", (json_int_t)p->reroutes,
                           "ttl_drops", (json_int_t)p->ttl_drops,
                           "backlog_drops", (json_int_t)p->backlog_drops,
                           "last_heard", p->last_heard > 0
                                             ? now - p->last_heard : -1.0,
                           "state_since", now - p->state_since,
                           "backlog", p->backlog.count);

    if (o && p->version[0])
        json_object_set_new (o, "version", json_string (p->version));
    if (o) {
        /* microseconds to one decimal: no 17-digit float noise */
        json_object_set_new (o, "rtt_us", p->rtt_us >= 0
                                 ? json_real (round (p->rtt_us * 10.) / 10.)
                                 : json_null ());
        json_object_set_new (o, "problem", p->problem[0]
                                               ? json_string (p->problem)
                                               : json_null ());
        /* its fences refuted, and how long it has no power to fence */
        json_object_set_new (o, "fences_refuted",
                             json_integer ((json_int_t)p->fencepower.total));
        json_object_set_new (o, "fence_power_back_in",
                             now < p->fencepower.until
                                 ? json_real (ceil (p->fencepower.until - now))
                                 : json_null ());
    }
    return o;
}

/* Rank 0: ranks that have not (re)reported ready, not counting fenced
 * ones (at most MISSING_LISTED listed). */
static json_t *missing_json (struct overlay *ov)
{
    json_t *a = json_array ();

    if (ov->rank != 0 || !a)
        return a ? a : json_null ();
    for (uint32_t r = 0; r < ov->size && json_array_size (a) < MISSING_LISTED;
         r++)
        if (!bgn_rankset_test (ov->health.ready, r)
            && !fence_is_fenced (ov, r))
            json_array_append_new (a, json_integer (r));
    return a;
}

/* Fenced ranks in rank order, and their details. */
static void down_json (struct overlay *ov, double now, json_t *down,
                       json_t *info)
{
    for (uint32_t r = 0; r < ov->size && fence_count (ov) > 0; r++) {
        const struct fence_entry *f = fence_lookup (ov, r);
        if (!f || !f->fenced)
            continue;
        json_array_append_new (down, json_integer (r));
        json_array_append_new (info, json_pack ("{s:i s:I s:f s:s}",
                                                "rank", (int)r,
                                                "incarnation",
                                                (json_int_t)f->inc,
                                                "seconds", now - f->since,
                                                "reason",
                                                fence_reason (ov, f)));
        if ((int)json_array_size (down) == fence_count (ov))
            break;
    }
}

/* A broker's overlay counters: its status's "counters" (every one), or
 * for the status-all summary, which adds up every integer in it, those
 * that are not 0 (a counter absent from a summary is 0 everywhere). */
static json_t *own_counters (struct overlay *ov, bool nonzero)
{
    uint64_t tx_msgs = 0, rx_msgs = 0, tx_bytes = 0, rx_bytes = 0, rer = 0;
    json_t *o = json_object ();

    for (int i = 0; i < ov->peers->n; i++) {
        struct peer *p = ov->peers->v[i];
        tx_msgs += p->tx_msgs;
        rx_msgs += p->rx_msgs;
        tx_bytes += p->tx_bytes;
        rx_bytes += p->rx_bytes;
        rer += p->reroutes;
    }
    const struct {
        const char *name;
        uint64_t v;
    } c[] = {
        { "ttl_drops", ov->c.ttl_drops },
        { "unknown_peer_drops", ov->c.unknown_peer_drops },
        { "malformed_drops", ov->c.malformed_drops },
        { "stale_drops", ov->c.stale_drops },
        { "no_route_drops", ov->c.no_route_drops },
        { "backlog_overflows", ov->c.backlog_overflows },
        { "backlog_expired", ov->c.backlog_expired },
        { "forwarded", ov->c.forwarded },
        { "delivered", ov->c.delivered },
        { "auth_failures", ov->c.auth_failures },
        { "redials", ov->c.redials },
        { "never_joined", ov->c.never_joined },
        { "self_doubts", ov->c.self_doubts },
        { "tx_msgs", tx_msgs },
        { "rx_msgs", rx_msgs },
        { "tx_bytes", tx_bytes },
        { "rx_bytes", rx_bytes },
        { "reroutes", rer },
        { "tracker_failed", ov->tracker.failed },
        { "tracker_dup_drops", ov->tracker.dup_drops },
        { "tracker_copy_errors", ov->tracker.copy_errors },
        { "tracker_retries", ov->tracker.retries },
        { "tracker_unkept", ov->tracker.unkept },
        { "tracker_untracked", ov->tracker.untracked },
        { "dedup_copies", ov->dedup.copies },
        { "dedup_answered", ov->dedup.answered },
        { "dedup_evicted", ov->dedup.evicted },
        { "fences_seen", ov->fence.seen },
        { "views_sent", ov->fence.views_sent },
        { "bad_records", ov->fence.bad_records },
        { "held_expired", ov->c.held_expired },
        { "held_drops", ov->c.held_drops },
        { "rejoin_waits", ov->tracker.waits },
        { "rejoin_wait_expired", ov->tracker.wait_expired },
        { "version_refusals", ov->c.version_refusals },
        { "false_claims", ov->fence.false_claims },
        { "signed_requests", ov->sign.signed_out },
        { "verified_requests", ov->sign.verified },
        { "bad_signatures", ov->sign.bad },
        { "unchecked_signatures", ov->sign.unchecked },
        { "stale_signed", ov->sign.stale },
        { "replayed_signed", ov->sign.replays },
        { "unattested_records", ov->sign.unattested },
        { "livesig_refused", ov->livesig.refused },
        { "livesig_backoffs", ov->livesig.backoffs },
        { "fences_suspected", ov->suspect.suspected },
        { "fences_refuted", ov->suspect.refuted },
        { "fences_confirmed", ov->suspect.confirmed },
        { "refutations", ov->fence.refutations },
        { "fences_ignored", ov->suspect.fences_ignored },
        { "fence_power_lost", ov->suspect.power_lost },
        { "ready_refused", ov->health.refused },
        { "moved_refused", ov->c.moved_refused },
        { "endpoint_rereads", ov->c.endpoint_rereads },
    };

    for (size_t i = 0; o && i < sizeof (c) / sizeof (c[0]); i++)
        if (c[i].v || !nonzero)
            json_object_set_new (o, c[i].name,
                                 json_integer ((json_int_t)c[i].v));
    return o;
}

static json_t *memory_entry (size_t bytes, long long bound)
{
    return json_pack ("{s:I s:I}", "bytes", (json_int_t)bytes, "bound",
                      (json_int_t)bound);
}

/* "memory": the heap of every store that grows with traffic, with its
 * bound: the core's, then the transport's and the broker's (io->memory);
 * their sums, and the broker's resident set to compare them with. */
static json_t *memory_json (struct overlay *ov)
{
    json_t *o = evlayer_memory (ov->events), *more, *v;
    json_int_t total = 0, bounds = 0;
    const char *key;

    if (!o)
        return json_object ();
    json_object_set_new (o, "backlogs", memory_entry (route_backlog_bytes (ov),
                                                    ov->cfg.backlog_bytes));
    json_object_set_new (o, "held", memory_entry (route_held_bytes (ov)
                                                  + tracker_wait_bytes (ov),
                                                  ov->cfg.held_bytes));
    json_object_set_new (o, "tracker", memory_entry (tracker_memory (ov),
                                                   ov->cfg.tracker_bytes));
    json_object_set_new (o, "retry_copies", memory_entry (tracker_bytes (ov),
                                                        ov->cfg.retry_bytes));
    json_object_set_new (o, "dedup", memory_entry (dedup_bytes (ov),
                                                 ov->cfg.dedup_bytes));
    if (ov->io->memory && (more = ov->io->memory (ov->ctx))) {
        json_object_update_missing (o, more);
        json_decref (more);
    }
    json_object_foreach (o, key, v) {
        total += json_integer_value (json_object_get (v, "bytes"));
        bounds += json_integer_value (json_object_get (v, "bound"));
    }
    json_object_set_new (o, "stores_bytes", json_integer (total));
    json_object_set_new (o, "bounds_bytes", json_integer (bounds));
    if (ov->io->resident)
        json_object_set_new (o, "rss_bytes",
                             json_integer (ov->io->resident (ov->ctx)));
    return o;
}

json_t *status_json (struct overlay *ov)
{
    double now = ovl_now (ov);
    json_t *o;
    json_t *peers = json_array ();
    json_t *down = json_array ();
    json_t *info = json_array ();

    for (int i = 0; i < ov->peers->n; i++)
        json_array_append_new (peers, peer_json (ov->peers->v[i], now));
    down_json (ov, now, down, info);
    o = json_pack ("{s:i s:i s:s s:i s:s s:i s:I s:o s:o s:o"
                      " s:s s:s s:s s:s s:I s:o s:i s:i"
                      " s:I s:I s:I s:I s:I s:I s:I s:I s:I s:o s:o s:o s:i s:i}",
                      "rank", (int)ov->rank,
                      "size", (int)ov->size,
                      "topology", ov->topo_spec,
                      "diameter", ov->diameter,
                      "state", health_word (ov),
                      "ttl", ov->ttl,
                      "incarnation", (json_int_t)ov->incarnation,
                      "down_ranks", down,
                      "peers", peers,
                      "counters", own_counters (ov, false),
                      "endpoint", ov->endpoint,
                      "hostname", ov->hostname,
                      "instance", ov->instance,
                      "pubkey", ov->pubkey,
                      "auth_failures", (json_int_t)ov->c.auth_failures,
                      "down", info,
                      "unreachable_live", (int)ov->partition.unreachable_live,
                      "tracker", tracker_count (ov),
                      "tracker_failed", (json_int_t)ov->tracker.failed,
                      "tracker_dup_drops", (json_int_t)ov->tracker.dup_drops,
                      "tracker_copy_errors",
                      (json_int_t)ov->tracker.copy_errors,
                      "tracker_retries", (json_int_t)ov->tracker.retries,
                      "tracker_unkept", (json_int_t)ov->tracker.unkept,
                      "dedup_copies", (json_int_t)ov->dedup.copies,
                      "dedup_answered", (json_int_t)ov->dedup.answered,
                      "dedup_evicted", (json_int_t)ov->dedup.evicted,
                      "fences_seen", (json_int_t)ov->fence.seen,
                      "missing", missing_json (ov),
                      "events", evlayer_stats (ov->events),
                      "memory", memory_json (ov),
                      "heal_threshold", ov->heal.threshold,
                      "substitutes", ov->heal.nsubst);
    /* the software's version (absent in the simulator, which has none) */
    if (o && ov->version[0])
        json_object_set_new (o, "version", json_string (ov->version));
    return o;
}

/* ---- the status-all reduction ------------------------------------------
 *
 * Each broker answers with a summary of its subtree, the same shape at
 * every level, merged from its own and its children's:
 *
 *   brokers     how many answered            size       the instance's N
 *   health      {"full": n, "degraded": n, ...}
 *   down_any    ranks fenced by some broker (idset text)
 *   down_all    ranks fenced by every broker that answered
 *   missing     ranks that did not answer (idset text)
 *   problems    brokers with a peer not up that they have not fenced, or
 *               that are partial or partitioned: their rank, host, health
 *               and those peers only (at most MAX_PROBLEMS, then a count)
 *   counters    sums of the brokers' counters
 *
 * so what reaches rank 0 grows with the number of problems, not with N;
 * every broker's full table stays a request away (overlay.status).
 */

#define MAX_PROBLEMS 1000

/* This broker as a problem (NULL if it has none worth listing). */
static json_t *own_problem (struct overlay *ov, double now)
{
    const char *health = health_word (ov);
    json_t *not_up = json_array (), *o;

    for (int i = 0; i < ov->peers->n && not_up; i++) {
        struct peer *p = ov->peers->v[i];
        if (peer_is_up (p) && p->state == PEER_UP)
            continue;
        if (p->state == PEER_DOWN && fence_is_fenced (ov, p->rank))
            continue;   /* dead, and known to be: down_any says it */
        json_array_append_new (not_up,
                               json_pack ("{s:i s:s s:s s:f}",
                                          "rank", (int)p->rank,
                                          "hostname", p->hostname,
                                          "state", peer_state_str (p->state),
                                          "seconds", now - p->state_since));
    }
    if (!not_up || (json_array_size (not_up) == 0
                    && strcmp (health, "partial") != 0
                    && strcmp (health, "partitioned") != 0)) {
        json_decref (not_up);
        return NULL;
    }
    o = json_pack ("{s:i s:s s:s s:i s:i s:o}", "rank", (int)ov->rank,
                   "hostname", ov->hostname, "state", health,
                   "peers", ov->peers->n, "peers_up", ov->peers->up,
                   "not_up", not_up);
    return o;
}

static char *encode_set (idset_t *s)
{
    return idset_encode (s, 0);
}

/* The summary's "memory": per store [bytes summed over the brokers,
 * the largest bytes, bounds summed, the largest bound] (arrays keep the
 * summary small); "rss": [resident sets summed, the largest]. */
static json_t *memory_summary (struct overlay *ov)
{
    json_t *m = memory_json (ov), *o = json_object (), *v;
    const char *key;

    if (!m || !o) {
        json_decref (m);
        return o;
    }
    json_object_foreach (m, key, v) {
        json_int_t b, bound;
        if (json_is_object (v)) {
            b = json_integer_value (json_object_get (v, "bytes"));
            bound = json_integer_value (json_object_get (v, "bound"));
            json_object_set_new (o, key, json_pack ("[I,I,I,I]", b, b,
                                                    bound, bound));
        }
        else if (!strcmp (key, "rss_bytes") && json_is_integer (v))
            json_object_set_new (o, "rss", json_pack ("[I,I]",
                                                      json_integer_value (v),
                                                      json_integer_value (v)));
    }
    json_decref (m);
    return o;
}

/* Fold summary b's memory into a's: even places add up, odd ones (the
 * largest) take the larger. */
static void merge_memory (json_t *a, json_t *b)
{
    json_t *ma = json_object_get (a, "memory");
    json_t *mb = json_object_get (b, "memory"), *sb, *sa;
    const char *store;

    if (!json_is_object (ma) || !json_is_object (mb))
        return;
    json_object_foreach (mb, store, sb) {
        if (!json_is_array (sb))
            continue;
        if (!(sa = json_object_get (ma, store))) {
            json_object_set_new (ma, store, json_deep_copy (sb));
            continue;
        }
        for (size_t i = 0; i < json_array_size (sb)
                           && i < json_array_size (sa); i++) {
            json_int_t va = json_integer_value (json_array_get (sa, i));
            json_int_t vb = json_integer_value (json_array_get (sb, i));
            json_array_set_new (sa, i, json_integer (
                i % 2 ? (va > vb ? va : vb) : va + vb));
        }
    }
}

/* This broker alone, as a summary. */
static json_t *own_summary (struct overlay *ov)
{
    double now = ovl_now (ov);
    idset_t *down = idset_create (0);
    json_t *problems = json_array (), *pr, *o = NULL;
    char *d = NULL;

    if (!down || !problems)
        goto done;
    for (uint32_t r = 0; r < ov->size && fence_count (ov) > 0; r++)
        if (fence_is_fenced (ov, r))
            idset_set (down, r);
    if ((pr = own_problem (ov, now)))
        json_array_append_new (problems, pr);
    if (!(d = encode_set (down)))
        goto done;
    o = json_pack ("{s:i s:i s:{s:i} s:s s:s s:s s:O s:i s:o s:o}",
                   "brokers", 1, "size", (int)ov->size,
                   "health", health_word (ov), 1,
                   "down_any", d, "down_all", d, "missing", "",
                   "problems", problems, "problems_omitted", 0,
                   "counters", own_counters (ov, true),
                   "memory", memory_summary (ov));
    /* how many brokers run each version: which nodes run what */
    if (o && ov->version[0])
        json_object_set_new (o, "versions",
                             json_pack ("{s:i}", ov->version, 1));
done:
    free (d);
    json_decref (problems);
    idset_destroy (&down);
    return o;
}

/* A set from its text in o[key] ("" if absent). */
static idset_t *get_set (json_t *o, const char *key)
{
    const char *s = json_string_value (json_object_get (o, key));
    return idset_decode (s ? s : "", NULL, 0);
}

static void put_set (json_t *o, const char *key, idset_t *s)
{
    char *text = s ? encode_set (s) : NULL;
    if (text)
        json_object_set_new (o, key, json_string (text));
    free (text);
}

/* Add b's counts ({"key": n}) into a's. */
static void sum_counts (json_t *a, json_t *b)
{
    const char *key;
    json_t *v;

    json_object_foreach (b, key, v)
        json_object_set_new (a, key, json_integer (
            json_integer_value (json_object_get (a, key))
            + json_integer_value (v)));
}

/* Fold summary b into a. */
static void merge (json_t *a, json_t *b)
{
    idset_t *any_a = get_set (a, "down_any"), *any_b = get_set (b, "down_any");
    idset_t *all_a = get_set (a, "down_all"), *all_b = get_set (b, "down_all");
    idset_t *miss_a = get_set (a, "missing"), *miss_b = get_set (b, "missing");
    json_t *ha = json_object_get (a, "health"), *hb = json_object_get (b,
                                                                       "health");
    json_t *ca = json_object_get (a, "counters");
    json_t *cb = json_object_get (b, "counters");
    json_t *pa = json_object_get (a, "problems"), *v;
    const char *key;
    size_t i;
    json_int_t omitted;

    json_object_set_new (a, "brokers", json_integer (
        json_integer_value (json_object_get (a, "brokers"))
        + json_integer_value (json_object_get (b, "brokers"))));
    sum_counts (ha, hb);
    if (json_is_object (json_object_get (b, "versions"))) {
        if (!json_is_object (json_object_get (a, "versions")))
            json_object_set_new (a, "versions", json_object ());
        sum_counts (json_object_get (a, "versions"),
                    json_object_get (b, "versions"));
    }
    json_object_foreach (cb, key, v)
        if (json_is_integer (v))
            json_object_set_new (ca, key, json_integer (
                json_integer_value (json_object_get (ca, key))
                + json_integer_value (v)));
    merge_memory (a, b);
    omitted = json_integer_value (json_object_get (a, "problems_omitted"))
              + json_integer_value (json_object_get (b, "problems_omitted"));
    json_array_foreach (json_object_get (b, "problems"), i, v) {
        if (json_array_size (pa) < MAX_PROBLEMS)
            json_array_append (pa, v);
        else
            omitted++;
    }
    json_object_set_new (a, "problems_omitted", json_integer (omitted));
    if (any_a && any_b && all_a && all_b && miss_a && miss_b) {
        for (int r = idset_first (any_b); r >= 0; r = idset_next (any_b, r))
            idset_set (any_a, (unsigned)r);
        for (int r = idset_first (all_a); r >= 0; r = idset_next (all_a, r))
            if (!idset_test (all_b, (unsigned)r))
                idset_clear (all_a, (unsigned)r);
        for (int r = idset_first (miss_b); r >= 0; r = idset_next (miss_b, r))
            idset_set (miss_a, (unsigned)r);
        put_set (a, "down_any", any_a);
        put_set (a, "down_all", all_a);
        put_set (a, "missing", miss_a);
    }
    idset_destroy (&any_a);
    idset_destroy (&any_b);
    idset_destroy (&all_a);
    idset_destroy (&all_b);
    idset_destroy (&miss_a);
    idset_destroy (&miss_b);
}

/* rank and its tree descendants did not answer. */
static void subtree_missing (struct overlay *ov, uint32_t rank, idset_t *out,
                             int depth)
{
    uint32_t kids[MAX_KIDS];
    int n;

    idset_set (out, rank);
    if (depth > MAX_DEPTH)
        return;
    n = bgn_topo_bcast_children (ov->topo, 0, rank, kids, MAX_KIDS);
    for (int i = 0; i < n && i < MAX_KIDS; i++)
        subtree_missing (ov, kids[i], out, depth + 1);
}

static void add_missing (struct overlay *ov, struct gather *g, uint32_t rank)
{
    idset_t *m = get_set (g->sum, "missing");

    if (m) {
        subtree_missing (ov, rank, m, 0);
        put_set (g->sum, "missing", m);
    }
    idset_destroy (&m);
}

/* Answer g's request with what it has; the children that did not answer
 * (and their subtrees) are missing. */
static void gather_finish (struct gather *g)
{
    struct overlay *ov = g->ov;
    struct idmap_iter it;
    uint64_t *left;
    size_t n = 0;

    if ((left = calloc (idmap_size (ov->status.gathers) + 1,
                        sizeof (*left)))) {
        for (struct gather_child *c = idmap_first (ov->status.gathers, &it);
             c; c = idmap_next (&it)) {
            if (c->g != g)
                continue;
            add_missing (ov, g, c->rank);
            left[n++] = it.id;
        }
        for (size_t i = 0; i < n; i++)
            idmap_delete (ov->status.gathers, left[i]);
        free (left);
    }
    char *s = g->sum ? json_dumps (g->sum, JSON_COMPACT) : NULL;
    if (s)
        ov->io->respond (ov->ctx, g->req, s);
    else
        ov->io->respond_error (ov->ctx, g->req, ENOMEM, NULL);
    free (s);
    gather_destroy (&g);
}

static void gather_timeout_cb (void *arg)
{
    gather_finish (arg);
}

static void gather_ask (struct overlay *ov, struct gather *g, uint32_t rank,
                        double timeout, int depth)
{
    struct gather_child *c;
    char payload[64];
    msg_t *msg;

    if (fence_is_fenced (ov, rank)) {
        uint32_t kids[MAX_KIDS];
        int n = bgn_topo_bcast_children (ov->topo, 0, rank, kids, MAX_KIDS);
        idset_t *m = get_set (g->sum, "missing");
        if (m) {
            idset_set (m, rank);
            put_set (g->sum, "missing", m);
        }
        idset_destroy (&m);
        for (int i = 0; i < n && i < MAX_KIDS && depth < MAX_DEPTH; i++)
            gather_ask (ov, g, kids[i], timeout, depth + 1);
        return;
    }
    snprintf (payload, sizeof (payload), "{\"timeout\":%.3f}", timeout);
    uint32_t tag = ++ov->status.next_tag;
    if (tag == 0)
        tag = ++ov->status.next_tag;
    char topic[64];
    if (!(msg = msg_request_create (ovconf_topic (&ov->cfg, "gather", topic,
                                                  sizeof (topic)),
                                    rank, payload))
        || !(c = idmap_put (ov->status.gathers, tag, NULL))) {
        msg_destroy (&msg);
        add_missing (ov, g, rank);
        return;
    }
    msg_set_matchtag (msg, tag);
    c->g = g;
    c->rank = rank;
    g->outstanding++;
    ov->io->request (ov->ctx, msg);
}

void status_gather_request (struct overlay *ov, const msg_t *req)
{
    json_t *o = json_loads (msg_get_payload (req, NULL) ?: "{}", 0, NULL);
    double timeout = 3.0;
    uint32_t kids[MAX_KIDS];
    struct gather *g;
    int n;

    if (o)
        json_unpack (o, "{s?F}", "timeout", &timeout);
    json_decref (o);
    if (timeout < 0.05)
        timeout = 0.05;
    if (timeout > 30)
        timeout = 30;
    if (!(g = calloc (1, sizeof (*g))) || !(g->req = msg_copy (req))
        || !(g->sum = own_summary (ov))
        || !(g->timer = ovtimer_create (ov->timers, gather_timeout_cb, g))) {
        gather_destroy (&g);
        ov->io->respond_error (ov->ctx, req, ENOMEM, NULL);
        return;
    }
    g->ov = ov;
    /* Hold one count while asking: an answer can come back at once (a
     * request the broker fails on the spot) and must not finish g
     * under our feet. */
    g->outstanding = 1;
    n = bgn_topo_bcast_children (ov->topo, 0, ov->rank, kids, MAX_KIDS);
    for (int i = 0; i < n && i < MAX_KIDS; i++)
        gather_ask (ov, g, kids[i], timeout * 0.7, 0);
    if (--g->outstanding == 0) {
        gather_finish (g);
        return;
    }
    ovtimer_arm (g->timer, ovl_now (ov) + timeout);
}

void status_gather_response (struct overlay *ov, const msg_t *rsp)
{
    struct gather_child *c;
    struct gather *g;
    uint32_t rank;
    int errnum = 0;
    const char *payload;
    json_t *o = NULL;

    if (!(c = idmap_get (ov->status.gathers, msg_get_matchtag (rsp))))
        return;   /* late: its gather is finished */
    g = c->g;
    rank = c->rank;
    idmap_delete (ov->status.gathers, msg_get_matchtag (rsp));
    msg_get_errnum (rsp, &errnum);
    payload = msg_get_payload (rsp, NULL);
    if (errnum || !payload || !(o = json_loads (payload, 0, NULL))
        || !json_is_object (json_object_get (o, "health"))
        || !json_is_object (json_object_get (o, "counters"))
        || !json_is_array (json_object_get (o, "problems")))
        add_missing (ov, g, rank);
    else
        merge (g->sum, o);
    json_decref (o);
    if (--g->outstanding == 0)
        gather_finish (g);
}
