/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* message.c: the Flux-style message codec declared in message.h.
 *
 * A msg_t is one heap block: the header fields, then a tail holding the
 * topic and the route stack, each sized to what the message holds when
 * it is made (decoded, copied, built by a helper), with some room for
 * the pushes a request gets on its way.  What outgrows the tail moves to
 * a separate block.  The payload is a separate, reference-counted,
 * immutable buffer: msg_copy shares it, msg_payload_ref hands it to a
 * transport without copying, and msg_set_payload rewrites it in place
 * only when nobody else holds it.
 *
 * The route stack is stored bottom first (the original sender at offset
 * 0) as entries [id][NUL][length byte], so push and pop touch only the
 * end and the top entry is found from the last byte; the wire order (top
 * first) is produced by msg_encode.
 *
 * msg_decode is the trust boundary: every frame comes from a peer or a
 * client, so it validates everything the header promises before it
 * allocates, and never reads past a frame's stated size.  Payload JSON is
 * validated by a scanner that builds nothing (jsonv.c); msg_get_json
 * parses it with jansson once, when someone asks.
 */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "src/common/libutil/wire.h"
#include "src/common/libutil/errbuf.h"

#include "jsonv.h"
#include "message.h"

/* Content flags are derived from what the message holds, never stored. */
#define CONTENT_FLAGS (MSGFLAG_TOPIC | MSGFLAG_PAYLOAD | MSGFLAG_ROUTE)

/* Bytes a route entry takes: the id, its NUL and its length byte. */
#define ENTRY_SIZE(len) ((size_t)(len) + 2)

/* Room a new request keeps for pushes: a client uuid and a rank. */
#define REQUEST_ROUTE_ROOM 64

/* Which of topic / rbuf live in blocks of their own (not the tail). */
#define OWN_TOPIC  0x01
#define OWN_ROUTES 0x02

struct payload {
    int refs;               /* atomic: a transport may drop it in its thread */
    size_t len;
    size_t cap;             /* text room, not counting the NUL */
    bool checked;           /* one JSON object: decoded, or a helper set it */
    char data[];            /* len bytes and a NUL */
};

struct msg {
    uint8_t type;
    uint8_t flags;          /* non-content flags only */
    int8_t nroutes;         /* -1: routing disabled */
    uint8_t own;            /* OWN_* */
    uint16_t topic_len;
    uint16_t tcap;          /* tail bytes for the topic, NUL included */
    uint16_t rused;         /* bytes of route entries in rbuf */
    uint16_t rcap;          /* size of rbuf */
    uint16_t tailcap;       /* size of the tail (for msg_decode_reuse) */
    uint32_t userid;
    uint32_t rolemask;
    uint32_t aux1;
    uint32_t aux2;
    char *topic;            /* NULL: no topic; the tail or OWN_TOPIC */
    char *rbuf;             /* route entries; the tail or OWN_ROUTES */
    struct payload *payload;/* NULL: no payload */
    json_t *json;           /* msg_get_json's parse, or NULL */
    uint8_t proto[MSG_PROTO_SIZE]; /* filled by msg_encode */
    char tail[];            /* [topic: tcap][routes: rcap if not OWN_ROUTES] */
};

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

/* True if data[len] is one JSON object; the reason goes to errbuf. */
static bool json_object_valid (const char *data, size_t len,
                               char *errbuf, size_t errlen)
{
    char why[96];

    if (jsonv_object (data, len, why, sizeof (why)) == 0)
        return true;
    if (!strncmp (why, "not a JSON object", 17))
        errbuf_set (errbuf, errlen, "payload is not a JSON object");
    else {
        errbuf_set (errbuf, errlen, "payload is not valid JSON: %s", why);
        /* jansson quotes the offending input; keep the reason one
         * printable line whatever the peer sent.
         */
        errbuf_printable (errbuf, errlen);
    }
    return false;
}

int msg_json_check (const char *s, size_t len, char *errbuf, size_t errlen)
{
    if (!json_object_valid (s, len, errbuf, errlen)) {
        errno = EINVAL;
        return -1;
    }
    return 0;
}

/* ---- payload buffers --------------------------------------------------- */

static struct payload *payload_create (const void *data, size_t len)
{
    struct payload *pl;

    if (len > SIZE_MAX - sizeof (*pl) - 1) {
        errno = ENOMEM;
        return NULL;
    }
    if (!(pl = malloc (sizeof (*pl) + len + 1)))
        return NULL;
    pl->refs = 1;
    pl->len = len;
    pl->cap = len;
    pl->checked = false;
    if (len > 0)
        memcpy (pl->data, data, len);
    pl->data[len] = '\0';
    return pl;
}

