/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test/overlay.c: overlay.c's own rules, through a fake io.
 *
 * overlay.c is the core's entry points and coordinator: it checks who may
 * call each method of the "overlay" service and answers an unknown one;
 * it decides, by envelope kind and by the state of the peer, what
 * happens to each message from the socket (recv_table and the rules in
 * front of it); and it runs the reactions that span parts (a peer found
 * unreachable while sending is lost) only when the outermost entry point
 * ends (settle), even if the broker called back into the core meanwhile.
 * The parts themselves have their own tests.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "src/common/libtap/tap.h"
#include "src/modules/overlay/live.h"
#include "fakeio.h"

/* Rank 15 of 16 ("bgn"): its 7 peers (0 1 3 7 11 13 14) connect to it. */
static struct fake *binder (void)
{
    struct fake *f = fake_create (15, 16, "bgn");

    if (!f || fake_start (f) < 0)
        bail_out ("fake_start");
    fake_all_up (f);
    fake_clear (f);
    return f;
}

/* Ask method of the overlay service with this role; the answer given, or
 * NULL if none. */
static struct answer *call (struct fake *f, const char *method, uint32_t role,
                            const char *payload)
{
    char topic[64];
    struct bgn_msg_info info = { .hops = 2 };
    int before = f->nanswers;
    msg_t *req;

    snprintf (topic, sizeof (topic), "overlay.%s", method);
    if (!(req = msg_request_create (topic, 15, payload)))
        bail_out ("msg_request_create");
    msg_set_rolemask (req, role);
    overlay_service (f->ov, req, &info);
    msg_destroy (&req);
    return f->nanswers > before ? fake_last_answer (f) : NULL;
}

static void check_roles (void)
{
    static const char *owner_only[] = { "gather", "trace", "ready",
                                        "contact", "moved", "disconnect" };
    static const char *anyone[] = { "status", "status-all", "ping" };
    struct fake *f = binder ();
    struct answer *a;
    bool all = true;

    for (size_t i = 0; i < sizeof (owner_only) / sizeof (owner_only[0]);
         i++) {
        int sent = f->nsent, asked = f->nrequests;
        a = call (f, owner_only[i], MSG_ROLE_USER, "{}");
        if (!a || a->errnum != EPERM || !a->text
            || !strstr (a->text, "owner") || f->nsent != sent
            || f->nrequests != asked || f->stopped) {
            diag ("overlay.%s from a guest: not refused as it should be",
                  owner_only[i]);
            all = false;
        }
    }
    ok (all, "every owner-only method from a guest: EPERM, nothing done");
    all = true;
    for (size_t i = 0; i < sizeof (owner_only) / sizeof (owner_only[0]);
         i++) {
        a = call (f, owner_only[i], MSG_ROLE_NONE, "{}");
        all = all && a && a->errnum == EPERM;
    }
    ok (all && !f->stopped, "... and from no role at all");
    all = true;
    for (size_t i = 0; i < sizeof (anyone) / sizeof (anyone[0]); i++) {
        a = call (f, anyone[i], MSG_ROLE_USER, "{}");
        if (a && a->errnum == EPERM) {
            diag ("overlay.%s from a guest: refused", anyone[i]);
            all = false;
        }
    }
    ok (all, "status, status-all and ping are a guest's too");
    a = call (f, "ping", MSG_ROLE_USER, NULL);
    ok (a && a->errnum == 0 && a->text && strstr (a->text, "\"rank\":15")
        && strstr (a->text, "\"hops\":2"),
        "a guest's ping is answered with our rank and its hops");
    a = call (f, "status", MSG_ROLE_USER, NULL);
    ok (a && a->errnum == 0 && a->text && a->text[0] == '{',
        "a guest's status is answered with the status object");
    a = call (f, "ping", MSG_ROLE_NONE, NULL);
    ok (a && a->errnum == EPERM, "no role at all may not even ping");
    a = call (f, "disconnect", MSG_ROLE_OWNER, NULL);
    ok (a && a->errnum == 0 && f->stopped == 1,
        "the owner's disconnect is answered and stops the broker (exit 0)");
    fake_destroy (&f);
}

