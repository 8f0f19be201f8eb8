/* cmd_overlay.c: "bgn overlay-status": what the overlay looks like now.
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

/* The "down" idset string of a status object, malloc'd. */
static char *down_idset (json_t *o)
{
    json_t *down = json_object_get (o, "down_ranks"), *v;
    idset_t *ids = idset_create (0);
    size_t i;
    char *s;

    if (!ids)
        return NULL;
    json_array_foreach (down, i, v)
        if (json_is_integer (v) && json_integer_value (v) >= 0)
            idset_set (ids, (unsigned)json_integer_value (v));
    s = idset_encode (ids, 0);
    idset_destroy (&ids);
    return s;
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
    if ((s = down_idset (o))) {
        json_object_set_new (o, "down", json_string (s));
        free (s);
    }
}

static const char *color_for (const char *state, int color)
{
    if (!color)
        return "";
    if (!strcmp (state, "up") || !strcmp (state, "full"))
        return "\033[32m";
    if (!strcmp (state, "suspect") || !strcmp (state, "degraded")
        || !strcmp (state, "partial") || !strcmp (state, "connecting"))
        return "\033[33m";
    return "\033[31m";
}

static void fmt_bytes (char *buf, size_t len, double v)
{
    const char *unit[] = { "B", "K", "M", "G", "T" };
    int i = 0;
    while (v >= 1024 && i < 4) {
        v /= 1024;
        i++;
    }
    snprintf (buf, len, i ? "%.1f%s" : "%.0f%s", v, unit[i]);
}

static void fmt_dur (char *buf, size_t len, double s)
{
    if (s < 0 || !isfinite (s))
        snprintf (buf, len, "-");
    else if (s < 0.001)
        snprintf (buf, len, "%.0fus", s * 1e6);
    else if (fsd_format_duration (buf, len, s) < 0)
        snprintf (buf, len, "-");
}

static bool in_int_array (json_t *a, json_int_t x)
{
    size_t i;
    json_t *v;
    json_array_foreach (a, i, v)
        if (json_is_integer (v) && json_integer_value (v) == x)
            return true;
    return false;
}

/* Hostname of 'rank' as known from the peers of status objects, or NULL. */
static const char *host_of (json_t **objs, size_t n, int rank)
{
    for (size_t k = 0; k < n; k++) {
        json_t *peers = json_object_get (objs[k], "peers"), *p;
        size_t i;
        if (json_integer_value (json_object_get (objs[k], "rank")) == rank) {
            const char *h = json_string_value (json_object_get (objs[k],
                                                                "hostname"));
            if (h && *h)
                return h;
        }
        json_array_foreach (peers, i, p) {
            if (json_integer_value (json_object_get (p, "rank")) == rank) {
                const char *h = json_string_value (json_object_get (p,
                                                                "hostname"));
                if (h && *h)
                    return h;
            }
        }
    }
    return NULL;
}

/* The first line: "overlay STATE: size N, topology T, diameter D". */
static void print_headline (json_t *o, int color)
{
    const char *state = "?", *topo = "?";
    int size = 0, diameter = 0;
    const char *reset = color ? "\033[0m" : "";

    json_unpack (o, "{s?s s?i s?s s?i}", "state", &state, "size", &size,
                 "topology", &topo, "diameter", &diameter);
    printf ("overlay %s%s%s: size %d, topology %s, diameter %d\n",
            color_for (state, color), state, reset, size, topo, diameter);
}

