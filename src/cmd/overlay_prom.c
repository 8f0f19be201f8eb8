/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* overlay_prom.c: the Prometheus text format of overlay status (see
 * overlay_prom.h).
 *
 * The format wants every sample of a metric family together, after its
 * HELP and TYPE lines, so the writer walks the families (the tables
 * below) and, inside each, every broker (and peer).  A value missing
 * from a status object (an older broker, an RTT not measured yet) leaves
 * its sample out rather than inventing a zero.
 */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <jansson.h>

#include "src/common/libutil/idset.h"
#include "overlay_prom.h"

enum kind { GAUGE, COUNTER };

/* A per-broker metric: a number at 'path' ("counters.ttl_drops") in the
 * status object. */
struct broker_metric {
    const char *name;
    enum kind kind;
    const char *path;
    const char *help;
};

static const struct broker_metric broker_metrics[] = {
    { "bgn_overlay_size", GAUGE, "size",
      "Number of ranks in the instance." },
    { "bgn_overlay_down_ranks", GAUGE, NULL,
      "Ranks this broker considers down (fenced)." },
    { "bgn_overlay_peers", GAUGE, NULL,
      "Peers of this broker (graph neighbours and substitutes)." },
    { "bgn_overlay_peers_up", GAUGE, NULL,
      "Peers of this broker that are up." },
    { "bgn_overlay_substitutes", GAUGE, "substitutes",
      "Substitute links this broker holds for lost neighbours." },
    { "bgn_overlay_event_sequence", GAUGE, "events.last_seq",
      "Sequence number of the last event delivered here." },
    { "bgn_overlay_events_delivered_total", COUNTER, "events.delivered",
      "Events delivered to this broker." },
    { "bgn_overlay_events_lost_total", COUNTER, "events.lost",
      "Events no peer could repair (reported as lost)." },
    { "bgn_overlay_events_repaired_total", COUNTER, "events.repaired",
      "Events this broker had to repair from a peer." },
    { "bgn_overlay_events_parent_suspect_total", COUNTER,
      "events.parent_suspect",
      "Times this broker found its event-tree parent failing to pass "
      "events on (where rank 0 signs)." },
    { "bgn_overlay_events_parent_switches_total", COUNTER,
      "events.parent_switches",
      "Times this broker took the event tree from another neighbour than "
      "a suspect parent (where rank 0 signs)." },
    { "bgn_overlay_messages_delivered_total", COUNTER, "counters.delivered",
      "Messages the overlay delivered to this broker." },
    { "bgn_overlay_messages_forwarded_total", COUNTER, "counters.forwarded",
      "Messages this broker forwarded for others." },
    { "bgn_overlay_ttl_drops_total", COUNTER, "counters.ttl_drops",
      "Messages dropped here because their TTL ran out." },
    { "bgn_overlay_no_route_drops_total", COUNTER, "counters.no_route_drops",
      "Messages dropped here for want of a route." },
    { "bgn_overlay_malformed_drops_total", COUNTER,
      "counters.malformed_drops", "Malformed messages dropped here." },
    { "bgn_overlay_stale_drops_total", COUNTER, "counters.stale_drops",
      "Messages for a previous incarnation dropped here." },
    { "bgn_overlay_unknown_peer_drops_total", COUNTER,
      "counters.unknown_peer_drops", "Messages from unknown peers dropped." },
    { "bgn_overlay_backlog_overflows_total", COUNTER,
      "counters.backlog_overflows", "Messages lost to full peer backlogs." },
    { "bgn_overlay_reroutes_total", COUNTER, NULL,
      "Messages this broker sent another way than the first choice "
      "(sum over its peers)." },
    { "bgn_overlay_auth_failures_total", COUNTER, "auth_failures",
      "Peer connections refused by authentication (CURVE/ZAP)." },
    { "bgn_overlay_fences_seen_total", COUNTER, "fences_seen",
      "Fence notices this broker has seen." },
    { "bgn_overlay_unreachable_live", GAUGE, "unreachable_live",
      "Live ranks this broker cannot reach (a partition)." },
    { "bgn_overlay_memory_event_ring_bytes", GAUGE,
      "memory.event_ring.bytes",
      "Heap the replay buffer of delivered events holds." },
    { "bgn_overlay_memory_event_early_bytes", GAUGE,
      "memory.event_early.bytes",
      "Heap the events held past a gap hold." },
    { "bgn_overlay_memory_event_queue_bytes", GAUGE,
      "memory.event_queue.bytes",
      "Heap rank 0's events not yet sent hold (rank 0 only)." },
    { "bgn_overlay_memory_backlogs_bytes", GAUGE, "memory.backlogs.bytes",
      "Heap the peer backlogs and held responses hold." },
    { "bgn_overlay_memory_retry_copies_bytes", GAUGE,
      "memory.retry_copies.bytes",
      "Heap the copies of requests kept to send again hold." },
    { "bgn_overlay_memory_dedup_bytes", GAUGE, "memory.dedup.bytes",
      "Heap the requests run here for other ranks, remembered, hold." },
    { "bgn_overlay_memory_held_bytes", GAUGE, "memory.held.bytes",
      "Heap the responses held for a rank's rejoin hold." },
    { "bgn_overlay_memory_tracker_bytes", GAUGE, "memory.tracker.bytes",
      "Heap the origin's entries for the requests it tracks hold." },
    { "bgn_overlay_memory_send_queues_bytes", GAUGE,
      "memory.send_queues.bytes",
      "Bytes handed to libzmq toward the peers, not yet sent." },
    { "bgn_overlay_memory_client_queues_bytes", GAUGE,
      "memory.client_queues.bytes",
      "Bytes queued toward the broker's local clients, not yet sent." },
    { "bgn_overlay_memory_subscriptions_bytes", GAUGE,
      "memory.subscriptions.bytes",
      "Heap the local clients' event subscriptions hold." },
    { "bgn_overlay_memory_log_ring_bytes", GAUGE, "memory.log_ring.bytes",
      "Heap the broker's log ring (bgn dmesg) holds." },
    { "bgn_overlay_memory_hosts_bytes", GAUGE, "memory.hosts.bytes",
      "Heap the rank to host table and its requests waiting hold." },
    { "bgn_overlay_memory_stores_bytes", GAUGE, "memory.stores_bytes",
      "Heap all the broker's traffic stores hold, summed." },
    { "bgn_overlay_memory_bounds_bytes", GAUGE, "memory.bounds_bytes",
      "The stores' bounds, summed: what they may hold at most." },
    { "bgn_overlay_tracker_retries_total", COUNTER,
      "counters.tracker_retries",
      "Requests sent again because a rank on their way was fenced." },
    { "bgn_overlay_tracker_unkept_total", COUNTER, "counters.tracker_unkept",
      "Requests not kept to be sent again (overlay.retry_bytes)." },
    { "bgn_overlay_tracker_untracked_total", COUNTER,
      "counters.tracker_untracked",
      "Requests not tracked (overlay.tracker_bytes or 100000 in flight)." },
    { "bgn_overlay_tracker_dup_drops_total", COUNTER,
      "counters.tracker_dup_drops",
      "Second answers to one request dropped at its origin." },
    { "bgn_overlay_tracker_copy_errors_total", COUNTER,
      "counters.tracker_copy_errors",
      "Relays' errors for one copy of a request not told (another was out)." },
    { "bgn_overlay_dedup_copies_total", COUNTER, "counters.dedup_copies",
      "Copies of a request already run here, not run again." },
    { "bgn_overlay_dedup_answered_total", COUNTER, "counters.dedup_answered",
      "Copies answered again from the cached response." },
    { "bgn_overlay_dedup_evicted_total", COUNTER, "counters.dedup_evicted",
      "Requests forgotten early (overlay.dedup_bytes)." },
    { "bgn_overlay_fences_suspected_total", COUNTER,
      "counters.fences_suspected",
      "Fences on another broker's word held as suspicions." },
    { "bgn_overlay_fences_refuted_total", COUNTER, "counters.fences_refuted",
      "... that their rank refuted with its signed live record." },
    { "bgn_overlay_fences_confirmed_total", COUNTER,
      "counters.fences_confirmed",
      "... that nobody refuted in time: believed." },
    { "bgn_overlay_refutations_total", COUNTER, "counters.refutations",
      "Fences of this broker it refuted, links kept." },
    { "bgn_overlay_fences_ignored_total", COUNTER, "counters.fences_ignored",
      "Fence records from peers without the power to fence, dropped." },
    { "bgn_overlay_fence_power_lost_total", COUNTER,
      "counters.fence_power_lost",
      "Times a peer lost the power to fence here (its fences refuted)." },
    { "bgn_overlay_held_drops_total", COUNTER, "counters.held_drops",
      "Responses for a fenced rank not held (overlay.held_bytes)." },
    { "bgn_overlay_held_expired_total", COUNTER, "counters.held_expired",
      "Held responses dropped: their rank stayed down." },
    { "bgn_overlay_rejoin_waits_total", COUNTER, "counters.rejoin_waits",
      "Requests to a rank fenced here that waited for its rejoin." },
    { "bgn_overlay_rejoin_wait_expired_total", COUNTER,
      "counters.rejoin_wait_expired",
      "... and failed: the rank did not rejoin within overlay.rejoin_wait." },
    { "bgn_overlay_send_deferred_total", COUNTER,
      "memory.send_queues.deferred",
      "Sends kept in a backlog: the peer's libzmq queue was at "
      "overlay.sndbuf_bytes." },
    { "bgn_overlay_client_queue_drops_total", COUNTER,
      "memory.client_queues.drops",
      "Messages dropped for local clients that fall behind "
      "(broker.client_queue_bytes)." },
    { "bgn_overlay_resident_bytes", GAUGE, "memory.rss_bytes",
      "Resident set of the broker process." },
};

