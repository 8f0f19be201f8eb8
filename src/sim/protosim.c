/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* protosim.c: bgn-sim --protocol (see protosim.h and bgn-sim(1)).
 *
 * Reads the options, builds the scenario, runs it, and prints the report
 * as text or JSON.  The JSON is the same for the same options and seed,
 * byte for byte; what depends on this machine (wall time, memory) is
 * printed in the text report, and added to the JSON only with --host.
 * --check makes the exit status say whether the invariants held: every
 * survivor's view converged to the real down set, no survivor stayed
 * fenced, every sampled survivor pair is reachable, no request ran after
 * its client was told it failed, no request to a rank that stayed up was
 * lost in a relay that died (when the core sends requests again), events
 * were delivered exactly once and in order (or reported lost), and no
 * queue went past its limit.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "src/common/libutil/fsd.h"
#include "src/common/libutil/idset.h"
#include "protosim.h"
#include "scenario.h"
#include "simnet.h"

#define REACH_SAMPLES 2000
#define SETS_MAX 16

struct popts {
    struct scenario_opts sc;
    const char *scenario;
    const char *logpath;
    bool json;
    bool host;
    bool check;
    bool print_scenario;
    bool status_all;
    const char *sets[SETS_MAX];   /* --set TABLE.KEY=VALUE */
    int nsets;
};

static void usage (FILE *f)
{
    fprintf (f,
"Usage: bgn-sim --protocol [--topology T] [--size N] --scenario NAME|FILE\n"
"               [--seed S] [--json] [OPTIONS]\n"
"Run the overlay's real protocol code on N simulated brokers in virtual\n"
"time.  The same seed gives the same run.\n"
"\n"
"  -T, --topology T     bgn (default), bgn:R, kary:K or binomial\n"
"  -s, --size N         brokers (default 1024; -n is the same)\n"
"      --scenario S     boot, kill, rack, hang, restart-root, partition,\n"
"                       churn, skew, events, or a TOML scenario file\n"
"      --seed S         random seed (default 1)\n"
"      --count K        ranks the fault hits (kill: min(1000, N/16))\n"
"      --duration T     length of the fault (hang, partition, churn, ...)\n"
"      --rate R         requests or events per second of the load\n"
"      --hang-first T   the ranks kill, rack and churn take hang for T\n"
"                       (e.g. 100ms) before they die, holding what they\n"
"                       were sent\n"
"      --set TABLE.KEY=VALUE  set a [sim] or [overlay] key of the\n"
"                       scenario, e.g. overlay.retry_bytes=0 (no resend)\n"
"  -j, --json           print the report as JSON\n"
"      --host           add wall time and memory to the JSON\n"
"      --check          exit 2 if an invariant did not hold\n"
"      --log FILE       write every simulation event to FILE\n"
"      --status-all     at the end, ask overlay.status-all at rank 0 and\n"
"                       report the answer's size\n"
"      --print-scenario print the scenario as JSON and exit\n"
"  -h, --help           this text\n"
"See bgn-sim(1).\n");
}

/* One line on stderr, ending with where to look; returns -1. */
static int usage_error (const char *fmt, const char *a, const char *b)
{
    fprintf (stderr, "bgn-sim: ");
    fprintf (stderr, fmt, a, b);
    fprintf (stderr, "; see 'bgn-sim --protocol --help'\n");
    return -1;
}

