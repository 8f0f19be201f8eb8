/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test/evglue.c: the event layer carried over the overlay (evglue.c),
 * through a fake io.
 *
 * events.c has its own tests with ops of its own; these check evglue.c's
 * ops: batches leave as ENV_EVENT and control objects as ENV_EVCTL with
 * their "k", routed like any message; "down" is fenced; a full transport
 * queue toward a tree child holds rank 0 back; events reach subscribers
 * one message each (the fake io has no deliver_events); a loss is one
 * event.lost notice; repairs ask the tree parent first, then other live
 * peers; a publisher is answered once its batch has left; what arrives
 * for another rank goes on, and what is malformed is counted.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "src/common/libtap/tap.h"
#include "src/modules/overlay/fence.h"
#include "fakeio.h"

#define SIZE 16
#define MAXK 32

static struct fake *up (uint32_t rank)
{
    struct fake *f = fake_create (rank, SIZE, "bgn");

    if (!f || fake_start (f) < 0)
        bail_out ("fake_start");
    fake_all_up (f);
    fake_clear (f);
    return f;
}

static int kids_of (struct fake *f, uint32_t rank, uint32_t *kids)
{
    return bgn_topo_bcast_children (f->ov->topo, 0, rank, kids, MAXK);
}

/* The ENV_EVENT sent with destination 'dest' (the last one), or NULL. */
static struct sent *event_to (struct fake *f, int kind, uint32_t dest)
{
    for (int i = f->nsent - 1; i >= 0; i--)
        if (f->sent[i].env.kind == kind && f->sent[i].env.dest == dest)
            return &f->sent[i];
    return NULL;
}

static int events_to (struct fake *f, uint32_t dest)
{
    int n = 0;

    for (int i = 0; i < f->nsent; i++)
        if (f->sent[i].env.kind == ENV_EVENT && f->sent[i].env.dest == dest)
            n++;
    return n;
}

/* Did every rank of kids[0..n-1] get an ENV_EVENT holding first..last? */
static bool batch_to_all (struct fake *f, const uint32_t *kids, int n,
                          uint32_t first, uint32_t last)
{
    for (int i = 0; i < n; i++) {
        struct sent *s = event_to (f, ENV_EVENT, kids[i]);
        struct evbatch_hdr h;
        if (!s || s->n != 1 || s->env.flags != 0 || s->env.source != 0
            || evbatch_header (s->body[0], s->len[0], &h) < 0
            || h.first != first || h.last != last)
            return false;
    }
    return n > 0;
}

static bool publish (struct fake *f, const char *topic, int count,
                     const msg_t *req)
{
    msg_t *ev[8];

    for (int i = 0; i < count; i++)
        ev[i] = msg_event_create (topic, "{}");
    return overlay_publish_req (f->ov, ev, count, req) == 0;
}

