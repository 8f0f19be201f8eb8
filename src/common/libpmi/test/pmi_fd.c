/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test/pmi_fd.c: unit tests for pmi_fd.h, on socketpairs and a pipe.
 *
 * - the time left until a deadline, rounded up, 0 once past
 * - a wait ends when the descriptor is ready, or at the deadline and not
 *   before it
 * - a write of more than the socket holds times out at the deadline
 * - a pipe (not a socket) is written with write(); a closed peer gives
 *   EPIPE from "write", not SIGPIPE
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "src/common/libtap/tap.h"
#include "src/common/libpmi/pmi_fd.h"

static void nonblock (int fd)
{
    fcntl (fd, F_SETFL, fcntl (fd, F_GETFL) | O_NONBLOCK);
}

static void test_remaining (void)
{
    double t = pmi_fd_now ();
    int ms = pmi_fd_remaining_ms (t + 1.0);

    ok (pmi_fd_remaining_ms (t - 1.0) == 0, "a past deadline leaves 0 ms");
    /* generous bounds: the machine may be busy between two clock reads */
    ok (ms > 500 && ms <= 1000, "a deadline 1 s away leaves 501..1000 ms");
    ms = pmi_fd_remaining_ms (pmi_fd_now () + 0.5);
    ok (ms >= 1 && ms <= 500, "half a second away: 1..500 ms, never 0 ahead "
        "of time");
    ok (pmi_fd_remaining_ms (t + 1e12) == INT_MAX, "a far deadline is INT_MAX");
}

static void test_wait (void)
{
    int sv[2];
    double t0, took;

    if (socketpair (AF_UNIX, SOCK_STREAM, 0, sv) < 0)
        bail_out ("socketpair failed");
    t0 = pmi_fd_now ();
    ok (pmi_fd_wait (sv[0], POLLIN, t0 + 0.1) == 0,
        "nothing to read: the wait ends at the deadline");
    took = pmi_fd_now () - t0;
    ok (took >= 0.099, "and not before it (%.3fs)", took);
    ok (pmi_fd_wait (sv[0], POLLIN, t0 - 1) == 0,
        "a past deadline: no wait at all");
    ok (write (sv[1], "x", 1) == 1, "the peer writes a byte");
    ok (pmi_fd_wait (sv[0], POLLIN, pmi_fd_now () + 5) == 1,
        "then the wait ends at once: ready");
    ok (pmi_fd_wait (-1, POLLIN, pmi_fd_now () + 0.01) == 0,
        "a negative fd is never ready (poll ignores it)");
    close (sv[0]);
    close (sv[1]);
}

static void test_write_all (void)
{
    size_t big = 16 << 20;
    char *buf = calloc (1, big);
    const char *failed = "unset";
    char got[8] = "";
    int sv[2], pfd[2];
    double t0;

    if (!buf || socketpair (AF_UNIX, SOCK_STREAM, 0, sv) < 0 || pipe (pfd) < 0)
        bail_out ("set-up failed");
    nonblock (sv[0]);
    nonblock (pfd[1]);

    ok (pmi_fd_write_all (sv[0], "hello\n", 6, pmi_fd_now () + 1, &failed)
            == 0 && read (sv[1], got, sizeof (got)) == 6
            && !memcmp (got, "hello\n", 6),
        "a line is written whole");

    t0 = pmi_fd_now ();
    errno = 0;
    ok (pmi_fd_write_all (sv[0], buf, big, t0 + 0.2, &failed) < 0
            && errno == ETIMEDOUT && failed == NULL,
        "16 MB nobody reads: ETIMEDOUT at the deadline, nothing failed");
    ok (pmi_fd_now () - t0 >= 0.199, "after the whole timeout");

    ok (pmi_fd_write_all (pfd[1], "pipe\n", 5, pmi_fd_now () + 1, NULL) == 0
            && read (pfd[0], got, sizeof (got)) == 5
            && !memcmp (got, "pipe\n", 5),
        "a pipe is not a socket: written with write()");

    close (sv[1]);
    failed = NULL;
    errno = 0;
    ok (pmi_fd_write_all (sv[0], "x", 1, pmi_fd_now () + 1, &failed) < 0
            && errno == EPIPE && failed && !strcmp (failed, "write"),
        "a closed peer: EPIPE from write, and the test is still alive");
    close (sv[0]);
    close (pfd[0]);
    close (pfd[1]);
    free (buf);
}

int main (void)
{
    test_remaining ();
    test_wait ();
    test_write_all ();
    return done_testing ();
}
