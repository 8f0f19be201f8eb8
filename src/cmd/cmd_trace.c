/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* cmd_trace.c: "bgn overlay-trace": watch messages pass through a broker.
 *
 * Sends the streaming request overlay.trace to one broker (rank 0 unless
 * -r) with an optional type filter, topic glob and duration.  The broker
 * answers {"tracing": true} at once, then one response per message that
 * goes in (rx) or out (tx) of its overlay socket, and ends the stream with
 * ENODATA when the duration expires.  Each message becomes one line:
 *
 *   TIME            DIR PEER TYPE     TOPIC              SIZE HOPS SRC->DST
 *   19:27:54.123456 rx     3 request  broker.ping         312    1   3->0
 *
 * --json prints each response object as it came instead.  The trace's own
 * traffic is never traced.  Interrupting the command does not cancel the
 * trace at the broker: it ends there when the duration expires (the
 * responses to a client that has gone are dropped).
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <jansson.h>

#include "src/common/libutil/fsd.h"
#include "cmd.h"

#define PROG "overlay-trace"

static void usage (FILE *f)
{
    fprintf (f,
"Usage: bgn overlay-trace [OPTIONS] [TOPIC-GLOB]\n"
"Print one line per message through a broker's overlay: time, rx/tx, peer\n"
"rank, type, topic, size in bytes, hops (and source -> destination rank).\n"
"TOPIC-GLOB (fnmatch, e.g. 'broker.*') keeps only matching topics.\n"
"\n"
"  -r, --rank=R          trace rank R's broker, or host R's (default 0,\n"
"                        or bgn's own --rank)\n"
"      --types=LIST      comma-separated: request,response,event,control\n"
"                        (default all; control = the overlay's own\n"
"                        messages: hello, keepalive, fence, ...)\n"
"  -d, --duration=T      trace for T (default 60s, at most 1h)\n"
"  -c, --count=N         stop after N messages\n"
"  -j, --json            print each traced message as a JSON object\n"
"  -h, --help            this text\n");
}

static const char *known_types[] = { "request", "response", "event",
                                     "control" };

/* Parse "request,event" into a JSON array; -1 + EINVAL (message printed). */
static int parse_types (const char *s, json_t *a)
{
    char *copy = strdup (s), *tok, *save = NULL;
    int rc = 0;

    if (!copy)
        return -1;
    for (tok = strtok_r (copy, ",", &save); tok;
         tok = strtok_r (NULL, ",", &save)) {
        size_t i;
        for (i = 0; i < 4 && strcmp (tok, known_types[i]); i++)
            ;
        if (i == 4) {
            fprintf (stderr, "bgn %s: --types: '%s' is not a type (request, "
                     "response, event, control)\n", PROG, tok);
            errno = EINVAL;
            rc = -1;
            break;
        }
        json_array_append_new (a, json_string (tok));
    }
    if (rc == 0 && json_array_size (a) == 0) {
        fprintf (stderr, "bgn %s: --types: empty list\n", PROG);
        errno = EINVAL;
        rc = -1;
    }
    free (copy);
    return rc;
}

static void print_line (json_t *o)
{
    double t = 0;
    const char *dir = "?", *type = "?", *topic = "";
    int peer = -1, hops = 0, src = -1, dst = -1;
    json_int_t size = 0;
    char tbuf[32], tsbuf[48];
    time_t secs;
    struct tm tm;

    json_unpack (o, "{s?F s?s s?i s?s s?s s?I s?i s?i s?i}", "time", &t,
                 "dir", &dir, "peer", &peer, "type", &type, "topic", &topic,
                 "size", &size, "hops", &hops, "source", &src, "dest", &dst);
    secs = (time_t)floor (t);
    if (localtime_r (&secs, &tm) && strftime (tbuf, sizeof (tbuf), "%H:%M:%S",
                                              &tm) > 0)
        snprintf (tsbuf, sizeof (tsbuf), "%s.%06d", tbuf,
                  (int)((t - floor (t)) * 1e6));
    else
        snprintf (tsbuf, sizeof (tsbuf), "%.6f", t);
    printf ("%s %-2s %4d %-9s %-24s %6lld %4d %4d->%d\n", tsbuf, dir, peer,
            type, *topic ? topic : "-", (long long)size, hops, src, dst);
    fflush (stdout);
}

