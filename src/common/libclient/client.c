/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* client.c: connection to a broker, RPCs and events (see client.h).
 *
 * One DEALER socket per handle, identity 72 fresh random bits (id_make).
 * Everything that arrives is sorted as it is read: responses into their
 * rpc's queue (by matchtag), events into the handle's event queue (a
 * batch of events, one frame in evbatch.h's format, is unpacked there).
 * Waiting is poll() on the socket with the earliest relevant deadline,
 * so a wait always ends.  Asynchronous publishes are ordinary rpcs kept
 * in a FIFO in the order they were sent.
 *
 * A lost broker ends everything (client.h): a socket monitor reports
 * the connection's end, at once when the broker's process exits or is
 * killed (the kernel closes the socket), and ZMTP heartbeats make libzmq
 * end it when a broker that is still connected stops answering (stopped,
 * hung, or a host gone).  The handle is then lost for good: whatever had
 * arrived is still handed out, and every wait after that fails with
 * ECONNRESET.  We disconnect at once, so libzmq does not reconnect to a
 * broker restarted on the same socket, which would not know our
 * requests and subscriptions: a new broker needs a new handle.
 *
 * The request path allocates nothing once warm: a request is encoded
 * from one message the handle keeps and refills (libmsg reuses its
 * buffers), rpc objects come back to a small pool when destroyed, rpcs
 * are found by matchtag in an open-addressing table (idmap), a response
 * waits in its rpc's one-message slot (a list only for a streaming rpc's
 * backlog), and each response is decoded into the memory of the last
 * one the program finished with.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <time.h>
#include <sys/random.h>
#include <uuid/uuid.h>
#include <zmq.h>
#include <czmq.h>
#include <jansson.h>

#include "src/common/libutil/errbuf.h"
#include "client.h"
#include "src/common/libmsg/evbatch.h"
#include "src/common/libutil/idmap.h"
#include "src/common/libutil/monotime.h"
#include "src/common/libzmqutil/multipart.h"

#define RPC_POOL_MAX 256        /* destroyed rpcs kept for reuse */
#define SPARES_MAX 16           /* finished messages kept to decode into */

struct bgn_handle {
    void *ctx;
    void *sock;
    void *mon;                 /* PAIR: the socket monitor's events */
    char uri[4096];            /* ipc://path */
    double broker_timeout;     /* heartbeat bound, 0 for none */
    int lost;                  /* the monitor said DISCONNECTED: for good */
    char id[40];
    uint32_t next_matchtag;
    double timeout;
    struct idmap *rpcs;        /* matchtag -> bgn_rpc_t * */
    zlistx_t *events;          /* struct evitem *, oldest first */
    uint64_t nevents;          /* events in them */
    uint64_t event_drops;
    char topic[MSG_MAX_TOPIC + 1];  /* bgn_event_next's current event */
    char *payload;
    size_t payload_cap;
    uint64_t malformed;
    /* asynchronous publishes, oldest first: a ring */
    bgn_rpc_t **pubq;
    int pubhead, publen, pubcap;
    int pub_events;            /* events in pubq not collected */
    int pub_unanswered;        /* ... whose request is not answered */
    int pub_requests;          /* requests not answered */
    int window;
    char *pub_errstr;
    msg_t *req;                /* refilled for every request */
    msg_t *spares[SPARES_MAX]; /* finished messages, to decode into */
    int nspares;
    bgn_rpc_t *pool;           /* destroyed rpcs, linked by next_free */
    int npool;
};

struct bgn_rpc {
    bgn_t *h;
    uint32_t matchtag;
    int tracked;               /* in h->rpcs under matchtag */
    double deadline;
    int flags;
    msg_t *first;              /* the oldest response not yet taken */
    zlistx_t *more;            /* later ones (streaming), made when needed */
    msg_t *current;            /* the response bgn_rpc_get returned */
    char *errstr;
    int publish;               /* in the handle's publish FIFO */
    int answered;
    int count;                 /* events it published */
    int taken;                 /* answers bgn_event_publish_get gave */
    int fail_errno;            /* unanswered: ETIMEDOUT, ECONNRESET */
    uint32_t first_seq;        /* their first seq */
    bgn_rpc_t *next_free;
};

static void msg_destructor (void **item)
{
    msg_destroy ((msg_t **)item);
}

/* Queued events: one message (event.lost notices), or a batch as it came
 * from the broker, consumed a record at a time. */
struct evitem {
    msg_t *msg;
    int is_batch;
    zmq_msg_t batch;
    size_t off;             /* next record */
    uint32_t left;          /* records not taken yet */
};

static void evitem_destructor (void **item)
{
    struct evitem *it = *item;

    if (it) {
        msg_destroy (&it->msg);
        if (it->is_batch)
            zmq_msg_close (&it->batch);
        free (it);
        *item = NULL;
    }
}

/* A handle's identity on the broker's socket, after the mark: 12
 * characters (base64url) of 72 random bits.  Every request and its
 * response carry it on each hop, so it is short; 72 bits keep two
 * clients of one broker from ever meeting.  Without getrandom() (or
 * before the kernel's pool is ready: no waiting at boot), the random
 * bits of a version-4 uuid (bytes 0-5 and 10-12). */
static void id_make (char *out)
{
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                              "0123456789-_";
    uint8_t r[9];
    int o = 0;

    if (getrandom (r, sizeof (r), GRND_NONBLOCK) != (ssize_t)sizeof (r)) {
        uuid_t u;
        uuid_generate_random (u);
        memcpy (r, u, 6);
        memcpy (r + 6, u + 10, 3);
    }
    for (int i = 0; i < 9; i += 3) {
        uint32_t v = (uint32_t)r[i] << 16 | (uint32_t)r[i + 1] << 8 | r[i + 2];
        for (int k = 18; k >= 0; k -= 6)
            out[o++] = abc[(v >> k) & 63];
    }
    out[o] = '\0';
}

