/* cmd_overlay.c: "bgn overlay-status": what the overlay looks like now.
 *
 * Asks one broker (rank 0 unless -r) for overlay.status and prints the
 * instance health, the down ranks and that broker's peers.  --json prints
 * the status object itself (the schema is in bgn-overlay-status(1));
 * --summary prints only the health word; --wait blocks until the health
 * is the one asked for, for scripts and tests.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>

#include "src/common/libutil/fsd.h"
#include "src/common/libutil/idset.h"
#include "cmd.h"

static void usage (FILE *f)
{
    fprintf (f,
"Usage: bgn overlay-status [OPTIONS]\n"
"Show the overlay as one broker sees it: instance health (full, partial,\n"
"degraded, partitioned), size, topology, down ranks, and its peers.\n"
"\n"
"  -r, --rank=R          ask rank R (default 0)\n"
"  -j, --json            print the status as JSON\n"
"  -s, --summary         print only the health word\n"
"  -d, --down            list only peers that are not up\n"
"  -w, --wait=STATE      wait until the health is STATE (exit 0), or the\n"
"                        timeout passes (exit 1, current state printed)\n"
"  -t, --timeout=T       deadline for the answer, or for --wait\n"
"                        (default 10s)\n"
"      --color=WHEN      auto, always or never (default auto)\n"
"  -h, --help            this text\n");
}

static double now_seconds (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static json_t *get_status (bgn_t *h, uint32_t rank, double timeout)
{
    bgn_rpc_t *rpc;
    const char *payload;
    json_t *o = NULL;

    bgn_set_timeout (h, timeout);
    if ((rpc = bgn_rpc (h, "overlay.status", rank, NULL, 0))
        && bgn_rpc_get (rpc, &payload) == 0 && payload)
        o = json_loads (payload, 0, NULL);
    else if (!rpc || errno != ETIMEDOUT || timeout > 1.0) {
        const char *es = rpc ? bgn_rpc_error (rpc) : NULL;
        fprintf (stderr, "bgn overlay-status: rank %u: %s%s%s%s\n",
                 (unsigned)rank, strerror (errno), es ? " (" : "",
                 es ? es : "", es ? ")" : "");
    }
    bgn_rpc_destroy (&rpc);
    return o;
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

static void print_status (json_t *o, int down_only, int color)
{
    const char *state = "?", *topo = "?", *host = "";
    int rank = 0, size = 0, diameter = 0;
    json_t *down = NULL, *peers = NULL, *v;
    size_t i;
    idset_t *ids = idset_create (0);
    const char *reset = color ? "\033[0m" : "";

    json_unpack (o, "{s:i s:i s:s s:s s:i s:o s:o s?s}", "rank", &rank,
                 "size", &size, "state", &state, "topology", &topo,
                 "diameter", &diameter, "down_ranks", &down, "peers", &peers,
                 "hostname", &host);
    printf ("overlay %s%s%s: size %d, topology %s, diameter %d\n",
            color_for (state, color), state, reset, size, topo, diameter);
    json_array_foreach (down, i, v)
        idset_set (ids, json_integer_value (v));
    if (ids && idset_count (ids) > 0) {
        char *s = idset_encode (ids, 0);
        printf ("down: %s (%zu)\n", s ? s : "?", json_array_size (down));
        free (s);
    }
    else
        printf ("down: none\n");
    idset_destroy (&ids);
    printf ("rank %d (%s) has %zu peers:\n", rank, host, json_array_size (peers));
    printf ("  %5s %-12s %-10s %8s %8s %9s %9s %8s %8s %8s %5s\n", "RANK",
            "HOST", "STATE", "RTT", "HEARD", "TX-MSGS", "RX-MSGS", "TX",
            "RX", "REROUTE", "TTL-X");
    json_array_foreach (peers, i, v) {
        int prank = 0;
        const char *pstate = "?", *phost = "";
        json_int_t txm = 0, rxm = 0, txb = 0, rxb = 0, rer = 0, ttl = 0;
        double heard = -1, rtt = -1;
        json_t *rttj = NULL;
        char rtts[16], heards[16], txs[16], rxs[16];

        json_unpack (v, "{s:i s:s s?s s:I s:I s:I s:I s:I s:I s?F s?o}",
                     "rank", &prank, "state", &pstate, "hostname", &phost,
                     "tx_msgs", &txm, "rx_msgs", &rxm, "tx_bytes", &txb,
                     "rx_bytes", &rxb, "reroutes", &rer, "ttl_drops", &ttl,
                     "last_heard", &heard, "rtt_us", &rttj);
        if (down_only && !strcmp (pstate, "up"))
            continue;
        if (rttj && json_is_number (rttj))
            rtt = json_number_value (rttj);
        if (rtt >= 0)
            snprintf (rtts, sizeof (rtts), "%.0fus", rtt);
        else
            snprintf (rtts, sizeof (rtts), "-");
        if (heard < 0 || fsd_format_duration (heards, sizeof (heards), heard) < 0)
            snprintf (heards, sizeof (heards), "-");
        fmt_bytes (txs, sizeof (txs), (double)txb);
        fmt_bytes (rxs, sizeof (rxs), (double)rxb);
        printf ("  %5d %-12.12s %s%-10s%s %8s %8s %9lld %9lld %8s %8s %8lld "
                "%5lld\n", prank, phost, color_for (pstate, color), pstate,
                reset, rtts, heards, (long long)txm, (long long)rxm, txs, rxs,
                (long long)rer, (long long)ttl);
    }
}

int cmd_overlay_status (int argc, char **argv)
{
    static const struct option longopts[] = {
        { "rank", required_argument, NULL, 'r' },
        { "json", no_argument, NULL, 'j' },
        { "summary", no_argument, NULL, 's' },
        { "down", no_argument, NULL, 'd' },
        { "wait", required_argument, NULL, 'w' },
        { "timeout", required_argument, NULL, 't' },
        { "color", required_argument, NULL, 'C' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    uint32_t rank = 0;
    int c, json = 0, summary = 0, down_only = 0, color = -1, rc = 1;
    const char *wait = NULL;
    double timeout = 10.;
    char *end;
    bgn_t *h;
    json_t *o = NULL;

    while ((c = getopt_long (argc, argv, "r:jsdw:t:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'r':
            errno = 0;
            rank = strtoul (optarg, &end, 10);
            if (errno || *end || end == optarg) {
                fprintf (stderr, "bgn overlay-status: --rank: '%s' is not a "
                         "rank\n", optarg);
                return 1;
            }
            break;
        case 'j': json = 1; break;
        case 's': summary = 1; break;
        case 'd': down_only = 1; break;
        case 'w':
            wait = optarg;
            if (strcmp (wait, "full") && strcmp (wait, "partial")
                && strcmp (wait, "degraded") && strcmp (wait, "partitioned")) {
                fprintf (stderr, "bgn overlay-status: --wait: '%s' is not a "
                         "state (full, partial, degraded, partitioned)\n", wait);
                return 1;
            }
            break;
        case 't':
            if (fsd_parse_duration (optarg, &timeout) < 0 || !(timeout > 0)) {
                fprintf (stderr, "bgn overlay-status: --timeout: '%s' is not a "
                         "duration\n", optarg);
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
                fprintf (stderr, "bgn overlay-status: --color: use auto, "
                         "always or never\n");
                return 1;
            }
            break;
        case 'h': usage (stdout); return 0;
        default: usage (stderr); return 1;
        }
    }
    if (optind < argc) {
        usage (stderr);
        return 1;
    }
    if (color < 0)
        color = isatty (STDOUT_FILENO);
    h = cmd_open ("overlay-status");
    if (wait) {
        double deadline = now_seconds () + timeout;
        const char *state = "unknown";
        for (;;) {
            double left = deadline - now_seconds ();
            json_decref (o);
            o = get_status (h, rank, left < 1.0 ? (left > 0.05 ? left : 0.05)
                                                : 1.0);
            state = "unknown";
            if (o)
                json_unpack (o, "{s:s}", "state", &state);
            if (!strcmp (state, wait)) {
                rc = 0;
                break;
            }
            if (now_seconds () >= deadline) {
                fprintf (stderr, "bgn overlay-status: still %s after %gs "
                         "(waited for %s)\n", state, timeout, wait);
                printf ("%s\n", state);
                goto done;
            }
            usleep (50000);
        }
        if (summary)
            printf ("%s\n", state);
        goto done;
    }
    if (!(o = get_status (h, rank, timeout)))
        goto done;
    rc = 0;
    if (json) {
        char *s = json_dumps (o, JSON_INDENT (2) | JSON_SORT_KEYS);
        printf ("%s\n", s ? s : "{}");
        free (s);
    }
    else if (summary) {
        const char *state = "unknown";
        json_unpack (o, "{s:s}", "state", &state);
        printf ("%s\n", state);
    }
    else
        print_status (o, down_only, color);
done:
    json_decref (o);
    bgn_close (&h);
    return rc;
}
