/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test/tracker.c: requests injected here (tracker.c), via a fake io. */
#include <errno.h>
#include <string.h>

#include "src/common/libtap/tap.h"
#include "src/common/libutil/idmap.h"
#include "src/modules/overlay/dedup.h"
#include "src/modules/overlay/fence.h"
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

/* A response to 'tag' from 'from' through neighbour 'via'. */
static void response_via (struct fake *f, uint32_t from, uint32_t via,
                          uint32_t tag)
{
    msg_t *req = request (from, tag, 0);
    msg_t *rsp = msg_response_create (req, "{\"ok\":1}");
    struct envelope env = { .kind = ENV_DATA, .ttl = 9, .hops = 1,
                            .source = from, .dest = 0 };
    fake_data (f, via, &env, rsp);
    msg_destroy (&rsp);
    msg_destroy (&req);
}

/* Rank 0 (started, every peer up) sends request 'tag' to 5; then the
 * relay it went to is fenced, on the word of 'other', another peer of 0.
 * Returns that relay; what was sent before the fence is cleared. */
static uint32_t relay_dies (struct fake *f, uint32_t tag, uint32_t *other)
{
    msg_t *m = request (5, tag, 0);
    struct sent *s;
    uint32_t hop;

    fake_start (f);
    fake_all_up (f);
    fake_clear (f);
    overlay_send (f->ov, &m, 5, NULL);
    s = fake_last (f, ENV_DATA, UINT32_MAX);
    hop = s ? s->to : 4;
    *other = hop == 1 ? 4 : 1;
    fake_clear (f);
    fake_fence1 (f, *other, ENV_REPORT, hop, 1, true);
    return hop;
}

/* A relay on the way dies: the origin sends the request again. */
static void test_retry (void)
{
    struct fake *f = fake_create (0, 16, "bgn");
    uint32_t other, hop = relay_dies (f, 20, &other);
    struct sent *s = fake_last (f, ENV_DATA, UINT32_MAX);

    ok (s && s->env.dest == 5 && s->to != hop && s->msg
        && msg_get_matchtag (s->msg) == 20 && f->ov->tracker.retries == 1,
        "a relay toward 5 is fenced: the request goes again, another way");
    ok (f->nanswers == 0 && tracker_count (f->ov) == 1,
        "its client is not failed: 5 is up, the request still tracked");
    response_via (f, 5, other, 20);
    response_via (f, 5, other, 20);
    ok (f->ndelivered == 1 && f->ov->tracker.dup_drops == 1
        && tracker_count (f->ov) == 0,
        "of the answers to both copies the client gets one");
    fake_destroy (&f);
}

/* The copy sent again, or its answer, is lost too (a neighbour of the
 * dead relay routed the answer into it before it heard): unanswered a
 * peer timeout later, it goes once more; at most RETRY_MAX copies. */
static void test_retry_unanswered (void)
{
    struct fake *f = fake_create (0, 16, "bgn");
    struct sent *s;
    uint32_t other;
    int sends;

    f->cfg.rpc_timeout = 60;   /* tracked for 2 x 60 + 5 s: all of this */
    relay_dies (f, 21, &other);
    fake_clear (f);
    fake_advance_alive (f, f->cfg.peer_timeout * 0.5);
    ok (fake_count (f, ENV_DATA, UINT32_MAX) == 0
        && f->ov->tracker.retries == 1,
        "the copy unanswered for half a peer timeout: not sent yet");
    fake_advance_alive (f, f->cfg.peer_timeout * 0.5 + 1.1);
    s = fake_last (f, ENV_DATA, UINT32_MAX);
    ok (s && s->env.dest == 5 && s->msg && msg_get_matchtag (s->msg) == 21
        && f->ov->tracker.retries == 2,
        "unanswered a peer timeout on, it goes once more");
    fake_advance_alive (f, 4 * (f->cfg.peer_timeout + 1.1));
    ok (f->ov->tracker.retries == 3,
        "never answered, it is sent at most %d times in all", 1 + 3);
    fake_clear (f);
    response_via (f, 5, other, 21);
    response_via (f, 5, other, 21);
    ok (f->ndelivered == 1 && f->nanswers == 0
        && f->ov->tracker.dup_drops == 1,
        "an answer at last: its client gets it, once");
    fake_clear (f);
    fake_advance_alive (f, f->cfg.peer_timeout + 1.1);
    sends = fake_count (f, ENV_DATA, UINT32_MAX);
    ok (sends == 0, "answered, it is not sent again");
    fake_destroy (&f);
}

