/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* fluxevents.c: bgn's events for Flux clients, and rank 0's policies on
 * membership changes (see fluxhost_int.h for the parts).
 *
 * Events reach this broker in batches numbered by rank 0 (each once, in
 * order) and go to the local Flux clients streaming bgn.event-sub.  On
 * rank 0 the overlay's membership events also become the Flux event
 * bgn.membership and feed disconnect_hung and orphan_relief.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include "fluxhost_int.h"

/* ---- the host's event methods ------------------------------------------ */

/* bgn.event-pub {topic, payload?}: numbered by rank 0 and multicast. */
int fh_method_event_pub (struct bgn_broker *b, msg_t *req,
                             const struct bgn_msg_info *info)
{
    json_t *o = msg_get_json (req), *payload = NULL;
    const char *topic = NULL;
    char *text = NULL;
    msg_t *ev;

    if (!o || json_unpack (o, "{s:s s?o}", "topic", &topic, "payload",
                           &payload) < 0 || !*topic
        || (payload && !json_is_object (payload)))
        return fh_request_fail (b, req, EPROTO, "bgn.event-pub takes {\"topic\": "
                                "T, \"payload\": {...}}");
    if (b->rank != 0) {
        uint32_t zero = 0;
        msg_set_nodeid (req, zero);
        return fh_request_out (b, req, info, 0);
    }
    if (!b->ovl || !b->ovl->publish_req)
        return fh_request_fail (b, req, ENOSYS, "no event layer");
    if (payload && !(text = json_dumps (payload, JSON_COMPACT)))
        return fh_request_fail (b, req, ENOMEM, NULL);
    ev = msg_event_create (topic, text);
    free (text);
    if (!ev)
        return fh_request_fail (b, req, errno, "bad event topic");
    msg_set_userid (ev, msg_get_userid (req));
    msg_set_matchtag (ev, info->from_overlay ? info->source : b->rank);
    if (b->ovl->publish_req (b->ovl_state, &ev, 1, req) < 0) {
        int errnum = errno;
        msg_destroy (&ev);
        return fh_request_fail (b, req, errnum, errnum == EAGAIN
                                ? "rank 0 cannot take events now; retry" : NULL);
    }
    msg_destroy (&req);
    return 0;
}

/* bgn.event-sub {topics?: [prefix...]}: a stream of this broker's events. */
int fh_method_event_sub (struct bgn_broker *b, msg_t *req,
                             const struct bgn_msg_info *info)
{
    json_t *o = msg_get_json (req), *topics = NULL;
    const char *token = msg_route_first (req);
    struct client_req *c = token ? zhashx_lookup (b->clients, token) : NULL;
    struct sub *s;

    if (info->from_overlay || !c || !flux_msg_is_streaming (c->req))
        return fh_request_fail (b, req, EPROTO, "bgn.event-sub is a streaming "
                                "request of a client of this broker");
    if (o && json_unpack (o, "{s?o}", "topics", &topics) < 0)
        topics = NULL;
    if (topics && !json_is_array (topics))
        return fh_request_fail (b, req, EPROTO, "topics: an array of prefixes");
    if (!(s = calloc (1, sizeof (*s))))
        return fh_request_fail (b, req, ENOMEM, NULL);
    s->req = (flux_msg_t *)flux_msg_incref (c->req);
    s->prefixes = topics ? json_incref (topics) : json_array ();
    zlistx_add_end (b->subs, s);
    zhashx_delete (b->clients, token);   /* answered from the sub list now */
    msg_destroy (&req);
    return 0;
}

/* ---- events ------------------------------------------------------------- */

void fh_sub_free (void **item)
{
    struct sub *s = *item;

    if (s) {
        flux_msg_decref (s->req);
        json_decref (s->prefixes);
        free (s);
        *item = NULL;
    }
}

static int sub_wants (const struct sub *s, const char *topic, size_t len)
{
    size_t i;
    json_t *p;

    if (json_array_size (s->prefixes) == 0
        || (len == 10 && !strncmp (topic, "event.lost", 10)))
        return 1;
    json_array_foreach (s->prefixes, i, p) {
        const char *pre = json_string_value (p);
        if (pre && strlen (pre) <= len && !strncmp (topic, pre, strlen (pre)))
            return 1;
    }
    return 0;
}

static void note_membership (struct bgn_broker *b, const char *payload,
                             size_t len);

/* One sequenced event to the subscribers that asked for it; rank 0 also
 * tells Flux about membership changes. */
