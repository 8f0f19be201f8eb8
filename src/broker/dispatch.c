/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* dispatch.c: the broker's message routing and its local connector.
 *
 * Every message a client, a service or the overlay hands over goes
 * through broker_route(), which decides whether it is handled here (a
 * service), goes to a local client, or leaves through the overlay.  The
 * local connector is the ROUTER socket clients talk to.
 *
 * The routing rules themselves (which requests are served here, which go
 * toward a rank or toward rank 0, how a response finds its next hop from
 * its route stack) are libmsg's routing.h, which the protocol simulator
 * follows too; here they meet the services, the clients and the overlay.
 * A request from a local client gets the client's id pushed when it
 * arrives.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <czmq.h>

#include "src/common/libutil/monotime.h"
#include "src/common/libutil/ratelimit.h"
#include "src/common/libmsg/routing.h"
#include "src/common/libzmqutil/multipart.h"
#include "access.h"
#include "broker.h"

/* ---- local connector ------------------------------------------------- */

/* A client's routing id goes on the route stack, where a decimal string
 * names a broker rank and frames are C strings.  An id that is not a
 * printable, non-numeric string (libzmq's default id is binary; a client
 * may choose "0") is carried as '~' and its bytes in hex, and turned
 * back into the bytes when the answer is sent, so every client gets its
 * answer.  An id that starts with '~' is always written that way, so the
 * two forms cannot be confused. */
#define CLIENT_HEX_MAX ((MSG_MAX_ROUTEID - 1) / 2)

static bool client_id_plain (const unsigned char *id, size_t len)
{
    bool digits = true;

    if (id[0] == '~')
        return false;
    for (size_t i = 0; i < len; i++) {
        if (id[i] < 0x21 || id[i] > 0x7e)
            return false;
        if (id[i] < '0' || id[i] > '9')
            digits = false;
    }
    return !digits;
}

/* The route-stack form of a routing id, in out (MSG_MAX_ROUTEID + 1).
 * -1 if it does not fit. */
static int client_id_encode (const unsigned char *id, size_t len, char *out)
{
    if (len == 0 || len > MSG_MAX_ROUTEID)
        return -1;
    if (client_id_plain (id, len)) {
        memcpy (out, id, len);
        out[len] = '\0';
        return 0;
    }
    if (len > CLIENT_HEX_MAX)
        return -1;
    out[0] = '~';
    for (size_t i = 0; i < len; i++)
        snprintf (out + 1 + 2 * i, 3, "%02x", id[i]);
    return 0;
}

static void subscriptions_drop (struct bgn_broker *b, const char *client)
{
    zhashx_delete (b->subscriptions, client);
}

/* A message to a local client was not sent (errno says why): counted;
 * a client that went away (EHOSTUNREACH) loses its subscriptions; one
 * that falls behind (its queue at broker.client_queue_bytes) is logged,
 * the logger limiting the rate. */
void dispatch_send_failed (struct bgn_broker *b, const char *client,
                           const char *what)
{
    int errnum = errno;

    if (errnum == EHOSTUNREACH) {
        subscriptions_drop (b, client);
        clientq_forget (b->clientq, client);
    }
    b->client_send_drops++;
    if (errnum == ENOBUFS)
        logger_log (b->log, LOG_WARNING, "dropped %s for client %.8s: it "
                    "falls behind (its queue is at broker.client_queue_bytes, "
                    "%llu dropped so far)", what, client,
                    (unsigned long long)clientq_drops (b->clientq));
    else
        logger_log (b->log, LOG_DEBUG, "dropped %s for client %.8s: %s",
                    what, client, zmq_strerror (errnum));
    errno = errnum;
}

/* Send 'msg' to local client 'client'.  Drops (and counts) on failure. */
static int local_send (struct bgn_broker *b, const char *client, msg_t *msg)
{
    if (clientq_send_msg (b->clientq, client, msg) < 0) {
        dispatch_send_failed (b, client, msg_typestr (msg_get_type (msg)));
        return -1;
    }
    b->client_tx++;
    return 0;
}

