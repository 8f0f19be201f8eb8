/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* statusall.c: overlay.status-all, the reduction over the tree (see
 * statusall.h).
 *
 * The requests, the deadlines and the merging of summaries: a gather is
 * one request being answered, waiting for its children (each asked with
 * its own matchtag, ov->status.gathers) until they all answered or its
 * timer fires.  Kept apart from status.c (one broker's view, whose
 * counters and memory make this broker's own summary here) because it
 * is a protocol of its own: it sends requests and keeps state between
 * them; it calls status.c, never the other way.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/common/libutil/idmap.h"
#include "src/common/libutil/idset.h"
#include "fence.h"
#include "health.h"
#include "overlay.h"
#include "ovlog.h"
#include "status.h"
#include "statusall.h"

#define MAX_KIDS 256
#define MAX_DEPTH 64

struct gather {
    struct overlay *ov;
    msg_t *req;
    json_t *sum;                  /* the subtree's summary so far */
    int outstanding;
    struct ovtimer *timer;
};

struct gather_child {
    struct gather *g;
    uint32_t rank;
};

int status_init (struct overlay *ov)
{
    if (!(ov->status.gathers = idmap_create (sizeof (struct gather_child))))
        return -1;
    return 0;
}

static void gather_destroy (struct gather **gp)
{
    if (gp && *gp) {
        struct gather *g = *gp;
        ovtimer_destroy (&g->timer);
        msg_destroy (&g->req);
        json_decref (g->sum);
        free (g);
        *gp = NULL;
    }
}

void status_fini (struct overlay *ov)
{
    struct idmap_iter it;
    struct gather **gs = NULL;
    size_t n = 0;

    /* each gather appears once per child it still waits for */
    if (ov->status.gathers
        && (gs = calloc (idmap_size (ov->status.gathers) + 1, sizeof (*gs)))) {
        for (struct gather_child *c = idmap_first (ov->status.gathers, &it);
             c; c = idmap_next (&it)) {
            size_t i;
            for (i = 0; i < n && gs[i] != c->g; i++)
                ;
            if (i == n)
                gs[n++] = c->g;
        }
        for (size_t i = 0; i < n; i++)
            gather_destroy (&gs[i]);
    }
    free (gs);
    idmap_destroy (&ov->status.gathers);
}

/* ---- the status-all reduction ------------------------------------------
 *
 * Each broker answers with a summary of its subtree, the same shape at
 * every level, merged from its own and its children's:
 *
 *   brokers     how many answered            size       the instance's N
 *   health      {"full": n, "degraded": n, ...}
 *   down_any    ranks fenced by some broker (idset text)
 *   down_all    ranks fenced by every broker that answered
 *   missing     ranks that did not answer (idset text)
 *   problems    brokers with a peer not up that they have not fenced, or
 *               that are partial or partitioned: their rank, host, health
 *               and those peers only (at most MAX_PROBLEMS, then a count)
 *   counters    sums of the brokers' counters
 *
 * so what reaches rank 0 grows with the number of problems, not with N;
 * every broker's full table stays a request away (overlay.status).
 */

#define MAX_PROBLEMS 1000

/* This broker as a problem (NULL if it has none worth listing). */
static json_t *own_problem (struct overlay *ov, double now)
{
    const char *health = health_word (ov);
    json_t *not_up = json_array (), *o;

    for (int i = 0; i < ov->peers->n && not_up; i++) {
        struct peer *p = ov->peers->v[i];
        if (peer_is_up (p) && p->state == PEER_UP)
            continue;
        if (p->state == PEER_DOWN && fence_is_fenced (ov, p->rank))
            continue;   /* dead, and known to be: down_any says it */
        json_array_append_new (not_up,
                               json_pack ("{s:i s:s s:s s:f}",
                                          "rank", (int)p->rank,
                                          "hostname", p->hello.hostname,
                                          "state", peer_state_str (p->state),
                                          "seconds", now - p->state_since));
    }
    if (!not_up || (json_array_size (not_up) == 0
                    && strcmp (health, "partial") != 0
                    && strcmp (health, "partitioned") != 0)) {
        json_decref (not_up);
        return NULL;
    }
    o = json_pack ("{s:i s:s s:s s:i s:i s:o}", "rank", (int)ov->rank,
                   "hostname", ov->hostname, "state", health,
                   "peers", ov->peers->n, "peers_up", ov->peers->up,
                   "not_up", not_up);
    return o;
}

static char *encode_set (idset_t *s)
{
    return idset_encode (s, 0);
}

/* The summary's "memory": per store [bytes summed over the brokers,
 * the largest bytes, bounds summed, the largest bound] (arrays keep the
 * summary small); "rss": [resident sets summed, the largest]. */
static json_t *memory_summary (struct overlay *ov)
{
    json_t *m = status_memory (ov), *o = json_object (), *v;
    const char *key;

    if (!m || !o) {
        json_decref (m);
        return o;
    }
    json_object_foreach (m, key, v) {
        json_int_t b, bound;
        if (json_is_object (v)) {
            b = json_integer_value (json_object_get (v, "bytes"));
            bound = json_integer_value (json_object_get (v, "bound"));
            json_object_set_new (o, key, json_pack ("[I,I,I,I]", b, b,
                                                    bound, bound));
        }
        else if (!strcmp (key, "rss_bytes") && json_is_integer (v))
            json_object_set_new (o, "rss", json_pack ("[I,I]",
                                                      json_integer_value (v),
                                                      json_integer_value (v)));
    }
    json_decref (m);
    return o;
}

/* Fold summary b's memory into a's: even places add up, odd ones (the
 * largest) take the larger. */
static void merge_memory (json_t *a, json_t *b)
{
    json_t *ma = json_object_get (a, "memory");
    json_t *mb = json_object_get (b, "memory"), *sb, *sa;
    const char *store;

    if (!json_is_object (ma) || !json_is_object (mb))
        return;
    json_object_foreach (mb, store, sb) {
        if (!json_is_array (sb))
            continue;
        if (!(sa = json_object_get (ma, store))) {
            json_object_set_new (ma, store, json_deep_copy (sb));
            continue;
        }
        for (size_t i = 0; i < json_array_size (sb)
                           && i < json_array_size (sa); i++) {
            json_int_t va = json_integer_value (json_array_get (sa, i));
            json_int_t vb = json_integer_value (json_array_get (sb, i));
            json_array_set_new (sa, i, json_integer (
                i % 2 ? (va > vb ? va : vb) : va + vb));
        }
    }
}

/* This broker alone, as a summary. */
static json_t *own_summary (struct overlay *ov)
{
    double now = ovl_now (ov);
    idset_t *down = idset_create (0);
    json_t *problems = json_array (), *pr, *o = NULL;
    char *d = NULL;

    if (!down || !problems)
        goto done;
    for (uint32_t r = 0; r < ov->size && fence_count (ov) > 0; r++)
        if (fence_is_fenced (ov, r))
            idset_set (down, r);
    if ((pr = own_problem (ov, now)))
        json_array_append_new (problems, pr);
    if (!(d = encode_set (down)))
        goto done;
    o = json_pack ("{s:i s:i s:{s:i} s:s s:s s:s s:O s:i s:o s:o}",
                   "brokers", 1, "size", (int)ov->size,
                   "health", health_word (ov), 1,
                   "down_any", d, "down_all", d, "missing", "",
                   "problems", problems, "problems_omitted", 0,
                   "counters", status_counters (ov, true),
                   "memory", memory_summary (ov));
    /* how many brokers run each version: which nodes run what */
    if (o && ov->version[0])
        json_object_set_new (o, "versions",
                             json_pack ("{s:i}", ov->version, 1));
done:
    free (d);
    json_decref (problems);
    idset_destroy (&down);
    return o;
}

/* A set from its text in o[key] ("" if absent). */
static idset_t *get_set (json_t *o, const char *key)
{
    const char *s = json_string_value (json_object_get (o, key));
    return idset_decode (s ? s : "", NULL, 0);
}

static void put_set (json_t *o, const char *key, idset_t *s)
{
    char *text = s ? encode_set (s) : NULL;
    if (text)
        json_object_set_new (o, key, json_string (text));
    free (text);
}

/* Add b's counts ({"key": n}) into a's. */
static void sum_counts (json_t *a, json_t *b)
{
    const char *key;
    json_t *v;

    json_object_foreach (b, key, v)
        json_object_set_new (a, key, json_integer (
            json_integer_value (json_object_get (a, key))
            + json_integer_value (v)));
}

/* Fold summary b into a. */
static void merge (json_t *a, json_t *b)
{
    idset_t *any_a = get_set (a, "down_any"), *any_b = get_set (b, "down_any");
    idset_t *all_a = get_set (a, "down_all"), *all_b = get_set (b, "down_all");
    idset_t *miss_a = get_set (a, "missing"), *miss_b = get_set (b, "missing");
    json_t *ha = json_object_get (a, "health"), *hb = json_object_get (b,
                                                                       "health");
    json_t *ca = json_object_get (a, "counters");
    json_t *cb = json_object_get (b, "counters");
    json_t *pa = json_object_get (a, "problems"), *v;
    const char *key;
    size_t i;
    json_int_t omitted;

    json_object_set_new (a, "brokers", json_integer (
        json_integer_value (json_object_get (a, "brokers"))
        + json_integer_value (json_object_get (b, "brokers"))));
    sum_counts (ha, hb);
    if (json_is_object (json_object_get (b, "versions"))) {
        if (!json_is_object (json_object_get (a, "versions")))
            json_object_set_new (a, "versions", json_object ());
        sum_counts (json_object_get (a, "versions"),
                    json_object_get (b, "versions"));
    }
    json_object_foreach (cb, key, v)
        if (json_is_integer (v))
            json_object_set_new (ca, key, json_integer (
                json_integer_value (json_object_get (ca, key))
                + json_integer_value (v)));
    merge_memory (a, b);
    omitted = json_integer_value (json_object_get (a, "problems_omitted"))
              + json_integer_value (json_object_get (b, "problems_omitted"));
    json_array_foreach (json_object_get (b, "problems"), i, v) {
        if (json_array_size (pa) < MAX_PROBLEMS)
            json_array_append (pa, v);
        else
            omitted++;
    }
    json_object_set_new (a, "problems_omitted", json_integer (omitted));
    if (any_a && any_b && all_a && all_b && miss_a && miss_b) {
        for (int r = idset_first (any_b); r >= 0; r = idset_next (any_b, r))
            idset_set (any_a, (unsigned)r);
        for (int r = idset_first (all_a); r >= 0; r = idset_next (all_a, r))
            if (!idset_test (all_b, (unsigned)r))
                idset_clear (all_a, (unsigned)r);
        for (int r = idset_first (miss_b); r >= 0; r = idset_next (miss_b, r))
            idset_set (miss_a, (unsigned)r);
        put_set (a, "down_any", any_a);
        put_set (a, "down_all", all_a);
        put_set (a, "missing", miss_a);
    }
    idset_destroy (&any_a);
    idset_destroy (&any_b);
    idset_destroy (&all_a);
    idset_destroy (&all_b);
    idset_destroy (&miss_a);
    idset_destroy (&miss_b);
}

/* rank and its tree descendants did not answer. */
static void subtree_missing (struct overlay *ov, uint32_t rank, idset_t *out,
                             int depth)
{
    uint32_t kids[MAX_KIDS];
    int n;

    idset_set (out, rank);
    if (depth > MAX_DEPTH)
        return;
    n = bgn_topo_bcast_children (ov->topo, 0, rank, kids, MAX_KIDS);
    for (int i = 0; i < n && i < MAX_KIDS; i++)
        subtree_missing (ov, kids[i], out, depth + 1);
}

static void add_missing (struct overlay *ov, struct gather *g, uint32_t rank)
{
    idset_t *m = get_set (g->sum, "missing");

    if (m) {
        subtree_missing (ov, rank, m, 0);
        put_set (g->sum, "missing", m);
    }
    idset_destroy (&m);
}

/* Answer g's request with what it has; the children that did not answer
 * (and their subtrees) are missing. */
static void gather_finish (struct gather *g)
{
    struct overlay *ov = g->ov;
    struct idmap_iter it;
    uint64_t *left;
    size_t n = 0;

    if ((left = calloc (idmap_size (ov->status.gathers) + 1,
                        sizeof (*left)))) {
        for (struct gather_child *c = idmap_first (ov->status.gathers, &it);
             c; c = idmap_next (&it)) {
            if (c->g != g)
                continue;
            add_missing (ov, g, c->rank);
            left[n++] = it.id;
        }
        for (size_t i = 0; i < n; i++)
            idmap_delete (ov->status.gathers, left[i]);
        free (left);
    }
    char *s = g->sum ? json_dumps (g->sum, JSON_COMPACT) : NULL;
    if (s)
        ov->io->respond (ov->ctx, g->req, s);
    else
        ov->io->respond_error (ov->ctx, g->req, ENOMEM, NULL);
    free (s);
    gather_destroy (&g);
}

static void gather_timeout_cb (void *arg)
{
    gather_finish (arg);
}

static void gather_ask (struct overlay *ov, struct gather *g, uint32_t rank,
                        double timeout, int depth)
{
    struct gather_child *c;
    char payload[64];
    msg_t *msg;

    if (fence_is_fenced (ov, rank)) {
        uint32_t kids[MAX_KIDS];
        int n = bgn_topo_bcast_children (ov->topo, 0, rank, kids, MAX_KIDS);
        idset_t *m = get_set (g->sum, "missing");
        if (m) {
            idset_set (m, rank);
            put_set (g->sum, "missing", m);
        }
        idset_destroy (&m);
        for (int i = 0; i < n && i < MAX_KIDS && depth < MAX_DEPTH; i++)
            gather_ask (ov, g, kids[i], timeout, depth + 1);
        return;
    }
    snprintf (payload, sizeof (payload), "{\"timeout\":%.3f}", timeout);
    uint32_t tag = ++ov->status.next_tag;
    if (tag == 0)
        tag = ++ov->status.next_tag;
    char topic[64];
    if (!(msg = msg_request_create (ovconf_topic (&ov->cfg, "gather", topic,
                                                  sizeof (topic)),
                                    rank, payload))
        || !(c = idmap_put (ov->status.gathers, tag, NULL))) {
        msg_destroy (&msg);
        add_missing (ov, g, rank);
        return;
    }
    msg_set_matchtag (msg, tag);
    c->g = g;
    c->rank = rank;
    g->outstanding++;
    ov->io->request (ov->ctx, msg);
}

void status_gather_request (struct overlay *ov, const msg_t *req)
{
    json_t *o = json_loads (msg_get_payload (req, NULL) ?: "{}", 0, NULL);
    double timeout = 3.0;
    uint32_t kids[MAX_KIDS];
    struct gather *g;
    int n;

    if (o)
        json_unpack (o, "{s?F}", "timeout", &timeout);
    json_decref (o);
    if (timeout < 0.05)
        timeout = 0.05;
    if (timeout > 30)
        timeout = 30;
    if (!(g = calloc (1, sizeof (*g))) || !(g->req = msg_copy (req))
        || !(g->sum = own_summary (ov))
        || !(g->timer = ovtimer_create (ov->timers, gather_timeout_cb, g))) {
        gather_destroy (&g);
        ov->io->respond_error (ov->ctx, req, ENOMEM, NULL);
        return;
    }
    g->ov = ov;
    /* Hold one count while asking: an answer can come back at once (a
     * request the broker fails on the spot) and must not finish g
     * under our feet. */
    g->outstanding = 1;
    n = bgn_topo_bcast_children (ov->topo, 0, ov->rank, kids, MAX_KIDS);
    for (int i = 0; i < n && i < MAX_KIDS; i++)
        gather_ask (ov, g, kids[i], timeout * 0.7, 0);
    if (--g->outstanding == 0) {
        gather_finish (g);
        return;
    }
    ovtimer_arm (g->timer, ovl_now (ov) + timeout);
}

void status_gather_response (struct overlay *ov, const msg_t *rsp)
{
    struct gather_child *c;
    struct gather *g;
    uint32_t rank;
    int errnum = 0;
    const char *payload;
    json_t *o = NULL;

    if (!(c = idmap_get (ov->status.gathers, msg_get_matchtag (rsp))))
        return;   /* late: its gather is finished */
    g = c->g;
    rank = c->rank;
    idmap_delete (ov->status.gathers, msg_get_matchtag (rsp));
    msg_get_errnum (rsp, &errnum);
    payload = msg_get_payload (rsp, NULL);
    if (errnum || !payload || !(o = json_loads (payload, 0, NULL))
        || !json_is_object (json_object_get (o, "health"))
        || !json_is_object (json_object_get (o, "counters"))
        || !json_is_array (json_object_get (o, "problems")))
        add_missing (ov, g, rank);
    else
        merge (g->sum, o);
    json_decref (o);
    if (--g->outstanding == 0)
        gather_finish (g);
}