static void check_root (void)
{
    struct fake *f = fake_create (0, SIZE, "bgn");
    uint32_t kids[MAXK];
    int n;
    msg_t *req = msg_request_create ("event.publish", 0, "{}");
    msg_t *ev[1];
    struct answer *a;

    if (!f || fake_start (f) < 0)
        bail_out ("fake_start");
    n = kids_of (f, 0, kids);
    ev[0] = msg_event_create ("a.early", NULL);
    errno = 0;
    ok (overlay_publish_req (f->ov, ev, 1, req) < 0 && errno == EAGAIN
        && ev[0] == NULL && f->nanswers == 0,
        "rank 0 that has not heard its tree children yet: EAGAIN, the "
        "event taken, nobody answered");

    fake_all_up (f);
    fake_clear (f);
    ok (publish (f, "a.b", 2, req), "with its children heard, it publishes");
    fake_advance (f, 0.1);
    ok (batch_to_all (f, kids, n, 1, 2),
        "the events leave as one ENV_EVENT batch (seq 1..2) to each tree "
        "child");
    a = fake_last_answer (f);
    ok (a && a->errnum == 0 && a->text && strstr (a->text, "\"seq\":1")
        && strstr (a->text, "\"count\":2"),
        "the publisher is answered with its first seq and count once it "
        "left");

    fake_clear (f);
    fake_advance_alive (f, 2.0);
    struct sent *sync = event_to (f, ENV_EVCTL, kids[0]);
    ok (sync && sync->n == 1 && strstr (sync->body[0], "\"k\":1")
        && strstr (sync->body[0], "\"seq\":2"),
        "its SYNC goes down as ENV_EVCTL, the kind in \"k\"");

    /* a full transport queue toward a child holds the next batch back */
    f->send_errno[kids[0]] = EAGAIN;
    fake_clear (f);
    ok (publish (f, "a.c", 1, NULL), "seq 3 published");
    fake_advance (f, 0.1);
    ok (events_to (f, kids[0]) == 0 && events_to (f, kids[1]) == 1,
        "the send to the first child was refused (EAGAIN), the others "
        "went");
    ok (publish (f, "a.d", 1, NULL), "seq 4 published");
    fake_advance (f, 0.1);
    ok (events_to (f, kids[1]) == 1,
        "while that child's queue is full, seq 4 waits for everyone");
    f->send_errno[kids[0]] = 0;
    fake_advance_alive (f, 1.0);
    ok (events_to (f, kids[0]) == 2 && events_to (f, kids[1]) == 2,
        "once it drains, both batches reach every child");

    /* a fenced child is skipped: its own children get the batch */
    uint32_t k = UINT32_MAX, gk[MAXK];
    int ng = 0;
    for (int i = 0; i < n && k == UINT32_MAX; i++)
        if ((ng = kids_of (f, kids[i], gk)) > 0)
            k = kids[i];
    fake_control (f, k, ENV_GOODBYE, NULL);
    fake_clear (f);
    ok (ng > 0 && fence_is_fenced (f->ov, k) && publish (f, "a.e", 1, NULL),
        "child %u left, fenced here; another event published", (unsigned)k);
    fake_advance (f, 0.1);
    struct sent *ref = event_to (f, ENV_EVENT, k == kids[0] ? kids[1]
                                                            : kids[0]);
    bool same = ref != NULL;
    for (int i = 0; i < ng && same; i++) {
        struct sent *s = event_to (f, ENV_EVENT, gk[i]);
        same = s && s->env.source == 0 && s->len[0] == ref->len[0]
               && !memcmp (s->body[0], ref->body[0], ref->len[0]);
    }
    ok (events_to (f, k) == 0 && same,
        "the batches skip it: its %d tree children get what the other "
        "children get", ng);
    msg_destroy (&req);
    fake_destroy (&f);
}

/* A batch of rank 0's (seq first .. first + count - 1, topics "ev.SEQ")
 * for f's rank, sent by neighbour 'via' (a batch's source is the broker
 * that sent it down the tree). */
static void inject_batch (struct fake *f, uint32_t via, uint32_t first,
                          int count, int flags)
{
    struct evbatch_writer w;
    struct envelope env = { .kind = ENV_EVENT, .flags = flags, .ttl = 9,
                            .source = via, .dest = f->rank };
    char topic[32];

    evbatch_writer_init (&w, 100);
    for (int i = 0; i < count; i++) {
        msg_t *m;
        snprintf (topic, sizeof (topic), "ev.%u", (unsigned)(first + i));
        m = msg_event_create (topic, NULL);
        if (!m || evbatch_add (&w, m, first + i) < 0)
            bail_out ("evbatch_add");
        msg_destroy (&m);
    }
    if (evbatch_seal (&w) < 0)
        bail_out ("evbatch_seal");
    const char *data = (const char *)w.buf;
    size_t len = w.len;
    fake_inject (f, via, &env, &data, &len, 1, NULL);
    evbatch_writer_free (&w);
}

