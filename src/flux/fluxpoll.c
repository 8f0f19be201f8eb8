/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* fluxpoll.c: ZeroMQ sockets on a Flux reactor (see fluxpoll.h). */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <stdlib.h>
#include <zmq.h>

#include "fluxpoll.h"

struct watch {
    void *zsock;
    void (*cb) (void *arg);
    void *arg;
    flux_watcher_t *fd_w, *prep_w, *check_w, *idle_w;
    struct watch *next;
};

struct fluxpoll {
    flux_reactor_t *r;
    void *zctx;
    struct bgn_poller poller;
    struct watch *watches;
};

static int readable_now (void *zsock)
{
    int events = 0;
    size_t len = sizeof (events);

    if (zmq_getsockopt (zsock, ZMQ_EVENTS, &events, &len) < 0)
        return 0;
    return (events & ZMQ_POLLIN) != 0;
}

/* The fd only wakes the reactor; the check watcher does the work. */
static void fd_cb (flux_reactor_t *r, flux_watcher_t *w, int revents,
                   void *arg)
{
}

static void prep_cb (flux_reactor_t *r, flux_watcher_t *w, int revents,
                     void *arg)
{
    struct watch *x = arg;

    if (readable_now (x->zsock))
        flux_watcher_start (x->idle_w);
}

static void check_cb (flux_reactor_t *r, flux_watcher_t *w, int revents,
                      void *arg)
{
    struct watch *x = arg;

    flux_watcher_stop (x->idle_w);
    if (readable_now (x->zsock))
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

static int poll_add (void *ctx, void *zsock, void (*cb) (void *arg),
                     void *arg)
{
    struct fluxpoll *p = ctx;
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
    if (!(x->fd_w = flux_fd_watcher_create (p->r, fd, FLUX_POLLIN, fd_cb, x))
        || !(x->prep_w = flux_prepare_watcher_create (p->r, prep_cb, x))
        || !(x->check_w = flux_check_watcher_create (p->r, check_cb, x))
        || !(x->idle_w = flux_idle_watcher_create (p->r, idle_cb, x))) {
        watch_free (x);
        return -1;
    }
    flux_watcher_start (x->fd_w);
    flux_watcher_start (x->prep_w);
    flux_watcher_start (x->check_w);
    x->next = p->watches;
    p->watches = x;
    return 0;
}

static void poll_remove (void *ctx, void *zsock)
{
    struct fluxpoll *p = ctx;

    for (struct watch **xp = &p->watches; *xp; xp = &(*xp)->next) {
        if ((*xp)->zsock == zsock) {
            struct watch *x = *xp;
            *xp = x->next;
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
                                     .add = poll_add, .remove = poll_remove };
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
