/* overlay_view.c: the text views of "bgn overlay-status" (see
 * overlay_view.h).
 *
 * Kept apart from cmd_overlay.c so the command reads as options and
 * requests, and the layout of the tables lives in one place.  Everything
 * here only reads the status objects (schema: doc/overlay-status.md) and
 * prints to stdout.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "src/common/libutil/fsd.h"
#include "src/common/libutil/idset.h"
#include "overlay_view.h"

#define PROG "overlay-status"


/* The "down" idset string of a status object, malloc'd. */
char *overlay_down_idset (json_t *o)
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

/* Ages and durations: whole milliseconds below a second, then the
 * duration form ("1.5s", "90s", "5m"), never microseconds. */
static void fmt_dur (char *buf, size_t len, double s)
{
    if (s < 0 || !isfinite (s))
        snprintf (buf, len, "-");
    else if (s < 1.0)
        snprintf (buf, len, "%.0fms", s * 1e3);
    else if (fsd_format_duration (buf, len, round (s * 10) / 10) < 0)
        snprintf (buf, len, "-");
}

/* Round-trip times: always milliseconds, two decimals. */
static void fmt_rtt (char *buf, size_t len, double us)
{
    if (us < 0 || !isfinite (us))
        snprintf (buf, len, "-");
    else
        snprintf (buf, len, "%.2fms", us / 1e3);
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

/* Hostname of 'rank': from the host table, else as known from the peers
 * of status objects; NULL if unknown. */
static const char *host_of (json_t **objs, size_t n, int rank,
                            const hostmap_t *hm)
{
    if (hm && hostmap_host (hm, (uint32_t)rank))
        return hostmap_host (hm, (uint32_t)rank);
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

/* "down: 3,7-9 (4)", "down hosts: node[3,7-9]", then one line per down
 * rank with host and how long. */
static void print_down (json_t *o, json_t **hosts, size_t nhosts, int color,
                        const hostmap_t *hm)
{
    const char *dhosts = json_string_value (json_object_get (o,
                                                             "down_hosts"));
    json_t *down = json_object_get (o, "down_ranks");
    json_t *detail = json_object_get (o, "down_detail"), *v;
    char *ids = overlay_down_idset (o);
    const char *red = color ? "\033[31m" : "", *reset = color ? "\033[0m" : "";
    size_t i, j;

    if (!ids || !*ids) {
        printf ("down: none\n");
        free (ids);
        return;
    }
    printf ("down: %s%s%s (%zu)\n", red, ids, reset, json_array_size (down));
    if (dhosts && *dhosts)
        printf ("down hosts: %s%s%s\n", red, dhosts, reset);
    free (ids);
    json_array_foreach (down, i, v) {
        int r = (int)json_integer_value (v);
        const char *host = host_of (hosts, nhosts, r, hm), *reason = NULL;
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
                printf ("rank %d (%s) has %zu peer%s:\n", rank, host,
                        json_array_size (peers),
                        json_array_size (peers) == 1 ? "" : "s");
            printf ("  %5s %-12s %-10s %-3s %8s %8s %9s %9s %8s %8s %8s %5s",
                    "RANK", "HOST", "STATE", "SUB", "RTT", "HEARD", "TX-MSGS",
                    "RX-MSGS", "TX", "RX", "REROUTE", "TTL-X");
            if (verbose > 1)
                printf (" %8s %7s %7s %4s", "SINCE", "BACKLOG", "B-DROPS",
                        "CONN");
            printf ("\n");
        }
        if (rttj && json_is_number (rttj))
            rtt = json_number_value (rttj);
        fmt_rtt (rtts, sizeof (rtts), rtt);
        fmt_dur (heards, sizeof (heards), heard);
        fmt_dur (sinces, sizeof (sinces), since);
        fmt_bytes (txs, sizeof (txs), (double)txb);
        fmt_bytes (rxs, sizeof (rxs), (double)rxb);
        printf ("  %5d %-12.12s %s%-10s%s %-3s %8s %8s %9lld %9lld %8s %8s "
                "%8lld %5lld", prank, phost, color_for (pstate, color),
                pstate, reset, sub ? "yes" : "-", rtts, heards,
                (long long)txm, (long long)rxm, txs, rxs, (long long)rer,
                (long long)ttl);
        if (verbose > 1)
            printf (" %8s %7lld %7lld %4s", sinces, (long long)backlog,
                    (long long)bdrops, conn ? "out" : "in");
        printf ("\n");
    }
    if (down_only && shown == 0)
        printf ("rank %d (%s): all %zu peers up\n", rank, host,
                json_array_size (peers));
}

void overlay_view_status (json_t *o, int down_only, int verbose, int color,
                          const hostmap_t *hm)
{
    print_headline (o, color);
    print_down (o, &o, 1, color, hm);
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

void overlay_view_all (json_t *all, int down_only, int color,
                       const hostmap_t *hm)
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
        rv[r].host = host_of (objs, nobj, r, hm);

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
    print_down (root, objs, nobj, color, hm);

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
