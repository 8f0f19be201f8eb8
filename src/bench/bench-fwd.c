/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* bench-fwd.c: forwarding-chain benchmark pieces.
 *
 *   bench-fwd relay --bind EP [--next EP]
 *       one raw libzmq ROUTER socket that binds EP and, with --next,
 *       connects to the next relay (connect routing id "next").  A
 *       message from upstream is forwarded downstream with the sender's
 *       id pushed on the route stack; a message from "next" is a response:
 *       its first frame is popped and names the upstream peer.  Without
 *       --next it is the echo at the tail (sends every message back as it
 *       came).  Frames are moved, never copied (zmq_msg_t).
 *
 *   bench-fwd relay --bind EP [--next EP] --pack
 *       the same relay for a one-frame transport: the route stack lives
 *       inside the message's single frame ([id length][id] pushed in
 *       front of what came, popped off the front on the way back), so
 *       a request is one frame on every hop whatever the chain's length
 *       and CURVE encrypts one frame per hop, as bgn's overlay sends
 *       one frame per message.  The push and the pop copy the frame (a
 *       one-frame transport must rewrite its frame at every hop).
 *
 *   bench-fwd raw-client --connect EP [options]
 *       a DEALER at the head of a raw chain.
 *
 *   bench-fwd keygen
 *       print a CURVE key pair as "PUBLIC:SECRET" (Z85) for --curve.
 *
 *   --curve PUBLIC:SECRET (relay, raw-client)
 *       encrypt every link with CURVE, as bgn does by default: a relay
 *       binds as a CURVE server with this key pair and connects to the
 *       next relay as a client expecting the same public key; the client
 *       connects the same way.  (One key pair for the whole chain: the
 *       cost per message does not depend on whose keys they are.)  No
 *       ZAP handler, so the handshake checks nothing more.
 *
 *   bench-fwd bgn-client --target RANK [--uri URI] [options]
 *       the same pattern through bgn brokers: broker.ping RPCs via
 *       libclient to RANK (default uri: $BGN_URI).
 *
 * Client options:
 *   --size B       request payload bytes (default 64)
 *   --window W     outstanding requests for the throughput run (default 64)
 *   --duration S   seconds of throughput run (default 1)
 *   --count C      one-at-a-time round trips for latency (default 1000)
 *   --maxtime S    cap on the latency run's length (default 1)
 * Output, one line:
 *   thr=MSGS_PER_S rtt_med_us=US rtt_p90_us=US lat_n=C
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

#include "src/common/libclient/client.h"
#include "src/common/libutil/monotime.h"

#define MAX_FRAMES 64

static void die (const char *what)
{
    fprintf (stderr, "bench-fwd: %s: %s\n", what, zmq_strerror (errno));
    exit (1);
}

static int cmp_double (const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y ? 1 : 0;
}

struct opts {
    const char *bind, *next, *connect, *uri;
    char curve_public[41], curve_secret[41];   /* "" without --curve */
    long target, size, window, count;
    double duration, maxtime;
    int pack;                  /* relay: route stack inside one frame */
};

/* Receive one multipart message into frames[]; returns the frame count. */
static int recv_multi (void *sock, zmq_msg_t *frames)
{
    int n = 0, more;
    size_t len = sizeof (more);

    do {
        if (n == MAX_FRAMES) {
            fprintf (stderr, "bench-fwd: too many frames\n");
            exit (1);
        }
        zmq_msg_init (&frames[n]);
        if (zmq_msg_recv (&frames[n], sock, 0) < 0)
            die ("recv");
        zmq_getsockopt (sock, ZMQ_RCVMORE, &more, &len);
        n++;
    } while (more);
    return n;
}

static void send_multi (void *sock, zmq_msg_t *frames, int first, int n)
{
    for (int i = first; i < n; i++) {
        if (zmq_msg_send (&frames[i], sock, i < n - 1 ? ZMQ_SNDMORE : 0) < 0)
            die ("send");
    }
}

