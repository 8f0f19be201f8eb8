/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* fluxchan.c: the broker's overlay channel, bgn as a Flux broker's
 * overlay (bgn-overlay.so; see fluxhost_int.h for the parts).
 *
 * A Flux broker talks to its overlay over one interthread channel,
 * "interthread://overlay", and expects of it what the TBON does:
 *   - a request for another rank, for any rank, or upstream (no local
 *     service): carried there.  Here every such request goes over the
 *     BGN, and the ones that are not for a rank go straight to rank 0,
 *     the one broker every other one's state follows (a graph has no
 *     parent to ask first);
 *   - a response to a request that came from a peer: carried back.
 *     Requests from peers enter the broker through fluxroute.c's
 *     to_flux, with a route id of ours on top; the answer comes back
 *     on this channel and fh_forward_answer takes it over the BGN;
 *   - an event: on rank 0 a published one, multicast to every other
 *     broker (the core numbers it into its ordered, repaired event
 *     stream); elsewhere an unpublished one, sent up to rank 0 for the
 *     broker there to publish.
 * A request crosses with its Flux route stack and matchtag (the bgn
 * route stack below the origin's token and rank), so that the far
 * broker's services see its sender as the TBON would show it (they
 * match a later cancel, write or disconnect by sender and matchtag),
 * and its answers find their way back by the route stack alone.  The
 * origin keeps the request under its token (fluxroute.c's client
 * table), so that the core's failure of a request whose rank went down
 * also becomes a Flux response to exactly that request.
 *
 * Payloads cross as fluxmsg.c carries them (any bytes); events cross
 * whole, as the Flux message encoded, so that rank 0's sequence
 * number, flags and credentials arrive as its broker stamped them.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <zmq.h>

#include "fluxhost_int.h"
#include "fluxroutes.h"

#define PUB_BACKLOG_MAX 100000     /* Flux events held while the core
                                      cannot take them (rank 0) */
#define PUB_RETRY 0.05

/* ---- overlay.trace ------------------------------------------------------- */

/* A Flux message crossing between the broker and the BGN, to each
 * overlay.trace stream that asked for it: "tx" from the broker, "rx"
 * to it, peer the rank on the far side (-1: every rank, or not known).
 * One line per crossing, in the built-in overlay's form; an event
 * rank 0 sends out is one line for all ranks, not one per child.  The
 * channel carries no control messages. */
static void chan_trace (struct bgn_broker *b, const char *prefix,
                        int64_t peer, const flux_msg_t *fmsg)
{
    const flux_msg_t *req;
    const char *topic = NULL, *errstr = NULL;
    size_t size = 0;
    json_t *payload = NULL;
    int type = 0, errnum = 0;

    if (!b->traces || flux_msglist_count (b->traces) == 0)
        return;
    (void)flux_msg_get_type (fmsg, &type);
    (void)flux_msg_get_topic (fmsg, &topic);
    if (topic && !strcmp (topic, "overlay.trace"))
        return;   /* a trace's own lines, crossing: no loop */
    if (type == FLUX_MSGTYPE_RESPONSE
        && flux_msg_get_errnum (fmsg, &errnum) == 0 && errnum > 0)
        (void)flux_msg_get_string (fmsg, &errstr);
    else
        (void)flux_msg_get_payload (fmsg, NULL, &size);
    for (req = flux_msglist_first (b->traces); req;
         req = flux_msglist_next (b->traces)) {
        struct flux_match match = FLUX_MATCH_ANY;
        int nodeid = -1, full = 0;
        json_t *o = NULL;

        if (flux_request_unpack (req, NULL, "{s:i s:s s?i s?b}",
                                 "typemask", &match.typemask,
                                 "topic_glob", &match.topic_glob,
                                 "nodeid", &nodeid, "full", &full) < 0
            || (nodeid != -1 && peer >= 0 && nodeid != peer)
            || !flux_msg_cmp (fmsg, match))
            continue;
        if (full && errnum == 0 && size > 0 && !payload)
            (void)flux_msg_unpack (fmsg, "o", &payload);
        if (full && payload)
            o = payload;
        if (flux_respond_pack (b->h, req,
                               "{s:f s:s s:i s:i s:s s:i s:O? s:i s:s}",
                               "timestamp", flux_reactor_now (b->r),
                               "prefix", prefix,
                               "rank", peer >= 0 ? (int)peer : -1,
                               "type", type,
                               "topic", topic ? topic : "",
                               "payload_size", (int)size,
                               "payload", o,
                               "errnum", errnum,
                               "errstr", full && errstr ? errstr : "") < 0)
            fh_log (b, LOG_ERR, "bgn: overlay.trace: %s", strerror (errno));
    }
}

