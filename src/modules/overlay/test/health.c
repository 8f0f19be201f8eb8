/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test/health.c: readiness and health (health.c) via a fake io. */
#include <errno.h>
#include <string.h>

#include "src/common/libtap/tap.h"
#include "fakeio.h"

static int ready_requests (struct fake *f)
{
    int n = 0;
    for (int i = 0; i < f->nrequests; i++)
        if (!strcmp (msg_get_topic (f->requests[i]), "overlay.ready"))
            n++;
    return n;
}

/* Rank 0 is told by rank 'from' (the rank on its route stack): "rank r
 * is ready, as incarnation inc". */
static void ready_said_inc (struct fake *f, uint32_t from, uint32_t r,
                            uint64_t inc)
{
    char payload[64], origin[16];
    snprintf (payload, sizeof (payload), "{\"rank\":%u,\"incarnation\":%llu}",
              (unsigned)r, (unsigned long long)inc);
    snprintf (origin, sizeof (origin), "%u", (unsigned)from);
    msg_t *req = msg_request_create ("overlay.ready", 0, payload);
    msg_set_rolemask (req, MSG_ROLE_OWNER);
    msg_route_enable (req);
    msg_route_push (req, origin);
    overlay_service (f->ov, req, NULL);
    msg_destroy (&req);
}

static void ready_said (struct fake *f, uint32_t from, uint32_t r)
{
    ready_said_inc (f, from, r, 1);
}

/* Rank r reports itself ready. */
static void ready_from (struct fake *f, uint32_t r)
{
    ready_said (f, r, r);
}

static void check_member (void)
{
    struct fake *f = fake_create (5, 8, "bgn");

    fake_start (f);
    ok (!strcmp (overlay_health (f->ov), "partial") && ready_requests (f) == 0,
        "rank 5 starts partial and does not report ready");
    for (int i = 0; i < f->ov->peers->n - 1; i++) {
        struct peer *p = f->ov->peers->v[i];
        fake_hello (f, p->rank, p->connector ? ENV_HELLO_ACK : ENV_HELLO,
                    1000 + p->rank);
    }
    ok (ready_requests (f) == 0, "not with one peer still missing");
    fake_hello (f, 7, ENV_HELLO_ACK, 1007);
    ok (ready_requests (f) == 1 && !strcmp (overlay_health (f->ov), "full"),
        "with every peer up it reports ready to rank 0 and is full");
    ok (strstr (msg_get_payload (f->requests[0], NULL), "\"rank\":5") != NULL,
        "the report names rank 5");
    fake_advance (f, 1.6);
    ok (ready_requests (f) == 2, "unanswered, it is sent again a second later");
    msg_t *rsp = msg_response_create (f->requests[1], NULL);
    overlay_service (f->ov, rsp, NULL);
    msg_destroy (&rsp);
    fake_advance (f, 3.0);
    ok (ready_requests (f) == 2, "answered, it stops");
    ready_from (f, 3);
    struct answer *a = fake_last_answer (f);
    ok (a && a->errnum == EINVAL, "a ready report to a rank but 0 is EINVAL");

    fake_fence1 (f, 4, ENV_BATCH, 2, 1, true);
    ok (!strcmp (overlay_health (f->ov), "degraded"),
        "with a rank fenced, health is degraded");
    fake_destroy (&f);
}

static void check_root (void)
{
    struct fake *f = fake_create (0, 4, "bgn");

    fake_start (f);
    fake_all_up (f);
    fake_advance (f, 0.02);
    ok (fake_count (f, ENV_BATCH, UINT32_MAX) == 2
        && fake_has_record (fake_last (f, ENV_BATCH, 1), 0, 100, false)
        && fake_has_record (fake_last (f, ENV_BATCH, 2), 0, 100, false),
        "rank 0 with its links up announces its incarnation down its tree");
    ok (!strcmp (overlay_health (f->ov), "partial"),
        "it is partial until every rank reported");
    ready_said (f, 1, 3);
    ok (fake_last_answer (f)->errnum == EPERM,
        "rank 1 saying rank 3 is ready is EPERM");
    ready_from (f, 1);
    ready_from (f, 2);
    ok (fake_last_answer (f)->errnum == 0, "reports are answered");
    ok (!strcmp (overlay_health (f->ov), "partial"), "still partial at 3 of 4");
    ready_from (f, 3);
    ok (!strcmp (overlay_health (f->ov), "full")
        && fake_logged (f, "all 4 ranks connected"),
        "full when all 4 reported, and logged");
    ready_from (f, 7);
    ok (fake_last_answer (f)->errnum == EINVAL, "a report of rank 7 of 4 is "
        "EINVAL");
    fake_destroy (&f);
}

