/* protosim.c: bgn-sim --protocol (see protosim.h and bgn-sim(1)).
 *
 * Reads the options, builds the scenario, runs it, and prints the report
 * as text or JSON.  The JSON is the same for the same options and seed,
 * byte for byte; what depends on this machine (wall time, memory) is
 * printed in the text report, and added to the JSON only with --host.
 * --check makes the exit status say whether the invariants held: every
 * survivor's view converged to the real down set, no survivor stayed
 * fenced, every sampled survivor pair is reachable, no request ran after
 * its client was told it failed, events were delivered exactly once and
 * in order (or reported lost), and no queue went past its limit.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "protosim.h"
#include "scenario.h"
#include "simnet.h"

#define REACH_SAMPLES 2000

struct popts {
    struct scenario_opts sc;
    const char *scenario;
    const char *logpath;
    bool json;
    bool host;
    bool check;
    bool print_scenario;
};

static void usage (FILE *f)
{
    fprintf (f,
"Usage: bgn-sim --protocol [--topology T] [--size N] --scenario NAME|FILE\n"
"               [--seed S] [--json] [OPTIONS]\n"
"Run the overlay's real protocol code on N simulated brokers in virtual\n"
"time.  The same seed gives the same run.\n"
"\n"
"  -t, --topology T     bgn (default), bgn:R, kary:K or binomial\n"
"  -n, --size N         brokers (default 1024)\n"
"      --scenario S     boot, kill, rack, hang, restart-root, partition,\n"
"                       churn, skew, events, or a TOML scenario file\n"
"  -s, --seed S         random seed (default 1)\n"
"      --count K        ranks the fault hits (kill: min(1000, N/16))\n"
"      --duration T     length of the fault (hang, partition, churn, ...)\n"
"      --rate R         requests or events per second of the load\n"
"  -j, --json           print the report as JSON\n"
"      --host           add wall time and memory to the JSON\n"
"      --check          exit 2 if an invariant did not hold\n"
"      --log FILE       write every simulation event to FILE\n"
"      --print-scenario print the scenario as JSON and exit\n"
"  -h, --help           this text\n"
"See bgn-sim(1).\n");
}

static int parse (int argc, char *argv[], struct popts *o)
{
    static const struct option longopts[] = {
        { "protocol", no_argument, NULL, 'P' },
        { "topology", required_argument, NULL, 't' },
        { "size", required_argument, NULL, 'n' },
        { "scenario", required_argument, NULL, 'S' },
        { "seed", required_argument, NULL, 's' },
        { "count", required_argument, NULL, 'k' },
        { "duration", required_argument, NULL, 'd' },
        { "rate", required_argument, NULL, 'r' },
        { "json", no_argument, NULL, 'j' },
        { "host", no_argument, NULL, 'H' },
        { "check", no_argument, NULL, 'c' },
        { "log", required_argument, NULL, 'l' },
        { "print-scenario", no_argument, NULL, 'p' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    char *end;
    int c;

    optind = 1;
    while ((c = getopt_long (argc, argv, "t:n:s:jh", longopts, NULL)) != -1) {
        errno = 0;
        switch (c) {
        case 'P':
            break;
        case 't':
            o->sc.topology = optarg;
            break;
        case 'n':
            o->sc.size = (uint32_t)strtoul (optarg, &end, 10);
            if (errno || *end || o->sc.size < 1 || o->sc.size > (1u << 22))
                goto bad;
            break;
        case 'S':
            o->scenario = optarg;
            break;
        case 's':
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
        case 'j': o->json = true; break;
        case 'H': o->host = true; break;
        case 'c': o->check = true; break;
        case 'l': o->logpath = optarg; break;
        case 'p': o->print_scenario = true; break;
        case 'h':
            usage (stdout);
            exit (0);
        default:
            fprintf (stderr, "bgn-sim: see 'bgn-sim --protocol --help'\n");
            return -1;
        }
        continue;
bad:
        fprintf (stderr, "bgn-sim: bad value '%s' for --%s\n", optarg,
                 longopts[0].name ? "option" : "");
        return -1;
    }
    if (optind < argc) {
        fprintf (stderr, "bgn-sim: unexpected argument '%s'\n", argv[optind]);
        return -1;
    }
    if (!o->scenario) {
        fprintf (stderr, "bgn-sim: --protocol needs --scenario NAME|FILE\n");
        return -1;
    }
    return 0;
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
    int reachable, tried;
    double wall;
    long rss_kib;
    uint32_t size;
    char topology[64];
    uint64_t seed;
    int exits3;
    bool converged;
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
    { "fence", { ENV_FENCE, -1, -1 } },
    { "unfence", { ENV_UNFENCE, -1, -1 } },
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
        " s:{s:I s:I s:I s:I s:I s:I s:I}"
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
        "sent", (json_int_t)st->rpc_sent,
        "answered", (json_int_t)st->rpc_answered,
        "failed_fast", (json_int_t)st->rpc_unreachable,
        "other_errors", (json_int_t)st->rpc_other_error,
        "timed_out", (json_int_t)st->rpc_timed_out,
        "pending", (json_int_t)st->rpc_pending,
        "ran_after_failure", (json_int_t)st->rpc_ran_after_failure,
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
    if (o)
        json_object_set_new (o, "control_by_kind", ctl);
    else
        json_decref (ctl);
    return o;
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
    printf ("reachability: %d of %d sampled survivor pairs\n", r->reachable,
            r->tried);
    printf ("rpc: %llu sent, %llu answered, %llu failed fast, %llu other "
            "errors, %llu timed out, %llu pending, %llu ran after failure\n",
            (unsigned long long)st->rpc_sent,
            (unsigned long long)st->rpc_answered,
            (unsigned long long)st->rpc_unreachable,
            (unsigned long long)st->rpc_other_error,
            (unsigned long long)st->rpc_timed_out,
            (unsigned long long)st->rpc_pending,
            (unsigned long long)st->rpc_ran_after_failure);
    printf ("events: %llu published (%llu errors), %llu delivered, %llu "
            "duplicates, %llu out of order, %llu lost in %llu notices\n",
            (unsigned long long)st->ev_published,
            (unsigned long long)st->ev_publish_errors,
            (unsigned long long)st->ev_delivered,
            (unsigned long long)st->ev_duplicates,
            (unsigned long long)st->ev_out_of_order,
            (unsigned long long)st->ev_lost_events,
            (unsigned long long)st->ev_lost_notices);
    printf ("deepest queue: %u; %llu simulation events\n",
            (unsigned)st->deepest_queue,
            (unsigned long long)st->events_processed);
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
    BROKEN (st->rpc_ran_after_failure > 0, "%llu requests ran after their "
            "client was told they failed",
            (unsigned long long)st->rpc_ran_after_failure);
    BROKEN (st->ev_duplicates > 0 || st->ev_out_of_order > 0,
            "events: %llu duplicates, %llu out of order",
            (unsigned long long)st->ev_duplicates,
            (unsigned long long)st->ev_out_of_order);
    BROKEN (r->exits3 > 0, "%d brokers exited 'partitioned'", r->exits3);
#undef BROKEN
    return bad;
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
    sc = access (o.scenario, R_OK) == 0 || strchr (o.scenario, '/')
             || strstr (o.scenario, ".toml")
             ? scenario_load (o.scenario, &o.sc, err, sizeof (err))
             : scenario_builtin (o.scenario, &o.sc, err, sizeof (err));
    if (!sc) {
        fprintf (stderr, "bgn-sim: %s\n", err);
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
    simnet_destroy (&s);
    if (log)
        fclose (log);
    json_decref (sc);
    return rc;
}
