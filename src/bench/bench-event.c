/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* bench-event.c: event fan-out, bgn against a raw libzmq relay tree.
 *
 *   bench-event --check
 *       under "bgn start" ($BGN_RUNDIR): subscribe on the last rank,
 *       publish at rank 0; exit 0 if the event arrives within 1 s, 2 if
 *       it does not.
 *
 *   bench-event bgn [--events M] [--group G] [--paced P] [--rate R]
 *       under "bgn start": a subscriber on every broker (one handle each,
 *       in this process), two publishers in a thread of their own, one
 *       on rank 0 and one on the last rank, publishing alternately with
 *       the asynchronous API.
 *       - sustained: M events as fast as the publishers can, timed until
 *         every subscriber has all M (with --group, G events per
 *         publish request: bgn_event_publish_many);
 *       - paced: P events at R per second; time-to-all of each = when the
 *         last subscriber got it - when it was published; p50 and p99.
 *
 *   bench-event raw --size N [--events M] [--paced P] [--rate R]
 *       the same events (one message of the same size each) down the
 *       same binomial tree (libbgn, "bgn" topology, root 0) through N
 *       relay processes of raw libzmq PUSH/PULL sockets, forked here;
 *       both publishers push to the root; each relay records when it got
 *       each event; what counts as delivery is the relay having it.
 *
 *   bench-event raw --fair --size N [...]
 *       the same relays, each with a subscriber process of its own: a
 *       relay also pushes every event over ipc to its subscriber (a
 *       PULL socket in a second process), and what counts as delivery
 *       is that subscriber having it, as a bgn event counts when the
 *       subscriber's client has it (2N processes).
 *
 * Output, one line: size=N events=M rate_eps=.. tta_p50_ms=..
 *   tta_p99_ms=.. lost=..
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "src/common/libbgn/bgn.h"
#include "src/common/libclient/client.h"
#include "src/common/libutil/monotime.h"

#define PAYLOAD_PAD "0123456789abcdef"  /* events of about 64 bytes */
#define TIMEOUT 30.0                    /* s without progress: give up */

struct opts {
    long events;        /* sustained run */
    long paced;         /* paced run */
    double rate;        /* paced events per second */
    int size;           /* raw: relays */
    int group;          /* bgn: events per publish request, flat out */
    int subs;           /* bgn: subscribers on the last ranks only */
    int fair;           /* raw: a subscriber process on every relay */
};

static void die (const char *fmt, const char *what)
{
    fprintf (stderr, "bench-event: ");
    fprintf (stderr, fmt, what);
    fprintf (stderr, ": %s\n", strerror (errno));
    exit (1);
}

static int cmp_double (const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y ? 1 : 0;
}

static double pct (double *v, long n, double p)
{
    if (n == 0)
        return -1;
    qsort (v, n, sizeof (double), cmp_double);
    long i = (long)(p * (n - 1) + 0.5);
    return v[i];
}

static void sleep_until (double t)
{
    double d = t - monotime_now ();
    if (d > 0) {
        struct timespec ts = { (time_t)d, (long)((d - (time_t)d) * 1e9) };
        nanosleep (&ts, NULL);
    }
}

/* ---- bgn --------------------------------------------------------------- */

static bgn_t *open_rank (const char *rundir, int rank)
{
    char uri[512], err[256];
    bgn_t *h;

    snprintf (uri, sizeof (uri), "ipc://%s/%d/local", rundir, rank);
    if (!(h = bgn_open (uri, err, sizeof (err)))) {
        fprintf (stderr, "bench-event: rank %d: %s\n", rank, err);
        exit (1);
    }
    return h;
}

static int count_ranks (const char *rundir)
{
    char path[512], line[256];
    int r, p, n = 0;
    FILE *f;

    snprintf (path, sizeof (path), "%s/brokers", rundir);
    if (!(f = fopen (path, "r")))
        return -1;
    while (fgets (line, sizeof (line), f))      /* "rank pid [state]" */
        if (sscanf (line, "%d %d", &r, &p) == 2)
            n++;
    fclose (f);
    return n;
}