/* Rank 3 restarts as incarnation 2000 and reports ready; the fence of
 * its old life (1000) reaches rank 0 only after that, by the slower
 * fence tree.  The report stands: once the new life's record is in, the
 * instance is full again (it stayed "partial" for good: the new life
 * reports only once). */
static void check_old_fence_after_ready (void)
{
    struct fake *f = fake_create (0, 4, "bgn");

    fake_start (f);
    fake_all_up (f);
    fake_advance (f, 0.02);
    ready_from (f, 1);
    ready_from (f, 2);
    ready_said_inc (f, 3, 3, 2000);
    ok (!strcmp (overlay_health (f->ov), "full"), "all 4 reported: full");
    fence_apply (f->ov, 3, 1000, true, "silent", FROM_HERE);
    ok (!strcmp (overlay_health (f->ov), "degraded"),
        "rank 3's old life fenced: degraded");
    fence_apply (f->ov, 3, 2000, false, "up", FROM_HERE);
    ok (!strcmp (overlay_health (f->ov), "full"),
        "its new life's record comes: full again, no new report needed");
    fence_apply (f->ov, 3, 2000, true, "silent", FROM_HERE);
    fence_apply (f->ov, 3, 3000, false, "up", FROM_HERE);
    ok (!strcmp (overlay_health (f->ov), "partial"),
        "a fence of the life that reported: forgotten, it must report "
        "again (partial)");
    fake_destroy (&f);
}

/* Under another service name (a Flux broker has its own "overlay"), the
 * core's methods and its own requests use that name, and the default
 * name is not answered. */
static void check_service_name (void)
{
    struct fake *f = fake_create (1, 4, "bgn");
    int named = 0;

    snprintf (f->cfg.service, sizeof (f->cfg.service), "bgn");
    fake_start (f);
    fake_all_up (f);
    for (int i = 0; i < f->nrequests; i++)
        if (!strcmp (msg_get_topic (f->requests[i]), "bgn.ready"))
            named++;
    ok (named == 1 && ready_requests (f) == 0,
        "with service \"bgn\" the ready report is bgn.ready");
    msg_t *req = msg_request_create ("bgn.ping", 1, "{}");
    msg_set_rolemask (req, MSG_ROLE_OWNER);
    overlay_service (f->ov, req, NULL);
    msg_destroy (&req);
    ok (fake_last_answer (f) && fake_last_answer (f)->errnum == 0,
        "bgn.ping is answered");
    req = msg_request_create ("overlay.ping", 1, "{}");
    msg_set_rolemask (req, MSG_ROLE_OWNER);
    overlay_service (f->ov, req, NULL);
    msg_destroy (&req);
    ok (fake_last_answer (f) && fake_last_answer (f)->errnum == ENOSYS,
        "overlay.ping is ENOSYS there");
    fake_destroy (&f);
}

/* A report that crossed the overlay, with what the overlay found of its
 * signature (bgn_msg_info.source_signed) from envelope source 'source'. */
static void ready_signed (struct fake *f, uint32_t source, uint32_t r,
                          int source_signed)
{
    char payload[64], origin[16];
    struct bgn_msg_info info = { .from_overlay = 1, .source = source,
                                 .hops = 2, .source_signed = source_signed };
    snprintf (payload, sizeof (payload), "{\"rank\":%u,\"incarnation\":1}",
              (unsigned)r);
    snprintf (origin, sizeof (origin), "%u", (unsigned)r);
    msg_t *req = msg_request_create ("overlay.ready", 0, payload);
    msg_set_rolemask (req, MSG_ROLE_OWNER);
    msg_route_enable (req);
    msg_route_push (req, origin);
    overlay_service (f->ov, req, &info);
    msg_destroy (&req);
}

/* With signing keys, a readiness report is the rank's own only signed by
 * it: a relay that writes "5" on the route stack of a report of rank 5
 * cannot make the health read full. */