static struct payload *payload_incref (struct payload *pl)
{
    if (pl)
        __atomic_add_fetch (&pl->refs, 1, __ATOMIC_RELAXED);
    return pl;
}

static void payload_decref (struct payload *pl)
{
    if (pl && __atomic_sub_fetch (&pl->refs, 1, __ATOMIC_ACQ_REL) == 0)
        free (pl);
}

static bool payload_shared (struct payload *pl)
{
    return __atomic_load_n (&pl->refs, __ATOMIC_ACQUIRE) > 1;
}

void *msg_payload_ref (const msg_t *msg)
{
    if (!msg || !msg->payload) {
        errno = msg ? ENOENT : EINVAL;
        return NULL;
    }
    return payload_incref (msg->payload);
}

void msg_payload_unref (void *data, void *ref)
{
    (void)data;
    payload_decref (ref);
}

/* ---- the message block ------------------------------------------------- */

/* Set msg's fields for a new message of 'type' whose tail gives tcap
 * bytes to the topic (NUL included) and the rest to route entries. */
static void msg_init (msg_t *msg, int type, size_t tcap)
{
    msg->type = (uint8_t)type;
    msg->flags = 0;
    msg->nroutes = -1;
    msg->own = 0;
    msg->topic_len = 0;
    msg->tcap = (uint16_t)tcap;
    msg->rused = 0;
    msg->rcap = (uint16_t)(msg->tailcap - tcap);
    msg->userid = 0;
    msg->rolemask = 0;
    msg->aux1 = (type == MSGTYPE_REQUEST) ? NODEID_ANY : 0;
    msg->aux2 = 0;
    msg->topic = NULL;
    msg->rbuf = msg->tail + tcap;
    msg->payload = NULL;
    msg->json = NULL;
}

/* A message of 'type' with tail room for a topic of tcap bytes (NUL
 * included) and rcap bytes of route entries. */
static msg_t *msg_alloc (int type, size_t tcap, size_t rcap)
{
    msg_t *msg = malloc (sizeof (*msg) + tcap + rcap);

    if (!msg)
        return NULL;
    msg->tailcap = (uint16_t)(tcap + rcap);
    msg_init (msg, type, tcap);
    return msg;
}

msg_t *msg_create (int type)
{
    if (!type_valid (type)) {
        errno = EINVAL;
        return NULL;
    }
    return msg_alloc (type, 0, type == MSGTYPE_REQUEST ? REQUEST_ROUTE_ROOM
                                                      : 0);
}

static void drop_json (msg_t *msg)
{
    json_decref (msg->json);
    msg->json = NULL;
}

/* Free what msg holds outside its block, but its payload. */
static void msg_free_side (msg_t *msg)
{
    if (msg->own & OWN_TOPIC)
        free (msg->topic);
    if (msg->own & OWN_ROUTES)
        free (msg->rbuf);
    drop_json (msg);
}

void msg_destroy (msg_t **msg)
{
    if (msg && *msg) {
        msg_t *m = *msg;
        int saved = errno;
        msg_free_side (m);
        payload_decref (m->payload);
        free (m);
        *msg = NULL;
        errno = saved;
    }
}

/* Put a validated topic of len bytes in place: the tail if it fits,
 * else a block of its own.  -1 with ENOMEM. */
static int topic_store (msg_t *msg, const char *topic, size_t len)
{
    char *dst;

    if (len + 1 <= msg->tcap)
        dst = msg->tail;
    else if (!(dst = malloc (len + 1)))
        return -1;
    memcpy (dst, topic, len);
    dst[len] = '\0';
    if (msg->own & OWN_TOPIC)
        free (msg->topic);
    msg->own = (uint8_t)((msg->own & ~OWN_TOPIC)
                         | (dst != msg->tail ? OWN_TOPIC : 0));
    msg->topic = dst;
    msg->topic_len = (uint16_t)len;
    return 0;
}

