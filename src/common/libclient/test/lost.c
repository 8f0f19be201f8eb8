/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test/lost.c: a broker that goes away, as a client sees it (client.h).
 *
 * The broker here is a stand-in: a ROUTER socket on an ipc:// path that
 * answers broker.subscribe and sends what each test asks (stream
 * responses, events), in this process (closed to end it) or in a child
 * (SIGKILLed or SIGSTOPped).  Each test checks the errno of a pending RPC,
 * a stream or an event wait once the broker is gone, and that it comes
 * within the bound (generous: these are not timing tests).
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <zmq.h>

#include "src/common/libtap/tap.h"
#include "src/common/libutil/monotime.h"
#include "src/common/libzmqutil/multipart.h"
#include "src/common/libclient/client.h"

#define BOUND 10.0          /* seconds: far more than any notice takes */

static char dir[] = "/tmp/bgn-lost-XXXXXX";
static char path[64], uri[80];

struct fake {
    void *ctx;
    void *router;
    char id[64];            /* the last client heard from */
    size_t idlen;
};

static void fake_start (struct fake *f)
{
    int one = 1, linger = 0;

    f->ctx = zmq_ctx_new ();
    f->router = zmq_socket (f->ctx, ZMQ_ROUTER);
    zmq_setsockopt (f->router, ZMQ_ROUTER_MANDATORY, &one, sizeof (one));
    zmq_setsockopt (f->router, ZMQ_LINGER, &linger, sizeof (linger));
    unlink (path);
    if (zmq_bind (f->router, uri) < 0)
        bail_out ("bind");
}

/* The broker ends as an exiting process's would: its socket closes. */
static void fake_stop (struct fake *f)
{
    zmq_close (f->router);
    zmq_ctx_term (f->ctx);
    f->router = f->ctx = NULL;
}

/* The next request (waiting up to 'timeout' seconds), or NULL. */
static msg_t *fake_recv (struct fake *f, double timeout)
{
    zmq_pollitem_t it = { .socket = f->router, .events = ZMQ_POLLIN };
    zmq_msg_t parts[ZMQUTIL_MAX_PARTS];
    msg_t *msg;
    int n;

    if (zmq_poll (&it, 1, (long)(timeout * 1000)) <= 0)
        return NULL;
    if ((n = zmqutil_recv (f->router, parts, ZMQUTIL_MAX_PARTS)) < 2) {
        if (n > 0)
            zmqutil_close (parts, n);
        return NULL;
    }
    f->idlen = zmq_msg_size (&parts[0]);
    if (f->idlen > sizeof (f->id))
        f->idlen = sizeof (f->id);
    memcpy (f->id, zmq_msg_data (&parts[0]), f->idlen);
    msg = zmqutil_decode (parts + 1, n - 1, NULL, 0);
    zmqutil_close (parts, n);
    return msg;
}

static void fake_respond (struct fake *f, const msg_t *req,
                          const char *payload)
{
    msg_t *rsp = msg_create (MSGTYPE_RESPONSE);

    msg_set_topic (rsp, msg_get_topic (req));
    msg_set_matchtag (rsp, msg_get_matchtag (req));
    if (payload)
        msg_set_payload (rsp, payload, strlen (payload));
    zmqutil_send_msg_to (f->router, f->id, f->idlen, rsp, 0);
    msg_destroy (&rsp);
}

static void fake_event (struct fake *f, uint32_t seq)
{
    msg_t *ev = msg_create (MSGTYPE_EVENT);

    msg_set_topic (ev, "test.ev");
    msg_set_seq (ev, seq);
    zmqutil_send_msg_to (f->router, f->id, f->idlen, ev, 0);
    msg_destroy (&ev);
}

/* Answer the next request, which must be broker.subscribe. */
static int fake_subscribe (struct fake *f)
{
    msg_t *req = fake_recv (f, BOUND);
    int ok = req && !strcmp (msg_get_topic (req), "broker.subscribe");

    if (ok)
        fake_respond (f, req, NULL);
    msg_destroy (&req);
    return ok;
}

static bgn_t *client (void)
{
    char err[256];
    bgn_t *h = bgn_open (uri, err, sizeof (err));

    if (!h)
        bail_out (err);
    return h;
}

/* A pending RPC and one sent after: ECONNRESET once the broker closed. */
static void test_pending_rpc (void)
{
    struct fake f;
    bgn_t *h;
    bgn_rpc_t *rpc, *rpc2;
    double t0;

    fake_start (&f);
    h = client ();
    bgn_set_timeout (h, 60);
    rpc = bgn_rpc (h, "test.wait", NODEID_ANY, NULL, 0);
    msg_t *req = fake_recv (&f, BOUND);
    ok (req != NULL, "rpc: the broker has the request");
    msg_destroy (&req);
    ok (bgn_broker_lost (h) == 0, "rpc: not lost while the broker is there");
    t0 = monotime_now ();
    fake_stop (&f);
    errno = 0;
    ok (bgn_rpc_get (rpc, NULL) < 0 && errno == ECONNRESET,
        "rpc: a pending rpc fails with ECONNRESET when the broker exits");
    ok (monotime_now () - t0 < BOUND, "rpc: ... at once (%.3fs), not at its "
        "60s deadline", monotime_now () - t0);
    ok (bgn_broker_lost (h) == 1, "rpc: the handle says it is lost");
    errno = 0;
    rpc2 = bgn_rpc (h, "test.later", NODEID_ANY, NULL, 0);
    ok (rpc2 == NULL && errno == ECONNRESET,
        "rpc: a new rpc on the lost handle fails with ECONNRESET");
    int ready = 0;
    ok (bgn_poll (&h, 1, 5.0, &ready) == 1 && ready == 1,
        "rpc: bgn_poll counts the lost handle as ready");
    bgn_rpc_destroy (&rpc);
    bgn_close (&h);
}

