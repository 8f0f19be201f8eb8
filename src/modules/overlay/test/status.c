/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test/status.c: the status-all reduction (status.c) via a fake io.
 *
 * Rank 0 asks its broadcast-tree children for their subtrees' summaries
 * and merges what comes back: the answer must count every broker once,
 * list a silent or failing child's whole subtree as missing, union and
 * intersect the down sets, keep only brokers with a problem (capped), and
 * stay small whatever the instance's size.
 */
#include <errno.h>
#include <string.h>

#include "src/common/libtap/tap.h"
#include "src/common/libutil/idset.h"
#include "src/common/libbgn/bgn.h"
#include "fakeio.h"

/* The core's overlay.gather request to rank (NULL if none). */
static msg_t *gather_to (struct fake *f, uint32_t rank)
{
    for (int i = 0; i < f->nrequests; i++) {
        uint32_t nodeid = 0;
        msg_get_nodeid (f->requests[i], &nodeid);
        if (!strcmp (msg_get_topic (f->requests[i]), "overlay.gather")
            && nodeid == rank)
            return f->requests[i];
    }
    return NULL;
}

static int gathers (struct fake *f)
{
    int n = 0;
    for (int i = 0; i < f->nrequests; i++)
        if (!strcmp (msg_get_topic (f->requests[i]), "overlay.gather"))
            n++;
    return n;
}

static void answer (struct fake *f, msg_t *req, const char *payload)
{
    msg_t *rsp = msg_response_create (req, payload);
    overlay_service (f->ov, rsp, NULL);
    msg_destroy (&rsp);
}

static void answer_error (struct fake *f, msg_t *req, int errnum)
{
    msg_t *rsp = msg_error_response_create (req, errnum, NULL);
    overlay_service (f->ov, rsp, NULL);
    msg_destroy (&rsp);
}

static void ask (struct fake *f, const char *topic, const char *payload)
{
    msg_t *req = msg_request_create (topic, f->rank, payload);
    msg_set_rolemask (req, MSG_ROLE_OWNER);
    overlay_service (f->ov, req, NULL);
    msg_destroy (&req);
}

/* Rank 0 hears every rank is ready: its own health is full.  Each
 * report comes from the rank it names (its rank on the route stack). */
static void all_ready (struct fake *f)
{
    char payload[64], rank[16];
    for (uint32_t r = 1; r < f->size; r++) {
        snprintf (payload, sizeof (payload),
                  "{\"rank\":%u,\"incarnation\":1}", (unsigned)r);
        snprintf (rank, sizeof (rank), "%u", (unsigned)r);
        msg_t *req = msg_request_create ("overlay.ready", 0, payload);
        msg_set_rolemask (req, MSG_ROLE_OWNER);
        msg_route_enable (req);
        msg_route_push (req, rank);
        overlay_service (f->ov, req, NULL);
        msg_destroy (&req);
    }
}

/* The last answer as JSON (NULL if none or not JSON). */
static json_t *last_json (struct fake *f)
{
    struct answer *a = fake_last_answer (f);
    return a && a->errnum == 0 && a->text ? json_loads (a->text, 0, NULL)
                                          : NULL;
}

/* rank and its broadcast-tree descendants, as an idset string. */
static char *subtree (struct fake *f, uint32_t rank, idset_t *into)
{
    uint32_t kids[64];
    int n = bgn_topo_bcast_children (f->ov->topo, 0, rank, kids, 64);

    idset_set (into, rank);
    for (int i = 0; i < n; i++)
        subtree (f, kids[i], into);
    return NULL;
}

static const char *sub_summary =
    "{\"brokers\":3,\"size\":16,\"health\":{\"full\":2,\"partial\":1},"
    "\"down_any\":\"7\",\"down_all\":\"\",\"missing\":\"\","
    "\"problems\":[{\"rank\":9,\"hostname\":\"n9\",\"state\":\"partial\","
    "\"peers\":6,\"peers_up\":5,\"not_up\":[{\"rank\":11,\"hostname\":\"n11\","
    "\"state\":\"connecting\",\"seconds\":2.0}]}],\"problems_omitted\":0,"
    "\"counters\":{\"tx_msgs\":10,\"ttl_drops\":2}}";

