/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* fluxroute.c: the Flux host's routing, its requests into Flux, and its
 * Flux clients (see fluxhost_int.h for the parts).
 *
 * The rules are bgn-broker's: a request goes by its nodeid (this rank:
 * the overlay's own service, a host method, or else into the Flux
 * broker; another rank: out over the BGN with this rank pushed once), a
 * response by its route stack (a rank: over the BGN; a Flux client's
 * token: to that client).
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include "fluxhost_int.h"
#include "src/common/libmsg/rolecap.h"
#include "src/common/libmsg/routing.h"

/* ---- routing ------------------------------------------------------------ */

static int to_flux (struct bgn_broker *b, msg_t *req,
                    const struct bgn_msg_info *info);
static int host_method (struct bgn_broker *b, msg_t *req,
                        const struct bgn_msg_info *info);

int fh_respond (bgn_broker_t *b, const msg_t *req, const char *payload)
{
    msg_t *rsp;

    if (msg_get_flags (req) & MSGFLAG_NORESPONSE)
        return 0;
    if (!(rsp = msg_response_create (req, payload)))
        return -1;
    return fh_route_response (b, rsp);
}

int fh_respond_error (bgn_broker_t *b, const msg_t *req, int errnum,
                              const char *errstr)
{
    msg_t *rsp;

    if (msg_get_flags (req) & MSGFLAG_NORESPONSE)
        return 0;
    if (!(rsp = msg_error_response_create (req, errnum ? errnum : EINVAL,
                                           errstr)))
        return -1;
    return fh_route_response (b, rsp);
}

int fh_request_fail (struct bgn_broker *b, msg_t *req, int errnum,
                         const char *why)
{
    fh_respond_error (b, req, errnum, why);
    msg_destroy (&req);
    return -1;
}

static bool peer_method (const char *topic);

/* Does the receiver look at the origin's signature of this request?  Not
 * for the peer methods, but those of the core that read it (rolecap.h). */
static bool signed_topic (const char *topic)
{
    return !peer_method (topic)
           || rolecap_core_signed (rolecap_method (topic, SERVICE));
}

/* Out over the BGN toward dest; a request that starts here carries this
 * broker's rank on its route stack, for the answer. */
int fh_request_out (struct bgn_broker *b, msg_t *msg,
                        const struct bgn_msg_info *info, uint32_t dest)
{
    int errnum;

    if (!b->ovl || b->size == 1)
        return fh_request_fail (b, msg, EHOSTUNREACH, "no overlay");
    if (routing_outbound (msg, b->rank, info->from_overlay) < 0)
        return fh_request_fail (b, msg, errno, "route stack is full");
    /* a request with the owner role is signed here, at its origin, so
     * that whoever relays it cannot write one (the core's ovsign.h):
     * all but the peer methods that do not look at it */
    struct bgn_msg_info out = *info;
    if (!info->from_overlay)
        out.sign = (msg_get_rolemask (msg) & MSG_ROLE_OWNER)
                   && signed_topic (msg_get_topic (msg));
    if (b->ovl->send (b->ovl_state, &msg, dest, &out) == 0)
        return 0;
    errnum = errno;
    routing_outbound_undo (msg, info->from_overlay);
    return fh_request_fail (b, msg, errnum, "the BGN could not route it");
}

/* What one broker asks of another's as part of the protocol: the core's
 * methods (rolecap.h) and the host's own (event-pub numbers an event as
 * its origin's; exit checks the TBON itself; flux-event carries an event
 * rank 0 signed).  Each checks its caller by its own rule, so these keep
 * the owner role of any broker. */
static bool peer_method (const char *topic)
{
    static const char *const methods[] = { "event-pub", "exit",
                                            "flux-event" };
    const char *m = rolecap_method (topic, SERVICE);

    if (!m)
        return false;
    if (rolecap_core_method (m))
        return true;
    for (size_t i = 0; i < sizeof (methods) / sizeof (methods[0]); i++)
        if (!strcmp (m, methods[i]))
            return true;
    return false;
}

