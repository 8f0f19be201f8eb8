/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* access.c: credentials and roles of requests (see access.h).
 *
 * Two sources of a role: the kernel's credentials of a local connection
 * (access_stamp), and, for a request that crossed the overlay, this
 * broker's policy for the broker it came from (access_cap): the rolemask
 * another broker wrote is only a claim, granted up to what that broker
 * may be given here. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/common/libutil/idset.h"
#include "access.h"
#include "src/common/libmsg/rolecap.h"

struct access {
    uint32_t owner;
    idset_t *admins;        /* broker.admin_ranks: owner may come from these */
    /* the last credentials read, and what they gave: a client sends many
     * requests on one connection, each carrying the same text */
    char last_peer[256];
    uint32_t last_uid;
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

/* What the broker's own services ask of another broker as part of the
 * protocol, beside the core's methods (rolecap.h): broker.hosts-register
 * believes a rank only about itself, event.pub numbers an event
 * published as its origin's.  Each checks its caller itself. */
static const char *peer_topics[] = {
    "broker.hosts-register",
    "event.pub",
};

struct access *access_create (uint32_t owner)
{
    struct access *a = calloc (1, sizeof (*a));

    if (!a)
        return NULL;
    a->owner = owner;
    if (!(a->admins = idset_create (0)) || idset_set (a->admins, 0) < 0) {
        access_destroy (&a);
        return NULL;
    }
    return a;
}

int access_set_admins (struct access *a, const char *ranks)
{
    char err[128];
    idset_t *set;

    if (!a || !ranks) {
        errno = EINVAL;
        return -1;
    }
    if (!(set = idset_decode (ranks, err, sizeof (err))))
        return -1;
    idset_destroy (&a->admins);
    a->admins = set;
    return 0;
}

void access_destroy (struct access **ap)
{
    if (ap && *ap) {
        idset_destroy (&(*ap)->admins);
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
    const char *peer = zmq_msg_gets (frame, "Peer-Address");
    uint32_t uid, gid;

    if (peer && a->last_peer[0] && !strcmp (peer, a->last_peer)) {
        msg_set_userid (msg, a->last_uid);
        msg_set_rolemask (msg, role_of (a, a->last_uid));
        return 0;
    }
    if (access_parse_peer (peer, &uid, &gid) < 0) {
        msg_set_userid (msg, MSG_USERID_UNKNOWN);
        msg_set_rolemask (msg, MSG_ROLE_NONE);
        errno = EPERM;
        return -1;
    }
    if (strlen (peer) < sizeof (a->last_peer)) {
        strcpy (a->last_peer, peer);
        a->last_uid = uid;
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

static bool topic_in (const char *topic, const char *const *list, size_t n)
{
    if (!topic)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!strcmp (topic, list[i]))
            return true;
    return false;
}

/* "SERVICE.ping": the liveness probe of a service, which `bgn ping
 * SERVICE` sends to whichever broker has it; by convention it answers
 * and changes nothing. */
static bool service_ping (const char *topic)
{
    const char *dot = topic ? strchr (topic, '.') : NULL;

    return dot && dot > topic && !strcmp (dot, ".ping");
}

bool access_guest_topic (const char *topic)
{
    return topic_in (topic, guest_topics,
                     sizeof (guest_topics) / sizeof (guest_topics[0]))
           || service_ping (topic);
}

bool access_peer_topic (const char *topic)
{
    return rolecap_core_method (rolecap_method (topic, "overlay"))
           || topic_in (topic, peer_topics,
                        sizeof (peer_topics) / sizeof (peer_topics[0]));
}

bool access_signed_topic (const char *topic)
{
    if (access_guest_topic (topic))
        return false;
    return !access_peer_topic (topic)
           || rolecap_core_signed (rolecap_method (topic, "overlay"));
}

bool access_cap (const struct access *a, msg_t *req, uint32_t origin,
                 bool unverified, int signed_by_origin)
{
    struct rolecap_origin o = { .rank = origin,
                                .signed_by_origin = signed_by_origin,
                                .unverified = unverified,
                                .admin = idset_test (a->admins, origin) };

    return rolecap_apply (req, &o, access_peer_topic (msg_get_topic (req)));
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
