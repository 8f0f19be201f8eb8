/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test/heal.c: substitute selection and links (heal.c) via a fake io. */
#include <errno.h>
#include <string.h>

#include "src/common/libtap/tap.h"
#include "fakeio.h"

static msg_t *first_request (struct fake *f, const char *topic)
{
    for (int i = 0; i < f->nrequests; i++)
        if (!strcmp (msg_get_topic (f->requests[i]), topic))
            return f->requests[i];
    return NULL;
}

static void fence (struct fake *f, uint32_t from, uint32_t rank)
{
    fake_fence1 (f, from, ENV_BATCH, rank, 1000 + rank, true);
}

static void check_heal (void)
{
    struct fake *f = fake_create (0, 32, "bgn");
    uint32_t lost[] = { 1, 2, 4, 8, 16, 24 };
    msg_t *req;

    fake_start (f);
    fake_all_up (f);
    ok (f->ov->peers->n == 9 && f->ov->heal.threshold == 4,
        "rank 0 of 32 has 9 peers and heals below 4");
    for (int i = 0; i < 3; i++)
        fence (f, 31, lost[i]);
    fake_advance (f, 1.0);
    ok (first_request (f, "overlay.contact") == NULL,
        "with 6 of 9 up it asks for no substitute");
    for (int i = 3; i < 6; i++)
        fence (f, 31, lost[i]);
    fake_advance (f, 1.0);
    req = first_request (f, "overlay.contact");
    uint32_t sub = 0;
    if (req)
        msg_get_nodeid (req, &sub);
    ok (req && sub == 3 && strstr (msg_get_payload (req, NULL),
                                   "\"lost\":1"),
        "with 3 up it first asks rank 3, next to lost neighbour 1 on the ring");

    /* rank 3 answers: connect and greet it */
    int connects = f->connects;
    msg_t *rsp = msg_response_create (req, "{\"rank\":3,\"endpoint\":"
                                           "\"ipc://peer-3\",\"lost\":1}");
    overlay_service (f->ov, rsp, NULL);
    msg_destroy (&rsp);
    struct peer *p = fake_peer (f, 3);
    ok (p && p->substitute && p->connector && p->sub_for == 1
        && f->connects == connects + 1 && fake_count (f, ENV_HELLO, 3) == 1,
        "the answer makes 3 a substitute peer: connected and greeted");
    fake_clear (f);
    fake_hello (f, 3, ENV_HELLO_ACK, 1003);
    ok (p->state == PEER_UP && bgn_router_link_count (f->ov->router) == 1
        && fake_count (f, ENV_LINK, UINT32_MAX) == 4,
        "3 is up, the link 0-3 is in the router and flooded to the 4 up peers");

    /* every neighbour comes back: the substitute goes */
    for (int i = 0; i < 6; i++) {
        fake_fence1 (f, 31, ENV_BATCH, lost[i], 2000 + lost[i], false);
        fake_hello (f, lost[i], ENV_HELLO_ACK, 2000 + lost[i]);
    }
    fake_clear (f);
    fake_advance (f, 1.0);
    ok (fake_peer (f, 3) == NULL && f->ov->heal.nsubst == 0
        && bgn_router_link_count (f->ov->router) == 0 && f->disconnects == 1,
        "with every neighbour back, the substitute link is dropped");
    ok (fake_count (f, ENV_LINK, 3) >= 1, "and 3 is told");
    fake_destroy (&f);
}

static void check_accept (void)
{
    struct fake *f = fake_create (0, 32, "bgn");
    msg_t *req = msg_request_create ("overlay.contact", 0,
                                     "{\"rank\":20,\"pubkey\":\"\","
                                     "\"lost\":19}");
    msg_set_rolemask (req, MSG_ROLE_OWNER);

    fake_start (f);
    fake_all_up (f);
    overlay_service (f->ov, req, NULL);
    struct answer *a = fake_last_answer (f);
    struct peer *p = fake_peer (f, 20);
    ok (a && a->errnum == 0 && strstr (a->text, "\"endpoint\":\"ipc://fake\"")
        && strstr (a->text, "\"lost\":19"),
        "asked to stand in, rank 0 answers with its endpoint");
    ok (p && p->substitute && !p->connector && f->ov->heal.nsubst == 1,
        "and expects 20 to connect as a substitute");
    msg_destroy (&req);
    req = msg_request_create ("overlay.contact", 0, "{\"rank\":0}");
    msg_set_rolemask (req, MSG_ROLE_OWNER);
    overlay_service (f->ov, req, NULL);
    ok (fake_last_answer (f)->errnum == EPROTO,
        "a contact request from ourselves is refused");
    msg_destroy (&req);
    req = msg_request_create ("overlay.contact", 0,
                              "{\"rank\":21,\"pubkey\":\"\",\"lost\":19}");
    msg_set_rolemask (req, MSG_ROLE_USER);
    overlay_service (f->ov, req, NULL);
    ok (fake_last_answer (f)->errnum == EPERM && !fake_peer (f, 21),
        "a contact request without the owner role is refused (EPERM)");
    msg_destroy (&req);
    fake_destroy (&f);
}

/* The far end asked us to stand in, then dropped the link while we could
 * not hear its "del": we stop waiting for its greeting. */
static void check_abandoned (void)
{
    struct fake *f = fake_create (0, 32, "bgn");
    msg_t *req = msg_request_create ("overlay.contact", 0,
                                     "{\"rank\":20,\"pubkey\":\"\","
                                     "\"lost\":19}");

    msg_set_rolemask (req, MSG_ROLE_OWNER);
    f->cfg.peer_timeout = 2.0;
    fake_start (f);
    fake_all_up (f);
    overlay_service (f->ov, req, NULL);
    msg_destroy (&req);
    ok (fake_peer (f, 20) != NULL, "rank 20 is expected as a substitute");
    fake_advance_alive (f, 2.5);
    ok (fake_peer (f, 20) != NULL && f->ov->heal.nsubst == 1,
        "it is still expected within the patience (3 s)");
    fake_advance_alive (f, 1.0);
    ok (fake_peer (f, 20) == NULL && f->ov->heal.nsubst == 0,
        "never greeted, it is forgotten after 3 s");
    ok (f->ov->peers->up == f->ov->peers->n,
        "every peer left is up: it no longer holds readiness back");
    ok (fake_logged (f, "substitute link from 20 was never"),
        "the log says why");

    /* greeted in time, it stays */
    req = msg_request_create ("overlay.contact", 0,
                              "{\"rank\":21,\"pubkey\":\"\",\"lost\":19}");
    msg_set_rolemask (req, MSG_ROLE_OWNER);
    overlay_service (f->ov, req, NULL);
    msg_destroy (&req);
    fake_hello (f, 21, ENV_HELLO, 2021);
    fake_advance_alive (f, 5.0);
    ok (fake_peer (f, 21) != NULL && fake_peer (f, 21)->state == PEER_UP,
        "a substitute that greeted stays while it is up");
    fake_destroy (&f);
}

int main (void)
{
    plan (NO_PLAN);
    check_heal ();
    check_accept ();
    check_abandoned ();
    done_testing ();
}
