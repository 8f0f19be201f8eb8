/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* hello.c: admission: HELLO / ACK / NAK, incarnations, rejoin (hello.h).
 *
 * State: the time and back-off of this broker's last rejoin and the
 * highest fenced incarnation of ours a refusal named (ov->hello), and per
 * peer its redial time and back-off.  A connector says hello on every
 * new connection; the listener checks it (hello_check: version, instance,
 * rank, topology) and admits the peer or refuses it with a reason.  A
 * refusal for "fenced" at this broker's live incarnation is refuted (a
 * signed live record one incarnation up, the other links kept:
 * suspect.h) and the hello said again; one that cannot be refuted makes
 * the broker rejoin above it, never in a tight loop (a forged fence that
 * keeps coming spaces the rejoins out, up to 10 s).  Other refusals make
 * the connector redial later, with a back-off doubling to REDIAL_MAX.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sodium.h>

#include "fence.h"
#include "heal.h"
#include "health.h"
#include "hello.h"
#include "live.h"
#include "livesig.h"
#include "overlay.h"
#include "ovlog.h"
#include "route.h"
#include "suspect.h"

#define HELLO_RETRY 2.0          /* first retry, seconds; then doubling */
#define HELLO_RETRY_MAX 60.0
#define REJOIN_BACKOFF 0.1       /* first rejoin delay; then doubling */
#define REJOIN_BACKOFF_MAX 10.0
#define REDIAL_MIN 1.0           /* first redial after a refusal */
#define REDIAL_MAX 60.0

static void rejoin_cb (void *arg);

int hello_init (struct overlay *ov)
{
    ov->hello.rejoin_backoff = REJOIN_BACKOFF;
    if (!(ov->hello.rejoin = ovtimer_create (ov->timers, rejoin_cb, ov)))
        return -1;
    return 0;
}

void hello_fini (struct overlay *ov)
{
    ovtimer_destroy (&ov->hello.rejoin);
}

static json_t *hello_payload (struct overlay *ov)
{
    json_t *o = json_pack ("{s:i s:i s:s s:I s:s s:s s:I s:I}",
                      "version", PROTOCOL_VERSION,
                      "rank", (int)ov->rank,
                      "instance", ov->instance,
                      "incarnation", (json_int_t)ov->incarnation,
                      "hostname", ov->hostname,
                      "topology", ov->topo_spec,
                      "seq", (json_int_t)(ov->events
                                          ? evlayer_hello_seq (ov->events)
                                          : 0),
                      "view", (json_int_t)fence_digest (ov));

    /* the software's version, so each side's log says what the other
     * runs; the simulator has none and its hellos stay as they were */
    if (o && ov->version[0])
        json_object_set_new (o, "software", json_string (ov->version));
    return o;
}

static int send_payload (struct overlay *ov, struct peer *p, int kind)
{
    json_t *o = hello_payload (ov);
    uint8_t sig[64];
    char hex[2 * sizeof (sig) + 1];
    int rc;

    /* our live record, signed: the peer passes it on, and brokers that
     * never hear from us believe it (fence.h) */
    if (o && livesig_own (ov, sig)) {
        sodium_bin2hex (hex, sizeof (hex), sig, sizeof (sig));
        json_object_set_new (o, "live", json_string (hex));
    }

    rc = o ? route_send_control (ov, p, kind, o) : -1;
    json_decref (o);
    return rc;
}

void hello_send (struct overlay *ov, struct peer *p)
{
    send_payload (ov, p, ENV_HELLO);
}

/* A refusal, addressed to the incarnation that asked ('inc'); a fenced
 * one learns which incarnation it must go beyond. */
static void send_nak (struct overlay *ov, struct peer *p, const char *reason,
                      uint64_t inc, uint64_t fenced_inc)
{
    json_t *o = json_pack ("{s:s}", "reason", reason);

    if (o && fenced_inc)
        json_object_set_new (o, "incarnation",
                             json_integer ((json_int_t)fenced_inc));
    if (o)
        route_send_control_inc (ov, p, ENV_HELLO_NAK, o, inc);
    json_decref (o);
}

/* Check a hello's content.  NULL if acceptable, else the reason.  Its
 * signature of the sender's live record, if any, goes to sig (*has_sig):
 * kept only once the hello is admitted. */
