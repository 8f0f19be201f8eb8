/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* tracker.c: requests this broker injected (see tracker.h).
 *
 * Keyed by a 64-bit hash of "client:matchtag"; the full key is kept to
 * tell a hash collision from a match (a collision only means one request
 * is not tracked: it then times out at its client as any lost request).
 * Each entry may keep a copy of the request as it went out (its wire
 * frame), to send it again when a rank that may have held it dies; a
 * request sent again stays tracked after its answer, so that the answer
 * to another copy is dropped here and its client sees one.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <malloc.h>

#include "src/common/libutil/idmap.h"
#include "body.h"
#include "overlay.h"
#include "ovlog.h"
#include "ovsign.h"
#include "route.h"
#include "tracker.h"

#define TRACKER_MAX 100000      /* requests tracked at once, at most */
#define SWEEP_PERIOD 1.0
#define RETRY_MAX 3              /* times a request is sent again */
#define WAIT_MAX 1024            /* requests waiting for a rejoin, at most */

/* A request waiting for its rank's rejoin (tracker_wait), in a FIFO:
 * every one waits as long, so the first is the first due. */
struct waiting {
    struct waiting *next;
    msg_t *req;
    uint32_t dest;
    bool sign;                   /* signed when it goes (overlay_send) */
    double deadline;
    size_t cost;                 /* the entry's and the request's heap */
};

struct tracked {
    msg_t *req;              /* header copy (no payload), for the error */
    uint32_t dest;
    double expires;
    int failed;              /* an error went back: drop a late response */
    int answered;            /* sent again and answered: drop the others */
    int retries;
    double resent_at;        /* when it was last sent again */
    int out;                 /* copies sent and not reported undelivered */
    struct frame *wire;      /* the request as sent, to send it again */
    uint8_t flags;           /* ... with these envelope flags */
    uint16_t stamp;          /* ... and this stamp (the incarnation meant) */
    size_t cost;             /* wire's heap */
    size_t hcost;            /* req's heap */
    char key[MSG_MAX_ROUTEID + 16];
};

static void sweep_cb (void *arg);
static void wait_cb (void *arg);

int tracker_init (struct overlay *ov)
{
    if (!(ov->tracker.map = idmap_create (sizeof (struct tracked)))
        || !(ov->tracker.sweep = ovtimer_create (ov->timers, sweep_cb, ov))
        || !(ov->tracker.wait_timer = ovtimer_create (ov->timers, wait_cb,
                                                      ov)))
        return -1;
    return 0;
}

static void waiting_free (struct overlay *ov, struct waiting *w)
{
    ov->tracker.wait_bytes -= w->cost;
    route_set_waiting (ov, ov->tracker.wait_bytes);
    ov->tracker.nwaiting--;
    msg_destroy (&w->req);
    free (w);
}

static void drop_wire (struct overlay *ov, struct tracked *t)
{
    if (t->wire) {
        ov->tracker.bytes -= t->cost;
        frame_decref (&t->wire);
        t->cost = 0;
    }
}

static void drop_header (struct overlay *ov, struct tracked *t)
{
    ov->tracker.entry_bytes -= t->hcost;
    t->hcost = 0;
    msg_destroy (&t->req);
}

void tracker_fini (struct overlay *ov)
{
    struct idmap_iter it;

    if (ov->tracker.map) {
        for (struct tracked *t = idmap_first (ov->tracker.map, &it); t;
             t = idmap_next (&it)) {
            drop_header (ov, t);
            drop_wire (ov, t);
        }
    }
    idmap_destroy (&ov->tracker.map);
    ovtimer_destroy (&ov->tracker.sweep);
    while (ov->tracker.wait_head) {
        struct waiting *w = ov->tracker.wait_head;
        ov->tracker.wait_head = w->next;
        waiting_free (ov, w);
    }
    ov->tracker.wait_tail = NULL;
    ovtimer_destroy (&ov->tracker.wait_timer);
}

static int tracked_key (const msg_t *msg, char *key, size_t len, uint64_t *hash)
{
    const char *client = msg_route_last (msg);
    uint64_t h = 14695981039346656037ULL;   /* FNV-1a */

    if (!client || msg_route_count (msg) < 1)
        return -1;
    snprintf (key, len, "%s:%u", client, (unsigned)msg_get_matchtag (msg));
    for (const char *s = key; *s; s++) {
        h ^= (uint8_t)*s;
        h *= 1099511628211ULL;
    }
    *hash = h ? h : 1;
    return 0;
}

