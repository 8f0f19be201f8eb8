/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* simbroker.c: the mini-broker around each simulated core.
 *
 * What a bgn-broker does around its overlay module, as far as the
 * protocol needs it: it routes each request and response by the
 * broker's own rules (the route stack, the destination rank), serves
 * "sim.ping", "event.pub" (rank 0 publishes) and the core's "overlay.*"
 * methods, and hands responses and events to the local client
 * (simload.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

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

/* A request for this broker's own services. */
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
    else if (!strcmp (topic, "event.pub"))
        event_pub (b, req);
    else
        sim_respond_error (b, req, ENOSYS, NULL);
}

/* What bgn-broker's dispatch does with a request (see dispatch.c). */
void sim_route_request (struct sbroker *b, msg_t *req,
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
        sim_respond_error (b, req, EHOSTUNREACH, "no such rank");
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
        sim_respond_error (b, req, errnum, "overlay could not route");
        msg_destroy (&req);
    }
}

void sim_route_response (struct sbroker *b, msg_t *rsp)
{
    uint32_t rank;

    while (msg_route_count (rsp) > 0) {
        const char *top = msg_route_first (rsp);
        if (!msg_route_id_rank (top, &rank)) {
            msg_route_pop (rsp, NULL, 0);
            sim_client_response (b, rsp);
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

