/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test/fluxpoll.c: ZeroMQ sockets watched on a Flux reactor.
 *
 * ZMQ_FD is edge-triggered: messages that arrive together give one edge,
 * and a send on the socket can consume the edge of a message waiting to
 * be read.  The watch must still read every message, whatever the
 * reader's budget. */
#include <errno.h>
#include <string.h>
#include <zmq.h>
#include <flux/core.h>

#include "src/common/libtap/tap.h"
#include "src/flux/fluxpoll.h"

struct ctx {
    void *rx;
    int got;
    int want;
    int budget;             /* messages read per callback */
    int calls;
    int remove_in_cb;       /* the callback ends its own watch */
    const struct bgn_poller *po;
    flux_reactor_t *r;
};

static void reader (void *arg)
{
    struct ctx *c = arg;
    char buf[16];

    c->calls++;
    for (int i = 0; i < c->budget; i++) {
        if (zmq_recv (c->rx, buf, sizeof (buf), ZMQ_DONTWAIT) < 0)
            break;
        c->got++;
    }
    if (c->remove_in_cb)
        c->po->remove (c->po->ctx, c->rx);
    if (c->got >= c->want)
        flux_reactor_stop (c->r);
}

static void give_up (flux_reactor_t *r, flux_watcher_t *w, int revents,
                     void *arg)
{
    flux_reactor_stop (r);
}

static void run (struct ctx *c, double limit)
{
    flux_watcher_t *t = flux_timer_watcher_create (c->r, limit, 0, give_up,
                                                   NULL);
    flux_watcher_start (t);
    flux_reactor_run (c->r, 0);
    flux_watcher_destroy (t);
}

int main (void)
{
    flux_reactor_t *r = flux_reactor_create (0);
    struct fluxpoll *p = fluxpoll_create (r);
    const struct bgn_poller *po = p ? fluxpoll_poller (p) : NULL;
    void *rx = NULL, *tx = NULL;
    struct ctx c = { .r = r, .budget = 1, .po = po };

    plan (NO_PLAN);
    ok (p != NULL && po && po->zmq_ctx, "a poller with its own context");
    rx = zmq_socket (po->zmq_ctx, ZMQ_PAIR);
    tx = zmq_socket (po->zmq_ctx, ZMQ_PAIR);
    ok (rx && tx && zmq_bind (rx, "inproc://t") == 0
        && zmq_connect (tx, "inproc://t") == 0, "two sockets in it");
    c.rx = rx;
    ok (po->add (po->ctx, rx, reader, &c) == 0, "watching one");
    errno = 0;
    ok (po->add (po->ctx, rx, reader, &c) < 0 && errno == EEXIST,
        "watching it twice is EEXIST");
    for (int i = 0; i < 5; i++)
        zmq_send (tx, "x", 1, 0);
    c.want = 5;
    run (&c, 5.);
    ok (c.got == 5, "five messages sent at once, one edge, a budget of one: "
        "all five read (%d)", c.got);
    ok (c.calls >= 5, "in as many calls (%d)", c.calls);
    /* a send on the watched socket, with a message waiting, eats its edge */
    zmq_send (tx, "y", 1, 0);
    zmq_send (rx, "z", 1, 0);
    c.want = 6;
    run (&c, 5.);
    ok (c.got == 6, "a message still read after a send on the same socket");
    po->remove (po->ctx, rx);
    zmq_send (tx, "w", 1, 0);
    c.want = 7;
    run (&c, 0.3);
    ok (c.got == 6, "not read once the watch is removed");
    po->remove (po->ctx, rx);
    pass ("removing it again is harmless");
    /* quiet: watched through its descriptor only */
    zmq_send (tx, "a", 1, 0);
    zmq_send (tx, "b", 1, 0);
    ok (po->add_quiet (po->ctx, rx, reader, &c) == 0, "watching it quietly");
    errno = 0;
    ok (po->add_quiet (po->ctx, rx, reader, &c) < 0 && errno == EEXIST,
        "quietly twice is EEXIST");
    c.want = 8;     /* "w", sent while unwatched, and the two above */
    run (&c, 5.);
    ok (c.got == 8, "quiet: what came before the watch is read (%d)", c.got);
    c.calls = 0;
    for (int i = 0; i < 5; i++)
        zmq_send (tx, "x", 1, 0);
    c.want = 13;
    run (&c, 5.);
    ok (c.got == 13 && c.calls >= 5, "quiet: five at once, a budget of one: "
        "all read (%d in %d calls)", c.got, c.calls);
    c.remove_in_cb = 1;
    zmq_send (tx, "r", 1, 0);
    zmq_send (tx, "s", 1, 0);
    c.want = 14;
    run (&c, 5.);
    c.want = 15;
    run (&c, 0.3);
    ok (c.got == 14, "quiet: a callback that ends its own watch reads no "
        "more (%d)", c.got);
    c.remove_in_cb = 0;
    ok (po->add_quiet (po->ctx, rx, reader, &c) == 0, "watched again");
    run (&c, 5.);
    ok (c.got == 15, "quiet: the message left behind is read then");
    zmq_close (rx);
    zmq_close (tx);
    fluxpoll_destroy (&p);
    ok (p == NULL, "destroyed (the context terminated)");
    flux_reactor_destroy (r);
    done_testing ();
}
