/* message.c: the Flux-style message codec declared in message.h.
 *
 * A msg_t is one heap block holding the proto fields and the whole route
 * stack inline (a packed byte buffer plus offsets), so building, copying
 * and routing a message costs at most three allocations: the block, the
 * topic and the payload.  The route stack is stored bottom first (index 0
 * is the original sender), so push and pop only touch the end of the
 * buffer; the wire order (top first) is produced by msg_encode.
 *
 * msg_decode is the trust boundary: every frame comes from a peer or a
 * client, so it validates everything the header promises before it
 * allocates, and never reads past a frame's stated size.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "message.h"

/* Content flags are derived from what the message holds, never stored. */
#define CONTENT_FLAGS (MSGFLAG_TOPIC | MSGFLAG_PAYLOAD | MSGFLAG_ROUTE)

/* Room for every route id plus its NUL terminator. */
#define ROUTE_BUFSIZE (MSG_MAX_ROUTES * (MSG_MAX_ROUTEID + 1))

struct msg {
    uint8_t type;
    uint8_t flags;          /* non-content flags only */
    int8_t nroutes;         /* -1: routing disabled */
    uint16_t rused;         /* bytes used in rbuf */
    uint16_t topic_len;
    uint32_t userid;
    uint32_t rolemask;
    uint32_t aux1;
    uint32_t aux2;
    char *topic;            /* NULL: no topic */
    char *payload;          /* NULL: no payload; always NUL-terminated */
    size_t payload_len;
    uint8_t proto[MSG_PROTO_SIZE]; /* filled by msg_encode */
    uint16_t roff[MSG_MAX_ROUTES]; /* route i starts at rbuf + roff[i] */
    uint8_t rlen[MSG_MAX_ROUTES];
    char rbuf[ROUTE_BUFSIZE];
};

/* One-line reason for a decode failure; errbuf is optional. */
static void seterr (char *errbuf, size_t errlen, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

static void seterr (char *errbuf, size_t errlen, const char *fmt, ...)
{
    if (errbuf && errlen > 0) {
        va_list ap;
        va_start (ap, fmt);
        vsnprintf (errbuf, errlen, fmt, ap);
        va_end (ap);
        /* jansson quotes the offending input; keep the reason one
         * printable line whatever the peer sent.
         */
        for (char *p = errbuf; *p; p++) {
            if ((unsigned char)*p < 0x20 || (unsigned char)*p == 0x7f)
                *p = '?';
        }
    }
}

static bool type_valid (int type)
{
    return type == MSGTYPE_REQUEST || type == MSGTYPE_RESPONSE
        || type == MSGTYPE_EVENT || type == MSGTYPE_CONTROL;
}

/* Topics and route ids are printable ASCII (0x20..0x7e): this keeps them
 * safe to log and to compare byte-wise, and rules out NUL and controls.
 */
static bool printable (const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++) {
        if (p[i] < 0x20 || p[i] > 0x7e)
            return false;
    }
    return true;
}

static bool topic_valid (const void *data, size_t len)
{
    return len >= 1 && len <= MSG_MAX_TOPIC && printable (data, len);
}

static bool routeid_valid (const void *data, size_t len)
{
    return len >= 1 && len <= MSG_MAX_ROUTEID && printable (data, len);
}

/* True if data[len] (NUL-free) parses as one JSON object and nothing
 * else.  jansson rejects trailing garbage, invalid UTF-8 and "\u0000"
 * with these flags.
 */
static bool json_object_valid (const char *data, size_t len,
                               char *errbuf, size_t errlen)
{
    json_error_t error;
    json_t *o = json_loadb (data, len, 0, &error);
    if (!o) {
        seterr (errbuf, errlen, "payload is not valid JSON: %s", error.text);
        return false;
    }
    bool isobj = json_is_object (o);
    json_decref (o);
    if (!isobj) {
        seterr (errbuf, errlen, "payload is not a JSON object");
        return false;
    }
    return true;
}

static void msg_init (msg_t *msg, int type)
{
    msg->type = (uint8_t)type;
    msg->flags = 0;
    msg->nroutes = -1;
    msg->rused = 0;
    msg->topic_len = 0;
    msg->userid = 0;
    msg->rolemask = 0;
    msg->aux1 = (type == MSGTYPE_REQUEST) ? NODEID_ANY : 0;
    msg->aux2 = 0;
    msg->topic = NULL;
    msg->payload = NULL;
    msg->payload_len = 0;
}

