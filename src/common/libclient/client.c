/* client.c: connection to a broker, RPCs and events (see client.h).
 *
 * One DEALER socket per handle, identity a fresh uuid.  Everything that
 * arrives is sorted as it is read: responses into their rpc's queue (by
 * matchtag), events into the handle's event queue.  Waiting is poll() on
 * the socket with the earliest relevant deadline, so a wait always ends.
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
#include <sys/stat.h>
#include <time.h>
#include <uuid/uuid.h>
#include <zmq.h>
#include <czmq.h>
#include <jansson.h>

#include "client.h"
#include "src/common/libutil/idmap.h"
#include "src/common/libutil/monotime.h"
#include "src/common/libzmqutil/multipart.h"

#define RPC_POOL_MAX 256        /* destroyed rpcs kept for reuse */
#define SPARES_MAX 16           /* finished messages kept to decode into */

struct bgn_handle {
    void *ctx;
    void *sock;
    char id[40];
    uint32_t next_matchtag;
    double timeout;
    struct idmap *rpcs;        /* matchtag -> bgn_rpc_t * */
    zlistx_t *events;          /* msg_t *, oldest first */
    uint64_t event_drops;
    uint64_t malformed;
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
    bgn_rpc_t *next_free;
};

static void msg_destructor (void **item)
{
    msg_destroy ((msg_t **)item);
}

bgn_t *bgn_open (const char *uri, char *errbuf, size_t errlen)
{
    bgn_t *h;
    char endpoint[4096];
    const char *path;
    struct stat st;
    uuid_t u;
    int linger = 0;
    const char *env;

    if (!uri && !(uri = getenv ("BGN_URI"))) {
        snprintf (errbuf, errlen,
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
        snprintf (errbuf, errlen, "%s: only ipc:// broker URIs are supported",
                  uri);
        errno = EINVAL;
        return NULL;
    }
    else
        path = uri;
    if (stat (path, &st) < 0 || !S_ISSOCK (st.st_mode)) {
        snprintf (errbuf, errlen, "no broker at %s: %s", path,
                  errno ? strerror (errno) : "not a socket");
        errno = ENOENT;
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
    if (!(h->rpcs = idmap_create (sizeof (bgn_rpc_t *)))
        || !(h->events = zlistx_new ())
        || !(h->req = msg_create (MSGTYPE_REQUEST)))
        goto nomem;
    zlistx_set_destructor (h->events, msg_destructor);
    uuid_generate (u);
    uuid_unparse_lower (u, h->id);
    /* A private context: a library must not share the program's. */
    if (!(h->ctx = zmq_ctx_new ()) || !(h->sock = zmq_socket (h->ctx, ZMQ_DEALER)))
        goto zerror;
    zmq_setsockopt (h->sock, ZMQ_ROUTING_ID, h->id, strlen (h->id));
    zmq_setsockopt (h->sock, ZMQ_LINGER, &linger, sizeof (linger));
    if (zmq_connect (h->sock, endpoint) < 0)
        goto zerror;
    return h;
zerror:
    snprintf (errbuf, errlen, "connect %s: %s", endpoint, zmq_strerror (errno));
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
        msg_destroy (&h->req);
        while (h->nspares > 0)
            msg_destroy (&h->spares[--h->nspares]);
        if (h->sock)
            zmq_close (h->sock);
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

static int send_msg (bgn_t *h, msg_t *msg)
{
    return zmqutil_send_msg (h->sock, NULL, msg, 0);
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
            rpc_enqueue (rpc, msg);
            return;
        }
        break;  /* late response to a destroyed rpc */
    case MSGTYPE_EVENT:
        if (zlistx_size (h->events) >= BGN_EVENT_QUEUE_MAX) {
            zlistx_first (h->events);
            zlistx_delete (h->events, zlistx_cursor (h->events));
            h->event_drops++;
        }
        zlistx_add_end (h->events, msg);
        return;
    default:
        break;
    }
    recycle (h, &msg);
}

/* Read every message that is ready.  Returns -1 only on socket errors. */
static int drain (bgn_t *h)
{
    zmq_msg_t parts[ZMQUTIL_MAX_PARTS];

    for (;;) {
        int n = zmqutil_recv (h->sock, parts, ZMQUTIL_MAX_PARTS);
        msg_t *msg = NULL;

        if (n == 0 || (n == -1 && (errno == EINTR || errno == EAGAIN)))
            return 0;
        if (n == -1)
            return -1;
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

/* Wait until the socket is readable or 'deadline' (monotonic seconds,
 * INFINITY for none) passes.  Returns 1 readable, 0 timeout, -1 error.
 */
static int wait_readable (bgn_t *h, double deadline)
{
    zmq_pollitem_t item = { .socket = h->sock, .events = ZMQ_POLLIN };
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
    rc = zmq_poll (&item, 1, ms);
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

/* Refill the handle's request message.  -1 with EINVAL for a bad topic
 * or a payload that is not a JSON object. */
static int request_fill (bgn_t *h, const char *topic, uint32_t nodeid,
                         const char *payload, int flags)
{
    msg_t *msg = h->req;
    size_t len = payload ? strlen (payload) : 0;
    uint8_t content = MSGFLAG_TOPIC | MSGFLAG_PAYLOAD | MSGFLAG_ROUTE;

    if ((payload && msg_json_check (payload, len, NULL, 0) < 0)
        || msg_set_topic (msg, topic) < 0
        || msg_set_payload (msg, payload, len) < 0) {
        errno = EINVAL;
        return -1;
    }
    msg_set_nodeid (msg, nodeid);
    return msg_set_flags (msg, (uint8_t)((msg_get_flags (msg) & content)
                                         | flags));
}

bgn_rpc_t *bgn_rpc (bgn_t *h, const char *topic, uint32_t nodeid,
                    const char *payload, int flags)
{
    bgn_rpc_t *rpc;

    if (!h || !topic || (flags & ~(MSGFLAG_NORESPONSE | MSGFLAG_STREAMING))) {
        errno = EINVAL;
        return NULL;
    }
    if (request_fill (h, topic, nodeid, payload, flags) < 0)
        return NULL;
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
    msg_set_matchtag (h->req, rpc->matchtag);
    if (send_msg (h, h->req) < 0) {
        int saved = errno;
        bgn_rpc_destroy (&rpc);
        errno = saved;
        return NULL;
    }
    return rpc;
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

msg_t *bgn_event_recv (bgn_t *h, double timeout)
{
    double deadline = timeout < 0 ? INFINITY : monotime_now () + timeout;

    for (;;) {
        if (zlistx_size (h->events) > 0) {
            zlistx_first (h->events);
            return zlistx_detach (h->events, NULL);
        }
        if (drain (h) < 0)
            return NULL;
        if (zlistx_size (h->events) > 0)
            continue;
        int rc = wait_readable (h, deadline);
        if (rc < 0)
            return NULL;
        if (rc == 0 && monotime_now () >= deadline) {
            errno = ETIMEDOUT;
            return NULL;
        }
    }
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
