/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test/message.c: TAP unit tests for libmsg (message.h).
 *
 * Covers round trips of every message type with and without routes,
 * topic and payload; route stack order and limits; the per-type aux
 * getters; the response helpers; msg_copy; and one hand-built malformed
 * message for each class of decode failure, so every validation branch
 * in msg_decode is known to fire with EPROTO and a one-line reason.
 * The payload validator is checked against jansson itself on a table of
 * edge cases (it must accept exactly what jansson accepts), and the
 * cost-related parts of the API (msg_get_json's cache, payload sharing
 * and in-place reuse, zero-copy payload references, route stacks that
 * outgrow their room) are checked for behaviour.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "src/common/libtap/tap.h"
#include "src/common/libmsg/message.h"

#define MAXF (MSG_MAX_ROUTES + 8)

/* Encode 'm' and decode the frames into a new message. */
static msg_t *roundtrip (msg_t *m)
{
    struct msg_frame f[MAXF];
    char err[128] = "";
    int n = msg_encode (m, f, MAXF);
    if (n < 0)
        return NULL;
    msg_t *m2 = msg_decode (f, (size_t)n, err, sizeof (err));
    if (!m2)
        diag ("decode failed: %s", err);
    return m2;
}

static int streq (const char *a, const char *b)
{
    if (!a || !b)
        return a == b;
    return strcmp (a, b) == 0;
}

/* Field-by-field equality via the public API. */
static int msg_same (const msg_t *a, const msg_t *b)
{
    size_t la, lb;
    const char *pa = msg_get_payload (a, &la);
    const char *pb = msg_get_payload (b, &lb);
    if (msg_get_type (a) != msg_get_type (b)
        || msg_get_flags (a) != msg_get_flags (b)
        || msg_get_userid (a) != msg_get_userid (b)
        || msg_get_rolemask (a) != msg_get_rolemask (b)
        || msg_get_matchtag (a) != msg_get_matchtag (b)
        || !streq (msg_get_topic (a), msg_get_topic (b))
        || (pa == NULL) != (pb == NULL) || la != lb
        || (pa && memcmp (pa, pb, la) != 0)
        || msg_route_count (a) != msg_route_count (b))
        return 0;
    for (int i = 0; i < msg_route_count (a); i++) {
        if (!streq (msg_route_at (a, i), msg_route_at (b, i)))
            return 0;
    }
    return 1;
}

static void test_create (void)
{
    uint32_t u;
    int e, c, s;
    msg_t *m;

    errno = 0;
    ok (msg_create (0) == NULL && errno == EINVAL,
        "msg_create type 0 fails with EINVAL");
    errno = 0;
    ok (msg_create (MSGTYPE_ANY) == NULL && errno == EINVAL,
        "msg_create MSGTYPE_ANY fails with EINVAL");

    m = msg_create (MSGTYPE_REQUEST);
    ok (m != NULL, "msg_create request works");
    cmp_ok (msg_get_type (m), "==", MSGTYPE_REQUEST, "type is request");
    cmp_ok (msg_get_flags (m), "==", 0, "no flags");
    ok (msg_get_nodeid (m, &u) == 0 && u == NODEID_ANY,
        "new request has nodeid NODEID_ANY");
    cmp_ok (msg_route_count (m), "==", -1, "routing disabled");
    ok (msg_get_topic (m) == NULL, "no topic");
    ok (msg_get_payload (m, NULL) == NULL, "no payload");
    cmp_ok (msg_frame_count (m), "==", 1, "one frame (proto)");

    /* aux getters on the wrong type */
    errno = 0;
    ok (msg_get_errnum (m, &e) < 0 && errno == EPROTO,
        "get_errnum on a request: EPROTO");
    errno = 0;
    ok (msg_set_seq (m, 1) < 0 && errno == EPROTO,
        "set_seq on a request: EPROTO");
    errno = 0;
    ok (msg_get_control (m, &c, &s) < 0 && errno == EPROTO,
        "get_control on a request: EPROTO");
    msg_destroy (&m);
    ok (m == NULL, "msg_destroy clears the pointer");
    msg_destroy (&m);
    msg_destroy (NULL);
    pass ("msg_destroy is NULL-safe");

    m = msg_create (MSGTYPE_EVENT);
    errno = 0;
    ok (msg_get_nodeid (m, &u) < 0 && errno == EPROTO,
        "get_nodeid on an event: EPROTO");
    errno = 0;
    ok (msg_set_errnum (m, 1) < 0 && errno == EPROTO,
        "set_errnum on an event: EPROTO");
    ok (msg_get_seq (m, &u) == 0 && u == 0, "new event has seq 0");
    msg_destroy (&m);

    m = msg_create (MSGTYPE_CONTROL);
    errno = 0;
    ok (msg_get_seq (m, &u) < 0 && errno == EPROTO,
        "get_seq on a control: EPROTO");
    errno = 0;
    ok (msg_set_nodeid (m, 1) < 0 && errno == EPROTO,
        "set_nodeid on a control: EPROTO");
    msg_destroy (&m);

    m = msg_create (MSGTYPE_RESPONSE);
    ok (msg_set_errnum (m, EIO) == 0 && msg_get_errnum (m, &e) == 0
        && e == EIO, "set/get errnum on a response");
    msg_destroy (&m);

    /* NULL messages are rejected, not dereferenced */
    errno = 0;
    ok (msg_copy (NULL) == NULL && errno == EINVAL, "msg_copy NULL: EINVAL");
    errno = 0;
    ok (msg_set_topic (NULL, "a") < 0 && errno == EINVAL,
        "set_topic on NULL: EINVAL");
    errno = 0;
    ok (msg_route_push (NULL, "a") < 0 && errno == EINVAL,
        "route_push on NULL: EINVAL");
    ok (msg_get_type (NULL) == 0 && msg_frame_count (NULL) == 0
        && msg_route_count (NULL) == -1 && msg_get_topic (NULL) == NULL,
        "getters on NULL return neutral values");

    is (msg_typestr (MSGTYPE_REQUEST), "request", "typestr request");
    is (msg_typestr (MSGTYPE_RESPONSE), "response", "typestr response");
    is (msg_typestr (MSGTYPE_EVENT), "event", "typestr event");
    is (msg_typestr (MSGTYPE_CONTROL), "control", "typestr control");
    is (msg_typestr (0x10), "unknown", "typestr unknown");
}