/* With --curve: make the next bind a CURVE server (our key pair). */
static void curve_server (void *s, const struct opts *o)
{
    int one = 1;

    if (!o->curve_public[0])
        return;
    zmq_setsockopt (s, ZMQ_CURVE_PUBLICKEY, o->curve_public, 40);
    zmq_setsockopt (s, ZMQ_CURVE_SECRETKEY, o->curve_secret, 40);
    zmq_setsockopt (s, ZMQ_CURVE_SERVER, &one, sizeof (one));
}

/* With --curve: make the next connect a CURVE client of the same key. */
static void curve_client (void *s, const struct opts *o)
{
    if (!o->curve_public[0])
        return;
    zmq_setsockopt (s, ZMQ_CURVE_PUBLICKEY, o->curve_public, 40);
    zmq_setsockopt (s, ZMQ_CURVE_SECRETKEY, o->curve_secret, 40);
    zmq_setsockopt (s, ZMQ_CURVE_SERVERKEY, o->curve_public, 40);
}

/* --pack, upstream to downstream: [id][data] becomes one frame
 * [idlen][id][data] to "next". */
static void pack_push (void *s, zmq_msg_t *id, zmq_msg_t *data)
{
    size_t idlen = zmq_msg_size (id), len = zmq_msg_size (data);
    zmq_msg_t out;
    unsigned char *p;

    if (idlen > 255) {
        fprintf (stderr, "bench-fwd: routing id too long\n");
        exit (1);
    }
    if (zmq_msg_init_size (&out, 1 + idlen + len) < 0)
        die ("zmq_msg_init_size");
    p = zmq_msg_data (&out);
    p[0] = (unsigned char)idlen;
    memcpy (p + 1, zmq_msg_data (id), idlen);
    memcpy (p + 1 + idlen, zmq_msg_data (data), len);
    if (zmq_send (s, "next", 4, ZMQ_SNDMORE) < 0
        || zmq_msg_send (&out, s, 0) < 0)
        die ("send");
}

/* --pack, a response from "next": [idlen][id][data] goes to id as
 * [id][data]. */
static void pack_pop (void *s, zmq_msg_t *data)
{
    const unsigned char *p = zmq_msg_data (data);
    size_t len = zmq_msg_size (data), idlen;
    zmq_msg_t out;

    if (len < 1 || (idlen = p[0]) + 1 > len) {
        fprintf (stderr, "bench-fwd: malformed packed response\n");
        exit (1);
    }
    if (zmq_msg_init_size (&out, len - 1 - idlen) < 0)
        die ("zmq_msg_init_size");
    memcpy (zmq_msg_data (&out), p + 1 + idlen, len - 1 - idlen);
    if (zmq_send (s, p + 1, idlen, ZMQ_SNDMORE) < 0
        || zmq_msg_send (&out, s, 0) < 0)
        die ("send");
}

static int do_relay (struct opts *o)
{
    void *ctx = zmq_ctx_new ();
    void *s = zmq_socket (ctx, ZMQ_ROUTER);
    int one = 1;
    zmq_msg_t frames[MAX_FRAMES + 1];

    if (!s)
        die ("socket");
    zmq_setsockopt (s, ZMQ_ROUTER_MANDATORY, &one, sizeof (one));
    curve_server (s, o);
    if (zmq_bind (s, o->bind) < 0)
        die (o->bind);
    if (o->next) {
        curve_client (s, o);
        zmq_setsockopt (s, ZMQ_CONNECT_ROUTING_ID, "next", 4);
        if (zmq_connect (s, o->next) < 0)
            die (o->next);
    }
    for (;;) {
        /* frames[0] is kept free for the "next" id on the way down */
        int n = recv_multi (s, frames + 1) + 1;
        if (!o->next) {
            send_multi (s, frames, 1, n);          /* echo, as it came */
        }
        else if (o->pack) {
            if (n != 3) {
                fprintf (stderr, "bench-fwd: --pack takes one frame\n");
                exit (1);
            }
            if (zmq_msg_size (&frames[1]) == 4
                && memcmp (zmq_msg_data (&frames[1]), "next", 4) == 0)
                pack_pop (s, &frames[2]);
            else
                pack_push (s, &frames[1], &frames[2]);
            zmq_msg_close (&frames[1]);
            zmq_msg_close (&frames[2]);
        }
        else if (zmq_msg_size (&frames[1]) == 4
                 && memcmp (zmq_msg_data (&frames[1]), "next", 4) == 0) {
            zmq_msg_close (&frames[1]);            /* response: pop */
            send_multi (s, frames, 2, n);
        }
        else {
            zmq_msg_init_size (&frames[0], 4);     /* request: push */
            memcpy (zmq_msg_data (&frames[0]), "next", 4);
            send_multi (s, frames, 0, n);
        }
    }
    return 0;
}

