/* test/access.c: credentials and roles of requests (access.h).
 *
 * The parser of libzmq's "Peer-Address" (the kernel's SO_PEERCRED of an
 * ipc connection) and the role rules: the owner may call anything, a
 * guest only the read-only methods, a request with no role nothing.
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

int main (void)
{
    plan (NO_PLAN);
    check_parse ();
    check_roles ();
    done_testing ();
}
