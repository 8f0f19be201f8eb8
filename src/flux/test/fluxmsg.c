/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test/fluxmsg.c: messages cross between bgn and Flux field by field. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <flux/core.h>

#include "src/common/libtap/tap.h"
#include "src/flux/fluxmsg.h"

static void check_request (void)
{
    msg_t *m = msg_request_create ("broker.ping", 3, "{\"x\":1}");
    flux_msg_t *f;
    msg_t *back;
    const char *topic = NULL, *s = NULL;
    uint32_t nodeid = 0, userid = 0, rolemask = 0, tag = 0;

    msg_set_userid (m, 1000);
    msg_set_rolemask (m, MSG_ROLE_USER);
    msg_set_matchtag (m, 42);
    msg_set_flags (m, msg_get_flags (m) | MSGFLAG_STREAMING);
    f = fluxmsg_from_bgn (m);
    ok (f != NULL, "a bgn request converts to Flux");
    ok (flux_msg_get_topic (f, &topic) == 0 && !strcmp (topic, "broker.ping")
        && flux_msg_get_nodeid (f, &nodeid) == 0 && nodeid == 3,
        "topic and nodeid cross");
    ok (flux_msg_get_userid (f, &userid) == 0 && userid == 1000
        && flux_msg_get_rolemask (f, &rolemask) == 0
        && rolemask == FLUX_ROLE_USER
        && flux_msg_get_matchtag (f, &tag) == 0 && tag == 42,
        "credentials and matchtag cross");
    ok (flux_msg_is_streaming (f) && !flux_msg_is_noresponse (f),
        "the streaming flag crosses, no other");
    ok (flux_msg_get_string (f, &s) == 0 && s && !strcmp (s, "{\"x\":1}"),
        "the payload crosses");
    back = fluxmsg_to_bgn (f);
    ok (back && msg_get_type (back) == MSGTYPE_REQUEST
        && !strcmp (msg_get_topic (back), "broker.ping")
        && msg_get_userid (back) == 1000 && msg_get_matchtag (back) == 42
        && (msg_get_flags (back) & MSGFLAG_STREAMING)
        && !strcmp (msg_get_payload (back, NULL), "{\"x\":1}"),
        "and back again, unchanged");
    msg_destroy (&back);
    flux_msg_destroy (f);
    msg_destroy (&m);
}

static void check_response_and_event (void)
{
    msg_t *req = msg_request_create ("a.b", 1, NULL);
    msg_t *rsp = msg_error_response_create (req, ENOENT, "no such thing");
    flux_msg_t *f = fluxmsg_from_bgn (rsp);
    int errnum = 0;
    uint32_t seq = 0;

    ok (f && flux_msg_get_errnum (f, &errnum) == 0 && errnum == ENOENT,
        "a response's errnum crosses");
    flux_msg_destroy (f);
    msg_t *ev = msg_event_create ("bgn.membership", "{\"fenced\":[]}");
    msg_set_seq (ev, 77);
    f = fluxmsg_from_bgn (ev);
    ok (f && flux_msg_get_seq (f, &seq) == 0 && seq == 77,
        "an event's seq crosses");
    msg_t *back = fluxmsg_to_bgn (f);
    uint32_t bseq = 0;
    ok (back && msg_get_seq (back, &bseq) == 0 && bseq == 77
        && msg_get_type (back) == MSGTYPE_EVENT, "and back");
    msg_destroy (&back);
    flux_msg_destroy (f);
    msg_destroy (&ev);
    msg_destroy (&rsp);
    msg_destroy (&req);
}

static void check_refusals (void)
{
    flux_msg_t *f = flux_request_encode ("log.x", NULL);
    msg_t *m;

    flux_msg_set_string (f, "not json at all");
    errno = 0;
    ok ((m = fluxmsg_to_bgn (f)) == NULL && errno == EPROTO,
        "a text payload is refused with EPROTO (the BGN carries JSON)");
    msg_destroy (&m);
    flux_msg_destroy (f);
    f = flux_request_encode_raw ("log.x", "{\"a\":\0}", 7);
    errno = 0;
    ok ((m = fluxmsg_to_bgn (f)) == NULL && errno == EPROTO,
        "a payload with a NUL inside is refused");
    msg_destroy (&m);
    flux_msg_destroy (f);
    f = flux_request_encode ("log.x", NULL);
    ok ((m = fluxmsg_to_bgn (f)) && msg_get_payload (m, NULL) == NULL,
        "no payload stays no payload");
    msg_destroy (&m);
    flux_msg_destroy (f);
    f = flux_msg_create (FLUX_MSGTYPE_CONTROL);
    errno = 0;
    ok (fluxmsg_to_bgn (f) == NULL && errno == EPROTO,
        "a control message does not cross");
    flux_msg_destroy (f);
}