/* A per-peer metric: a number of each peer object. */
struct peer_metric {
    const char *name;
    enum kind kind;
    const char *field;
    double scale;
    const char *help;
};

static const struct peer_metric peer_metrics[] = {
    { "bgn_overlay_peer_up", GAUGE, NULL, 1,
      "1 if the peer link is up, 0 otherwise." },
    { "bgn_overlay_peer_tx_messages_total", COUNTER, "tx_msgs", 1,
      "Messages sent to the peer." },
    { "bgn_overlay_peer_rx_messages_total", COUNTER, "rx_msgs", 1,
      "Messages received from the peer." },
    { "bgn_overlay_peer_tx_bytes_total", COUNTER, "tx_bytes", 1,
      "Bytes sent to the peer." },
    { "bgn_overlay_peer_rx_bytes_total", COUNTER, "rx_bytes", 1,
      "Bytes received from the peer." },
    { "bgn_overlay_peer_reroutes_total", COUNTER, "reroutes", 1,
      "Messages rerouted because this peer could not take them." },
    { "bgn_overlay_peer_ttl_drops_total", COUNTER, "ttl_drops", 1,
      "Messages from this peer dropped for TTL." },
    { "bgn_overlay_peer_backlog", GAUGE, "backlog", 1,
      "Messages waiting for the peer." },
    { "bgn_overlay_peer_backlog_drops_total", COUNTER, "backlog_drops", 1,
      "Messages for the peer dropped from a full backlog." },
    { "bgn_overlay_peer_rtt_seconds", GAUGE, "rtt_us", 1e-6,
      "Round-trip time to the peer (keepalive), in seconds." },
    { "bgn_overlay_peer_last_heard_seconds", GAUGE, "last_heard", 1,
      "Seconds since anything was heard from the peer." },
};

