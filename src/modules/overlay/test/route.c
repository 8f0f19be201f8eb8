/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test/route.c: next hops, TTL, backlogs, detours (route.c) via a fake
 * io. */
#include <errno.h>
#include <string.h>

#include "src/common/libtap/tap.h"
#include "src/modules/overlay/fence.h"
#include "src/modules/overlay/route.h"
#include "src/modules/overlay/status.h"
#include "fakeio.h"

static msg_t *request (uint32_t dest, uint32_t tag)
{
    msg_t *m = msg_request_create ("test.echo", dest, "{}");
    msg_route_enable (m);
    msg_route_push (m, "client-1");
    msg_route_push (m, "0");
    msg_set_matchtag (m, tag);
    return m;
}

static int send_to (struct fake *f, uint32_t dest, uint32_t tag)
{
    msg_t *m = request (dest, tag);
    int rc = overlay_send (f->ov, &m, dest, NULL);
    msg_destroy (&m);
    return rc;
}

static struct fake *rank0 (void)
{
    struct fake *f = fake_create (0, 16, "bgn");
    fake_start (f);
    fake_all_up (f);
    fake_advance (f, 0.05);   /* start-up traffic (rank 0's announcement) */
    fake_clear (f);
    return f;
}

static void check_ttl (void)
{
    struct fake *f = rank0 ();
    struct sent *s = NULL;

    ok (send_to (f, 1, 1) == 0 && (s = fake_last (f, ENV_DATA, 1))
        && s->env.ttl == f->ov->ttl - 1 && s->env.hops == 1
        && s->env.source == 0 && s->env.dest == 1,
        "a request to neighbour 1 leaves with one hop made, ttl %d - 1",
        f->ov->ttl);
    int rc = send_to (f, 3, 2);
    s = fake_last (f, ENV_DATA, UINT32_MAX);
    ok (rc == 0 && s && bgn_topo_distance (f->ov->topo, s->to, 3) == 1,
        "a request to 3 goes to a next hop one hop from 3 (%u)",
        s ? s->to : 0);

    /* something passing through: from 1, for 9 */
    msg_t *m = request (9, 3);
    struct envelope env = { .kind = ENV_DATA, .ttl = 4, .hops = 2,
                            .source = 7, .dest = 9 };
    fake_data (f, 1, &env, m);
    s = fake_last (f, ENV_DATA, UINT32_MAX);
    ok (s && s->env.ttl == 3 && s->env.hops == 3 && s->env.source == 7
        && s->to == 8 && f->ov->route.count[RC_forwarded] == 1,
        "a message for 9 is forwarded to 8 with a hop less to go");
    ok (s && s->wire == f->injected && s->msg
        && !strcmp (msg_get_topic (s->msg), msg_get_topic (m)),
        "it goes on as the very frame it came in, its envelope rewritten");
    env.ttl = 0;
    fake_data (f, 1, &env, m);
    struct answer *a = fake_last_answer (f);
    ok (a && a->errnum == EHOSTUNREACH && strstr (a->text, "TTL expired")
        && f->ov->route.count[RC_ttl_drops] == 1,
        "with no hops left it is dropped and the request answered");

    /* a request that continues its trip (service-addressed, not here) */
    struct bgn_msg_info info = { .from_overlay = 1, .ttl = 2, .hops = 5,
                                 .source = 11 };
    ok (overlay_send (f->ov, &m, 4, &info) == 0 && m == NULL
        && (s = fake_last (f, ENV_DATA, 4)) && s->env.ttl == 1
        && s->env.hops == 6 && s->env.source == 11,
        "a request going on keeps its source, hops and TTL");
    m = request (9, 4);
    info.ttl = 0;
    errno = 0;
    ok (overlay_send (f->ov, &m, 4, &info) < 0 && errno == EHOSTUNREACH
        && m != NULL, "one with no hops left is refused, left to the broker");
    msg_destroy (&m);
    errno = 0;
    ok (send_to (f, 0, 5) < 0 && errno == EHOSTUNREACH
        && send_to (f, 16, 5) < 0, "a request to ourselves or past the size "
        "is EHOSTUNREACH");
    fake_destroy (&f);
}

