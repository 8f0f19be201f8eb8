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
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "events.h"

#define REPAIR_TIMEOUT 0.5        /* s before asking the next peer */
#define REPAIR_ROUND_DELAY 1.0    /* s between rounds that declared nothing */
#define REPAIR_MAX_BATCHES 64     /* per answer */
#define REPAIR_MAX_BYTES (1u << 20)
#define RECENT_ASKS 8             /* answers to these may still arrive */
#define CONGESTION_RETRY 0.001    /* s */
#define QUERY_INTERVAL 1.0        /* s, a learning rank 0's SEQ_QUERY (hellos
                                     usually tell first) */
#define SEQ_SANE (1u << 30)       /* a seq this far past ours is refused */
#define MAX_CHILDREN 256
#define MAX_ANCESTORS 64
#define LOG_EVERY 1000            /* repeated warnings: 1st, then every Nth */
#define HELD_OVERHEAD 256         /* bytes a held batch costs beyond its
                                     data: frame, transport message, entry */

struct held {
    uint32_t first, last;
    uint32_t count;
    size_t bytes;
    struct frame *f;
};

/* Batches sorted by first seq, disjoint: a ring of entries (a deque), so
 * that the oldest drop out and the newest come in at no cost. */
struct store {
    struct held *v;
    int head, n, cap;
    uint64_t events;
    size_t bytes;
};

struct token {
    void *token;
    uint32_t seq;
};

/* A closed batch at rank 0, waiting to be sent. */
struct outbatch {
    struct frame *f;
    uint32_t first, last, count;
    size_t bytes;
    struct token *tok;
    int ntok;
};

struct ask {
    uint32_t peer, from, to;
};

struct evlayer {
    struct bgn_topo *topo;
    uint32_t rank;
    struct evlayer_config cfg;
    const struct evlayer_ops *ops;
    void *arg;
    double now;
    uint32_t ancestors[MAX_ANCESTORS];  /* parent first, rank 0 last */
    int nanc;

    int have_base;
    uint32_t last;              /* delivered (or declared lost) up to */
    uint32_t high;              /* highest seq known to exist */
    uint32_t gone;              /* highest seq dropped from the replay buffer */
    struct store ring, early;

    /* what rank 0's syncs said */
    uint64_t root_epoch;
    uint32_t root_base, root_gone, sync_seq;

    /* rank 0 */
    int can_publish, learning;
    double learn_start, last_query;
    uint32_t *reported;         /* ranks that told their seq, sorted */
    int nreported, capreported;
    uint32_t learned;           /* largest seq they told */
    uint32_t next_seq;          /* last seq assigned */
    uint32_t sent_seq;          /* last seq sent down the tree */
    struct evbatch_writer w;
    struct token *wtok;
    int nwtok, capwtok;
    double w_opened;
    struct outbatch *outq;
    int nout, capout;
    size_t queued_bytes, queued_max;
    double last_flush, last_sync, armed;

    /* repair */
    struct {
        int active;
        uint32_t id, peer;
        double deadline;
        uint32_t mark;          /* 'last' when the current ask went out */
        int cand;               /* next candidate index */
        int asked_root;
        int asked, naks;        /* this round */
        uint32_t nak_to;        /* every nak'ing peer lacks last+1..nak_to */
        double next_round;
    } rep;
    uint32_t next_id;
    struct ask recent[RECENT_ASKS];
    int nrecent;

    /* counters */
    uint64_t delivered, batches, duplicates, repaired, lost, lost_ranges,
        repair_requests, repairs_served, stale_answers, rejected,
        early_drops, evictions, published, refused_full, congestion_waits,
        batches_sent;
};

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

/* ---- stores ------------------------------------------------------------ */

static struct held *at (const struct store *s, int i)
{
    return &s->v[(s->head + i) % s->cap];
}

static void store_free (struct store *s)
{
    for (int i = 0; i < s->n; i++)
        frame_decref (&at (s, i)->f);
    free (s->v);
    memset (s, 0, sizeof (*s));
}

