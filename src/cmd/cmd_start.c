/* cmd_start.c: "bgn start": an instance of N brokers on this host.
 *
 * bgn start is the brokers' PMI-1 server (libpmi's pmi_server), their
 * parent and their reaper.  It makes an instance directory (mode 0700)
 * with one run directory per rank, starts the brokers with PMI_FD/
 * PMI_RANK/PMI_SIZE, waits until all have bootstrapped and rank 0 reports
 * the overlay healthy, runs COMMAND with BGN_URI and BGN_RUNDIR set, and
 * then shuts every broker down.
 *
 * No broker outlives it: each broker gets PR_SET_PDEATHSIG (SIGKILL if bgn
 * start itself dies), is sent SIGTERM at the end, and SIGKILL if it has
 * not exited within the grace period.  A broker that fails during start-up
 * ends the instance with an error naming its rank; after start-up a
 * broker's exit is reported and also ends the instance, unless
 * --keep-going (fault tests kill brokers on purpose).
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>

#include "src/common/libpmi/pmi_server.h"
#include "src/common/libutil/fsd.h"
#include "cmd.h"
#include "src/common/libutil/monotime.h"

struct broker_proc {
    pid_t pid;
    int status;
    int exited;
    int expected;      /* bgn start killed it for a fault: not a failure */
    int stopped;       /* SIGSTOPped by a fault */
    int restarts;
};

struct instance {
    int size;
    char dir[PATH_MAX];
    char *broker_path;
    char **broker_args;         /* argv template; slot 1 is --rundir */
    int nargs;
    struct broker_proc *procs;
    pmi_server_t *pmi;
    int sigfd;
    int ctlfd;                  /* FIFO for 'bgn fault' requests */
    pid_t pgid;
    pid_t cmd_pid;
    int cmd_status;
    int cmd_exited;
    int keep_going;
    int verbose;
    int failed;                 /* a broker failed: exit non-zero */
    double startup_timeout;
    double shutdown_grace;
};

static void usage (FILE *f)
{
    fprintf (f,
"Usage: bgn start [OPTIONS] [--] [COMMAND [ARGS...]]\n"
"Start an instance of N brokers on this host, wait until the overlay is\n"
"up, run COMMAND with BGN_URI (rank 0) and BGN_RUNDIR set, then shut the\n"
"brokers down and exit with COMMAND's status.  Without COMMAND, run until\n"
"interrupted (SIGINT/SIGTERM).\n"
"\n"
"  -s, --size=N            number of brokers (default 1)\n"
"  -c, --config=PATH       broker config file or directory\n"
"  -o, --setattr=KEY=VAL   config override for every broker (repeatable)\n"
"  -T, --topology=T        shorthand for -o overlay.topology=T\n"
"                          (bgn, bgn:R, kary:K, binomial)\n"
"  -w, --wait-timeout=T    start-up deadline (default 60s)\n"
"  -k, --keep-going        a broker exiting after start-up is reported,\n"
"                          not fatal (for fault tests)\n"
"  -v, --verbose           brokers log more (repeatable)\n"
"  -h, --help              this text\n"
"\n"
"Exit status: COMMAND's, or 1 if a broker failed or start-up failed.\n");
}

static void logmsg (struct instance *in, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));
static void logmsg (struct instance *in, const char *fmt, ...)
{
    va_list ap;
    fprintf (stderr, "bgn start: ");
    va_start (ap, fmt);
    vfprintf (stderr, fmt, ap);
    va_end (ap);
    fputc ('\n', stderr);
}

static void describe_status (int status, char *buf, size_t len)
{
    if (WIFEXITED (status))
        snprintf (buf, len, "exited with status %d", WEXITSTATUS (status));
    else if (WIFSIGNALED (status))
        snprintf (buf, len, "killed by signal %d (%s)", WTERMSIG (status),
                  strsignal (WTERMSIG (status)));
    else
        snprintf (buf, len, "ended with wait status 0x%x", status);
}

