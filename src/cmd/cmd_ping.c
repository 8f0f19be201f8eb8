/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* cmd_ping.c: "bgn ping": echo requests to a rank, a host or a service.
 *
 * A rank or a host name as TARGET sends broker.ping to that broker; any
 * other name sends NAME.ping to whichever broker has the service
 * (nodeid ANY, or the rank given with --rank), which tests
 * service-addressed routing.  Each reply line gives the responder, the
 * overlay hops the request took and the round-trip time; --route adds the
 * ranks it crossed (ping_route.c).  The summary is printed at the end,
 * also when interrupted (SIGINT/SIGTERM).
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <jansson.h>

#include "src/common/libutil/fsd.h"
#include "src/common/libutil/monotime.h"
#include "cmd.h"
#include "rankarg.h"
#include "ping_route.h"

#define PROG "ping"

static volatile sig_atomic_t interrupted;

static void usage (FILE *f)
{
    fprintf (f,
"Usage: bgn ping [OPTIONS] TARGET\n"
"Send echo requests to TARGET and print one line per reply: responder\n"
"rank, sequence, overlay hops, round-trip time.  TARGET is a rank, a host\n"
"name (the broker running on it), or a service name (SERVICE.ping goes to\n"
"the nearest broker with that service).\n"
"\n"
"  -r, --rank=R        send to rank (or host) R; TARGET is then a service\n"
"  -c, --count=N       send N requests (default 1; 0 = until interrupted)\n"
"  -i, --interval=T    wait T between requests (default 1s; e.g. 100ms)\n"
"  -t, --timeout=T     deadline for each reply (default 10s; 0 = none)\n"
"  -p, --pad=N         add N bytes of padding to each request\n"
"      --route         also print the ranks each request crossed\n"
"  -h, --help          this text\n"
"\n"
"Exit status: 0 if every request was answered, 1 otherwise.\n");
}

static void on_signal (int sig)
{
    interrupted = 1;
}

/* SIGINT/SIGTERM end the loop (and interrupt a wait) so the summary is
 * printed; no SA_RESTART, so a sleep or poll returns at once. */
static void catch_signals (void)
{
    struct sigaction sa = { .sa_handler = on_signal };
    sigemptyset (&sa.sa_mask);
    sigaction (SIGINT, &sa, NULL);
    sigaction (SIGTERM, &sa, NULL);
}

static int service_name_ok (const char *s)
{
    return ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z'))
           && strlen (s) <= 60
           && strspn (s, "abcdefghijklmnopqrstuvwxyz"
                         "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")
              == strlen (s);
}

/* TARGET -> nodeid and topic.  A name is a host if the host table knows
 * it, else a service. */
static void parse_target (const char *s, const char *rank_opt, bgn_t *h,
                          uint32_t *nodeid, char *topic, size_t len)
{
    hostmap_t *hm;
    idset_t *ids;

    if (rank_opt) {
        if (!service_name_ok (s))
            cmd_die (PROG, "'%s' is not a service name", s);
        *nodeid = cmd_rank_arg (PROG, "--rank", rank_opt, h);
        snprintf (topic, len, "%s.ping", s);
        return;
    }
    if ((*s >= '0' && *s <= '9') || *s == '-') {
        *nodeid = cmd_rank_arg (PROG, NULL, s, h);
        snprintf (topic, len, "broker.ping");
        return;
    }
    if ((hm = cmd_hostmap (h, PROG, 1))
        && (ids = idset_create (0))) {
        int n = hostmap_ranks (hm, s, ids);
        idset_destroy (&ids);
        if (n > 0) {
            *nodeid = cmd_rank_arg (PROG, NULL, s, h);
            snprintf (topic, len, "broker.ping");
            return;
        }
    }
    if (!service_name_ok (s))
        cmd_die (PROG, "'%s' is not a rank, a host of this instance or a "
                 "service name", s);
    *nodeid = NODEID_ANY;
    snprintf (topic, len, "%s.ping", s);
}

static double duration_arg (const char *opt, const char *s)
{
    double d;
    if (fsd_parse_duration (s, &d) < 0)
        cmd_die (PROG, "%s: '%s' is not a duration (e.g. 250ms, 2s)", opt, s);
    return d;
}

/* The reply line; with --route also the ranks crossed and the route
 * stack the responder saw (bottom first: the client, then the origin
 * broker's rank), which is what its response was routed by. */
static void print_reply (const char *payload, int seq, double ms,
                         const char *route)
{
    json_t *o = payload ? json_loads (payload, 0, NULL) : NULL;
    json_int_t rank = -1, hops = -1;
    json_t *stack = NULL;

    if (o)
        json_unpack (o, "{s?I s?I s?o}", "rank", &rank, "hops", &hops,
                     "route", &stack);
    printf ("reply from rank %lld: seq=%d hops=%lld time=%.3f ms\n",
            (long long)rank, seq, (long long)hops, ms);
    if (route) {
        char *s = stack ? json_dumps (stack, JSON_COMPACT) : NULL;
        printf ("  route: %s\n", route);
        printf ("  route stack: %s\n", s ? s : "?");
        free (s);
    }
    json_decref (o);
}

/* A failed request: say what the error means for a ping. */
static void print_failure (const char *target, const char *topic,
                           uint32_t nodeid, int seq, bgn_rpc_t *rpc)
{
    char what[128];
    const char *es = rpc ? bgn_rpc_error (rpc) : NULL;

    snprintf (what, sizeof (what), "%s: seq=%d", target, seq);
    if (errno == ENOSYS && (!es || !*es)) {
        int len = (int)(strchr (topic, '.') - topic);
        fprintf (stderr, "bgn %s: %s: %s (unknown service '%.*s'%s)\n", PROG,
                 what, strerror (errno), len, topic,
                 nodeid == NODEID_ANY ? ": no broker on the way to rank 0 "
                                        "has it" : "");
        return;
    }
    cmd_rpc_error (PROG, what, rpc);
}

