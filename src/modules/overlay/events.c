/* events.c: sequenced, exactly-once, in-order multicast (see events.h).
 *
 * State per broker: the last seq delivered, events that arrived ahead of
 * it (held until the gap before them is filled), a ring of the last
 * 'buffer' events for answering other brokers' repairs, and at most one
 * repair in progress (a range, the peer asked, a deadline).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "events.h"

#define REPAIR_TIMEOUT 0.5      /* seconds before asking another peer */
#define REPAIR_ATTEMPTS 4       /* peers to ask before declaring a loss */
#define MAX_CHILDREN 256

struct evlayer {
    struct bgn_topo *topo;
    uint32_t rank;
    const struct evlayer_ops *ops;
    void *arg;
    double sync_period;
    double last_sync;

    int have_base;          /* we know where our sequence starts */
    uint32_t last;          /* last seq delivered */
    uint32_t high;          /* highest seq known to exist */
    uint32_t next_seq;      /* rank 0: last seq assigned */
    int can_publish;        /* rank 0: knows the current seq */

    int bufsize;
    msg_t **ring;           /* replay buffer: ring[seq % bufsize] */
    msg_t **held;           /* early arrivals: held[seq % bufsize] */
    int nheld;

    int repairing;
    uint32_t rep_from, rep_to;
    uint32_t rep_nak_to;    /* peers say they lack everything up to this */
    uint32_t rep_nak_root;  /* ... and rank 0, which has all it still can */
    uint32_t rep_mark;      /* 'last' when the current attempt began */
    int rep_attempt;
    double rep_deadline;
    double now;

    /* counters */
    uint64_t delivered, duplicates, repaired, lost, repair_requests,
        repairs_served, too_far;
};

struct evlayer *evlayer_create (struct bgn_topo *topo, uint32_t rank,
                                int buffer, double sync_period,
                                const struct evlayer_ops *ops, void *arg)
{
    struct evlayer *ev;

    if (!topo || !ops || buffer < 16) {
        errno = EINVAL;
        return NULL;
    }
    if (!(ev = calloc (1, sizeof (*ev))))
        return NULL;
    ev->topo = topo;
    ev->rank = rank;
    ev->ops = ops;
    ev->arg = arg;
    ev->bufsize = buffer;
    ev->sync_period = sync_period > 0 ? sync_period : 1.0;
    if (!(ev->ring = calloc (buffer, sizeof (msg_t *)))
        || !(ev->held = calloc (buffer, sizeof (msg_t *)))) {
        evlayer_destroy (&ev);
        return NULL;
    }
    if (rank == 0)
        ev->have_base = 1;
    return ev;
}

void evlayer_destroy (struct evlayer **evp)
{
    if (evp && *evp) {
        struct evlayer *ev = *evp;
        for (int i = 0; ev->ring && i < ev->bufsize; i++) {
            msg_destroy (&ev->ring[i]);
            if (ev->held)
                msg_destroy (&ev->held[i]);
        }
        free (ev->ring);
        free (ev->held);
        free (ev);
        *evp = NULL;
    }
}

static uint32_t seq_of (const msg_t *event)
{
    uint32_t seq = 0;
    msg_get_seq (event, &seq);
    return seq;
}

/* Keep a copy in the replay ring (the slot's older event drops out). */
static void ring_store (struct evlayer *ev, const msg_t *event)
{
    uint32_t seq = seq_of (event);
    msg_t **slot = &ev->ring[seq % ev->bufsize];

    if (*slot && seq_of (*slot) == seq)
        return;
    msg_destroy (slot);
    *slot = msg_copy (event);
}

static const msg_t *ring_get (struct evlayer *ev, uint32_t seq)
{
    msg_t *m = ev->ring[seq % ev->bufsize];
    return m && seq_of (m) == seq ? m : NULL;
}

/* Send to rank's subtree: to rank itself, or, if it is down, to each of
 * its children in turn (recursively), which re-forms the tree. */
