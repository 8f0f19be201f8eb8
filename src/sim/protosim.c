/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* protosim.c: bgn-sim --protocol (see protosim.h and bgn-sim(1)).
 *
 * Reads the options, builds the scenario (a --set may change its [sim]
 * and [overlay] keys), runs it, gathers what happened into a struct
 * sim_result, and has protoreport.c print it as text or JSON and check
 * its invariants (--check).  The JSON is the same for the same options
 * and seed, byte for byte; what depends on this machine (wall time,
 * memory) is printed in the text report, and added to the JSON only with
 * --host.
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
#include "protoreport.h"
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
static int collect_views (struct simnet *s, uint32_t n, struct sim_result *r)
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
    struct sim_result r = { 0 };
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
        json_t *out = protoreport_json (&r, o.host);
        if (!out) {
            fprintf (stderr, "bgn-sim: out of memory\n");
            goto done;
        }
        json_dumpf (out, stdout, JSON_COMPACT | JSON_SORT_KEYS);
        putchar ('\n');
        json_decref (out);
    }
    else
        protoreport_text (&r);
    rc = o.check && protoreport_check (&r) ? 2 : 0;
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