static void test_flags_topic_payload (void)
{
    msg_t *m = msg_create (MSGTYPE_REQUEST);
    size_t len;

    errno = 0;
    ok (msg_set_flags (m, 0x80) < 0 && errno == EINVAL,
        "set_flags with an unknown bit: EINVAL");
    errno = 0;
    ok (msg_set_flags (m, MSGFLAG_TOPIC) < 0 && errno == EINVAL,
        "set_flags TOPIC without a topic: EINVAL");
    errno = 0;
    ok (msg_set_flags (m, MSGFLAG_ROUTE) < 0 && errno == EINVAL,
        "set_flags ROUTE without routing: EINVAL");
    ok (msg_set_flags (m, MSGFLAG_NORESPONSE | MSGFLAG_UPSTREAM) == 0,
        "set_flags NORESPONSE|UPSTREAM works");

    ok (msg_set_topic (m, "a.b") == 0, "set_topic works");
    is (msg_get_topic (m), "a.b", "get_topic returns it");
    cmp_ok (msg_get_flags (m), "==",
            MSGFLAG_NORESPONSE | MSGFLAG_UPSTREAM | MSGFLAG_TOPIC,
            "TOPIC flag follows the topic");
    ok (msg_set_flags (m, msg_get_flags (m) | MSGFLAG_STREAMING) == 0,
        "set_flags (get_flags | X) works when content bits agree");

    char big[MSG_MAX_TOPIC + 2];
    memset (big, 'x', sizeof (big) - 1);
    big[sizeof (big) - 1] = '\0';
    errno = 0;
    ok (msg_set_topic (m, big) < 0 && errno == EINVAL,
        "set_topic of %d bytes: EINVAL", MSG_MAX_TOPIC + 1);
    big[MSG_MAX_TOPIC] = '\0';
    ok (msg_set_topic (m, big) == 0, "set_topic of %d bytes works",
        MSG_MAX_TOPIC);
    errno = 0;
    ok (msg_set_topic (m, "") < 0 && errno == EINVAL,
        "set_topic empty: EINVAL");
    errno = 0;
    ok (msg_set_topic (m, "a\tb") < 0 && errno == EINVAL,
        "set_topic with a control char: EINVAL");
    ok (msg_set_topic (m, NULL) == 0 && msg_get_topic (m) == NULL
        && !(msg_get_flags (m) & MSGFLAG_TOPIC),
        "set_topic NULL clears topic and flag");

    errno = 0;
    ok (msg_set_payload (m, "{\"a\0\":1}", 8) < 0 && errno == EINVAL,
        "set_payload with a NUL inside: EINVAL");
    ok (msg_set_payload (m, "{\"a\":1}XYZ", 7) == 0, "set_payload works");
    is (msg_get_payload (m, &len), "{\"a\":1}",
        "payload is copied and NUL-terminated");
    cmp_ok (len, "==", 7, "payload length");
    ok (msg_get_flags (m) & MSGFLAG_PAYLOAD, "PAYLOAD flag follows payload");
    ok (msg_set_payload (m, NULL, 5) == 0
        && msg_get_payload (m, &len) == NULL && len == 0
        && !(msg_get_flags (m) & MSGFLAG_PAYLOAD),
        "set_payload NULL clears payload and flag");
    msg_destroy (&m);
}

static void test_routes (void)
{
    msg_t *m = msg_create (MSGTYPE_REQUEST);
    char id[MSG_MAX_ROUTEID + 1];

    errno = 0;
    ok (msg_route_push (m, "a") < 0 && errno == EPROTO,
        "route_push with routing disabled: EPROTO");
    errno = 0;
    ok (msg_route_pop (m, id, sizeof (id)) < 0 && errno == EPROTO,
        "route_pop with routing disabled: EPROTO");
    ok (msg_route_first (m) == NULL && msg_route_last (m) == NULL,
        "first/last NULL with routing disabled");

    msg_route_enable (m);
    cmp_ok (msg_route_count (m), "==", 0, "route_enable: empty stack");
    ok (msg_get_flags (m) & MSGFLAG_ROUTE, "ROUTE flag set");
    cmp_ok (msg_frame_count (m), "==", 2, "proto + delimiter");
    errno = 0;
    ok (msg_route_pop (m, id, sizeof (id)) < 0 && errno == ENOENT,
        "route_pop on an empty stack: ENOENT");

    ok (msg_route_push (m, "a") == 0 && msg_route_push (m, "b") == 0,
        "push a, b");
    cmp_ok (msg_route_count (m), "==", 2, "count is 2");
    is (msg_route_first (m), "b", "first (top) is the last pushed");
    is (msg_route_last (m), "a", "last (bottom) is the first pushed");
    is (msg_route_at (m, 0), "b", "at(0) is b");
    is (msg_route_at (m, 1), "a", "at(1) is a");
    ok (msg_route_at (m, 2) == NULL && msg_route_at (m, -1) == NULL,
        "at() out of range is NULL");

    /* wire order: top first */
    struct msg_frame f[MAXF];
    int n = msg_encode (m, f, MAXF);
    ok (n == 4 && f[0].size == 1 && !memcmp (f[0].data, "b", 1)
        && f[1].size == 1 && !memcmp (f[1].data, "a", 1) && f[2].size == 0,
        "encode puts the top route first, then the delimiter");
    errno = 0;
    ok (msg_encode (m, f, 3) < 0 && errno == EINVAL,
        "encode with too few frames: EINVAL");

    char small[1];
    errno = 0;
    ok (msg_route_pop (m, small, sizeof (small)) < 0 && errno == EOVERFLOW,
        "route_pop into a too-small buffer: EOVERFLOW");
    cmp_ok (msg_route_count (m), "==", 2, "failed pop leaves the stack");
    ok (msg_route_pop (m, id, sizeof (id)) == 0, "route_pop works");
    is (id, "b", "popped b");
    ok (msg_route_pop (m, NULL, 0) == 0, "route_pop with NULL id discards");
    cmp_ok (msg_route_count (m), "==", 0, "stack empty");

    errno = 0;
    ok (msg_route_push (m, "") < 0 && errno == EINVAL,
        "push empty id: EINVAL");
    char big[MSG_MAX_ROUTEID + 2];
    memset (big, 'r', sizeof (big) - 1);
    big[sizeof (big) - 1] = '\0';
    errno = 0;
    ok (msg_route_push (m, big) < 0 && errno == EINVAL,
        "push %d-byte id: EINVAL", MSG_MAX_ROUTEID + 1);
    big[MSG_MAX_ROUTEID] = '\0';
    ok (msg_route_push (m, big) == 0, "push %d-byte id works",
        MSG_MAX_ROUTEID);
    ok (msg_route_pop (m, id, sizeof (id)) == 0 && streq (id, big),
        "pop max-size id into a MSG_MAX_ROUTEID+1 buffer");

    int i, rc = 0;
    for (i = 0; i < MSG_MAX_ROUTES; i++) {
        char r[16];
        snprintf (r, sizeof (r), "%d", i);
        rc |= msg_route_push (m, r);
    }
    ok (rc == 0, "push %d routes", MSG_MAX_ROUTES);
    errno = 0;
    ok (msg_route_push (m, "x") < 0 && errno == E2BIG,
        "push one more: E2BIG");

    msg_t *m2 = roundtrip (m);
    ok (m2 != NULL && msg_same (m, m2), "max-depth stack round trips");
    is (msg_route_first (m2), "31", "top survives");
    is (msg_route_last (m2), "0", "bottom survives");
    msg_destroy (&m2);

    msg_route_disable (m);
    cmp_ok (msg_route_count (m), "==", -1, "route_disable");
    ok (!(msg_get_flags (m) & MSGFLAG_ROUTE), "ROUTE flag cleared");
    msg_destroy (&m);
}

