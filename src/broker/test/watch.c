/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test/watch.c: modules' sockets on the broker's zloop, plain and quiet.
 *
 * ZMQ_FD is edge-triggered: messages that arrive together give one edge,
 * and a send on the socket can consume the edge of a message waiting to
 * be read.  Every message must still be read, whatever the reader's
 * budget, and a quiet watch must also find what came before it. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>
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

/* A loop, a set of watches on it, and a connected pair of sockets. */
struct fixture {
    zloop_t *loop;
    struct watches *ws;
    void *zctx, *rx, *tx;
};

static bool fixture_init (struct fixture *f, const char *ep)
{
    f->loop = zloop_new ();
    f->ws = watches_create (f->loop);
    f->zctx = zmq_ctx_new ();
    f->rx = zmq_socket (f->zctx, ZMQ_PAIR);
    f->tx = zmq_socket (f->zctx, ZMQ_PAIR);
    return f->ws && f->rx && f->tx && zmq_bind (f->rx, ep) == 0
           && zmq_connect (f->tx, ep) == 0;
}

static void fixture_fini (struct fixture *f)
{
    watches_destroy (&f->ws);
    zmq_close (f->rx);
    zmq_close (f->tx);
    zmq_ctx_term (f->zctx);
    zloop_destroy (&f->loop);
}

static void both_kinds (int quiet)
{
    const char *kind = quiet ? "quiet" : "plain";
    struct fixture f;
    char ep[64];

    snprintf (ep, sizeof (ep), "inproc://watch-%s", kind);
    ok (fixture_init (&f, ep), "%s: a loop, a set of watches and two "
        "sockets", kind);
    zloop_t *loop = f.loop;
    struct watches *ws = f.ws;
    void *rx = f.rx, *tx = f.tx;
    struct ctx c = { .rx = rx, .ws = ws, .budget = 1 };

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
    watches_destroy (&f.ws);
    ok (f.ws == NULL, "%s: destroyed with a watch in it", kind);
    fixture_fini (&f);
}

/* A quiet watch removed by another handler while its zero-delay timer
 * is pending: zloop may still run that timer in the same pass, after the
 * watch is freed (AddressSanitizer, under which CI runs these tests,
 * would see it read). */
struct removal {
    struct watches *ws;
    void *rx;
    struct ctx *c;
    int added;
};

static int add_then_remove (zloop_t *loop, int timer_id, void *arg)
{
    struct removal *r = arg;

    r->added = watches_add (r->ws, r->rx, reader, r->c, 1) == 0;
    watches_remove (r->ws, r->rx);
    return 0;
}

static int remove_it (zloop_t *loop, int timer_id, void *arg)
{
    struct removal *r = arg;

    watches_remove (r->ws, r->rx);
    return 0;
}

static void removed_while_pending (void)
{
    struct fixture f;

    ok (fixture_init (&f, "inproc://watch-pending"),
        "pending: a loop and two sockets");
    zloop_t *loop = f.loop;
    struct watches *ws = f.ws;
    void *rx = f.rx, *tx = f.tx;
    struct ctx c = { .rx = rx, .ws = ws, .budget = 1 };
    struct removal r = { .ws = ws, .rx = rx, .c = &c };

    zmq_send (tx, "a", 1, 0);
    zmq_send (tx, "b", 1, 0);
    /* in a running loop: added and removed in one handler */
    zloop_timer (loop, 0, 1, add_then_remove, &r);
    c.want = 1;
    run (loop, &c, 200);
    ok (r.added && c.got == 0, "pending: a quiet watch added and removed "
        "in one timer handler reads nothing, and the loop goes on");
    /* a watch whose first look is pending, removed by an earlier timer */
    zloop_timer (loop, 0, 1, remove_it, &r);
    ok (watches_add (ws, rx, reader, &c, 1) == 0,
        "pending: watched quietly again");
    run (loop, &c, 200);
    ok (c.got == 0, "pending: removed by another timer before its first "
        "look: nothing read");
    ok (watches_add (ws, rx, reader, &c, 1) == 0,
        "pending: watched once more");
    c.want = 2;
    run (loop, &c, 5000);
    ok (c.got == 2, "pending: then both waiting messages are read (%d)",
        c.got);
    fixture_fini (&f);
}

/* A socket whose ZMQ_FD is 0 (stdin was closed before its context was
 * made): zloop ends fd pollers by fd, and a socket poller's fd is 0, so
 * ending a quiet watch on it would end every plain watch too. */
static void descriptor_zero (void)
{
    zloop_t *loop = zloop_new ();
    struct watches *ws = watches_create (loop);
    void *zctx, *rx, *tx, *zctx0, *warm, *quiet_sock;
    struct ctx c = { .budget = 8 };
    int fd = -1;
    size_t len = sizeof (fd);

    /* the context's own threads and descriptors first, then fd 0 free
     * for the next socket's mailbox */
    zctx0 = zmq_ctx_new ();
    warm = zmq_socket (zctx0, ZMQ_PAIR);
    close (0);
    quiet_sock = zmq_socket (zctx0, ZMQ_PAIR);
    zctx = zmq_ctx_new ();
    rx = zmq_socket (zctx, ZMQ_PAIR);
    tx = zmq_socket (zctx, ZMQ_PAIR);
    c.rx = rx;
    c.ws = ws;
    zmq_getsockopt (quiet_sock, ZMQ_FD, &fd, &len);
    ok (ws && warm && quiet_sock && rx && tx
        && zmq_bind (rx, "inproc://watch-zero") == 0
        && zmq_connect (tx, "inproc://watch-zero") == 0,
        "fd 0: sockets made with stdin closed (the quiet one's fd is %d)",
        fd);
    ok (watches_add (ws, rx, reader, &c, 0) == 0
        && watches_add (ws, quiet_sock, reader, &c, 1) == 0,
        "fd 0: a plain watch, and a quiet one on the socket of fd 0");
    watches_remove (ws, quiet_sock);
    zmq_send (tx, "a", 1, 0);
    c.want = 1;
    run (loop, &c, 5000);
    ok (c.got == 1, "fd 0: ending the quiet watch left the plain one "
        "watching (%d read)", c.got);
    watches_destroy (&ws);
    zmq_close (quiet_sock);
    zmq_close (warm);
    zmq_close (rx);
    zmq_close (tx);
    zmq_ctx_term (zctx0);
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
    removed_while_pending ();
    descriptor_zero ();         /* last: it closes stdin */
    done_testing ();
}