/* Past overlay.retry_bytes a request is tracked but not kept. */
static void test_retry_bound (void)
{
    struct fake *f = fake_create (0, 16, "bgn");
    struct sent *s;
    msg_t *m;

    fake_start (f);
    fake_all_up (f);
    f->ov->cfg.retry_bytes = 16;
    fake_clear (f);
    m = request (5, 40, 0);
    overlay_send (f->ov, &m, 5, NULL);
    s = fake_last (f, ENV_DATA, UINT32_MAX);
    ok (tracker_count (f->ov) == 1 && f->ov->tracker.unkept == 1
        && tracker_bytes (f->ov) == 0,
        "past retry_bytes a request is tracked, not kept, and counted");
    uint32_t hop = s ? s->to : 4;
    fake_clear (f);
    fake_fence1 (f, hop == 1 ? 4 : 1, ENV_REPORT, hop, 1, true);
    ok (fake_count (f, ENV_DATA, UINT32_MAX) == 0
        && f->ov->tracker.retries == 0, "so it is not sent again");
    fake_destroy (&f);
}

/* The tracker counts its entries (table, header copies), and past
 * overlay.tracker_bytes a request is not tracked: counted and logged. */
static void test_tracker_bound (void)
{
    struct fake *f = fake_create (0, 16, "bgn");
    size_t empty, one;
    msg_t *m;

    fake_start (f);
    fake_all_up (f);
    fake_clear (f);
    empty = tracker_memory (f->ov);
    m = request (5, 50, 0);
    overlay_send (f->ov, &m, 5, NULL);
    one = tracker_memory (f->ov);
    ok (tracker_count (f->ov) == 1 && one > empty
        && f->ov->tracker.entry_bytes > 0
        && one == idmap_memory (f->ov->tracker.map)
                  + f->ov->tracker.entry_bytes,
        "an entry counts its table and its header copy (%zu bytes, %zu "
        "of them the header)", one, f->ov->tracker.entry_bytes);
    f->ov->cfg.tracker_bytes = (long long)one + 8;
    m = request (6, 51, 0);
    ok (overlay_send (f->ov, &m, 6, NULL) == 0 && tracker_count (f->ov) == 1
        && f->ov->tracker.untracked == 1
        && tracker_memory (f->ov) <= (size_t)f->ov->cfg.tracker_bytes,
        "past tracker_bytes a request still goes, untracked and counted");
    ok (fake_logged (f, "is not tracked"), "and logged");
    response_arrives (f, 5, 50);
    ok (tracker_count (f->ov) == 0 && f->ov->tracker.entry_bytes == 0,
        "an answered request gives its header copy back");
    fake_destroy (&f);
}

/* A request to a rank fenced here waits overlay.rejoin_wait for its
 * rejoin: sent to the new incarnation when it is unfenced, answered
 * "did not run" when not. */