/* $BGN_BROKER_TIMEOUT in seconds (0: no heartbeats), else the default;
 * a value that is not a number >= 0 is ignored. */
static double broker_timeout_env (void)
{
    const char *env = getenv ("BGN_BROKER_TIMEOUT");
    char *end;
    double t;

    if (!env || !*env)
        return BGN_DEFAULT_BROKER_TIMEOUT;
    t = strtod (env, &end);
    if (*end || !(t >= 0) || t > BGN_MAX_BROKER_TIMEOUT)
        return BGN_DEFAULT_BROKER_TIMEOUT;
    return t;
}

/* ZMTP heartbeats for a bound of 'seconds': a PING every fifth of it,
 * and the connection ends when nothing has come back for four fifths
 * (the broker's libzmq answers PINGs itself, from its I/O thread), so a
 * silent broker is noticed within the bound, and one that hangs for a
 * little less is not.  No TTL: the broker would then drop a client that
 * is merely stopped (Ctrl-Z in a terminal). */
static void set_heartbeat (void *sock, double seconds)
{
    int ivl, timeout;

    if (!(seconds > 0))
        return;
    ivl = (int)(seconds * 1000. / 5.);
    timeout = (int)(seconds * 4000. / 5.);
    if (ivl < 1)
        ivl = 1;
    if (timeout < 1)
        timeout = 1;
    zmq_setsockopt (sock, ZMQ_HEARTBEAT_IVL, &ivl, sizeof (ivl));
    zmq_setsockopt (sock, ZMQ_HEARTBEAT_TIMEOUT, &timeout, sizeof (timeout));
}

/* Watch the socket's connection: its events come to h->mon (inproc, in
 * the handle's private context, so the name is ours alone). */
static int monitor_start (bgn_t *h)
{
    static const char ep[] = "inproc://bgn-client-monitor";

    if (zmq_socket_monitor (h->sock, ep, ZMQ_EVENT_DISCONNECTED) < 0
        || !(h->mon = zmq_socket (h->ctx, ZMQ_PAIR))
        || zmq_connect (h->mon, ep) < 0)
        return -1;
    return 0;
}

/* Is a broker listening on the socket at 'path'?  A broker that exited
 * or was killed leaves its socket file: libzmq would retry it quietly
 * for ever, so ask the kernel once (the broker's libzmq sees a
 * connection closed before its greeting, and forgets it).  0, or -1
 * with errno (ECONNREFUSED: nobody there). */
