/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* fluxpoll.c: ZeroMQ sockets on a Flux reactor (see fluxpoll.h).
 *
 * A plain watch asks libzmq whether its socket is readable before and
 * after every wait of the reactor (prepare and check watchers): a send
 * elsewhere may have taken the wake-up the socket's descriptor would
 * have given.  A quiet one (add_quiet, for sockets touched only in
 * their callback) asks only when its descriptor wakes, once after it is
 * added, and after each callback while messages remain; its check
 * watcher does nothing on the other turns. */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <stdlib.h>
#include <zmq.h>

#include "src/common/libzmqutil/multipart.h"
#include "fluxpoll.h"

struct watch {
    void *zsock;
    void (*cb) (void *arg);
    void *arg;
    flux_watcher_t *fd_w, *prep_w, *check_w, *idle_w;
    int quiet;
    int due;                /* quiet: ask libzmq at the next check
                               (just added, or messages remain) */
    int running;            /* quiet: in cb, which may remove the watch */
    int removed;            /* quiet: removed in cb: free it after */
    struct watch *next;
};

struct fluxpoll {
    flux_reactor_t *r;
    void *zctx;
    struct bgn_poller poller;
    struct watch *watches;
};

static void watch_free (struct watch *x);

/* A quiet watch's turn: ask libzmq (which takes in what woke the fd),
 * run cb if there is a message, and while messages remain keep the
 * reactor from blocking (idle) so the check watcher goes on. */
static void quiet_run (struct watch *x)
{
    x->due = 0;
    flux_watcher_stop (x->idle_w);
    if (!zmqutil_readable (x->zsock))
        return;
    x->running = 1;
    x->cb (x->arg);
    x->running = 0;
    if (x->removed) {
        watch_free (x);
        return;
    }
    if (zmqutil_readable (x->zsock)) {      /* cb kept to its budget */
        x->due = 1;
        flux_watcher_start (x->idle_w);
    }
}

/* A plain watch's fd only wakes the reactor: its check watcher does the
 * work.  A quiet one's does it here (libev runs check watchers before
 * fd watchers of the same turn). */
static void fd_cb (flux_reactor_t *r, flux_watcher_t *w, int revents,
                   void *arg)
{
    struct watch *x = arg;

    if (x->quiet)
        quiet_run (x);
}

static void prep_cb (flux_reactor_t *r, flux_watcher_t *w, int revents,
                     void *arg)
{
    struct watch *x = arg;

    if (zmqutil_readable (x->zsock))
        flux_watcher_start (x->idle_w);
}

static void check_cb (flux_reactor_t *r, flux_watcher_t *w, int revents,
                      void *arg)
{
    struct watch *x = arg;

    if (x->quiet) {
        if (x->due)             /* just added, or messages remain */
            quiet_run (x);
        return;
    }
    flux_watcher_stop (x->idle_w);
    if (zmqutil_readable (x->zsock))
        x->cb (x->arg);
}

static void idle_cb (flux_reactor_t *r, flux_watcher_t *w, int revents,
                     void *arg)
{
}

static void watch_free (struct watch *x)
{
    flux_watcher_destroy (x->fd_w);
    flux_watcher_destroy (x->prep_w);
    flux_watcher_destroy (x->check_w);
    flux_watcher_destroy (x->idle_w);
    free (x);
}

static int watch_add (struct fluxpoll *p, void *zsock,
                      void (*cb) (void *arg), void *arg, int quiet)
{
    struct watch *x;
    int fd;
    size_t len = sizeof (fd);

    if (!zsock || !cb) {
        errno = EINVAL;
        return -1;
    }
    for (x = p->watches; x; x = x->next)
        if (x->zsock == zsock) {
            errno = EEXIST;
            return -1;
        }
    if (zmq_getsockopt (zsock, ZMQ_FD, &fd, &len) < 0)
        return -1;
    if (!(x = calloc (1, sizeof (*x))))
        return -1;
    x->zsock = zsock;
    x->cb = cb;
    x->arg = arg;
    x->quiet = quiet;
    if (!(x->fd_w = flux_fd_watcher_create (p->r, fd, FLUX_POLLIN, fd_cb, x))
        || (!quiet
            && !(x->prep_w = flux_prepare_watcher_create (p->r, prep_cb, x)))
        || !(x->check_w = flux_check_watcher_create (p->r, check_cb, x))
        || !(x->idle_w = flux_idle_watcher_create (p->r, idle_cb, x))) {
        watch_free (x);
        return -1;
    }
    flux_watcher_start (x->fd_w);
    if (!quiet)
        flux_watcher_start (x->prep_w);
    flux_watcher_start (x->check_w);
    if (quiet) {    /* what came before the watch woke no one: look once */
        x->due = 1;
        flux_watcher_start (x->idle_w);
    }
    x->next = p->watches;
    p->watches = x;
    return 0;
}

static int poll_add (void *ctx, void *zsock, void (*cb) (void *arg),
                     void *arg)
{
    return watch_add (ctx, zsock, cb, arg, 0);
}

static int poll_add_quiet (void *ctx, void *zsock, void (*cb) (void *arg),
                           void *arg)
{
    return watch_add (ctx, zsock, cb, arg, 1);
}

static void poll_remove (void *ctx, void *zsock)
{
    struct fluxpoll *p = ctx;

    for (struct watch **xp = &p->watches; *xp; xp = &(*xp)->next) {
        if ((*xp)->zsock == zsock) {
            struct watch *x = *xp;
            *xp = x->next;
            if (x->running) {   /* check_cb frees it when cb returns */
                x->removed = 1;
                flux_watcher_stop (x->fd_w);
                flux_watcher_stop (x->check_w);
                flux_watcher_stop (x->idle_w);
            }
            else
                watch_free (x);
            return;
        }
    }
}

struct fluxpoll *fluxpoll_create (flux_reactor_t *r)
{
    struct fluxpoll *p = calloc (1, sizeof (*p));

    if (!p)
        return NULL;
    p->r = r;
    if (!(p->zctx = zmq_ctx_new ())) {
        free (p);
        return NULL;
    }
    p->poller = (struct bgn_poller){ .ctx = p, .zmq_ctx = p->zctx,
                                     .add = poll_add, .remove = poll_remove,
                                     .add_quiet = poll_add_quiet };
    return p;
}

void fluxpoll_destroy (struct fluxpoll **pp)
{
    struct fluxpoll *p;

    if (!pp || !(p = *pp))
        return;
    while (p->watches) {
        struct watch *x = p->watches;
        p->watches = x->next;
        watch_free (x);
    }
    zmq_ctx_term (p->zctx);
    free (p);
    *pp = NULL;
}

const struct bgn_poller *fluxpoll_poller (struct fluxpoll *p)
{
    return &p->poller;
}
