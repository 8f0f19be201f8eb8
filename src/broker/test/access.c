/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test/access.c: credentials and roles of requests (access.h).
 *
 * The parser of libzmq's "Peer-Address" (the kernel's SO_PEERCRED of an
 * ipc connection) and the role rules: the owner may call anything, a
 * guest only the read-only methods, a request with no role nothing.
 * And the cap on requests from other brokers: the owner role they claim
 * stays only from broker.admin_ranks, or for the brokers' own methods.
 */
#include <errno.h>
#include <string.h>

#include "src/common/libtap/tap.h"
#include "src/broker/access.h"

static msg_t *request (const char *topic, uint32_t roles)
{
    msg_t *m = msg_request_create (topic, 0, NULL);
    if (m)
        msg_set_rolemask (m, roles);
    return m;
}

static void check_parse (void)
{
    uint32_t uid = 7, gid = 7;

    ok (access_parse_peer ("localhost:1000:100:4242", &uid, &gid) == 0
        && uid == 1000 && gid == 100, "uid and gid from UID:GID:PID");
    ok (access_parse_peer (":0:0:1", &uid, &gid) == 0 && uid == 0,
        "an empty address part is fine (root)");
    ok (access_parse_peer ("a:b:1000:100:4242", &uid, &gid) == 0
        && uid == 1000, "the last three fields count");
    errno = 0;
    ok (access_parse_peer ("127.0.0.1", &uid, &gid) < 0 && errno == EINVAL,
        "a TCP peer address carries no credentials: EINVAL");
    ok (access_parse_peer (NULL, &uid, &gid) < 0, "no metadata: EINVAL");
    ok (access_parse_peer ("x:-1:5:6", &uid, &gid) < 0, "negative uid refused");
    ok (access_parse_peer ("x:4294967295:5:6", &uid, &gid) < 0,
        "the unknown-user id is refused");
    ok (access_parse_peer ("x:12a:5:6", &uid, &gid) < 0, "junk refused");
    ok (access_parse_peer ("x:99999999999999999999:5:6", &uid, &gid) < 0,
        "overflow refused");
}

static void check_roles (void)
{
    struct access *a = access_create (1000);
    const char *owner_only[] = { "broker.shutdown", "overlay.disconnect",
                                 "overlay.contact", "event.pub",
                                 "broker.subscribe", "overlay.trace",
                                 "overlay.gather", "fault.kill" };
    const char *readable[] = { "broker.ping", "broker.info", "broker.hosts",
                               "overlay.ping", "overlay.status",
                               "overlay.status-all", "overlay.lookup" };
    char buf[64];
    msg_t *m;
    int good;

    good = 1;
    for (size_t i = 0; i < sizeof (owner_only) / sizeof (owner_only[0]); i++) {
        m = request (owner_only[i], MSG_ROLE_USER);
        if (!access_check (a, m))
            good = 0;
        msg_destroy (&m);
        m = request (owner_only[i], MSG_ROLE_OWNER);
        if (access_check (a, m))
            good = 0;
        msg_destroy (&m);
    }
    ok (good, "state-changing methods: the owner may, a guest may not");
    good = 1;
    for (size_t i = 0; i < sizeof (readable) / sizeof (readable[0]); i++) {
        m = request (readable[i], MSG_ROLE_USER);
        if (access_check (a, m))
            good = 0;
        msg_destroy (&m);
        m = request (readable[i], MSG_ROLE_NONE);
        if (!access_check (a, m))
            good = 0;
        msg_destroy (&m);
    }
    ok (good, "read-only methods: a guest may, a request with no role not");
    ok (!access_guest_topic ("broker.ping.x") && !access_guest_topic ("broker")
        && !access_guest_topic (NULL), "guest topics match exactly");
    ok (access_guest_topic ("testsvc.ping") && !access_guest_topic (".ping")
        && !access_guest_topic ("a.b.ping") && !access_guest_topic ("ping"),
        "the ping method of any service is a guest's");

    m = request ("broker.info", MSG_ROLE_USER);
    access_stamp_self (a, m);
    ok (msg_get_userid (m) == 1000 && msg_get_rolemask (m) == MSG_ROLE_OWNER,
        "the broker's own requests are the owner's");
    is (access_describe (m, buf, sizeof (buf)), "uid 1000 (owner)",
        "described in words");
    msg_set_userid (m, MSG_USERID_UNKNOWN);
    msg_set_rolemask (m, MSG_ROLE_NONE);
    is (access_describe (m, buf, sizeof (buf)), "unknown user (no role)",
        "an unknown user in words");
    msg_destroy (&m);
    access_destroy (&a);
    ok (a == NULL, "destroy clears the pointer");
}

/* A request that rank 'origin' sent into the overlay, as it arrives. */
static msg_t *remote (const char *topic, uint32_t roles, const char *origin)
{
    msg_t *m = request (topic, roles);
    if (m && origin) {
        msg_route_enable (m);
        msg_route_push (m, "client-uuid");
        msg_route_push (m, origin);
    }
    return m;
}