/* "down: 3,7-9 (4)" then one line per down rank with host and how long. */
static void print_down (json_t *o, json_t **hosts, size_t nhosts, int color)
{
    json_t *down = json_object_get (o, "down_ranks");
    json_t *detail = json_object_get (o, "down_detail"), *v;
    char *ids = down_idset (o);
    const char *red = color ? "\033[31m" : "", *reset = color ? "\033[0m" : "";
    size_t i, j;

    if (!ids || !*ids) {
        printf ("down: none\n");
        free (ids);
        return;
    }
    printf ("down: %s%s%s (%zu)\n", red, ids, reset, json_array_size (down));
    free (ids);
    json_array_foreach (down, i, v) {
        int r = (int)json_integer_value (v);
        const char *host = host_of (hosts, nhosts, r), *reason = NULL;
        double secs = -1;
        json_t *d;
        char dur[32];

        json_array_foreach (detail, j, d) {
            if (json_integer_value (json_object_get (d, "rank")) == r) {
                json_unpack (d, "{s?F s?s}", "seconds", &secs,
                             "reason", &reason);
                break;
            }
        }
        fmt_dur (dur, sizeof (dur), secs);
        printf ("  rank %d (%s): down for %s%s%s\n", r, host ? host : "?",
                dur, reason ? ", " : "", reason ? reason : "");
    }
}

static void print_object_fields (const char *title, json_t *o)
{
    const char *k;
    json_t *v;
    int n = 0;

    if (!json_is_object (o))
        return;
    printf ("%s:", title);
    json_object_foreach (o, k, v) {
        char *s = json_dumps (v, JSON_ENCODE_ANY | JSON_COMPACT);
        printf ("%s %s=%s", n++ % 4 == 0 && n > 1 ? "\n " : "", k,
                s ? s : "?");
        free (s);
    }
    printf ("\n");
}

static void print_verbose (json_t *o)
{
    const char *endpoint = "?", *instance = "?", *pubkey = "";
    json_int_t inc = 0, ttl = 0, auth = 0, unreach = 0, fences = 0;
    json_t *missing = json_object_get (o, "missing");

    json_unpack (o, "{s?s s?s s?s s?I s?I s?I s?I s?I}", "endpoint", &endpoint,
                 "instance", &instance, "pubkey", &pubkey, "incarnation", &inc,
                 "ttl", &ttl, "auth_failures", &auth, "unreachable_live",
                 &unreach, "fences_seen", &fences);
    printf ("endpoint: %s\n", endpoint);
    printf ("instance: %s, incarnation %lld, ttl %lld\n", instance,
            (long long)inc, (long long)ttl);
    if (pubkey && *pubkey)
        printf ("pubkey: %s\n", pubkey);
    printf ("auth failures %lld, unreachable live ranks %lld, "
            "fences seen %lld\n", (long long)auth, (long long)unreach,
            (long long)fences);
    if (json_array_size (missing) > 0) {
        idset_t *ids = idset_create (0);
        size_t i;
        json_t *v;
        char *s;
        json_array_foreach (missing, i, v)
            idset_set (ids, (unsigned)json_integer_value (v));
        s = idset_encode (ids, 0);
        printf ("not yet joined: %s\n", s ? s : "?");
        free (s);
        idset_destroy (&ids);
    }
    print_object_fields ("counters", json_object_get (o, "counters"));
    print_object_fields ("events", json_object_get (o, "events"));
}

