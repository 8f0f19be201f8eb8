/* status.c: overlay.status and the status-all reduction (see status.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "src/common/libutil/idmap.h"
#include "fence.h"
#include "health.h"
#include "overlay.h"
#include "status.h"
#include "tracker.h"

#define MAX_KIDS 256
#define MAX_DEPTH 64
#define MISSING_LISTED 1024

struct gather {
    struct overlay *ov;
    msg_t *req;
    json_t *ranks;
    json_t *missing;
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
        json_decref (g->ranks);
        json_decref (g->missing);
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

static json_t *peer_json (struct peer *p, double now)
{
    json_t *o = json_pack ("{s:i s:s s:s s:b s:b s:I s:I s:I s:I s:I s:I s:I"
                           " s:f s:f s:i}",
                           "rank", (int)p->rank,
                           "hostname", p->hostname,
                           "state", peer_state_str (p->state),
                           "substitute", p->substitute,
                           "connector", p->connector,
                           "tx_msgs", (json_int_t)p->tx_msgs,
                           "rx_msgs", (json_int_t)p->rx_msgs,
                           "tx_bytes", (json_int_t)p->tx_bytes,
                           "rx_bytes", (json_int_t)p->rx_bytes,
                           "reroutes", (json_int_t)p->reroutes,
                           "ttl_drops", (json_int_t)p->ttl_drops,
                           "backlog_drops", (json_int_t)p->backlog_drops,
                           "last_heard", p->last_heard > 0
                                             ? now - p->last_heard : -1.0,
                           "state_since", now - p->state_since,
                           "backlog", p->backlog.count);
    if (o)
        json_object_set_new (o, "rtt_us", p->rtt_us >= 0
                                              ? json_real (p->rtt_us)
                                              : json_null ());
    return o;
}

/* Rank 0: ranks that have not (re)reported ready, not counting fenced
 * ones (at most MISSING_LISTED listed). */
static json_t *missing_json (struct overlay *ov)
{
    json_t *a = json_array ();

    if (ov->rank != 0 || !a)
        return a ? a : json_null ();
    for (uint32_t r = 0; r < ov->size && json_array_size (a) < MISSING_LISTED;
         r++)
        if (!bgn_rankset_test (ov->health.ready, r)
            && !fence_is_fenced (ov, r))
            json_array_append_new (a, json_integer (r));
    return a;
}

/* Fenced ranks in rank order, and their details. */
static void down_json (struct overlay *ov, double now, json_t *down,
                       json_t *info)
{
    for (uint32_t r = 0; r < ov->size && ov->fence.nfenced > 0; r++) {
        const struct fence_entry *f = fence_lookup (ov, r);
        if (!f || !f->fenced)
            continue;
        json_array_append_new (down, json_integer (r));
        json_array_append_new (info, json_pack ("{s:i s:I s:f s:s}",
                                                "rank", (int)r,
                                                "incarnation",
                                                (json_int_t)f->inc,
                                                "seconds", now - f->since,
                                                "reason",
                                                fence_reason (ov, f)));
        if ((int)json_array_size (down) == ov->fence.nfenced)
            break;
    }
}

json_t *status_json (struct overlay *ov)
{
    double now = ovl_now (ov);
    json_t *peers = json_array ();
    json_t *down = json_array ();
    json_t *info = json_array ();

    for (int i = 0; i < ov->peers->n; i++)
        json_array_append_new (peers, peer_json (ov->peers->v[i], now));
    down_json (ov, now, down, info);
    return json_pack ("{s:i s:i s:s s:i s:s s:i s:I s:o s:o s:{s:I s:I s:I"
                      " s:I s:I s:I s:I s:I} s:s s:s s:s s:s s:I s:o s:i s:i"
                      " s:I s:I s:I s:o s:o s:i s:i}",
                      "rank", (int)ov->rank,
                      "size", (int)ov->size,
                      "topology", ov->topo_spec,
                      "diameter", ov->diameter,
                      "state", health_word (ov),
                      "ttl", ov->ttl,
                      "incarnation", (json_int_t)ov->incarnation,
                      "down_ranks", down,
                      "peers", peers,
                      "counters",
                      "ttl_drops", (json_int_t)ov->c.ttl_drops,
                      "unknown_peer_drops",
                      (json_int_t)ov->c.unknown_peer_drops,
                      "malformed_drops", (json_int_t)ov->c.malformed_drops,
                      "stale_drops", (json_int_t)ov->c.stale_drops,
                      "no_route_drops", (json_int_t)ov->c.no_route_drops,
                      "backlog_overflows",
                      (json_int_t)ov->c.backlog_overflows,
                      "forwarded", (json_int_t)ov->c.forwarded,
                      "delivered", (json_int_t)ov->c.delivered,
                      "endpoint", ov->endpoint,
                      "hostname", ov->hostname,
                      "instance", ov->instance,
                      "pubkey", ov->pubkey,
                      "auth_failures", (json_int_t)ov->c.auth_failures,
                      "down", info,
                      "unreachable_live", (int)ov->fence.unreachable_live,
                      "tracker", tracker_count (ov),
                      "tracker_failed", (json_int_t)ov->tracker.failed,
                      "tracker_dup_drops", (json_int_t)ov->tracker.dup_drops,
                      "fences_seen", (json_int_t)ov->fence.seen,
                      "missing", missing_json (ov),
                      "events", evlayer_stats (ov->events),
                      "heal_threshold", ov->heal.threshold,
                      "substitutes", ov->heal.nsubst);
}

