/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* protoreport.c: the protocol simulator's report (protoreport.h): control
 * messages per failure, convergence, reachability, what became of the
 * requests and events, queue depths, as text or JSON, and the invariants
 * of --check: every survivor's view converged to the real down set, no
 * survivor stayed fenced, every sampled survivor pair is reachable, no
 * request ran after its client was told it failed, no request to a rank
 * that stayed up was lost in a relay that died (when the core sends
 * requests again), events were delivered exactly once and in order (or
 * reported lost), and no queue went past its limit.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "protoreport.h"

/* Messages of a kind sent from the first fault on. */
static uint64_t since_fault (const struct sim_result *r, int kind, bool bytes)
{
    const uint64_t *a = bytes ? r->after.bytes : r->after.msgs;
    const uint64_t *b = bytes ? r->before.bytes : r->before.msgs;
    return a[kind] - b[kind];
}

struct kindsum {
    const char *name;
    int kinds[3];
};

static const struct kindsum control[] = {
    { "fence_report", { ENV_REPORT, -1, -1 } },
    { "fence_batch", { ENV_BATCH, -1, -1 } },
    { "fence_view", { ENV_VIEW, -1, -1 } },
    { "hello", { ENV_HELLO, ENV_HELLO_ACK, ENV_HELLO_NAK } },
    { "link", { ENV_LINK, -1, -1 } },
    { "event_control", { ENV_EVCTL, -1, -1 } },
    { "goodbye", { ENV_GOODBYE, -1, -1 } },
};

static uint64_t kind_total (const struct sim_result *r,
                            const struct kindsum *k, bool bytes)
{
    uint64_t t = 0;
    for (int i = 0; i < 3; i++)
        if (k->kinds[i] >= 0)
            t += since_fault (r, k->kinds[i], bytes);
    return t;
}

static double per_failure (const struct sim_result *r, uint64_t v)
{
    return r->plan.failures ? (double)v / r->plan.failures : (double)v;
}

/* Seconds from the fault (or the start) until every survivor's view was
 * right, 0 if the fault did not change who is down; -1: never. */
static double convergence (const struct sim_result *r)
{
    double from = isinf (r->plan.fault_at) ? 0 : r->plan.fault_at;

    if (!r->converged || r->after.converged_at < 0)
        return -1;
    return r->after.converged_at > from ? r->after.converged_at - from : 0;
}

/* Each rpc load of the scenario and what became of its requests. */
static json_t *loads_json (const struct sim_result *r)
{
    json_t *a = json_array ();

    for (int i = 0; a && i < r->plan.nloads; i++) {
        const struct scenario_load *l = &r->plan.loads[i];
        const struct sim_rpc_counts *c = &r->loads[i];
        if (l->events)
            continue;
        json_array_append_new (
            a, json_pack ("{s:s s:f s:f s:f s:s s:s s:I s:I s:I s:I s:I s:I"
                          " s:I s:I s:I}",
                          "name", l->name, "at", l->at, "for", l->length,
                          "rate", l->rate, "from", l->from, "to", l->to,
                          "sent", (json_int_t)c->sent,
                          "answered", (json_int_t)c->answered,
                          "failed_fast", (json_int_t)c->unreachable,
                          "other_errors", (json_int_t)c->other_error,
                          "timed_out", (json_int_t)c->timed_out,
                          "lost_in_relay", (json_int_t)c->lost_in_relay,
                          "pending", (json_int_t)c->pending,
                          "origin_died", (json_int_t)c->origin_died,
                          "ran_after_failure",
                          (json_int_t)c->ran_after_failure));
    }
    return a;
}

