/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* events.c: sequenced, exactly-once, in-order multicast of event batches
 * (see events.h).
 *
 * State per broker: the last seq delivered (or declared lost), the
 * highest seq known to exist, two stores of batches sorted by seq (the
 * replay buffer: batches up to 'last', kept to answer repairs; and the
 * early-arrival buffer: batches past a gap), and at most one repair in
 * progress.  Rank 0 also has the open batch it is filling, a queue of
 * closed batches waiting for the tree to take them, and the publishers'
 * tokens to answer once their batch has left.
 *
 * Batches are the unit everywhere: rank 0 makes them, every seq belongs
 * to exactly one, so two batches are either the same or disjoint and a
 * store never holds overlapping entries.  Seq ranges are handled as
 * ranges: nothing here loops over the seqs of a gap.
 *
 * This file: the layer's entry points (events.h): receiving, timers and
 * the statistics.  Below it, and called only downward: rank 0's SYNCs in
 * evsync.c and a joining broker's start in evjoin.c, repair in
 * evrepair.c and rank 0's numbering and batching in evroot.c, rank 0's
 * signature in evsign.c, delivery, the buffers and the tree in
 * evdeliver.c, the stores in evstore.c; the state they share is in
 * evlayer_int.h.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "evlayer_int.h"

void evlayer_config_defaults (struct evlayer_config *cfg)
{
    memset (cfg, 0, sizeof (*cfg));
    cfg->buffer = 100000;
    cfg->buffer_bytes = 64u << 20;
    cfg->sync_period = 1.0;
    cfg->batch_window = 0.0002;
    cfg->batch_bytes = 64u << 10;
    cfg->queue_bytes = 16u << 20;
    cfg->learn_timeout = 10.0;
}

/* ---- life cycle ------------------------------------------------------------ */

struct evlayer *evlayer_create (struct bgn_topo *topo, uint32_t rank,
                                const struct evlayer_config *cfg,
                                const struct evlayer_ops *ops, void *arg)
{
    struct evlayer *ev;
    uint32_t r = rank;

    if (!topo || !ops || !cfg || cfg->buffer < 16 || !cfg->buffer_bytes
        || !cfg->batch_bytes || !cfg->queue_bytes) {
        errno = EINVAL;
        return NULL;
    }
    if (!(ev = calloc (1, sizeof (*ev))))
        return NULL;
    ev->topo = topo;
    ev->rank = rank;
    ev->cfg = *cfg;
    if (!(ev->cfg.sync_period > 0))
        ev->cfg.sync_period = 1.0;
    ev->ops = ops;
    ev->arg = arg;
    while (r != 0 && ev->nanc < MAX_ANCESTORS) {
        int p = bgn_topo_bcast_parent (topo, 0, r);
        if (p < 0)
            break;
        ev->ancestors[ev->nanc++] = r = (uint32_t)p;
    }
    evbatch_writer_init (&ev->w, cfg->epoch);
    ev->armed = INFINITY;
    ev->last_flush = -INFINITY;
    ev->start_floor = UINT32_MAX;
    ev->par.rank = ev->par.suspect = ev->par.substitute = UINT32_MAX;
    ev->sync_passed = -INFINITY;
    ev->start_tokens = START_BURST;
    if (rank == 0) {
        ev->have_base = 1;
        ev->learning = 1;
        ev->learn_start = evl_now (ev);
        ev->last_query = ev->learn_start;
    }
    return ev;
}

void evlayer_start (struct evlayer *ev, double now)
{
    if (ev && ev->learning) {
        ev->learn_start = now;
        ev->last_query = now;
    }
}

static void tokens_cancel (struct evlayer *ev, struct token *t, int n)
{
    for (int i = 0; i < n; i++)
        if (t[i].token && ev->ops->published)
            ev->ops->published (ev->arg, t[i].token, 0, ECANCELED);
}