size_t tracker_memory (struct overlay *ov)
{
    return idmap_memory (ov->tracker.map) + ov->tracker.entry_bytes;
}

/* Is there room for one more entry (its header copy 'hcost') within
 * TRACKER_MAX and overlay.tracker_bytes?  If not, say why (counted,
 * logged: its client is not told at once if its rank dies). */
static bool room_for_entry (struct overlay *ov, uint32_t dest, size_t hcost)
{
    const char *why = NULL;

    if (idmap_size (ov->tracker.map) >= TRACKER_MAX)
        why = "100000 requests tracked already";
    else if (tracker_memory (ov) + idmap_growth (ov->tracker.map) + hcost
             > (size_t)ov->cfg.tracker_bytes)
        why = "overlay.tracker_bytes reached";
    if (!why)
        return true;
    ov->tracker.untracked++;
    ovl_log_limited (ov, LOG_WARNING, "a request to rank %u is not tracked "
                     "(%s): if its rank goes down, its client waits for its "
                     "deadline", (unsigned)dest, why);
    return false;
}

uint64_t tracker_add (struct overlay *ov, const msg_t *req, uint32_t dest)
{
    char key[MSG_MAX_ROUTEID + 16];
    uint64_t hash;
    struct tracked *t;
    msg_t *copy;
    size_t hcost;
    int created;

    if (msg_get_type (req) != MSGTYPE_REQUEST
        || (msg_get_flags (req) & MSGFLAG_NORESPONSE) || dest >= ov->size
        || tracked_key (req, key, sizeof (key), &hash) < 0
        || !(copy = msg_copy (req)))
        return 0;
    msg_set_payload (copy, NULL, 0);
    hcost = msg_footprint (copy);
    if ((!idmap_get (ov->tracker.map, hash)
         && !room_for_entry (ov, dest, hcost))
        || !(t = idmap_put (ov->tracker.map, hash, &created))) {
        msg_destroy (&copy);
        return 0;
    }
    if (!created) {
        drop_header (ov, t);     /* a client reused a matchtag */
        drop_wire (ov, t);
        if (t->answered)
            ov->tracker.answered--;
    }
    t->req = copy;
    t->hcost = hcost;
    ov->tracker.entry_bytes += hcost;
    t->dest = dest;
    t->failed = 0;
    t->answered = 0;
    t->retries = 0;
    t->out = 1;
    t->expires = ovl_now (ov) + ov->cfg.rpc_timeout * 2 + 5;
    snprintf (t->key, sizeof (t->key), "%s", key);
    if (!ovtimer_armed (ov->tracker.sweep))
        ovtimer_arm (ov->tracker.sweep, ovl_now (ov) + SWEEP_PERIOD);
    return hash;
}

void tracker_keep (struct overlay *ov, uint64_t key, const struct frame *wire,
                   uint8_t flags, uint16_t stamp)
{
    struct tracked *t = idmap_get (ov->tracker.map, key);
    struct frame *f;

    /* a client's request only (its id under our rank): the broker's own
     * count their matchtags from 1 again after a restart (dedup.c) */
    if (!t || ov->cfg.retry_bytes == 0
        || (msg_get_flags (t->req) & MSGFLAG_STREAMING)
        || msg_route_count (t->req) < 2)
        return;
    f = frame_create (frame_data (wire), frame_size (wire));
    if (!f || ov->tracker.bytes + frame_footprint (f)
                  > (size_t)ov->cfg.retry_bytes) {
        ov->tracker.unkept++;
        ovl_log_limited (ov, LOG_WARNING, "a request to rank %u is not kept "
                         "to be sent again (%s)", (unsigned)t->dest,
                         f ? "overlay.retry_bytes reached" : "out of memory");
        frame_decref (&f);
        return;
    }
    t->wire = f;
    t->flags = flags;
    t->stamp = stamp;
    t->cost = frame_footprint (f);
    ov->tracker.bytes += t->cost;
}

static void delete (struct overlay *ov, uint64_t hash)
{
    struct tracked *t = idmap_get (ov->tracker.map, hash);

    if (t) {
        drop_header (ov, t);
        drop_wire (ov, t);
        if (t->answered)
            ov->tracker.answered--;
        idmap_delete (ov->tracker.map, hash);
    }
}

