/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test/routing.c: TAP unit tests for the broker's routing rules
 * (routing.h).
 *
 * Requests to a rank (here, elsewhere, past the size, with and without an
 * overlay, alone), to NODEID_ANY and upstream (MSGFLAG_UPSTREAM, never
 * served at its sender, nowhere to go from rank 0); the route stack a
 * request leaving for the overlay gets (pushed once where it starts,
 * never at a relay, undone when not sent, refused when full); the next
 * hop of a response from its stack (a rank, ours popped, a client's id,
 * an empty stack); the text of a request the overlay did not take.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "src/common/libtap/tap.h"
#include "src/common/libmsg/routing.h"

static msg_t *request (uint32_t nodeid, bool upstream)
{
    msg_t *req = msg_request_create ("svc.method", nodeid, NULL);

    if (req && upstream)
        msg_set_flags (req, msg_get_flags (req) | MSGFLAG_UPSTREAM);
    return req;
}

/* The hop for a request to nodeid at 'self' (have: the service is here). */
static struct routing_hop decide (const struct routing_self *self,
                                  uint32_t nodeid, bool upstream, bool have)
{
    msg_t *req = request (nodeid, upstream);
    struct routing_hop h = { .action = -1 };

    if (req)
        h = routing_request (self, req, have);
    msg_destroy (&req);
    return h;
}

static bool is_fail (struct routing_hop h, int errnum, const char *errstr)
{
    if (h.action != ROUTING_FAIL || h.errnum != errnum)
        return false;
    if (!errstr || !h.errstr)
        return errstr == h.errstr;
    return !strcmp (errstr, h.errstr);
}

static bool is_forward (struct routing_hop h, uint32_t dest)
{
    return h.action == ROUTING_FORWARD && h.dest == dest;
}

static void test_rank (void)
{
    struct routing_self r5 = { .rank = 5, .size = 16, .overlay = true };
    struct routing_self alone = { .rank = 0, .size = 1, .overlay = true };
    struct routing_self nolink = { .rank = 5, .size = 16, .overlay = false };

    ok (decide (&r5, 5, false, true).action == ROUTING_LOCAL,
        "to this rank, service here: served here");
    ok (is_fail (decide (&r5, 5, false, false), ENOSYS, NULL),
        "to this rank, no such service: ENOSYS");
    ok (is_forward (decide (&r5, 9, false, true), 9),
        "to another rank: forwarded to it, even with the service here");
    ok (is_forward (decide (&r5, 0, false, false), 0),
        "to rank 0: forwarded to it");
    ok (is_fail (decide (&r5, 16, false, true), EHOSTUNREACH,
                 "no such rank"),
        "to the size: EHOSTUNREACH no such rank");
    ok (is_fail (decide (&r5, NODEID_UPSTREAM - 1, false, true),
                 EHOSTUNREACH, "no such rank"),
        "to a rank far past the size: EHOSTUNREACH no such rank");
    ok (is_fail (decide (&nolink, 9, false, true), EHOSTUNREACH,
                 "no overlay to reach that rank"),
        "to another rank without an overlay: EHOSTUNREACH");
    ok (is_fail (decide (&alone, 0, false, false), ENOSYS, NULL)
        && decide (&alone, 0, false, true).action == ROUTING_LOCAL,
        "a broker alone serves its own rank");
}

static void test_any (void)
{
    struct routing_self r0 = { .rank = 0, .size = 16, .overlay = true };
    struct routing_self r5 = { .rank = 5, .size = 16, .overlay = true };
    struct routing_self nolink = { .rank = 5, .size = 16, .overlay = false };

    ok (decide (&r5, NODEID_ANY, false, true).action == ROUTING_LOCAL,
        "any: the first broker with the service takes it");
    ok (is_forward (decide (&r5, NODEID_ANY, false, false), NODEID_ANY),
        "any, no service here: on toward rank 0");
    ok (is_fail (decide (&r0, NODEID_ANY, false, false), ENOSYS, NULL),
        "any, no service at rank 0: ENOSYS (nowhere further)");
    ok (is_fail (decide (&nolink, NODEID_ANY, false, false), ENOSYS, NULL),
        "any, no service and no overlay: ENOSYS");
}

static void test_upstream (void)
{
    struct routing_self r0 = { .rank = 0, .size = 16, .overlay = true };
    struct routing_self r5 = { .rank = 5, .size = 16, .overlay = true };
    struct routing_self nolink = { .rank = 5, .size = 16, .overlay = false };

    ok (is_forward (decide (&r5, 5, true, true), NODEID_UPSTREAM),
        "upstream at its sender: not served there, sent upstream");
    ok (decide (&r5, 9, true, true).action == ROUTING_LOCAL,
        "upstream at a broker with the service: served there");
    ok (is_forward (decide (&r5, 9, true, false), NODEID_UPSTREAM),
        "upstream, no service here: on upstream");
    ok (is_fail (decide (&r0, 5, true, false), ENOSYS,
                 "no service upstream"),
        "upstream reaching rank 0 without the service: ENOSYS");
    ok (is_fail (decide (&r0, 0, true, true), ENOSYS,
                 "no service upstream"),
        "upstream from rank 0 itself: ENOSYS");
    ok (is_fail (decide (&nolink, 5, true, true), EHOSTUNREACH,
                 "no overlay to reach that rank"),
        "upstream without an overlay: EHOSTUNREACH");
}

