/* sock.c: the overlay's ROUTER socket (see sock.h).
 *
 * Received parts are wrapped in frames that keep the zmq_msg_t in the
 * frame's private area, so forwarding moves the very same zmq_msg_t back
 * out (zmq_msg_send) with no copy; frames the core made are copied into
 * the socket when small and handed over by reference when large.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <czmq.h>

#include "src/common/libzmqutil/monitor.h"
#include "src/common/libzmqutil/multipart.h"
#include "sock.h"

#define RECV_BUDGET 1024       /* messages per readable callback */
#define ZERO_COPY_MIN 1024     /* bytes: smaller frames are copied */

struct sock {
    zloop_t *loop;
    void *zsock;
    void *monitor;
    const struct sock_ops *ops;
    void *arg;
    int curve;
    int polling;
    char bound[512];           /* the endpoint bound, to unbind at the end */
};

static const int monitored = ZMQ_EVENT_HANDSHAKE_FAILED_AUTH
                             | ZMQ_EVENT_DISCONNECTED
                             | ZMQ_EVENT_HANDSHAKE_SUCCEEDED
                             | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL
                             | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL;

struct sock *sock_create (zloop_t *loop, const struct sock_settings *set,
                          const struct sock_ops *ops, void *arg)
{
    struct sock *s = calloc (1, sizeof (*s));
    int one = 1, linger = 0;
    char id[16];

    if (!s)
        return NULL;
    s->loop = loop;
    s->ops = ops;
    s->arg = arg;
    if (!(s->zsock = zmq_socket (zsys_init (), ZMQ_ROUTER)))
        goto error;
    snprintf (id, sizeof (id), "%u", (unsigned)set->rank);
    zmq_setsockopt (s->zsock, ZMQ_ROUTING_ID, id, strlen (id));
    zmq_setsockopt (s->zsock, ZMQ_ROUTER_MANDATORY, &one, sizeof (one));
    zmq_setsockopt (s->zsock, ZMQ_ROUTER_HANDOVER, &one, sizeof (one));
    zmq_setsockopt (s->zsock, ZMQ_LINGER, &linger, sizeof (linger));
    zmq_setsockopt (s->zsock, ZMQ_SNDHWM, &set->sndhwm, sizeof (int));
    zmq_setsockopt (s->zsock, ZMQ_RCVHWM, &set->sndhwm, sizeof (int));
    if (set->curve_public) {
        s->curve = 1;
        zmq_setsockopt (s->zsock, ZMQ_CURVE_PUBLICKEY, set->curve_public, 40);
        zmq_setsockopt (s->zsock, ZMQ_CURVE_SECRETKEY, set->curve_secret, 40);
        zmq_setsockopt (s->zsock, ZMQ_CURVE_SERVER, &one, sizeof (one));
    }
    if (!(s->monitor = zmqutil_monitor_start (zsys_init (), s->zsock,
                                              monitored, "overlay")))
        goto error;
    return s;
error:
    sock_destroy (&s);
    return NULL;
}

void sock_destroy (struct sock **sp)
{
    struct sock *s;

    if (!sp || !(s = *sp))
        return;
    int saved = errno;
    if (s->polling) {
        zmq_pollitem_t mon = { .socket = s->monitor };
        zmq_pollitem_t item = { .socket = s->zsock };
        zloop_poller_end (s->loop, &mon);
        zloop_poller_end (s->loop, &item);
    }
    if (s->monitor)
        zmqutil_monitor_stop (s->zsock, &s->monitor);
    /* libzmq removes an ipc:// socket file later, in its I/O thread, or
     * not at all: remove it now, so the broker can remove its rundir. */
    if (s->zsock && s->bound[0]) {
        zmq_unbind (s->zsock, s->bound);
        if (!strncmp (s->bound, "ipc://", 6))
            unlink (s->bound + 6);
    }
    if (s->zsock)
        zmq_close (s->zsock);
    free (s);
    *sp = NULL;
    errno = saved;
}