static void check_signed (void)
{
    struct fake *f = fake_create (0, 8, "bgn");
    struct answer *a;

    f->keys = true;
    fake_start (f);
    fake_all_up (f);
    for (uint32_t r = 1; r < 8; r++)
        if (r != 5)
            ready_signed (f, r, r, 1);
    ready_signed (f, 5, 5, -1);
    a = fake_last_answer (f);
    ok (a && a->errnum == EPERM && f->ov->health.refused == 1
        && strcmp (overlay_health (f->ov), "full") != 0,
        "a report of rank 5 not signed by it is EPERM; health is not full");
    ready_signed (f, 2, 5, 1);
    a = fake_last_answer (f);
    ok (a && a->errnum == EPERM && strcmp (overlay_health (f->ov), "full"),
        "signed by rank 2, naming rank 5: EPERM");
    ready_signed (f, 5, 5, 1);
    ok (!strcmp (overlay_health (f->ov), "full"),
        "signed by rank 5: full");
    fake_destroy (&f);
}

/* Rank 5 of 8 with every peer up: it has reported ready once. */
static struct fake *reported (void)
{
    struct fake *f = fake_create (5, 8, "bgn");

    fake_start (f);
    fake_all_up (f);
    return f;
}

/* Rank 0 answers report i, naming incarnation inc (0: naming none, as a
 * rank 0 before this answer named it). */
static void root_answers (struct fake *f, int i, uint64_t inc)
{
    char payload[48];

    snprintf (payload, sizeof (payload), "{\"incarnation\":%llu}",
              (unsigned long long)inc);
    msg_t *rsp = msg_response_create (f->requests[i], inc ? payload : NULL);
    overlay_service (f->ov, rsp, NULL);
    msg_destroy (&rsp);
}

/* News of rank 0 (its live record, from neighbour 4). */
static void root_is (struct fake *f, uint64_t inc)
{
    fake_fence1 (f, 4, ENV_BATCH, 0, inc, false);
    fake_advance (f, 0.05);
}

/* At start-up every broker hears rank 0's first live record about when
 * it reports: the rank 0 that answered needs no second report, a
 * restarted one does. */
static void check_root_news (void)
{
    struct fake *f = reported ();

    ok (ready_requests (f) == 1, "rank 5 reported ready once");
    root_answers (f, 0, 50);
    root_is (f, 50);
    ok (ready_requests (f) == 1,
        "rank 0's record of the incarnation that answered: no second report");
    root_is (f, 60);
    ok (ready_requests (f) == 2, "rank 0 restarted: it reports again");
    fake_destroy (&f);

    f = reported ();
    root_is (f, 50);
    ok (ready_requests (f) == 1,
        "rank 0's record while the report is unanswered: none more yet");
    root_answers (f, 0, 50);
    fake_advance (f, 0.05);
    ok (ready_requests (f) == 1, "answered by that rank 0: done");
    fake_destroy (&f);

    f = reported ();
    root_is (f, 60);
    root_answers (f, 0, 50);
    fake_advance (f, 0.05);
    ok (ready_requests (f) == 2,
        "answered by an older rank 0 than the one we know: reported again");
    fake_destroy (&f);

    f = reported ();
    root_is (f, 50);
    root_answers (f, 0, 60);
    fake_advance (f, 0.05);
    ok (ready_requests (f) == 1,
        "answered by a rank 0 newer than the one we know: it heard us");
    root_is (f, 60);
    ok (ready_requests (f) == 1, "and its record, when it comes, changes nothing");
    fake_destroy (&f);

    f = reported ();
    root_answers (f, 0, 0);
    root_is (f, 50);
    ok (ready_requests (f) == 2,
        "an answer that names no incarnation: rank 0's news means report again");
    fake_destroy (&f);

    f = reported ();
    root_is (f, 50);
    root_answers (f, 0, 0);
    fake_advance (f, 3.0);
    ok (ready_requests (f) == 1,
        "an answer naming no incarnation after rank 0's record: taken, once");
    fake_destroy (&f);
}

int main (void)
{
    plan (NO_PLAN);
    check_member ();
    check_root ();
    check_old_fence_after_ready ();
    check_service_name ();
    check_signed ();
    check_root_news ();
    done_testing ();
}