static const char *health_states[] = { "full", "partial", "degraded",
                                       "partitioned" };

/* A label value with \, " and newline escaped. */
static void print_label (const char *name, const char *value)
{
    printf ("%s=\"", name);
    for (const char *p = value ? value : ""; *p; p++) {
        if (*p == '\\' || *p == '"')
            printf ("\\%c", *p);
        else if (*p == '\n')
            printf ("\\n");
        else
            putchar (*p);
    }
    putchar ('"');
}

static void print_value (double v)
{
    if (v == floor (v) && fabs (v) < 1e15)
        printf (" %.0f\n", v);
    else
        printf (" %.9g\n", v);
}

static void family (const char *name, enum kind kind, const char *help)
{
    printf ("# HELP %s %s\n# TYPE %s %s\n", name, help, name,
            kind == COUNTER ? "counter" : "gauge");
}

static json_t *at_path (json_t *o, const char *path)
{
    const char *dot = strchr (path, '.');
    char head[64];

    if (!dot)
        return json_object_get (o, path);
    snprintf (head, sizeof (head), "%.*s", (int)(dot - path), path);
    return at_path (json_object_get (o, head), dot + 1);
}

static const char *host_of (json_t *o, const char *field, int rank,
                            const hostmap_t *hm)
{
    const char *h = hm ? hostmap_host (hm, (uint32_t)rank) : NULL;
    if (!h)
        h = json_string_value (json_object_get (o, field));
    return h && *h ? h : "";
}