static void first_ipv4 (char *buf, size_t len)
{
    struct ifaddrs *ifa, *i;
    int found = 0;

    if (getifaddrs (&ifa) == 0) {
        for (i = ifa; i && !found; i = i->ifa_next) {
            if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET)
                continue;
            struct sockaddr_in *sin = (struct sockaddr_in *)i->ifa_addr;
            if (ntohl (sin->sin_addr.s_addr) >> 24 == 127)
                continue;
            if (inet_ntop (AF_INET, &sin->sin_addr, buf, len))
                found = 1;
        }
        freeifaddrs (ifa);
    }
    if (!found)
        snprintf (buf, len, "127.0.0.1");
}

int sock_bind (struct sock *s, const char *uri, char *public_uri, size_t len)
{
    size_t l = len;

    if (zmq_bind (s->zsock, uri) < 0)
        return -1;
    zmq_getsockopt (s->zsock, ZMQ_LAST_ENDPOINT, public_uri, &l);
    snprintf (s->bound, sizeof (s->bound), "%s", public_uri);
    /* A wildcard address is no use to peers: publish a real one. */
    if (!strncmp (public_uri, "tcp://0.0.0.0:", 14)) {
        char ip[64], port[16];
        snprintf (port, sizeof (port), "%s", public_uri + 14);
        first_ipv4 (ip, sizeof (ip));
        snprintf (public_uri, len, "tcp://%s:%s", ip, port);
    }
    return 0;
}

const char *sock_strerror (int errnum)
{
    return zmq_strerror (errnum);
}

/* ---- receiving ------------------------------------------------------- */

static void release_zmq (struct frame *f, void *priv)
{
    zmq_msg_close (priv);
}

/* Wrap a received part (moved into the frame).  NULL on ENOMEM. */
static struct frame *wrap (zmq_msg_t *part)
{
    struct frame *f = frame_wrap (sizeof (zmq_msg_t), release_zmq);
    zmq_msg_t *m;

    if (!f)
        return NULL;
    m = frame_priv (f);
    zmq_msg_init (m);
    zmq_msg_move (m, part);
    frame_set (f, zmq_msg_data (m), zmq_msg_size (m));
    return f;
}

static void pass_up (struct sock *s, zmq_msg_t *parts, int n)
{
    struct frame *frames[ZMQUTIL_MAX_PARTS];
    const char *user_id = NULL;
    int nf = 0;

    if (n >= 2 && s->curve)
        user_id = zmq_msg_gets (&parts[1], "User-Id");
    for (int i = 1; i < n; i++) {
        if (!(frames[nf] = wrap (&parts[i]))) {
            frame_decref_all (frames, nf);
            return;
        }
        nf++;
    }
    s->ops->message (s->arg, zmq_msg_data (&parts[0]), zmq_msg_size (&parts[0]),
                     frames, nf, user_id);
}

static int readable (zloop_t *loop, zmq_pollitem_t *item, void *arg)
{
    struct sock *s = arg;
    zmq_msg_t parts[ZMQUTIL_MAX_PARTS];

    for (int budget = 0; budget < RECV_BUDGET; budget++) {
        int n = zmqutil_recv (s->zsock, parts, ZMQUTIL_MAX_PARTS);
        if (n == 0 || (n < 0 && n != -2))
            break;
        if (n == -2) {
            /* too many parts: an empty message counts it as malformed */
            s->ops->message (s->arg, "", 0, NULL, 0, NULL);
            continue;
        }
        pass_up (s, parts, n);
        zmqutil_close (parts, n);
    }
    return 0;
}