static void send_subtree (struct evlayer *ev, uint32_t rank, int depth,
                          const msg_t *event, json_t *sync)
{
    uint32_t kids[MAX_CHILDREN];
    int n;

    if (!ev->ops->is_down (ev->arg, rank)) {
        if (event)
            ev->ops->send (ev->arg, rank, EV_TREE, event);
        else
            ev->ops->control (ev->arg, rank, EV_CTL_SYNC, sync);
        return;
    }
    if (depth > 64)
        return;
    n = bgn_topo_bcast_children (ev->topo, 0, rank, kids, MAX_CHILDREN);
    for (int i = 0; i < n && i < MAX_CHILDREN; i++)
        send_subtree (ev, kids[i], depth + 1, event, sync);
}

static void forward_down (struct evlayer *ev, const msg_t *event, json_t *sync)
{
    uint32_t kids[MAX_CHILDREN];
    int n = bgn_topo_bcast_children (ev->topo, 0, ev->rank, kids,
                                     MAX_CHILDREN);
    for (int i = 0; i < n && i < MAX_CHILDREN; i++)
        send_subtree (ev, kids[i], 0, event, sync);
}

static void deliver (struct evlayer *ev, const msg_t *event)
{
    ev->ops->deliver (ev->arg, event);
    ev->last = seq_of (event);
    ev->delivered++;
}

/* Deliver held events that are now next in line. */
static void drain_held (struct evlayer *ev)
{
    for (;;) {
        uint32_t next = ev->last + 1;
        msg_t **slot = &ev->held[next % ev->bufsize];
        if (!*slot || seq_of (*slot) != next)
            break;
        deliver (ev, *slot);
        msg_destroy (slot);
        ev->nheld--;
    }
    if (ev->repairing && ev->last >= ev->rep_to)
        ev->repairing = 0;
}

static void repair_send (struct evlayer *ev)
{
    uint32_t peer = ev->ops->repair_peer (ev->arg, ev->rep_attempt);

    /* The last attempt goes to rank 0: it holds every recent event. */
    if (ev->rep_attempt == REPAIR_ATTEMPTS - 1 && ev->rank != 0
        && !ev->ops->is_down (ev->arg, 0))
        peer = 0;
    json_t *o;

    ev->rep_deadline = ev->now + REPAIR_TIMEOUT;
    ev->rep_mark = ev->last;
    if (peer == UINT32_MAX)
        return;
    ev->rep_from = ev->last + 1;
    if (ev->high > ev->rep_to)
        ev->rep_to = ev->high;
    if (!(o = json_pack ("{s:I s:I}", "from", (json_int_t)ev->rep_from,
                         "to", (json_int_t)ev->rep_to)))
        return;
    ev->repair_requests++;
    ev->ops->control (ev->arg, peer, EV_CTL_REPAIR_REQ, o);
    json_decref (o);
}

/* Make sure a repair of last+1 .. high is under way. */
static void repair_start (struct evlayer *ev)
{
    if (!ev->have_base || ev->high <= ev->last)
        return;
    if (ev->repairing) {
        if (ev->high > ev->rep_to)
            ev->rep_to = ev->high;
        return;
    }
    ev->repairing = 1;
    ev->rep_from = ev->last + 1;
    ev->rep_to = ev->high;
    ev->rep_attempt = 0;
    ev->rep_nak_to = UINT32_MAX;
    ev->rep_nak_root = UINT32_MAX;
    repair_send (ev);
}

