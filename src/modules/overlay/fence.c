/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* fence.c: the fence view's rules and how changes spread (fence.h).
 *
 * Which records are believed (on whose word, within which bounds), what
 * a new one means here, and how it travels: up the tree to the fence
 * root, down in its batches, and by whole views between peers whose
 * digests differ.  The records themselves are fenceview.c's; the kept
 * signatures livesig.c's; suspicions suspect.c's.
 *
 * State: the ranks to report up (outbox) and, at the root, to multicast
 * down (batch), each sent when its window timer fires; where the records
 * being applied came from (via); this broker's own life (claimed, life,
 * refutations).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/common/libutil/idmap.h"
#include "fence.h"
#include "fencemsg.h"
#include "overlay.h"
#include "ovlog.h"
#include "fenceview.h"
#include "livesig.h"
#include "membership.h"
#include "ovsign.h"
#include "route.h"
#include "suspect.h"
#include "treecast.h"
#include "tracker.h"

#define VIEW_PATIENCE 2          /* keepalives that must disagree */
#define MAX_TARGETS 4096
#define MAX_DEPTH 64

static void report_cb (void *arg);
static int send_to_rank (struct overlay *ov, uint32_t to, int kind,
                         struct frame *f);
static void batch_cb (void *arg);

int fence_init (struct overlay *ov)
{
    struct fence_state *fs = &ov->fence;

    fs->via = UINT32_MAX;
    fs->life = ov->incarnation;
    if (!(fs->outbox = idmap_create (1))
        || !(fs->batch = idmap_create (1))
        || !(fs->report = ovtimer_create (ov->timers, report_cb, ov))
        || !(fs->mcast = ovtimer_create (ov->timers, batch_cb, ov))
        || suspect_init (ov, fence_confirm) < 0)
        return -1;
    return 0;
}

void fence_on_fenced (struct overlay *ov,
                      void (*cb) (struct overlay *ov, uint32_t rank,
                                  uint64_t inc))
{
    ov->fence.fenced_cb = cb;
}

uint64_t fence_claimed (struct overlay *ov)
{
    return ov->fence.claimed;
}

bool fence_changed (struct overlay *ov)
{
    return ov->fence.changed;
}

void fence_changed_seen (struct overlay *ov)
{
    ov->fence.changed = false;
}

void fence_count_bad_record (struct overlay *ov)
{
    ov->fence.bad_records++;
}

void fence_count_false_claim (struct overlay *ov)
{
    ov->fence.false_claims++;
}

void fence_fini (struct overlay *ov)
{
    struct fence_state *fs = &ov->fence;

    idmap_destroy (&fs->outbox);
    idmap_destroy (&fs->batch);
    ovtimer_destroy (&fs->report);
    ovtimer_destroy (&fs->mcast);
    suspect_fini (ov);
}

uint64_t fence_inc_limit (struct overlay *ov, enum fence_bound bound)
{
    double wall = ovl_now (ov) + ov->wall_offset;
    uint64_t now = wall > 0 ? (uint64_t)(wall * 1e6) : 0;
    uint64_t ahead = (uint64_t)bound * FENCE_INC_AHEAD;

    if (now >= FENCE_INC_MAX || ahead >= FENCE_INC_MAX - now)
        return FENCE_INC_MAX;
    return now + ahead;
}

static void note (struct overlay *ov, enum ovl_note what, uint32_t rank,
                  uint64_t inc)
{
    if (ov->io->note)
        ov->io->note (ov->ctx, what, rank, inc);
}

/* ---- applying records -------------------------------------------------- */

static void mark (struct idmap *set, uint32_t rank)
{
    idmap_put (set, rank, NULL);
}

/* Send rank's record on: up to the root, or (at the root) down to all. */
static void spread (struct overlay *ov, uint32_t rank)
{
    bool root = fence_root (ov) == ov->rank;
    struct ovtimer *t = root ? ov->fence.mcast : ov->fence.report;

    mark (root ? ov->fence.batch : ov->fence.outbox, rank);
    if (!ovtimer_armed (t))
        ovtimer_arm (t, ovl_now (ov) + ov->cfg.fence_window);
}

void fence_announce_self (struct overlay *ov)
{
    uint8_t sig[64];
    bool was_fenced;

    livesig_own (ov, sig);   /* made and kept, to go with the record */
    if (fenceview_set (ov, ov->rank, ov->incarnation, false, "up",
                       &was_fenced))
        spread (ov, ov->rank);
}

