/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test/hello.c: admission (hello.c) and a restarted peer's new endpoint
 * (moved.c) through a fake io. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "src/common/libtap/tap.h"
#include "src/modules/overlay/fence.h"
#include "src/modules/overlay/status.h"
#include "fakeio.h"

#define GOOD "{\"version\":3,\"rank\":%u,\"instance\":\"test-instance\"," \
             "\"incarnation\":%u,\"hostname\":\"h\",\"topology\":\"bgn\"}"

/* NAK sent to 'to' whose reason starts with 'reason'? */
static bool nak_says (struct fake *f, uint32_t to, const char *reason)
{
    struct sent *s = fake_last (f, ENV_HELLO_NAK, to);
    return s && s->body[0] && strstr (s->body[0], reason);
}

/* Rank 15 of 16: every peer connects to it, it answers hellos. */
static void check_binder (void)
{
    struct fake *f = fake_create (15, 16, "bgn");
    char json[512];

    ok (fake_start (f) == 0 && f->connects == 0 && fake_count (f, ENV_HELLO,
                                                               UINT32_MAX) == 0,
        "rank 15 connects to nobody and says hello to nobody");
    fake_hello (f, 14, ENV_HELLO, 1014);
    struct sent *ack = fake_last (f, ENV_HELLO_ACK, 14);
    ok (ack && ack->env.receiver_inc == 1014 && ack->body[0]
        && strstr (ack->body[0], "\"incarnation\":100"),
        "a good hello from 14 gets an ack carrying our hello");
    ok (fake_peer (f, 14)->state == PEER_UP
        && fake_peer (f, 14)->hello.incarnation == 1014
        && !strcmp (fake_peer (f, 14)->hello.hostname, "host14"),
        "14 is up, as incarnation 1014, on host14");

    snprintf (json, sizeof (json), "{\"version\":99,\"rank\":13,"
              "\"instance\":\"test-instance\",\"incarnation\":1,"
              "\"topology\":\"bgn\"}");
    fake_hello_json (f, 13, ENV_HELLO, 1, json, NULL);
    ok (nak_says (f, 13, "protocol version mismatch")
        && fake_last (f, ENV_HELLO_NAK, 13)->env.receiver_inc == 0
        && fake_peer (f, 13)->state == PEER_CONNECTING,
        "another protocol version is refused; 13 stays out");
    snprintf (json, sizeof (json), GOOD, 12u, 1u);
    fake_hello_json (f, 13, ENV_HELLO, 1, json, NULL);
    ok (nak_says (f, 13, "rank does not match"),
        "a hello claiming another rank than its connection is refused");
    fake_hello_json (f, 13, ENV_HELLO, 1, "{\"version\":3,\"rank\":13,"
                     "\"instance\":\"other\",\"incarnation\":1}", NULL);
    ok (nak_says (f, 13, "another instance"),
        "a hello from another instance is refused");
    fake_hello_json (f, 13, ENV_HELLO, 1, "{\"version\":3,\"rank\":13,"
                     "\"instance\":\"test-instance\",\"incarnation\":1,"
                     "\"topology\":\"kary:2\"}", NULL);
    ok (nak_says (f, 13, "another topology"),
        "a hello with another topology is refused");
    fake_hello_json (f, 13, ENV_HELLO, 1, "not json", NULL);
    ok (nak_says (f, 13, "malformed hello")
        && fake_peer (f, 13)->state == PEER_CONNECTING,
        "garbage is a malformed hello");

    /* a fence of 11's incarnation 1011, heard from 14 */
    fake_fence1 (f, 14, ENV_BATCH, 11, 1011, true);
    fake_hello (f, 11, ENV_HELLO, 1011);
    ok (nak_says (f, 11, "fenced")
        && fake_last (f, ENV_HELLO_NAK, 11)->env.receiver_inc == 1011
        && strstr (fake_last (f, ENV_HELLO_NAK, 11)->body[0],
                   "\"incarnation\":1011")
        && fake_peer (f, 11)->state != PEER_UP,
        "a fenced incarnation is refused, told which one is fenced");
    fake_hello (f, 11, ENV_HELLO, 900);
    ok (nak_says (f, 11, "fenced"), "so is an older one");
    fake_clear (f);
    fake_hello (f, 11, ENV_HELLO, 1012);
    ok (fake_count (f, ENV_HELLO_ACK, 11) == 1
        && fake_peer (f, 11)->state == PEER_UP && !fence_is_fenced (f->ov, 11),
        "a newer incarnation is admitted and its fence lifted here");
    fake_advance (f, 0.02);
    struct sent *r = fake_last (f, ENV_REPORT, UINT32_MAX);
    ok (r && fake_has_record (r, 11, 1012, false) && r->env.dest == 14,
        "and reported up to 15's parent, 14, to be lifted everywhere");

    /* data from a peer that has not said hello is dropped */
    uint64_t stale = f->ov->hello.stale_drops;
    fake_control (f, 7, ENV_LINK, "{\"op\":\"add\",\"a\":1,\"b\":9}");
    ok (f->ov->hello.stale_drops == stale + 1
        && bgn_router_link_count (f->ov->router) == 0,
        "a message from a peer not admitted is a stale drop, not applied");
    fake_destroy (&f);
}