/* A stream: the responses that came are read, then ECONNRESET. */
static void test_stream (void)
{
    struct fake f;
    const char *payload;
    bgn_t *h;
    bgn_rpc_t *rpc;
    msg_t *req;
    int got = 0;

    fake_start (&f);
    h = client ();
    rpc = bgn_rpc (h, "test.stream", NODEID_ANY, NULL, MSGFLAG_STREAMING);
    bgn_rpc_set_timeout (rpc, INFINITY);
    req = fake_recv (&f, BOUND);
    ok (req != NULL, "stream: the broker has the request");
    for (int i = 0; i < 3 && req; i++)
        fake_respond (&f, req, "{\"n\":1}");
    msg_destroy (&req);
    usleep (100000);        /* sent before the socket closes */
    fake_stop (&f);
    while (bgn_rpc_get (rpc, &payload) == 0) {
        got++;
        bgn_rpc_next (rpc);
    }
    ok (errno == ECONNRESET, "stream: an endless stream ends with "
        "ECONNRESET (%s)", strerror (errno));
    ok (got == 3, "stream: after the 3 responses the broker sent (%d)", got);
    bgn_rpc_destroy (&rpc);
    bgn_close (&h);
}

/* Events: those that came are delivered, then the wait fails. */
static void test_events (void)
{
    struct fake f;
    struct bgn_event ev;
    bgn_t *h;
    int got = 0;
    uint32_t last = 0;

    fake_start (&f);
    h = client ();
    bgn_event_publish_async (h, "test.pub", NULL);
    msg_t *pub = fake_recv (&f, BOUND);     /* never answered */
    msg_destroy (&pub);
    int subscribed = 0;
    /* bgn_event_subscribe would wait for the answer the fake, in this
     * thread, has yet to send: the same request, answered in between */
    bgn_rpc_t *rpc = bgn_rpc (h, "broker.subscribe", NODEID_ANY,
                              "{\"topic\":\"test.\"}", 0);
    subscribed = fake_subscribe (&f) && bgn_rpc_get (rpc, NULL) == 0;
    bgn_rpc_destroy (&rpc);
    ok (subscribed, "events: subscribed");
    for (uint32_t s = 1; s <= 4; s++)
        fake_event (&f, s);
    usleep (100000);
    fake_stop (&f);
    while (bgn_event_next (h, &ev, -1) == 0) {
        got++;
        last = ev.seq;
    }
    ok (errno == ECONNRESET, "events: a wait for ever ends with ECONNRESET "
        "(%s)", strerror (errno));
    ok (got == 4 && last == 4, "events: after the 4 events sent (%d, last "
        "seq %u)", got, (unsigned)last);
    errno = 0;
    ok (bgn_event_recv (h, -1) == NULL && errno == ECONNRESET,
        "events: bgn_event_recv fails the same way");
    errno = 0;
    ok (bgn_event_publish_get (h, NULL, 5.0) < 0 && errno == ECONNRESET,
        "events: an unanswered publish fails with ECONNRESET");
    bgn_close (&h);
}

/* The broker restarted on the same socket is a new broker: the handle
 * stays lost, and nothing of it reaches the new one. */
static void test_restart (void)
{
    struct fake f;
    bgn_t *h;
    bgn_rpc_t *rpc;
    msg_t *req;

    fake_start (&f);
    h = client ();
    rpc = bgn_rpc (h, "test.one", NODEID_ANY, NULL, 0);
    req = fake_recv (&f, BOUND);
    msg_destroy (&req);
    fake_stop (&f);
    usleep (200000);
    fake_start (&f);        /* the same path, a new broker */
    usleep (500000);        /* past libzmq's reconnect interval */
    errno = 0;
    ok (bgn_rpc_get (rpc, NULL) < 0 && errno == ECONNRESET,
        "restart: the rpc sent to the old broker fails with ECONNRESET");
    bgn_rpc_destroy (&rpc);
    errno = 0;
    ok (bgn_rpc (h, "test.two", NODEID_ANY, NULL, 0) == NULL
        && errno == ECONNRESET,
        "restart: the handle does not resume on the new broker");
    req = fake_recv (&f, 0.5);
    ok (req == NULL, "restart: the new broker got nothing from the handle");
    msg_destroy (&req);
    fake_stop (&f);
    bgn_close (&h);
}