static const char *hello_check (struct overlay *ov, struct peer *p,
                                json_t *o, uint64_t *inc, uint8_t sig[64],
                                bool *has_sig)
{
    int version, rank;
    const char *instance, *hostname = "", *topology = "", *live = NULL;
    const char *software = "";
    json_int_t incarnation, seq = 0, view = 0;
    size_t siglen = 0;

    if (!o || json_unpack (o, "{s:i s:i s:s s:I s?s s?s s?I s?I s?s s?s}",
                           "version", &version, "rank", &rank, "instance",
                           &instance, "incarnation", &incarnation,
                           "hostname", &hostname, "topology", &topology,
                           "seq", &seq, "view", &view, "live", &live,
                           "software", &software) < 0)
        return "malformed hello";
    p->hello.seq = seq > 0 ? (uint32_t)seq : 0;
    p->hello.view = (uint64_t)view;
    if (version != PROTOCOL_VERSION)
        return version < PROTOCOL_VERSION
                   ? "protocol version mismatch: the peer runs an older bgn"
                   : "protocol version mismatch: the peer runs a newer bgn";
    if ((uint32_t)rank != p->rank)
        return "rank does not match the connection identity";
    if (strcmp (instance, ov->instance) != 0)
        return "peer belongs to another instance";
    if (strcmp (topology, ov->topo_spec) != 0)
        return "peer uses another topology";
    if (incarnation <= 0
        || (uint64_t)incarnation >= fence_inc_limit (ov, FENCE_BOUND_HELLO))
        return "incarnation out of range";
    snprintf (p->hello.hostname, sizeof (p->hello.hostname), "%s", hostname);
    snprintf (p->hello.version, sizeof (p->hello.version), "%s", software);
    *inc = (uint64_t)incarnation;
    /* its live record, signed: kept to pass on with the record */
    *has_sig = live && sodium_hex2bin (sig, 64, live, strlen (live), NULL,
                                       &siglen, NULL) == 0
               && siglen == 64;
    return NULL;
}

/* Our next try at this link, after a refusal, goes later and later. */
static void redial_later (struct overlay *ov, struct peer *p)
{
    if (p->hello.redial_backoff < REDIAL_MIN)
        p->hello.redial_backoff = REDIAL_MIN;
    p->hello.redial_at = ovl_now (ov) + p->hello.redial_backoff;
    p->hello.redial_backoff *= 2;
    if (p->hello.redial_backoff > REDIAL_MAX)
        p->hello.redial_backoff = REDIAL_MAX;
}

static void nak_recv (struct overlay *ov, struct peer *p, json_t *o)
{
    const char *reason = "?";
    json_int_t fenced_inc = 0;

    if (o)
        json_unpack (o, "{s:s s?I}", "reason", &reason,
                     "incarnation", &fenced_inc);
    if (!strncmp (reason, "fenced", 6)) {
        /* The fenced incarnation it names is its claim about us: one we
         * could not follow within the bounds others accept is a lie, and
         * one above ours is one we never had (fence.h). */
        if (fenced_inc > 0
            && (uint64_t)fenced_inc
                   >= fence_inc_limit (ov, FENCE_BOUND_FOLLOW)) {
            fence_count_bad_record (ov);
            ovl_log_limited (ov, LOG_WARNING, "peer %u: refused a HELLO_NAK "
                             "naming incarnation %lld, out of range",
                             (unsigned)p->rank, (long long)fenced_inc);
            return;
        }
        if ((uint64_t)fenced_inc > ov->incarnation) {
            fence_count_false_claim (ov);
            ovl_log_limited (ov, LOG_WARNING, "peer %u says this broker is "
                             "fenced as incarnation %lld, which it never had "
                             "(it is %llu): rejoining above it",
                             (unsigned)p->rank, (long long)fenced_inc,
                             (unsigned long long)ov->incarnation);
        }
        /* our present incarnation, fenced on that peer's word or its
         * own finding: refuted, and said again to it, the other links
         * kept (suspect.h) */
        if ((uint64_t)fenced_inc == ov->incarnation && fence_refute (ov) == 0) {
            hello_send (ov, p);
            if (ov->rank != 0)
                health_report_again (ov);   /* rank 0 may have forgotten */
            return;
        }
        if (fenced_inc > 0 && (uint64_t)fenced_inc > ov->hello.rejoin_floor)
            ov->hello.rejoin_floor = (uint64_t)fenced_inc;
        hello_rejoin (ov, "a peer refused our fenced incarnation");
        return;
    }
    ovl_log (ov, LOG_ERR, "peer %u refused our hello: %s", (unsigned)p->rank,
             reason);
    p->hello.refused = true;
    if (p->connector && p->endpoint[0]) {
        ov->io->disconnect (ov->ctx, p->rank, p->endpoint);
        redial_later (ov, p);
    }
    live_set_state (ov, p, PEER_DOWN);
    peer_set_problem (p, "it refused our hello: %s", reason);
}

