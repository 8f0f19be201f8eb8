/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test/rolecap.c: TAP unit tests for the role a request keeps across the
 * overlay (rolecap.h).
 *
 * The owner role stays for an admin rank's own word (signed, or from a
 * keyless rank over its own link) and for a protocol method from any
 * rank, each only when the route stack names the sender; everything else
 * becomes a guest's, and a request with no owner role is left alone.
 * The core's method lists and the topic split are checked too.
 */
#include <string.h>

#include "src/common/libtap/tap.h"
#include "src/common/libmsg/rolecap.h"

/* An owner's request on 'topic' whose route stack's top is 'top' (none
 * if NULL). */
static msg_t *owner_request (const char *topic, const char *top)
{
    msg_t *req = msg_request_create (topic, 0, NULL);

    if (!req)
        bail_out ("msg_request_create failed");
    msg_set_rolemask (req, MSG_ROLE_OWNER);
    msg_route_enable (req);
    if (top && msg_route_push (req, top) < 0)
        bail_out ("msg_route_push failed");
    return req;
}

/* The role the request keeps after the rule. */
static uint32_t role_after (const char *top, struct rolecap_origin o,
                            bool peer_method, bool *capped)
{
    msg_t *req = owner_request ("svc.method", top);
    uint32_t roles;

    *capped = rolecap_apply (req, &o, peer_method);
    roles = msg_get_rolemask (req);
    msg_destroy (&req);
    return roles;
}

static void test_admin (void)
{
    struct rolecap_origin signed_admin = { .rank = 0, .signed_by_origin = 1,
                                           .admin = true };
    struct rolecap_origin keyless_direct = { .rank = 0, .admin = true };
    struct rolecap_origin keyless_relayed = { .rank = 0, .admin = true,
                                              .unverified = true };
    struct rolecap_origin bad_sig = { .rank = 0, .signed_by_origin = -1,
                                      .admin = true };
    struct rolecap_origin not_admin = { .rank = 3, .signed_by_origin = 1 };
    bool capped;

    ok (role_after ("0", signed_admin, false, &capped) == MSG_ROLE_OWNER
        && !capped, "an admin rank's signed request keeps the owner role");
    ok (role_after ("0", keyless_direct, false, &capped) == MSG_ROLE_OWNER
        && !capped, "a keyless admin rank's request over its own link "
        "keeps it");
    ok (role_after ("0", keyless_relayed, false, &capped) == MSG_ROLE_USER
        && capped, "a keyless admin rank's request relayed by another "
        "peer becomes a guest's");
    ok (role_after ("0", bad_sig, false, &capped) == MSG_ROLE_USER && capped,
        "an admin rank's request without its valid signature becomes a "
        "guest's");
    ok (role_after ("3", not_admin, false, &capped) == MSG_ROLE_USER
        && capped, "a signed request of a rank that is not an admin "
        "becomes a guest's");
    ok (role_after ("7", signed_admin, false, &capped) == MSG_ROLE_USER
        && capped, "a route stack naming another rank than the sender "
        "loses the role");
    ok (role_after ("00", signed_admin, false, &capped) == MSG_ROLE_USER
        && capped, "a non-canonical rank on the route stack names someone "
        "else");
    ok (role_after (NULL, signed_admin, false, &capped) == MSG_ROLE_USER
        && capped, "an empty route stack loses the role");
}

static void test_peer_method (void)
{
    struct rolecap_origin any = { .rank = 4, .signed_by_origin = -1 };
    bool capped;

    ok (role_after ("4", any, true, &capped) == MSG_ROLE_OWNER && !capped,
        "a protocol method keeps any broker's owner role");
    ok (role_after ("5", any, true, &capped) == MSG_ROLE_USER && capped,
        "... only when the route stack names that broker");
}

static void test_no_owner (void)
{
    struct rolecap_origin o = { .rank = 2 };
    msg_t *req = owner_request ("svc.method", "2");

    msg_set_rolemask (req, MSG_ROLE_USER);
    ok (!rolecap_apply (req, &o, false)
        && msg_get_rolemask (req) == MSG_ROLE_USER,
        "a guest's request is left as it is and not counted as capped");
    msg_destroy (&req);
}

static void test_topics (void)
{
    const char *m = rolecap_method ("overlay.ready", "overlay");

    ok (m && !strcmp (m, "ready"), "rolecap_method splits SERVICE.method");
    ok (rolecap_method ("overlayx.ready", "overlay") == NULL
        && rolecap_method ("overlay", "overlay") == NULL
        && rolecap_method (NULL, "overlay") == NULL
        && rolecap_method ("bgn.ready", "overlay") == NULL,
        "... and refuses another service, a bare name and NULL");
    ok (rolecap_core_method ("ready") && rolecap_core_method ("contact")
        && rolecap_core_method ("gather") && rolecap_core_method ("moved"),
        "the core's peer methods are ready, contact, gather and moved");
    ok (!rolecap_core_method ("status") && !rolecap_core_method (NULL),
        "... and not status or NULL");
    ok (rolecap_core_signed ("ready") && rolecap_core_signed ("moved")
        && !rolecap_core_signed ("contact") && !rolecap_core_signed ("gather"),
        "ready and moved read their origin's signature, contact and gather "
        "do not");
}

int main (void)
{
    plan (NO_PLAN);
    test_admin ();
    test_peer_method ();
    test_no_owner ();
    test_topics ();
    return done_testing ();
}