/* ---- the broker's requests ---------------------------------------------- */

/* An EHOSTUNREACH error text for Flux: Flux's tools and tests look for
 * the errno's own words ("No route to host"), which the TBON's errors
 * carry; bgn's reason follows them.  Others are left as they are. */
static const char *flux_errtext (int errnum, const char *why, size_t len,
                                 char *buf, size_t size)
{
    const char *words = strerror (errnum);

    if (errnum != EHOSTUNREACH || !why || len == 0
        || !strncmp (why, words, strlen (words)))
        return NULL;
    snprintf (buf, size, "%s: %.*s", words, (int)len, why);
    return buf;
}

/* A Flux answer to request c, from the bgn response rsp. */
void fh_chan_answer (struct bgn_broker *b, const struct client_req *c,
                     const msg_t *rsp)
{
    flux_msg_t *f;
    int errnum = 0;
    size_t len = 0;
    const char *payload, *text;
    char buf[512];

    msg_get_errnum (rsp, &errnum);
    payload = msg_get_payload (rsp, &len);
    if (!(f = flux_response_derive (c->req, errnum)))
        goto error;
    /* a C string's end is not part of the text */
    size_t tlen = payload && len > 0 && payload[len - 1] == '\0' ? len - 1
                                                                 : len;
    if ((text = flux_errtext (errnum, payload, tlen, buf, sizeof (buf)))) {
        if (flux_msg_set_string (f, text) < 0)
            goto error;
    }
    else if (fluxmsg_set_payload (f, payload, len) < 0) {
        flux_msg_destroy (f);
        if (!(f = flux_response_derive (c->req, EPROTO))
            || flux_msg_set_string (f, "bgn: a malformed answer payload "
                                    "arrived over the BGN") < 0)
            goto error;
    }
    chan_trace (b, "rx", c->dest, f);
    if (fh_chan_send (b, &f) < 0)
        goto error;
    return;
error:
    fh_log (b, LOG_ERR, "bgn: an answer to the broker: %s", strerror (errno));
    flux_msg_destroy (f);
}

/* An error answer to the broker's request fmsg, at once. */
static void chan_fail (struct bgn_broker *b, const flux_msg_t *fmsg,
                       int errnum, const char *why)
{
    flux_msg_t *f;
    char buf[256];
    const char *text = why ? flux_errtext (errnum, why, strlen (why), buf,
                                           sizeof (buf)) : NULL;

    if (text)
        why = text;
    if (flux_msg_is_noresponse (fmsg))
        return;
    if (!(f = flux_response_derive (fmsg, errnum))
        || (why && flux_msg_set_string (f, why) < 0)
        || fh_chan_send (b, &f) < 0) {
        fh_log (b, LOG_ERR, "bgn: an error answer to the broker: %s",
                strerror (errno));
        flux_msg_destroy (f);
    }
}

/* A client's end: its streams to dest there end with it. */
static void clients_disconnect (struct bgn_broker *b, const flux_msg_t *fmsg,
                                uint32_t dest)
{
    const char *topic = NULL, *dot;
    size_t svc;

    if (flux_msg_get_topic (fmsg, &topic) < 0 || !(dot = strrchr (topic, '.'))
        || strcmp (dot, ".disconnect"))
        return;
    svc = (size_t)(dot - topic) + 1;
    zlistx_t *keys = zhashx_keys (b->clients);
    for (const char *k = zlistx_first (keys); k; k = zlistx_next (keys)) {
        struct client_req *c = zhashx_lookup (b->clients, k);
        const char *t = NULL;
        if (c && c->via_chan && c->dest == dest
            && flux_msg_get_topic (c->req, &t) == 0 && !strncmp (t, topic, svc)
            && flux_msg_route_match_first (c->req, fmsg))
            zhashx_delete (b->clients, k);
    }
    zlistx_destroy (&keys);
}