json_t *protoreport_json (const struct sim_result *r, bool host)
{
    const struct sim_stats *st = &r->after;
    json_t *ctl = json_object ();
    uint64_t ctl_total = 0;
    double conv = convergence (r);

    for (size_t i = 0; i < sizeof (control) / sizeof (control[0]); i++) {
        uint64_t m = kind_total (r, &control[i], false);
        ctl_total += m;
        json_object_set_new (ctl, control[i].name,
                             json_pack ("{s:I s:I s:f}",
                                        "messages", (json_int_t)m,
                                        "bytes", (json_int_t)kind_total (
                                            r, &control[i], true),
                                        "per_failure", per_failure (r, m)));
    }
    json_t *o = json_pack (
        "{s:s s:i s:s s:I s:f s:i s:o"
        " s:{s:I s:f s:f}"
        " s:{s:b s:o s:i s:f}"
        " s:{s:i s:i}"
        " s:{s:I s:I s:I s:I s:I s:I s:I s:I s:I}"
        " s:{s:I s:I s:I s:I s:I s:I s:I}"
        " s:{s:i s:I s:I s:I s:I s:I}"
        " s:{s:i s:i s:i s:i}"
        " s:I}",
        "scenario", r->plan.name,
        "size", (int)r->size,
        "topology", r->topology,
        "seed", (json_int_t)r->seed,
        "sim_seconds", r->plan.duration,
        "failures", (int)r->plan.failures,
        "fault_at", isinf (r->plan.fault_at) ? json_null ()
                                             : json_real (r->plan.fault_at),
        "control",
        "messages", (json_int_t)ctl_total,
        "per_failure", per_failure (r, ctl_total),
        "per_broker_per_failure",
        per_failure (r, ctl_total) / (r->size ? r->size : 1),
        "convergence",
        "converged", r->converged,
        "seconds", conv >= 0 ? json_real (conv) : json_null (),
        "wrongly_fenced_max", (int)st->wrong_fenced_max,
        "wrongly_fenced_seconds", st->wrong_fence_seconds,
        "reachability",
        "reachable", r->reachable, "sampled", r->tried,
        "rpc",
        "sent", (json_int_t)st->rpc.sent,
        "answered", (json_int_t)st->rpc.answered,
        "failed_fast", (json_int_t)st->rpc.unreachable,
        "other_errors", (json_int_t)st->rpc.other_error,
        "timed_out", (json_int_t)st->rpc.timed_out,
        "lost_in_relay", (json_int_t)st->rpc.lost_in_relay,
        "pending", (json_int_t)st->rpc.pending,
        "origin_died", (json_int_t)st->rpc.origin_died,
        "ran_after_failure", (json_int_t)st->rpc.ran_after_failure,
        "events",
        "published", (json_int_t)st->ev_published,
        "publish_errors", (json_int_t)st->ev_publish_errors,
        "delivered", (json_int_t)st->ev_delivered,
        "duplicates", (json_int_t)st->ev_duplicates,
        "out_of_order", (json_int_t)st->ev_out_of_order,
        "lost_notices", (json_int_t)st->ev_lost_notices,
        "lost_events", (json_int_t)st->ev_lost_events,
        "network",
        "deepest_queue", (int)st->deepest_queue,
        "keepalives", (json_int_t)since_fault (r, ENV_KEEPALIVE, false),
        "data", (json_int_t)since_fault (r, ENV_DATA, false),
        "events", (json_int_t)since_fault (r, ENV_EVENT, false),
        "lost_messages", (json_int_t)st->lost_msgs,
        "eagain", (json_int_t)st->eagain,
        "brokers",
        "live", (int)st->live, "dead", (int)st->dead,
        "never_started", (int)st->never_started,
        "exited_partitioned", r->exits3,
        "sim_events", (json_int_t)st->events_processed);
    if (o && host)
        json_object_set_new (o, "host",
                             json_pack ("{s:f s:f}", "wall_seconds", r->wall,
                                        "kib_per_broker",
                                        (double)r->rss_kib / r->size));
    if (o && r->status_asked)
        json_object_set_new (o, "status_all",
                             json_pack ("{s:I s:f s:i s:i}", "bytes",
                                        (json_int_t)r->status_bytes,
                                        "seconds", r->status_seconds,
                                        "brokers", (int)r->status_brokers,
                                        "problems",
                                        (int)r->status_problems));
    if (!o) {
        json_decref (ctl);
        return NULL;
    }
    json_object_set_new (o, "control_by_kind", ctl);
    json_object_set_new (json_object_get (o, "rpc"), "loads",
                         loads_json (r));
    json_object_set_new (json_object_get (o, "events"), "missing",
                         json_integer ((json_int_t)r->events_missing));
    json_object_set_new (json_object_get (o, "network"), "deepest_backlog",
                         json_integer (st->deepest_backlog));
    json_object_set_new (json_object_get (o, "network"), "admissions",
                         json_integer ((json_int_t)st->admissions));
    json_object_set_new (json_object_get (o, "network"), "event_bytes",
                         json_integer ((json_int_t)since_fault (
                             r, ENV_EVENT, true)));
    json_object_set_new (o, "views",
                         json_pack ("{s:s s:s s:s s:i s:i s:i}",
                                    "down_any", r->down_any,
                                    "down_all", r->down_all,
                                    "down", r->down,
                                    "down_any_count", (int)r->n_any,
                                    "down_all_count", (int)r->n_all,
                                    "down_count", (int)r->n_down));
    return o;
}