static void broker_labels (json_t *o, const hostmap_t *hm)
{
    int rank = (int)json_integer_value (json_object_get (o, "rank"));
    char r[16];

    snprintf (r, sizeof (r), "%d", rank);
    print_label ("rank", r);
    putchar (',');
    print_label ("host", host_of (o, "hostname", rank, hm));
}

/* Values computed from the object rather than read. */
static int derived (const char *name, json_t *o, double *v)
{
    json_t *peers = json_object_get (o, "peers"), *p;
    size_t i;

    if (!strcmp (name, "bgn_overlay_down_ranks"))
        *v = (double)json_array_size (json_object_get (o, "down_ranks"));
    else if (!strcmp (name, "bgn_overlay_peers"))
        *v = (double)json_array_size (peers);
    else if (!strcmp (name, "bgn_overlay_peers_up")) {
        *v = 0;
        json_array_foreach (peers, i, p)
            if (!strcmp (json_string_value (json_object_get (p, "state"))
                         ?: "", "up"))
                *v += 1;
    }
    else if (!strcmp (name, "bgn_overlay_reroutes_total")) {
        *v = 0;
        json_array_foreach (peers, i, p)
            *v += json_number_value (json_object_get (p, "reroutes"));
    }
    else
        return -1;
    return 0;
}

static void print_broker_family (const struct broker_metric *m, json_t *objs,
                                 const hostmap_t *hm)
{
    size_t i;
    json_t *o;

    family (m->name, m->kind, m->help);
    json_array_foreach (objs, i, o) {
        double v;
        json_t *x;
        if (m->path) {
            if (!(x = at_path (o, m->path)) || !json_is_number (x))
                continue;
            v = json_number_value (x);
        }
        else if (derived (m->name, o, &v) < 0)
            continue;
        printf ("%s{", m->name);
        broker_labels (o, hm);
        printf ("}");
        print_value (v);
    }
}

/* Every store's bound, labelled by store (the stores differ by broker:
 * rank 0's event queue, the broker's own). */
static void print_bounds (json_t *objs, const hostmap_t *hm)
{
    size_t i;
    json_t *o, *v;
    const char *store;

    family ("bgn_overlay_memory_bound_bytes", GAUGE, "What each store may "
            "hold at most, in bytes of heap (its configured bound).");
    json_array_foreach (objs, i, o) {
        json_object_foreach (json_object_get (o, "memory"), store, v) {
            json_t *bound = json_object_get (v, "bound");
            if (!json_is_integer (bound))
                continue;
            printf ("bgn_overlay_memory_bound_bytes{");
            broker_labels (o, hm);
            putchar (',');
            print_label ("store", store);
            printf ("}");
            print_value ((double)json_integer_value (bound));
        }
    }
}

/* name{rank="R",host="H",label="value"}, its value left to the caller. */
static void broker_sample (const char *name, json_t *o, const hostmap_t *hm,
                           const char *label, const char *value)
{
    printf ("%s{", name);
    broker_labels (o, hm);
    putchar (',');
    print_label (label, value);
    printf ("}");
}

static void print_health (json_t *objs, const hostmap_t *hm)
{
    size_t i;
    json_t *o;

    family ("bgn_overlay_health", GAUGE, "Instance health as this broker "
            "sees it: 1 for the current state, 0 for the others.");
    json_array_foreach (objs, i, o) {
        const char *state = json_string_value (json_object_get (o, "state"));
        for (size_t k = 0; k < 4; k++) {
            broker_sample ("bgn_overlay_health", o, hm, "state",
                           health_states[k]);
            printf (" %d\n", state && !strcmp (state, health_states[k]));
        }
    }
}

