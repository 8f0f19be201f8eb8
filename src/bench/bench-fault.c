/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* bench-fault.c: failure detection and reroute time after a SIGKILL.
 *
 * Run under "bgn start --keep-going" (needs $BGN_RUNDIR):
 *   bench-fault --topology T [--victim V] [--signal KILL|STOP]
 *               [--timeout S] [--ping-timeout S]
 *
 * Picks a destination D whose path from rank 0 starts at V (the overlay
 * prefers, among the equal-cost next hops sorted ascending, the one at
 * index (self + dest) mod count: the same rule is applied here); without
 * --victim, D is the farthest rank from 0 whose preferred first hop is
 * not D itself, and V is that first hop.  Checks a ping 0 -> D works,
 * sends V (pid from $BGN_RUNDIR/brokers) SIGKILL, or SIGSTOP (a hung
 * broker: only keepalives can tell), and then polls:
 *   - overlay.status on every neighbour of V (each through its own
 *     broker's local socket) until it shows peer V "down";
 *   - broker.ping from rank 0 to D, each with a short deadline, until one
 *     is answered.
 * Prints one line:
 *   victim=V dest=D hops_before=H detect_first_ms=.. detect_last_ms=..
 *   reroute_ms=.. hops_after=H neighbours=K detected=K
 * (-1 for anything not seen before --timeout).  The reroute time has the
 * resolution of --ping-timeout (default 20 ms): a ping lost in the dead
 * broker is noticed only when its deadline passes.  A stopped victim is
 * SIGKILLed at the end.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>

#include "src/common/libclient/client.h"
#include "src/common/libbgn/bgn.h"
#include "src/common/libutil/monotime.h"

#define MAXN 64

static bgn_t *open_rank (const char *rundir, int rank)
{
    char uri[512], err[256];
    bgn_t *h;

    snprintf (uri, sizeof (uri), "ipc://%s/%d/local", rundir, rank);
    if (!(h = bgn_open (uri, err, sizeof (err)))) {
        fprintf (stderr, "bench-fault: rank %d: %s\n", rank, err);
        exit (1);
    }
    return h;
}

/* Preferred first hop from self to dest, as the overlay chooses it. */
static int preferred_hop (struct bgn_topo *t, uint32_t self, uint32_t dest)
{
    uint32_t hops[MAXN];
    int n = bgn_topo_next_hop (t, self, dest, hops, MAXN);
    if (n <= 0)
        return -1;
    return (int)hops[(self + dest) % (uint32_t)n];
}

/* Ping rank dest with a deadline; returns the hop count or -1. */
static int ping (bgn_t *h, uint32_t dest, double timeout)
{
    bgn_rpc_t *rpc = bgn_rpc (h, "broker.ping", dest, "{}", 0);
    const char *s;
    int hops = -1;

    if (!rpc)
        return -1;
    bgn_rpc_set_timeout (rpc, timeout);
    if (bgn_rpc_get (rpc, &s) == 0) {
        json_t *o = s ? json_loads (s, 0, NULL) : NULL;
        json_int_t hh = 0;
        if (o && json_unpack (o, "{s:I}", "hops", &hh) == 0)
            hops = (int)hh;
        else
            hops = 0;
        json_decref (o);
    }
    bgn_rpc_destroy (&rpc);
    return hops;
}

/* Does rank's overlay.status show peer victim down? 1 yes, 0 no, -1 error */
static int sees_down (bgn_t *h, uint32_t rank, uint32_t victim)
{
    bgn_rpc_t *rpc = bgn_rpc (h, "overlay.status", rank, NULL, 0);
    const char *s;
    int down = -1;

    if (!rpc)
        return -1;
    bgn_rpc_set_timeout (rpc, 1.);
    if (bgn_rpc_get (rpc, &s) == 0 && s) {
        json_t *o = json_loads (s, 0, NULL), *peers, *p;
        size_t i;
        down = 0;
        if (o && (peers = json_object_get (o, "peers"))) {
            json_array_foreach (peers, i, p) {
                json_int_t r = -1;
                const char *st = NULL;
                if (json_unpack (p, "{s:I s:s}", "rank", &r, "state", &st) == 0
                    && r == victim && !strcmp (st, "down"))
                    down = 1;
            }
        }
        json_decref (o);
    }
    bgn_rpc_destroy (&rpc);
    return down;
}

static int pid_gone (pid_t pid)
{
    char path[64], buf[256];
    FILE *f;
    char *p;

    snprintf (path, sizeof (path), "/proc/%d/stat", (int)pid);
    if (!(f = fopen (path, "r")))
        return 1;
    if (!fgets (buf, sizeof (buf), f))
        buf[0] = '\0';
    fclose (f);
    p = strrchr (buf, ')');
    return p && (p[2] == 'Z' || p[2] == 'X');
}

int main (int argc, char **argv)
{
    static const struct option longopts[] = {
        { "topology", required_argument, NULL, 'T' },
        { "victim", required_argument, NULL, 'v' },
        { "timeout", required_argument, NULL, 't' },
        { "ping-timeout", required_argument, NULL, 'p' },
        { "signal", required_argument, NULL, 's' },
        { NULL, 0, NULL, 0 },
    };
    const char *topo_spec = "bgn", *rundir = getenv ("BGN_RUNDIR");
    int victim = 0, sig = SIGKILL, c, size = 0, dest = -1, nn, hops_before;
    double timeout = 5., ping_timeout = 0.02;
    uint32_t nb[MAXN];
    bgn_t *h0, *hn[MAXN];
    double tdet[MAXN], t0, treroute = -1, first = -1, last = -1;
    int hops_after = -1, detected = 0;
    pid_t pid = -1;
    char path[512];
    FILE *f;
    int r, p;

    while ((c = getopt_long (argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case 'T': topo_spec = optarg; break;
        case 'v': victim = atoi (optarg); break;
        case 't': timeout = atof (optarg); break;
        case 'p': ping_timeout = atof (optarg); break;
        case 's':
            sig = !strcmp (optarg, "STOP") ? SIGSTOP : SIGKILL;
            break;
        default:
            fprintf (stderr, "Usage: bench-fault --topology T --victim V "
                     "[--timeout S] [--ping-timeout S]\n");
            return 1;
        }
    }
    if (!rundir) {
        fprintf (stderr, "bench-fault: run under bgn start (BGN_RUNDIR)\n");
        return 1;
    }
    snprintf (path, sizeof (path), "%s/brokers", rundir);
    if (!(f = fopen (path, "r"))) {
        perror (path);
        return 1;
    }
    int pids[4096];
    char line[256];
    /* "rank pid [state]" lines */
    while (fgets (line, sizeof (line), f) && size < 4096)
        if (sscanf (line, "%d %d", &r, &p) == 2 && r >= 0 && r < 4096)
            pids[size++] = p;
    fclose (f);
    struct bgn_topo *t = bgn_topo_create (topo_spec, size);
    if (t && victim == 0) {
        for (int d = 1, best = -1; d < size; d++) {
            int dist = bgn_topo_distance (t, 0, d);
            int v = preferred_hop (t, 0, d);
            if (v != d && dist > best) {
                best = dist;
                victim = v;
            }
        }
    }
    if (!t || victim <= 0 || victim >= size || (pid = pids[victim]) <= 0) {
        fprintf (stderr, "bench-fault: bad topology, size or victim\n");
        return 1;
    }
    /* the farthest destination whose path from 0 starts at the victim */
    for (int d = 1, best = -1; d < size; d++) {
        int dist = bgn_topo_distance (t, 0, d);
        if (d != victim && preferred_hop (t, 0, d) == victim && dist > best) {
            best = dist;
            dest = d;
        }
    }
    if (dest < 0)
        dest = victim == size - 1 ? 1 : size - 1;
    nn = bgn_topo_neighbours (t, victim, nb, MAXN);
    h0 = open_rank (rundir, 0);
    for (int i = 0; i < nn; i++) {
        hn[i] = open_rank (rundir, nb[i]);
        tdet[i] = -1;
    }
    if ((hops_before = ping (h0, dest, 2.)) < 0) {
        fprintf (stderr, "bench-fault: ping 0 -> %d failed before the kill\n",
                 dest);
        return 1;
    }
    t0 = monotime_now ();
    kill (pid, sig);
    while (sig == SIGKILL && !pid_gone (pid) && monotime_now () < t0 + 1.)
        usleep (100);
    while (monotime_now () < t0 + timeout
           && (detected < nn || treroute < 0)) {
        for (int i = 0; i < nn; i++) {
            if (tdet[i] < 0 && sees_down (hn[i], nb[i], victim) == 1) {
                tdet[i] = monotime_now () - t0;
                detected++;
            }
        }
        if (treroute < 0) {
            int hh = ping (h0, dest, ping_timeout);
            if (hh >= 0) {
                treroute = monotime_now () - t0;
                hops_after = hh;
            }
        }
        else
            usleep (2000);
    }
    if (sig == SIGSTOP)
        kill (pid, SIGKILL);
    for (int i = 0; i < nn; i++) {
        if (tdet[i] >= 0 && (first < 0 || tdet[i] < first))
            first = tdet[i];
        if (tdet[i] > last)
            last = tdet[i];
    }
    printf ("signal=%s victim=%d dest=%d hops_before=%d detect_first_ms=%.0f "
            "detect_last_ms=%.0f reroute_ms=%.0f hops_after=%d "
            "neighbours=%d detected=%d\n", sig == SIGSTOP ? "STOP" : "KILL",
            victim, dest, hops_before,
            first < 0 ? -1 : first * 1e3,
            detected == nn ? last * 1e3 : -1.,
            treroute < 0 ? -1 : treroute * 1e3, hops_after, nn, detected);
    bgn_close (&h0);
    for (int i = 0; i < nn; i++)
        bgn_close (&hn[i]);
    bgn_topo_destroy (&t);
    return 0;
}
