/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* evsync.c: rank 0's SYNC, its word on how far the sequence goes
 * (evlayer_int.h).
 *
 * Rank 0 sends a SYNC (seq, epoch, gone, base: signed where it signs)
 * every sync period while it has news, and now and then when it has
 * none; every other broker takes one only if it is newer than the last,
 * passes it on down the tree (and, signed, to the other neighbours: no
 * one parent can hide it), and learns from it the gaps to repair and
 * what rank 0 no longer holds (lost at once).  Kept apart from events.c
 * because it is one exchange with its own ordering rule (sync_cmp); it
 * is called from events.c only, and calls down to evjoin.c (a SYNC seen
 * while joining asks for the start), the repair, the signatures and the
 * delivery.
 */
#include <stdint.h>
#include <syslog.h>

#include "evlayer_int.h"

/* A SYNC repeats what the last one said at most this often (in
 * sync periods): an idle stream costs every broker a signature check a
 * second otherwise, for news it has already had. */
#define SYNC_QUIET_PERIODS 10

/* How this SYNC compares with the last one taken: 1 newer, 0 the same,
 * -1 older.  Rank 0's numbers only grow within an epoch, so the order is
 * (epoch, seq, gone, base): with several paths, an older copy that came
 * late must not count as news, or two of them would chase each other
 * round the graph. */
static int sync_cmp (const struct evlayer *ev, json_int_t seq,
                     json_int_t epoch, json_int_t gone, json_int_t base)
{
    uint64_t a[4] = { (uint64_t)epoch, (uint64_t)seq, (uint64_t)gone,
                      (uint64_t)base };
    uint64_t b[4] = { ev->root_epoch, ev->sync_seq, ev->root_gone,
                      ev->root_base };

    for (int i = 0; i < 4; i++)
        if (a[i] != b[i])
            return a[i] > b[i] ? 1 : -1;
    return 0;
}

/* A SYNC taken: on down the tree and, where rank 0 signs and it is news,
 * to the other neighbours.  The same SYNC again (rank 0 repeats it when
 * quiet) goes down the tree at most every few sync periods: it now comes
 * by several paths, and each copy sent on would multiply below. */
static void sync_pass_on (struct evlayer *ev, json_t *o, int fresh,
                          uint32_t via)
{
    double every = ev->cfg.sync_period * SYNC_QUIET_PERIODS / 2;

    if (fresh || ev->now - ev->sync_passed >= every) {
        ev->sync_passed = ev->now;
        evl_forward_down (ev, NULL, o, NULL);
    }
    if (fresh && ev->verify)
        evl_sync_sideways (ev, o, via);
}

