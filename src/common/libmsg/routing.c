/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* routing.c: the broker's routing rules (routing.h).
 *
 * Only decisions and the route stack: the broker and the simulator send.
 */
#include <errno.h>
#include <stdio.h>

#include "routing.h"

static struct routing_hop hop (enum routing_action action, uint32_t dest)
{
    struct routing_hop h = { .action = action, .dest = dest };
    return h;
}

static struct routing_hop fail (int errnum, const char *errstr)
{
    struct routing_hop h = { .action = ROUTING_FAIL, .errnum = errnum,
                             .errstr = errstr };
    return h;
}

/* Out through the overlay, if there is one to take it. */
static struct routing_hop forward (const struct routing_self *self,
                                   uint32_t dest)
{
    if (!self->overlay || self->size == 1)
        return fail (EHOSTUNREACH, dest < self->size
                                   || dest >= NODEID_UPSTREAM
                                       ? "no overlay to reach that rank"
                                       : "no such rank");
    return hop (ROUTING_FORWARD, dest);
}

struct routing_hop routing_request (const struct routing_self *self,
                                    const msg_t *req, bool have)
{
    uint32_t nodeid = NODEID_ANY;

    msg_get_nodeid (req, &nodeid);
    if (msg_get_flags (req) & MSGFLAG_UPSTREAM) {
        /* nodeid is the sender: never handled there. */
        if (nodeid != self->rank && have)
            return hop (ROUTING_LOCAL, self->rank);
        if (self->rank == 0)
            return fail (ENOSYS, "no service upstream");
        return forward (self, NODEID_UPSTREAM);
    }
    if (nodeid == NODEID_ANY) {
        if (have)
            return hop (ROUTING_LOCAL, self->rank);
        if (self->rank == 0 || !self->overlay)
            return fail (ENOSYS, NULL);
        return forward (self, NODEID_ANY);
    }
    if (nodeid == self->rank)
        return have ? hop (ROUTING_LOCAL, self->rank) : fail (ENOSYS, NULL);
    if (nodeid >= self->size)
        return fail (EHOSTUNREACH, "no such rank");
    return forward (self, nodeid);
}

struct routing_hop routing_response (msg_t *rsp, uint32_t rank)
{
    uint32_t top;

    while (msg_route_count (rsp) > 0) {
        if (!msg_route_id_rank (msg_route_first (rsp), &top))
            return hop (ROUTING_CLIENT, 0);
        if (top != rank)
            return hop (ROUTING_FORWARD, top);
        msg_route_pop (rsp, NULL, 0);
    }
    return hop (ROUTING_LOCAL, rank);
}

int routing_outbound (msg_t *req, uint32_t rank, bool from_overlay)
{
    char rankstr[16];

    if (from_overlay)
        return 0;
    snprintf (rankstr, sizeof (rankstr), "%u", (unsigned)rank);
    return msg_route_push (req, rankstr);
}

void routing_outbound_undo (msg_t *req, bool from_overlay)
{
    if (!from_overlay)
        msg_route_pop (req, NULL, 0);
}

const char *routing_unsent_reason (char *buf, size_t len, int errnum,
                                   uint32_t dest, uint32_t rank)
{
    /* Say it did not run: a rank that restarted moments ago is still
     * down here until the news of its rejoin arrives. */
    snprintf (buf, len, errnum == EHOSTUNREACH
              ? "overlay could not route to rank %u (down, or restarting, "
                "as far as rank %u knows): the request did not run"
              : "overlay could not route to rank %u (rank %u): the request "
                "did not run", (unsigned)dest, (unsigned)rank);
    return buf;
}
