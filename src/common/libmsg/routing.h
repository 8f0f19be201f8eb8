/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* routing.h: the broker's routing rules, apart from any socket.
 *
 * Where a request or a response goes next, decided from the message and
 * the facts of this broker alone.  bgn-broker's dispatch (src/broker) and
 * the protocol simulator's mini-broker (src/sim) both follow these rules,
 * so the simulator routes as the broker does; each does the sending.
 *
 * Requests.  A request with MSGFLAG_UPSTREAM names its sender in nodeid:
 * a service here takes it unless this broker is that sender, else it goes
 * toward rank 0 (NODEID_UPSTREAM); rank 0 has nowhere to send it.  A
 * request to NODEID_ANY goes to the first broker on the way to rank 0
 * that has the service.  A request to a rank is served there, or fails
 * ENOSYS if the service is not there; to a rank past the size it fails
 * EHOSTUNREACH.  Without an overlay (or alone) a request that would leave
 * fails EHOSTUNREACH.
 *
 * Route stacks (those of Flux's brokers): a client's id is pushed where it
 * connects; a request that starts here gets this broker's rank pushed
 * once as it leaves for the overlay (routing_outbound); brokers in
 * between never touch the stack.  A response goes toward the top of its
 * stack: a rank other than ours (through the overlay), ours (popped), or
 * a client's id (that client's); an empty stack means the request was
 * this broker's own.
 *
 * Pure: no I/O, no allocation but the route stack's own.
 */
#ifndef BGN_LIBMSG_ROUTING_H
#define BGN_LIBMSG_ROUTING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "message.h"

/* The broker doing the routing. */
struct routing_self {
    uint32_t rank;
    uint32_t size;
    bool overlay;               /* an overlay links it to other ranks */
};

enum routing_action {
    ROUTING_LOCAL,              /* a service here takes it */
    ROUTING_FORWARD,            /* out through the overlay toward dest */
    ROUTING_CLIENT,             /* response: to the local client whose id
                                   is on top of the stack (still there) */
    ROUTING_FAIL,               /* request: answer it here with errnum */
};

struct routing_hop {
    enum routing_action action;
    uint32_t dest;              /* FORWARD: a rank, NODEID_ANY or
                                   NODEID_UPSTREAM */
    int errnum;                 /* FAIL */
    const char *errstr;         /* FAIL: static text, or NULL */
};

/* Where request 'req' goes from this broker; 'have' says whether a
 * service here registered its topic.  Reads req only. */
struct routing_hop routing_request (const struct routing_self *self,
                                    const msg_t *req, bool have);

/* Where response 'rsp' goes from rank 'rank': entries of its route stack
 * naming this rank are popped on the way.  LOCAL: the stack ran out here
 * (the request was this broker's own); CLIENT: the top is a client's id
 * (not popped); FORWARD: toward the rank on top. */
struct routing_hop routing_response (msg_t *rsp, uint32_t rank);

/* A request leaving this broker for the overlay: one that starts here
 * (not from_overlay) gets this broker's rank pushed on its route stack.
 * -1 with errno (msg_route_push's) if the stack has no room. */
int routing_outbound (msg_t *req, uint32_t rank, bool from_overlay);

/* The overlay did not take it: undo routing_outbound. */
void routing_outbound_undo (msg_t *req, bool from_overlay);

/* The error text for a request the overlay did not take toward 'dest'
 * at rank 'rank' (errnum: the overlay's errno), in buf. */
const char *routing_unsent_reason (char *buf, size_t len, int errnum,
                                   uint32_t dest, uint32_t rank);

#endif
