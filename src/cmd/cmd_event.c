/* cmd_event.c: "bgn event pub|sub": publish and watch events.
 *
 * Events are numbered by rank 0 and multicast to every broker, which
 * delivers them in sequence order, once each, to its subscribed clients.
 * pub is an RPC to rank 0 (so a publisher hears about a failure); sub
 * subscribes to topic prefixes on the local broker and prints events as
 * they come.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "src/common/libutil/fsd.h"
#include "cmd.h"

static void usage (FILE *f)
{
    fprintf (f,
"Usage: bgn event pub [--count=N] [--verbose] TOPIC [JSON]\n"
"       bgn event sub [--count=N] [--json] [--timeout=T] [--ready=FILE]\n"
"                     PREFIX...\n"
"pub publishes an event (JSON: an object payload) and, with --count,\n"
"N of them, each payload getting a field \"i\" (0..N-1).  It fails if rank\n"
"0 cannot be reached.\n"
"sub prints every event whose topic starts with a PREFIX, one per line:\n"
"  seq=12 topic=job.start from=3 {\"id\":7}\n"
"or, with --json, one object per line with seq, topic, payload and\n"
"publisher.  A gap no broker could repair is printed as a lost-events\n"
"line (JSON: {\"lost\":{\"from\":A,\"to\":B}}).\n"
"\n"
"  -c, --count=N      pub: publish N events; sub: exit after N events\n"
"  -j, --json         sub: JSON output\n"
"  -t, --timeout=T    sub: exit 1 if no event comes for T (default and\n"
"                     0: wait for ever)\n"
"      --ready=FILE   sub: create FILE once subscribed (for scripts)\n"
"  -v, --verbose      pub: print each event's seq (-vv: and its topic\n"
"                     and payload)\n"
"  -h, --help         this text\n");
}

static int publish (int argc, char **argv, long count, int verbose)
{
    const char *topic, *payload = NULL;
    json_t *base = NULL;
    bgn_t *h;
    int rc = 0;

    if (argc < 1)
        cmd_usage_die ("event", "pub: which TOPIC?");
    if (argc > 2)
        cmd_usage_die ("event", "pub: give TOPIC and at most one JSON "
                       "payload");
    topic = argv[0];
    if (argc == 2) {
        payload = argv[1];
        if (!(base = json_loads (payload, 0, NULL)) || !json_is_object (base)) {
            json_decref (base);
            cmd_die ("event", "pub: the payload is not a JSON object");
        }
    }
    h = cmd_open ("event");
    for (long i = 0; i < (count > 0 ? count : 1); i++) {
        uint32_t seq = 0;
        char *s = NULL;
        if (count > 0) {
            json_t *o = base ? json_deep_copy (base) : json_object ();
            json_object_set_new (o, "i", json_integer (i));
            s = json_dumps (o, JSON_COMPACT);
            json_decref (o);
        }
        if (bgn_event_publish (h, topic, s ? s : payload, &seq) < 0) {
            fprintf (stderr, "bgn event: pub %s: %s\n", topic,
                     strerror (errno));
            free (s);
            rc = 1;
            break;
        }
        if (verbose > 1)
            printf ("seq=%u topic=%s %s\n", (unsigned)seq, topic,
                    s ? s : payload ? payload : "{}");
        else if (verbose)
            printf ("seq=%u\n", (unsigned)seq);
        free (s);
    }
    json_decref (base);
    bgn_close (&h);
    return rc;
}

static void print_event (const msg_t *ev, int json)
{
    uint32_t seq = 0;
    const char *topic = msg_get_topic (ev);
    const char *payload = msg_get_payload (ev, NULL);
    unsigned publisher = msg_get_matchtag (ev);

    msg_get_seq (ev, &seq);
    if (!strcmp (topic, "event.lost")) {
        json_t *o = payload ? json_loads (payload, 0, NULL) : NULL;
        json_int_t a = 0, b = 0;
        if (o)
            json_unpack (o, "{s:I s:I}", "from", &a, "to", &b);
        if (json)
            printf ("{\"lost\":{\"from\":%lld,\"to\":%lld}}\n", (long long)a,
                    (long long)b);
        else
            printf ("lost events %lld..%lld (no broker still had them)\n",
                    (long long)a, (long long)b);
        json_decref (o);
        return;
    }
    if (json) {
        json_t *p = payload ? json_loads (payload, 0, NULL) : NULL;
        json_t *o = json_pack ("{s:I s:s s:o s:i}", "seq", (json_int_t)seq,
                               "topic", topic,
                               "payload", p ? p : json_object (),
                               "publisher", (int)publisher);
        char *s = o ? json_dumps (o, JSON_COMPACT) : NULL;
        printf ("%s\n", s ? s : "{}");
        free (s);
        json_decref (o);
    }
    else
        printf ("seq=%u topic=%s from=%u %s\n", (unsigned)seq, topic,
                publisher, payload ? payload : "{}");
}

static int subscribe (int argc, char **argv, long count, int json,
                      double timeout, const char *ready)
{
    bgn_t *h;
    long got = 0;

    if (argc < 1)
        cmd_usage_die ("event", "sub: which PREFIX?");
    h = cmd_open ("event");
    for (int i = 0; i < argc; i++) {
        if (bgn_event_subscribe (h, argv[i]) < 0) {
            fprintf (stderr, "bgn event: sub %s: %s\n", argv[i],
                     strerror (errno));
            bgn_close (&h);
            return 1;
        }
    }
    if (ready) {
        FILE *f = fopen (ready, "w");
        if (f)
            fclose (f);
    }
    while (count == 0 || got < count) {
        msg_t *ev = bgn_event_recv (h, timeout > 0 ? timeout : -1);
        if (!ev) {
            fprintf (stderr, "bgn event: sub: %s after %ld events\n",
                     strerror (errno), got);
            bgn_close (&h);
            return 1;
        }
        print_event (ev, json);
        fflush (stdout);
        if (strcmp (msg_get_topic (ev), "event.lost") != 0)
            got++;
        msg_destroy (&ev);
    }
    bgn_close (&h);
    return 0;
}

int cmd_event (int argc, char **argv)
{
    static const struct option longopts[] = {
        { "count", required_argument, NULL, 'c' },
        { "json", no_argument, NULL, 'j' },
        { "timeout", required_argument, NULL, 't' },
        { "ready", required_argument, NULL, 'R' },   /* long only */
        { "verbose", no_argument, NULL, 'v' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    long count = 0;
    int c, json = 0, verbose = 0;
    double timeout = -1;
    const char *ready = NULL;
    char *end;

    while ((c = getopt_long (argc, argv, ":c:jt:vh", longopts, NULL)) != -1) {
        switch (c) {
        case 'c':
            count = strtol (optarg, &end, 10);
            if (*end || end == optarg || count < 0)
                cmd_die ("event", "--count: '%s' is not a count", optarg);
            break;
        case 'j': json = 1; break;
        case 't':
            timeout = cmd_timeout_arg ("event", "--timeout", optarg);
            if (isinf (timeout))
                timeout = -1;
            break;
        case 'R': ready = optarg; break;
        case 'v': verbose++; break;
        case 'h': usage (stdout); return 0;
        default: return cmd_bad_option ("event", argv, c);
        }
    }
    if (optind >= argc)
        cmd_usage_die ("event", "pub or sub?");
    const char *verb = argv[optind++];
    if (!strcmp (verb, "pub"))
        return publish (argc - optind, argv + optind, count, verbose);
    if (!strcmp (verb, "sub"))
        return subscribe (argc - optind, argv + optind, count, json, timeout,
                          ready);
    cmd_usage_die ("event", "'%s' is not pub or sub", verb);
}