static void deliver_one (struct bgn_broker *b, uint32_t seq, const char *topic,
                         size_t topic_len, const char *payload,
                         size_t payload_len, uint32_t publisher)
{
    char t[256];

    snprintf (t, sizeof (t), "%.*s", (int)topic_len, topic);
    if (!strcmp (t, FLUX_EVENT_TOPIC)) {
        fh_chan_event (b, payload, payload_len);   /* Flux's, not ours */
        return;
    }
    if (b->rank == 0 && !strcmp (t, SERVICE ".membership"))
        note_membership (b, payload, payload_len);
    for (struct sub *s = zlistx_first (b->subs); s; s = zlistx_next (b->subs)) {
        if (!sub_wants (s, topic, topic_len))
            continue;
        if (flux_respond_pack (b->h, s->req, "{s:I s:s s:s# s:I}",
                               "seq", (json_int_t)seq, "topic", t,
                               "payload", payload ? payload : "",
                               payload ? (int)payload_len : 0,
                               "publisher", (json_int_t)publisher) < 0)
            fh_log (b, LOG_DEBUG, "bgn: event to a subscriber: %s",
                    strerror (errno));
    }
}

int fh_deliver_events (bgn_broker_t *b, const void *batch, size_t len)
{
    struct evbatch_rec rec;
    size_t off = 0;

    while (evbatch_next (batch, len, &off, &rec) == 1)
        deliver_one (b, rec.seq, rec.topic, rec.topic_len, rec.payload,
                     rec.payload_len, rec.publisher);
    return 0;
}

void fh_deliver_event_msg (struct bgn_broker *b, const msg_t *ev)
{
    const char *topic = msg_get_topic (ev), *payload;
    uint32_t seq = 0;
    size_t len = 0;

    if (!topic)
        return;
    msg_get_seq (ev, &seq);
    payload = msg_get_payload (ev, &len);
    deliver_one (b, seq, topic, strlen (topic), payload, len,
                 msg_get_matchtag (ev));
}

/* Rank 0: the overlay's membership record ({"fenced": [...], "live":
 * [...]}) as a Flux event, and the policies that act on it. */
/* The TBON's parent of every rank, from Flux's overlay.topology. */
static void learn_parents (struct bgn_broker *b, json_t *node)
{
    json_t *children, *child;
    size_t i;
    int rank, c;

    if (json_unpack (node, "{s:i s:o}", "rank", &rank, "children",
                     &children) < 0)
        return;
    json_array_foreach (children, i, child) {
        if (json_unpack (child, "{s:i}", "rank", &c) == 0 && c >= 0
            && (uint32_t)c < b->size)
            b->parent[c] = rank;
        learn_parents (b, child);
    }
}

static void fh_topology_cb (flux_future_t *f, void *arg)
{
    struct bgn_broker *b = arg;
    json_t *topo = NULL;

    if (flux_rpc_get_unpack (f, "o", &topo) == 0)
        learn_parents (b, topo);
    else
        fh_log (b, LOG_WARNING, "bgn: overlay.topology: %s (disconnect_hung "
                "and orphan_relief cannot tell a TBON leaf from a broker "
                "with children)", strerror (errno));
    flux_future_destroy (f);
}

/* Does rank have children in the TBON?  Unknown parents: assume so. */
static bool tbon_interior (struct bgn_broker *b, uint32_t rank)
{
    if (!b->parent)
        return true;
    for (uint32_t r = 1; r < b->size; r++)
        if (b->parent[r] == (int)rank)
            return true;
    return false;
}

/* disconnect_hung: Flux's overlay waits on a hung child for ever (it is
 * only "torpid"); its parent is told to let it go, as `flux overlay
 * disconnect` does.  Only a broker Flux has online now: one still
 * joining (slow to start, fenced "never joined" by bgn) must not be cut
 * out of Flux's quorum.  Only a leaf of the TBON: Flux drops a
 * disconnected broker's whole subtree, so letting go of a paused
 * interior broker would take every broker below it out of Flux (and
 * orphan_relief would then tell them to exit) for one pause; an
 * interior broker stays torpid to Flux until it answers or dies. */