static void test_outbound (void)
{
    msg_t *req = request (9, false);
    char id[32];
    int i, rc;

    if (!req)
        bail_out ("msg_request_create failed");
    msg_route_enable (req);
    msg_route_push (req, "client-a");
    ok (routing_outbound (req, 5, false) == 0 && msg_route_count (req) == 2
        && !strcmp (msg_route_first (req), "5"),
        "a request starting here gets this rank pushed");
    ok (routing_outbound (req, 7, true) == 0 && msg_route_count (req) == 2,
        "a relay never touches the stack");
    routing_outbound_undo (req, true);
    ok (msg_route_count (req) == 2, "undo at a relay pops nothing");
    routing_outbound_undo (req, false);
    ok (msg_route_count (req) == 1
        && !strcmp (msg_route_first (req), "client-a"),
        "undo where it started pops this rank again");
    for (i = 0, rc = 0; i < MSG_MAX_ROUTES && rc == 0; i++)
        rc = msg_route_push (req, "x");
    errno = 0;
    ok (routing_outbound (req, 5, false) < 0 && errno == E2BIG,
        "a full stack: -1 with E2BIG");
    msg_destroy (&req);

    req = request (9, false);
    errno = 0;
    ok (req && routing_outbound (req, 5, false) < 0 && errno == EPROTO,
        "a request without routing: -1 with EPROTO");
    msg_destroy (&req);
    (void)id;
}

/* A response to a request from client "cli" on rank 3 (pushed "cli",
 * then "3"), with 'extra' more entries of rank 3 on top. */
static msg_t *response (int extra)
{
    msg_t *req = request (7, false), *rsp = NULL;

    if (req) {
        msg_route_enable (req);
        msg_route_push (req, "cli");
        msg_route_push (req, "3");
        for (int i = 0; i < extra; i++)
            msg_route_push (req, "3");
        rsp = msg_response_create (req, NULL);
    }
    msg_destroy (&req);
    if (!rsp)
        bail_out ("cannot build a response");
    return rsp;
}

static void test_response (void)
{
    msg_t *rsp = response (0);
    struct routing_hop h;

    h = routing_response (rsp, 7);
    ok (is_forward (h, 3) && msg_route_count (rsp) == 2,
        "at the destination: toward the rank on top, nothing popped");
    h = routing_response (rsp, 12);
    ok (is_forward (h, 3) && msg_route_count (rsp) == 2,
        "at a relay: the same, nothing popped");
    h = routing_response (rsp, 3);
    ok (h.action == ROUTING_CLIENT && msg_route_count (rsp) == 1
        && !strcmp (msg_route_first (rsp), "cli"),
        "at the origin: its rank popped, the client's id left on top");
    msg_destroy (&rsp);

    rsp = response (2);
    h = routing_response (rsp, 3);
    ok (h.action == ROUTING_CLIENT && msg_route_count (rsp) == 1,
        "every entry of this rank on top is popped");
    msg_destroy (&rsp);

    rsp = response (0);
    msg_route_pop (rsp, NULL, 0);
    msg_route_pop (rsp, NULL, 0);
    msg_route_push (rsp, "3");
    h = routing_response (rsp, 3);
    ok (h.action == ROUTING_LOCAL && msg_route_count (rsp) == 0,
        "a stack that runs out here: the broker's own request (local)");
    msg_destroy (&rsp);
}

static void test_reason (void)
{
    char buf[160];

    is (routing_unsent_reason (buf, sizeof (buf), EHOSTUNREACH, 9, 5),
        "overlay could not route to rank 9 (down, or restarting, as far "
        "as rank 5 knows): the request did not run",
        "unreachable: says the rank may be restarting, and it did not run");
    is (routing_unsent_reason (buf, sizeof (buf), ENOBUFS, 9, 5),
        "overlay could not route to rank 9 (rank 5): the request did not "
        "run", "another error: says it did not run");
    ok (strlen (routing_unsent_reason (buf, 16, EHOSTUNREACH, 9, 5)) == 15,
        "the text is cut to the buffer");
}

int main (void)
{
    plan (NO_PLAN);
    test_rank ();
    test_any ();
    test_upstream ();
    test_outbound ();
    test_response ();
    test_reason ();
    return done_testing ();
}