/* What a new record means here. */
static int react (struct overlay *ov, uint32_t rank, struct fence_entry *f,
                  bool was_fenced, const char *reason)
{
    struct peer *p = peers_lookup (ov->peers, rank);
    int flags = FENCE_NEWS;

    if (f->fenced && !was_fenced) {
        ov->fence.seen++;
        ovl_log (ov, reason && !strcmp (reason, "left the instance")
                         ? LOG_INFO : LOG_NOTICE,
                 "rank %u fenced (%s)", (unsigned)rank,
                 reason && *reason ? reason : "down");
        if (p && p->state != PEER_DOWN && p->hello.incarnation <= f->inc) {
            peers_set_state (ov->peers, p, PEER_DOWN, ovl_now (ov));
            flags |= FENCE_PEER_DOWN;
        }
        bgn_router_set_down (ov->router, rank, true);
        note (ov, OVL_NOTE_FENCED, rank, f->inc);
        membership_note (ov, rank);
        tracker_fail_dest (ov, rank);
        route_purge_requests (ov, rank);
        /* the coordinator's reaction (rank 0's readiness count: the
         * rank must report ready again when it is back) */
        if (ov->fence.fenced_cb)
            ov->fence.fenced_cb (ov, rank, f->inc);
    }
    else if (!f->fenced && was_fenced) {
        ovl_log (ov, LOG_NOTICE, "rank %u rejoined (incarnation %llu)",
                 (unsigned)rank, (unsigned long long)f->inc);
        bgn_router_set_down (ov->router, rank, false);
        route_release (ov, rank);
        tracker_release (ov, rank, envelope_inc_stamp (f->inc));
        note (ov, OVL_NOTE_UNFENCED, rank, f->inc);
        if (ov->rank == 0)
            membership_note (ov, rank);
        if (p && p->connector && p->state == PEER_DOWN)
            flags |= FENCE_NEIGHBOUR_BACK;
    }
    if (!f->fenced && rank == 0)
        flags |= FENCE_ROOT_NEW;   /* rank 0 restarted: report ready again */
    return flags;
}

/* A record of this broker at an incarnation it never had: someone lied
 * (or a previous life of ours ran on a clock that was ahead).  Whoever
 * believed it holds a record our current one cannot beat, so we rejoin
 * above it; fence_apply refused it already if it is past the record
 * bound, so the rejoin stays within what every broker accepts. */
static int self_claimed (struct overlay *ov, uint64_t inc, bool fenced)
{
    ov->fence.false_claims++;
    ovl_log_limited (ov, LOG_WARNING, "a peer says this broker is %s as "
                     "incarnation %llu, which it never had (it is %llu): "
                     "going above it", fenced ? "fenced" : "live",
                     (unsigned long long)inc,
                     (unsigned long long)ov->incarnation);
    if (inc > ov->fence.claimed)
        ov->fence.claimed = inc;
    return FENCE_SELF;
}

/* A live record of rank at inc, not on its own word: refused where the
 * rank has a key and the record would lift a fence or name a newer
 * incarnation than the one known here (fence.h). */
static bool unattested (struct overlay *ov, uint32_t rank, uint64_t inc,
                        const uint8_t *sig)
{
    const struct fence_entry *f = fence_lookup (ov, rank);

    /* old news whose signature we hold already: no check (a record
     * played again and again cost a check each time) */
    if (f && !f->fenced && inc <= f->inc && livesig_held (ov, rank, inc))
        return false;
    if (sig && livesig_check (ov, ov->fence.via, rank, inc, sig)) {
        livesig_keep (ov, rank, inc, sig);
        return false;
    }
    if (f && !f->fenced && inc <= f->inc)
        return false;             /* old news: nothing would change */
    if (!sig && !ovsign_rank_has_key (ov, rank))
        return false;             /* no key: anyone's word, as before */
    ovsign_count_unattested (ov);
    ovl_log_limited (ov, LOG_WARNING, "refused a live record of rank %u "
                     "(incarnation %llu) that is not its own word: %s",
                     (unsigned)rank, (unsigned long long)inc,
                     sig ? "its signature does not check out"
                         : "not signed by it, nor heard from it");
    return true;
}