static void check_backlog (void)
{
    struct fake *f = rank0 ();
    bool order = true;

    f->send_errno[1] = EAGAIN;
    for (uint32_t tag = 1; tag <= 3; tag++)
        send_to (f, 1, tag);
    ok (fake_count (f, ENV_DATA, UINT32_MAX) == 0
        && fake_peer (f, 1)->backlog.count == 3,
        "1's queue is full: three requests wait in its backlog");
    fake_advance (f, 0.01);
    ok (fake_peer (f, 1)->backlog.count == 3, "and keep waiting while it is");
    f->send_errno[1] = 0;
    fake_advance (f, 0.01);
    ok (fake_count (f, ENV_DATA, 1) == 3 && fake_peer (f, 1)->backlog.count == 0,
        "when it has room they go");
    for (int i = 0; i < 3; i++)
        if (msg_get_matchtag (f->sent[i].msg) != (uint32_t)i + 1)
            order = false;
    ok (order, "in the order they were sent");

    f->ov->cfg.backlog_max = 2;
    f->send_errno[1] = EAGAIN;
    fake_clear (f);
    send_to (f, 1, 1);
    send_to (f, 1, 2);
    errno = 0;
    ok (send_to (f, 1, 3) < 0 && errno == ENOBUFS
        && f->ov->route.count[RC_backlog_overflows] == 1,
        "a full backlog refuses with ENOBUFS and counts it");
    f->send_errno[1] = 0;
    fake_destroy (&f);
}

/* overlay.backlog_bytes bounds the heap of every backlog together. */
static void check_backlog_bytes (void)
{
    struct fake *f = rank0 ();
    size_t one;
    json_t *st;

    f->send_errno[1] = EAGAIN;
    send_to (f, 1, 1);
    one = route_backlog_bytes (f->ov);
    ok (one > sizeof (struct pending) && one == fake_peer (f, 1)->backlog.bytes,
        "a waiting request counts the heap it holds");
    f->ov->cfg.backlog_bytes = (long long)(2 * one + one / 2);
    errno = 0;
    ok (send_to (f, 1, 2) == 0 && send_to (f, 1, 3) < 0 && errno == ENOBUFS
        && f->ov->route.count[RC_backlog_overflows] == 1
        && fake_peer (f, 1)->backlog.count == 2,
        "past backlog_bytes a message is refused with ENOBUFS and counted");
    st = status_json (f->ov);
    json_t *b = json_object_get (json_object_get (st, "memory"), "backlogs");
    ok (json_integer_value (json_object_get (b, "bytes"))
        == (json_int_t)route_backlog_bytes (f->ov)
        && route_backlog_bytes (f->ov) <= (size_t)f->ov->cfg.backlog_bytes,
        "overlay-status shows the backlogs' bytes, within their bound");
    json_decref (st);
    f->send_errno[1] = 0;
    fake_advance (f, 0.01);
    ok (fake_count (f, ENV_DATA, 1) == 2 && route_backlog_bytes (f->ov) == 0,
        "once sent, the backlogs hold nothing");
    fake_destroy (&f);
}

static void check_unreachable (void)
{
    struct fake *f = rank0 ();

    f->send_errno[2] = EHOSTUNREACH;
    send_to (f, 2, 1);
    ok (fake_peer (f, 2)->state == PEER_DOWN && fence_is_fenced (f->ov, 2),
        "a send finding 2's connection gone makes 2 lost and fenced");
    ok (fake_logged (f, "connection gone (EHOSTUNREACH)")
        && fence_count (f->ov) == 1,
        "logged, and fenced here");
    fake_advance (f, 0.02);
    struct sent *b = NULL;
    for (int i = 0; i < f->nsent; i++)
        if (f->sent[i].env.kind == ENV_BATCH && f->sent[i].env.dest == 3)
            b = &f->sent[i];
    ok (fake_count (f, ENV_BATCH, UINT32_MAX) == 4
        && fake_count (f, ENV_BATCH, 2) == 0 && b && b->to != 2
        && fake_has_record (fake_last (f, ENV_BATCH, 1), 2, 1002, true),
        "rank 0, the root, multicasts it to tree children 1, 4, 8 and, "
        "around 2, to 2's child 3 (via %u)", b ? b->to : 0);
    fake_destroy (&f);
}

