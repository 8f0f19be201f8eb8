/* overlay.c: overlay-bgn.so, the broker's overlay network module.
 *
 * One ZMQ_ROUTER socket per broker carries all peer traffic.  It binds one
 * endpoint and connects to the neighbours it is responsible for: for every
 * graph edge the lower rank connects, so each edge has exactly one
 * connection (two would duplicate routing ids and lose traffic, see
 * notes/zeromq.md).  Socket identities are ranks in decimal.
 *
 * Every message between peers is [envelope][broker message frames].  An
 * intermediate broker reads only the envelope, picks the next hop with
 * libbgn's router and moves the frames on without decoding them; only the
 * destination (or, for service-addressed requests, each broker on the way
 * to rank 0) decodes the broker message and hands it to the broker.
 *
 * What else lives here: the hello exchange that admits a peer (rank,
 * protocol version, instance id, CURVE key via the ZAP handler), the TTL
 * loop guard, per-peer backlogs for full queues and not-yet-connected
 * peers, keepalives and peer states, the start-up "ready" report that lets
 * rank 0 say when the overlay is whole, and the overlay.* services
 * (status for bgn overlay-status).
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <math.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <fnmatch.h>
#include <limits.h>
#include <sys/stat.h>
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <czmq.h>
#include <jansson.h>

#include "src/include/bgn/module.h"
#include "src/common/libbgn/bgn.h"
#include "src/common/libconf/conf.h"
#include "envelope.h"
#include "events.h"
#include "src/common/libutil/monotime.h"

#define MAX_FRAMES (MSG_MAX_ROUTES + 8)
#define PROTOCOL_VERSION 1
#define MAX_HOPS_LIST 128

enum peer_state {
    PEER_CONNECTING = 0,   /* no hello yet */
    PEER_UP,
    PEER_SUSPECT,          /* silent for a few keepalive intervals */
    PEER_DOWN,
};

static const char *peer_state_str (int s)
{
    switch (s) {
    case PEER_CONNECTING: return "connecting";
    case PEER_UP: return "up";
    case PEER_SUSPECT: return "suspect";
    case PEER_DOWN: return "down";
    }
    return "unknown";
}

/* A message waiting for a peer: an envelope and owned frames. */
struct pending {
    struct envelope env;
    int nframes;
    zmq_msg_t frames[];
};

struct peer {
    uint32_t rank;
    char id[16];
    int connector;           /* this broker connects to it */
    int state;
    uint64_t incarnation;    /* from its hello */
    char endpoint[256];
    char pubkey[41];
    char hostname[64];
    double last_heard;
    double last_sent;
    double state_since;
    zlistx_t *backlog;       /* struct pending * */
    uint64_t tx_msgs, rx_msgs, tx_bytes, rx_bytes;
    uint64_t reroutes, ttl_drops, backlog_drops;
    double rtt_us;
    double ka_sent_at;       /* keepalive awaiting echo, for RTT */
    int leaving;             /* said goodbye: its down is orderly */
    int refused;             /* it refused our hello: stop saying it */
    int unreachable;         /* a send failed with EHOSTUNREACH */
    double fence_told;       /* when we last told it it is fenced */
    uint32_t hello_seq;      /* last event seq it had delivered */
    int substitute;          /* a self-healing link, not a graph edge */
    int sub_for;             /* substitute: the lost neighbour it stands
                                in for (-1 if it connected to us) */
    int contacting;          /* contact request sent, not answered */
};

struct overlay {
    const struct bgn_broker_api *api;
    bgn_broker_t *b;
    uint32_t rank, size;
    uint64_t incarnation;
    char topo_spec[64];
    char topo_desc[96];
    struct bgn_topo *topo;
    struct bgn_router *router;
    int diameter;
    int ttl;
    void *sock;
    void *monitor;            /* PAIR: libzmq's socket events */
    uint64_t auth_failures;
    char bind_uri[512];
    char public_uri[512];
    zloop_t *loop;
    int ka_timer;
    double last_tick;         /* last keepalive timer run */
    int retry_timer;

    struct peer **peers;      /* indexed by position in neighbours[] */
    uint32_t *neighbours;     /* sorted */
    int npeers;
    int peers_up;

    /* CURVE */
    int curve;
    zcert_t *cert;
    int cert_saved;           /* kept in the rundir: remove at unload */
    zcertstore_t *certstore;  /* zauth owns it once the actor exists */
    zactor_t *auth;

    /* liveness settings */
    double keepalive_interval;
    double peer_timeout;
    int sndhwm;
    int backlog_max;

    /* start-up readiness: rank 0 counts ranks that reported all peers up */
    struct bgn_rankset *ready;
    int reported_ready;
    int ready_acked;          /* rank 0 answered our ready report */
    double ready_sent_at;

    /* the inbound envelope while a message is being delivered, so that a
     * service-addressed request the broker sends on keeps its ttl/hops */
    const struct envelope *inbound;

    long test_loop;           /* BGN_OVERLAY_TEST_LOOP=RANK: messages to
                                 RANK loop (test only); -1 = off */

    /* fences: rank -> struct fence; the view of which ranks are down */
    zhashx_t *fences;
    int nfenced;
    int lost_timer;           /* deferred peer-loss processing */
    int partition_timer;      /* deferred partition check */
    int partitioned;          /* rank 0: some live ranks are unreachable */
    uint32_t unreachable_live;

    /* requests this broker injected, to fail them once if their
     * destination is fenced: "client:matchtag" -> struct tracked */
    zhashx_t *tracker;
    int sweep_timer;
    double rpc_timeout;

    struct evlayer *events;

    /* self-healing */
    int heal_threshold;
    int degree;               /* topology degree (without substitutes) */
    int nsubst;
    zhashx_t *contacts;       /* rank -> lost neighbour, contacts pending */
    double contacts_cleared;

    /* overlay-trace subscribers, overlay.status-all gathers in progress */
    zlistx_t *traces;         /* struct trace * */
    int tracing;              /* reentrancy guard while emitting */
    zhashx_t *gathers;        /* matchtag -> struct gather_child */
    uint32_t next_tag;

    /* counters */
    uint64_t tracker_failed;
    uint64_t tracker_dup_drops;
    uint64_t fences_seen;
    uint64_t ttl_drops;
    uint64_t unknown_peer_drops;
    uint64_t malformed_drops;
    uint64_t stale_drops;
    uint64_t no_route_drops;
    uint64_t backlog_overflows;
    uint64_t forwarded;
    uint64_t delivered;
};

#define ovlog(ov, level, ...) (ov)->api->log ((ov)->b, (level), __VA_ARGS__)

/* What this broker knows about a rank's incarnations. */
struct fence {
    uint64_t inc;            /* fenced incarnation, or last known live one */
    int fenced;
    double since;
    char reason[48];
};

/* A request this broker sent into the overlay, awaiting its response. */
struct tracked {
    msg_t *req;              /* header copy (no payload), for the error */
    uint32_t dest;
    double expires;
    int failed;              /* an error went back: drop a late response */
};

/* ---- peers ------------------------------------------------------------ */

static struct peer *peer_lookup (struct overlay *ov, uint32_t rank)
{
    int lo = 0, hi = ov->npeers - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (ov->neighbours[mid] == rank)
            return ov->peers[mid];
        if (ov->neighbours[mid] < rank)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return NULL;
}

static struct peer *peer_lookup_id (struct overlay *ov, const void *id,
                                    size_t len)
{
    char buf[16];
    char *end;
    unsigned long r;

    if (len == 0 || len >= sizeof (buf))
        return NULL;
    memcpy (buf, id, len);
    buf[len] = '\0';
    if (buf[0] < '0' || buf[0] > '9')
        return NULL;
    r = strtoul (buf, &end, 10);
    if (*end || r >= ov->size)
        return NULL;
    return peer_lookup (ov, (uint32_t)r);
}

static void pending_destroy (struct pending **pp)
{
    if (pp && *pp) {
        for (int i = 0; i < (*pp)->nframes; i++)
            zmq_msg_close (&(*pp)->frames[i]);
        free (*pp);
        *pp = NULL;
    }
}

static void pending_destructor (void **item)
{
    pending_destroy ((struct pending **)item);
}

static void peer_destroy (struct peer **pp)
{
    if (pp && *pp) {
        zlistx_destroy (&(*pp)->backlog);
        free (*pp);
        *pp = NULL;
    }
}

static struct peer *peer_create (struct overlay *ov, uint32_t rank)
{
    struct peer *p = calloc (1, sizeof (*p));
    if (!p)
        return NULL;
    p->rank = rank;
    snprintf (p->id, sizeof (p->id), "%u", (unsigned)rank);
    p->connector = ov->rank < rank;
    p->sub_for = -1;
    p->state = PEER_CONNECTING;
    p->state_since = monotime_now ();
    p->rtt_us = -1;
    if (!(p->backlog = zlistx_new ())) {
        free (p);
        return NULL;
    }
    zlistx_set_destructor (p->backlog, pending_destructor);
    return p;
}

/* ---- sending ---------------------------------------------------------- */

static void peer_unreachable (struct overlay *ov, struct peer *p);
static int tracker_response (struct overlay *ov, const msg_t *rsp);
static int tracker_add (struct overlay *ov, const msg_t *req, uint32_t dest);
static int tracker_key (const msg_t *msg, char *key, size_t len);

/* Send one message to peer p now.  frames are consumed on success (moved
 * into libzmq) and left to the caller on failure.  -1 with errno EAGAIN
 * (queue full) or EHOSTUNREACH (not connected).
 */
struct trace_info {
    int valid;
    const char *type;
    char topic[MSG_MAX_TOPIC + 1];
    size_t size;
};

static void trace_capture (struct overlay *ov, const struct envelope *env,
                           zmq_msg_t *frames, int n, struct trace_info *ti);
static void trace_emit (struct overlay *ov, const char *dir, uint32_t peer,
                        const struct envelope *env,
                        const struct trace_info *ti);

static int peer_send_now (struct overlay *ov, struct peer *p,
                          struct envelope *env, zmq_msg_t *frames, int n)
{
    uint8_t buf[ENV_SIZE];
    size_t bytes = ENV_SIZE;
    struct trace_info ti = { 0 };

    /* Frames are gone once sent: look at them first if anyone traces. */
    if (ov->traces && zlistx_size (ov->traces) > 0 && !ov->tracing)
        trace_capture (ov, env, frames, n, &ti);