void evlayer_destroy (struct evlayer **evp)
{
    if (evp && *evp) {
        struct evlayer *ev = *evp;
        for (int i = 0; i < ev->nout; i++) {
            frame_decref (&ev->outq[i].f);
            tokens_cancel (ev, ev->outq[i].tok, ev->outq[i].ntok);
            free (ev->outq[i].tok);
        }
        free (ev->outq);
        free (ev->tag_keys);
        free (ev->tag_state);
        free (ev->links);
        tokens_cancel (ev, ev->wtok, ev->nwtok);
        free (ev->wtok);
        evbatch_writer_free (&ev->w);
        for (int i = 0; i < ev->npend; i++) {
            frame_decref (&ev->pend[i].f);
            frame_decref (&ev->pend[i].tags);
        }
        evstore_free (&ev->ring);
        evstore_free (&ev->early);
        free (ev->reported);
        json_decref (ev->sync_proof);
        free (ev);
        *evp = NULL;
    }
}

/* ---- receiving ------------------------------------------------------------ */

/* No memory to hold a batch: it is not taken, the repair fetches it. */
static void nomem_drop (struct evlayer *ev, const struct evbatch_hdr *h)
{
    ev->nomem_drops++;
    evl_warn_counted (ev, ev->nomem_drops, "out of memory, dropped a batch "
                      "(it is repaired later)", h->first, h->last);
    evrepair_kick (ev);
}

/* A tree or repair batch from an acceptable sender, rank 0's own
 * (checked): take it in sequence, forward it, keep it. */
static void accept_batch (struct evlayer *ev, int kind, struct frame *batch,
                          struct frame *tags, const struct evbatch_hdr *h)
{
    struct held hd = { .first = h->first, .last = h->last,
                       .count = h->count };

    ev->batches++;
    if (!ev->have_base && !ev->verify) {
        /* joining, nothing signed: our sequence starts with this batch */
        ev->have_base = 1;
        ev->last = ev->high = h->first - 1;
    }
    if (h->last <= ev->last || evstore_overlaps (&ev->early, h->first, h->last)) {
        ev->duplicates++;
        return;
    }
    if (h->last > ev->high)
        ev->high = h->last;
    /* Forward on first sight, however it came: our subtree depends on us
     * even when we got it by repair. */
    evl_forward_down (ev, batch, NULL, tags);
    if (kind == EV_REPAIR) {
        ev->repaired += h->count;
        ev->rep.filled += h->count;
    }
    /* Held for repairs: our own copy of a received batch, never the
     * transport's buffer (frame_keep).  Without memory it is not taken:
     * the gap it leaves is repaired like any other. */
    if (!(hd.f = frame_keep (batch))) {
        nomem_drop (ev, h);
        return;
    }
    hd.bytes = evstore_cost (hd.f);
    if (!ev->have_base) {
        /* joining: held until rank 0 says where we start (evjoin.c) */
        if (h->first - 1 < ev->start_floor)
            ev->start_floor = h->first - 1;
        evl_early_add (ev, &hd);
        evjoin_ask (ev);
        return;
    }
    if (h->first <= ev->last + 1) {
        evl_deliver (ev, &hd);
        evl_ring_add (ev, &hd);
        evl_drain_early (ev);
    }
    else
        evl_early_add (ev, &hd);
    if (ev->rep.active && kind == EV_REPAIR && !evrepair_have_gap (ev))
        ev->rep.active = 0;
    evrepair_kick (ev);
}

void evl_settle (struct evlayer *ev)
{
    struct pending p[PEND_MAX];
    char ok[PEND_MAX];
    int n = ev->npend;

    if (n == 0)
        return;
    /* taken out first: what we call may bring more */
    memcpy (p, ev->pend, (size_t)n * sizeof (p[0]));
    ev->npend = 0;
    ev->pend_bytes = 0;
    evl_verify_run (ev, p, n, ok);
    for (int i = 0; i < n; i++) {
        if (ok[i])
            accept_batch (ev, EV_TREE, p[i].f, p[i].tags, &p[i].h);
        frame_decref (&p[i].f);
        frame_decref (&p[i].tags);
    }
}

/* A chained tree batch waits for the end of the read (evl_settle, from
 * the flush timer armed now), so that a run of them costs one signature
 * check.  0, or -1 if it must be taken now (not chained, not checking,
 * a repair). */
