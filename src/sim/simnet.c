/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* simnet.c: the overlay's protocol core on a simulated network (simnet.h):
 * the brokers' life cycle, faults, the run loop and set-up.
 *
 * One event queue (simqueue.c) drives everything: message deliveries,
 * each broker's core timers (one wakeup per broker, as the io asks),
 * faults and client load.  Each broker is a core (struct overlay) with
 * the io of simio.c, the mini-broker of simbroker.c and the clients of
 * simload.c around it; simview.c keeps the observer's books.  Here a
 * process of a rank starts (a new core, a new incarnation from its own
 * wall clock), crashes, exits, hangs and resumes, and the run loop hands
 * each event to its part.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/common/libbgn/bgn.h"
#include "simnet_int.h"

#define WALL_EPOCH 1.7e9          /* the simulated wall clock at time 0 */
/* Each simulated host's monotonic clock reads its uptime: between
 * MONO_MIN and MONO_MIN + MONO_SPREAD seconds at time 0, as a real one
 * would (brokers rarely start at a host's boot), and differently on every
 * host, so no code can mistake one broker's clock for another's. */
#define MONO_MIN 600.0
#define MONO_SPREAD 86400.0

static const char *evname[] = {
    "deliver", "wake", "start", "crash", "hang", "resume", "restart",
    "partition", "heal", "sock", "exit", "rpc", "deadline", "pub", "sample",
    "status-all",
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

    if (sim_running (b))
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
    sim_truth_changes (s, rank, false);
    if (!(b->ov = overlay_create (&s->p.cfg, &id, &sim_io, b))) {
        fprintf (stderr, "bgn-sim: rank %u: cannot create its core\n",
                 (unsigned)rank);
        exit (1);
    }
    for (int i = 0; i < overlay_peer_count (b->ov); i++) {
        uint32_t peer = overlay_peer_rank (b->ov, i);
        overlay_set_peer (b->ov, peer, sim_endpoint (peer, ep, sizeof (ep)),
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
        if (r == rank || !sim_running (p) || !sim_connected (p, rank))
            continue;
        sim_schedule (s, s->now + 2 * s->p.latency, EV_SOCK, r,
                      OVL_SOCK_CONNECTED, p->gen, rank, NULL);
        if ((l = idmap_get (p->links, rank))) {
            struct smsg *m;
            while ((m = sim_mlist_pop (&l->held)))
                sim_transmit (s, p, l, m);
        }
    }
    free (peers);
}

/* Forget what a dying process held: its view (for the convergence
 * count), its connections, queues and clients. */
static void forget_process (struct simnet *s, struct sbroker *b)
{
    struct idmap_iter it;
    struct smsg *m;

    for (uint32_t r = 0; r < s->n; r++)
        if (overlay_is_fenced (b->ov, r))
            sim_fenced_count (s, r, -1);
    for (struct link *l = idmap_first (b->links, &it); l;
         l = idmap_next (&it)) {
        if (l->connected)
            idmap_delete (s->b[it.id].connected_by, b->rank);
        sim_mlist_drop (s, &l->held);
    }
    idmap_clear (b->links);
    /* what it had not read yet (it hung) dies with it */
    while ((m = sim_mlist_pop (&b->inbound))) {
        if (m->sock_event < 0) {
            sim_delivered (s, m);
            s->st.lost_msgs++;
            sim_rpc_dropped (s, m);
        }
        sim_smsg_free (s, &m);
    }
    /* its client's requests vanish with it */
    for (struct rpc *rpc = idmap_first (b->rpcs, &it); rpc;
         rpc = idmap_next (&it)) {
        s->st.rpc.pending--;
        s->st.rpc.origin_died++;
        s->loads[rpc->load].rpc.pending--;
        s->loads[rpc->load].rpc.origin_died++;
    }
    idmap_clear (b->rpcs);
}

static void broker_down (struct simnet *s, uint32_t rank, bool orderly)
{
    struct sbroker *b = &s->b[rank];
    struct idmap_iter it;

    if (!sim_running (b))
        return;
    if (orderly && b->state == SB_UP)
        overlay_leave (b->ov);
    forget_process (s, b);
    /* peers whose connection to it breaks notice after a while */
    for (void *v = idmap_first (b->connected_by, &it); v;
         v = idmap_next (&it)) {
        struct sbroker *p = &s->b[it.id];
        if (sim_running (p))
            sim_schedule (s, s->now + s->p.notice, EV_SOCK, p->rank,
                          OVL_SOCK_DISCONNECTED, p->gen, rank, NULL);
    }
    overlay_destroy (&b->ov);
    b->state = SB_DOWN;
    b->gen++;
    s->st.live--;
    s->st.dead++;
    sim_truth_changes (s, rank, true);
}

static void on_wake (struct simnet *s, struct simev *ev)
{
    struct sbroker *b = &s->b[ev->rank];

    if (!sim_running (b) || b->gen != ev->b || ev->a != (uint32_t)b->wake_gen)
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
    while (b->state == SB_UP && (m = sim_mlist_pop (&b->inbound))) {
        if (m->sock_event < 0)
            sim_delivered (s, m);
        sim_recv_msg (s, b, m);
    }
    if (b->state == SB_UP && b->missed_wake) {
        b->missed_wake = false;
        overlay_run_timers (b->ov);
    }
}

/* ---- the run loop ------------------------------------------------------ */

#define SAMPLE_PERIOD 1.0

static void sample (struct simnet *s)
{
    for (uint32_t r = 0; r < s->n; r++) {
        struct sbroker *b = &s->b[r];
        if (!sim_running (b))
            continue;
        uint32_t q = (uint32_t)overlay_backlog_deepest (b->ov);
        sim_note_queue (s, q);
        if (q > s->st.deepest_backlog)
            s->st.deepest_backlog = q;
        sim_note_queue (s, (uint32_t)b->inbound.count);
    }
    if (s->heap_n > 0)
        sim_schedule (s, s->now + SAMPLE_PERIOD, EV_SAMPLE, 0, 0, 0, 0, NULL);
}

static void handle (struct simnet *s, struct simev *ev)
{
    struct sbroker *b = &s->b[ev->rank];

    switch (ev->type) {
    case EV_DELIVER:
        sim_on_deliver (s, ev);
        break;
    case EV_WAKE:
        on_wake (s, ev);
        break;
    case EV_SOCK:
        sim_on_sock (s, ev);
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
        if (sim_running (b) && b->gen == ev->b) {
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
        sim_rpc_tick (s, (int)ev->a);
        break;
    case EV_RPC_DEADLINE:
        sim_rpc_deadline (s, ev);
        break;
    case EV_PUB_TICK:
        sim_pub_tick (s, (int)ev->a);
        break;
    case EV_SAMPLE:
        sample (s);
        break;
    case EV_STATUS_ALL:
        sim_status_all_ask (s);
        break;
    }
}

void simnet_run (struct simnet *s, double until)
{
    while (s->heap_n > 0 && s->heap[0].t <= until) {
        struct simev ev = sim_pop (s);
        s->now = ev.t;
        s->st.events_processed++;
        if (s->p.log)
            fprintf (s->p.log, "%.9f %s %u %u %u\n", ev.t, evname[ev.type],
                     (unsigned)ev.rank, (unsigned)ev.a, (unsigned)ev.b);
        handle (s, &ev);
        sim_check_converged (s);
    }
    if (until > s->now && !isinf (until))
        s->now = until;
    /* close the books on time spent wrongly fenced */
    sim_wrong_changes (s, 0);
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
        b->mono_base = MONO_MIN + MONO_SPREAD * sim_rnd_unit (s);
        snprintf (b->clientid, sizeof (b->clientid), "c%u", (unsigned)r);
        if (!(b->links = idmap_create (sizeof (struct link)))
            || !(b->connected_by = idmap_create (1))
            || !(b->rpcs = idmap_create (sizeof (struct rpc))))
            goto error;
    }
    s->st.never_started = s->n;
    s->st.converged_at = -1;
    s->st.last_change = 0;
    sim_schedule (s, SAMPLE_PERIOD, EV_SAMPLE, 0, 0, 0, 0, NULL);
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
        struct simev ev = sim_pop (s);
        if (ev.type == EV_DELIVER)
            sim_smsg_free (s, &ev.msg);
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
                sim_mlist_free (s, &l->held);
        while ((m = sim_mlist_pop (&b->inbound)))
            sim_smsg_free (s, &m);
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

/* ---- scheduling faults ------------------------------------------------ */

static bool valid (struct simnet *s, uint32_t rank)
{
    return rank < s->n;
}

void simnet_start (struct simnet *s, double at, uint32_t rank)
{
    if (valid (s, rank))
        sim_schedule (s, at, EV_START, rank, 0, 0, 0, NULL);
}

void simnet_crash (struct simnet *s, double at, uint32_t rank)
{
    if (valid (s, rank))
        sim_schedule (s, at, EV_CRASH, rank, 0, 0, 0, NULL);
}

void simnet_hang (struct simnet *s, double at, uint32_t rank)
{
    if (valid (s, rank))
        sim_schedule (s, at, EV_HANG, rank, 0, 0, 0, NULL);
}

void simnet_resume (struct simnet *s, double at, uint32_t rank)
{
    if (valid (s, rank))
        sim_schedule (s, at, EV_RESUME, rank, 0, 0, 0, NULL);
}

void simnet_restart (struct simnet *s, double at, uint32_t rank, double skew)
{
    if (valid (s, rank))
        sim_schedule (s, at, EV_RESTART, rank, 0, 0, skew, NULL);
}

void simnet_partition (struct simnet *s, double at, uint32_t split, bool on)
{
    sim_schedule (s, at, on ? EV_PARTITION : EV_HEAL, 0, split, 0, 0, NULL);
}

/* ---- results ----------------------------------------------------------- */

const struct sim_stats *simnet_stats (struct simnet *s)
{
    return &s->st;
}

struct overlay *simnet_core (struct simnet *s, uint32_t rank)
{
    return valid (s, rank) && sim_running (&s->b[rank]) ? s->b[rank].ov : NULL;
}

bool simnet_alive (struct simnet *s, uint32_t rank)
{
    return valid (s, rank) && sim_running (&s->b[rank]);
}

int simnet_exits (struct simnet *s, int code)
{
    return s->exits[code & 0xff];
}