/* Make room for 'more' bytes of route entries.  -1 with ENOMEM. */
static int routes_reserve (msg_t *msg, size_t more)
{
    size_t need = (size_t)msg->rused + more;
    size_t cap;
    char *buf;

    if (need <= msg->rcap)
        return 0;
    cap = (size_t)msg->rcap * 2;
    if (cap < need + REQUEST_ROUTE_ROOM)
        cap = need + REQUEST_ROUTE_ROOM;
    if (cap > UINT16_MAX)
        cap = UINT16_MAX;
    if (msg->own & OWN_ROUTES)
        buf = realloc (msg->rbuf, cap);
    else if ((buf = malloc (cap)) && msg->rused > 0)
        memcpy (buf, msg->rbuf, msg->rused);
    if (!buf)
        return -1;
    msg->rbuf = buf;
    msg->rcap = (uint16_t)cap;
    msg->own |= OWN_ROUTES;
    return 0;
}

/* Append (push) a validated route id; room must have been reserved. */
static void route_append (msg_t *msg, const void *id, size_t len)
{
    char *e = msg->rbuf + msg->rused;

    memcpy (e, id, len);
    e[len] = '\0';
    e[len + 1] = (char)(uint8_t)len;
    msg->rused = (uint16_t)(msg->rused + ENTRY_SIZE (len));
    msg->nroutes++;
}

/* Offset in rbuf of the entry 'i' down from the top (0 = top). */
static size_t route_offset (const msg_t *msg, int i)
{
    size_t end = msg->rused;

    for (;;) {
        size_t start = end - ENTRY_SIZE ((uint8_t)msg->rbuf[end - 1]);
        if (i-- == 0)
            return start;
        end = start;
    }
}

/* A copy of msg's header and topic with room for its routes and
 * 'room' more bytes of them; routes copied, payload shared if 'payload'. */
static msg_t *msg_clone (const msg_t *msg, int type, size_t room,
                         bool payload)
{
    size_t tcap = msg->topic ? (size_t)msg->topic_len + 1 : 0;
    msg_t *cpy = msg_alloc (type, tcap, (size_t)msg->rused + room);

    if (!cpy)
        return NULL;
    if (msg->topic)
        topic_store (cpy, msg->topic, msg->topic_len);   /* fits the tail */
    cpy->userid = msg->userid;
    cpy->rolemask = msg->rolemask;
    cpy->aux2 = msg->aux2;
    cpy->nroutes = msg->nroutes;
    cpy->rused = msg->rused;
    if (msg->rused > 0)
        memcpy (cpy->rbuf, msg->rbuf, msg->rused);
    if (payload) {
        cpy->payload = payload_incref (msg->payload);
        cpy->json = msg->json ? json_incref (msg->json) : NULL;
    }
    return cpy;
}

msg_t *msg_copy (const msg_t *msg)
{
    msg_t *cpy;

    if (!msg) {
        errno = EINVAL;
        return NULL;
    }
    if (!(cpy = msg_clone (msg, msg->type, 0, true)))
        return NULL;
    cpy->flags = msg->flags;
    cpy->aux1 = msg->aux1;
    return cpy;
}

size_t msg_footprint (const msg_t *msg)
{
    size_t n;

    if (!msg)
        return 0;
    n = malloc_usable_size ((void *)msg);
    if (msg->own & OWN_TOPIC)
        n += malloc_usable_size (msg->topic);
    if (msg->own & OWN_ROUTES)
        n += malloc_usable_size (msg->rbuf);
    if (msg->payload)
        n += malloc_usable_size (msg->payload);
    return n;
}

/* msg_decode and msg_decode_reuse: validate, then build the message in
 * *spare's memory if there is one and it is big enough, else anew. */
