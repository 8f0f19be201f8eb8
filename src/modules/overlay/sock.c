/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* sock.c: the overlay's ROUTER socket (see sock.h).
 *
 * Received parts are wrapped in frames that keep the zmq_msg_t in the
 * frame's private area.  Every frame leaves by reference, with no copy
 * (zmq_msg_init_data): a received one goes out still backed by the
 * zmq_msg_t it came in, so forwarding copies nothing.  Each message
 * handed over carries a record of what it costs; libzmq's I/O thread
 * frees it once the message is written out or dropped, and takes its
 * cost off its peer's queue then (sndq.c, the part two threads touch),
 * so the bytes waiting in libzmq toward each peer are known and bounded
 * (sock_settings.sndbuf_bytes).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <czmq.h>
#include <jansson.h>

#include "src/common/libutil/uintfmt.h"
#include "src/common/libzmqutil/monitor.h"
#include "src/common/libzmqutil/multipart.h"
#include "curve.h"
#include "envelope.h"
#include "frame.h"
#include "ovcore.h"
#include "sndq.h"
#include "sock.h"

#define RECV_BUDGET 1024       /* messages per readable callback */
#define MAX_ID 255             /* bytes in a ZeroMQ routing id */
/* What libzmq holds for one message beyond our frame: a zmq_msg_t for the
 * frame and one for the routing id in the pipe, and the content record
 * zmq_msg_init_data allocates. */
#define ZMQ_MSG_COST 192
/* A received frame shares libzmq's receive buffer with the other
 * messages of its read, and pins it while it lives: at most this much. */
#define RECV_BUFFER_PIN 8192

/* Routing ids are kept as hex text (generated ones start with a NUL). */
typedef char idhex_t[2 * MAX_ID + 1];

struct sock {
    const struct bgn_poller *poller;
    void *zsock;
    void *monitor;
    const struct sock_ops *ops;
    void *arg;
    int curve;
    int polling;
    uint32_t size;
    uint64_t rng;
    size_t sndbuf_bytes;        /* per peer, 0: no bound */
    struct sndqs *queues;       /* libzmq's send queues (sndq.c) */
    uint64_t deferred;          /* sends refused at sndbuf_bytes */
    zhashx_t *out_ids;          /* our connections: id hex -> rank */
    zhashx_t *out_rank;         /* rank -> id hex of our newest one */
    zhashx_t *in_ids;           /* bound accepted ones: id hex -> rank */
    zhashx_t *in_rank;          /* rank -> id hex of its bound one */
    struct {                    /* a HELLO on an unbound connection */
        int active;
        uint32_t rank;
        idhex_t id;
    } pending;
    char bound[512];           /* the endpoint bound, to unbind at the end */
};

static void to_hex (const void *data, size_t len, char *out)
{
    static const char digits[] = "0123456789abcdef";
    const uint8_t *b = data;

    if (len > MAX_ID)
        len = MAX_ID;
    for (size_t i = 0; i < len; i++) {
        out[2 * i] = digits[b[i] >> 4];
        out[2 * i + 1] = digits[b[i] & 15];
    }
    out[2 * len] = '\0';
}

static size_t from_hex (const char *hex, uint8_t *out)
{
    size_t n = 0;

    for (; hex[0] && hex[1] && n < MAX_ID; hex += 2) {
        int hi = hex[0] <= '9' ? hex[0] - '0' : hex[0] - 'a' + 10;
        int lo = hex[1] <= '9' ? hex[1] - '0' : hex[1] - 'a' + 10;
        out[n++] = (uint8_t)(hi << 4 | lo);
    }
    return n;
}

static zhashx_t *string_hash (void)
{
    zhashx_t *h = zhashx_new ();

    if (h) {
        zhashx_set_destructor (h, (zhashx_destructor_fn *)zstr_free);
        zhashx_set_duplicator (h, (zhashx_duplicator_fn *)strdup);
    }
    return h;
}

/* xorshift64* seeded from the kernel: routing ids no peer can guess. */
static uint64_t next_random (struct sock *s)
{
    s->rng ^= s->rng >> 12;
    s->rng ^= s->rng << 25;
    s->rng ^= s->rng >> 27;
    return s->rng * 2685821657736338717ULL;
}

static uint64_t seed (void)
{
    uint64_t v = 0;
    FILE *f = fopen ("/dev/urandom", "r");

    if (f) {
        if (fread (&v, sizeof (v), 1, f) != 1)
            v = 0;
        fclose (f);
    }
    return v ^ (uint64_t)zclock_usecs () ^ ((uint64_t)getpid () << 32)
           ^ 0x9e3779b97f4a7c15ULL;
}

