/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test/watch.c: modules' sockets on the broker's zloop, plain and quiet.
 *
 * ZMQ_FD is edge-triggered: messages that arrive together give one edge,
 * and a send on the socket can consume the edge of a message waiting to
 * be read.  Every message must still be read, whatever the reader's
 * budget, and a quiet watch must also find what came before it. */
#include <errno.h>
#include <string.h>
#include <czmq.h>

#include "src/common/libtap/tap.h"
#include "src/broker/watch.h"

struct ctx {
    void *rx;
    struct watches *ws;
    int got;
    int want;
    int budget;             /* messages read per callback */
    int calls;
    int remove_in_cb;       /* the callback ends its own watch */
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
        watches_remove (c->ws, c->rx);
}

struct until {
    struct ctx *c;
    int64_t deadline;
};

static int check_done (zloop_t *loop, int timer_id, void *arg)
{
    struct until *u = arg;

    if (u->c->got >= u->c->want || zclock_mono () >= u->deadline)
        return -1;
    return 0;
}

/* Run the loop until c->want messages are read or 'ms' pass. */
static void run (zloop_t *loop, struct ctx *c, int ms)
{
    struct until u = { .c = c, .deadline = zclock_mono () + ms };
    int id = zloop_timer (loop, 1, 0, check_done, &u);

    zloop_start (loop);
    zloop_timer_end (loop, id);
}

static void both_kinds (int quiet)
{
    const char *kind = quiet ? "quiet" : "plain";
    zloop_t *loop = zloop_new ();
    struct watches *ws = watches_create (loop);
    void *zctx = zmq_ctx_new ();
    void *rx = zmq_socket (zctx, ZMQ_PAIR);
    void *tx = zmq_socket (zctx, ZMQ_PAIR);
    struct ctx c = { .rx = rx, .ws = ws, .budget = 1 };
    char ep[64];

    snprintf (ep, sizeof (ep), "inproc://watch-%s", kind);
    ok (ws && rx && tx && zmq_bind (rx, ep) == 0 && zmq_connect (tx, ep) == 0,
        "%s: a loop, a set of watches and two sockets", kind);
    /* sent before the watch: no edge will come for these */
    zmq_send (tx, "a", 1, 0);
    zmq_send (tx, "b", 1, 0);
    zclock_sleep (10);
    ok (watches_add (ws, rx, reader, &c, quiet) == 0, "%s: watching one",
        kind);
    errno = 0;
    ok (watches_add (ws, rx, reader, &c, !quiet) < 0 && errno == EEXIST,
        "%s: watching it twice is EEXIST", kind);
    errno = 0;
    ok (watches_add (ws, NULL, reader, &c, quiet) < 0 && errno == EINVAL,
        "%s: no socket is EINVAL", kind);
    c.want = 2;
    run (loop, &c, 5000);
    ok (c.got == 2, "%s: the two messages sent before the watch are read "
        "(%d)", kind, c.got);
    for (int i = 0; i < 5; i++)
        zmq_send (tx, "x", 1, 0);
    c.want = 7;
    run (loop, &c, 5000);
    ok (c.got == 7, "%s: five sent at once, a budget of one: all read (%d)",
        kind, c.got);
    ok (c.calls >= 7, "%s: in as many calls (%d)", kind, c.calls);
    /* a send on the watched socket, with a message waiting, may eat its
     * edge: allowed for a plain watch only, by its contract, but the
     * message it holds back must come when the next one does */
    if (!quiet) {
        zmq_send (tx, "y", 1, 0);
        zmq_send (rx, "z", 1, 0);
        c.want = 8;
        run (loop, &c, 5000);
        ok (c.got == 8, "plain: a message still read after a send on the "
            "same socket");
    }
    else {
        zmq_send (tx, "y", 1, 0);
        c.want = 8;
        run (loop, &c, 5000);
        ok (c.got == 8, "quiet: a message sent after a quiet spell is read");
    }
    c.remove_in_cb = 1;
    c.budget = 1;
    zmq_send (tx, "r", 1, 0);
    zmq_send (tx, "s", 1, 0);
    c.want = 9;
    run (loop, &c, 5000);
    c.want = 10;
    run (loop, &c, 300);
    ok (c.got == 9, "%s: a callback that ends its own watch reads no more "
        "(%d)", kind, c.got);
    c.remove_in_cb = 0;
    ok (watches_add (ws, rx, reader, &c, quiet) == 0,
        "%s: watched again", kind);
    c.want = 10;
    run (loop, &c, 5000);
    ok (c.got == 10, "%s: the message left behind is read then", kind);
    watches_remove (ws, rx);
    zmq_send (tx, "w", 1, 0);
    c.want = 11;
    run (loop, &c, 300);
    ok (c.got == 10, "%s: not read once the watch is removed", kind);
    watches_remove (ws, rx);
    watches_remove (ws, NULL);
    pass ("%s: removing it again, or an unknown socket, is harmless", kind);
    ok (watches_add (ws, rx, reader, &c, quiet) == 0,
        "%s: watched once more, then left to destroy", kind);
    watches_destroy (&ws);
    ok (ws == NULL, "%s: destroyed with a watch in it", kind);
    zmq_close (rx);
    zmq_close (tx);
    zmq_ctx_term (zctx);
    zloop_destroy (&loop);
}

int main (void)
{
    plan (NO_PLAN);
    errno = 0;
    ok (watches_create (NULL) == NULL && errno == EINVAL,
        "no loop is EINVAL");
    both_kinds (0);
    both_kinds (1);
    done_testing ();
}