/* Index of the first batch whose last >= seq (s->n if none). */
static int store_lower (const struct store *s, uint32_t seq)
{
    int lo = 0, hi = s->n;

    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (at (s, mid)->last < seq)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Does any batch overlap first..last? */
static int store_overlaps (const struct store *s, uint32_t first,
                           uint32_t last)
{
    int i = store_lower (s, first);
    return i < s->n && at (s, i)->first <= last;
}

static int store_grow (struct store *s)
{
    int cap = s->cap ? s->cap * 2 : 64;
    struct held *v = malloc (cap * sizeof (*v));

    if (!v)
        return -1;
    for (int i = 0; i < s->n; i++)
        v[i] = *at (s, i);
    free (s->v);
    s->v = v;
    s->cap = cap;
    s->head = 0;
    return 0;
}

/* In order; batches mostly come in last, a repair's now and then in the
 * middle (then the entries after it move up by one). */
static int store_insert (struct store *s, const struct held *h)
{
    int i = store_lower (s, h->first);

    if (s->n == s->cap && store_grow (s) < 0)
        return -1;
    for (int j = s->n; j > i; j--)
        *at (s, j) = *at (s, j - 1);
    *at (s, i) = *h;
    s->n++;
    s->events += h->count;
    s->bytes += h->bytes;
    return 0;
}

/* Take out entry i; its frame reference goes to *out (or is dropped).
 * The first and the last go at no cost. */
static void store_remove (struct store *s, int i, struct held *out)
{
    struct held h = *at (s, i);

    if (i == 0)
        s->head = (s->head + 1) % s->cap;
    else
        for (int j = i; j < s->n - 1; j++)
            *at (s, j) = *at (s, j + 1);
    s->n--;
    s->events -= h.count;
    s->bytes -= h.bytes;
    if (out)
        *out = h;
    else
        frame_decref (&h.f);
}

static int store_full (const struct store *s, const struct evlayer_config *c,
                       uint32_t count, size_t bytes)
{
    return s->events + count > (uint64_t)c->buffer
           || s->bytes + bytes > c->buffer_bytes;
}

/* ---- helpers ------------------------------------------------------------ */

static void warn_counted (struct evlayer *ev, uint64_t n, const char *what,
                          uint32_t a, uint32_t b)
{
    if (n == 1 || n % LOG_EVERY == 0)
        ev->ops->log (ev->arg, LOG_WARNING, "events: %s (seqs %u..%u; %llu "
                      "so far)", what, (unsigned)a, (unsigned)b,
                      (unsigned long long)n);
}

static int is_ancestor (const struct evlayer *ev, uint32_t rank)
{
    for (int i = 0; i < ev->nanc; i++)
        if (ev->ancestors[i] == rank)
            return 1;
    return 0;
}

static double now_of (struct evlayer *ev)
{
    if (ev->ops->now)
        ev->now = ev->ops->now (ev->arg);
    return ev->now;
}

/* The end of the gap after 'last': the seq before the first held batch,
 * or the highest seq known. */
static uint32_t gap_end (const struct evlayer *ev)
{
    return ev->early.n ? at (&ev->early, 0)->first - 1 : ev->high;
}

/* ---- the tree ------------------------------------------------------------ */

/* Send to rank's subtree: to rank itself, or, if it is down, to each of
 * its children in turn (recursively), which re-forms the tree.  With
 * 'list', collect the ranks instead of sending. */
static void subtree (struct evlayer *ev, uint32_t rank, int depth,
                     struct frame *batch, int kind, json_t *ctl,
                     uint32_t *list, int *nlist, int max)
{
    uint32_t kids[MAX_CHILDREN];
    int n;

    if (!ev->ops->is_down (ev->arg, rank)) {
        if (list) {
            if (*nlist < max)
                list[(*nlist)++] = rank;
        }
        else if (batch)
            ev->ops->send (ev->arg, rank, kind, batch);
        else
            ev->ops->control (ev->arg, rank, EV_CTL_SYNC, ctl);
        return;
    }
    if (depth > 64)
        return;
    n = bgn_topo_bcast_children (ev->topo, 0, rank, kids, MAX_CHILDREN);
    for (int i = 0; i < n && i < MAX_CHILDREN; i++)
        subtree (ev, kids[i], depth + 1, batch, kind, ctl, list, nlist, max);
}

static void forward_down (struct evlayer *ev, struct frame *batch,
                          json_t *ctl)
{
    uint32_t kids[MAX_CHILDREN];
    int n = bgn_topo_bcast_children (ev->topo, 0, ev->rank, kids,
                                     MAX_CHILDREN);
    for (int i = 0; i < n && i < MAX_CHILDREN; i++)
        subtree (ev, kids[i], 0, batch, EV_TREE, ctl, NULL, NULL, 0);
}

/* The ranks that would get a batch from us now. */
static int effective_children (struct evlayer *ev, uint32_t *list, int max)
{
    uint32_t kids[MAX_CHILDREN];
    int nlist = 0;
    int n = bgn_topo_bcast_children (ev->topo, 0, ev->rank, kids,
                                     MAX_CHILDREN);
    for (int i = 0; i < n && i < MAX_CHILDREN; i++)
        subtree (ev, kids[i], 0, NULL, 0, NULL, list, &nlist, max);
    return nlist;
}

/* ---- delivery and the buffers ------------------------------------------ */

static void deliver (struct evlayer *ev, const struct held *h)
{
    uint32_t from = ev->last + 1;

    ev->ops->deliver (ev->arg, h->f, from);
    ev->delivered += from <= h->first ? h->count : h->last - from + 1;
    ev->last = h->last;
    if (ev->high < ev->last)
        ev->high = ev->last;
}

/* Keep a delivered batch for repairs (reference taken over); the oldest
 * drop out past the bounds. */
static void ring_add (struct evlayer *ev, struct held *h)
{
    if (store_overlaps (&ev->ring, h->first, h->last)
        || store_insert (&ev->ring, h) < 0) {
        frame_decref (&h->f);
        return;
    }
    while (ev->ring.n > 0
           && (ev->ring.events > (uint64_t)ev->cfg.buffer
               || ev->ring.bytes > ev->cfg.buffer_bytes)) {
        if (at (&ev->ring, 0)->last > ev->gone)
            ev->gone = at (&ev->ring, 0)->last;
        store_remove (&ev->ring, 0, NULL);
        ev->evictions++;
    }
}

/* Deliver held batches that are now next in line. */
static void drain_early (struct evlayer *ev)
{
    struct held h;

    while (ev->early.n > 0 && at (&ev->early, 0)->first <= ev->last + 1) {
        store_remove (&ev->early, 0, &h);
        if (h.last > ev->last)
            deliver (ev, &h);
        ring_add (ev, &h);
    }
}

/* Hold a batch that came past a gap (reference taken over).  When full,
 * the batch farthest ahead goes: the repair fetches it again later. */
static void early_add (struct evlayer *ev, struct held *h)
{
    while (store_full (&ev->early, &ev->cfg, h->count, h->bytes)
           && ev->early.n > 0
           && at (&ev->early, ev->early.n - 1)->first > h->first) {
        struct held *far = at (&ev->early, ev->early.n - 1);
        ev->early_drops++;
        warn_counted (ev, ev->early_drops, "early-arrival buffer full, "
                      "dropped a batch (overlay.event_buffer*)", far->first,
                      far->last);
        store_remove (&ev->early, ev->early.n - 1, NULL);
    }
    if (store_full (&ev->early, &ev->cfg, h->count, h->bytes)
        || store_insert (&ev->early, h) < 0) {
        ev->early_drops++;
        warn_counted (ev, ev->early_drops, "early-arrival buffer full, "
                      "dropped a batch (overlay.event_buffer*)", h->first,
                      h->last);
        frame_decref (&h->f);
    }
}

static void declare_lost (struct evlayer *ev, uint32_t from, uint32_t to)
{
    if (to < from || from != ev->last + 1)
        return;
    ev->lost += (uint64_t)to - from + 1;
    ev->lost_ranges++;
    ev->ops->lost (ev->arg, from, to);
    ev->last = to;
    if (ev->high < to)
        ev->high = to;
    drain_early (ev);
}

/* ---- repair ---------------------------------------------------------------- */

static void repair_kick (struct evlayer *ev);

static int have_gap (const struct evlayer *ev)
{
    return ev->have_base && ev->rank != 0 && gap_end (ev) > ev->last;
}

static void ask (struct evlayer *ev, uint32_t peer)
{
    json_t *o;
    uint32_t from = ev->last + 1, to = gap_end (ev);

    ev->rep.peer = peer;
    ev->rep.id = ++ev->next_id;
    ev->rep.mark = ev->last;
    ev->rep.deadline = ev->now + REPAIR_TIMEOUT;
    if (peer == 0)
        ev->rep.asked_root = 1;
    ev->recent[ev->nrecent++ % RECENT_ASKS] = (struct ask){ peer, from, to };
    if (!(o = json_pack ("{s:I s:I s:I}", "id", (json_int_t)ev->rep.id,
                         "from", (json_int_t)from, "to", (json_int_t)to)))
        return;
    ev->repair_requests++;
    ev->ops->control (ev->arg, peer, EV_CTL_REPAIR_REQ, o);
    json_decref (o);
}

/* Every candidate of this round has been asked. */
static void round_end (struct evlayer *ev)
{
    ev->rep.active = 0;
    if (ev->rep.asked > 0 && ev->rep.naks == ev->rep.asked
        && ev->rep.nak_to > ev->last) {
        /* every live peer asked lacks them, rank 0 too if it is up */
        uint32_t to = ev->rep.nak_to < gap_end (ev) ? ev->rep.nak_to
                                                    : gap_end (ev);
        declare_lost (ev, ev->last + 1, to);
        repair_kick (ev);
        return;
    }
    ev->rep.next_round = ev->now + REPAIR_ROUND_DELAY;
}

/* Ask the next candidate: the tree parent, other live peers, rank 0. */
static void ask_next (struct evlayer *ev)
{
    uint32_t peer;
    int root_up = ev->rank != 0 && !ev->ops->is_down (ev->arg, 0);

    /* A gap wider than a buffer: rank 0 can say at once what is gone. */
    if (root_up && !ev->rep.asked_root
        && gap_end (ev) - ev->last > (uint32_t)ev->cfg.buffer) {
        ask (ev, 0);
        ev->rep.asked++;
        return;
    }
    for (;;) {
        peer = ev->ops->repair_peer (ev->arg, ev->rep.cand++);
        if (peer == UINT32_MAX)
            break;
        if (peer == ev->rank || (peer == 0 && ev->rep.asked_root))
            continue;
        ask (ev, peer);
        ev->rep.asked++;
        return;
    }
    if (root_up && !ev->rep.asked_root) {
        ask (ev, 0);
        ev->rep.asked++;
        return;
    }
    round_end (ev);
}

/* Make sure a repair of last+1 .. gap_end is under way. */
static void repair_kick (struct evlayer *ev)
{
    if (!have_gap (ev)) {
        ev->rep.active = 0;
        return;
    }
    if (ev->rep.active || ev->now < ev->rep.next_round)
        return;
    ev->rep.active = 1;
    ev->rep.cand = 0;
    ev->rep.asked_root = 0;
    ev->rep.asked = ev->rep.naks = 0;
    ev->rep.nak_to = UINT32_MAX;
    ask_next (ev);
}

/* The current peer answered (or timed out, answer NULL). */
static void repair_step (struct evlayer *ev, int answered, uint32_t lack_to,
                         int auth)
{
    if (!have_gap (ev)) {
        ev->rep.active = 0;
        return;
    }
    if (ev->last > ev->rep.mark) {
        ask (ev, ev->rep.peer);     /* it helps: ask it for the rest */
        return;
    }
    if (answered && lack_to > ev->last) {
        uint32_t end = gap_end (ev);
        if (auth) {
            /* rank 0 dropped them from its buffer: gone for good */
            declare_lost (ev, ev->last + 1, lack_to < end ? lack_to : end);
            ev->rep.active = 0;
            repair_kick (ev);
            return;
        }
        ev->rep.naks++;
        if (lack_to < ev->rep.nak_to)
            ev->rep.nak_to = lack_to;
    }
    ask_next (ev);
}

/* Answer a neighbour's request from both stores, bounded. */
static void serve_repair (struct evlayer *ev, uint32_t peer, json_t *o)
{
    json_int_t id, a, b;
    uint32_t from, to, lack_to, first_sent = 0;
    int sent = 0;
    size_t bytes = 0;
    struct store *st[2] = { &ev->ring, &ev->early };
    json_t *end;

    if (json_unpack (o, "{s:I s:I s:I}", "id", &id, "from", &a, "to", &b) < 0
        || a < 1 || b < a || b > UINT32_MAX) {
        ev->rejected++;
        return;
    }
    from = (uint32_t)a;
    to = (uint32_t)b;
    for (int k = 0; k < 2; k++) {
        for (int i = store_lower (st[k], from); i < st[k]->n; i++) {
            struct held *h = at (st[k], i);
            if (h->first > to || sent >= REPAIR_MAX_BATCHES
                || bytes >= REPAIR_MAX_BYTES)
                break;
            if (!sent)
                first_sent = h->first;
            ev->ops->send (ev->arg, peer, EV_REPAIR, h->f);
            sent++;
            bytes += h->bytes;
            ev->repairs_served++;
        }
    }
    /* What we lack at the start of the range, for good or for now. */
    if (sent && first_sent <= from)
        lack_to = from - 1;
    else if (sent)
        lack_to = first_sent - 1;
    else {
        uint32_t known = ev->rank == 0 ? ev->sent_seq : ev->high;
        lack_to = known < from ? from - 1 : (known < to ? known : to);
    }
    /* Rank 0's word is final for what it numbered and then dropped. */
    int auth = ev->rank == 0 && lack_to >= from && from > ev->root_base
               && lack_to <= ev->gone;
    if ((end = json_pack ("{s:I s:I s:b}", "id", id, "lack_to",
                          (json_int_t)lack_to, "auth", auth))) {
        ev->ops->control (ev->arg, peer, EV_CTL_REPAIR_END, end);
        json_decref (end);
    }
}

static void recv_end (struct evlayer *ev, uint32_t source, uint32_t via,
                      json_t *o)
{
    json_int_t id, lack_to;
    int auth = 0;

    if (json_unpack (o, "{s:I s:I s?b}", "id", &id, "lack_to", &lack_to,
                     "auth", &auth) < 0 || lack_to < 0
        || lack_to > UINT32_MAX) {
        ev->rejected++;
        return;
    }
    if (!ev->rep.active || (uint32_t)id != ev->rep.id
        || source != ev->rep.peer || via != source) {
        ev->stale_answers++;
        return;
    }
    repair_step (ev, 1, (uint32_t)lack_to, auth && source == 0);
}

/* Was a repair answer from peer covering first..last asked for lately? */
static int asked_for (const struct evlayer *ev, uint32_t peer, uint32_t first,
                      uint32_t last)
{
    int n = ev->nrecent < RECENT_ASKS ? ev->nrecent : RECENT_ASKS;

    for (int i = 0; i < n; i++) {
        const struct ask *a = &ev->recent[i];
        if (a->peer == peer && first <= a->to && last >= a->from)
            return 1;
    }
    return 0;
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
    if (rank == 0) {
        ev->have_base = 1;
        ev->learning = 1;
        ev->learn_start = now_of (ev);
        ev->last_query = ev->learn_start;
    }
    return ev;
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
        tokens_cancel (ev, ev->wtok, ev->nwtok);
        free (ev->wtok);
        evbatch_writer_free (&ev->w);
        store_free (&ev->ring);
        store_free (&ev->early);
        free (ev->reported);
        free (ev);
        *evp = NULL;
    }
}

