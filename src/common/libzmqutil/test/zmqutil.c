/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test/zmqutil.c: unit tests for libzmqutil over inproc sockets. */
#include <errno.h>
#include <string.h>
#include <czmq.h>

#include "src/common/libtap/tap.h"
#include "src/common/libzmqutil/monitor.h"
#include "src/common/libzmqutil/multipart.h"

/* A raw socket that never blocks the context's end on unsent data. */
static void *new_socket (void *ctx, int type)
{
    void *sock = zmq_socket (ctx, type);
    int linger = 0;
    zmq_setsockopt (sock, ZMQ_LINGER, &linger, sizeof (linger));
    return sock;
}

/* Wait (up to 1 s) until sock has something to read. */
static int readable (void *sock)
{
    zmq_pollitem_t item = { .socket = sock, .events = ZMQ_POLLIN };
    return zmq_poll (&item, 1, 1000) == 1;
}

static void check_multipart (void *ctx)
{
    void *router = new_socket (ctx, ZMQ_ROUTER);
    void *dealer = new_socket (ctx, ZMQ_DEALER);
    zmq_msg_t parts[ZMQUTIL_MAX_PARTS];
    char err[128] = "";
    msg_t *msg, *got;
    int n;

    zmq_setsockopt (dealer, ZMQ_ROUTING_ID, "d1", 2);
    ok (zmq_bind (router, "inproc://mp") == 0
        && zmq_connect (dealer, "inproc://mp") == 0, "sockets connected");
    ok (zmqutil_recv (router, parts, ZMQUTIL_MAX_PARTS) == 0,
        "nothing ready reads as 0");

    msg = msg_request_create ("test.echo", 3, "{\"a\":1}");
    ok (zmqutil_send_msg (dealer, NULL, msg, ZMQ_DONTWAIT) == 0, "a message is sent");
    readable (router);
    n = zmqutil_recv (router, parts, ZMQUTIL_MAX_PARTS);
    ok (n == 1 + (int)msg_frame_count (msg), "router reads id + %d parts (%d)",
        (int)msg_frame_count (msg), n);
    got = n > 1 ? zmqutil_decode (parts + 1, n - 1, err, sizeof (err)) : NULL;
    is (got ? msg_get_topic (got) : err, "test.echo",
        "it decodes to the same topic");
    is (got ? msg_get_payload (got, NULL) : "", "{\"a\":1}",
        "and the same payload");
    msg_destroy (&got);
    zmqutil_close (parts, n > 0 ? n : 0);

    /* more parts than the reader allows: read to the end, -2 */
    for (int i = 0; i < 10; i++)
        zmq_send (dealer, "x", 1, i < 9 ? ZMQ_SNDMORE : 0);
    ok (zmqutil_send_msg (dealer, NULL, msg, ZMQ_DONTWAIT) == 0, "then a good message");
    readable (router);
    ok (zmqutil_recv (router, parts, 4) == -2,
        "an 11-part message is too long for 4 parts (-2)");
    n = zmqutil_recv (router, parts, ZMQUTIL_MAX_PARTS);
    ok (n == 1 + (int)msg_frame_count (msg),
        "the next message is read whole afterwards");
    zmqutil_close (parts, n > 0 ? n : 0);

    /* garbage decodes to NULL with a reason */
    zmq_send (dealer, "junk", 4, 0);
    readable (router);
    n = zmqutil_recv (router, parts, ZMQUTIL_MAX_PARTS);
    errno = 0;
    err[0] = '\0';
    got = n == 2 ? zmqutil_decode (parts + 1, 1, err, sizeof (err)) : NULL;
    ok (!got && errno == EPROTO && err[0], "garbage does not decode: %s", err);
    zmqutil_close (parts, n > 0 ? n : 0);

    /* routing id: ROUTER_MANDATORY refuses an unknown peer at once */
    int one = 1;
    zmq_setsockopt (router, ZMQ_ROUTER_MANDATORY, &one, sizeof (one));
    errno = 0;
    ok (zmqutil_send_msg (router, "nobody", msg, ZMQ_DONTWAIT) < 0 && errno == EHOSTUNREACH,
        "sending to an unknown routing id fails with EHOSTUNREACH");
    ok (zmqutil_send_msg (router, "d1", msg, ZMQ_DONTWAIT) == 0, "to a known one it works");
    readable (dealer);
    n = zmqutil_recv (dealer, parts, ZMQUTIL_MAX_PARTS);
    ok (n == (int)msg_frame_count (msg), "the dealer gets the message parts");
    zmqutil_close (parts, n > 0 ? n : 0);

    msg_destroy (&msg);
    zmq_close (dealer);
    zmq_close (router);
}

static void check_monitor (void *ctx)
{
    struct zmqutil_monitor_event ev = { .event = ZMQ_EVENT_HANDSHAKE_FAILED_AUTH,
                                        .value = 400 };
    char buf[256];

    ok (strstr (zmqutil_monitor_describe (&ev, buf, sizeof (buf)),
                "not authorized") != NULL, "auth failure: %s", buf);
    ev.event = ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL;
    ev.value = ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH;
    ok (strstr (zmqutil_monitor_describe (&ev, buf, sizeof (buf)),
                "overlay.curve") != NULL, "mechanism mismatch: %s", buf);

    void *server = new_socket (ctx, ZMQ_ROUTER);
    void *mon = zmqutil_monitor_start (ctx, server, ZMQ_EVENT_ALL, "t");
    void *client = new_socket (ctx, ZMQ_DEALER);
    ok (mon != NULL, "a monitor starts");
    zmq_bind (server, "tcp://127.0.0.1:*");
    char ep[256];
    size_t len = sizeof (ep);
    zmq_getsockopt (server, ZMQ_LAST_ENDPOINT, ep, &len);
    zmq_connect (client, ep);
    zmq_send (client, "hi", 2, 0);
    int got = 0;
    for (int i = 0; i < 50 && !got; i++) {
        readable (mon);
        while (zmqutil_monitor_recv (mon, &ev) == 1)
            if (ev.event == ZMQ_EVENT_HANDSHAKE_SUCCEEDED
                || ev.event == ZMQ_EVENT_ACCEPTED)
                got = 1;
    }
    ok (got, "the monitor reports the accepted connection");
    zmq_close (client);
    zmqutil_monitor_stop (server, &mon);
    ok (mon == NULL, "stopping the monitor clears it");
    zmq_close (server);
}

int main (void)
{
    plan (NO_PLAN);
    zsys_handler_set (NULL);
    void *ctx = zsys_init ();
    check_multipart (ctx);
    check_monitor (ctx);
    zsys_shutdown ();
    done_testing ();
}