static void check_detour (void)
{
    struct fake *f = rank0 ();
    struct sent *s;

    /* 4 refuses us: its link is down, but nobody fenced it */
    fake_hello_json (f, 4, ENV_HELLO_NAK, 1004,
                     "{\"reason\":\"testing\"}", NULL);
    ok (fake_peer (f, 4)->state == PEER_DOWN && !fence_is_fenced (f->ov, 4),
        "the link to 4 is down and 4 is not fenced");
    fake_clear (f);
    ok (send_to (f, 4, 1) == 0 && (s = fake_last (f, ENV_DATA, UINT32_MAX))
        && s->to == 2 && fake_peer (f, 2)->route.reroutes == 1,
        "a request to 4 takes a detour through 2, one hop from 4");
    fake_destroy (&f);
}

static void check_suspect (void)
{
    struct fake *f = rank0 ();
    struct envelope ka = { .kind = ENV_KEEPALIVE, .flags = 1, .ttl = 1,
                           .source = 2, .dest = 0 };
    struct sent *s;

    fake_advance (f, 3.2);   /* silence: every peer is suspect now */
    ok (fake_peer (f, 15)->state == PEER_SUSPECT
        && fake_peer (f, 2)->state == PEER_SUSPECT,
        "peers silent for three keepalive intervals are suspect");
    fake_inject (f, 2, &ka, NULL, NULL, 0, NULL);
    ok (fake_peer (f, 2)->state == PEER_UP, "2 speaks and is up again");
    fake_clear (f);
    ok (send_to (f, 3, 9) == 0 && (s = fake_last (f, ENV_DATA, UINT32_MAX))
        && s->to == 2,
        "a request to 3 avoids its preferred hop 15, suspect, for 2, up");
    fake_destroy (&f);
}

static int respond_to (struct fake *f, uint32_t dest)
{
    msg_t *req = request (dest, 9);
    msg_t *rsp = msg_response_create (req, "{}");
    int rc = overlay_send (f->ov, &rsp, dest, NULL);
    msg_destroy (&rsp);
    msg_destroy (&req);
    return rc;
}

/* A rank that rejoined may send a request that overtakes the news of its
 * rejoin: the response waits for the unfence, a peer timeout at most. */
static void check_held (void)
{
    struct fake *f = rank0 ();

    fake_fence1 (f, 1, ENV_VIEW, 5, 1005, true);
    ok (fence_is_fenced (f->ov, 5), "rank 5 is fenced here");
    fake_clear (f);
    f->ov->cfg.rejoin_wait = 0;     /* no waiting for its rejoin */
    ok (send_to (f, 5, 1) < 0 && errno == EHOSTUNREACH,
        "a request to it still fails at once");
    ok (respond_to (f, 5) == 0 && fake_count (f, ENV_DATA, UINT32_MAX) == 0,
        "a response to it is taken and held, not sent");
    fake_fence1 (f, 1, ENV_VIEW, 5, 1006, false);
    struct sent *s = fake_last (f, ENV_DATA, UINT32_MAX);
    ok (s && s->env.dest == 5,
        "when 5 rejoins, the held response leaves toward it (via %u)",
        s ? s->to : 0);

    fake_fence1 (f, 1, ENV_VIEW, 5, 1006, true);
    fake_clear (f);
    ok (respond_to (f, 5) == 0, "another response waits");
    fake_advance_alive (f, f->cfg.peer_timeout + 1.0);
    ok (fake_count (f, ENV_DATA, UINT32_MAX) == 0
        && f->ov->route.count[RC_held_expired] == 1,
        "and is dropped (counted) when 5 stays down a peer timeout");
    fake_destroy (&f);
}

/* Past overlay.held_bytes a response for a fenced rank is not held:
 * dropped, counted and logged; what is held stays within the bound. */
static void check_held_bound (void)
{
    struct fake *f = rank0 ();
    size_t one = 0;

    fake_fence1 (f, 1, ENV_VIEW, 5, 1005, true);
    fake_clear (f);
    ok (respond_to (f, 5) == 0 && (one = route_held_bytes (f->ov)) > 0,
        "a held response counts its heap (%zu bytes)",
        route_held_bytes (f->ov));
    f->ov->cfg.held_bytes = (long long)(2 * one + one / 2);
    for (int i = 0; i < 5; i++)
        respond_to (f, 5);
    ok (f->ov->route.held.count == 2 && f->ov->route.count[RC_held_drops] == 4
        && route_held_bytes (f->ov) <= (size_t)f->ov->cfg.held_bytes,
        "with room for two, two are held and the rest dropped, counted "
        "(%d held, %llu dropped)", f->ov->route.held.count,
        (unsigned long long)f->ov->route.count[RC_held_drops]);
    ok (fake_logged (f, "overlay.held_bytes"),
        "and the drop is logged, naming the bound");
    fake_destroy (&f);
}

