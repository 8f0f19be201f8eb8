/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* simload.c: the clients of the simulated brokers, and their load.
 *
 * RPC loads send "sim.ping" from a broker's client to a destination rank
 * at Poisson arrivals, each with a deadline, and count what became of
 * each request (answered, failed fast, other error, timed out, run after
 * its client was told it failed).  Publish loads send "event.pub" to
 * rank 0; every broker's client subscribes to every event and checks it
 * gets each one once and in order (or a lost notice).  The status-all
 * probe asks rank 0 for overlay.status-all.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "src/modules/overlay/body.h"
#include "simnet_int.h"

/* ---- clients ----------------------------------------------------------- */

#define PUB_TAG 0x80000000u
#define STATUS_TAG 0x40000000u   /* the overlay.status-all probe */
#define CLIENT_TAGS (PUB_TAG | STATUS_TAG)

/* A random running broker (or NULL if none). */
struct sbroker *sim_random_live (struct simnet *s)
{
    if (s->st.live == 0)
        return NULL;
    for (int tries = 0; tries < 64; tries++) {
        struct sbroker *b = &s->b[sim_rnd_below (s, s->n)];
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
    sim_route_request (b, req, &info);
}

/* A random sim_running (not hung) broker among ranks[0..n-1], or NULL. */
static struct sbroker *random_live_of (struct simnet *s, const uint32_t *ranks,
                                       int n)
{
    int start = (int)sim_rnd_below (s, (uint32_t)n);

    for (int i = 0; i < n; i++) {
        struct sbroker *b = &s->b[ranks[(start + i) % n]];
        if (b->state == SB_UP)
            return b;
    }
    return NULL;
}

void sim_rpc_tick (struct simnet *s, int load)
{
    struct simload *l = &s->loads[load];
    struct sbroker *b = l->from ? random_live_of (s, l->from, l->nfrom)
                                : sim_random_live (s);

    if (b) {
        uint32_t tag = ++b->next_tag & ~CLIENT_TAGS;
        uint32_t dest = l->to ? l->to[sim_rnd_below (s, (uint32_t)l->nto)]
                              : sim_rnd_below (s, s->n);
        struct rpc *rpc = idmap_put (b->rpcs, tag, NULL);
        struct execd *e = idmap_put (s->execd, ((uint64_t)b->rank << 32) | tag,
                                     NULL);
        if (rpc && e) {
            rpc->dest = dest;
            rpc->dest_gen = s->b[dest].gen;
            rpc->sent_at = s->now;
            rpc->load = load;
            rpc->relay_died = false;
            e->failed_at = -1;
            e->ran = false;
            e->load = load;
            s->st.rpc.sent++;
            s->st.rpc.pending++;
            l->rpc.sent++;
            l->rpc.pending++;
            sim_schedule (s, s->now + s->p.rpc_timeout, EV_RPC_DEADLINE,
                          b->rank, tag, b->gen, 0, NULL);
            client_send (s, b, "sim.ping", dest, NULL, tag);
        }
    }
    if (s->now < l->until)
        sim_schedule (s, s->now - log (1.0 - sim_rnd_unit (s)) / l->rate,
                      EV_RPC_TICK, 0, (uint32_t)load, 0, 0, NULL);
}

void sim_rpc_deadline (struct simnet *s, struct simev *ev)
{
    struct sbroker *b = &s->b[ev->rank];
    struct rpc *rpc;

    if (b->gen != ev->b || !(rpc = idmap_get (b->rpcs, ev->a)))
        return;
    s->st.rpc.pending--;
    s->st.rpc.timed_out++;
    s->loads[rpc->load].rpc.pending--;
    s->loads[rpc->load].rpc.timed_out++;
    /* never answered although its destination stayed up (this broker, its
     * origin, did too: its requests die with it), and a relay died
     * holding it or its response */
    if (rpc->relay_died && sim_running (&s->b[rpc->dest])
        && s->b[rpc->dest].gen == rpc->dest_gen) {
        s->st.rpc.lost_in_relay++;
        s->loads[rpc->load].rpc.lost_in_relay++;
    }
    idmap_delete (b->rpcs, ev->a);
}

void sim_rpc_dropped (struct simnet *s, const struct smsg *m)
{
    const uint8_t *env;
    uint32_t origin;
    struct rpc *rpc;
    msg_t *msg;

    if (m->sock_event >= 0 || m->n < 1 || frame_size (m->frames[0]) < 3)
        return;
    env = frame_data (m->frames[0]);
    if (env[2] != ENV_DATA || !(msg = body_decode (m->frames[0], NULL, 0)))
        return;
    /* its stack: [client id, origin rank], the origin on top until the
     * response is back there */
    if (msg_route_count (msg) == 2
        && msg_route_id_rank (msg_route_first (msg), &origin)
        && origin < s->n && !strcmp (msg_get_topic (msg), "sim.ping")
        && (rpc = idmap_get (s->b[origin].rpcs, msg_get_matchtag (msg))))
        rpc->relay_died = true;
    msg_destroy (&msg);
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

void sim_status_all_ask (struct simnet *s)
{
    struct sbroker *b = &s->b[0];

    if (!sim_running (b))
        return;
    s->status_asked_at = s->now;
    client_send (s, b, "overlay.status-all", 0, "{\"timeout\":3}",
                 STATUS_TAG);
}

void sim_client_response (struct sbroker *b, msg_t *rsp)
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

void sim_pub_tick (struct simnet *s, int load)
{
    struct simload *l = &s->loads[load];
    struct sbroker *b = NULL;

    if (l->from)
        b = random_live_of (s, l->from, l->nfrom);
    else {
        /* publishers are the lowest-numbered live ranks from 1 up */
        int k = (int)sim_rnd_below (s, (uint32_t)l->publishers);
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
        sim_schedule (s, s->now - log (1.0 - sim_rnd_unit (s)) / l->rate,
                      EV_PUB_TICK, 0, (uint32_t)load, 0, 0, NULL);
}

/* Every broker subscribes to every event: check exactly once, in order,
 * or a lost notice. */
void sim_subscriber_event (struct sbroker *b, const msg_t *ev)
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
    sim_schedule (s, at, events ? EV_PUB_TICK : EV_RPC_TICK, 0,
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
    sim_schedule (s, at, EV_STATUS_ALL, 0, 0, 0, 0, NULL);
}

const struct sim_rpc_counts *simnet_load_rpc (struct simnet *s, int i)
{
    if (i < 0 || i >= s->nloads || s->loads[i].events)
        return NULL;
    return &s->loads[i].rpc;
}