/* A broker in a child process that answers subscribe, then nothing. */
static pid_t fake_child (void)
{
    pid_t pid = fork ();

    if (pid == 0) {
        struct fake f;
        fake_start (&f);
        for (;;) {
            msg_t *req = fake_recv (&f, 3600);
            if (req && !strcmp (msg_get_topic (req), "broker.subscribe"))
                fake_respond (&f, req, NULL);
            msg_destroy (&req);
        }
    }
    return pid;
}

/* Send the broker child 'sig' once rpc is out: rpc fails with
 * ECONNRESET, within the bound. */
static void signal_then_fail (pid_t pid, int sig, bgn_rpc_t *rpc,
                              const char *what)
{
    double t0;

    usleep (200000);
    t0 = monotime_now ();
    kill (pid, sig);
    errno = 0;
    ok (bgn_rpc_get (rpc, NULL) < 0 && errno == ECONNRESET,
        "%s fails with ECONNRESET (%s)", what, strerror (errno));
    ok (monotime_now () - t0 < BOUND, "%s: ... in %.3fs", what,
        monotime_now () - t0);
}

/* SIGKILL: a pending rpc and an event wait both fail with ECONNRESET. */
static void test_killed (void)
{
    pid_t pid = fake_child ();
    bgn_t *h, *h2;
    bgn_rpc_t *rpc;

    usleep (300000);        /* the child has bound */
    h = client ();
    h2 = client ();
    ok (bgn_event_subscribe (h2, "test.") == 0, "killed: subscribed");
    bgn_set_timeout (h, 60);
    rpc = bgn_rpc (h, "test.wait", NODEID_ANY, NULL, 0);
    signal_then_fail (pid, SIGKILL, rpc, "killed: the pending rpc");
    waitpid (pid, NULL, 0);
    char err[256] = "";
    errno = 0;
    ok (access (path, F_OK) == 0 && !bgn_open (uri, err, sizeof (err))
        && errno == ECONNREFUSED && strstr (err, "nothing listens"),
        "killed: opening the socket it left fails with ECONNREFUSED (%s)",
        err);
    errno = 0;
    ok (bgn_event_recv (h2, -1) == NULL && errno == ECONNRESET,
        "killed: the event wait fails with ECONNRESET");
    bgn_rpc_destroy (&rpc);
    bgn_close (&h);
    bgn_close (&h2);
}

/* SIGSTOP: only the heartbeats can tell; with $BGN_BROKER_TIMEOUT 0.6
 * the stream ends in about that, without them the rpc times out. */
static void test_stopped (void)
{
    pid_t pid = fake_child ();
    bgn_t *h, *h0;
    bgn_rpc_t *rpc, *rpc0;

    usleep (300000);
    setenv ("BGN_BROKER_TIMEOUT", "0.6", 1);
    h = client ();
    ok (fabs (bgn_get_broker_timeout (h) - 0.6) < 1e-9,
        "stopped: $BGN_BROKER_TIMEOUT sets the bound");
    setenv ("BGN_BROKER_TIMEOUT", "0", 1);
    h0 = client ();
    ok (bgn_get_broker_timeout (h0) == 0, "stopped: 0 turns heartbeats off");
    setenv ("BGN_BROKER_TIMEOUT", "soon", 1);
    bgn_t *hb = client ();
    ok (bgn_get_broker_timeout (hb) == BGN_DEFAULT_BROKER_TIMEOUT,
        "stopped: a value that is not a number means the default");
    bgn_close (&hb);
    unsetenv ("BGN_BROKER_TIMEOUT");
    rpc = bgn_rpc (h, "test.stream", NODEID_ANY, NULL, MSGFLAG_STREAMING);
    bgn_rpc_set_timeout (rpc, INFINITY);
    rpc0 = bgn_rpc (h0, "test.wait", NODEID_ANY, NULL, 0);
    bgn_rpc_set_timeout (rpc0, 3.0);
    signal_then_fail (pid, SIGSTOP, rpc, "stopped (bound 0.6s): an "
                      "endless stream");
    errno = 0;
    ok (bgn_rpc_get (rpc0, NULL) < 0 && errno == ETIMEDOUT,
        "stopped: without heartbeats only the deadline ends a wait");
    kill (pid, SIGKILL);
    kill (pid, SIGCONT);
    waitpid (pid, NULL, 0);
    bgn_rpc_destroy (&rpc);
    bgn_rpc_destroy (&rpc0);
    bgn_close (&h);
    bgn_close (&h0);
}

int main (void)
{
    plan (NO_PLAN);
    if (!mkdtemp (dir))
        bail_out ("mkdtemp");
    snprintf (path, sizeof (path), "%s/local", dir);
    snprintf (uri, sizeof (uri), "ipc://%s", path);
    unsetenv ("BGN_BROKER_TIMEOUT");
    test_pending_rpc ();
    test_stream ();
    test_events ();
    test_restart ();
    test_killed ();
    test_stopped ();
    unlink (path);
    rmdir (dir);
    done_testing ();
}