/* A response passing through for a rank fenced here: the rank may have
 * rejoined (its neighbours and rank 0 know at once, the news reaches the
 * rest of the instance later), so it waits for the unfence.  A request
 * never waits: its origin may report it failed meanwhile. */
static void check_held_forward (void)
{
    struct fake *f = rank0 ();
    struct envelope env = { .kind = ENV_DATA, .ttl = 6, .hops = 1,
                            .source = 9, .dest = 5 };
    msg_t *req = request (5, 21);
    msg_t *rsp = msg_response_create (req, "{}");
    struct sent *s;
    struct answer *a;

    fake_fence1 (f, 1, ENV_VIEW, 5, 1005, true);
    fake_clear (f);
    fake_data (f, 1, &env, rsp);
    ok (fake_count (f, ENV_DATA, UINT32_MAX) == 0
        && f->ov->route.count[RC_no_route_drops] == 0
        && f->ov->route.held.count == 1,
        "a response from 9 for 5, fenced here, is held, not dropped");
    fake_fence1 (f, 1, ENV_VIEW, 5, 1006, false);
    s = fake_last (f, ENV_DATA, UINT32_MAX);
    ok (s && s->env.dest == 5 && s->env.source == 9 && s->env.hops == 2
        && s->msg && msg_get_type (s->msg) == MSGTYPE_RESPONSE
        && f->ov->route.held.count == 0,
        "when 5's rejoin arrives it goes on toward 5 (via %u), its source "
        "and hops kept", s ? s->to : 0);

    /* 5 down again, for good this time */
    fake_fence1 (f, 1, ENV_VIEW, 5, 1006, true);
    fake_clear (f);
    fake_data (f, 1, &env, req);
    a = fake_last_answer (f);
    ok (a && a->errnum == EHOSTUNREACH && f->ov->route.held.count == 0
        && fake_count (f, ENV_DATA, UINT32_MAX) == 0,
        "a request from 9 for 5, fenced again, is not held: answered "
        "EHOSTUNREACH at once");
    fake_data (f, 1, &env, rsp);
    fake_advance_alive (f, f->cfg.peer_timeout + 1.0);
    ok (f->ov->route.count[RC_held_expired] == 1 && f->ov->route.held.count == 0
        && fake_logged (f, "held for the rejoin of rank 5")
        && fake_count (f, ENV_DATA, UINT32_MAX) == 0,
        "a response for it is held, then dropped, counted and logged when "
        "5 stays down a peer timeout");
    msg_destroy (&req);
    msg_destroy (&rsp);
    fake_destroy (&f);
}

/* A request whose origin waited for its rank's rejoin (ENV_FLAG_WAITED)
 * reaches a relay that has not heard of the rejoin yet: held for the
 * news, overlay.rejoin_wait at most, then answered "did not run". */
static void check_held_waited (void)
{
    struct fake *f = rank0 ();
    struct envelope env = { .kind = ENV_DATA, .ttl = 6, .hops = 1,
                            .flags = ENV_FLAG_WAITED, .source = 9,
                            .dest = 5 };
    msg_t *req = request (5, 31);
    struct answer *a;
    struct sent *s;

    f->ov->cfg.rejoin_wait = 0.5;
    fake_fence1 (f, 1, ENV_VIEW, 5, 1005, true);
    fake_clear (f);
    fake_data (f, 1, &env, req);
    ok (fake_count (f, ENV_DATA, UINT32_MAX) == 0 && f->nanswers == 0
        && f->ov->route.held.count == 1,
        "a waited request from 9 for 5, fenced here, is held");
    fake_fence1 (f, 1, ENV_VIEW, 5, 1006, false);
    s = fake_last (f, ENV_DATA, UINT32_MAX);
    ok (s && s->env.dest == 5 && s->msg
        && msg_get_type (s->msg) == MSGTYPE_REQUEST
        && (s->env.flags & ENV_FLAG_WAITED) && f->ov->route.held.count == 0,
        "5's rejoin arrives: it goes on toward 5, still flagged");

    fake_fence1 (f, 1, ENV_VIEW, 5, 1006, true);
    fake_clear (f);
    fake_data (f, 1, &env, req);
    fake_advance_alive (f, 0.3);
    ok (f->nanswers == 0 && f->ov->route.held.count == 1,
        "held again while 5 is down");
    fake_advance_alive (f, 1.0);   /* looked at every half keepalive */
    a = fake_last_answer (f);
    ok (a && a->errnum == EHOSTUNREACH && a->text
        && strstr (a->text, "no rejoin within 0.5s; the request did not run")
        && f->ov->route.held.count == 0
        && fake_count (f, ENV_DATA, UINT32_MAX) == 0,
        "5 does not rejoin within rejoin_wait: answered, did not run");
    msg_destroy (&req);
    fake_destroy (&f);
}