static void check_merge (void)
{
    struct fake *f = fake_create (0, 16, "bgn");
    uint32_t kids[64];
    int n;
    json_t *o;
    idset_t *want = idset_create (0);
    char *s;
    json_int_t own_tx;

    fake_start (f);
    fake_all_up (f);
    all_ready (f);
    n = bgn_topo_bcast_children (f->ov->topo, 0, 0, kids, 64);
    ok (n >= 4, "rank 0 of 16 has %d tree children", n);
    fake_clear (f);
    /* the summary is taken when the request arrives */
    own_tx = 0;
    for (int i = 0; i < f->ov->peers->n; i++)
        own_tx += (json_int_t)f->ov->peers->v[i]->route.tx_msgs;
    ask (f, "overlay.status-all", "{\"timeout\":1.0}");
    ok (gathers (f) == n && fake_last_answer (f) == NULL,
        "status-all asks each tree child once and waits");

    /* kid 0 answers, kid 1 fails, kid 2 answers garbage, the rest say
     * nothing until the deadline */
    answer (f, gather_to (f, kids[0]), sub_summary);
    answer_error (f, gather_to (f, kids[1]), EHOSTUNREACH);
    answer (f, gather_to (f, kids[2]), "{\"brokers\":\"many\"}");
    ok (fake_last_answer (f) == NULL, "no answer while a child is pending");
    fake_advance (f, 1.1);
    o = last_json (f);
    ok (o != NULL, "at the deadline rank 0 answers with what it has");
    ok (json_integer_value (json_object_get (o, "brokers")) == 4,
        "brokers counts rank 0 and the answering subtree (4)");
    for (int i = 1; i < n; i++)
        subtree (f, kids[i], want);
    s = idset_encode (want, 0);
    ok (s && !strcmp (json_string_value (json_object_get (o, "missing"))
                      ?: "?", s),
        "missing is the failed, garbled and silent subtrees: %s",
        json_string_value (json_object_get (o, "missing")));
    free (s);
    ok (!strcmp (json_string_value (json_object_get (o, "down_any")) ?: "?",
                 "7")
        && !strcmp (json_string_value (json_object_get (o, "down_all"))
                    ?: "?", ""),
        "down_any is the union (7), down_all the intersection (none)");
    ok (json_integer_value (json_object_get (json_object_get (o, "health"),
                                             "full")) == 3
        && json_integer_value (json_object_get (json_object_get (o, "health"),
                                                "partial")) == 1,
        "health tallies add up: full 3, partial 1");
    ok (json_array_size (json_object_get (o, "problems")) == 1
        && json_integer_value (json_object_get (json_array_get
               (json_object_get (o, "problems"), 0), "rank")) == 9,
        "the subtree's problem (rank 9) is passed up, healthy brokers are "
        "not listed");
    ok (json_integer_value (json_object_get (json_object_get (o, "counters"),
                                             "tx_msgs")) == own_tx + 10
        && json_integer_value (json_object_get (json_object_get (o,
                                                "counters"), "ttl_drops"))
               == 2,
        "counters are summed");
    json_decref (o);

    /* a late answer after the deadline is dropped, not a second reply */
    int before = f->nanswers;
    answer (f, gather_to (f, kids[3]), sub_summary);
    ok (f->nanswers == before, "a late answer is ignored");
    idset_destroy (&want);
    fake_destroy (&f);
}

/* A broker's own problem: a live peer stuck connecting. */
static void check_own_problem (void)
{
    struct fake *f = fake_create (3, 16, "bgn");
    json_t *o, *p;
    struct peer *stuck = NULL;

    fake_start (f);
    fake_all_up (f);
    ask (f, "overlay.gather", "{\"timeout\":0.5}");
    fake_advance (f, 0.6);
    o = last_json (f);
    ok (o && json_array_size (json_object_get (o, "problems")) == 0
        && json_integer_value (json_object_get (o, "brokers")) >= 1,
        "a broker with every peer up lists no problem");
    json_decref (o);

    fake_destroy (&f);
    f = fake_create (3, 16, "bgn");
    fake_start (f);
    /* every peer up but the last */
    for (int i = 0; i < f->ov->peers->n - 1; i++) {
        struct peer *q = f->ov->peers->v[i];
        fake_hello (f, q->rank, q->connector ? ENV_HELLO_ACK : ENV_HELLO,
                    1000 + q->rank);
    }
    stuck = f->ov->peers->v[f->ov->peers->n - 1];
    fake_clear (f);
    ask (f, "overlay.gather", "{\"timeout\":0.5}");
    fake_advance (f, 0.6);
    o = last_json (f);
    p = json_array_get (json_object_get (o, "problems"), 0);
    ok (p && json_integer_value (json_object_get (p, "rank")) == 3
        && json_array_size (json_object_get (p, "not_up")) == 1
        && json_integer_value (json_object_get (json_array_get
               (json_object_get (p, "not_up"), 0), "rank"))
               == (json_int_t)stuck->rank,
        "a broker with a peer not up lists itself, naming that peer (%u)",
        (unsigned)stuck->rank);
    json_decref (o);
    fake_destroy (&f);
}