/* One round trip per type x {routes} x {topic} x {payload}. */
static void test_roundtrip (void)
{
    const int types[] = { MSGTYPE_REQUEST, MSGTYPE_RESPONSE,
                          MSGTYPE_EVENT, MSGTYPE_CONTROL };
    for (size_t t = 0; t < 4; t++) {
        int bad = 0;
        for (int variant = 0; variant < 8; variant++) {
            msg_t *m = msg_create (types[t]);
            msg_set_userid (m, 1000 + variant);
            msg_set_rolemask (m, 0x5);
            msg_set_matchtag (m, 0xdeadbeef);
            if (variant & 1) {
                msg_route_enable (m);
                msg_route_push (m, "3");
                msg_route_push (m, "f1b2c3d4-aaaa-4bbb-8ccc-0123456789ab");
            }
            if (variant & 2)
                msg_set_topic (m, "svc.method");
            if (variant & 4)
                msg_set_payload (m, "{\"k\":[1,\"two\"]}", 15);
            switch (types[t]) {
                case MSGTYPE_REQUEST:
                    msg_set_nodeid (m, 7);
                    msg_set_flags (m, msg_get_flags (m) | MSGFLAG_UPSTREAM);
                    break;
                case MSGTYPE_RESPONSE:
                    msg_set_flags (m, msg_get_flags (m) | MSGFLAG_STREAMING);
                    break;
                case MSGTYPE_EVENT:
                    msg_set_seq (m, 123456);
                    break;
                case MSGTYPE_CONTROL:
                    msg_set_control (m, 2, -1);
                    break;
            }
            msg_t *m2 = roundtrip (m);
            if (!m2 || !msg_same (m, m2)) {
                diag ("%s variant %d did not round trip",
                      msg_typestr (types[t]), variant);
                bad++;
            }
            uint32_t u;
            int a, b;
            if (m2 && types[t] == MSGTYPE_REQUEST
                && (msg_get_nodeid (m2, &u) < 0 || u != 7))
                bad++;
            if (m2 && types[t] == MSGTYPE_EVENT
                && (msg_get_seq (m2, &u) < 0 || u != 123456))
                bad++;
            if (m2 && types[t] == MSGTYPE_CONTROL
                && (msg_get_control (m2, &a, &b) < 0 || a != 2 || b != -1))
                bad++;
            msg_destroy (&m);
            msg_destroy (&m2);
        }
        ok (bad == 0, "%s: all 8 route/topic/payload variants round trip",
            msg_typestr (types[t]));
    }
}

static void test_helpers (void)
{
    msg_t *req, *rsp, *m;
    int e;
    uint32_t u;
    size_t len;

    errno = 0;
    ok (msg_request_create (NULL, 0, NULL) == NULL && errno == EINVAL,
        "request_create without topic: EINVAL");
    errno = 0;
    ok (msg_request_create ("a.b", 0, "[1]") == NULL && errno == EINVAL,
        "request_create with a non-object payload: EINVAL");
    req = msg_request_create ("kvs.get", 3, "{\"key\":\"x\"}");
    ok (req != NULL, "request_create works");
    ok (msg_get_nodeid (req, &u) == 0 && u == 3, "nodeid set");
    is (msg_get_payload (req, NULL), "{\"key\":\"x\"}", "payload set");
    msg_set_userid (req, 42);
    msg_set_rolemask (req, 9);
    msg_set_matchtag (req, 77);
    msg_route_enable (req);
    msg_route_push (req, "client-uuid");
    msg_route_push (req, "1");

    rsp = msg_response_create (req, "{\"val\":1}");
    ok (rsp != NULL, "response_create works");
    cmp_ok (msg_get_type (rsp), "==", MSGTYPE_RESPONSE, "it is a response");
    is (msg_get_topic (rsp), "kvs.get", "copies topic");
    cmp_ok (msg_get_matchtag (rsp), "==", 77, "copies matchtag");
    cmp_ok (msg_get_userid (rsp), "==", 42, "copies userid");
    cmp_ok (msg_get_rolemask (rsp), "==", 9, "copies rolemask");
    ok (msg_route_count (rsp) == 2 && streq (msg_route_first (rsp), "1")
        && streq (msg_route_last (rsp), "client-uuid"),
        "copies the route stack in order");
    ok (msg_get_errnum (rsp, &e) == 0 && e == 0, "errnum 0");
    m = roundtrip (rsp);
    ok (m && msg_same (m, rsp), "response round trips");
    msg_destroy (&m);
    msg_destroy (&rsp);

    errno = 0;
    ok (msg_response_create (req, "nope") == NULL && errno == EINVAL,
        "response_create with invalid JSON: EINVAL");
    errno = 0;
    ok (msg_error_response_create (req, 0, "x") == NULL && errno == EINVAL,
        "error_response_create with errnum 0: EINVAL");

    rsp = msg_error_response_create (req, ENOENT, "No such key");
    ok (rsp != NULL, "error_response_create works");
    ok (msg_get_errnum (rsp, &e) == 0 && e == ENOENT, "carries errnum");
    is (msg_get_payload (rsp, &len), "No such key", "carries errstr");
    m = roundtrip (rsp);
    ok (m && msg_same (m, rsp), "error response with text round trips");
    msg_destroy (&m);
    msg_destroy (&rsp);

    rsp = msg_error_response_create (req, EPERM, NULL);
    ok (rsp && msg_get_payload (rsp, NULL) == NULL,
        "error response without errstr has no payload");
    msg_destroy (&rsp);

    m = msg_event_create ("hb", NULL);
    errno = 0;
    ok (msg_response_create (m, NULL) == NULL && errno == EINVAL,
        "response_create from an event: EINVAL");
    msg_destroy (&m);

    /* msg_copy is deep: changing the copy leaves the original alone */
    m = msg_copy (req);
    ok (m && msg_same (m, req), "msg_copy is equal");
    msg_set_topic (m, "other.topic");
    msg_set_payload (m, "{}", 2);
    msg_route_pop (m, NULL, 0);
    msg_route_push (m, "zz");
    is (msg_get_topic (req), "kvs.get", "original topic intact");
    is (msg_get_payload (req, NULL), "{\"key\":\"x\"}",
        "original payload intact");
    is (msg_route_first (req), "1", "original routes intact");
    msg_destroy (&m);
    msg_destroy (&req);

    m = msg_event_create ("heartbeat.pulse", "{\"epoch\":1}");
    ok (m && msg_get_seq (m, &u) == 0 && u == 0, "event_create: seq 0");
    msg_destroy (&m);
    m = msg_control_create (3, 4);
    int c, s;
    ok (m && msg_get_control (m, &c, &s) == 0 && c == 3 && s == 4,
        "control_create sets type and status");
    msg_destroy (&m);
}