/* No route at all for a message passing through: counted, a request
 * answered, a response logged. */
static void check_no_route (void)
{
    struct fake *f = rank0 ();
    uint32_t nb[64];
    int n = bgn_topo_neighbours (f->ov->topo, 5, nb, 64);
    struct envelope env = { .kind = ENV_DATA, .ttl = 6, .hops = 1,
                            .source = 9, .dest = 5 };
    msg_t *req = request (5, 22);
    msg_t *rsp = msg_response_create (req, "{}");
    struct answer *a;

    struct fence_record recs[64];
    int nrec = 0;
    uint32_t from = fake_peer_not_near (f, 5);

    /* 5 lives, but every neighbour of 5 is fenced: it cannot be reached
     * (the records come from, and the request through, peers of 0 that
     * are no neighbours of 5) */
    for (int i = 0; i < n; i++)
        recs[nrec++] = (struct fence_record){ .rank = nb[i],
                                              .inc = 2000 + nb[i],
                                              .fenced = true,
                                              .reason = "test" };
    fake_fence (f, from, ENV_VIEW, 0, recs, nrec);
    fake_clear (f);
    fake_data (f, from, &env, req);
    a = fake_last_answer (f);
    ok (a && a->errnum == EHOSTUNREACH
        && f->ov->route.count[RC_no_route_drops] == 1,
        "a request for 5, cut off, is answered at once and counted");
    fake_data (f, from, &env, rsp);
    ok (f->ov->route.count[RC_no_route_drops] == 2 && f->nanswers == 1
        && fake_logged (f, "dropped a message from rank 9 to rank 5: no "
                        "route"),
        "a response for 5 is dropped, counted and logged");
    msg_destroy (&rsp);
    msg_destroy (&req);
    fake_destroy (&f);
}

/* A message whose next hop here is the peer it came from (their views
 * differ: a fence still on its way) waits a backlog retry instead of
 * bouncing straight back. */
static void check_bounce (void)
{
    struct fake *f = rank0 ();
    struct envelope env = { .kind = ENV_DATA, .ttl = 6, .hops = 2,
                            .source = 9, .dest = 1 };
    msg_t *req = request (1, 31);
    struct sent *s;

    fake_data (f, 1, &env, req);
    ok (fake_count (f, ENV_DATA, UINT32_MAX) == 0
        && fake_peer (f, 1)->backlog.count == 1
        && f->ov->route.count[RC_ttl_drops] == 0,
        "a message from 1 whose next hop here is 1 is not sent straight back");
    fake_advance (f, 0.01);
    s = fake_last (f, ENV_DATA, 1);
    ok (s && s->env.dest == 1 && s->env.source == 9 && s->env.ttl == 5
        && fake_peer (f, 1)->backlog.count == 0,
        "it goes back to 1 at the next backlog retry, a hop less to go");
    fake_clear (f);
    env.dest = 3;
    fake_data (f, 1, &env, req);
    s = fake_last (f, ENV_DATA, UINT32_MAX);
    ok (s && s->to != 1 && s->env.dest == 3,
        "a message from 1 with another way onward goes on at once (via %u)",
        s ? s->to : 0);
    msg_destroy (&req);
    fake_destroy (&f);
}

/* While links form, every shortest hop may still be connecting: a
 * message takes one detour through a live neighbour (no closer), and no
 * second one, so detours cannot chain into a loop (t1200 once saw a
 * request from 5 to 0 at N=8 spend its 8 hops at start-up). */
