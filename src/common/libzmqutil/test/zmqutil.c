/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test/zmqutil.c: unit tests for libzmqutil over inproc sockets. */
#include <errno.h>
#include <stdlib.h>
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

#define PAYLOAD "{\"a\":1,\"pad\":\"0123456789012345678901234567890123\"}"

/* The packed form: one part for a small message, the usual parts for a
 * large one, and a reader that takes both and refuses a broken pack. */
static void check_packed (void *ctx)
{
    void *router = new_socket (ctx, ZMQ_ROUTER);
    void *dealer = new_socket (ctx, ZMQ_DEALER);
    zmq_msg_t parts[ZMQUTIL_MAX_PARTS];
    char err[128] = "", *big;
    msg_t *msg, *got;
    uint32_t nodeid = 0;
    int n;

    zmq_setsockopt (dealer, ZMQ_ROUTING_ID, "+p1", 3);
    ok (zmq_bind (router, "inproc://packed") == 0
        && zmq_connect (dealer, "inproc://packed") == 0, "sockets connected");
    /* parts of 33 bytes or less cost no allocation: they go as parts */
    msg = msg_request_create ("test.echo", 3, "{\"a\":1}");
    ok (zmqutil_send_msg_packed (dealer, NULL, 0, msg, ZMQ_DONTWAIT) == 0,
        "a message of tiny parts is sent");
    readable (router);
    n = zmqutil_recv (router, parts, ZMQUTIL_MAX_PARTS);
    ok (n == 1 + (int)msg_frame_count (msg),
        "as parts, not packed: packing would allocate (%d parts)", n);
    zmqutil_close (parts, n > 0 ? n : 0);
    msg_destroy (&msg);

    msg = msg_request_create ("test.echo", 3, PAYLOAD);
    msg_route_enable (msg);
    msg_route_push (msg, "7");
    ok (zmqutil_send_msg_packed (dealer, NULL, 0, msg, ZMQ_DONTWAIT) == 0,
        "a small message is sent packed");
    readable (router);
    n = zmqutil_recv (router, parts, ZMQUTIL_MAX_PARTS);
    ok (n == 2 && zmqutil_is_packed (zmq_msg_data (&parts[1]),
                                     zmq_msg_size (&parts[1])),
        "it arrives as the id and one packed part (%d parts)", n);
    got = n == 2 ? zmqutil_decode (parts + 1, 1, err, sizeof (err)) : NULL;
    ok (got && !strcmp (msg_get_topic (got), "test.echo")
        && !strcmp (msg_get_payload (got, NULL), PAYLOAD)
        && msg_route_count (got) == 1 && !strcmp (msg_route_first (got), "7")
        && msg_get_nodeid (got, &nodeid) == 0 && nodeid == 3,
        "it decodes to the same topic, payload, route and nodeid");
    msg_destroy (&got);
    /* the broken pack: a count of 2 with one frame's bytes */
    if (n == 2) {
        unsigned char *b = zmq_msg_data (&parts[1]);
        b[3] = (unsigned char)(b[3] + 1);
        errno = 0;
        got = zmqutil_decode (parts + 1, 1, err, sizeof (err));
        ok (!got && errno == EPROTO && strstr (err, "packed"),
            "a packed part with a wrong count is refused: %s", err);
        msg_destroy (&got);
    }
    zmqutil_close (parts, n > 0 ? n : 0);
    msg_destroy (&msg);

    /* a payload past ZMQUTIL_PACK_MAX goes as parts */
    big = malloc (ZMQUTIL_PACK_MAX + 16);
    memset (big, 'x', ZMQUTIL_PACK_MAX + 16);
    memcpy (big, "{\"b\":\"", 6);
    memcpy (big + ZMQUTIL_PACK_MAX + 13, "\"}", 3);
    msg = msg_request_create ("test.big", 0, big);
    ok (msg && zmqutil_send_msg_packed (dealer, NULL, 0, msg, ZMQ_DONTWAIT) == 0,
        "a large message is sent");
    readable (router);
    n = zmqutil_recv (router, parts, ZMQUTIL_MAX_PARTS);
    ok (n == 1 + (int)msg_frame_count (msg),
        "it arrives in its usual parts, not packed (%d)", n);
    got = n > 1 ? zmqutil_decode (parts + 1, n - 1, err, sizeof (err)) : NULL;
    ok (got && msg_get_payload (got, NULL)
        && strlen (msg_get_payload (got, NULL)) == ZMQUTIL_PACK_MAX + 15,
        "and decodes whole");
    msg_destroy (&got);
    zmqutil_close (parts, n > 0 ? n : 0);
    msg_destroy (&msg);
    free (big);
    ok (!zmqutil_is_packed ("\x8e\0\0\0", 4) && !zmqutil_is_packed ("\0\0", 2),
        "a proto frame or a short part is not packed");
    zmq_close (dealer);
    zmq_close (router);
}

int main (void)
{
    plan (NO_PLAN);
    zsys_handler_set (NULL);
    void *ctx = zsys_init ();
    check_multipart (ctx);
    check_monitor (ctx);
    check_packed (ctx);
    zsys_shutdown ();
    done_testing ();
}
