/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test/forksrv.c: unit tests for forksrv.h.
 *
 * A real server in a child process: children get their fds and rank,
 * report through a pipe, exit with a code the client sees in EXITED;
 * closing the client's end ends the server.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "src/common/libtap/tap.h"
#include "src/common/libutil/forksrv.h"

/* A child: write "rank size nfds" to its first fd, exit with 10 + rank. */
static int child (void *arg, const struct forksrv_msg *req)
{
    char line[64];
    int n = snprintf (line, sizeof (line), "%d %d %d\n", (int)req->rank,
                      (int)req->size, (int)req->nfds);

    if (req->nfds >= 1 && write (req->fds[0], line, (size_t)n) != n)
        return 99;
    return 10 + req->rank;
}

int main (void)
{
    int sv[2], pp[2];
    pid_t server;
    struct forksrv_msg m;
    pid_t pids[3];
    int spawned = 0, exited = 0, codes_ok = 1;
    char buf[256] = "";

    plan (NO_PLAN);
    if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0
        || pipe (pp) < 0)
        bail_out ("socketpair/pipe");
    if ((server = fork ()) == 0) {
        close (sv[0]);
        close (pp[0]);
        close (pp[1]);
        _exit (forksrv_serve (sv[1], child, NULL) == 0 ? 0 : 1);
    }
    close (sv[1]);

    for (int r = 0; r < 3; r++)
        ok (forksrv_request (sv[0], r, 3, &pp[1], 1) == 0,
            "request rank %d", r);
    close (pp[1]);
    /* three SPAWNED in order, three EXITED in any order among them */
    while ((spawned < 3 || exited < 3)
           && forksrv_recv (sv[0], &m, 10.0) == 1) {
        if (m.type == FORKSRV_SPAWNED) {
            if (m.rank != spawned || m.pid <= 0)
                codes_ok = 0;
            pids[spawned++] = m.pid;
        }
        else if (m.type == FORKSRV_EXITED) {
            int r = -1;
            for (int i = 0; i < spawned; i++)
                if (pids[i] == m.pid)
                    r = i;
            if (r < 0 || !WIFEXITED (m.status)
                || WEXITSTATUS (m.status) != 10 + r)
                codes_ok = 0;
            exited++;
        }
    }
    ok (spawned == 3, "every request answered with SPAWNED, in order");
    ok (exited == 3 && codes_ok,
        "every child's EXITED came after its SPAWNED, with its exit code");
    size_t got = 0;
    ssize_t n;
    while ((n = read (pp[0], buf + got, sizeof (buf) - 1 - got)) > 0)
        got += (size_t)n;
    buf[got] = '\0';
    ok (strstr (buf, "0 3 1\n") && strstr (buf, "1 3 1\n")
        && strstr (buf, "2 3 1\n"),
        "children got their rank, size and the fd passed");

    ok (forksrv_request (sv[0], 0, 1, NULL, 3) < 0 && errno == EINVAL,
        "more fds than FORKSRV_MAX_FDS: EINVAL");
    ok (forksrv_recv (sv[0], &m, 0.05) == 0, "nothing more: a timeout");

    int status;
    close (sv[0]);
    ok (waitpid (server, &status, 0) == server && WIFEXITED (status)
        && WEXITSTATUS (status) == 0,
        "closing the client's end ends the server cleanly");
    close (pp[0]);
    return done_testing ();
}

/* vi: ts=4 sw=4 expandtab
 */