static int defer_batch (struct evlayer *ev, int kind, struct frame *batch,
                        struct frame *tags, const struct evbatch_hdr *h,
                        uint32_t via)
{
    size_t bytes = frame_size (batch) + (tags ? frame_size (tags) : 0);
    struct pending *p;

    /* small ones only, and bounded: a big batch's check is cheap beside
     * its size, and nothing unchecked is held for long or much */
    if (!ev->verify || kind != EV_TREE || !(h->flags & EVBATCH_F_CHAINED)
        || frame_size (batch) > PEND_BATCH_MAX)
        return -1;
    if (ev->npend == PEND_MAX || ev->pend_bytes + bytes > PEND_BYTES_MAX)
        evl_settle (ev);
    p = &ev->pend[ev->npend];
    if (!(p->f = frame_keep (batch))) {
        nomem_drop (ev, h);
        return 0;
    }
    /* the tags are for our subtree: without memory for them, it checks
     * signatures */
    p->tags = tags ? frame_keep (tags) : NULL;
    p->h = *h;
    p->via = via;
    ev->npend++;
    ev->pend_bytes += bytes;
    evl_arm (ev, ev->now);
    return 0;
}

void evlayer_recv_batch (struct evlayer *ev, uint32_t source, uint32_t via,
                         int kind, struct frame *batch, struct frame *tags,
                         const struct evbatch_hdr *h)
{
    evl_now (ev);
    if (ev->rank == 0)
        return;     /* rank 0 makes batches; it never needs them back */
    /* a tree batch from another sender than our parent is taken where
     * rank 0 signs, on its signature: a parent that withholds the tree,
     * or cannot reach us, is gone round by whoever has it (a rank 0
     * sending round a fenced parent, a neighbour we asked to) */
    int side = kind == EV_TREE && ev->verify
               && !evl_tree_sender_ok (ev, source, via);
    if (kind == EV_TREE ? !side && !evl_tree_sender_ok (ev, source, via)
                        : (via != source
                           || !evrepair_asked_for (ev, source, h->first, h->last))) {
        ev->rejected++;
        evl_warn_counted (ev, ev->rejected, kind == EV_TREE
                      ? "dropped a tree batch not as our nearest live tree "
                        "ancestor sent it" : "dropped a repair nobody asked "
                        "for",
                      h->first, h->last);
        return;
    }
    if (kind == EV_TREE && !side && h->last > ev->par.seen
        && h->last - ev->last <= SEQ_SANE)
        ev->par.seen = h->last;     /* our parent still sends (evrepair.c) */
    if (ev->have_base && h->last - ev->last > SEQ_SANE
        && h->last > ev->last) {
        ev->rejected++;
        evl_warn_counted (ev, ev->rejected, "dropped a batch far beyond the "
                      "sequence", h->first, h->last);
        return;
    }
    /* A batch we hold already costs nothing more: no check (a relay
     * replaying rank 0's real batch made us check it again each time) */
    if (ev->have_base && (h->last <= ev->last
                          || evstore_overlaps (&ev->early, h->first,
                                               h->last))) {
        ev->duplicates++;
        return;
    }
    if (side)
        ev->side_batches++;
    if (kind != EV_TREE)
        tags = NULL;        /* a repair is checked by its signature */
    /* Our tag from rank 0, where it came with one: no signature check
     * (what waits is taken first, in order) */
    if (tags && evl_tag_ok (ev, batch, tags)) {
        evl_settle (ev);
        accept_batch (ev, kind, batch, tags, h);
        return;
    }
    if (defer_batch (ev, kind, batch, tags, h, via) == 0)
        return;
    evl_settle (ev);
    /* The signature last: the cheap checks first, so that no peer can
     * make us verify for free. */
    if (!evl_batch_signed_ok (ev, batch, h, via))
        return;
    accept_batch (ev, kind, batch, tags, h);
}

/* Rank 0 learning where the sequence is: a report counts only from a
 * live tree child, and, where rank 0 signs, only as far as what rank 0
 * itself signed proves (a signed SYNC or batch the child carries): no
 * broker can push the sequence past what exists.  Where nothing is
 * signed, only over the child's own link. */