static void disconnect_online_cb (flux_future_t *f, void *arg)
{
    struct bgn_broker *b = arg;
    uint32_t rank = (uint32_t)(uintptr_t)flux_future_aux_get (f, "rank");
    const char *members = NULL;
    idset_t *online = NULL;
    flux_future_t *req;
    int parent = b->parent ? b->parent[rank] : -1;

    if (flux_rpc_get_unpack (f, "{s:s}", "members", &members) < 0
        || !(online = idset_decode (members, NULL, 0))) {
        fh_log (b, LOG_WARNING, "bgn: disconnect_hung: Flux's broker.online "
                "group: %s; rank %u left alone", strerror (errno),
                (unsigned)rank);
        flux_future_destroy (f);
        return;
    }
    flux_future_destroy (f);
    if (!idset_test (online, rank)) {
        fh_log (b, LOG_INFO, "bgn: disconnect_hung: rank %u is not online to "
                "Flux: left alone", (unsigned)rank);
        idset_destroy (&online);
        return;
    }
    idset_destroy (&online);
    if (parent < 0) {
        fh_log (b, LOG_WARNING, "bgn: disconnect_hung: the TBON parent of rank "
                "%u is not known", (unsigned)rank);
        return;
    }
    if (tbon_interior (b, rank)) {
        fh_log (b, LOG_NOTICE, "bgn: disconnect_hung: rank %u has TBON "
                "children: left to Flux (disconnecting it would drop its "
                "whole subtree)", (unsigned)rank);
        return;
    }
    if (!(req = flux_rpc_pack (b->h, "overlay.disconnect-subtree",
                             (uint32_t)parent, FLUX_RPC_NORESPONSE, "{s:i}",
                             "rank", (int)rank))) {
        fh_log (b, LOG_ERR, "bgn: overlay.disconnect-subtree: %s",
                strerror (errno));
        return;
    }
    flux_future_destroy (req);
    fh_log (b, LOG_NOTICE, "bgn: asked rank %d to disconnect its TBON child "
            "rank %u, which the BGN fenced (disconnect_hung)", parent,
            (unsigned)rank);
}

static void disconnect_in_flux (struct bgn_broker *b, uint32_t rank)
{
    flux_future_t *f;

    if (!(f = flux_rpc_pack (b->h, "groups.get", 0, 0, "{s:s}", "name",
                             "broker.online"))
        || flux_future_aux_set (f, "rank", (void *)(uintptr_t)rank, NULL) < 0
        || flux_future_then (f, 10., disconnect_online_cb, b) < 0) {
        fh_log (b, LOG_ERR, "bgn: disconnect_hung: groups.get: %s",
                strerror (errno));
        flux_future_destroy (f);
    }
}

static void note_membership (struct bgn_broker *b, const char *payload,
                             size_t len)
{
    json_t *o = payload ? json_loadb (payload, len, 0, NULL) : NULL;
    json_t *fenced = o ? json_object_get (o, "fenced") : NULL;
    size_t i;
    json_t *v;

    if (!o)
        return;
    if (b->membership_event) {
        char *text = json_dumps (o, JSON_COMPACT);
        flux_future_t *f = text ? flux_event_publish (b->h, SERVICE
                                                      ".membership", 0, text)
                                : NULL;
        if (!f)
            fh_log (b, LOG_ERR, "bgn: publishing bgn.membership: %s",
                    strerror (errno));
        flux_future_destroy (f);
        free (text);
    }
    json_array_foreach (fenced, i, v) {
        json_int_t rank = -1;
        const char *reason = "";
        if (json_is_integer (v))
            rank = json_integer_value (v);
        else
            json_unpack (v, "{s:I s?s}", "rank", &rank, "reason", &reason);
        if (rank <= 0 || rank >= (json_int_t)b->size)
            continue;
        if (b->bgn_down)
            idset_set (b->bgn_down, (unsigned)rank);
        /* hung (silent) is torpid to Flux, as the TBON says of a child
         * that stops talking; gone is lost */
        if (b->chan)
            fh_ovsvc_rank_status (b, (uint32_t)rank,
                                  strncmp (reason, "silent", 6) ? 'l' : 't');
        /* hung ("silent for ..."), or gone (a closed link, a leave) */
        if (b->bgn_hung) {
            if (!strncmp (reason, "silent", 6))
                idset_set (b->bgn_hung, (unsigned)rank);
            else
                idset_clear (b->bgn_hung, (unsigned)rank);
        }
        /* while the instance ends, every rank goes: news, not trouble */
        fh_log (b, b->ending ? LOG_INFO : LOG_WARNING,
                "bgn: rank %d (%s) is down on the BGN: %s",
                (int)rank, flux_get_hostbyrank (b->h, (uint32_t)rank), reason);
        /* hung: it stopped answering ("silent for ..."), not gone */
        if (b->disconnect_hung && !strncmp (reason, "silent", 6))
            disconnect_in_flux (b, (uint32_t)rank);
    }
    json_array_foreach (json_object_get (o, "live"), i, v) {
        json_int_t rank = -1;
        if (json_unpack (v, "{s:I}", "rank", &rank) < 0 || rank <= 0
            || rank >= (json_int_t)b->size)
            continue;
        if (b->bgn_down) {
            idset_clear (b->bgn_down, (unsigned)rank);
            idset_clear (b->bgn_hung, (unsigned)rank);
        }
        if (b->chan)
            fh_ovsvc_rank_status (b, (uint32_t)rank, 'f');
    }
    json_decref (o);
}

