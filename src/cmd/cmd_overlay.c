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
 *              the down ranks as an idset string ("3,7-9")
 *   --summary  the health word alone
 *   --down     only the problems (down ranks, peers that are not up)
 *   -v         more detail: counters, event layer, endpoint, identity
 *   --all      every broker's view, gathered by overlay.status-all (a
 *              reduction over the binomial tree of the live graph, rooted
 *              at rank 0), summarised per rank: how many brokers see it up
 *              and how many down, disagreements marked, totals;
 *              --all --json prints {"ranks": [...], "missing": [...]}
 *   --dot      the live graph in Graphviz DOT, computed here from the
 *              topology and size (libbgn) and the down ranks; substitute
 *              links (peers with "substitute": true) are dashed; with
 *              --all the down ranks and substitutes of every broker are
 *              used, otherwise those of the one broker asked
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
#include "src/common/libutil/monotime.h"

#define PROG "overlay-status"

static void usage (FILE *f)
{
    fprintf (f,
"Usage: bgn overlay-status [OPTIONS]\n"
"Show the overlay as one broker sees it: instance health (full, partial,\n"
"degraded, partitioned), size, topology, down ranks, and its peers.\n"
"\n"
"  -r, --rank=R          ask rank R (default 0)\n"
"  -a, --all             every broker's view, gathered over the live graph\n"
"                        from rank 0, summarised per rank\n"
"  -j, --json            print the status as JSON (with --all: every rank's)\n"
"      --dot             print the live graph in Graphviz DOT\n"
"                        (render: bgn overlay-status --dot | dot -Tpng -o g.png)\n"
"  -s, --summary         print only the health word\n"
"  -d, --down            list only problems (down ranks, peers not up)\n"
"  -v, --verbose         more detail (counters, events, endpoint)\n"
"  -w, --wait=STATE      wait until the health is STATE (exit 0), or the\n"
"                        timeout passes (exit 1, current state printed)\n"
"  -t, --timeout=T       deadline for the answer, or for --wait\n"
"                        (default 10s)\n"
"      --color=WHEN      auto, always or never (default auto: on a tty)\n"
"  -h, --help            this text\n");
}

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
    else if (!quiet || errno != ETIMEDOUT) {
        const char *es = rpc ? bgn_rpc_error (rpc) : NULL;
        fprintf (stderr, "bgn %s: %s to rank %u: %s%s%s%s\n", PROG, topic,
                 (unsigned)rank, strerror (errno), es ? " (" : "",
                 es ? es : "", es ? ")" : "");
    }
    bgn_rpc_destroy (&rpc);
    return o;
}


/* Put a status object in the documented --json shape: "down" is the idset
 * string, the module's per-rank array moves to "down_detail". */
static void normalize (json_t *o)
{
    json_t *d;
    char *s;

    if (!json_is_object (o) || json_is_string (json_object_get (o, "down")))
        return;
    if ((d = json_object_get (o, "down")) && json_is_array (d))
        json_object_set (o, "down_detail", d);
    else if (!json_object_get (o, "down_detail"))
        json_object_set_new (o, "down_detail", json_array ());
    if ((s = overlay_down_idset (o))) {
        json_object_set_new (o, "down", json_string (s));
        free (s);
    }
}


/* "missing" is every rank without a status in "ranks", sorted: the
 * gather's own list plus any rank it lost track of (e.g. a broker that
 * stopped answering after its parent had given up on its subtree). */
static void complete_missing (json_t *all)
{
    json_t *ranks = json_object_get (all, "ranks"), *v, *miss;
    idset_t *have = idset_create (0), *m = idset_create (0);
    int size = 0;
    size_t i;

    if (!have || !m || !(miss = json_array ()))
        goto out;
    json_array_foreach (ranks, i, v) {
        int s = (int)json_integer_value (json_object_get (v, "size"));
        if (s > size)
            size = s;
        idset_set (have, (unsigned)json_integer_value (json_object_get (v,
                                                                  "rank")));
    }
    json_array_foreach (json_object_get (all, "missing"), i, v)
        if (json_is_integer (v) && json_integer_value (v) >= 0)
            idset_set (m, (unsigned)json_integer_value (v));
    for (int r = 0; r < size; r++)
        if (!idset_test (have, r))
            idset_set (m, r);
    for (int r = idset_first (m); r >= 0; r = idset_next (m, r))
        if (!idset_test (have, r))
            json_array_append_new (miss, json_integer (r));
    json_object_set_new (all, "missing", miss);
out:
    idset_destroy (&have);
    idset_destroy (&m);
}

static void print_json (json_t *o)
{
    char *s = json_dumps (o, JSON_INDENT (2) | JSON_SORT_KEYS);
    printf ("%s\n", s ? s : "{}");
    free (s);
}