/* Rank 0 of 16 connects to all its peers. */
static void check_connector (void)
{
    struct fake *f = fake_create (0, 16, "bgn");

    ok (fake_start (f) == 0 && f->connects == 7
        && fake_count (f, ENV_HELLO, UINT32_MAX) == 7,
        "rank 0 connects to its 7 peers and says hello to each");
    fake_clear (f);
    fake_advance (f, 1.0);
    ok (fake_count (f, ENV_HELLO, UINT32_MAX) == 0, "no hello again at 1 s");
    fake_advance (f, 1.6);
    ok (fake_count (f, ENV_HELLO, UINT32_MAX) == 7,
        "peers that did not answer hear hello again after 2 s");

    fake_hello (f, 1, ENV_HELLO_ACK, 1001);
    ok (fake_peer (f, 1)->state == PEER_UP, "an ack brings 1 up");
    fake_clear (f);

    /* 15 was fenced above the incarnation it answers with: told the
     * fence, addressed to what it answers with, so it rejoins above */
    fake_fence1 (f, 1, ENV_REPORT, 15, 1515, true);
    fake_clear (f);
    fake_hello (f, 15, ENV_HELLO_ACK, 1015);
    struct sent *told = fake_last (f, ENV_VIEW, 15);
    ok (fake_peer (f, 15)->state != PEER_UP && told
        && told->env.receiver_inc == 1015
        && fake_has_record (told, 15, 1515, true),
        "an ack from an incarnation fenced above it: not admitted, told the "
        "fence (1515) at the incarnation it answers with");

    fake_clear (f);
    fake_hello_json (f, 2, ENV_HELLO_NAK, 1002,
                     "{\"reason\":\"peer belongs to another instance\"}",
                     NULL);
    ok (fake_peer (f, 2)->hello.refused && fake_peer (f, 2)->state == PEER_DOWN
        && f->disconnects == 1 && fake_logged (f, "refused our hello"),
        "a refusal marks 2 refused, disconnects and logs it");
    ok (!strcmp (fake_peer (f, 2)->problem, "it refused our hello: peer "
                 "belongs to another instance"),
        "the refusal is 2's problem, in words, for overlay-status");
    fake_advance (f, 0.5);
    ok (fake_count (f, ENV_HELLO, 2) == 0, "a refused peer hears no hello "
        "for a while");
    int dials = f->connects;
    fake_advance (f, 1.0);
    ok (f->connects == dials + 1 && fake_count (f, ENV_HELLO, 2) == 1,
        "a second later its link is dialled again, with a hello");

    overlay_sock_event (f->ov, OVL_SOCK_HANDSHAKE_FAILED,
                        fake_peer (f, 4)->endpoint, "CURVE key not "
                        "authorized: the peer has a different certificate");
    json_t *st = status_json (f->ov);
    json_t *p4 = NULL, *v;
    size_t i;
    json_array_foreach (json_object_get (st, "peers"), i, v)
        if (json_integer_value (json_object_get (v, "rank")) == 4)
            p4 = v;
    ok (p4 && json_is_string (json_object_get (p4, "problem"))
        && strstr (json_string_value (json_object_get (p4, "problem")),
                   "different certificate"),
        "a failed handshake on our link to 4 is its problem in the status");
    json_decref (st);
    fake_advance (f, 2.0);      /* redialled, with a hello */
    fake_hello (f, 4, ENV_HELLO_ACK, 1004);
    ok (fake_peer (f, 4)->state == PEER_UP && fake_peer (f, 4)->problem[0] == 0,
        "when 4 comes up its problem is forgotten");

    fake_clear (f);
    fake_hello_json (f, 1, ENV_HELLO_NAK, 1001,
                     "{\"reason\":\"fenced: rejoin with a new incarnation\","
                     "\"incarnation\":500}", NULL);
    ok (f->ov->incarnation == 501 && fake_logged (f, "rejoining as "
                                                     "incarnation 501"),
        "told incarnation 500 is fenced (a clock that went back), rank 0 "
        "rejoins as 501 at once");
    ok (fake_count (f, ENV_HELLO, UINT32_MAX) == 7
        && fake_peer (f, 1)->state == PEER_CONNECTING
        && !fake_peer (f, 2)->hello.refused,
        "it says hello to every peer again, refusals forgotten");
    struct sent *h = fake_last (f, ENV_HELLO, 4);
    ok (h && h->env.sender_inc == 501 && strstr (h->body[0],
                                                 "\"incarnation\":501"),
        "as the new incarnation");
    fake_hello_json (f, 4, ENV_HELLO_NAK, 1004,
                     "{\"reason\":\"fenced\",\"incarnation\":501}", NULL);
    ok (f->ov->incarnation == 501,
        "refused again at once: no rejoin in a tight loop");
    fake_advance (f, 0.3);
    ok (f->ov->incarnation == 502, "it rejoins after a pause");
    fake_hello_json (f, 4, ENV_HELLO_NAK, 1004,
                     "{\"reason\":\"fenced\",\"incarnation\":4611686018427387904}",
                     NULL);
    fake_advance (f, 0.5);
    ok (f->ov->incarnation < (1ULL << 53),
        "a refusal naming an incarnation past 2^53 does not drag us there");
    uint64_t before = f->ov->incarnation;
    fake_advance (f, 11.0);   /* past any rejoin back-off */
    fake_hello_json (f, 4, ENV_HELLO_NAK, 1004,
                     "{\"reason\":\"fenced\",\"incarnation\":9007199254740991}",
                     NULL);
    fake_advance (f, 11.0);
    ok (f->ov->incarnation == before
        && f->ov->incarnation < fence_inc_limit (f->ov, FENCE_BOUND_RECORD),
        "nor one naming 2^53-1, which no broker can have had yet");
    fake_destroy (&f);
}

