/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* cmd_fault.c: "bgn fault": inject broker faults into a 'bgn start'
 * instance, to see (and test) how the overlay copes.
 *
 * Requests go to the instance's control FIFO ($BGN_RUNDIR/control), so
 * that bgn start itself signals, reaps and respawns its brokers and knows
 * that the exits are intended.  The command then watches
 * $BGN_RUNDIR/brokers ("rank pid state" lines) until the fault has taken
 * effect, with a deadline.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "src/common/libutil/fsd.h"
#include "cmd.h"
#include "src/common/libutil/monotime.h"

#define MAX_RANKS 4096

struct broker_state {
    int pid;
    char state[16];
};

static void usage (FILE *f)
{
    fprintf (f,
"Usage: bgn fault kill|stop|cont|restart TARGET...\n"
"       bgn fault chaos --duration=T --max-down=F [--seed=S] [--interval=T]\n"
"                       [--include-rank0] [--spare=RANKS] [--no-restore]\n"
"Inject faults into the instance made by 'bgn start' (BGN_RUNDIR).\n"
"A TARGET is a rank, a set of ranks (3,5-7), a host or a hostlist\n"
"(node[3-5]):\n"
"  kill      SIGKILL the broker (a crash)\n"
"  stop      SIGSTOP it (a hung broker: alive but silent)\n"
"  cont      SIGCONT a stopped broker\n"
"  restart   kill it if running and start it again with the same rank\n"
"  chaos     random kills and restarts for T, never more than F brokers\n"
"            down at once (rank 0 is spared unless --include-rank0); at the\n"
"            end every killed broker is restarted unless --no-restore;\n"
"            --spare=3,7 never touches those ranks\n"
"\n"
"  -d, --duration=T     chaos run time (e.g. 60s)\n"
"  -m, --max-down=F     most brokers down at once\n"
"      --seed=S         random seed (default: time)\n"
"  -i, --interval=T     mean time between chaos actions (default 1s)\n"
"  -t, --timeout=T      deadline for each fault to take effect (default 30s;\n"
"                       0 = none)\n"
"  -h, --help           this text\n");
}

static void sleep_seconds (double s)
{
    struct timespec ts = { (time_t)s, (long)((s - floor (s)) * 1e9) };
    nanosleep (&ts, NULL);
}

static const char *rundir (void)
{
    const char *d = getenv ("BGN_RUNDIR");
    if (!d)
        cmd_die ("fault", "BGN_RUNDIR is not set (run under 'bgn start')");
    return d;
}

/* Read the brokers file; returns the number of ranks, -1 on error. */
static int read_states (struct broker_state *st, int max)
{
    char path[PATH_MAX];
    FILE *f;
    int r, pid, n = 0;
    char state[16];

    snprintf (path, sizeof (path), "%s/brokers", rundir ());
    if (!(f = fopen (path, "r")))
        return -1;
    while (fscanf (f, "%d %d %15s", &r, &pid, state) == 3) {
        if (r >= 0 && r < max) {
            st[r].pid = pid;
            snprintf (st[r].state, sizeof (st[r].state), "%s", state);
            if (r + 1 > n)
                n = r + 1;
        }
    }
    fclose (f);
    return n;
}

static void send_request (const char *verb, int rank)
{
    char path[PATH_MAX], line[64];
    int fd, n;

    snprintf (path, sizeof (path), "%s/control", rundir ());
    /* O_NONBLOCK: fail at once if nobody is reading (no bgn start). */
    if ((fd = open (path, O_WRONLY | O_NONBLOCK)) < 0)
        cmd_die ("fault", "%s: %s (is 'bgn start' running?)", path,
                 strerror (errno));
    n = snprintf (line, sizeof (line), "%s %d\n", verb, rank);
    if (write (fd, line, n) != n)
        cmd_die ("fault", "%s: %s", path, strerror (errno));
    close (fd);
}

/* Wait until rank's state is 'want' (and, if old_pid > 0, its pid has
 * changed).  Returns 0, or -1 after the timeout.
 */
static int wait_state (int rank, const char *want, int old_pid, double timeout)
{
    struct broker_state st[MAX_RANKS];
    double deadline = monotime_now () + timeout;

    do {
        int n = read_states (st, MAX_RANKS);
        if (n > rank && !strcmp (st[rank].state, want)
            && (old_pid <= 0 || st[rank].pid != old_pid))
            return 0;
        sleep_seconds (0.02);
    } while (monotime_now () < deadline);
    return -1;
}

static int do_fault (const char *verb, int rank, double timeout)
{
    struct broker_state st[MAX_RANKS];
    int n = read_states (st, MAX_RANKS);
    const char *want;
    int old_pid = 0;

    if (n < 0)
        cmd_die ("fault", "cannot read %s/brokers", rundir ());
    if (rank >= n) {
        fprintf (stderr, "bgn fault: rank %d: the instance has %d ranks\n",
                 rank, n);
        return -1;
    }
    if (!strcmp (verb, "kill"))
        want = "dead";
    else if (!strcmp (verb, "stop"))
        want = "stopped";
    else if (!strcmp (verb, "cont"))
        want = "running";
    else {
        want = "running";
        old_pid = st[rank].pid;
    }
    send_request (verb, rank);
    if (wait_state (rank, want, old_pid, timeout) < 0) {
        fprintf (stderr, "bgn fault: %s %d: not %s after %gs\n", verb, rank,
                 want, timeout);
        return -1;
    }
    return 0;
}