/* Where a request of the broker's goes: its rank, or rank 0 for one
 * that is for any rank or upstream.  -1: nowhere (EHOSTUNREACH). */
static int64_t request_dest (struct bgn_broker *b, const flux_msg_t *fmsg)
{
    uint32_t nodeid;

    if (flux_msg_get_nodeid (fmsg, &nodeid) < 0)
        return -1;
    if (flux_msg_has_flag (fmsg, FLUX_MSGFLAG_UPSTREAM)
        || nodeid == FLUX_NODEID_ANY)
        return b->rank == 0 ? -1 : 0;
    if (nodeid >= b->size || nodeid == b->rank)
        return -1;
    return nodeid;
}

static void chan_request (struct bgn_broker *b, const flux_msg_t *fmsg)
{
    struct bgn_msg_info info = { .source = b->rank };
    int64_t dest = request_dest (b, fmsg);
    struct client_req *c = NULL;
    char token[32];
    msg_t *msg;

    if (dest < 0) {
        chan_fail (b, fmsg, EHOSTUNREACH, "bgn: no such rank, or no rank "
                   "above this one");
        return;
    }
    chan_trace (b, "tx", dest, fmsg);
    if (!(msg = fluxmsg_to_bgn_any (fmsg))) {
        chan_fail (b, fmsg, errno, "bgn: cannot carry this request");
        return;
    }
    clients_disconnect (b, fmsg, (uint32_t)dest);
    msg_route_enable (msg);
    if (fluxroutes_to_bgn (fmsg, msg) < 0) {
        msg_destroy (&msg);
        chan_fail (b, fmsg, EPROTO, "bgn: the route stack cannot cross");
        return;
    }
    if (!flux_msg_is_noresponse (fmsg)) {
        if (zhashx_size (b->clients) >= MAX_PENDING * 10) {
            msg_destroy (&msg);
            chan_fail (b, fmsg, EAGAIN, "bgn: too many requests waiting here");
            return;
        }
        snprintf (token, sizeof (token), CLIENT_PREFIX "%" PRIu64,
                  ++b->next_client);
        if (!(c = calloc (1, sizeof (*c))) || msg_route_push (msg, token) < 0) {
            free (c);
            msg_destroy (&msg);
            chan_fail (b, fmsg, ENOMEM, NULL);
            return;
        }
        c->req = (flux_msg_t *)flux_msg_incref (fmsg);
        c->deadline = INFINITY;   /* the core fails it if dest goes down */
        c->via_chan = 1;
        c->dest = (uint32_t)dest;
        zhashx_update (b->clients, token, c);
    }
    /* fails through the client table (an answer to the token) */
    fh_request_out (b, msg, &info, (uint32_t)dest);
}

/* ---- requests from the BGN --------------------------------------------- */

/* The nodeid the broker sees: a request sent upstream names its origin
 * (the broker then serves it here, the rank "above" it); one for any
 * rank stays so; the rest were for this rank. */
static uint32_t nodeid_in (struct bgn_broker *b, const msg_t *req,
                           const struct bgn_msg_info *info)
{
    uint32_t nodeid = b->rank;

    msg_get_nodeid (req, &nodeid);
    if (msg_get_flags (req) & MSGFLAG_UPSTREAM)
        return info && info->from_overlay ? info->source : nodeid;
    return nodeid == NODEID_ANY ? FLUX_NODEID_ANY : b->rank;
}