int cmd_overlay_trace (int argc, char **argv)
{
    static const struct option longopts[] = {
        { "rank", required_argument, NULL, 'r' },
        { "types", required_argument, NULL, 'T' },
        { "type", required_argument, NULL, 'T' },   /* Flux's spelling */
        { "duration", required_argument, NULL, 'd' },
        { "count", required_argument, NULL, 'c' },
        { "json", no_argument, NULL, 'j' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *own = cmd_default_rank ();
    uint32_t rank = own ? cmd_rank_arg (PROG, "--rank", own, NULL) : 0;
    int c, json = 0, rc = 1;
    long count = -1, seen = 0;
    double duration = 60;
    char *end, *payload = NULL, what[64];
    const char *rsp;
    json_t *req, *types = json_array ();
    bgn_t *h;
    bgn_rpc_t *rpc = NULL;

    while ((c = getopt_long (argc, argv, ":r:d:c:jh", longopts, NULL))
           != -1) {
        switch (c) {
        case 'r':
            rank = cmd_rank_arg (PROG, "--rank", optarg, NULL);
            break;
        case 'T':
            if (parse_types (optarg, types) < 0)
                goto out;
            break;
        case 'd':
            if (fsd_parse_duration (optarg, &duration) < 0
                || !(duration > 0) || duration > 3600) {
                fprintf (stderr, "bgn %s: --duration: '%s' is not a duration "
                         "between 0 and 1h\n", PROG, optarg);
                goto out;
            }
            break;
        case 'c':
            errno = 0;
            count = strtol (optarg, &end, 10);
            if (errno || *end || end == optarg || count <= 0) {
                fprintf (stderr, "bgn %s: --count: '%s' is not a positive "
                         "number\n", PROG, optarg);
                goto out;
            }
            break;
        case 'j': json = 1; break;
        case 'h': usage (stdout); rc = 0; goto out;
        default: rc = cmd_bad_option (PROG, argv, c); goto out;
        }
    }
    if (argc - optind > 1)
        cmd_usage_die (PROG, "one TOPIC-GLOB at most");
    req = json_pack ("{s:f}", "duration", duration);
    if (json_array_size (types) > 0)
        json_object_set (req, "types", types);
    if (optind < argc)
        json_object_set_new (req, "topic", json_string (argv[optind]));
    payload = req ? json_dumps (req, JSON_COMPACT) : NULL;
    json_decref (req);
    if (!payload) {
        fprintf (stderr, "bgn %s: out of memory\n", PROG);
        goto out;
    }

    h = cmd_open (PROG);
    snprintf (what, sizeof (what), "overlay.trace to rank %u",
              (unsigned)rank);
    if (!(rpc = bgn_rpc (h, "overlay.trace", rank, payload,
                         MSGFLAG_STREAMING))) {
        cmd_rpc_error (PROG, what, NULL);
        goto close;
    }
    /* the first answer says the trace is on */
    if (bgn_rpc_get (rpc, &rsp) < 0) {
        if (errno == ECONNRESET)
            cmd_broker_gone (PROG, h, "before the trace started");
        else
            cmd_rpc_error (PROG, what, rpc);
        goto close;
    }
    if (!json) {
        fprintf (stderr, "bgn %s: tracing rank %u for %gs\n", PROG,
                 (unsigned)rank, duration);
        printf ("%-15s %-2s %4s %-9s %-24s %6s %4s %s\n", "TIME", "DIR",
                "PEER", "TYPE", "TOPIC", "SIZE", "HOPS", "SRC->DST");
        fflush (stdout);
    }
    /* then one per message, until ENODATA at the end of the duration */
    bgn_rpc_set_timeout (rpc, duration + 10);
    for (;;) {
        json_t *o;
        bgn_rpc_next (rpc);
        if (bgn_rpc_get (rpc, &rsp) < 0) {
            if (errno == ENODATA)
                rc = 0;
            else if (errno == ECONNRESET)
                cmd_broker_gone (PROG, h, "after %ld messages traced",
                                 (long)seen);
            else
                cmd_rpc_error (PROG, what, rpc);
            break;
        }
        if (!rsp || !(o = json_loads (rsp, 0, NULL))) {
            fprintf (stderr, "bgn %s: a trace record is not JSON\n", PROG);
            continue;
        }
        if (json) {
            cmd_print_json_ex (o, 1);
            fflush (stdout);
        }
        else
            print_line (o);
        json_decref (o);
        if (++seen >= count && count > 0) {
            rc = 0;
            break;
        }
    }
close:
    bgn_rpc_destroy (&rpc);
    bgn_close (&h);
out:
    free (payload);
    json_decref (types);
    return rc;
}