/* A request from another broker carries the role its sender wrote: a
 * claim, granted by the rule every host applies (rolecap.h), with
 * bgn.admin_ranks as the admin ranks.  Booted from a [bootstrap] table
 * with one shared certificate, no rank but 0 has a signing key anyone
 * knows (nothing is exchanged) and whoever holds the certificate can
 * link as any rank: a doubtful path then proves nothing either way, and
 * the owner role is kept from admin_ranks as Flux's TBON keeps it from
 * every broker that holds the certificate. */
static void cap_role (struct bgn_broker *b, msg_t *req,
                      const struct bgn_msg_info *info)
{
    struct rolecap_origin o = {
        .rank = info->source,
        .signed_by_origin = info->source_signed,
        .unverified = info->source_unverified && !b->tab,
        .admin = idset_test (b->admins, info->source),
    };
    char more[64];
    unsigned long suppressed;

    if (!info->from_overlay
        || !rolecap_apply (req, &o, peer_method (msg_get_topic (req))))
        return;
    b->role_capped++;
    if (ratelimit_check (b->capped_rl, monotime_now (), &suppressed))
        fh_log (b, LOG_WARNING, "bgn: %s from rank %u runs as a user: the "
                "owner role crosses the BGN only from bgn.admin_ranks%s",
                msg_get_topic (req), (unsigned)info->source,
                ratelimit_suffix (more, sizeof (more), suppressed));
}

static int request_here (struct bgn_broker *b, msg_t *msg,
                         const struct bgn_msg_info *info)
{
    const char *topic = msg_get_topic (msg);
    bgn_service_f fn;
    void *arg;
    int have = service_lookup (b->services, topic, &fn, &arg) == 0;

    cap_role (b, msg, info);

    if (have && fh_ours (topic) && host_method (b, msg, info) == 0)
        return 0;   /* the host's own method took it */
    if (have) {
        fn (b, msg, info, arg);
        msg_destroy (&msg);
        return 0;
    }
    return to_flux (b, msg, info);
}

/* By routing.h's rules, with one host rule before them: beside the
 * TBON (no channel to the broker) an upstream request is the TBON's.
 * Every topic but our own is Flux's, whose broker here takes it (and
 * answers ENOSYS itself for what nobody serves); ours are taken where
 * the method is registered. */
int fh_route_request (struct bgn_broker *b, msg_t *msg,
                          const struct bgn_msg_info *info)
{
    const char *topic = msg_get_topic (msg);
    struct routing_self self = { .rank = b->rank, .size = b->size,
                                 .overlay = b->ovl != NULL };
    bgn_service_f fn;
    void *arg;
    bool have = !fh_ours (topic)
                || service_lookup (b->services, topic, &fn, &arg) == 0;
    struct routing_hop hop;

    if ((msg_get_flags (msg) & MSGFLAG_UPSTREAM) && !b->chan)
        return fh_request_fail (b, msg, ENOSYS, "upstream requests are the "
                                "TBON's, not the BGN's");
    hop = routing_request (&self, msg, have);
    switch (hop.action) {
    case ROUTING_LOCAL:
        return request_here (b, msg, info);
    case ROUTING_FORWARD:
        return fh_request_out (b, msg, info, hop.dest);
    default:
        return fh_request_fail (b, msg, hop.errnum,
                                hop.errstr ? hop.errstr
                                           : "no such bgn method");
    }
}

static void client_answer (struct bgn_broker *b, const char *token,
                           msg_t *rsp);


