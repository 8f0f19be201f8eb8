/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* instance.c: the brokers of a 'bgn start' instance (see instance.h).
 *
 * Kept apart from cmd_start.c so the command reads as policy (options,
 * the command it runs, when to end) and this file as mechanism (fork,
 * exec, PMI, waitpid, poll).  A broker that fails during start-up ends
 * the start-up with an error naming its rank; after start-up an exit is
 * reported here and counted, and the caller decides what it means.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <jansson.h>

#include "src/common/libutil/monotime.h"
#include "src/common/libutil/tmpbase.h"
#include "cmd.h"
#include "instance.h"

void instance_log (const char *fmt, ...)
{
    va_list ap;
    char buf[1024];

    va_start (ap, fmt);
    vsnprintf (buf, sizeof (buf), fmt, ap);
    va_end (ap);
    fprintf (stderr, "bgn start: %s\n", buf);
}

void instance_describe_status (int status, char *buf, size_t len)
{
    if (WIFEXITED (status))
        snprintf (buf, len, "exited with status %d", WEXITSTATUS (status));
    else if (WIFSIGNALED (status))
        snprintf (buf, len, "killed by signal %d (%s)", WTERMSIG (status),
                  strsignal (WTERMSIG (status)));
    else
        snprintf (buf, len, "ended with wait status 0x%x", status);
}

int instance_add_arg (struct instance *in, const char *a)
{
    char **v = realloc (in->broker_args, (in->nargs + 2) * sizeof (char *));
    if (!v)
        return -1;
    in->broker_args = v;
    v[in->nargs++] = (char *)a;
    v[in->nargs] = NULL;
    return 0;
}

static int rm_entry (const char *path, const struct stat *sb, int flag,
                     struct FTW *ftw)
{
    return remove (path) < 0 && errno != ENOENT ? -1 : 0;
}