static int listening (const char *path)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    int fd, rc;

    if (strlen (path) >= sizeof (sa.sun_path))
        return 0;       /* libzmq will say */
    strcpy (sa.sun_path, path);
    if ((fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
        return -1;
    rc = connect (fd, (struct sockaddr *)&sa, sizeof (sa));
    int saved = errno;
    close (fd);
    errno = saved;
    return rc;
}

bgn_t *bgn_open (const char *uri, char *errbuf, size_t errlen)
{
    bgn_t *h;
    char endpoint[4096];
    const char *path;
    struct stat st;
    int linger = 0;
    const char *env;

    if (!uri && !(uri = getenv ("BGN_URI"))) {
        errbuf_set (errbuf, errlen,
                    "no broker: BGN_URI is not set (run under 'bgn start', "
                    "or give --uri)");
        errno = ENOENT;
        return NULL;
    }
    if (!strncmp (uri, "ipc://", 6))
        path = uri + 6;
    else if (!strncmp (uri, "local://", 8))
        path = uri + 8;
    else if (strstr (uri, "://")) {
        errbuf_set (errbuf, errlen, "%s: only ipc:// broker URIs are supported",
                    uri);
        errno = EINVAL;
        return NULL;
    }
    else
        path = uri;
    if (stat (path, &st) < 0 || !S_ISSOCK (st.st_mode)) {
        errbuf_set (errbuf, errlen, "no broker at %s: %s", path,
                    errno ? strerror (errno) : "not a socket");
        errno = ENOENT;
        return NULL;
    }
    if (listening (path) < 0 && errno == ECONNREFUSED) {
        errbuf_set (errbuf, errlen, "no broker at %s: nothing listens there "
                    "(the socket of a broker that is gone)", path);
        errno = ECONNREFUSED;
        return NULL;
    }
    snprintf (endpoint, sizeof (endpoint), "ipc://%s", path);
    if (!(h = calloc (1, sizeof (*h))))
        return NULL;
    h->timeout = BGN_DEFAULT_RPC_TIMEOUT;
    if ((env = getenv ("BGN_RPC_TIMEOUT"))) {
        double t = strtod (env, NULL);
        if (t > 0)
            h->timeout = t;
    }
    h->next_matchtag = 1;
    h->window = BGN_PUBLISH_WINDOW;
    if (!(h->rpcs = idmap_create (sizeof (bgn_rpc_t *)))
        || !(h->events = zlistx_new ())
        || !(h->req = msg_create (MSGTYPE_REQUEST)))
        goto nomem;
    zlistx_set_destructor (h->events, evitem_destructor);
    /* the mark asks the broker for the packed form (multipart.h) */
    h->id[0] = ZMQUTIL_PACKED_ID_MARK;
    id_make (h->id + 1);
    snprintf (h->uri, sizeof (h->uri), "%s", endpoint);
    h->broker_timeout = broker_timeout_env ();
    /* A private context: a library must not share the program's. */
    if (!(h->ctx = zmq_ctx_new ()) || !(h->sock = zmq_socket (h->ctx, ZMQ_DEALER)))
        goto zerror;
    zmq_setsockopt (h->sock, ZMQ_ROUTING_ID, h->id, strlen (h->id));
    zmq_setsockopt (h->sock, ZMQ_LINGER, &linger, sizeof (linger));
    int64_t maxmsg = ZMQUTIL_MAX_MSG_SIZE;
    zmq_setsockopt (h->sock, ZMQ_MAXMSGSIZE, &maxmsg, sizeof (maxmsg));
    set_heartbeat (h->sock, h->broker_timeout);
    if (monitor_start (h) < 0 || zmq_connect (h->sock, endpoint) < 0)
        goto zerror;
    return h;
zerror:
    errbuf_set (errbuf, errlen,
                "connect %s: %s", endpoint, zmq_strerror (errno));
    bgn_close (&h);
    errno = EINVAL;
    return NULL;
nomem:
    bgn_close (&h);
    errno = ENOMEM;
    return NULL;
}

void bgn_close (bgn_t **hp)
{
    if (hp && *hp) {
        bgn_t *h = *hp;
        int saved = errno;
        /* rpcs still alive keep a pointer to h: detach them. */
        if (h->rpcs) {
            struct idmap_iter it;
            for (bgn_rpc_t **r = idmap_first (h->rpcs, &it); r;
                 r = idmap_next (&it))
                (*r)->h = NULL;
            idmap_destroy (&h->rpcs);
        }
        while (h->pool) {
            bgn_rpc_t *r = h->pool;
            h->pool = r->next_free;
            free (r);
        }
        zlistx_destroy (&h->events);
        free (h->payload);
        for (int i = 0; i < h->publen; i++) {
            bgn_rpc_t *r = h->pubq[(h->pubhead + i) % h->pubcap];
            r->h = NULL;
            bgn_rpc_destroy (&r);
        }
        free (h->pubq);
        free (h->pub_errstr);
        msg_destroy (&h->req);
        while (h->nspares > 0)
            msg_destroy (&h->spares[--h->nspares]);
        if (h->sock) {
            zmq_socket_monitor (h->sock, NULL, 0);
            zmq_close (h->sock);
        }
        if (h->mon)
            zmq_close (h->mon);
        if (h->ctx)
            zmq_ctx_term (h->ctx);
        free (h);
        *hp = NULL;
        errno = saved;
    }
}

int bgn_set_timeout (bgn_t *h, double seconds)
{
    if (!h || !(seconds > 0)) {
        errno = EINVAL;
        return -1;
    }
    h->timeout = seconds;
    return 0;
}

double bgn_get_timeout (bgn_t *h)
{
    return h->timeout;
}

/* 1 with errno ECONNRESET if the broker is gone. */
static int is_lost (bgn_t *h)
{
    if (!h->lost)
        return 0;
    errno = ECONNRESET;
    return 1;
}

static int send_msg (bgn_t *h, msg_t *msg)
{
    if (is_lost (h))
        return -1;
    return zmqutil_send_msg_packed (h->sock, NULL, 0, msg, 0);
}

/* Queue an item of n events; the oldest go when the queue is full. */
static void enqueue (bgn_t *h, struct evitem *it, uint32_t n)
{
    while (h->nevents + n > BGN_EVENT_QUEUE_MAX && zlistx_size (h->events)) {
        struct evitem *old = zlistx_first (h->events);
        uint32_t k = old->is_batch ? old->left : 1;
        h->event_drops += k;
        h->nevents -= k;
        zlistx_delete (h->events, zlistx_cursor (h->events));
    }
    zlistx_add_end (h->events, it);
    h->nevents += n;
}

static void enqueue_event (bgn_t *h, msg_t *msg)
{
    struct evitem *it = calloc (1, sizeof (*it));

    if (!it) {
        msg_destroy (&msg);
        h->event_drops++;
        return;
    }
    it->msg = msg;
    enqueue (h, it, 1);
}

/* Keep a message the program is done with, to decode a later one into
 * (a few, for responses that arrive together). */
static void recycle (bgn_t *h, msg_t **msg)
{
    if (h && h->nspares < SPARES_MAX) {
        h->spares[h->nspares++] = *msg;
        *msg = NULL;
    }
    else
        msg_destroy (msg);
}

static bgn_rpc_t *rpc_lookup (bgn_t *h, uint32_t matchtag)
{
    bgn_rpc_t **slot = idmap_get (h->rpcs, matchtag);
    return slot ? *slot : NULL;
}

/* Queue a response on its rpc: the slot first, the list after. */
static void rpc_enqueue (bgn_rpc_t *rpc, msg_t *msg)
{
    if (!rpc->first) {
        rpc->first = msg;
        return;
    }
    if (!rpc->more) {
        if (!(rpc->more = zlistx_new ())) {
            msg_destroy (&msg);
            return;
        }
        zlistx_set_destructor (rpc->more, msg_destructor);
    }
    zlistx_add_end (rpc->more, msg);
}

/* The oldest queued response, taken off the queue, or NULL. */
static msg_t *rpc_dequeue (bgn_rpc_t *rpc)
{
    msg_t *msg = rpc->first;

    rpc->first = NULL;
    if (rpc->more && zlistx_size (rpc->more) > 0) {
        zlistx_first (rpc->more);
        rpc->first = zlistx_detach (rpc->more, NULL);
    }
    return msg;
}

/* Sort one received message into its rpc or the event queue. */
static void dispatch (bgn_t *h, msg_t *msg)
{
    bgn_rpc_t *rpc;

    switch (msg_get_type (msg)) {
    case MSGTYPE_RESPONSE:
        if ((rpc = rpc_lookup (h, msg_get_matchtag (msg)))) {
            if (rpc->publish && !rpc->answered) {
                rpc->answered = 1;
                h->pub_unanswered -= rpc->count;
                h->pub_requests--;
            }
            rpc_enqueue (rpc, msg);
            return;
        }
        break;  /* late response to a destroyed rpc */
    case MSGTYPE_EVENT:
        enqueue_event (h, msg);
        return;
    default:
        break;
    }
    recycle (h, &msg);
}

/* A batch of events from the broker, checked, into the event queue as
 * it is (part moved in); its events are unpacked as they are taken. */
static void queue_batch (bgn_t *h, zmq_msg_t *part)
{
    struct evbatch_hdr hdr;
    struct evitem *it;

    if (evbatch_check (zmq_msg_data (part), zmq_msg_size (part), &hdr, NULL,
                       0) < 0) {
        h->malformed++;
        return;
    }
    if (!(it = calloc (1, sizeof (*it)))) {
        h->event_drops += hdr.count;
        return;
    }
    zmq_msg_init (&it->batch);
    zmq_msg_move (&it->batch, part);
    it->is_batch = 1;
    it->left = hdr.count;
    enqueue (h, it, hdr.count);
}

/* Take the oldest queued event: a message (*msg) or a record of a batch
 * (*rec, valid until the queue changes).  0 if there is none. */
static int take_event (bgn_t *h, msg_t **msg, struct evbatch_rec *rec)
{
    struct evitem *it;

    while ((it = zlistx_first (h->events))) {
        if (!it->is_batch) {
            *msg = it->msg;
            it->msg = NULL;
            h->nevents--;
            zlistx_delete (h->events, zlistx_cursor (h->events));
            return 1;
        }
        if (it->left > 0 && evbatch_next (zmq_msg_data (&it->batch),
                                          zmq_msg_size (&it->batch),
                                          &it->off, rec)) {
            *msg = NULL;
            it->left--;
            h->nevents--;
            return 1;
        }
        h->nevents -= it->left;
        zlistx_delete (h->events, zlistx_cursor (h->events));
    }
    return 0;
}

/* Drop the front batch if it is used up (after its last record was
 * copied out). */
static void trim_front (bgn_t *h)
{
    struct evitem *it = zlistx_first (h->events);

    if (it && it->is_batch && it->left == 0)
        zlistx_delete (h->events, zlistx_cursor (h->events));
}

/* Read every message that is ready.  Returns -1 only on socket errors. */
static int drain_socket (bgn_t *h)
{
    zmq_msg_t parts[ZMQUTIL_MAX_PARTS];

    for (;;) {
        int n = zmqutil_recv (h->sock, parts, ZMQUTIL_MAX_PARTS);
        msg_t *msg = NULL;

        if (n == 0 || (n == -1 && (errno == EINTR || errno == EAGAIN)))
            return 0;
        if (n == -1)
            return -1;
        if (n == 1 && evbatch_is_batch (zmq_msg_data (&parts[0]),
                                        zmq_msg_size (&parts[0]))) {
            queue_batch (h, &parts[0]);
            zmqutil_close (parts, n);
            continue;
        }
        if (n > 0) {
            msg_t **spare = h->nspares > 0 ? &h->spares[h->nspares - 1]
                                           : NULL;
            msg = zmqutil_decode_reuse (spare, parts, n, NULL, 0);
            if (spare && !*spare)
                h->nspares--;   /* consumed */
            zmqutil_close (parts, n);
        }
        if (!msg)
            h->malformed++;
        else
            dispatch (h, msg);
    }
}

/* Take in the monitor's events: 1 if the connection has just ended. */
static int monitor_read (bgn_t *h)
{
    zmq_msg_t parts[2];
    int ended = 0;

    for (;;) {
        int n = zmqutil_recv (h->mon, parts, 2);
        uint16_t event;

        if (n <= 0)
            return ended;
        if (zmq_msg_size (&parts[0]) >= sizeof (event)) {
            memcpy (&event, zmq_msg_data (&parts[0]), sizeof (event));
            if (event == ZMQ_EVENT_DISCONNECTED)
                ended = 1;
        }
        zmqutil_close (parts, n);
    }
}

/* Read every message that is ready, then whether the connection ended:
 * if it did, what the broker sent before it went is read first (libzmq
 * keeps it readable), then the handle is lost and the socket
 * disconnected for good (see the top of this file). */
static int drain (bgn_t *h)
{
    if (drain_socket (h) < 0)
        return -1;
    if (h->lost || !monitor_read (h))
        return 0;
    if (drain_socket (h) < 0)
        return -1;
    h->lost = 1;
    zmq_disconnect (h->sock, h->uri);
    return 0;
}

/* Wait until the socket (or its monitor) is readable or 'deadline'
 * (monotonic seconds, INFINITY for none) passes.  Returns 1 readable,
 * 0 timeout, -1 error.
 */
static int wait_readable (bgn_t *h, double deadline)
{
    zmq_pollitem_t item[2] = {
        { .socket = h->sock, .events = ZMQ_POLLIN },
        { .socket = h->mon, .events = ZMQ_POLLIN },
    };
    long ms;
    double left;
    int rc;

    if (isinf (deadline))
        ms = -1;
    else {
        left = deadline - monotime_now ();
        if (left <= 0)
            return 0;
        ms = (long)ceil (left * 1000.);
    }
    rc = zmq_poll (item, 2, ms);
    if (rc < 0)
        return errno == EINTR ? 0 : -1;
    return rc > 0;
}

/* An rpc from the pool, or a new one; zeroed. */
static bgn_rpc_t *rpc_get (bgn_t *h)
{
    bgn_rpc_t *rpc = h->pool;

    if (!rpc)
        return calloc (1, sizeof (*rpc));
    h->pool = rpc->next_free;
    h->npool--;
    memset (rpc, 0, sizeof (*rpc));
    return rpc;
}

/* Refill the handle's request message with a payload already known to
 * be a JSON object (or none); 'flags' replace the previous request's
 * (the content flags stay).  -1 with EINVAL for a bad topic. */
static int request_refill (bgn_t *h, const char *topic, uint32_t nodeid,
                           const char *payload, size_t len, int flags)
{
    msg_t *msg = h->req;
    uint8_t content = MSGFLAG_TOPIC | MSGFLAG_PAYLOAD | MSGFLAG_ROUTE;

    if (msg_set_topic (msg, topic) < 0
        || msg_set_payload (msg, payload, len) < 0
        || msg_set_nodeid (msg, nodeid) < 0
        || msg_set_flags (msg, (uint8_t)((msg_get_flags (msg) & content)
                                         | flags)) < 0) {
        errno = EINVAL;
        return -1;
    }
    return 0;
}

/* Refill the handle's request message.  -1 with EINVAL for a bad topic
 * or a payload that is not a JSON object. */
static int request_fill (bgn_t *h, const char *topic, uint32_t nodeid,
                         const char *payload, int flags)
{
    size_t len = payload ? strlen (payload) : 0;

    if (payload && msg_json_check (payload, len, NULL, 0) < 0) {
        errno = EINVAL;
        return -1;
    }
    return request_refill (h, topic, nodeid, payload, len, flags);
}

/* Send request msg (the caller keeps it) as a new rpc; flags as set in
 * msg. */
static bgn_rpc_t *rpc_send (bgn_t *h, msg_t *msg, int flags)
{
    bgn_rpc_t *rpc;

    if (!(rpc = rpc_get (h)))
        return NULL;
    rpc->h = h;
    rpc->flags = flags;
    rpc->deadline = monotime_now () + h->timeout;
    if (!(flags & MSGFLAG_NORESPONSE)) {
        bgn_rpc_t **slot;
        rpc->matchtag = h->next_matchtag++;
        if (h->next_matchtag == 0)
            h->next_matchtag = 1;
        if (!(slot = idmap_put (h->rpcs, rpc->matchtag, NULL))) {
            bgn_rpc_destroy (&rpc);
            errno = ENOMEM;
            return NULL;
        }
        *slot = rpc;
        rpc->tracked = 1;
    }
    msg_set_matchtag (msg, rpc->matchtag);
    if (send_msg (h, msg) < 0) {
        int saved = errno;
        bgn_rpc_destroy (&rpc);
        errno = saved;
        return NULL;
    }
    return rpc;
}

bgn_rpc_t *bgn_rpc (bgn_t *h, const char *topic, uint32_t nodeid,
                    const char *payload, int flags)
{
    if (!h || !topic || (flags & ~(MSGFLAG_NORESPONSE | MSGFLAG_STREAMING))) {
        errno = EINVAL;
        return NULL;
    }
    if (request_fill (h, topic, nodeid, payload, flags) < 0)
        return NULL;
    return rpc_send (h, h->req, flags);
}

static int response_result (bgn_rpc_t *rpc, const char **payload)
{
    int errnum = 0;
    const char *s = msg_get_payload (rpc->current, NULL);

    msg_get_errnum (rpc->current, &errnum);
    free (rpc->errstr);
    rpc->errstr = NULL;
    if (errnum) {
        if (s && *s)
            rpc->errstr = strdup (s);
        errno = errnum;
        return -1;
    }
    if (payload)
        *payload = s;
    return 0;
}

int bgn_rpc_get (bgn_rpc_t *rpc, const char **payload)
{
    if (!rpc || !rpc->h || (rpc->flags & MSGFLAG_NORESPONSE)) {
        errno = EINVAL;
        return -1;
    }
    while (!rpc->current) {
        if ((rpc->current = rpc_dequeue (rpc)))
            break;
        if (drain (rpc->h) < 0)
            return -1;
        if (rpc->first)
            continue;
        if (is_lost (rpc->h))
            return -1;
        int rc = wait_readable (rpc->h, rpc->deadline);
        if (rc < 0)
            return -1;
        if (rc == 0 && monotime_now () >= rpc->deadline) {
            errno = ETIMEDOUT;
            return -1;
        }
    }
    return response_result (rpc, payload);
}

void bgn_rpc_next (bgn_rpc_t *rpc)
{
    if (rpc && rpc->current)
        recycle (rpc->h, &rpc->current);
}

void bgn_rpc_set_timeout (bgn_rpc_t *rpc, double seconds)
{
    if (rpc)
        rpc->deadline = isinf (seconds) ? INFINITY : monotime_now () + seconds;
}

const char *bgn_rpc_error (bgn_rpc_t *rpc)
{
    return rpc ? rpc->errstr : NULL;
}

const msg_t *bgn_rpc_response (bgn_rpc_t *rpc)
{
    return rpc ? rpc->current : NULL;
}

void bgn_rpc_destroy (bgn_rpc_t **rpcp)
{
    if (rpcp && *rpcp) {
        bgn_rpc_t *rpc = *rpcp;
        bgn_t *h = rpc->h;
        int saved = errno;
        /* the matchtag may have wrapped round to a newer rpc */
        if (h && rpc->tracked && rpc_lookup (h, rpc->matchtag) == rpc)
            idmap_delete (h->rpcs, rpc->matchtag);
        zlistx_destroy (&rpc->more);
        msg_destroy (&rpc->first);
        if (rpc->current)
            recycle (h, &rpc->current);
        free (rpc->errstr);
        if (h && h->npool < RPC_POOL_MAX) {
            rpc->next_free = h->pool;
            h->pool = rpc;
            h->npool++;
        }
        else
            free (rpc);
        *rpcp = NULL;
        errno = saved;
    }
}

static int simple_rpc (bgn_t *h, const char *topic, uint32_t nodeid,
                       json_t *o, json_t **result)
{
    char *s = json_dumps (o, JSON_COMPACT);
    bgn_rpc_t *rpc;
    const char *payload = NULL;
    int rc = -1;

    json_decref (o);
    if (!s) {
        errno = ENOMEM;
        return -1;
    }
    rpc = bgn_rpc (h, topic, nodeid, s, 0);
    free (s);
    if (rpc && bgn_rpc_get (rpc, &payload) == 0) {
        rc = 0;
        if (result && !(*result = payload ? json_loads (payload, 0, NULL)
                                          : json_object ())) {
            errno = EPROTO;
            rc = -1;
        }
    }
    bgn_rpc_destroy (&rpc);
    return rc;
}

int bgn_event_subscribe (bgn_t *h, const char *prefix)
{
    if (!h || !prefix) {
        errno = EINVAL;
        return -1;
    }
    return simple_rpc (h, "broker.subscribe", NODEID_ANY,
                       json_pack ("{s:s}", "topic", prefix), NULL);
}

int bgn_event_unsubscribe (bgn_t *h, const char *prefix)
{
    if (!h || !prefix) {
        errno = EINVAL;
        return -1;
    }
    return simple_rpc (h, "broker.unsubscribe", NODEID_ANY,
                       json_pack ("{s:s}", "topic", prefix), NULL);
}

/* Wait until an event is queued or the deadline passes: 0, or -1 with
 * errno (ETIMEDOUT). */
static int wait_event (bgn_t *h, double timeout)
{
    double deadline = timeout < 0 ? INFINITY : monotime_now () + timeout;

    for (;;) {
        if (h->nevents > 0)
            return 0;
        if (drain (h) < 0)
            return -1;
        if (h->nevents > 0)
            return 0;
        if (is_lost (h))
            return -1;
        int rc = wait_readable (h, deadline);
        if (rc < 0)
            return -1;
        if (rc == 0 && monotime_now () >= deadline) {
            errno = ETIMEDOUT;
            return -1;
        }
    }
}

msg_t *bgn_event_recv (bgn_t *h, double timeout)
{
    struct evbatch_rec rec;
    msg_t *msg = NULL;

    if (!h) {
        errno = EINVAL;
        return NULL;
    }
    while (!msg) {
        if (wait_event (h, timeout) < 0)
            return NULL;
        if (take_event (h, &msg, &rec) && !msg) {
            if (!(msg = evbatch_rec_msg (&rec)))
                h->malformed++;
            trim_front (h);
        }
    }
    return msg;
}

int bgn_event_next (bgn_t *h, struct bgn_event *ev, double timeout)
{
    struct evbatch_rec rec;
    msg_t *msg = NULL;
    const char *topic, *payload;
    size_t tlen, plen = 0;

    if (!h || !ev) {
        errno = EINVAL;
        return -1;
    }
    if (wait_event (h, timeout) < 0 || !take_event (h, &msg, &rec))
        return -1;
    if (msg) {
        topic = msg_get_topic (msg);
        tlen = topic ? strlen (topic) : 0;
        payload = msg_get_payload (msg, &plen);
        ev->seq = 0;
        msg_get_seq (msg, &ev->seq);
        ev->publisher = msg_get_matchtag (msg);
        ev->userid = msg_get_userid (msg);
    }
    else {
        topic = rec.topic;
        tlen = rec.topic_len;
        payload = rec.payload;
        plen = rec.payload_len;
        ev->seq = rec.seq;
        ev->publisher = rec.publisher;
        ev->userid = rec.userid;
    }
    memcpy (h->topic, topic ? topic : "", tlen);
    h->topic[tlen] = '\0';
    ev->topic = h->topic;
    ev->payload = NULL;
    ev->payload_len = plen;
    if (payload) {
        if (plen + 1 > h->payload_cap) {
            char *p = realloc (h->payload, plen + 1);
            if (!p) {
                msg_destroy (&msg);
                return -1;
            }
            h->payload = p;
            h->payload_cap = plen + 1;
        }
        memcpy (h->payload, payload, plen);
        h->payload[plen] = '\0';
        ev->payload = h->payload;
    }
    msg_destroy (&msg);
    trim_front (h);
    return 0;
}

int bgn_event_publish (bgn_t *h, const char *topic, const char *payload,
                       uint32_t *seq)
{
    json_t *o, *p = NULL, *result = NULL;
    json_int_t s = 0;

    if (!h || !topic) {
        errno = EINVAL;
        return -1;
    }
    if (payload && !(p = json_loads (payload, 0, NULL))) {
        errno = EINVAL;
        return -1;
    }
    if (!(o = json_pack ("{s:s}", "topic", topic))) {
        json_decref (p);
        errno = ENOMEM;
        return -1;
    }
    if (p)
        json_object_set_new (o, "payload", p);
    if (simple_rpc (h, "event.pub", 0, o, &result) < 0)
        return -1;
    json_unpack (result, "{s:I}", "seq", &s);
    json_decref (result);
    if (seq)
        *seq = (uint32_t)s;
    return 0;
}

uint64_t bgn_event_drops (bgn_t *h)
{
    return h->event_drops;
}

uint64_t bgn_malformed_drops (bgn_t *h)
{
    return h->malformed;
}

const char *bgn_get_uri (bgn_t *h)
{
    return h ? h->uri : NULL;
}

double bgn_get_broker_timeout (bgn_t *h)
{
    return h ? h->broker_timeout : 0;
}

int bgn_broker_lost (bgn_t *h)
{
    if (!h)
        return 0;
    drain (h);
    return h->lost;
}

/* ---- asynchronous publishing --------------------------------------------- */

int bgn_event_set_window (bgn_t *h, int window)
{
    if (!h || window < 1) {
        errno = EINVAL;
        return -1;
    }
    h->window = window;
    return 0;
}

int bgn_event_publish_pending (bgn_t *h)
{
    return h ? h->pub_events : 0;
}

const char *bgn_event_publish_error (bgn_t *h)
{
    return h ? h->pub_errstr : NULL;
}

static bgn_rpc_t *pub_at (bgn_t *h, int i)
{
    return h->pubq[(h->pubhead + i) % h->pubcap];
}

static int pub_push (bgn_t *h, bgn_rpc_t *rpc, int count)
{
    if (h->publen == h->pubcap) {
        int cap = h->pubcap ? h->pubcap * 2 : 64;
        bgn_rpc_t **q = malloc (cap * sizeof (*q));
        if (!q)
            return -1;
        for (int i = 0; i < h->publen; i++)
            q[i] = pub_at (h, i);
        free (h->pubq);
        h->pubq = q;
        h->pubcap = cap;
        h->pubhead = 0;
    }
    h->pubq[(h->pubhead + h->publen++) % h->pubcap] = rpc;
    rpc->publish = 1;
    rpc->count = count;
    h->pub_unanswered += count;
    h->pub_requests++;
    h->pub_events += count;
    return 0;
}

static void pub_pop (bgn_t *h)
{
    bgn_rpc_t *rpc = pub_at (h, 0);

    if (!rpc->answered) {
        h->pub_unanswered -= rpc->count;
        h->pub_requests--;
    }
    h->pub_events -= rpc->count - rpc->taken;
    h->pubhead = (h->pubhead + 1) % h->pubcap;
    h->publen--;
    bgn_rpc_destroy (&rpc);
}

/* The oldest publish still waiting for its answer. */
static bgn_rpc_t *oldest_unanswered (bgn_t *h)
{
    for (int i = 0; i < h->publen; i++)
        if (!pub_at (h, i)->answered)
            return pub_at (h, i);
    return NULL;
}

/* JSON string of a topic (printable ASCII: only quote and backslash need
 * escaping; msg rules refuse anything else at rank 0). */
static int json_topic (const char *topic, char *buf, size_t len)
{
    size_t o = 0;

    if (o + 1 >= len)
        return -1;
    buf[o++] = '"';
    for (const char *c = topic; *c; c++) {
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            return -1;
        if (o + 3 >= len)
            return -1;
        if (*c == '"' || *c == '\\')
            buf[o++] = '\\';
        buf[o++] = *c;
    }
    buf[o++] = '"';
    buf[o] = '\0';
    return 0;
}

/* Append s to the growing request text. */
static int append (char **buf, size_t *len, size_t *cap, const char *s)
{
    size_t n = strlen (s);

    if (*len + n + 1 > *cap) {
        size_t c = *cap ? *cap : 256;
        char *p;
        while (c < *len + n + 1)
            c *= 2;
        if (!(p = realloc (*buf, c)))
            return -1;
        *buf = p;
        *cap = c;
    }
    memcpy (*buf + *len, s, n + 1);
    *len += n;
    return 0;
}

/* {"topic":T,"payload":P} of one event, appended; EINVAL if bad. */
static int append_event (char **buf, size_t *len, size_t *cap,
                         const char *topic, const char *payload)
{
    char qtopic[2 * MSG_MAX_TOPIC + 4];
    json_t *p;

    if (!topic || !*topic || strlen (topic) > MSG_MAX_TOPIC
        || json_topic (topic, qtopic, sizeof (qtopic)) < 0)
        goto inval;
    if (payload) {
        if (!(p = json_loads (payload, 0, NULL)) || !json_is_object (p)) {
            json_decref (p);
            goto inval;
        }
        json_decref (p);
    }
    if (append (buf, len, cap, "{\"topic\":") < 0
        || append (buf, len, cap, qtopic) < 0
        || append (buf, len, cap, ",\"payload\":") < 0
        || append (buf, len, cap, payload ? payload : "{}") < 0
        || append (buf, len, cap, "}") < 0) {
        errno = ENOMEM;
        return -1;
    }
    return 0;
inval:
    errno = EINVAL;
    return -1;
}

/* Wait (bounded) until n more events, and one more request, fit in the
 * window.  Requests are bounded too: the broker drops what does not fit
 * in its queue toward us (ZeroMQ's high-water mark, 1000 messages), so
 * never more answers may be on their way than that. */
static int window_wait (bgn_t *h, int n)
{
    while (h->pub_unanswered > 0
           && (h->pub_unanswered + n > h->window
               || h->pub_requests >= BGN_PUBLISH_REQUESTS)) {
        bgn_rpc_t *old = oldest_unanswered (h);
        if (drain (h) < 0)
            return -1;
        if (old->answered)
            continue;
        if (is_lost (h))
            return -1;
        int rc = wait_readable (h, old->deadline);
        if (rc < 0)
            return -1;
        if (rc == 0 && monotime_now () >= old->deadline) {
            errno = ETIMEDOUT;
            return -1;
        }
    }
    return 0;
}

int bgn_event_publish_many (bgn_t *h, int n, const char *const *topics,
                            const char *const *payloads)
{
    char *s = NULL;
    size_t len = 0, cap = 0;
    msg_t *msg = NULL;
    bgn_rpc_t *rpc;

    if (!h || n < 1 || n > BGN_PUBLISH_MANY_MAX || !topics) {
        errno = EINVAL;
        return -1;
    }
    if (append (&s, &len, &cap, n > 1 ? "{\"events\":[" : "") < 0)
        goto nomem;
    for (int i = 0; i < n; i++) {
        if ((i > 0 && append (&s, &len, &cap, ",") < 0)
            || append_event (&s, &len, &cap, topics[i],
                             payloads ? payloads[i] : NULL) < 0)
            goto error;
    }
    if (n > 1 && append (&s, &len, &cap, "]}") < 0)
        goto nomem;
    if (window_wait (h, n) < 0)
        goto error;
    /* Checked piece by piece above: no second parse of the request.  The
     * handle's request message is refilled, as for any rpc. */
    msg = h->req;
    if (request_refill (h, "event.pub", 0, s, len, 0) < 0)
        goto error;
    free (s);
    if (!(rpc = rpc_send (h, msg, 0)))
        return -1;
    if (pub_push (h, rpc, n) < 0) {
        bgn_rpc_destroy (&rpc);
        errno = ENOMEM;
        return -1;
    }
    return 0;
nomem:
    errno = ENOMEM;
error:
    free (s);
    return -1;
}

int bgn_event_publish_async (bgn_t *h, const char *topic, const char *payload)
{
    return bgn_event_publish_many (h, 1, &topic, &payload);
}

int bgn_event_publish_get (bgn_t *h, uint32_t *seq, double timeout)
{
    const char *payload = NULL;
    bgn_rpc_t *rpc;
    double until;
    int rc;

    if (!h) {
        errno = EINVAL;
        return -1;
    }
    if (h->publen == 0) {
        errno = ENOENT;
        return -1;
    }
    rpc = pub_at (h, 0);
    until = monotime_now () + (timeout < 0 ? h->timeout : timeout);
    for (;;) {
        if (drain (h) < 0)
            return -1;
        if (rpc->answered || h->lost || monotime_now () >= rpc->deadline)
            break;
        if (monotime_now () >= until) {
            errno = EINPROGRESS;    /* not answered yet: still out */
            return -1;
        }
        rc = wait_readable (h, until < rpc->deadline ? until : rpc->deadline);
        if (rc < 0)
            return -1;
    }
    if (rpc->taken == 0) {
        free (h->pub_errstr);
        h->pub_errstr = NULL;
    }
    if (!rpc->answered) {
        /* no answer by its deadline, or none can come: each of its
         * events fails so */
        rpc->answered = 1;
        rpc->fail_errno = h->lost ? ECONNRESET : ETIMEDOUT;
        h->pub_unanswered -= rpc->count;
        h->pub_requests--;
    }
    /* The answer covers rpc->count events: one of them per call. */
    if (rpc->fail_errno) {
        rc = -1;
        errno = rpc->fail_errno;
    }
    else
        rc = bgn_rpc_get (rpc, &payload);
    if (rc == 0 && rpc->taken == 0) {
        const char *p = payload ? strstr (payload, "\"seq\":") : NULL;
        rpc->first_seq = p ? (uint32_t)strtoul (p + 6, NULL, 10) : 0;
    }
    else if (rc < 0 && rpc->taken == 0 && bgn_rpc_error (rpc))
        h->pub_errstr = strdup (bgn_rpc_error (rpc));
    int saved = errno;
    if (rc == 0 && seq)
        *seq = rpc->first_seq + (uint32_t)rpc->taken;
    rpc->taken++;
    h->pub_events--;
    if (rpc->taken == rpc->count)
        pub_pop (h);
    errno = saved;
    return rc;
}

/* Something for the caller: a queued event or an answered publish. */
static int has_news (bgn_t *h)
{
    return h->nevents > 0 || h->lost
           || (h->publen > 0 && pub_at (h, 0)->answered);
}

int bgn_poll (bgn_t **handles, int n, double timeout, int *ready)
{
    double deadline = timeout < 0 ? INFINITY : monotime_now () + timeout;
    zmq_pollitem_t *items;
    int count;

    if (!handles || n < 1) {
        errno = EINVAL;
        return -1;
    }
    /* each handle's socket and its monitor */
    if (!(items = calloc (2 * n, sizeof (*items))))
        return -1;
    for (;;) {
        count = 0;
        for (int i = 0; i < n; i++) {
            int r = drain (handles[i]) == 0 && has_news (handles[i]);
            if (ready)
                ready[i] = r;
            count += r;
            items[2 * i].socket = handles[i]->sock;
            items[2 * i].events = ZMQ_POLLIN;
            items[2 * i + 1].socket = handles[i]->mon;
            items[2 * i + 1].events = ZMQ_POLLIN;
        }
        if (count > 0)
            break;
        double left = deadline - monotime_now ();
        if (left <= 0)
            break;
        long ms = isinf (left) ? -1 : (long)ceil (left * 1000.);
        if (zmq_poll (items, 2 * n, ms) < 0 && errno != EINTR) {
            count = -1;
            break;
        }
    }
    free (items);
    return count;
}