static msg_t *decode (msg_t **spare, const struct msg_frame *frames,
                      size_t nframes, char *errbuf, size_t errlen)
{
    msg_t *msg = NULL;

    if (errbuf && errlen > 0)
        errbuf[0] = '\0';
    if (!frames || nframes == 0) {
        errbuf_set (errbuf, errlen, "message has no frames");
        goto eproto;
    }
    for (size_t i = 0; i < nframes; i++) {
        if (frames[i].size > 0 && !frames[i].data) {
            errbuf_set (errbuf, errlen, "frame %zu has size %zu but no data",
                        i, frames[i].size);
            goto eproto;
        }
    }

    /* Proto frame: last, fixed size. */
    const struct msg_frame *pf = &frames[nframes - 1];
    if (pf->size != MSG_PROTO_SIZE) {
        errbuf_set (errbuf, errlen, "proto frame is %zu bytes, expected %d",
                    pf->size, MSG_PROTO_SIZE);
        goto eproto;
    }
    const uint8_t *proto = pf->data;
    if (proto[0] != MSG_PROTO_MAGIC) {
        errbuf_set (errbuf, errlen, "proto magic is 0x%02x, expected 0x%02x",
                    proto[0], MSG_PROTO_MAGIC);
        goto eproto;
    }
    if (proto[1] != MSG_PROTO_VERSION) {
        errbuf_set (errbuf, errlen, "proto version is %u, expected %d",
                    proto[1], MSG_PROTO_VERSION);
        goto eproto;
    }
    int type = proto[2];
    if (!type_valid (type)) {
        errbuf_set (errbuf, errlen, "message type 0x%02x is unknown", type);
        goto eproto;
    }
    uint8_t flags = proto[3];
    if (flags & ~MSGFLAG_ALL) {
        errbuf_set (errbuf, errlen, "message flags 0x%02x have unknown bits",
                    flags);
        goto eproto;
    }
    uint32_t aux1 = wire_get32 (proto + 12);

    /* Frame layout implied by the flags. */
    size_t tail = 1 + !!(flags & MSGFLAG_TOPIC) + !!(flags & MSGFLAG_PAYLOAD);
    size_t first = 0;       /* index of the first frame after routes */
    size_t nroutes = 0;
    if (flags & MSGFLAG_ROUTE) {
        size_t delim = 0;
        while (delim < nframes - 1 && frames[delim].size > 0)
            delim++;
        if (delim == nframes - 1) {
            errbuf_set (errbuf, errlen, "route delimiter frame is missing");
            goto eproto;
        }
        nroutes = delim;
        first = delim + 1;
        if (nframes - first != tail) {
            errbuf_set (errbuf, errlen, "%zu frames after the route "
                        "delimiter, flags imply %zu", nframes - first, tail);
            goto eproto;
        }
        if (nroutes > MSG_MAX_ROUTES) {
            errbuf_set (errbuf, errlen, "route stack has %zu frames, max %d",
                        nroutes, MSG_MAX_ROUTES);
            goto eproto;
        }
        for (size_t i = 0; i < nroutes; i++) {
            if (frames[i].size > MSG_MAX_ROUTEID) {
                errbuf_set (errbuf, errlen, "route frame %zu is %zu bytes, "
                            "max %d", i, frames[i].size, MSG_MAX_ROUTEID);
                goto eproto;
            }
            if (!printable (frames[i].data, frames[i].size)) {
                errbuf_set (errbuf, errlen,
                            "route frame %zu is not printable ASCII", i);
                goto eproto;
            }
        }
    }
    else if (nframes != tail) {
        errbuf_set (errbuf, errlen, "message has %zu frames, flags imply %zu",
                    nframes, tail);
        goto eproto;
    }

    const struct msg_frame *tf = NULL;
    const struct msg_frame *plf = NULL;
    /* an error response's payload is its text, not JSON */
    bool errtext = (type == MSGTYPE_RESPONSE && aux1 != 0);
    size_t next = first;
    if (flags & MSGFLAG_TOPIC) {
        tf = &frames[next++];
        if (tf->size < 1 || tf->size > MSG_MAX_TOPIC) {
            errbuf_set (errbuf, errlen, "topic is %zu bytes, expected 1..%d",
                        tf->size, MSG_MAX_TOPIC);
            goto eproto;
        }
        if (!printable (tf->data, tf->size)) {
            errbuf_set (errbuf, errlen, "topic is not printable ASCII");
            goto eproto;
        }
    }
    if (flags & MSGFLAG_PAYLOAD) {
        plf = &frames[next++];
        if (plf->size > 0 && memchr (plf->data, '\0', plf->size)) {
            errbuf_set (errbuf, errlen, "payload contains a NUL byte");
            goto eproto;
        }
        if (!errtext && !json_object_valid (plf->data, plf->size,
                                            errbuf, errlen))
            goto eproto;
    }

    /* Valid: build the message, one block sized to what it holds. */
    size_t rbytes = 0;
    for (size_t i = 0; i < nroutes; i++)
        rbytes += ENTRY_SIZE (frames[i].size);
    size_t tneed = tf ? tf->size + 1 : 0;
    size_t rneed = rbytes + (type == MSGTYPE_REQUEST ? REQUEST_ROUTE_ROOM : 0);
    struct payload *old = NULL;
    if (spare && *spare && (*spare)->tailcap >= tneed + rneed) {
        msg = *spare;
        *spare = NULL;
        old = msg->payload;
        msg_free_side (msg);
        msg_init (msg, type, tneed);
    }
    else if (!(msg = msg_alloc (type, tneed, rneed)))
        goto enomem;
    msg->flags = flags & ~CONTENT_FLAGS;
    msg->userid = wire_get32 (proto + 4);
    msg->rolemask = wire_get32 (proto + 8);
    msg->aux1 = aux1;
    msg->aux2 = wire_get32 (proto + 16);
    if (flags & MSGFLAG_ROUTE) {
        msg->nroutes = 0;
        /* Wire order is top first; storage is bottom first. */
        for (size_t i = nroutes; i-- > 0; )
            route_append (msg, frames[i].data, frames[i].size);
    }
    if (tf)
        topic_store (msg, tf->data, tf->size);   /* fits the tail */
    if (plf && old && !payload_shared (old) && old->cap >= plf->size) {
        /* the spare's buffer is ours alone and big enough */
        memcpy (old->data, plf->data, plf->size);
        old->data[plf->size] = '\0';
        old->len = plf->size;
        msg->payload = old;
        old = NULL;
    }
    payload_decref (old);
    if (plf && !msg->payload
        && !(msg->payload = payload_create (plf->data, plf->size)))
        goto enomem;
    if (msg->payload)
        msg->payload->checked = !errtext;
    if (spare)
        msg_destroy (spare);    /* too small to reuse: consumed all the same */
    return msg;
enomem:
    msg_destroy (&msg);
    errbuf_set (errbuf, errlen, "out of memory");
    errno = ENOMEM;
    return NULL;
eproto:
    errno = EPROTO;
    return NULL;
}