static bool delivered (struct fake *f, int i, const char *topic)
{
    return i < f->ndelivered
           && !strcmp (msg_get_topic (f->delivered[i]), topic)
           && msg_get_type (f->delivered[i]) == MSGTYPE_EVENT
           && f->delivered_info[i].from_overlay;
}

/* The last repair request (ENV_EVCTL, k 2) sent, or NULL. */
static struct sent *last_repair (struct fake *f)
{
    for (int i = f->nsent - 1; i >= 0; i--) {
        struct sent *s = &f->sent[i];
        if (s->env.kind == ENV_EVCTL && s->n == 1
            && strstr (s->body[0], "\"k\":2"))
            return s;
    }
    return NULL;
}

static void check_member (void)
{
    struct fake *f;
    uint32_t kids[MAXK];
    int n;
    struct sent *r;

    /* rank 8: a tree child of rank 0, with children of its own */
    f = up (8);
    n = kids_of (f, 8, kids);
    ok (bgn_topo_bcast_parent (f->ov->topo, 0, 8) == 0 && n > 0,
        "rank 8's tree parent is 0; it has %d tree children", n);
    inject_batch (f, 0, 1, 2, 0);
    ok (f->ndelivered == 2 && delivered (f, 0, "ev.1")
        && delivered (f, 1, "ev.2"),
        "a batch from the parent: each event delivered, in order, as a "
        "message from the overlay");
    bool all = n > 0;
    for (int i = 0; i < n; i++) {
        struct sent *fw = event_to (f, ENV_EVENT, kids[i]);
        struct evbatch_hdr h;
        all = all && fw && fw->env.source == 8 && fw->n == 1
              && evbatch_header (fw->body[0], fw->len[0], &h) == 0
              && h.first == 1 && h.last == 2;
    }
    ok (all, "and passed on to each of its tree children as ENV_EVENT");
    inject_batch (f, 0, 1, 2, 0);
    ok (f->ndelivered == 2, "the same batch again: delivered once only");
    inject_batch (f, 0, 2, 3, 0);
    ok (f->ndelivered == 4 && delivered (f, 2, "ev.3")
        && delivered (f, 3, "ev.4"),
        "a batch of 2..4: only 3 and 4 are delivered, 2 was already");
    fake_clear (f);
    fake_control (f, 9, ENV_EVCTL, "{\"k\":2,\"id\":7,\"from\":1,\"to\":2}");
    struct sent *rep = event_to (f, ENV_EVENT, 9);
    struct sent *end = event_to (f, ENV_EVCTL, 9);
    ok (rep && rep->to == 9 && rep->env.flags == 1 && end
        && strstr (end->body[0], "\"k\":3") && strstr (end->body[0],
                                                         "\"id\":7"),
        "a repair request from child 9: answered to 9 with a repair batch "
        "(flag 1), then the end of the answer");

    fake_destroy (&f);

    /* rank 9: its tree parent is 8, not rank 0 */
    f = up (9);
    ok (bgn_topo_bcast_parent (f->ov->topo, 0, 9) == 8,
        "rank 9's tree parent is 8");
    inject_batch (f, 8, 1, 2, 0);
    ok (f->ndelivered == 2 && delivered (f, 1, "ev.2"),
        "a batch of rank 0's passed on by 8 is delivered");
    fake_clear (f);
    inject_batch (f, 8, 4, 1, 0);
    r = last_repair (f);
    ok (f->ndelivered == 0 && r && r->env.dest == 8 && r->to == 8
        && strstr (r->body[0], "\"from\":3") && strstr (r->body[0], "\"to\":3"),
        "seq 4 past a gap waits; seq 3 is asked of the tree parent (8) "
        "first");
    fake_advance_alive (f, 1.0);
    r = last_repair (f);
    ok (r && r->env.dest == r->to && r->to != 8
        && peer_is_up (fake_peer (f, r->to)),
        "no answer in time: another live peer (%u) is asked next",
        r ? (unsigned)r->to : 0);
    uint32_t helper = r ? r->to : 10;
    inject_batch (f, helper, 3, 1, 0);
    ok (f->ndelivered == 0, "a tree batch from that peer, no tree ancestor: "
        "refused");
    inject_batch (f, helper, 3, 1, 1);
    ok (f->ndelivered == 2 && delivered (f, 0, "ev.3")
        && delivered (f, 1, "ev.4"),
        "its repair batch (flag 1) is taken: 3, then the waiting 4");
    fake_destroy (&f);

    /* rank 0 says events 1..3 are gone from its buffer */
    f = up (8);
    n = kids_of (f, 8, kids);
    fake_control (f, 0, ENV_EVCTL,
                  "{\"k\":1,\"seq\":5,\"epoch\":100,\"gone\":3,\"base\":0}");
    ok (f->ndelivered == 1 && !strcmp (msg_get_topic (f->delivered[0]),
                                       "event.lost")
        && strstr (msg_get_payload (f->delivered[0], NULL), "\"from\":1")
        && strstr (msg_get_payload (f->delivered[0], NULL), "\"to\":3")
        && fake_logged (f, "events 1..3 are lost"),
        "a SYNC saying 1..3 are gone: one event.lost notice, logged");
    struct sent *sync = event_to (f, ENV_EVCTL, kids[0]);
    r = last_repair (f);
    ok (sync && strstr (sync->body[0], "\"k\":1")
        && strstr (sync->body[0], "\"seq\":5"),
        "the SYNC goes on down the tree");
    ok (r && r->env.dest == 0 && strstr (r->body[0], "\"from\":4")
        && strstr (r->body[0], "\"to\":5"),
        "and 4..5 are asked of the parent");
    inject_batch (f, 0, 4, 2, 1);
    ok (f->ndelivered == 3 && delivered (f, 1, "ev.4")
        && delivered (f, 2, "ev.5"), "its repair answer is delivered");
    fake_destroy (&f);
}