/* io->admitted: once per HELLO the core answers with an ACK that went,
 * naming the peer; never for a refusal, an ACK we receive, or an ACK the
 * io could not send. */
static void check_admitted (void)
{
    struct fake *f = fake_create (15, 16, "bgn");
    char json[512];

    ok (fake_start (f) == 0 && f->nadmitted == 0, "nobody admitted at start");
    fake_hello (f, 14, ENV_HELLO, 1014);
    ok (f->nadmitted == 1 && f->admitted[0] == 14
        && fake_count (f, ENV_HELLO_ACK, 14) == 1,
        "a good hello from 14: its ACK sent, then admitted (14) once");
    fake_hello_json (f, 13, ENV_HELLO, 1, "not json", NULL);
    snprintf (json, sizeof (json), GOOD, 12u, 1u);
    fake_hello_json (f, 13, ENV_HELLO, 1, json, NULL);
    ok (nak_says (f, 13, "rank does not match") && f->nadmitted == 1,
        "hellos refused with a NAK admit nobody");
    fake_fence1 (f, 14, ENV_BATCH, 11, 1011, true);
    fake_hello (f, 11, ENV_HELLO, 1011);
    ok (nak_says (f, 11, "fenced") && f->nadmitted == 1,
        "nor does one from a fenced incarnation");
    f->send_errno[7] = EHOSTUNREACH;
    fake_hello (f, 7, ENV_HELLO, 1007);
    ok (f->nadmitted == 1 && fake_count (f, ENV_HELLO_ACK, 7) == 0
        && fake_peer (f, 7)->state != PEER_UP,
        "an ACK the io could not send admits nobody (7 is lost)");
    f->send_errno[7] = 0;
    fake_hello (f, 7, ENV_HELLO, 1008);
    ok (f->nadmitted == 2 && f->admitted[1] == 7
        && fake_peer (f, 7)->state == PEER_UP,
        "its next hello, as a new incarnation, answered: 7 admitted");
    fake_hello (f, 14, ENV_HELLO, 1015);
    ok (f->nadmitted == 3 && f->admitted[2] == 14,
        "14 restarted: its new connection is admitted again");
    fake_destroy (&f);

    f = fake_create (0, 16, "bgn");
    ok (fake_start (f) == 0, "rank 0 started");
    fake_hello (f, 1, ENV_HELLO_ACK, 1001);
    ok (fake_peer (f, 1)->state == PEER_UP && f->nadmitted == 0,
        "an ACK to our own hello brings 1 up but admits no connection");
    fake_destroy (&f);
}