    env->receiver_inc = p->incarnation;
    env->sender_inc = ov->incarnation;
    envelope_encode (env, buf);
    if (zmq_send (ov->sock, p->id, strlen (p->id),
                  ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0) {
        if (errno == EHOSTUNREACH) {
            int saved = errno;
            peer_unreachable (ov, p);
            errno = saved;
        }
        return -1;
    }
    /* Once the identity frame is accepted, the rest cannot fail. */
    if (zmq_send (ov->sock, buf, ENV_SIZE, (n > 0 ? ZMQ_SNDMORE : 0)) < 0)
        return -1;
    for (int i = 0; i < n; i++) {
        bytes += zmq_msg_size (&frames[i]);
        if (zmq_msg_send (&frames[i], ov->sock, i < n - 1 ? ZMQ_SNDMORE : 0) < 0)
            return -1;
    }
    p->tx_msgs++;
    p->tx_bytes += bytes;
    p->last_sent = monotime_now ();
    if (ti.valid)
        trace_emit (ov, "tx", p->rank, env, &ti);
    return 0;
}

/* Queue a message for p.  Takes the frames.  -1/ENOBUFS when full. */
static int peer_enqueue (struct overlay *ov, struct peer *p,
                         const struct envelope *env, zmq_msg_t *frames, int n)
{
    struct pending *pd;

    if ((int)zlistx_size (p->backlog) >= ov->backlog_max) {
        p->backlog_drops++;
        ov->backlog_overflows++;
        errno = ENOBUFS;
        return -1;
    }
    if (!(pd = malloc (sizeof (*pd) + n * sizeof (zmq_msg_t))))
        return -1;
    pd->env = *env;
    pd->nframes = n;
    for (int i = 0; i < n; i++) {
        zmq_msg_init (&pd->frames[i]);
        zmq_msg_move (&pd->frames[i], &frames[i]);
    }
    zlistx_add_end (p->backlog, pd);
    if (ov->retry_timer < 0)
        ov->retry_timer = -2;   /* ask for the retry timer, see below */
    return 0;
}

static void schedule_retry (struct overlay *ov);

/* Choose among equal-cost hops: a fixed pick per (self, dest) keeps one
 * flow on one path (in order); the others are fall-backs.
 */
static int hops_for (struct overlay *ov, uint32_t dest, uint32_t *hops, int max)
{
    int n;

    if (ov->test_loop >= 0 && dest == (uint32_t)ov->test_loop) {
        /* Test-only: forward to the lowest neighbour that is not dest, so
         * two brokers bounce a message until its TTL runs out. */
        for (int i = 0; i < ov->npeers; i++) {
            if (ov->neighbours[i] != dest) {
                hops[0] = ov->neighbours[i];
                return 1;
            }
        }
    }
    n = bgn_router_next_hop (ov->router, ov->rank, dest, hops, max);
    if (n <= 1)
        return n;
    if (n > max)
        n = max;
    int first = (int)((ov->rank + dest) % (uint32_t)n);
    /* rotate so hops[0] is the preferred one */
    uint32_t tmp[MAX_HOPS_LIST];
    for (int i = 0; i < n; i++)
        tmp[i] = hops[(first + i) % n];
    memcpy (hops, tmp, n * sizeof (uint32_t));
    return n;
}

/* Route a message (envelope already filled: ttl, hops, source, dest)
 * one hop toward env->dest.  Consumes the frames when it returns 0
 * (sent or queued).  On -1 (errno EHOSTUNREACH: no route; ENOBUFS:
 * backlog full) the frames are still the caller's.
 */
static int route_out (struct overlay *ov, struct envelope *env,
                      zmq_msg_t *frames, int n, int from)
{
    uint32_t hops[MAX_HOPS_LIST];
    uint32_t target = env->dest;
    int nh;
    struct peer *queue_on = NULL;

    if (target == NODEID_ANY || target == NODEID_UPSTREAM)
        target = 0;
    if ((nh = hops_for (ov, target, hops, MAX_HOPS_LIST)) < 0)
        return -1;
    if (nh == 0) {
        errno = EINVAL;   /* it is for us: the caller should deliver */
        return -1;
    }
    for (int i = 0; i < nh; i++) {
        struct peer *p = peer_lookup (ov, hops[i]);
        if (!p)
            continue;
        if (p->state == PEER_UP || p->state == PEER_SUSPECT) {
            /* keep order: nothing may overtake what is queued */
            if (zlistx_size (p->backlog) == 0
                && peer_send_now (ov, p, env, frames, n) == 0) {
                if (i > 0)
                    p->reroutes++;
                return 0;
            }
            if (!queue_on)
                queue_on = p;
        }
        else if (p->state == PEER_CONNECTING && !queue_on)
            queue_on = p;
    }
    if (!queue_on) {
        /* Every shortest next hop is unusable from here (its link is
         * down): detour through the live neighbour closest to the
         * target.  The TTL bounds any loop this could make. */
        struct peer *best = NULL;
        int bestd = INT_MAX;
        for (int i = 0; i < ov->npeers; i++) {
            struct peer *p = ov->peers[i];
            int d;
            if ((p->state != PEER_UP && p->state != PEER_SUSPECT)
                || (int)p->rank == from)
                continue;
            if (p->rank == target)
                d = 0;
            else if ((d = bgn_router_distance (ov->router, p->rank,
                                               target)) < 0)
                continue;
            if (d < bestd) {
                bestd = d;
                best = p;
            }
        }
        if (best) {
            best->reroutes++;
            if (zlistx_size (best->backlog) == 0
                && peer_send_now (ov, best, env, frames, n) == 0)
                return 0;
            queue_on = best;
        }
    }
    if (!queue_on) {
        errno = EHOSTUNREACH;
        return -1;
    }
    if (peer_enqueue (ov, queue_on, env, frames, n) < 0)
        return -1;
    schedule_retry (ov);
    return 0;
}

/* Flush backlogs of peers that can take traffic.  Messages whose peer went
 * down are rerouted (they were never sent, so no duplicates).
 */
static void flush_backlogs (struct overlay *ov)
{
    int pending = 0;

    for (int i = 0; i < ov->npeers; i++) {
        struct peer *p = ov->peers[i];
        struct pending *pd;
        while ((pd = zlistx_first (p->backlog))) {
            if (p->state == PEER_CONNECTING)
                break;
            if (p->state == PEER_DOWN) {
                zlistx_detach (p->backlog, NULL);
                p->reroutes++;
                if (route_out (ov, &pd->env, pd->frames, pd->nframes, -1) < 0) {
                    ov->no_route_drops++;
                }
                else
                    pd->nframes = 0;   /* frames moved */
                pending_destroy (&pd);
                continue;
            }
            if (peer_send_now (ov, p, &pd->env, pd->frames, pd->nframes) < 0)
                break;
            pd->nframes = 0;
            zlistx_detach (p->backlog, NULL);
            pending_destroy (&pd);
        }
        pending += zlistx_size (p->backlog);
    }
    (void)pending;
}

static int retry_cb (zloop_t *loop, int timer_id, void *arg)
{
    struct overlay *ov = arg;
    int left = 0;

    ov->retry_timer = -1;
    flush_backlogs (ov);
    for (int i = 0; i < ov->npeers; i++)
        if (ov->peers[i]->state != PEER_CONNECTING)
            left += zlistx_size (ov->peers[i]->backlog);
    if (left)
        schedule_retry (ov);
    return 0;
}

static void schedule_retry (struct overlay *ov)
{
    if (ov->retry_timer >= 0)
        return;
    ov->retry_timer = zloop_timer (ov->loop, 5, 1, retry_cb, ov);
}

/* Encode a broker message into freshly allocated zmq frames. */
static int msg_to_frames (msg_t *msg, zmq_msg_t *frames, int max)
{
    struct msg_frame mf[MAX_FRAMES];
    int n = msg_encode (msg, mf, MAX_FRAMES);

    if (n < 0 || n > max) {
        errno = EINVAL;
        return -1;
    }
    for (int i = 0; i < n; i++) {
        if (zmq_msg_init_size (&frames[i], mf[i].size) < 0) {
            for (int j = 0; j < i; j++)
                zmq_msg_close (&frames[j]);
            return -1;
        }
        memcpy (zmq_msg_data (&frames[i]), mf[i].data, mf[i].size);
    }
    return n;
}

static void close_frames (zmq_msg_t *frames, int n)
{
    for (int i = 0; i < n; i++)
        zmq_msg_close (&frames[i]);
}

/* Decode the broker message carried in n zmq frames (NULL, with a reason
 * in errbuf if given, when malformed or longer than MAX_FRAMES). */
static msg_t *body_decode (zmq_msg_t *frames, int n, char *errbuf,
                           size_t errlen)
{
    struct msg_frame mf[MAX_FRAMES];

    if (n > MAX_FRAMES) {
        if (errbuf)
            snprintf (errbuf, errlen, "too many frames");
        errno = EPROTO;
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        mf[i].data = zmq_msg_data (&frames[i]);
        mf[i].size = zmq_msg_size (&frames[i]);
    }
    return msg_decode (mf, n, errbuf, errlen);
}

/* The overlay_ops.send entry point: the broker hands us a message. */
static int overlay_send (void *state, msg_t *msg, uint32_t dest)
{
    struct overlay *ov = state;
    zmq_msg_t frames[MAX_FRAMES];
    struct envelope env = { .kind = ENV_DATA };
    int n, saved;

    if (dest == ov->rank || (dest >= ov->size && dest < NODEID_UPSTREAM)) {
        msg_destroy (&msg);
        errno = EHOSTUNREACH;
        return -1;
    }
    if (ov->inbound) {
        /* continuing a message that arrived over the overlay */
        env.ttl = ov->inbound->ttl;
        env.hops = ov->inbound->hops;
        env.source = ov->inbound->source;
    }
    else {
        env.ttl = ov->ttl;
        env.hops = 0;
        env.source = ov->rank;
    }
    env.dest = dest;
    if (env.ttl == 0) {
        ov->ttl_drops++;
        msg_destroy (&msg);
        errno = EHOSTUNREACH;
        return -1;
    }
    env.ttl--;
    env.hops++;
    if ((n = msg_to_frames (msg, frames, MAX_FRAMES)) < 0) {
        saved = errno;
        msg_destroy (&msg);
        errno = saved;
        return -1;
    }
    if (!ov->inbound && bgn_router_is_down (ov->router, dest < ov->size
                                                          ? dest : 0)) {
        /* known down: fail at once rather than queue */
        close_frames (frames, n);
        msg_destroy (&msg);
        errno = EHOSTUNREACH;
        return -1;
    }
    char tkey[MSG_MAX_ROUTEID + 16] = "";
    if (!ov->inbound && tracker_add (ov, msg, dest) == 0)
        tracker_key (msg, tkey, sizeof (tkey));
    msg_destroy (&msg);
    if (route_out (ov, &env, frames, n, -1) < 0) {
        saved = errno;
        close_frames (frames, n);
        ov->no_route_drops++;
        if (tkey[0])   /* the broker answers this one itself */
            zhashx_delete (ov->tracker, tkey);
        errno = saved;
        return -1;
    }
    return 0;
}

static const char *overlay_health (void *state);

static const char *overlay_topology (void *state)
{
    struct overlay *ov = state;
    return ov->topo_desc;
}

static int64_t overlay_publish (void *state, msg_t *event)
{
    struct overlay *ov = state;
    return evlayer_publish (ov->events, event);
}

static const struct bgn_overlay_ops overlay_ops = {
    .send = overlay_send,
    .health = overlay_health,
    .topology = overlay_topology,
    .publish = overlay_publish,
};

/* ---- control messages (hello, keepalive) ------------------------------ */

static int send_control (struct overlay *ov, struct peer *p, int kind,
                         json_t *o)
{
    struct envelope env = { .kind = kind, .ttl = 1, .source = ov->rank,
                            .dest = p->rank };
    zmq_msg_t frame;
    char *s = NULL;
    int n = 0, rc;

    if (o) {
        if (!(s = json_dumps (o, JSON_COMPACT)))
            return -1;
        zmq_msg_init_size (&frame, strlen (s));
        memcpy (zmq_msg_data (&frame), s, strlen (s));
        n = 1;
        free (s);
    }
    rc = peer_send_now (ov, p, &env, &frame, n);
    if (rc < 0 && n)
        zmq_msg_close (&frame);
    return rc;
}

static json_t *hello_payload (struct overlay *ov)
{
    return json_pack ("{s:i s:i s:s s:I s:s s:s s:I}",
                      "version", PROTOCOL_VERSION,
                      "rank", (int)ov->rank,
                      "instance", ov->api->instance_id (ov->b),
                      "incarnation", (json_int_t)ov->incarnation,
                      "hostname", ov->api->hostname (ov->b),
                      "topology", ov->topo_spec,
                      "seq", (json_int_t)(ov->events
                                          ? evlayer_last (ov->events) : 0));
}

static void send_hello (struct overlay *ov, struct peer *p)
{
    json_t *hello = hello_payload (ov);
    if (hello)
        send_control (ov, p, ENV_HELLO, hello);
    json_decref (hello);
}

static void report_ready (struct overlay *ov);
static void ready_retry (struct overlay *ov, double now);
static void trace_expire (struct overlay *ov, double now);
static void heal_check (struct overlay *ov);
static void link_apply (struct overlay *ov, const char *op, uint32_t a,
                        uint32_t b, int from);
static void peer_remove (struct overlay *ov, uint32_t rank);

static int is_fenced (struct overlay *ov, uint32_t rank);

/* Report ready to rank 0 once every peer that is not fenced is up. */
static void flood (struct overlay *ov, int kind, uint32_t rank, uint64_t inc,
                   const char *reason, int except);

static void check_ready (struct overlay *ov)
{
    for (int i = 0; i < ov->npeers; i++) {
        struct peer *p = ov->peers[i];
        if (p->state != PEER_UP && p->state != PEER_SUSPECT
            && !is_fenced (ov, p->rank))
            return;
    }
    /* Rank 0 announces its incarnation once its links are up, so that
     * after a restart every broker reports ready to it again. */
    if (ov->rank == 0 && !ov->reported_ready)
        flood (ov, ENV_UNFENCE, 0, ov->incarnation, "rank 0 up", -1);
    report_ready (ov);
}

static struct fence *fence_lookup (struct overlay *ov, uint32_t rank)
{
    char key[16];
    snprintf (key, sizeof (key), "%u", (unsigned)rank);
    return zhashx_lookup (ov->fences, key);
}

static int is_fenced (struct overlay *ov, uint32_t rank)
{
    struct fence *f = fence_lookup (ov, rank);
    return f && f->fenced;
}

/* The router's down set is the fence view: ranks believed dead.  A
 * neighbour whose link is down here but that nobody fenced is still
 * routed to, around the broken link (route_out's detour). */
static void router_refresh (struct overlay *ov, uint32_t rank)
{
    bgn_router_set_down (ov->router, rank, is_fenced (ov, rank) != 0);
}

static void peer_set_state (struct overlay *ov, struct peer *p, int state)
{
    int was_up = (p->state == PEER_UP || p->state == PEER_SUSPECT);
    int is_up = (state == PEER_UP || state == PEER_SUSPECT);

    if (p->state == state)
        return;
    ovlog (ov, LOG_DEBUG, "peer %u: %s -> %s", (unsigned)p->rank,
           peer_state_str (p->state), peer_state_str (state));
    p->state = state;
    p->state_since = monotime_now ();
    if (is_up && !was_up)
        ov->peers_up++;
    if (!is_up && was_up)
        ov->peers_up--;
    if (is_up)
        p->unreachable = 0;
    router_refresh (ov, p->rank);
    if (is_up || state == PEER_DOWN)
        flush_backlogs (ov);
    check_ready (ov);
}

/* ---- fencing ----------------------------------------------------------
 * A broker that loses a peer fences it: marks (rank, incarnation) down
 * and floods the fence to its live peers, each of which applies it once
 * and floods it on, so every broker routes around the rank.  A rank that
 * comes back with a newer incarnation is unfenced the same way.  A fence
 * for an incarnation older than one already known live is stale and
 * ignored; a broker that sees a fence of its own current incarnation (it
 * was hung, not dead) rejoins with a new incarnation.
 */

static void flood (struct overlay *ov, int kind, uint32_t rank, uint64_t inc,
                   const char *reason, int except)
{
    json_t *o = json_pack ("{s:i s:I s:s s:i}", "rank", (int)rank,
                           "incarnation", (json_int_t)inc,
                           "reason", reason ? reason : "",
                           "origin", (int)ov->rank);
    if (!o)
        return;
    for (int i = 0; i < ov->npeers; i++) {
        struct peer *p = ov->peers[i];
        if ((int)p->rank == except || p->rank == rank)
            continue;
        if (p->state == PEER_UP || p->state == PEER_SUSPECT)
            send_control (ov, p, kind, o);
    }
    json_decref (o);
}

static void tracker_fail_dest (struct overlay *ov, uint32_t dest);
static void membership_event (struct overlay *ov, const char *topic,
                              uint32_t rank, uint64_t inc, const char *reason);
static void schedule_partition_check (struct overlay *ov);
static void rejoin_self (struct overlay *ov, const char *why);

static struct fence *fence_get (struct overlay *ov, uint32_t rank)
{
    struct fence *f = fence_lookup (ov, rank);
    char key[16];