static void check_edges (void)
{
    struct fake *f = up (8);
    struct envelope on = { .kind = ENV_EVCTL, .ttl = 9, .source = 0,
                           .dest = 9 };
    const char *body = "{\"k\":4}";
    size_t len = strlen (body);
    uint64_t n;

    fake_control (f, 0, ENV_EVENT, "not a batch");
    ok (f->ov->route.count[RC_malformed_drops] == 1 && f->ndelivered == 0
        && fake_logged (f, "malformed event batch"),
        "an ENV_EVENT that is not a batch: malformed, logged");
    fake_clear (f);
    fake_inject (f, 0, &on, &body, &len, 1, NULL);
    struct sent *s = event_to (f, ENV_EVCTL, 9);
    ok (s && s->to == 9 && s->env.source == 0 && s->env.hops == 1
        && s->n == 1 && !strcmp (s->body[0], body) && f->ndelivered == 0,
        "event control for rank 9 passing through is routed on as it is, "
        "a hop more");
    fake_clear (f);
    struct envelope past = { .kind = ENV_EVENT, .ttl = 9, .source = 0,
                             .dest = SIZE };
    n = f->ov->route.count[RC_malformed_drops];
    fake_inject (f, 0, &past, &body, &len, 1, NULL);
    ok (f->nsent == 0 && f->ndelivered == 0,
        "an event for a rank past the instance goes nowhere");

    fake_control (f, 0, ENV_EVCTL, "not json");
    fake_control (f, 0, ENV_EVCTL, "{\"seq\":1}");
    ok (f->ov->route.count[RC_malformed_drops] == n + 2,
        "event control that is not JSON with a \"k\": malformed");
    fake_destroy (&f);
}

int main (void)
{
    plan (NO_PLAN);
    check_root ();
    check_member ();
    check_edges ();
    done_testing ();
}