int fh_chan_request_in (struct bgn_broker *b, msg_t *req,
                        const struct bgn_msg_info *info)
{
    flux_msg_t *f = fluxmsg_from_bgn (req);
    uint32_t matchtag = msg_get_matchtag (req);
    int errnum;

    if (!f)
        return fh_request_fail (b, req, errno, "cannot carry it into Flux");
    /* a peer's request, not a local one; its credentials as capped */
    flux_msg_set_rolemask (f, msg_get_rolemask (req) & ~FLUX_ROLE_LOCAL);
    flux_msg_set_nodeid (f, nodeid_in (b, req, info));
    flux_msg_set_matchtag (f, matchtag);
    if (fluxroutes_to_flux (req, f) < 0)
        goto error;
    chan_trace (b, "rx", info ? (int64_t)info->source : -1, f);
    if (fh_chan_send (b, &f) < 0)
        goto error;
    msg_destroy (&req);
    return 0;
error:
    errnum = errno;
    flux_msg_destroy (f);
    return fh_request_fail (b, req, errnum, "cannot send it into Flux");
}

int fh_chan_origin (const flux_msg_t *fmsg, uint32_t *rank)
{
    const char *top = flux_msg_route_last (fmsg);
    char digits[16];
    size_t n = top ? strcspn (top, ":") : 0;

    if (!top || n == 0 || n >= sizeof (digits)
        || (top[n] == ':' && !fluxroutes_is_token (top + n + 1))) {
        errno = ENOENT;
        return -1;
    }
    memcpy (digits, top, n);
    digits[n] = '\0';
    if (!msg_route_id_rank (digits, rank)) {
        errno = ENOENT;
        return -1;
    }
    return 0;
}

int fh_chan_response_in (struct bgn_broker *b, msg_t *rsp)
{
    flux_msg_t *f = fluxmsg_from_bgn (rsp);

    if (!f || fluxroutes_to_flux (rsp, f) < 0)
        goto error;
    chan_trace (b, "rx", -1, f);   /* its sender is not in it */
    if (fh_chan_send (b, &f) < 0)
        goto error;
    msg_destroy (&rsp);
    return 0;
error:
    fh_log (b, LOG_DEBUG, "bgn: an answer to the broker dropped: %s",
            strerror (errno));
    flux_msg_destroy (f);
    msg_destroy (&rsp);
    return -1;
}

/* The broker's answer to a request from the BGN: back by its route
 * stack, whose top is the origin's rank. */
static void chan_response (struct bgn_broker *b, const flux_msg_t *fmsg)
{
    msg_t *rsp;
    uint32_t origin;

    if (fh_chan_origin (fmsg, &origin) < 0) {
        const char *topic = "?";
        char *routes = flux_msg_route_string (fmsg);
        flux_msg_get_topic (fmsg, &topic);
        fh_log (b, LOG_DEBUG, "bgn: an answer from the broker (%s, routes "
                "%s) for no rank: dropped", topic, routes ? routes : "none");
        free (routes);
        return;
    }
    if (!(rsp = fluxmsg_to_bgn_any (fmsg)) || (msg_route_enable (rsp), 0)
        || fluxroutes_to_bgn (fmsg, rsp) < 0) {
        fh_log (b, LOG_ERR, "bgn: an answer for rank %u not carried: %s",
                (unsigned)origin, strerror (errno));
        msg_destroy (&rsp);
        return;
    }
    chan_trace (b, "tx", origin, fmsg);
    fh_route_response (b, rsp);
}

/* ---- events ----------------------------------------------------------- */

/* A Flux event, whole, as a bgn payload. */
static int event_wrap (msg_t *msg, const flux_msg_t *fmsg)
{
    ssize_t size = flux_msg_encode_size (fmsg);
    void *buf = NULL;
    int rc = -1;

    if (size >= 0 && (buf = malloc ((size_t)size))
        && flux_msg_encode (fmsg, buf, (size_t)size) == 0)
        rc = fluxmsg_wrap (msg, buf, (size_t)size);
    free (buf);
    return rc;
}

/* The Flux event in a payload event_wrap made, NULL if it is not one. */
static flux_msg_t *event_unwrap (const char *payload, size_t len)
{
    size_t size = 0;
    void *buf = payload ? fluxmsg_unwrap (payload, len, &size) : NULL;
    flux_msg_t *ev = buf ? flux_msg_decode (buf, size) : NULL;
    int type;

    if (ev && (flux_msg_get_type (ev, &type) < 0 || type != FLUX_MSGTYPE_EVENT)) {
        flux_msg_destroy (ev);
        ev = NULL;
    }
    free (buf);
    return ev;
}