    if (f)
        return f;
    if (!(f = calloc (1, sizeof (*f))))
        return NULL;
    snprintf (key, sizeof (key), "%u", (unsigned)rank);
    zhashx_insert (ov->fences, key, f);
    return f;
}

/* Apply a fence of (rank, inc).  Returns 1 if it was news. */
static int fence_apply (struct overlay *ov, uint32_t rank, uint64_t inc,
                        const char *reason, int from)
{
    struct fence *f;
    struct peer *p;

    if (rank >= ov->size)
        return 0;
    if (rank == ov->rank) {
        if (inc == ov->incarnation)
            rejoin_self (ov, reason);
        return 0;
    }
    if (!(f = fence_get (ov, rank)))
        return 0;
    if ((f->fenced && f->inc >= inc) || (!f->fenced && f->inc > inc))
        return 0;
    f->fenced = 1;
    f->inc = inc;
    f->since = monotime_now ();
    /* it must report ready again once it is back with all its links */
    bgn_rankset_remove (ov->ready, rank);
    snprintf (f->reason, sizeof (f->reason), "%s", reason ? reason : "");
    ov->nfenced++;
    ov->fences_seen++;
    ovlog (ov, reason && !strcmp (reason, "left the instance") ? LOG_INFO
                                                                : LOG_NOTICE,
           "rank %u fenced (%s)", (unsigned)rank,
           reason && *reason ? reason : "down");
    if ((p = peer_lookup (ov, rank)) && p->state != PEER_DOWN
        && p->incarnation <= inc)
        peer_set_state (ov, p, PEER_DOWN);
    router_refresh (ov, rank);
    flood (ov, ENV_FENCE, rank, inc, reason, from);
    membership_event (ov, "overlay.fence", rank, inc, reason);
    tracker_fail_dest (ov, rank);
    flush_backlogs (ov);
    schedule_partition_check (ov);
    return 1;
}

/* Apply an unfence of (rank, inc): rank is alive again as incarnation inc.
 * News (flooded on) when it lifts a fence, and for rank 0 whenever its
 * incarnation is newer: a restarted rank 0 must hear everyone's ready
 * reports again. */
static int unfence_apply (struct overlay *ov, uint32_t rank, uint64_t inc,
                          int from)
{
    struct fence *f;
    struct peer *p;

    if (rank >= ov->size || rank == ov->rank || !(f = fence_get (ov, rank)))
        return 0;
    if (f->inc >= inc)
        return 0;
    int was = f->fenced;
    f->inc = inc;
    f->fenced = 0;
    if (was) {
        ov->nfenced--;
        ovlog (ov, LOG_NOTICE, "rank %u rejoined (incarnation %llu)",
               (unsigned)rank, (unsigned long long)inc);
        router_refresh (ov, rank);
        membership_event (ov, "overlay.unfence", rank, inc, "rejoined");
    }
    else if (rank != 0)
        return 0;
    flood (ov, ENV_UNFENCE, rank, inc, "rejoined", from);
    /* If it is our neighbour and we connect to it, say hello now rather
     * than at the next retry. */
    if (was && (p = peer_lookup (ov, rank)) && p->connector
        && p->state == PEER_DOWN)
        send_hello (ov, p);
    if (rank == 0) {
        ov->reported_ready = 0;
        check_ready (ov);
    }
    schedule_partition_check (ov);
    return 1;
}

/* Tell peer p every fence we know, so a (re)started broker learns the
 * current view of down ranks. */
static void send_fence_view (struct overlay *ov, struct peer *p)
{
    for (struct fence *f = zhashx_first (ov->fences); f;
         f = zhashx_next (ov->fences)) {
        const char *key = zhashx_cursor (ov->fences);
        if (!f->fenced)
            continue;
        json_t *o = json_pack ("{s:i s:I s:s s:i}", "rank", atoi (key),
                               "incarnation", (json_int_t)f->inc,
                               "reason", f->reason, "origin", (int)ov->rank);
        if (o)
            send_control (ov, p, ENV_FENCE, o);
        json_decref (o);
    }
}

/* Rank 0 also publishes membership changes as sequenced events
 * ("overlay.fence", "overlay.unfence"), so every broker's subscribers see
 * them in one global order.  Routing does not wait for them: the flood
 * works while rank 0 is down. */
static void membership_event (struct overlay *ov, const char *topic,
                              uint32_t rank, uint64_t inc, const char *reason)
{
    json_t *o;
    char *payload;
    msg_t *ev;

    if (ov->rank != 0 || !ov->events)
        return;
    o = json_pack ("{s:i s:I s:s}", "rank", (int)rank,
                   "incarnation", (json_int_t)inc,
                   "reason", reason ? reason : "");
    payload = o ? json_dumps (o, JSON_COMPACT) : NULL;
    if (payload && (ev = msg_event_create (topic, payload))) {
        msg_set_matchtag (ev, 0);
        evlayer_publish (ov->events, ev);
    }
    free (payload);
    json_decref (o);
}

/* We lost peer p: fence it with the incarnation we knew. */
static void peer_lost (struct overlay *ov, struct peer *p, const char *why)
{
    if (p->state == PEER_DOWN)
        return;
    ovlog (ov, p->leaving ? LOG_INFO : LOG_WARNING, "peer %u lost: %s",
           (unsigned)p->rank, why);
    peer_set_state (ov, p, PEER_DOWN);
    fence_apply (ov, p->rank, p->incarnation, why, -1);
}

static int lost_cb (zloop_t *loop, int timer_id, void *arg)
{
    struct overlay *ov = arg;
    ov->lost_timer = -1;
    for (int i = 0; i < ov->npeers; i++) {
        struct peer *p = ov->peers[i];
        if (p->unreachable && (p->state == PEER_UP || p->state == PEER_SUSPECT))
            peer_lost (ov, p, "connection gone (EHOSTUNREACH)");
        p->unreachable = 0;
    }
    return 0;
}

/* A send to p failed as if it were gone: handle it outside the send path. */
static void peer_unreachable (struct overlay *ov, struct peer *p)
{
    if (p->state != PEER_UP && p->state != PEER_SUSPECT)
        return;
    p->unreachable = 1;
    if (ov->lost_timer < 0)
        ov->lost_timer = zloop_timer (ov->loop, 1, 1, lost_cb, ov);
}

/* This broker was fenced while alive (it was stopped, or cut off for a
 * while): start over as a new incarnation so everyone lets it back in. */
static void rejoin_self (struct overlay *ov, const char *why)
{
    struct timeval tv;
    uint64_t inc;

    gettimeofday (&tv, NULL);
    inc = (uint64_t)tv.tv_sec * 1000000 + tv.tv_usec;
    if (inc <= ov->incarnation)
        inc = ov->incarnation + 1;
    ovlog (ov, LOG_WARNING, "this broker was fenced (%s): rejoining as "
           "incarnation %llu", why && *why ? why : "declared down",
           (unsigned long long)inc);
    ov->incarnation = inc;
    ov->reported_ready = 0;
    for (int i = 0; i < ov->npeers; i++) {
        struct peer *p = ov->peers[i];
        if (p->state != PEER_CONNECTING)
            peer_set_state (ov, p, PEER_CONNECTING);
        p->refused = 0;
        if (p->connector)
            send_hello (ov, p);
    }
}

static void handle_fence_msg (struct overlay *ov, struct peer *from,
                              const struct envelope *env, zmq_msg_t *body,
                              int n)
{
    json_t *o = n >= 1 ? json_loadb (zmq_msg_data (&body[0]),
                                     zmq_msg_size (&body[0]), 0, NULL) : NULL;
    int rank;
    json_int_t inc;
    const char *reason = "";

    if (!o || json_unpack (o, "{s:i s:I s?s}", "rank", &rank,
                           "incarnation", &inc, "reason", &reason) < 0
        || rank < 0) {
        ov->malformed_drops++;
        json_decref (o);
        return;
    }
    if (env->kind == ENV_FENCE)
        fence_apply (ov, (uint32_t)rank, (uint64_t)inc, reason, from->rank);
    else
        unfence_apply (ov, (uint32_t)rank, (uint64_t)inc, from->rank);
    json_decref (o);
}

/* ---- self-healing -----------------------------------------------------
 * When fewer than heal_threshold peers are up, a broker asks live ranks
 * near each lost neighbour (on the ring: X+1, X-1, X+2, ...) to accept a
 * substitute link, and connects to them.  Substitute links are flooded
 * (ENV_LINK) so every router uses them.  Once every graph neighbour is
 * back, the substitutes are dropped and the graph is the plain BGN again.
 * The default threshold is half the topology degree (at least 2): the
 * self-healing paper's point is to act while a broker still has links to
 * spare, before a few more failures could isolate it.
 */

static int peer_index (struct overlay *ov, uint32_t rank)
{
    for (int i = 0; i < ov->npeers; i++)
        if (ov->neighbours[i] == rank)
            return i;
    return -1;
}

/* Add a peer, keeping neighbours[] sorted (peer_lookup bisects it). */
static struct peer *peer_insert (struct overlay *ov, uint32_t rank)
{
    struct peer *p, **np;
    uint32_t *nn;
    int i;