/* The transport under test, behind two calls. */
struct client {
    void *ctx, *sock;          /* raw */
    bgn_t *h;                  /* bgn */
    uint32_t target;
    char *payload;
    size_t size;
    bgn_rpc_t **ring;
};

static void client_send (struct client *c, long slot)
{
    if (c->h) {
        if (!(c->ring[slot] = bgn_rpc (c->h, "broker.ping", c->target,
                                       c->payload, 0))) {
            perror ("bench-fwd: bgn_rpc");
            exit (1);
        }
    }
    else if (zmq_send (c->sock, c->payload, c->size, 0) < 0)
        die ("send");
}

static void client_recv (struct client *c, long slot)
{
    if (c->h) {
        if (bgn_rpc_get (c->ring[slot], NULL) < 0) {
            perror ("bench-fwd: broker.ping");
            exit (1);
        }
        bgn_rpc_destroy (&c->ring[slot]);
    }
    else {
        char buf[256];
        if (zmq_recv (c->sock, buf, sizeof (buf), 0) < 0)
            die ("recv");
    }
}

static int do_client (struct opts *o, int bgn)
{
    struct client c = { 0 };
    double *rtt, t0, t1, tend;
    long sent = 0, done = 0, n = 0;

    c.size = o->size;
    if (!(c.payload = malloc (c.size + 1))
        || !(c.ring = calloc (o->window, sizeof (*c.ring)))
        || !(rtt = calloc (o->count, sizeof (*rtt)))) {
        fprintf (stderr, "bench-fwd: out of memory\n");
        return 1;
    }
    if (bgn) {
        /* a JSON object of exactly size bytes: {"pad":"ppp..."} */
        char err[256];
        long pad = (long)c.size - 10;
        if (pad < 0)
            pad = 0;
        memcpy (c.payload, "{\"pad\":\"", 8);
        memset (c.payload + 8, 'p', pad);
        memcpy (c.payload + 8 + pad, "\"}", 3);
        c.target = o->target;
        if (!(c.h = bgn_open (o->uri, err, sizeof (err)))) {
            fprintf (stderr, "bench-fwd: %s\n", err);
            return 1;
        }
        bgn_set_timeout (c.h, 30.);
    }
    else {
        memset (c.payload, 'p', c.size);
        c.ctx = zmq_ctx_new ();
        if (!(c.sock = zmq_socket (c.ctx, ZMQ_DEALER)))
            die ("socket");
        curve_client (c.sock, o);
        if (zmq_connect (c.sock, o->connect) < 0)
            die (o->connect);
    }
    /* warm up: connections, caches */
    for (int i = 0; i < 200; i++) {
        client_send (&c, 0);
        client_recv (&c, 0);
    }
    /* throughput: a window of outstanding requests */
    t0 = monotime_now ();
    tend = t0 + o->duration;
    for (; sent < o->window; sent++)
        client_send (&c, sent % o->window);
    for (;;) {
        client_recv (&c, done % o->window);
        done++;
        if ((done & 63) == 0 && monotime_now () >= tend)
            break;
        client_send (&c, sent % o->window);
        sent++;
    }
    t1 = monotime_now ();
    double thr = (double)done / (t1 - t0);   /* answered by t1 */
    while (done < sent) {
        client_recv (&c, done % o->window);
        done++;
    }
    /* latency: one at a time */
    tend = monotime_now () + o->maxtime;
    for (n = 0; n < o->count; n++) {
        double a = monotime_now ();
        client_send (&c, 0);
        client_recv (&c, 0);
        rtt[n] = (monotime_now () - a) * 1e6;
        if (a > tend) {
            n++;
            break;
        }
    }
    qsort (rtt, n, sizeof (double), cmp_double);
    printf ("thr=%.0f rtt_med_us=%.1f rtt_p90_us=%.1f lat_n=%ld\n", thr,
            rtt[n / 2], rtt[(n * 9) / 10], n);
    if (c.h)
        bgn_close (&c.h);
    else {
        zmq_close (c.sock);
        zmq_ctx_term (c.ctx);
    }
    free (rtt);
    free (c.ring);
    free (c.payload);
    return 0;
}