static void check_detour_once (void)
{
    struct fake *f = fake_create (0, 16, "bgn");
    uint32_t live[] = { 8, 12, 14 };    /* no shortest hop toward 3 */
    struct envelope env = { .kind = ENV_DATA, .ttl = 6, .hops = 2,
                            .source = 9, .dest = 3 };
    msg_t *req = request (3, 41);
    struct peer *p;
    struct sent *s = NULL;

    fake_start (f);
    for (int i = 0; i < 3; i++) {
        p = fake_peer (f, live[i]);
        fake_hello (f, live[i], p->connector ? ENV_HELLO_ACK : ENV_HELLO,
                    1000 + live[i]);
    }
    fake_advance (f, 0.05);
    fake_clear (f);
    ok (fake_peer (f, 2)->state == PEER_CONNECTING
        && fake_peer (f, 8)->state == PEER_UP,
        "links 1, 2, 4 and 15 (the shortest hops to 3) are connecting");
    int rc = send_to (f, 3, 40);
    s = fake_last (f, ENV_DATA, UINT32_MAX);
    ok (rc == 0 && s && (s->to == 8 || s->to == 12 || s->to == 14)
        && (s->env.flags & ENV_FLAG_DETOUR),
        "a request to 3 takes one detour (via %u), marked as one",
        s ? s->to : 0);
    fake_clear (f);
    env.flags = ENV_FLAG_DETOUR | ENV_FLAG_LIVE;
    fake_data (f, 8, &env, req);
    int queued = 0;
    for (int i = 0; i < f->ov->peers->n; i++)
        queued += f->ov->peers->v[i]->backlog.count;
    ok (fake_count (f, ENV_DATA, UINT32_MAX) == 0 && queued == 1
        && f->ov->route.count[RC_ttl_drops] == 0,
        "one that took a detour already waits for a link to 3 instead");
    p = fake_peer (f, 2);
    fake_hello (f, 2, p->connector ? ENV_HELLO_ACK : ENV_HELLO, 1002);
    p = fake_peer (f, 1);
    fake_hello (f, 1, p->connector ? ENV_HELLO_ACK : ENV_HELLO, 1001);
    p = fake_peer (f, 4);
    fake_hello (f, 4, p->connector ? ENV_HELLO_ACK : ENV_HELLO, 1004);
    p = fake_peer (f, 15);
    fake_hello (f, 15, p->connector ? ENV_HELLO_ACK : ENV_HELLO, 1015);
    fake_advance (f, 0.02);
    s = fake_last (f, ENV_DATA, UINT32_MAX);
    ok (s && s->env.dest == 3 && s->env.source == 9
        && bgn_topo_distance (f->ov->topo, s->to, 3) == 1,
        "and goes on once the link it waited on is up (via %u)",
        s ? s->to : 0);
    msg_destroy (&req);
    fake_destroy (&f);
}

/* A request waiting in a backlog for a rank that is then fenced is
 * dropped here: its origin reports it failed on the same news, and sent
 * on after a heal it would run after that. */
static void check_purge (void)
{
    struct fake *f = fake_create (0, 16, "bgn");
    uint32_t live[] = { 8, 12, 14 };
    struct envelope env = { .kind = ENV_DATA, .ttl = 6, .hops = 2,
                            .source = 9, .dest = 3,
                            .flags = ENV_FLAG_DETOUR | ENV_FLAG_LIVE };
    msg_t *req = request (3, 61);
    int queued = 0;

    fake_start (f);
    for (int i = 0; i < 3; i++) {
        struct peer *p = fake_peer (f, live[i]);
        fake_hello (f, live[i], p->connector ? ENV_HELLO_ACK : ENV_HELLO,
                    1000 + live[i]);
    }
    fake_advance (f, 0.05);
    fake_clear (f);
    fake_data (f, 8, &env, req);
    for (int i = 0; i < f->ov->peers->n; i++)
        queued += f->ov->peers->v[i]->backlog.count;
    uint64_t drops = f->ov->route.count[RC_no_route_drops];
    fake_fence1 (f, 8, ENV_BATCH, 3, 1003, true);
    queued = 0;
    for (int i = 0; i < f->ov->peers->n; i++)
        queued += f->ov->peers->v[i]->backlog.count;
    ok (fence_is_fenced (f->ov, 3) && queued == 0
        && f->ov->route.count[RC_no_route_drops] == drops + 1
        && fake_count (f, ENV_DATA, UINT32_MAX) == 0,
        "3 fenced: the request for it that waited here is dropped, "
        "counted, not answered from here");
    msg_destroy (&req);
    fake_destroy (&f);
}

/* An owner request sealed at its origin (rank 1) and checked at its
 * destination (rank 0): what the broker is told (source_signed). */
