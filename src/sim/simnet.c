/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* simnet.c: the overlay's protocol core on a simulated network (simnet.h).
 *
 * One event queue (a binary heap ordered by time, then by the order events
 * were scheduled) drives everything: message deliveries, each broker's
 * core timers (one wakeup per broker, as the io asks), faults and client
 * load.  Each broker is a core (struct overlay) plus what a bgn-broker
 * would do around it: route requests and responses by their route stack,
 * serve "sim.ping" and "event.pub", and be a client that sends requests
 * and checks the events it receives.
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
#include <jansson.h>
#include <string.h>

#include "src/common/libutil/idmap.h"
#include "src/modules/overlay/body.h"
#include "src/modules/overlay/fence.h"
#include "src/modules/overlay/route.h"
#include "simnet.h"

#define WALL_EPOCH 1.7e9          /* the simulated wall clock at time 0 */
/* Each simulated host's monotonic clock reads its uptime: between
 * MONO_MIN and MONO_MIN + MONO_SPREAD seconds at time 0, as a real one
 * would (brokers rarely start at a host's boot), and differently on every
 * host, so no code can mistake one broker's clock for another's. */
#define MONO_MIN 600.0
#define MONO_SPREAD 86400.0

enum evtype {
    EV_DELIVER, EV_WAKE, EV_START, EV_CRASH, EV_HANG, EV_RESUME,
    EV_RESTART, EV_PARTITION, EV_HEAL, EV_SOCK, EV_EXIT,
    EV_RPC_TICK, EV_RPC_DEADLINE, EV_PUB_TICK, EV_SAMPLE, EV_STATUS_ALL,
};

static const char *evname[] = {
    "deliver", "wake", "start", "crash", "hang", "resume", "restart",
    "partition", "heal", "sock", "exit", "rpc", "deadline", "pub", "sample",
    "status-all",
};

struct smsg;

struct simev {
    double t;
    uint64_t seq;
    uint32_t type;
    uint32_t rank;
    uint32_t a;                   /* deliver: sender; sock: event; ... */
    uint32_t b;                   /* deliver: receiver's generation */
    double x;
    struct smsg *msg;
};

/* A message in flight, or held for a peer that is not running. */
#define SMSG_POOLED 2               /* frames of a pooled message */

struct smsg {
    struct smsg *next;            /* in a held or inbound list */
    int cap;                      /* room for this many frames */
    uint32_t from, to;
    uint32_t from_gen, to_gen;    /* the processes it went between */
    int sock_event;               /* inbound only: a socket event, not a
                                     message (-1) */
    int n;
    struct frame *frames[];       /* the wire frame (one) */
};

struct mlist {
    struct smsg *head, *tail;
    int count;
};

/* One direction of traffic, from the broker owning it to a peer. */
struct link {
    double last_at;               /* keeps one connection in order */
    uint32_t inflight;
    bool connected;               /* this process connected to the peer */
    struct mlist held;            /* we connected; the peer is not there */
};

enum { SB_NEVER, SB_UP, SB_HUNG, SB_DOWN };

struct rpc {
    uint32_t dest;
    double sent_at;
    int load;                     /* the load that sent it */
};

struct sbroker {
    struct simnet *s;
    uint32_t rank;
    int state;
    uint32_t gen;                 /* process generation */
    struct overlay *ov;
    double skew;
    double mono_base;             /* this host's monotonic clock at time 0 */
    uint64_t wake_gen;
    struct idmap *links;          /* peer rank -> struct link */
    struct idmap *connected_by;   /* running peers connected to it */
    struct mlist inbound;         /* hung: waiting to be read */
    struct idmap *rpcs;           /* matchtag -> struct rpc */
    bool missed_wake;             /* a wakeup came while hung */
    uint32_t next_tag;
    bool have_base;               /* subscriber: sequence start known */
    uint32_t last_seq;
    char clientid[16];
};

struct execd {
    double failed_at;             /* < 0: not failed */
    bool ran;
    int load;
};

/* Client load (simnet_rpc_load, simnet_event_load). */
struct simload {
    bool events;                  /* publishes, else requests */
    double rate, until;
    uint32_t *from;               /* origin ranks, NULL: any */
    int nfrom;
    uint32_t *to;                 /* destinations, NULL: any */
    int nto;
    int publishers;
    struct sim_rpc_counts rpc;
};

struct simnet {
    struct sim_params p;
    struct bgn_topo *topo;
    struct sbroker *b;
    uint32_t n;
    double now;
    uint64_t seq;
    uint64_t rng;
    struct simev *heap;
    size_t heap_n, heap_cap;
    struct sim_stats st;
    uint32_t *fenced_by;          /* live brokers that have rank fenced */
    uint64_t correct;             /* (live broker, dead rank) fenced pairs */
    uint64_t wrong;               /* (live broker, live rank) fenced pairs */
    double wrong_since;           /* time wrong_fenced_now last changed */
    uint32_t partition_split;     /* 0: none */
    struct idmap *execd;          /* (origin << 32 | tag) -> struct execd */
    int exits[256];
    char instance[40];
    struct simload loads[SIM_LOADS_MAX];
    int nloads;
    uint32_t max_seq;             /* highest event sequence delivered */
    bool was_converged;           /* after the last event */
    double status_asked_at;       /* the status-all probe went out */
    bool destroying;              /* cores going away: no new events */
    struct smsg *pool;            /* free messages of SMSG_POOLED frames */
};

/* ---- random numbers ----------------------------------------------------- */

static uint64_t rnd (struct simnet *s)
{
    s->rng ^= s->rng >> 12;
    s->rng ^= s->rng << 25;
    s->rng ^= s->rng >> 27;
    return s->rng * 2685821657736338717ULL;
}

static double rnd_unit (struct simnet *s)
{
    return (double)(rnd (s) >> 11) / 9007199254740992.0;
}

static uint32_t rnd_below (struct simnet *s, uint32_t n)
{
    return n ? (uint32_t)(rnd (s) % n) : 0;
}

/* ---- the event queue ------------------------------------------------------ */