void tracker_forget (struct overlay *ov, uint64_t key)
{
    if (key)
        delete (ov, key);
}

/* An error a broker other than the destination answered for one copy
 * (a relay could not route it, its TTL ran out, it waited too long): that
 * copy did not run, but another sent since may still be on its way, held
 * in a backlog somewhere, and run later.  Told to the client now, it
 * would be a failure followed by a run; so only the last copy's such
 * error is told. */
static bool undelivered_copy (struct tracked *t, const msg_t *rsp,
                              uint32_t from)
{
    int errnum = 0;

    return t->out > 1 && from != t->dest
           && msg_get_errnum (rsp, &errnum) == 0 && errnum != 0;
}

int tracker_response (struct overlay *ov, const msg_t *rsp, uint32_t from)
{
    char key[MSG_MAX_ROUTEID + 16];
    uint64_t hash;
    struct tracked *t;
    int drop = 0;

    if (msg_get_type (rsp) != MSGTYPE_RESPONSE
        || tracked_key (rsp, key, sizeof (key), &hash) < 0
        || !(t = idmap_get (ov->tracker.map, hash))
        || strcmp (t->key, key) != 0)
        return 0;
    if (t->answered) {
        ov->tracker.dup_drops++;
        return 1;       /* another copy's answer: kept until it expires */
    }
    if (t->failed) {
        ov->tracker.dup_drops++;
        drop = 1;
    }
    else if (undelivered_copy (t, rsp, from)) {
        t->out--;
        ov->tracker.copy_errors++;
        return 1;
    }
    if (t->retries > 0 && !drop) {
        t->answered = 1;
        ov->tracker.answered++;
        drop_wire (ov, t);
    }
    else if (!(msg_get_flags (rsp) & MSGFLAG_STREAMING) || drop)
        delete (ov, hash);
    return drop;
}

/* The ids of the entries 'match' selects (the map must not change while
 * it is walked, and acting on an entry may change it).  Caller frees. */
static uint64_t *collect (struct overlay *ov,
                          bool (*match) (const struct tracked *t, void *arg),
                          void *arg, size_t *np)
{
    struct idmap_iter it;
    uint64_t *ids = NULL;
    size_t n = 0, cap = 0;

    for (struct tracked *t = idmap_first (ov->tracker.map, &it); t;
         t = idmap_next (&it)) {
        if (!match (t, arg))
            continue;
        if (n == cap) {
            uint64_t *more = realloc (ids, (cap = cap ? cap * 2 : 16)
                                               * sizeof (*ids));
            if (!more)
                break;
            ids = more;
        }
        ids[n++] = it.id;
    }
    *np = n;
    return ids;
}

static bool match_dest (const struct tracked *t, void *arg)
{
    return t->dest == *(uint32_t *)arg && !t->failed;
}

static bool match_expired (const struct tracked *t, void *arg)
{
    return t->expires < *(double *)arg;
}

struct retry_match {
    struct overlay *ov;
    uint32_t gone;
};

/* May t go again?  A kept copy, no answer or error yet, copies left,
 * and a destination that is up here. */
static bool may_send_again (struct overlay *ov, const struct tracked *t)
{
    return t->wire && !t->failed && !t->answered && t->retries < RETRY_MAX
           && !bgn_router_is_down (ov->router, t->dest);
}

static bool match_retry (const struct tracked *t, void *arg)
{
    struct retry_match *m = arg;

    return t->dest != m->gone && may_send_again (m->ov, t);
}

/* Send t's request again, on today's routes (around the rank gone). */
static void send_again (struct overlay *ov, struct tracked *t)
{
    /* the stamp it first had: a copy must not run at an incarnation the
     * first one was not meant for (envelope.h) */
    struct envelope env = { .kind = ENV_DATA, .ttl = ov->ttl,
                            .flags = t->flags, .stamp = t->stamp,
                            .source = ov->rank, .dest = t->dest };
    struct frame *f = frame_incref (t->wire);

    t->retries++;
    if (route_ttl_step (&env) < 0 || route_out (ov, &env, &f, 1, -1) < 0) {
        ovl_log (ov, LOG_DEBUG, "request %s to rank %u: not sent again: %s",
                 t->key, (unsigned)t->dest, strerror (errno));
        frame_decref (&f);
        return;
    }
    t->out++;
    t->resent_at = ovl_now (ov);
    ov->tracker.retries++;
    ovl_log (ov, LOG_DEBUG, "request %s to rank %u sent again (%d)", t->key,
             (unsigned)t->dest, t->retries);
}

