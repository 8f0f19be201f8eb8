/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* cmd_event.c: "bgn event pub|sub": publish and watch events.
 *
 * Events are numbered by rank 0 and multicast to every broker, which
 * delivers them in sequence order, once each, to its subscribed clients.
 * pub sends RPCs to rank 0 without waiting for each answer (so a
 * publisher still hears about every failure, and goes as fast as the
 * events drain); sub subscribes to topic prefixes on the local broker and
 * prints events as they come.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>

#include "src/common/libutil/fsd.h"
#include "src/common/libutil/monotime.h"
#include "cmd.h"

/* sub --reconnect: how long to wait for a broker to come back. */
#define RECONNECT_WAIT 60.0

static void usage (FILE *f)
{
    fprintf (f,
"Usage: bgn event pub [--count=N] [--verbose] TOPIC [JSON]\n"
"       bgn event pub [--verbose] -\n"
"       bgn event sub [--count=N] [--json] [--timeout=T] [--ready=FILE]\n"
"                     [--reconnect[=WAIT]] PREFIX...\n"
"pub publishes an event (JSON: an object payload) and, with --count,\n"
"N of them, each payload getting a field \"i\" (0..N-1); with \"-\" it\n"
"publishes one event per line of standard input, \"TOPIC [JSON]\" (blank\n"
"lines are skipped).  pub does not wait for each seq before sending the\n"
"next (up to 64 events per request, at most 4096 unanswered), retries\n"
"events rank 0 refuses for now (EAGAIN), and exits 1 if an event could\n"
"not be published (rank 0 unreachable, a bad line).\n"
"sub prints every event whose topic starts with a PREFIX, one per line:\n"
"  seq=12 topic=job.start from=3 {\"id\":7}\n"
"or, with --json, one object per line with seq, topic, payload and\n"
"publisher.  A gap no broker could repair is printed as a lost-events\n"
"line (JSON: {\"lost\":{\"from\":A,\"to\":B}}), and so are events the\n"
"broker dropped because this subscriber fell behind (with a \"reason\").\n"
"When the broker goes away (it exits, is killed or restarts, or stops\n"
"answering for the broker timeout, 5s: bgn --broker-timeout), sub exits 1\n"
"with \"broker at URI went away after N events\"; with --reconnect it\n"
"subscribes again to the broker that comes back at URI and says where\n"
"the stream resumes (the next seq) and which seqs it missed.\n"
"\n"
"  -c, --count=N      pub: publish N events; sub: exit after N events\n"
"  -j, --json         sub: JSON output\n"
"  -t, --timeout=T    sub: exit 1 if no event comes for T (default and\n"
"                     0: wait for ever)\n"
"      --ready=FILE   sub: create FILE once subscribed (for scripts)\n"
"      --reconnect[=WAIT]  sub: when the broker goes away, wait up to WAIT\n"
"                     (default 60s; 0: for ever) for one to come back at\n"
"                     the same URI and subscribe again\n"
"  -v, --verbose      pub: print each event's seq (-vv: and its topic\n"
"                     and payload)\n"
"  -h, --help         this text\n");
}

/* Publishes sent and not answered yet, in order: what to print or retry. */
struct item {
    char *topic;
    char *payload;
    double since;           /* first sent */
};

#define GROUP 64            /* events per request at most */

struct publisher {
    bgn_t *h;
    int verbose;
    struct item *q;         /* a ring as long as the window */
    int head, len, cap;
    char *topics[GROUP];    /* the group being gathered (owned) */
    char *payloads[GROUP];
    int n;
    struct item *retry;     /* refused for now (EAGAIN): to send again */
    int nretry;
    double retry_at;
};

#define RETRY_FOR 10.0      /* s: how long an event refused with EAGAIN is
                               retried (rank 0 restarting or too busy) */

static void item_free (struct item *it)
{
    free (it->topic);
    free (it->payload);
}

/* Send n events (taken) as one request; they wait in q for answers. */
static int pub_send (struct publisher *p, char **topics, char **payloads,
                     int n, double since)
{
    if (bgn_event_publish_many (p->h, n, (const char *const *)topics,
                                (const char *const *)payloads) < 0) {
        fprintf (stderr, "bgn event pub: %s: %s\n", topics[0],
                 strerror (errno));
        for (int i = 0; i < n; i++)
            item_free (&(struct item){ topics[i], payloads[i], 0 });
        return -1;
    }
    for (int i = 0; i < n; i++)
        p->q[(p->head + p->len++) % p->cap] =
            (struct item){ topics[i], payloads[i], since };
    return 0;
}

