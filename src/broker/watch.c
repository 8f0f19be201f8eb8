/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* watch.c: modules' ZeroMQ sockets on the broker's zloop (see watch.h).
 *
 * A plain watch is a zloop poller on the socket: level-triggered, zloop
 * asks libzmq whether the socket is readable (ZMQ_EVENTS: a poll and a
 * getpid) on every turn, for every such socket.  A quiet one is a zloop
 * poller on the socket's ZMQ_FD instead: the descriptor wakes us when
 * libzmq has news for the socket, and we ask libzmq only then, so a
 * socket that is seldom readable costs nothing per turn.  Because the
 * descriptor says only that something changed, a quiet watch asks once
 * more after each callback; while messages remain (the callback kept to
 * its budget) it goes on from a timer that is due at once, so other
 * sockets get their turn in between.  That timer names the set, not the
 * watch, and finds its watch by timer id: a watch removed while its
 * timer is pending is freed at once, and zloop may still run the timer
 * in the same pass (an ended timer waits on zloop's list until then).
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <stdlib.h>
#include <czmq.h>

#include "src/common/libzmqutil/multipart.h"
#include "watch.h"

struct watches {
    zloop_t *loop;
    zlistx_t *list;         /* struct watch */
};

struct watch {
    struct watches *ws;     /* its set, and through it the loop */
    void *zsock;
    void (*cb) (void *arg);
    void *arg;
    int quiet;
    int fd;                 /* quiet: the socket's ZMQ_FD */
    int again;              /* quiet: id of the timer that goes on, or 0 */
    int running;            /* quiet: in cb, which may remove the watch */
    int removed;            /* quiet: removed in cb: free it after */
};

static int plain_ready (zloop_t *loop, zmq_pollitem_t *item, void *arg)
{
    struct watch *w = arg;

    w->cb (w->arg);
    return 0;
}

static int quiet_again (zloop_t *loop, int timer_id, void *arg);

/* Go on from the loop at once: a zero-delay timer, which finds w by its
 * id (quiet_again). */
static void quiet_later (struct watch *w)
{
    int id = zloop_timer (w->ws->loop, 0, 1, quiet_again, w->ws);

    w->again = id > 0 ? id : 0;
}

/* Asking libzmq takes in what woke the descriptor; the callback runs
 * only when there is a message. */
static void quiet_run (struct watch *w)
{
    if (!zmqutil_readable (w->zsock))
        return;
    w->running = 1;
    w->cb (w->arg);
    w->running = 0;
    if (w->removed) {
        free (w);
        return;
    }
    if (!w->again && zmqutil_readable (w->zsock))
        quiet_later (w);
}

static int quiet_again (zloop_t *loop, int timer_id, void *arg)
{
    struct watches *ws = arg;

    for (struct watch *w = zlistx_first (ws->list); w;
         w = zlistx_next (ws->list)) {
        if (w->quiet && w->again == timer_id) {
            w->again = 0;
            quiet_run (w);
            break;
        }
    }
    return 0;       /* a watch gone meanwhile: nothing to do */
}

static int quiet_woken (zloop_t *loop, zmq_pollitem_t *item, void *arg)
{
    quiet_run (arg);
    return 0;
}

static void watch_free (void **item)
{
    struct watch *w = *item;

    if (w) {
        zmq_pollitem_t pi = { .socket = w->quiet ? NULL : w->zsock,
                              .fd = w->quiet ? w->fd : 0 };
        zloop_poller_end (w->ws->loop, &pi);
        if (w->again)
            zloop_timer_end (w->ws->loop, w->again);
        if (w->running)
            w->removed = 1;     /* quiet_run frees it when cb returns */
        else
            free (w);
        *item = NULL;
    }
}

static struct watch *watch_find (struct watches *ws, void *zsock)
{
    for (struct watch *w = zlistx_first (ws->list); w;
         w = zlistx_next (ws->list))
        if (w->zsock == zsock)
            return w;
    return NULL;
}

int watches_add (struct watches *ws, void *zsock, void (*cb) (void *arg),
                 void *arg, int quiet)
{
    zmq_pollitem_t pi = { .socket = zsock, .events = ZMQ_POLLIN };
    struct watch *w;
    size_t len = sizeof (pi.fd);

    if (!zsock || !cb) {
        errno = EINVAL;
        return -1;
    }
    if (watch_find (ws, zsock)) {
        errno = EEXIST;
        return -1;
    }
    if (!(w = calloc (1, sizeof (*w))))
        return -1;
    *w = (struct watch){ .ws = ws, .zsock = zsock, .cb = cb, .arg = arg,
                         .quiet = quiet };
    if (quiet) {
        if (zmq_getsockopt (zsock, ZMQ_FD, &pi.fd, &len) < 0) {
            free (w);
            return -1;
        }
        /* zloop ends fd pollers by fd, and a socket poller's fd is 0:
         * a descriptor 0 (stdin closed before the context was made)
         * would end them too.  Watch such a socket plainly. */
        if (pi.fd == 0)
            w->quiet = quiet = 0;
        else {
            pi.socket = NULL;
            w->fd = pi.fd;
        }
    }
    if (zloop_poller (ws->loop, &pi, quiet ? quiet_woken : plain_ready, w)
        < 0) {
        free (w);
        return -1;
    }
    if (!zlistx_add_end (ws->list, w)) {
        watch_free ((void **)&w);
        errno = ENOMEM;
        return -1;
    }
    /* what came before the watch woke no one: look once, from the loop */
    if (quiet)
        quiet_later (w);
    return 0;
}

void watches_remove (struct watches *ws, void *zsock)
{
    if (!ws)
        return;
    for (struct watch *w = zlistx_first (ws->list); w;
         w = zlistx_next (ws->list)) {
        if (w->zsock == zsock) {
            zlistx_delete (ws->list, zlistx_cursor (ws->list));
            return;
        }
    }
}

struct watches *watches_create (zloop_t *loop)
{
    struct watches *ws;

    if (!loop) {
        errno = EINVAL;
        return NULL;
    }
    if (!(ws = calloc (1, sizeof (*ws))) || !(ws->list = zlistx_new ())) {
        free (ws);
        errno = ENOMEM;
        return NULL;
    }
    ws->loop = loop;
    zlistx_set_destructor (ws->list, watch_free);
    return ws;
}

void watches_destroy (struct watches **wp)
{
    struct watches *ws;

    if (!wp || !(ws = *wp))
        return;
    zlistx_destroy (&ws->list);
    free (ws);
    *wp = NULL;
}