/* rank and its tree descendants, appended to out. */
static void subtree_ranks (struct overlay *ov, uint32_t rank, json_t *out,
                           int depth)
{
    uint32_t kids[MAX_KIDS];
    int n;

    json_array_append_new (out, json_integer (rank));
    if (depth > MAX_DEPTH)
        return;
    n = bgn_topo_bcast_children (ov->topo, 0, rank, kids, MAX_KIDS);
    for (int i = 0; i < n && i < MAX_KIDS; i++)
        subtree_ranks (ov, kids[i], out, depth + 1);
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
            subtree_ranks (ov, c->rank, g->missing, 0);
            left[n++] = it.id;
        }
        for (size_t i = 0; i < n; i++)
            idmap_delete (ov->status.gathers, left[i]);
        free (left);
    }
    json_t *o = json_pack ("{s:O s:O}", "ranks", g->ranks, "missing",
                           g->missing);
    char *s = o ? json_dumps (o, JSON_COMPACT) : NULL;
    if (s)
        ov->io->respond (ov->ctx, g->req, s);
    else
        ov->io->respond_error (ov->ctx, g->req, ENOMEM, NULL);
    free (s);
    json_decref (o);
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
        json_array_append_new (g->missing, json_integer (rank));
        for (int i = 0; i < n && i < MAX_KIDS && depth < MAX_DEPTH; i++)
            gather_ask (ov, g, kids[i], timeout, depth + 1);
        return;
    }
    snprintf (payload, sizeof (payload), "{\"timeout\":%.3f}", timeout);
    uint32_t tag = ++ov->status.next_tag;
    if (tag == 0)
        tag = ++ov->status.next_tag;
    if (!(msg = msg_request_create ("overlay.gather", rank, payload))
        || !(c = idmap_put (ov->status.gathers, tag, NULL))) {
        msg_destroy (&msg);
        subtree_ranks (ov, rank, g->missing, 0);
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
        || !(g->ranks = json_array ()) || !(g->missing = json_array ())
        || !(g->timer = ovtimer_create (ov->timers, gather_timeout_cb, g))) {
        gather_destroy (&g);
        ov->io->respond_error (ov->ctx, req, ENOMEM, NULL);
        return;
    }
    g->ov = ov;
    json_array_append_new (g->ranks, status_json (ov));
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
    json_t *o = NULL, *ranks, *missing;

    if (!(c = idmap_get (ov->status.gathers, msg_get_matchtag (rsp))))
        return;   /* late: its gather is finished */
    g = c->g;
    rank = c->rank;
    idmap_delete (ov->status.gathers, msg_get_matchtag (rsp));
    msg_get_errnum (rsp, &errnum);
    payload = msg_get_payload (rsp, NULL);
    if (errnum || !payload || !(o = json_loads (payload, 0, NULL))
        || json_unpack (o, "{s:o s:o}", "ranks", &ranks, "missing",
                        &missing) < 0)
        subtree_ranks (ov, rank, g->missing, 0);
    else {
        json_array_extend (g->ranks, ranks);
        json_array_extend (g->missing, missing);
    }
    json_decref (o);
    if (--g->outstanding == 0)
        gather_finish (g);
}