static const int monitored = ZMQ_EVENT_HANDSHAKE_FAILED_AUTH
                             | ZMQ_EVENT_DISCONNECTED
                             | ZMQ_EVENT_HANDSHAKE_SUCCEEDED
                             | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL
                             | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL;

struct sock *sock_create (const struct bgn_poller *poller,
                          const struct sock_settings *set,
                          const struct sock_ops *ops, void *arg)
{
    struct sock *s = calloc (1, sizeof (*s));
    int one = 1, linger = 0;

    if (!s)
        return NULL;
    s->poller = poller;
    s->ops = ops;
    s->arg = arg;
    s->size = set->size;
    s->rng = seed ();
    s->sndbuf_bytes = set->sndbuf_bytes;
    if (!(s->queues = sndqs_create ())
        || !(s->out_ids = string_hash ()) || !(s->out_rank = string_hash ())
        || !(s->in_ids = string_hash ()) || !(s->in_rank = string_hash ()))
        goto error;
    if (!(s->zsock = zmq_socket (poller->zmq_ctx, ZMQ_ROUTER)))
        goto error;
    /* No ZMQ_ROUTING_ID and no ROUTER_HANDOVER: see sock.h. */
    zmq_setsockopt (s->zsock, ZMQ_ROUTER_MANDATORY, &one, sizeof (one));
    zmq_setsockopt (s->zsock, ZMQ_LINGER, &linger, sizeof (linger));
    if (set->maxmsgsize > 0)
        zmq_setsockopt (s->zsock, ZMQ_MAXMSGSIZE, &set->maxmsgsize,
                        sizeof (int64_t));
    zmq_setsockopt (s->zsock, ZMQ_SNDHWM, &set->sndhwm, sizeof (int));
    zmq_setsockopt (s->zsock, ZMQ_RCVHWM, &set->sndhwm, sizeof (int));
    if (set->curve_public) {
        s->curve = 1;
        zmq_setsockopt (s->zsock, ZMQ_CURVE_PUBLICKEY, set->curve_public, 40);
        zmq_setsockopt (s->zsock, ZMQ_CURVE_SECRETKEY, set->curve_secret, 40);
        zmq_setsockopt (s->zsock, ZMQ_CURVE_SERVER, &one, sizeof (one));
    }
    if (!(s->monitor = zmqutil_monitor_start (poller->zmq_ctx, s->zsock,
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
        s->poller->remove (s->poller->ctx, s->monitor);
        s->poller->remove (s->poller->ctx, s->zsock);
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
    if (s->zsock) {
        zmq_close (s->zsock);
        /* libzmq's threads call sndq.c's code: wait for them */
        sndqs_wait_released (s->queues);
    }
    sndqs_destroy (&s->queues);
    zhashx_destroy (&s->out_ids);
    zhashx_destroy (&s->out_rank);
    zhashx_destroy (&s->in_ids);
    zhashx_destroy (&s->in_rank);
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

/* rank in decimal into r (at least 11 bytes); its length.  Every message
 * in and out names its peer's rank as text (the tables below and the
 * core's peer table are keyed by it), so not through snprintf. */
static size_t rank_text (uint32_t rank, char *r)
{
    size_t len = uint_format (r, rank);

    r[len] = '\0';
    return len;
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

/* Bind accepted connection 'id' to 'rank' (replacing the rank's old
 * one, which is then unbound). */
static void bind_in (struct sock *s, uint32_t rank, const char *id)
{
    char r[16];
    const char *old;

    snprintf (r, sizeof (r), "%u", (unsigned)rank);
    if ((old = zhashx_lookup (s->in_rank, r)) && strcmp (old, id) != 0)
        zhashx_delete (s->in_ids, old);
    zhashx_update (s->in_rank, r, (void *)id);
    zhashx_update (s->in_ids, id, r);
}

/* The rank a HELLO on an unbound connection claims, or -1.  Any
 * version's: the envelope's head keeps its layout (envelope.h), so the
 * core can name a peer of another version when it refuses it. */
static long hello_claim (struct sock *s, zmq_msg_t *parts, int n)
{
    struct envelope_head head;

    if (n < 2 || envelope_decode_head (zmq_msg_data (&parts[1]),
                                       zmq_msg_size (&parts[1]), &head,
                                       NULL) < 0)
        return -1;
    if (head.kind != ENV_HELLO || head.source >= s->size)
        return -1;
    return (long)head.source;
}

/* Handle a message of an accepted connection not bound yet as from
 * 'rank': what the core sends that rank meanwhile goes back to it, and an
 * admission binds it (sock_admitted).  Not for a rank we connect to
 * ourselves: that rank never connects to us. */
static long pending (struct sock *s, long rank, const char *id)
{
    char r[16];

    snprintf (r, sizeof (r), "%u", (unsigned)rank);
    if (zhashx_lookup (s->out_rank, r))
        return -1;
    s->pending.active = 1;
    s->pending.rank = (uint32_t)rank;
    snprintf (s->pending.id, sizeof (s->pending.id), "%s", id);
    return rank;
}

/* Which rank sent this (see sock.h)?  -1: nobody we know. */
static long identify (struct sock *s, zmq_msg_t *parts, int n,
                      const char *id, const char *user_id)
{
    const char *r;
    long rank;

    if ((r = zhashx_lookup (s->out_ids, id)))
        return strtol (r, NULL, 10);
    rank = s->curve && s->ops->rank_of_key
               ? s->ops->rank_of_key (s->arg, user_id) : CURVE_KEY_SHARED;
    if (rank == CURVE_KEY_UNKNOWN || rank >= (long)s->size)
        return -1;
    if ((r = zhashx_lookup (s->in_ids, id))) {
        long bound = strtol (r, NULL, 10);
        /* a key names one rank for good */
        return rank >= 0 && bound != rank ? -1 : bound;
    }
    if (rank >= 0)
        return pending (s, rank, id);    /* the key says who */
    if ((rank = hello_claim (s, parts, n)) >= 0)
        return pending (s, rank, id);    /* only a hello may claim */
    return -1;
}

static void pass_up (struct sock *s, zmq_msg_t *parts, int n)
{
    struct frame *frames[ZMQUTIL_MAX_PARTS];
    const char *user_id = NULL;
    idhex_t id;
    char name[16];
    long rank;
    int nf = 0;

    if (n >= 2 && s->curve)
        user_id = zmq_msg_gets (&parts[1], "User-Id");
    to_hex (zmq_msg_data (&parts[0]), zmq_msg_size (&parts[0]), id);
    rank = identify (s, parts, n, id, user_id);
    for (int i = 1; i < n; i++) {
        if (!(frames[nf] = wrap (&parts[i]))) {
            frame_decref_all (frames, nf);
            s->pending.active = 0;
            return;
        }
        nf++;
    }
    if (rank < 0) {
        /* nobody: the core counts an unknown peer (never a rank id) */
        s->ops->message (s->arg, "?", 1, frames, nf, user_id);
        return;
    }
    s->ops->message (s->arg, name, rank_text ((uint32_t)rank, name), frames,
                     nf, user_id);
    s->pending.active = 0;
}

static void readable (void *arg)
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
    sndqs_reclaim_all (s->queues);
}

static void monitor_readable (void *arg)
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
            /* libzmq queued what the peer sent before it closed (its
             * goodbye, say) ahead of this event, but on another socket:
             * read it first, or the peer looks lost for a reason it
             * had already told us otherwise */
            if (s->polling)
                readable (s);
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
}

int sock_start (struct sock *s)
{
    const struct bgn_poller *p = s->poller;

    if (p->add_quiet (p->ctx, s->monitor, monitor_readable, s) < 0)
        return -1;
    if (p->add (p->ctx, s->zsock, readable, s) < 0) {
        p->remove (p->ctx, s->monitor);
        return -1;
    }
    s->polling = 1;
    return 0;
}

/* ---- connecting and sending -------------------------------------------- */

int sock_connect (struct sock *s, uint32_t rank, const char *endpoint,
                  const char *pubkey)
{
    char id[48], r[16];
    idhex_t hex;

    /* A fresh id no peer can guess, per connection (sock.h). */
    snprintf (id, sizeof (id), "c%u.%016llx", (unsigned)rank,
              (unsigned long long)next_random (s));
    snprintf (r, sizeof (r), "%u", (unsigned)rank);
    /* Options are copied at connect time: the peer's key makes this
     * connection a CURVE client (the bind stays a server). */
    if (s->curve)
        zmq_setsockopt (s->zsock, ZMQ_CURVE_SERVERKEY, pubkey, 40);
    zmq_setsockopt (s->zsock, ZMQ_CONNECT_ROUTING_ID, id, strlen (id));
    if (zmq_connect (s->zsock, endpoint) < 0)
        return -1;
    to_hex (id, strlen (id), hex);
    zhashx_update (s->out_ids, hex, r);
    zhashx_update (s->out_rank, r, hex);
    return 0;
}

void sock_disconnect (struct sock *s, uint32_t rank, const char *endpoint)
{
    char r[16];
    const char *hex;

    zmq_disconnect (s->zsock, endpoint);
    snprintf (r, sizeof (r), "%u", (unsigned)rank);
    if ((hex = zhashx_lookup (s->out_rank, r))) {
        zhashx_delete (s->out_ids, hex);
        zhashx_delete (s->out_rank, r);
    }
}

/* What a frame costs while libzmq holds it (see ZMQ_MSG_COST and
 * RECV_BUFFER_PIN). */
static size_t send_cost (const struct frame *f)
{
    size_t c = frame_footprint (f) + sndq_rec_size () + ZMQ_MSG_COST;

    if (frame_release_fn (f) == release_zmq)
        c += RECV_BUFFER_PIN;
    return c;
}

/* Send one wire frame (taken) as the last part of a message, by
 * reference, its cost counted on q until libzmq frees it. */
static void send_frame (struct sock *s, struct sndq *q, struct frame **fp)
{
    struct sndq_rec *m = sndq_rec_new ();
    zmq_msg_t z;

    if (!m || zmq_msg_init_data (&z, frame_data (*fp), frame_size (*fp),
                                 sndq_released, m) < 0) {
        /* no record: the bytes go by copy, uncounted */
        sndq_rec_free (m);
        zmq_send (s->zsock, frame_data (*fp), frame_size (*fp), 0);
        frame_decref (fp);
        return;
    }
    sndq_hand_over (q, m, fp, send_cost (*fp));
    if (zmq_msg_send (&z, s->zsock, 0) < 0)
        zmq_msg_close (&z);     /* sndq_released runs now */
}

/* How much may be queued toward a peer before this frame is held back:
 * the bulk (broker messages, events) up to three quarters of the bound,
 * so that the protocol's own messages (fence news, event control, links:
 * few and small, and news that must not wait behind the bulk) keep a
 * quarter to themselves; what keeps a link alive (hello, keepalive,
 * goodbye) always goes (0: no limit), or a busy link would look dead. */
static size_t limit_for (const struct sock *s, const struct frame *f)
{
    struct envelope_head head;

    if (envelope_decode_head (frame_data (f), frame_size (f), &head,
                              NULL) < 0)
        return s->sndbuf_bytes;
    switch (head.kind) {
    case ENV_HELLO:
    case ENV_HELLO_ACK:
    case ENV_HELLO_NAK:
    case ENV_KEEPALIVE:
    case ENV_GOODBYE:
        return 0;
    case ENV_DATA:
    case ENV_EVENT:
        return s->sndbuf_bytes / 4 * 3;
    default:
        return s->sndbuf_bytes;
    }
}

/* The routing id that reaches 'rank' now (sock.h), as hex, or NULL. */
static const char *route_id (struct sock *s, uint32_t rank)
{
    char r[16];
    const char *hex;

    if (s->pending.active && s->pending.rank == rank)
        return s->pending.id;
    rank_text (rank, r);
    if ((hex = zhashx_lookup (s->out_rank, r)))
        return hex;
    return zhashx_lookup (s->in_rank, r);
}

int sock_send (struct sock *s, uint32_t rank, struct frame **wire)
{
    uint8_t id[MAX_ID];
    const char *hex = route_id (s, rank);
    struct sndq *q;
    size_t len, queued, limit;

    if (!hex) {
        errno = EHOSTUNREACH;
        return -1;
    }
    if (!(q = sndqs_get (s->queues, rank))) {
        errno = ENOMEM;
        return -1;
    }
    sndq_reclaim (q);
    /* past the byte bound the core keeps the message in its backlog (an
     * empty queue takes any message, so none is held back for ever) */
    queued = sndq_bytes (q);
    limit = s->sndbuf_bytes ? limit_for (s, *wire) : 0;
    if (limit && queued > 0 && queued + send_cost (*wire) > limit) {
        s->deferred++;
        errno = EAGAIN;
        return -1;
    }
    len = from_hex (hex, id);
    /* With ROUTER_MANDATORY and DONTWAIT the identity part is accepted
     * or refused for the whole message: once it is in, the rest cannot
     * fail. */
    if (zmq_send (s->zsock, id, len, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0)
        return -1;
    send_frame (s, q, wire);
    return 0;
}

void sock_admitted (struct sock *s, uint32_t rank)
{
    /* the connection whose HELLO the core is handling, if it is rank's */
    if (s->pending.active && s->pending.rank == rank)
        bind_in (s, rank, s->pending.id);
}

json_t *sock_memory (struct sock *s)
{
    return json_pack ("{s:{s:I s:I s:I}}", "send_queues",
                      "bytes", (json_int_t)sndqs_bytes (s->queues),
                      "bound", (json_int_t)(s->sndbuf_bytes
                                            * sndqs_count (s->queues)),
                      "deferred", (json_int_t)s->deferred);
}