/* ---- decode failures, one per validation class ---- */

struct raw {
    struct msg_frame f[MAXF + 4];
    size_t n;
    uint8_t proto[MSG_PROTO_SIZE + 1];
};

static void raw_init (struct raw *r)
{
    r->n = 0;
    memset (r->proto, 0, sizeof (r->proto));
    r->proto[0] = MSG_PROTO_MAGIC;
    r->proto[1] = MSG_PROTO_VERSION;
    r->proto[2] = MSGTYPE_REQUEST;
}

static void raw_add (struct raw *r, const char *s, size_t len)
{
    r->f[r->n].data = s;
    r->f[r->n].size = len;
    r->n++;
}

static void raw_str (struct raw *r, const char *s)
{
    raw_add (r, s, strlen (s));
}

static void raw_proto (struct raw *r, uint8_t type, uint8_t flags,
                       uint32_t aux1, size_t size)
{
    r->proto[2] = type;
    r->proto[3] = flags;
    r->proto[12] = (uint8_t)(aux1 >> 24);
    r->proto[13] = (uint8_t)(aux1 >> 16);
    r->proto[14] = (uint8_t)(aux1 >> 8);
    r->proto[15] = (uint8_t)aux1;
    r->f[r->n].data = r->proto;
    r->f[r->n].size = size;
    r->n++;
}

/* Expect decode to fail with EPROTO and a one-line reason. */
static void bad (struct raw *r, const char *what)
{
    char err[128];
    memset (err, 0, sizeof (err));
    errno = 0;
    msg_t *m = msg_decode (r->f, r->n, err, sizeof (err));
    int pass = (m == NULL && errno == EPROTO && err[0] != '\0'
                && strchr (err, '\n') == NULL);
    ok (pass, "decode rejects %s: %s", what, err);
    msg_destroy (&m);
}

static void good (struct raw *r, const char *what)
{
    char err[128] = "";
    msg_t *m = msg_decode (r->f, r->n, err, sizeof (err));
    ok (m != NULL, "decode accepts %s", what);
    if (!m)
        diag ("%s", err);
    msg_destroy (&m);
}