/* The first incarnation refused for a record of rank: a fence, or a live
 * record on anyone's word, within the record bound; a rank's own live
 * record (or one of a rank with no key) within the HELLO bound, above
 * anything it could have been pushed to (fence.h); a claim about this
 * broker within what it follows. */
static uint64_t record_limit (struct overlay *ov, uint32_t rank, uint64_t inc,
                              bool fenced,
                              bool own_word, const uint8_t *sig)
{
    const struct fence_entry *f = fence_lookup (ov, rank);

    /* about us: a claim we would follow, or our own record coming back
     * (however far ahead a refusal pushed us) */
    if (rank == ov->rank)
        return fence_inc_limit (ov, fenced ? FENCE_BOUND_FOLLOW
                                    : inc <= ov->incarnation
                                        ? FENCE_BOUND_HELLO
                                        : FENCE_BOUND_RECORD);
    /* a fence of an incarnation the rank itself announced (the one held
     * here) is within what it said, however far ahead */
    if (fenced && f && inc <= f->inc)
        return fence_inc_limit (ov, FENCE_BOUND_HELLO);
    if (!fenced && (own_word || sig || !ovsign_rank_has_key (ov, rank)))
        return fence_inc_limit (ov, FENCE_BOUND_HELLO);
    return fence_inc_limit (ov, FENCE_BOUND_RECORD);
}

static int apply_record (struct overlay *ov, uint32_t rank, uint64_t inc,
                         bool fenced, const char *reason,
                         enum fence_source src, bool own_word,
                         const uint8_t *sig);

int fence_apply (struct overlay *ov, uint32_t rank, uint64_t inc,
                 bool fenced, const char *reason, enum fence_source src)
{
    uint8_t sig[64];
    bool held = !fenced && livesig_get (ov, rank, inc, sig);

    return apply_record (ov, rank, inc, fenced, reason, src,
                         src == FROM_HERE, held ? sig : NULL);
}

static int commit_record (struct overlay *ov, uint32_t rank, uint64_t inc,
                          bool fenced, const char *reason,
                          enum fence_source src);

/* A fence on another broker's word (suspect.h): true if it is held as a
 * suspicion (sent on when it is news, so that its rank hears of it and
 * refutes it) or dropped, not applied. */
static bool held_as_suspicion (struct overlay *ov, uint32_t rank,
                               uint64_t inc, const char *reason)
{
    const struct fence_suspect *s = suspect_lookup (ov, rank);
    uint64_t had = s ? s->inc : 0;
    struct fence_record rec = { .rank = rank, .inc = inc, .fenced = true,
                                .reason = reason };
    struct frame *f;

    /* its sender's own word: a view (what it believes), or a report of
     * a neighbour of the accused, which could have found it (suspect.h) */
    bool charge = ov->fence.via < ov->size
                  && (ov->fence.via_kind == ENV_VIEW
                      || (ov->fence.via_kind == ENV_REPORT
                          && bgn_topo_linked (ov->topo, ov->fence.via,
                                              rank)));

    const struct fence_entry *held = fence_lookup (ov, rank);
    bool settled = held && (held->fenced || inc < held->inc);

    if (!suspect_hold (ov, rank, inc, settled, fence_reason_index (ov, reason),
                       ov->fence.via, charge))
        return false;
    if (!(s = suspect_lookup (ov, rank)) || s->inc == had)
        return true;
    spread (ov, rank);
    /* and straight to the accused, which answers us straight back
     * (fence_answer): a refutation must not wait on a tree a bad node
     * may sit in */
    if ((f = fencemsg_encode (0, &rec, 1)))
        send_to_rank (ov, rank, ENV_REPORT, f);
    return true;
}