static bool before (const struct simev *a, const struct simev *b)
{
    return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static void push (struct simnet *s, struct simev ev)
{
    size_t i;

    if (s->heap_n == s->heap_cap) {
        size_t cap = s->heap_cap ? s->heap_cap * 2 : 4096;
        struct simev *h = realloc (s->heap, cap * sizeof (*h));
        if (!h) {
            fprintf (stderr, "bgn-sim: out of memory for events\n");
            exit (1);
        }
        s->heap = h;
        s->heap_cap = cap;
    }
    ev.seq = ++s->seq;
    for (i = s->heap_n++; i > 0; i = (i - 1) / 2) {
        struct simev *parent = &s->heap[(i - 1) / 2];
        if (!before (&ev, parent))
            break;
        s->heap[i] = *parent;
    }
    s->heap[i] = ev;
}

static struct simev pop (struct simnet *s)
{
    struct simev top = s->heap[0], last = s->heap[--s->heap_n];
    size_t i = 0;

    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= s->heap_n)
            break;
        if (c + 1 < s->heap_n && before (&s->heap[c + 1], &s->heap[c]))
            c++;
        if (!before (&s->heap[c], &last))
            break;
        s->heap[i] = s->heap[c];
        i = c;
    }
    if (s->heap_n)
        s->heap[i] = last;
    return top;
}

static void schedule (struct simnet *s, double t, uint32_t type, uint32_t rank,
                      uint32_t a, uint32_t b, double x, struct smsg *msg)
{
    struct simev ev = { .t = t, .type = type, .rank = rank, .a = a, .b = b,
                        .x = x, .msg = msg };
    push (s, ev);
}

/* ---- messages ------------------------------------------------------------ */

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

static struct smsg *mlist_pop (struct mlist *l)
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

static void smsg_free_in (struct simnet *s, struct smsg **mp)
{
    if (mp && *mp) {
        frame_decref_all ((*mp)->frames, (*mp)->n);
        smsg_release (s, *mp);
        *mp = NULL;
    }
}

static void mlist_free (struct simnet *s, struct mlist *l)
{
    struct smsg *m;

    while ((m = mlist_pop (l)))
        smsg_free_in (s, &m);
}

static bool running (const struct sbroker *b)
{
    return b->state == SB_UP || b->state == SB_HUNG;
}

static struct link *link_get (struct sbroker *b, uint32_t peer)
{
    return idmap_put (b->links, peer, NULL);
}

/* Did b's current process connect to peer? */
static bool connected (struct sbroker *b, uint32_t peer)
{
    struct link *l = idmap_get (b->links, peer);
    return l && l->connected;
}

static bool cut (struct simnet *s, uint32_t a, uint32_t c)
{
    return s->partition_split && ((a < s->partition_split)
                                  != (c < s->partition_split));
}

static void note_queue (struct simnet *s, uint32_t depth)
{
    if (depth > s->st.deepest_queue)
        s->st.deepest_queue = depth;
}

/* Put m on the wire toward its receiver's current process. */
static void transmit (struct simnet *s, struct sbroker *from, struct link *l,
                      struct smsg *m)
{
    struct sbroker *to = &s->b[m->to];
    double at = s->now + s->p.latency;

    if (s->p.jitter > 0)
        at += -s->p.jitter * log (1.0 - rnd_unit (s));
    if (at <= l->last_at)
        at = l->last_at + 1e-9;
    l->last_at = at;
    m->to_gen = to->gen;
    l->inflight++;
    note_queue (s, l->inflight);
    schedule (s, at, EV_DELIVER, m->to, m->from, to->gen, 0, m);
    (void)from;
}

/* ---- the io of one broker -------------------------------------------- */

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
    if (!connector && !(running (to) && connected (to, b->rank))) {
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
    if ((s->p.loss > 0 && rnd_unit (s) < s->p.loss) || cut (s, b->rank, rank)) {
        s->st.lost_msgs++;
        smsg_free_in (s, &m);
        return 0;
    }
    if (!running (to)) {
        mlist_push (&l->held, m);   /* delivered to its next process */
        note_queue (s, l->held.count);
        return 0;
    }
    transmit (s, b, l, m);
    return 0;
}

static char *endpoint_of (uint32_t rank, char *buf, size_t len)
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
    if (running (&s->b[rank]))
        schedule (s, s->now + 2 * s->p.latency, EV_SOCK, b->rank,
                  OVL_SOCK_CONNECTED, b->gen, rank, NULL);
    (void)endpoint_of (rank, ep, sizeof (ep));
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
        mlist_free (b->s, &l->held);   /* what libzmq still queued is gone */
    }
}

static int io_authorize (void *ctx, const char *pubkey)
{
    return 0;
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
        schedule (b->s, when > b->s->now ? when : b->s->now, EV_WAKE,
                  b->rank, (uint32_t)b->wake_gen, b->gen, 0, NULL);
}