struct stats {
    int sent, received;
    double min, max, sum;
};

static void print_summary (const char *target, struct stats *st)
{
    printf ("--- %s ping statistics ---\n", target);
    printf ("%d sent, %d received, %.0f%% lost", st->sent, st->received,
            st->sent ? 100. * (st->sent - st->received) / st->sent : 0.);
    if (st->received)
        printf ("; time min/avg/max = %.3f/%.3f/%.3f ms", st->min,
                st->sum / st->received, st->max);
    printf ("\n");
}

static void sleep_seconds (double s)
{
    struct timespec ts = { (time_t)s, (long)((s - floor (s)) * 1e9) };
    nanosleep (&ts, NULL);   /* EINTR on a signal: fine */
}

int cmd_ping (int argc, char **argv)
{
    static const struct option longopts[] = {
        { "rank", required_argument, NULL, 'r' },
        { "count", required_argument, NULL, 'c' },
        { "interval", required_argument, NULL, 'i' },
        { "timeout", required_argument, NULL, 't' },
        { "pad", required_argument, NULL, 'p' },
        { "route", no_argument, NULL, 'R' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    long count = 1, pad = 0;
    double interval = 1., timeout = -1;
    int c, route = 0;
    struct stats st = { .min = INFINITY };
    uint32_t nodeid;
    const char *rank_opt = NULL, *target;
    char topic[80], *end, *padding = NULL;
    struct route_probe *probe = NULL;
    bgn_t *h;

    while ((c = getopt_long (argc, argv, ":r:c:i:t:p:h", longopts,
                             NULL)) != -1) {
        switch (c) {
        case 'r': rank_opt = optarg; break;
        case 'c':
            errno = 0;
            count = strtol (optarg, &end, 10);
            if (errno || *end || end == optarg || count < 0)
                cmd_die (PROG, "--count: '%s' is not a count", optarg);
            break;
        case 'i': interval = duration_arg ("--interval", optarg); break;
        case 't': timeout = cmd_timeout_arg (PROG, "--timeout", optarg); break;
        case 'p':
            errno = 0;
            pad = strtol (optarg, &end, 10);
            if (errno || *end || end == optarg || pad < 0 || pad > 1 << 20)
                cmd_die (PROG, "--pad: '%s' is not a size (0..1048576)",
                         optarg);
            break;
        case 'R': route = 1; break;
        case 'h': usage (stdout); return 0;
        default:
            /* "bgn ping -1": a negative rank, not an option */
            if (c == '?' && optopt >= '0' && optopt <= '9')
                cmd_die (PROG, "'%s' is not a rank", argv[optind - 1]);
            return cmd_bad_option (PROG, argv, c);
        }
    }
    if (optind == argc)
        cmd_usage_die (PROG, "which TARGET?");
    if (optind != argc - 1)
        cmd_usage_die (PROG, "give one TARGET, not %d", argc - optind);
    target = argv[optind];
    h = cmd_open (PROG);
    parse_target (target, rank_opt, h, &nodeid, topic, sizeof (topic));
    if (timeout > 0)
        bgn_set_timeout (h, timeout);
    if (route && !(probe = route_probe_create (h, PROG)))
        return 1;
    if (pad && (padding = malloc (pad + 1))) {
        memset (padding, 'p', pad);
        padding[pad] = '\0';
    }
    catch_signals ();
    for (long seq = 0; (count == 0 || seq < count) && !interrupted; seq++) {
        json_t *o = json_pack ("{s:i}", "seq", (int)seq);
        char *payload, path[256] = "";
        const char *rsp;
        bgn_rpc_t *rpc;
        double t0;

        if (padding)
            json_object_set_new (o, "pad", json_string (padding));
        payload = json_dumps (o, JSON_COMPACT);
        json_decref (o);
        if (seq > 0 && interval > 0)
            sleep_seconds (interval);
        if (interrupted) {
            free (payload);
            break;
        }
        if (probe && route_probe_arm (probe, topic, nodeid) < 0)
            snprintf (path, sizeof (path), "(no trace could be started)");
        t0 = monotime_now ();
        st.sent++;
        rpc = bgn_rpc (h, topic, nodeid, payload, 0);
        free (payload);
        if (rpc && bgn_rpc_get (rpc, &rsp) == 0) {
            double ms = (monotime_now () - t0) * 1e3;
            if (probe && !path[0]) {
                json_t *r = rsp ? json_loads (rsp, 0, NULL) : NULL;
                int rank = -1, hops = 0;
                json_unpack (r, "{s:i s:i}", "rank", &rank, "hops", &hops);
                route_probe_result (probe, (uint32_t)rank, hops, path,
                                    sizeof (path));
                json_decref (r);
            }
            print_reply (rsp, (int)seq, ms, probe ? path : NULL);
            st.received++;
            st.sum += ms;
            if (ms < st.min)
                st.min = ms;
            if (ms > st.max)
                st.max = ms;
        }
        else if (interrupted && errno == ETIMEDOUT)
            st.sent--;          /* cut short by the user, not lost */
        else if (errno == ECONNRESET) {
            /* the handle is lost for good: no point pinging on */
            cmd_broker_gone (PROG, h, "after %ld pings", seq);
            bgn_rpc_destroy (&rpc);
            break;
        }
        else
            print_failure (target, topic, nodeid, (int)seq, rpc);
        bgn_rpc_destroy (&rpc);
        fflush (stdout);
    }
    print_summary (target, &st);
    route_probe_destroy (&probe);
    free (padding);
    bgn_close (&h);
    return st.received == st.sent ? 0 : 1;
}