/* Rank 0: a published Flux event into the core's event stream. */
static int publish_one (struct bgn_broker *b, msg_t **ev)
{
    if (!b->ovl || !b->ovl->publish) {
        errno = ENOSYS;
        return -1;
    }
    msg_t *taken = *ev;

    *ev = NULL;   /* taken over, published or not */
    return b->ovl->publish (b->ovl_state, taken) < 0 ? -1 : 0;
}

static void pub_drain (struct bgn_broker *b)
{
    msg_t *ev;

    while ((ev = zlistx_first (b->pub_backlog))) {
        msg_t *cpy = msg_copy (ev);
        if (!cpy || publish_one (b, &cpy) < 0) {
            msg_destroy (&cpy);
            break;
        }
        zlistx_delete (b->pub_backlog, zlistx_cursor (b->pub_backlog));
    }
    if (zlistx_size (b->pub_backlog) > 0)
        flux_watcher_start (b->pub_retry);
}

static void pub_retry_cb (flux_reactor_t *r, flux_watcher_t *w, int revents,
                          void *arg)
{
    pub_drain (arg);
}

static void chan_event_rank0 (struct bgn_broker *b, const flux_msg_t *fmsg)
{
    msg_t *ev = msg_create (MSGTYPE_EVENT);

    chan_trace (b, "tx", -1, fmsg);
    if (!ev || msg_set_topic (ev, FLUX_EVENT_TOPIC) < 0
        || event_wrap (ev, fmsg) < 0) {
        fh_log (b, LOG_ERR, "bgn: a Flux event not carried: %s",
                strerror (errno));
        msg_destroy (&ev);
        return;
    }
    /* in order: behind what waits already */
    if (zlistx_size (b->pub_backlog) == 0) {
        msg_t *cpy = msg_copy (ev);
        if (!cpy) {
            msg_destroy (&ev);
            return;
        }
        if (publish_one (b, &cpy) == 0) {
            msg_destroy (&ev);
            return;
        }
    }
    else
        errno = EAGAIN;
    if (errno != EAGAIN && errno != ENOBUFS) {
        fh_log (b, LOG_ERR, "bgn: a Flux event not published: %s",
                strerror (errno));
        msg_destroy (&ev);
        return;
    }
    if (zlistx_size (b->pub_backlog) >= PUB_BACKLOG_MAX) {
        if (b->pub_dropped++ % 1000 == 0)
            fh_log (b, LOG_ERR, "bgn: %" PRIu64 " Flux event(s) dropped: the "
                    "overlay has taken none for a while", b->pub_dropped);
        msg_destroy (&ev);
        return;
    }
    zlistx_add_end (b->pub_backlog, ev);
    flux_watcher_start (b->pub_retry);
}

/* Rank > 0: an event a module here published goes to rank 0, whose
 * broker numbers and publishes it. */
static void chan_event_up (struct bgn_broker *b, const flux_msg_t *fmsg)
{
    struct bgn_msg_info info = { .source = b->rank };
    struct flux_msg_cred cred = { 0 };
    msg_t *req = msg_request_create (SERVICE ".flux-event", 0, NULL);

    if (!req || event_wrap (req, fmsg) < 0 || flux_msg_get_cred (fmsg, &cred)) {
        fh_log (b, LOG_ERR, "bgn: a Flux event not carried: %s",
                strerror (errno));
        msg_destroy (&req);
        return;
    }
    msg_set_userid (req, cred.userid);
    msg_set_rolemask (req, cred.rolemask);
    msg_set_flags (req, msg_get_flags (req) | MSGFLAG_NORESPONSE);
    msg_route_enable (req);
    chan_trace (b, "tx", 0, fmsg);
    fh_request_out (b, req, &info, 0);
}

/* bgn.flux-event on rank 0: a peer's unpublished Flux event, for this
 * broker to publish.  Its credentials are the request's (as capped on
 * the way in), not what the sender wrote inside. */