    if ((p = peer_lookup (ov, rank)))
        return p;
    if (!(p = peer_create (ov, rank)))
        return NULL;
    if (!(nn = realloc (ov->neighbours, (ov->npeers + 1) * sizeof (*nn)))) {
        peer_destroy (&p);
        return NULL;
    }
    ov->neighbours = nn;
    if (!(np = realloc (ov->peers, (ov->npeers + 1) * sizeof (*np)))) {
        peer_destroy (&p);
        return NULL;
    }
    ov->peers = np;
    for (i = ov->npeers; i > 0 && ov->neighbours[i - 1] > rank; i--) {
        ov->neighbours[i] = ov->neighbours[i - 1];
        ov->peers[i] = ov->peers[i - 1];
    }
    ov->neighbours[i] = rank;
    ov->peers[i] = p;
    ov->npeers++;
    return p;
}

static void peer_remove (struct overlay *ov, uint32_t rank)
{
    int i = peer_index (ov, rank);
    struct peer *p;

    if (i < 0)
        return;
    p = ov->peers[i];
    if (p->state == PEER_UP || p->state == PEER_SUSPECT)
        ov->peers_up--;
    memmove (&ov->peers[i], &ov->peers[i + 1],
             (ov->npeers - i - 1) * sizeof (ov->peers[0]));
    memmove (&ov->neighbours[i], &ov->neighbours[i + 1],
             (ov->npeers - i - 1) * sizeof (ov->neighbours[0]));
    ov->npeers--;
    /* what waited for it goes another way */
    struct pending *pd;
    while ((pd = zlistx_first (p->backlog))) {
        zlistx_detach (p->backlog, NULL);
        if (route_out (ov, &pd->env, pd->frames, pd->nframes, -1) == 0)
            pd->nframes = 0;
        pending_destroy (&pd);
    }
    peer_destroy (&p);
}

static void flood_link (struct overlay *ov, const char *op, uint32_t a,
                        uint32_t b, int except)
{
    json_t *o = json_pack ("{s:s s:i s:i}", "op", op, "a", (int)a, "b", (int)b);
    if (!o)
        return;
    for (int i = 0; i < ov->npeers; i++) {
        struct peer *p = ov->peers[i];
        if ((int)p->rank == except)
            continue;
        if (p->state == PEER_UP || p->state == PEER_SUSPECT)
            send_control (ov, p, ENV_LINK, o);
    }
    json_decref (o);
}

/* Apply a link change; flood it on if it was news. */
static void link_apply (struct overlay *ov, const char *op, uint32_t a,
                        uint32_t b, int from)
{
    int changed;

    if (a >= ov->size || b >= ov->size || a == b)
        return;
    if (!strcmp (op, "add"))
        changed = bgn_router_add_link (ov->router, a, b) == 0;
    else
        changed = bgn_router_remove_link (ov->router, a, b) == 0;
    if (!changed)
        return;
    ovlog (ov, LOG_INFO, "substitute link %u-%u %s", (unsigned)a, (unsigned)b,
           !strcmp (op, "add") ? "added" : "removed");
    flood_link (ov, op, a, b, from);
    /* the far end of a dropped substitute link forgets its peer */
    if (strcmp (op, "add") != 0 && (a == ov->rank || b == ov->rank)) {
        uint32_t other = a == ov->rank ? b : a;
        struct peer *p = peer_lookup (ov, other);
        if (p && p->substitute && !p->connector) {
            peer_remove (ov, other);
            ov->nsubst--;
        }
    }
}

static int has_substitute_for (struct overlay *ov, uint32_t lost)
{
    for (int i = 0; i < ov->npeers; i++)
        if (ov->peers[i]->substitute && ov->peers[i]->sub_for == (int)lost)
            return 1;
    char key[16];
    snprintf (key, sizeof (key), "%u", (unsigned)lost);
    for (const char *v = zhashx_first (ov->contacts); v;
         v = zhashx_next (ov->contacts))
        if (!strcmp (v, key))
            return 1;
    return 0;
}

/* The live rank nearest to 'lost' on the ring that we are not linked to. */
static int choose_substitute (struct overlay *ov, uint32_t lost)
{
    for (uint32_t d = 1; d <= 16 && d < ov->size; d++) {
        for (int sign = 1; sign >= -1; sign -= 2) {
            uint32_t r = (uint32_t)(((int64_t)lost + sign * (int64_t)d
                                     + ov->size) % ov->size);
            char key[16];
            if (r == ov->rank || is_fenced (ov, r) || peer_lookup (ov, r))
                continue;
            snprintf (key, sizeof (key), "%u", (unsigned)r);
            if (zhashx_lookup (ov->contacts, key))
                continue;
            if (bgn_router_distance (ov->router, ov->rank, r) < 0)
                continue;
            return (int)r;
        }
    }
    return -1;
}

static void contact (struct overlay *ov, uint32_t sub, uint32_t lost)
{
    char key[16], val[16], payload[160];
    msg_t *msg;

    snprintf (payload, sizeof (payload),
              "{\"rank\":%u,\"pubkey\":\"%s\",\"lost\":%u}",
              (unsigned)ov->rank, ov->curve ? zcert_public_txt (ov->cert) : "",
              (unsigned)lost);
    if (!(msg = msg_request_create ("overlay.contact", sub, payload)))
        return;
    snprintf (key, sizeof (key), "%u", (unsigned)sub);
    snprintf (val, sizeof (val), "%u", (unsigned)lost);
    zhashx_update (ov->contacts, key, strdup (val));
    ovlog (ov, LOG_INFO, "healing: asking rank %u to stand in for lost "
           "neighbour %u", (unsigned)sub, (unsigned)lost);
    ov->api->send (ov->b, msg);
}

/* Forget a substitute link we made: tell everyone, disconnect, remove. */
static void substitute_drop (struct overlay *ov, struct peer *p)
{
    uint32_t rank = p->rank;

    link_apply (ov, "del", ov->rank, rank, -1);
    if (p->endpoint[0])
        zmq_disconnect (ov->sock, p->endpoint);
    peer_remove (ov, rank);
    ov->nsubst--;
}

static void drop_substitutes (struct overlay *ov)
{
    for (int i = 0; i < ov->npeers; i++) {
        struct peer *p = ov->peers[i];
        if (!p->substitute || !p->connector)
            continue;
        ovlog (ov, LOG_INFO, "healing: neighbours are back, dropping "
               "substitute link to %u", (unsigned)p->rank);
        json_t *o = json_pack ("{s:s s:i s:i}", "op", "del", "a",
                               (int)ov->rank, "b", (int)p->rank);
        if (o && (p->state == PEER_UP || p->state == PEER_SUSPECT))
            send_control (ov, p, ENV_LINK, o);
        json_decref (o);
        substitute_drop (ov, p);
        i = -1;   /* the array changed: start over */
    }
}

static void heal_check (struct overlay *ov)
{
    int lost_neighbours = 0;

    if (ov->heal_threshold <= 0 || ov->size < 3)
        return;
    /* a substitute that died is no substitute */
    for (int i = 0; i < ov->npeers; i++) {
        struct peer *p = ov->peers[i];
        if (p->substitute && p->connector && p->state == PEER_DOWN) {
            substitute_drop (ov, p);
            i = -1;   /* the array changed: start over */
        }
    }
    for (int i = 0; i < ov->npeers; i++) {
        struct peer *p = ov->peers[i];
        if (!p->substitute && (p->state == PEER_DOWN || is_fenced (ov, p->rank)))
            lost_neighbours++;
    }
    if (lost_neighbours == 0) {
        if (ov->nsubst > 0)
            drop_substitutes (ov);
        return;
    }
    int deficit = ov->heal_threshold - ov->peers_up;
    for (int i = 0; i < ov->npeers && deficit > 0; i++) {
        struct peer *p = ov->peers[i];
        if (p->substitute
            || !(p->state == PEER_DOWN || is_fenced (ov, p->rank))
            || has_substitute_for (ov, p->rank))
            continue;
        int sub = choose_substitute (ov, p->rank);
        if (sub >= 0) {
            contact (ov, (uint32_t)sub, p->rank);
            deficit--;
        }
    }
}

/* Rank 'sub' answered our contact request: connect to it. */
static void contact_response (struct overlay *ov, const msg_t *rsp)
{
    const char *payload = msg_get_payload (rsp, NULL);
    json_t *o = NULL;
    int errnum = 0, rank, lost = -1;
    const char *endpoint, *pubkey = "";
    char key[16];
    struct peer *p;

    msg_get_errnum (rsp, &errnum);
    if (errnum || !payload || !(o = json_loads (payload, 0, NULL))
        || json_unpack (o, "{s:i s:s s?s s?i}", "rank", &rank, "endpoint",
                        &endpoint, "pubkey", &pubkey, "lost", &lost) < 0
        || rank < 0 || (uint32_t)rank >= ov->size) {
        json_decref (o);
        return;   /* the contact entry expires with the next heal round */
    }
    snprintf (key, sizeof (key), "%d", rank);
    zhashx_delete (ov->contacts, key);
    if (peer_lookup (ov, rank) || !(p = peer_insert (ov, rank))) {
        json_decref (o);
        return;
    }
    p->substitute = 1;
    p->connector = 1;
    p->sub_for = lost;
    snprintf (p->endpoint, sizeof (p->endpoint), "%s", endpoint);
    snprintf (p->pubkey, sizeof (p->pubkey), "%s", pubkey);
    ov->nsubst++;
    if (ov->curve)
        zmq_setsockopt (ov->sock, ZMQ_CURVE_SERVERKEY, p->pubkey, 40);
    zmq_setsockopt (ov->sock, ZMQ_CONNECT_ROUTING_ID, p->id, strlen (p->id));
    if (zmq_connect (ov->sock, p->endpoint) < 0)
        ovlog (ov, LOG_ERR, "healing: connect to %u at %s: %s",
               (unsigned)rank, p->endpoint, zmq_strerror (errno));
    send_hello (ov, p);
    json_decref (o);
}

/* Someone asks us to accept a substitute link from it. */
static void contact_request (struct overlay *ov, const msg_t *req)
{
    json_t *o = json_loads (msg_get_payload (req, NULL) ?: "", 0, NULL);
    int rank;
    const char *pubkey = "";
    struct peer *p;

    if (!o || json_unpack (o, "{s:i s?s}", "rank", &rank, "pubkey",
                           &pubkey) < 0
        || rank < 0 || (uint32_t)rank >= ov->size || (uint32_t)rank == ov->rank) {
        ov->api->respond_error (ov->b, req, EPROTO, "bad contact request");
        json_decref (o);
        return;
    }
    if (!(p = peer_lookup (ov, rank))) {
        if (!(p = peer_insert (ov, rank))) {
            ov->api->respond_error (ov->b, req, ENOMEM, NULL);
            json_decref (o);
            return;
        }
        p->substitute = 1;
        p->connector = 0;
        ov->nsubst++;
        snprintf (p->pubkey, sizeof (p->pubkey), "%s", pubkey);
        if (ov->curve && strlen (pubkey) == 40
            && !zcertstore_lookup (ov->certstore, pubkey)) {
            uint8_t pub[32], sec[32] = { 0 };
            zcert_t *c = NULL;
            if (zmq_z85_decode (pub, pubkey))
                c = zcert_new_from (pub, sec);
            if (c)
                zcertstore_insert (ov->certstore, &c);
        }
    }
    json_t *rsp = json_pack ("{s:i s:s s:s}", "rank", (int)ov->rank,
                             "endpoint", ov->public_uri,
                             "pubkey", ov->curve ? zcert_public_txt (ov->cert)
                                                 : "");
    json_t *lost = json_object_get (o, "lost");
    if (rsp && lost)
        json_object_set (rsp, "lost", lost);
    char *s = rsp ? json_dumps (rsp, JSON_COMPACT) : NULL;
    if (s)
        ov->api->respond (ov->b, req, s);
    free (s);
    json_decref (rsp);
    json_decref (o);
}

/* ---- partitions -------------------------------------------------------
 * Policy (doc/overlay-protocol.md): a broker that cannot reach rank 0 in
 * its view of the live graph, for two keepalive intervals in a row, logs
 * a critical line and exits with status 3; rank 0 keeps running, reports
 * "partitioned" and counts the live-but-unreachable ranks as lost.
 */
static int partition_cb (zloop_t *loop, int timer_id, void *arg)
{
    struct overlay *ov = arg;

    ov->partition_timer = -1;
    if (ov->rank != 0) {
        /* A dead (fenced) rank 0 is not a partition: wait for it --
         * unless every peer is gone too, which means this broker is the
         * one cut off. */
        if ((!is_fenced (ov, 0) || ov->peers_up == 0)
            && bgn_router_distance (ov->router, ov->rank, 0) < 0) {
            ovlog (ov, LOG_CRIT, "partitioned: rank 0 is unreachable from "
                   "here (%d ranks fenced); shutting down (exit 3)",
                   ov->nfenced);
            ov->api->stop (ov->b, 3);
        }
        return 0;
    }
    uint32_t lost = 0;
    for (uint32_t r = 1; r < ov->size; r++) {
        if (bgn_router_is_down (ov->router, r))
            continue;
        if (bgn_router_distance (ov->router, r, 0) < 0)
            lost++;
    }
    if (lost && !ov->partitioned)
        ovlog (ov, LOG_CRIT, "partitioned: %u live ranks cannot be reached "
               "from rank 0; they are lost", (unsigned)lost);
    ov->partitioned = lost > 0;
    ov->unreachable_live = lost;
    return 0;
}

static void schedule_partition_check (struct overlay *ov)
{
    if (ov->partition_timer >= 0)
        return;
    ov->partition_timer = zloop_timer (ov->loop,
        (size_t)(ov->keepalive_interval * 2000) + 1, 1, partition_cb, ov);
}

/* ---- request tracker -------------------------------------------------- */

static void tracked_destroy (void **item)
{
    struct tracked *t = *item;
    if (t) {
        msg_destroy (&t->req);
        free (t);
        *item = NULL;
    }
}

static int tracker_key (const msg_t *msg, char *key, size_t len)
{
    const char *client = msg_route_last (msg);
    if (!client || msg_route_count (msg) < 1)
        return -1;
    snprintf (key, len, "%s:%u", client, (unsigned)msg_get_matchtag (msg));
    return 0;
}

#define TRACKER_MAX 100000

/* Remember a request this broker injects toward 'dest'. */
static int tracker_add (struct overlay *ov, const msg_t *req, uint32_t dest)
{
    char key[MSG_MAX_ROUTEID + 16];
    struct tracked *t;

    if (msg_get_type (req) != MSGTYPE_REQUEST
        || (msg_get_flags (req) & MSGFLAG_NORESPONSE) || dest >= ov->size
        || zhashx_size (ov->tracker) >= TRACKER_MAX
        || tracker_key (req, key, sizeof (key)) < 0)
        return -1;
    if (!(t = calloc (1, sizeof (*t))) || !(t->req = msg_copy (req))) {
        free (t);
        return -1;
    }
    msg_set_payload (t->req, NULL, 0);
    t->dest = dest;
    t->expires = monotime_now () + ov->rpc_timeout * 2 + 5;
    zhashx_update (ov->tracker, key, t);
    return 0;
}

/* A response reached its origin broker.  Returns 1 if it must be dropped
 * (its request was already failed by the tracker). */
static int tracker_response (struct overlay *ov, const msg_t *rsp)
{
    char key[MSG_MAX_ROUTEID + 16];
    struct tracked *t;
    int drop = 0;

    if (msg_get_type (rsp) != MSGTYPE_RESPONSE
        || tracker_key (rsp, key, sizeof (key)) < 0
        || !(t = zhashx_lookup (ov->tracker, key)))
        return 0;
    if (t->failed) {
        ov->tracker_dup_drops++;
        drop = 1;
    }
    if (!(msg_get_flags (rsp) & MSGFLAG_STREAMING) || drop)
        zhashx_delete (ov->tracker, key);
    return drop;
}

static void tracker_fail_dest (struct overlay *ov, uint32_t dest)
{
    char errstr[64];
    zlistx_t *fail = zlistx_new ();

    if (!fail)
        return;
    for (struct tracked *t = zhashx_first (ov->tracker); t;
         t = zhashx_next (ov->tracker))
        if (t->dest == dest && !t->failed)
            zlistx_add_end (fail, t);
    snprintf (errstr, sizeof (errstr), "rank %u went down", (unsigned)dest);
    for (struct tracked *t = zlistx_first (fail); t; t = zlistx_next (fail)) {
        t->failed = 1;
        ov->tracker_failed++;
        msg_t *req = msg_copy (t->req);
        if (req) {
            /* The copy's stack ends with our rank: the broker pops it. */
            ov->api->respond_error (ov->b, req, EHOSTUNREACH, errstr);
            msg_destroy (&req);
        }
    }
    zlistx_destroy (&fail);
}

static int sweep_cb (zloop_t *loop, int timer_id, void *arg)
{
    struct overlay *ov = arg;
    double now = monotime_now ();
    zlistx_t *old = zlistx_new ();

    if (!old)
        return 0;
    for (struct tracked *t = zhashx_first (ov->tracker); t;
         t = zhashx_next (ov->tracker))
        if (t->expires < now)
            zlistx_add_end (old, (void *)zhashx_cursor (ov->tracker));
    for (const char *k = zlistx_first (old); k; k = zlistx_next (old))
        zhashx_delete (ov->tracker, k);
    zlistx_destroy (&old);
    return 0;
}

/* Check a hello's content.  Returns NULL if acceptable, else the reason. */
static const char *hello_check (struct overlay *ov, struct peer *p,
                                json_t *o, uint64_t *inc)
{
    int version, rank;
    const char *instance, *hostname = "", *topology = "";
    json_int_t incarnation, seq = 0;

    if (!o || json_unpack (o, "{s:i s:i s:s s:I s?s s?s s?I}", "version",
                           &version, "rank", &rank, "instance", &instance,
                           "incarnation", &incarnation, "hostname", &hostname,
                           "topology", &topology, "seq", &seq) < 0)
        return "malformed hello";
    p->hello_seq = seq > 0 ? (uint32_t)seq : 0;
    if (version != PROTOCOL_VERSION)
        return "protocol version mismatch";
    if ((uint32_t)rank != p->rank)
        return "rank does not match the connection identity";
    if (strcmp (instance, ov->api->instance_id (ov->b)) != 0)
        return "peer belongs to another instance";
    if (strcmp (topology, ov->topo_spec) != 0)
        return "peer uses another topology";
    snprintf (p->hostname, sizeof (p->hostname), "%s", hostname);
    *inc = (uint64_t)incarnation;
    return NULL;
}

static void handle_hello (struct overlay *ov, struct peer *p,
                          const struct envelope *env, zmq_msg_t *body, int n,
                          const char *key_problem)
{
    json_t *o = NULL;
    const char *why;
    uint64_t inc = 0;

    if (n >= 1)
        o = json_loadb (zmq_msg_data (&body[0]), zmq_msg_size (&body[0]), 0,
                        NULL);
    if (env->kind == ENV_HELLO_NAK) {
        const char *reason = "?";
        if (o)
            json_unpack (o, "{s:s}", "reason", &reason);
        if (!strncmp (reason, "fenced", 6)) {
            rejoin_self (ov, "a peer refused our fenced incarnation");
            goto done;
        }
        ovlog (ov, LOG_ERR, "peer %u refused our hello: %s", (unsigned)p->rank,
               reason);
        p->refused = 1;
        if (p->connector && p->endpoint[0])
            zmq_disconnect (ov->sock, p->endpoint);
        peer_set_state (ov, p, PEER_DOWN);
        goto done;
    }
    if ((why = key_problem) || (why = hello_check (ov, p, o, &inc))) {
        ovlog (ov, LOG_ERR, "peer %u: hello refused: %s", (unsigned)p->rank,
               why);
        if (env->kind == ENV_HELLO) {
            json_t *nak = json_pack ("{s:s}", "reason", why);
            uint64_t keep = p->incarnation;
            p->incarnation = 0;
            send_control (ov, p, ENV_HELLO_NAK, nak);
            p->incarnation = keep;
            json_decref (nak);
        }
        else if (p->connector && p->endpoint[0])
            zmq_disconnect (ov->sock, p->endpoint);
        goto done;
    }
    struct fence *f = fence_lookup (ov, p->rank);
    if (f && ((f->fenced && inc <= f->inc) || (!f->fenced && inc < f->inc))) {
        /* A fenced (or older) incarnation: it must come back as new. */
        ovlog (ov, LOG_INFO, "peer %u: hello from fenced incarnation %llu",
               (unsigned)p->rank, (unsigned long long)inc);
        uint64_t keep = p->incarnation;
        p->incarnation = inc;
        if (env->kind == ENV_HELLO) {
            json_t *nak = json_pack ("{s:s}", "reason",
                                     "fenced: rejoin with a new incarnation");
            send_control (ov, p, ENV_HELLO_NAK, nak);
            json_decref (nak);
        }
        else {
            json_t *fo = json_pack ("{s:i s:I s:s}", "rank", (int)p->rank,
                                    "incarnation", (json_int_t)inc,
                                    "reason", "fenced");
            send_control (ov, p, ENV_FENCE, fo);
            json_decref (fo);
        }
        p->incarnation = keep;
        goto done;
    }
    if (p->incarnation && inc != p->incarnation)
        ovlog (ov, LOG_NOTICE, "peer %u restarted (incarnation %llu -> %llu)",
               (unsigned)p->rank, (unsigned long long)p->incarnation,
               (unsigned long long)inc);
    p->incarnation = inc;
    p->last_heard = monotime_now ();
    /* The ACK goes first: nothing else may reach the peer before it. */
    if (env->kind == ENV_HELLO) {
        json_t *ack = hello_payload (ov);
        send_control (ov, p, ENV_HELLO_ACK, ack);
        json_decref (ack);
    }
    peer_set_state (ov, p, PEER_UP);
    send_fence_view (ov, p);
    evlayer_seq_hint (ov->events, p->hello_seq);
    /* Alive as a newer incarnation: lift any fence everywhere. */
    unfence_apply (ov, p->rank, inc, -1);
    if (p->substitute)
        link_apply (ov, "add", ov->rank, p->rank, -1);
done:
    json_decref (o);
}

/* ---- event layer glue -------------------------------------------------- */

static int ev_route (struct overlay *ov, uint32_t to, int kind, int flags,
                     zmq_msg_t *frames, int n)
{
    struct envelope env = { .kind = kind, .flags = flags, .ttl = ov->ttl,
                            .hops = 1, .source = ov->rank, .dest = to };
    if (to == ov->rank || to >= ov->size) {
        close_frames (frames, n);
        return -1;
    }
    if (route_out (ov, &env, frames, n, -1) < 0) {
        close_frames (frames, n);
        ov->no_route_drops++;
        return -1;
    }
    return 0;
}

static int ev_send (void *arg, uint32_t to, int kind, const msg_t *event)
{
    struct overlay *ov = arg;
    zmq_msg_t frames[MAX_FRAMES];
    int n = msg_to_frames ((msg_t *)event, frames, MAX_FRAMES);
    if (n < 0)
        return -1;
    return ev_route (ov, to, ENV_EVENT, kind == EV_REPAIR ? 1 : 0, frames, n);
}

static int ev_control (void *arg, uint32_t to, int kind, json_t *o)
{
    struct overlay *ov = arg;
    json_t *copy = json_copy (o);
    zmq_msg_t frame;
    char *s;

    if (!copy)
        return -1;
    json_object_set_new (copy, "k", json_integer (kind));
    s = json_dumps (copy, JSON_COMPACT);
    json_decref (copy);
    if (!s)
        return -1;
    zmq_msg_init_size (&frame, strlen (s));
    memcpy (zmq_msg_data (&frame), s, strlen (s));
    free (s);
    return ev_route (ov, to, ENV_EVCTL, 0, &frame, 1);
}

static int ev_is_down (void *arg, uint32_t rank)
{
    return is_fenced (arg, rank);
}

static void ev_deliver (void *arg, const msg_t *event)
{
    struct overlay *ov = arg;
    msg_t *copy = msg_copy (event);
    struct bgn_msg_info info = { .source = 0, .from_overlay = 1 };
    if (copy)
        ov->api->deliver (ov->b, copy, &info);
}

static void ev_lost (void *arg, uint32_t from, uint32_t to)
{
    struct overlay *ov = arg;
    char payload[96];
    msg_t *notice;
    struct bgn_msg_info info = { .source = ov->rank };

    ovlog (ov, LOG_ERR, "events %u..%u are lost: no peer still has them "
           "(raise overlay.event_buffer?)", (unsigned)from, (unsigned)to);
    snprintf (payload, sizeof (payload), "{\"from\":%u,\"to\":%u}",
              (unsigned)from, (unsigned)to);
    if ((notice = msg_event_create ("event.lost", payload)))
        ov->api->deliver (ov->b, notice, &info);
}

/* Ask our tree parent first (it forwarded to us), then other live peers. */
static uint32_t ev_repair_peer (void *arg, int attempt)
{
    struct overlay *ov = arg;
    int parent = bgn_topo_bcast_parent (ov->topo, 0, ov->rank);
    int k = 0;

    if (parent >= 0 && !is_fenced (ov, (uint32_t)parent)) {
        if (attempt == 0)
            return (uint32_t)parent;
        k = 1;
    }
    for (int i = 0; i < ov->npeers; i++) {
        struct peer *p = ov->peers[(i + ov->rank) % ov->npeers];
        if ((int)p->rank == parent)
            continue;
        if (p->state != PEER_UP && p->state != PEER_SUSPECT)
            continue;
        if (k++ == attempt)
            return p->rank;
    }
    return UINT32_MAX;
}

static const struct evlayer_ops ev_ops = {
    .send = ev_send,
    .control = ev_control,
    .is_down = ev_is_down,
    .deliver = ev_deliver,
    .lost = ev_lost,
    .repair_peer = ev_repair_peer,
};

/* An event-layer message: for us, or to be routed on. */
static void handle_event_env (struct overlay *ov, struct peer *p,
                              struct envelope *env, zmq_msg_t *body, int n)
{
    if (env->dest != ov->rank) {
        if (env->dest >= ov->size || env->ttl == 0) {
            ov->ttl_drops += env->ttl == 0;
            return;
        }
        env->ttl--;
        env->hops++;
        if (route_out (ov, env, body, n, (int)p->rank) < 0)
            ov->no_route_drops++;
        else
            ov->forwarded++;
        return;
    }
    if (env->kind == ENV_EVENT) {
        msg_t *msg;
        if (!(msg = body_decode (body, n, NULL, 0))) {
            ov->malformed_drops++;
            return;
        }
        evlayer_recv_event (ov->events, env->source,
                            env->flags & 1 ? EV_REPAIR : EV_TREE, msg);
        return;
    }
    json_t *o = n >= 1 ? json_loadb (zmq_msg_data (&body[0]),
                                     zmq_msg_size (&body[0]), 0, NULL) : NULL;
    int k;
    if (!o || json_unpack (o, "{s:i}", "k", &k) < 0)
        ov->malformed_drops++;
    else
        evlayer_recv_control (ov->events, env->source, k, o);
    json_decref (o);
}

/* ---- receiving -------------------------------------------------------- */

/* Deliver a broker message that reached us (or must be looked at here). */
static void deliver_local (struct overlay *ov, const struct envelope *env,
                           zmq_msg_t *body, int n)
{
    char reason[128] = "";
    msg_t *msg;
    struct bgn_msg_info info = { .hops = env->hops, .source = env->source,
                                 .from_overlay = 1 };

    if (!(msg = body_decode (body, n, reason, sizeof (reason)))) {
        ov->malformed_drops++;
        ovlog (ov, LOG_WARNING, "dropped malformed message from rank %u: %s",
               (unsigned)env->source, reason);
        return;
    }
    if (tracker_response (ov, msg)) {
        msg_destroy (&msg);
        return;
    }
    ov->delivered++;
    ov->inbound = env;
    ov->api->deliver (ov->b, msg, &info);
    ov->inbound = NULL;
}

/* A request that cannot go on gets an error response; other messages are
 * dropped (and counted by the caller). */
static void fail_request (struct overlay *ov, const struct envelope *env,
                          zmq_msg_t *body, int n, int errnum,
                          const char *errstr)
{
    msg_t *msg;

    if (!(msg = body_decode (body, n, NULL, 0)))
        return;
    if (msg_get_type (msg) == MSGTYPE_REQUEST)
        ov->api->respond_error (ov->b, msg, errnum, errstr);
    msg_destroy (&msg);
}

static void handle_data (struct overlay *ov, struct peer *p,
                         struct envelope *env, zmq_msg_t *body, int n)
{
    if (env->dest == ov->rank || env->dest == NODEID_ANY
        || env->dest == NODEID_UPSTREAM) {
        if (ov->test_loop >= 0 && env->dest == ov->rank
            && env->dest == (uint32_t)ov->test_loop)
            goto forward_anyway;
        deliver_local (ov, env, body, n);
        return;
    }
forward_anyway:
    if (env->dest >= ov->size) {
        ov->malformed_drops++;
        return;
    }
    if (env->ttl == 0) {
        p->ttl_drops++;
        ov->ttl_drops++;
        ovlog (ov, LOG_DEBUG, "TTL expired: message from rank %u to %u "
               "after %d hops", (unsigned)env->source, (unsigned)env->dest,
               env->hops);
        fail_request (ov, env, body, n, EHOSTUNREACH,
                      "TTL expired in the overlay (routing loop?)");
        return;
    }
    env->ttl--;
    env->hops++;
    if (route_out (ov, env, body, n, (int)p->rank) < 0) {
        int errnum = errno;
        ov->no_route_drops++;
        fail_request (ov, env, body, n, errnum == ENOBUFS ? ENOBUFS
                                                          : EHOSTUNREACH,
                      errnum == ENOBUFS ? "overlay backlog full"
                                        : "no route to the destination rank");
        return;
    }
    ov->forwarded++;
}

static void handle_one (struct overlay *ov, zmq_msg_t *frames, int n)
{
    struct envelope env;
    const char *why = NULL;
    struct peer *p;
    size_t bytes = 0;

    if (n < 2) {
        ov->malformed_drops++;
        return;
    }
    if (!(p = peer_lookup_id (ov, zmq_msg_data (&frames[0]),
                              zmq_msg_size (&frames[0])))) {
        ov->unknown_peer_drops++;
        if (ov->unknown_peer_drops == 1 || ov->unknown_peer_drops % 1000 == 0)
            ovlog (ov, LOG_WARNING, "dropped message from unknown peer "
                   "'%.*s' (%llu so far)", (int)zmq_msg_size (&frames[0]),
                   (char *)zmq_msg_data (&frames[0]),
                   (unsigned long long)ov->unknown_peer_drops);
        return;
    }
    if (envelope_decode (zmq_msg_data (&frames[1]), zmq_msg_size (&frames[1]),
                         &env, &why) < 0) {
        ov->malformed_drops++;
        ovlog (ov, LOG_WARNING, "peer %u: %s", (unsigned)p->rank, why);
        return;
    }
    for (int i = 1; i < n; i++)
        bytes += zmq_msg_size (&frames[i]);
    p->rx_msgs++;
    p->rx_bytes += bytes;
    if (zlistx_size (ov->traces) > 0 && !ov->tracing) {
        struct trace_info ti = { 0 };
        trace_capture (ov, &env, frames + 2, n - 2, &ti);
        if (ti.valid)
            trace_emit (ov, "rx", p->rank, &env, &ti);
    }
    if (env.kind == ENV_HELLO || env.kind == ENV_HELLO_ACK
        || env.kind == ENV_HELLO_NAK) {
        const char *key_problem = NULL;
        /* On connections peers made to us, CURVE tells who they are: the
         * key must be the one the claimed rank published.  (ZAP already
         * refused keys of no neighbour; this stops one neighbour posing
         * as another.) */
        if (ov->curve && !p->connector) {
            const char *uid = zmq_msg_gets (&frames[1], "User-Id");
            if (!uid || strcmp (uid, p->pubkey) != 0)
                key_problem = "CURVE key does not belong to that rank";
        }
        handle_hello (ov, p, &env, frames + 2, n - 2, key_problem);
        return;
    }
    if (p->state == PEER_CONNECTING || p->state == PEER_DOWN) {
        struct fence *f = fence_lookup (ov, p->rank);
        double now = monotime_now ();
        ov->stale_drops++;
        /* A fenced broker that still talks (it was hung) does not know:
         * tell it, at most once a second, so it rejoins. */
        if (p->state == PEER_DOWN && f && f->fenced
            && env.sender_inc == f->inc && now - p->fence_told > 1.0) {
            json_t *fo = json_pack ("{s:i s:I s:s}", "rank", (int)p->rank,
                                    "incarnation", (json_int_t)f->inc,
                                    "reason", "fenced");
            uint64_t keep = p->incarnation;
            p->incarnation = env.sender_inc;
            send_control (ov, p, ENV_FENCE, fo);
            p->incarnation = keep;
            p->fence_told = now;
            json_decref (fo);
        }
        return;
    }
    if (env.sender_inc != p->incarnation || env.receiver_inc != ov->incarnation) {
        ov->stale_drops++;
        return;
    }
    p->last_heard = monotime_now ();
    if (p->state == PEER_SUSPECT)
        peer_set_state (ov, p, PEER_UP);
    switch (env.kind) {
    case ENV_DATA:
        handle_data (ov, p, &env, frames + 2, n - 2);
        break;
    case ENV_KEEPALIVE:
        if (env.flags == 0) {
            /* echo, so the sender can measure RTT */
            struct envelope echo = { .kind = ENV_KEEPALIVE, .flags = 1,
                                     .ttl = 1, .source = ov->rank,
                                     .dest = p->rank };
            peer_send_now (ov, p, &echo, NULL, 0);
        }
        else if (p->ka_sent_at > 0) {
            p->rtt_us = (monotime_now () - p->ka_sent_at) * 1e6;
            p->ka_sent_at = 0;
        }
        break;
    case ENV_FENCE:
    case ENV_UNFENCE:
        handle_fence_msg (ov, p, &env, frames + 2, n - 2);
        break;
    case ENV_EVENT:
    case ENV_EVCTL:
        handle_event_env (ov, p, &env, frames + 2, n - 2);
        break;
    case ENV_LINK: {
        json_t *o = n > 2 ? json_loadb (zmq_msg_data (&frames[2]),
                                        zmq_msg_size (&frames[2]), 0, NULL)
                          : NULL;
        const char *op;
        int a, b;
        if (o && json_unpack (o, "{s:s s:i s:i}", "op", &op, "a", &a, "b",
                              &b) == 0 && a >= 0 && b >= 0)
            link_apply (ov, op, (uint32_t)a, (uint32_t)b, (int)p->rank);
        else
            ov->malformed_drops++;
        json_decref (o);
        break;
    }
    case ENV_GOODBYE:
        p->leaving = 1;
        peer_lost (ov, p, "left the instance");
        break;
    default:
        ov->malformed_drops++;
        break;
    }
}

static int sock_readable (zloop_t *loop, zmq_pollitem_t *item, void *arg)
{
    struct overlay *ov = arg;
    zmq_msg_t frames[MAX_FRAMES];

    for (int budget = 0; budget < 1024; budget++) {
        int n = 0, more = 1, toolong = 0;
        while (more) {
            zmq_msg_t scratch, *m = n < MAX_FRAMES ? &frames[n] : &scratch;
            zmq_msg_init (m);
            if (zmq_msg_recv (m, ov->sock, ZMQ_DONTWAIT) < 0) {
                zmq_msg_close (m);
                close_frames (frames, n);
                return 0;
            }
            more = zmq_msg_more (m);
            if (m == &scratch) {
                zmq_msg_close (m);
                toolong = 1;
            }
            else
                n++;
        }
        if (toolong)
            ov->malformed_drops++;
        else
            handle_one (ov, frames, n);
        close_frames (frames, n);
    }
    return 0;
}

/* ---- keepalives and liveness ------------------------------------------ */

static int keepalive_cb (zloop_t *loop, int timer_id, void *arg)
{
    struct overlay *ov = arg;
    double now = monotime_now ();

    /* If this broker itself did not run for a while (SIGSTOP, a stalled
     * machine), its peers' silence is its own doing: do not fence them;
     * they will tell us if we were fenced. */
    if (now - ov->last_tick > ov->peer_timeout / 2) {
        ovlog (ov, LOG_WARNING, "this broker did not run for %.1fs; "
               "restarting peer liveness checks", now - ov->last_tick);
        for (int i = 0; i < ov->npeers; i++)
            ov->peers[i]->last_heard = now;
    }
    ov->last_tick = now;
    ready_retry (ov, now);
    evlayer_tick (ov->events, now);
    trace_expire (ov, now);
    if (now - ov->contacts_cleared > 3.0) {
        zhashx_purge (ov->contacts);   /* unanswered: try others */
        ov->contacts_cleared = now;
    }
    heal_check (ov);

    for (int i = 0; i < ov->npeers; i++) {
        struct peer *p = ov->peers[i];
        if (p->state == PEER_UP || p->state == PEER_SUSPECT) {
            double silent = now - p->last_heard;
            if (silent >= ov->peer_timeout) {
                char why[64];
                snprintf (why, sizeof (why), "silent for %.1fs", silent);
                peer_lost (ov, p, why);
                continue;
            }
            if (silent >= 3 * ov->keepalive_interval)
                peer_set_state (ov, p, PEER_SUSPECT);
            if (now - p->last_sent >= ov->keepalive_interval * 0.9) {
                struct envelope ka = { .kind = ENV_KEEPALIVE, .ttl = 1,
                                       .source = ov->rank, .dest = p->rank };
                if (p->ka_sent_at == 0 || now - p->ka_sent_at > ov->peer_timeout)
                    p->ka_sent_at = now;
                peer_send_now (ov, p, &ka, NULL, 0);
            }
        }
        else if ((p->state == PEER_CONNECTING || p->state == PEER_DOWN)
                 && p->connector && !p->refused
                 && now - p->state_since > 2.0 && now - p->last_sent > 2.0) {
            /* The first hello may have gone to a broker that was not
             * listening yet; say it again. */
            send_hello (ov, p);
        }
    }
    return 0;
}

/* ---- readiness and health --------------------------------------------- */

static void ready_mark (struct overlay *ov, uint32_t rank)
{
    if (bgn_rankset_add (ov->ready, rank) == 1
        && bgn_rankset_count (ov->ready) == ov->size)
        ovlog (ov, LOG_INFO, "overlay complete: all %u ranks connected",
               (unsigned)ov->size);
}

/* Tell rank 0 (once) that all our peers are up. */
/* Send (or re-send) this broker's ready report: a request rank 0 answers,
 * so a report lost in a rank 0 restart or a routing change is retried
 * (retry_ready_cb) until rank 0 has it. */
static void send_ready (struct overlay *ov)
{
    msg_t *msg;
    char payload[96];

    snprintf (payload, sizeof (payload), "{\"rank\":%u,\"incarnation\":%llu}",
              (unsigned)ov->rank, (unsigned long long)ov->incarnation);
    if (!(msg = msg_request_create ("overlay.ready", 0, payload)))
        return;
    ov->ready_sent_at = monotime_now ();
    ov->api->send (ov->b, msg);
}

static void report_ready (struct overlay *ov)
{
    if (ov->reported_ready)
        return;
    ov->reported_ready = 1;
    ov->ready_acked = 0;
    ovlog (ov, LOG_DEBUG, "all peers up: reporting ready to rank 0");
    if (ov->rank == 0) {
        ready_mark (ov, 0);
        ov->ready_acked = 1;
        return;
    }
    send_ready (ov);
}

static void ready_retry (struct overlay *ov, double now)
{
    if (ov->rank != 0 && ov->reported_ready && !ov->ready_acked
        && now - ov->ready_sent_at > 1.0)
        send_ready (ov);
}

static const char *overlay_health (void *state)
{
    struct overlay *ov = state;

    if (ov->size == 1)
        return "full";
    if (ov->partitioned)
        return "partitioned";
    if (ov->nfenced > 0)
        return "degraded";
    if (ov->rank == 0)
        return bgn_rankset_count (ov->ready) == ov->size ? "full" : "partial";
    return ov->peers_up == ov->npeers ? "full" : "partial";
}

/* ---- overlay-trace -----------------------------------------------------
 * A trace is a streaming request: each message through this broker's
 * overlay socket that matches its filter produces one response.  The
 * trace responses themselves are never traced (that would feed back).
 */
struct trace {
    msg_t *req;
    unsigned types;           /* bit per MSGTYPE; 0x100: overlay control */
    char glob[128];
    double expires;
};

static void trace_destroy (void **item)
{
    struct trace *t = *item;
    if (t) {
        msg_destroy (&t->req);
        free (t);
        *item = NULL;
    }
}

static void trace_capture (struct overlay *ov, const struct envelope *env,
                           zmq_msg_t *frames, int n, struct trace_info *ti)
{
    ti->size = ENV_SIZE;
    for (int i = 0; i < n; i++)
        ti->size += zmq_msg_size (&frames[i]);
    ti->topic[0] = '\0';
    if (env->kind == ENV_DATA || env->kind == ENV_EVENT) {
        msg_t *msg;
        if (!(msg = body_decode (frames, n, NULL, 0)))
            return;
        const char *topic = msg_get_topic (msg);
        if (topic && !strcmp (topic, "overlay.trace")) {
            msg_destroy (&msg);
            return;   /* never trace the trace */
        }
        snprintf (ti->topic, sizeof (ti->topic), "%s", topic ? topic : "");
        ti->type = msg_typestr (msg_get_type (msg));
        msg_destroy (&msg);
    }
    else
        ti->type = envelope_kindstr (env->kind);
    ti->valid = 1;
}

static unsigned trace_type_bit (const char *type)
{
    if (!strcmp (type, "request")) return MSGTYPE_REQUEST;
    if (!strcmp (type, "response")) return MSGTYPE_RESPONSE;
    if (!strcmp (type, "event")) return MSGTYPE_EVENT;
    return 0x100;   /* control: everything the overlay says itself */
}

static void trace_emit (struct overlay *ov, const char *dir, uint32_t peer,
                        const struct envelope *env,
                        const struct trace_info *ti)
{
    struct timeval tv;
    unsigned bit = trace_type_bit (ti->type);

    gettimeofday (&tv, NULL);
    ov->tracing = 1;
    for (struct trace *t = zlistx_first (ov->traces); t;
         t = zlistx_next (ov->traces)) {
        if (!(t->types & bit))
            continue;
        if (t->glob[0] && fnmatch (t->glob, ti->topic, 0) != 0)
            continue;
        json_t *o = json_pack ("{s:f s:s s:i s:s s:s s:I s:i s:i s:i}",
                               "time", tv.tv_sec + tv.tv_usec * 1e-6,
                               "dir", dir, "peer", (int)peer,
                               "type", ti->type, "topic", ti->topic,
                               "size", (json_int_t)ti->size,
                               "hops", (int)env->hops,
                               "source", (int)env->source,
                               "dest", (int)env->dest);
        char *s = o ? json_dumps (o, JSON_COMPACT) : NULL;
        if (s)
            ov->api->respond (ov->b, t->req, s);
        free (s);
        json_decref (o);
    }
    ov->tracing = 0;
}

static void trace_start (struct overlay *ov, const msg_t *req)
{
    json_t *o = json_loads (msg_get_payload (req, NULL) ?: "{}", 0, NULL);
    json_t *types = NULL;
    const char *glob = "";
    double duration = 60;
    struct trace *t;

    if (!o || json_unpack (o, "{s?o s?s s?F}", "types", &types, "topic", &glob,
                           "duration", &duration) < 0
        || !(msg_get_flags (req) & MSGFLAG_STREAMING)) {
        ov->api->respond_error (ov->b, req, EPROTO,
                                "overlay.trace is a streaming request with "
                                "optional types, topic, duration");
        json_decref (o);
        return;
    }
    if (zlistx_size (ov->traces) >= 8) {
        ov->api->respond_error (ov->b, req, EBUSY, "too many traces (8)");
        json_decref (o);
        return;
    }
    if (!(t = calloc (1, sizeof (*t))) || !(t->req = msg_copy (req))) {
        free (t);
        ov->api->respond_error (ov->b, req, ENOMEM, NULL);
        json_decref (o);
        return;
    }
    msg_set_payload (t->req, NULL, 0);
    snprintf (t->glob, sizeof (t->glob), "%s", glob);
    if (duration <= 0 || duration > 3600)
        duration = 60;
    t->expires = monotime_now () + duration;
    if (json_is_array (types) && json_array_size (types) > 0) {
        size_t i;
        json_t *v;
        json_array_foreach (types, i, v)
            if (json_is_string (v))
                t->types |= trace_type_bit (json_string_value (v));
    }
    else
        t->types = ~0u;
    ov->api->respond (ov->b, req, "{\"tracing\":true}");
    zlistx_add_end (ov->traces, t);
    json_decref (o);
}

static void trace_expire (struct overlay *ov, double now)
{
    struct trace *t = zlistx_first (ov->traces);
    while (t) {
        if (t->expires < now) {
            ov->api->respond_error (ov->b, t->req, ENODATA, "trace ended");
            zlistx_delete (ov->traces, zlistx_cursor (ov->traces));
            t = zlistx_first (ov->traces);   /* the list changed */
            continue;
        }
        t = zlistx_next (ov->traces);
    }
}

/* ---- overlay.status-all: a reduction over the broadcast tree ----------
 * Each broker answers with its own status plus its subtree's, asking its
 * tree children (or, for a fenced child, that child's children) in
 * parallel with a deadline that shrinks with depth, so the root's answer
 * arrives in time even when a subtree does not.
 */
struct gather {
    struct overlay *ov;
    msg_t *req;
    json_t *ranks;
    json_t *missing;
    int outstanding;
    int timer;
};

struct gather_child {
    struct gather *g;
    uint32_t rank;
};

static void subtree_ranks (struct overlay *ov, uint32_t rank, json_t *out,
                           int depth)
{
    uint32_t kids[256];
    int n;
    json_array_append_new (out, json_integer (rank));
    if (depth > 64)
        return;
    n = bgn_topo_bcast_children (ov->topo, 0, rank, kids, 256);
    for (int i = 0; i < n && i < 256; i++)
        subtree_ranks (ov, kids[i], out, depth + 1);
}

static void gather_finish (struct gather *g)
{
    struct overlay *ov = g->ov;
    json_t *o = json_pack ("{s:O s:O}", "ranks", g->ranks, "missing",
                           g->missing);
    char *s = o ? json_dumps (o, JSON_COMPACT) : NULL;

    if (s)
        ov->api->respond (ov->b, g->req, s);
    else
        ov->api->respond_error (ov->b, g->req, ENOMEM, NULL);
    free (s);
    json_decref (o);
    if (g->timer >= 0)
        zloop_timer_end (ov->loop, g->timer);
    /* forget children that never answered */
    zlistx_t *keys = zlistx_new ();
    for (struct gather_child *c = zhashx_first (ov->gathers); c;
         c = zhashx_next (ov->gathers))
        if (c->g == g)
            zlistx_add_end (keys, (void *)zhashx_cursor (ov->gathers));
    for (const char *k = zlistx_first (keys); k; k = zlistx_next (keys)) {
        struct gather_child *c = zhashx_lookup (ov->gathers, k);
        if (c)
            subtree_ranks (ov, c->rank, g->missing, 0);
        zhashx_delete (ov->gathers, k);
    }
    zlistx_destroy (&keys);
    msg_destroy (&g->req);
    json_decref (g->ranks);
    json_decref (g->missing);
    free (g);
}

static int gather_timeout_cb (zloop_t *loop, int timer_id, void *arg)
{
    struct gather *g = arg;
    g->timer = -1;
    gather_finish (g);
    return 0;
}

static void gather_ask (struct overlay *ov, struct gather *g, uint32_t rank,
                        double timeout, int depth)
{
    if (is_fenced (ov, rank)) {
        uint32_t kids[256];
        int n = bgn_topo_bcast_children (ov->topo, 0, rank, kids, 256);
        json_array_append_new (g->missing, json_integer (rank));
        for (int i = 0; i < n && i < 256 && depth < 64; i++)
            gather_ask (ov, g, kids[i], timeout, depth + 1);
        return;
    }
    char payload[64], key[16];
    msg_t *msg;
    struct gather_child *c;
    snprintf (payload, sizeof (payload), "{\"timeout\":%.3f}", timeout);
    if (!(msg = msg_request_create ("overlay.gather", rank, payload))
        || !(c = calloc (1, sizeof (*c)))) {
        msg_destroy (&msg);
        subtree_ranks (ov, rank, g->missing, 0);
        return;
    }
    uint32_t tag = ++ov->next_tag;
    if (tag == 0)
        tag = ++ov->next_tag;
    msg_set_matchtag (msg, tag);
    c->g = g;
    c->rank = rank;
    snprintf (key, sizeof (key), "%u", (unsigned)tag);
    zhashx_insert (ov->gathers, key, c);
    g->outstanding++;
    ov->api->send (ov->b, msg);
}

static json_t *status_json (struct overlay *ov);

static void gather_start (struct overlay *ov, const msg_t *req, double timeout)
{
    struct gather *g = calloc (1, sizeof (*g));
    uint32_t kids[256];
    int n;

    if (!g || !(g->req = msg_copy (req)) || !(g->ranks = json_array ())
        || !(g->missing = json_array ())) {
        if (g) {
            msg_destroy (&g->req);
            json_decref (g->ranks);
            free (g);
        }
        ov->api->respond_error (ov->b, req, ENOMEM, NULL);
        return;
    }
    g->ov = ov;
    g->timer = -1;
    json_array_append_new (g->ranks, status_json (ov));
    n = bgn_topo_bcast_children (ov->topo, 0, ov->rank, kids, 256);
    for (int i = 0; i < n && i < 256; i++)
        gather_ask (ov, g, kids[i], timeout * 0.7, 0);
    if (g->outstanding == 0) {
        gather_finish (g);
        return;
    }
    g->timer = zloop_timer (ov->loop, (size_t)(timeout * 1000) + 1, 1,
                            gather_timeout_cb, g);
}

static void gather_response (struct overlay *ov, const msg_t *rsp)
{
    char key[16];
    struct gather_child *c;
    struct gather *g;
    int errnum = 0;
    const char *payload;
    json_t *o = NULL, *ranks, *missing;

    snprintf (key, sizeof (key), "%u", (unsigned)msg_get_matchtag (rsp));
    if (!(c = zhashx_lookup (ov->gathers, key)))
        return;   /* late: its gather is finished */
    g = c->g;
    msg_get_errnum (rsp, &errnum);
    payload = msg_get_payload (rsp, NULL);
    if (errnum || !payload || !(o = json_loads (payload, 0, NULL))
        || json_unpack (o, "{s:o s:o}", "ranks", &ranks, "missing",
                        &missing) < 0)
        subtree_ranks (ov, c->rank, g->missing, 0);
    else {
        json_array_extend (g->ranks, ranks);
        json_array_extend (g->missing, missing);
    }
    json_decref (o);
    zhashx_delete (ov->gathers, key);
    if (--g->outstanding == 0)
        gather_finish (g);
}

/* ---- services --------------------------------------------------------- */

static json_t *peer_json (struct overlay *ov, struct peer *p, double now)
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
                           "backlog", (int)zlistx_size (p->backlog));
    if (o)
        json_object_set_new (o, "rtt_us",
                             p->rtt_us >= 0 ? json_real (p->rtt_us)
                                            : json_null ());
    return o;
}