static void check_unknown (void)
{
    struct fake *f = binder ();
    struct answer *a;
    msg_t *m;

    a = call (f, "no-such-method", MSG_ROLE_OWNER, NULL);
    ok (a && a->errnum == ENOSYS && a->text
        && strstr (a->text, "unknown overlay method"),
        "an unknown method: ENOSYS");
    a = call (f, "no-such-method", MSG_ROLE_USER, NULL);
    ok (a && a->errnum == ENOSYS, "whoever asks it");
    a = call (f, "", MSG_ROLE_OWNER, NULL);
    ok (a && a->errnum == ENOSYS, "an empty method: ENOSYS");
    m = msg_request_create ("overlayx.status", 15, NULL);
    msg_set_rolemask (m, MSG_ROLE_OWNER);
    overlay_service (f->ov, m, NULL);
    msg_destroy (&m);
    a = fake_last_answer (f);
    ok (a && a->errnum == ENOSYS,
        "a topic outside the service (overlayx.status): ENOSYS");

    fake_clear (f);
    m = msg_request_create ("overlay.no-such-method", 15, NULL);
    msg_t *rsp = msg_response_create (m, "{}");
    overlay_service (f->ov, rsp, NULL);
    msg_destroy (&rsp);
    msg_destroy (&m);
    ok (f->nanswers == 0, "a response to an unknown method is not answered");
    m = msg_request_create ("overlay.status", 15, NULL);
    rsp = msg_response_create (m, "{}");
    overlay_service (f->ov, rsp, NULL);
    msg_destroy (&rsp);
    msg_destroy (&m);
    ok (f->nanswers == 0 && f->nsent == 0,
        "nor one to a method that takes no responses");
    m = msg_event_create ("overlay.status", NULL);
    overlay_service (f->ov, m, NULL);
    msg_destroy (&m);
    ok (f->nanswers == 0 && f->nsent == 0, "an event is ignored");
    fake_destroy (&f);
}

/* One wire frame, as it comes from the socket, from 'id'. */
static void recv_raw (struct fake *f, const char *id, const uint8_t *buf,
                      size_t len, int copies)
{
    struct frame *fr[2] = { NULL, NULL };

    for (int i = 0; i < copies; i++)
        fr[i] = frame_create (buf, len);
    overlay_recv (f->ov, id, strlen (id), fr, copies, NULL);
}

static void check_front (void)
{
    struct fake *f = binder ();
    struct envelope env = { .kind = ENV_KEEPALIVE, .ttl = 1, .source = 14,
                            .dest = 15, .sender_inc = 1014,
                            .receiver_inc = 100 };
    uint8_t buf[ENV_SIZE + 4] = { 0 };
    uint64_t n;

    envelope_encode (&env, buf);
    n = f->ov->rx.unknown_peer_drops;
    recv_raw (f, "?", buf, sizeof (buf), 1);
    recv_raw (f, "2", buf, sizeof (buf), 1);   /* not a neighbour of 15 */
    ok (f->ov->rx.unknown_peer_drops == n + 2 && f->nsent == 0,
        "a message from nobody, or from a rank that is no peer: dropped, "
        "counted");
    n = f->ov->route.count[RC_malformed_drops];
    overlay_recv (f->ov, "14", 2, NULL, 0, NULL);
    recv_raw (f, "14", buf, sizeof (buf), 2);
    ok (f->ov->route.count[RC_malformed_drops] == n + 2,
        "no frame, or several frames: malformed");
    buf[2] = ENV_KIND_MAX + 1;
    recv_raw (f, "14", buf, sizeof (buf), 1);
    buf[2] = 0;
    recv_raw (f, "14", buf, sizeof (buf), 1);
    ok (f->ov->route.count[RC_malformed_drops] == n + 4,
        "a kind past the last, or kind 0: malformed");

    /* another protocol version: refused by name, a hello told so */
    env.kind = ENV_HELLO;
    envelope_encode (&env, buf);
    buf[1] = ENV_VERSION + 1;
    n = f->ov->rx.version_refusals;
    recv_raw (f, "13", buf, sizeof (buf), 1);
    struct sent *nak = fake_last (f, ENV_HELLO_NAK, 13);
    ok (f->ov->rx.version_refusals == n + 1 && nak && nak->body[0]
        && strstr (nak->body[0], "protocol version mismatch")
        && nak->env.receiver_inc == 0
        && strstr (fake_peer (f, 13)->problem, "version"),
        "a hello in another version: refused with a NAK, the peer's "
        "problem says why");
    env.kind = ENV_KEEPALIVE;
    envelope_encode (&env, buf);
    buf[1] = ENV_VERSION - 1;
    fake_clear (f);
    recv_raw (f, "11", buf, sizeof (buf), 1);
    ok (f->ov->rx.version_refusals == n + 2 && f->nsent == 0
        && fake_peer (f, 11)->state == PEER_UP,
        "any other message in another version: refused, not answered");
    fake_destroy (&f);
}