int fh_route_response (struct bgn_broker *b, msg_t *msg)
{
    char id[MSG_MAX_ROUTEID + 1];
    struct routing_hop hop = routing_response (msg, b->rank);
    bgn_service_f fn;
    void *arg;

    switch (hop.action) {
    case ROUTING_CLIENT:
        /* as the broker's overlay, an answer to none of our tokens (a
         * response to a no-response request, as Flux allows) is the
         * broker's to route by the Flux routes below */
        if (b->chan && !fluxroutes_is_token (msg_route_first (msg)))
            return fh_chan_response_in (b, msg);
        msg_route_pop (msg, id, sizeof (id));
        client_answer (b, id, msg);
        msg_destroy (&msg);
        return 0;
    case ROUTING_FORWARD:
        if (!b->ovl || b->ovl->send (b->ovl_state, &msg, hop.dest, NULL) < 0) {
            fh_log (b, LOG_DEBUG, "bgn: response %s to rank %u dropped: %s",
                    msg_get_topic (msg) ?: "", (unsigned)hop.dest,
                    strerror (errno));
            msg_destroy (&msg);
            return -1;
        }
        return 0;
    default:
        /* the stack ran out: an answer to the module's own request */
        if (service_lookup (b->services, msg_get_topic (msg), &fn, &arg) == 0)
            fn (b, msg, NULL, arg);
        msg_destroy (&msg);
        return 0;
    }
}

int fh_route_deliver (bgn_broker_t *b, msg_t *msg,
                        const struct bgn_msg_info *info)
{
    struct bgn_msg_info none = { .source = b->rank };

    switch (msg_get_type (msg)) {
    case MSGTYPE_REQUEST:
        return fh_route_request (b, msg, info ? info : &none);
    case MSGTYPE_RESPONSE:
        return fh_route_response (b, msg);
    default:
        break;
    }
    msg_destroy (&msg);
    return 0;
}

/* A module's own request: the instance owner's, from this broker. */
int fh_route_send (bgn_broker_t *b, msg_t *msg)
{
    struct bgn_msg_info info = { .source = b->rank };

    if (msg_get_type (msg) == MSGTYPE_REQUEST) {
        msg_set_userid (msg, (uint32_t)getuid ());
        msg_set_rolemask (msg, MSG_ROLE_OWNER);
        if (!(msg_get_flags (msg) & MSGFLAG_ROUTE))
            msg_route_enable (msg);
        return fh_route_request (b, msg, &info);
    }
    return fh_route_deliver (b, msg, &info);
}

/* ---- requests handed into Flux ---------------------------------------- */

void fh_forward_free (void **item)
{
    struct forward *f = *item;

    if (f) {
        msg_destroy (&f->req);
        free (f);
        *item = NULL;
    }
}

/* A request that reached this rank over the BGN, for a Flux service:
 * sent into this broker as a peer's request would be (the original
 * credentials, less FLUX_ROLE_LOCAL: it did not start on this node),
 * with a route id of ours on top, so its answers come back to us. */
static int to_flux (struct bgn_broker *b, msg_t *req,
                    const struct bgn_msg_info *info)
{
    flux_msg_t *f = fluxmsg_from_bgn (req);
    struct forward *fw = NULL;
    char id[32];
    int noresponse = msg_get_flags (req) & MSGFLAG_NORESPONSE;

    bgn_service_f fn;
    void *arg;

    if (service_lookup (b->services, msg_get_topic (req), &fn, &arg) == 0
        || fh_ours (msg_get_topic (req))) {
        flux_msg_destroy (f);   /* it would come straight back to us */
        return fh_request_fail (b, req, ENOSYS, "no such bgn method");
    }
    if (!f)
        return fh_request_fail (b, req, errno, "cannot carry it into Flux");
    if (b->chan) {
        flux_msg_destroy (f);
        return fh_chan_request_in (b, req, info);
    }
    if (!noresponse && zhashx_size (b->forwards) >= MAX_PENDING) {
        flux_msg_destroy (f);
        return fh_request_fail (b, req, EAGAIN, "too many requests waiting for "
                                "Flux here");
    }
    snprintf (id, sizeof (id), FWD_PREFIX "%" PRIu64, ++b->next_forward);
    flux_msg_set_rolemask (f, msg_get_rolemask (req) & ~FLUX_ROLE_LOCAL);
    flux_msg_set_nodeid (f, b->rank);
    flux_msg_set_matchtag (f, FLUX_MATCHTAG_NONE);
    flux_msg_route_enable (f);
    if (flux_msg_route_push (f, id) < 0 || flux_send (b->h, f, 0) < 0) {
        int errnum = errno;
        flux_msg_destroy (f);
        return fh_request_fail (b, req, errnum, "cannot send it into Flux");
    }
    flux_msg_destroy (f);
    if (noresponse) {
        msg_destroy (&req);
        return 0;
    }
    if (!(fw = calloc (1, sizeof (*fw)))) {
        msg_destroy (&req);
        return -1;
    }
    fw->req = req;
    fw->deadline = msg_get_flags (req) & MSGFLAG_STREAMING
                       ? monotime_now () + 3600.
                       : monotime_now () + 6 * b->rpc_timeout;
    zhashx_update (b->forwards, id, fw);
    return 0;
}

