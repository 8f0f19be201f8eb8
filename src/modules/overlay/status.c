/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* status.c: overlay.status, this broker's view (see status.h).
 *
 * The answer lists this broker's peers with their counters, the ranks it
 * holds fenced with the reasons, the event layer's counters and what each
 * store holds in memory: it reads every part's state, as a read-only
 * observer.  Its counters and memory are also the leaf of the status-all
 * reduction (statusall.c, above it), which sums them over the tree.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fence.h"
#include "health.h"
#include "overlay.h"
#include "ovlog.h"
#include "status.h"
#include "dedup.h"
#include "route.h"
#include "tracker.h"

#define MISSING_LISTED 1024

static json_t *peer_json (struct peer *p, double now)
{
    json_t *o = json_pack ("{s:i s:s s:s s:b s:b s:I s:I s:I s:I s:I s:I s:I"
                           " s:f s:f s:i}",
                           "rank", (int)p->rank,
                           "hostname", p->hello.hostname,
                           "state", peer_state_str (p->state),
                           "substitute", p->substitute,
                           "connector", p->connector,
                           "tx_msgs", (json_int_t)p->route.tx_msgs,
                           "rx_msgs", (json_int_t)p->rx.rx_msgs,
                           "tx_bytes", (json_int_t)p->route.tx_bytes,
                           "rx_bytes", (json_int_t)p->rx.rx_bytes,
                           "reroutes", (json_int_t)p->route.reroutes,
                           "ttl_drops", (json_int_t)p->rx.ttl_drops,
                           "backlog_drops", (json_int_t)p->route.backlog_drops,
                           "last_heard", p->live.last_heard > 0
                                             ? now - p->live.last_heard : -1.0,
                           "state_since", now - p->state_since,
                           "backlog", p->backlog.count);

    if (o && p->hello.version[0])
        json_object_set_new (o, "version", json_string (p->hello.version));
    if (o) {
        /* microseconds to one decimal: no 17-digit float noise */
        json_object_set_new (o, "rtt_us", p->live.rtt_us >= 0
                                 ? json_real (round (p->live.rtt_us * 10.)
                                              / 10.)
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
 * that are not 0 (a counter absent from a summary is 0 everywhere).
 * Each counter is its part's; this observer reads them (route.c's by
 * the names ROUTE_COUNTS gives them). */
#define ROUTE_COUNT_NAME(name) #name,
static const char *route_names[] = { ROUTE_COUNTS (ROUTE_COUNT_NAME) };

json_t *status_counters (struct overlay *ov, bool nonzero)
{
    uint64_t tx_msgs = 0, rx_msgs = 0, tx_bytes = 0, rx_bytes = 0, rer = 0;
    json_t *o = json_object (), *v;
    const char *key;
    void *tmp;

    for (int i = 0; i < ov->peers->n; i++) {
        struct peer *p = ov->peers->v[i];
        tx_msgs += p->route.tx_msgs;
        rx_msgs += p->rx.rx_msgs;
        tx_bytes += p->route.tx_bytes;
        rx_bytes += p->rx.rx_bytes;
        rer += p->route.reroutes;
    }
    const struct {
        const char *name;
        uint64_t v;
    } c[] = {
        { "unknown_peer_drops", ov->rx.unknown_peer_drops },
        { "stale_drops", ov->hello.stale_drops },
        { "delivered", ov->deliver.delivered },
        { "auth_failures", ov->rx.auth_failures },
        { "redials", ov->hello.redials },
        { "never_joined", ov->live.never_joined },
        { "self_doubts", ov->live.self_doubts },
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
        { "rejoin_waits", ov->tracker.waits },
        { "rejoin_wait_expired", ov->tracker.wait_expired },
        { "version_refusals", ov->rx.version_refusals },
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
        { "moved_refused", ov->moved.refused },
        { "endpoint_rereads", ov->moved.endpoint_rereads },
    };

    if (!o)
        return NULL;
    for (int i = 0; i < RC_COUNT; i++)
        json_object_set_new (o, route_names[i],
                             json_integer ((json_int_t)ov->route.count[i]));
    for (size_t i = 0; i < sizeof (c) / sizeof (c[0]); i++)
        json_object_set_new (o, c[i].name, json_integer ((json_int_t)c[i].v));
    if (nonzero)
        json_object_foreach_safe (o, tmp, key, v)
            if (json_integer_value (v) == 0)
                json_object_del (o, key);
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
json_t *status_memory (struct overlay *ov)
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
                      "counters", status_counters (ov, false),
                      "endpoint", ov->endpoint,
                      "hostname", ov->hostname,
                      "instance", ov->instance,
                      "pubkey", ov->pubkey,
                      "auth_failures", (json_int_t)ov->rx.auth_failures,
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
                      "memory", status_memory (ov),
                      "heal_threshold", ov->heal.threshold,
                      "substitutes", ov->heal.nsubst);
    /* the software's version (absent in the simulator, which has none) */
    if (o && ov->version[0])
        json_object_set_new (o, "version", json_string (ov->version));
    return o;
}