int fh_method_flux_event (struct bgn_broker *b, msg_t *req,
                          const struct bgn_msg_info *info)
{
    size_t len = 0;
    const char *payload = msg_get_payload (req, &len);
    flux_msg_t *ev;

    if (!b->chan || b->rank != 0 || !info->from_overlay) {
        msg_destroy (&req);
        return 0;
    }
    if (!(ev = event_unwrap (payload, len))) {
        fh_log (b, LOG_WARNING, "bgn: a malformed Flux event from rank %u: "
                "dropped", (unsigned)info->source);
        msg_destroy (&req);
        return 0;
    }
    flux_msg_set_userid (ev, msg_get_userid (req));
    flux_msg_set_rolemask (ev, msg_get_rolemask (req) & ~FLUX_ROLE_LOCAL);
    flux_msg_set_seq (ev, 0);
    chan_trace (b, "rx", info->source, ev);
    if (fh_chan_send (b, &ev) < 0)
        flux_msg_destroy (ev);
    msg_destroy (&req);
    return 0;
}

/* Rank > 0: a Flux event off the BGN, to this broker's subscribers. */
void fh_chan_event (struct bgn_broker *b, const char *payload, size_t len)
{
    flux_msg_t *ev;

    if (!b->chan || b->rank == 0)
        return;   /* rank 0's broker delivered its own already */
    if (!(ev = event_unwrap (payload, len))) {
        fh_log (b, LOG_WARNING, "bgn: a malformed Flux event: dropped");
        return;
    }
    chan_trace (b, "rx", 0, ev);
    if (fh_chan_send (b, &ev) < 0)
        flux_msg_destroy (ev);
}

/* ---- the channel ----------------------------------------------------- */

int fh_chan_send (struct bgn_broker *b, flux_msg_t **fmsg)
{
    if (flux_send_new (b->chan, fmsg, 0) < 0)
        return -1;
    b->chan_out++;
    return 0;
}

static void chan_cb (flux_reactor_t *r, flux_watcher_t *w, int revents,
                     void *arg)
{
    struct bgn_broker *b = arg;
    flux_msg_t *fmsg;
    int type;

    for (int budget = 0; budget < 256; budget++) {
        if (!(fmsg = flux_recv (b->chan, FLUX_MATCH_ANY, FLUX_O_NONBLOCK)))
            return;
        b->chan_in++;
        if (flux_msg_get_type (fmsg, &type) == 0) {
            switch (type) {
            case FLUX_MSGTYPE_REQUEST:
                chan_request (b, fmsg);
                break;
            case FLUX_MSGTYPE_RESPONSE:
                chan_response (b, fmsg);
                break;
            case FLUX_MSGTYPE_EVENT:
                if (b->rank == 0)
                    chan_event_rank0 (b, fmsg);
                else
                    chan_event_up (b, fmsg);
                break;
            default:
                break;
            }
        }
        flux_msg_decref (fmsg);
    }
}

static void backlog_free (void **item)
{
    msg_t *m = *item;

    msg_destroy (&m);
    *item = NULL;
}

int fh_chan_open (struct bgn_broker *b)
{
    if (!(b->chan = flux_open ("interthread://overlay", 0))
        || flux_set_reactor (b->chan, b->r) < 0
        || !(b->chan_w = flux_handle_watcher_create (b->r, b->chan,
                                                     FLUX_POLLIN, chan_cb, b))
        || !(b->pub_backlog = zlistx_new ())
        || !(b->pub_retry = flux_timer_watcher_create (b->r, PUB_RETRY, 0.,
                                                       pub_retry_cb, b)))
        return -1;
    zlistx_set_destructor (b->pub_backlog, backlog_free);
    flux_watcher_start (b->chan_w);
    return 0;
}

void fh_chan_close (struct bgn_broker *b)
{
    flux_watcher_destroy (b->chan_w);
    b->chan_w = NULL;
    flux_watcher_destroy (b->pub_retry);
    b->pub_retry = NULL;
    zlistx_destroy (&b->pub_backlog);
    flux_close (b->chan);
    b->chan = NULL;
}