/* Send the gathered group as one request. */
static int pub_flush (struct publisher *p)
{
    int n = p->n;

    p->n = 0;
    return n ? pub_send (p, p->topics, p->payloads, n, monotime_now ()) : 0;
}

/* Collect the oldest answer (waiting up to 'timeout'); 1 if none was
 * ready yet, -1 if the event failed for good. */
static int pub_collect (struct publisher *p, double timeout)
{
    struct item it;
    uint32_t seq = 0;
    const char *why;

    if (p->len == 0)
        return 1;
    int rc = bgn_event_publish_get (p->h, &seq, timeout);
    if (rc < 0 && errno == EINPROGRESS)
        return 1;
    int err = rc < 0 ? errno : 0;
    it = p->q[p->head];
    p->head = (p->head + 1) % p->cap;
    p->len--;
    if (!err) {
        if (p->verbose > 1)
            printf ("seq=%u topic=%s %s\n", (unsigned)seq, it.topic,
                    it.payload ? it.payload : "{}");
        else if (p->verbose)
            printf ("seq=%u\n", (unsigned)seq);
        item_free (&it);
        return 0;
    }
    if (err == EAGAIN && monotime_now () - it.since < RETRY_FOR) {
        /* refused for now: sent again after a pause (after the ones
         * already out) */
        if (p->nretry == 0)
            p->retry_at = monotime_now () + 0.01;
        p->retry[p->nretry++] = it;
        return 0;
    }
    why = bgn_event_publish_error (p->h);
    fprintf (stderr, "bgn event pub: %s: %s%s%s%s\n", it.topic,
             strerror (err), why ? " (" : "", why ? why : "", why ? ")" : "");
    item_free (&it);
    return -1;
}

/* Send the refused events again, in order, after their pause, one per
 * request (a group may be what did not fit). */
static int pub_resend (struct publisher *p)
{
    int n = p->nretry;

    if (n == 0)
        return 0;
    double d = p->retry_at - monotime_now ();
    if (d > 0)
        usleep ((useconds_t)(d * 1e6));
    p->nretry = 0;
    for (int i = 0; i < n; i++) {
        struct item *it = &p->retry[i];
        if (pub_send (p, &it->topic, &it->payload, 1, it->since) < 0) {
            while (++i < n)
                item_free (&p->retry[i]);
            return -1;
        }
    }
    return 0;
}

/* Collect every answer that is already there; send refused ones again
 * once nothing older is out, or their pause is over. */
static int pub_reap (struct publisher *p)
{
    int rc;

    while (p->len > 0 && (rc = pub_collect (p, 0)) != 1)
        if (rc < 0)
            return -1;
    if (p->nretry > 0
        && (p->len == 0 || monotime_now () >= p->retry_at))
        return pub_resend (p);
    return 0;
}

/* Wait for answers until k more events fit in the window. */
static int pub_room (struct publisher *p, int k)
{
    while (p->len + p->nretry + k > p->cap) {
        if (p->len > 0 ? pub_collect (p, -1) < 0 : pub_resend (p) < 0)
            return -1;
    }
    return 0;
}

/* Add one event (topic and payload taken) to the group; a full group
 * goes out. */
static int pub_add (struct publisher *p, char *topic, char *payload)
{
    p->topics[p->n] = topic;
    p->payloads[p->n] = payload;
    if (++p->n < GROUP)
        return 0;
    if (pub_room (p, p->n) < 0)
        return -1;
    return pub_flush (p) < 0 ? -1 : pub_reap (p);
}

/* Send what is gathered now (no more input is ready). */
static int pub_push (struct publisher *p)
{
    if (pub_room (p, p->n) < 0)
        return -1;
    return pub_flush (p) < 0 ? -1 : pub_reap (p);
}

static int pub_finish (struct publisher *p, int rc)
{
    if (rc == 0 && pub_push (p) < 0)
        rc = 1;
    for (int i = 0; i < p->n; i++)
        item_free (&(struct item){ p->topics[i], p->payloads[i], 0 });
    p->n = 0;
    while (p->len > 0 || p->nretry > 0) {
        if (p->len > 0 && pub_collect (p, -1) < 0)
            rc = 1;
        if (p->len == 0 && pub_resend (p) < 0)
            rc = 1;
    }
    free (p->q);
    free (p->retry);
    bgn_close (&p->h);
    return rc;
}