msg_t *msg_decode (const struct msg_frame *frames, size_t nframes,
                   char *errbuf, size_t errlen)
{
    return decode (NULL, frames, nframes, errbuf, errlen);
}

msg_t *msg_decode_reuse (msg_t **spare, const struct msg_frame *frames,
                         size_t nframes, char *errbuf, size_t errlen)
{
    return decode (spare, frames, nframes, errbuf, errlen);
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
        /* Top first: walk the entries down from the end of rbuf. */
        size_t end = msg->rused;
        while (end > 0) {
            size_t len = (uint8_t)msg->rbuf[end - 1];
            size_t start = end - ENTRY_SIZE (len);
            frames[k].data = msg->rbuf + start;
            frames[k].size = len;
            k++;
            end = start;
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
        frames[k].data = msg->payload->data;
        frames[k].size = msg->payload->len;
        k++;
    }
    msg->proto[0] = MSG_PROTO_MAGIC;
    msg->proto[1] = MSG_PROTO_VERSION;
    msg->proto[2] = msg->type;
    msg->proto[3] = msg_get_flags (msg);
    wire_put32 (msg->proto + 4, msg->userid);
    wire_put32 (msg->proto + 8, msg->rolemask);
    wire_put32 (msg->proto + 12, msg->aux1);
    wire_put32 (msg->proto + 16, msg->aux2);
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
    if (!topic) {
        if (msg->own & OWN_TOPIC)
            free (msg->topic);
        msg->own &= (uint8_t)~OWN_TOPIC;
        msg->topic = NULL;
        msg->topic_len = 0;
        return 0;
    }
    /* strnlen: never scan a huge string just to reject it. */
    size_t len = strnlen (topic, MSG_MAX_TOPIC + 1);
    if (!topic_valid (topic, len)) {
        errno = EINVAL;
        return -1;
    }
    if (msg->topic && msg->topic_len == len && !memcmp (msg->topic, topic, len))
        return 0;
    /* Reuse a topic block of our own that is big enough. */
    if ((msg->own & OWN_TOPIC) && len <= msg->topic_len) {
        memcpy (msg->topic, topic, len);
        msg->topic[len] = '\0';
        msg->topic_len = (uint16_t)len;
        return 0;
    }
    return topic_store (msg, topic, len);
}

const char *msg_get_topic (const msg_t *msg)
{
    return msg ? msg->topic : NULL;
}

int msg_set_payload (msg_t *msg, const char *s, size_t len)
{
    struct payload *pl = NULL;

    if (!msg) {
        errno = EINVAL;
        return -1;
    }
    if (s && len > 0 && memchr (s, '\0', len)) {
        errno = EINVAL;
        return -1;
    }
    drop_json (msg);
    if (s && msg->payload && !payload_shared (msg->payload)
        && msg->payload->cap >= len) {
        /* ours alone and big enough: rewrite it in place */
        memmove (msg->payload->data, s, len);
        msg->payload->data[len] = '\0';
        msg->payload->len = len;
        msg->payload->checked = false;
        return 0;
    }
    if (s && !(pl = payload_create (s, len)))
        return -1;
    payload_decref (msg->payload);
    msg->payload = pl;
    return 0;
}

