/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* fluxovsvc.c: Flux's overlay.* services and the broker state
 * machine's join, quorum and shutdown, with bgn as the broker's overlay
 * (bgn-overlay.so; see fluxhost_int.h for the parts).
 *
 * Flux's callers (groups, the state machine, `flux overlay`) ask the
 * overlay about a tree: each broker's children and their subtrees.  A
 * BGN has no tree whose loss cuts anyone off, so the answers describe
 * the one that matters to them: rank 0 with every other rank as a
 * child of its own.
 *   - overlay.topology: that tree (rank 0), a leaf elsewhere;
 *   - overlay.monitor (groups, which keeps broker.online and
 *     broker.torpid from it): rank 0 streams {rank, status, torpid} when
 *     the BGN fences a rank that went away ("lost") or stopped talking
 *     (torpid, still a member, as the TBON says of a hung child), lifts
 *     it ("full"), or the rank says goodbye ("offline");
 *   - overlay.health: this broker's word and, on rank 0, every rank's;
 *   - overlay.goodbye: a leaving broker tells rank 0, over the BGN, so
 *     that no broker waits on a parent that died: any path will do;
 *   - the state machine: rank 0 posts children-complete when every
 *     other rank has said goodbye or is lost; any other rank leaves
 *     after its children in the BGN's broadcast tree from rank 0 (see
 *     "leaving" below), posting children-none or children-complete;
 *     entering goodbye, a broker tells rank 0 and posts goodbye on its
 *     answer (or at once if it cannot be sent).
 *   - the attributes tbon.level, tbon.maxlevel, tbon.descendants, of
 *     that tree (resource's reduction counts on them);
 *   - overlay.stats-get, overlay.trace: answered in their form (the
 *     trace shows the Flux messages that cross between the broker and
 *     the BGN, fluxchan.c; bgn's own messages are `flux bgn trace`);
 *   - overlay.disconnect-parent (no heartbeat for the heartbeat
 *     module's timeout): the broker leaves as one cut off, with an
 *     error; overlay.disconnect-subtree (flux overlay disconnect): rank
 *     0 tells a rank to do so.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include "fluxhost_int.h"

/* The broker's states (flux-core's state machine numbers them). */
enum {
    FSTATE_CLEANUP = 6,
    FSTATE_SHUTDOWN = 7,
    FSTATE_GOODBYE = 9,
};

static const char *status_word (char st)
{
    switch (st) {
    case 't':
        return "full";   /* and torpid */
    case 'l':
        return "lost";
    case 'o':
        return "offline";
    default:
        return "full";
    }
}

static void post_event_ex (struct bgn_broker *b, const char *event,
                           bool error)
{
    flux_future_t *f = flux_rpc_pack (b->h, "state-machine.post",
                                      FLUX_NODEID_ANY, FLUX_RPC_NORESPONSE,
                                      "{s:s s:b}", "event", event, "error",
                                      error ? 1 : 0);
    if (!f)
        fh_log (b, LOG_ERR, "bgn: posting %s to the state machine: %s", event,
                strerror (errno));
    flux_future_destroy (f);
}

static void post_event (struct bgn_broker *b, const char *event)
{
    post_event_ex (b, event, false);
}

/* Rank 0: the ranks still to say goodbye (neither lost nor offline).
 * A torpid one counts: it may yet answer, as the TBON waits for it. */
static int online_others (struct bgn_broker *b)
{
    int n = 0;

    for (uint32_t r = 1; r < b->size; r++)
        if (b->rank_status[r] == 'f' || b->rank_status[r] == 't')
            n++;
    return n;
}

static void children_check (struct bgn_broker *b);

static void grace_cb (flux_reactor_t *r, flux_watcher_t *w, int revents,
                      void *arg)
{
    struct bgn_broker *b = arg;

    b->grace_over = 1;
    children_check (b);
}

/* Ranks that said goodbye but are still on the BGN (unloading their
 * modules, whose streams to rank 0 end as they go). */
static int leaving_others (struct bgn_broker *b)
{
    int n = 0;

    for (uint32_t r = 1; r < b->size; r++)
        if (b->rank_status[r] == 'o' && !b->left[r])
            n++;
    return n;
}

/* Rank 0 goes on once every other rank said goodbye or is lost, and
 * those that said goodbye left the BGN (or GOODBYE_GRACE passed):
 * leaving first would fail their last requests to rank 0. */
#define GOODBYE_GRACE 2.0

static void children_check (struct bgn_broker *b)
{
    if (b->rank != 0 || b->broker_state != FSTATE_SHUTDOWN
        || b->children_posted || online_others (b) > 0)
        return;
    if (!b->grace_over && leaving_others (b) > 0) {
        if (!b->grace_w
            && (b->grace_w = flux_timer_watcher_create (b->r, GOODBYE_GRACE,
                                                        0., grace_cb, b)))
            flux_watcher_start (b->grace_w);
        if (b->grace_w)
            return;
    }
    b->children_posted = 1;
    fh_log (b, LOG_DEBUG, "bgn: every other rank said goodbye or is lost");
    post_event (b, "children-complete");
}

/* ---- overlay.health ----------------------------------------------------- */

/* Our subtree's health in the TBON's words.  To Flux the tree has depth
 * one, so every other rank's subtree is itself: full.  Rank 0's is its
 * children's, as the TBON rules: degraded if one is lost, partial if one
 * is offline (said goodbye) or has not joined yet, else full.  (bgn's
 * own health word does not know a goodbye from a crash.) */
static const char *own_status (struct bgn_broker *b)
{
    const char *word = "full";

    if (b->rank != 0 || !b->rank_status)
        return word;
    for (uint32_t r = 1; r < b->size; r++) {
        if (b->rank_status[r] == 'l')
            return "degraded";
        if (b->rank_status[r] == 'o')
            word = "partial";
    }
    /* a rank that never joined is not fenced: bgn says "partial" (still
     * forming) until every rank reported ready, as the TBON's children
     * are offline until they connect */
    if (b->ovl && b->ovl->health && !strcmp (b->ovl->health (b->ovl_state),
                                             "partial"))
        word = "partial";
    return word;
}

static int health_respond (struct bgn_broker *b, const flux_msg_t *msg)
{
    json_t *children = json_array ();
    double now = monotime_now ();
    int rc = -1;

    if (!children)
        goto done;
    for (uint32_t r = 1; b->rank == 0 && r < b->size; r++) {
        json_t *e = json_pack ("{s:i s:s s:f}", "rank", (int)r, "status",
                               status_word (b->rank_status[r]), "duration",
                               now - b->status_since[r]);
        /* why a child is not online, in the TBON's words (flux overlay
         * errors prints them) */
        const char *why = b->rank_status[r] == 'o' ? "administrative shutdown"
                          : b->rank_status[r] != 'l' ? NULL
                          : b->dropped[r] ? "administrative disconnect"
                                          : "lost connection";
        if (e && why)
            json_object_set_new (e, "error", json_string (why));
        if (!e || json_array_append_new (children, e) < 0)
            goto done;
    }
    const char *word = own_status (b);
    if (!b->own_word || strcmp (b->own_word, word) != 0) {
        b->own_since = b->own_word ? now : b->started_at;
        b->own_word = word;
    }
    rc = flux_respond_pack (b->h, msg, "{s:i s:s s:f s:O}", "rank",
                            (int)b->rank, "status", word, "duration",
                            now - b->own_since, "children", children);
done:
    json_decref (children);
    return rc;
}

static void health_cb (flux_t *h, flux_msg_handler_t *mh,
                       const flux_msg_t *msg, void *arg)
{
    struct bgn_broker *b = arg;

    if (flux_msg_is_streaming (msg)
        && flux_msglist_append (b->healths, msg) < 0)
        goto error;
    if (health_respond (b, msg) < 0)
        goto error;
    return;
error:
    flux_respond_error (h, msg, errno, NULL);
}

static void health_respond_all (struct bgn_broker *b)
{
    for (const flux_msg_t *m = flux_msglist_first (b->healths); m;
         m = flux_msglist_next (b->healths))
        if (health_respond (b, m) < 0)
            fh_log (b, LOG_ERR, "bgn: overlay.health: %s", strerror (errno));
}

/* ---- overlay.monitor ---------------------------------------------------- */

static void monitor_respond (struct bgn_broker *b, const flux_msg_t *msg,
                             uint32_t rank)
{
    if (flux_respond_pack (b->h, msg, "{s:i s:s s:b}", "rank", (int)rank,
                           "status", status_word (b->rank_status[rank]),
                           "torpid", b->rank_status[rank] == 't') < 0)
        fh_log (b, LOG_ERR, "bgn: overlay.monitor: %s", strerror (errno));
}

/* Every second (the host's sweep): bgn's own word moves without a
 * membership change (a rank that joins is not news of a fence); tell
 * the health watchers when our word changed. */
void fh_ovsvc_health_check (struct bgn_broker *b)
{
    if (b->rank == 0 && b->healths && b->own_word
        && strcmp (b->own_word, own_status (b)) != 0)
        health_respond_all (b);
}

void fh_ovsvc_rank_status (struct bgn_broker *b, uint32_t rank, char st)
{
    if (b->rank != 0 || !b->rank_status || rank == 0 || rank >= b->size)
        return;
    if (st == 'l' && b->rank_status[rank] == 'o' && !b->left[rank]) {
        b->left[rank] = 1;   /* said goodbye, now gone from the BGN */
        children_check (b);
        return;
    }
    if (st == 'f')
        b->left[rank] = b->dropped[rank] = 0;
    /* a rank that said goodbye stays offline when its links then go */
    if (b->rank_status[rank] == st || (b->rank_status[rank] == 'o'
                                       && st != 'f'))
        return;
    b->rank_status[rank] = st;
    b->status_since[rank] = monotime_now ();
    for (const flux_msg_t *m = flux_msglist_first (b->monitors); m;
         m = flux_msglist_next (b->monitors))
        monitor_respond (b, m, rank);
    health_respond_all (b);
    children_check (b);
}

/* The first answers: every rank not full (the caller assumes full,
 * having asked for the topology first). */
static void monitor_cb (flux_t *h, flux_msg_handler_t *mh,
                        const flux_msg_t *msg, void *arg)
{
    struct bgn_broker *b = arg;

    if (!flux_msg_is_streaming (msg)) {
        flux_respond_error (h, msg, EPROTO, NULL);
        return;
    }
    if (flux_msglist_append (b->monitors, msg) < 0) {
        flux_respond_error (h, msg, errno, NULL);
        return;
    }
    for (uint32_t r = 1; b->rank == 0 && r < b->size; r++)
        if (b->rank_status[r] != 'f')
            monitor_respond (b, msg, r);
}

/* ---- overlay.topology ------------------------------------------------- */

static void topology_cb (flux_t *h, flux_msg_handler_t *mh,
                         const flux_msg_t *msg, void *arg)
{
    struct bgn_broker *b = arg;
    int rank = (int)b->rank;
    json_t *children = json_array ();

    if (flux_request_unpack (msg, NULL, "{s?i}", "rank", &rank) < 0)
        goto error;
    if (rank < 0 || (uint32_t)rank >= b->size) {
        errno = EINVAL;
        goto error;
    }
    if (!children)
        goto error;
    for (uint32_t r = 1; rank == 0 && r < b->size; r++) {
        json_t *e = json_pack ("{s:i s:i s:[]}", "rank", (int)r, "size", 1,
                               "children");
        if (!e || json_array_append_new (children, e) < 0)
            goto error;
    }
    if (flux_respond_pack (h, msg, "{s:i s:i s:O}", "rank", rank, "size",
                           rank == 0 ? (int)b->size : 1, "children",
                           children) < 0)
        fh_log (b, LOG_ERR, "bgn: overlay.topology: %s", strerror (errno));
    json_decref (children);
    return;
error:
    json_decref (children);
    flux_respond_error (h, msg, errno, NULL);
}

/* ---- goodbye ------------------------------------------------------------ */

/* The rank a request to this module came from over the BGN: the route
 * id below the top one (which the broker pushed on its way here), that
 * only the overlay writes; ENOENT for a local request. */
static int request_origin (const flux_msg_t *msg, uint32_t *rank)
{
    flux_msg_t *cpy = flux_msg_copy (msg, false);
    int rc = -1;

    if (cpy && flux_msg_route_delete_last (cpy) == 0)
        rc = fh_chan_origin (cpy, rank);
    flux_msg_destroy (cpy);
    if (rc < 0)
        errno = ENOENT;
    return rc;
}

/* Rank 0: a broker leaving on purpose (its rank is the request's). */
static void goodbye_cb (flux_t *h, flux_msg_handler_t *mh,
                        const flux_msg_t *msg, void *arg)
{
    struct bgn_broker *b = arg;
    uint32_t origin;
    int rank = -1;

    if (b->rank != 0) {
        flux_respond_error (h, msg, EPROTO, "overlay.goodbye is for rank 0");
        return;
    }
    /* a broker says goodbye for itself only: the rank it names is the
     * one that sent it over the BGN */
    if (flux_request_unpack (msg, NULL, "{s:i}", "rank", &rank) < 0
        || request_origin (msg, &origin) < 0
        || rank <= 0 || (uint32_t)rank != origin) {
        char *routes = flux_msg_route_string (msg);
        fh_log (b, LOG_DEBUG, "bgn: goodbye refused: rank %d, routes %s",
                rank, routes ? routes : "none");
        free (routes);
        flux_respond_error (h, msg, EPERM, "overlay.goodbye: a broker says "
                            "goodbye for itself, over the BGN");
        return;
    }
    fh_ovsvc_rank_status (b, (uint32_t)rank, 'o');
    if (flux_respond (h, msg, NULL) < 0)
        fh_log (b, LOG_ERR, "bgn: overlay.goodbye: %s", strerror (errno));
}

static void say_goodbye (struct bgn_broker *b);
static void goodbye_over (struct bgn_broker *b, bool error);

/* A goodbye that failed (its path went as the brokers on it left) is
 * said again, a path at a time, each try answered within GOODBYE_WAIT,
 * until GOODBYE_BUDGET seconds have passed since the first: this broker
 * leaves the BGN only once rank 0 knows, or cannot be told.  Rank 0 out
 * of reach here (EHOSTUNREACH: fenced, or no path left) ends it at once:
 * rank 0 that is still there sees this broker go from the BGN, which is
 * as good as a goodbye at the end. */
#define GOODBYE_WAIT 2.0
#define GOODBYE_BUDGET 10.0

static void goodbye_retry_cb (flux_reactor_t *r, flux_watcher_t *w,
                              int revents, void *arg)
{
    flux_watcher_destroy (w);
    say_goodbye (arg);
}

static void goodbye_done (flux_future_t *f, void *arg)
{
    struct bgn_broker *b = arg;
    flux_watcher_t *w;

    if (flux_future_get (f, NULL) == 0) {
        goodbye_over (b, false);
        return;
    }
    if (errno != EHOSTUNREACH
        && monotime_now () - b->goodbye_first + GOODBYE_WAIT < GOODBYE_BUDGET
        && (w = flux_timer_watcher_create (b->r, 0.5, 0., goodbye_retry_cb,
                                           b))) {
        flux_watcher_start (w);
        return;
    }
    /* rank 0 never heard it: this broker ends with an error, as a TBON
     * broker that loses its parent before its goodbye does */
    fh_log (b, LOG_WARNING, "bgn: goodbye to rank 0: %s (exit code 1)",
            flux_future_error_string (f) ? flux_future_error_string (f)
                                         : strerror (errno));
    goodbye_over (b, true);
}

static void say_goodbye (struct bgn_broker *b)
{
    if (b->rank == 0)
        return;   /* the state machine posts it there */
    if (b->cut_off) {
        goodbye_over (b, false);   /* no word: rank 0 sees it lost */
        return;
    }
    if (b->goodbye_first == 0)
        b->goodbye_first = monotime_now ();
    flux_future_destroy (b->goodbye_f);
    if (!(b->goodbye_f = flux_rpc_pack (b->h, "overlay.goodbye", 0, 0,
                                        "{s:i}", "rank", (int)b->rank))
        || flux_future_then (b->goodbye_f, GOODBYE_WAIT, goodbye_done, b) < 0) {
        fh_log (b, LOG_ERR, "bgn: goodbye to rank 0: %s", strerror (errno));
        goodbye_over (b, false);
    }
}

/* ---- leaving after the children ----------------------------------------
 *
 * The TBON ends an instance from the leaves up: a broker runs rc3 and
 * says goodbye only once its children have said theirs, so the path to
 * rank 0 outlives everyone below it.  With every rank rank 0's child to
 * Flux, all brokers would run rc3 at once and leave in any order: a
 * broker whose BGN neighbours had all left before it found no path for
 * its goodbye (and exited 1).  So each rank but 0 waits, in shutdown,
 * for its children in the BGN's broadcast tree from rank 0 (each a BGN
 * neighbour, so a path of brokers still there runs from every rank to
 * rank 0): it asks each for bgn.leave-wait, which the child answers once
 * its own goodbye is over.  A child that is gone fails the request at
 * once (no route); one that says nothing is not waited for past
 * LEAVE_WAIT_MAX. */
#define LEAVE_WAIT_MAX 60.
#define LEAVE_ASKERS_MAX 16     /* a rank has one tree parent */

static void goodbye_over (struct bgn_broker *b, bool error)
{
    msg_t *req;

    b->goodbye_over = 1;
    while ((req = zlistx_detach (b->leave_askers, NULL))) {
        fh_respond (b, req, NULL);
        msg_destroy (&req);
    }
    post_event_ex (b, "goodbye", error);
}

/* bgn.leave-wait, a host method: its answer says only that this broker's
 * goodbye is over, so any broker may ask (the parent's role may have been
 * capped on the way). */
int fh_method_leave_wait (struct bgn_broker *b, msg_t *req,
                          const struct bgn_msg_info *info)
{
    (void)info;
    if (b->goodbye_over || !b->leave_askers
        || zlistx_size (b->leave_askers) >= LEAVE_ASKERS_MAX
        || !zlistx_add_end (b->leave_askers, req)) {
        fh_respond (b, req, NULL);
        msg_destroy (&req);
    }
    return 0;
}

static void asker_free (void **item)
{
    msg_t *req = *item;

    msg_destroy (&req);
    *item = NULL;
}

static void children_left (struct bgn_broker *b, bool any)
{
    fh_log (b, LOG_DEBUG, "bgn: the children in the broadcast tree are "
            "gone: leaving");
    post_event (b, any ? "children-complete" : "children-none");
}

static void child_left_cb (flux_future_t *f, void *arg)
{
    struct bgn_broker *b = arg;
    void *handle = zlistx_find (b->leave_waits, f);

    if (flux_rpc_get (f, NULL) < 0) {
        if (errno == ETIMEDOUT)
            fh_log (b, LOG_WARNING, "bgn: a child in the broadcast tree did "
                    "not leave within %.0fs; leaving without it",
                    LEAVE_WAIT_MAX);
        else
            fh_log (b, LOG_DEBUG, "bgn: bgn.leave-wait: %s",
                    flux_future_error_string (f) ? flux_future_error_string (f)
                                                 : strerror (errno));
    }
    if (handle)
        zlistx_delete (b->leave_waits, handle);   /* destroys f */
    else
        flux_future_destroy (f);
    if (zlistx_size (b->leave_waits) == 0)
        children_left (b, true);
}

/* This rank's children in the broadcast tree, or -1 with errno. */
static int tree_children (struct bgn_broker *b, uint32_t *out, int max)
{
    struct bgn_topo *t = bgn_topo_create ("bgn", b->size);
    int n;

    if (!t)
        return -1;
    n = bgn_topo_bcast_children (t, 0, b->rank, out, max);
    bgn_topo_destroy (&t);
    return n;
}

static void leave_after_children (struct bgn_broker *b)
{
    uint32_t kids[64];
    int n = tree_children (b, kids, 64);

    for (int i = 0; i < n; i++) {
        flux_future_t *f = flux_rpc (b->h, SERVICE ".leave-wait", NULL,
                                     kids[i], 0);
        if (!f || flux_future_then (f, LEAVE_WAIT_MAX, child_left_cb, b) < 0
            || !zlistx_add_end (b->leave_waits, f)) {
            flux_future_destroy (f);
            fh_log (b, LOG_WARNING, "bgn: asking rank %u when it leaves: %s",
                    (unsigned)kids[i], strerror (errno));
        }
    }
    if (zlistx_size (b->leave_waits) == 0)
        children_left (b, false);
}

/* ---- rank 0 at shutdown: the ranks that did not say goodbye --------- */

/* A rank that left without a word reaching rank 0 (its goodbye and its
 * leave went by brokers that were leaving too) is asked for its state;
 * one that does not answer is gone. */
#define PROBE_PERIOD 3.
#define PROBE_TIMEOUT 5.
#define PROBE_PATIENCE 4     /* probes unanswered in time: gone */

static void probe_cb (flux_future_t *f, void *arg)
{
    struct bgn_broker *b = arg;
    uint32_t rank = (uint32_t)(uintptr_t)flux_future_aux_get (f, "rank");

    bool gone = false;

    if (flux_future_get (f, NULL) < 0 && rank < b->size) {
        /* unreachable: gone; no answer in time: gone after a few */
        gone = errno != ETIMEDOUT || ++b->probe_silent[rank] >= PROBE_PATIENCE;
    }
    else if (rank < b->size)
        b->probe_silent[rank] = 0;
    if (gone && b->rank_status[rank] != 'o' && b->rank_status[rank] != 'l') {
        fh_log (b, LOG_INFO, "bgn: rank %u left without a goodbye reaching "
                "rank 0 and does not answer (%s): taken as gone",
                (unsigned)rank, strerror (errno));
        fh_ovsvc_rank_status (b, rank, 'l');
    }
    if (rank < b->size)
        b->probing[rank] = 0;
    void *handle = zlistx_find (b->probes, f);
    if (handle)
        zlistx_delete (b->probes, handle);   /* destroys f */
    else
        flux_future_destroy (f);
}

static void probe_tick (flux_reactor_t *r, flux_watcher_t *w, int revents,
                        void *arg)
{
    struct bgn_broker *b = arg;
    flux_future_t *f;

    if (b->children_posted) {
        flux_watcher_stop (w);
        return;
    }
    for (uint32_t rank = 1; rank < b->size; rank++) {
        if ((b->rank_status[rank] != 'f' && b->rank_status[rank] != 't')
            || b->probing[rank])
            continue;
        if (!(f = flux_rpc (b->h, "state-machine.get", NULL, rank, 0))
            || flux_future_aux_set (f, "rank", (void *)(uintptr_t)rank,
                                    NULL) < 0
            || flux_future_then (f, PROBE_TIMEOUT, probe_cb, b) < 0
            || !zlistx_add_end (b->probes, f)) {
            flux_future_destroy (f);
            continue;
        }
        b->probing[rank] = 1;
    }
}

static void probe_start (struct bgn_broker *b)
{
    if (b->probe_w || !(b->probing = calloc (b->size, 1))
        || !(b->probe_silent = calloc (b->size, sizeof (int)))
        || !(b->probes = zlistx_new ())
        || !(b->probe_w = flux_timer_watcher_create (b->r, PROBE_PERIOD,
                                                     PROBE_PERIOD, probe_tick,
                                                     b)))
        return;
    zlistx_set_destructor (b->probes, fh_future_free);
    flux_watcher_start (b->probe_w);
}

/* ---- the broker's states ---------------------------------------------- */

static void ovstate_cb (flux_future_t *f, void *arg)
{
    struct bgn_broker *b = arg;
    int state;

    if (flux_rpc_get_unpack (f, "{s:i}", "state", &state) < 0) {
        if (errno != ENODATA)
            fh_log (b, LOG_ERR, "bgn: state-machine.monitor: %s",
                    strerror (errno));
        return;
    }
    flux_future_reset (f);
    if (state == b->broker_state)
        return;
    fh_log (b, LOG_DEBUG, "bgn: the broker is in state %d", state);
    b->broker_state = state;
    if (state >= FSTATE_CLEANUP && b->ovl && b->ovl->ending && !b->ending) {
        b->ending = 1;
        b->ovl->ending (b->ovl_state);
    }
    if (state == FSTATE_SHUTDOWN) {
        if (b->rank != 0)
            leave_after_children (b);
        else if (online_others (b) == 0) {
            b->children_posted = 1;
            post_event (b, "children-none");
        }
        else
            probe_start (b);
    }
    if (state == FSTATE_GOODBYE)
        say_goodbye (b);
}

/* ---- the rest ------------------------------------------------------------ */

static void stats_cb (flux_t *h, flux_msg_handler_t *mh,
                      const flux_msg_t *msg, void *arg)
{
    struct bgn_broker *b = arg;
    int waiting = 0;

    for (struct client_req *c = zhashx_first (b->clients); c;
         c = zhashx_next (b->clients))
        waiting += c->via_chan;
    if (flux_respond_pack (h, msg, "{s:i s:i s:i s:i s:i s:{s:i s:i}}",
                           "child-count", b->rank == 0 ? (int)b->size - 1 : 0,
                           "child-connected", b->rank == 0
                               ? online_others (b) : 0,
                           "parent-count", b->rank == 0 ? 0 : 1,
                           "parent-rpc", waiting,
                           "child-rpc", (int)zhashx_size (b->forwards),
                           "interthread", "sendq", 0, "recvq", 0) < 0)
        fh_log (b, LOG_ERR, "bgn: overlay.stats-get: %s", strerror (errno));
}

static void trace_cb (flux_t *h, flux_msg_handler_t *mh,
                      const flux_msg_t *msg, void *arg)
{
    struct bgn_broker *b = arg;

    if (!flux_msg_is_streaming (msg)
        || flux_msglist_append (b->traces, msg) < 0)
        flux_respond_error (h, msg, EPROTO, "overlay.trace is a stream; "
                            "bgn's messages: flux bgn trace");
}

/* overlay.disconnect-subtree (flux overlay disconnect): rank 0 tells a
 * child, which to Flux is a subtree of one, to leave as one cut off (its
 * overlay.disconnect-parent, over the BGN) and counts it lost at once,
 * as the TBON does with a child it drops. */
static void disconnect_subtree_cb (flux_t *h, flux_msg_handler_t *mh,
                                   const flux_msg_t *msg, void *arg)
{
    struct bgn_broker *b = arg;
    char why[128];
    flux_future_t *f;
    int rank;

    if (flux_request_unpack (msg, NULL, "{s:i}", "rank", &rank) < 0)
        goto error;
    if (b->rank != 0 || rank <= 0 || (uint32_t)rank >= b->size) {
        flux_respond_error (h, msg, ENOENT, "requested rank is not this "
                            "broker's direct child");
        return;
    }
    if (b->rank_status[rank] != 'f' && b->rank_status[rank] != 't') {
        snprintf (why, sizeof (why), "rank %d is already %s", rank,
                  status_word (b->rank_status[rank]));
        flux_respond_error (h, msg, EINVAL, why);
        return;
    }
    if (!(f = flux_rpc_pack (h, "overlay.disconnect-parent", (uint32_t)rank,
                             FLUX_RPC_NORESPONSE, "{s:s}", "reason",
                             "disconnected by rank 0 (flux overlay "
                             "disconnect)")))
        goto error;
    flux_future_destroy (f);
    fh_log (b, LOG_ERR, "bgn: rank %d disconnected by request", rank);
    b->dropped[rank] = 1;
    fh_ovsvc_rank_status (b, (uint32_t)rank, 'l');
    if (flux_respond (h, msg, NULL) < 0)
        fh_log (b, LOG_ERR, "bgn: overlay.disconnect-subtree: %s",
                strerror (errno));
    return;
error:
    flux_respond_error (h, msg, errno, NULL);
}

/* overlay.disconnect-parent: the heartbeat module heard no heartbeat
 * for its timeout.  This broker then leaves the instance as one cut off
 * from it, with an error, as a TBON broker that drops its parent does,
 * and says no goodbye: rank 0 sees it lost. */
static void disconnect_parent_cb (flux_t *h, flux_msg_handler_t *mh,
                                  const flux_msg_t *msg, void *arg)
{
    struct bgn_broker *b = arg;
    const char *reason;

    if (flux_request_unpack (msg, NULL, "{s:s}", "reason", &reason) < 0) {
        fh_log (b, LOG_ERR, "bgn: overlay.disconnect-parent: %s",
                strerror (errno));
        return;
    }
    if (b->rank == 0 || b->cut_off)
        return;
    fh_log (b, LOG_CRIT, "disconnecting: %s", reason);
    b->cut_off = 1;
    post_event_ex (b, "parent-fail", true);
}

static void ov_disconnect_cb (flux_t *h, flux_msg_handler_t *mh,
                              const flux_msg_t *msg, void *arg)
{
    struct bgn_broker *b = arg;

    flux_msglist_disconnect (b->monitors, msg);
    flux_msglist_disconnect (b->healths, msg);
    flux_msglist_disconnect (b->traces, msg);
}

static const struct flux_msg_handler_spec htab[] = {
    { FLUX_MSGTYPE_REQUEST, "overlay.topology", topology_cb, FLUX_ROLE_USER },
    { FLUX_MSGTYPE_REQUEST, "overlay.monitor", monitor_cb, 0 },
    { FLUX_MSGTYPE_REQUEST, "overlay.health", health_cb, FLUX_ROLE_USER },
    { FLUX_MSGTYPE_REQUEST, "overlay.goodbye", goodbye_cb, 0 },
    { FLUX_MSGTYPE_REQUEST, "overlay.stats-get", stats_cb, FLUX_ROLE_USER },
    { FLUX_MSGTYPE_REQUEST, "overlay.trace", trace_cb, 0 },
    { FLUX_MSGTYPE_REQUEST, "overlay.disconnect-subtree",
      disconnect_subtree_cb, 0 },
    { FLUX_MSGTYPE_REQUEST, "overlay.disconnect-parent",
      disconnect_parent_cb, 0 },
    { FLUX_MSGTYPE_REQUEST, "overlay.disconnect", ov_disconnect_cb, 0 },
    FLUX_MSGHANDLER_TABLE_END,
};

/* The tree's shape in the broker's attributes, which Flux's modules
 * read (resource's reduction waits for tbon.descendants reports). */
static int set_tree_attrs (struct bgn_broker *b)
{
    char level[16], maxlevel[16], desc[16];

    snprintf (level, sizeof (level), "%d", b->rank == 0 ? 0 : 1);
    snprintf (maxlevel, sizeof (maxlevel), "%d", b->size > 1 ? 1 : 0);
    snprintf (desc, sizeof (desc), "%u", b->rank == 0 ? b->size - 1 : 0);
    if (flux_attr_set (b->h, "tbon.level", level) < 0
        || flux_attr_set (b->h, "tbon.maxlevel", maxlevel) < 0
        || flux_attr_set (b->h, "tbon.descendants", desc) < 0) {
        fh_log (b, LOG_ERR, "bgn: setting the tbon.* attributes: %s",
                strerror (errno));
        return -1;
    }
    return 0;
}

int fh_ovsvc_start (struct bgn_broker *b)
{
    b->started_at = monotime_now ();
    b->broker_state = -1;
    if (!(b->monitors = flux_msglist_create ())
        || !(b->healths = flux_msglist_create ())
        || !(b->traces = flux_msglist_create ())
        || !(b->leave_askers = zlistx_new ())
        || !(b->leave_waits = zlistx_new ()))
        return -1;
    zlistx_set_destructor (b->leave_askers, asker_free);
    zlistx_set_destructor (b->leave_waits, fh_future_free);
    if (b->rank == 0) {
        if (!(b->rank_status = malloc (b->size))
            || !(b->left = calloc (b->size, 1))
            || !(b->dropped = calloc (b->size, 1))
            || !(b->status_since = calloc (b->size, sizeof (double))))
            return -1;
        memset (b->rank_status, 'f', b->size);
        for (uint32_t r = 0; r < b->size; r++)
            b->status_since[r] = b->started_at;
    }
    if (set_tree_attrs (b) < 0
        || flux_msg_handler_addvec (b->h, htab, b, &b->ov_handlers) < 0)
        return -1;
    if (!(b->ovstate_f = flux_rpc_pack (b->h, "state-machine.monitor",
                                        FLUX_NODEID_ANY, FLUX_RPC_STREAMING,
                                        "{s:i}", "final", FSTATE_GOODBYE))
        || flux_future_then (b->ovstate_f, -1., ovstate_cb, b) < 0)
        return -1;
    return 0;
}


void fh_ovsvc_free (struct bgn_broker *b)
{
    flux_msg_handler_delvec (b->ov_handlers);
    b->ov_handlers = NULL;
    flux_future_destroy (b->ovstate_f);
    flux_future_destroy (b->goodbye_f);
    flux_watcher_destroy (b->probe_w);
    b->probe_w = NULL;
    zlistx_destroy (&b->probes);   /* the probes still in flight */
    free (b->probing);
    b->probing = NULL;
    free (b->probe_silent);
    b->probe_silent = NULL;
    /* the streams end with the broker, as the TBON's do: unanswered */
    flux_msglist_destroy (b->monitors);
    flux_msglist_destroy (b->healths);
    flux_msglist_destroy (b->traces);
    b->monitors = b->healths = b->traces = NULL;
    zlistx_destroy (&b->leave_askers);   /* unanswered: the parent's
                                            deadline ends its wait */
    zlistx_destroy (&b->leave_waits);
    free (b->rank_status);
    free (b->left);
    free (b->dropped);
    b->dropped = NULL;
    b->left = NULL;
    flux_watcher_destroy (b->grace_w);
    b->grace_w = NULL;
    free (b->status_since);
    b->rank_status = NULL;
    b->status_since = NULL;
}