/* Text answers (log.dmesg's lines, say) are wrapped to cross the BGN,
 * which carries JSON payloads only, and unwrapped for the client. */
static msg_t *text_response (const msg_t *req, const char *text)
{
    json_t *o = json_pack ("{s:s}", TEXT_KEY, text);
    char *s = o ? json_dumps (o, JSON_COMPACT) : NULL;
    msg_t *rsp = s ? msg_response_create (req, s) : NULL;

    free (s);
    json_decref (o);
    return rsp;
}

static int flux_respond_unwrapped (flux_t *h, const flux_msg_t *req,
                                   const char *payload)
{
    const char *text;
    json_t *o;
    int rc;

    if (!payload || strncmp (payload, "{\"" TEXT_KEY "\":", strlen (TEXT_KEY) + 4)
        || !(o = json_loads (payload, 0, NULL)))
        return flux_respond (h, req, payload);
    if (json_unpack (o, "{s:s}", TEXT_KEY, &text) < 0)
        text = payload;
    rc = flux_respond (h, req, text);
    json_decref (o);
    return rc;
}

/* An answer from Flux to a request we handed in: back over the BGN. */
void fh_flux_response_cb (flux_t *h, flux_msg_handler_t *mh,
                              const flux_msg_t *fmsg, void *arg)
{
    fh_forward_answer (arg, fmsg);
}

void fh_forward_answer (struct bgn_broker *b, const flux_msg_t *fmsg)
{
    const char *id = flux_msg_route_last (fmsg);
    struct forward *fw;
    int errnum = 0;
    const char *errstr = NULL;
    msg_t *rsp = NULL, *conv = NULL;

    if (!id || strncmp (id, FWD_PREFIX, strlen (FWD_PREFIX)) != 0
        || !(fw = zhashx_lookup (b->forwards, id)))
        return;   /* not one of ours (or its deadline passed) */
    flux_msg_get_errnum (fmsg, &errnum);
    if (errnum) {
        if (flux_msg_get_string (fmsg, &errstr) < 0)
            errstr = NULL;
        rsp = msg_error_response_create (fw->req, errnum, errstr);
    }
    else if ((conv = fluxmsg_to_bgn (fmsg)))
        rsp = msg_response_create (fw->req, msg_get_payload (conv, NULL));
    else if (errno == EPROTO && flux_msg_get_string (fmsg, &errstr) == 0
             && errstr)
        rsp = text_response (fw->req, errstr);
    else
        rsp = msg_error_response_create (fw->req, EPROTO, "the Flux answer's "
                                         "payload is neither JSON nor text");
    msg_destroy (&conv);
    if (errnum || !(msg_get_flags (fw->req) & MSGFLAG_STREAMING))
        zhashx_delete (b->forwards, id);
    if (rsp)
        fh_route_response (b, rsp);
}

/* ---- Flux clients -------------------------------------------------------- */