/* A fenced (or older) incarnation says hello: it must come back as new. */
static bool refuse_fenced (struct overlay *ov, struct peer *p,
                           const struct envelope *env, uint64_t inc)
{
    const struct fence_entry *f = fence_lookup (ov, p->rank);

    if (!f || !((f->fenced && inc <= f->inc) || (!f->fenced && inc < f->inc)))
        return false;
    ovl_log (ov, LOG_INFO, "peer %u: hello from fenced incarnation %llu",
             (unsigned)p->rank, (unsigned long long)inc);
    if (env->kind == ENV_HELLO)
        send_nak (ov, p, "fenced: rejoin with a new incarnation", inc,
                  f->inc);
    else   /* naming the fence, so it rejoins above it in one step */
        fence_tell (ov, p, inc, f->fenced ? f->inc : inc);
    return true;
}

/* One line per admission, naming the bgn the peer runs: an admin reads
 * which nodes run what in any broker's log (bgn dmesg).  It is a debug
 * line, a state change the broker's flood control does not limit: a
 * broker admits all its peers at once, 2 log2 N of them (11 at 64
 * brokers), and a limited line has 10 a minute, so at info the last
 * peers' lines were dropped.  A peer on another version than ours is
 * worth a notice besides (a rolling upgrade, or a node left behind),
 * limited like any notice; a hello without a version is from a bgn
 * before versions were told ("unknown"). */
static void log_admitted (struct overlay *ov, struct peer *p, uint64_t inc)
{
    const char *theirs = p->hello.version[0] ? p->hello.version : "unknown";

    if (!ov->version[0])
        return;
    ovl_log (ov, LOG_DEBUG, "peer %u (%s) up: incarnation %llu, bgn %s",
             (unsigned)p->rank, p->hello.hostname, (unsigned long long)inc,
             theirs);
    if (strcmp (theirs, ov->version) != 0)
        ovl_log (ov, LOG_NOTICE, "peer %u (%s) runs bgn %s, this broker "
                 "runs bgn %s", (unsigned)p->rank, p->hello.hostname, theirs,
                 ov->version);
}

static void admit (struct overlay *ov, struct peer *p,
                   const struct envelope *env, uint64_t inc)
{
    int flags;
    bool news = p->state != PEER_UP || inc != p->hello.incarnation;

    if (p->hello.incarnation && inc != p->hello.incarnation)
        ovl_log (ov, LOG_NOTICE, "peer %u restarted (incarnation %llu -> "
                 "%llu)", (unsigned)p->rank,
                 (unsigned long long)p->hello.incarnation,
                 (unsigned long long)inc);
    if (news)
        log_admitted (ov, p, inc);
    p->hello.incarnation = inc;
    live_heard (p, ovl_now (ov));
    p->hello.refused = false;
    p->hello.backoff = 0;
    p->hello.redial_backoff = 0;
    /* The ACK goes first: nothing else may reach the peer before it.
     * Once it went, the transport may make this connection the peer's. */
    if (env->kind == ENV_HELLO && send_payload (ov, p, ENV_HELLO_ACK) == 0)
        ov->io->admitted (ov->ctx, p->rank);
    live_set_state (ov, p, PEER_UP);
    /* one view, and only if ours differs from the one it said it has */
    if (p->hello.view != fence_digest (ov))
        fence_send_view (ov, p);
    evlayer_seq_hint (ov->events, p->rank, p->hello.seq);
    /* alive as this incarnation: lift any fence (or suspicion) of an
     * older one everywhere (a rank nobody ever fenced has no record, and
     * gets none) */
    if (fence_lookup (ov, p->rank) || suspect_lookup (ov, p->rank)) {
        flags = fence_apply (ov, p->rank, inc, false, "rejoined", FROM_HERE);
        if (flags & FENCE_ROOT_NEW)
            health_root_news (ov);
    }
    if (p->substitute)
        heal_link_apply (ov, "add", ov->rank, p->rank, -1);
}