/* Send again every entry 'match' selects. */
static void send_again_matching (struct overlay *ov,
                                 bool (*match) (const struct tracked *t,
                                                void *arg),
                                 void *arg)
{
    size_t n;
    uint64_t *ids = collect (ov, match, arg, &n);

    for (size_t i = 0; i < n; i++) {
        struct tracked *t = idmap_get (ov->tracker.map, ids[i]);
        if (t)
            send_again (ov, t);
    }
    free (ids);
}

/* Rank 'gone' was fenced: it may have held requests on their way (or
 * their responses).  Every request still waiting for a live rank goes
 * again; the destination runs it once (dedup.h). */
static void retry_others (struct overlay *ov, uint32_t gone)
{
    struct retry_match m = { .ov = ov, .gone = gone };

    send_again_matching (ov, match_retry, &m);
}

void tracker_fail_dest (struct overlay *ov, uint32_t dest)
{
    size_t n;
    uint64_t *fail = collect (ov, match_dest, &dest, &n);
    char errstr[96];

    /* It left here, so it may have reached the rank and run there before
     * the rank was lost: say the outcome is unknown (a request that never
     * left gets plain "unreachable" errors from routing instead). */
    snprintf (errstr, sizeof (errstr), "rank %u went down: the request may "
              "have run (outcome unknown)", (unsigned)dest);
    for (size_t i = 0; i < n; i++) {
        struct tracked *t = idmap_get (ov->tracker.map, fail[i]);
        msg_t *req;
        if (!t || t->failed)
            continue;
        t->failed = 1;
        ov->tracker.failed++;
        /* The copy's stack ends with our rank: the broker pops it. */
        if ((req = msg_copy (t->req))) {
            ov->io->respond_error (ov->ctx, req, EHOSTUNREACH, errstr);
            msg_destroy (&req);
        }
    }
    free (fail);
    retry_others (ov, dest);
}

size_t tracker_bytes (struct overlay *ov)
{
    return ov->tracker.bytes;
}

int tracker_count (struct overlay *ov)
{
    return (int)(idmap_size (ov->tracker.map) - ov->tracker.answered);
}

/* A copy sent again and not answered within a peer timeout.  The copy,
 * or its answer, may have met a relay that was dying as it went: a
 * neighbour of the rank gone that had not heard of it yet routed the
 * answer into it, and nothing here will learn of that loss (the fence
 * that sent the copy has come and gone).  The destination runs a request
 * once whatever the copies (dedup.h), so another is safe. */
static bool match_unanswered (const struct tracked *t, void *arg)
{
    struct overlay *ov = arg;

    return t->retries > 0 && may_send_again (ov, t)
           && ovl_now (ov) - t->resent_at >= ov->cfg.peer_timeout;
}

static void sweep_cb (void *arg)
{
    struct overlay *ov = arg;
    double now = ovl_now (ov);
    size_t n;
    uint64_t *old = collect (ov, match_expired, &now, &n);

    for (size_t i = 0; i < n; i++)
        delete (ov, old[i]);
    free (old);
    send_again_matching (ov, match_unanswered, ov);
    if (idmap_size (ov->tracker.map) > 0)
        ovtimer_arm (ov->tracker.sweep, now + SWEEP_PERIOD);
}

/* ---- requests waiting for a rejoin -------------------------------------- */

