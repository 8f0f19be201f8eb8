/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* pmi_fd.h: I/O on a non-blocking descriptor under a deadline, shared by
 * the PMI-1 client and server.
 *
 * A deadline is a time on the monotonic clock, in seconds: pmi_fd_now ()
 * plus a timeout.  Both sides keep their descriptors non-blocking and wait
 * in poll() only for the time left, so a stalled peer can never hold a
 * write or a read past the deadline.  No state.  Not installed.
 */
#ifndef BGN_PMI_FD_H
#define BGN_PMI_FD_H

#include <stddef.h>

/* The monotonic clock, in seconds. */
double pmi_fd_now (void);

/* Milliseconds from now until deadline, rounded up; 0 once it has passed,
 * INT_MAX at most.
 */
int pmi_fd_remaining_ms (double deadline);

/* Wait until fd is ready for 'events' (POLLIN, POLLOUT) or the deadline
 * passes.  1: ready, or a signal cut the wait short (try the I/O again);
 * 0: the deadline has passed; -1: poll failed (errno).
 */
int pmi_fd_wait (int fd, short events, double deadline);

/* Write all of buf[len] to fd before the deadline, waiting whenever the
 * descriptor is full: send() with MSG_NOSIGNAL (a closed peer gives EPIPE,
 * not SIGPIPE), or write() if fd is not a socket.  0, or -1 with errno
 * set and *failed naming what failed: "write", "poll", or NULL when the
 * deadline passed (errno ETIMEDOUT).  'failed' may be NULL.
 */
int pmi_fd_write_all (int fd, const void *buf, size_t len, double deadline,
                      const char **failed);

#endif /* BGN_PMI_FD_H */
