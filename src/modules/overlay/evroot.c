/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* evroot.c: rank 0's side of the event layer (evlayer_int.h).
 *
 * After a start, rank 0 first learns where the sequence is (its tree
 * children tell their highest seq) so that no seq is used twice; then it
 * numbers published events, packs those published close together into one
 * batch, holds batches while a child's queue is full, and answers each
 * publisher once its batch has left.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "evlayer_int.h"

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
void evroot_learn_check (struct evlayer *ev, int query)
{
    uint32_t kids[MAX_CHILDREN];
    int n, missing = 0;
    json_t *q = NULL;

    if (!ev->learning)
        return;
    n = evl_effective_children (ev, kids, MAX_CHILDREN);
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

void evroot_learn_report (struct evlayer *ev, uint32_t rank, uint32_t seq)
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
    evl_now (ev);
    evroot_learn_check (ev, 0);
}

void evlayer_set_ready (struct evlayer *ev)
{
    if (ev->learning)
        learn_finish (ev, 0);
}

/* ---- rank 0: batches out ----------------------------------------------- */

/* Close the open batch and queue it. */
static int seal_open (struct evlayer *ev)
{
    struct outbatch *ob;

    if (ev->w.count == 0)
        return 0;
    if (ev->nout == ev->capout) {
        int cap = ev->capout ? ev->capout * 2 : 4;
        struct outbatch *q = realloc (ev->outq, cap * sizeof (*q));
        if (!q)
            return -1;
        ev->outq = q;
        ev->capout = cap;
    }
    if (evbatch_seal (&ev->w) < 0)
        return -1;
    ob = &ev->outq[ev->nout];
    if (!(ob->f = evl_sealed_frame (ev, ev->w.buf, ev->w.len)))
        return -1;
    ob->first = ev->w.first;
    ob->last = ev->w.last;
    ob->count = ev->w.count;
    ob->bytes = ev->w.len;
    ob->tok = ev->wtok;
    ob->ntok = ev->nwtok;
    ob->captok = ev->capwtok;
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
    n = evl_effective_children (ev, kids, MAX_CHILDREN);
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
                      .bytes = evstore_cost (ob.f),
                      .f = ob.f };
    struct frame *tags;

    memmove (&ev->outq[0], &ev->outq[1], (ev->nout - 1) * sizeof (ob));
    ev->nout--;
    tags = evl_root_tags (ev, ob.f);
    evl_forward_down (ev, ob.f, NULL, tags);
    frame_decref (&tags);
    evl_deliver (ev, &h);
    evl_ring_add (ev, &h);
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

void evroot_flush (struct evlayer *ev, double now)
{
    double next;

    ev->now = now;
    ev->armed = INFINITY;
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
        evl_arm (ev, next);
}

size_t evroot_queue_memory (const struct evlayer *ev)
{
    size_t m = (size_t)ev->capout * sizeof (struct outbatch)
               + (size_t)ev->capwtok * sizeof (struct token) + ev->w.cap;

    for (int i = 0; i < ev->nout; i++)
        m += frame_footprint (ev->outq[i].f)
             + (size_t)ev->outq[i].captok * sizeof (struct token);
    return m;
}

/* Heap a sealed batch costs beyond its records: its header, signature
 * and frame, and its slot in the queue. */
#define BATCH_COST (EVBATCH_HDR_SIZE + 64 + 64 + sizeof (struct outbatch))

/* The open batch's buffer, reused from batch to batch: it grows by
 * doubling from 4096 bytes to hold a batch of event_batch_bytes (or one
 * larger event), and is not charged to the queue's bound: it comes on
 * top of it (evlayer_memory's bound says so). */
size_t evroot_writer_reserve (const struct evlayer *ev)
{
    size_t cap = 4096;

    while (cap < ev->cfg.batch_bytes)
        cap *= 2;
    return cap > ev->w.cap ? cap : ev->w.cap;
}

/* What 'bytes' more of records will cost, as the bound counts it: the
 * records (they end up in a sealed batch's frame), a new batch's own
 * cost, and the arrays that must grow for them (doubling). */
static size_t room_cost (const struct evlayer *ev, size_t bytes)
{
    size_t cost = bytes;
    int sealed = ev->w.count > 0 && ev->w.len + bytes > ev->cfg.batch_bytes;

    if (ev->w.count == 0 || sealed)
        cost += BATCH_COST;
    if (ev->nout + 1 >= ev->capout)
        cost += (size_t)(ev->capout ? ev->capout : 4)
                * sizeof (struct outbatch);
    if (sealed || ev->nwtok == ev->capwtok)
        cost += (size_t)(ev->capwtok ? ev->capwtok : 4)
                * sizeof (struct token);
    return cost;
}

/* What the queue holds as the bound counts it: its heap but the open
 * batch's buffer, with the open batch's records counted as the frame
 * they become when it is sealed. */
static size_t charged (const struct evlayer *ev)
{
    return evroot_queue_memory (ev) - ev->w.cap
           + (ev->w.count > 0 ? ev->w.len + BATCH_COST : 0);
}

/* The bound counts allocations, as overlay-status shows them: what the
 * queue holds now and the records to come.  An empty queue takes one
 * event ('single') whatever its size, so that no event is too large to
 * ever go. */
static int room_check (struct evlayer *ev, size_t bytes, int single)
{
    int empty = single && ev->nout == 0 && ev->w.count == 0;

    if (ev->rank != 0) {
        errno = EINVAL;
        return -1;
    }
    if (!ev->can_publish) {
        errno = EAGAIN;
        return -1;
    }
    if (!empty && charged (ev) + room_cost (ev, bytes) > ev->cfg.queue_bytes) {
        ev->refused_full++;
        evl_warn_counted (ev, ev->refused_full, "publish refused: rank 0's queue "
                      "is full (overlay.event_queue_bytes)", ev->sent_seq,
                      ev->next_seq);
        errno = EAGAIN;
        return -1;
    }
    ev->granted = bytes;
    return 0;
}

int evlayer_room (struct evlayer *ev, size_t bytes)
{
    return room_check (ev, bytes, 0);
}

int64_t evlayer_publish (struct evlayer *ev, msg_t *event, void *token)
{
    size_t size;
    uint32_t seq;
    double when;

    size = evbatch_rec_size (event);
    /* events of a group whose room was checked at once go in without a
     * second look (the open batch's buffer may grow on the way) */
    if (size <= ev->granted)
        ev->granted -= size;
    else if (room_check (ev, size, 1) < 0) {
        msg_destroy (&event);
        return -1;
    }
    else
        ev->granted = 0;
    evl_now (ev);
    if (ev->w.count > 0 && (ev->w.len + size > ev->cfg.batch_bytes
                            || ev->w.count == EVBATCH_MAX_COUNT)
        && seal_open (ev) < 0)
        goto nomem;
    if (token && ev->nwtok == ev->capwtok) {
        int cap = ev->capwtok ? ev->capwtok * 2 : 4;
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
        evl_arm (ev, when);
    return seq;
nomem:
    msg_destroy (&event);
    errno = ENOMEM;
    return -1;
}
