/* hello.c: admission: HELLO / ACK / NAK, incarnations, rejoin (hello.h).
 */
#include <stdio.h>
#include <string.h>

#include "fence.h"
#include "heal.h"
#include "health.h"
#include "hello.h"
#include "live.h"
#include "overlay.h"
#include "route.h"

#define HELLO_RETRY 2.0   /* seconds */

static json_t *hello_payload (struct overlay *ov)
{
    return json_pack ("{s:i s:i s:s s:I s:s s:s s:I}",
                      "version", PROTOCOL_VERSION,
                      "rank", (int)ov->rank,
                      "instance", ov->instance,
                      "incarnation", (json_int_t)ov->incarnation,
                      "hostname", ov->hostname,
                      "topology", ov->topo_spec,
                      "seq", (json_int_t)(ov->events
                                          ? evlayer_hello_seq (ov->events)
                                          : 0));
}

static void send_payload (struct overlay *ov, struct peer *p, int kind)
{
    json_t *o = hello_payload (ov);

    if (o)
        route_send_control (ov, p, kind, o);
    json_decref (o);
}

void hello_send (struct overlay *ov, struct peer *p)
{
    send_payload (ov, p, ENV_HELLO);
}

/* A refusal, addressed to the incarnation that asked ('inc'). */
static void send_nak (struct overlay *ov, struct peer *p, const char *reason,
                      uint64_t inc)
{
    json_t *o = json_pack ("{s:s}", "reason", reason);

    if (o)
        route_send_control_inc (ov, p, ENV_HELLO_NAK, o, inc);
    json_decref (o);
}

/* Check a hello's content.  NULL if acceptable, else the reason. */
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
    if (strcmp (instance, ov->instance) != 0)
        return "peer belongs to another instance";
    if (strcmp (topology, ov->topo_spec) != 0)
        return "peer uses another topology";
    snprintf (p->hostname, sizeof (p->hostname), "%s", hostname);
    *inc = (uint64_t)incarnation;
    return NULL;
}

static void nak_recv (struct overlay *ov, struct peer *p, json_t *o)
{
    const char *reason = "?";

    if (o)
        json_unpack (o, "{s:s}", "reason", &reason);
    if (!strncmp (reason, "fenced", 6)) {
        hello_rejoin (ov, "a peer refused our fenced incarnation");
        return;
    }
    ovl_log (ov, LOG_ERR, "peer %u refused our hello: %s", (unsigned)p->rank,
             reason);
    p->refused = true;
    if (p->connector && p->endpoint[0])
        ov->io->disconnect (ov->ctx, p->rank, p->endpoint);
    live_set_state (ov, p, PEER_DOWN);
}

/* A fenced (or older) incarnation says hello: it must come back as new. */
static bool refuse_fenced (struct overlay *ov, struct peer *p,
                           const struct envelope *env, uint64_t inc)
{
    const struct fence_entry *f = fence_lookup (ov, p->rank);

    if (!f || !((f->fenced && inc <= f->inc) || (!f->fenced && inc < f->inc)))
        return false;
    ovl_log (ov, LOG_INFO, "peer %u: hello from fenced incarnation %llu",
             (unsigned)p->rank, (unsigned long long)inc);
    if (env->kind == ENV_HELLO)
        send_nak (ov, p, "fenced: rejoin with a new incarnation", inc);
    else {
        json_t *fo = json_pack ("{s:i s:I s:s}", "rank", (int)p->rank,
                                "incarnation", (json_int_t)inc,
                                "reason", "fenced");
        if (fo)
            route_send_control_inc (ov, p, ENV_FENCE, fo, inc);
        json_decref (fo);
    }
    return true;
}