static void check_admission_rules (void)
{
    struct fake *f = fake_create (15, 16, "bgn");
    struct envelope ka = { .kind = ENV_KEEPALIVE, .ttl = 1, .source = 14,
                           .dest = 15 };
    struct peer *p;
    uint64_t n;

    if (!f || fake_start (f) < 0)
        bail_out ("fake_start");
    n = f->ov->hello.stale_drops;
    fake_inject (f, 14, &ka, NULL, NULL, 0, NULL);
    fake_control (f, 14, ENV_LINK, "{\"op\":\"add\",\"a\":1,\"b\":9}");
    ok (f->ov->hello.stale_drops == n + 2
        && bgn_router_link_count (f->ov->router) == 0,
        "from a peer not admitted, anything but a hello is a stale drop");
    fake_all_up (f);
    p = fake_peer (f, 14);
    ok (p->state == PEER_UP, "14 admitted");

    n = f->ov->hello.stale_drops;
    struct envelope old = ka;
    old.sender_inc = p->hello.incarnation - 1;
    fake_inject (f, 14, &old, NULL, NULL, 0, NULL);
    old = ka;
    old.sender_inc = p->hello.incarnation;
    old.receiver_inc = f->ov->incarnation + 1;
    fake_inject (f, 14, &old, NULL, NULL, 0, NULL);
    ok (f->ov->hello.stale_drops == n + 2,
        "from an admitted peer: another sender or receiver incarnation "
        "than the current ones is a stale drop");

    live_set_state (f->ov, p, PEER_SUSPECT);
    f->now += 0.5;
    struct envelope ka2 = ka;
    fake_inject (f, 14, &ka2, NULL, NULL, 0, NULL);
    ok (p->state == PEER_UP && p->live.last_heard == f->now,
        "any current message from a suspect peer brings it back up, heard "
        "now");

    n = f->ov->route.count[RC_malformed_drops];
    fake_control (f, 14, ENV_LINK, "{\"op\":\"add\",\"a\":-1,\"b\":9}");
    fake_control (f, 14, ENV_LINK, "not json");
    ok (f->ov->route.count[RC_malformed_drops] == n + 2
        && bgn_router_link_count (f->ov->router) == 0,
        "a link message that is not {op, a, b} with ranks: malformed");
    fake_control (f, 14, ENV_LINK, "{\"op\":\"add\",\"a\":1,\"b\":9}");
    ok (bgn_router_link_count (f->ov->router) == 1,
        "a good one from an admitted peer is applied");

    fake_control (f, 14, ENV_GOODBYE, NULL);
    ok (p->live.leaving && p->state == PEER_DOWN,
        "a goodbye: the peer is leaving, and down");
    fake_destroy (&f);
}