void instance_remove_dir (struct instance *in)
{
    if (in->dir[0])
        nftw (in->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int instance_make_dir (struct instance *in)
{
    snprintf (in->dir, sizeof (in->dir), "%s/bgn-XXXXXX", tmpbase ());
    if (!mkdtemp (in->dir)) {
        instance_log ("mkdtemp %s: %s", in->dir, strerror (errno));
        in->dir[0] = '\0';
        return -1;
    }
    return 0;
}

int instance_setup_signals (struct instance *in)
{
    sigset_t set;

    sigemptyset (&set);
    sigaddset (&set, SIGINT);
    sigaddset (&set, SIGTERM);
    sigaddset (&set, SIGCHLD);
    if (sigprocmask (SIG_BLOCK, &set, NULL) < 0)
        return -1;
    in->sigfd = signalfd (-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
    if (in->sigfd < 0)
        return -1;
    in->epfd = epoll_create1 (EPOLL_CLOEXEC);
    return in->epfd < 0 ? -1 : 0;
}

/* What an fd in the epoll set is (the event's data: kind << 32 | fd). */
enum { WATCH_PMI = 1, WATCH_LOG = 2, WATCH_FORKSRV = 3 };

/* Watch fd; a closed fd leaves the set by itself. */
static void watch (struct instance *in, int kind, int fd)
{
    struct epoll_event ev = { .events = EPOLLIN,
                              .data.u64 = (uint64_t)kind << 32
                                          | (uint32_t)fd };

    if (epoll_ctl (in->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
        instance_log ("epoll: fd %d: %s", fd, strerror (errno));
}

void instance_set_control (struct instance *in, int fd, instance_control_f cb,
                           void *arg)
{
    in->ctlfd = fd;
    in->ctl_cb = cb;
    in->ctl_arg = arg;
}

void instance_write_pidfile (struct instance *in)
{
    char path[PATH_MAX + 16], tmp[PATH_MAX + 16];
    FILE *f;

    in->pidfile_dirty = 0;
    in->pidfile_at = monotime_now ();
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

/* In the child: become rank's broker (its stderr the log pipe's write
 * end, if there is one). */
static void exec_broker (struct instance *in, int rank, pid_t pgid, int fd,
                         int logfd)
{
    char fdstr[16], rankstr[16], sizestr[16], rundir[PATH_MAX + 32];
    sigset_t none;

    sigemptyset (&none);
    sigprocmask (SIG_SETMASK, &none, NULL);
    prctl (PR_SET_PDEATHSIG, SIGKILL);
    setpgid (0, pgid);
    if (logfd >= 0 && dup2 (logfd, STDERR_FILENO) < 0)
        _exit (127);
    /* The broker's end must survive exec. */
    fcntl (fd, F_SETFD, 0);
    snprintf (fdstr, sizeof (fdstr), "%d", fd);
    snprintf (rankstr, sizeof (rankstr), "%d", rank);
    snprintf (sizestr, sizeof (sizestr), "%d", in->size);
    setenv ("PMI_FD", fdstr, 1);
    setenv ("PMI_RANK", rankstr, 1);
    setenv ("PMI_SIZE", sizestr, 1);
    /* our PMI server answers requests written back to back (boot.c) */
    setenv ("BGN_PMI_PIPELINE", "1", 1);
    /* ... and gets after finalize (pmi_server.h) */
    setenv ("BGN_PMI_LATE_GET", "1", 1);
    unsetenv ("BGN_URI");
    snprintf (rundir, sizeof (rundir), "--rundir=%s/%d", in->dir, rank);
    in->broker_args[1] = rundir;
    execv (in->broker_path, in->broker_args);
    fprintf (stderr, "bgn start: exec %s: %s\n", in->broker_path,
             strerror (errno));
    _exit (127);
}

/* Keep an exit the fork server reported, for reap(). */
static void queue_exit (struct instance *in, const struct forksrv_msg *m)
{
    if (in->nexits == in->exits_cap) {
        int cap = in->exits_cap ? in->exits_cap * 2 : 64;
        struct forksrv_msg *v = realloc (in->exits, cap * sizeof (*v));
        if (!v)
            return;     /* the broker shows as running; its PMI fd says */
        in->exits = v;
        in->exits_cap = cap;
    }
    in->exits[in->nexits++] = *m;
}

/* Take every message the fork server has sent (exits) without waiting. */
static void drain_forksrv (struct instance *in)
{
    struct forksrv_msg m;

    while (in->fsfd >= 0 && forksrv_recv (in->fsfd, &m, 0) == 1) {
        if (m.type == FORKSRV_EXITED)
            queue_exit (in, &m);
    }
}

/* Start the fork server: bgn-broker --fork-server=FD with the brokers'
 * options and --rundir=DIR/%r, in a process group of its own that its
 * children, the brokers, inherit.  -1 if it cannot start (brokers are
 * then exec'd one by one). */
static int start_fork_server (struct instance *in)
{
    char fdarg[32], rundir[PATH_MAX + 32];
    char **argv = calloc (in->nargs + 2, sizeof (char *));
    int sv[2];
    pid_t pid;

    if (!argv)
        return -1;
    if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
        free (argv);
        return -1;
    }
    snprintf (fdarg, sizeof (fdarg), "--fork-server=%d", sv[1]);
    snprintf (rundir, sizeof (rundir), "--rundir=%s/%%r", in->dir);
    argv[0] = in->broker_args[0];
    argv[1] = fdarg;
    argv[2] = rundir;
    for (int i = 2; i < in->nargs; i++)
        argv[i + 1] = in->broker_args[i];
    if ((pid = fork ()) == 0) {
        sigset_t none;
        sigemptyset (&none);
        sigprocmask (SIG_SETMASK, &none, NULL);
        prctl (PR_SET_PDEATHSIG, SIGKILL);
        setpgid (0, 0);
        fcntl (sv[1], F_SETFD, 0);
        /* its brokers' PMI server (ours) answers gets after finalize */
        setenv ("BGN_PMI_LATE_GET", "1", 1);
        /* the brokers it forks inherit this: our PMI server answers
         * requests written back to back (boot.c's read-ahead) */
        setenv ("BGN_PMI_PIPELINE", "1", 1);
        /* every symbol bound once, at its exec: a fork then finds them
         * bound instead of resolving (and copying) them on first use */
        setenv ("LD_BIND_NOW", "1", 1);
        execv (in->broker_path, argv);
        fprintf (stderr, "bgn start: exec %s: %s\n", in->broker_path,
                 strerror (errno));
        _exit (127);
    }
    free (argv);
    close (sv[1]);
    if (pid < 0) {
        close (sv[0]);
        return -1;
    }
    setpgid (pid, pid);   /* also here: avoids a race with the child */
    in->fsfd = sv[0];
    in->fs_pid = in->pgid = pid;
    watch (in, WATCH_FORKSRV, sv[0]);
    return 0;
}

/* Ask the fork server for rank's broker with these fds; its pid, or -1. */
static pid_t forksrv_spawn (struct instance *in, int rank, int pmi_fd,
                            int log_fd)
{
    int fds[2] = { pmi_fd, log_fd };
    struct forksrv_msg m;
    int rc;

    if (forksrv_request (in->fsfd, rank, in->size, fds,
                         log_fd >= 0 ? 2 : 1) < 0)
        return -1;
    /* Its answer, with any exits it reports meanwhile kept for reap(). */
    while ((rc = forksrv_recv (in->fsfd, &m, 10.0)) == 1
           && m.type == FORKSRV_EXITED)
        queue_exit (in, &m);
    if (rc == 0)
        errno = ETIMEDOUT;
    if (rc < 1)
        return -1;
    if (m.pid < 0 || m.rank != rank) {
        errno = m.pid < 0 ? -m.pid : EPROTO;
        return -1;
    }
    return m.pid;
}

pid_t instance_spawn (struct instance *in, int rank, pid_t pgid, int rejoin)
{
    int sv[2], lp[2] = { -1, -1 };
    char errbuf[256];
    pid_t pid;

    if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        return -1;
    if (in->log && pipe2 (lp, O_CLOEXEC) < 0) {
        close (sv[0]);
        close (sv[1]);
        return -1;
    }
    if (in->fsfd >= 0)
        pid = forksrv_spawn (in, rank, sv[1], lp[1]);
    else if ((pid = fork ()) == 0) {
        close (sv[0]);
        exec_broker (in, rank, pgid, sv[1], lp[1]);
    }
    if (pid < 0) {
        int saved = errno;
        close (sv[0]);
        close (sv[1]);
        if (lp[0] >= 0) {
            close (lp[0]);
            close (lp[1]);
        }
        errno = saved;
        return -1;
    }
    close (sv[1]);
    if (lp[0] >= 0) {
        close (lp[1]);
        if (brokerlog_add (in->log, rank, lp[0]) < 0)
            close (lp[0]);
        else
            watch (in, WATCH_LOG, lp[0]);
    }
    if ((rejoin ? pmi_server_rejoin_client (in->pmi, rank, sv[0], errbuf,
                                            sizeof (errbuf))
                : pmi_server_add_client (in->pmi, rank, sv[0], errbuf,
                                         sizeof (errbuf))) < 0) {
        instance_log ("rank %d: %s", rank, errbuf);
        return -1;
    }
    watch (in, WATCH_PMI, sv[0]);
    return pid;
}

static int rank_of_pid (struct instance *in, pid_t pid)
{
    for (int r = 0; r < in->size; r++)
        if (in->procs[r].pid == pid && !in->procs[r].exited)
            return r;
    return -1;
}

/* A broker ended with wait status 'status'.  Returns 1 if that was
 * unexpected (a failure), 0 if not, -1 if pid is no broker of ours. */
static int broker_ended (struct instance *in, pid_t pid, int status,
                         int starting, int stopping)
{
    int r = rank_of_pid (in, pid);
    char why[128];

    if (r < 0)
        return -1;
    in->procs[r].exited = 1;
    in->procs[r].status = status;
    instance_describe_status (status, why, sizeof (why));
    if (in->procs[r].expected) {
        instance_log ("rank %d %s (fault injection)", r, why);
        instance_write_pidfile (in);
        return 0;
    }
    if (!starting && !stopping && WIFEXITED (status)
        && WEXITSTATUS (status) == 0) {
        /* an orderly leave (overlay-disconnect, broker.shutdown):
         * the others route around it */
        instance_log ("rank %d left the instance", r);
        in->procs[r].expected = 1;
        instance_write_pidfile (in);
        return 0;
    }
    if (starting)
        instance_log ("rank %d %s during start-up", r, why);
    else if (!stopping || !((WIFEXITED (status) && WEXITSTATUS (status) == 0)
                            || (WIFSIGNALED (status)
                                && WTERMSIG (status) == SIGTERM)))
        instance_log ("rank %d %s", r, why);
    instance_write_pidfile (in);
    return 1;
}

/* The fork server is gone, and with it (PR_SET_PDEATHSIG) every broker
 * it had started: they count as killed. */
static int fork_server_ended (struct instance *in, int status, int starting,
                              int stopping)
{
    char why[128];
    int n = 0;

    instance_describe_status (status, why, sizeof (why));
    instance_log ("the broker fork server %s", why);
    close (in->fsfd);
    in->fsfd = -1;
    in->fs_pid = 0;
    for (int r = 0; r < in->size; r++) {
        if (in->procs[r].pid > 0 && !in->procs[r].exited
            && broker_ended (in, in->procs[r].pid, SIGKILL, starting,
                             stopping) == 1)
            n++;
    }
    return n;
}

/* Reap every exited child and every exit the fork server reported.
 * Returns the number of brokers that exited unexpectedly. */
static int reap (struct instance *in, int starting, int stopping)
{
    int status, n = 0;
    pid_t pid;

    drain_forksrv (in);
    for (int i = 0; i < in->nexits; i++) {
        if (broker_ended (in, in->exits[i].pid, in->exits[i].status,
                          starting, stopping) == 1)
            n++;
    }
    in->nexits = 0;
    while ((pid = waitpid (-1, &status, WNOHANG)) > 0) {
        if (pid == in->cmd_pid) {
            in->cmd_exited = 1;
            in->cmd_status = status;
        }
        else if (pid == in->fs_pid)
            n += fork_server_ended (in, status, starting, stopping);
        else if (broker_ended (in, pid, status, starting, stopping) == 1)
            n++;
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

/* Handle what the epoll set says is ready (without waiting). */
static void service_watched (struct instance *in)
{
    struct epoll_event ev[128];
    int n;

    while ((n = epoll_wait (in->epfd, ev, 128, 0)) > 0) {
        for (int i = 0; i < n; i++) {
            int kind = (int)(ev[i].data.u64 >> 32);
            int fd = (int)(uint32_t)ev[i].data.u64;
            if (kind == WATCH_LOG) {
                brokerlog_readable (in->log, fd);
                continue;
            }
            if (kind == WATCH_FORKSRV) {
                drain_forksrv (in);     /* exits, for reap() */
                continue;
            }
            int r = pmi_server_client_rank (in->pmi, fd);
            if (r < 0)
                continue;   /* closed while handling an earlier one */
            pmi_server_handle (in->pmi, fd);
            /* a rank that finished bootstrap is now "running" */
            if (pmi_server_client_state (in->pmi, r) != PMI_CLIENT_CONNECTED)
                in->pidfile_dirty = 1;
        }
        if (n < 128)
            break;
    }
}

int instance_service_events (struct instance *in, double timeout, int phase,
                             int *broker_exits)
{
    struct pollfd pfd[3] = {
        { .fd = in->sigfd, .events = POLLIN },
        { .fd = phase == INSTANCE_RUNNING && in->ctl_cb ? in->ctlfd : -1,
          .events = POLLIN },
        { .fd = in->epfd, .events = POLLIN },
    };
    int got = 0;

    if (poll (pfd, 3, (int)(timeout * 1000)) < 0)
        goto done;
    if (pfd[2].revents & POLLIN)
        service_watched (in);
    if (pfd[0].revents & POLLIN) {
        struct signalfd_siginfo si;
        while (read (in->sigfd, &si, sizeof (si)) == sizeof (si)) {
            if (si.ssi_signo == SIGINT || si.ssi_signo == SIGTERM)
                got = si.ssi_signo;
        }
    }
    if (pfd[1].fd >= 0 && (pfd[1].revents & POLLIN))
        in->ctl_cb (in, in->ctl_arg);
done:
    *broker_exits += reap (in, phase == INSTANCE_STARTING,
                           phase == INSTANCE_STOPPING);
    /* Progress during start-up is written at most every 0.25 s: 256
     * brokers finishing their bootstrap one by one need not rewrite the
     * file 256 times. */
    if (in->pidfile_dirty && (phase != INSTANCE_STARTING
                              || monotime_now () - in->pidfile_at >= 0.25))
        instance_write_pidfile (in);
    return got;
}

void instance_wait_reaped (struct instance *in, int r)
{
    double deadline = monotime_now () + 10.;

    while (!in->procs[r].exited && monotime_now () < deadline) {
        if (in->fsfd >= 0) {
            /* its exit comes from the fork server */
            struct pollfd p = { .fd = in->fsfd, .events = POLLIN };
            poll (&p, 1, 100);
            reap (in, 0, 0);
            continue;
        }
        int status;
        pid_t pid = waitpid (in->procs[r].pid, &status, 0);
        if (pid == in->procs[r].pid)
            broker_ended (in, pid, status, 0, 0);
        else if (pid < 0 && errno != EINTR)
            break;
    }
}

/* 1 if rank 0 reports the overlay "full", 0 if not or not askable yet.
 * One connection to rank 0 serves every check (in->h0): opening one per
 * check, every 20 ms, cost a ZeroMQ context and its threads each time. */
/* The connection to rank 0 for the start-up checks, opened when needed. */
static bgn_t *rank0 (struct instance *in)
{
    char uri[PATH_MAX + 32], err[256];

    if (!in->h0) {
        snprintf (uri, sizeof (uri), "ipc://%s/0/local", in->dir);
        if (!(in->h0 = bgn_open (uri, err, sizeof (err))))
            return NULL;
        bgn_set_timeout (in->h0, 1.0);
    }
    return in->h0;
}

/* An rpc through in->h0 failed: a rank 0 that went away (a restart)
 * needs a new connection, made at the next check. */
static void rank0_failed (struct instance *in)
{
    if (errno == ECONNRESET)
        bgn_close (&in->h0);
}

static int overlay_ready (struct instance *in)
{
    bgn_rpc_t *rpc = NULL;
    const char *payload;
    const char *health = NULL;
    int ready = 0;
    json_t *o = NULL;

    if (!rank0 (in))
        return 0;
    if ((rpc = bgn_rpc (in->h0, "broker.info", 0, NULL, 0))
        && bgn_rpc_get (rpc, &payload) == 0
        && (o = json_loads (payload, 0, NULL))
        && json_unpack (o, "{s:s}", "health", &health) == 0)
        ready = !strcmp (health, "full");
    else
        rank0_failed (in);
    json_decref (o);
    bgn_rpc_destroy (&rpc);
    return ready;
}

/* 1 if rank 0's host table has every rank (or is static), 0 if not yet.
 * Brokers register their host with rank 0 after they come up, so a
 * COMMAND started the moment health is full could ask for a host name
 * that is not in the table yet. */
static int hosts_whole (struct instance *in)
{
    bgn_rpc_t *rpc;
    const char *payload;
    json_t *o = NULL, *hosts = NULL, *h;
    size_t i;
    int whole = 0;

    if (!rank0 (in))
        return 0;
    if ((rpc = bgn_rpc (in->h0, "broker.hosts", 0, NULL, 0))
        && bgn_rpc_get (rpc, &payload) == 0
        && (o = json_loads (payload, 0, NULL))
        && json_unpack (o, "{s:o}", "hosts", &hosts) == 0) {
        whole = 1;
        json_array_foreach (hosts, i, h)
            if (!json_is_string (h))
                whole = 0;
    }
    else
        rank0_failed (in);
    json_decref (o);
    bgn_rpc_destroy (&rpc);
    return whole;
}

/* Service events until done() or the deadline; -1 on a broker exit, a
 * signal or the deadline (1 in *timedout then). */
static int wait_phase (struct instance *in, double deadline, double tick,
                       int (*done) (struct instance *), int *timedout)
{
    int exits = 0;

    while (!done (in)) {
        int sig = instance_service_events (in, tick, INSTANCE_STARTING,
                                           &exits);
        if (exits > 0)
            return -1;
        if (sig) {
            instance_log ("interrupted during start-up");
            return -1;
        }
        if (monotime_now () > deadline) {
            *timedout = 1;
            return -1;
        }
    }
    return 0;
}

#define HOSTS_WAIT 10.0         /* seconds phase 3 waits at most */

/* Phase 3: give the brokers' host registrations HOSTS_WAIT seconds (and
 * no more than the start-up deadline) to reach rank 0; a table still
 * missing ranks then is said, not fatal: ranks work where hosts do not. */
static int wait_hosts (struct instance *in, double deadline)
{
    int timedout = 0;
    double until = monotime_now () + HOSTS_WAIT;

    if (until > deadline)
        until = deadline;
    if (wait_phase (in, until, 0.02, hosts_whole, &timedout) == 0)
        return 0;
    if (!timedout)
        return -1;      /* a broker exited, or a signal */
    instance_log ("the host table is not whole yet: commands may not know "
                  "every host name for a while");
    return 0;
}

static int all_bootstrapped (struct instance *in)
{
    return pmi_server_nfinalized (in->pmi) >= in->size;
}

int instance_start (struct instance *in)
{
    char err[256];
    char kvsname[64];
    pid_t pgid = 0;
    double deadline = monotime_now () + in->startup_timeout;
    int timedout = 0;

    snprintf (kvsname, sizeof (kvsname), "bgn-%d", (int)getpid ());
    if (!(in->pmi = pmi_server_create (in->size, kvsname, err, sizeof (err)))) {
        instance_log ("PMI server: %s", err);
        return -1;
    }
    if (start_fork_server (in) < 0)
        instance_log ("no fork server (%s): starting brokers one exec at a "
                      "time", strerror (errno));
    else
        pgid = in->pgid;
    for (int r = 0; r < in->size; r++) {
        pid_t pid = instance_spawn (in, r, pgid, 0);
        if (pid < 0) {
            instance_log ("rank %d: cannot start %s: %s", r, in->broker_path,
                          strerror (errno));
            return -1;
        }
        if (pgid == 0)
            pgid = in->pgid = pid;
        if (in->fsfd < 0)
            setpgid (pid, pgid);   /* also here: avoids a race with it */
        in->procs[r].pid = pid;
        /* Answer the brokers already running as we go: left waiting for
         * the last fork, each would hold its share of the CPU while the
         * PMI server it waits for cannot run. */
        service_watched (in);
    }
    instance_write_pidfile (in);
    /* Phase 1: every broker bootstraps (PMI finalize).  Phase 2: the
     * overlay reports full health at rank 0.  Phase 3: rank 0 has every
     * rank's host (bounded, see wait_hosts). */
    if (wait_phase (in, deadline, 0.1, all_bootstrapped, &timedout) == 0
        && wait_phase (in, deadline, 0.02, overlay_ready, &timedout) == 0
        && wait_hosts (in, deadline) == 0) {
        bgn_close (&in->h0);
        instance_write_pidfile (in);   /* every broker "running" */
        return 0;
    }
    bgn_close (&in->h0);
    instance_write_pidfile (in);
    if (!timedout)
        return -1;
    instance_log ("start-up did not finish within %gs (%d of %d brokers "
                  "bootstrapped)", in->startup_timeout,
                  pmi_server_nfinalized (in->pmi), in->size);
    for (int r = 0; r < in->size; r++) {
        int st = pmi_server_client_state (in->pmi, r);
        if (st == PMI_CLIENT_CONNECTED)
            instance_log ("rank %d has not finished bootstrap", r);
    }
    return -1;
}

void instance_shutdown (struct instance *in)
{
    double deadline = monotime_now () + in->shutdown_grace;
    int exits = 0;

    signal_brokers (in, SIGTERM);
    while (brokers_alive (in) > 0 && monotime_now () < deadline)
        instance_service_events (in, 0.05, INSTANCE_STOPPING, &exits);
    if (brokers_alive (in) > 0) {
        instance_log ("%d broker(s) still running after %gs: killing",
                      brokers_alive (in), in->shutdown_grace);
        signal_brokers (in, SIGKILL);
        while (brokers_alive (in) > 0)
            instance_service_events (in, 0.05, INSTANCE_STOPPING, &exits);
    }
    brokerlog_drain (in->log);
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

void instance_cleanup (struct instance *in)
{
    if (in->fsfd >= 0) {
        int status;
        close (in->fsfd);           /* the server ends at EOF */
        in->fsfd = -1;
        if (in->fs_pid > 0)
            waitpid (in->fs_pid, &status, 0);
    }
    free (in->exits);
    brokerlog_destroy (&in->log);
    pmi_server_destroy (&in->pmi);
    instance_remove_dir (in);
    if (in->sigfd >= 0)
        close (in->sigfd);
    if (in->epfd >= 0)
        close (in->epfd);
    free (in->procs);
    free (in->broker_args);
    free (in->broker_path);
}