static void test_decode_errors (void)
{
    struct raw r;
    const int TP = MSGFLAG_TOPIC | MSGFLAG_PAYLOAD;

    errno = 0;
    ok (msg_decode (NULL, 0, NULL, 0) == NULL && errno == EPROTO,
        "decode of no frames: EPROTO (errbuf may be NULL)");

    raw_init (&r);
    raw_proto (&r, MSGTYPE_REQUEST, 0, 0, 7);
    bad (&r, "a truncated proto");
    raw_init (&r);
    raw_proto (&r, MSGTYPE_REQUEST, 0, 0, MSG_PROTO_SIZE + 1);
    bad (&r, "an oversized proto");

    raw_init (&r);
    r.proto[0] = 0x8f;
    r.f[0].data = r.proto;
    r.f[0].size = MSG_PROTO_SIZE;
    r.n = 1;
    bad (&r, "bad magic");

    raw_init (&r);
    r.proto[1] = 2;
    r.f[0].data = r.proto;
    r.f[0].size = MSG_PROTO_SIZE;
    r.n = 1;
    bad (&r, "bad version");

    raw_init (&r);
    raw_proto (&r, 0x03, 0, 0, MSG_PROTO_SIZE);
    bad (&r, "two type bits");
    raw_init (&r);
    raw_proto (&r, 0x00, 0, 0, MSG_PROTO_SIZE);
    bad (&r, "type 0");
    raw_init (&r);
    raw_proto (&r, 0x10, 0, 0, MSG_PROTO_SIZE);
    bad (&r, "unknown type 0x10");

    raw_init (&r);
    raw_proto (&r, MSGTYPE_EVENT, 0x80, 0, MSG_PROTO_SIZE);
    bad (&r, "an unknown flag");

    raw_init (&r);
    raw_str (&r, "a");
    raw_str (&r, "b");
    raw_proto (&r, MSGTYPE_REQUEST, MSGFLAG_ROUTE, 0, MSG_PROTO_SIZE);
    bad (&r, "a missing delimiter");
    raw_init (&r);
    raw_proto (&r, MSGTYPE_REQUEST, MSGFLAG_ROUTE, 0, MSG_PROTO_SIZE);
    bad (&r, "ROUTE flag with only a proto");

    raw_init (&r);
    raw_str (&r, "");
    raw_proto (&r, MSGTYPE_REQUEST, MSGFLAG_ROUTE, 0, MSG_PROTO_SIZE);
    good (&r, "an empty route stack");

    char ids[MSG_MAX_ROUTES + 1][12];
    raw_init (&r);
    for (int i = 0; i < MSG_MAX_ROUTES + 1; i++) {
        snprintf (ids[i], sizeof (ids[i]), "%d", i);
        raw_str (&r, ids[i]);
    }
    raw_str (&r, "");
    raw_proto (&r, MSGTYPE_REQUEST, MSGFLAG_ROUTE, 0, MSG_PROTO_SIZE);
    bad (&r, "too many routes");

    char bigid[MSG_MAX_ROUTEID + 1];
    memset (bigid, 'r', sizeof (bigid));
    raw_init (&r);
    raw_add (&r, bigid, sizeof (bigid));
    raw_str (&r, "");
    raw_proto (&r, MSGTYPE_REQUEST, MSGFLAG_ROUTE, 0, MSG_PROTO_SIZE);
    bad (&r, "an oversized route id");
    raw_init (&r);
    raw_add (&r, bigid, MSG_MAX_ROUTEID);
    raw_str (&r, "");
    raw_proto (&r, MSGTYPE_REQUEST, MSGFLAG_ROUTE, 0, MSG_PROTO_SIZE);
    good (&r, "a max-size route id");

    raw_init (&r);
    raw_add (&r, "a\x01", 2);
    raw_str (&r, "");
    raw_proto (&r, MSGTYPE_REQUEST, MSGFLAG_ROUTE, 0, MSG_PROTO_SIZE);
    bad (&r, "a route id with a control char");

    raw_init (&r);
    raw_str (&r, "a\nb");
    raw_proto (&r, MSGTYPE_EVENT, MSGFLAG_TOPIC, 0, MSG_PROTO_SIZE);
    bad (&r, "a topic with a control char");
    raw_init (&r);
    raw_add (&r, "a\0b", 3);
    raw_proto (&r, MSGTYPE_EVENT, MSGFLAG_TOPIC, 0, MSG_PROTO_SIZE);
    bad (&r, "a topic with a NUL");
    raw_init (&r);
    raw_str (&r, "a\x7f");
    raw_proto (&r, MSGTYPE_EVENT, MSGFLAG_TOPIC, 0, MSG_PROTO_SIZE);
    bad (&r, "a topic with DEL");
    raw_init (&r);
    raw_str (&r, "");
    raw_proto (&r, MSGTYPE_EVENT, MSGFLAG_TOPIC, 0, MSG_PROTO_SIZE);
    bad (&r, "an empty topic");
    char bigtopic[MSG_MAX_TOPIC + 1];
    memset (bigtopic, 't', sizeof (bigtopic));
    raw_init (&r);
    raw_add (&r, bigtopic, sizeof (bigtopic));
    raw_proto (&r, MSGTYPE_EVENT, MSGFLAG_TOPIC, 0, MSG_PROTO_SIZE);
    bad (&r, "an oversized topic");

    raw_init (&r);
    raw_str (&r, "a.b");
    raw_str (&r, "{\"a\":");
    raw_proto (&r, MSGTYPE_REQUEST, TP, 0, MSG_PROTO_SIZE);
    bad (&r, "bad JSON");
    raw_init (&r);
    raw_str (&r, "a.b");
    raw_str (&r, "{} {}");
    raw_proto (&r, MSGTYPE_REQUEST, TP, 0, MSG_PROTO_SIZE);
    bad (&r, "JSON with trailing data");
    raw_init (&r);
    raw_str (&r, "a.b");
    raw_str (&r, "[1,2]");
    raw_proto (&r, MSGTYPE_EVENT, TP, 0, MSG_PROTO_SIZE);
    bad (&r, "a JSON array instead of an object");
    raw_init (&r);
    raw_str (&r, "a.b");
    raw_str (&r, "\"str\"");
    raw_proto (&r, MSGTYPE_RESPONSE, TP, 0, MSG_PROTO_SIZE);
    bad (&r, "a JSON string in a successful response");
    raw_init (&r);
    raw_str (&r, "a.b");
    raw_add (&r, "{\"a\":1}\0", 8);
    raw_proto (&r, MSGTYPE_REQUEST, TP, 0, MSG_PROTO_SIZE);
    bad (&r, "a NUL in the payload");
    raw_init (&r);
    raw_str (&r, "a.b");
    raw_str (&r, "{\"a\":\"\\u0000\"}");
    raw_proto (&r, MSGTYPE_REQUEST, TP, 0, MSG_PROTO_SIZE);
    bad (&r, "an escaped NUL in JSON");
    raw_init (&r);
    raw_str (&r, "a.b");
    raw_add (&r, "oops\0", 5);
    raw_proto (&r, MSGTYPE_RESPONSE, TP, EIO, MSG_PROTO_SIZE);
    bad (&r, "a NUL in an error string");
    raw_init (&r);
    raw_str (&r, "a.b");
    raw_str (&r, "not JSON at all");
    raw_proto (&r, MSGTYPE_RESPONSE, TP, EIO, MSG_PROTO_SIZE);
    good (&r, "plain text in an error response");
    raw_init (&r);
    raw_str (&r, "{}");
    raw_proto (&r, MSGTYPE_CONTROL, MSGFLAG_PAYLOAD, 0, MSG_PROTO_SIZE);
    good (&r, "a control message with a JSON payload");

    /* frame count vs. flags, both ways */
    raw_init (&r);
    raw_str (&r, "a.b");
    raw_proto (&r, MSGTYPE_REQUEST, TP, 0, MSG_PROTO_SIZE);
    bad (&r, "too few frames for the flags");
    raw_init (&r);
    raw_str (&r, "a.b");
    raw_str (&r, "{}");
    raw_str (&r, "{}");
    raw_proto (&r, MSGTYPE_REQUEST, TP, 0, MSG_PROTO_SIZE);
    bad (&r, "too many frames for the flags");
    raw_init (&r);
    raw_str (&r, "a.b");
    raw_proto (&r, MSGTYPE_REQUEST, 0, 0, MSG_PROTO_SIZE);
    bad (&r, "an extra frame with no flags");
    raw_init (&r);
    raw_str (&r, "r1");
    raw_str (&r, "");
    raw_str (&r, "a.b");
    raw_str (&r, "{}");
    raw_proto (&r, MSGTYPE_REQUEST, MSGFLAG_ROUTE | MSGFLAG_TOPIC, 0,
               MSG_PROTO_SIZE);
    bad (&r, "an extra frame after the delimiter");
    raw_init (&r);
    raw_str (&r, "r1");
    raw_str (&r, "");
    raw_proto (&r, MSGTYPE_REQUEST, MSGFLAG_ROUTE | MSGFLAG_TOPIC, 0,
               MSG_PROTO_SIZE);
    bad (&r, "a missing frame after the delimiter");
    raw_init (&r);
    raw_str (&r, "");
    raw_str (&r, "a.b");
    raw_proto (&r, MSGTYPE_REQUEST, MSGFLAG_TOPIC, 0, MSG_PROTO_SIZE);
    bad (&r, "a delimiter without the ROUTE flag");

    /* a well-formed routed error response with an empty payload */
    raw_init (&r);
    raw_str (&r, "r1");
    raw_str (&r, "");
    raw_str (&r, "a.b");
    raw_str (&r, "");
    raw_proto (&r, MSGTYPE_RESPONSE, MSGFLAG_ROUTE | TP, ENOENT,
               MSG_PROTO_SIZE);
    good (&r, "an error response with an empty payload");

    /* a frame with a size but no data must not be dereferenced */
    raw_init (&r);
    raw_add (&r, NULL, 4);
    raw_proto (&r, MSGTYPE_EVENT, MSGFLAG_TOPIC, 0, MSG_PROTO_SIZE);
    bad (&r, "a frame with NULL data");

    /* a tiny errbuf is truncated, not overrun */
    char tiny[4] = "xxx";
    raw_init (&r);
    raw_proto (&r, MSGTYPE_REQUEST, 0, 0, 7);
    ok (msg_decode (r.f, r.n, tiny, sizeof (tiny)) == NULL
        && strlen (tiny) == 3, "errbuf is truncated to its size");
}

