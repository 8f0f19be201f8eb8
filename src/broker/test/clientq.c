/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test/clientq.c: the bytes queued toward each local client and their
 * bound (clientq.h), on a real ROUTER socket and a client that does not
 * read (inproc: libzmq frees a message when the client has read it). */
#include <errno.h>
#include <string.h>
#include <czmq.h>

#include "src/common/libtap/tap.h"
#include "src/common/libzmqutil/multipart.h"
#include "src/broker/clientq.h"

#define BOUND 65536

static json_int_t field (struct clientq *q, const char *key)
{
    json_t *o = clientq_memory (q);
    json_int_t v = json_integer_value (json_object_get (o, key));

    json_decref (o);
    return v;
}

/* Read (and free) every message the client has waiting: how many. */
static int drain (void *client)
{
    int n = 0;
    zmq_msg_t m;

    for (;;) {
        zmq_msg_init (&m);
        if (zmq_msg_recv (&m, client, ZMQ_DONTWAIT) < 0) {
            zmq_msg_close (&m);
            return n;
        }
        if (!zmq_msg_more (&m))
            n++;
        zmq_msg_close (&m);
    }
}

int main (void)
{
    void *ctx = zmq_ctx_new ();
    void *router = zmq_socket (ctx, ZMQ_ROUTER);
    void *client = zmq_socket (ctx, ZMQ_DEALER);
    struct clientq *q;
    char pad[1001], buf[16];
    int one = 1, sent = 0, refused = 0;
    json_int_t most = 0;
    uint32_t a = 0, b = 0;
    msg_t *msg;

    plan (NO_PLAN);
    memset (pad, 'x', sizeof (pad) - 1);
    pad[sizeof (pad) - 1] = '\0';
    zmq_setsockopt (router, ZMQ_ROUTER_MANDATORY, &one, sizeof (one));
    zmq_setsockopt (client, ZMQ_ROUTING_ID, "c1", 2);
    zmq_bind (router, "inproc://clientq");
    zmq_connect (client, "inproc://clientq");
    zmq_send (client, "hi", 2, 0);          /* the router learns "c1" */
    zmq_recv (router, buf, sizeof (buf), 0);
    zmq_recv (router, buf, sizeof (buf), 0);

    ok ((q = clientq_create (router, BOUND)) != NULL, "created");
    for (int i = 0; i < 200; i++) {
        if (clientq_send_data (q, "c1", pad, sizeof (pad)) == 0)
            sent++;
        else if (errno == ENOBUFS)
            refused++;
        if (field (q, "bytes") > most)
            most = field (q, "bytes");
    }
    ok (sent > 10 && refused == 200 - sent
        && field (q, "drops") == refused,
        "a client that does not read takes %d messages, the rest are "
        "refused with ENOBUFS and counted (%d)", sent, refused);
    ok (most <= BOUND + 2048 && most > BOUND - 2048,
        "what is queued toward it stays at its bound (%lld bytes, bound "
        "%d plus its entry)", (long long)most, BOUND);
    ok (field (q, "bound") >= BOUND && field (q, "bound") < BOUND + 256
        && field (q, "clients") == 1 && most <= field (q, "bound"),
        "the bound shown is the bound per client times the clients, plus "
        "their entries");
    ok (drain (client) == sent && field (q, "bytes") < 256,
        "once the client has read them, their bytes are given back");
    ok (clientq_send_data (q, "c1", pad, sizeof (pad)) == 0,
        "and it takes messages again");
    drain (client);

    msg = msg_event_create ("test.ev", "{\"a\":1}");
    ok (clientq_send_msg (q, "c1", msg) == 0 && drain (client) == 1,
        "a broker message goes as one message");
    msg_destroy (&msg);
    ok (clientq_send_data (q, "nobody", "x", 1) < 0 && errno == EHOSTUNREACH,
        "a client that is gone: EHOSTUNREACH");
    ok (clientq_send_data (q, "~1", "x", 1) < 0 && errno == EINVAL,
        "a malformed name: EINVAL");

    /* a client whose id asks for the packed form gets one part */
    {
        void *pc = zmq_socket (ctx, ZMQ_DEALER);
        zmq_msg_t parts[ZMQUTIL_MAX_PARTS];
        msg_t *got = NULL;
        int n;

        zmq_setsockopt (pc, ZMQ_ROUTING_ID, "+p2", 3);
        zmq_connect (pc, "inproc://clientq");
        zmq_send (pc, "hi", 2, 0);
        zmq_recv (router, buf, sizeof (buf), 0);
        zmq_recv (router, buf, sizeof (buf), 0);
        msg = msg_event_create ("test.ev", "{\"a\":2}");
        ok (clientq_send_msg (q, "+p2", msg) == 0, "a message to a packed "
            "client is sent");
        n = zmqutil_recv (pc, parts, ZMQUTIL_MAX_PARTS);
        if (n == 1 && zmqutil_is_packed (zmq_msg_data (&parts[0]),
                                         zmq_msg_size (&parts[0])))
            got = zmqutil_decode (parts, 1, NULL, 0);
        ok (got && !strcmp (msg_get_topic (got), "test.ev")
            && !strcmp (msg_get_payload (got, NULL), "{\"a\":2}"),
            "it arrives as one packed part that decodes to the message");
        msg_destroy (&got);
        zmqutil_close (parts, n > 0 ? n : 0);
        n = clientq_send_msg (q, "c1", msg) == 0
                ? zmqutil_recv (client, parts, ZMQUTIL_MAX_PARTS) : -1;
        ok (n == (int)msg_frame_count (msg),
            "a client without the mark gets its usual parts (%d)", n);
        zmqutil_close (parts, n > 0 ? n : 0);
        msg_destroy (&msg);
        zmq_close (pc);
    }

    clientq_note_lost (q, "c1", 10, 12);
    clientq_note_lost (q, "c1", 15, 15);
    ok (clientq_take_lost (q, "c1", &a, &b) == 1 && a == 10 && b == 15
        && clientq_take_lost (q, "c1", &a, &b) == 0,
        "events dropped for a client are noted as one range, taken once");
    clientq_prune (q);
    ok (field (q, "clients") == 0, "a client holding nothing is forgotten");

    clientq_destroy (&q);
    zmq_close (client);
    zmq_close (router);
    zmq_ctx_term (ctx);
    done_testing ();
}