static void local_malformed (struct bgn_broker *b, const char *client,
                             const char *reason)
{
    char more[64];
    unsigned long suppressed;

    b->client_drops++;
    /* Rate-limited, so a broken client cannot flood the log. */
    if (ratelimit_check (b->client_rl, monotime_now (), &suppressed))
        logger_log (b->log, LOG_WARNING,
                    "dropped malformed message from client %.8s: %s%s",
                    client, reason,
                    ratelimit_suffix (more, sizeof (more), suppressed));
}

/* A routing id too long for the route stack: the client is told so, in
 * one error message sent straight back to the id (no request is made of
 * it), and the broker logs it (rate-limited). */
static void client_id_refused (struct bgn_broker *b, zmq_msg_t *frames,
                               int n, size_t idlen)
{
    static const char why[] = "routing id too long: at most 64 printable "
                              "bytes, or 31 of any kind";
    char reason[128] = "";
    msg_t *req = zmqutil_decode (frames + 1, n - 1, reason, sizeof (reason));
    msg_t *err = req && msg_get_type (req) == MSGTYPE_REQUEST
                     ? msg_error_response_create (req, EINVAL, why)
                     : NULL;

    local_malformed (b, "?", why);
    if (err)
        zmqutil_send_msg_to (b->local, zmq_msg_data (&frames[0]), idlen, err,
                             ZMQ_DONTWAIT);
    msg_destroy (&err);
    msg_destroy (&req);
}

static void local_handle_one (struct bgn_broker *b, zmq_msg_t *frames, int n)
{
    char client[MSG_MAX_ROUTEID + 1];
    char reason[128] = "";
    size_t idlen = zmq_msg_size (&frames[0]);
    msg_t *msg;
    struct bgn_msg_info info = { 0 };

    if (client_id_encode (zmq_msg_data (&frames[0]), idlen, client) < 0) {
        client_id_refused (b, frames, n, idlen);
        return;
    }
    if (!(msg = zmqutil_decode (frames + 1, n - 1, reason, sizeof (reason)))) {
        local_malformed (b, client, reason);
        return;
    }
    b->client_rx++;
    if (msg_get_type (msg) != MSGTYPE_REQUEST) {
        /* Clients ask; only brokers answer or publish. */
        local_malformed (b, client, "clients may only send requests");
        msg_destroy (&msg);
        return;
    }
    /* Who sent it is the kernel's word, never the message's. */
    if (access_stamp (b->access, msg, &frames[n - 1]) < 0) {
        local_malformed (b, client, "connection without credentials");
        msg_destroy (&msg);
        return;
    }
    if (msg_get_flags (msg) & MSGFLAG_ROUTE) {
        /* Clients do not route; a stack from one is forged or broken. */
        local_malformed (b, client, "client message carries a route stack");
        msg_destroy (&msg);
        return;
    }
    msg_route_enable (msg);
    if (msg_route_push (msg, client) < 0) {
        local_malformed (b, client, "bad client id");
        msg_destroy (&msg);
        return;
    }
    info.source = b->rank;
    broker_route (b, msg, &info);
}

static int local_readable (zloop_t *loop, zmq_pollitem_t *item, void *arg)
{
    struct bgn_broker *b = arg;
    zmq_msg_t frames[ZMQUTIL_MAX_PARTS];
    int n;

    /* Drain what is ready, but yield to the reactor now and then so one
     * busy client cannot starve the overlay. */
    for (int budget = 0; budget < 256; budget++) {
        n = zmqutil_recv (b->local, frames, ZMQUTIL_MAX_PARTS);
        if (n == 0)
            break;
        if (n == -2) {
            local_malformed (b, "?", "too many frames");
            continue;
        }
        if (n < 0) {
            if (errno == EINTR)
                continue;
            logger_log (b->log, LOG_ERR, "local connector: %s",
                        strerror (errno));
            break;
        }
        if (n >= 2)
            local_handle_one (b, frames, n);
        else
            local_malformed (b, "?", "empty message");
        zmqutil_close (frames, n);
    }
    return 0;
}

