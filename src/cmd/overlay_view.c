/* SPDX-License-Identifier: LGPL-3.0-or-later */
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
        json_t *problem = NULL, *powerless = NULL;
        json_int_t refuted = 0;
        json_int_t txm = 0, rxm = 0, txb = 0, rxb = 0, rer = 0, ttl = 0;
        json_int_t backlog = 0, bdrops = 0;
        double heard = -1, since = -1, rtt = -1;
        json_t *rttj = NULL;
        char rtts[16], heards[16], txs[16], rxs[16], sinces[16];

        json_unpack (v, "{s:i s:s s?s s?I s?I s?I s?I s?I s?I s?F s?F s?o "
                     "s?b s?b s?I s?I s?o s?I s?o}",
                     "rank", &prank, "state", &pstate, "hostname", &phost,
                     "tx_msgs", &txm, "rx_msgs", &rxm, "tx_bytes", &txb,
                     "rx_bytes", &rxb, "reroutes", &rer, "ttl_drops", &ttl,
                     "last_heard", &heard, "state_since", &since,
                     "rtt_us", &rttj, "substitute", &sub, "connector", &conn,
                     "backlog", &backlog, "backlog_drops", &bdrops,
                     "problem", &problem, "fences_refuted", &refuted,
                     "fence_power_back_in", &powerless);
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
        if (json_is_string (problem) && strcmp (pstate, "up") != 0)
            printf ("        %s\n", json_string_value (problem));
        if (json_is_number (powerless))
            printf ("        %lld of its fences refuted: they are ignored "
                    "for %.0fs more\n", (long long)refuted,
                    json_number_value (powerless));
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

/* "down: 5,11 (2)" for an idset string, with its hosts when known. */
static void print_set_line (const char *label, const char *ids,
                            const char *red, const char *reset,
                            const hostmap_t *hm)
{
    idset_t *s = idset_decode (ids ? ids : "", NULL, 0);
    char *hosts = s && hm ? hostmap_hostlist (hm, s) : NULL;

    printf ("%s: %s%s%s (%zu)", label, red, ids, reset,
            s ? idset_count (s) : (size_t)0);
    if (hosts && *hosts)
        printf (" hosts %s", hosts);
    printf ("\n");
    free (hosts);
    idset_destroy (&s);
}

static void print_problem (json_t *p, int color, const hostmap_t *hm)
{
    const char *host = NULL, *state = "?";
    int rank = -1, peers = 0, up = 0;
    const char *reset = color ? "\033[0m" : "";
    json_t *v;
    size_t i;

    json_unpack (p, "{s?i s?s s?s s?i s?i}", "rank", &rank, "hostname",
                 &host, "state", &state, "peers", &peers, "peers_up", &up);
    if ((!host || !*host) && hm)
        host = hostmap_host (hm, (uint32_t)rank);
    printf ("  %5d %-12.12s %s%-11s%s %2d/%-2d ", rank, host ? host : "?",
            color_for (state, color), state, reset, up, peers);
    json_array_foreach (json_object_get (p, "not_up"), i, v) {
        const char *ps = "?";
        int pr = -1;
        double secs = -1;
        char dur[32];
        json_unpack (v, "{s?i s?s s?F}", "rank", &pr, "state", &ps,
                     "seconds", &secs);
        fmt_dur (dur, sizeof (dur), secs);
        printf ("%s%d %s %s", i ? ", " : "", pr, ps, dur);
    }
    printf ("\n");
}

void overlay_view_all (json_t *all, json_t *root, int down_only, int color,
                       const hostmap_t *hm)
{
    const char *any = "", *every = "", *missing = "", *k;
    int brokers = 0, size = 0, omitted = 0;
    json_t *health = json_object_get (all, "health");
    json_t *problems = json_object_get (all, "problems");
    json_t *c = json_object_get (all, "counters"), *v;
    const char *red = color ? "\033[31m" : "", *reset = color ? "\033[0m" : "";
    const char *hl = color ? "\033[1;31m" : "";
    idset_t *sa, *se;
    size_t i;

    json_unpack (all, "{s?i s?i s?s s?s s?s s?i}", "brokers", &brokers,
                 "size", &size, "down_any", &any, "down_all", &every,
                 "missing", &missing, "problems_omitted", &omitted);
    print_headline (root, color);
    printf ("answered: %d of %d brokers; no answer: %s\n", brokers, size,
            *missing ? missing : "none");
    printf ("health as each broker sees it:");
    json_object_foreach (health, k, v)
        printf (" %s %lld", k, (long long)json_integer_value (v));
    printf ("\n");
    if (*every)
        print_set_line ("down (as every broker sees it)", every, red, reset,
                        hm);
    else if (!*any)
        printf ("down: none\n");
    sa = idset_decode (any, NULL, 0);
    se = idset_decode (every, NULL, 0);
    if (sa && se) {
        idset_t *some = idset_create (0);
        for (int r = idset_first (sa); some && r >= 0; r = idset_next (sa, r))
            if (!idset_test (se, (unsigned)r))
                idset_set (some, (unsigned)r);
        char *s = some && idset_count (some) ? idset_encode (some, 0) : NULL;
        if (s)
            print_set_line ("down as some brokers see it", s, hl, reset, hm);
        free (s);
        idset_destroy (&some);
    }
    if (json_array_size (problems) > 0) {
        printf ("brokers with a problem (%zu%s):\n",
                json_array_size (problems) + (size_t)omitted,
                omitted ? ", first listed" : "");
        printf ("  %5s %-12s %-11s %5s %s\n", "RANK", "HOST", "OWN",
                "UP", "PEERS NOT UP (rank state for)");
        json_array_foreach (problems, i, v)
            print_problem (v, color, hm);
        if (omitted)
            printf ("  ... and %d more\n", omitted);
    }
    else if (down_only)
        printf ("no problems: every broker that answered sees all its live "
                "peers up\n");
    if (!down_only && json_is_object (c)) {
        char tx[16], rx[16];
        json_int_t txb = json_integer_value (json_object_get (c, "tx_bytes"));
        json_int_t rxb = json_integer_value (json_object_get (c, "rx_bytes"));
        fmt_bytes (tx, sizeof (tx), (double)txb);
        fmt_bytes (rx, sizeof (rx), (double)rxb);
        printf ("total: tx %lld msgs %s, rx %lld msgs %s, forwarded %lld, "
                "delivered %lld, reroutes %lld, ttl drops %lld\n",
                (long long)json_integer_value (json_object_get (c, "tx_msgs")),
                tx,
                (long long)json_integer_value (json_object_get (c, "rx_msgs")),
                rx,
                (long long)json_integer_value (json_object_get (c,
                                                                "forwarded")),
                (long long)json_integer_value (json_object_get (c,
                                                                "delivered")),
                (long long)json_integer_value (json_object_get (c,
                                                                "reroutes")),
                (long long)json_integer_value (json_object_get (c,
                                                                "ttl_drops")));
    }
    if (sa && se && idset_count (sa) != idset_count (se))
        printf ("%sbrokers disagree on the down ranks%s\n", hl, reset);
    else
        printf ("all brokers agree\n");
    idset_destroy (&sa);
    idset_destroy (&se);
}