static int chaos (double duration, int max_down, unsigned seed,
                  double interval, int include0, int restore, double timeout,
                  const idset_t *spare)
{
    struct broker_state st[MAX_RANKS];
    int n = read_states (st, MAX_RANKS);
    double end = monotime_now () + duration;
    int kills = 0, restarts = 0, rc = 0;
    int first = include0 ? 0 : 1;

    if (n < 0)
        cmd_die ("fault", "cannot read %s/brokers", rundir ());
    if (n - first < 1 || max_down < 1) {
        fprintf (stderr, "bgn fault: chaos: nothing to do (%d ranks, "
                 "--max-down=%d)\n", n, max_down);
        return 1;
    }
    srand (seed);
    printf ("chaos: %d ranks, max %d down, %gs, seed %u\n", n, max_down,
            duration, seed);
    fflush (stdout);
    while (monotime_now () < end) {
        int dead[MAX_RANKS], live[MAX_RANKS], nd = 0, nl = 0;
        read_states (st, MAX_RANKS);
        for (int r = first; r < n; r++) {
            if (idset_test (spare, r))
                continue;
            if (!strcmp (st[r].state, "dead"))
                dead[nd++] = r;
            else if (!strcmp (st[r].state, "running"))
                live[nl++] = r;
        }
        int do_kill = nd < max_down && nl > 0 && (nd == 0 || rand () % 2);
        if (do_kill) {
            int r = live[rand () % nl];
            printf ("%.1f kill %d\n", duration - (end - monotime_now ()), r);
            fflush (stdout);
            if (do_fault ("kill", r, timeout) < 0)
                rc = 1;
            kills++;
        }
        else if (nd > 0) {
            int r = dead[rand () % nd];
            printf ("%.1f restart %d\n", duration - (end - monotime_now ()), r);
            fflush (stdout);
            if (do_fault ("restart", r, timeout) < 0)
                rc = 1;
            restarts++;
        }
        sleep_seconds (interval * (0.5 + (double)rand () / RAND_MAX));
    }
    if (restore) {
        read_states (st, MAX_RANKS);
        for (int r = 0; r < n; r++) {
            if (!strcmp (st[r].state, "dead")) {
                printf ("restore: restart %d\n", r);
                if (do_fault ("restart", r, timeout) < 0)
                    rc = 1;
                restarts++;
            }
        }
    }
    printf ("chaos: %d kills, %d restarts\n", kills, restarts);
    return rc;
}

static double duration_arg (const char *opt, const char *s)
{
    double d;
    if (fsd_parse_duration (s, &d) < 0 || !(d > 0))
        cmd_die ("fault", "%s: '%s' is not a duration (e.g. 500ms, 60s)",
                 opt, s);
    return d;
}

int cmd_fault (int argc, char **argv)
{
    static const struct option longopts[] = {
        { "duration", required_argument, NULL, 'd' },
        { "max-down", required_argument, NULL, 'm' },
        { "seed", required_argument, NULL, 's' },   /* long only */
        { "interval", required_argument, NULL, 'i' },
        { "timeout", required_argument, NULL, 't' },
        { "include-rank0", no_argument, NULL, '0' },
        { "no-restore", no_argument, NULL, 'R' },
        { "spare", required_argument, NULL, 'S' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    double duration = -1, interval = 1., timeout = 30.;
    int max_down = -1, include0 = 0, restore = 1, c, rc = 0;
    unsigned seed = (unsigned)time (NULL);
    idset_t *spare = NULL;
    char *end;

    while ((c = getopt_long (argc, argv, ":d:m:i:t:h", longopts,
                             NULL)) != -1) {
        switch (c) {
        case 'd': duration = duration_arg ("--duration", optarg); break;
        case 'i': interval = duration_arg ("--interval", optarg); break;
        case 't': timeout = cmd_timeout_arg ("fault", "--timeout", optarg);
            break;
        case 'm':
            max_down = strtol (optarg, &end, 10);
            if (*end || end == optarg || max_down < 1)
                cmd_die ("fault", "--max-down: '%s' is not a count >= 1",
                         optarg);
            break;
        case 's':
            seed = strtoul (optarg, &end, 10);
            if (*end || end == optarg)
                cmd_die ("fault", "--seed: '%s' is not a number", optarg);
            break;
        case '0': include0 = 1; break;
        case 'R': restore = 0; break;
        case 'S':
            idset_destroy (&spare);
            spare = cmd_ranks_arg ("fault", "--spare", optarg, NULL);
            break;
        case 'h': usage (stdout); return 0;
        default: return cmd_bad_option ("fault", argv, c);
        }
    }
    if (optind >= argc)
        cmd_usage_die ("fault", "which fault? (kill, stop, cont, restart, "
                       "chaos)");
    const char *verb = argv[optind++];
    if (!strcmp (verb, "chaos")) {
        if (duration < 0 || max_down < 1 || optind != argc)
            cmd_usage_die ("fault", "chaos needs --duration and --max-down "
                           "and no TARGET");
        rc = chaos (duration, max_down, seed, interval, include0, restore,
                    timeout, spare);
        idset_destroy (&spare);
        return rc;
    }
    if (strcmp (verb, "kill") && strcmp (verb, "stop") && strcmp (verb, "cont")
        && strcmp (verb, "restart"))
        cmd_usage_die ("fault", "'%s' is not a fault (kill, stop, cont, "
                       "restart, chaos)", verb);
    if (optind >= argc)
        cmd_usage_die ("fault", "%s: which rank or host?", verb);
    for (; optind < argc; optind++) {
        idset_t *ids = cmd_ranks_arg ("fault", NULL, argv[optind], NULL);
        for (int r = idset_first (ids); r >= 0; r = idset_next (ids, r))
            if (do_fault (verb, r, timeout) < 0)
                rc = 1;
        idset_destroy (&ids);
    }
    idset_destroy (&spare);
    return rc;
}