static void print_peers (json_t *o, int down_only, int verbose, int color)
{
    json_t *peers = json_object_get (o, "peers"), *down, *v;
    const char *host = "";
    int rank = 0, shown = 0;
    size_t i;
    const char *reset = color ? "\033[0m" : "";

    down = json_object_get (o, "down_ranks");
    json_unpack (o, "{s?i s?s}", "rank", &rank, "hostname", &host);
    json_array_foreach (peers, i, v) {
        int prank = 0, sub = 0, conn = 0;
        const char *pstate = "?", *phost = "";
        json_int_t txm = 0, rxm = 0, txb = 0, rxb = 0, rer = 0, ttl = 0;
        json_int_t backlog = 0, bdrops = 0;
        double heard = -1, since = -1, rtt = -1;
        json_t *rttj = NULL;
        char rtts[16], heards[16], txs[16], rxs[16], sinces[16];

        json_unpack (v, "{s:i s:s s?s s?I s?I s?I s?I s?I s?I s?F s?F s?o "
                     "s?b s?b s?I s?I}",
                     "rank", &prank, "state", &pstate, "hostname", &phost,
                     "tx_msgs", &txm, "rx_msgs", &rxm, "tx_bytes", &txb,
                     "rx_bytes", &rxb, "reroutes", &rer, "ttl_drops", &ttl,
                     "last_heard", &heard, "state_since", &since,
                     "rtt_us", &rttj, "substitute", &sub, "connector", &conn,
                     "backlog", &backlog, "backlog_drops", &bdrops);
        if (!strcmp (pstate, "down") && in_int_array (down, prank))
            pstate = "fenced";
        if (down_only && !strcmp (pstate, "up"))
            continue;
        if (shown++ == 0) {
            if (down_only)
                printf ("rank %d (%s): peers not up:\n", rank, host);
            else
                printf ("rank %d (%s) has %zu peers:\n", rank, host,
                        json_array_size (peers));
            printf ("  %5s %-12s %-10s %-3s %8s %8s %9s %9s %8s %8s %8s %5s",
                    "RANK", "HOST", "STATE", "SUB", "RTT", "HEARD", "TX-MSGS",
                    "RX-MSGS", "TX", "RX", "REROUTE", "TTL-X");
            if (verbose)
                printf (" %8s %7s %7s %4s", "SINCE", "BACKLOG", "B-DROPS",
                        "CONN");
            printf ("\n");
        }
        if (rttj && json_is_number (rttj))
            rtt = json_number_value (rttj);
        if (rtt >= 0)
            snprintf (rtts, sizeof (rtts), "%.0fus", rtt);
        else
            snprintf (rtts, sizeof (rtts), "-");
        fmt_dur (heards, sizeof (heards), heard);
        fmt_dur (sinces, sizeof (sinces), since);
        fmt_bytes (txs, sizeof (txs), (double)txb);
        fmt_bytes (rxs, sizeof (rxs), (double)rxb);
        printf ("  %5d %-12.12s %s%-10s%s %-3s %8s %8s %9lld %9lld %8s %8s "
                "%8lld %5lld", prank, phost, color_for (pstate, color),
                pstate, reset, sub ? "yes" : "-", rtts, heards,
                (long long)txm, (long long)rxm, txs, rxs, (long long)rer,
                (long long)ttl);
        if (verbose)
            printf (" %8s %7lld %7lld %4s", sinces, (long long)backlog,
                    (long long)bdrops, conn ? "out" : "in");
        printf ("\n");
    }
    if (down_only && shown == 0)
        printf ("rank %d (%s): all %zu peers up\n", rank, host,
                json_array_size (peers));
}

static void print_status (json_t *o, int down_only, int verbose, int color)
{
    print_headline (o, color);
    print_down (o, &o, 1, color);
    if (verbose && !down_only)
        print_verbose (o);
    print_peers (o, down_only, verbose, color);
}

/* ---- --all ------------------------------------------------------------ */

struct rank_view {
    int answered;          /* has its own status object */
    const char *host;
    const char *health;    /* its own health word */
    int seen_up, seen_suspect, seen_down, fenced_by;
    int peers, peers_up;
    json_int_t txm, rxm, txb, rxb, rer, ttl;
};

