/* access.c: credentials and roles of requests (see access.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "access.h"

struct access {
    uint32_t owner;
};

/* What a guest may call: read-only methods, nothing that changes state
 * or reveals more than the overlay's shape.  Exact topics, not prefixes. */
static const char *guest_topics[] = {
    "broker.ping",
    "broker.info",
    "broker.hosts",          /* rank <-> host lookup */
    "overlay.ping",
    "overlay.status",
    "overlay.status-all",
    "overlay.lookup",
};

struct access *access_create (uint32_t owner)
{
    struct access *a = calloc (1, sizeof (*a));

    if (a)
        a->owner = owner;
    return a;
}

void access_destroy (struct access **ap)
{
    if (ap && *ap) {
        free (*ap);
        *ap = NULL;
    }
}

int access_parse_peer (const char *peer, uint32_t *uid, uint32_t *gid)
{
    const char *f[3] = { NULL, NULL, NULL };
    unsigned long long v[2];
    const char *p;
    int n = 0;

    /* The last three colon-separated fields are UID:GID:PID. */
    if (!peer)
        goto inval;
    for (p = peer + strlen (peer); p > peer && n < 3; p--)
        if (p[-1] == ':')
            f[n++] = p;
    if (n < 3)
        goto inval;
    /* f[0]: pid, f[1]: gid, f[2]: uid */
    for (int i = 0; i < 2; i++) {
        const char *s = f[2 - i];
        char *end;
        if (*s < '0' || *s > '9')
            goto inval;
        errno = 0;
        v[i] = strtoull (s, &end, 10);
        if (errno || *end != ':' || v[i] >= MSG_USERID_UNKNOWN)
            goto inval;
    }
    *uid = (uint32_t)v[0];
    *gid = (uint32_t)v[1];
    return 0;
inval:
    errno = EINVAL;
    return -1;
}

static uint32_t role_of (const struct access *a, uint32_t uid)
{
    return uid == a->owner || uid == 0 ? MSG_ROLE_OWNER : MSG_ROLE_USER;
}

int access_stamp (struct access *a, msg_t *msg, zmq_msg_t *frame)
{
    uint32_t uid, gid;

    if (access_parse_peer (zmq_msg_gets (frame, "Peer-Address"), &uid,
                           &gid) < 0) {
        msg_set_userid (msg, MSG_USERID_UNKNOWN);
        msg_set_rolemask (msg, MSG_ROLE_NONE);
        errno = EPERM;
        return -1;
    }
    msg_set_userid (msg, uid);
    msg_set_rolemask (msg, role_of (a, uid));
    return 0;
}

void access_stamp_self (struct access *a, msg_t *msg)
{
    msg_set_userid (msg, a->owner);
    msg_set_rolemask (msg, MSG_ROLE_OWNER);
}

bool access_guest_topic (const char *topic)
{
    if (!topic)
        return false;
    for (size_t i = 0; i < sizeof (guest_topics) / sizeof (guest_topics[0]);
         i++)
        if (!strcmp (topic, guest_topics[i]))
            return true;
    return false;
}

const char *access_check (const struct access *a, const msg_t *req)
{
    uint32_t roles = msg_get_rolemask (req);

    (void)a;
    if (roles & MSG_ROLE_OWNER)
        return NULL;
    if ((roles & MSG_ROLE_USER) && access_guest_topic (msg_get_topic (req)))
        return NULL;
    return roles & MSG_ROLE_USER ? "a guest may only read status, ping "
                                   "and look up"
                                 : "the request carries no role";
}

const char *access_describe (const msg_t *msg, char *buf, size_t len)
{
    uint32_t uid = msg_get_userid (msg);
    uint32_t roles = msg_get_rolemask (msg);
    const char *role = roles & MSG_ROLE_OWNER ? "owner"
                       : roles & MSG_ROLE_USER ? "guest" : "no role";

    if (uid == MSG_USERID_UNKNOWN)
        snprintf (buf, len, "unknown user (%s)", role);
    else
        snprintf (buf, len, "uid %u (%s)", (unsigned)uid, role);
    return buf;
}