static void test_rejoin_wait (void)
{
    struct fake *f = fake_create (0, 16, "bgn");
    struct answer *a;
    struct sent *s;
    int delivered;
    msg_t *m;

    fake_start (f);
    fake_all_up (f);
    f->ov->cfg.rejoin_wait = 0.5;
    fake_fence1 (f, 1, ENV_REPORT, 5, 1, true);
    fake_fence1 (f, 1, ENV_REPORT, 6, 1, true);
    fake_clear (f);

    m = request (5, 60, 0);
    ok (overlay_send (f->ov, &m, 5, NULL) == 0 && m == NULL
        && fake_count (f, ENV_DATA, UINT32_MAX) == 0 && f->nanswers == 0
        && f->ov->tracker.waits == 1 && tracker_wait_bytes (f->ov) > 0,
        "a request to 5, fenced here, is taken and waits (%zu bytes)",
        tracker_wait_bytes (f->ov));
    fake_advance (f, 0.2);
    fake_fence1 (f, 1, ENV_REPORT, 5, 2, false);
    s = fake_last (f, ENV_DATA, UINT32_MAX);
    ok (s && s->env.dest == 5 && s->msg && msg_get_matchtag (s->msg) == 60
        && tracker_count (f->ov) == 1 && f->ov->tracker.nwaiting == 0
        && tracker_wait_bytes (f->ov) == 0 && f->nanswers == 0,
        "5 rejoins within rejoin_wait: the request goes to it, tracked");
    delivered = f->ndelivered;
    response_arrives (f, 5, 60);
    ok (f->ndelivered == delivered + 1 && tracker_count (f->ov) == 0,
        "and its answer reaches the client");

    m = request (6, 61, 0);
    overlay_send (f->ov, &m, 6, NULL);
    fake_advance (f, 0.4);
    ok (f->nanswers == 0 && f->ov->tracker.nwaiting == 1,
        "a request to 6 waits");
    fake_advance (f, 0.2);
    a = fake_last_answer (f);
    ok (a && a->errnum == EHOSTUNREACH && a->text
        && !strcmp (a->text, "rank 6 is down or restarting: no rejoin "
                             "within 0.5s; the request did not run")
        && msg_get_matchtag (a->req) == 61
        && f->ov->tracker.wait_expired == 1 && f->ov->tracker.nwaiting == 0
        && fake_count (f, ENV_DATA, UINT32_MAX) == 1,
        "6 does not rejoin in time: the client is told the request did not "
        "run (%s)", a && a->text ? a->text : "");

    f->ov->cfg.held_bytes = 16;
    m = request (6, 62, 0);
    errno = 0;
    ok (overlay_send (f->ov, &m, 6, NULL) < 0 && errno == EHOSTUNREACH
        && m != NULL && fake_logged (f, "overlay.held_bytes"),
        "past overlay.held_bytes a request fails at once (logged)");
    msg_destroy (&m);
    f->ov->cfg.held_bytes = 4 << 20;
    m = request (6, 63, MSGFLAG_NORESPONSE);
    ok (overlay_send (f->ov, &m, 6, NULL) < 0 && m != NULL,
        "a request without a response does not wait");
    msg_destroy (&m);
    fake_destroy (&f);
}

/* An owner request that waited for its rank's rejoin is sealed when it
 * goes, as overlay_send seals one that goes at once: unsealed, the
 * destination would refuse it the owner role. */
static void test_rejoin_wait_signed (void)
{
    struct fake *f = fake_create (0, 16, "bgn");
    struct bgn_msg_info info = { .sign = 1 };
    struct sent *s;
    struct peer *p;
    msg_t *m;

    f->keys = true;
    fake_start (f);
    fake_all_up (f);
    f->ov->cfg.rejoin_wait = 0.5;
    p = fake_peer (f, 4);
    fake_fence1 (f, 1, ENV_REPORT, 4, p->hello.incarnation, true);
    /* a fence on rank 1's word is a suspicion first (suspect.h): 4 is
     * gone unheard, so it is believed half a keepalive interval later */
    p->live.last_heard -= 3 * f->ov->cfg.keepalive_interval;
    fake_advance (f, f->ov->cfg.keepalive_interval);
    fake_clear (f);
    m = request (4, 70, 0);
    msg_set_rolemask (m, MSG_ROLE_OWNER);
    ok (fence_is_fenced (f->ov, 4) && overlay_send (f->ov, &m, 4, &info) == 0
        && m == NULL && f->ov->tracker.nwaiting == 1,
        "an owner request to 4, fenced here, waits");
    /* 4 restarted: its own hello, a new incarnation */
    fake_hello (f, 4, p->connector ? ENV_HELLO_ACK : ENV_HELLO, 2004);
    fake_advance (f, 0.05);
    s = fake_last (f, ENV_DATA, UINT32_MAX);
    ok (!fence_is_fenced (f->ov, 4) && s && s->env.dest == 4
        && (s->env.flags & ENV_FLAG_SIGNED) && (s->env.flags & ENV_FLAG_WAITED)
        && s->rawlen > ENV_SIZE + ENV_SIG_BLOCK
        && f->ov->sign.signed_out == 1,
        "4 rejoins: it goes sealed, its signature made as it leaves");
    fake_destroy (&f);
}

