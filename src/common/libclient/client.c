/* client.c: connection to a broker, RPCs and events (see client.h).
 *
 * One DEALER socket per handle, identity a fresh uuid.  Everything that
 * arrives is sorted as it is read: responses into their rpc's queue (by
 * matchtag), events into the handle's event queue.  Waiting is poll() on
 * the socket with the earliest relevant deadline, so a wait always ends.
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
#include "src/common/libutil/monotime.h"
#include "src/common/libzmqutil/multipart.h"


struct bgn_handle {
    void *ctx;
    void *sock;
    char id[40];
    uint32_t next_matchtag;
    double timeout;
    zhashx_t *rpcs;            /* matchtag (as key string) -> rpc */
    zlistx_t *events;          /* msg_t *, oldest first */
    uint64_t event_drops;
    uint64_t malformed;
};

struct bgn_rpc {
    bgn_t *h;
    uint32_t matchtag;
    char key[16];
    double deadline;
    int flags;
    zlistx_t *responses;       /* msg_t * */
    msg_t *current;            /* the response bgn_rpc_get returned */
    char *errstr;
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
    if (!(h->rpcs = zhashx_new ()) || !(h->events = zlistx_new ()))
        goto nomem;
    zlistx_set_destructor (h->events, msg_destructor);
    uuid_generate (u);
    uuid_unparse_lower (u, h->id);
    /* A private context: a library must not share the program's. */
    if (!(h->ctx = zmq_ctx_new ()) || !(h->sock = zmq_socket (h->ctx, ZMQ_DEALER)))
        goto zerror;
    zmq_setsockopt (h->sock, ZMQ_ROUTING_ID, h->id, strlen (h->id));
    zmq_setsockopt (h->sock, ZMQ_LINGER, &linger, sizeof (linger));
    int64_t maxmsg = ZMQUTIL_MAX_MSG_SIZE;
    zmq_setsockopt (h->sock, ZMQ_MAXMSGSIZE, &maxmsg, sizeof (maxmsg));
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
            for (bgn_rpc_t *r = zhashx_first (h->rpcs); r;
                 r = zhashx_next (h->rpcs))
                r->h = NULL;
            zhashx_destroy (&h->rpcs);
        }
        zlistx_destroy (&h->events);
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

/* Sort one received message into its rpc or the event queue. */
static void dispatch (bgn_t *h, msg_t *msg)
{
    char key[16];
    bgn_rpc_t *rpc;

    switch (msg_get_type (msg)) {
    case MSGTYPE_RESPONSE:
        snprintf (key, sizeof (key), "%u", (unsigned)msg_get_matchtag (msg));
        if ((rpc = zhashx_lookup (h->rpcs, key))) {
            zlistx_add_end (rpc->responses, msg);
            return;
        }
        break;  /* late response to a destroyed rpc */
    case MSGTYPE_EVENT:
        if (zlistx_size (h->events) >= BGN_EVENT_QUEUE_MAX) {
            msg_t *old = zlistx_first (h->events);
            (void)old;
            zlistx_delete (h->events, zlistx_cursor (h->events));
            h->event_drops++;
        }
        zlistx_add_end (h->events, msg);
        return;
    default:
        break;
    }
    msg_destroy (&msg);
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
            msg = zmqutil_decode (parts, n, NULL, 0);
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

bgn_rpc_t *bgn_rpc (bgn_t *h, const char *topic, uint32_t nodeid,
                    const char *payload, int flags)
{
    bgn_rpc_t *rpc;
    msg_t *msg;

    if (!h || !topic || (flags & ~(MSGFLAG_NORESPONSE | MSGFLAG_STREAMING))) {
        errno = EINVAL;
        return NULL;
    }
    if (!(msg = msg_request_create (topic, nodeid, payload)))
        return NULL;
    if (flags && msg_set_flags (msg, msg_get_flags (msg) | flags) < 0)
        goto error;
    if (!(rpc = calloc (1, sizeof (*rpc))))
        goto error;
    rpc->h = h;
    rpc->flags = flags;
    rpc->deadline = monotime_now () + h->timeout;
    if (!(rpc->responses = zlistx_new ())) {
        free (rpc);
        goto error;
    }
    zlistx_set_destructor (rpc->responses, msg_destructor);
    if (!(flags & MSGFLAG_NORESPONSE)) {
        rpc->matchtag = h->next_matchtag++;
        if (h->next_matchtag == 0)
            h->next_matchtag = 1;
        msg_set_matchtag (msg, rpc->matchtag);
        snprintf (rpc->key, sizeof (rpc->key), "%u", (unsigned)rpc->matchtag);
        zhashx_update (h->rpcs, rpc->key, rpc);
    }
    if (send_msg (h, msg) < 0) {
        int saved = errno;
        bgn_rpc_destroy (&rpc);
        msg_destroy (&msg);
        errno = saved;
        return NULL;
    }
    msg_destroy (&msg);
    return rpc;
error:
    msg_destroy (&msg);
    return NULL;
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
        msg_t *m = zlistx_first (rpc->responses);
        if (m) {
            rpc->current = zlistx_detach (rpc->responses, NULL);
            break;
        }
        if (drain (rpc->h) < 0)
            return -1;
        if (zlistx_size (rpc->responses) > 0)
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
    if (rpc)
        msg_destroy (&rpc->current);
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
        int saved = errno;
        if (rpc->h && rpc->key[0])
            zhashx_delete (rpc->h->rpcs, rpc->key);
        zlistx_destroy (&rpc->responses);
        msg_destroy (&rpc->current);
        free (rpc->errstr);
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