void fh_client_free (void **item)
{
    struct client_req *c = *item;

    if (c) {
        flux_msg_decref (c->req);
        free (c);
        *item = NULL;
    }
}

/* An answer for Flux client token 'token', from the BGN or the core. */
static void client_answer (struct bgn_broker *b, const char *token,
                           msg_t *rsp)
{
    struct client_req *c = zhashx_lookup (b->clients, token);
    int errnum = 0;
    const char *payload;

    if (!c) {
        fh_log (b, LOG_DEBUG, "bgn: answer for %s, a request no longer "
                "waiting: dropped", token);
        return;
    }
    if (c->via_chan) {
        fh_chan_answer (b, c, rsp);
        msg_get_errnum (rsp, &errnum);
        if (errnum || !flux_msg_is_streaming (c->req))
            zhashx_delete (b->clients, token);
        return;
    }
    msg_get_errnum (rsp, &errnum);
    payload = msg_get_payload (rsp, NULL);
    if (errnum) {
        if (flux_respond_error (b->h, c->req, errnum, payload) < 0)
            fh_log (b, LOG_ERR, "bgn: flux_respond_error: %s", strerror (errno));
    }
    else if (flux_respond_unwrapped (b->h, c->req, payload) < 0)
        fh_log (b, LOG_ERR, "bgn: flux_respond: %s", strerror (errno));
    if (errnum || !flux_msg_is_streaming (c->req))
        zhashx_delete (b->clients, token);
}

/* A Flux client's bgn.* request as a bgn request from a client of this
 * broker: its token on the route stack, its Flux credentials kept. */
static msg_t *client_enter (struct bgn_broker *b, const flux_msg_t *fmsg)
{
    struct client_req *c;
    char token[32];
    msg_t *msg;

    if (zhashx_size (b->clients) >= MAX_PENDING) {
        flux_respond_error (b->h, fmsg, EAGAIN, "bgn: too many requests "
                            "waiting here");
        return NULL;
    }
    if (!(msg = fluxmsg_to_bgn (fmsg))) {
        flux_respond_error (b->h, fmsg, errno, errno == EPROTO
                            ? "bgn: the payload must be a JSON object" : NULL);
        return NULL;
    }
    msg_route_enable (msg);
    if (flux_msg_is_noresponse (fmsg))
        return msg;
    snprintf (token, sizeof (token), CLIENT_PREFIX "%" PRIu64,
              ++b->next_client);
    if (!(c = calloc (1, sizeof (*c))) || msg_route_push (msg, token) < 0) {
        free (c);
        msg_destroy (&msg);
        flux_respond_error (b->h, fmsg, ENOMEM, NULL);
        return NULL;
    }
    c->req = (flux_msg_t *)flux_msg_incref (fmsg);
    c->deadline = flux_msg_is_streaming (fmsg) ? INFINITY
                                               : monotime_now () + b->rpc_timeout;
    zhashx_update (b->clients, token, c);
    return msg;
}

void fh_client_request_cb (flux_t *h, flux_msg_handler_t *mh,
                               const flux_msg_t *fmsg, void *arg)
{
    struct bgn_broker *b = arg;
    struct bgn_msg_info info = { .source = b->rank };
    msg_t *msg = client_enter (b, fmsg);

    if (msg)
        fh_route_request (b, msg, &info);
}

/* A client went away: its streams and waiting requests go with it. */
void fh_client_disconnect_cb (flux_t *h, flux_msg_handler_t *mh,
                                  const flux_msg_t *fmsg, void *arg)
{
    struct bgn_broker *b = arg;
    zlistx_t *gone = zlistx_new ();

    for (struct sub *s = zlistx_first (b->subs); s; s = zlistx_next (b->subs))
        if (flux_msg_route_match_first (s->req, fmsg))
            zlistx_add_end (gone, zlistx_cursor (b->subs));
    for (void *h2 = zlistx_first (gone); h2; h2 = zlistx_next (gone))
        zlistx_delete (b->subs, h2);
    zlistx_destroy (&gone);
    zlistx_t *keys = zhashx_keys (b->clients);
    for (const char *k = zlistx_first (keys); k; k = zlistx_next (keys)) {
        struct client_req *c = zhashx_lookup (b->clients, k);
        if (c && flux_msg_route_match_first (c->req, fmsg))
            zhashx_delete (b->clients, k);
    }
    zlistx_destroy (&keys);
}

