/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* fault_ctl.c: the 'bgn start' control FIFO for fault injection (see
 * fault_ctl.h).
 *
 * The FIFO is opened O_RDWR so it never reports EOF when a writer goes
 * away; whole lines are taken from a small buffer and an over-long line
 * is dropped.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fault_ctl.h"

struct fault_ctl {
    int fd;
    char buf[4096];
    size_t len;
};

/* Kill rank if it runs, then start it again with the same rank.  -1 if
 * the new broker could not be started (logged). */
static int restart_rank (struct instance *in, int r)
{
    struct broker_proc *b = &in->procs[r];
    pid_t pid;

    if (!b->exited) {
        b->expected = 1;
        kill (b->pid, SIGKILL);
        instance_wait_reaped (in, r);
    }
    if ((pid = instance_spawn (in, r, in->pgid, 1)) < 0) {
        instance_log ("rank %d: restart failed: %s", r, strerror (errno));
        return -1;
    }
    if (in->fsfd < 0)
        setpgid (pid, in->pgid);    /* a child of ours (no fork server) */
    b->pid = pid;
    b->exited = b->expected = b->stopped = 0;
    b->restarts++;
    instance_log ("rank %d restarted (pid %d)", r, (int)pid);
    return 0;
}

void fault_ctl_request (struct instance *in, const char *line)
{
    char verb[16];
    int r;

    if (sscanf (line, "%15s %d", verb, &r) != 2 || r < 0 || r >= in->size) {
        instance_log ("ignored malformed fault request '%s'", line);
        return;
    }
    struct broker_proc *b = &in->procs[r];
    if (!strcmp (verb, "kill")) {
        if (b->exited)
            return;
        b->expected = 1;
        kill (b->pid, SIGKILL);
        instance_wait_reaped (in, r);
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
        if (restart_rank (in, r) < 0)
            return;
    }
    else {
        instance_log ("ignored fault request '%s'", line);
        return;
    }
    instance_write_pidfile (in);
}

/* Read whole lines from the FIFO and act on them. */
static void control_readable (struct instance *in, void *arg)
{
    struct fault_ctl *fc = arg;
    ssize_t n;

    while ((n = read (fc->fd, fc->buf + fc->len,
                      sizeof (fc->buf) - 1 - fc->len)) > 0) {
        char *nl;
        fc->len += n;
        fc->buf[fc->len] = '\0';
        while ((nl = strchr (fc->buf, '\n'))) {
            *nl = '\0';
            fault_ctl_request (in, fc->buf);
            memmove (fc->buf, nl + 1, fc->len - (nl + 1 - fc->buf) + 1);
            fc->len -= nl + 1 - fc->buf;
        }
        if (fc->len >= sizeof (fc->buf) - 1)
            fc->len = 0;   /* an over-long line: drop it */
    }
}

struct fault_ctl *fault_ctl_create (struct instance *in)
{
    char path[PATH_MAX + 16];
    struct fault_ctl *fc = calloc (1, sizeof (*fc));

    if (!fc)
        return NULL;
    snprintf (path, sizeof (path), "%s/control", in->dir);
    if (mkfifo (path, 0600) < 0) {
        free (fc);
        return NULL;
    }
    if ((fc->fd = open (path, O_RDWR | O_NONBLOCK | O_CLOEXEC)) < 0) {
        free (fc);
        return NULL;
    }
    instance_set_control (in, fc->fd, control_readable, fc);
    return fc;
}

void fault_ctl_destroy (struct fault_ctl **fcp)
{
    if (fcp && *fcp) {
        close ((*fcp)->fd);
        free (*fcp);
        *fcp = NULL;
    }
}