/* Bytes that round-trip through the wrapper, any length mod 4. */
static bool bytes_cross (const void *data, size_t size)
{
    flux_msg_t *f = flux_request_encode_raw ("content.store", data, size);
    flux_msg_t *back = NULL;
    msg_t *m = fluxmsg_to_bgn_any (f);
    const void *out = NULL;
    size_t outlen = 0;
    bool good = false;

    if (m && (back = fluxmsg_from_bgn (m))
        && flux_msg_get_payload (back, &out, &outlen) == 0)
        good = outlen == size && (size == 0 || !memcmp (out, data, size));
    flux_msg_destroy (back);
    msg_destroy (&m);
    flux_msg_destroy (f);
    return good;
}

static void check_any_payload (void)
{
    unsigned char blob[70];
    flux_msg_t *f;
    msg_t *m;
    size_t len = 0;
    const char *p;

    for (size_t i = 0; i < sizeof (blob); i++)
        blob[i] = (unsigned char)(i * 37 + 1);
    blob[5] = 0;
    ok (bytes_cross (blob, 1) && bytes_cross (blob, 2) && bytes_cross (blob, 3)
        && bytes_cross (blob, 4) && bytes_cross (blob, 70),
        "binary payloads (a NUL inside, 1 to 70 bytes) cross wrapped, "
        "byte for byte");
    f = flux_request_encode ("log.x", NULL);
    flux_msg_set_string (f, "plain text");
    m = fluxmsg_to_bgn_any (f);
    p = m ? msg_get_payload (m, &len) : NULL;
    ok (p && !strncmp (p, "{\"" FLUXMSG_WRAP_KEY "\":", 11),
        "a text payload is wrapped as a JSON object");
    flux_msg_t *back = m ? fluxmsg_from_bgn (m) : NULL;
    const char *s = NULL;
    ok (back && flux_msg_get_string (back, &s) == 0 && s
        && !strcmp (s, "plain text"), "and unwrapped as the same string");
    flux_msg_destroy (back);
    msg_destroy (&m);
    flux_msg_destroy (f);
    f = flux_request_encode ("kvs.lookup", "{\"key\":\"a\"}");
    m = fluxmsg_to_bgn_any (f);
    p = m ? msg_get_payload (m, &len) : NULL;
    ok (p && !strcmp (p, "{\"key\":\"a\"}"),
        "a JSON object payload crosses as it is, not wrapped");
    msg_destroy (&m);
    flux_msg_destroy (f);
    const char blob_json[] = "{\"ver\":1,\"type\":\"dir\"}";
    ok (bytes_cross (blob_json, strlen (blob_json)),
        "raw bytes that are JSON but no string (a content blob) arrive "
        "without a NUL added");
    /* a JSON payload that looks like the wrapper is wrapped itself */
    f = flux_request_encode ("x.y", "{\"" FLUXMSG_WRAP_KEY "\":\"00000\","
                             "\"bgn.len\":1}");
    m = fluxmsg_to_bgn_any (f);
    back = m ? fluxmsg_from_bgn (m) : NULL;
    s = NULL;
    ok (back && flux_msg_get_string (back, &s) == 0 && s
        && !strncmp (s, "{\"" FLUXMSG_WRAP_KEY "\":\"00000\"", 17),
        "a payload that looks like the wrapper arrives as it was sent");
    flux_msg_destroy (back);
    msg_destroy (&m);
    flux_msg_destroy (f);
    f = flux_msg_create (FLUX_MSGTYPE_REQUEST);
    errno = 0;
    ok (fluxmsg_set_payload (f, "{\"" FLUXMSG_WRAP_KEY "\":\"0000\","
                             "\"bgn.len\":1}", 33) < 0 && errno == EPROTO,
        "a malformed wrapper (bad Z85 length) is refused with EPROTO");
    errno = 0;
    ok (fluxmsg_set_payload (f, "{\"" FLUXMSG_WRAP_KEY "\":\"00000\","
                             "\"bgn.len\":9}", 34) < 0 && errno == EPROTO,
        "a wrapper claiming more bytes than it holds is refused");
    flux_msg_destroy (f);
}

int main (void)
{
    plan (NO_PLAN);
    check_request ();
    check_response_and_event ();
    check_refusals ();
    check_any_payload ();
    done_testing ();
}
