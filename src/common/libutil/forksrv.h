/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* forksrv.h: a fork server, and how to talk to one.
 *
 * 'bgn start' runs hundreds of brokers of one executable.  Exec'ing each
 * costs it the same work again and again: mapping some thirty shared
 * libraries and resolving their symbols, several milliseconds of CPU per
 * broker.  So it execs the broker once, as a fork server, and asks it
 * for each broker: the server forks, and the child, whose libraries are
 * loaded and linked already, becomes that broker.  The server must stay
 * single-threaded and hold no sockets or contexts for fork to be safe;
 * it only forks, and reports its children's exits.
 *
 * The conversation runs over a SOCK_SEQPACKET socket pair, one message
 * per datagram, file descriptors passed with SCM_RIGHTS:
 *   client -> server   SPAWN {rank, size} + fds (up to FORKSRV_MAX_FDS)
 *   server -> client   SPAWNED {rank, pid}  (pid < 0: -errno, fork failed)
 *                      EXITED {pid, status} (a wait status, as waitpid's)
 * A SPAWNED answers each SPAWN in order; EXITED messages come whenever a
 * child ends, between them too.  The server ends when the client closes
 * its end; its children, set up to die with it (the child function
 * decides: PR_SET_PDEATHSIG), go too.
 *
 * No global state.  -1 with errno on errors.
 */
#ifndef BGN_UTIL_FORKSRV_H
#define BGN_UTIL_FORKSRV_H

#include <stdint.h>
#include <sys/types.h>

#define FORKSRV_MAX_FDS 2

enum {
    FORKSRV_SPAWN = 1,
    FORKSRV_SPAWNED = 2,
    FORKSRV_EXITED = 3,
};

struct forksrv_msg {
    int32_t type;               /* FORKSRV_* */
    int32_t rank;               /* SPAWN, SPAWNED */
    int32_t size;               /* SPAWN */
    int32_t pid;                /* SPAWNED (< 0: -errno), EXITED */
    int32_t status;             /* EXITED: wait status */
    int32_t nfds;               /* SPAWN: how many fds came with it */
    int fds[FORKSRV_MAX_FDS];   /* SPAWN, as received; -1 past nfds */
};

/* In the child, after fork: become what was asked for.  The return value
 * is the child's exit code.  The server's socket is already closed and
 * the signal mask is empty; req->fds are the child's to keep. */
typedef int (*forksrv_child_f) (void *arg, const struct forksrv_msg *req);

/* Serve SPAWN requests on fd until the client closes it: 0 then, -1 on
 * a socket error.  Blocks SIGCHLD while it runs (children get an empty
 * mask). */
int forksrv_serve (int fd, forksrv_child_f child, void *arg);

/* Client: ask for a child of 'rank' of 'size', handing it fds[0..nfds-1]
 * (duplicated to the server; the caller still closes its copies). */
int forksrv_request (int fd, int32_t rank, int32_t size, const int *fds,
                     int nfds);

/* Client: the next message (SPAWNED or EXITED) if one arrives within
 * timeout seconds (negative: wait for ever).  1 with *msg filled, 0 on
 * timeout, -1 on error (ECONNRESET: the server is gone). */
int forksrv_recv (int fd, struct forksrv_msg *msg, double timeout);

#endif