int cmd_overlay_status (int argc, char **argv)
{
    static const struct option longopts[] = {
        { "rank", required_argument, NULL, 'r' },
        { "all", no_argument, NULL, 'a' },
        { "json", no_argument, NULL, 'j' },
        { "dot", no_argument, NULL, 'D' },
        { "summary", no_argument, NULL, 's' },
        { "down", no_argument, NULL, 'd' },
        { "verbose", no_argument, NULL, 'v' },
        { "wait", required_argument, NULL, 'w' },
        { "timeout", required_argument, NULL, 't' },
        { "color", required_argument, NULL, 'C' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    uint32_t rank = 0;
    int c, json = 0, summary = 0, down_only = 0, color = -1, rc = 1;
    int all = 0, dot = 0, verbose = 0, rank_given = 0;
    const char *wait = NULL;
    double timeout = 10.;
    bgn_t *h;
    json_t *o = NULL, *everything = NULL;

    while ((c = getopt_long (argc, argv, "r:ajsdvw:t:h", longopts, NULL))
           != -1) {
        switch (c) {
        case 'r':
            rank = cmd_rank_arg (PROG, "--rank", optarg);
            rank_given = 1;
            break;
        case 'a': all = 1; break;
        case 'j': json = 1; break;
        case 'D': dot = 1; break;
        case 's': summary = 1; break;
        case 'd': down_only = 1; break;
        case 'v': verbose = 1; break;
        case 'w':
            wait = optarg;
            if (strcmp (wait, "full") && strcmp (wait, "partial")
                && strcmp (wait, "degraded") && strcmp (wait, "partitioned")) {
                fprintf (stderr, "bgn %s: --wait: '%s' is not a state (full, "
                         "partial, degraded, partitioned)\n", PROG, wait);
                return 1;
            }
            break;
        case 't':
            if (fsd_parse_duration (optarg, &timeout) < 0 || !(timeout > 0)) {
                fprintf (stderr, "bgn %s: --timeout: '%s' is not a "
                         "duration\n", PROG, optarg);
                return 1;
            }
            break;
        case 'C':
            if (!strcmp (optarg, "always"))
                color = 1;
            else if (!strcmp (optarg, "never"))
                color = 0;
            else if (!strcmp (optarg, "auto"))
                color = -1;
            else {
                fprintf (stderr, "bgn %s: --color: use auto, always or "
                         "never\n", PROG);
                return 1;
            }
            break;
        case 'h': usage (stdout); return 0;
        default: usage (stderr); return 1;
        }
    }
    if (optind < argc) {
        fprintf (stderr, "bgn %s: unexpected argument '%s'\n", PROG,
                 argv[optind]);
        usage (stderr);
        return 1;
    }
    if (json + summary + dot > 1) {
        fprintf (stderr, "bgn %s: --json, --summary and --dot exclude each "
                 "other\n", PROG);
        return 1;
    }
    if (all && (rank_given || wait)) {
        fprintf (stderr, "bgn %s: --all gathers from rank 0 and cannot be "
                 "combined with --rank or --wait\n", PROG);
        return 1;
    }
    if (color < 0)
        color = isatty (STDOUT_FILENO);
    h = cmd_open (PROG);
    if (wait) {
        double deadline = monotime_now () + timeout;
        const char *state = "unknown";
        for (;;) {
            double left = deadline - monotime_now ();
            json_decref (o);
            o = get_json (h, "overlay.status", rank, NULL,
                          left < 1.0 ? (left > 0.05 ? left : 0.05) : 1.0,
                          true);
            state = "unknown";
            if (o)
                json_unpack (o, "{s:s}", "state", &state);
            if (!strcmp (state, wait)) {
                rc = 0;
                break;
            }
            if (monotime_now () >= deadline) {
                fprintf (stderr, "bgn %s: still %s after %gs (waited for "
                         "%s)\n", PROG, state, timeout, wait);
                printf ("%s\n", state);
                goto done;
            }
            usleep (50000);
        }
        if (summary)
            printf ("%s\n", state);
        goto done;
    }
    if (all) {
        /* leave the gather time to answer before our own deadline */
        char payload[64];
        double gt = timeout * 0.6 < 3.0 ? timeout * 0.6 : 3.0;
        snprintf (payload, sizeof (payload), "{\"timeout\":%.3f}", gt);
        if (!(everything = get_json (h, "overlay.status-all", 0, payload,
                                     timeout, false)))
            goto done;
        if (!json_is_array (json_object_get (everything, "ranks"))
            || !json_is_array (json_object_get (everything, "missing"))) {
            fprintf (stderr, "bgn %s: overlay.status-all: the answer lacks "
                     "ranks or missing\n", PROG);
            goto done;
        }
        json_t *v;
        size_t i;
        json_array_foreach (json_object_get (everything, "ranks"), i, v) {
            normalize (v);
            if (json_integer_value (json_object_get (v, "rank")) == 0)
                o = json_incref (v);
        }
        complete_missing (everything);
        if (!o && !(o = json_incref (json_array_get (json_object_get
                                          (everything, "ranks"), 0)))) {
            fprintf (stderr, "bgn %s: overlay.status-all: no broker "
                     "answered\n", PROG);
            goto done;
        }
    }
    else if (!(o = get_json (h, "overlay.status", rank, NULL, timeout, false)))
        goto done;
    else
        normalize (o);
    rc = 0;
    if (json)
        print_json (all ? everything : o);
    else if (summary) {
        const char *state = "unknown";
        json_unpack (o, "{s:s}", "state", &state);
        printf ("%s\n", state);
    }
    else if (dot) {
        if (overlay_dot_print (o, everything) < 0)
            rc = 1;
    }
    else if (all)
        overlay_view_all (everything, down_only, color);
    else
        overlay_view_status (o, down_only, verbose, color);
done:
    json_decref (o);
    json_decref (everything);
    bgn_close (&h);
    return rc;
}