/* One run: what the publisher thread and the subscribers share. */
struct run {
    const char *rundir;
    int n;              /* brokers */
    int nsubs;          /* subscribers: on the last nsubs ranks */
    long events;
    double rate;        /* 0: as fast as possible */
    int group;          /* events per request */
    double *t_pub;      /* when event i was published (written first) */
    int failed;
};

static void *publisher (void *arg)
{
    struct run *r = arg;
    bgn_t *h[2] = { open_rank (r->rundir, 0), open_rank (r->rundir, r->n - 1) };
    double t0 = monotime_now () + 0.05;
    char payload[1024][64];
    const char *topics[1024], *payloads[1024];
    uint32_t seq;
    int g = r->group > 0 && r->group <= 1024 ? r->group : 1;

    for (int k = 0; k < g; k++) {
        topics[k] = "bench.e";
        payloads[k] = payload[k];
    }
    for (long i = 0, n = 0; i < r->events; i += n, n = 0) {
        bgn_t *p = h[(i / g) & 1];
        if (r->rate > 0)
            sleep_until (t0 + i / r->rate);
        double now = monotime_now ();
        for (; n < g && i + n < r->events; n++) {
            snprintf (payload[n], sizeof (payload[n]),
                      "{\"i\":%ld,\"pad\":\"%s\"}", i + n, PAYLOAD_PAD);
            __atomic_store (&r->t_pub[i + n], &now, __ATOMIC_RELEASE);
        }
        if (bgn_event_publish_many (p, (int)n, topics, payloads) < 0) {
            perror ("bench-event: publish");
            r->failed = 1;
            break;
        }
        /* collect answers as they come, in order */
        for (int k = 0; k < 2; k++)
            while (bgn_event_publish_pending (h[k]) > 0
                   && bgn_event_publish_get (h[k], &seq, 0) == 0)
                ;
    }
    for (int k = 0; k < 2; k++) {
        while (bgn_event_publish_pending (h[k]) > 0)
            if (bgn_event_publish_get (h[k], &seq, -1) < 0
                && errno != EINPROGRESS) {
                perror ("bench-event: publish answer");
                r->failed = 1;
            }
        bgn_close (&h[k]);
    }
    return NULL;
}

/* Subscribers get every event; returns the time the last one arrived
 * everywhere, or -1.  tta[i] = when everyone had i - t_pub[i]. */
static double collect (struct run *r, bgn_t **subs, double *tta, long *lost)
{
    long *got = calloc (r->nsubs, sizeof (long));
    int *cnt = calloc (r->events, sizeof (int));
    int *ready = calloc (r->nsubs, sizeof (int));
    long complete = 0;
    double last = -1, progress = monotime_now ();
    struct bgn_event ev;

    while (complete < r->events && !r->failed) {
        int nr = bgn_poll (subs, r->nsubs, 0.5, ready);
        if (nr < 0)
            die ("%s", "poll");
        if (nr == 0) {
            if (monotime_now () - progress > TIMEOUT)
                break;
            continue;
        }
        progress = monotime_now ();
        for (int s = 0; s < r->nsubs; s++) {
            if (!ready[s])
                continue;
            while (bgn_event_next (subs[s], &ev, 0) == 0) {
                const char *p = ev.payload ? strstr (ev.payload, "\"i\":")
                                           : NULL;
                long i = p ? strtol (p + 4, NULL, 10) : -1;
                if (i < 0 || i >= r->events)
                    continue;
                got[s]++;
                if (++cnt[i] == r->nsubs) {
                    double now = monotime_now (), sent;
                    __atomic_load (&r->t_pub[i], &sent, __ATOMIC_ACQUIRE);
                    tta[i] = now - sent;
                    last = now;
                    complete++;
                }
            }
        }
    }
    *lost = 0;
    for (int s = 0; s < r->nsubs; s++)
        *lost += r->events - got[s];
    free (got);
    free (cnt);
    free (ready);
    return complete == r->events ? last : -1;
}

