/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* cmd_overlay.c: "bgn overlay-status": what the overlay looks like now.
 *
 * This file is the command: options, the requests and the --json shape.
 * The text views are in overlay_view.c, the DOT writer in overlay_dot.c.
 *
 * Asks one broker (rank 0 unless -r) for overlay.status and prints the
 * instance health, the down ranks (an idset, with hostnames where known
 * and for how long) and that broker's peers.  Other views of the same data:
 *
 *   --json     the status object (schema: doc/overlay-status.md); the
 *              module's "down" array becomes "down_detail" and "down" is
 *              the down ranks as an idset string ("3,7-9"), "down_hosts"
 *              the same as a hostlist; host names missing from the
 *              module's answer are filled in from the instance's host
 *              table (broker.hosts); numbers are rounded (cmd_print_json)
 *   --summary  the health word alone
 *   --down     only the problems (down ranks, peers that are not up)
 *   -v         more detail: counters, event layer, endpoint, identity;
 *              -vv also the peers' state age, backlog and direction
 *   --format=prometheus  the same data as Prometheus metrics
 *              (overlay_prom.c); "bgn metrics" is the --all summary as
 *              instance metrics, "bgn metrics -r R" one broker's
 *   --all      the instance as a whole, from overlay.status-all (a
 *              reduction over the broadcast tree rooted at rank 0): who
 *              answered, health tallies, the down ranks as every broker
 *              and as some broker sees them, only the brokers with a
 *              problem, summed counters; its size grows with the problems,
 *              not with the instance.  --all --json prints the summary
 *              (doc/overlay-status.md); a broker's full tables stay
 *              available with -r
 *   --dot      the live graph in Graphviz DOT, computed here from the
 *              topology and size (libbgn) and the down ranks; substitute
 *              links (peers with "substitute": true) are dashed; with
 *              --all the down ranks any broker reports are drawn and the
 *              ranks that did not answer greyed
 *   --wait     block until the health is STATE (exit 0) or the timeout
 *              passes (exit 1, the current state printed)
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>

#include "src/common/libutil/fsd.h"
#include "src/common/libutil/idset.h"
#include "src/common/libbgn/bgn.h"
#include "cmd.h"
#include "overlay_view.h"
#include "overlay_dot.h"
#include "overlay_prom.h"
#include "src/common/libutil/monotime.h"

#define PROG "overlay-status"

/* One request, one JSON object back; NULL (message printed unless quiet
 * and the reason is a timeout) on failure. */
static json_t *get_json (bgn_t *h, const char *topic, uint32_t rank,
                         const char *payload, double timeout, bool quiet)
{
    bgn_rpc_t *rpc;
    const char *rsp = NULL;
    json_t *o = NULL;

    bgn_set_timeout (h, timeout);
    if ((rpc = bgn_rpc (h, topic, rank, payload, 0))
        && bgn_rpc_get (rpc, &rsp) == 0) {
        if (!rsp || !(o = json_loads (rsp, 0, NULL)) || !json_is_object (o)) {
            fprintf (stderr, "bgn %s: %s from rank %u: the answer is not a "
                     "JSON object\n", PROG, topic, (unsigned)rank);
            json_decref (o);
            o = NULL;
        }
    }
    else if (errno == ECONNRESET) {
        if (!quiet)     /* else the caller says so, once */
            cmd_broker_gone (PROG, h, "before answering %s", topic);
    }
    else if (!quiet || errno != ETIMEDOUT) {
        char what[128];
        snprintf (what, sizeof (what), "%s to rank %u", topic,
                  (unsigned)rank);
        cmd_rpc_error (PROG, what, rpc);
    }
    bgn_rpc_destroy (&rpc);
    return o;
}


/* Set o[field] to rank's host from the table if o lacks one. */
static void fill_host (json_t *o, const char *field, int rank,
                       const hostmap_t *hm)
{
    const char *have = json_string_value (json_object_get (o, field));
    const char *host = hm ? hostmap_host (hm, (uint32_t)rank) : NULL;

    if ((!have || !*have) && host)
        json_object_set_new (o, field, json_string (host));
}

