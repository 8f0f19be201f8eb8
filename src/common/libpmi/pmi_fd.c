/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* pmi_fd.c: deadline-bounded I/O for the PMI-1 client and server (see
 * pmi_fd.h).
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "pmi_fd.h"

double pmi_fd_now (void)
{
    struct timespec ts;

    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int pmi_fd_remaining_ms (double deadline)
{
    double left = deadline - pmi_fd_now ();

    if (left <= 0)
        return 0;
    if (left > INT_MAX / 1000)
        return INT_MAX;
    return (int)ceil (left * 1000);
}

int pmi_fd_wait (int fd, short events, double deadline)
{
    struct pollfd pfd = { .fd = fd, .events = events };
    int ms = pmi_fd_remaining_ms (deadline);
    int rc = ms > 0 ? poll (&pfd, 1, ms) : 0;

    if (rc < 0)
        return errno == EINTR ? 1 : -1;
    if (rc == 0 && pmi_fd_remaining_ms (deadline) == 0)
        return 0;
    return 1;
}

static void set_failed (const char **failed, const char *what)
{
    if (failed)
        *failed = what;
}

int pmi_fd_write_all (int fd, const void *buf, size_t len, double deadline,
                      const char **failed)
{
    const char *p = buf;
    size_t off = 0;

    while (off < len) {
        ssize_t n = send (fd, p + off, len - off, MSG_NOSIGNAL);
        if (n < 0 && errno == ENOTSOCK)
            n = write (fd, p + off, len - off);
        if (n >= 0) {
            off += (size_t)n;
            continue;
        }
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) {
            set_failed (failed, "write");
            return -1;
        }
        int rc = pmi_fd_wait (fd, POLLOUT, deadline);
        if (rc < 0) {
            set_failed (failed, "poll");
            return -1;
        }
        if (rc == 0) {
            set_failed (failed, NULL);
            errno = ETIMEDOUT;
            return -1;
        }
    }
    return 0;
}