static void bgn_run (struct run *r, bgn_t **subs, double *secs, double *p50,
                     double *p99, long *lost)
{
    pthread_t t;
    double *tta = calloc (r->events, sizeof (double));
    double t0, end;

    r->t_pub = calloc (r->events, sizeof (double));
    t0 = monotime_now ();
    if (pthread_create (&t, NULL, publisher, r) != 0)
        die ("%s", "pthread_create");
    end = collect (r, subs, tta, lost);
    pthread_join (t, NULL);
    *secs = end > 0 ? end - t0 - 0.05 : -1;
    *p50 = pct (tta, r->events, 0.5) * 1e3;
    *p99 = pct (tta, r->events, 0.99) * 1e3;
    free (tta);
    free (r->t_pub);
}

/* Rank 0 refuses events (EAGAIN) until every tree child has told it
 * its sequence, which may come a moment after the overlay is whole:
 * try again for up to 10 s, as `bgn event pub` does. */
static int publish_when_open (bgn_t *pub, const char *topic)
{
    double until = monotime_now () + 10.;

    for (;;) {
        if (bgn_event_publish (pub, topic, "{}", NULL) == 0)
            return 0;
        if (errno != EAGAIN || monotime_now () > until)
            return -1;
        usleep (10000);
    }
}

static int do_bgn (struct opts *o)
{
    const char *rundir = getenv ("BGN_RUNDIR");
    struct run r = { 0 };
    bgn_t **subs;
    double secs, p50, p99, x;
    long lost, lost2;

    if (!rundir || (r.n = count_ranks (rundir)) < 2) {
        fprintf (stderr, "bench-event: run under bgn start (BGN_RUNDIR), "
                 "2 brokers or more\n");
        return 1;
    }
    r.rundir = rundir;
    r.nsubs = o->subs > 0 && o->subs < r.n ? o->subs : r.n;
    /* not timed: wait until rank 0 takes events (a topic no subscriber
     * of the run matches) */
    bgn_t *root = open_rank (rundir, 0);
    if (publish_when_open (root, "warmup") < 0)
        die ("%s", "publish");
    bgn_close (&root);
    if (!(subs = calloc (r.nsubs, sizeof (*subs))))
        return 1;
    for (int i = 0; i < r.nsubs; i++) {
        subs[i] = open_rank (rundir, r.n - r.nsubs + i);
        if (bgn_event_subscribe (subs[i], "bench.") < 0)
            die ("%s", "subscribe");
    }
    r.events = o->events;
    r.rate = 0;
    r.group = o->group;
    bgn_run (&r, subs, &secs, &x, &x, &lost);
    r.events = o->paced;
    r.rate = o->rate;
    r.group = 1;
    bgn_run (&r, subs, &x, &p50, &p99, &lost2);
    printf ("size=%d events=%ld rate_eps=%.0f tta_p50_ms=%.3f "
            "tta_p99_ms=%.3f lost=%ld\n", r.n, o->events,
            secs > 0 ? o->events / secs : 0, p50, p99, lost + lost2);
    for (int i = 0; i < r.nsubs; i++)
        bgn_close (&subs[i]);
    free (subs);
    return secs > 0 && !r.failed ? 0 : 1;
}

static int do_check (void)
{
    const char *rundir = getenv ("BGN_RUNDIR");
    int n;
    msg_t *m;

    if (!rundir || (n = count_ranks (rundir)) < 1) {
        fprintf (stderr, "bench-event: run under bgn start (BGN_RUNDIR)\n");
        return 1;
    }
    bgn_t *pub = open_rank (rundir, 0);
    bgn_t *sub = open_rank (rundir, n - 1);
    if (bgn_event_subscribe (sub, "bench.") < 0
        || publish_when_open (pub, "bench.check") < 0) {
        perror ("bench-event: subscribe/publish");
        return 1;
    }
    int rc = (m = bgn_event_recv (sub, 1.)) ? 0 : 2;
    msg_destroy (&m);
    bgn_close (&sub);
    bgn_close (&pub);
    return rc;
}

