/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* evdeliver.c: the event layer's delivery, buffers and tree
 * (evlayer_int.h).
 *
 * What the layer's upper files (events.c, evsync.c, evjoin.c,
 * evrepair.c, evroot.c, evsign.c) all need: the clock and counted
 * warnings, handing batches to the subscribers in order, the replay
 * buffer and the early-arrival buffer, declaring a gap lost, who may
 * send us the tree, and sending down rank 0's tree around fenced ranks.  It sits below them so that they call it one way; it
 * calls only the stores (evstore.c) and the layer's ops.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "evlayer_int.h"

/* ---- the time, warnings, the gap ------------------------------------ */

void evl_warn_counted (struct evlayer *ev, uint64_t n, const char *what,
                          uint32_t a, uint32_t b)
{
    if (n == 1 || n % LOG_EVERY == 0)
        ev->ops->log (ev->arg, LOG_WARNING, "events: %s (seqs %u..%u; %llu "
                      "so far)", what, (unsigned)a, (unsigned)b,
                      (unsigned long long)n);
}

void evl_arm (struct evlayer *ev, double when)
{
    if (when == ev->armed)
        return;
    ev->armed = when;
    if (ev->ops->arm)
        ev->ops->arm (ev->arg, when);
}

double evl_now (struct evlayer *ev)
{
    if (ev->ops->now)
        ev->now = ev->ops->now (ev->arg);
    return ev->now;
}

/* The end of the gap after 'last': the seq before the first held batch,
 * or the highest seq known. */