/* No peer had them: skip the missing events before the next held one. */
static void declare_lost (struct evlayer *ev)
{
    uint32_t from = ev->last + 1, to = ev->last;

    while (to < ev->high) {
        uint32_t s = to + 1;
        msg_t *h = ev->held[s % ev->bufsize];
        if (h && seq_of (h) == s)
            break;
        to = s;
    }
    /* Only what peers said they no longer have is lost; newer events
     * they do have are fetched by the next repair. */
    uint32_t nak = ev->rep_nak_root != UINT32_MAX ? ev->rep_nak_root
                                                  : ev->rep_nak_to;
    if (nak != UINT32_MAX && nak < to)
        to = nak;
    if (to >= from) {
        ev->lost += to - from + 1;
        ev->ops->lost (ev->arg, from, to);
        ev->last = to;
    }
    ev->repairing = 0;
    drain_held (ev);
    repair_start (ev);
}

static void accept_event (struct evlayer *ev, msg_t *event)
{
    uint32_t seq = seq_of (event);

    if (seq > ev->high)
        ev->high = seq;
    if (seq == ev->last + 1) {
        deliver (ev, event);
        msg_destroy (&event);
        drain_held (ev);
    }
    else if (seq - ev->last >= (uint32_t)ev->bufsize) {
        /* too far ahead to hold: the repair will fetch it again */
        ev->too_far++;
        msg_destroy (&event);
    }
    else {
        msg_t **slot = &ev->held[seq % ev->bufsize];
        if (*slot && seq_of (*slot) == seq)
            msg_destroy (&event);   /* already held */
        else {
            if (*slot)
                ev->nheld--;
            msg_destroy (slot);
            *slot = event;
            ev->nheld++;
        }
    }
    repair_start (ev);
}

int64_t evlayer_publish (struct evlayer *ev, msg_t *event)
{
    if (ev->rank != 0) {
        msg_destroy (&event);
        errno = EINVAL;
        return -1;
    }
    if (!ev->can_publish) {
        msg_destroy (&event);
        errno = EAGAIN;
        return -1;
    }
    uint32_t seq = ++ev->next_seq;
    msg_set_seq (event, seq);
    ring_store (ev, event);
    forward_down (ev, event, NULL);
    ev->high = seq;
    deliver (ev, event);
    msg_destroy (&event);
    return seq;
}

void evlayer_recv_event (struct evlayer *ev, uint32_t from, int kind,
                         msg_t *event)
{
    uint32_t seq = seq_of (event);

    if (seq == 0 || msg_get_type (event) != MSGTYPE_EVENT) {
        msg_destroy (&event);
        return;
    }
    if (!ev->have_base) {
        /* joining: this is where our sequence starts */
        ev->have_base = 1;
        ev->last = seq - 1;
    }
    msg_t *h = ev->held[seq % ev->bufsize];
    if (seq <= ev->last || (h && seq_of (h) == seq)) {
        ev->duplicates++;
        msg_destroy (&event);
        return;
    }
    /* Forward on first sight, however it came: our subtree depends on
     * us even when we got it by repair.  (An event seen before but too
     * far ahead to hold is in the ring, not delivered: take it now.) */
    if (!ring_get (ev, seq)) {
        ring_store (ev, event);
        forward_down (ev, event, NULL);
    }
    if (kind == EV_REPAIR)
        ev->repaired++;
    accept_event (ev, event);
}

static void serve_repair (struct evlayer *ev, uint32_t from, json_t *o)
{
    json_int_t a, b;
    uint32_t missing_to = 0;

    if (json_unpack (o, "{s:I s:I}", "from", &a, "to", &b) < 0 || a < 1
        || b < a)
        return;
    if (b - a > ev->bufsize)
        b = a + ev->bufsize;
    for (json_int_t s = a; s <= b; s++) {
        const msg_t *m = ring_get (ev, (uint32_t)s);
        if (m) {
            ev->ops->send (ev->arg, from, EV_REPAIR, m);
            ev->repairs_served++;
        }
        else if ((uint32_t)s > missing_to)
            missing_to = (uint32_t)s;
    }
    if (missing_to) {
        json_t *nak = json_pack ("{s:I s:I}", "from", a,
                                 "to", (json_int_t)missing_to);
        if (nak)
            ev->ops->control (ev->arg, from, EV_CTL_REPAIR_NAK, nak);
        json_decref (nak);
    }
}