static uint64_t io_random (void *ctx)
{
    return rnd (((struct sbroker *)ctx)->s);
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

/* ---- the broker around each core ------------------------------------ */

static void route_response (struct sbroker *b, msg_t *rsp);
static void client_response (struct sbroker *b, msg_t *rsp);
static void subscriber_event (struct sbroker *b, const msg_t *ev);

static int respond_error (struct sbroker *b, const msg_t *req, int errnum,
                          const char *errstr)
{
    msg_t *rsp;

    if (msg_get_flags (req) & MSGFLAG_NORESPONSE)
        return 0;
    if (!(rsp = msg_error_response_create (req, errnum, errstr)))
        return -1;
    route_response (b, rsp);
    return 0;
}

static int respond (struct sbroker *b, const msg_t *req, const char *payload)
{
    msg_t *rsp;

    if (msg_get_flags (req) & MSGFLAG_NORESPONSE)
        return 0;
    if (!(rsp = msg_response_create (req, payload)))
        return -1;
    route_response (b, rsp);
    return 0;
}

/* sim.ping ran here: remember it, to catch a run after a failure. */
static void ping_ran (struct sbroker *b, const msg_t *req)
{
    struct simnet *s = b->s;
    uint32_t origin = 0;
    struct execd *e;

    if (msg_route_count (req) < 2
        || !msg_route_id_rank (msg_route_at (req, 0), &origin))
        return;
    uint64_t key = ((uint64_t)origin << 32) | msg_get_matchtag (req);
    if ((e = idmap_get (s->execd, key))) {
        if (e->failed_at >= 0 && !e->ran) {
            s->st.rpc.ran_after_failure++;
            s->loads[e->load].rpc.ran_after_failure++;
        }
        e->ran = true;
    }
}

static void event_pub (struct sbroker *b, const msg_t *req)
{
    struct simnet *s = b->s;
    msg_t *ev;
    int64_t seq;
    char out[64];

    if (b->rank != 0) {
        respond_error (b, req, EHOSTUNREACH, "rank 0 is not reachable");
        return;
    }
    if (!(ev = msg_event_create ("sim.event", msg_get_payload (req, NULL)))) {
        respond_error (b, req, ENOMEM, NULL);
        return;
    }
    if ((seq = overlay_publish (b->ov, ev)) < 0) {
        respond_error (b, req, errno, NULL);
        return;
    }
    snprintf (out, sizeof (out), "{\"seq\":%lld}", (long long)seq);
    respond (b, req, out);
    (void)s;
}

/* A request for this broker's own services. */
static void serve (struct sbroker *b, msg_t *req,
                   const struct bgn_msg_info *info)
{
    const char *topic = msg_get_topic (req);

    if (!strncmp (topic, "overlay.", 8))
        overlay_service (b->ov, req, info);
    else if (!strcmp (topic, "sim.ping")) {
        ping_ran (b, req);
        respond (b, req, NULL);
    }
    else if (!strcmp (topic, "event.pub"))
        event_pub (b, req);
    else
        respond_error (b, req, ENOSYS, NULL);
}

/* What bgn-broker's dispatch does with a request (see dispatch.c). */
static void route_request (struct sbroker *b, msg_t *req,
                           const struct bgn_msg_info *info)
{
    uint32_t nodeid = 0;
    char me[16];
    bool pushed = false;

    msg_get_nodeid (req, &nodeid);
    if (nodeid == b->rank || (nodeid >= NODEID_UPSTREAM && b->rank == 0)) {
        serve (b, req, info);
        msg_destroy (&req);
        return;
    }
    if (nodeid >= b->s->n && nodeid < NODEID_UPSTREAM) {
        respond_error (b, req, EHOSTUNREACH, "no such rank");
        msg_destroy (&req);
        return;
    }
    if (!info->from_overlay) {
        snprintf (me, sizeof (me), "%u", (unsigned)b->rank);
        msg_route_push (req, me);
        pushed = true;
    }
    if (overlay_send (b->ov, &req, nodeid, info) < 0) {
        int errnum = errno;
        if (pushed)
            msg_route_pop (req, NULL, 0);
        respond_error (b, req, errnum, "overlay could not route");
        msg_destroy (&req);
    }
}

static void route_response (struct sbroker *b, msg_t *rsp)
{
    uint32_t rank;

    while (msg_route_count (rsp) > 0) {
        const char *top = msg_route_first (rsp);
        if (!msg_route_id_rank (top, &rank)) {
            msg_route_pop (rsp, NULL, 0);
            client_response (b, rsp);
            msg_destroy (&rsp);
            return;
        }
        if (rank != b->rank) {
            if (overlay_send (b->ov, &rsp, rank, NULL) < 0)
                msg_destroy (&rsp);
            return;
        }
        msg_route_pop (rsp, NULL, 0);
    }
    /* the stack ran out: a request of the core's own */
    if (!strncmp (msg_get_topic (rsp), "overlay.", 8))
        overlay_service (b->ov, rsp, NULL);
    msg_destroy (&rsp);
}

static int io_deliver (void *ctx, msg_t *msg, const struct bgn_msg_info *info)
{
    struct sbroker *b = ctx;

    switch (msg_get_type (msg)) {
    case MSGTYPE_REQUEST:
        route_request (b, msg, info);
        return 0;
    case MSGTYPE_RESPONSE:
        route_response (b, msg);
        return 0;
    case MSGTYPE_EVENT:
        subscriber_event (b, msg);
        break;
    }
    msg_destroy (&msg);
    return 0;
}

static int io_request (void *ctx, msg_t *msg)
{
    struct sbroker *b = ctx;
    struct bgn_msg_info info = { .source = b->rank };

    msg_set_rolemask (msg, MSG_ROLE_OWNER);   /* as the broker stamps a module's */
    msg_route_enable (msg);
    route_request (b, msg, &info);
    return 0;
}

static int io_respond (void *ctx, const msg_t *req, const char *payload)
{
    return respond (ctx, req, payload);
}

static int io_respond_error (void *ctx, const msg_t *req, int errnum,
                             const char *errstr)
{
    return respond_error (ctx, req, errnum, errstr);
}

static void io_stop (void *ctx, int exit_code)
{
    struct sbroker *b = ctx;

    /* not from inside the core: exit at the next event */
    schedule (b->s, b->s->now, EV_EXIT, b->rank, (uint32_t)exit_code, b->gen,
              0, NULL);
}

/* ---- convergence bookkeeping ----------------------------------------- */

static bool is_dead (struct simnet *s, uint32_t rank)
{
    return !running (&s->b[rank]);
}

static void wrong_changes (struct simnet *s, int delta)
{
    s->st.wrong_fence_seconds += s->st.wrong_fenced_now
                                 * (s->now - s->wrong_since);
    s->wrong_since = s->now;
    s->st.wrong_fenced_now += delta;
    if (s->st.wrong_fenced_now > s->st.wrong_fenced_max)
        s->st.wrong_fenced_max = s->st.wrong_fenced_now;
}

/* Live broker's view changed: rank fenced (+1) or unfenced (-1). */
static void fenced_count (struct simnet *s, uint32_t rank, int delta)
{
    uint32_t before = s->fenced_by[rank];

    s->fenced_by[rank] += delta;
    if (is_dead (s, rank))
        s->correct += delta;
    else {
        s->wrong += delta;
        if ((before == 0) != (s->fenced_by[rank] == 0))
            wrong_changes (s, before == 0 ? 1 : -1);
    }
}

static void io_note (void *ctx, enum ovl_note what, uint32_t rank,
                     uint64_t inc)
{
    struct sbroker *b = ctx;

    if (rank < b->s->n && running (b))
        fenced_count (b->s, rank, what == OVL_NOTE_FENCED ? 1 : -1);
}

/* rank started or died: its fences count as right or wrong now. */
static void truth_changes (struct simnet *s, uint32_t rank, bool now_dead)
{
    uint32_t k = s->fenced_by[rank];

    if (now_dead) {
        s->correct += k;
        s->wrong -= k;
        if (k)
            wrong_changes (s, -1);
    }
    else {
        s->correct -= k;
        s->wrong += k;
        if (k)
            wrong_changes (s, 1);
    }
    s->st.last_change = s->now;
}

bool simnet_converged (struct simnet *s)
{
    return s->wrong == 0
           && s->correct == (uint64_t)s->st.live * (s->n - s->st.live);
}

/* Note when the views become the truth again: after a crash or a start
 * (the truth changed) or after survivors were fenced wrongly (the views
 * changed). */
static void check_converged (struct simnet *s)
{
    bool c = simnet_converged (s);

    if (c && !s->was_converged)
        s->st.converged_at = s->now;
    s->was_converged = c;
}

static const struct ovl_io sim_io = {
    .send = io_send,
    .connect = io_connect,
    .disconnect = io_disconnect,
    .authorize = io_authorize,
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

/* ---- broker life cycle ------------------------------------------------- */

/* Bring a new process of rank up: a core with a fresh incarnation from its
 * own wall clock, its peers' endpoints, connected and greeting. */
static void broker_up (struct simnet *s, uint32_t rank)
{
    struct sbroker *b = &s->b[rank];
    double wall = WALL_EPOCH + s->now + b->skew;
    struct ovl_identity id = {
        .rank = rank,
        .size = s->n,
        .incarnation = (uint64_t)(wall * 1e6),
        .hostname = "sim",
        .instance = s->instance,
        .pubkey = "",
        .endpoint = "",
        .wall_offset = WALL_EPOCH + b->skew - b->mono_base,
    };
    char ep[32];

    if (running (b))
        return;
    if (b->state == SB_NEVER)
        s->st.never_started--;
    else
        s->st.dead--;
    s->st.live++;
    b->gen++;
    b->state = SB_UP;
    b->have_base = false;
    b->last_seq = 0;
    truth_changes (s, rank, false);
    if (!(b->ov = overlay_create (&s->p.cfg, &id, &sim_io, b))) {
        fprintf (stderr, "bgn-sim: rank %u: cannot create its core\n",
                 (unsigned)rank);
        exit (1);
    }
    for (int i = 0; i < overlay_peer_count (b->ov); i++) {
        uint32_t peer = overlay_peer_rank (b->ov, i);
        overlay_set_peer (b->ov, peer, endpoint_of (peer, ep, sizeof (ep)),
                          "");
    }
    overlay_start (b->ov);
    /* peers that connected to this rank complete their handshakes, and
     * what they queued for it arrives */
    struct idmap_iter it;
    uint32_t *peers = calloc (idmap_size (b->connected_by) + 1,
                              sizeof (*peers));
    size_t np = 0;
    for (void *v = idmap_first (b->connected_by, &it); v && peers;
         v = idmap_next (&it))
        peers[np++] = (uint32_t)it.id;
    for (size_t i = 0; i < np; i++) {
        uint32_t r = peers[i];
        struct sbroker *p = &s->b[r];
        struct link *l;
        if (r == rank || !running (p) || !connected (p, rank))
            continue;
        schedule (s, s->now + 2 * s->p.latency, EV_SOCK, r,
                  OVL_SOCK_CONNECTED, p->gen, rank, NULL);
        if ((l = idmap_get (p->links, rank))) {
            struct smsg *m;
            while ((m = mlist_pop (&l->held)))
                transmit (s, p, l, m);
        }
    }
    free (peers);
}

static void delivered (struct simnet *s, struct smsg *m);

/* Forget what a dying process held: its view (for the convergence
 * count), its connections, queues and clients. */
static void forget_process (struct simnet *s, struct sbroker *b)
{
    struct idmap_iter it;
    struct smsg *m;

    for (struct fence_entry *f = idmap_first (b->ov->fence.map, &it); f;
         f = idmap_next (&it))
        if (f->fenced)
            fenced_count (s, (uint32_t)it.id, -1);
    for (struct link *l = idmap_first (b->links, &it); l;
         l = idmap_next (&it)) {
        if (l->connected)
            idmap_delete (s->b[it.id].connected_by, b->rank);
        mlist_free (s, &l->held);
    }
    idmap_clear (b->links);
    while ((m = mlist_pop (&b->inbound))) {
        if (m->sock_event < 0) {
            delivered (s, m);
            s->st.lost_msgs++;
        }
        smsg_free_in (s, &m);
    }
    /* its client's requests vanish with it */
    for (struct rpc *rpc = idmap_first (b->rpcs, &it); rpc;
         rpc = idmap_next (&it)) {
        s->st.rpc.pending--;
        s->loads[rpc->load].rpc.pending--;
    }
    idmap_clear (b->rpcs);
}

static void broker_down (struct simnet *s, uint32_t rank, bool orderly)
{
    struct sbroker *b = &s->b[rank];
    struct idmap_iter it;

    if (!running (b))
        return;
    if (orderly && b->state == SB_UP)
        overlay_leave (b->ov);
    forget_process (s, b);
    /* peers whose connection to it breaks notice after a while */
    for (void *v = idmap_first (b->connected_by, &it); v;
         v = idmap_next (&it)) {
        struct sbroker *p = &s->b[it.id];
        if (running (p))
            schedule (s, s->now + s->p.notice, EV_SOCK, p->rank,
                      OVL_SOCK_DISCONNECTED, p->gen, rank, NULL);
    }
    overlay_destroy (&b->ov);
    b->state = SB_DOWN;
    b->gen++;
    s->st.live--;
    s->st.dead++;
    truth_changes (s, rank, true);
}

/* Hand m to its receiver's core (a message, or a socket event queued
 * while it was hung). */
static void recv_msg (struct simnet *s, struct sbroker *to, struct smsg *m)
{
    struct frame *wire;
    char id[16], ep[32];
    uint32_t from = m->from;

    if (m->sock_event >= 0) {
        overlay_sock_event (to->ov, m->sock_event,
                            endpoint_of (from, ep, sizeof (ep)), NULL);
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
static void delivered (struct simnet *s, struct smsg *m)
{
    struct sbroker *from = &s->b[m->from];
    struct link *l;

    if (from->gen == m->from_gen && (l = idmap_get (from->links, m->to))
        && l->inflight > 0)
        l->inflight--;
}

static void on_deliver (struct simnet *s, struct simev *ev)
{
    struct smsg *m = ev->msg;
    struct sbroker *to = &s->b[m->to];

    if (to->gen != m->to_gen || !running (to)) {
        delivered (s, m);
        s->st.lost_msgs++;
        smsg_free_in (s, &m);
        return;
    }
    if (to->state == SB_HUNG) {
        mlist_push (&to->inbound, m);   /* read when it runs again */
        return;
    }
    delivered (s, m);
    recv_msg (s, to, m);
}

static void on_sock (struct simnet *s, struct simev *ev)
{
    struct sbroker *b = &s->b[ev->rank];
    char ep[32];

    if (!running (b) || b->gen != ev->b)
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
    overlay_sock_event (b->ov, ev->a, endpoint_of ((uint32_t)ev->x, ep,
                                                   sizeof (ep)), NULL);
}

static void on_wake (struct simnet *s, struct simev *ev)
{
    struct sbroker *b = &s->b[ev->rank];

    if (!running (b) || b->gen != ev->b || ev->a != (uint32_t)b->wake_gen)
        return;
    if (b->state == SB_HUNG) {
        b->missed_wake = true;
        return;
    }
    overlay_run_timers (b->ov);
}

static void on_resume (struct simnet *s, struct sbroker *b)
{
    struct smsg *m;

    if (b->state != SB_HUNG)
        return;
    b->state = SB_UP;
    /* SIGCONT: what waited on the socket is read first */
    while (b->state == SB_UP && (m = mlist_pop (&b->inbound))) {
        if (m->sock_event < 0)
            delivered (s, m);
        recv_msg (s, b, m);
    }
    if (b->state == SB_UP && b->missed_wake) {
        b->missed_wake = false;
        overlay_run_timers (b->ov);
    }
}

/* ---- clients --------------------------------------------------------- */

#define PUB_TAG 0x80000000u
#define STATUS_TAG 0x40000000u   /* the overlay.status-all probe */
#define CLIENT_TAGS (PUB_TAG | STATUS_TAG)

/* A random running broker (or NULL if none). */
static struct sbroker *random_live (struct simnet *s)
{
    if (s->st.live == 0)
        return NULL;
    for (int tries = 0; tries < 64; tries++) {
        struct sbroker *b = &s->b[rnd_below (s, s->n)];
        if (b->state == SB_UP)
            return b;
    }
    for (uint32_t r = 0; r < s->n; r++)
        if (s->b[r].state == SB_UP)
            return &s->b[r];
    return NULL;
}

/* Send a request from b's client, as bgn's client library would. */
static void client_send (struct simnet *s, struct sbroker *b,
                         const char *topic, uint32_t dest, const char *payload,
                         uint32_t tag)
{
    struct bgn_msg_info info = { .source = b->rank };
    msg_t *req = msg_request_create (topic, dest, payload);

    if (!req)
        return;
    msg_set_matchtag (req, tag);
    msg_set_rolemask (req, MSG_ROLE_OWNER);   /* the instance owner's client */
    msg_route_enable (req);
    msg_route_push (req, b->clientid);
    route_request (b, req, &info);
}

/* A random running (not hung) broker among ranks[0..n-1], or NULL. */
static struct sbroker *random_live_of (struct simnet *s, const uint32_t *ranks,
                                       int n)
{
    int start = (int)rnd_below (s, (uint32_t)n);

    for (int i = 0; i < n; i++) {
        struct sbroker *b = &s->b[ranks[(start + i) % n]];
        if (b->state == SB_UP)
            return b;
    }
    return NULL;
}

static void rpc_tick (struct simnet *s, int load)
{
    struct simload *l = &s->loads[load];
    struct sbroker *b = l->from ? random_live_of (s, l->from, l->nfrom)
                                : random_live (s);

    if (b) {
        uint32_t tag = ++b->next_tag & ~CLIENT_TAGS;
        uint32_t dest = l->to ? l->to[rnd_below (s, (uint32_t)l->nto)]
                              : rnd_below (s, s->n);
        struct rpc *rpc = idmap_put (b->rpcs, tag, NULL);
        struct execd *e = idmap_put (s->execd, ((uint64_t)b->rank << 32) | tag,
                                     NULL);
        if (rpc && e) {
            rpc->dest = dest;
            rpc->sent_at = s->now;
            rpc->load = load;
            e->failed_at = -1;
            e->ran = false;
            e->load = load;
            s->st.rpc.sent++;
            s->st.rpc.pending++;
            l->rpc.sent++;
            l->rpc.pending++;
            schedule (s, s->now + s->p.rpc_timeout, EV_RPC_DEADLINE, b->rank,
                      tag, b->gen, 0, NULL);
            client_send (s, b, "sim.ping", dest, NULL, tag);
        }
    }
    if (s->now < l->until)
        schedule (s, s->now - log (1.0 - rnd_unit (s)) / l->rate,
                  EV_RPC_TICK, 0, (uint32_t)load, 0, 0, NULL);
}

static void rpc_deadline (struct simnet *s, struct simev *ev)
{
    struct sbroker *b = &s->b[ev->rank];
    struct rpc *rpc;

    if (b->gen != ev->b || !(rpc = idmap_get (b->rpcs, ev->a)))
        return;
    s->st.rpc.pending--;
    s->st.rpc.timed_out++;
    s->loads[rpc->load].rpc.pending--;
    s->loads[rpc->load].rpc.timed_out++;
    idmap_delete (b->rpcs, ev->a);
}

/* The status-all summary arrived at rank 0's client: its size and how
 * many brokers it covers, as "bgn overlay-status --all" would see it. */
static void status_all_answer (struct simnet *s, const msg_t *rsp,
                               int errnum)
{
    size_t len = 0;
    const char *payload = msg_get_payload (rsp, &len);
    json_t *o;

    if (errnum || !payload)
        return;
    s->st.status_bytes = len;
    s->st.status_seconds = s->now - s->status_asked_at;
    if ((o = json_loads (payload, 0, NULL))) {
        s->st.status_brokers = (uint32_t)json_integer_value
                                   (json_object_get (o, "brokers"));
        s->st.status_problems = (uint32_t)json_array_size
                                    (json_object_get (o, "problems"));
        json_decref (o);
    }
}

static void status_all_ask (struct simnet *s)
{
    struct sbroker *b = &s->b[0];

    if (!running (b))
        return;
    s->status_asked_at = s->now;
    client_send (s, b, "overlay.status-all", 0, "{\"timeout\":3}",
                 STATUS_TAG);
}

static void client_response (struct sbroker *b, msg_t *rsp)
{
    struct simnet *s = b->s;
    uint32_t tag = msg_get_matchtag (rsp);
    int errnum = 0;
    struct sim_rpc_counts *c;
    struct execd *e;
    struct rpc *rpc;

    msg_get_errnum (rsp, &errnum);
    if (tag & STATUS_TAG) {
        status_all_answer (s, rsp, errnum);
        return;
    }
    if (tag & PUB_TAG) {
        if (errnum)
            s->st.ev_publish_errors++;
        else
            s->st.ev_published++;
        return;
    }
    if (!(rpc = idmap_get (b->rpcs, tag)))
        return;   /* timed out already, or a second answer */
    c = &s->loads[rpc->load].rpc;
    idmap_delete (b->rpcs, tag);
    s->st.rpc.pending--;
    c->pending--;
    if (errnum == 0) {
        s->st.rpc.answered++;
        c->answered++;
    }
    else if (errnum == EHOSTUNREACH) {
        s->st.rpc.unreachable++;
        c->unreachable++;
    }
    else {
        s->st.rpc.other_error++;
        c->other_error++;
    }
    if (errnum && (e = idmap_get (s->execd, ((uint64_t)b->rank << 32) | tag)))
        e->failed_at = s->now;
}

static void pub_tick (struct simnet *s, int load)
{
    struct simload *l = &s->loads[load];
    struct sbroker *b = NULL;

    if (l->from)
        b = random_live_of (s, l->from, l->nfrom);
    else {
        /* publishers are the lowest-numbered live ranks from 1 up */
        int k = (int)rnd_below (s, (uint32_t)l->publishers);
        for (uint32_t r = 1; r < s->n && !b; r++)
            if (s->b[r].state == SB_UP && k-- == 0)
                b = &s->b[r];
    }
    if (b) {
        char payload[64];
        snprintf (payload, sizeof (payload), "{\"from\":%u}",
                  (unsigned)b->rank);
        client_send (s, b, "event.pub", 0, payload,
                     PUB_TAG | (++b->next_tag & ~CLIENT_TAGS));
    }
    if (s->now < l->until)
        schedule (s, s->now - log (1.0 - rnd_unit (s)) / l->rate,
                  EV_PUB_TICK, 0, (uint32_t)load, 0, 0, NULL);
}

/* Every broker subscribes to every event: check exactly once, in order,
 * or a lost notice. */
static void subscriber_event (struct sbroker *b, const msg_t *ev)
{
    struct simnet *s = b->s;
    const char *topic = msg_get_topic (ev);
    uint32_t seq = 0;

    if (topic && !strcmp (topic, "event.lost")) {
        json_t *o = json_loads (msg_get_payload (ev, NULL) ?: "", 0, NULL);
        json_int_t from = 0, to = 0;
        if (o && json_unpack (o, "{s:I s:I}", "from", &from, "to", &to) == 0
            && to >= from) {
            s->st.ev_lost_notices++;
            s->st.ev_lost_events += (uint64_t)(to - from + 1);
            if ((uint32_t)to > b->last_seq)
                b->last_seq = (uint32_t)to;
            b->have_base = true;
        }
        json_decref (o);
        return;
    }
    msg_get_seq (ev, &seq);
    s->st.ev_delivered++;
    if (seq > s->max_seq)
        s->max_seq = seq;
    if (!b->have_base) {
        b->have_base = true;
        b->last_seq = seq;
    }
    else if (seq == b->last_seq + 1)
        b->last_seq = seq;
    else if (seq <= b->last_seq)
        s->st.ev_duplicates++;
    else {
        s->st.ev_out_of_order++;
        b->last_seq = seq;
    }
}

/* ---- the run loop ------------------------------------------------------ */

#define SAMPLE_PERIOD 1.0

static void sample (struct simnet *s)
{
    for (uint32_t r = 0; r < s->n; r++) {
        struct sbroker *b = &s->b[r];
        if (!running (b))
            continue;
        for (int i = 0; i < b->ov->peers->n; i++) {
            uint32_t q = (uint32_t)b->ov->peers->v[i]->backlog.count;
            note_queue (s, q);
            if (q > s->st.deepest_backlog)
                s->st.deepest_backlog = q;
        }
        note_queue (s, (uint32_t)b->inbound.count);
    }
    if (s->heap_n > 0)
        schedule (s, s->now + SAMPLE_PERIOD, EV_SAMPLE, 0, 0, 0, 0, NULL);
}

static void handle (struct simnet *s, struct simev *ev)
{
    struct sbroker *b = &s->b[ev->rank];

    switch (ev->type) {
    case EV_DELIVER:
        on_deliver (s, ev);
        break;
    case EV_WAKE:
        on_wake (s, ev);
        break;
    case EV_SOCK:
        on_sock (s, ev);
        break;
    case EV_START:
        if (b->state == SB_NEVER)
            broker_up (s, ev->rank);
        break;
    case EV_RESTART:
        broker_down (s, ev->rank, false);
        b->skew = ev->x;
        broker_up (s, ev->rank);
        break;
    case EV_CRASH:
        broker_down (s, ev->rank, false);
        break;
    case EV_EXIT:
        if (running (b) && b->gen == ev->b) {
            s->exits[ev->a & 0xff]++;
            broker_down (s, ev->rank, true);
        }
        break;
    case EV_HANG:
        if (b->state == SB_UP)
            b->state = SB_HUNG;
        break;
    case EV_RESUME:
        on_resume (s, b);
        break;
    case EV_PARTITION:
        s->partition_split = ev->a;
        break;
    case EV_HEAL:
        s->partition_split = 0;
        break;
    case EV_RPC_TICK:
        rpc_tick (s, (int)ev->a);
        break;
    case EV_RPC_DEADLINE:
        rpc_deadline (s, ev);
        break;
    case EV_PUB_TICK:
        pub_tick (s, (int)ev->a);
        break;
    case EV_SAMPLE:
        sample (s);
        break;
    case EV_STATUS_ALL:
        status_all_ask (s);
        break;
    }
}

void simnet_run (struct simnet *s, double until)
{
    while (s->heap_n > 0 && s->heap[0].t <= until) {
        struct simev ev = pop (s);
        s->now = ev.t;
        s->st.events_processed++;
        if (s->p.log)
            fprintf (s->p.log, "%.9f %s %u %u %u\n", ev.t, evname[ev.type],
                     (unsigned)ev.rank, (unsigned)ev.a, (unsigned)ev.b);
        handle (s, &ev);
        check_converged (s);
    }
    if (until > s->now && !isinf (until))
        s->now = until;
    /* close the books on time spent wrongly fenced */
    wrong_changes (s, 0);
}

double simnet_now (const struct simnet *s)
{
    return s->now;
}

/* ---- set-up ------------------------------------------------------------ */

void simnet_defaults (struct sim_params *p)
{
    memset (p, 0, sizeof (*p));
    p->size = 16;
    snprintf (p->topology, sizeof (p->topology), "bgn");
    p->seed = 1;
    p->latency = 50e-6;
    p->jitter = 20e-6;
    p->hwm = 1000;
    p->notice = 0.005;
    p->rpc_timeout = 10.0;
    ovconf_defaults (&p->cfg);
    p->cfg.curve = 0;
    p->cfg.event_buffer = 256;
}

struct simnet *simnet_create (const struct sim_params *p)
{
    struct simnet *s = calloc (1, sizeof (*s));

    if (!s)
        return NULL;
    s->p = *p;
    s->n = p->size;
    s->rng = p->seed * 0x9e3779b97f4a7c15ULL + 0x2545f4914f6cdd1dULL;
    if (!s->rng)
        s->rng = 1;
    snprintf (s->instance, sizeof (s->instance), "sim-%llu",
              (unsigned long long)p->seed);
    if (!(s->topo = bgn_topo_create (p->topology, p->size))
        || bgn_topo_diameter (s->topo) < 0
        || !(s->b = calloc (s->n, sizeof (*s->b)))
        || !(s->fenced_by = calloc (s->n, sizeof (*s->fenced_by)))
        || !(s->execd = idmap_create (sizeof (struct execd))))
        goto error;
    snprintf (s->p.cfg.topology, sizeof (s->p.cfg.topology), "%s",
              p->topology);
    s->p.cfg.topo = s->topo;   /* one topology for every core */
    for (uint32_t r = 0; r < s->n; r++) {
        struct sbroker *b = &s->b[r];
        b->s = s;
        b->rank = r;
        b->state = SB_NEVER;
        b->mono_base = MONO_MIN + MONO_SPREAD * rnd_unit (s);
        snprintf (b->clientid, sizeof (b->clientid), "c%u", (unsigned)r);
        if (!(b->links = idmap_create (sizeof (struct link)))
            || !(b->connected_by = idmap_create (1))
            || !(b->rpcs = idmap_create (sizeof (struct rpc))))
            goto error;
    }
    s->st.never_started = s->n;
    s->st.converged_at = -1;
    s->st.last_change = 0;
    schedule (s, SAMPLE_PERIOD, EV_SAMPLE, 0, 0, 0, 0, NULL);
    return s;
error:
    simnet_destroy (&s);
    return NULL;
}

void simnet_destroy (struct simnet **sp)
{
    struct simnet *s;

    if (!sp || !(s = *sp))
        return;
    s->destroying = true;
    while (s->heap_n > 0) {
        struct simev ev = pop (s);
        if (ev.type == EV_DELIVER)
            smsg_free_in (s, &ev.msg);
    }
    free (s->heap);
    for (uint32_t r = 0; s->b && r < s->n; r++) {
        struct sbroker *b = &s->b[r];
        struct idmap_iter it;
        struct smsg *m;
        overlay_destroy (&b->ov);
        if (b->links)
            for (struct link *l = idmap_first (b->links, &it); l;
                 l = idmap_next (&it))
                mlist_free (s, &l->held);
        while ((m = mlist_pop (&b->inbound)))
            smsg_free_in (s, &m);
        idmap_destroy (&b->links);
        idmap_destroy (&b->connected_by);
        idmap_destroy (&b->rpcs);
    }
    while (s->pool) {
        struct smsg *m = s->pool;
        s->pool = m->next;
        free (m);
    }
    for (int i = 0; i < s->nloads; i++) {
        free (s->loads[i].from);
        free (s->loads[i].to);
    }
    free (s->b);
    free (s->fenced_by);
    idmap_destroy (&s->execd);
    bgn_topo_destroy (&s->topo);
    free (s);
    *sp = NULL;
}

/* ---- scheduling faults and load ---------------------------------------- */

static bool valid (struct simnet *s, uint32_t rank)
{
    return rank < s->n;
}

void simnet_start (struct simnet *s, double at, uint32_t rank)
{
    if (valid (s, rank))
        schedule (s, at, EV_START, rank, 0, 0, 0, NULL);
}

void simnet_crash (struct simnet *s, double at, uint32_t rank)
{
    if (valid (s, rank))
        schedule (s, at, EV_CRASH, rank, 0, 0, 0, NULL);
}

void simnet_hang (struct simnet *s, double at, uint32_t rank)
{
    if (valid (s, rank))
        schedule (s, at, EV_HANG, rank, 0, 0, 0, NULL);
}

void simnet_resume (struct simnet *s, double at, uint32_t rank)
{
    if (valid (s, rank))
        schedule (s, at, EV_RESUME, rank, 0, 0, 0, NULL);
}

void simnet_restart (struct simnet *s, double at, uint32_t rank, double skew)
{
    if (valid (s, rank))
        schedule (s, at, EV_RESTART, rank, 0, 0, skew, NULL);
}

void simnet_partition (struct simnet *s, double at, uint32_t split, bool on)
{
    schedule (s, at, on ? EV_PARTITION : EV_HEAL, 0, split, 0, 0, NULL);
}

/* A copy of ranks[0..n-1] (NULL for none), or -1 with ENOMEM. */
static int copy_ranks (const uint32_t *ranks, int n, uint32_t **out)
{
    *out = NULL;
    if (!ranks || n <= 0)
        return 0;
    if (!(*out = malloc (n * sizeof (**out))))
        return -1;
    memcpy (*out, ranks, n * sizeof (**out));
    return 0;
}

static int add_load (struct simnet *s, bool events, double at,
                     double duration, double rate, const uint32_t *from,
                     int nfrom, const uint32_t *to, int nto)
{
    struct simload *l;

    if (rate <= 0 || duration <= 0 || at < 0) {
        errno = EINVAL;
        return -1;
    }
    if (s->nloads == SIM_LOADS_MAX) {
        errno = ENOSPC;
        return -1;
    }
    l = &s->loads[s->nloads];
    memset (l, 0, sizeof (*l));
    if (copy_ranks (from, nfrom, &l->from) < 0
        || copy_ranks (to, nto, &l->to) < 0) {
        free (l->from);
        return -1;
    }
    l->nfrom = l->from ? nfrom : 0;
    l->nto = l->to ? nto : 0;
    l->events = events;
    l->rate = rate;
    l->until = at + duration;
    l->publishers = 1;
    schedule (s, at, events ? EV_PUB_TICK : EV_RPC_TICK, 0,
              (uint32_t)s->nloads, 0, 0, NULL);
    return s->nloads++;
}

int simnet_rpc_load (struct simnet *s, double at, double duration,
                     double rate, const uint32_t *from, int nfrom,
                     const uint32_t *to, int nto)
{
    return add_load (s, false, at, duration, rate, from, nfrom, to, nto);
}

int simnet_event_load (struct simnet *s, double at, double duration,
                       double rate, int publishers, const uint32_t *from,
                       int nfrom)
{
    int i = add_load (s, true, at, duration, rate, from, nfrom, NULL, 0);

    if (i >= 0 && publishers > 0)
        s->loads[i].publishers = publishers;
    return i;
}

void simnet_status_all (struct simnet *s, double at)
{
    schedule (s, at, EV_STATUS_ALL, 0, 0, 0, 0, NULL);
}

/* ---- results ------------------------------------------------------------ */

const struct sim_stats *simnet_stats (struct simnet *s)
{
    return &s->st;
}

const struct sim_rpc_counts *simnet_load_rpc (struct simnet *s, int i)
{
    if (i < 0 || i >= s->nloads || s->loads[i].events)
        return NULL;
    return &s->loads[i].rpc;
}

uint64_t simnet_events_missing (struct simnet *s)
{
    uint64_t missing = 0;

    for (uint32_t r = 0; r < s->n; r++) {
        struct sbroker *b = &s->b[r];
        if (running (b) && b->have_base && b->last_seq < s->max_seq)
            missing += s->max_seq - b->last_seq;
    }
    return missing;
}

void simnet_views (struct simnet *s, uint8_t *any, uint8_t *all,
                   uint8_t *dead)
{
    for (uint32_t r = 0; r < s->n; r++) {
        uint32_t others = s->st.live - (running (&s->b[r]) ? 1 : 0);
        any[r] = s->fenced_by[r] > 0;
        all[r] = others > 0 && s->fenced_by[r] == others;
        dead[r] = !running (&s->b[r]);
    }
}

struct overlay *simnet_core (struct simnet *s, uint32_t rank)
{
    return valid (s, rank) && running (&s->b[rank]) ? s->b[rank].ov : NULL;
}

bool simnet_alive (struct simnet *s, uint32_t rank)
{
    return valid (s, rank) && running (&s->b[rank]);
}

int simnet_exits (struct simnet *s, int code)
{
    return s->exits[code & 0xff];
}

/* Follow each broker's first usable next hop from a to b. */
static bool walk (struct simnet *s, uint32_t a, uint32_t b)
{
    uint32_t cur = a, hops[MAX_HOPS_LIST];
    struct overlay *ov;

    for (int step = 0; step < 64; step++) {
        if (cur == b)
            return true;
        if (!(ov = simnet_core (s, cur)))
            return false;
        bool live = false;
        int n = route_next_hops (ov, b, hops, MAX_HOPS_LIST, &live);
        uint32_t next = UINT32_MAX;
        for (int i = 0; i < n && next == UINT32_MAX; i++) {
            struct peer *p = peers_lookup (ov->peers, hops[i]);
            if (p && peer_is_up (p) && simnet_alive (s, hops[i]))
                next = hops[i];
        }
        if (next == UINT32_MAX)
            return false;
        cur = next;
    }
    return false;
}

void simnet_reachability (struct simnet *s, int samples, int *reachable,
                          int *tried)
{
    *reachable = *tried = 0;
    if (s->st.live < 2)
        return;
    for (int i = 0; i < samples; i++) {
        struct sbroker *a = random_live (s), *b = random_live (s);
        if (!a || !b || a == b)
            continue;
        (*tried)++;
        if (walk (s, a->rank, b->rank))
            (*reachable)++;
    }
}