/* ---- routing ---------------------------------------------------------- */

/* Hand msg to the overlay toward rank dest.  On failure the message is
 * still ours (the overlay's send leaves it with the caller). */
static int to_overlay (struct bgn_broker *b, msg_t **msg, uint32_t dest,
                       const struct bgn_msg_info *info)
{
    if (!b->ovl) {
        errno = EHOSTUNREACH;
        return -1;
    }
    return b->ovl->send (b->ovl_state, msg, dest, info);
}

/* Fail a request with errnum, and free it. */
static int request_fail (struct bgn_broker *b, msg_t *req, int errnum,
                         const char *errstr)
{
    broker_respond_error (b, req, errnum, errstr);
    msg_destroy (&req);
    return -1;
}

/* A request its sender's role does not allow: EPERM, and a warning
 * (rate-limited: a guest looping on a refused call must not flood). */
static int request_deny (struct bgn_broker *b, msg_t *req,
                         const struct bgn_msg_info *info, const char *why)
{
    char who[64], via[48] = "", more[64];
    unsigned long suppressed;

    b->access_denied++;
    if (info && info->from_overlay)
        snprintf (via, sizeof (via), " of rank %u", (unsigned)info->source);
    if (ratelimit_check (b->deny_rl, monotime_now (), &suppressed))
        logger_log (b->log, LOG_WARNING, "refused %s from %s%s: %s%s",
                    msg_get_topic (req), access_describe (req, who,
                                                          sizeof (who)),
                    via, why,
                    ratelimit_suffix (more, sizeof (more), suppressed));
    return request_fail (b, req, EPERM, why);
}

/* A message meets its service here: requests are checked against their
 * sender's role first (responses are answers to our own requests).  A
 * request from another broker has its role capped by this broker's
 * policy for that origin before the check: the role it carries is only
 * what the origin claims (access.h). */
static int call_service (struct bgn_broker *b, msg_t *msg,
                         const struct bgn_msg_info *info,
                         bgn_service_f fn, void *arg)
{
    const char *why;
    bool capped = false;

    if (msg_get_type (msg) == MSGTYPE_REQUEST && info && info->from_overlay
        && (capped = access_cap (b->access, msg, info->source,
                                 info->source_unverified,
                                 info->source_signed)))
        b->remote_role_capped++;
    if (msg_get_type (msg) == MSGTYPE_REQUEST
        && (why = access_check (b->access, msg)))
        return request_deny (b, msg, info,
                             capped ? info->source_signed < 0
                                          ? "the owner role crosses the "
                                            "overlay only from "
                                            "broker.admin_ranks, signed by "
                                            "its origin"
                                          : "the owner role crosses the "
                                            "overlay only from "
                                            "broker.admin_ranks"
                                    : why);
    fn (b, msg, info, arg);
    msg_destroy (&msg);
    return 0;
}

/* Send a request out through the overlay toward dest (routing.h: a
 * request that starts here gets this broker's rank pushed once; one that
 * arrived over the overlay goes on with its delivery info). */