/* The hosts of the down ranks, as a hostlist. */
static void set_down_hosts (json_t *o, const hostmap_t *hm)
{
    idset_t *ids = idset_create (0);
    json_t *v;
    size_t i;
    char *s;

    if (!ids)
        return;
    json_array_foreach (json_object_get (o, "down_ranks"), i, v)
        if (json_is_integer (v) && json_integer_value (v) >= 0)
            idset_set (ids, (unsigned)json_integer_value (v));
    if (hm && (s = hostmap_hostlist (hm, ids))) {
        json_object_set_new (o, "down_hosts", json_string (s));
        free (s);
    }
    else if (!json_object_get (o, "down_hosts"))
        json_object_set_new (o, "down_hosts", json_string (""));
    idset_destroy (&ids);
}

/* Put a status object in the documented --json shape: "down" is the idset
 * string, the module's per-rank array moves to "down_detail", hosts are
 * filled in from the table. */
static void normalize (json_t *o, const hostmap_t *hm)
{
    json_t *d, *v;
    size_t i;
    char *s;

    if (!json_is_object (o))
        return;
    if (!json_is_string (json_object_get (o, "down"))) {
        if ((d = json_object_get (o, "down")) && json_is_array (d))
            json_object_set (o, "down_detail", d);
        else if (!json_object_get (o, "down_detail"))
            json_object_set_new (o, "down_detail", json_array ());
        if ((s = overlay_down_idset (o))) {
            json_object_set_new (o, "down", json_string (s));
            free (s);
        }
    }
    fill_host (o, "hostname",
               (int)json_integer_value (json_object_get (o, "rank")), hm);
    json_array_foreach (json_object_get (o, "peers"), i, v)
        fill_host (v, "hostname",
                   (int)json_integer_value (json_object_get (v, "rank")), hm);
    json_array_foreach (json_object_get (o, "down_detail"), i, v)
        fill_host (v, "hostname",
                   (int)json_integer_value (json_object_get (v, "rank")), hm);
    set_down_hosts (o, hm);
}


/* Fill in the host names a status-all summary lacks (problems and their
 * peers) from the host table. */
static void normalize_summary (json_t *all, const hostmap_t *hm)
{
    json_t *p, *v;
    size_t i, j;

    json_array_foreach (json_object_get (all, "problems"), i, p) {
        fill_host (p, "hostname",
                   (int)json_integer_value (json_object_get (p, "rank")), hm);
        json_array_foreach (json_object_get (p, "not_up"), j, v)
            fill_host (v, "hostname",
                       (int)json_integer_value (json_object_get (v, "rank")),
                       hm);
    }
}

/* Brokers leave the counters that are 0 out of the summary (it stays
 * small): put them back as 0, by the names rank 0's own status has. */
static void fill_zero_counters (json_t *all, json_t *root)
{
    json_t *c = json_object_get (all, "counters"), *v;
    const char *key;

    if (!json_is_object (c)) {
        if (!(c = json_object ()) || json_object_set_new (all, "counters", c))
            return;
    }
    json_object_foreach (json_object_get (root, "counters"), key, v)
        if (json_is_integer (v) && !json_object_get (c, key))
            json_object_set_new (c, key, json_integer (0));
}

static void usage (FILE *f)
{
    fprintf (f,
"Usage: bgn overlay-status [OPTIONS]\n"
"Show the overlay as one broker sees it: instance health (full, partial,\n"
"degraded, partitioned), size, topology, down ranks (and their hosts),\n"
"and its peers.\n"
"\n"
"  -r, --rank=R          ask rank R, or the broker on host R (default 0,\n"
"                        or bgn's own --rank)\n"
"  -a, --all             the whole instance, gathered from every broker over\n"
"                        the live graph: counts, down ranks, problems only\n"
"  -j, --json            print the status as JSON (with --all: the summary)\n"
"      --dot             print the live graph in Graphviz DOT\n"
"                        (render: bgn overlay-status --dot | dot -Tpng -o g.png)\n"
"      --format=FORMAT   text (default), json, dot, or prometheus (the\n"
"                        Prometheus text format; see also 'bgn metrics')\n"
"      --summary         print only the health word\n"
"      --down            list only problems (down ranks, peers not up)\n"
"  -v, --verbose         more detail (counters, events, endpoint); -vv also\n"
"                        the peers' state age, backlog and direction\n"
"  -w, --wait=STATE      wait until the health is STATE (exit 0), or the\n"
"                        timeout passes (exit 1, current state printed)\n"
"  -t, --timeout=T       deadline for the answer, or for --wait\n"
"                        (default 10s; 0 = none)\n"
"  -L, --color=WHEN      auto, always or never (default auto: on a tty)\n"
"  -h, --help            this text\n");
}

enum format { F_TEXT, F_JSON, F_DOT, F_PROM, F_SUMMARY };

