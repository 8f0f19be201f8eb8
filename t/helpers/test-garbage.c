/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test-garbage.c: a misbehaving client and a silent broker, for tests.
 *
 *   bgn-test-garbage URI                 send malformed messages to a broker
 *   bgn-test-garbage --listen PATH       bind a socket that never answers
 *   bgn-test-garbage --subscribe URI P   print the first event matching P
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#include "src/common/libclient/client.h"
#include "src/common/libmsg/packed.h"
#include "src/modules/overlay/envelope.h"

static int send_frames (void *sock, const char **frames, const size_t *sizes,
                        int n)
{
    for (int i = 0; i < n; i++)
        if (zmq_send (sock, frames[i], sizes[i], i < n - 1 ? ZMQ_SNDMORE : 0) < 0)
            return -1;
    return 0;
}

static int garbage (const char *uri)
{
    void *ctx = zmq_ctx_new ();
    void *sock = zmq_socket (ctx, ZMQ_DEALER);
    int linger = 2000;
    /* valid request proto: magic 0x8e v1 type 1 flags 1 (topic) */
    static const char proto[20] = { (char)0x8e, 1, 1, 1 };
    static const char badmagic[20] = { 0x11, 1, 1, 1 };
    static const char withpayload[20] = { (char)0x8e, 1, 1, 3 };
    static const char withroute[20] = { (char)0x8e, 1, 1, 9 };

    zmq_setsockopt (sock, ZMQ_LINGER, &linger, sizeof (linger));
    if (zmq_connect (sock, uri) < 0) {
        fprintf (stderr, "connect %s: %s\n", uri, zmq_strerror (errno));
        return 1;
    }
    {   /* an empty frame alone */
        const char *f[] = { "" }; size_t s[] = { 0 };
        send_frames (sock, f, s, 1);
    }
    {   /* proto too short */
        const char *f[] = { "broker.ping", proto }; size_t s[] = { 11, 7 };
        send_frames (sock, f, s, 2);
    }
    {   /* bad magic */
        const char *f[] = { "broker.ping", badmagic }; size_t s[] = { 11, 20 };
        send_frames (sock, f, s, 2);
    }
    {   /* payload that is not JSON */
        const char *f[] = { "broker.ping", "{nope", withpayload };
        size_t s[] = { 11, 5, 20 };
        send_frames (sock, f, s, 3);
    }
    {   /* a client forging a route stack */
        const char *f[] = { "7", "", "broker.ping", withroute };
        size_t s[] = { 1, 0, 11, 20 };
        send_frames (sock, f, s, 4);
    }
    {   /* far too many frames */
        for (int i = 0; i < 100; i++)
            zmq_send (sock, "x", 1, ZMQ_SNDMORE);
        zmq_send (sock, proto, 20, 0);
    }
    zmq_close (sock);
    zmq_ctx_term (ctx);
    return 0;
}

static int listen_silently (const char *path)
{
    char uri[4096];
    void *ctx = zmq_ctx_new ();
    void *sock = zmq_socket (ctx, ZMQ_ROUTER);
    snprintf (uri, sizeof (uri), "ipc://%s", path);
    if (zmq_bind (sock, uri) < 0) {
        fprintf (stderr, "bind %s: %s\n", uri, zmq_strerror (errno));
        return 1;
    }
    for (;;) {   /* read and ignore, until killed (bounded: 60 s) */
        char buf[256];
        zmq_pollitem_t it = { .socket = sock, .events = ZMQ_POLLIN };
        static int rounds;
        if (++rounds > 600)
            break;
        if (zmq_poll (&it, 1, 100) > 0)
            while (zmq_recv (sock, buf, sizeof (buf), ZMQ_DONTWAIT) >= 0)
                ;
    }
    zmq_close (sock);
    zmq_ctx_term (ctx);
    return 0;
}