static void pub_init (struct publisher *p, int verbose)
{
    memset (p, 0, sizeof (*p));
    p->h = cmd_open ("event");
    p->verbose = verbose;
    p->cap = BGN_PUBLISH_WINDOW;
    if (!(p->q = calloc (p->cap, sizeof (*p->q)))
        || !(p->retry = calloc (p->cap, sizeof (*p->retry))))
        cmd_die ("event", "out of memory");
}

/* One "TOPIC [JSON]" line (NUL-terminated, no newline): 1 if blank. */
static int parse_line (char *line, char **topic, char **payload)
{
    char *t = line + strspn (line, " \t"), *end, *pl;
    json_t *o;

    if (!*t)
        return 1;
    end = t + strcspn (t, " \t");
    pl = *end ? end + 1 + strspn (end + 1, " \t") : end;
    *end = '\0';
    if (*pl) {
        if (!(o = json_loads (pl, 0, NULL)) || !json_is_object (o)) {
            json_decref (o);
            return -1;
        }
        json_decref (o);
    }
    *topic = strdup (t);
    *payload = *pl ? strdup (pl) : NULL;
    return 0;
}

/* "TOPIC [JSON]" lines from stdin: what one read() brings goes out in
 * requests of up to GROUP events. */
static int publish_stdin (int verbose)
{
    struct publisher p;
    char *buf = NULL;
    size_t len = 0, cap = 0;
    long lineno = 0;
    int rc = 0, eof = 0;

    pub_init (&p, verbose);
    while (!eof && rc == 0) {
        if (cap - len < 65536) {
            char *nb = realloc (buf, cap + 65536);
            if (!nb)
                cmd_die ("event", "out of memory");
            buf = nb;
            cap += 65536;
        }
        ssize_t r = read (STDIN_FILENO, buf + len, cap - len - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            eof = 1;
            if (len > 0)
                buf[len++] = '\n';  /* a last line without newline */
        }
        else
            len += (size_t)r;
        size_t start = 0;
        char *nl;
        while ((nl = memchr (buf + start, '\n', len - start))) {
            char *topic, *payload;
            *nl = '\0';
            lineno++;
            int k = parse_line (buf + start, &topic, &payload);
            start = nl + 1 - buf;
            if (k == 1)
                continue;
            if (k < 0) {
                fprintf (stderr, "bgn event pub: stdin:%ld: the payload is "
                         "not a JSON object\n", lineno);
                rc = 1;
                break;
            }
            if (pub_add (&p, topic, payload) < 0) {
                rc = 1;
                break;
            }
        }
        memmove (buf, buf + start, len - start);
        len -= start;
        if (rc == 0 && pub_push (&p) < 0)
            rc = 1;
    }
    free (buf);
    return pub_finish (&p, rc);
}

static int publish (int argc, char **argv, long count, int verbose)
{
    const char *topic, *payload = NULL;
    json_t *base = NULL;
    struct publisher p;
    int rc = 0;

    if (argc == 1 && !strcmp (argv[0], "-") && count == 0)
        return publish_stdin (verbose);
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
    pub_init (&p, verbose);
    for (long i = 0; i < (count > 0 ? count : 1); i++) {
        char *s = NULL;
        if (count > 0) {
            json_t *o = base ? json_deep_copy (base) : json_object ();
            json_object_set_new (o, "i", json_integer (i));
            s = json_dumps (o, JSON_COMPACT);
            json_decref (o);
        }
        else if (payload)
            s = strdup (payload);
        if (pub_add (&p, strdup (topic), s) < 0) {
            rc = 1;
            break;
        }
    }
    json_decref (base);
    return pub_finish (&p, rc);
}

