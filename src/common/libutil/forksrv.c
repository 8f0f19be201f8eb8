/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* forksrv.c: a fork server and its client calls (see forksrv.h).
 *
 * The server waits on its socket and a signalfd for SIGCHLD in one
 * poll(): a request forks at once and is answered before the loop looks
 * at exits again, so a child's SPAWNED always precedes its EXITED.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "forksrv.h"

static int send_msg (int fd, struct forksrv_msg *m, const int *fds, int nfds)
{
    union {
        char buf[CMSG_SPACE (sizeof (int) * FORKSRV_MAX_FDS)];
        struct cmsghdr align;
    } u;
    struct iovec iov = { .iov_base = m, .iov_len = sizeof (*m) };
    struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

    if (nfds < 0 || nfds > FORKSRV_MAX_FDS) {
        errno = EINVAL;
        return -1;
    }
    m->nfds = nfds;
    for (int i = 0; i < FORKSRV_MAX_FDS; i++)
        m->fds[i] = -1;         /* numbers mean nothing to the other side */
    if (nfds > 0) {
        struct cmsghdr *c;
        memset (&u, 0, sizeof (u));
        mh.msg_control = u.buf;
        mh.msg_controllen = CMSG_SPACE (sizeof (int) * nfds);
        c = CMSG_FIRSTHDR (&mh);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN (sizeof (int) * nfds);
        memcpy (CMSG_DATA (c), fds, sizeof (int) * nfds);
    }
    while (sendmsg (fd, &mh, MSG_NOSIGNAL) < 0) {
        if (errno != EINTR)
            return -1;
    }
    return 0;
}

/* One message: 1, 0 at EOF, -1 with errno. */
static int recv_msg (int fd, struct forksrv_msg *m)
{
    union {
        char buf[CMSG_SPACE (sizeof (int) * FORKSRV_MAX_FDS)];
        struct cmsghdr align;
    } u;
    struct iovec iov = { .iov_base = m, .iov_len = sizeof (*m) };
    struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
                         .msg_control = u.buf,
                         .msg_controllen = sizeof (u.buf) };
    ssize_t n;
    int got = 0;

    while ((n = recvmsg (fd, &mh, MSG_CMSG_CLOEXEC)) < 0) {
        if (errno != EINTR)
            return -1;
    }
    if (n == 0)
        return 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR (&mh); c; c = CMSG_NXTHDR (&mh, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
            continue;
        int k = (int)((c->cmsg_len - CMSG_LEN (0)) / sizeof (int));
        int fds[FORKSRV_MAX_FDS * 2];
        memcpy (fds, CMSG_DATA (c), sizeof (int) * (k < FORKSRV_MAX_FDS * 2
                                                    ? k : FORKSRV_MAX_FDS * 2));
        for (int i = 0; i < k; i++) {
            if (got < FORKSRV_MAX_FDS)
                m->fds[got++] = fds[i];
            else
                close (fds[i]);
        }
    }
    if ((size_t)n != sizeof (*m) || (mh.msg_flags & MSG_CTRUNC)) {
        for (int i = 0; i < got; i++)
            close (m->fds[i]);
        errno = EPROTO;
        return -1;
    }
    for (int i = got; i < FORKSRV_MAX_FDS; i++)
        m->fds[i] = -1;
    m->nfds = got;
    return 1;
}

/* Tell the client about every child that ended. */
static void report_exits (int fd)
{
    int status;
    pid_t pid;

    while ((pid = waitpid (-1, &status, WNOHANG)) > 0) {
        struct forksrv_msg m = { .type = FORKSRV_EXITED, .pid = pid,
                                 .status = status };
        send_msg (fd, &m, NULL, 0);
    }
}

static void spawn (int fd, int sfd, const struct forksrv_msg *req,
                   forksrv_child_f child, void *arg)
{
    struct forksrv_msg rep = { .type = FORKSRV_SPAWNED, .rank = req->rank };
    pid_t pid = fork ();

    if (pid == 0) {
        sigset_t none;
        close (fd);
        close (sfd);
        sigemptyset (&none);
        sigprocmask (SIG_SETMASK, &none, NULL);
        exit (child (arg, req));
    }
    rep.pid = pid > 0 ? pid : -errno;
    for (int i = 0; i < req->nfds; i++)
        close (req->fds[i]);
    send_msg (fd, &rep, NULL, 0);
}

int forksrv_serve (int fd, forksrv_child_f child, void *arg)
{
    sigset_t chld, old;
    int sfd, rc = -1;

    sigemptyset (&chld);
    sigaddset (&chld, SIGCHLD);
    if (sigprocmask (SIG_BLOCK, &chld, &old) < 0)
        return -1;
    if ((sfd = signalfd (-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK)) < 0)
        goto done;
    for (;;) {
        struct pollfd p[2] = { { .fd = fd, .events = POLLIN },
                               { .fd = sfd, .events = POLLIN } };
        struct signalfd_siginfo si;
        struct forksrv_msg req;
        int n;

        if (poll (p, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (p[1].revents) {
            while (read (sfd, &si, sizeof (si)) == sizeof (si))
                ;
            report_exits (fd);
        }
        if (!p[0].revents)
            continue;
        if ((n = recv_msg (fd, &req)) == 0) {
            rc = 0;             /* the client is done */
            break;
        }
        if (n < 0) {
            if (errno == EPROTO)
                continue;       /* a malformed request: dropped */
            break;
        }
        if (req.type == FORKSRV_SPAWN)
            spawn (fd, sfd, &req, child, arg);
        else {
            for (int i = 0; i < req.nfds; i++)
                close (req.fds[i]);
        }
    }
    close (sfd);
done:
    sigprocmask (SIG_SETMASK, &old, NULL);
    return rc;
}

int forksrv_request (int fd, int32_t rank, int32_t size, const int *fds,
                     int nfds)
{
    struct forksrv_msg m = { .type = FORKSRV_SPAWN, .rank = rank,
                             .size = size };
    return send_msg (fd, &m, fds, nfds);
}

int forksrv_recv (int fd, struct forksrv_msg *msg, double timeout)
{
    struct pollfd p = { .fd = fd, .events = POLLIN };
    int n;

    if ((n = poll (&p, 1, timeout < 0 ? -1 : (int)(timeout * 1000))) <= 0)
        return n < 0 && errno != EINTR ? -1 : 0;
    if ((n = recv_msg (fd, msg)) == 0) {
        errno = ECONNRESET;
        return -1;
    }
    if (n > 0 && msg->type != FORKSRV_SPAWNED && msg->type != FORKSRV_EXITED) {
        for (int i = 0; i < msg->nfds; i++)
            close (msg->fds[i]);
        errno = EPROTO;
        return -1;
    }
    return n;
}
