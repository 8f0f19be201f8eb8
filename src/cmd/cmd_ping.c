/* cmd_ping.c: "bgn ping": echo requests to a rank or a service.
 *
 * A numeric TARGET sends broker.ping to that rank; a name sends
 * NAME.ping to whichever broker has the service (nodeid ANY), which tests
 * service-addressed routing.  Each reply line gives the responder, the
 * overlay hops the request took and the round-trip time.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <jansson.h>

#include "src/common/libutil/fsd.h"
#include "cmd.h"
#include "rankarg.h"
#include "src/common/libutil/monotime.h"

static void usage (FILE *f)
{
    fprintf (f,
"Usage: bgn ping [OPTIONS] TARGET\n"
"Send echo requests to TARGET, a rank or a service name, and print one\n"
"line per reply: responder rank, sequence, overlay hops, round-trip time.\n"
"\n"
"  -c, --count=N       send N requests (default 1; 0 = until interrupted)\n"
"  -i, --interval=T    wait T between requests (default 1s; e.g. 100ms)\n"
"  -t, --timeout=T     deadline for each reply (default 10s)\n"
"  -p, --pad=N         add N bytes of padding to each request\n"
"  -r, --route         also print the route stack of each reply\n"
"  -h, --help          this text\n"
"\n"
"Exit status: 0 if every request was answered, 1 otherwise.\n");
}

static int parse_target (const char *s, uint32_t *nodeid, char *topic,
                         size_t len)
{
    if (*s >= '0' && *s <= '9') {
        if (rankarg_one (s, NULL, nodeid, NULL, 0) < 0)
            return -1;
        snprintf (topic, len, "broker.ping");
        return 0;
    }
    if (!*s || strchr (s, '.') || strlen (s) > 60)
        return -1;
    *nodeid = NODEID_ANY;
    snprintf (topic, len, "%s.ping", s);
    return 0;
}

static int parse_duration_opt (const char *opt, const char *s, double *out)
{
    if (fsd_parse_duration (s, out) < 0) {
        fprintf (stderr, "bgn ping: --%s: '%s' is not a duration "
                 "(e.g. 250ms, 2s)\n", opt, s);
        return -1;
    }
    return 0;
}

static void print_reply (const char *payload, int seq, double ms, int route)
{
    json_t *o = payload ? json_loads (payload, 0, NULL) : NULL;
    json_int_t rank = -1, hops = -1;
    json_t *r = NULL;

    if (o)
        json_unpack (o, "{s?I s?I s?o}", "rank", &rank, "hops", &hops,
                     "route", &r);
    printf ("reply from rank %lld: seq=%d hops=%lld time=%.3f ms\n",
            (long long)rank, seq, (long long)hops, ms);
    if (route && r) {
        char *s = json_dumps (r, JSON_COMPACT);
        printf ("  route: %s\n", s ? s : "?");
        free (s);
    }
    json_decref (o);
}

int cmd_ping (int argc, char **argv)
{
    static const struct option longopts[] = {
        { "count", required_argument, NULL, 'c' },
        { "interval", required_argument, NULL, 'i' },
        { "timeout", required_argument, NULL, 't' },
        { "pad", required_argument, NULL, 'p' },
        { "route", no_argument, NULL, 'r' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    long count = 1, pad = 0;
    double interval = 1., timeout = -1;
    int c, route = 0, received = 0, sent = 0;
    double min = INFINITY, max = 0, sum = 0;
    uint32_t nodeid;
    char topic[80], *end, *padding = NULL;
    bgn_t *h;

    while ((c = getopt_long (argc, argv, "c:i:t:p:rh", longopts, NULL)) != -1) {
        switch (c) {
        case 'c':
            count = strtol (optarg, &end, 10);
            if (*end || count < 0) {
                fprintf (stderr, "bgn ping: --count: '%s' is not a count\n",
                         optarg);
                return 1;
            }
            break;
        case 'i':
            if (parse_duration_opt ("interval", optarg, &interval) < 0)
                return 1;
            break;
        case 't':
            if (parse_duration_opt ("timeout", optarg, &timeout) < 0
                || !(timeout > 0)) {
                if (timeout == 0)
                    fprintf (stderr, "bgn ping: --timeout must be > 0\n");
                return 1;
            }
            break;
        case 'p':
            pad = strtol (optarg, &end, 10);
            if (*end || pad < 0 || pad > 1 << 20) {
                fprintf (stderr, "bgn ping: --pad: '%s' is not a size "
                         "(0..1048576)\n", optarg);
                return 1;
            }
            break;
        case 'r': route = 1; break;
        case 'h': usage (stdout); return 0;
        default: usage (stderr); return 1;
        }
    }
    if (optind != argc - 1) {
        usage (stderr);
        return 1;
    }
    if (parse_target (argv[optind], &nodeid, topic, sizeof (topic)) < 0) {
        fprintf (stderr, "bgn ping: '%s' is not a rank or a service name\n",
                 argv[optind]);
        return 1;
    }
    h = cmd_open ("ping");
    if (timeout > 0)
        bgn_set_timeout (h, timeout);
    if (pad && (padding = malloc (pad + 1))) {
        memset (padding, 'p', pad);
        padding[pad] = '\0';
    }
    for (long seq = 0; count == 0 || seq < count; seq++) {
        json_t *o = json_pack ("{s:i}", "seq", (int)seq);
        char *payload;
        const char *rsp;
        bgn_rpc_t *rpc;
        double t0;

        if (padding)
            json_object_set_new (o, "pad", json_string (padding));
        payload = json_dumps (o, JSON_COMPACT);
        json_decref (o);
        if (seq > 0 && interval > 0) {
            struct timespec ts = { (time_t)interval,
                                   (long)((interval - floor (interval)) * 1e9) };
            nanosleep (&ts, NULL);
        }
        t0 = monotime_now ();
        sent++;
        rpc = bgn_rpc (h, topic, nodeid, payload, 0);
        free (payload);
        if (rpc && bgn_rpc_get (rpc, &rsp) == 0) {
            double ms = (monotime_now () - t0) * 1e3;
            print_reply (rsp, (int)seq, ms, route);
            received++;
            sum += ms;
            if (ms < min)
                min = ms;
            if (ms > max)
                max = ms;
        }
        else {
            const char *es = rpc ? bgn_rpc_error (rpc) : NULL;
            fprintf (stderr, "bgn ping: %s: seq=%d: %s%s%s%s\n", argv[optind],
                     (int)seq, strerror (errno), es ? " (" : "",
                     es ? es : "", es ? ")" : "");
        }
        bgn_rpc_destroy (&rpc);
        fflush (stdout);
    }
    printf ("--- %s ping statistics ---\n", argv[optind]);
    printf ("%d sent, %d received, %.0f%% lost", sent, received,
            sent ? 100. * (sent - received) / sent : 0.);
    if (received)
        printf ("; time min/avg/max = %.3f/%.3f/%.3f ms", min, sum / received,
                max);
    printf ("\n");
    free (padding);
    bgn_close (&h);
    return received == sent ? 0 : 1;
}