static void recv_seq_report (struct evlayer *ev, uint32_t source,
                             uint32_t via, uint32_t seq, json_t *o)
{
    uint32_t kids[MAX_CHILDREN], proven;
    int n = evl_effective_children (ev, kids, MAX_CHILDREN), child = 0;

    for (int i = 0; i < n; i++)
        if (kids[i] == source)
            child = 1;
    if (!child || (!ev->can_sign && via != source)) {
        ev->rejected++;
        evl_warn_counted (ev, ev->rejected, "dropped a seq report not from a "
                          "live tree child over its own link", seq, seq);
        return;
    }
    /* signed: the proof bounds it, whoever relayed it (a child of a dead
     * child reports through others) */
    if (ev->can_sign && seq > (proven = evl_report_proven (ev, o))) {
        ev->seq_unproven++;
        evl_warn_counted (ev, ev->seq_unproven, "a seq report past what "
                          "rank 0 signed: taken only as far as its proof",
                          proven, seq);
        seq = proven;
    }
    evroot_learn_report (ev, source, seq);
}

/* A neighbour whose tree parent fails it asks us for the tree: sent
 * for ADOPT_TTL, to ADOPT_MAX at most; only where rank 0 signs (it
 * takes our batches on rank 0's signature) and over its own link. */
static void adopt_answer (struct evlayer *ev, uint32_t source, uint32_t via)
{
    if (via != source || source == ev->rank
        || !bgn_topo_linked (ev->topo, ev->rank, source)
        || !(ev->verify || ev->can_sign)) {
        ev->rejected++;
        return;
    }
    if (evl_adopt (ev, source) < 0) {
        ev->adopt_refused++;
        evl_warn_counted (ev, ev->adopt_refused, "a neighbour asked for the "
                          "tree in its parent's place; too many do already",
                          source, source);
        return;
    }
    ev->adoptions++;
}

void evlayer_recv_control (struct evlayer *ev, uint32_t source,
                           uint32_t via, int kind, json_t *o)
{
    json_int_t seq;

    evl_now (ev);
    evl_settle (ev);
    switch (kind) {
    case EV_CTL_SYNC:
        if (ev->rank != 0)
            evsync_recv (ev, source, via, o);
        break;
    case EV_CTL_REPAIR_REQ:
        /* Only to the neighbour that asked, never to a claimed source. */
        if (via != source) {
            ev->rejected++;
            break;
        }
        evrepair_serve (ev, via, o);
        break;
    case EV_CTL_REPAIR_END:
        evrepair_recv_end (ev, source, via, o);
        break;
    case EV_CTL_SEQ_QUERY:
        if (source == 0 && ev->rank != 0) {
            json_t *r = json_pack ("{s:I}", "seq", (json_int_t)ev->high);
            if (r)
                evl_report_proof (ev, r);
            if (r)
                ev->ops->control (ev->arg, 0, EV_CTL_SEQ_REPORT, r);
            json_decref (r);
        }
        break;
    case EV_CTL_SEQ_REPORT:
        if (ev->rank == 0 && json_unpack (o, "{s:I}", "seq", &seq) == 0
            && seq >= 0 && seq <= UINT32_MAX)
            recv_seq_report (ev, source, via, (uint32_t)seq, o);
        break;
    case EV_CTL_START_QUERY:
        if (ev->rank == 0)
            evjoin_answer (ev, source, o);
        break;
    case EV_CTL_START:
        if (ev->rank != 0)
            evjoin_recv (ev, via, o);
        break;
    case EV_CTL_ADOPT:
        adopt_answer (ev, source, via);
        break;
    default:
        ev->rejected++;
        break;
    }
}

/* ---- timers and hellos ------------------------------------------------- */

void evlayer_tick (struct evlayer *ev, double now)
{
    ev->now = now;
    evl_settle (ev);
    if (ev->rank == 0) {
        evroot_learn_check (ev, 1);
        evsync_tick (ev, now);
        return;
    }
    if (!ev->have_base) {
        evjoin_ask (ev);
        evjoin_fallback (ev);
    }
    evrepair_parent_tick (ev);
    if (ev->rep.active && now >= ev->rep.deadline)
        evrepair_step (ev, 0, 0, 0);      /* no answer: the next peer */
    else if (!ev->rep.active)
        evrepair_kick (ev);
}

