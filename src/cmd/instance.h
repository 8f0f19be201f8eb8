/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* instance.h: the brokers of a 'bgn start' instance, and their lifecycle.
 *
 * What lives here: the instance directory (mode 0700, one run directory
 * per rank), spawning brokers with PMI_FD/PMI_RANK/PMI_SIZE under the
 * embedded PMI-1 server, reaping them, the "brokers" pidfile that 'bgn
 * fault' reads, the start-up phases (bootstrap, then full overlay health
 * at rank 0) and the orderly shutdown (SIGTERM, grace, SIGKILL).  'bgn
 * start' (cmd_start.c) owns the policy: options, the command it runs,
 * when the instance ends.  The fault FIFO (fault_ctl.c) acts on brokers
 * through this interface.
 *
 * No broker outlives bgn start: each gets PR_SET_PDEATHSIG (SIGKILL).
 * Messages go to stderr prefixed "bgn start: "; with in->log set, each
 * broker's stderr is a pipe read by brokerlog.c.  Everything runs in one
 * thread; signals arrive through a signalfd.
 */
#ifndef BGN_CMD_INSTANCE_H
#define BGN_CMD_INSTANCE_H

#include <limits.h>
#include <sys/types.h>

#include "src/common/libclient/client.h"
#include "src/common/libpmi/pmi_server.h"
#include "src/common/libutil/forksrv.h"
#include "brokerlog.h"

struct broker_proc {
    pid_t pid;
    int status;
    int exited;
    int expected;      /* bgn start killed it for a fault: not a failure */
    int stopped;       /* SIGSTOPped by a fault */
    int restarts;
};

struct instance;

/* Called when the control fd set with instance_set_control() is
 * readable (while the instance is running, not during start-up or
 * shutdown). */
typedef void (*instance_control_f) (struct instance *in, void *arg);

struct instance {
    int size;
    char dir[PATH_MAX];
    char *broker_path;
    char **broker_args;         /* argv template; slot 1 is --rundir */
    int nargs;
    struct broker_proc *procs;
    pmi_server_t *pmi;
    struct brokerlog *log;      /* brokers' stderr, or NULL: inherited */
    int sigfd;
    int epfd;                   /* PMI sockets and log pipes, epoll */
    int ctlfd;                  /* polled while running; see set_control */
    int pidfile_dirty;          /* brokers changed state since the write */
    bgn_t *h0;                  /* rank 0, while start-up waits for it */
    int fsfd;                   /* the fork server's socket, or -1 */
    pid_t fs_pid;
    struct forksrv_msg *exits;  /* broker exits it reported, not handled */
    int nexits, exits_cap;
    double pidfile_at;          /* when it was last written */
    instance_control_f ctl_cb;
    void *ctl_arg;
    pid_t pgid;
    pid_t cmd_pid;              /* the command bgn start runs, or 0 */
    int cmd_status;
    int cmd_exited;
    int failed;                 /* a broker failed: exit non-zero */
    double startup_timeout;
    double shutdown_grace;
};

/* Phases, for instance_service_events(): they decide how a broker's exit
 * is reported and whether the control fd is polled. */
enum { INSTANCE_RUNNING = 0, INSTANCE_STARTING = 1, INSTANCE_STOPPING = 2 };

/* "bgn start: ..." on stderr. */
void instance_log (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));

/* "exited with status 1", "killed by signal 9 (Killed)". */
void instance_describe_status (int status, char *buf, size_t len);

/* Append one argument to the broker argv template. -1 + ENOMEM. */
int instance_add_arg (struct instance *in, const char *arg);

/* mkdtemp $TMPDIR/bgn-XXXXXX into in->dir; remove it recursively. */
int instance_make_dir (struct instance *in);
void instance_remove_dir (struct instance *in);

/* Block SIGINT/SIGTERM/SIGCHLD and read them from in->sigfd; make the
 * epoll set (in->epfd) that watches the PMI sockets and log pipes, so a
 * wait costs what is ready, not one entry per broker. */
int instance_setup_signals (struct instance *in);

/* Poll in->ctlfd while running and call cb when it is readable. */
void instance_set_control (struct instance *in, int fd, instance_control_f cb,
                           void *arg);

/* Rewrite $dir/brokers: "rank pid state" lines (state: starting,
 * running, stopped, dead), atomically (rename). */
void instance_write_pidfile (struct instance *in);

/* Start rank's broker in process group pgid (0: a new group).  'rejoin'
 * hands its PMI client to a running job (a restart).  Returns the pid,
 * or -1 (message logged for PMI errors).  Brokers are forked by the
 * broker fork server (forksrv.h) that instance_start() runs, so they
 * need no exec of their own; without it each is fork+exec'd here. */
pid_t instance_spawn (struct instance *in, int rank, pid_t pgid, int rejoin);

/* Wait up to 10 s for rank to be reaped after a kill. */
void instance_wait_reaped (struct instance *in, int rank);

/* Start every broker and wait until all bootstrapped and rank 0 reports
 * the overlay "full", within in->startup_timeout.  -1 (reason logged). */
int instance_start (struct instance *in);

/* SIGTERM every broker, wait in->shutdown_grace, then SIGKILL; sets
 * in->failed if a broker ended badly. */
void instance_shutdown (struct instance *in);

/* Wait up to 'timeout' seconds for signals, broker exits, PMI traffic
 * and (running only) the control fd; handles them.  Adds the number of
 * unexpected broker exits to *broker_exits.  Returns the signal that
 * arrived (SIGINT/SIGTERM), 0 otherwise. */
int instance_service_events (struct instance *in, double timeout, int phase,
                             int *broker_exits);

/* Free what the instance holds (PMI server, fds, directory, arrays). */
void instance_cleanup (struct instance *in);

#endif
