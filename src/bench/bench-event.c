/* bench-event.c: event fan-out, run under "bgn start" (needs $BGN_RUNDIR).
 *
 *   bench-event --check
 *       subscribe on the last rank, publish at rank 0; exit 0 if the event
 *       arrives within 1 s, 2 if it does not (events are not multicast).
 *   bench-event [--events M] [--reps K]
 *       subscribe on every rank (one handle each), then
 *       - time-to-all: publish one event, time until every rank's
 *         subscriber has it; median of K;
 *       - rate: publish M events back to back (each publish is an RPC to
 *         rank 0), time until every subscriber has all M.
 *       Prints: size=N tta_med_ms=.. rate_eps=.. lost=..
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "src/common/libclient/client.h"
#include "src/common/libutil/monotime.h"

static int cmp_double (const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y ? 1 : 0;
}

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
    char path[512];
    int r, p, n = 0;
    FILE *f;

    snprintf (path, sizeof (path), "%s/brokers", rundir);
    if (!(f = fopen (path, "r")))
        return -1;
    char line[256];
    while (fgets (line, sizeof (line), f))      /* "rank pid [state]" */
        if (sscanf (line, "%d %d", &r, &p) == 2)
            n++;
    fclose (f);
    return n;
}

/* Take whatever events are queued (timeout 0) on every handle. */
static void drain_all (bgn_t **h, long *got, int n, double timeout)
{
    for (int i = 0; i < n; i++) {
        msg_t *m;
        while ((m = bgn_event_recv (h[i], timeout))) {
            msg_destroy (&m);
            got[i]++;
        }
    }
}

int main (int argc, char **argv)
{
    static const struct option longopts[] = {
        { "check", no_argument, NULL, 'c' },
        { "events", required_argument, NULL, 'm' },
        { "reps", required_argument, NULL, 'k' },
        { NULL, 0, NULL, 0 },
    };
    const char *rundir = getenv ("BGN_RUNDIR");
    int check = 0, reps = 5, c, n;
    long events = 2000;

    while ((c = getopt_long (argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case 'c': check = 1; break;
        case 'm': events = atol (optarg); break;
        case 'k': reps = atoi (optarg); break;
        default:
            fprintf (stderr, "Usage: bench-event [--check] [--events M] "
                     "[--reps K]\n");
            return 1;
        }
    }
    if (!rundir || (n = count_ranks (rundir)) < 1 || reps < 1 || events < 1) {
        fprintf (stderr, "bench-event: run under bgn start (BGN_RUNDIR)\n");
        return 1;
    }
    bgn_t *pub = open_rank (rundir, 0);
    if (check) {
        bgn_t *sub = open_rank (rundir, n - 1);
        msg_t *m;
        if (bgn_event_subscribe (sub, "bench.") < 0
            || bgn_event_publish (pub, "bench.check", "{}", NULL) < 0) {
            perror ("bench-event: subscribe/publish");
            return 1;
        }
        int rc = (m = bgn_event_recv (sub, 1.)) ? 0 : 2;
        msg_destroy (&m);
        bgn_close (&sub);
        bgn_close (&pub);
        return rc;
    }
    bgn_t **h = calloc (n, sizeof (*h));
    long *got = calloc (n, sizeof (*got));
    double *tta = calloc (reps, sizeof (*tta));
    if (!h || !got || !tta)
        return 1;
    for (int i = 0; i < n; i++) {
        h[i] = open_rank (rundir, i);
        if (bgn_event_subscribe (h[i], "bench.") < 0) {
            perror ("bench-event: subscribe");
            return 1;
        }
    }
    /* time to all */
    for (int k = 0; k < reps; k++) {
        double t0 = monotime_now ();
        if (bgn_event_publish (pub, "bench.tta", "{}", NULL) < 0) {
            perror ("bench-event: publish");
            return 1;
        }
        for (int i = 0; i < n; i++) {
            msg_t *m = bgn_event_recv (h[i], 5.);
            if (!m) {
                fprintf (stderr, "bench-event: rank %d got no event\n", i);
                return 1;
            }
            msg_destroy (&m);
        }
        tta[k] = (monotime_now () - t0) * 1e3;
    }
    qsort (tta, reps, sizeof (double), cmp_double);
    /* rate */
    double t0 = monotime_now (), t1;
    long lost = 0, need;
    for (long e = 0; e < events; e++) {
        if (bgn_event_publish (pub, "bench.rate", "{}", NULL) < 0) {
            perror ("bench-event: publish");
            return 1;
        }
        if ((e & 15) == 15)
            drain_all (h, got, n, 0.);
    }
    need = events;
    for (int i = 0; i < n; i++) {
        while (got[i] < need) {
            msg_t *m = bgn_event_recv (h[i], 2.);
            if (!m)
                break;
            msg_destroy (&m);
            got[i]++;
        }
        if (got[i] < need)
            lost += need - got[i];
    }
    t1 = monotime_now ();
    printf ("size=%d tta_med_ms=%.2f rate_eps=%.0f lost=%ld\n", n,
            tta[reps / 2], events / (t1 - t0), lost);
    for (int i = 0; i < n; i++)
        bgn_close (&h[i]);
    bgn_close (&pub);
    free (h);
    free (got);
    free (tta);
    return 0;
}