msg_t *msg_create (int type)
{
    if (!type_valid (type)) {
        errno = EINVAL;
        return NULL;
    }
    /* malloc, not calloc: the route buffer is only read up to rused. */
    msg_t *msg = malloc (sizeof (*msg));
    if (!msg)
        return NULL;
    msg_init (msg, type);
    return msg;
}

void msg_destroy (msg_t **msg)
{
    if (msg && *msg) {
        int saved = errno;
        free ((*msg)->topic);
        free ((*msg)->payload);
        free (*msg);
        *msg = NULL;
        errno = saved;
    }
}

static char *memdup_nul (const void *data, size_t len)
{
    if (len == SIZE_MAX) {
        errno = ENOMEM;
        return NULL;
    }
    char *s = malloc (len + 1);
    if (!s)
        return NULL;
    if (len > 0)
        memcpy (s, data, len);
    s[len] = '\0';
    return s;
}

/* Copy route stack from 'src' into 'dst' (which has none yet). */
static void routes_copy (msg_t *dst, const msg_t *src)
{
    dst->nroutes = src->nroutes;
    dst->rused = src->rused;
    if (src->nroutes > 0) {
        memcpy (dst->roff, src->roff, src->nroutes * sizeof (src->roff[0]));
        memcpy (dst->rlen, src->rlen, src->nroutes * sizeof (src->rlen[0]));
        memcpy (dst->rbuf, src->rbuf, src->rused);
    }
}

msg_t *msg_copy (const msg_t *msg)
{
    if (!msg) {
        errno = EINVAL;
        return NULL;
    }
    msg_t *cpy = msg_create (msg->type);
    if (!cpy)
        return NULL;
    cpy->flags = msg->flags;
    cpy->userid = msg->userid;
    cpy->rolemask = msg->rolemask;
    cpy->aux1 = msg->aux1;
    cpy->aux2 = msg->aux2;
    routes_copy (cpy, msg);
    if (msg->topic) {
        if (!(cpy->topic = memdup_nul (msg->topic, msg->topic_len)))
            goto error;
        cpy->topic_len = msg->topic_len;
    }
    if (msg->payload) {
        if (!(cpy->payload = memdup_nul (msg->payload, msg->payload_len)))
            goto error;
        cpy->payload_len = msg->payload_len;
    }
    return cpy;
error:
    msg_destroy (&cpy);
    errno = ENOMEM;
    return NULL;
}

static uint32_t get32 (const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16)
         | ((uint32_t)p[2] << 8) | (uint32_t)p[3];
}

