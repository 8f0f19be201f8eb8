/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* evglue.c: the event layer's ops over the overlay (see evglue.h).
 *
 * A batch travels as ENV_EVENT with the batch as its one body frame,
 * shared here (a reference per hop; the send copies its bytes into each
 * peer's one wire frame, body.h); control objects as
 * ENV_EVCTL with a JSON body.  Subscribers get whole batches through
 * io->deliver_events when the io has it (the broker filters them per
 * subscriber), else one message per event.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "body.h"
#include "evglue.h"
#include "ovsign.h"
#include "fence.h"
#include "overlay.h"
#include "ovlog.h"
#include "route.h"

/* Route [frames] of 'kind' to rank 'to' (frames taken in every case). */
static int ev_route (struct overlay *ov, uint32_t to, int kind, int flags,
                     struct frame **frames, int n)
{
    struct envelope env = { .kind = kind, .flags = flags, .ttl = ov->ttl,
                            .source = ov->rank, .dest = to };

    if (to == ov->rank || to >= ov->size || route_ttl_step (&env) < 0) {
        frame_decref_all (frames, n);
        return -1;
    }
    if (route_out (ov, &env, frames, n, -1) < 0) {
        frame_decref_all (frames, n);
        route_count (ov, RC_no_route_drops, 1);
        return -1;
    }
    return 0;
}

static int ev_send (void *arg, uint32_t to, int kind, struct frame *batch,
                    struct frame *tags)
{
    struct frame *f[2] = { frame_incref (batch), NULL };

    if (tags)
        f[1] = frame_incref (tags);
    return ev_route (arg, to, ENV_EVENT, kind == EV_REPAIR ? 1 : 0, f,
                     tags ? 2 : 1);
}

static int ev_control (void *arg, uint32_t to, int kind, json_t *o)
{
    struct overlay *ov = arg;
    json_t *copy = json_copy (o);
    struct frame *frame;
    char *s;

    if (!copy)
        return -1;
    json_object_set_new (copy, "k", json_integer (kind));
    s = json_dumps (copy, JSON_COMPACT);
    json_decref (copy);
    if (!s)
        return -1;
    frame = frame_create (s, strlen (s));
    free (s);
    if (!frame)
        return -1;
    return ev_route (ov, to, ENV_EVCTL, 0, &frame, 1);
}

static int ev_is_down (void *arg, uint32_t rank)
{
    return fence_is_fenced (arg, rank);
}

/* The next hop toward 'to' is up (not suspect: a hung peer must not hold
 * everyone back) and its transport queue is full. */
static int ev_congested (void *arg, uint32_t to)
{
    struct overlay *ov = arg;
    uint32_t hops[MAX_HOPS_LIST];
    bool live = false;
    struct peer *p;

    if (route_next_hops (ov, to, hops, MAX_HOPS_LIST, &live) < 1
        || !(p = peers_lookup (ov->peers, hops[0])))
        return 0;
    return p->state == PEER_UP && p->backlog.count > 0;
}

/* One message per event (an io without deliver_events). */
static void deliver_each (struct overlay *ov, const uint8_t *data, size_t len,
                          uint32_t from)
{
    struct bgn_msg_info info = { .source = 0, .from_overlay = 1 };
    struct evbatch_rec rec;
    size_t off = 0;
    msg_t *msg;

    while (evbatch_next (data, len, &off, &rec)) {
        if (rec.seq >= from && (msg = evbatch_rec_msg (&rec)))
            ov->io->deliver (ov->ctx, msg, &info);
    }
}

static void ev_deliver (void *arg, struct frame *batch, uint32_t from)
{
    struct overlay *ov = arg;
    const uint8_t *data = frame_data (batch);
    size_t len = frame_size (batch);
    struct evbatch_writer w;
    struct evbatch_rec rec;
    size_t off = 0;
    struct evbatch_hdr h;

    if (!ov->io->deliver_events) {
        deliver_each (ov, data, len, from);
        return;
    }
    if (evbatch_header (data, len, &h) < 0)   /* checked on arrival */
        return;
    if (from <= h.first) {
        ov->io->deliver_events (ov->ctx, data, len);
        return;
    }
    /* Part of it was delivered or declared lost already. */
    evbatch_writer_init (&w, h.epoch);
    while (evbatch_next (data, len, &off, &rec))
        if (rec.seq >= from && evbatch_add_rec (&w, &rec) < 0)
            break;
    if (w.count > 0 && evbatch_seal (&w) == 0)
        ov->io->deliver_events (ov->ctx, w.buf, w.len);
    evbatch_writer_free (&w);
}

static void ev_lost (void *arg, uint32_t from, uint32_t to)
{
    struct overlay *ov = arg;
    char payload[96];
    msg_t *notice;
    struct bgn_msg_info info = { .source = ov->rank };

    ovl_log (ov, LOG_ERR, "events %u..%u are lost: no peer still has them "
             "(raise overlay.event_buffer?)", (unsigned)from, (unsigned)to);
    snprintf (payload, sizeof (payload), "{\"from\":%u,\"to\":%u}",
              (unsigned)from, (unsigned)to);
    if ((notice = msg_event_create ("event.lost", payload)))
        ov->io->deliver (ov->ctx, notice, &info);
}

/* Ask our tree parent first (it forwarded to us), then other live peers:
 * neighbours only, since a request is answered only to the neighbour it
 * came through. */
static uint32_t ev_repair_peer (void *arg, int i)
{
    struct overlay *ov = arg;
    int parent = bgn_topo_bcast_parent (ov->topo, 0, ov->rank);
    struct peer *pp = parent >= 0 ? peers_lookup (ov->peers, parent) : NULL;
    int k = 0;

    if (pp && peer_is_up (pp)) {
        if (i == 0)
            return pp->rank;
        k = 1;
    }
    for (int j = 0; j < ov->peers->n; j++) {
        struct peer *p = ov->peers->v[(j + ov->rank) % ov->peers->n];
        if (p == pp || !peer_is_up (p))
            continue;
        if (k++ == i)
            return p->rank;
    }
    return UINT32_MAX;
}

/* A publisher's request, answered when its last event has left. */
struct pubtoken {
    msg_t *req;             /* our copy */
    uint32_t count;         /* events it published */
};

static void ev_published (void *arg, void *token, uint32_t seq, int errnum)
{
    struct overlay *ov = arg;
    struct pubtoken *t = token;
    char payload[64];

    if (!t)
        return;
    if (errnum == 0) {
        snprintf (payload, sizeof (payload), "{\"seq\":%u,\"count\":%u}",
                  (unsigned)(seq - t->count + 1), (unsigned)t->count);
        ov->io->respond (ov->ctx, t->req, payload);
    }
    else if (errnum != ECANCELED)
        ov->io->respond_error (ov->ctx, t->req, errnum, NULL);
    msg_destroy (&t->req);
    free (t);
}

static void ev_arm (void *arg, double when)
{
    struct overlay *ov = arg;

    if (isinf (when))
        ovtimer_disarm (ov->evglue.flush);
    else
        ovtimer_arm (ov->evglue.flush, when);
}

static double ev_now (void *arg)
{
    return ovl_now (arg);
}

static void ev_log (void *arg, int level, const char *fmt, ...)
{
    struct overlay *ov = arg;
    va_list ap;

    va_start (ap, fmt);
    ov->io->log (ov->ctx, level, fmt, ap);
    va_end (ap);
}

/* Rank 0's signature, with the key the bootstrap gave for rank 0 --
 * asked again when it fails (rank 0 restarted with a new key). */
static int ev_verify (void *arg, const void *data, size_t len,
                      const unsigned char *sig)
{
    return ovsign_verify (arg, 0, data, len, sig) == 1;
}

/* The tag key rank 0 and a broker share (events.h): rank 0 makes it
 * with each rank, the others with rank 0. */
static int ev_tag_key (void *arg, uint32_t rank, unsigned char key[32])
{
    struct overlay *ov = arg;
    uint32_t other = ov->rank == 0 ? rank : 0;

    if (ov->rank != 0 && rank != ov->rank)
        return -1;
    return ovsign_shared_key (ov, other, "bgn-evtag", key);
}

static const struct evlayer_ops ev_ops = {
    .send = ev_send,
    .control = ev_control,
    .is_down = ev_is_down,
    .congested = ev_congested,
    .deliver = ev_deliver,
    .lost = ev_lost,
    .repair_peer = ev_repair_peer,
    .published = ev_published,
    .arm = ev_arm,
    .now = ev_now,
    .log = ev_log,
    .verify = ev_verify,
    .tag_key = ev_tag_key,
};

static void flush_cb (void *arg)
{
    struct overlay *ov = arg;
    evlayer_flush (ov->events, ovl_now (ov));
}

int evglue_init (struct overlay *ov)
{
    struct evlayer_config cfg;

    evlayer_config_defaults (&cfg);
    cfg.epoch = ov->incarnation;
    cfg.buffer = ov->cfg.event_buffer;
    cfg.buffer_bytes = (size_t)ov->cfg.event_buffer_bytes;
    cfg.sync_period = ov->cfg.keepalive_interval;
    cfg.batch_window = ov->cfg.event_batch_window;
    cfg.batch_bytes = (size_t)ov->cfg.event_batch_bytes;
    cfg.queue_bytes = (size_t)ov->cfg.event_queue_bytes;
    cfg.learn_timeout = ov->cfg.peer_timeout;
    if (!(ov->evglue.flush = ovtimer_create (ov->timers, flush_cb, ov))
        || !(ov->events = evlayer_create (ov->topo, ov->rank, &cfg, &ev_ops,
                                          ov)))
        return -1;
    if (ov->size == 1)
        evlayer_set_ready (ov->events);
    return 0;
}

void evglue_fini (struct overlay *ov)
{
    evlayer_destroy (&ov->events);
    ovtimer_destroy (&ov->evglue.flush);
}

static void destroy_all (msg_t **events, int n)
{
    for (int i = 0; i < n; i++)
        msg_destroy (&events[i]);
}

int evglue_publish (struct overlay *ov, msg_t **events, int n,
                    const msg_t *req)
{
    struct pubtoken *t = NULL;
    size_t bytes = 0;
    int64_t seq = -1;

    for (int i = 0; i < n; i++)
        bytes += evbatch_rec_size (events[i]);
    if (n < 1 || evlayer_room (ov->events, bytes) < 0)
        goto error;
    if (req && (!(t = calloc (1, sizeof (*t))) || !(t->req = msg_copy (req))))
        goto nomem;
    if (t)
        t->count = (uint32_t)n;
    /* Room was checked: only a bad event (no topic) can fail now. */
    for (int i = 0; i < n; i++) {
        seq = evlayer_publish (ov->events, events[i], i == n - 1 ? t : NULL);
        events[i] = NULL;
        if (seq < 0 && i == n - 1 && t) {
            msg_destroy (&t->req);
            free (t);
            return -1;
        }
    }
    return 0;
nomem:
    if (t)
        free (t);
    errno = ENOMEM;
error:
    destroy_all (events, n);
    return -1;
}

static void recv_control (struct overlay *ov, struct peer *p,
                          const struct envelope *env, struct frame **body,
                          int n)
{
    json_t *o = n == 1 ? json_loadb ((const char *)frame_data (body[0]),
                                     frame_size (body[0]), 0, NULL)
                       : NULL;
    int k;

    if (!o || json_unpack (o, "{s:i}", "k", &k) < 0)
        route_count (ov, RC_malformed_drops, 1);
    else
        evlayer_recv_control (ov->events, env->source, p->rank, k, o);
    json_decref (o);
}

static void recv_batch (struct overlay *ov, struct peer *p,
                        const struct envelope *env, struct frame **body,
                        int n)
{
    struct evbatch_hdr h;
    uint32_t ntags;
    char why[128] = "";

    if (n < 1 || n > 2
        || evbatch_check (frame_data (body[0]), frame_size (body[0]), &h,
                          why, sizeof (why)) < 0
        || (n == 2 && evtags_check (frame_data (body[1]),
                                    frame_size (body[1]), &ntags, why,
                                    sizeof (why)) < 0)) {
        uint64_t bad = route_count (ov, RC_malformed_drops, 1);
        if (bad == 1 || bad % 1000 == 0)
            ovl_log (ov, LOG_WARNING, "peer %u: malformed event batch: %s "
                     "(%llu malformed so far)", (unsigned)p->rank,
                     n < 1 || n > 2 ? "not one or two frames" : why,
                     (unsigned long long)bad);
        return;
    }
    /* tags for more ranks than there are, or for ranks that are not:
     * not rank 0's (the batch goes on, checked by its signature) */
    if (n == 2 && (ntags >= ov->size
                   || (ntags > 0 && evtags_rank (frame_data (body[1]),
                                                 ntags - 1) >= ov->size))) {
        uint64_t bad = route_count (ov, RC_malformed_drops, 1);
        if (bad == 1 || bad % 1000 == 0)
            ovl_log (ov, LOG_WARNING, "peer %u: event tags for %u ranks "
                     "in an instance of %u, dropped (%llu malformed so "
                     "far)", (unsigned)p->rank, (unsigned)ntags,
                     (unsigned)ov->size,
                     (unsigned long long)bad);
        n = 1;
    }
    evlayer_recv_batch (ov->events, env->source, p->rank,
                        env->flags & 1 ? EV_REPAIR : EV_TREE, body[0],
                        n == 2 ? body[1] : NULL, &h);
}

void evglue_recv (struct overlay *ov, struct peer *p, struct envelope *env,
                  struct frame **body, int n)
{
    if (env->dest != ov->rank) {
        if (env->dest >= ov->size)
            return;
        route_pass_on (ov, env, body, n, (int)p->rank);
        return;
    }
    if (env->kind == ENV_EVCTL)
        recv_control (ov, p, env, body, n);
    else
        recv_batch (ov, p, env, body, n);
}