static int request_forward (struct bgn_broker *b, msg_t *msg,
                            const struct bgn_msg_info *info, uint32_t dest)
{
    char why[160];
    int errnum;

    if (routing_outbound (msg, b->rank, info->from_overlay) < 0)
        return request_fail (b, msg, errno, "route stack is full");
    /* a request that asks for more than a peer's role is signed here,
     * at its origin, so that whoever relays it cannot write one */
    struct bgn_msg_info out = *info;
    if (!info->from_overlay)
        out.sign = (msg_get_rolemask (msg) & MSG_ROLE_OWNER)
                   && access_signed_topic (msg_get_topic (msg));
    if (to_overlay (b, &msg, dest, &out) == 0)
        return 0;
    /* Not sent: answer it here (our own rank off the stack first). */
    errnum = errno;
    routing_outbound_undo (msg, info->from_overlay);
    return request_fail (b, msg, errnum,
                         routing_unsent_reason (why, sizeof (why), errnum,
                                                dest, b->rank));
}

static int route_request (struct bgn_broker *b, msg_t *msg,
                          const struct bgn_msg_info *info)
{
    struct routing_self self = { .rank = b->rank, .size = b->size,
                                 .overlay = b->ovl != NULL };
    bgn_service_f fn;
    void *arg;
    int have = service_lookup (b->services, msg_get_topic (msg), &fn, &arg) == 0;
    struct routing_hop hop = routing_request (&self, msg, have);

    switch (hop.action) {
    case ROUTING_LOCAL:
        return call_service (b, msg, info, fn, arg);
    case ROUTING_FORWARD:
        return request_forward (b, msg, info, hop.dest);
    default:
        return request_fail (b, msg, hop.errnum, hop.errstr);
    }
}

static int route_response (struct bgn_broker *b, msg_t *msg,
                           const struct bgn_msg_info *info)
{
    struct routing_hop hop = routing_response (msg, b->rank);
    char client[MSG_MAX_ROUTEID + 1];
    bgn_service_f fn;
    void *arg;

    switch (hop.action) {
    case ROUTING_CLIENT:
        msg_route_pop (msg, client, sizeof (client));
        local_send (b, client, msg);
        msg_destroy (&msg);
        return 0;
    case ROUTING_FORWARD:
        if (to_overlay (b, &msg, hop.dest, NULL) < 0) {
            b->route_drops++;
            logger_log (b->log, LOG_DEBUG,
                        "response %s to rank %u dropped: %s",
                        msg_get_topic (msg) ?: "", (unsigned)hop.dest,
                        strerror (errno));
            msg_destroy (&msg);
            return -1;
        }
        return 0;
    default:
        break;
    }
    /* The stack ran out here: the request came from this broker itself
     * (a module or built-in), so its service gets the response. */
    if (service_lookup (b->services, msg_get_topic (msg), &fn, &arg) == 0)
        return call_service (b, msg, info, fn, arg);
    b->route_drops++;
    msg_destroy (&msg);
    return -1;
}

int broker_route (struct bgn_broker *b, msg_t *msg,
                  const struct bgn_msg_info *info)
{
    switch (msg_get_type (msg)) {
    case MSGTYPE_REQUEST:
        return route_request (b, msg, info);
    case MSGTYPE_RESPONSE:
        return route_response (b, msg, info);
    case MSGTYPE_EVENT:
        broker_deliver_event (b, msg);
        msg_destroy (&msg);
        return 0;
    default:
        b->route_drops++;
        msg_destroy (&msg);
        return -1;
    }
}

/* Route a response this broker made (NULL: making it failed). */
static int respond_with (struct bgn_broker *b, msg_t *rsp)
{
    struct bgn_msg_info info = { .source = b->rank };

    if (!rsp)
        return -1;
    return route_response (b, rsp, &info);
}

int broker_respond (struct bgn_broker *b, const msg_t *req,
                    const char *payload)
{
    if (msg_get_flags (req) & MSGFLAG_NORESPONSE)
        return 0;
    return respond_with (b, msg_response_create (req, payload));
}

int broker_respond_built (struct bgn_broker *b, const msg_t *req,
                          const char *payload, size_t len)
{
    msg_t *rsp;

    if (msg_get_flags (req) & MSGFLAG_NORESPONSE)
        return 0;
    if ((rsp = msg_response_create (req, NULL))
        && msg_set_json_trusted (rsp, payload, len) < 0)
        msg_destroy (&rsp);
    return respond_with (b, rsp);
}