static void print_all (json_t *all, int down_only, int color)
{
    json_t *ranks = json_object_get (all, "ranks");
    json_t *missing = json_object_get (all, "missing");
    json_t *root = NULL, *o, *v;
    size_t i, j, nobj = json_array_size (ranks);
    int size = 0, disagree = 0, shown = 0;
    struct rank_view *rv;
    json_t **objs;
    idset_t *miss = idset_create (0);
    const char *reset = color ? "\033[0m" : "";
    const char *hl = color ? "\033[1;31m" : "";
    json_int_t ttxm = 0, trxm = 0, ttxb = 0, trxb = 0, trer = 0, tttl = 0;
    int nhealth[5] = { 0 };
    const char *healths[] = { "full", "partial", "degraded", "partitioned",
                              "other" };

    json_array_foreach (ranks, i, o) {
        if (json_integer_value (json_object_get (o, "rank")) == 0)
            root = o;
        int s = (int)json_integer_value (json_object_get (o, "size"));
        if (s > size)
            size = s;
    }
    if (!root)
        root = json_array_get (ranks, 0);
    if (size <= 0 || !(rv = calloc (size, sizeof (*rv)))
        || !(objs = calloc (nobj + 1, sizeof (*objs)))) {
        fprintf (stderr, "bgn %s: --all: no usable status in the answer\n",
                 PROG);
        idset_destroy (&miss);
        return;
    }
    json_array_foreach (ranks, i, o)
        objs[i] = o;
    json_array_foreach (missing, i, v)
        idset_set (miss, (unsigned)json_integer_value (v));

    /* fold every broker's view into one row per rank */
    json_array_foreach (ranks, i, o) {
        int r = (int)json_integer_value (json_object_get (o, "rank"));
        const char *health = json_string_value (json_object_get (o, "state"));
        json_t *p;
        if (r < 0 || r >= size)
            continue;
        rv[r].answered = 1;
        rv[r].health = health ? health : "?";
        for (j = 0; j < 4 && strcmp (rv[r].health, healths[j]); j++)
            ;
        nhealth[j]++;
        json_array_foreach (json_object_get (o, "down_ranks"), j, v) {
            int d = (int)json_integer_value (v);
            if (d >= 0 && d < size)
                rv[d].fenced_by++;
        }
        json_array_foreach (json_object_get (o, "peers"), j, p) {
            int pr = (int)json_integer_value (json_object_get (p, "rank"));
            const char *ps = json_string_value (json_object_get (p, "state"));
            json_int_t x;
            rv[r].peers++;
            if (ps && !strcmp (ps, "up"))
                rv[r].peers_up++;
            if (pr >= 0 && pr < size && ps) {
                if (!strcmp (ps, "up"))
                    rv[pr].seen_up++;
                else if (!strcmp (ps, "suspect"))
                    rv[pr].seen_suspect++;
                else if (!strcmp (ps, "down"))
                    rv[pr].seen_down++;
            }
#define ADD(field, var) \
            if ((x = json_integer_value (json_object_get (p, field))) > 0) \
                rv[r].var += x;
            ADD ("tx_msgs", txm);
            ADD ("rx_msgs", rxm);
            ADD ("tx_bytes", txb);
            ADD ("rx_bytes", rxb);
            ADD ("reroutes", rer);
            ADD ("ttl_drops", ttl);
#undef ADD
        }
    }
    for (int r = 0; r < size; r++)
        rv[r].host = host_of (objs, nobj, r);

    print_headline (root, color);
    {
        char *s = idset_encode (miss, 0);
        printf ("answered: %zu of %d brokers; no answer: %s\n", nobj, size,
                s && *s ? s : "none");
        free (s);
    }
    printf ("health as each broker sees it:");
    for (j = 0; j < 5; j++)
        if (nhealth[j])
            printf (" %s %d", healths[j], nhealth[j]);
    printf ("\n");
    print_down (root, objs, nobj, color);

    for (int r = 0; r < size; r++) {
        struct rank_view *x = &rv[r];
        bool down_any = x->seen_down || x->fenced_by || x->seen_suspect;
        bool conflict = (down_any && (x->seen_up || x->answered))
                        || (!x->answered && x->seen_up);
        bool problem = conflict || down_any || !x->answered
                       || (x->answered && x->peers_up < x->peers);
        char tx[16], rx[16], peers[16];
        const char *word;

        if (conflict)
            disagree++;
        if (down_only && !problem)
            continue;
        if (shown++ == 0)
            printf ("  %5s %-12s %-11s %-8s %4s %4s %4s %6s %9s %9s %8s %8s "
                    "%7s\n", "RANK", "HOST", "ANSWER", "OWN", "UP", "DOWN",
                    "FENC", "PEERS", "TX-MSGS", "RX-MSGS", "TX", "RX",
                    "REROUTE");
        word = x->answered ? "yes" : "no";
        snprintf (peers, sizeof (peers), "%d/%d", x->peers_up, x->peers);
        fmt_bytes (tx, sizeof (tx), (double)x->txb);
        fmt_bytes (rx, sizeof (rx), (double)x->rxb);
        printf ("%s%s%s %5d %-12.12s %s%-11s%s %s%-8s%s %4d %4d %4d %6s %9lld "
                "%9lld %8s %8s %7lld%s\n", conflict ? hl : "",
                conflict ? "!" : " ", conflict ? reset : "", r,
                x->host ? x->host : "?",
                x->answered ? "" : color_for ("down", color), word,
                x->answered ? "" : reset,
                x->answered ? color_for (x->health, color) : "",
                x->answered ? x->health : "-", x->answered ? reset : "",
                x->seen_up, x->seen_down + x->seen_suspect, x->fenced_by,
                x->answered ? peers : "-", (long long)x->txm,
                (long long)x->rxm, x->answered ? tx : "-",
                x->answered ? rx : "-", (long long)x->rer,
                conflict ? "  <- views disagree" : "");
        ttxm += x->txm;
        trxm += x->rxm;
        ttxb += x->txb;
        trxb += x->rxb;
        trer += x->rer;
        tttl += x->ttl;
    }
    if (!down_only) {
        char tx[16], rx[16];
        fmt_bytes (tx, sizeof (tx), (double)ttxb);
        fmt_bytes (rx, sizeof (rx), (double)trxb);
        printf ("total: tx %lld msgs %s, rx %lld msgs %s, reroutes %lld, "
                "ttl drops %lld\n", (long long)ttxm, tx, (long long)trxm, rx,
                (long long)trer, (long long)tttl);
    }
    else if (shown == 0)
        printf ("no problems: every broker answered and sees all its peers "
                "up\n");
    if (disagree)
        printf ("%s%d rank%s seen differently by different brokers (marked "
                "!)%s\n", hl, disagree, disagree == 1 ? "" : "s", reset);
    else
        printf ("all brokers agree\n");
    free (rv);
    free (objs);
    idset_destroy (&miss);
}