/* The answer at rank 0 grows with problems, not with N. */
static void check_size (void)
{
    struct fake *f = fake_create (0, 1024, "bgn");
    uint32_t kids[64];
    int n;
    struct answer *a;
    char big[4096];

    fake_start (f);
    fake_all_up (f);
    all_ready (f);
    n = bgn_topo_bcast_children (f->ov->topo, 0, 0, kids, 64);
    fake_clear (f);
    ask (f, "overlay.status-all", "{\"timeout\":1.0}");
    for (int i = 0; i < n; i++) {
        idset_t *sub = idset_create (0);
        subtree (f, kids[i], sub);
        snprintf (big, sizeof (big),
                  "{\"brokers\":%u,\"size\":1024,\"health\":{\"full\":%u},"
                  "\"down_any\":\"\",\"down_all\":\"\",\"missing\":\"\","
                  "\"problems\":[],\"problems_omitted\":0,"
                  "\"counters\":{\"tx_msgs\":123456}}",
                  idset_count (sub), idset_count (sub));
        idset_destroy (&sub);
        answer (f, gather_to (f, kids[i]), big);
    }
    a = fake_last_answer (f);
    json_t *o = last_json (f);
    ok (o && json_integer_value (json_object_get (o, "brokers")) == 1024,
        "rank 0 of 1024 answers for all 1024 brokers");
    ok (a && a->text && strlen (a->text) < 1024,
        "in %zu bytes (under 1 KiB)", a && a->text ? strlen (a->text) : 0);
    json_decref (o);
    fake_destroy (&f);
}

/* Past 1000 problems only a count travels. */
static void check_cap (void)
{
    struct fake *f = fake_create (0, 16, "bgn");
    uint32_t kids[64];
    int n;
    json_t *o, *sum, *problems;
    char *text;

    fake_start (f);
    fake_all_up (f);
    all_ready (f);
    n = bgn_topo_bcast_children (f->ov->topo, 0, 0, kids, 64);
    fake_clear (f);
    ask (f, "overlay.status-all", "{\"timeout\":1.0}");
    for (int i = 0; i < n; i++) {
        problems = json_array ();
        for (int k = 0; k < 600; k++)
            json_array_append_new (problems, json_pack ("{s:i s:s s:s}",
                                   "rank", k, "hostname", "x", "state",
                                   "partial"));
        sum = json_pack ("{s:i s:i s:{} s:s s:s s:s s:o s:i s:{}}",
                         "brokers", 1, "size", 16, "health", "down_any", "",
                         "down_all", "", "missing", "", "problems", problems,
                         "problems_omitted", 7, "counters");
        text = json_dumps (sum, JSON_COMPACT);
        answer (f, gather_to (f, kids[i]), text);
        free (text);
        json_decref (sum);
    }
    o = last_json (f);
    ok (o && json_array_size (json_object_get (o, "problems")) == 1000,
        "at most 1000 problems are listed");
    ok (json_integer_value (json_object_get (o, "problems_omitted"))
            == (json_int_t)n * 607 - 1000,
        "the rest are counted in problems_omitted (%lld)",
        (long long)json_integer_value (json_object_get (o,
                                                        "problems_omitted")));
    json_decref (o);
    fake_destroy (&f);
}

int main (void)
{
    plan (NO_PLAN);
    check_merge ();
    check_own_problem ();
    check_size ();
    check_cap ();
    done_testing ();
    return 0;
}