/* Does jansson (flags 0) parse s[0..len) as an object? */
static int jansson_object (const char *s, size_t len)
{
    json_t *o = json_loadb (s, len, 0, NULL);
    int isobj = o && json_is_object (o);
    json_decref (o);
    return isobj;
}

/* msg_json_check must agree with jansson on every case. */
static void test_json_check (void)
{
    static const char *cases[] = {
        "{}", " {} ", "\t{\r\n}\n", "{\"a\":1}", "{\"a\":[1,2,{\"b\":null}]}",
        "{\"a\":true,\"b\":false,\"c\":null}", "{\"a\":\"\"}",
        "{\"a\":1,\"a\":2}",                    /* duplicate keys */
        "[]", "[1]", "1", "\"s\"", "null", "", " ",
        "{", "}", "{\"a\"}", "{\"a\":}", "{\"a\":1,}", "{,}", "{\"a\" 1}",
        "{\"a\":[1,]}", "{\"a\":[,1]}", "{\"a\":1}x", "{\"a\":1}{}",
        "{a:1}", "{'a':1}", "{\"a\":tru}", "{\"a\":truex}", "{\"a\":nul}",
        "{\"a\":True}",
        /* numbers */
        "{\"a\":0}", "{\"a\":-0}", "{\"a\":01}", "{\"a\":-01}", "{\"a\":-}",
        "{\"a\":1.}", "{\"a\":.5}", "{\"a\":1.5}", "{\"a\":1e5}",
        "{\"a\":1E+5}", "{\"a\":1e-5}", "{\"a\":1e}", "{\"a\":1e+}",
        "{\"a\":+1}", "{\"a\":0x10}", "{\"a\":1.5e3.2}",
        "{\"a\":9223372036854775807}", "{\"a\":9223372036854775808}",
        "{\"a\":-9223372036854775808}", "{\"a\":-9223372036854775809}",
        "{\"a\":99999999999999999999}", "{\"a\":1e308}", "{\"a\":1.7e308}",
        "{\"a\":1.8e308}", "{\"a\":1e309}", "{\"a\":-1e309}",
        "{\"a\":1e-400}", "{\"a\":0e99999999999999999999}",
        "{\"a\":0.000001e314}", "{\"a\":179769313486231570000e288}",
        "{\"a\":17976931348623159e292}", "{\"a\":1e99999999999999999999}",
        /* strings and escapes */
        "{\"a\":\"\\n\\t\\r\\b\\f\\/\\\\\\\"\"}", "{\"a\":\"\\x\"}",
        "{\"a\":\"\\u0041\"}", "{\"a\":\"\\u00e9\"}", "{\"a\":\"\\u0000\"}",
        "{\"\\u0000\":1}", "{\"a\":\"\\u12\"}", "{\"a\":\"\\u12G4\"}",
        "{\"a\":\"\\ud83d\\ude00\"}", "{\"a\":\"\\ud83d\"}",
        "{\"a\":\"\\ud83dx\"}", "{\"a\":\"\\ude00\"}",
        "{\"a\":\"\\ud83d\\u0041\"}", "{\"a\":\"\\ud83d\\ud83d\"}",
        "{\"a\":\"unterminated}", "{\"a\":\"tab\there\"}",
        "{\"a\":\"\x7f\"}",
        /* UTF-8 */
        "{\"a\":\"\xc3\xa9\"}", "{\"a\":\"\xe2\x82\xac\"}",
        "{\"a\":\"\xf0\x9f\x98\x80\"}", "{\"a\":\"\xc0\x80\"}",
        "{\"a\":\"\xc1\xbf\"}", "{\"a\":\"\xe0\x80\xaf\"}",
        "{\"a\":\"\xed\xa0\x80\"}", "{\"a\":\"\xf4\x90\x80\x80\"}",
        "{\"a\":\"\xf5\x80\x80\x80\"}", "{\"a\":\"\x80\"}",
        "{\"a\":\"\xc3\"}", "{\"a\":\"\xe2\x82\"}", "{\"a\":\"\xff\"}",
        "{\"\xc3\xa9\":1}", "{\"a\":1}\xc3\xa9",
    };
    int agree = 0, total = 0;
    char why[128];

    for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++) {
        size_t len = strlen (cases[i]);
        int mine = msg_json_check (cases[i], len, why, sizeof (why)) == 0;
        int theirs = jansson_object (cases[i], len);
        total++;
        if (mine == theirs)
            agree++;
        else
            diag ("disagree on '%s': msg_json_check %s, jansson %s",
                  cases[i], mine ? "accepts" : why,
                  theirs ? "accepts" : "rejects");
    }
    ok (agree == total, "msg_json_check agrees with jansson on %d cases",
        total);

    /* long strings, read eight bytes at a time: one odd byte (each kind
     * that ends a plain run, and plain ones either side of each kind's
     * threshold) at every offset of strings 1..40 bytes long */
    static const unsigned char odd[] = {
        0x00, 0x01, 0x1f, 0x20, 0x21, '"', '\\', 0x5b, 0x5d, 0x7f, 0x80,
        0xbf, 0xc3, 0xff,
    };
    agree = total = 0;
    for (size_t len = 1; len <= 40; len++) {
        for (size_t at = 0; at < len; at++) {
            for (size_t k = 0; k < sizeof (odd); k++) {
                char s[64];
                size_t n = 0;
                memcpy (s, "{\"a\":\"", 6);
                n = 6;
                for (size_t j = 0; j < len; j++)
                    s[n++] = j == at ? (char)odd[k] : 'p';
                memcpy (s + n, "\"}", 2);
                n += 2;
                int mine = msg_json_check (s, n, NULL, 0) == 0;
                int theirs = memchr (s, '\0', n) ? 0 : jansson_object (s, n);
                total++;
                if (mine == theirs)
                    agree++;
                else
                    diag ("disagree on byte 0x%02x at %zu of %zu: mine %d",
                          odd[k], at, len, mine);
            }
        }
    }
    ok (agree == total, "long strings: msg_json_check agrees with jansson "
        "on all %d", total);

    /* nesting: the object is depth 1, jansson allows 2048 */
    for (int depth = 2046; depth <= 2050; depth++) {
        size_t n = 0;
        char *s = malloc (2 * (size_t)depth + 16);
        if (!s)
            bail_out ("out of memory");
        s[n++] = '{';
        memcpy (s + n, "\"a\":", 4);
        n += 4;
        for (int k = 1; k < depth - 1; k++)
            s[n++] = '[';
        s[n++] = '1';
        for (int k = 1; k < depth - 1; k++)
            s[n++] = ']';
        s[n++] = '}';
        ok ((msg_json_check (s, n, NULL, 0) == 0) == jansson_object (s, n),
            "nesting %d deep: same verdict as jansson (%s)", depth,
            jansson_object (s, n) ? "accepted" : "refused");
        free (s);
    }

    ok (msg_json_check ("{\"a\":1}", 3, why, sizeof (why)) < 0
        && errno == EINVAL && strchr (why, '\n') == NULL && *why,
        "msg_json_check: a cut-off object fails with EINVAL and a reason");
    ok (msg_json_check ("{\"a\":\"x\0y\"}", 11, NULL, 0) < 0,
        "msg_json_check: a NUL byte inside the length is refused");
    ok (msg_json_check ("{}xyz", 2, NULL, 0) == 0,
        "msg_json_check reads only len bytes");
    ok (msg_json_check ("{\"a\":[1\0,2]}", 12, NULL, 0) < 0,
        "a NUL after a number is refused (jansson's lexer would skip it)");
}