static void put32 (uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* Append a route id that has already been validated (bottom first). */
static void route_append (msg_t *msg, const void *id, size_t len)
{
    int n = msg->nroutes;
    msg->roff[n] = msg->rused;
    msg->rlen[n] = (uint8_t)len;
    memcpy (msg->rbuf + msg->rused, id, len);
    msg->rbuf[msg->rused + len] = '\0';
    msg->rused = (uint16_t)(msg->rused + len + 1);
    msg->nroutes++;
}

msg_t *msg_decode (const struct msg_frame *frames, size_t nframes,
                   char *errbuf, size_t errlen)
{
    msg_t *msg = NULL;

    if (errbuf && errlen > 0)
        errbuf[0] = '\0';
    if (!frames || nframes == 0) {
        seterr (errbuf, errlen, "message has no frames");
        goto eproto;
    }
    for (size_t i = 0; i < nframes; i++) {
        if (frames[i].size > 0 && !frames[i].data) {
            seterr (errbuf, errlen, "frame %zu has size %zu but no data",
                    i, frames[i].size);
            goto eproto;
        }
    }

    /* Proto frame: last, fixed size. */
    const struct msg_frame *pf = &frames[nframes - 1];
    if (pf->size != MSG_PROTO_SIZE) {
        seterr (errbuf, errlen, "proto frame is %zu bytes, expected %d",
                pf->size, MSG_PROTO_SIZE);
        goto eproto;
    }
    const uint8_t *proto = pf->data;
    if (proto[0] != MSG_PROTO_MAGIC) {
        seterr (errbuf, errlen, "proto magic is 0x%02x, expected 0x%02x",
                proto[0], MSG_PROTO_MAGIC);
        goto eproto;
    }
    if (proto[1] != MSG_PROTO_VERSION) {
        seterr (errbuf, errlen, "proto version is %u, expected %d",
                proto[1], MSG_PROTO_VERSION);
        goto eproto;
    }
    int type = proto[2];
    if (!type_valid (type)) {
        seterr (errbuf, errlen, "message type 0x%02x is unknown", type);
        goto eproto;
    }
    uint8_t flags = proto[3];
    if (flags & ~MSGFLAG_ALL) {
        seterr (errbuf, errlen, "message flags 0x%02x have unknown bits",
                flags);
        goto eproto;
    }
    uint32_t aux1 = get32 (proto + 12);

    /* Frame layout implied by the flags. */
    size_t tail = 1 + !!(flags & MSGFLAG_TOPIC) + !!(flags & MSGFLAG_PAYLOAD);
    size_t first = 0;       /* index of the first frame after routes */
    size_t nroutes = 0;
    if (flags & MSGFLAG_ROUTE) {
        size_t delim = 0;
        while (delim < nframes - 1 && frames[delim].size > 0)
            delim++;
        if (delim == nframes - 1) {
            seterr (errbuf, errlen, "route delimiter frame is missing");
            goto eproto;
        }
        nroutes = delim;
        first = delim + 1;
        if (nframes - first != tail) {
            seterr (errbuf, errlen,
                    "%zu frames after the route delimiter, flags imply %zu",
                    nframes - first, tail);
            goto eproto;
        }
        if (nroutes > MSG_MAX_ROUTES) {
            seterr (errbuf, errlen, "route stack has %zu frames, max %d",
                    nroutes, MSG_MAX_ROUTES);
            goto eproto;
        }
        for (size_t i = 0; i < nroutes; i++) {
            if (frames[i].size > MSG_MAX_ROUTEID) {
                seterr (errbuf, errlen, "route frame %zu is %zu bytes, max %d",
                        i, frames[i].size, MSG_MAX_ROUTEID);
                goto eproto;
            }
            if (!printable (frames[i].data, frames[i].size)) {
                seterr (errbuf, errlen,
                        "route frame %zu is not printable ASCII", i);
                goto eproto;
            }
        }
    }
    else if (nframes != tail) {
        seterr (errbuf, errlen, "message has %zu frames, flags imply %zu",
                nframes, tail);
        goto eproto;
    }

    const struct msg_frame *tf = NULL;
    const struct msg_frame *plf = NULL;
    size_t next = first;
    if (flags & MSGFLAG_TOPIC) {
        tf = &frames[next++];
        if (tf->size < 1 || tf->size > MSG_MAX_TOPIC) {
            seterr (errbuf, errlen, "topic is %zu bytes, expected 1..%d",
                    tf->size, MSG_MAX_TOPIC);
            goto eproto;
        }
        if (!printable (tf->data, tf->size)) {
            seterr (errbuf, errlen, "topic is not printable ASCII");
            goto eproto;
        }
    }
    if (flags & MSGFLAG_PAYLOAD) {
        plf = &frames[next++];
        if (plf->size > 0 && memchr (plf->data, '\0', plf->size)) {
            seterr (errbuf, errlen, "payload contains a NUL byte");
            goto eproto;
        }
        bool errtext = (type == MSGTYPE_RESPONSE && aux1 != 0);
        if (!errtext && !json_object_valid (plf->data, plf->size,
                                            errbuf, errlen))
            goto eproto;
    }

    /* Valid: build the message. */
    msg = msg_create (type);
    if (!msg)
        return NULL;
    msg->flags = flags & ~CONTENT_FLAGS;
    msg->userid = get32 (proto + 4);
    msg->rolemask = get32 (proto + 8);
    msg->aux1 = aux1;
    msg->aux2 = get32 (proto + 16);
    if (flags & MSGFLAG_ROUTE) {
        msg->nroutes = 0;
        /* Wire order is top first; storage is bottom first. */
        for (size_t i = nroutes; i-- > 0; )
            route_append (msg, frames[i].data, frames[i].size);
    }
    if (tf) {
        if (!(msg->topic = memdup_nul (tf->data, tf->size)))
            goto enomem;
        msg->topic_len = (uint16_t)tf->size;
    }
    if (plf) {
        if (!(msg->payload = memdup_nul (plf->data, plf->size)))
            goto enomem;
        msg->payload_len = plf->size;
    }
    return msg;
enomem:
    msg_destroy (&msg);
    seterr (errbuf, errlen, "out of memory");
    errno = ENOMEM;
    return NULL;
eproto:
    errno = EPROTO;
    return NULL;
}

size_t msg_frame_count (const msg_t *msg)
{
    if (!msg)
        return 0;
    size_t n = 1;
    if (msg->nroutes >= 0)
        n += (size_t)msg->nroutes + 1;
    if (msg->topic)
        n++;
    if (msg->payload)
        n++;
    return n;
}

int msg_encode (msg_t *msg, struct msg_frame *frames, size_t max)
{
    size_t n = msg_frame_count (msg);
    if (!msg || !frames || max < n) {
        errno = EINVAL;
        return -1;
    }
    size_t k = 0;
    if (msg->nroutes >= 0) {
        for (int i = msg->nroutes - 1; i >= 0; i--) {
            frames[k].data = msg->rbuf + msg->roff[i];
            frames[k].size = msg->rlen[i];
            k++;
        }
        /* Any valid pointer will do for an empty frame. */
        frames[k].data = msg->proto;
        frames[k].size = 0;
        k++;
    }
    if (msg->topic) {
        frames[k].data = msg->topic;
        frames[k].size = msg->topic_len;
        k++;
    }
    if (msg->payload) {
        frames[k].data = msg->payload;
        frames[k].size = msg->payload_len;
        k++;
    }
    msg->proto[0] = MSG_PROTO_MAGIC;
    msg->proto[1] = MSG_PROTO_VERSION;
    msg->proto[2] = msg->type;
    msg->proto[3] = msg_get_flags (msg);
    put32 (msg->proto + 4, msg->userid);
    put32 (msg->proto + 8, msg->rolemask);
    put32 (msg->proto + 12, msg->aux1);
    put32 (msg->proto + 16, msg->aux2);
    frames[k].data = msg->proto;
    frames[k].size = MSG_PROTO_SIZE;
    k++;
    return (int)k;
}

int msg_get_type (const msg_t *msg)
{
    return msg ? msg->type : 0;
}

uint8_t msg_get_flags (const msg_t *msg)
{
    if (!msg)
        return 0;
    uint8_t flags = msg->flags;
    if (msg->topic)
        flags |= MSGFLAG_TOPIC;
    if (msg->payload)
        flags |= MSGFLAG_PAYLOAD;
    if (msg->nroutes >= 0)
        flags |= MSGFLAG_ROUTE;
    return flags;
}

int msg_set_flags (msg_t *msg, uint8_t flags)
{
    /* Content bits are accepted only if they agree with the content, so
     * msg_set_flags (m, msg_get_flags (m) | X) works.
     */
    if (!msg || (flags & ~MSGFLAG_ALL)
        || (flags & CONTENT_FLAGS) != (msg_get_flags (msg) & CONTENT_FLAGS)) {
        errno = EINVAL;
        return -1;
    }
    msg->flags = flags & ~CONTENT_FLAGS;
    return 0;
}

uint32_t msg_get_userid (const msg_t *msg)
{
    return msg ? msg->userid : 0;
}

void msg_set_userid (msg_t *msg, uint32_t userid)
{
    if (msg)
        msg->userid = userid;
}

uint32_t msg_get_rolemask (const msg_t *msg)
{
    return msg ? msg->rolemask : 0;
}

void msg_set_rolemask (msg_t *msg, uint32_t rolemask)
{
    if (msg)
        msg->rolemask = rolemask;
}

uint32_t msg_get_matchtag (const msg_t *msg)
{
    return msg ? msg->aux2 : 0;
}

void msg_set_matchtag (msg_t *msg, uint32_t matchtag)
{
    if (msg)
        msg->aux2 = matchtag;
}

/* 0 if msg is of 'type', else -1 with errno set. */
static int check_type (const msg_t *msg, int type)
{
    if (!msg) {
        errno = EINVAL;
        return -1;
    }
    if (msg->type != type) {
        errno = EPROTO;
        return -1;
    }
    return 0;
}

int msg_get_nodeid (const msg_t *msg, uint32_t *nodeid)
{
    if (check_type (msg, MSGTYPE_REQUEST) < 0)
        return -1;
    if (nodeid)
        *nodeid = msg->aux1;
    return 0;
}

int msg_set_nodeid (msg_t *msg, uint32_t nodeid)
{
    if (check_type (msg, MSGTYPE_REQUEST) < 0)
        return -1;
    msg->aux1 = nodeid;
    return 0;
}

int msg_get_errnum (const msg_t *msg, int *errnum)
{
    if (check_type (msg, MSGTYPE_RESPONSE) < 0)
        return -1;
    if (errnum)
        *errnum = (int)msg->aux1;
    return 0;
}

int msg_set_errnum (msg_t *msg, int errnum)
{
    if (check_type (msg, MSGTYPE_RESPONSE) < 0)
        return -1;
    msg->aux1 = (uint32_t)errnum;
    return 0;
}

int msg_get_seq (const msg_t *msg, uint32_t *seq)
{
    if (check_type (msg, MSGTYPE_EVENT) < 0)
        return -1;
    if (seq)
        *seq = msg->aux1;
    return 0;
}

int msg_set_seq (msg_t *msg, uint32_t seq)
{
    if (check_type (msg, MSGTYPE_EVENT) < 0)
        return -1;
    msg->aux1 = seq;
    return 0;
}

int msg_get_control (const msg_t *msg, int *ctype, int *status)
{
    if (check_type (msg, MSGTYPE_CONTROL) < 0)
        return -1;
    if (ctype)
        *ctype = (int)msg->aux1;
    if (status)
        *status = (int)msg->aux2;
    return 0;
}

int msg_set_control (msg_t *msg, int ctype, int status)
{
    if (check_type (msg, MSGTYPE_CONTROL) < 0)
        return -1;
    msg->aux1 = (uint32_t)ctype;
    msg->aux2 = (uint32_t)status;
    return 0;
}

int msg_set_topic (msg_t *msg, const char *topic)
{
    if (!msg) {
        errno = EINVAL;
        return -1;
    }
    char *cpy = NULL;
    size_t len = 0;
    if (topic) {
        /* strnlen: never scan a huge string just to reject it. */
        len = strnlen (topic, MSG_MAX_TOPIC + 1);
        if (!topic_valid (topic, len)) {
            errno = EINVAL;
            return -1;
        }
        if (!(cpy = memdup_nul (topic, len)))
            return -1;
    }
    free (msg->topic);
    msg->topic = cpy;
    msg->topic_len = (uint16_t)len;
    return 0;
}

const char *msg_get_topic (const msg_t *msg)
{
    return msg ? msg->topic : NULL;
}

int msg_set_payload (msg_t *msg, const char *s, size_t len)
{
    if (!msg) {
        errno = EINVAL;
        return -1;
    }
    char *cpy = NULL;
    if (s) {
        if (len > 0 && memchr (s, '\0', len)) {
            errno = EINVAL;
            return -1;
        }
        if (!(cpy = memdup_nul (s, len)))
            return -1;
    }
    else
        len = 0;
    free (msg->payload);
    msg->payload = cpy;
    msg->payload_len = len;
    return 0;
}

const char *msg_get_payload (const msg_t *msg, size_t *len)
{
    if (len)
        *len = (msg && msg->payload) ? msg->payload_len : 0;
    return msg ? msg->payload : NULL;
}

void msg_route_enable (msg_t *msg)
{
    if (msg && msg->nroutes < 0) {
        msg->nroutes = 0;
        msg->rused = 0;
    }
}

void msg_route_disable (msg_t *msg)
{
    if (msg) {
        msg->nroutes = -1;
        msg->rused = 0;
    }
}

int msg_route_push (msg_t *msg, const char *id)
{
    if (!msg || !id) {
        errno = EINVAL;
        return -1;
    }
    if (msg->nroutes < 0) {
        errno = EPROTO;
        return -1;
    }
    size_t len = strnlen (id, MSG_MAX_ROUTEID + 1);
    if (!routeid_valid (id, len)) {
        errno = EINVAL;
        return -1;
    }
    if (msg->nroutes >= MSG_MAX_ROUTES) {
        errno = E2BIG;
        return -1;
    }
    route_append (msg, id, len);
    return 0;
}

int msg_route_pop (msg_t *msg, char *id, size_t idlen)
{
    if (!msg) {
        errno = EINVAL;
        return -1;
    }
    if (msg->nroutes < 0) {
        errno = EPROTO;
        return -1;
    }
    if (msg->nroutes == 0) {
        errno = ENOENT;
        return -1;
    }
    int top = msg->nroutes - 1;
    if (id) {
        /* Check before removing, so a failed pop leaves the stack alone. */
        if (idlen < (size_t)msg->rlen[top] + 1) {
            errno = EOVERFLOW;
            return -1;
        }
        memcpy (id, msg->rbuf + msg->roff[top], msg->rlen[top] + 1);
    }
    msg->rused = msg->roff[top];
    msg->nroutes--;
    return 0;
}

int msg_route_count (const msg_t *msg)
{
    return msg ? msg->nroutes : -1;
}

const char *msg_route_at (const msg_t *msg, int i)
{
    if (!msg || i < 0 || i >= msg->nroutes)
        return NULL;
    return msg->rbuf + msg->roff[msg->nroutes - 1 - i];
}

const char *msg_route_first (const msg_t *msg)
{
    return msg_route_at (msg, 0);
}

const char *msg_route_last (const msg_t *msg)
{
    return msg ? msg_route_at (msg, msg->nroutes - 1) : NULL;
}

/* Set a JSON object payload from a C string; NULL means none.  Helpers
 * validate so a locally built message is never one peers would reject.
 */
static int set_json_payload (msg_t *msg, const char *payload)
{
    if (!payload)
        return 0;
    size_t len = strlen (payload);
    if (!json_object_valid (payload, len, NULL, 0)) {
        errno = EINVAL;
        return -1;
    }
    return msg_set_payload (msg, payload, len);
}

msg_t *msg_request_create (const char *topic, uint32_t nodeid,
                           const char *payload)
{
    if (!topic) {
        errno = EINVAL;
        return NULL;
    }
    msg_t *msg = msg_create (MSGTYPE_REQUEST);
    if (!msg)
        return NULL;
    msg->aux1 = nodeid;
    if (msg_set_topic (msg, topic) < 0 || set_json_payload (msg, payload) < 0)
        goto error;
    return msg;
error:
    msg_destroy (&msg);
    return NULL;
}

/* Start a response to 'request' without a payload. */
static msg_t *response_derive (const msg_t *request)
{
    if (!request || request->type != MSGTYPE_REQUEST) {
        errno = EINVAL;
        return NULL;
    }
    msg_t *msg = msg_create (MSGTYPE_RESPONSE);
    if (!msg)
        return NULL;
    /* A streaming request's responses are streaming responses. */
    msg->flags = request->flags & MSGFLAG_STREAMING;
    msg->userid = request->userid;
    msg->rolemask = request->rolemask;
    msg->aux2 = request->aux2;
    routes_copy (msg, request);
    if (request->topic) {
        if (!(msg->topic = memdup_nul (request->topic, request->topic_len))) {
            msg_destroy (&msg);
            errno = ENOMEM;
            return NULL;
        }
        msg->topic_len = request->topic_len;
    }
    return msg;
}

msg_t *msg_response_create (const msg_t *request, const char *payload)
{
    msg_t *msg = response_derive (request);
    if (!msg)
        return NULL;
    if (set_json_payload (msg, payload) < 0) {
        msg_destroy (&msg);
        return NULL;
    }
    return msg;
}

msg_t *msg_error_response_create (const msg_t *request, int errnum,
                                  const char *errstr)
{
    if (errnum == 0) {
        errno = EINVAL;
        return NULL;
    }
    msg_t *msg = response_derive (request);
    if (!msg)
        return NULL;
    msg->aux1 = (uint32_t)errnum;
    if (errstr && *errstr
        && msg_set_payload (msg, errstr, strlen (errstr)) < 0) {
        msg_destroy (&msg);
        return NULL;
    }
    return msg;
}

msg_t *msg_event_create (const char *topic, const char *payload)
{
    if (!topic) {
        errno = EINVAL;
        return NULL;
    }
    msg_t *msg = msg_create (MSGTYPE_EVENT);
    if (!msg)
        return NULL;
    if (msg_set_topic (msg, topic) < 0 || set_json_payload (msg, payload) < 0)
        goto error;
    return msg;
error:
    msg_destroy (&msg);
    return NULL;
}

msg_t *msg_control_create (int ctype, int status)
{
    msg_t *msg = msg_create (MSGTYPE_CONTROL);
    if (!msg)
        return NULL;
    msg->aux1 = (uint32_t)ctype;
    msg->aux2 = (uint32_t)status;
    return msg;
}

const char *msg_typestr (int type)
{
    switch (type) {
        case MSGTYPE_REQUEST:
            return "request";
        case MSGTYPE_RESPONSE:
            return "response";
        case MSGTYPE_EVENT:
            return "event";
        case MSGTYPE_CONTROL:
            return "control";
    }
    return "unknown";
}

/* vi: ts=4 sw=4 expandtab
 */