/* ---- orphan relief ------------------------------------------------------ */

/* This broker was told its TBON has written it off: exit, so that its
 * service manager restarts it and it rejoins.  SIGTERM first (an orderly
 * shutdown, if the broker can still do one).  A broker stuck in shutdown
 * (its TBON parent gone) unloads this module and then waits for ever, so
 * the backstop is a small watchdog process of its own: SIGKILL to the
 * broker 10 seconds on, unless it is gone by then. */
#define EXIT_GRACE 10
static void start_watchdog (struct bgn_broker *b)
{
    pid_t broker = getpid ();
    pid_t pid = fork ();

    if (pid < 0) {
        fh_log (b, LOG_ERR, "bgn: fork for the exit watchdog: %s",
                strerror (errno));
        return;
    }
    if (pid == 0) {   /* async-signal-safe calls only: we are a fork */
        for (int i = 0; i < EXIT_GRACE * 10; i++) {
            struct timespec ts = { 0, 100000000 };
            nanosleep (&ts, NULL);
            if (getppid () != broker)
                _exit (0);   /* it exited by itself */
        }
        kill (broker, SIGKILL);
        _exit (0);
    }
}

/* The word to exit is a claim like any other (its source is only what
 * the peers on the way say), so this broker checks it itself: if rank 0
 * answers over the TBON, Flux has not lost it, and it stays. */
static void exit_check_cb (flux_future_t *f, void *arg)
{
    struct bgn_broker *b = arg;

    if (flux_rpc_get (f, NULL) == 0) {
        fh_log (b, LOG_WARNING, "bgn: refused to exit: rank 0 answers over "
                "the TBON, so this broker is not lost to Flux");
        b->exiting = 0;
        flux_future_destroy (f);
        return;
    }
    flux_future_destroy (f);
    fh_log (b, LOG_CRIT, "bgn: rank 0 says Flux's TBON has lost this broker, "
            "and rank 0 does not answer over the TBON here: exiting, to be "
            "restarted and rejoin (orphan_relief)");
    start_watchdog (b);
    kill (getpid (), SIGTERM);
}

int fh_method_exit (struct bgn_broker *b, msg_t *req,
                    const struct bgn_msg_info *info)
{
    flux_future_t *f;

    if (!info->from_overlay || info->source != 0
        || !(msg_get_rolemask (req) & MSG_ROLE_OWNER))
        return fh_request_fail (b, req, EPERM, "only rank 0's bgn may tell a "
                                "broker to exit");
    fh_respond (b, req, NULL);
    msg_destroy (&req);
    if (b->exiting)
        return 0;
    if (!(f = flux_rpc (b->h, "broker.ping", NULL, 0, 0))
        || flux_future_then (f, 3., exit_check_cb, b) < 0) {
        fh_log (b, LOG_ERR, "bgn: checking the TBON before an exit: %s",
                strerror (errno));
        flux_future_destroy (f);
        return 0;
    }
    b->exiting = 1;
    return 0;
}

static void tell_orphan (struct bgn_broker *b, uint32_t rank)
{
    struct bgn_msg_info info = { .source = b->rank };
    msg_t *req = msg_request_create (SERVICE ".exit", rank, "{}");

    if (!req)
        return;
    msg_set_flags (req, msg_get_flags (req) | MSGFLAG_NORESPONSE);
    msg_set_userid (req, (uint32_t)getuid ());
    msg_set_rolemask (req, MSG_ROLE_OWNER);
    msg_route_enable (req);
    idset_set (b->told, rank);
    fh_log (b, LOG_WARNING, "bgn: rank %u (%s) is lost to Flux's TBON but up on "
            "the BGN: telling it to exit (orphan_relief)", (unsigned)rank,
            flux_get_hostbyrank (b->h, rank));
    fh_route_request (b, req, &info);
}

/* Has Flux lost rank for good?  Flux loses a broker with its TBON link,
 * and with it the whole subtree below it: the top of the lost part of
 * the tree above rank (rank itself, or the highest ancestor Flux lost
 * too) says why.  Up on the BGN, that top broker's own TBON link broke:
 * only it can mend that, by restarting.  Gone from the BGN (crashed, or
 * left), it will not come back as the same broker: its subtree is lost
 * for good.  Hung on the BGN (silent, fenced, possibly only paused),
 * it may answer again, and a pause must not cost its whole subtree:
 * wait. */