void hello_recv (struct overlay *ov, struct peer *p,
                 const struct envelope *env, struct frame *const *body,
                 int n, const char *key_problem)
{
    json_t *o = NULL;
    const char *why;
    uint64_t inc = 0;
    uint8_t sig[64];
    bool has_sig = false;

    if (n >= 1)
        o = json_loadb ((const char *)frame_data (body[0]),
                        frame_size (body[0]), 0, NULL);
    if (env->kind == ENV_HELLO_NAK) {
        nak_recv (ov, p, o);
        goto done;
    }
    if ((why = key_problem)
        || (why = hello_check (ov, p, o, &inc, sig, &has_sig))) {
        ovl_log_limited (ov, LOG_ERR, "peer %u: hello refused: %s",
                         (unsigned)p->rank, why);
        if (env->kind == ENV_HELLO)
            send_nak (ov, p, why, 0, 0);
        else if (p->connector && p->endpoint[0]) {
            ov->io->disconnect (ov->ctx, p->rank, p->endpoint);
            redial_later (ov, p);
        }
        goto done;
    }
    if (!refuse_fenced (ov, p, env, inc)) {
        if (has_sig)
            livesig_note (ov, p->rank, inc, sig);
        admit (ov, p, env, inc);
    }
done:
    json_decref (o);
}

double hello_rejoined_at (struct overlay *ov)
{
    return ov->hello.rejoined_at;
}

static void rejoin_now (struct overlay *ov, const char *why)
{
    double now = ovl_now (ov);
    uint64_t floor = ov->hello.rejoin_floor > fence_claimed (ov)
                         ? ov->hello.rejoin_floor : fence_claimed (ov);

    /* Above our own and above any fenced incarnation a peer named: no
     * clock involved, so a clock that jumps cannot keep us out. */
    if (floor >= ov->incarnation)
        ov->incarnation = floor;
    ov->incarnation++;
    fence_new_life (ov);
    ov->hello.rejoined_at = now;
    fence_announce_self (ov);
    ovl_log (ov, LOG_WARNING, "this broker was fenced (%s): rejoining as "
             "incarnation %llu", why && *why ? why : "declared down",
             (unsigned long long)ov->incarnation);
    health_report_again (ov);
    for (int i = 0; i < ov->peers->n; i++) {
        struct peer *p = ov->peers->v[i];
        if (p->state != PEER_CONNECTING)
            live_set_state (ov, p, PEER_CONNECTING);
        p->hello.refused = false;
        p->hello.backoff = 0;
        if (p->connector)
            hello_send (ov, p);
    }
}

void hello_rejoin_stalled (struct overlay *ov)
{
    ovtimer_disarm (ov->hello.rejoin);
    rejoin_now (ov, "it did not run for a while");
}

static void rejoin_cb (void *arg)
{
    rejoin_now (arg, "after a pause");
}

void hello_rejoin (struct overlay *ov, const char *why)
{
    double now = ovl_now (ov);

    /* Never in a tight loop: refusals that keep coming (a peer that
     * insists, a forged fence) space the rejoins out, up to 10 s. */
    if (now - ov->hello.rejoined_at > 3 * REJOIN_BACKOFF_MAX)
        ov->hello.rejoin_backoff = REJOIN_BACKOFF;
    if (ov->hello.rejoined_at > 0
        && now - ov->hello.rejoined_at < ov->hello.rejoin_backoff) {
        if (!ovtimer_armed (ov->hello.rejoin))
            ovtimer_arm (ov->hello.rejoin,
                         ov->hello.rejoined_at + ov->hello.rejoin_backoff);
        return;
    }
    ovtimer_disarm (ov->hello.rejoin);
    if (ov->hello.rejoined_at > 0) {
        ov->hello.rejoin_backoff *= 2;
        if (ov->hello.rejoin_backoff > REJOIN_BACKOFF_MAX)
            ov->hello.rejoin_backoff = REJOIN_BACKOFF_MAX;
    }
    rejoin_now (ov, why);
}

