/* evglue.c: the event layer's ops over the overlay (see evglue.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "body.h"
#include "evglue.h"
#include "fence.h"
#include "overlay.h"
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
        ov->c.no_route_drops++;
        return -1;
    }
    return 0;
}

static int ev_send (void *arg, uint32_t to, int kind, const msg_t *event)
{
    struct overlay *ov = arg;
    struct frame *frames[MSG_MAX_FRAMES];
    int n = body_encode ((msg_t *)event, frames, MSG_MAX_FRAMES);

    if (n < 0)
        return -1;
    return ev_route (ov, to, ENV_EVENT, kind == EV_REPAIR ? 1 : 0, frames, n);
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

static void ev_deliver (void *arg, const msg_t *event)
{
    struct overlay *ov = arg;
    msg_t *copy = msg_copy (event);
    struct bgn_msg_info info = { .source = 0, .from_overlay = 1 };

    if (copy)
        ov->io->deliver (ov->ctx, copy, &info);
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

/* Ask our tree parent first (it forwarded to us), then other live peers. */
static uint32_t ev_repair_peer (void *arg, int attempt)
{
    struct overlay *ov = arg;
    int parent = bgn_topo_bcast_parent (ov->topo, 0, ov->rank);
    int k = 0;

    if (parent >= 0 && !fence_is_fenced (ov, (uint32_t)parent)) {
        if (attempt == 0)
            return (uint32_t)parent;
        k = 1;
    }
    for (int i = 0; i < ov->peers->n; i++) {
        struct peer *p = ov->peers->v[(i + ov->rank) % ov->peers->n];
        if ((int)p->rank == parent || !peer_is_up (p))
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

int evglue_init (struct overlay *ov)
{
    if (!(ov->events = evlayer_create (ov->topo, ov->rank,
                                       ov->cfg.event_buffer,
                                       ov->cfg.keepalive_interval, &ev_ops,
                                       ov)))
        return -1;
    if (ov->size == 1)
        evlayer_set_ready (ov->events);
    return 0;
}

void evglue_fini (struct overlay *ov)
{
    evlayer_destroy (&ov->events);
}

static void recv_control (struct overlay *ov, const struct envelope *env,
                          struct frame **body, int n)
{
    json_t *o = n >= 1 ? json_loadb ((const char *)frame_data (body[0]),
                                     frame_size (body[0]), 0, NULL)
                       : NULL;
    int k;

    if (!o || json_unpack (o, "{s:i}", "k", &k) < 0)
        ov->c.malformed_drops++;
    else
        evlayer_recv_control (ov->events, env->source, k, o);
    json_decref (o);
}

void evglue_recv (struct overlay *ov, struct peer *p, struct envelope *env,
                  struct frame **body, int n)
{
    msg_t *msg;

    if (env->dest != ov->rank) {
        if (env->dest >= ov->size)
            return;
        if (route_ttl_step (env) < 0) {
            ov->c.ttl_drops++;
            return;
        }
        if (route_out (ov, env, body, n, (int)p->rank) < 0)
            ov->c.no_route_drops++;
        else
            ov->c.forwarded++;
        return;
    }
    if (env->kind == ENV_EVCTL) {
        recv_control (ov, env, body, n);
        return;
    }
    if (!(msg = body_decode (body, n, NULL, 0))) {
        ov->c.malformed_drops++;
        return;
    }
    evlayer_recv_event (ov->events, env->source,
                        env->flags & 1 ? EV_REPAIR : EV_TREE, msg);
}