static void test_json_cache (void)
{
    msg_t *m = msg_request_create ("a.b", 1, "{\"x\":[1,2],\"y\":\"z\"}");
    json_t *o, *o2;
    msg_t *cpy, *rsp;

    o = msg_get_json (m);
    ok (o != NULL && json_is_object (o)
        && json_integer_value (json_array_get (json_object_get (o, "x"), 1))
               == 2, "msg_get_json parses the payload");
    o2 = msg_get_json (m);
    ok (o2 == o, "a second msg_get_json returns the same parse (cached)");
    cpy = msg_copy (m);
    ok (cpy && msg_get_json (cpy) == o, "a copy shares the parse");
    msg_destroy (&m);
    ok (cpy && json_is_object (msg_get_json (cpy)),
        "the copy's parse outlives the original");
    ok (msg_set_payload (cpy, "{\"k\":3}", 7) == 0
        && (o = msg_get_json (cpy))
        && json_integer_value (json_object_get (o, "k")) == 3,
        "a new payload is parsed anew");
    ok (msg_set_payload (cpy, NULL, 0) == 0 && !msg_get_json (cpy)
        && errno == ENOENT, "no payload: ENOENT");
    ok (msg_set_payload (cpy, "[1]", 3) == 0 && !msg_get_json (cpy)
        && errno == EPROTO, "a payload that is not an object: EPROTO");
    ok (msg_set_payload (cpy, "{oops", 5) == 0 && !msg_get_json (cpy)
        && errno == EPROTO, "a payload that is not JSON: EPROTO");
    rsp = msg_error_response_create (cpy, ENOENT, "{\"looks\":\"like json\"}");
    ok (rsp && !msg_get_json (rsp) && errno == EPROTO,
        "an error response's text is never JSON to msg_get_json");
    msg_destroy (&rsp);
    msg_destroy (&cpy);
    ok (msg_get_json (NULL) == NULL && errno == EINVAL,
        "msg_get_json (NULL): EINVAL");
}

static void test_payload_sharing (void)
{
    msg_t *m = msg_request_create ("a.b", 1, "{\"x\":1}");
    msg_t *cpy;
    const char *p1, *p2;
    void *ref;

    cpy = msg_copy (m);
    p1 = msg_get_payload (m, NULL);
    ok (cpy && msg_get_payload (cpy, NULL) == p1,
        "msg_copy shares the payload bytes");
    ok (msg_set_payload (cpy, "{\"y\":2}", 7) == 0
        && streq (msg_get_payload (m, NULL), "{\"x\":1}")
        && streq (msg_get_payload (cpy, NULL), "{\"y\":2}"),
        "setting a shared payload leaves the other copy alone");
    p2 = msg_get_payload (cpy, NULL);
    ok (msg_set_payload (cpy, "{\"z\":3}", 7) == 0
        && msg_get_payload (cpy, NULL) == p2
        && streq (p2, "{\"z\":3}"),
        "an unshared payload of the same size is rewritten in place");
    ok (msg_set_payload (cpy, "{\"zz\":3}", 8) == 0
        && streq (msg_get_payload (cpy, NULL), "{\"zz\":3}"),
        "a longer payload gets a new buffer");

    ref = msg_payload_ref (m);
    ok (ref != NULL, "msg_payload_ref gives a reference");
    msg_destroy (&m);
    ok (streq (p1, "{\"x\":1}"),
        "the referenced bytes outlive their message, unchanged");
    msg_payload_unref (NULL, ref);
    m = msg_create (MSGTYPE_EVENT);
    ok (msg_payload_ref (m) == NULL && errno == ENOENT,
        "msg_payload_ref without a payload: ENOENT");
    msg_destroy (&m);

    /* a reference taken on a message blocks in-place rewriting */
    m = msg_request_create ("a.b", 1, "{\"q\":1}");
    p1 = msg_get_payload (m, NULL);
    ref = msg_payload_ref (m);
    ok (msg_set_payload (m, "{\"r\":2}", 7) == 0 && streq (p1, "{\"q\":1}"),
        "a referenced payload is never rewritten in place");
    msg_payload_unref (NULL, ref);
    msg_destroy (&m);
    msg_destroy (&cpy);
}

/* Push past the room a request keeps, change the topic back and forth:
 * the message stays exact. */
static void test_growth (void)
{
    msg_t *m = msg_request_create ("t", 1, NULL);
    char id[128], want[128];
    int bad = 0;
    msg_t *m2;

    msg_route_enable (m);
    for (int i = 0; i < MSG_MAX_ROUTES; i++) {
        snprintf (id, sizeof (id), "%d-%.*s", i, (i * 2) % 61,
                  "0123456789012345678901234567890123456789012345678901234567890123");
        if (msg_route_push (m, id) < 0 || !streq (msg_route_first (m), id))
            bad++;
    }
    ok (bad == 0 && msg_route_count (m) == MSG_MAX_ROUTES,
        "a stack grows past its initial room to %d ids", MSG_MAX_ROUTES);
    snprintf (want, sizeof (want), "0-");
    ok (streq (msg_route_last (m), want) && streq (msg_route_at (m, 31),
                                                   want),
        "the bottom survives growth");
    ok (msg_set_topic (m, "a-much-longer-topic-than-before") == 0
        && streq (msg_get_topic (m), "a-much-longer-topic-than-before")
        && msg_set_topic (m, "short") == 0
        && streq (msg_get_topic (m), "short")
        && msg_set_topic (m, "short") == 0,
        "topics grow and shrink");
    m2 = roundtrip (m);
    ok (m2 && msg_same (m, m2), "a grown message round trips");
    msg_destroy (&m2);
    bad = 0;
    for (int i = MSG_MAX_ROUTES - 1; i >= 0; i--) {
        snprintf (want, sizeof (want), "%d-%.*s", i, (i * 2) % 61,
                  "0123456789012345678901234567890123456789012345678901234567890123");
        if (msg_route_pop (m, id, sizeof (id)) < 0 || !streq (id, want))
            bad++;
    }
    ok (bad == 0 && msg_route_count (m) == 0, "every id pops back in order");
    msg_destroy (&m);
}