static void print_rpc (const char *what, const struct sim_rpc_counts *c)
{
    printf ("%s: %llu sent, %llu answered, %llu failed fast, %llu other "
            "errors, %llu timed out (%llu lost in a relay), %llu pending, "
            "%llu gone with their origin, %llu ran after failure\n",
            what, (unsigned long long)c->sent,
            (unsigned long long)c->answered,
            (unsigned long long)c->unreachable,
            (unsigned long long)c->other_error,
            (unsigned long long)c->timed_out,
            (unsigned long long)c->lost_in_relay,
            (unsigned long long)c->pending,
            (unsigned long long)c->origin_died,
            (unsigned long long)c->ran_after_failure);
}

/* "3 (4,6,13)", the set itself only when it is short. */
static void print_set (const char *what, uint32_t n, const char *set)
{
    if (strlen (set) <= 60)
        printf ("%s %u (%s)", what, (unsigned)n, set);
    else
        printf ("%s %u", what, (unsigned)n);
}

void protoreport_text (const struct sim_result *r)
{
    const struct sim_stats *st = &r->after;
    uint64_t total = 0;

    printf ("scenario %s: %u brokers, %s, seed %llu, %.1f s simulated\n",
            r->plan.name, (unsigned)r->size, r->topology,
            (unsigned long long)r->seed, r->plan.duration);
    printf ("failures: %u", (unsigned)r->plan.failures);
    if (!isinf (r->plan.fault_at))
        printf (" at %.1f s", r->plan.fault_at);
    printf ("; live %u, dead %u, never started %u, exited partitioned %d\n",
            (unsigned)st->live, (unsigned)st->dead,
            (unsigned)st->never_started, r->exits3);
    printf ("control messages since the fault (per failure):\n");
    for (size_t i = 0; i < sizeof (control) / sizeof (control[0]); i++) {
        uint64_t m = kind_total (r, &control[i], false);
        total += m;
        printf ("  %-14s %12llu  %12.1f  (%llu bytes)\n", control[i].name,
                (unsigned long long)m, per_failure (r, m),
                (unsigned long long)kind_total (r, &control[i], true));
    }
    printf ("  %-14s %12llu  %12.1f  (%.2f per broker per failure)\n",
            "total", (unsigned long long)total, per_failure (r, total),
            per_failure (r, total) / r->size);
    if (convergence (r) >= 0)
        printf ("converged: %.3f s after the %s\n", convergence (r),
                isinf (r->plan.fault_at) ? "start" : "fault");
    else
        printf ("converged: no (survivors' down sets still differ from "
                "the truth)\n");
    printf ("survivors fenced wrongly: at most %u at once, %.1f rank-seconds"
            "\n", (unsigned)st->wrong_fenced_max, st->wrong_fence_seconds);
    print_set ("views at the end: down", r->n_down, r->down);
    print_set (", fenced by some survivor", r->n_any, r->down_any);
    print_set (", by all", r->n_all, r->down_all);
    putchar ('\n');
    printf ("reachability: %d of %d sampled survivor pairs\n", r->reachable,
            r->tried);
    print_rpc ("rpc", &st->rpc);
    for (int i = 0; i < r->plan.nloads; i++) {
        const struct scenario_load *l = &r->plan.loads[i];
        char what[160];
        if (l->events)
            continue;
        snprintf (what, sizeof (what), "  %s (%s -> %s, at %.1f s for "
                  "%.1f s)", l->name, l->from[0] ? l->from : "any",
                  l->to[0] ? l->to : "any", l->at, l->length);
        print_rpc (what, &r->loads[i]);
    }
    printf ("events: %llu published (%llu errors), %llu delivered, %llu "
            "duplicates, %llu out of order, %llu lost in %llu notices\n",
            (unsigned long long)st->ev_published,
            (unsigned long long)st->ev_publish_errors,
            (unsigned long long)st->ev_delivered,
            (unsigned long long)st->ev_duplicates,
            (unsigned long long)st->ev_out_of_order,
            (unsigned long long)st->ev_lost_events,
            (unsigned long long)st->ev_lost_notices);
    printf ("events missing at survivors at the end: %llu\n",
            (unsigned long long)r->events_missing);
    printf ("deepest queue: %u (backlog %u); %llu simulation events\n",
            (unsigned)st->deepest_queue, (unsigned)st->deepest_backlog,
            (unsigned long long)st->events_processed);
    if (r->status_asked) {
        if (r->status_bytes)
            printf ("status-all at rank 0: %zu bytes covering %u brokers "
                    "(%u with a problem), answered in %.3f s\n",
                    r->status_bytes, (unsigned)r->status_brokers,
                    (unsigned)r->status_problems, r->status_seconds);
        else
            printf ("status-all at rank 0: no answer\n");
    }
    printf ("this machine: %.1f s wall, %.0f KiB per simulated broker\n",
            r->wall, (double)r->rss_kib / r->size);
}

