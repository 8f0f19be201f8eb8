/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test/trace.c: overlay.trace (trace.c) via a fake io.
 *
 * - a trace is a streaming request from the owner; its first answer says
 *   it runs, then each message through the overlay that matches its
 *   filter (message types, a topic glob) is one answer describing it
 *   (direction, peer, type, topic, size, hops, source, destination);
 * - messages outside the filter, and overlay.trace itself, are not traced;
 * - without types a trace also sees the overlay's own control messages;
 * - at its duration's end a trace gets ENODATA and sees nothing more;
 * - a request that is not streaming is refused (EPROTO), a ninth trace
 *   too (EBUSY).
 */
#include <errno.h>
#include <string.h>

#include "src/common/libtap/tap.h"
#include "fakeio.h"

/* Start a trace numbered tag with this payload; the core's answer. */
static struct answer *start (struct fake *f, uint32_t tag, const char *json,
                             bool streaming)
{
    msg_t *req = msg_request_create ("overlay.trace", 0, json);

    msg_set_rolemask (req, MSG_ROLE_OWNER);
    msg_set_matchtag (req, tag);
    if (streaming)
        msg_set_flags (req, msg_get_flags (req) | MSGFLAG_STREAMING);
    overlay_service (f->ov, req, NULL);
    msg_destroy (&req);
    return fake_last_answer (f);
}

/* The trace lines trace 'tag' got from answer 'from' on, into out[]. */
static int lines (struct fake *f, uint32_t tag, int from, json_t **out,
                  int max)
{
    int n = 0;

    for (int i = from; i < f->nanswers && n < max; i++) {
        struct answer *a = &f->answers[i];
        if (a->errnum || !a->text || msg_get_matchtag (a->req) != tag
            || !strstr (a->text, "\"dir\""))
            continue;
        out[n++] = json_loads (a->text, 0, NULL);
    }
    return n;
}

static void drop (json_t **v, int n)
{
    for (int i = 0; i < n; i++)
        json_decref (v[i]);
}

static const char *str (json_t *o, const char *key)
{
    const char *s = json_string_value (json_object_get (o, key));
    return s ? s : "";
}

static int num (json_t *o, const char *key)
{
    return (int)json_integer_value (json_object_get (o, key));
}

static void request_from (struct fake *f, uint32_t from, const char *topic,
                          int type)
{
    struct envelope env = { .kind = ENV_DATA, .ttl = 5, .hops = 2,
                            .source = 3, .dest = 0 };
    msg_t *req = msg_request_create (topic, 0, NULL);
    msg_t *msg = req;
    msg_t *rsp = NULL;

    msg_route_enable (req);
    msg_route_push (req, "3");
    if (type == MSGTYPE_RESPONSE)
        msg = rsp = msg_response_create (req, NULL);
    fake_data (f, from, &env, msg);
    msg_destroy (&rsp);
    msg_destroy (&req);
}

static void test_filter (void)
{
    struct fake *f = fake_create (0, 4, "bgn");
    struct answer *a;
    json_t *got[16];
    int mark, n;

    fake_start (f);
    fake_all_up (f);
    a = start (f, 1, "{\"types\":[\"request\"],\"topic\":\"svc.*\","
               "\"duration\":5}", true);
    ok (a && a->errnum == 0 && a->text && strstr (a->text, "\"tracing\":true"),
        "a streaming trace of requests to svc.* starts: %s",
        a && a->text ? a->text : "");

    mark = f->nanswers;
    request_from (f, 1, "svc.echo", MSGTYPE_REQUEST);
    n = lines (f, 1, mark, got, 16);
    ok (n == 1 && !strcmp (str (got[0], "dir"), "rx")
        && num (got[0], "peer") == 1 && !strcmp (str (got[0], "type"),
                                                 "request")
        && !strcmp (str (got[0], "topic"), "svc.echo"),
        "a request to svc.echo from peer 1: one line, rx from 1");
    ok (n == 1 && num (got[0], "source") == 3 && num (got[0], "dest") == 0
        && num (got[0], "hops") == 2 && num (got[0], "size") > ENV_SIZE,
        "with its source, destination, hops and size on the wire");
    drop (got, n);

    mark = f->nanswers;
    request_from (f, 1, "other.thing", MSGTYPE_REQUEST);
    request_from (f, 2, "svc.echo", MSGTYPE_RESPONSE);
    fake_advance_alive (f, 1.0);
    n = lines (f, 1, mark, got, 16);
    ok (n == 0, "not another topic, a response, nor keepalives");
    drop (got, n);

    a = start (f, 2, "{}", true);
    ok (a && a->errnum == 0, "a second trace, without a filter");
    mark = f->nanswers;
    fake_advance_alive (f, 1.0);
    request_from (f, 2, "overlay.trace", MSGTYPE_REQUEST);
    request_from (f, 2, "svc.echo", MSGTYPE_RESPONSE);
    n = lines (f, 2, mark, got, 16);
    bool rx = false, tx = false, itself = false, rsp = false;
    for (int i = 0; i < n; i++) {
        if (!strcmp (str (got[i], "topic"), "overlay.trace"))
            itself = true;
        if (!strcmp (str (got[i], "type"), "response"))
            rsp = true;
        if (!strcmp (str (got[i], "type"), "keepalive")
            && !strcmp (str (got[i], "dir"), "rx"))
            rx = true;
        if (!strcmp (str (got[i], "type"), "keepalive")
            && !strcmp (str (got[i], "dir"), "tx"))
            tx = true;
    }
    ok (rx && tx, "sees the keepalives both ways (%d lines)", n);
    ok (rsp, "and the response");
    ok (!itself, "but never an overlay.trace request");
    drop (got, n);

    fake_advance_alive (f, 3.5);
    a = NULL;
    for (int i = mark; i < f->nanswers; i++)
        if (msg_get_matchtag (f->answers[i].req) == 1
            && f->answers[i].errnum == ENODATA)
            a = &f->answers[i];
    ok (a != NULL, "after 5 s the first trace ends with ENODATA");
    mark = f->nanswers;
    request_from (f, 1, "svc.echo", MSGTYPE_REQUEST);
    n = lines (f, 1, mark, got, 16);
    ok (n == 0, "and sees nothing more");
    drop (got, n);
    n = lines (f, 2, mark, got, 16);
    ok (n >= 1, "the second still runs");
    drop (got, n);
    fake_destroy (&f);
}

static void test_refused (void)
{
    struct fake *f = fake_create (0, 4, "bgn");
    struct answer *a;

    fake_start (f);
    a = start (f, 1, "{}", false);
    ok (a && a->errnum == EPROTO, "a trace that is not streaming: EPROTO");
    a = start (f, 1, "{\"duration\":\"long\"}", true);
    ok (a && a->errnum == EPROTO, "a duration that is no number: EPROTO");
    for (uint32_t i = 0; i < 8; i++)
        start (f, 10 + i, "{}", true);
    a = fake_last_answer (f);
    ok (a && a->errnum == 0, "8 traces at once");
    a = start (f, 20, "{}", true);
    ok (a && a->errnum == EBUSY, "a ninth: EBUSY");
    fake_destroy (&f);
}

int main (void)
{
    test_filter ();
    test_refused ();
    return done_testing ();
}