/* Every request waits for at most its deadline. */
void fh_route_sweep (struct bgn_broker *b)
{
    double now = monotime_now ();
    zlistx_t *keys = zhashx_keys (b->clients);

    for (const char *k = zlistx_first (keys); k; k = zlistx_next (keys)) {
        struct client_req *c = zhashx_lookup (b->clients, k);
        if (c && now >= c->deadline) {
            flux_respond_error (b->h, c->req, ETIMEDOUT, "bgn: no answer over "
                                "the BGN in time (the destination or a relay "
                                "may have failed; the outcome is unknown)");
            zhashx_delete (b->clients, k);
        }
    }
    zlistx_destroy (&keys);
    keys = zhashx_keys (b->forwards);
    for (const char *k = zlistx_first (keys); k; k = zlistx_next (keys)) {
        struct forward *fw = zhashx_lookup (b->forwards, k);
        if (fw && now >= fw->deadline)
            zhashx_delete (b->forwards, k);
    }
    zlistx_destroy (&keys);
}

/* bgn.rpc {rank, topic, payload?}: the request inside, to that rank. */
int fh_method_rpc (struct bgn_broker *b, msg_t *req,
                       const struct bgn_msg_info *info)
{
    json_t *o = msg_get_json (req), *payload = NULL;
    const char *topic = NULL;
    json_int_t rank = -1;
    char *text = NULL;
    msg_t *inner;

    if (info->from_overlay)
        return fh_request_fail (b, req, EPERM, "bgn.rpc starts at the "
                                "requester's own broker");
    if (!o || json_unpack (o, "{s:I s:s s?o}", "rank", &rank, "topic", &topic,
                           "payload", &payload) < 0
        || rank < 0 || rank >= (json_int_t)b->size || !*topic
        || (payload && !json_is_object (payload)))
        return fh_request_fail (b, req, EPROTO, "bgn.rpc takes {\"rank\": R, "
                                "\"topic\": T, \"payload\": {...}} with R a rank "
                                "of this instance");
    if (payload && !(text = json_dumps (payload, JSON_COMPACT)))
        return fh_request_fail (b, req, ENOMEM, NULL);
    inner = msg_request_create (topic, (uint32_t)rank, text);
    free (text);
    if (!inner)
        return fh_request_fail (b, req, errno, "bad topic");
    msg_set_userid (inner, msg_get_userid (req));
    msg_set_rolemask (inner, msg_get_rolemask (req));
    msg_set_flags (inner, msg_get_flags (inner)
                              | (msg_get_flags (req) & (MSGFLAG_STREAMING
                                                        | MSGFLAG_NORESPONSE)));
    msg_route_enable (inner);
    for (int i = msg_route_count (req) - 1; i >= 0; i--)
        msg_route_push (inner, msg_route_at (req, i));
    msg_destroy (&req);
    return fh_route_request (b, inner, info);
}

/* The host's methods under bgn.* (fluxhost.c's table); everything else
 * there is the core's.  -1: not one of them. */
static int host_method (struct bgn_broker *b, msg_t *req,
                        const struct bgn_msg_info *info)
{
    const char *topic = msg_get_topic (req);

    if (msg_get_type (req) != MSGTYPE_REQUEST)
        return -1;
    for (int i = 0; i < b->nmethods; i++)
        if (!strcmp (topic, b->methods[i].topic))
            return b->methods[i].fn (b, req, info), 0;
    return -1;
}