/* ---- raw libzmq relay tree ------------------------------------------------ */

/* The wire: [u64 index][topic and payload text] in one message of about
 * the size of a bgn event record. */
struct rawev {
    uint64_t i;
    char payload[120];
};

/* Subscriber of relay r (--fair): PULL bound at dir/r.sub; records when
 * each event came; after 'total' events writes dir/r.out and exits. */
static void subscriber (const char *dir, int r, long total)
{
    void *ctx = zmq_ctx_new (), *in = zmq_socket (ctx, ZMQ_PULL);
    char ep[600];
    double *when = calloc (total, sizeof (double));
    long got = 0;
    int hwm = 100000;

    zmq_setsockopt (in, ZMQ_RCVHWM, &hwm, sizeof (hwm));
    snprintf (ep, sizeof (ep), "ipc://%s/%d.sub", dir, r);
    if (zmq_bind (in, ep) < 0)
        die ("%s", "subscriber bind");
    snprintf (ep, sizeof (ep), "%s/%d.sub.ready", dir, r);
    fclose (fopen (ep, "w"));
    while (got < total) {
        zmq_msg_t m;
        zmq_msg_init (&m);
        if (zmq_msg_recv (&m, in, 0) < 0)
            continue;
        if (zmq_msg_size (&m) >= sizeof (uint64_t)) {
            struct rawev *e = zmq_msg_data (&m);
            if (e->i < (uint64_t)total && when[e->i] == 0) {
                when[e->i] = monotime_now ();
                got++;
            }
        }
        zmq_msg_close (&m);
    }
    snprintf (ep, sizeof (ep), "%s/%d.out", dir, r);
    FILE *f = fopen (ep, "w");
    if (f) {
        fwrite (when, sizeof (double), total, f);
        fclose (f);
    }
    zmq_close (in);
    zmq_ctx_term (ctx);
    exit (0);
}

/* Relay r: PULL bound at dir/r, a PUSH to each tree child; records when
 * each event came; after 'total' events writes dir/r.out and exits.
 * fair: also a PUSH to its subscriber, which writes dir/r.out instead. */
static void relay (const char *dir, int r, int n, long total, int fair)
{
    struct bgn_topo *topo = bgn_topo_create ("bgn", n);
    uint32_t kids[64];
    int nk = bgn_topo_bcast_children (topo, 0, r, kids, 64);
    void *ctx = zmq_ctx_new (), *in = zmq_socket (ctx, ZMQ_PULL);
    void *out[65];
    char ep[600];
    double *when = calloc (total, sizeof (double));
    long got = 0;
    int hwm = 100000;

    zmq_setsockopt (in, ZMQ_RCVHWM, &hwm, sizeof (hwm));
    snprintf (ep, sizeof (ep), "ipc://%s/%d", dir, r);
    if (zmq_bind (in, ep) < 0)
        die ("%s", "relay bind");
    for (int k = 0; k < nk; k++) {
        out[k] = zmq_socket (ctx, ZMQ_PUSH);
        zmq_setsockopt (out[k], ZMQ_SNDHWM, &hwm, sizeof (hwm));
        snprintf (ep, sizeof (ep), "ipc://%s/%u", dir, kids[k]);
        zmq_connect (out[k], ep);
    }
    if (fair) {
        /* the subscriber goes last: the children first, as a broker
         * forwards before it delivers */
        out[nk] = zmq_socket (ctx, ZMQ_PUSH);
        zmq_setsockopt (out[nk], ZMQ_SNDHWM, &hwm, sizeof (hwm));
        snprintf (ep, sizeof (ep), "ipc://%s/%d.sub", dir, r);
        zmq_connect (out[nk], ep);
        nk++;
    }
    snprintf (ep, sizeof (ep), "%s/%d.ready", dir, r);
    fclose (fopen (ep, "w"));
    while (got < total) {
        zmq_msg_t m, c;
        zmq_msg_init (&m);
        if (zmq_msg_recv (&m, in, 0) < 0)
            continue;
        for (int k = 0; k < nk; k++) {
            zmq_msg_init (&c);
            zmq_msg_copy (&c, &m);
            zmq_msg_send (&c, out[k], 0);
        }
        if (zmq_msg_size (&m) >= sizeof (uint64_t)) {
            struct rawev *e = zmq_msg_data (&m);
            if (e->i < (uint64_t)total && when[e->i] == 0) {
                when[e->i] = monotime_now ();
                got++;
            }
        }
        zmq_msg_close (&m);
    }
    snprintf (ep, sizeof (ep), "%s/%d.out", dir, r);
    FILE *f = fair ? NULL : fopen (ep, "w");
    if (f) {
        fwrite (when, sizeof (double), total, f);
        fclose (f);
    }
    for (int k = 0; k < nk; k++)
        zmq_close (out[k]);     /* default linger: what is queued goes */
    zmq_close (in);
    zmq_ctx_term (ctx);
    exit (0);
}