int tracker_wait (struct overlay *ov, msg_t **req, uint32_t dest, bool sign)
{
    struct waiting *w;
    size_t cost;

    if (ov->cfg.rejoin_wait <= 0 || dest >= ov->size
        || msg_get_type (*req) != MSGTYPE_REQUEST
        || (msg_get_flags (*req) & MSGFLAG_NORESPONSE)
        || ov->tracker.nwaiting >= WAIT_MAX
        || !(w = calloc (1, sizeof (*w))))
        return -1;
    cost = malloc_usable_size (w) + msg_footprint (*req);
    /* with the responses held for a rejoin (route_hold) */
    if (route_held_bytes (ov) + ov->tracker.wait_bytes + cost
        > (size_t)ov->cfg.held_bytes) {
        free (w);
        ovl_log_limited (ov, LOG_WARNING, "a request to rank %u, fenced "
                         "here, fails at once: %zu bytes wait for rejoins "
                         "already (overlay.held_bytes)", (unsigned)dest,
                         route_held_bytes (ov) + ov->tracker.wait_bytes);
        return -1;
    }
    w->req = *req;
    *req = NULL;
    w->dest = dest;
    w->sign = sign;
    w->deadline = ovl_now (ov) + ov->cfg.rejoin_wait;
    w->cost = cost;
    if (ov->tracker.wait_tail)
        ov->tracker.wait_tail->next = w;
    else
        ov->tracker.wait_head = w;
    ov->tracker.wait_tail = w;
    ov->tracker.nwaiting++;
    ov->tracker.wait_bytes += cost;
    route_set_waiting (ov, ov->tracker.wait_bytes);
    ov->tracker.waits++;
    if (!ovtimer_armed (ov->tracker.wait_timer))
        ovtimer_arm (ov->tracker.wait_timer, w->deadline);
    return 0;
}

/* Take w out of the FIFO (prev: the one before it, or NULL). */
static void unlink_waiting (struct overlay *ov, struct waiting *prev,
                            struct waiting *w)
{
    if (prev)
        prev->next = w->next;
    else
        ov->tracker.wait_head = w->next;
    if (ov->tracker.wait_tail == w)
        ov->tracker.wait_tail = prev;
    w->next = NULL;
}

/* The rank is up here now: send the request on, as overlay_send would
 * have (tracked, a copy kept); if it cannot go, its client is told. */
static void send_waited (struct overlay *ov, struct waiting *w,
                         uint16_t stamp)
{
    struct envelope env = { .kind = ENV_DATA, .ttl = ov->ttl,
                            .flags = ENV_FLAG_WAITED, .stamp = stamp,
                            .source = ov->rank, .dest = w->dest };
    struct frame *f = NULL;
    uint64_t key = 0;

    if (route_ttl_step (&env) == 0 && (f = body_encode (w->req))) {
        /* sealed now, as it leaves: its time is when it goes */
        if (w->sign && ovsign_can_sign (ov)) {
            if (!(f = ovsign_seal_request (ov, f, w->dest)))
                goto fail;
            env.flags |= ENV_FLAG_SIGNED;
        }
        if ((key = tracker_add (ov, w->req, w->dest)))
            tracker_keep (ov, key, f, env.flags & ENV_FLAG_SIGNED, stamp);
        if (route_out (ov, &env, &f, 1, -1) == 0)
            return;
        tracker_forget (ov, key);
    }
fail:
    frame_decref (&f);
    route_count (ov, RC_no_route_drops, 1);
    ov->io->respond_error (ov->ctx, w->req, EHOSTUNREACH, "rank came back "
                           "but the request could not be routed to it: it "
                           "did not run");
}

void tracker_release (struct overlay *ov, uint32_t rank, uint16_t stamp)
{
    struct waiting *prev = NULL, *w = ov->tracker.wait_head, *next;

    while (w) {
        next = w->next;
        if (w->dest != rank) {
            prev = w;
            w = next;
            continue;
        }
        unlink_waiting (ov, prev, w);
        send_waited (ov, w, stamp);
        waiting_free (ov, w);
        w = next;
    }
}

/* The first waiting requests' time is up: their rank did not rejoin. */
static void wait_cb (void *arg)
{
    struct overlay *ov = arg;
    double now = ovl_now (ov);
    struct waiting *w;
    char errstr[160];

    while ((w = ov->tracker.wait_head) && w->deadline <= now) {
        unlink_waiting (ov, NULL, w);
        ov->tracker.wait_expired++;
        snprintf (errstr, sizeof (errstr), "rank %u is down or restarting: "
                  "no rejoin within %gs; the request did not run",
                  (unsigned)w->dest, ov->cfg.rejoin_wait);
        ov->io->respond_error (ov->ctx, w->req, EHOSTUNREACH, errstr);
        waiting_free (ov, w);
    }
    if ((w = ov->tracker.wait_head))
        ovtimer_arm (ov->tracker.wait_timer, w->deadline);
}

size_t tracker_wait_bytes (struct overlay *ov)
{
    return ov->tracker.wait_bytes;
}