/* Rank 0: ranks that have not (re)reported ready, not counting fenced
 * ones (at most 1024 listed). */
static json_t *missing_json (struct overlay *ov)
{
    json_t *a = json_array ();
    if (ov->rank != 0 || !a)
        return a ? a : json_null ();
    for (uint32_t r = 0; r < ov->size && json_array_size (a) < 1024; r++)
        if (!bgn_rankset_test (ov->ready, r) && !is_fenced (ov, r))
            json_array_append_new (a, json_integer (r));
    return a;
}

static json_t *status_json (struct overlay *ov)
{
    double now = monotime_now ();
    json_t *peers = json_array ();
    json_t *down = json_array ();
    json_t *info = json_array ();

    for (int i = 0; i < ov->npeers; i++)
        json_array_append_new (peers, peer_json (ov, ov->peers[i], now));
    /* fenced ranks, in rank order */
    for (uint32_t r = 0; r < ov->size && ov->nfenced > 0; r++) {
        struct fence *f = fence_lookup (ov, r);
        if (!f || !f->fenced)
            continue;
        json_array_append_new (down, json_integer (r));
        json_array_append_new (info, json_pack ("{s:i s:I s:f s:s}",
                                                "rank", (int)r,
                                                "incarnation",
                                                (json_int_t)f->inc,
                                                "seconds", now - f->since,
                                                "reason", f->reason));
        if ((int)json_array_size (down) == ov->nfenced)
            break;
    }
    return json_pack ("{s:i s:i s:s s:i s:s s:i s:I s:o s:o s:{s:I s:I s:I"
                      " s:I s:I s:I s:I s:I} s:s s:s s:s s:s s:I s:o s:i s:i s:I s:I s:I s:o s:o s:i s:i}",
                      "rank", (int)ov->rank,
                      "size", (int)ov->size,
                      "topology", ov->topo_spec,
                      "diameter", ov->diameter,
                      "state", overlay_health (ov),
                      "ttl", ov->ttl,
                      "incarnation", (json_int_t)ov->incarnation,
                      "down_ranks", down,
                      "peers", peers,
                      "counters",
                      "ttl_drops", (json_int_t)ov->ttl_drops,
                      "unknown_peer_drops", (json_int_t)ov->unknown_peer_drops,
                      "malformed_drops", (json_int_t)ov->malformed_drops,
                      "stale_drops", (json_int_t)ov->stale_drops,
                      "no_route_drops", (json_int_t)ov->no_route_drops,
                      "backlog_overflows", (json_int_t)ov->backlog_overflows,
                      "forwarded", (json_int_t)ov->forwarded,
                      "delivered", (json_int_t)ov->delivered,
                      "endpoint", ov->public_uri,
                      "hostname", ov->api->hostname (ov->b),
                      "instance", ov->api->instance_id (ov->b),
                      "pubkey", ov->curve ? zcert_public_txt (ov->cert) : "",
                      "auth_failures", (json_int_t)ov->auth_failures,
                      "down", info,
                      "unreachable_live", (int)ov->unreachable_live,
                      "tracker", (int)zhashx_size (ov->tracker),
                      "tracker_failed", (json_int_t)ov->tracker_failed,
                      "tracker_dup_drops", (json_int_t)ov->tracker_dup_drops,
                      "fences_seen", (json_int_t)ov->fences_seen,
                      "missing", missing_json (ov),
                      "events", evlayer_stats (ov->events),
                      "heal_threshold", ov->heal_threshold,
                      "substitutes", ov->nsubst);
}