void evlayer_flush (struct evlayer *ev, double now)
{
    if (ev->rank == 0) {
        evroot_flush (ev, now);
        return;
    }
    /* the end of a read: the tree batches that wait; or the end of the
     * wait for a gap only another path told of */
    ev->now = now;
    ev->armed = INFINITY;
    evl_settle (ev);
    if (!ev->rep.active)
        evrepair_kick (ev);
    if (!ev->rep.active && ev->rep.hold_until > now && evrepair_have_gap (ev))
        evl_arm (ev, ev->rep.hold_until);
}

void evlayer_set_keys (struct evlayer *ev, const unsigned char *sk,
                       const unsigned char *root_pk)
{
    evl_settle (ev);    /* what waits is checked with the key it came under */
    evl_set_keys (ev, sk, root_pk);
}

void evlayer_seq_hint (struct evlayer *ev, uint32_t rank, uint32_t seq)
{
    evl_now (ev);
    evl_settle (ev);
    /* a hello's seq is the neighbour's word: rank 0 takes a seq only with
     * the proof of a SEQ_REPORT where it signs (recv_seq_report) */
    if (ev->rank == 0) {
        if (!ev->can_sign)
            evroot_learn_report (ev, rank, seq);
        return;
    }
    /* Where rank 0 signs, a hello is a neighbour's word: it moves no
     * sequence; one without a sequence asks rank 0 (evjoin_ask), and
     * keeps what every neighbour said meanwhile: where the stream was
     * when we came, which may lower rank 0's answer (evjoin.c).  Every
     * neighbour's, not only the tree parent's: a broker restarted while
     * its parent is dead hears no hello from it. */
    if (ev->verify) {
        if (!ev->have_base) {
            if (seq > 0)
                ev->hints_ignored++;
            evjoin_hint (ev, seq);
        }
        evjoin_ask (ev);
        return;
    }
    /* Nothing signed: a broker (re)joining starts where its tree parent
     * is. */
    if (!ev->have_base && ev->nanc > 0 && rank == ev->ancestors[0]) {
        ev->have_base = 1;
        ev->last = ev->high = seq;
    }
}

uint32_t evlayer_hello_seq (const struct evlayer *ev)
{
    return ev->rank == 0 ? ev->sent_seq : ev->high;
}

uint32_t evlayer_last (const struct evlayer *ev)
{
    return ev->last;
}

/* Where rank 0 signs: the paths round one parent or edge. */
static void stats_paths (const struct evlayer *ev, json_t *o)
{
    uint32_t sus = ev->par.suspect, sub = ev->par.substitute;
    struct { const char *key; uint64_t v; } f[] = {
        { "parent_failures", ev->parent_failures },
        { "parent_suspect", ev->parent_suspects },
        { "parent_switches", ev->parent_switches },
        { "side_syncs", ev->side_syncs },
        { "syncs_relayed", ev->syncs_relayed },
        { "side_batches", ev->side_batches },
        { "adoptions", ev->adoptions },
        { "adopt_refused", ev->adopt_refused },
    };

    for (size_t i = 0; i < sizeof (f) / sizeof (f[0]); i++)
        json_object_set_new (o, f[i].key, json_integer ((json_int_t)f[i].v));
    json_object_set_new (o, "suspect_parent",
                         json_integer (evrepair_suspect (ev, sus)
                                       ? (json_int_t)sus : -1));
    json_object_set_new (o, "substitute",
                         json_integer (sub != UINT32_MAX ? (json_int_t)sub
                                                         : -1));
}