/* A request and its copy meet at the destination. */
static void test_dedup (void)
{
    struct fake *f = fake_create (5, 16, "bgn");
    struct envelope env = { .kind = ENV_DATA, .ttl = 9, .hops = 1,
                            .source = 0, .dest = 5 };
    msg_t *req = request (5, 30, 0), *rsp, *other = request (5, 31, 0);

    fake_start (f);
    fake_all_up (f);
    fake_clear (f);
    fake_data (f, 4, &env, req);
    fake_data (f, 4, &env, req);
    ok (f->ndelivered == 1 && f->ov->dedup.copies == 1
        && fake_count (f, ENV_DATA, UINT32_MAX) == 0,
        "a copy of a request still running is dropped: it runs once");
    rsp = msg_response_create (req, "{\"n\":1}");
    ok (overlay_send (f->ov, &rsp, 0, NULL) == 0
        && fake_count (f, ENV_DATA, UINT32_MAX) == 1, "it is answered");
    fake_data (f, 4, &env, req);
    struct sent *s = fake_last (f, ENV_DATA, UINT32_MAX);
    ok (f->ndelivered == 1 && f->ov->dedup.answered == 1 && s && s->msg
        && msg_get_type (s->msg) == MSGTYPE_RESPONSE
        && msg_get_matchtag (s->msg) == 30 && s->env.dest == 0,
        "a copy arriving after the answer gets the same answer again");
    fake_data (f, 4, &env, other);
    ok (f->ndelivered == 2, "another request of the same client runs");
    ok (dedup_bytes (f->ov) > 0 && dedup_bytes (f->ov)
        <= (size_t)f->ov->cfg.dedup_bytes, "what is remembered is counted");
    /* a broker's own request: its matchtags restart with the broker */
    msg_t *own = msg_request_create ("overlay.ready", 5, "{}");
    msg_route_enable (own);
    msg_route_push (own, "0");
    msg_set_matchtag (own, 1);
    fake_data (f, 4, &env, own);
    fake_data (f, 4, &env, own);
    ok (f->ndelivered == 4, "a broker's own requests are not taken for copies "
        "(a restarted broker counts its matchtags from 1 again)");
    msg_destroy (&own);
    f->ov->cfg.dedup_bytes = 0;
    msg_set_matchtag (other, 32);
    fake_data (f, 4, &env, other);
    ok (dedup_bytes (f->ov) == 0 && f->ov->dedup.evicted > 0,
        "past dedup_bytes the oldest are forgotten, counted");
    msg_destroy (&req);
    msg_destroy (&other);
    fake_destroy (&f);
}

/* A relay's error for one copy, from rank 'from' through 'via'. */
static void relay_error_via (struct fake *f, uint32_t dest, uint32_t from,
                             uint32_t via, uint32_t tag)
{
    msg_t *req = request (dest, tag, 0);
    msg_t *rsp = msg_error_response_create (req, EHOSTUNREACH,
                                           "no route to the destination");
    struct envelope env = { .kind = ENV_DATA, .ttl = 9, .hops = 1,
                            .source = from, .dest = 0 };
    fake_data (f, via, &env, rsp);
    msg_destroy (&rsp);
    msg_destroy (&req);
}

/* Two copies out: a relay's error for one says only that this copy did
 * not run; the other may still arrive and run, so the error is not told
 * (the client would see a failure, then the request run). */
/* A request names the incarnation of its destination it is meant for
 * (the envelope's stamp), and its copies keep that name. */
static void test_stamp_origin (void)
{
    struct fake *f = fake_create (0, 16, "bgn");
    uint32_t hop, other;
    struct sent *s;
    msg_t *m;

    fake_start (f);
    fake_all_up (f);
    fake_fence1 (f, 1, ENV_REPORT, 5, 1005, false);
    fake_clear (f);
    m = request (5, 30, 0);
    overlay_send (f->ov, &m, 5, NULL);
    s = fake_last (f, ENV_DATA, UINT32_MAX);
    ok (s && s->env.stamp == envelope_inc_stamp (1005),
        "a request to 5 bears the stamp of 5's live record here");
    hop = s ? s->to : 4;
    other = hop == 1 ? 4 : 1;
    fake_fence1 (f, other, ENV_REPORT, 5, 1006, false);
    fake_clear (f);
    fake_fence1 (f, other, ENV_REPORT, hop, 1, true);
    s = fake_last (f, ENV_DATA, UINT32_MAX);
    ok (s && s->env.dest == 5 && f->ov->tracker.retries == 1
        && s->env.stamp == envelope_inc_stamp (1005),
        "a copy sent again bears the first one's stamp, though 5's record "
        "moved on (it must not run at an incarnation the first was not "
        "meant for)");
    fake_clear (f);
    m = request (9, 31, 0);
    overlay_send (f->ov, &m, 9, NULL);
    s = fake_last (f, ENV_DATA, UINT32_MAX);
    ok (s && s->env.stamp == 0, "a rank with no record here: stamp 0");
    fake_destroy (&f);
}