uint32_t evl_gap_end (const struct evlayer *ev)
{
    return ev->early.n ? evstore_at (&ev->early, 0)->first - 1 : ev->high;
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
            ev->ops->send (ev->arg, rank, kind, batch, NULL);
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

/* Which of kids[0..n-1] has rank in its subtree (rank itself, or an
 * ancestor of it in rank 0's tree): its index, or -1. */
static int owner_of (struct evlayer *ev, uint32_t rank, const uint32_t *kids,
                     int n)
{
    for (int depth = 0; depth <= 64; depth++) {
        int parent;
        for (int i = 0; i < n; i++)
            if (kids[i] == rank)
                return i;
        if (rank == ev->rank || rank == 0
            || (parent = bgn_topo_bcast_parent (ev->topo, 0, rank)) < 0)
            return -1;
        rank = (uint32_t)parent;
    }
    return -1;
}

/* The entries of a checked tags frame whose ranks are in kids[k]'s
 * subtree, for each k, as a frame each (out[k], NULL if none). */
static void split_tags (struct evlayer *ev, struct frame *tags,
                        const uint32_t *kids, int n, struct frame **out)
{
    const uint8_t *data = frame_data (tags);
    uint32_t count, have[MAX_CHILDREN] = { 0 };
    uint8_t *buf[MAX_CHILDREN] = { NULL };
    int *owner;

    for (int k = 0; k < n; k++)
        out[k] = NULL;
    if (evtags_check (data, frame_size (tags), &count, NULL, 0) < 0
        || count == 0 || !(owner = malloc (count * sizeof (*owner))))
        return;
    for (uint32_t i = 0; i < count; i++)
        if ((owner[i] = owner_of (ev, evtags_rank (data, i), kids, n)) >= 0)
            have[owner[i]]++;
    for (int k = 0; k < n; k++)
        if (have[k] > 0 && (buf[k] = malloc (evtags_size (have[k]))))
            evtags_put_header (buf[k], have[k]);
    memset (have, 0, sizeof (have));
    for (uint32_t i = 0; i < count; i++) {
        int k = owner[i];
        if (k >= 0 && buf[k])
            evtags_put_entry (buf[k], have[k]++, evtags_rank (data, i),
                              evtags_tag (data, i));
    }
    for (int k = 0; k < n; k++)
        if (buf[k]) {
            out[k] = frame_create (buf[k], evtags_size (have[k]));
            free (buf[k]);
        }
    free (owner);
}

static void forward_tree (struct evlayer *ev, struct frame *batch,
                          json_t *ctl, struct frame *tags)
{
    uint32_t kids[MAX_CHILDREN];
    struct frame *kid_tags[MAX_CHILDREN];
    int n;

    if (!batch || !tags) {
        n = bgn_topo_bcast_children (ev->topo, 0, ev->rank, kids,
                                     MAX_CHILDREN);
        for (int i = 0; i < n && i < MAX_CHILDREN; i++)
            subtree (ev, kids[i], 0, batch, EV_TREE, ctl, NULL, NULL, 0);
        return;
    }
    /* the same children, around fenced ones, each with its subtree's
     * tags (the rest of us have no use for them) */
    n = evl_effective_children (ev, kids, MAX_CHILDREN);
    if (n >= MAX_CHILDREN) {
        /* the list may be cut short: send untagged, to every one */
        forward_tree (ev, batch, ctl, NULL);
        return;
    }
    split_tags (ev, tags, kids, n, kid_tags);
    for (int k = 0; k < n; k++) {
        ev->ops->send (ev->arg, kids[k], EV_TREE, batch, kid_tags[k]);
        frame_decref (&kid_tags[k]);
    }
}

static int in_list (const uint32_t *v, int n, uint32_t rank)
{
    for (int i = 0; i < n; i++)
        if (v[i] == rank)
            return 1;
    return 0;
}

/* The neighbours that asked us for the tree in a suspect parent's place
 * (evl_adopt) get each batch too, untagged: the tags are for our
 * subtree, and rank 0's signature vouches for it to them. */
static void send_adopted (struct evlayer *ev, struct frame *batch)
{
    uint32_t kids[MAX_CHILDREN];
    int nk = -1;

    for (int i = 0; i < ev->nadopted; i++) {
        struct adoptee *a = &ev->adopted[i];
        if (ev->now >= a->until || ev->ops->is_down (ev->arg, a->rank))
            continue;
        if (nk < 0)
            nk = evl_effective_children (ev, kids, MAX_CHILDREN);
        if (!in_list (kids, nk, a->rank))
            ev->ops->send (ev->arg, a->rank, EV_TREE, batch, NULL);
    }
}

void evl_forward_down (struct evlayer *ev, struct frame *batch, json_t *ctl,
                       struct frame *tags)
{
    if (batch && ev->nadopted > 0)
        send_adopted (ev, batch);
    forward_tree (ev, batch, ctl, tags);
}

int evl_adopt (struct evlayer *ev, uint32_t child)
{
    int n = 0;

    /* the expired go first */
    for (int i = 0; i < ev->nadopted; i++)
        if (ev->adopted[i].until > ev->now && ev->adopted[i].rank != child)
            ev->adopted[n++] = ev->adopted[i];
    ev->nadopted = n;
    if (n == ADOPT_MAX)
        return -1;
    ev->adopted[ev->nadopted++] = (struct adoptee){ child,
                                                    ev->now + ADOPT_TTL };
    return 0;
}

uint32_t evl_tree_parent (struct evlayer *ev)
{
    for (int i = 0; i < ev->nanc; i++)
        if (!ev->ops->is_down (ev->arg, ev->ancestors[i]))
            return ev->ancestors[i];
    return UINT32_MAX;
}

/* Who may send us tree traffic (batches, SYNCs) unsigned: the nearest
 * ancestor that is not fenced, since the tree re-forms around fenced
 * ones.  Its word is taken only as it sent it: when it is a graph
 * neighbour its frames come over its own link, so a frame naming it (or
 * any other ancestor, rank 0 included) as source that another peer
 * passes us is refused -- no peer can speak as rank 0 or as our parent.
 * A farther ancestor (our parent is fenced) reaches us through the
 * overlay, relayed by whoever routes it.  Where rank 0 signs, its
 * signature vouches for what any peer passes on (evlayer_recv_batch,
 * evsync_recv). */
int evl_tree_sender_ok (struct evlayer *ev, uint32_t source, uint32_t via)
{
    uint32_t expect = evl_tree_parent (ev);

    if (expect == UINT32_MAX || source != expect)
        return 0;
    if (bgn_topo_linked (ev->topo, ev->rank, expect))
        return via == expect;
    return 1;
}

void evl_sync_sideways (struct evlayer *ev, json_t *ctl, uint32_t except)
{
    uint32_t nb[MAX_NEIGHBOURS], kids[MAX_CHILDREN];
    int n = bgn_topo_neighbours (ev->topo, ev->rank, nb, MAX_NEIGHBOURS);
    int nk = evl_effective_children (ev, kids, MAX_CHILDREN);

    for (int i = 0; i < n; i++) {
        if (nb[i] == except || nb[i] == 0 || in_list (kids, nk, nb[i])
            || ev->ops->is_down (ev->arg, nb[i]))
            continue;
        ev->syncs_relayed++;
        ev->ops->control (ev->arg, nb[i], EV_CTL_SYNC, ctl);
    }
}

/* The ranks that would get a batch from us now. */
int evl_effective_children (struct evlayer *ev, uint32_t *list, int max)
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

void evl_deliver (struct evlayer *ev, const struct held *h)
{
    uint32_t from = ev->last + 1;

    ev->ops->deliver (ev->arg, h->f, from);
    ev->delivered += from <= h->first ? h->count : h->last - from + 1;
    ev->last = h->last;
    if (ev->high < ev->last)
        ev->high = ev->last;
}

/* Keep a delivered batch for repairs (reference taken over); the oldest
 * drop out past the bounds (the byte bound counts the store's array
 * too: each eviction frees a frame and leaves a free slot). */
void evl_ring_add (struct evlayer *ev, struct held *h)
{
    if (evstore_overlaps (&ev->ring, h->first, h->last)
        || evstore_insert (&ev->ring, h) < 0) {
        frame_decref (&h->f);
        return;
    }
    while (ev->ring.n > 0
           && (ev->ring.events > (uint64_t)ev->cfg.buffer
               || evstore_memory (&ev->ring) > ev->cfg.buffer_bytes)) {
        if (evstore_at (&ev->ring, 0)->last > ev->gone)
            ev->gone = evstore_at (&ev->ring, 0)->last;
        evstore_remove (&ev->ring, 0, NULL);
        ev->evictions++;
    }
}

/* Deliver held batches that are now next in line. */
void evl_drain_early (struct evlayer *ev)
{
    struct held h;

    while (ev->early.n > 0 && evstore_at (&ev->early, 0)->first <= ev->last + 1) {
        evstore_remove (&ev->early, 0, &h);
        if (h.last > ev->last)
            evl_deliver (ev, &h);
        evl_ring_add (ev, &h);
    }
}

/* Hold a batch that came past a gap (reference taken over).  When full,
 * the batch farthest ahead goes: the repair fetches it again later. */
void evl_early_add (struct evlayer *ev, struct held *h)
{
    while (evstore_full (&ev->early, &ev->cfg, h->count, h->bytes)
           && ev->early.n > 0
           && evstore_at (&ev->early, ev->early.n - 1)->first > h->first) {
        struct held *far = evstore_at (&ev->early, ev->early.n - 1);
        ev->early_drops++;
        evl_warn_counted (ev, ev->early_drops, "early-arrival buffer full, "
                      "dropped a batch (overlay.event_buffer*)", far->first,
                      far->last);
        evstore_remove (&ev->early, ev->early.n - 1, NULL);
    }
    if (evstore_full (&ev->early, &ev->cfg, h->count, h->bytes)
        || evstore_insert (&ev->early, h) < 0) {
        ev->early_drops++;
        evl_warn_counted (ev, ev->early_drops, "early-arrival buffer full, "
                      "dropped a batch (overlay.event_buffer*)", h->first,
                      h->last);
        frame_decref (&h->f);
    }
}

void evl_declare_lost (struct evlayer *ev, uint32_t from, uint32_t to)
{
    if (to < from || from != ev->last + 1)
        return;
    ev->lost += (uint64_t)to - from + 1;
    ev->lost_ranges++;
    ev->ops->lost (ev->arg, from, to);
    ev->last = to;
    if (ev->high < to)
        ev->high = to;
    evl_drain_early (ev);
}