void evsync_recv (struct evlayer *ev, uint32_t source, uint32_t via,
                       json_t *o)
{
    json_int_t seq, epoch = 0, gone = 0, base = 0;
    int tree, cmp, fresh, had_gap;

    if (json_unpack (o, "{s:I s?I s?I s?I}", "seq", &seq, "epoch", &epoch,
                     "gone", &gone, "base", &base) < 0
        || seq < 0 || seq > UINT32_MAX || gone < 0 || gone > seq || base < 0
        || base > seq) {
        ev->rejected++;
        return;
    }
    /* Checked before it goes on.  From our tree parent as before; where
     * rank 0 signs, from any peer too (a neighbour, or relayed round a
     * link that is down): rank 0's high-water mark takes every path
     * (evl_sync_sideways), and its signature, not the path, vouches for
     * it. */
    tree = evl_tree_sender_ok (ev, source, via);
    cmp = sync_cmp (ev, seq, epoch, gone, base);
    fresh = cmp > 0;
    /* an older rank 0's SYNC (signed, but played again) is refused */
    if ((!tree && !ev->verify)
        || (uint64_t)epoch < ev->root_epoch
        || (ev->have_base && (uint32_t)seq > ev->last
            && (uint32_t)seq - ev->last > SEQ_SANE)) {
        ev->rejected++;
        evl_warn_counted (ev, ev->rejected, "dropped a sync that is not rank 0's",
                      (uint32_t)seq, (uint32_t)seq);
        return;
    }
    /* an older one of this rank 0, or the same one by another path, says
     * nothing new (by several paths one is often overtaken): dropped
     * before any check */
    if ((uint64_t)epoch == ev->root_epoch && (cmp < 0 || (cmp == 0 && !tree))) {
        if (ev->verify)
            return;
        ev->rejected++;
        evl_warn_counted (ev, ev->rejected, "dropped a sync older than the "
                          "last", (uint32_t)seq, (uint32_t)seq);
        return;
    }
    if (!evl_sync_signed_ok (ev, o, seq, epoch, gone, base, via))
        return;
    if (ev->verify && json_object_get (o, "sig")) {
        json_decref (ev->sync_proof);   /* a proof of seq, for SEQ_REPORT */
        ev->sync_proof = json_deep_copy (o);
    }
    if (!tree)
        ev->side_syncs++;
    sync_pass_on (ev, o, fresh, via);
    if ((uint64_t)epoch != ev->root_epoch && ev->root_epoch != 0)
        ev->ops->log (ev->arg, LOG_NOTICE, "events: rank 0 restarted; its "
                      "sequence goes on after %u", (unsigned)base);
    ev->root_epoch = (uint64_t)epoch;
    ev->root_base = (uint32_t)base;
    ev->root_gone = (uint32_t)gone;
    ev->sync_seq = (uint32_t)seq;
    if (!ev->have_base && !ev->verify) {
        ev->have_base = 1;
        ev->last = ev->high = (uint32_t)seq;
        return;
    }
    had_gap = evrepair_have_gap (ev);
    if ((uint32_t)seq > ev->high)
        ev->high = (uint32_t)seq;
    if (!ev->have_base) {
        /* joining: rank 0's answer decides (evjoin.c); if it never
         * comes, the fallback starts after what rank 0 no longer holds
         * (gone), not after seq: what lies between may have been
         * published while we waited, and is still to be had */
        if ((uint32_t)gone < ev->start_floor)
            ev->start_floor = (uint32_t)gone;
        evjoin_ask (ev);
        return;
    }
    /* Rank 0 dropped what we miss from its buffer: lost, at once, in one
     * notice (not for what an earlier rank 0 numbered: it cannot know). */
    if (ev->root_gone > ev->last && ev->last >= ev->root_base) {
        uint32_t end = evl_gap_end (ev);
        evl_declare_lost (ev, ev->last + 1, ev->root_gone < end ? ev->root_gone
                                                            : end);
    }
    /* A gap only another path told of: the tree most often brings it a
     * moment later (a SYNC is small and overtakes batches); repaired if
     * it does not */
    if (!tree && !had_gap && evrepair_have_gap (ev) && !ev->rep.active) {
        ev->rep.hold_until = ev->now + SIDE_GRACE;
        evl_arm (ev, ev->armed < ev->rep.hold_until ? ev->armed
                                                    : ev->rep.hold_until);
    }
    evrepair_kick (ev);
}

static int sync_due (const struct evlayer *ev, double now)
{
    double since = now - ev->last_sync;

    if (since < ev->cfg.sync_period)
        return 0;
    return ev->sent_seq != ev->synced_seq || ev->gone != ev->synced_gone
           || ev->root_base != ev->synced_base
           || since >= ev->cfg.sync_period * SYNC_QUIET_PERIODS;
}

static void send_sync (struct evlayer *ev)
{
    ev->synced_seq = ev->sent_seq;
    ev->synced_gone = ev->gone;
    ev->synced_base = ev->root_base;
    json_t *o = json_pack ("{s:I s:I s:I s:I}", "seq",
                           (json_int_t)ev->sent_seq, "epoch",
                           (json_int_t)ev->cfg.epoch, "gone",
                           (json_int_t)ev->gone, "base",
                           (json_int_t)ev->root_base);
    if (o && evl_sync_sign (ev, o, (json_int_t)ev->sent_seq,
                            (json_int_t)ev->cfg.epoch, (json_int_t)ev->gone,
                            (json_int_t)ev->root_base) == 0) {
        evl_forward_down (ev, NULL, o, NULL);
        /* signed: to the neighbours off the tree too (evl_sync_sideways) */
        if (ev->can_sign)
            evl_sync_sideways (ev, o, UINT32_MAX);
    }
    json_decref (o);
}
void evsync_tick (struct evlayer *ev, double now)
{
    if (ev->can_publish && ev->sent_seq > 0 && sync_due (ev, now)) {
        ev->last_sync = now;
        send_sync (ev);
    }
}