static int subscribe (const char *uri, const char *prefix)
{
    char err[256];
    bgn_t *h = bgn_open (uri, err, sizeof (err));
    msg_t *ev;
    uint32_t seq = 0;

    if (!h) {
        fprintf (stderr, "%s\n", err);
        return 1;
    }
    if (bgn_event_subscribe (h, prefix) < 0) {
        perror ("subscribe");
        return 1;
    }
    if (!(ev = bgn_event_recv (h, 10.0))) {
        perror ("event");
        return 1;
    }
    msg_get_seq (ev, &seq);
    printf ("%s seq=%u %s\n", msg_get_topic (ev), (unsigned)seq,
            msg_get_payload (ev, NULL) ? msg_get_payload (ev, NULL) : "");
    msg_destroy (&ev);
    bgn_close (&h);
    return 0;
}

/* Pretend to be overlay peer RANK of INSTANCE at ENDPOINT.  With
 * SERVERKEY, use CURVE with a fresh (unauthorized) key pair.  Exit 0 if
 * refused with a NAK, 2 if admitted (ACK), 3 if nothing came back.
 */
static int rogue (const char *endpoint, const char *instance,
                  const char *rank, const char *serverkey)
{
    void *ctx = zmq_ctx_new ();
    void *sock = zmq_socket (ctx, ZMQ_DEALER);
    struct envelope env = { .kind = ENV_HELLO, .ttl = 1,
                            .source = (uint32_t)atoi (rank),
                            .dest = 0, .sender_inc = 1 };
    uint8_t buf[1024];
    struct msg_frame part;
    long packed;
    char hello[512], pub[41], sec[41];
    int linger = 0, rc = 3;
    zmq_pollitem_t it;

    zmq_setsockopt (sock, ZMQ_LINGER, &linger, sizeof (linger));
    zmq_setsockopt (sock, ZMQ_ROUTING_ID, rank, strlen (rank));
    if (serverkey) {
        zmq_curve_keypair (pub, sec);
        zmq_setsockopt (sock, ZMQ_CURVE_PUBLICKEY, pub, 40);
        zmq_setsockopt (sock, ZMQ_CURVE_SECRETKEY, sec, 40);
        zmq_setsockopt (sock, ZMQ_CURVE_SERVERKEY, serverkey, 40);
    }
    if (zmq_connect (sock, endpoint) < 0) {
        fprintf (stderr, "connect %s: %s\n", endpoint, zmq_strerror (errno));
        return 1;
    }
    snprintf (hello, sizeof (hello),
              "{\"version\":%d,\"rank\":%s,\"instance\":\"%s\","
              "\"incarnation\":1,\"hostname\":\"rogue\","
              "\"topology\":\"bgn\"}", ENV_VERSION, rank, instance);
    /* one frame: the envelope, then the hello packed (body.h) */
    envelope_encode (&env, buf);
    part.data = hello;
    part.size = strlen (hello);
    if ((packed = packed_write (buf + ENV_SIZE, sizeof (buf) - ENV_SIZE,
                                &part, 1)) < 0)
        return 1;
    zmq_send (sock, buf, ENV_SIZE + (size_t)packed, 0);
    it.socket = sock;
    it.events = ZMQ_POLLIN;
    if (zmq_poll (&it, 1, 2000) > 0) {
        struct envelope got;
        int n = zmq_recv (sock, buf, sizeof (buf), 0);
        bool ok = n >= ENV_SIZE
                  && envelope_decode (buf, (size_t)n, &got, NULL) == 0;
        if (ok)
            rc = got.kind == ENV_HELLO_NAK ? 0 : 2;
        printf ("got %s\n", ok ? envelope_kindstr (got.kind) : "?");
    }
    else
        printf ("no answer\n");
    zmq_close (sock);
    zmq_ctx_term (ctx);
    return rc;
}

int main (int argc, char **argv)
{
    if ((argc == 5 || argc == 6) && !strcmp (argv[1], "--rogue"))
        return rogue (argv[2], argv[3], argv[4], argc == 6 ? argv[5] : NULL);
    if (argc == 2)
        return garbage (argv[1]);
    if (argc == 3 && !strcmp (argv[1], "--listen"))
        return listen_silently (argv[2]);
    if (argc == 4 && !strcmp (argv[1], "--subscribe"))
        return subscribe (argv[2], argv[3]);
    fprintf (stderr, "usage: bgn-test-garbage URI | --listen PATH | "
             "--subscribe URI PREFIX\n");
    return 1;
}