json_t *evlayer_stats (const struct evlayer *ev)
{
    json_t *o = json_pack ("{s:I s:I s:I s:I s:I s:I s:I s:I s:I s:I s:I"
                           " s:I s:I s:I s:I s:I s:I s:I s:I s:b}",
                           "last_seq", (json_int_t)ev->last,
                           "high_seq", (json_int_t)ev->high,
                           "delivered", (json_int_t)ev->delivered,
                           "batches", (json_int_t)ev->batches,
                           "duplicates", (json_int_t)ev->duplicates,
                           "repaired", (json_int_t)ev->repaired,
                           "lost", (json_int_t)ev->lost,
                           "lost_ranges", (json_int_t)ev->lost_ranges,
                           "repair_requests", (json_int_t)ev->repair_requests,
                           "repairs_served", (json_int_t)ev->repairs_served,
                           "stale_answers", (json_int_t)ev->stale_answers,
                           "rejected", (json_int_t)ev->rejected,
                           "early_drops", (json_int_t)ev->early_drops,
                           "nomem_drops", (json_int_t)ev->nomem_drops,
                           "evicted", (json_int_t)ev->evictions,
                           "held", (json_int_t)ev->early.events,
                           "held_bytes", (json_int_t)ev->early.bytes,
                           "buffered", (json_int_t)ev->ring.events,
                           "buffered_bytes", (json_int_t)ev->ring.bytes,
                           "repairing", ev->rep.active);
    if (o && ev->rank != 0 && ev->verify) {
        json_object_set_new (o, "signatures_throttled",
                             json_integer ((json_int_t)ev->sig_throttled));
        json_object_set_new (o, "signatures_refused",
                             json_integer ((json_int_t)ev->sig_refused));
        json_object_set_new (o, "signature_backoffs",
                             json_integer ((json_int_t)ev->sig_bans));
        json_object_set_new (o, "start_asks",
                             json_integer ((json_int_t)ev->start_asks));
        json_object_set_new (o, "hints_ignored",
                             json_integer ((json_int_t)ev->hints_ignored));
        json_object_set_new (o, "signature_checks",
                             json_integer ((json_int_t)ev->sig_checks));
        json_object_set_new (o, "signatures_chained",
                             json_integer ((json_int_t)ev->sig_chained));
        json_object_set_new (o, "tags_matched",
                             json_integer ((json_int_t)ev->tag_ok));
        json_object_set_new (o, "tags_mismatched",
                             json_integer ((json_int_t)ev->tag_bad));
    }
    if (o && (ev->verify || ev->can_sign))
        stats_paths (ev, o);
    if (o && ev->rank == 0) {
        json_t *r = json_pack ("{s:I s:I s:I s:I s:I s:I s:b s:I}",
                               "published", (json_int_t)ev->published,
                               "batches_sent", (json_int_t)ev->batches_sent,
                               "queued_bytes", (json_int_t)ev->queued_bytes,
                               "queued_bytes_max",
                               (json_int_t)ev->queued_max,
                               "refused_full", (json_int_t)ev->refused_full,
                               "congestion_waits",
                               (json_int_t)ev->congestion_waits,
                               "learning", ev->learning,
                               "epoch", (json_int_t)ev->cfg.epoch);
        if (r)
            json_object_set_new (r, "seq_unproven",
                                 json_integer ((json_int_t)ev->seq_unproven));
        if (r)
            json_object_set_new (r, "start_answers",
                                 json_integer ((json_int_t)ev->start_answers));
        if (r)
            json_object_set_new (r, "start_throttled",
                                 json_integer ((json_int_t)ev->start_throttled));
        if (r)
            json_object_set_new (r, "batches_tagged",
                                 json_integer ((json_int_t)ev->tags_made));
        if (r)
            json_object_update (o, r);
        json_decref (r);
    }
    return o;
}

static json_t *store_json (size_t bytes, size_t bound)
{
    return json_pack ("{s:I s:I}", "bytes", (json_int_t)bytes, "bound",
                      (json_int_t)bound);
}

json_t *evlayer_memory (const struct evlayer *ev)
{
    json_t *o = json_pack ("{s:o s:o}", "event_ring",
                           store_json (evstore_memory (&ev->ring),
                                       ev->cfg.buffer_bytes),
                           "event_early",
                           store_json (evstore_memory (&ev->early),
                                       ev->cfg.buffer_bytes));

    if (o && ev->rank == 0)
        json_object_set_new (o, "event_queue",
                             store_json (evroot_queue_memory (ev),
                                         ev->cfg.queue_bytes
                                             + evroot_writer_reserve (ev)));
    return o;
}