static void check_cap (void)
{
    struct access *a = access_create (1000);
    msg_t *m;

    m = remote ("broker.shutdown", MSG_ROLE_OWNER, "1");
    ok (access_cap (a, m, 1, false, 0) && msg_get_rolemask (m) == MSG_ROLE_USER
        && access_check (a, m) != NULL,
        "an owner shutdown from rank 1 becomes a guest's, and is refused");
    msg_destroy (&m);
    m = remote ("broker.shutdown", MSG_ROLE_OWNER, "0");
    ok (!access_cap (a, m, 0, false, 0) && access_check (a, m) == NULL,
        "from rank 0 (the default admin set) it keeps the owner role");
    msg_destroy (&m);
    m = remote ("broker.shutdown", MSG_ROLE_OWNER, "1");
    ok (access_cap (a, m, 0, false, 0) && access_check (a, m) != NULL,
        "claiming rank 0 as source with rank 1 on the route stack: guest");
    msg_destroy (&m);
    m = remote ("broker.shutdown", MSG_ROLE_OWNER, "0");
    ok (access_cap (a, m, 0, true, 0) && access_check (a, m) != NULL,
        "rank 0 as origin, but handed over by a peer other than rank 0 "
        "while rank 0's own link is up: a guest's");
    msg_destroy (&m);
    m = remote ("overlay.ready", MSG_ROLE_OWNER, "0");
    ok (!access_cap (a, m, 0, true, 0),
        "a broker-to-broker method still checks its caller itself");
    msg_destroy (&m);
    m = remote ("broker.shutdown", MSG_ROLE_OWNER, "00");
    ok (access_cap (a, m, 0, false, 0), "a route id \"00\" is not rank 0");
    msg_destroy (&m);
    m = remote ("overlay.ready", MSG_ROLE_OWNER, "5");
    ok (!access_cap (a, m, 5, false, 0) && access_check (a, m) == NULL,
        "a broker-to-broker method keeps its caller's owner role");
    msg_destroy (&m);
    m = remote ("broker.ping", MSG_ROLE_USER, "5");
    ok (!access_cap (a, m, 5, false, 0) && msg_get_rolemask (m) == MSG_ROLE_USER,
        "a guest stays a guest");
    msg_destroy (&m);
    m = remote ("broker.shutdown", MSG_ROLE_NONE, "0");
    ok (!access_cap (a, m, 0, false, 0) && access_check (a, m) != NULL,
        "no role is never raised");
    msg_destroy (&m);

    /* with signing keys (a PMI or Flux bootstrap): the origin's own
     * signature, wherever the request came through */
    m = remote ("broker.shutdown", MSG_ROLE_OWNER, "0");
    ok (!access_cap (a, m, 0, true, 1) && access_check (a, m) == NULL,
        "signed by rank 0: owner, even handed over by another peer");
    msg_destroy (&m);
    m = remote ("broker.shutdown", MSG_ROLE_OWNER, "0");
    ok (access_cap (a, m, 0, false, -1) && access_check (a, m) != NULL,
        "rank 0 has a key and the request is not signed by it: a guest's, "
        "even from rank 0's own link");
    msg_destroy (&m);
    m = remote ("broker.shutdown", MSG_ROLE_OWNER, "2");
    ok (access_cap (a, m, 2, false, 1) && access_check (a, m) != NULL,
        "signed by rank 2, which is no admin rank: a guest's");
    msg_destroy (&m);
    m = remote ("overlay.ready", MSG_ROLE_OWNER, "3");
    ok (!access_cap (a, m, 3, false, -1),
        "a peer method unsigned keeps the peer role (the method checks)");
    msg_destroy (&m);

    ok (access_signed_topic ("broker.shutdown")
        && access_signed_topic ("overlay.ready")
        && access_signed_topic ("overlay.moved")
        && !access_signed_topic ("event.pub")
        && !access_signed_topic ("broker.ping")
        && !access_signed_topic ("overlay.status"),
        "signed at the origin: what needs the owner role, and the peer "
        "methods that check it (ready, moved); not guest topics nor the "
        "other peer methods");

    ok (access_set_admins (a, "0-1,8") == 0, "admin ranks 0-1,8 are set");
    m = remote ("broker.shutdown", MSG_ROLE_OWNER, "8");
    ok (!access_cap (a, m, 8, false, 0), "rank 8 is now an admin rank");
    msg_destroy (&m);
    m = remote ("broker.shutdown", MSG_ROLE_OWNER, "2");
    ok (access_cap (a, m, 2, false, 0), "rank 2 is not");
    msg_destroy (&m);
    errno = 0;
    ok (access_set_admins (a, "0,x") < 0 && errno == EINVAL,
        "a bad set is EINVAL");
    ok (access_set_admins (a, "") == 0, "an empty set is allowed");
    m = remote ("broker.shutdown", MSG_ROLE_OWNER, "0");
    ok (access_cap (a, m, 0, false, 0), "then not even rank 0 is owner here");
    msg_destroy (&m);
    access_destroy (&a);
}

int main (void)
{
    plan (NO_PLAN);
    check_parse ();
    check_roles ();
    check_cap ();
    done_testing ();
}