/* ---- rank 0: learning where the sequence is ------------------------------ */

static int reported (const struct evlayer *ev, uint32_t rank)
{
    int lo = 0, hi = ev->nreported;

    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (ev->reported[mid] == rank)
            return 1;
        if (ev->reported[mid] < rank)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

static void learn_finish (struct evlayer *ev, int missing)
{
    ev->learning = 0;
    ev->can_publish = 1;
    if (ev->learned > ev->next_seq)
        ev->next_seq = ev->learned;
    ev->sent_seq = ev->next_seq;
    ev->root_base = ev->last = ev->high = ev->next_seq;
    if (missing)
        ev->ops->log (ev->arg, LOG_WARNING, "events: %d tree children did "
                      "not tell their seq within %.1fs; numbering goes on "
                      "after %u", missing, ev->cfg.learn_timeout,
                      (unsigned)ev->next_seq);
    else if (ev->next_seq > 0)
        ev->ops->log (ev->arg, LOG_NOTICE, "events: the sequence goes on "
                      "after %u (from %d ranks)", (unsigned)ev->next_seq,
                      ev->nreported);
}

/* Publish once every live tree child has told its seq. */
static void learn_check (struct evlayer *ev, int query)
{
    uint32_t kids[MAX_CHILDREN];
    int n, missing = 0;
    json_t *q = NULL;

    if (!ev->learning)
        return;
    n = effective_children (ev, kids, MAX_CHILDREN);
    if (query && ev->now - ev->last_query >= QUERY_INTERVAL) {
        ev->last_query = ev->now;
        q = json_object ();
    }
    for (int i = 0; i < n; i++) {
        if (reported (ev, kids[i]))
            continue;
        missing++;
        if (q)
            ev->ops->control (ev->arg, kids[i], EV_CTL_SEQ_QUERY, q);
    }
    json_decref (q);
    if (missing == 0 || ev->now - ev->learn_start >= ev->cfg.learn_timeout)
        learn_finish (ev, missing);
}

static void learn_report (struct evlayer *ev, uint32_t rank, uint32_t seq)
{
    int i = 0;

    if (!ev->learning || seq > UINT32_MAX - SEQ_SANE)
        return;
    if (!reported (ev, rank)) {
        if (ev->nreported == ev->capreported) {
            int cap = ev->capreported ? ev->capreported * 2 : 64;
            uint32_t *v = realloc (ev->reported, cap * sizeof (*v));
            if (!v)
                return;
            ev->reported = v;
            ev->capreported = cap;
        }
        while (i < ev->nreported && ev->reported[i] < rank)
            i++;
        memmove (&ev->reported[i + 1], &ev->reported[i],
                 (ev->nreported - i) * sizeof (uint32_t));
        ev->reported[i] = rank;
        ev->nreported++;
    }
    if (seq > ev->learned)
        ev->learned = seq;
    now_of (ev);
    learn_check (ev, 0);
}

void evlayer_set_ready (struct evlayer *ev)
{
    if (ev->learning)
        learn_finish (ev, 0);
}

/* ---- rank 0: batches out ----------------------------------------------- */

static void arm (struct evlayer *ev, double when)
{
    if (when == ev->armed)
        return;
    ev->armed = when;
    if (ev->ops->arm)
        ev->ops->arm (ev->arg, when);
}

/* Close the open batch and queue it. */
static int seal_open (struct evlayer *ev)
{
    struct outbatch *ob;

    if (ev->w.count == 0)
        return 0;
    if (ev->nout == ev->capout) {
        int cap = ev->capout ? ev->capout * 2 : 16;
        struct outbatch *q = realloc (ev->outq, cap * sizeof (*q));
        if (!q)
            return -1;
        ev->outq = q;
        ev->capout = cap;
    }
    if (evbatch_seal (&ev->w) < 0)
        return -1;
    ob = &ev->outq[ev->nout];
    if (!(ob->f = frame_create (ev->w.buf, ev->w.len)))
        return -1;
    ob->first = ev->w.first;
    ob->last = ev->w.last;
    ob->count = ev->w.count;
    ob->bytes = ev->w.len;
    ob->tok = ev->wtok;
    ob->ntok = ev->nwtok;
    ev->wtok = NULL;
    ev->nwtok = ev->capwtok = 0;
    ev->nout++;
    evbatch_writer_reset (&ev->w, ev->cfg.epoch);
    return 0;
}

static int congested (struct evlayer *ev)
{
    uint32_t kids[MAX_CHILDREN];
    int n;

    if (!ev->ops->congested)
        return 0;
    n = effective_children (ev, kids, MAX_CHILDREN);
    for (int i = 0; i < n; i++)
        if (ev->ops->congested (ev->arg, kids[i]))
            return 1;
    return 0;
}

/* Send the oldest queued batch down the tree and deliver it here. */
static void send_one (struct evlayer *ev)
{
    struct outbatch ob = ev->outq[0];
    struct held h = { .first = ob.first, .last = ob.last, .count = ob.count,
                      .bytes = ob.bytes + HELD_OVERHEAD, .f = ob.f };

    memmove (&ev->outq[0], &ev->outq[1], (ev->nout - 1) * sizeof (ob));
    ev->nout--;
    forward_down (ev, ob.f, NULL);
    deliver (ev, &h);
    ring_add (ev, &h);
    ev->sent_seq = ob.last;
    ev->batches_sent++;
    /* what publish counted: the records, not the header */
    size_t recs = ob.bytes - EVBATCH_HDR_SIZE;
    ev->queued_bytes -= recs < ev->queued_bytes ? recs : ev->queued_bytes;
    for (int i = 0; i < ob.ntok; i++)
        if (ev->ops->published)
            ev->ops->published (ev->arg, ob.tok[i].token, ob.tok[i].seq, 0);
    free (ob.tok);
}

/* When the open batch closes: a window after the last flush (a lone
 * event on an idle rank 0 goes at once), or now if it is full. */
static double open_due (const struct evlayer *ev)
{
    double t;

    if (ev->w.count == 0)
        return INFINITY;
    if (ev->w.len >= ev->cfg.batch_bytes)
        return ev->now;
    t = ev->last_flush + ev->cfg.batch_window;
    return t > ev->w_opened ? t : ev->w_opened;
}

/* When the flush should run: now if closed batches wait, else when the
 * open one closes. */
static double due (const struct evlayer *ev)
{
    return ev->nout > 0 ? ev->now : open_due (ev);
}

void evlayer_flush (struct evlayer *ev, double now)
{
    double next;

    ev->now = now;
    ev->armed = INFINITY;
    if (ev->rank != 0)
        return;
    if (open_due (ev) <= now && seal_open (ev) < 0)
        ev->ops->log (ev->arg, LOG_ERR, "events: out of memory closing a "
                      "batch");
    if (ev->nout > 0)
        ev->last_flush = now;
    while (ev->nout > 0 && !congested (ev))
        send_one (ev);
    next = open_due (ev);
    if (ev->nout > 0) {
        /* a live child's queue is full: hold what waits, look again soon */
        ev->congestion_waits++;
        if (now + CONGESTION_RETRY < next)
            next = now + CONGESTION_RETRY;
    }
    if (!isinf (next))
        arm (ev, next);
}

int evlayer_room (struct evlayer *ev, size_t bytes)
{
    if (ev->rank != 0) {
        errno = EINVAL;
        return -1;
    }
    if (!ev->can_publish) {
        errno = EAGAIN;
        return -1;
    }
    if (ev->queued_bytes + bytes > ev->cfg.queue_bytes) {
        ev->refused_full++;
        warn_counted (ev, ev->refused_full, "publish refused: rank 0's queue "
                      "is full (overlay.event_queue_bytes)", ev->sent_seq,
                      ev->next_seq);
        errno = EAGAIN;
        return -1;
    }
    return 0;
}

int64_t evlayer_publish (struct evlayer *ev, msg_t *event, void *token)
{
    size_t size;
    uint32_t seq;
    double when;

    size = evbatch_rec_size (event);
    if (evlayer_room (ev, size) < 0) {
        msg_destroy (&event);
        return -1;
    }
    now_of (ev);
    if (ev->w.count > 0 && (ev->w.len + size > ev->cfg.batch_bytes
                            || ev->w.count == EVBATCH_MAX_COUNT)
        && seal_open (ev) < 0)
        goto nomem;
    if (token && ev->nwtok == ev->capwtok) {
        int cap = ev->capwtok ? ev->capwtok * 2 : 64;
        struct token *t = realloc (ev->wtok, cap * sizeof (*t));
        if (!t)
            goto nomem;
        ev->wtok = t;
        ev->capwtok = cap;
    }
    seq = ev->next_seq + 1;
    if (evbatch_add (&ev->w, event, seq) < 0) {
        int saved = errno;
        msg_destroy (&event);
        errno = saved == E2BIG ? EAGAIN : saved;
        return -1;
    }
    msg_destroy (&event);
    ev->next_seq = seq;
    ev->published++;
    ev->queued_bytes += size;
    if (ev->queued_bytes > ev->queued_max)
        ev->queued_max = ev->queued_bytes;
    if (ev->w.count == 1)
        ev->w_opened = ev->now;
    if (token)
        ev->wtok[ev->nwtok++] = (struct token){ token, seq };
    when = due (ev);
    if (when < ev->armed)
        arm (ev, when);
    return seq;
nomem:
    msg_destroy (&event);
    errno = ENOMEM;
    return -1;
}

/* ---- receiving ------------------------------------------------------------ */

void evlayer_recv_batch (struct evlayer *ev, uint32_t source, uint32_t via,
                         int kind, struct frame *batch,
                         const struct evbatch_hdr *h)
{
    struct held hd = { .first = h->first, .last = h->last,
                       .count = h->count,
                       .bytes = frame_size (batch) + HELD_OVERHEAD };

    now_of (ev);
    if (ev->rank == 0)
        return;     /* rank 0 makes batches; it never needs them back */
    if (kind == EV_TREE ? !is_ancestor (ev, source)
                        : (via != source
                           || !asked_for (ev, source, h->first, h->last))) {
        ev->rejected++;
        warn_counted (ev, ev->rejected, kind == EV_TREE
                      ? "dropped a batch from a rank that is not a tree "
                        "ancestor" : "dropped a repair nobody asked for",
                      h->first, h->last);
        return;
    }
    if (ev->have_base && h->last - ev->last > SEQ_SANE
        && h->last > ev->last) {
        ev->rejected++;
        warn_counted (ev, ev->rejected, "dropped a batch far beyond the "
                      "sequence", h->first, h->last);
        return;
    }
    ev->batches++;
    if (!ev->have_base) {
        /* joining: our sequence starts with this batch */
        ev->have_base = 1;
        ev->last = ev->high = h->first - 1;
    }
    if (h->last <= ev->last || store_overlaps (&ev->early, h->first, h->last)) {
        ev->duplicates++;
        return;
    }
    if (h->last > ev->high)
        ev->high = h->last;
    /* Forward on first sight, however it came: our subtree depends on us
     * even when we got it by repair. */
    forward_down (ev, batch, NULL);
    if (kind == EV_REPAIR)
        ev->repaired += h->count;
    hd.f = frame_incref (batch);
    if (h->first <= ev->last + 1) {
        deliver (ev, &hd);
        ring_add (ev, &hd);
        drain_early (ev);
    }
    else
        early_add (ev, &hd);
    if (ev->rep.active && kind == EV_REPAIR && !have_gap (ev))
        ev->rep.active = 0;
    repair_kick (ev);
}

static void recv_sync (struct evlayer *ev, uint32_t source, json_t *o)
{
    json_int_t seq, epoch = 0, gone = 0, base = 0;

    if (json_unpack (o, "{s:I s?I s?I s?I}", "seq", &seq, "epoch", &epoch,
                     "gone", &gone, "base", &base) < 0
        || seq < 0 || seq > UINT32_MAX || gone < 0 || gone > seq || base < 0
        || base > seq) {
        ev->rejected++;
        return;
    }
    /* Checked before it goes on down the tree. */
    if (!is_ancestor (ev, source)
        || ((uint64_t)epoch == ev->root_epoch && (uint32_t)seq < ev->sync_seq)
        || (ev->have_base && (uint32_t)seq > ev->last
            && (uint32_t)seq - ev->last > SEQ_SANE)) {
        ev->rejected++;
        warn_counted (ev, ev->rejected, "dropped a sync that is not rank 0's",
                      (uint32_t)seq, (uint32_t)seq);
        return;
    }
    forward_down (ev, NULL, o);
    if ((uint64_t)epoch != ev->root_epoch && ev->root_epoch != 0)
        ev->ops->log (ev->arg, LOG_NOTICE, "events: rank 0 restarted; its "
                      "sequence goes on after %u", (unsigned)base);
    ev->root_epoch = (uint64_t)epoch;
    ev->root_base = (uint32_t)base;
    ev->root_gone = (uint32_t)gone;
    ev->sync_seq = (uint32_t)seq;
    if (!ev->have_base) {
        ev->have_base = 1;
        ev->last = ev->high = (uint32_t)seq;
        return;
    }
    if ((uint32_t)seq > ev->high)
        ev->high = (uint32_t)seq;
    /* Rank 0 dropped what we miss from its buffer: lost, at once, in one
     * notice (not for what an earlier rank 0 numbered: it cannot know). */
    if (ev->root_gone > ev->last && ev->last >= ev->root_base) {
        uint32_t end = gap_end (ev);
        declare_lost (ev, ev->last + 1, ev->root_gone < end ? ev->root_gone
                                                            : end);
    }
    repair_kick (ev);
}

void evlayer_recv_control (struct evlayer *ev, uint32_t source,
                           uint32_t via, int kind, json_t *o)
{
    json_int_t seq;

    now_of (ev);
    switch (kind) {
    case EV_CTL_SYNC:
        if (ev->rank != 0)
            recv_sync (ev, source, o);
        break;
    case EV_CTL_REPAIR_REQ:
        /* Only to the neighbour that asked, never to a claimed source. */
        if (via != source) {
            ev->rejected++;
            break;
        }
        serve_repair (ev, via, o);
        break;
    case EV_CTL_REPAIR_END:
        recv_end (ev, source, via, o);
        break;
    case EV_CTL_SEQ_QUERY:
        if (source == 0 && ev->rank != 0) {
            json_t *r = json_pack ("{s:I}", "seq", (json_int_t)ev->high);
            if (r)
                ev->ops->control (ev->arg, 0, EV_CTL_SEQ_REPORT, r);
            json_decref (r);
        }
        break;
    case EV_CTL_SEQ_REPORT:
        if (ev->rank == 0 && json_unpack (o, "{s:I}", "seq", &seq) == 0
            && seq >= 0 && seq <= UINT32_MAX)
            learn_report (ev, source, (uint32_t)seq);
        break;
    default:
        ev->rejected++;
        break;
    }
}

/* ---- timers and hellos ------------------------------------------------- */

static void send_sync (struct evlayer *ev)
{
    json_t *o = json_pack ("{s:I s:I s:I s:I}", "seq",
                           (json_int_t)ev->sent_seq, "epoch",
                           (json_int_t)ev->cfg.epoch, "gone",
                           (json_int_t)ev->gone, "base",
                           (json_int_t)ev->root_base);
    if (o)
        forward_down (ev, NULL, o);
    json_decref (o);
}

void evlayer_tick (struct evlayer *ev, double now)
{
    ev->now = now;
    if (ev->rank == 0) {
        learn_check (ev, 1);
        if (ev->can_publish && ev->sent_seq > 0
            && now - ev->last_sync >= ev->cfg.sync_period) {
            ev->last_sync = now;
            send_sync (ev);
        }
        return;
    }
    if (ev->rep.active && now >= ev->rep.deadline)
        repair_step (ev, 0, 0, 0);      /* no answer: the next peer */
    else if (!ev->rep.active)
        repair_kick (ev);
}

void evlayer_seq_hint (struct evlayer *ev, uint32_t rank, uint32_t seq)
{
    now_of (ev);
    if (ev->rank == 0) {
        learn_report (ev, rank, seq);
        return;
    }
    /* A broker (re)joining starts where its tree parent is. */
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

json_t *evlayer_stats (const struct evlayer *ev)
{
    json_t *o = json_pack ("{s:I s:I s:I s:I s:I s:I s:I s:I s:I s:I s:I"
                           " s:I s:I s:I s:I s:I s:I s:I s:b}",
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
                           "evicted", (json_int_t)ev->evictions,
                           "held", (json_int_t)ev->early.events,
                           "held_bytes", (json_int_t)ev->early.bytes,
                           "buffered", (json_int_t)ev->ring.events,
                           "buffered_bytes", (json_int_t)ev->ring.bytes,
                           "repairing", ev->rep.active);
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
            json_object_update (o, r);
        json_decref (r);
    }
    return o;
}