static int monitor_readable (zloop_t *loop, zmq_pollitem_t *item, void *arg)
{
    struct sock *s = arg;
    struct zmqutil_monitor_event ev;
    char detail[256];

    while (zmqutil_monitor_recv (s->monitor, &ev) == 1) {
        switch (ev.event) {
        case ZMQ_EVENT_HANDSHAKE_SUCCEEDED:
            s->ops->event (s->arg, OVL_SOCK_CONNECTED, ev.endpoint, NULL);
            break;
        case ZMQ_EVENT_DISCONNECTED:
            s->ops->event (s->arg, OVL_SOCK_DISCONNECTED, ev.endpoint, NULL);
            break;
        case ZMQ_EVENT_HANDSHAKE_FAILED_AUTH:
            s->ops->event (s->arg, OVL_SOCK_AUTH_FAILED, ev.endpoint,
                           zmqutil_monitor_describe (&ev, detail,
                                                     sizeof (detail)));
            break;
        case ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL:
            s->ops->event (s->arg, OVL_SOCK_HANDSHAKE_FAILED, ev.endpoint,
                           zmqutil_monitor_describe (&ev, detail,
                                                     sizeof (detail)));
            break;
        default:
            s->ops->event (s->arg, OVL_SOCK_HANDSHAKE_LOST, ev.endpoint,
                           zmqutil_monitor_describe (&ev, detail,
                                                     sizeof (detail)));
            break;
        }
    }
    return 0;
}

int sock_start (struct sock *s)
{
    zmq_pollitem_t item = { .socket = s->zsock, .events = ZMQ_POLLIN };
    zmq_pollitem_t mon = { .socket = s->monitor, .events = ZMQ_POLLIN };

    if (zloop_poller (s->loop, &mon, monitor_readable, s) < 0)
        return -1;
    if (zloop_poller (s->loop, &item, readable, s) < 0) {
        zloop_poller_end (s->loop, &mon);
        return -1;
    }
    s->polling = 1;
    return 0;
}

/* ---- connecting and sending -------------------------------------------- */

int sock_connect (struct sock *s, uint32_t rank, const char *endpoint,
                  const char *pubkey)
{
    char id[16];

    snprintf (id, sizeof (id), "%u", (unsigned)rank);
    /* Options are copied at connect time: the peer's key makes this
     * connection a CURVE client (the bind stays a server). */
    if (s->curve)
        zmq_setsockopt (s->zsock, ZMQ_CURVE_SERVERKEY, pubkey, 40);
    zmq_setsockopt (s->zsock, ZMQ_CONNECT_ROUTING_ID, id, strlen (id));
    return zmq_connect (s->zsock, endpoint);
}

void sock_disconnect (struct sock *s, const char *endpoint)
{
    zmq_disconnect (s->zsock, endpoint);
}

static void release_ref (void *data, void *hint)
{
    struct frame *f = hint;
    frame_decref (&f);
}

/* Send one body frame (taken), more parts following if 'more'. */
static void send_frame (struct sock *s, struct frame **fp, int more)
{
    struct frame *f = *fp;
    int flags = more ? ZMQ_SNDMORE : 0;
    zmq_msg_t m;

    if (frame_release_fn (f) == release_zmq && frame_refs (f) == 1) {
        /* a part we received: move the very same message back out */
        zmq_msg_send (frame_priv (f), s->zsock, flags);
    }
    else if (frame_size (f) >= ZERO_COPY_MIN
             && zmq_msg_init_data (&m, frame_data (f), frame_size (f),
                                   release_ref, frame_incref (f)) == 0) {
        if (zmq_msg_send (&m, s->zsock, flags) < 0)
            zmq_msg_close (&m);
    }
    else
        zmq_send (s->zsock, frame_data (f), frame_size (f), flags);
    frame_decref (fp);
}

int sock_send (struct sock *s, uint32_t rank, const uint8_t *env,
               size_t envlen, struct frame **body, int n)
{
    char id[16];
    int len = snprintf (id, sizeof (id), "%u", (unsigned)rank);

    /* With ROUTER_MANDATORY and DONTWAIT the identity part is accepted
     * or refused for the whole message: once it is in, the rest cannot
     * fail. */
    if (zmq_send (s->zsock, id, len, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0)
        return -1;
    zmq_send (s->zsock, env, envlen, n > 0 ? ZMQ_SNDMORE : 0);
    for (int i = 0; i < n; i++)
        send_frame (s, &body[i], i < n - 1);
    return 0;
}
