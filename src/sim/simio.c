/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* simio.c: the virtual network, and the io of one broker (struct ovl_io).
 *
 * Every callback the core makes of the world lands here, in one table
 * (sim_io): sending puts the wire frame on a link toward the peer's
 * current process (or holds it for the peer's next process, as libzmq
 * does for a peer we connected to), connecting completes a handshake
 * after a round trip, the clock is the virtual clock seen from this
 * host, wakeups become queue events; deliver, request and respond go to
 * the mini-broker (simbroker.c), view changes to the observer
 * (simview.c).  Delivery at the other end hands the frame to the
 * receiver's overlay_recv, or queues it while the receiver is hung.
 *
 * Messages carry their wire frame by reference (the frame taken from the
 * sender's io->send is handed to the receiver's overlay_recv), so a
 * forwarded message is never copied.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simnet_int.h"

/* ---- messages ---------------------------------------------------------- */

static void mlist_push (struct mlist *l, struct smsg *m)
{
    m->next = NULL;
    if (l->tail)
        l->tail->next = m;
    else
        l->head = m;
    l->tail = m;
    l->count++;
}

struct smsg *sim_mlist_pop (struct mlist *l)
{
    struct smsg *m = l->head;

    if (m) {
        l->head = m->next;
        if (!l->head)
            l->tail = NULL;
        l->count--;
    }
    return m;
}

/* Messages of up to SMSG_POOLED frames (most: keepalives, control) come
 * from and go back to a free list: no malloc per message. */
static struct smsg *smsg_alloc (struct simnet *s, int n)
{
    struct smsg *m;

    if (n <= SMSG_POOLED && (m = s->pool)) {
        s->pool = m->next;
        return m;
    }
    if (!(m = malloc (sizeof (*m) + (n <= SMSG_POOLED ? SMSG_POOLED : n)
                                     * sizeof (m->frames[0]))))
        return NULL;
    m->cap = n <= SMSG_POOLED ? SMSG_POOLED : n;
    return m;
}

static void smsg_release (struct simnet *s, struct smsg *m)
{
    if (m->cap == SMSG_POOLED) {
        m->next = s->pool;
        s->pool = m;
    }
    else
        free (m);
}

void sim_smsg_free (struct simnet *s, struct smsg **mp)
{
    if (mp && *mp) {
        frame_decref_all ((*mp)->frames, (*mp)->n);
        smsg_release (s, *mp);
        *mp = NULL;
    }
}

void sim_mlist_free (struct simnet *s, struct mlist *l)
{
    struct smsg *m;

    while ((m = sim_mlist_pop (l)))
        sim_smsg_free (s, &m);
}

void sim_mlist_drop (struct simnet *s, struct mlist *l)
{
    struct smsg *m;

    while ((m = sim_mlist_pop (l))) {
        sim_rpc_dropped (s, m);
        sim_smsg_free (s, &m);
    }
}

bool sim_running (const struct sbroker *b)
{
    return b->state == SB_UP || b->state == SB_HUNG;
}

static struct link *link_get (struct sbroker *b, uint32_t peer)
{
    return idmap_put (b->links, peer, NULL);
}

/* Did b's current process connect to peer? */
bool sim_connected (struct sbroker *b, uint32_t peer)
{
    struct link *l = idmap_get (b->links, peer);
    return l && l->connected;
}

static bool cut (struct simnet *s, uint32_t a, uint32_t c)
{
    return s->partition_split && ((a < s->partition_split)
                                  != (c < s->partition_split));
}

void sim_note_queue (struct simnet *s, uint32_t depth)
{
    if (depth > s->st.deepest_queue)
        s->st.deepest_queue = depth;
}

/* Put m on the wire toward its receiver's current process. */
void sim_transmit (struct simnet *s, struct sbroker *from, struct link *l,
                   struct smsg *m)
{
    struct sbroker *to = &s->b[m->to];
    double at = s->now + s->p.latency;

    if (s->p.jitter > 0)
        at += -s->p.jitter * log (1.0 - sim_rnd_unit (s));
    if (at <= l->last_at)
        at = l->last_at + 1e-9;
    l->last_at = at;
    m->to_gen = to->gen;
    l->inflight++;
    sim_note_queue (s, l->inflight);
    sim_schedule (s, at, EV_DELIVER, m->to, m->from, to->gen, 0, m);
    (void)from;
}

/* ---- delivery at the other end ----------------------------------------- */

/* Hand m to its receiver's core (a message, or a socket event queued
 * while it was hung). */