static void print_event (const struct bgn_event *ev, int json)
{
    if (!strcmp (ev->topic, "event.lost")) {
        json_t *o = ev->payload ? json_loads (ev->payload, 0, NULL) : NULL;
        json_int_t a = 0, b = 0;
        const char *why = NULL;
        if (o)
            json_unpack (o, "{s:I s:I s?s}", "from", &a, "to", &b,
                         "reason", &why);
        if (json && why) {
            json_t *r = json_pack ("{s:{s:I s:I s:s}}", "lost", "from", a,
                                   "to", b, "reason", why);
            char *txt = r ? json_dumps (r, JSON_COMPACT) : NULL;
            if (txt)
                printf ("%s\n", txt);
            free (txt);
            json_decref (r);
        }
        else if (json)
            printf ("{\"lost\":{\"from\":%lld,\"to\":%lld}}\n", (long long)a,
                    (long long)b);
        else
            printf ("lost events %lld..%lld (%s)\n", (long long)a,
                    (long long)b, why ? why : "no broker still had them");
        json_decref (o);
        return;
    }
    if (json) {
        json_t *p = ev->payload ? json_loads (ev->payload, 0, NULL) : NULL;
        json_t *o = json_pack ("{s:I s:s s:o s:i}", "seq", (json_int_t)ev->seq,
                               "topic", ev->topic,
                               "payload", p ? p : json_object (),
                               "publisher", (int)ev->publisher);
        char *s = o ? json_dumps (o, JSON_COMPACT) : NULL;
        printf ("%s\n", s ? s : "{}");
        free (s);
        json_decref (o);
    }
    else
        printf ("seq=%u topic=%s from=%u %s\n", (unsigned)ev->seq, ev->topic,
                (unsigned)ev->publisher, ev->payload ? ev->payload : "{}");
}

/* A subscriber: its prefixes, its broker and how far it got. */
struct sub {
    bgn_t *h;
    char **prefixes;
    int nprefixes;
    long got;               /* events printed (lost notices not counted) */
    uint32_t last;          /* seq of the last event printed, if have_last */
    int have_last;
    char instance[64];      /* the instance of the broker, if known */
};

/* Subscribe h to every prefix: 0, or -1 with errno and the failing
 * prefix in *bad. */
static int subscribe_all (bgn_t *h, struct sub *s, const char **bad)
{
    for (int i = 0; i < s->nprefixes; i++) {
        if (bgn_event_subscribe (h, s->prefixes[i]) < 0) {
            *bad = s->prefixes[i];
            return -1;
        }
    }
    return 0;
}

/* The local broker's instance id and the seq of the last event it
 * delivered (its overlay status): 0, or -1 if it has no answer. */
static int broker_events (bgn_t *h, char *instance, size_t len,
                          uint32_t *last)
{
    bgn_rpc_t *rpc = bgn_rpc (h, "overlay.status", NODEID_ANY, NULL, 0);
    const char *payload = NULL, *inst = "";
    json_int_t seq = 0;
    json_t *o = NULL;
    int rc = -1;

    if (rpc && bgn_rpc_get (rpc, &payload) == 0 && payload
        && (o = json_loads (payload, 0, NULL))
        && json_unpack (o, "{s?s s:{s:I}}", "instance", &inst, "events",
                        "last_seq", &seq) == 0) {
        snprintf (instance, len, "%s", inst);
        *last = (uint32_t)seq;
        rc = 0;
    }
    json_decref (o);
    bgn_rpc_destroy (&rpc);
    return rc;
}

/* Say where the stream resumes on the new broker and what was missed.
 * The broker was asked after we subscribed, so every event after its
 * last one reaches us: the gap is what came between the last event we
 * printed and that one (every event published then, whether or not it
 * matched our prefixes).  A broker that has just restarted learns the
 * instance's seq when it joins its peers: wait (until 'deadline') for
 * it to catch up with what we had seen. */
static void report_resume (struct sub *s, double deadline)
{
    const char *uri = bgn_get_uri (s->h);
    char instance[64] = "";
    uint32_t x = 0;
    int known;

    while ((known = broker_events (s->h, instance, sizeof (instance),
                                   &x) == 0)
           && s->have_last && x < s->last
           && !strcmp (instance, s->instance)
           && monotime_now () < deadline)
        usleep (100000);
    if (!known) {
        fprintf (stderr, "bgn event sub: resubscribed at %s; its event "
                 "sequence is unknown (no overlay status)\n", uri);
        return;
    }
    if (*s->instance && strcmp (instance, s->instance) != 0)
        fprintf (stderr, "bgn event sub: resubscribed at %s, a new instance "
                 "(%s): the stream resumes at seq %u of its own sequence\n",
                 uri, instance, (unsigned)x + 1);
    else if (!s->have_last || x > s->last)
        fprintf (stderr, "bgn event sub: resubscribed at %s: the stream "
                 "resumes at seq %u; missed seq %u..%u (%u events published "
                 "while away)\n", uri, (unsigned)x + 1,
                 (unsigned)(s->have_last ? s->last + 1 : 1), (unsigned)x,
                 (unsigned)(x - (s->have_last ? s->last : 0)));
    else
        fprintf (stderr, "bgn event sub: resubscribed at %s: the stream "
                 "resumes at seq %u; no events missed\n", uri,
                 (unsigned)(x > s->last ? x : s->last) + 1);
    snprintf (s->instance, sizeof (s->instance), "%s", instance);
}