static void respond_json (struct overlay *ov, const msg_t *req, json_t *o)
{
    char *s = o ? json_dumps (o, JSON_COMPACT) : NULL;
    if (s)
        ov->api->respond (ov->b, req, s);
    else
        ov->api->respond_error (ov->b, req, ENOMEM, NULL);
    free (s);
    json_decref (o);
}

static void overlay_service (bgn_broker_t *b, const msg_t *req,
                             const struct bgn_msg_info *info, void *arg)
{
    struct overlay *ov = arg;
    const char *topic = msg_get_topic (req);

    if (msg_get_type (req) == MSGTYPE_RESPONSE) {
        /* answers to our own requests */
        int errnum = 0;
        if (!strcmp (topic, "overlay.ready")
            && msg_get_errnum (req, &errnum) == 0 && errnum == 0)
            ov->ready_acked = 1;
        else if (!strcmp (topic, "overlay.gather"))
            gather_response (ov, req);
        else if (!strcmp (topic, "overlay.contact"))
            contact_response (ov, req);
        return;
    }
    if (msg_get_type (req) != MSGTYPE_REQUEST)
        return;
    if (!strcmp (topic, "overlay.ready")) {
        json_t *o = json_loads (msg_get_payload (req, NULL) ?: "", 0, NULL);
        int rank = -1;
        if (ov->rank == 0 && o && json_unpack (o, "{s:i}", "rank", &rank) == 0
            && rank >= 0 && (uint32_t)rank < ov->size) {
            ovlog (ov, LOG_DEBUG, "rank %d is ready", rank);
            ready_mark (ov, rank);
            ov->api->respond (ov->b, req, NULL);
        }
        else
            ov->api->respond_error (ov->b, req, EINVAL,
                                    "ready reports go to rank 0");
        json_decref (o);
        return;
    }
    if (!strcmp (topic, "overlay.status")) {
        respond_json (ov, req, status_json (ov));
        return;
    }
    if (!strcmp (topic, "overlay.status-all")
        || !strcmp (topic, "overlay.gather")) {
        json_t *o = json_loads (msg_get_payload (req, NULL) ?: "{}", 0, NULL);
        double timeout = 3.0;
        if (o)
            json_unpack (o, "{s?F}", "timeout", &timeout);
        json_decref (o);
        if (timeout < 0.05)
            timeout = 0.05;
        if (timeout > 30)
            timeout = 30;
        gather_start (ov, req, timeout);
        return;
    }
    if (!strcmp (topic, "overlay.trace")) {
        trace_start (ov, req);
        return;
    }
    if (!strcmp (topic, "overlay.contact")) {
        contact_request (ov, req);
        return;
    }
    if (!strcmp (topic, "overlay.disconnect")) {
        ovlog (ov, LOG_NOTICE, "disconnected by an administrator: leaving");
        ov->api->respond (ov->b, req, NULL);
        ov->api->stop (ov->b, 0);
        return;
    }
    if (!strcmp (topic, "overlay.ping")) {
        /* service-addressed ping target used by tests ("bgn ping overlay") */
        json_t *o = json_pack ("{s:i s:i}", "rank", (int)ov->rank,
                               "hops", info ? info->hops : 0);
        respond_json (ov, req, o);
        return;
    }
    ov->api->respond_error (ov->b, req, ENOSYS, "unknown overlay method");
}