static void check_curve (void)
{
    struct fake *f = fake_create (15, 16, "bgn");
    char key[41], json[512];

    f->cfg.curve = 1;
    ok (fake_start (f) == 0 && f->authorized == 7,
        "with CURVE, the keys of the 7 peers that connect are authorized");
    snprintf (json, sizeof (json), GOOD, 14u, 1014u);
    fake_hello_json (f, 14, ENV_HELLO, 1014, json, fake_key (13, key));
    ok (nak_says (f, 14, "CURVE key does not belong to that rank")
        && fake_peer (f, 14)->state != PEER_UP,
        "a hello as 14 on a connection with 13's key is refused");
    fake_hello_json (f, 14, ENV_HELLO, 1014, json, NULL);
    ok (nak_says (f, 14, "CURVE key"), "so is one with no key at all");
    fake_hello_json (f, 14, ENV_HELLO, 1014, json, fake_key (14, key));
    ok (fake_peer (f, 14)->state == PEER_UP, "with 14's own key it is up");
    fake_destroy (&f);
}

/* overlay.moved from 'origin' (the rank on its route stack). */
static void moved_from (struct fake *f, uint32_t origin, uint32_t rank,
                        const char *endpoint)
{
    char payload[256], o[16];
    snprintf (payload, sizeof (payload), "{\"rank\":%u,\"endpoint\":\"%s\"}",
              (unsigned)rank, endpoint);
    snprintf (o, sizeof (o), "%u", (unsigned)origin);
    msg_t *req = msg_request_create ("overlay.moved", f->ov->rank, payload);
    msg_set_rolemask (req, MSG_ROLE_OWNER);
    msg_route_enable (req);
    msg_route_push (req, o);
    overlay_service (f->ov, req, NULL);
    msg_destroy (&req);
}

static int moved_requests (struct fake *f, uint32_t to)
{
    int n = 0;
    for (int i = 0; i < f->nrequests; i++) {
        uint32_t nodeid = 0;
        msg_get_nodeid (f->requests[i], &nodeid);
        if (!strcmp (msg_get_topic (f->requests[i]), "overlay.moved")
            && nodeid == to)
            n++;
    }
    return n;
}

/* A restarted broker's new endpoint (moved.c): rank 5 dials 6, 6 dials
 * nobody lower than itself but is dialled by 5. */
static void check_moved (void)
{
    struct fake *f = fake_create (5, 16, "bgn");
    struct peer *p6;

    fake_start (f);
    p6 = fake_peer (f, 6);
    int connects = f->connects;
    moved_from (f, 7, 6, "tcp://127.0.0.1:4242");
    ok (fake_last_answer (f)->errnum == EPERM
        && strcmp (p6->endpoint, "tcp://127.0.0.1:4242") != 0,
        "rank 7 saying where rank 6 listens is EPERM, and changes nothing");
    moved_from (f, 4, 4, "tcp://127.0.0.1:4242");
    ok (fake_last_answer (f)->errnum == EPERM,
        "so is a rank we do not dial (4 dials us)");
    moved_from (f, 6, 6, "http://x");
    ok (fake_last_answer (f)->errnum == EPERM, "and an endpoint of another kind");
    moved_from (f, 6, 6, "tcp://127.0.0.1:4242");
    ok (fake_last_answer (f)->errnum == 0
        && !strcmp (p6->endpoint, "tcp://127.0.0.1:4242")
        && f->connects == connects + 1
        && fake_logged (f, "peer 6 listens at tcp://127.0.0.1:4242 now"),
        "rank 6 saying it: dialled at once at its new endpoint, logged");
    fake_destroy (&f);

    f = fake_create (6, 16, "bgn");
    fake_start (f);
    fake_hello (f, 7, ENV_HELLO_ACK, 1007);   /* one link up */
    fake_advance (f, 1.0);
    ok (moved_requests (f, 5) == 0, "rank 6 does not tell rank 5 at once");
    fake_advance (f, 2.0);
    ok (moved_requests (f, 5) == 1 && moved_requests (f, 7) == 0,
        "rank 5, which dials it and stayed away, is told where it listens; "
        "rank 7, up, is not");
    fake_advance (f, 2.0);
    ok (moved_requests (f, 5) == 1, "not again within 5 s");
    fake_destroy (&f);
}

/* Rank 15 of 16 is dialled by all its neighbours: restarted on a new
 * port it has no link to say so, so the diallers ask the bootstrap. */