static void test_decode_reuse (void)
{
    struct msg_frame f[MAXF];
    msg_t *big = msg_request_create ("a.long.topic.name", 3,
                                     "{\"payload\":\"long enough\"}");
    msg_t *small = msg_event_create ("e", "{\"s\":1}");
    msg_t *spare, *m, *keep;
    const char *pl;
    int n;

    msg_route_enable (big);
    msg_route_push (big, "client-1");
    msg_route_push (big, "7");
    n = msg_encode (small, f, MAXF);

    /* a big spare takes a small message in place, payload and all */
    spare = msg_copy (big);
    pl = msg_get_payload (big, NULL);
    msg_destroy (&big);         /* the spare's payload is now its own */
    keep = spare;
    m = msg_decode_reuse (&spare, f, (size_t)n, NULL, 0);
    ok (m == keep && spare == NULL, "a big enough spare is reused in place");
    ok (m && msg_same (m, small), "the reused message equals the input");
    ok (m && msg_get_payload (m, NULL) == pl,
        "and its unshared payload buffer is reused too");
    ok (m && msg_get_json (m) && json_integer_value (json_object_get (
            msg_get_json (m), "s")) == 1, "msg_get_json sees the new payload");

    /* a spare too small for the next one is replaced */
    n = msg_encode (m, f, MAXF);
    spare = msg_create (MSGTYPE_CONTROL);
    msg_t *m2 = msg_decode_reuse (&spare, f, (size_t)n, NULL, 0);
    ok (m2 && spare == NULL && msg_same (m2, small),
        "a small spare is replaced by a fresh message");
    msg_destroy (&m2);

    /* a payload a copy shares is left alone */
    spare = m;
    keep = msg_copy (m);
    pl = msg_get_payload (keep, NULL);
    msg_t *other = msg_event_create ("e", "{\"t\":2}");
    n = msg_encode (other, f, MAXF);
    m = msg_decode_reuse (&spare, f, (size_t)n, NULL, 0);
    ok (m && msg_same (m, other) && streq (pl, "{\"s\":1}")
        && streq (msg_get_payload (keep, NULL), "{\"s\":1}"),
        "a shared payload is not overwritten by reuse");

    /* failure leaves the spare alone */
    struct msg_frame bad = { "short", 5 };
    spare = m;
    ok (msg_decode_reuse (&spare, &bad, 1, NULL, 0) == NULL
        && errno == EPROTO && spare == m && msg_same (spare, other),
        "a failed decode leaves the spare as it was");
    m = msg_decode_reuse (NULL, f, (size_t)n, NULL, 0);
    ok (m && m != spare && msg_same (m, other),
        "msg_decode_reuse (NULL, ...) decodes into a new message");
    msg_destroy (&m);
    msg_destroy (&spare);
    msg_destroy (&keep);
    msg_destroy (&other);
    msg_destroy (&small);
}

static void test_route_id_rank (void)
{
    uint32_t r = 7;

    ok (msg_route_id_rank ("0", &r) && r == 0, "route id \"0\" is rank 0");
    ok (msg_route_id_rank ("4294967295", &r) && r == UINT32_MAX,
        "the largest rank");
    r = 7;
    ok (!msg_route_id_rank ("4294967296", &r) && r == 7,
        "past UINT32_MAX is no rank (and *rank untouched)");
    ok (!msg_route_id_rank ("12a", &r) && !msg_route_id_rank ("", &r)
        && !msg_route_id_rank (NULL, &r) && !msg_route_id_rank ("-1", &r)
        && !msg_route_id_rank (" 1", &r),
        "trailing junk, empty, NULL, a sign or a space: no rank");
    ok (!msg_route_id_rank ("f3b1c2d0-7c5e-4c6a-9a55-0d2f9e1b8a77", &r),
        "a client uuid is no rank");
}

/* Which payloads are known to be JSON objects, so services skip a scan. */
static void test_payload_checked (void)
{
    msg_t *req = msg_create (MSGTYPE_REQUEST);
    msg_t *rsp, *m2, *err;

    msg_set_topic (req, "svc.method");
    ok (!msg_payload_checked (req), "no payload: not checked");
    msg_set_payload (req, "{\"a\":1}", 7);
    ok (!msg_payload_checked (req), "msg_set_payload checks nothing");
    m2 = roundtrip (req);
    ok (m2 && msg_payload_checked (m2), "a decoded payload is checked");
    ok (msg_set_payload (m2, "nope", 4) == 0 && !msg_payload_checked (m2),
        "rewriting it in place clears the mark");
    msg_destroy (&m2);
    rsp = msg_response_create (req, "{\"b\":2}");
    ok (rsp && msg_payload_checked (rsp), "a helper's payload is checked");
    ok (msg_set_json_trusted (rsp, "{\"c\":3}", 7) == 0
        && msg_payload_checked (rsp)
        && !strcmp (msg_get_payload (rsp, NULL), "{\"c\":3}"),
        "msg_set_json_trusted sets it, marked checked");
    ok (msg_set_json_trusted (rsp, NULL, 0) < 0 && errno == EINVAL,
        "msg_set_json_trusted: NULL is EINVAL");
    ok (msg_set_json_trusted (rsp, "{\"c\0\":3}", 8) < 0 && errno == EINVAL,
        "msg_set_json_trusted: a NUL is EINVAL");
    msg_destroy (&rsp);
    /* an error response's text is not JSON: decoded, it is not checked */
    err = msg_error_response_create (req, ENOENT, "no such thing");
    m2 = err ? roundtrip (err) : NULL;
    ok (m2 && !msg_payload_checked (m2),
        "an error response's decoded text is not marked checked");
    msg_destroy (&m2);
    msg_destroy (&err);
    /* a trusted payload that is not JSON is still refused by a receiver */
    rsp = msg_response_create (req, NULL);
    msg_set_json_trusted (rsp, "{oops", 5);
    m2 = roundtrip (rsp);
    ok (m2 == NULL, "a receiver refuses a trusted payload that is not JSON");
    msg_destroy (&m2);
    msg_destroy (&rsp);
    msg_destroy (&req);
}

int main (void)
{
    plan (NO_PLAN);
    test_create ();
    test_flags_topic_payload ();
    test_routes ();
    test_roundtrip ();
    test_helpers ();
    test_decode_errors ();
    test_json_check ();
    test_json_cache ();
    test_payload_sharing ();
    test_growth ();
    test_decode_reuse ();
    test_route_id_rank ();
    test_payload_checked ();
    return done_testing ();
}

/* vi: ts=4 sw=4 expandtab
 */