int msg_set_json_trusted (msg_t *msg, const char *s, size_t len)
{
    if (!s) {
        errno = EINVAL;
        return -1;
    }
    if (msg_set_payload (msg, s, len) < 0)
        return -1;
    msg->payload->checked = true;
    return 0;
}

bool msg_payload_checked (const msg_t *msg)
{
    return msg && msg->payload && msg->payload->checked;
}

const char *msg_get_payload (const msg_t *msg, size_t *len)
{
    if (len)
        *len = (msg && msg->payload) ? msg->payload->len : 0;
    return (msg && msg->payload) ? msg->payload->data : NULL;
}

json_t *msg_get_json (const msg_t *msg)
{
    json_t *o;

    if (!msg) {
        errno = EINVAL;
        return NULL;
    }
    if (msg->json)
        return msg->json;
    if (!msg->payload) {
        errno = ENOENT;
        return NULL;
    }
    if (msg->type == MSGTYPE_RESPONSE && msg->aux1 != 0) {
        errno = EPROTO;         /* an error response's text */
        return NULL;
    }
    if (!(o = json_loadb (msg->payload->data, msg->payload->len, 0, NULL))) {
        errno = EPROTO;
        return NULL;
    }
    if (!json_is_object (o)) {
        json_decref (o);
        errno = EPROTO;
        return NULL;
    }
    /* A cache: logically the message does not change. */
    ((msg_t *)msg)->json = o;
    return o;
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
    if (routes_reserve (msg, ENTRY_SIZE (len)) < 0)
        return -1;
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
    size_t len = (uint8_t)msg->rbuf[msg->rused - 1];
    size_t start = msg->rused - ENTRY_SIZE (len);
    if (id) {
        /* Check before removing, so a failed pop leaves the stack alone. */
        if (idlen < len + 1) {
            errno = EOVERFLOW;
            return -1;
        }
        memcpy (id, msg->rbuf + start, len + 1);
    }
    msg->rused = (uint16_t)start;
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
    return msg->rbuf + route_offset (msg, i);
}

int msg_route_id_rank (const char *id, uint32_t *rank)
{
    char *end;
    unsigned long v;

    if (!id || *id < '0' || *id > '9')
        return 0;
    errno = 0;
    v = strtoul (id, &end, 10);
    if (errno || *end || v > UINT32_MAX)
        return 0;
    *rank = (uint32_t)v;
    return 1;
}

const char *msg_route_first (const msg_t *msg)
{
    return msg_route_at (msg, 0);
}

const char *msg_route_last (const msg_t *msg)
{
    /* the bottom entry starts the buffer */
    return msg && msg->nroutes > 0 ? msg->rbuf : NULL;
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
    return msg_set_json_trusted (msg, payload, len);
}

/* A new message of 'type' whose tail fits 'topic' (validated here). */
static msg_t *msg_create_topic (int type, const char *topic)
{
    size_t len;
    msg_t *msg;

    if (!topic || !topic_valid (topic, (len = strnlen (topic,
                                                       MSG_MAX_TOPIC + 1)))) {
        errno = EINVAL;
        return NULL;
    }
    if (!(msg = msg_alloc (type, len + 1, type == MSGTYPE_REQUEST
                                              ? REQUEST_ROUTE_ROOM : 0)))
        return NULL;
    topic_store (msg, topic, len);
    return msg;
}

msg_t *msg_request_create (const char *topic, uint32_t nodeid,
                           const char *payload)
{
    msg_t *msg = msg_create_topic (MSGTYPE_REQUEST, topic);

    if (!msg)
        return NULL;
    msg->aux1 = nodeid;
    if (set_json_payload (msg, payload) < 0)
        msg_destroy (&msg);
    return msg;
}

/* Start a response to 'request' without a payload. */
static msg_t *response_derive (const msg_t *request)
{
    msg_t *msg;

    if (!request || request->type != MSGTYPE_REQUEST) {
        errno = EINVAL;
        return NULL;
    }
    if (!(msg = msg_clone (request, MSGTYPE_RESPONSE, 0, false)))
        return NULL;
    /* A streaming request's responses are streaming responses. */
    msg->flags = request->flags & MSGFLAG_STREAMING;
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
    msg_t *msg = msg_create_topic (MSGTYPE_EVENT, topic);

    if (msg && set_json_payload (msg, payload) < 0)
        msg_destroy (&msg);
    return msg;
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