void hello_neighbours_back (struct overlay *ov)
{
    for (int i = 0; i < ov->peers->n; i++) {
        struct peer *p = ov->peers->v[i];
        if (p->connector && p->state == PEER_DOWN && !p->hello.refused
            && !fence_is_fenced (ov, p->rank))
            hello_send (ov, p);
    }
}

void hello_retry (struct overlay *ov, double now)
{
    for (int i = 0; i < ov->peers->n; i++) {
        struct peer *p = ov->peers->v[i];
        if (!p->connector)
            continue;
        /* a refused link is dialled again, later and later */
        if (p->hello.refused && p->hello.redial_at > 0
            && now >= p->hello.redial_at) {
            p->hello.redial_at = 0;
            p->hello.refused = false;
            ov->hello.redials++;
            if (ov->io->connect (ov->ctx, p->rank, p->endpoint,
                                 p->pubkey) == 0)
                hello_send (ov, p);
            continue;
        }
        /* a hello may have reached a broker that was not listening yet:
         * say it again while connecting, at growing intervals.  A peer
         * that is down hears one when its connection is back, and, while
         * the transport never said the connection broke (a partition, a
         * peer that died unseen), a probe now and then, which also makes
         * a dead connection fail so the transport dials again. */
        if (p->hello.refused || peer_is_up (p)
            || (p->state == PEER_DOWN && p->hello.link_broken))
            continue;
        if (p->hello.backoff < HELLO_RETRY)
            p->hello.backoff = HELLO_RETRY;
        if (now - p->state_since > p->hello.backoff
            && now - p->route.last_sent > p->hello.backoff) {
            hello_send (ov, p);
            p->hello.backoff *= 2;
            if (p->hello.backoff > HELLO_RETRY_MAX)
                p->hello.backoff = HELLO_RETRY_MAX;
        }
    }
}

void hello_connected (struct overlay *ov, const char *endpoint)
{
    for (int i = 0; i < ov->peers->n; i++) {
        struct peer *p = ov->peers->v[i];
        if (!p->connector || strcmp (p->endpoint, endpoint) != 0)
            continue;
        p->hello.link_broken = false;
        p->hello.backoff = 0;
        /* the first connection carries the hello queued at the start:
         * a second one would be answered twice */
        if (p->hello.queued) {
            p->hello.queued = false;
            continue;
        }
        if ((p->state == PEER_DOWN || p->state == PEER_CONNECTING)
            && !p->hello.refused)
            hello_send (ov, p);
    }
}

void hello_handshake_failed (struct overlay *ov, const char *endpoint,
                             const char *why)
{
    for (int i = 0; i < ov->peers->n; i++) {
        struct peer *p = ov->peers->v[i];
        if (!p->connector || strcmp (p->endpoint, endpoint) != 0
            || peer_is_up (p))
            continue;
        /* libzmq gives up on a connection whose handshake failed (a key
         * refused while the peer was still starting, say): dial again */
        p->hello.refused = true;
        peer_set_problem (p, "%s", why);
        ov->io->disconnect (ov->ctx, p->rank, p->endpoint);
        redial_later (ov, p);
    }
}

void hello_send_first (struct overlay *ov, struct peer *p)
{
    hello_send (ov, p);
    p->hello.queued = true;
}

void hello_adopt (struct peer *p, uint64_t incarnation)
{
    p->hello.incarnation = incarnation;
}

void hello_link_lost (struct peer *p)
{
    p->hello.link_broken = true;
    p->hello.queued = false;
}

void hello_redial (struct overlay *ov, struct peer *p)
{
    p->hello.refused = false;
    p->hello.redial_at = 0;
    p->hello.link_broken = false;
    ov->hello.redials++;
    if (ov->io->connect (ov->ctx, p->rank, p->endpoint, p->pubkey) == 0)
        hello_send (ov, p);
}

void hello_count_stale (struct overlay *ov)
{
    ov->hello.stale_drops++;
}