int broker_respond_error (struct bgn_broker *b, const msg_t *req, int errnum,
                          const char *errstr)
{
    if (msg_get_flags (req) & MSGFLAG_NORESPONSE)
        return 0;
    return respond_with (b, msg_error_response_create (req, errnum ? errnum
                                                                   : EINVAL,
                                                       errstr));
}

/* Deliver an event to every local client subscribed to a prefix of it. */
void broker_deliver_event (struct bgn_broker *b, const msg_t *event)
{
    const char *topic = msg_get_topic (event);
    zlistx_t *subs;
    zlistx_t *targets = zlistx_new ();

    if (!topic || !targets) {
        zlistx_destroy (&targets);
        return;
    }
    /* Collect first: local_send may drop a client from the hash.
     * "event.lost" (a gap no peer could fill) goes to every subscriber:
     * nobody may miss events silently. */
    int to_all = !strcmp (topic, "event.lost");
    for (subs = zhashx_first (b->subscriptions); subs;
         subs = zhashx_next (b->subscriptions)) {
        for (const char *p = zlistx_first (subs); p; p = zlistx_next (subs)) {
            if (to_all || !strncmp (topic, p, strlen (p))) {
                zlistx_add_end (targets,
                                (void *)zhashx_cursor (b->subscriptions));
                break;
            }
        }
    }
    for (const char *c = zlistx_first (targets); c; c = zlistx_next (targets)) {
        char client[MSG_MAX_ROUTEID + 1];
        msg_t *copy = msg_copy (event);
        snprintf (client, sizeof (client), "%s", c);
        if (copy) {
            msg_route_disable (copy);
            uint32_t seq = 0;
            msg_get_seq (copy, &seq);
            if (broker_tell_lost (b, client) < 0
                || (local_send (b, client, copy) < 0 && errno == ENOBUFS))
                clientq_note_lost (b->clientq, client, seq, seq);
            msg_destroy (&copy);
        }
    }
    zlistx_destroy (&targets);
}

int dispatch_setup_local (struct bgn_broker *b)
{
    int one = 1;
    zmq_pollitem_t item = { 0 };

    if (!(b->local = zmq_socket (zsys_init (), ZMQ_ROUTER)))
        return -1;
    zmq_setsockopt (b->local, ZMQ_ROUTER_MANDATORY, &one, sizeof (one));
    /* Linger briefly so a final response (broker.shutdown) gets out. */
    int linger = 1000;
    zmq_setsockopt (b->local, ZMQ_LINGER, &linger, sizeof (linger));
    int64_t maxmsg = ZMQUTIL_MAX_MSG_SIZE;
    zmq_setsockopt (b->local, ZMQ_MAXMSGSIZE, &maxmsg, sizeof (maxmsg));
    if (!(b->clientq = clientq_create (b->local,
                                       (size_t)b->client_queue_bytes)))
        return -1;
    unlink (b->local_path);
    if (zmq_bind (b->local, b->local_uri) < 0) {
        logger_log (b->log, LOG_ERR, "bind %s: %s", b->local_uri,
                    zmq_strerror (errno));
        return -1;
    }
    /* Owner only; with broker.guest_group, that group too (as guests:
     * the role comes from the kernel's credentials, access.h). */
    if (b->guest_gid >= 0) {
        if (chown (b->local_path, (uid_t)-1, (gid_t)b->guest_gid) < 0
            || chmod (b->local_path, 0660) < 0) {
            logger_log (b->log, LOG_ERR, "%s: %s", b->local_path,
                        strerror (errno));
            return -1;
        }
    }
    else
        chmod (b->local_path, 0600);
    item.socket = b->local;
    item.events = ZMQ_POLLIN;
    return zloop_poller (b->loop, &item, local_readable, b);
}