static void admit (struct overlay *ov, struct peer *p,
                   const struct envelope *env, uint64_t inc)
{
    if (p->incarnation && inc != p->incarnation)
        ovl_log (ov, LOG_NOTICE, "peer %u restarted (incarnation %llu -> "
                 "%llu)", (unsigned)p->rank,
                 (unsigned long long)p->incarnation, (unsigned long long)inc);
    p->incarnation = inc;
    p->last_heard = ovl_now (ov);
    /* The ACK goes first: nothing else may reach the peer before it. */
    if (env->kind == ENV_HELLO)
        send_payload (ov, p, ENV_HELLO_ACK);
    live_set_state (ov, p, PEER_UP);
    fence_send_view (ov, p);
    evlayer_seq_hint (ov->events, p->rank, p->hello_seq);
    /* Alive as a newer incarnation: lift any fence everywhere. */
    hello_unfence (ov, p->rank, inc, -1);
    if (p->substitute)
        heal_link_apply (ov, "add", ov->rank, p->rank, -1);
}

void hello_recv (struct overlay *ov, struct peer *p,
                 const struct envelope *env, struct frame *const *body,
                 int n, const char *key_problem)
{
    json_t *o = NULL;
    const char *why;
    uint64_t inc = 0;

    if (n >= 1)
        o = json_loadb ((const char *)frame_data (body[0]),
                        frame_size (body[0]), 0, NULL);
    if (env->kind == ENV_HELLO_NAK) {
        nak_recv (ov, p, o);
        goto done;
    }
    if ((why = key_problem) || (why = hello_check (ov, p, o, &inc))) {
        ovl_log (ov, LOG_ERR, "peer %u: hello refused: %s",
                 (unsigned)p->rank, why);
        if (env->kind == ENV_HELLO)
            send_nak (ov, p, why, 0);
        else if (p->connector && p->endpoint[0])
            ov->io->disconnect (ov->ctx, p->rank, p->endpoint);
        goto done;
    }
    if (!refuse_fenced (ov, p, env, inc))
        admit (ov, p, env, inc);
done:
    json_decref (o);
}

void hello_rejoin (struct overlay *ov, const char *why)
{
    /* Any incarnation above the fenced one will do; counting up needs no
     * clock, so a clock that jumps cannot keep us out. */
    ov->incarnation++;
    ovl_log (ov, LOG_WARNING, "this broker was fenced (%s): rejoining as "
             "incarnation %llu", why && *why ? why : "declared down",
             (unsigned long long)ov->incarnation);
    health_report_again (ov);
    for (int i = 0; i < ov->peers->n; i++) {
        struct peer *p = ov->peers->v[i];
        if (p->state != PEER_CONNECTING)
            live_set_state (ov, p, PEER_CONNECTING);
        p->refused = false;
        if (p->connector)
            hello_send (ov, p);
    }
}

int hello_unfence (struct overlay *ov, uint32_t rank, uint64_t inc, int from)
{
    int flags = unfence_apply (ov, rank, inc, from);
    struct peer *p;

    /* A neighbour we connect to is back: say hello now rather than at
     * the next retry. */
    if ((flags & UNFENCE_NEIGHBOUR) && (p = peers_lookup (ov->peers, rank)))
        hello_send (ov, p);
    if (flags & UNFENCE_ROOT)
        health_report_again (ov);
    return flags;
}

void hello_retry (struct overlay *ov, double now)
{
    for (int i = 0; i < ov->peers->n; i++) {
        struct peer *p = ov->peers->v[i];
        if ((p->state == PEER_CONNECTING || p->state == PEER_DOWN)
            && p->connector && !p->refused
            && now - p->state_since > HELLO_RETRY
            && now - p->last_sent > HELLO_RETRY)
            hello_send (ov, p);
    }
}

void hello_connected (struct overlay *ov, const char *endpoint)
{
    for (int i = 0; i < ov->peers->n; i++) {
        struct peer *p = ov->peers->v[i];
        if (p->connector && !strcmp (p->endpoint, endpoint)
            && (p->state == PEER_DOWN || p->state == PEER_CONNECTING)
            && !p->refused)
            hello_send (ov, p);
    }
}