static int apply_record (struct overlay *ov, uint32_t rank, uint64_t inc,
                         bool fenced, const char *reason,
                         enum fence_source src, bool own_word,
                         const uint8_t *sig)
{
    if (rank >= ov->size
        || inc >= record_limit (ov, rank, inc, fenced, own_word, sig)) {
        ov->fence.bad_records++;
        ovl_log_limited (ov, LOG_WARNING, "refused a bad fence record: rank "
                         "%u incarnation %llu (ranks < %u, incarnations "
                         "< 2^53 and at most %llu s ahead of the clock)",
                         (unsigned)rank, (unsigned long long)inc,
                         (unsigned)ov->size,
                         (unsigned long long)(FENCE_INC_AHEAD / 1000000));
        return 0;
    }
    if (rank == ov->rank) {
        /* Our own record is ours to say: whoever still has an old one of
         * us (a fence, a "never joined") gets our current one. */
        const struct fence_entry *self = fence_lookup (ov, rank);
        if (fenced && inc == ov->incarnation)
            return FENCE_SELF;
        /* one we refuted already: its sender still needs the answer */
        if (fenced && fence_own_inc (ov, inc))
            return FENCE_SELF_OLD;
        /* a live record of us we never signed is a lie nobody with our
         * key believes: nothing to rejoin above */
        if (inc > ov->incarnation && !fenced && ovsign_can_sign (ov)
            && !(sig && livesig_check (ov, ov->fence.via, rank, inc, sig))) {
            ov->fence.false_claims++;
            ovl_log_limited (ov, LOG_WARNING, "a peer says this broker is "
                             "live as incarnation %llu, which it never had "
                             "nor signed: ignored",
                             (unsigned long long)inc);
            return 0;
        }
        if (inc > ov->incarnation)
            return self_claimed (ov, inc, fenced);
        if (!self || self->inc != ov->incarnation)
            fence_announce_self (ov);
        return 0;
    }
    if (!fenced && !own_word && unattested (ov, rank, inc, sig))
        return 0;
    if (!fenced && own_word && sig && livesig_check (ov, ov->fence.via, rank, inc, sig))
        livesig_keep (ov, rank, inc, sig);
    if (fenced && src != FROM_HERE
        && held_as_suspicion (ov, rank, inc, reason))
        return 0;
    return commit_record (ov, rank, inc, fenced, reason, src);
}

void fence_confirm (struct overlay *ov, uint32_t rank, uint64_t inc,
                    uint8_t reason)
{
    const char *why = fence_reason_text (ov, reason);
    ovl_log (ov, LOG_NOTICE, "rank %u: nobody refuted its fence "
             "(incarnation %llu) in time: believed", (unsigned)rank,
             (unsigned long long)inc);
    /* as the record that was held: sent on like news (at the root, in
     * its next batch, with the membership event the hosts act on) */
    commit_record (ov, rank, inc, true, why, FROM_PEER);
}

/* Write a record that passed the checks into the view, if it is news:
 * records only move forward, a newer incarnation, or the same one fenced
 * where we knew it live. */
static int commit_record (struct overlay *ov, uint32_t rank, uint64_t inc,
                          bool fenced, const char *reason,
                          enum fence_source src)
{
    const struct fence_entry *old = fence_lookup (ov, rank);
    struct fence_entry *f;
    bool was_fenced;
    int flags;

    if (old && (inc < old->inc || (inc == old->inc
                                   && (old->fenced || !fenced))))
        return 0;
    if (!old && !fenced && inc == 0)
        return 0;
    if (!(f = fenceview_set (ov, rank, inc, fenced, reason, &was_fenced)))
        return 0;
    ov->fence.changed = true;
    suspect_settle (ov, rank, inc, fenced);
    flags = react (ov, rank, f, was_fenced, reason);
    if (src != FROM_ROOT)
        spread (ov, rank);
    route_flush (ov);
    return flags;
}

/* ---- refuting a fence of ourselves ------------------------------------- */

int fence_refute (struct overlay *ov)
{
    uint64_t from = ov->incarnation;
    uint64_t floor = ov->fence.claimed > from ? ov->fence.claimed : from;

    /* only a signed record lifts a fence elsewhere */
    if (!ovsign_can_sign (ov))
        return -1;
    ov->incarnation = floor + 1;
    ov->fence.refutations++;
    fence_announce_self (ov);
    ovl_log_limited (ov, LOG_NOTICE, "a peer says this broker is fenced "
                     "(incarnation %llu): refuted as incarnation %llu, its "
                     "links kept (%llu refutations)",
                     (unsigned long long)from,
                     (unsigned long long)ov->incarnation,
                     (unsigned long long)ov->fence.refutations);
    return 0;
}

void fence_answer (struct overlay *ov, uint32_t to)
{
    struct fence_record rec = { .rank = ov->rank, .inc = ov->incarnation,
                                .fenced = false, .reason = "refuted" };
    uint8_t sig[64];
    struct frame *f;

    if (to == ov->rank || to >= ov->size || !livesig_own (ov, sig))
        return;
    rec.sig = sig;
    if ((f = fencemsg_encode (0, &rec, 1)))
        send_to_rank (ov, to, ENV_REPORT, f);
}