/* Fork n relays for 'total' events, push them (at 'rate', 0: flat out),
 * and read back when each relay got each: the same figures as bgn_run. */
static int raw_run (int n, int fair, long total, double rate, double *secs,
                    double *p50, double *p99, long *lost)
{
    char dir[] = "/tmp/bench-event.XXXXXX", ep[600];
    pid_t *pids = calloc (2 * n, sizeof (pid_t));
    double *t_pub = calloc (total, sizeof (double));
    double *all = calloc (total, sizeof (double));
    double *when = calloc (total, sizeof (double));
    double t0, end = 0;
    int hwm = 100000;

    if (!mkdtemp (dir))
        die ("%s", "mkdtemp");
    for (int r = 0; r < n; r++) {
        if ((pids[r] = fork ()) == 0)
            relay (dir, r, n, total, fair);
        if (fair && (pids[n + r] = fork ()) == 0)
            subscriber (dir, r, total);
    }
    for (int r = 0; r < n; r++) {
        struct stat st;
        snprintf (ep, sizeof (ep), "%s/%d.ready", dir, r);
        while (stat (ep, &st) < 0)
            usleep (10000);
        snprintf (ep, sizeof (ep), "%s/%d.sub.ready", dir, r);
        while (fair && stat (ep, &st) < 0)
            usleep (10000);
    }
    void *ctx = zmq_ctx_new ();
    void *pub[2];
    snprintf (ep, sizeof (ep), "ipc://%s/0", dir);
    for (int k = 0; k < 2; k++) {
        pub[k] = zmq_socket (ctx, ZMQ_PUSH);
        zmq_setsockopt (pub[k], ZMQ_SNDHWM, &hwm, sizeof (hwm));
        zmq_connect (pub[k], ep);
    }
    usleep (200000);    /* every relay connected to its children */
    t0 = monotime_now ();
    for (long i = 0; i < total; i++) {
        struct rawev e = { .i = (uint64_t)i };
        if (rate > 0)
            sleep_until (t0 + i / rate);
        snprintf (e.payload, sizeof (e.payload), "bench.e {\"i\":%ld,"
                  "\"pad\":\"%s\"}", i % 1000000, PAYLOAD_PAD);
        t_pub[i] = monotime_now ();
        zmq_send (pub[i & 1], &e, sizeof (e.i) + strlen (e.payload), 0);
    }
    *lost = 0;
    for (int r = 0; r < n; r++) {
        for (int w = 0; w < (fair ? 2 : 1); w++) {
            pid_t pid = pids[r + w * n];
            int status;
            double limit = monotime_now () + TIMEOUT;
            while (waitpid (pid, &status, WNOHANG) == 0) {
                if (monotime_now () > limit) {
                    kill (pid, SIGKILL);
                    waitpid (pid, &status, 0);
                    break;
                }
                usleep (2000);
            }
        }
        snprintf (ep, sizeof (ep), "%s/%d.out", dir, r);
        FILE *f = fopen (ep, "r");
        size_t k = f ? fread (when, sizeof (double), total, f) : 0;
        if (f)
            fclose (f);
        unlink (ep);
        snprintf (ep, sizeof (ep), "%s/%d.ready", dir, r);
        unlink (ep);
        snprintf (ep, sizeof (ep), "%s/%d", dir, r);
        unlink (ep);
        snprintf (ep, sizeof (ep), "%s/%d.sub.ready", dir, r);
        unlink (ep);
        snprintf (ep, sizeof (ep), "%s/%d.sub", dir, r);
        unlink (ep);
        for (long i = 0; i < total; i++) {
            if ((size_t)i >= k || when[i] == 0) {
                (*lost)++;
                continue;
            }
            if (when[i] > all[i])
                all[i] = when[i];
        }
    }
    rmdir (dir);
    for (long i = 0; i < total; i++) {
        if (all[i] > end)
            end = all[i];
        all[i] = all[i] > 0 ? all[i] - t_pub[i] : 1e9;
    }
    *secs = end - t0;
    *p50 = pct (all, total, 0.5) * 1e3;
    *p99 = pct (all, total, 0.99) * 1e3;
    for (int k = 0; k < 2; k++)
        zmq_close (pub[k]);
    zmq_ctx_term (ctx);
    free (pids);
    free (t_pub);
    free (all);
    free (when);
    return 0;
}