static int parse (int argc, char *argv[], struct popts *o)
{
    static const struct option longopts[] = {
        { "protocol", no_argument, NULL, 'P' },
        { "topology", required_argument, NULL, 'T' },
        { "size", required_argument, NULL, 'n' },
        { "scenario", required_argument, NULL, 'S' },
        { "seed", required_argument, NULL, 'e' },
        { "count", required_argument, NULL, 'k' },
        { "duration", required_argument, NULL, 'd' },
        { "rate", required_argument, NULL, 'r' },
        { "hang-first", required_argument, NULL, 'g' },
        { "set", required_argument, NULL, 'x' },
        { "json", no_argument, NULL, 'j' },
        { "host", no_argument, NULL, 'H' },
        { "check", no_argument, NULL, 'c' },
        { "log", required_argument, NULL, 'l' },
        { "print-scenario", no_argument, NULL, 'p' },
        { "status-all", no_argument, NULL, 'A' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    char *end;
    int c;

    optind = 1;
    opterr = 0;
    while ((c = getopt_long (argc, argv, ":T:n:s:jh", longopts, NULL)) != -1) {
        errno = 0;
        switch (c) {
        case 'P':
            break;
        case 'T':
            o->sc.topology = optarg;
            break;
        case 's':
        case 'n':
            o->sc.size = (uint32_t)strtoul (optarg, &end, 10);
            if (errno || *end || o->sc.size < 1 || o->sc.size > (1u << 22))
                goto bad;
            break;
        case 'S':
            o->scenario = optarg;
            break;
        case 'e':
            o->sc.seed = strtoull (optarg, &end, 10);
            if (errno || *end)
                goto bad;
            break;
        case 'k':
            o->sc.count = strtol (optarg, &end, 10);
            if (errno || *end || o->sc.count < 0)
                goto bad;
            break;
        case 'd':
            o->sc.duration = strtod (optarg, &end);
            if (*end == 's')
                end++;
            if (*end || o->sc.duration < 0)
                goto bad;
            break;
        case 'r':
            o->sc.rate = strtod (optarg, &end);
            if (*end || o->sc.rate < 0)
                goto bad;
            break;
        case 'g':
            if (fsd_parse_duration (optarg, &o->sc.hang_first) < 0
                || isinf (o->sc.hang_first))
                goto bad;
            break;
        case 'x':
            if (o->nsets == SETS_MAX)
                return usage_error ("at most %s --set options%s", "16", "");
            o->sets[o->nsets++] = optarg;
            break;
        case 'j': o->json = true; break;
        case 'H': o->host = true; break;
        case 'c': o->check = true; break;
        case 'l': o->logpath = optarg; break;
        case 'p': o->print_scenario = true; break;
        case 'A': o->status_all = true; break;
        case 'h':
            usage (stdout);
            exit (0);
        case ':':
            return usage_error ("option '%s' needs a value%s",
                                argv[optind - 1], "");
        default:
            return usage_error ("unknown option '%s'%s", argv[optind - 1],
                                "");
        }
        continue;
bad:
        if (c == 's')
            c = 'n';   /* -s is --size too */
        for (const struct option *lo = longopts; lo->name; lo++)
            if (lo->val == c)
                return usage_error ("invalid value '%s' for --%s", optarg,
                                    lo->name);
        return -1;
    }
    if (optind < argc)
        return usage_error ("unexpected argument '%s'%s", argv[optind], "");
    if (!o->scenario)
        return usage_error ("--protocol needs --scenario NAME|FILE%s%s", "",
                            "");
    return 0;
}

/* --set TABLE.KEY=VALUE: a key of the scenario's [sim] or [overlay]
 * table, as a file would give it: an integer, a number, or a string
 * (a duration such as "100ms").  scenario_params checks the key. */
static int set_key (json_t *sc, const char *spec)
{
    const char *dot = strchr (spec, '.'), *eq = strchr (spec, '=');
    char table[16], key[64], *end;
    json_t *t, *v;
    long long i;
    double x;

    if (!dot || !eq || dot > eq || dot == spec || eq == dot + 1
        || (size_t)(dot - spec) >= sizeof (table)
        || (size_t)(eq - dot - 1) >= sizeof (key) || !eq[1])
        return usage_error ("--set '%s': not TABLE.KEY=VALUE%s", spec, "");
    snprintf (table, sizeof (table), "%.*s", (int)(dot - spec), spec);
    snprintf (key, sizeof (key), "%.*s", (int)(eq - dot - 1), dot + 1);
    if (strcmp (table, "sim") && strcmp (table, "overlay"))
        return usage_error ("--set '%s': the table is sim or overlay%s",
                            spec, "");
    errno = 0;
    i = strtoll (eq + 1, &end, 10);
    if (!*end && !errno)
        v = json_integer (i);
    else if ((x = strtod (eq + 1, &end)), !*end)
        v = json_real (x);
    else
        v = json_string (eq + 1);
    if (!(t = json_object_get (sc, table))) {
        t = json_object ();
        json_object_set_new (sc, table, t);
    }
    return json_object_set_new (t, key, v);
}

/* Peak resident memory of this process, KiB (VmHWM), 0 if unknown. */
static long peak_rss_kib (void)
{
    FILE *f = fopen ("/proc/self/status", "r");
    char line[256];
    long kib = 0;

    if (!f)
        return 0;
    while (fgets (line, sizeof (line), f))
        if (sscanf (line, "VmHWM: %ld kB", &kib) == 1)
            break;
    fclose (f);
    return kib;
}

static double wall_now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

struct result {
    struct sim_stats before;      /* at the first fault */
    struct sim_stats after;       /* at the end */
    struct scenario_plan plan;
    struct sim_rpc_counts loads[SIM_LOADS_MAX];   /* each rpc load's */
    char *down_any, *down_all, *down;   /* views at the end (idsets) */
    uint32_t n_any, n_all, n_down;
    uint64_t events_missing;
    int backlog_max;
    bool retry;                   /* the core sends requests again */
    int reachable, tried;
    double wall;
    long rss_kib;
    uint32_t size;
    char topology[64];
    uint64_t seed;
    int exits3;
    bool converged;
    bool status_asked;            /* --status-all */
    size_t status_bytes;
    double status_seconds;
    uint32_t status_brokers, status_problems;
};

/* Messages of a kind sent from the first fault on. */
static uint64_t since_fault (const struct result *r, int kind, bool bytes)
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

static uint64_t kind_total (const struct result *r, const struct kindsum *k,
                            bool bytes)
{
    uint64_t t = 0;
    for (int i = 0; i < 3; i++)
        if (k->kinds[i] >= 0)
            t += since_fault (r, k->kinds[i], bytes);
    return t;
}

static double per_failure (const struct result *r, uint64_t v)
{
    return r->plan.failures ? (double)v / r->plan.failures : (double)v;
}

/* Seconds from the fault (or the start) until every survivor's view was
 * right, 0 if the fault did not change who is down; -1: never. */
static double convergence (const struct result *r)
{
    double from = isinf (r->plan.fault_at) ? 0 : r->plan.fault_at;

    if (!r->converged || r->after.converged_at < 0)
        return -1;
    return r->after.converged_at > from ? r->after.converged_at - from : 0;
}

/* Each rpc load of the scenario and what became of its requests. */
static json_t *loads_json (const struct result *r)
{
    json_t *a = json_array ();

    for (int i = 0; a && i < r->plan.nloads; i++) {
        const struct scenario_load *l = &r->plan.loads[i];
        const struct sim_rpc_counts *c = &r->loads[i];
        if (l->events)
            continue;
        json_array_append_new (
            a, json_pack ("{s:s s:f s:f s:f s:s s:s s:I s:I s:I s:I s:I s:I"
                          " s:I s:I}",
                          "name", l->name, "at", l->at, "for", l->length,
                          "rate", l->rate, "from", l->from, "to", l->to,
                          "sent", (json_int_t)c->sent,
                          "answered", (json_int_t)c->answered,
                          "failed_fast", (json_int_t)c->unreachable,
                          "other_errors", (json_int_t)c->other_error,
                          "timed_out", (json_int_t)c->timed_out,
                          "lost_in_relay", (json_int_t)c->lost_in_relay,
                          "pending", (json_int_t)c->pending,
                          "ran_after_failure",
                          (json_int_t)c->ran_after_failure));
    }
    return a;
}

static json_t *report_json (const struct result *r, bool host)
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
        " s:{s:I s:I s:I s:I s:I s:I s:I s:I}"
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
            "%llu ran after failure\n",
            what, (unsigned long long)c->sent,
            (unsigned long long)c->answered,
            (unsigned long long)c->unreachable,
            (unsigned long long)c->other_error,
            (unsigned long long)c->timed_out,
            (unsigned long long)c->lost_in_relay,
            (unsigned long long)c->pending,
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

static void print_text (const struct result *r)
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
static int check (const struct result *r)
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

/* Ranks r with flag[r] set, as an idset string (malloc'd) and a count. */
static char *encode_ranks (const uint8_t *flag, uint32_t n, uint32_t *count)
{
    idset_t *set = idset_create (n);
    char *str;

    *count = 0;
    if (!set)
        return NULL;
    for (uint32_t r = 0; r < n; r++)
        if (flag[r] && idset_set (set, r) == 0)
            (*count)++;
    str = idset_encode (set, 0);
    idset_destroy (&set);
    return str;
}

/* What the survivors think at the end, and what is true. */
static int collect_views (struct simnet *s, uint32_t n, struct result *r)
{
    uint8_t *any = calloc (n, 1), *all = calloc (n, 1), *dead = calloc (n, 1);
    int rc = -1;

    if (!any || !all || !dead)
        goto done;
    simnet_views (s, any, all, dead);
    if (!(r->down_any = encode_ranks (any, n, &r->n_any))
        || !(r->down_all = encode_ranks (all, n, &r->n_all))
        || !(r->down = encode_ranks (dead, n, &r->n_down)))
        goto done;
    rc = 0;
done:
    free (any);
    free (all);
    free (dead);
    return rc;
}

int protosim_main (int argc, char *argv[])
{
    struct popts o = { .sc = { .size = 1024, .topology = "bgn", .seed = 1,
                               .count = -1, .duration = -1, .rate = -1 } };
    struct sim_params p;
    struct result r = { 0 };
    char err[512] = "";
    struct simnet *s = NULL;
    json_t *sc;
    FILE *log = NULL;
    double t0;
    int rc = 1;

    if (parse (argc, argv, &o) < 0)
        return 1;
    /* A simulation makes and frees hundreds of millions of small blocks
     * of a few sizes; glibc's per-thread cache of 7 blocks a size makes
     * that twice as slow as a cache of a few thousand.  The setting is
     * read at start-up only: start again with it (once). */
    if (!getenv ("GLIBC_TUNABLES") && !getenv ("BGN_SIM_NO_REEXEC")) {
        setenv ("GLIBC_TUNABLES", "glibc.malloc.tcache_count=2000", 1);
        setenv ("BGN_SIM_NO_REEXEC", "1", 1);
        execv ("/proc/self/exe", argv);
        /* if that fails, run as we are */
    }
    sc = access (o.scenario, R_OK) == 0 || strchr (o.scenario, '/')
             || strstr (o.scenario, ".toml")
             ? scenario_load (o.scenario, &o.sc, err, sizeof (err))
             : scenario_builtin (o.scenario, &o.sc, err, sizeof (err));
    if (!sc) {
        fprintf (stderr, "bgn-sim: %s\n", err);
        return 1;
    }
    for (int i = 0; i < o.nsets; i++)
        if (set_key (sc, o.sets[i]) < 0) {
            json_decref (sc);
            return 1;
        }
    if (o.print_scenario) {
        json_dumpf (sc, stdout, JSON_INDENT (2));
        putchar ('\n');
        json_decref (sc);
        return 0;
    }
    simnet_defaults (&p);
    if (scenario_params (sc, &p, err, sizeof (err)) < 0) {
        fprintf (stderr, "bgn-sim: %s: %s\n", o.scenario, err);
        goto done;
    }
    if (o.logpath && !(log = fopen (o.logpath, "w"))) {
        fprintf (stderr, "bgn-sim: %s: %s\n", o.logpath, strerror (errno));
        goto done;
    }
    p.log = log;
    t0 = wall_now ();
    if (!(s = simnet_create (&p))) {
        fprintf (stderr, "bgn-sim: cannot make %u brokers on topology '%s'\n",
                 (unsigned)p.size, p.topology);
        goto done;
    }
    if (scenario_apply (sc, s, p.seed, &r.plan, err, sizeof (err)) < 0) {
        fprintf (stderr, "bgn-sim: %s: %s\n", o.scenario, err);
        goto done;
    }
    if (!isinf (r.plan.fault_at)) {
        simnet_run (s, r.plan.fault_at - 1e-9);
        r.before = *simnet_stats (s);
    }
    simnet_run (s, r.plan.duration);
    r.after = *simnet_stats (s);
    r.converged = simnet_converged (s);
    simnet_reachability (s, REACH_SAMPLES, &r.reachable, &r.tried);
    r.events_missing = simnet_events_missing (s);
    r.backlog_max = p.cfg.backlog_max;
    r.retry = p.cfg.retry_bytes > 0;
    for (int i = 0; i < r.plan.nloads; i++) {
        const struct sim_rpc_counts *c =
            simnet_load_rpc (s, r.plan.loads[i].index);
        if (c)
            r.loads[i] = *c;
    }
    if (collect_views (s, p.size, &r) < 0) {
        fprintf (stderr, "bgn-sim: out of memory\n");
        goto done;
    }
    if (o.status_all) {
        const struct sim_stats *st;
        simnet_status_all (s, r.plan.duration);
        simnet_run (s, r.plan.duration + 4.0);
        st = simnet_stats (s);
        r.status_bytes = st->status_bytes;
        r.status_seconds = st->status_seconds;
        r.status_brokers = st->status_brokers;
        r.status_problems = st->status_problems;
        r.status_asked = true;
    }
    r.wall = wall_now () - t0;
    r.rss_kib = peak_rss_kib ();
    r.size = p.size;
    r.seed = p.seed;
    r.exits3 = simnet_exits (s, 3);
    snprintf (r.topology, sizeof (r.topology), "%s", p.topology);
    if (o.json) {
        json_t *out = report_json (&r, o.host);
        if (!out) {
            fprintf (stderr, "bgn-sim: out of memory\n");
            goto done;
        }
        json_dumpf (out, stdout, JSON_COMPACT | JSON_SORT_KEYS);
        putchar ('\n');
        json_decref (out);
    }
    else
        print_text (&r);
    rc = o.check && check (&r) ? 2 : 0;
done:
    free (r.down_any);
    free (r.down_all);
    free (r.down);
    simnet_destroy (&s);
    if (log)
        fclose (log);
    json_decref (sc);
    return rc;
}