struct opts {
    uint32_t rank;
    int rank_given;
    const char *rank_arg;
    int all, down_only, verbose, color;
    int metrics;            /* "bgn metrics": --all unless -r */
    enum format format;
    int formats;            /* how many output formats were asked for */
    const char *wait;
    double timeout;
};

static void set_format (struct opts *o, enum format f)
{
    if (o->format != f)
        o->formats++;
    o->format = f;
}

static int parse_format (struct opts *o, const char *s)
{
    static const struct { const char *name; enum format f; } names[] = {
        { "text", F_TEXT }, { "json", F_JSON }, { "dot", F_DOT },
        { "prometheus", F_PROM },
    };
    for (size_t i = 0; i < sizeof (names) / sizeof (names[0]); i++) {
        if (!strcmp (s, names[i].name)) {
            set_format (o, names[i].f);
            return 0;
        }
    }
    cmd_die (PROG, "--format: '%s' is not a format (text, json, dot, "
             "prometheus)", s);
}

static int parse_args (int argc, char **argv, struct opts *o)
{
    static const struct option longopts[] = {
        { "rank", required_argument, NULL, 'r' },
        { "all", no_argument, NULL, 'a' },
        { "json", no_argument, NULL, 'j' },
        { "dot", no_argument, NULL, 'D' },
        { "format", required_argument, NULL, 'F' },
        { "summary", no_argument, NULL, 'S' },
        { "down", no_argument, NULL, 'd' },
        { "verbose", no_argument, NULL, 'v' },
        { "wait", required_argument, NULL, 'w' },
        { "timeout", required_argument, NULL, 't' },
        { "color", required_argument, NULL, 'L' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    int c;

    while ((c = getopt_long (argc, argv, ":r:ajvw:t:L:h", longopts, NULL))
           != -1) {
        switch (c) {
        case 'r': o->rank_arg = optarg; o->rank_given = 1; break;
        case 'a': o->all = 1; break;
        case 'j': set_format (o, F_JSON); break;
        case 'D': set_format (o, F_DOT); break;
        case 'F': parse_format (o, optarg); break;
        case 'S': set_format (o, F_SUMMARY); break;
        case 'd': o->down_only = 1; break;
        case 'v': o->verbose++; break;
        case 'w':
            o->wait = optarg;
            if (strcmp (optarg, "full") && strcmp (optarg, "partial")
                && strcmp (optarg, "degraded")
                && strcmp (optarg, "partitioned"))
                cmd_die (PROG, "--wait: '%s' is not a state (full, partial, "
                         "degraded, partitioned)", optarg);
            break;
        case 't': o->timeout = cmd_timeout_arg (PROG, "--timeout", optarg);
            break;
        case 'L':
            if (!strcmp (optarg, "always"))
                o->color = 1;
            else if (!strcmp (optarg, "never"))
                o->color = 0;
            else if (!strcmp (optarg, "auto"))
                o->color = -1;
            else
                cmd_die (PROG, "--color: '%s': use auto, always or never",
                         optarg);
            break;
        case 'h': usage (stdout); exit (0);
        default: exit (cmd_bad_option (PROG, argv, c));
        }
    }
    if (optind < argc)
        cmd_usage_die (PROG, "unexpected argument '%s'", argv[optind]);
    if (o->formats > 1)
        cmd_die (PROG, "--json, --summary, --dot and --format exclude each "
                 "other");
    if (o->metrics && o->rank_given)
        o->all = 0;     /* "bgn metrics -r R": that broker's own metrics */
    if (o->all && (o->rank_given || o->wait))
        cmd_die (PROG, "--all gathers from rank 0 and cannot be combined "
                 "with --rank or --wait");
    if (o->color < 0)
        o->color = isatty (STDOUT_FILENO);
    return 0;
}

/* --wait: poll until the health is o->wait; 0, or 1 after the deadline
 * (the current state printed). */
static int wait_for (bgn_t *h, struct opts *o)
{
    double deadline = monotime_now () + o->timeout;
    const char *state = "unknown";
    char seen[32] = "unknown";  /* state outlives s */
    json_t *s = NULL;
    int rc = 1;

    for (;;) {
        double left = deadline - monotime_now ();
        json_decref (s);
        s = get_json (h, "overlay.status", o->rank, NULL,
                      left < 1.0 ? (left > 0.05 ? left : 0.05) : 1.0, true);
        if (!s && errno == ECONNRESET) {
            cmd_broker_gone (PROG, h, "while waiting for %s (last seen: %s)",
                             o->wait, seen);
            return 1;
        }
        state = "unknown";
        if (s)
            json_unpack (s, "{s:s}", "state", &state);
        snprintf (seen, sizeof (seen), "%s", state);
        if (!strcmp (state, o->wait)) {
            rc = 0;
            break;
        }
        if (monotime_now () >= deadline) {
            fprintf (stderr, "bgn %s: still %s after %gs (waited for %s)\n",
                     PROG, state, o->timeout, o->wait);
            printf ("%s\n", state);
            goto done;
        }
        usleep (50000);
    }
    if (o->format == F_SUMMARY)
        printf ("%s\n", state);
done:
    json_decref (s);
    return rc;
}

/* --all: the instance summary (overlay.status-all, a reduction over the
 * broadcast tree from rank 0) and *root, rank 0's own status. */
static json_t *gather_all (bgn_t *h, struct opts *o, const hostmap_t *hm,
                           json_t **root)
{
    char payload[64];
    double gt = o->timeout * 0.6 < 3.0 ? o->timeout * 0.6 : 3.0;
    json_t *all;

    /* leave the gather time to answer before our own deadline */
    snprintf (payload, sizeof (payload), "{\"timeout\":%.3f}", gt);
    if (!(all = get_json (h, "overlay.status-all", 0, payload, o->timeout,
                          false)))
        return NULL;
    if (!json_is_integer (json_object_get (all, "brokers"))
        || !json_is_object (json_object_get (all, "health"))
        || !json_is_string (json_object_get (all, "down_any"))
        || !json_is_string (json_object_get (all, "missing"))
        || !json_is_array (json_object_get (all, "problems"))) {
        fprintf (stderr, "bgn %s: overlay.status-all: the answer is not a "
                 "summary (brokers, health, down_any, missing, problems)\n",
                 PROG);
        json_decref (all);
        return NULL;
    }
    normalize_summary (all, hm);
    if (!(*root = get_json (h, "overlay.status", 0, NULL, o->timeout,
                            false))) {
        json_decref (all);
        return NULL;
    }
    normalize (*root, hm);
    fill_zero_counters (all, *root);
    return all;
}

static int print_output (struct opts *o, json_t *s, json_t *all,
                         const hostmap_t *hm)
{
    json_t *one;

    switch (o->format) {
    case F_JSON:
        cmd_print_json (all ? all : s);
        return 0;
    case F_SUMMARY:
        printf ("%s\n", json_string_value (json_object_get (s, "state"))
                        ?: "unknown");
        return 0;
    case F_DOT:
        return overlay_dot_print (s, all) < 0 ? 1 : 0;
    case F_PROM:
        if (all) {
            overlay_prom_print_summary (all);
            return 0;
        }
        one = json_pack ("[O]", s);
        overlay_prom_print (one, hm);
        json_decref (one);
        return 0;
    case F_TEXT:
        if (all)
            overlay_view_all (all, s, o->down_only, o->color, hm);
        else
            overlay_view_status (s, o->down_only, o->verbose, o->color, hm);
        return 0;
    }
    return 1;
}

int cmd_overlay_status (int argc, char **argv)
{
    struct opts o = { .color = -1, .timeout = 10. };
    json_t *s = NULL, *all = NULL;
    hostmap_t *hm;
    int rc = 1;
    bgn_t *h;

    /* "bgn metrics": the whole instance for Prometheus */
    if (!strcmp (argv[0], "metrics")) {
        o.all = 1;
        o.metrics = 1;
        set_format (&o, F_PROM);
        o.formats = 0;
    }
    parse_args (argc, argv, &o);
    h = cmd_open (PROG);
    if (!o.rank_arg && !o.all)
        o.rank_arg = cmd_default_rank ();
    if (o.rank_arg)
        o.rank = cmd_rank_arg (PROG, "--rank", o.rank_arg, h);
    if (o.wait) {
        rc = wait_for (h, &o);
        goto done;
    }
    /* the host table, for names the module's answer lacks */
    hm = o.format == F_SUMMARY ? NULL : cmd_hostmap (h, PROG, 1);
    if (o.all)
        all = gather_all (h, &o, hm, &s);
    else if ((s = get_json (h, "overlay.status", o.rank, NULL, o.timeout,
                            false)))
        normalize (s, hm);
    if (s)
        rc = print_output (&o, s, all, hm);
done:
    json_decref (s);
    json_decref (all);
    bgn_close (&h);
    return rc;
}