static void print_peer_family (const struct peer_metric *m, json_t *objs,
                               const hostmap_t *hm)
{
    size_t i, j;
    json_t *o, *p;

    family (m->name, m->kind, m->help);
    json_array_foreach (objs, i, o) {
        json_array_foreach (json_object_get (o, "peers"), j, p) {
            int peer = (int)json_integer_value (json_object_get (p, "rank"));
            char r[16];
            double v;
            if (m->field) {
                json_t *x = json_object_get (p, m->field);
                if (!json_is_number (x))
                    continue;
                v = json_number_value (x) * m->scale;
            }
            else
                v = !strcmp (json_string_value (json_object_get (p, "state"))
                             ?: "", "up");
            snprintf (r, sizeof (r), "%d", peer);
            printf ("%s{", m->name);
            broker_labels (o, hm);
            putchar (',');
            print_label ("peer", r);
            putchar (',');
            print_label ("peer_host", host_of (p, "hostname", peer, hm));
            printf ("}");
            print_value (v);
        }
    }
}

/* One sample of one label: name{label="value"} v. */
static void print_count (const char *name, const char *label,
                         const char *value, json_int_t v)
{
    printf ("%s{", name);
    print_label (label, value);
    printf ("} %lld\n", (long long)v);
}

/* Prometheus's usual build-info gauge: the version of the bgn command
 * that wrote the text (each broker's own is in bgn_overlay_broker_info
 * and bgn_overlay_instance_version_brokers). */
static void print_build_info (void)
{
    family ("bgn_build_info", GAUGE, "The bgn command that wrote these "
            "metrics, by version (always 1).");
    print_count ("bgn_build_info", "version", PACKAGE_VERSION, 1);
}

/* Each broker's version (a broker older than versions has none). */
static void print_broker_info (json_t *objs, const hostmap_t *hm)
{
    size_t i;
    json_t *o;

    family ("bgn_overlay_broker_info", GAUGE, "The bgn each broker runs, "
            "by version (always 1).");
    json_array_foreach (objs, i, o) {
        const char *v = json_string_value (json_object_get (o, "version"));
        if (!v)
            continue;
        broker_sample ("bgn_overlay_broker_info", o, hm, "version", v);
        printf (" 1\n");
    }
}

void overlay_prom_print (json_t *objs, const hostmap_t *hm)
{
    print_build_info ();
    print_broker_info (objs, hm);
    print_health (objs, hm);
    for (size_t k = 0; k < sizeof (broker_metrics) / sizeof (broker_metrics[0]);
         k++)
        print_broker_family (&broker_metrics[k], objs, hm);
    print_bounds (objs, hm);
    for (size_t k = 0; k < sizeof (peer_metrics) / sizeof (peer_metrics[0]);
         k++)
        print_peer_family (&peer_metrics[k], objs, hm);
}

/* ---- bgn metrics: the instance summary --------------------------------- */