void fence_new_life (struct overlay *ov)
{
    ov->fence.life = ov->incarnation;
}

bool fence_own_inc (struct overlay *ov, uint64_t inc)
{
    return inc == ov->incarnation
           || (inc >= ov->fence.life && inc < ov->incarnation);
}

/* ---- sending records ----------------------------------------------------- */

/* The records of the ranks in 'set' (emptied), in rank order, as a frame
 * for root 'root'. */
static struct frame *take_records (struct overlay *ov, struct idmap *set,
                                   uint32_t root, bool suspicions)
{
    struct idmap_iter it;
    size_t n = 0, cap = idmap_size (set);
    struct fence_record *recs = calloc (cap + 1, sizeof (*recs));
    uint32_t *ranks = calloc (cap + 1, sizeof (*ranks));
    uint8_t (*sigs)[64] = calloc (cap + 1, sizeof (*sigs));
    struct frame *f = NULL;

    if (!recs || !ranks || !sigs)
        goto done;
    for (void *v = idmap_first (set, &it); v; v = idmap_next (&it))
        ranks[n++] = (uint32_t)it.id;
    /* rank order: the same batch encodes the same everywhere */
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && ranks[j - 1] > ranks[j]; j--) {
            uint32_t t = ranks[j];
            ranks[j] = ranks[j - 1];
            ranks[j - 1] = t;
        }
    for (size_t i = 0; i < n; i++) {
        const struct fence_entry *e = fence_lookup (ov, ranks[i]);
        const struct fence_suspect *s = suspect_lookup (ov, ranks[i]);
        recs[i] = (struct fence_record){ .rank = ranks[i],
                                         .inc = e ? e->inc : 0,
                                         .fenced = e && e->fenced,
                                         .reason = e ? fence_reason (ov, e)
                                                     : "" };
        /* a suspicion goes on as the fence it is, for its rank to hear */
        if (suspicions && s && (!e || (!e->fenced && s->inc >= e->inc)))
            recs[i] = (struct fence_record){ .rank = ranks[i], .inc = s->inc,
                                             .fenced = true,
                                             .reason = fence_reason_text
                                                           (ov, s->reason) };
        else if (e && !e->fenced
                 && livesig_get (ov, ranks[i], e->inc, sigs[i]))
            recs[i].sig = sigs[i];
    }
    if ((f = fencemsg_encode (root, recs, n)))
        idmap_clear (set);
done:
    free (recs);
    free (ranks);
    free (sigs);
    return f;
}

/* Route one frame of 'kind' to rank 'to' (taken in every case). */
static int send_to_rank (struct overlay *ov, uint32_t to, int kind,
                         struct frame *f)
{
    struct envelope env = { .kind = kind, .ttl = ov->ttl, .source = ov->rank,
                            .dest = to };

    if (route_ttl_step (&env) < 0 || route_out (ov, &env, &f, 1, -1) < 0) {
        frame_decref (&f);
        route_count (ov, RC_no_route_drops, 1);
        return -1;
    }
    return 0;
}

/* Report the outbox to our parent in the root's tree (the first ancestor
 * that is not fenced). */
static void report_cb (void *arg)
{
    struct overlay *ov = arg;
    uint32_t root = fence_root (ov);
    struct frame *f;
    int parent;

    if (idmap_size (ov->fence.outbox) == 0)
        return;
    if (root == ov->rank) {   /* we became the root meanwhile */
        struct idmap_iter it;
        for (void *v = idmap_first (ov->fence.outbox, &it); v;
             v = idmap_next (&it))
            mark (ov->fence.batch, (uint32_t)it.id);
        idmap_clear (ov->fence.outbox);
        batch_cb (ov);
        return;
    }
    parent = bgn_topo_bcast_parent (ov->topo, root, ov->rank);
    for (int depth = 0; parent >= 0 && fence_is_fenced (ov, parent)
                        && depth < MAX_DEPTH; depth++)
        parent = bgn_topo_bcast_parent (ov->topo, root, parent);
    if (parent < 0)
        return;
    if ((f = take_records (ov, ov->fence.outbox, 0, true)))
        send_to_rank (ov, (uint32_t)parent, ENV_REPORT, f);
}