/* The invariants --check asserts; prints each one broken. */
int protoreport_check (const struct sim_result *r)
{
    const struct sim_stats *st = &r->after;
    int bad = 0;

#define BROKEN(cond, ...) \
    do { if (cond) { fprintf (stderr, "bgn-sim: check: " __VA_ARGS__); \
                     fputc ('\n', stderr); bad = 1; } } while (0)
    BROKEN (!r->converged, "survivors' down sets did not converge to the "
            "truth");
    BROKEN (st->wrong_fenced_now > 0, "%u survivors are still fenced",
            (unsigned)st->wrong_fenced_now);
    BROKEN (r->reachable != r->tried, "only %d of %d sampled survivor "
            "pairs are reachable", r->reachable, r->tried);
    BROKEN (st->rpc.ran_after_failure > 0, "%llu requests ran after their "
            "client was told they failed",
            (unsigned long long)st->rpc.ran_after_failure);
    BROKEN (r->retry && st->rpc.lost_in_relay > 0, "%llu requests to ranks "
            "that stayed up were lost in relays that died (never answered, "
            "although overlay.retry_bytes is on)",
            (unsigned long long)st->rpc.lost_in_relay);
    BROKEN (st->ev_duplicates > 0 || st->ev_out_of_order > 0,
            "events: %llu duplicates, %llu out of order",
            (unsigned long long)st->ev_duplicates,
            (unsigned long long)st->ev_out_of_order);
    BROKEN (r->events_missing > 0, "events: %llu missing at survivors (not "
            "delivered, not reported lost)",
            (unsigned long long)r->events_missing);
    BROKEN (st->deepest_backlog >= (uint32_t)r->backlog_max, "a backlog "
            "reached its limit (%d)", r->backlog_max);
    BROKEN (r->exits3 > 0, "%d brokers exited 'partitioned'", r->exits3);
#undef BROKEN
    return bad;
}