/* Summed counters of the summary, and their metric names. */
static const struct {
    const char *field, *name, *help;
} instance_counters[] = {
    { "tx_msgs", "bgn_overlay_instance_tx_messages_total",
      "Messages sent on all links, summed over the brokers that answered." },
    { "rx_msgs", "bgn_overlay_instance_rx_messages_total",
      "Messages received on all links, summed." },
    { "tx_bytes", "bgn_overlay_instance_tx_bytes_total",
      "Bytes sent on all links, summed." },
    { "rx_bytes", "bgn_overlay_instance_rx_bytes_total",
      "Bytes received on all links, summed." },
    { "forwarded", "bgn_overlay_instance_forwarded_total",
      "Messages forwarded for other ranks, summed." },
    { "delivered", "bgn_overlay_instance_delivered_total",
      "Messages delivered to their destination, summed." },
    { "reroutes", "bgn_overlay_instance_reroutes_total",
      "Messages sent another way because a hop could not take them." },
    { "ttl_drops", "bgn_overlay_instance_ttl_drops_total",
      "Messages dropped for TTL (a routing loop), summed." },
    { "malformed_drops", "bgn_overlay_instance_malformed_drops_total",
      "Malformed frames dropped, summed." },
    { "unknown_peer_drops", "bgn_overlay_instance_unknown_peer_drops_total",
      "Frames from unknown peers dropped, summed." },
    { "no_route_drops", "bgn_overlay_instance_no_route_drops_total",
      "Messages dropped with no route, summed." },
    { "backlog_overflows", "bgn_overlay_instance_backlog_overflows_total",
      "Messages refused by a full backlog, summed." },
    { "backlog_expired", "bgn_overlay_instance_backlog_expired_total",
      "Backlogged messages failed for age, summed." },
    { "auth_failures", "bgn_overlay_instance_auth_failures_total",
      "Connections refused by authentication, summed." },
    { "redials", "bgn_overlay_instance_redials_total",
      "Links torn down and dialled again, summed." },
    { "tracker_failed", "bgn_overlay_instance_requests_failed_total",
      "Requests failed because a rank on their path went down, summed." },
    { "tracker_retries", "bgn_overlay_instance_tracker_retries_total",
      "Requests sent again because a rank on their way was fenced, "
      "summed." },
    { "tracker_unkept", "bgn_overlay_instance_tracker_unkept_total",
      "Requests not kept to be sent again (overlay.retry_bytes), summed." },
    { "tracker_untracked", "bgn_overlay_instance_tracker_untracked_total",
      "Requests not tracked (overlay.tracker_bytes), summed." },
    { "tracker_dup_drops", "bgn_overlay_instance_tracker_dup_drops_total",
      "Second answers to one request dropped at its origin, summed." },
    { "tracker_copy_errors",
      "bgn_overlay_instance_tracker_copy_errors_total",
      "Relays' errors for one copy of a request not told, summed." },
    { "dedup_copies", "bgn_overlay_instance_dedup_copies_total",
      "Copies of a request already run, not run again, summed." },
    { "dedup_answered", "bgn_overlay_instance_dedup_answered_total",
      "Copies answered again from the cached response, summed." },
    { "dedup_evicted", "bgn_overlay_instance_dedup_evicted_total",
      "Requests forgotten early (overlay.dedup_bytes), summed." },
    { "held_expired", "bgn_overlay_instance_held_expired_total",
      "Held responses dropped: their rank stayed down, summed." },
    { "held_drops", "bgn_overlay_instance_held_drops_total",
      "Responses not held (overlay.held_bytes), summed." },
    { "rejoin_waits", "bgn_overlay_instance_rejoin_waits_total",
      "Requests to a fenced rank that waited for its rejoin, summed." },
    { "rejoin_wait_expired", "bgn_overlay_instance_rejoin_wait_expired_total",
      "Requests that waited in vain: no rejoin within overlay.rejoin_wait, "
      "summed." },
};

/* The summary's "memory": per store [bytes summed over the brokers that
 * answered, the largest, bounds summed, the largest]; "rss": [resident
 * sets summed, the largest]. */
static void print_memory_summary (json_t *mem)
{
    const struct {
        const char *name, *help;
        size_t at;
    } fams[] = {
        { "bgn_overlay_instance_memory_bytes",
          "Heap each store holds: summed over the brokers that answered "
          "(stat=\"sum\") and the largest (stat=\"max\"); store=\"rss\" "
          "is the brokers' resident set.", 0 },
        { "bgn_overlay_instance_memory_bound_bytes",
          "Each store's bound: summed over the brokers that answered "
          "(stat=\"sum\") and the largest (stat=\"max\").", 2 },
    };
    const char *store;
    json_t *v;

    for (size_t k = 0; k < 2; k++) {
        family (fams[k].name, GAUGE, fams[k].help);
        json_object_foreach (mem, store, v) {
            json_t *sum = json_array_get (v, fams[k].at);
            json_t *top = json_array_get (v, fams[k].at + 1);
            if (!json_is_integer (sum) || !json_is_integer (top))
                continue;
            printf ("%s{", fams[k].name);
            print_label ("store", store);
            printf (",stat=\"sum\"} %lld\n",
                    (long long)json_integer_value (sum));
            printf ("%s{", fams[k].name);
            print_label ("store", store);
            printf (",stat=\"max\"} %lld\n",
                    (long long)json_integer_value (top));
        }
    }
}