static void check_signed_origin (void)
{
    struct fake *a = fake_create (1, 16, "bgn"), *b = fake_create (0, 16,
                                                                  "bgn");
    struct bgn_msg_info info = { .sign = 1 };
    struct sent *s = NULL;
    msg_t *m;
    uint8_t *raw;
    size_t len;

    a->keys = b->keys = true;
    fake_start (a);
    fake_all_up (a);
    fake_start (b);
    fake_all_up (b);
    m = msg_request_create ("broker.shutdown", 0, "{}");
    msg_set_rolemask (m, MSG_ROLE_OWNER);
    msg_route_enable (m);
    msg_route_push (m, "1");
    ok (overlay_send (a->ov, &m, 0, &info) == 0
        && (s = fake_last (a, ENV_DATA, 0)) && (s->env.flags & ENV_FLAG_SIGNED)
        && s->rawlen > ENV_SIZE + ENV_SIG_BLOCK
        && a->ov->sign.signed_out == 1,
        "rank 1 seals its owner request: flag 0x10 and an 80-byte block");
    if (!s || !(raw = malloc (s->rawlen)))
        { ok (0, "no sealed request"); return; }
    len = s->rawlen;
    memcpy (raw, s->raw, len);
    fake_inject_wire (b, 1, raw, len);
    ok (b->ndelivered == 1 && b->delivered_info[0].source_signed == 1
        && b->delivered_info[0].source == 1
        && !strcmp (msg_get_topic (b->delivered[0]), "broker.shutdown"),
        "rank 0 takes it as rank 1's own word (source_signed 1)");
    raw[len - ENV_SIG_BLOCK - 3] ^= 1;   /* the payload, changed */
    fake_inject_wire (b, 1, raw, len);
    ok (b->ndelivered == 2 && b->delivered_info[1].source_signed == -1
        && b->ov->sign.bad == 1,
        "changed on the way: the signature fails (-1, counted)");
    raw[len - ENV_SIG_BLOCK - 3] ^= 1;
    b->ov->wall_offset += 200;   /* its wall clock, 200 s on */
    fake_inject_wire (b, 1, raw, len);
    ok (b->delivered_info[b->ndelivered - 1].source_signed == -1
        && b->ov->sign.stale == 1,
        "taken 200 s later: stale (-1, counted)");
    free (raw);
    m = msg_request_create ("broker.shutdown", 0, "{}");
    msg_set_rolemask (m, MSG_ROLE_OWNER);
    msg_route_enable (m);
    msg_route_push (m, "1");
    info.sign = 0;
    overlay_send (a->ov, &m, 0, &info);
    s = fake_last (a, ENV_DATA, 0);
    fake_inject_wire (b, 1, s->raw, s->rawlen);
    ok (b->delivered_info[b->ndelivered - 1].source_signed == -1,
        "unsigned from a rank that has a key: -1");
    fake_destroy (&a);
    fake_destroy (&b);

    /* no keys anywhere (a static bootstrap without them): 0 */
    a = fake_create (1, 16, "bgn");
    b = fake_create (0, 16, "bgn");
    fake_start (a);
    fake_all_up (a);
    fake_start (b);
    fake_all_up (b);
    m = msg_request_create ("broker.shutdown", 0, "{}");
    msg_set_rolemask (m, MSG_ROLE_OWNER);
    msg_route_enable (m);
    msg_route_push (m, "1");
    info.sign = 1;
    overlay_send (a->ov, &m, 0, &info);
    s = fake_last (a, ENV_DATA, 0);
    ok (s && !(s->env.flags & ENV_FLAG_SIGNED),
        "without a key nothing is sealed");
    fake_inject_wire (b, 1, s->raw, s->rawlen);
    ok (b->ndelivered == 1 && b->delivered_info[0].source_signed == 0,
        "and the receiver says no key is known (0): the older rules apply");
    fake_destroy (&a);
    fake_destroy (&b);
}

int main (void)
{
    plan (NO_PLAN);
    check_ttl ();
    check_suspect ();
    check_backlog ();
    check_backlog_bytes ();
    check_unreachable ();
    check_detour ();
    check_detour_once ();
    check_purge ();
    check_held ();
    check_held_forward ();
    check_held_bound ();
    check_held_waited ();
    check_no_route ();
    check_bounce ();
    check_signed_origin ();
    done_testing ();
}
