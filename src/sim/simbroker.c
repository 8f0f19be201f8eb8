/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* simbroker.c: the mini-broker around each simulated core.
 *
 * What a bgn-broker does around its overlay module, as far as the
 * protocol needs it: it routes each request and response by the broker's
 * own rules (libmsg's routing.h, which bgn-broker's dispatch follows),
 * serves "sim.ping", "event.pub" (rank 0 publishes) and the core's
 * "overlay.*" methods, and hands responses and events to the local
 * client (simload.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "src/common/libmsg/routing.h"
#include "simnet_int.h"

int sim_respond_error (struct sbroker *b, const msg_t *req, int errnum,
                       const char *errstr)
{
    msg_t *rsp;

    if (msg_get_flags (req) & MSGFLAG_NORESPONSE)
        return 0;
    if (!(rsp = msg_error_response_create (req, errnum, errstr)))
        return -1;
    sim_route_response (b, rsp);
    return 0;
}

int sim_respond (struct sbroker *b, const msg_t *req, const char *payload)
{
    msg_t *rsp;

    if (msg_get_flags (req) & MSGFLAG_NORESPONSE)
        return 0;
    if (!(rsp = msg_response_create (req, payload)))
        return -1;
    sim_route_response (b, rsp);
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
        sim_respond_error (b, req, EHOSTUNREACH, "rank 0 is not reachable");
        return;
    }
    if (!(ev = msg_event_create ("sim.event", msg_get_payload (req, NULL)))) {
        sim_respond_error (b, req, ENOMEM, NULL);
        return;
    }
    if ((seq = overlay_publish (b->ov, ev)) < 0) {
        sim_respond_error (b, req, errno, NULL);
        return;
    }
    snprintf (out, sizeof (out), "{\"seq\":%lld}", (long long)seq);
    sim_respond (b, req, out);
    (void)s;
}

/* Does this broker have a service for topic?  Every broker serves the
 * core's methods, sim.ping and event.pub (which only rank 0 can do). */
static bool have_service (const char *topic)
{
    return !strncmp (topic, "overlay.", 8) || !strcmp (topic, "sim.ping")
           || !strcmp (topic, "event.pub");
}

/* A request for one of this broker's services. */
static void serve (struct sbroker *b, msg_t *req,
                   const struct bgn_msg_info *info)
{
    const char *topic = msg_get_topic (req);

    if (!strncmp (topic, "overlay.", 8))
        overlay_service (b->ov, req, info);
    else if (!strcmp (topic, "sim.ping")) {
        ping_ran (b, req);
        sim_respond (b, req, NULL);
    }
    else
        event_pub (b, req);
}

/* Out through the overlay toward dest, or answered here if it cannot go
 * (as bgn-broker's dispatch does). */
static void sim_request_forward (struct sbroker *b, msg_t *req,
                             const struct bgn_msg_info *info, uint32_t dest)
{
    char why[160];
    int errnum;

    if (routing_outbound (req, b->rank, info->from_overlay) < 0) {
        sim_respond_error (b, req, errno, "route stack is full");
        msg_destroy (&req);
        return;
    }
    if (overlay_send (b->ov, &req, dest, info) == 0)
        return;
    errnum = errno;
    routing_outbound_undo (req, info->from_overlay);
    sim_respond_error (b, req, errnum,
                       routing_unsent_reason (why, sizeof (why), errnum,
                                              dest, b->rank));
    msg_destroy (&req);
}

void sim_route_request (struct sbroker *b, msg_t *req,
                        const struct bgn_msg_info *info)
{
    struct routing_self self = { .rank = b->rank, .size = b->s->n,
                                 .overlay = true };
    bool have = have_service (msg_get_topic (req));
    struct routing_hop hop = routing_request (&self, req, have);

    switch (hop.action) {
    case ROUTING_LOCAL:
        serve (b, req, info);
        break;
    case ROUTING_FORWARD:
        sim_request_forward (b, req, info, hop.dest);
        return;
    default:
        sim_respond_error (b, req, hop.errnum, hop.errstr);
        break;
    }
    msg_destroy (&req);
}

void sim_route_response (struct sbroker *b, msg_t *rsp)
{
    struct routing_hop hop = routing_response (rsp, b->rank);

    switch (hop.action) {
    case ROUTING_CLIENT:
        msg_route_pop (rsp, NULL, 0);
        sim_client_response (b, rsp);
        break;
    case ROUTING_FORWARD:
        if (overlay_send (b->ov, &rsp, hop.dest, NULL) == 0)
            return;
        break;
    default:
        /* the stack ran out: a request of the core's own */
        if (!strncmp (msg_get_topic (rsp), "overlay.", 8))
            overlay_service (b->ov, rsp, NULL);
        break;
    }
    msg_destroy (&rsp);
}