/* ---- --dot ------------------------------------------------------------ */

static int print_dot (json_t *root, json_t *all)
{
    const char *topo = NULL, *state = "?";
    int size = 0;
    struct bgn_topo *t;
    idset_t *down = idset_create (0), *missing = idset_create (0);
    json_t *objs, *o, *v, *p, *subs = json_array ();
    size_t i, j;
    uint32_t *nb = NULL;
    int maxdeg;

    json_unpack (root, "{s?s s?i s?s}", "topology", &topo, "size", &size,
                 "state", &state);
    if (!topo || size <= 0 || !(t = bgn_topo_create (topo, size))) {
        fprintf (stderr, "bgn %s: --dot: cannot build topology '%s' of size "
                 "%d\n", PROG, topo ? topo : "?", size);
        idset_destroy (&down);
        idset_destroy (&missing);
        json_decref (subs);
        return -1;
    }
    /* the views to draw from: every broker's (--all) or the one asked */
    if (all)
        objs = json_incref (json_object_get (all, "ranks"));
    else {
        objs = json_array ();
        json_array_append (objs, root);
    }
    json_array_foreach (objs, i, o) {
        json_array_foreach (json_object_get (o, "down_ranks"), j, v)
            idset_set (down, (unsigned)json_integer_value (v));
    }
    if (all)
        json_array_foreach (json_object_get (all, "missing"), i, v)
            if (!idset_test (down, (unsigned)json_integer_value (v)))
                idset_set (missing, (unsigned)json_integer_value (v));
    json_array_foreach (objs, i, o) {
        int r = (int)json_integer_value (json_object_get (o, "rank"));
        json_array_foreach (json_object_get (o, "peers"), j, p) {
            if (json_is_true (json_object_get (p, "substitute"))) {
                int pr = (int)json_integer_value (json_object_get (p, "rank"));
                int a = r < pr ? r : pr, b = r < pr ? pr : r;
                json_t *pair = json_pack ("[i,i]", a, b);
                bool dup = false;
                size_t k;
                json_t *q;
                json_array_foreach (subs, k, q)
                    if (json_equal (q, pair))
                        dup = true;
                if (!dup && a >= 0 && b < size && a != b)
                    json_array_append (subs, pair);
                json_decref (pair);
            }
        }
    }

    printf ("graph overlay {\n");
    printf ("  label=\"bgn overlay: %s, size %d, topology %s%s\\n"
            "red: down; dotted: links to down ranks; blue dashed: "
            "substitute links\";\n", state, size, bgn_topo_name (t),
            all ? " (all brokers' views)" : "");
    printf ("  labelloc=t;\n");
    /* a graph: ranks in order round a circle (pinned positions, so the
     * 2^k chords show); a tree: left to dot's hierarchical layout */
    bool ring = !bgn_topo_is_tree (t);
    double radius = size * 0.16 > 2.0 ? size * 0.16 : 2.0;
    if (ring)
        printf ("  layout=neato;\n");
    printf ("  node [shape=circle, fixedsize=true, width=0.45, style=filled, "
            "fillcolor=palegreen, fontname=Helvetica, fontsize=11];\n");
    printf ("  edge [color=gray40];\n");
    for (int r = 0; r < size; r++) {
        char pos[64] = "";
        if (ring) {
            double a = M_PI / 2 - 2 * M_PI * r / size;
            snprintf (pos, sizeof (pos), "pos=\"%.3f,%.3f!\"",
                      radius * cos (a), radius * sin (a));
        }
        if (idset_test (down, r))
            printf ("  %d [fillcolor=tomato, style=\"filled,dashed\", "
                    "color=red, penwidth=2, tooltip=\"down\"%s%s];\n", r,
                    ring ? ", " : "", pos);
        else if (idset_test (missing, r))
            printf ("  %d [fillcolor=lightgray, style=\"filled,dotted\", "
                    "tooltip=\"no answer\"%s%s];\n", r, ring ? ", " : "",
                    pos);
        else if (ring)
            printf ("  %d [%s];\n", r, pos);
        else
            printf ("  %d;\n", r);
    }
    maxdeg = bgn_topo_max_degree (t);
    if (maxdeg < 1)
        maxdeg = 1;
    nb = calloc (maxdeg + 1, sizeof (*nb));
    for (int r = 0; r < size && nb; r++) {
        int n = bgn_topo_neighbours (t, r, nb, maxdeg + 1);
        for (int k = 0; k < n; k++) {
            if ((int)nb[k] <= r)
                continue;
            if (idset_test (down, r) || idset_test (down, nb[k]))
                printf ("  %d -- %u [style=dotted, color=gray75];\n", r,
                        (unsigned)nb[k]);
            else
                printf ("  %d -- %u;\n", r, (unsigned)nb[k]);
        }
    }
    json_array_foreach (subs, i, v) {
        int a = (int)json_integer_value (json_array_get (v, 0));
        int b = (int)json_integer_value (json_array_get (v, 1));
        printf ("  %d -- %d [style=dashed, color=blue, penwidth=2, "
                "tooltip=\"substitute\"];\n", a, b);
    }
    printf ("}\n");
    free (nb);
    json_decref (objs);
    json_decref (subs);
    idset_destroy (&down);
    idset_destroy (&missing);
    bgn_topo_destroy (&t);
    return 0;
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
    char *end;
    bgn_t *h;
    json_t *o = NULL, *everything = NULL;

    while ((c = getopt_long (argc, argv, "r:ajsdvw:t:h", longopts, NULL))
           != -1) {
        switch (c) {
        case 'r':
            errno = 0;
            rank = strtoul (optarg, &end, 10);
            if (errno || *end || end == optarg || *optarg == '-') {
                fprintf (stderr, "bgn %s: --rank: '%s' is not a rank\n", PROG,
                         optarg);
                return 1;
            }
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
        if (print_dot (o, everything) < 0)
            rc = 1;
    }
    else if (all)
        print_all (everything, down_only, color);
    else
        print_status (o, down_only, verbose, color);
done:
    json_decref (o);
    json_decref (everything);
    bgn_close (&h);
    return rc;
}