static bool is_fenced_cb (void *arg, uint32_t rank)
{
    return fence_is_fenced (arg, rank);
}

/* Send a batch frame of root's (borrowed) down our part of its tree. */
static void pass_down (struct overlay *ov, uint32_t root, struct frame *f)
{
    uint32_t to[MAX_TARGETS];
    int n = treecast_targets (ov->topo, root, ov->rank, is_fenced_cb, ov, to,
                              MAX_TARGETS);

    for (int i = 0; i < n; i++)
        send_to_rank (ov, to[i], ENV_BATCH, frame_incref (f));
}

/* The root sends what it gathered down its tree. */
static void batch_cb (void *arg)
{
    struct overlay *ov = arg;
    struct frame *f;

    if (idmap_size (ov->fence.batch) == 0)
        return;
    if (!(f = take_records (ov, ov->fence.batch, ov->rank, true)))
        return;
    ov->fence.batches++;
    pass_down (ov, ov->rank, f);
    membership_publish (ov);
    frame_decref (&f);
}

void fence_send_view (struct overlay *ov, struct peer *p)
{
    struct idmap *all = idmap_create (1);
    struct frame *f;

    if (!all)
        return;
    fenceview_ranks (ov, all);
    /* a view repairs records: suspicions are no records (suspect.h) */
    if (idmap_size (all) > 0
        && (f = take_records (ov, all, 0, false))) {
        if (route_send_control_frame (ov, p, ENV_VIEW, &f,
                                      p->hello.incarnation) < 0)
            frame_decref (&f);
        else
            p->fence.view_sent = ovl_now (ov);
    }
    idmap_destroy (&all);
}

void fence_peer_digest (struct overlay *ov, struct peer *p, uint64_t digest)
{
    double now = ovl_now (ov);

    if (digest == fence_digest (ov)) {
        p->fence.view_mismatch = 0;
        return;
    }
    if (++p->fence.view_mismatch < VIEW_PATIENCE
        || now - p->fence.view_sent < 2 * ov->cfg.keepalive_interval)
        return;
    p->fence.view_mismatch = 0;
    ov->fence.views_sent++;
    fence_send_view (ov, p);
}

void fence_tell (struct overlay *ov, struct peer *p, uint64_t talks_as,
                 uint64_t fenced_inc)
{
    double now = ovl_now (ov);
    struct fence_record rec = { .rank = p->rank, .inc = fenced_inc,
                                .fenced = true, .reason = "fenced" };
    struct frame *f;

    if (now - p->fence.told <= 1.0)
        return;
    if ((f = fencemsg_encode (0, &rec, 1))
        && route_send_control_frame (ov, p, ENV_VIEW, &f, talks_as) < 0)
        frame_decref (&f);
    p->fence.told = now;
}

/* ---- receiving records ----------------------------------------------- */

struct apply_ctx {
    struct overlay *ov;
    enum fence_source src;
    uint32_t via;            /* the peer whose link it came over */
    int flags;
};

/* A record of the peer itself, over its own link, is its own word. */
static void apply_one (const struct fence_record *rec, void *arg)
{
    struct apply_ctx *c = arg;
    c->flags |= apply_record (c->ov, rec->rank, rec->inc, rec->fenced,
                              rec->reason, c->src, rec->rank == c->via,
                              rec->sig);
}

int fence_recv (struct overlay *ov, struct peer *p, struct envelope *env,
                struct frame **body, int n)
{
    struct apply_ctx c = { .ov = ov, .src = env->kind == ENV_BATCH
                                                ? FROM_ROOT : FROM_PEER,
                           .via = p ? p->rank : UINT32_MAX };
    uint32_t root = 0;
    int rc;

    ov->fence.via = p ? p->rank : UINT32_MAX;
    ov->fence.via_kind = env->kind;
    rc = n < 1 ? -1 : fencemsg_decode (frame_data (body[0]),
                                        frame_size (body[0]), &root,
                                        apply_one, &c);
    ov->fence.via = UINT32_MAX;
    if (rc < 0) {
        route_count (ov, RC_malformed_drops, 1);
        return 0;
    }
    if (env->kind == ENV_BATCH && root < ov->size)
        pass_down (ov, root, body[0]);   /* the frame as it came */
    return c.flags;
}