void sim_recv_msg (struct simnet *s, struct sbroker *to, struct smsg *m)
{
    struct frame *wire;
    char id[16], ep[32];
    uint32_t from = m->from;

    if (m->sock_event >= 0) {
        overlay_sock_event (to->ov, m->sock_event,
                            sim_endpoint (from, ep, sizeof (ep)), NULL);
        free (m);
        return;
    }
    wire = m->frames[0];
    m->frames[0] = NULL;
    m->n = 0;
    smsg_release (s, m);
    snprintf (id, sizeof (id), "%u", (unsigned)from);
    overlay_recv (to->ov, id, strlen (id), &wire, 1, NULL);
}

/* The sender's connection has one message less in flight. */
void sim_delivered (struct simnet *s, struct smsg *m)
{
    struct sbroker *from = &s->b[m->from];
    struct link *l;

    if (from->gen == m->from_gen && (l = idmap_get (from->links, m->to))
        && l->inflight > 0)
        l->inflight--;
}

void sim_on_deliver (struct simnet *s, struct simev *ev)
{
    struct smsg *m = ev->msg;
    struct sbroker *to = &s->b[m->to];

    if (to->gen != m->to_gen || !sim_running (to)) {
        sim_delivered (s, m);
        s->st.lost_msgs++;
        sim_rpc_dropped (s, m);
        sim_smsg_free (s, &m);
        return;
    }
    if (to->state == SB_HUNG) {
        mlist_push (&to->inbound, m);   /* read when it runs again */
        return;
    }
    sim_delivered (s, m);
    sim_recv_msg (s, to, m);
}

void sim_on_sock (struct simnet *s, struct simev *ev)
{
    struct sbroker *b = &s->b[ev->rank];
    char ep[32];

    if (!sim_running (b) || b->gen != ev->b)
        return;
    if (b->state == SB_HUNG) {
        struct smsg *m = calloc (1, sizeof (*m));
        if (m) {
            m->from = (uint32_t)ev->x;
            m->sock_event = (int)ev->a;
            mlist_push (&b->inbound, m);
        }
        return;
    }
    overlay_sock_event (b->ov, ev->a, sim_endpoint ((uint32_t)ev->x, ep,
                                                    sizeof (ep)), NULL);
}

/* ---- the io of one broker: every callback, then the table -------------- */

static int io_send (void *ctx, uint32_t rank, struct frame **wire)
{
    const uint8_t *env = frame_data (*wire);
    struct sbroker *b = ctx;
    struct simnet *s = b->s;
    struct sbroker *to;
    struct link *l;
    struct smsg *m;
    bool connector;

    if (rank >= s->n || rank == b->rank) {
        errno = EHOSTUNREACH;
        return -1;
    }
    to = &s->b[rank];
    l = idmap_get (b->links, rank);
    connector = l && l->connected;
    /* the binder side knows the peer only while its connection stands */
    if (!connector && !(sim_running (to) && sim_connected (to, b->rank))) {
        s->st.ehostunreach++;
        errno = EHOSTUNREACH;
        return -1;
    }
    if (!l && !(l = link_get (b, rank)))
        return -1;
    if (l->inflight + (uint32_t)l->held.count >= (uint32_t)s->p.hwm) {
        s->st.eagain++;
        errno = EAGAIN;
        return -1;
    }
    if (!(m = smsg_alloc (s, 1)))
        return -1;
    m->from = b->rank;
    m->from_gen = b->gen;
    m->sock_event = -1;
    m->to = rank;
    m->n = 1;
    m->frames[0] = *wire;
    *wire = NULL;
    if (frame_size (m->frames[0]) > 2 && env[2] < SIM_KINDS) {
        s->st.msgs[env[2]]++;
        s->st.bytes[env[2]] += frame_size (m->frames[0]);
    }
    if ((s->p.loss > 0 && sim_rnd_unit (s) < s->p.loss)
        || cut (s, b->rank, rank)) {
        s->st.lost_msgs++;
        sim_smsg_free (s, &m);
        return 0;
    }
    if (!sim_running (to)) {
        mlist_push (&l->held, m);   /* delivered to its next process */
        sim_note_queue (s, l->held.count);
        return 0;
    }
    sim_transmit (s, b, l, m);
    return 0;
}

char *sim_endpoint (uint32_t rank, char *buf, size_t len)
{
    snprintf (buf, len, "sim://%u", (unsigned)rank);
    return buf;
}