void overlay_prom_print_summary (json_t *all)
{
    json_t *health = json_object_get (all, "health");
    json_t *c = json_object_get (all, "counters"), *p, *q;
    const char *any = "", *every = "", *missing = "", *key;
    int brokers = 0, size = 0, omitted = 0;
    unsigned nany = 0, nevery = 0, nmissing = 0;
    idset_t *s;
    size_t i, j;

    json_unpack (all, "{s?i s?i s?s s?s s?s s?i}", "brokers", &brokers,
                 "size", &size, "down_any", &any, "down_all", &every,
                 "missing", &missing, "problems_omitted", &omitted);
    if ((s = idset_decode (any, NULL, 0)))
        nany = idset_count (s);
    idset_destroy (&s);
    if ((s = idset_decode (every, NULL, 0)))
        nevery = idset_count (s);
    idset_destroy (&s);
    if ((s = idset_decode (missing, NULL, 0)))
        nmissing = idset_count (s);
    idset_destroy (&s);

    print_build_info ();
    family ("bgn_overlay_instance_version_brokers", GAUGE, "Brokers that "
            "answered the status gather, by the bgn version they run.");
    json_object_foreach (json_object_get (all, "versions"), key, p)
        if (json_is_integer (p))
            print_count ("bgn_overlay_instance_version_brokers", "version",
                         key, json_integer_value (p));
    family ("bgn_overlay_instance_size", GAUGE,
            "Number of ranks in the instance.");
    printf ("bgn_overlay_instance_size %d\n", size);
    family ("bgn_overlay_brokers", GAUGE, "Brokers that answered the "
            "status gather, and those that did not.");
    print_count ("bgn_overlay_brokers", "answered", "yes", brokers);
    print_count ("bgn_overlay_brokers", "answered", "no", nmissing);
    family ("bgn_overlay_instance_health_brokers", GAUGE, "Brokers that "
            "see the instance in each health state.");
    for (size_t k = 0; k < 4; k++)
        print_count ("bgn_overlay_instance_health_brokers", "state",
                     health_states[k], json_integer_value
                         (json_object_get (health, health_states[k])));
    family ("bgn_overlay_instance_down_ranks", GAUGE, "Ranks fenced as down: "
            "by every broker that answered (view=\"every\") or by at least "
            "one (view=\"any\").");
    print_count ("bgn_overlay_instance_down_ranks", "view", "every", nevery);
    print_count ("bgn_overlay_instance_down_ranks", "view", "any", nany);
    family ("bgn_overlay_instance_problem_brokers", GAUGE, "Brokers with a "
            "live peer that is not up, or that see a partition.");
    printf ("bgn_overlay_instance_problem_brokers %zu\n",
            json_array_size (json_object_get (all, "problems"))
            + (size_t)omitted);
    /* a counter absent from the summary is 0 on every broker that
     * answered (brokers leave out their zeros), unless none answered */
    for (size_t k = 0; k < sizeof (instance_counters)
                           / sizeof (instance_counters[0]); k++) {
        json_t *x = json_object_get (c, instance_counters[k].field);
        if (!json_is_object (c) || (x && !json_is_integer (x)))
            continue;
        family (instance_counters[k].name, COUNTER, instance_counters[k].help);
        printf ("%s %lld\n", instance_counters[k].name,
                (long long)json_integer_value (x));
    }
    print_memory_summary (json_object_get (all, "memory"));
    family ("bgn_overlay_instance_peer_not_up", GAUGE, "A live peer link "
            "that is not up, as its broker reports it (1 per link listed).");
    json_array_foreach (json_object_get (all, "problems"), i, p) {
        int rank = (int)json_integer_value (json_object_get (p, "rank"));
        json_array_foreach (json_object_get (p, "not_up"), j, q) {
            int peer = (int)json_integer_value (json_object_get (q, "rank"));
            char r[16], pr[16];
            snprintf (r, sizeof (r), "%d", rank);
            snprintf (pr, sizeof (pr), "%d", peer);
            printf ("bgn_overlay_instance_peer_not_up{");
            print_label ("rank", r);
            putchar (',');
            print_label ("host", json_string_value (json_object_get
                                                    (p, "hostname")));
            putchar (',');
            print_label ("peer", pr);
            putchar (',');
            print_label ("peer_host", json_string_value (json_object_get
                                                         (q, "hostname")));
            putchar (',');
            print_label ("state", json_string_value (json_object_get
                                                     (q, "state")));
            printf ("} 1\n");
        }
    }
}