static int do_raw (struct opts *o)
{
    double secs, p50, p99, x;
    long lost, lost2;

    if (o->size < 2 || o->size > 4096) {
        fprintf (stderr, "bench-event raw: --size 2..4096\n");
        return 1;
    }
    raw_run (o->size, o->fair, o->events, 0, &secs, &x, &x, &lost);
    raw_run (o->size, o->fair, o->paced, o->rate, &x, &p50, &p99, &lost2);
    printf ("size=%d events=%ld rate_eps=%.0f tta_p50_ms=%.3f "
            "tta_p99_ms=%.3f lost=%ld\n", o->size, o->events,
            secs > 0 ? o->events / secs : 0, p50, p99, lost + lost2);
    return 0;
}

int main (int argc, char **argv)
{
    static const struct option longopts[] = {
        { "check", no_argument, NULL, 'c' },
        { "events", required_argument, NULL, 'm' },
        { "paced", required_argument, NULL, 'p' },
        { "rate", required_argument, NULL, 'r' },
        { "size", required_argument, NULL, 'n' },
        { "group", required_argument, NULL, 'g' },
        { "subs", required_argument, NULL, 's' },
        { "fair", no_argument, NULL, 'f' },
        { NULL, 0, NULL, 0 },
    };
    struct opts o = { .events = 100000, .paced = 3000, .rate = 1000,
                      .group = 1 };
    int check = 0, c;

    while ((c = getopt_long (argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case 'c': check = 1; break;
        case 'm': o.events = atol (optarg); break;
        case 'p': o.paced = atol (optarg); break;
        case 'r': o.rate = atof (optarg); break;
        case 'n': o.size = atoi (optarg); break;
        case 'g': o.group = atoi (optarg); break;
        case 's': o.subs = atoi (optarg); break;
        case 'f': o.fair = 1; break;
        default:
            goto usage;
        }
    }
    if (check)
        return do_check ();
    if (optind != argc - 1 || o.events < 1 || o.paced < 1 || !(o.rate > 0))
        goto usage;
    if (!strcmp (argv[optind], "bgn"))
        return do_bgn (&o);
    if (!strcmp (argv[optind], "raw"))
        return do_raw (&o);
usage:
    fprintf (stderr, "Usage: bench-event --check\n"
             "       bench-event bgn [--events M] [--group G] [--paced P] "
             "[--rate R]\n"
             "       bench-event raw --size N [--fair] [--events M] "
             "[--paced P] [--rate R]\n");
    return 1;
}
