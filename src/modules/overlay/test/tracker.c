/* test/tracker.c: requests injected here (tracker.c), via a fake io. */
#include <errno.h>
#include <string.h>

#include "src/common/libtap/tap.h"
#include "src/modules/overlay/tracker.h"
#include "fakeio.h"

#define CLIENT "3f1c2a9e-0000-4000-8000-00000000c11e"

/* A request as the broker hands it over: client id, then our rank. */
static msg_t *request (uint32_t dest, uint32_t tag, int flags)
{
    msg_t *m = msg_request_create ("test.echo", dest, "{}");
    msg_route_enable (m);
    msg_route_push (m, CLIENT);
    msg_route_push (m, "0");
    msg_set_matchtag (m, tag);
    if (flags)
        msg_set_flags (m, msg_get_flags (m) | flags);
    return m;
}

/* Its response coming back from rank 'from' over the overlay. */
static void response_arrives (struct fake *f, uint32_t from, uint32_t tag)
{
    msg_t *req = request (from, tag, 0);
    msg_t *rsp = msg_response_create (req, "{\"ok\":1}");
    struct envelope env = { .kind = ENV_DATA, .ttl = 9, .hops = 1,
                            .source = from, .dest = 0 };
    fake_data (f, 4, &env, rsp);   /* through neighbour 4 */
    msg_destroy (&rsp);
    msg_destroy (&req);
}

int main (void)
{
    struct fake *f = fake_create (0, 16, "bgn");
    msg_t *m;

    plan (NO_PLAN);
    fake_start (f);
    fake_all_up (f);
    fake_clear (f);

    m = request (5, 7, 0);
    ok (overlay_send (f->ov, &m, 5, NULL) == 0 && m == NULL,
        "a request to 5 is taken");
    ok (fake_count (f, ENV_DATA, UINT32_MAX) == 1 && tracker_count (f->ov) == 1,
        "it is sent and tracked");
    m = request (6, 8, 0);
    overlay_send (f->ov, &m, 6, NULL);
    m = request (9, 9, MSGFLAG_NORESPONSE);
    overlay_send (f->ov, &m, 9, NULL);
    ok (tracker_count (f->ov) == 2, "a no-response request is not tracked");

    fake_fence1 (f, 1, ENV_REPORT, 5, 1, true);
    struct answer *a = fake_last_answer (f);
    ok (a && a->errnum == EHOSTUNREACH && a->text
        && !strcmp (a->text, "rank 5 went down: the request may have run "
                            "(outcome unknown)")
        && msg_get_matchtag (a->req) == 7,
        "5 is fenced: its request fails at once with EHOSTUNREACH");
    ok (f->ov->tracker.failed == 1, "and is counted");
    fake_fence1 (f, 2, ENV_REPORT, 5, 1, true);
    ok (f->nanswers == 1, "only once");

    fake_clear (f);
    response_arrives (f, 5, 7);
    ok (f->ndelivered == 0 && f->ov->tracker.dup_drops == 1,
        "a late response from 5 is dropped: the client had its answer");
    response_arrives (f, 6, 8);
    ok (f->ndelivered == 1 && tracker_count (f->ov) == 0,
        "6's response is delivered and 6's request forgotten");

    m = request (5, 10, 0);
    errno = 0;
    ok (overlay_send (f->ov, &m, 5, NULL) < 0 && errno == EHOSTUNREACH
        && m != NULL && tracker_count (f->ov) == 0,
        "a request to a rank known down fails at once, message left to us");
    msg_destroy (&m);

    m = request (12, 11, 0);
    overlay_send (f->ov, &m, 12, NULL);
    ok (tracker_count (f->ov) == 1, "a request to 12 is tracked");
    fake_advance (f, 2 * f->cfg.rpc_timeout + 4);
    ok (tracker_count (f->ov) == 1, "until twice the RPC timeout plus 5 s");
    fake_advance (f, 2.5);
    ok (tracker_count (f->ov) == 0, "then it is forgotten");
    fake_destroy (&f);
    done_testing ();
}