void evlayer_recv_control (struct evlayer *ev, uint32_t from, int kind,
                           json_t *o)
{
    json_int_t seq;

    switch (kind) {
    case EV_CTL_SYNC:
        if (json_unpack (o, "{s:I}", "seq", &seq) < 0 || seq < 0)
            return;
        forward_down (ev, NULL, o);
        if (!ev->have_base) {
            ev->have_base = 1;
            ev->last = ev->high = (uint32_t)seq;
            return;
        }
        if ((uint32_t)seq > ev->high)
            ev->high = (uint32_t)seq;
        repair_start (ev);
        break;
    case EV_CTL_REPAIR_REQ:
        serve_repair (ev, from, o);
        break;
    case EV_CTL_REPAIR_NAK: {
        /* that peer cannot help (with part of the range): note what it
         * lacks and ask the next one now */
        json_int_t a, b;
        if (json_unpack (o, "{s:I s:I}", "from", &a, "to", &b) == 0
            && a <= (json_int_t)ev->last + 1 && b >= 0) {
            if (from == 0)
                ev->rep_nak_root = (uint32_t)b;
            else if ((uint32_t)b < ev->rep_nak_to)
                ev->rep_nak_to = (uint32_t)b;
        }
        if (ev->repairing) {
            if (++ev->rep_attempt >= REPAIR_ATTEMPTS)
                declare_lost (ev);
            else
                repair_send (ev);
        }
        break;
    }
    default:
        break;
    }
}

void evlayer_tick (struct evlayer *ev, double now)
{
    ev->now = now;
    if (ev->rank == 0 && ev->can_publish && ev->next_seq > 0
        && now - ev->last_sync >= ev->sync_period) {
        json_t *o = json_pack ("{s:I}", "seq", (json_int_t)ev->next_seq);
        ev->last_sync = now;
        if (o)
            forward_down (ev, NULL, o);
        json_decref (o);
    }
    if (ev->repairing && now >= ev->rep_deadline) {
        /* still getting somewhere: keep going without counting a failure */
        if (ev->last > ev->rep_mark) {
            ev->rep_from = ev->last + 1;
            if (ev->high > ev->rep_to)
                ev->rep_to = ev->high;
            repair_send (ev);
            return;
        }
        if (++ev->rep_attempt >= REPAIR_ATTEMPTS)
            declare_lost (ev);
        else
            repair_send (ev);
    }
}

void evlayer_seq_hint (struct evlayer *ev, uint32_t seq)
{
    if (ev->rank != 0) {
        /* The first peer we meet says where our sequence starts: 0 for a
         * broker there from the beginning, the current seq for one that
         * (re)joins later.  Anything missed after that is a gap. */
        if (!ev->have_base) {
            ev->have_base = 1;
            ev->last = ev->high = seq;
        }
        return;
    }
    if (seq > ev->next_seq) {
        ev->next_seq = seq;
        ev->last = ev->high = seq;
    }
    ev->can_publish = 1;
}

void evlayer_set_ready (struct evlayer *ev)
{
    ev->can_publish = 1;
}

uint32_t evlayer_last (const struct evlayer *ev)
{
    return ev->last;
}

json_t *evlayer_stats (const struct evlayer *ev)
{
    return json_pack ("{s:I s:I s:I s:I s:I s:I s:I s:I s:i s:b}",
                      "last_seq", (json_int_t)ev->last,
                      "delivered", (json_int_t)ev->delivered,
                      "duplicates", (json_int_t)ev->duplicates,
                      "repaired", (json_int_t)ev->repaired,
                      "lost", (json_int_t)ev->lost,
                      "repair_requests", (json_int_t)ev->repair_requests,
                      "repairs_served", (json_int_t)ev->repairs_served,
                      "too_far", (json_int_t)ev->too_far,
                      "held", ev->nheld,
                      "repairing", ev->repairing);
}