/* A request from rank 0 to 5 through neighbour 4, with this stamp. */
static void request_to_5 (struct fake *f, uint32_t tag, uint16_t stamp)
{
    msg_t *m = msg_request_create ("test.echo", 5, "{}");
    struct envelope env = { .kind = ENV_DATA, .ttl = 9, .hops = 1,
                            .stamp = stamp, .source = 0, .dest = 5 };

    msg_route_enable (m);
    msg_route_push (m, CLIENT);
    msg_route_push (m, "0");
    msg_set_matchtag (m, tag);
    fake_data (f, 4, &env, m);
    msg_destroy (&m);
}

/* A broker that rejoined after a fence runs only the requests meant for
 * its present incarnation: its origin fails those meant for the fenced
 * one ("the request may have run"), so they must not run later. */
static void test_stamp_destination (void)
{
    struct fake *f = fake_create (5, 16, "bgn");
    uint64_t old, drops;
    int before;

    fake_start (f);
    fake_all_up (f);
    old = f->ov->incarnation;
    request_to_5 (f, 40, 0x1234);
    request_to_5 (f, 41, 0);
    ok (f->ndelivered == 2, "a broker that never rejoined runs requests "
        "whatever their stamp (a new process cannot tell its own)");
    fake_fence1 (f, 4, ENV_REPORT, 5, old, true);
    ok (f->ov->incarnation > old, "fenced: it rejoins as a new incarnation");
    fake_all_up (f);
    before = f->ndelivered;
    drops = f->ov->hello.stale_drops;
    request_to_5 (f, 42, envelope_inc_stamp (old));
    request_to_5 (f, 43, 0);
    ok (f->ndelivered == before && f->ov->hello.stale_drops == drops + 2
        && fake_logged (f, "meant for an incarnation of this broker that "
                           "was fenced"),
        "after the rejoin, requests meant for the fenced incarnation (or "
        "for none) are dropped, counted and logged, not run");
    request_to_5 (f, 44, envelope_inc_stamp (f->ov->incarnation));
    ok (f->ndelivered == before + 1,
        "one meant for the present incarnation runs");
    fake_destroy (&f);
}

static void test_copy_error (void)
{
    struct fake *f = fake_create (0, 16, "bgn");
    struct sent *s;
    uint32_t hop, other;
    msg_t *m;

    fake_start (f);
    fake_all_up (f);
    fake_clear (f);
    m = request (5, 50, 0);
    overlay_send (f->ov, &m, 5, NULL);
    s = fake_last (f, ENV_DATA, UINT32_MAX);
    hop = s ? s->to : 4;
    other = hop == 1 ? 4 : 1;
    fake_clear (f);
    fake_fence1 (f, other, ENV_REPORT, hop == 4 ? 12 : 13, 1, true);
    ok (f->ov->tracker.retries == 1, "a rank is fenced: the request goes "
        "again, two copies out");
    relay_error_via (f, 5, other, other, 50);
    ok (f->ndelivered == 0 && f->ov->tracker.copy_errors == 1
        && tracker_count (f->ov) == 1,
        "a relay's error for one copy is counted, not told");
    response_via (f, 5, other, 50);
    ok (f->ndelivered == 1 && tracker_count (f->ov) == 0,
        "the other copy's answer is");
    fake_clear (f);
    m = request (5, 51, 0);
    overlay_send (f->ov, &m, 5, NULL);
    relay_error_via (f, 5, other, other, 51);
    ok (f->ndelivered == 1 && f->ov->tracker.copy_errors == 1,
        "with one copy out, a relay's error is told at once");
    fake_destroy (&f);
}

int main (void)
{
    struct fake *f = fake_create (0, 16, "bgn");
    msg_t *m;

    plan (NO_PLAN);
    test_stamp_origin ();
    test_stamp_destination ();
    test_copy_error ();
    test_rejoin_wait_signed ();
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
    f->ov->cfg.rejoin_wait = 0;     /* no waiting for a rejoin (below) */
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
    test_retry ();
    test_retry_unanswered ();
    test_retry_bound ();
    test_tracker_bound ();
    test_rejoin_wait ();
    test_dedup ();
    done_testing ();
}