static void check_reread (void)
{
    struct fake *f = fake_create (7, 16, "bgn");
    struct peer *p15;

    fake_start (f);
    fake_all_up (f);
    p15 = fake_peer (f, 15);
    ok (p15 && p15->connector, "rank 7 dials rank 15");
    f->peer_ep[15] = "tcp://127.0.0.1:5151";
    fake_advance_alive (f, 10.0);
    ok (f->peer_ep_asked == 0,
        "while 15 is up, nobody asks the bootstrap");
    overlay_sock_event (f->ov, OVL_SOCK_DISCONNECTED, p15->endpoint, NULL);
    fake_advance_alive (f, 2.0);
    ok (f->peer_ep_asked == 0, "2 s after 15 went away, not yet");
    int connects = f->connects;
    fake_advance_alive (f, 3.0);
    ok (f->peer_ep_asked == 1
        && !strcmp (p15->endpoint, "tcp://127.0.0.1:5151")
        && f->connects > connects
        && fake_logged (f, "peer 15 listens at tcp://127.0.0.1:5151 now"),
        "4 s away: the bootstrap is asked, and 15 is dialled where it "
        "listens now");
    fake_advance_alive (f, 2.0);
    ok (f->peer_ep_asked == 1, "then not again within 5 s");
    fake_advance_alive (f, 4.0);
    ok (f->peer_ep_asked == 2, "then again (then at doubling intervals)");
    fake_destroy (&f);
}

/* The software's version: told in our hellos, kept per peer, and in the
 * log line of each admission (a notice when it is not ours). */
static void check_version (void)
{
    struct fake *f = fake_create (15, 16, "bgn");
    struct fake *plain = fake_create (15, 16, "bgn");
    char json[512];
    struct sent *ack;

    f->version = "1.2.3+4.gabc";
    ok (fake_start (f) == 0 && fake_start (plain) == 0, "two cores start");
    snprintf (json, sizeof (json), "{\"version\":3,\"rank\":14,"
              "\"instance\":\"test-instance\",\"incarnation\":1014,"
              "\"hostname\":\"host14\",\"topology\":\"bgn\","
              "\"software\":\"1.2.3+4.gabc\"}");
    fake_hello_json (f, 14, ENV_HELLO, 1014, json, NULL);
    ack = fake_last (f, ENV_HELLO_ACK, 14);
    ok (ack && ack->body[0]
        && strstr (ack->body[0], "\"software\":\"1.2.3+4.gabc\""),
        "our ack tells our version");
    ok (!strcmp (fake_peer (f, 14)->hello.version, "1.2.3+4.gabc")
        && fake_logged_level (f, "peer 14 (host14) up: incarnation 1014, "
                              "bgn 1.2.3+4.gabc") == LOG_DEBUG
        && !fake_logged (f, "this broker runs"),
        "a peer on our version: kept, and logged once it is up (debug: "
        "no flood control drops it)");
    snprintf (json, sizeof (json), "{\"version\":3,\"rank\":13,"
              "\"instance\":\"test-instance\",\"incarnation\":1013,"
              "\"hostname\":\"host13\",\"topology\":\"bgn\","
              "\"software\":\"1.3.0\"}");
    fake_hello_json (f, 13, ENV_HELLO, 1013, json, NULL);
    ok (fake_peer (f, 13)->state == PEER_UP
        && fake_logged_level (f, "peer 13 (host13) up: incarnation 1013, "
                              "bgn 1.3.0") == LOG_DEBUG
        && fake_logged_level (f, "peer 13 (host13) runs bgn 1.3.0, this "
                              "broker runs bgn 1.2.3+4.gabc") == LOG_NOTICE,
        "a peer on another version is admitted, and a notice says both");
    fake_hello (f, 11, ENV_HELLO, 1011);
    ok (fake_peer (f, 11)->hello.version[0] == '\0'
        && fake_logged (f, "peer 11 (host11) up: incarnation 1011, bgn unknown")
        && fake_logged_level (f, "peer 11 (host11) runs bgn unknown")
           == LOG_NOTICE,
        "a hello naming no version: admitted as 'unknown'");
    fake_hello (plain, 14, ENV_HELLO, 1014);
    ack = fake_last (plain, ENV_HELLO_ACK, 14);
    ok (ack && ack->body[0] && !strstr (ack->body[0], "software")
        && !fake_logged (plain, "up: incarnation"),
        "a core without a version (the simulator's) tells none, logs none");
    fake_destroy (&f);
    fake_destroy (&plain);
}

int main (void)
{
    plan (NO_PLAN);
    check_binder ();
    check_connector ();
    check_admitted ();
    check_curve ();
    check_moved ();
    check_reread ();
    check_version ();
    done_testing ();
}
