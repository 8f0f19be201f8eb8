/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test/fluxmsg.c: messages cross between bgn and Flux field by field. */
#include <errno.h>
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

int main (void)
{
    plan (NO_PLAN);
    check_request ();
    check_response_and_event ();
    check_refusals ();
    done_testing ();
}