/* A service that exists only on ranks listed in BGN_TEST_SERVICE_RANKS
 * (test-only), so tests can check that service-addressed requests find a
 * service that lives away from rank 0. */
static void test_service (bgn_broker_t *b, const msg_t *req,
                          const struct bgn_msg_info *info, void *arg)
{
    struct overlay *ov = arg;
    if (msg_get_type (req) != MSGTYPE_REQUEST)
        return;
    respond_json (ov, req, json_pack ("{s:i s:i}", "rank", (int)ov->rank,
                                      "hops", info ? info->hops : 0));
}

/* ---- socket events ---------------------------------------------------- */

/* libzmq's monitor: [u16 event, u32 value][endpoint].  Refused CURVE
 * handshakes are the ZAP handler at work: log them. */
static int monitor_readable (zloop_t *loop, zmq_pollitem_t *item, void *arg)
{
    struct overlay *ov = arg;

    for (;;) {
        zmq_msg_t ev, ep;
        uint16_t event;
        uint32_t value;
        char endpoint[256] = "";

        zmq_msg_init (&ev);
        if (zmq_msg_recv (&ev, ov->monitor, ZMQ_DONTWAIT) < 0) {
            zmq_msg_close (&ev);
            return 0;
        }
        zmq_msg_init (&ep);
        if (zmq_msg_more (&ev))
            zmq_msg_recv (&ep, ov->monitor, 0);
        if (zmq_msg_size (&ev) >= 6) {
            memcpy (&event, zmq_msg_data (&ev), 2);
            memcpy (&value, (char *)zmq_msg_data (&ev) + 2, 4);
            snprintf (endpoint, sizeof (endpoint), "%.*s",
                      (int)zmq_msg_size (&ep), (char *)zmq_msg_data (&ep));
            if (event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH) {
                ov->auth_failures++;
                ovlog (ov, LOG_WARNING, "refused a peer connection on %s: "
                       "CURVE key not authorized (ZAP status %u)", endpoint,
                       (unsigned)value);
            }
            else if (event == ZMQ_EVENT_DISCONNECTED
                     || event == ZMQ_EVENT_HANDSHAKE_SUCCEEDED) {
                /* Only connections we made name a peer by endpoint. */
                for (int i = 0; i < ov->npeers; i++) {
                    struct peer *p = ov->peers[i];
                    if (!p->connector || strcmp (p->endpoint, endpoint))
                        continue;
                    if (event == ZMQ_EVENT_DISCONNECTED)
                        peer_lost (ov, p, "connection closed");
                    else if ((p->state == PEER_DOWN
                              || p->state == PEER_CONNECTING) && !p->refused)
                        send_hello (ov, p);
                }
            }
            else if (event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL
                     || event == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL) {
                ov->auth_failures++;
                ovlog (ov, LOG_WARNING, "peer handshake failed on %s "
                       "(event 0x%x, value %u)", endpoint, (unsigned)event,
                       (unsigned)value);
            }
        }
        zmq_msg_close (&ev);
        zmq_msg_close (&ep);
    }
}

static int setup_monitor (struct overlay *ov)
{
    char uri[64];
    zmq_pollitem_t item = { 0 };

    snprintf (uri, sizeof (uri), "inproc://bgn-overlay-monitor-%p", (void *)ov);
    if (zmq_socket_monitor (ov->sock, uri, ZMQ_EVENT_HANDSHAKE_FAILED_AUTH
                            | ZMQ_EVENT_DISCONNECTED
                            | ZMQ_EVENT_HANDSHAKE_SUCCEEDED
                            | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL
                            | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL) < 0)
        return -1;
    if (!(ov->monitor = zmq_socket (zsys_init (), ZMQ_PAIR))
        || zmq_connect (ov->monitor, uri) < 0)
        return -1;
    item.socket = ov->monitor;
    item.events = ZMQ_POLLIN;
    return zloop_poller (ov->loop, &item, monitor_readable, ov);
}

/* ---- set-up ----------------------------------------------------------- */

static int first_ipv4 (char *buf, size_t len)
{
    struct ifaddrs *ifa, *i;
    int found = -1;

    if (getifaddrs (&ifa) < 0)
        return -1;
    for (i = ifa; i && found < 0; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET)
            continue;
        struct sockaddr_in *sin = (struct sockaddr_in *)i->ifa_addr;
        if (ntohl (sin->sin_addr.s_addr) >> 24 == 127)
            continue;
        if (inet_ntop (AF_INET, &sin->sin_addr, buf, len))
            found = 0;
    }
    freeifaddrs (ifa);
    if (found < 0)
        snprintf (buf, len, "127.0.0.1");
    return 0;
}

/* Expand %R (rundir) and %r (rank) in a bind template. */
static int expand_bind (struct overlay *ov, const char *tmpl, char *out,
                        size_t len)
{
    size_t o = 0;
    for (const char *p = tmpl; *p; p++) {
        const char *ins = NULL;
        char rank[16];
        if (p[0] == '%' && p[1] == 'R') {
            ins = ov->api->rundir (ov->b);
            p++;
        }
        else if (p[0] == '%' && p[1] == 'r') {
            snprintf (rank, sizeof (rank), "%u", (unsigned)ov->rank);
            ins = rank;
            p++;
        }
        if (ins) {
            size_t l = strlen (ins);
            if (o + l >= len)
                return -1;
            memcpy (out + o, ins, l);
            o += l;
        }
        else {
            if (o + 1 >= len)
                return -1;
            out[o++] = *p;
        }
    }
    out[o] = '\0';
    return 0;
}

static int setup_socket (struct overlay *ov)
{
    json_t *conf = ov->api->config (ov->b);
    const char *bind_cfg = "";
    int one = 1, linger = 0;
    size_t len;

    conf_get_string (conf, "overlay.bind", &bind_cfg);
    if (*bind_cfg) {
        if (expand_bind (ov, bind_cfg, ov->bind_uri, sizeof (ov->bind_uri)) < 0)
            return -1;
    }
    else
        snprintf (ov->bind_uri, sizeof (ov->bind_uri), "tcp://*:*");
    if (!(ov->sock = zmq_socket (zsys_init (), ZMQ_ROUTER)))
        return -1;
    zmq_setsockopt (ov->sock, ZMQ_ROUTING_ID, ov->api->rundir ? "" : "", 0);
    char id[16];
    snprintf (id, sizeof (id), "%u", (unsigned)ov->rank);
    zmq_setsockopt (ov->sock, ZMQ_ROUTING_ID, id, strlen (id));
    zmq_setsockopt (ov->sock, ZMQ_ROUTER_MANDATORY, &one, sizeof (one));
    zmq_setsockopt (ov->sock, ZMQ_ROUTER_HANDOVER, &one, sizeof (one));
    zmq_setsockopt (ov->sock, ZMQ_LINGER, &linger, sizeof (linger));
    zmq_setsockopt (ov->sock, ZMQ_SNDHWM, &ov->sndhwm, sizeof (ov->sndhwm));
    zmq_setsockopt (ov->sock, ZMQ_RCVHWM, &ov->sndhwm, sizeof (ov->sndhwm));
    if (ov->curve) {
        zcert_apply (ov->cert, ov->sock);
        zmq_setsockopt (ov->sock, ZMQ_CURVE_SERVER, &one, sizeof (one));
    }
    if (zmq_bind (ov->sock, ov->bind_uri) < 0) {
        ovlog (ov, LOG_ERR, "overlay bind %s: %s", ov->bind_uri,
               zmq_strerror (errno));
        return -1;
    }
    len = sizeof (ov->public_uri);
    zmq_getsockopt (ov->sock, ZMQ_LAST_ENDPOINT, ov->public_uri, &len);
    /* A wildcard address is no use to peers: publish a real one. */
    if (!strncmp (ov->public_uri, "tcp://0.0.0.0:", 14)) {
        char ip[64], port[16];
        snprintf (port, sizeof (port), "%s", ov->public_uri + 14);
        first_ipv4 (ip, sizeof (ip));
        snprintf (ov->public_uri, sizeof (ov->public_uri), "tcp://%s:%s", ip,
                  port);
    }
    return 0;
}