static void usage (void)
{
    fprintf (stderr,
"Usage: bench-fwd relay --bind EP [--next EP] [--pack]\n"
"       bench-fwd raw-client --connect EP [client options]\n"
"       bench-fwd bgn-client --target RANK [--uri URI] [client options]\n"
"       bench-fwd keygen\n"
"Client options: --size B --window W --duration S --count C --maxtime S\n"
"relay and raw-client also take --curve PUBLIC:SECRET (from keygen)\n");
    exit (1);
}

int main (int argc, char **argv)
{
    static const struct option longopts[] = {
        { "bind", required_argument, NULL, 'b' },
        { "next", required_argument, NULL, 'n' },
        { "connect", required_argument, NULL, 'c' },
        { "uri", required_argument, NULL, 'u' },
        { "target", required_argument, NULL, 't' },
        { "size", required_argument, NULL, 's' },
        { "window", required_argument, NULL, 'w' },
        { "duration", required_argument, NULL, 'd' },
        { "count", required_argument, NULL, 'C' },
        { "maxtime", required_argument, NULL, 'm' },
        { "curve", required_argument, NULL, 'k' },
        { "pack", no_argument, NULL, 'p' },
        { NULL, 0, NULL, 0 },
    };
    struct opts o = { .target = -1, .size = 64, .window = 64, .count = 1000,
                      .duration = 1., .maxtime = 1. };
    const char *mode;
    int c;

    if (argc < 2)
        usage ();
    mode = argv[1];
    if (!strcmp (mode, "keygen")) {
        char pub[41], sec[41];
        if (zmq_curve_keypair (pub, sec) < 0)
            die ("zmq_curve_keypair");
        printf ("%s:%s\n", pub, sec);
        return 0;
    }
    optind = 2;
    while ((c = getopt_long (argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case 'b': o.bind = optarg; break;
        case 'n': o.next = optarg; break;
        case 'c': o.connect = optarg; break;
        case 'u': o.uri = optarg; break;
        case 't': o.target = atol (optarg); break;
        case 's': o.size = atol (optarg); break;
        case 'w': o.window = atol (optarg); break;
        case 'd': o.duration = atof (optarg); break;
        case 'C': o.count = atol (optarg); break;
        case 'm': o.maxtime = atof (optarg); break;
        case 'p': o.pack = 1; break;
        case 'k':
            if (strlen (optarg) != 81 || optarg[40] != ':')
                usage ();
            memcpy (o.curve_public, optarg, 40);
            memcpy (o.curve_secret, optarg + 41, 40);
            break;
        default: usage ();
        }
    }
    if (optind != argc || o.size < 1 || o.size > 200 || o.window < 1
        || o.count < 1 || !(o.duration > 0))
        usage ();
    if (!strcmp (mode, "relay") && o.bind)
        return do_relay (&o);
    if (!strcmp (mode, "raw-client") && o.connect)
        return do_client (&o, 0);
    if (!strcmp (mode, "bgn-client") && o.target >= 0)
        return do_client (&o, 1);
    usage ();
    return 1;
}