static int rm_entry (const char *path, const struct stat *sb, int flag,
                     struct FTW *ftw)
{
    return remove (path) < 0 && errno != ENOENT ? -1 : 0;
}

static void instance_remove_dir (struct instance *in)
{
    if (in->dir[0])
        nftw (in->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Record "rank pid state" lines (state: starting, running, stopped,
 * dead) for tools like 'bgn fault'. */
static void write_pidfile (struct instance *in)
{
    char path[PATH_MAX + 16], tmp[PATH_MAX + 16];
    FILE *f;

    snprintf (path, sizeof (path), "%s/brokers", in->dir);
    snprintf (tmp, sizeof (tmp), "%s/brokers.tmp", in->dir);
    if (!(f = fopen (tmp, "w")))
        return;
    for (int r = 0; r < in->size; r++) {
        struct broker_proc *b = &in->procs[r];
        const char *state = "running";
        if (b->exited)
            state = "dead";
        else if (b->stopped)
            state = "stopped";
        else if (in->pmi && pmi_server_client_state (in->pmi, r)
                                == PMI_CLIENT_CONNECTED)
            state = "starting";
        fprintf (f, "%d %d %s\n", r, b->exited ? -1 : (int)b->pid, state);
    }
    if (fclose (f) == 0)
        rename (tmp, path);
}

static pid_t spawn_broker (struct instance *in, int rank, pid_t pgid,
                           int rejoin)
{
    int sv[2];
    char rundir[PATH_MAX + 32], errbuf[256];
    pid_t pid;

    if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        return -1;
    if ((pid = fork ()) < 0) {
        close (sv[0]);
        close (sv[1]);
        return -1;
    }
    if (pid == 0) {
        char fdstr[16], rankstr[16], sizestr[16];
        sigset_t none;
        sigemptyset (&none);
        sigprocmask (SIG_SETMASK, &none, NULL);
        prctl (PR_SET_PDEATHSIG, SIGKILL);
        setpgid (0, pgid);
        close (sv[0]);
        /* The broker's end must survive exec. */
        fcntl (sv[1], F_SETFD, 0);
        snprintf (fdstr, sizeof (fdstr), "%d", sv[1]);
        snprintf (rankstr, sizeof (rankstr), "%d", rank);
        snprintf (sizestr, sizeof (sizestr), "%d", in->size);
        setenv ("PMI_FD", fdstr, 1);
        setenv ("PMI_RANK", rankstr, 1);
        setenv ("PMI_SIZE", sizestr, 1);
        unsetenv ("BGN_URI");
        snprintf (rundir, sizeof (rundir), "--rundir=%s/%d", in->dir, rank);
        in->broker_args[1] = rundir;
        execv (in->broker_path, in->broker_args);
        fprintf (stderr, "bgn start: exec %s: %s\n", in->broker_path,
                 strerror (errno));
        _exit (127);
    }
    close (sv[1]);
    if ((rejoin ? pmi_server_rejoin_client (in->pmi, rank, sv[0], errbuf,
                                            sizeof (errbuf))
                : pmi_server_add_client (in->pmi, rank, sv[0], errbuf,
                                         sizeof (errbuf))) < 0) {
        logmsg (in, "rank %d: %s", rank, errbuf);
        return -1;
    }
    return pid;
}

static int rank_of_pid (struct instance *in, pid_t pid)
{
    for (int r = 0; r < in->size; r++)
        if (in->procs[r].pid == pid && !in->procs[r].exited)
            return r;
    return -1;
}

/* Reap every exited child.  Returns the number of brokers that exited. */
static int reap (struct instance *in, int starting, int stopping)
{
    int status, n = 0;
    pid_t pid;
    char why[128];

    while ((pid = waitpid (-1, &status, WNOHANG)) > 0) {
        int r = rank_of_pid (in, pid);
        if (pid == in->cmd_pid) {
            in->cmd_exited = 1;
            in->cmd_status = status;
            continue;
        }
        if (r < 0)
            continue;
        in->procs[r].exited = 1;
        in->procs[r].status = status;
        describe_status (status, why, sizeof (why));
        if (in->procs[r].expected) {
            logmsg (in, "rank %d %s (fault injection)", r, why);
            write_pidfile (in);
            continue;
        }
        if (!starting && !stopping && WIFEXITED (status)
            && WEXITSTATUS (status) == 0) {
            /* an orderly leave (overlay-disconnect, broker.shutdown):
             * the others route around it */
            logmsg (in, "rank %d left the instance", r);
            in->procs[r].expected = 1;
            write_pidfile (in);
            continue;
        }
        n++;
        if (starting)
            logmsg (in, "rank %d %s during start-up", r, why);
        else if (!stopping || !((WIFEXITED (status) && WEXITSTATUS (status) == 0)
                                || (WIFSIGNALED (status)
                                    && WTERMSIG (status) == SIGTERM)))
            logmsg (in, "rank %d %s", r, why);
        write_pidfile (in);
    }
    return n;
}

static void signal_brokers (struct instance *in, int sig)
{
    for (int r = 0; r < in->size; r++)
        if (in->procs[r].pid > 0 && !in->procs[r].exited)
            kill (in->procs[r].pid, sig);
}

static int brokers_alive (struct instance *in)
{
    int n = 0;
    for (int r = 0; r < in->size; r++)
        if (in->procs[r].pid > 0 && !in->procs[r].exited)
            n++;
    return n;
}

/* Wait for signals/children/PMI traffic for up to 'timeout' seconds.
 * 'starting' is 1 during start-up, 2 during shutdown, 0 otherwise (it
 * decides how broker exits are reported).  Returns the signal number that
 * arrived (SIGINT/SIGTERM), 0 otherwise.
 */
static void fault_request (struct instance *in, const char *line);

/* Read whole lines from the control FIFO and act on them. */
static void control_readable (struct instance *in)
{
    static char buf[4096];
    static size_t len;
    ssize_t n;

    while ((n = read (in->ctlfd, buf + len, sizeof (buf) - 1 - len)) > 0) {
        char *nl;
        len += n;
        buf[len] = '\0';
        while ((nl = strchr (buf, '\n'))) {
            *nl = '\0';
            fault_request (in, buf);
            memmove (buf, nl + 1, len - (nl + 1 - buf) + 1);
            len -= nl + 1 - buf;
        }
        if (len >= sizeof (buf) - 1)
            len = 0;   /* an over-long line: drop it */
    }
}

/* Wait for signals/children/PMI traffic/fault requests for up to
 * 'timeout' seconds.  'starting' is 1 during start-up, 2 during shutdown,
 * 0 otherwise (it decides how broker exits are reported, and whether
 * fault requests are taken).  Returns the signal number that arrived
 * (SIGINT/SIGTERM), 0 otherwise.
 */
static int service_events (struct instance *in, double timeout, int starting,
                           int *broker_exits)
{
    int max = in->size + 2;
    struct pollfd *pfd = calloc (max, sizeof (*pfd));
    int *fds = calloc (in->size, sizeof (int));
    int nfds = 0, got = 0, nclients;

    if (!pfd || !fds) {
        free (pfd);
        free (fds);
        return 0;
    }
    nclients = pmi_server_fds (in->pmi, fds, in->size);
    pfd[nfds].fd = in->sigfd;
    pfd[nfds++].events = POLLIN;
    pfd[nfds].fd = starting == 0 ? in->ctlfd : -1;
    pfd[nfds++].events = POLLIN;
    for (int i = 0; i < nclients && i < in->size; i++) {
        pfd[nfds].fd = fds[i];
        pfd[nfds++].events = POLLIN;
    }
    if (poll (pfd, nfds, (int)(timeout * 1000)) < 0)
        goto done;
    for (int i = 2; i < nfds; i++) {
        if (pfd[i].revents) {
            int r = pmi_server_client_rank (in->pmi, pfd[i].fd);
            pmi_server_handle (in->pmi, pfd[i].fd);
            /* a rank that finished bootstrap is now "running" */
            if (r >= 0 && pmi_server_client_state (in->pmi, r)
                              != PMI_CLIENT_CONNECTED)
                write_pidfile (in);
        }
    }
    if (pfd[0].revents & POLLIN) {
        struct signalfd_siginfo si;
        while (read (in->sigfd, &si, sizeof (si)) == sizeof (si)) {
            if (si.ssi_signo == SIGINT || si.ssi_signo == SIGTERM)
                got = si.ssi_signo;
        }
    }
    if (pfd[1].fd >= 0 && (pfd[1].revents & POLLIN))
        control_readable (in);
done:
    *broker_exits += reap (in, starting == 1, starting == 2);
    free (pfd);
    free (fds);
    return got;
}

/* Wait (up to 10 s) for rank r to be reaped after a kill. */
static void wait_reaped (struct instance *in, int r)
{
    double deadline = monotime_now () + 10.;
    while (!in->procs[r].exited && monotime_now () < deadline) {
        int status;
        pid_t pid = waitpid (in->procs[r].pid, &status, 0);
        if (pid == in->procs[r].pid) {
            char why[128];
            in->procs[r].exited = 1;
            in->procs[r].status = status;
            describe_status (status, why, sizeof (why));
            logmsg (in, "rank %d %s (fault injection)", r, why);
        }
        else if (pid < 0 && errno != EINTR)
            break;
    }
}

/* One fault request: "kill R", "stop R", "cont R", "restart R". */
static void fault_request (struct instance *in, const char *line)
{
    char verb[16];
    int r;

    if (sscanf (line, "%15s %d", verb, &r) != 2 || r < 0 || r >= in->size) {
        logmsg (in, "ignored malformed fault request '%s'", line);
        return;
    }
    struct broker_proc *b = &in->procs[r];
    if (!strcmp (verb, "kill")) {
        if (b->exited)
            return;
        b->expected = 1;
        kill (b->pid, SIGKILL);
        wait_reaped (in, r);
    }
    else if (!strcmp (verb, "stop") && !b->exited) {
        kill (b->pid, SIGSTOP);
        b->stopped = 1;
    }
    else if (!strcmp (verb, "cont") && !b->exited) {
        kill (b->pid, SIGCONT);
        b->stopped = 0;
    }
    else if (!strcmp (verb, "restart")) {
        if (!b->exited) {
            b->expected = 1;
            kill (b->pid, SIGKILL);
            wait_reaped (in, r);
        }
        pid_t pid = spawn_broker (in, r, in->pgid, 1);
        if (pid < 0) {
            logmsg (in, "rank %d: restart failed: %s", r, strerror (errno));
            return;
        }
        setpgid (pid, in->pgid);
        b->pid = pid;
        b->exited = b->expected = b->stopped = 0;
        b->restarts++;
        logmsg (in, "rank %d restarted (pid %d)", r, (int)pid);
    }
    else {
        logmsg (in, "ignored fault request '%s'", line);
        return;
    }
    write_pidfile (in);
}

/* Rank 0's health, or NULL if it cannot be asked yet. */
static int overlay_ready (struct instance *in)
{
    char uri[PATH_MAX + 32], err[256];
    bgn_t *h;
    bgn_rpc_t *rpc;
    const char *payload;
    const char *health = NULL;
    int ready = 0;
    json_t *o = NULL;

    snprintf (uri, sizeof (uri), "ipc://%s/0/local", in->dir);
    if (!(h = bgn_open (uri, err, sizeof (err))))
        return 0;
    bgn_set_timeout (h, 1.0);
    if ((rpc = bgn_rpc (h, "broker.info", 0, NULL, 0))
        && bgn_rpc_get (rpc, &payload) == 0
        && (o = json_loads (payload, 0, NULL))
        && json_unpack (o, "{s:s}", "health", &health) == 0)
        ready = !strcmp (health, "full");
    json_decref (o);
    bgn_rpc_destroy (&rpc);
    bgn_close (&h);
    return ready;
}

static int start_brokers (struct instance *in)
{
    char err[256];
    char kvsname[64];
    pid_t pgid = 0;
    double deadline = monotime_now () + in->startup_timeout;
    int exits = 0;

    snprintf (kvsname, sizeof (kvsname), "bgn-%d", (int)getpid ());
    if (!(in->pmi = pmi_server_create (in->size, kvsname, err, sizeof (err)))) {
        logmsg (in, "PMI server: %s", err);
        return -1;
    }
    for (int r = 0; r < in->size; r++) {
        pid_t pid = spawn_broker (in, r, pgid, 0);
        if (pid < 0) {
            logmsg (in, "rank %d: cannot start %s: %s", r, in->broker_path,
                    strerror (errno));
            return -1;
        }
        if (pgid == 0)
            pgid = in->pgid = pid;
        setpgid (pid, pgid);   /* also here: avoids a race with the child */
        in->procs[r].pid = pid;
    }
    write_pidfile (in);
    /* Phase 1: every broker bootstraps (PMI finalize). */
    while (pmi_server_nfinalized (in->pmi) < in->size) {
        int sig = service_events (in, 0.1, 1, &exits);
        if (exits > 0)
            return -1;
        if (sig) {
            logmsg (in, "interrupted during start-up");
            return -1;
        }
        if (monotime_now () > deadline)
            goto timeout;
    }
    /* Phase 2: the overlay reports full health at rank 0. */
    while (!overlay_ready (in)) {
        int sig = service_events (in, 0.02, 1, &exits);
        if (exits > 0)
            return -1;
        if (sig) {
            logmsg (in, "interrupted during start-up");
            return -1;
        }
        if (monotime_now () > deadline)
            goto timeout;
    }
    return 0;
timeout:
    logmsg (in, "start-up did not finish within %gs (%d of %d brokers "
            "bootstrapped)", in->startup_timeout,
            pmi_server_nfinalized (in->pmi), in->size);
    for (int r = 0; r < in->size; r++) {
        int st = pmi_server_client_state (in->pmi, r);
        if (st == PMI_CLIENT_CONNECTED)
            logmsg (in, "rank %d has not finished bootstrap", r);
    }
    return -1;
}

static pid_t run_command (struct instance *in, char **argv)
{
    char uri[PATH_MAX + 32];
    pid_t pid;

    snprintf (uri, sizeof (uri), "ipc://%s/0/local", in->dir);
    if ((pid = fork ()) < 0)
        return -1;
    if (pid == 0) {
        sigset_t none;
        sigemptyset (&none);
        sigprocmask (SIG_SETMASK, &none, NULL);
        prctl (PR_SET_PDEATHSIG, SIGTERM);
        /* This bgn comes first in PATH, so "bgn start ... bgn ping" runs
         * the same build (as flux start does). */
        const char *path = getenv ("PATH");
        char *newpath = NULL;
        if (asprintf (&newpath, "%s%s%s", cmd_exe_dir (), path ? ":" : "",
                      path ? path : "") >= 0)
            setenv ("PATH", newpath, 1);
        setenv ("BGN_URI", uri, 1);
        setenv ("BGN_RUNDIR", in->dir, 1);
        execvp (argv[0], argv);
        fprintf (stderr, "bgn start: %s: %s\n", argv[0], strerror (errno));
        _exit (127);
    }
    return pid;
}

/* SIGTERM every broker, wait for the grace period, then SIGKILL. */
static void shutdown_brokers (struct instance *in)
{
    double deadline = monotime_now () + in->shutdown_grace;
    int exits = 0;

    signal_brokers (in, SIGTERM);
    while (brokers_alive (in) > 0 && monotime_now () < deadline)
        service_events (in, 0.05, 2, &exits);
    if (brokers_alive (in) > 0) {
        logmsg (in, "%d broker(s) still running after %gs: killing",
                brokers_alive (in), in->shutdown_grace);
        signal_brokers (in, SIGKILL);
        while (brokers_alive (in) > 0)
            service_events (in, 0.05, 2, &exits);
    }
    for (int r = 0; r < in->size; r++) {
        int st = in->procs[r].status;
        if (in->procs[r].expected)
            continue;
        if (in->procs[r].pid > 0 && !(WIFEXITED (st) && WEXITSTATUS (st) == 0)
            && !(WIFSIGNALED (st) && WTERMSIG (st) == SIGTERM)) {
            in->failed = 1;
        }
    }
}

static int setup_signals (struct instance *in)
{
    sigset_t set;

    sigemptyset (&set);
    sigaddset (&set, SIGINT);
    sigaddset (&set, SIGTERM);
    sigaddset (&set, SIGCHLD);
    if (sigprocmask (SIG_BLOCK, &set, NULL) < 0)
        return -1;
    in->sigfd = signalfd (-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
    return in->sigfd < 0 ? -1 : 0;
}

static int add_arg (struct instance *in, const char *a)
{
    char **v = realloc (in->broker_args, (in->nargs + 2) * sizeof (char *));
    if (!v)
        return -1;
    in->broker_args = v;
    v[in->nargs++] = (char *)a;
    v[in->nargs] = NULL;
    return 0;
}

static int make_control_fifo (struct instance *in)
{
    char path[PATH_MAX + 16];

    snprintf (path, sizeof (path), "%s/control", in->dir);
    if (mkfifo (path, 0600) < 0)
        return -1;
    /* O_RDWR: the FIFO never reports EOF when a writer goes away. */
    in->ctlfd = open (path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
    return in->ctlfd < 0 ? -1 : 0;
}

static int make_instance_dir (struct instance *in)
{
    const char *tmp = getenv ("TMPDIR");
    snprintf (in->dir, sizeof (in->dir), "%s/bgn-XXXXXX",
              tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp (in->dir)) {
        fprintf (stderr, "bgn start: mkdtemp %s: %s\n", in->dir,
                 strerror (errno));
        in->dir[0] = '\0';
        return -1;
    }
    return 0;
}

int cmd_start (int argc, char **argv)
{
    static const struct option longopts[] = {
        { "size", required_argument, NULL, 's' },
        { "config", required_argument, NULL, 'c' },
        { "setattr", required_argument, NULL, 'o' },
        { "topology", required_argument, NULL, 'T' },
        { "wait-timeout", required_argument, NULL, 'w' },
        { "keep-going", no_argument, NULL, 'k' },
        { "verbose", no_argument, NULL, 'v' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    struct instance in = { .size = 1, .sigfd = -1, .ctlfd = -1,
                           .startup_timeout = 60.,
                           .shutdown_grace = 10. };
    char *end, *topo_opt = NULL;
    int c, rc = 1, exits = 0;
    char why[128];

    in.broker_path = cmd_find_program ("bgn-broker");
    add_arg (&in, "bgn-broker");
    add_arg (&in, "--rundir=");        /* filled in per rank */
    /* All brokers share this host: ipc:// is the fastest transport.  A
     * later -o overlay.bind=... from the user wins. */
    add_arg (&in, "-o");
    add_arg (&in, "overlay.bind=\"ipc://%R/overlay\"");
    while ((c = getopt_long (argc, argv, "+s:c:o:T:w:kvh", longopts,
                             NULL)) != -1) {
        switch (c) {
        case 's':
            errno = 0;
            in.size = strtol (optarg, &end, 10);
            if (errno || *end || in.size < 1 || in.size > 4096) {
                fprintf (stderr, "bgn start: --size: '%s' is not a size "
                         "(1..4096)\n", optarg);
                return 1;
            }
            break;
        case 'c':
            add_arg (&in, "-c");
            add_arg (&in, optarg);
            break;
        case 'o':
            add_arg (&in, "-o");
            add_arg (&in, optarg);
            break;
        case 'T':
            free (topo_opt);
            if (asprintf (&topo_opt, "overlay.topology=%s", optarg) < 0)
                return 1;
            break;
        case 'w':
            if (fsd_parse_duration (optarg, &in.startup_timeout) < 0
                || !(in.startup_timeout > 0)) {
                fprintf (stderr, "bgn start: --wait-timeout: '%s' is not a "
                         "duration\n", optarg);
                return 1;
            }
            break;
        case 'k': in.keep_going = 1; break;
        case 'v': add_arg (&in, "-v"); break;
        case 'h': usage (stdout); return 0;
        default: usage (stderr); return 1;
        }
    }
    if (topo_opt) {
        add_arg (&in, "-o");
        add_arg (&in, topo_opt);
    }
    if (optind < argc && !strcmp (argv[optind], "--"))
        optind++;
    if (!in.broker_path || access (in.broker_path, X_OK) < 0) {
        fprintf (stderr, "bgn start: broker program %s not found\n",
                 in.broker_path ? in.broker_path : "bgn-broker");
        goto done;
    }
    if (!(in.procs = calloc (in.size, sizeof (*in.procs)))
        || setup_signals (&in) < 0 || make_instance_dir (&in) < 0
        || make_control_fifo (&in) < 0)
        goto done;
    if (start_brokers (&in) < 0) {
        shutdown_brokers (&in);
        goto done;
    }
    if (optind < argc) {
        if ((in.cmd_pid = run_command (&in, argv + optind)) < 0) {
            fprintf (stderr, "bgn start: fork: %s\n", strerror (errno));
            shutdown_brokers (&in);
            goto done;
        }
    }
    else
        fprintf (stderr, "bgn start: %d broker(s) up; BGN_URI=ipc://%s/0/local "
                 "BGN_RUNDIR=%s; interrupt to stop\n", in.size, in.dir, in.dir);
    for (;;) {
        int sig = service_events (&in, 0.5, 0, &exits);
        if (in.cmd_pid && in.cmd_exited)
            break;
        if (sig) {
            if (in.cmd_pid && !in.cmd_exited)
                kill (in.cmd_pid, sig);
            if (!in.cmd_pid)
                break;
        }
        if (exits > 0 && !in.keep_going) {
            in.failed = 1;
            if (in.cmd_pid && !in.cmd_exited) {
                logmsg (&in, "ending the instance; stopping the command");
                kill (in.cmd_pid, SIGTERM);
            }
            else
                break;
        }
    }
    shutdown_brokers (&in);
    if (in.cmd_pid) {
        if (WIFEXITED (in.cmd_status))
            rc = WEXITSTATUS (in.cmd_status);
        else {
            describe_status (in.cmd_status, why, sizeof (why));
            fprintf (stderr, "bgn start: command %s\n", why);
            rc = 128 + (WIFSIGNALED (in.cmd_status)
                            ? WTERMSIG (in.cmd_status) : 0);
        }
        /* A broker failure decides the status: the command's own is
         * then mostly a consequence of it. */
        if (in.failed)
            rc = 1;
    }
    else
        rc = in.failed ? 1 : 0;
done:
    pmi_server_destroy (&in.pmi);
    instance_remove_dir (&in);
    if (in.sigfd >= 0)
        close (in.sigfd);
    if (in.ctlfd >= 0)
        close (in.ctlfd);
    free (in.procs);
    free (in.broker_args);
    free (in.broker_path);
    free (topo_opt);
    return rc;
}