/* --reconnect: the broker went away; open its URI again until a broker
 * answers there and takes our subscriptions, for up to 'wait' seconds.
 * 0, or -1 (said why). */
static int reconnect (struct sub *s, double wait)
{
    char uri[4096], err[512];
    double deadline = monotime_now () + wait;
    double timeout = bgn_get_timeout (s->h);
    const char *bad = NULL;
    bgn_t *h = NULL;

    snprintf (uri, sizeof (uri), "%s", bgn_get_uri (s->h));
    if (isinf (wait))
        cmd_broker_gone ("event sub", s->h, "after %ld events; reconnecting",
                         s->got);
    else
        cmd_broker_gone ("event sub", s->h, "after %ld events; reconnecting "
                         "(for up to %gs)", s->got, wait);
    bgn_close (&s->h);
    while (monotime_now () < deadline) {
        usleep (100000);
        if (!(h = bgn_open (uri, err, sizeof (err))))
            continue;
        /* a broker still starting may not answer at once */
        bgn_set_timeout (h, 1.0);
        if (subscribe_all (h, s, &bad) == 0)
            break;
        bgn_close (&h);
    }
    if (!h) {
        fprintf (stderr, "bgn event sub: no broker came back at %s within "
                 "%gs\n", uri, wait);
        return -1;
    }
    bgn_set_timeout (h, timeout);
    s->h = h;
    report_resume (s, deadline);
    return 0;
}

static int subscribe (int argc, char **argv, long count, int json,
                      double timeout, const char *ready, double reconnect_wait)
{
    struct bgn_event ev;
    struct sub s = { .prefixes = argv, .nprefixes = argc };
    const char *bad = NULL;
    uint32_t seq0;

    if (argc < 1)
        cmd_usage_die ("event", "sub: which PREFIX?");
    s.h = cmd_open ("event");
    if (subscribe_all (s.h, &s, &bad) < 0) {
        fprintf (stderr, "bgn event: sub %s: %s\n", bad, strerror (errno));
        bgn_close (&s.h);
        return 1;
    }
    /* the instance, to tell a restarted broker from a new instance */
    if (reconnect_wait > 0)
        broker_events (s.h, s.instance, sizeof (s.instance), &seq0);
    if (ready) {
        FILE *f = fopen (ready, "w");
        if (f)
            fclose (f);
    }
    while (count == 0 || s.got < count) {
        /* Output goes out whenever we would wait, not line by line. */
        if (bgn_event_next (s.h, &ev, 0) < 0) {
            fflush (stdout);
            if (errno != ETIMEDOUT
                || bgn_event_next (s.h, &ev, timeout > 0 ? timeout : -1) < 0) {
                if (errno == ECONNRESET && reconnect_wait > 0
                    && reconnect (&s, reconnect_wait) == 0)
                    continue;
                if (errno == ECONNRESET && s.h)
                    cmd_broker_gone ("event sub", s.h, "after %ld events",
                                     s.got);
                else if (s.h)
                    fprintf (stderr, "bgn event sub: %s after %ld events\n",
                             strerror (errno), s.got);
                bgn_close (&s.h);
                return 1;
            }
        }
        print_event (&ev, json);
        if (strcmp (ev.topic, "event.lost") != 0) {
            s.got++;
            s.last = ev.seq;
            s.have_last = 1;
        }
    }
    fflush (stdout);
    bgn_close (&s.h);
    return 0;
}

int cmd_event (int argc, char **argv)
{
    static const struct option longopts[] = {
        { "count", required_argument, NULL, 'c' },
        { "json", no_argument, NULL, 'j' },
        { "timeout", required_argument, NULL, 't' },
        { "ready", required_argument, NULL, 'R' },   /* long only */
        { "reconnect", optional_argument, NULL, 'C' },   /* long only */
        { "verbose", no_argument, NULL, 'v' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    long count = 0;
    int c, json = 0, verbose = 0;
    double timeout = -1, reconnect_wait = 0;
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
        case 'C':
            reconnect_wait = optarg ? cmd_timeout_arg ("event", "--reconnect",
                                                       optarg)
                                    : RECONNECT_WAIT;
            break;
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
                          ready, reconnect_wait);
    cmd_usage_die ("event", "'%s' is not pub or sub", verb);
}