static void overlay_cert_remove (struct overlay *ov)
{
    char path[PATH_MAX], secret[PATH_MAX + 8];

    if (!ov->cert_saved)
        return;
    snprintf (path, sizeof (path), "%s/overlay.cert", ov->api->rundir (ov->b));
    snprintf (secret, sizeof (secret), "%s_secret", path);
    unlink (path);
    unlink (secret);
}

static int setup_curve (struct overlay *ov)
{
    const char *path = "";

    if (!ov->curve)
        return 0;
    /* A system instance shares one certificate (bootstrap.curve_cert);
     * otherwise each broker makes a key pair and publishes the public key
     * through the bootstrap exchange. */
    conf_get_string (ov->api->config (ov->b), "bootstrap.curve_cert", &path);
    if (*path) {
        if (!(ov->cert = zcert_load (path))) {
            ovlog (ov, LOG_ERR, "cannot load CURVE certificate %s "
                   "(and %s_secret)", path, path);
            errno = EINVAL;
            return -1;
        }
        if (!strcmp (zcert_secret_txt (ov->cert),
                     "0000000000000000000000000000000000000000")) {
            ovlog (ov, LOG_ERR, "CURVE certificate %s has no secret key "
                   "(is %s_secret missing?)", path, path);
            errno = EINVAL;
            return -1;
        }
    }
    else {
        /* Keep the key pair in the run directory: a broker restarted in
         * the same place (bgn fault restart) presents the key its peers
         * already trust.  Removed at an orderly shutdown. */
        char certpath[PATH_MAX], secret[PATH_MAX + 8];
        snprintf (certpath, sizeof (certpath), "%s/overlay.cert",
                  ov->api->rundir (ov->b));
        snprintf (secret, sizeof (secret), "%s_secret", certpath);
        if (access (secret, R_OK) == 0 && (ov->cert = zcert_load (certpath)))
            ovlog (ov, LOG_INFO, "reusing the overlay key pair in %s",
                   certpath);
        else {
            mode_t old = umask (077);
            if (!(ov->cert = zcert_new ()) || zcert_save (ov->cert, certpath) < 0) {
                umask (old);
                ovlog (ov, LOG_ERR, "cannot create %s", certpath);
                return -1;
            }
            umask (old);
        }
        ov->cert_saved = 1;
    }
    if (!(ov->certstore = zcertstore_new (NULL)))
        return -1;
    /* The ZAP handler: only keys we put in the store may connect. */
    if (!(ov->auth = zactor_new (zauth, ov->certstore)))
        return -1;
    if (getenv ("BGN_OVERLAY_ZAP_VERBOSE")) {
        zstr_send (ov->auth, "VERBOSE");
        zsock_wait (ov->auth);
    }
    return 0;
}

/* Release everything the overlay holds; safe on a half-built one (the
 * set-up error path) as on a running one (unload). */
static void overlay_free (struct overlay *ov)
{
    if (ov->monitor) {
        zmq_pollitem_t item = { .socket = ov->monitor };
        zloop_poller_end (ov->loop, &item);
        zmq_socket_monitor (ov->sock, NULL, 0);
        zmq_close (ov->monitor);
    }
    if (ov->sock) {
        zmq_pollitem_t item = { .socket = ov->sock };
        zloop_poller_end (ov->loop, &item);
        zmq_close (ov->sock);
    }
    int timers[] = { ov->ka_timer, ov->retry_timer, ov->lost_timer,
                     ov->partition_timer, ov->sweep_timer };
    for (size_t i = 0; i < sizeof (timers) / sizeof (timers[0]); i++)
        if (timers[i] >= 0)
            zloop_timer_end (ov->loop, timers[i]);
    zhashx_destroy (&ov->tracker);
    zhashx_destroy (&ov->fences);
    zhashx_destroy (&ov->gathers);
    zhashx_destroy (&ov->contacts);
    zlistx_destroy (&ov->traces);
    evlayer_destroy (&ov->events);
    if (ov->peers)
        for (int i = 0; i < ov->npeers; i++)
            peer_destroy (&ov->peers[i]);
    free (ov->peers);
    free (ov->neighbours);
    if (ov->auth)
        zactor_destroy (&ov->auth);   /* destroys the certstore too */
    else
        zcertstore_destroy (&ov->certstore);
    zcert_destroy (&ov->cert);
    bgn_rankset_destroy (&ov->ready);
    bgn_router_destroy (&ov->router);
    bgn_topo_destroy (&ov->topo);
    free (ov);
}

static int overlay_load (const struct bgn_broker_api *api, bgn_broker_t *b,
                         void **state)
{
    struct overlay *ov = calloc (1, sizeof (*ov));
    json_t *conf = api->config (b);
    const char *topo = "bgn";
    long long ttl = 0, hwm = 1000, backlog = 10000;
    int curve = 1;
    struct timeval tv;

    if (!ov)
        return -1;
    ov->api = api;
    ov->b = b;
    ov->rank = api->rank (b);
    ov->size = api->size (b);
    ov->loop = api->loop (b);
    ov->retry_timer = -1;
    ov->ka_timer = -1;
    ov->lost_timer = -1;
    ov->partition_timer = -1;
    ov->sweep_timer = -1;
    ov->rpc_timeout = 10.;
    conf_get_duration (conf, "broker.rpc_timeout", &ov->rpc_timeout);
    if (!(ov->fences = zhashx_new ()) || !(ov->tracker = zhashx_new ())
        || !(ov->traces = zlistx_new ()) || !(ov->gathers = zhashx_new ())
        || !(ov->contacts = zhashx_new ()))
        goto error;
    zhashx_set_destructor (ov->contacts, (zhashx_destructor_fn *)zstr_free);
    zlistx_set_destructor (ov->traces, trace_destroy);
    zhashx_set_destructor (ov->gathers, (zhashx_destructor_fn *)zstr_free);
    zhashx_set_destructor (ov->fences, (zhashx_destructor_fn *)zstr_free);
    zhashx_set_destructor (ov->tracker, tracked_destroy);
    gettimeofday (&tv, NULL);
    ov->incarnation = (uint64_t)tv.tv_sec * 1000000 + tv.tv_usec;
    conf_get_string (conf, "overlay.topology", &topo);
    conf_get_int (conf, "overlay.ttl", &ttl);
    conf_get_int (conf, "overlay.sndhwm", &hwm);
    conf_get_int (conf, "overlay.backlog", &backlog);
    conf_get_bool (conf, "overlay.curve", &curve);
    ov->keepalive_interval = 1.0;
    ov->peer_timeout = 10.0;
    conf_get_duration (conf, "overlay.keepalive_interval",
                       &ov->keepalive_interval);
    conf_get_duration (conf, "overlay.peer_timeout", &ov->peer_timeout);
    ov->sndhwm = (int)hwm;
    ov->backlog_max = (int)backlog;
    ov->curve = curve;
    ov->test_loop = getenv ("BGN_OVERLAY_TEST_LOOP")
                        ? strtol (getenv ("BGN_OVERLAY_TEST_LOOP"), NULL, 10)
                        : -1;
    if (!(ov->topo = bgn_topo_create (topo, ov->size))) {
        api->log (b, LOG_ERR, "overlay.topology: '%s' is not a topology", topo);
        goto error;
    }
    snprintf (ov->topo_spec, sizeof (ov->topo_spec), "%s",
              bgn_topo_name (ov->topo));
    ov->diameter = bgn_topo_diameter (ov->topo);
    snprintf (ov->topo_desc, sizeof (ov->topo_desc), "%s", ov->topo_spec);
    /* Default TTL: room for detours around failures, bounded by the wire. */
    ov->ttl = ttl > 0 ? (int)ttl : 2 * ov->diameter + 4;
    if (ov->ttl > 255)
        ov->ttl = 255;
    long long evbuf = 4096;
    conf_get_int (conf, "overlay.event_buffer", &evbuf);
    if (!(ov->router = bgn_router_create (ov->topo))
        || !(ov->ready = bgn_rankset_create (ov->size))
        || !(ov->events = evlayer_create (ov->topo, ov->rank, (int)evbuf,
                                          ov->keepalive_interval, &ev_ops,
                                          ov)))
        goto error;
    if (ov->size == 1)
        evlayer_set_ready (ov->events);
    int deg = bgn_topo_degree (ov->topo, ov->rank);
    if (deg < 0 || !(ov->neighbours = calloc (deg + 1, sizeof (uint32_t)))
        || !(ov->peers = calloc (deg + 1, sizeof (struct peer *))))
        goto error;
    ov->npeers = bgn_topo_neighbours (ov->topo, ov->rank, ov->neighbours, deg);
    ov->degree = ov->npeers;
    long long heal = -1;
    conf_get_int (conf, "overlay.heal_threshold", &heal);
    ov->heal_threshold = heal >= 0 ? (int)heal
                                   : (ov->degree / 2 > 2 ? ov->degree / 2 : 2);
    if (bgn_topo_is_tree (ov->topo) && heal < 0)
        ov->heal_threshold = 0;   /* trees are the baseline: no healing */
    for (int i = 0; i < ov->npeers; i++)
        if (!(ov->peers[i] = peer_create (ov, ov->neighbours[i])))
            goto error;
    if (setup_curve (ov) < 0 || setup_socket (ov) < 0 || setup_monitor (ov) < 0)
        goto error;
    if (api->boot_put (b, "endpoint", ov->public_uri) < 0)
        goto error;
    if (ov->curve && api->boot_put (b, "pubkey", zcert_public_txt (ov->cert)) < 0)
        goto error;
    if (api->service_add (b, "overlay", overlay_service, ov) < 0)
        goto error;
    const char *ts = getenv ("BGN_TEST_SERVICE_RANKS");
    if (ts) {
        char key[16];
        snprintf (key, sizeof (key), ",%u,", (unsigned)ov->rank);
        char *list;
        if (asprintf (&list, ",%s,", ts) >= 0) {
            if (strstr (list, key))
                api->service_add (b, "testsvc", test_service, ov);
            free (list);
        }
    }
    if (api->set_overlay (b, &overlay_ops, ov) < 0)
        goto error;
    *state = ov;
    return 0;
error:
    api->log (b, LOG_ERR, "overlay: set-up failed: %s", strerror (errno));
    overlay_free (ov);
    return -1;
}

/* After the bootstrap barrier: learn peers' endpoints and keys, authorize
 * the keys of those that connect to us, connect to the rest.
 */
static int overlay_start (void *state)
{
    struct overlay *ov = state;
    zmq_pollitem_t item = { .socket = ov->sock, .events = ZMQ_POLLIN };

    for (int i = 0; i < ov->npeers; i++) {
        struct peer *p = ov->peers[i];
        if (ov->api->boot_get (ov->b, p->rank, "endpoint", p->endpoint,
                               sizeof (p->endpoint)) < 0)
            return -1;
        if (ov->curve) {
            if (ov->api->boot_get (ov->b, p->rank, "pubkey", p->pubkey,
                                   sizeof (p->pubkey)) < 0)
                return -1;
            if (!p->connector) {
                uint8_t pub[32], sec[32] = { 0 };
                zcert_t *c = NULL;
                if (strlen (p->pubkey) == 40 && zmq_z85_decode (pub, p->pubkey))
                    c = zcert_new_from (pub, sec);
                if (!c) {
                    ovlog (ov, LOG_ERR, "peer %u: bad public key",
                           (unsigned)p->rank);
                    return -1;
                }
                /* czmq asserts on a duplicate key: with a shared cert
                 * every peer has the same one. */
                if (zcertstore_lookup (ov->certstore, p->pubkey))
                    zcert_destroy (&c);
                else
                    zcertstore_insert (ov->certstore, &c);
            }
        }
    }
    if (zloop_poller (ov->loop, &item, sock_readable, ov) < 0)
        return -1;
    return 0;
}

/* After the second barrier: connect to the peers this broker is
 * responsible for, and say hello. */
static int overlay_connect (void *state)
{
    struct overlay *ov = state;

    for (int i = 0; i < ov->npeers; i++) {
        struct peer *p = ov->peers[i];
        if (!p->connector)
            continue;
        if (ov->curve)
            zmq_setsockopt (ov->sock, ZMQ_CURVE_SERVERKEY, p->pubkey, 40);
        zmq_setsockopt (ov->sock, ZMQ_CONNECT_ROUTING_ID, p->id, strlen (p->id));
        if (zmq_connect (ov->sock, p->endpoint) < 0) {
            ovlog (ov, LOG_ERR, "connect to rank %u at %s: %s",
                   (unsigned)p->rank, p->endpoint, zmq_strerror (errno));
            return -1;
        }
        send_hello (ov, p);
    }
    ov->sweep_timer = zloop_timer (ov->loop, 1000, 0, sweep_cb, ov);
    ov->last_tick = monotime_now ();
    ov->ka_timer = zloop_timer (ov->loop,
                                (size_t)(ov->keepalive_interval * 1000 / 2) + 1,
                                0, keepalive_cb, ov);
    if (ov->npeers == 0)
        report_ready (ov);
    ovlog (ov, LOG_DEBUG, "overlay %s: %d peers, bind %s, ttl %d",
           ov->topo_spec, ov->npeers, ov->public_uri, ov->ttl);
    return 0;
}

static void overlay_unload (void *state)
{
    struct overlay *ov = state;

    if (!ov)
        return;
    for (int i = 0; i < ov->npeers; i++) {
        struct peer *p = ov->peers[i];
        if (p->state == PEER_UP || p->state == PEER_SUSPECT) {
            struct envelope bye = { .kind = ENV_GOODBYE, .ttl = 1,
                                    .source = ov->rank, .dest = p->rank };
            peer_send_now (ov, p, &bye, NULL, 0);
        }
    }
    overlay_cert_remove (ov);
    overlay_free (ov);
}

const struct bgn_module bgn_module_entry = {
    .abi_version = BGN_MODULE_ABI_VERSION,
    .name = "overlay-bgn",
    .description = "binomial graph overlay (also kary:K and binomial trees)",
    .load = overlay_load,
    .start = overlay_start,
    .unload = overlay_unload,
    .connect = overlay_connect,
};