static bool lost_for_good (struct bgn_broker *b, const idset_t *online,
                           uint32_t rank)
{
    uint32_t top = rank;

    for (int hops = 0; b->parent && hops < (int)b->size; hops++) {
        int p = b->parent[top];
        if (p <= 0 || idset_test (online, (unsigned)p))
            break;
        top = (uint32_t)p;
    }
    if (top == rank)
        return true;
    return idset_test (b->bgn_down, top) && !idset_test (b->bgn_hung, top);
}

/* Flux's view (broker.online) against the BGN's: a rank that was online,
 * is no more, and is up on the BGN is an orphan, once it has been so for
 * ORPHAN_GRACE seconds (a broker that restarted is up on the BGN at once
 * and needs a moment to rejoin the TBON) and Flux has lost it for good
 * (lost_for_good: not below a broker that only paused). */
#define ORPHAN_GRACE 10.
static void online_cb (flux_future_t *f, void *arg)
{
    struct bgn_broker *b = arg;
    const char *members = NULL;
    idset_t *online = NULL;

    b->online_f = NULL;
    if (flux_rpc_get_unpack (f, "{s:s}", "members", &members) < 0
        || !(online = idset_decode (members, NULL, 0))) {
        flux_future_destroy (f);
        return;
    }
    flux_future_destroy (f);
    double now = monotime_now ();
    for (uint32_t r = 1; r < b->size; r++) {
        if (idset_test (online, r)) {
            idset_set (b->flux_seen, r);
            b->lost_since[r] = 0;
            idset_clear (b->told, r);
            idset_clear (b->held, r);
            continue;
        }
        if (!idset_test (b->flux_seen, r) || idset_test (b->bgn_down, r)
            || idset_test (b->told, r)) {
            b->lost_since[r] = 0;
            continue;
        }
        if (b->lost_since[r] == 0)
            b->lost_since[r] = now;
        else if (now - b->lost_since[r] >= ORPHAN_GRACE) {
            if (lost_for_good (b, online, r))
                tell_orphan (b, r);
            else if (!idset_test (b->held, r)) {
                idset_set (b->held, r);
                fh_log (b, LOG_NOTICE, "bgn: rank %u is lost to Flux below a "
                        "broker the BGN sees hung, not gone: not told to "
                        "exit while that broker may answer again "
                        "(orphan_relief)", (unsigned)r);
            }
        }
    }
    idset_destroy (&online);
}

void fh_orphan_check (struct bgn_broker *b)
{
    flux_future_t *f;

    if (b->rank != 0 || !b->orphan_relief || b->online_f)
        return;
    if (!(f = flux_rpc_pack (b->h, "groups.get", 0, 0, "{s:s}", "name",
                             "broker.online"))
        || flux_future_then (f, 5., online_cb, b) < 0) {
        flux_future_destroy (f);
        return;
    }
    b->online_f = f;
}


/* ---- set-up -------------------------------------------------------------- */

int fh_events_serve (struct bgn_broker *b)
{
    if (b->rank == 0 && b->orphan_relief
        && (!(b->bgn_down = idset_create (b->size))
            || !(b->bgn_hung = idset_create (b->size))
            || !(b->flux_seen = idset_create (b->size))
            || !(b->lost_since = calloc (b->size, sizeof (double)))
            || !(b->told = idset_create (b->size))
            || !(b->held = idset_create (b->size))))
        return -1;
    /* both policies need the TBON's shape: who is below whom */
    if (b->rank == 0 && (b->disconnect_hung || b->orphan_relief)) {
        flux_future_t *f;
        if (!(b->parent = calloc (b->size, sizeof (int))))
            return -1;
        for (uint32_t r = 0; r < b->size; r++)
            b->parent[r] = -1;
        if (!(f = flux_rpc_pack (b->h, "overlay.topology", 0, 0, "{s:i}",
                                 "rank", 0))
            || flux_future_then (f, b->rpc_timeout, fh_topology_cb, b) < 0) {
            flux_future_destroy (f);
            return -1;
        }
    }
    return 0;
}

void fh_events_free (struct bgn_broker *b)
{
    free (b->parent);
    flux_future_destroy (b->online_f);
    idset_destroy (&b->bgn_down);
    idset_destroy (&b->bgn_hung);
    idset_destroy (&b->held);
    idset_destroy (&b->flux_seen);
    free (b->lost_since);
    idset_destroy (&b->told);
}