static void check_data (void)
{
    struct fake *f = binder ();
    struct envelope env = { .kind = ENV_DATA, .ttl = 9, .source = 14,
                            .dest = 15 };
    msg_t *m = msg_request_create ("test.echo", 15, "{}");
    uint64_t n;

    msg_set_rolemask (m, MSG_ROLE_OWNER);
    fake_data (f, 14, &env, m);
    ok (f->ndelivered == 1 && f->delivered_info[0].source == 14
        && f->delivered_info[0].from_overlay
        && !f->delivered_info[0].source_unverified
        && f->ov->deliver.delivered == 1,
        "data for us from 14, naming 14: delivered, from the overlay");
    struct envelope relayed = { .kind = ENV_DATA, .ttl = 9, .hops = 1,
                                .source = 13, .dest = 15 };
    msg_t *m2 = msg_request_create ("test.echo", 15, "{\"n\":2}");
    fake_data (f, 14, &relayed, m2);
    ok (f->ndelivered == 2 && f->delivered_info[1].source == 13
        && f->delivered_info[1].source_unverified,
        "naming 13, an up neighbour, but handed over by 14: unverified");
    struct envelope far = { .kind = ENV_DATA, .ttl = 9, .hops = 2,
                            .source = 5, .dest = 15 };
    msg_t *m3 = msg_request_create ("test.echo", 15, "{\"n\":3}");
    fake_data (f, 14, &far, m3);
    ok (f->ndelivered == 3 && f->delivered_info[2].source == 5
        && !f->delivered_info[2].source_unverified,
        "naming 5, no neighbour: not flagged (relays are expected)");
    n = f->ov->route.count[RC_malformed_drops];
    struct envelope bad = { .kind = ENV_DATA, .ttl = 9, .source = 14,
                            .dest = 16 };
    fake_data (f, 14, &bad, m);
    ok (f->ov->route.count[RC_malformed_drops] == n + 1 && f->ndelivered == 3
        && f->nsent == 0, "data for a rank past the instance: malformed");
    struct envelope on = { .kind = ENV_DATA, .ttl = 9, .source = 14,
                           .dest = 13 };
    msg_t *m4 = msg_request_create ("test.echo", 13, "{\"n\":4}");
    fake_data (f, 14, &on, m4);
    struct sent *s = fake_last (f, ENV_DATA, 13);
    ok (s && s->env.dest == 13 && s->env.source == 14 && s->env.hops == 1
        && f->ov->route.count[RC_forwarded] == 1 && f->ndelivered == 3,
        "data for 13 is forwarded, one hop more, not delivered here");
    msg_destroy (&m);
    msg_destroy (&m2);
    msg_destroy (&m3);
    msg_destroy (&m4);
    fake_destroy (&f);
}

/* settle: a broker that calls back into the core while it delivers. */
static struct {
    int calls;
    int rc;
    bool up_inside;          /* 13 still up when the nested call returned */
    bool unreachable_inside; /* ... though marked unreachable */
} nested;

static void send_to_13 (struct fake *f, const msg_t *msg)
{
    msg_t *req = msg_request_create ("test.echo", 13, "{}");
    struct peer *p = fake_peer (f, 13);

    nested.calls++;
    f->on_deliver = NULL;
    nested.rc = overlay_send (f->ov, &req, 13, NULL);
    nested.up_inside = p->state == PEER_UP;
    nested.unreachable_inside = p->route.unreachable;
    msg_destroy (&req);
}

static void check_settle (void)
{
    struct fake *f = binder ();
    struct envelope env = { .kind = ENV_DATA, .ttl = 9, .source = 14,
                            .dest = 15 };
    msg_t *m = msg_request_create ("test.echo", 15, "{}");
    msg_t *req;

    f->send_errno[13] = EHOSTUNREACH;
    f->on_deliver = send_to_13;
    fake_data (f, 14, &env, m);
    msg_destroy (&m);
    ok (nested.calls == 1 && nested.unreachable_inside,
        "delivering, the broker sends to 13: the send finds 13 "
        "unreachable");
    ok (nested.up_inside,
        "13 is not lost inside the nested call (no reaction mid-send)");
    ok (fake_peer (f, 13)->state == PEER_DOWN
        && fake_logged (f, "connection gone (EHOSTUNREACH)"),
        "it is lost when the outermost entry point (the receive) ends");
    fake_destroy (&f);

    f = binder ();
    f->send_errno[11] = EHOSTUNREACH;
    req = msg_request_create ("test.echo", 11, "{}");
    overlay_send (f->ov, &req, 11, NULL);
    msg_destroy (&req);
    ok (fake_peer (f, 11)->state == PEER_DOWN,
        "an outermost send settles at its own end: 11 is lost");
    req = msg_request_create ("test.echo", 15, "{}");
    errno = 0;
    ok (overlay_send (f->ov, &req, 15, NULL) < 0 && errno == EHOSTUNREACH
        && req != NULL, "a send to ourselves: EHOSTUNREACH, message kept");
    msg_destroy (&req);
    fake_destroy (&f);
}

int main (void)
{
    plan (NO_PLAN);
    check_roles ();
    check_unknown ();
    check_front ();
    check_admission_rules ();
    check_data ();
    check_settle ();
    done_testing ();
}