static int io_connect (void *ctx, uint32_t rank, const char *endpoint,
                       const char *pubkey)
{
    struct sbroker *b = ctx;
    struct simnet *s = b->s;
    char ep[32];
    struct link *l;

    if (rank >= s->n) {
        errno = EINVAL;
        return -1;
    }
    if (!(l = link_get (b, rank))
        || !idmap_put (s->b[rank].connected_by, b->rank, NULL))
        return -1;
    l->connected = true;
    /* the handshake completes if the peer is there */
    if (sim_running (&s->b[rank]))
        sim_schedule (s, s->now + 2 * s->p.latency, EV_SOCK, b->rank,
                      OVL_SOCK_CONNECTED, b->gen, rank, NULL);
    (void)sim_endpoint (rank, ep, sizeof (ep));
    return 0;
}

static void io_disconnect (void *ctx, uint32_t rank, const char *endpoint)
{
    struct sbroker *b = ctx;
    struct link *l = idmap_get (b->links, rank);

    if (rank < b->s->n)
        idmap_delete (b->s->b[rank].connected_by, b->rank);
    if (l) {
        l->connected = false;
        /* what libzmq still queued for the dead peer is gone */
        sim_mlist_drop (b->s, &l->held);
    }
}

static int io_authorize (void *ctx, const char *pubkey)
{
    return 0;
}

/* A broker admitted a peer's connection (sent its HELLO_ACK): the
 * virtual network routes by rank already, so it is only counted. */
static void io_admitted (void *ctx, uint32_t rank)
{
    struct sbroker *b = ctx;

    (void)rank;
    b->s->st.admissions++;
}

static double io_now (void *ctx)
{
    struct sbroker *b = ctx;
    return b->s->now + b->mono_base;
}

static void io_wakeup (void *ctx, double when)
{
    struct sbroker *b = ctx;

    b->wake_gen++;
    when -= b->mono_base;   /* the host's clock to simulated time */
    if (!isinf (when) && !b->s->destroying)
        sim_schedule (b->s, when > b->s->now ? when : b->s->now, EV_WAKE,
                      b->rank, (uint32_t)b->wake_gen, b->gen, 0, NULL);
}

static uint64_t io_random (void *ctx)
{
    return sim_rnd (((struct sbroker *)ctx)->s);
}

static void io_log (void *ctx, int level, const char *fmt, va_list ap)
{
    struct sbroker *b = ctx;
    FILE *f = b->s->p.log;

    if (!f || level > LOG_INFO)
        return;
    fprintf (f, "%.6f %u log: ", b->s->now, (unsigned)b->rank);
    vfprintf (f, fmt, ap);
    fputc ('\n', f);
}

static int io_deliver (void *ctx, msg_t *msg, const struct bgn_msg_info *info)
{
    struct sbroker *b = ctx;

    switch (msg_get_type (msg)) {
    case MSGTYPE_REQUEST:
        sim_route_request (b, msg, info);
        return 0;
    case MSGTYPE_RESPONSE:
        sim_route_response (b, msg);
        return 0;
    case MSGTYPE_EVENT:
        sim_subscriber_event (b, msg);
        break;
    }
    msg_destroy (&msg);
    return 0;
}

static int io_request (void *ctx, msg_t *msg)
{
    struct sbroker *b = ctx;
    struct bgn_msg_info info = { .source = b->rank };

    /* as the broker stamps a module's */
    msg_set_rolemask (msg, MSG_ROLE_OWNER);
    msg_route_enable (msg);
    sim_route_request (b, msg, &info);
    return 0;
}

static int io_respond (void *ctx, const msg_t *req, const char *payload)
{
    return sim_respond (ctx, req, payload);
}

static int io_respond_error (void *ctx, const msg_t *req, int errnum,
                             const char *errstr)
{
    return sim_respond_error (ctx, req, errnum, errstr);
}

static void io_stop (void *ctx, int exit_code)
{
    struct sbroker *b = ctx;

    /* not from inside the core: exit at the next event */
    sim_schedule (b->s, b->s->now, EV_EXIT, b->rank, (uint32_t)exit_code,
                  b->gen, 0, NULL);
}

static void io_note (void *ctx, enum ovl_note what, uint32_t rank,
                     uint64_t inc)
{
    struct sbroker *b = ctx;

    if (rank < b->s->n && sim_running (b))
        sim_fenced_count (b->s, rank, what == OVL_NOTE_FENCED ? 1 : -1);
}

const struct ovl_io sim_io = {
    .send = io_send,
    .connect = io_connect,
    .disconnect = io_disconnect,
    .authorize = io_authorize,
    .admitted = io_admitted,
    .now = io_now,
    .wakeup = io_wakeup,
    .random = io_random,
    .log = io_log,
    .deliver = io_deliver,
    .request = io_request,
    .respond = io_respond,
    .respond_error = io_respond_error,
    .stop = io_stop,
    .note = io_note,
};
