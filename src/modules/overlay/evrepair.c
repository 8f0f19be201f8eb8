/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* evrepair.c: filling gaps in the event sequence (evlayer_int.h).
 *
 * A broker that misses seqs asks its tree parent and its other live peers
 * in turn, rank 0 last (first when the gap is wider than a buffer: rank 0
 * can say at once what is gone), one ask at a time with a deadline; an
 * answer is accepted only from the peer asked, for the range asked.  A
 * gap is declared lost only on rank 0's word, or when every live peer
 * asked lacks it in rounds that go on for REPAIR_ROOT_GRACE (rank 0 down
 * here, most often).  Rank 0 down here may be only fenced, on someone's
 * word, while it runs: what it published meanwhile every peer dropped,
 * and the news that it rejoined can come after its SYNC naming those
 * seqs.  Its buffer still has them; the grace lets it come back.
 *
 * The tree parent is asked first, being the one that should have passed
 * the events on; one that keeps failing (another peer had what it did
 * not pass on, or it left our ask unanswered) PARENT_FAILS times within
 * PARENT_WINDOW is suspect (counted, logged) and asked no more while it
 * goes on failing, and another neighbour is asked to send us the tree in
 * its place (ADOPT): a parent that withholds events, or that we cannot
 * hear, then costs its subtree no wait.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "evlayer_int.h"

int evrepair_have_gap (const struct evlayer *ev)
{
    return ev->have_base && ev->rank != 0 && evl_gap_end (ev) > ev->last;
}

static void ask (struct evlayer *ev, uint32_t peer)
{
    json_t *o;
    uint32_t from = ev->last + 1, to = evl_gap_end (ev);

    ev->rep.peer = peer;
    ev->rep.id = ++ev->next_id;
    ev->rep.mark = ev->last;
    ev->rep.filled = 0;
    ev->rep.deadline = ev->now + REPAIR_TIMEOUT;
    if (peer == 0)
        ev->rep.asked_root = 1;
    ev->recent[ev->nrecent++ % RECENT_ASKS] = (struct ask){ peer, from, to };
    if (!(o = json_pack ("{s:I s:I s:I}", "id", (json_int_t)ev->rep.id,
                         "from", (json_int_t)from, "to", (json_int_t)to)))
        return;
    ev->repair_requests++;
    ev->ops->control (ev->arg, peer, EV_CTL_REPAIR_REQ, o);
    json_decref (o);
}

int evrepair_suspect (const struct evlayer *ev, uint32_t rank)
{
    return rank != UINT32_MAX && ev->par.suspect == rank
           && ev->now - ev->par.last_fail < PARENT_HOLD;
}

/* Our tree parent failed us once this round ('why'). */
static void blame_parent (struct evlayer *ev, const char *why)
{
    uint32_t parent = evl_tree_parent (ev);

    if (parent == UINT32_MAX || ev->rep.blamed)
        return;
    ev->rep.blamed = 1;
    ev->parent_failures++;
    if (ev->par.rank != parent
        || ev->now - ev->par.window_start > PARENT_WINDOW) {
        ev->par.rank = parent;
        ev->par.fails = 0;
        ev->par.window_start = ev->now;
    }
    ev->par.fails++;
    ev->par.last_fail = ev->now;
    if (ev->par.fails < PARENT_FAILS || evrepair_suspect (ev, parent))
        return;
    ev->par.suspect = parent;
    ev->parent_suspects++;
    ev->ops->log (ev->arg, LOG_WARNING, "events: tree parent %u failed %d "
                  "times within %.0f s (last: %s): suspect, events are "
                  "fetched round it", (unsigned)parent, ev->par.fails,
                  PARENT_WINDOW, why);
}

/* Is 'anc' rank r itself or one of r's ancestors in rank 0's tree? */
static int under (struct evlayer *ev, uint32_t r, uint32_t anc)
{
    for (int depth = 0; depth <= MAX_ANCESTORS; depth++) {
        int p;
        if (r == anc)
            return 1;
        if (r == 0 || (p = bgn_topo_bcast_parent (ev->topo, 0, r)) < 0)
            return 0;
        r = (uint32_t)p;
    }
    return 0;
}

/* The neighbour to take the tree from in a suspect parent's place: live
 * and in neither our subtree (it has the tree through us) nor the
 * parent's (through the parent); the nearest to rank 0 first. */
static uint32_t pick_substitute (struct evlayer *ev, uint32_t parent)
{
    uint32_t nb[MAX_NEIGHBOURS], best = UINT32_MAX;
    int n = bgn_topo_neighbours (ev->topo, ev->rank, nb, MAX_NEIGHBOURS);
    int best_depth = INT_MAX;

    for (int i = 0; i < n; i++) {
        uint32_t r = nb[i];
        int depth = 0;
        if (r == parent || ev->ops->is_down (ev->arg, r)
            || under (ev, r, ev->rank) || (parent != 0 && under (ev, r, parent)))
            continue;
        for (uint32_t a = r; a != 0 && depth <= MAX_ANCESTORS; depth++) {
            int p = bgn_topo_bcast_parent (ev->topo, 0, a);
            if (p < 0)
                break;
            a = (uint32_t)p;
        }
        if (depth < best_depth) {
            best_depth = depth;
            best = r;
        }
    }
    return best;
}

void evrepair_parent_tick (struct evlayer *ev)
{
    uint32_t parent = evl_tree_parent (ev);
    json_t *o;

    if (!ev->verify || !evrepair_suspect (ev, parent)) {
        ev->par.substitute = UINT32_MAX;
        return;
    }
    /* it still sends us nothing of what we have: still failing */
    if (ev->par.seen < ev->last
        && ev->now - ev->par.last_fail >= PARENT_HOLD / 2)
        ev->par.last_fail = ev->now;
    if (ev->par.substitute == UINT32_MAX
        || ev->ops->is_down (ev->arg, ev->par.substitute)) {
        uint32_t sub = pick_substitute (ev, parent);
        if (sub == UINT32_MAX)
            return;
        ev->par.substitute = sub;
        ev->par.asked = -INFINITY;
        ev->parent_switches++;
        ev->ops->log (ev->arg, LOG_WARNING, "events: taking the tree from "
                      "%u in suspect parent %u's place", (unsigned)sub,
                      (unsigned)parent);
    }
    if (ev->now - ev->par.asked < ADOPT_REFRESH || !(o = json_object ()))
        return;
    ev->par.asked = ev->now;
    ev->ops->control (ev->arg, ev->par.substitute, EV_CTL_ADOPT, o);
    json_decref (o);
}

/* Every candidate of this round has been asked. */
static void round_end (struct evlayer *ev)
{
    ev->rep.active = 0;
    if (ev->rep.asked > 0 && ev->rep.naks == ev->rep.asked
        && ev->rep.nak_to > ev->last) {
        /* every live peer asked lacks them, and rank 0 did not say they
         * are gone (it is down here, most often): rounds go on for a
         * while before giving up, for it may come back with them */
        uint32_t to = ev->rep.nak_to < evl_gap_end (ev) ? ev->rep.nak_to
                                                    : evl_gap_end (ev);
        if (ev->rep.lacked_since <= 0)
            ev->rep.lacked_since = ev->now;
        if (ev->now - ev->rep.lacked_since < REPAIR_ROOT_GRACE) {
            ev->rep.next_round = ev->now + REPAIR_ROUND_DELAY;
            return;
        }
        ev->rep.lacked_since = 0;
        evl_declare_lost (ev, ev->last + 1, to);
        evrepair_kick (ev);
        return;
    }
    ev->rep.next_round = ev->now + REPAIR_ROUND_DELAY;
}

/* Ask the next candidate: the tree parent, other live peers, rank 0. */
static void ask_next (struct evlayer *ev)
{
    uint32_t peer;
    int root_up = ev->rank != 0 && !ev->ops->is_down (ev->arg, 0);

    /* A gap wider than a buffer: rank 0 can say at once what is gone. */
    if (root_up && !ev->rep.asked_root
        && evl_gap_end (ev) - ev->last > (uint32_t)ev->cfg.buffer) {
        ask (ev, 0);
        ev->rep.asked++;
        return;
    }
    for (;;) {
        peer = ev->ops->repair_peer (ev->arg, ev->rep.cand++);
        if (peer == UINT32_MAX)
            break;
        if (peer == ev->rank || (peer == 0 && ev->rep.asked_root)
            || evrepair_suspect (ev, peer))
            continue;
        ask (ev, peer);
        ev->rep.asked++;
        return;
    }
    if (root_up && !ev->rep.asked_root) {
        ask (ev, 0);
        ev->rep.asked++;
        return;
    }
    round_end (ev);
}

/* Make sure a repair of last+1 .. gap_end is under way. */
void evrepair_kick (struct evlayer *ev)
{
    if (!evrepair_have_gap (ev)) {
        ev->rep.active = 0;
        ev->rep.lacked_since = 0;
        return;
    }
    if (ev->rep.active || ev->now < ev->rep.next_round
        || ev->now < ev->rep.hold_until)
        return;
    ev->rep.active = 1;
    ev->rep.blamed = 0;
    ev->rep.cand = 0;
    ev->rep.asked_root = 0;
    ev->rep.asked = ev->rep.naks = 0;
    ev->rep.nak_to = UINT32_MAX;
    ask_next (ev);
}

/* The current peer answered (or timed out, answer NULL). */
void evrepair_step (struct evlayer *ev, int answered, uint32_t lack_to,
                         int auth)
{
    if (!evrepair_have_gap (ev)) {
        ev->rep.active = 0;
        ev->rep.lacked_since = 0;
        return;
    }
    if (ev->last > ev->rep.mark) {
        if (ev->rep.filled > 0 && ev->rep.peer != evl_tree_parent (ev))
            blame_parent (ev, "another peer had events it did not pass on");
        ev->rep.lacked_since = 0;   /* someone had them after all */
        ask (ev, ev->rep.peer);     /* it helps: ask it for the rest */
        return;
    }
    if (!answered && ev->rep.peer == evl_tree_parent (ev))
        blame_parent (ev, "it did not answer an ask for them");
    if (answered && lack_to > ev->last) {
        uint32_t end = evl_gap_end (ev);
        if (auth) {
            /* rank 0 dropped them from its buffer: gone for good */
            evl_declare_lost (ev, ev->last + 1, lack_to < end ? lack_to : end);
            ev->rep.active = 0;
            evrepair_kick (ev);
            return;
        }
        ev->rep.naks++;
        if (lack_to < ev->rep.nak_to)
            ev->rep.nak_to = lack_to;
    }
    ask_next (ev);
}

/* Answer a neighbour's request from both stores, bounded. */
void evrepair_serve (struct evlayer *ev, uint32_t peer, json_t *o)
{
    json_int_t id, a, b;
    uint32_t from, to, lack_to, first_sent = 0;
    int sent = 0;
    size_t bytes = 0;
    struct store *st[2] = { &ev->ring, &ev->early };
    json_t *end;

    if (json_unpack (o, "{s:I s:I s:I}", "id", &id, "from", &a, "to", &b) < 0
        || a < 1 || b < a || b > UINT32_MAX) {
        ev->rejected++;
        return;
    }
    from = (uint32_t)a;
    to = (uint32_t)b;
    for (int k = 0; k < 2; k++) {
        for (int i = evstore_lower (st[k], from); i < st[k]->n; i++) {
            struct held *h = evstore_at (st[k], i);
            if (h->first > to || sent >= REPAIR_MAX_BATCHES
                || bytes >= REPAIR_MAX_BYTES)
                break;
            if (!sent)
                first_sent = h->first;
            ev->ops->send (ev->arg, peer, EV_REPAIR, h->f, NULL);
            sent++;
            bytes += h->bytes;
            ev->repairs_served++;
        }
    }
    /* What we lack at the start of the range, for good or for now. */
    if (sent && first_sent <= from)
        lack_to = from - 1;
    else if (sent)
        lack_to = first_sent - 1;
    else {
        uint32_t known = ev->rank == 0 ? ev->sent_seq : ev->high;
        lack_to = known < from ? from - 1 : (known < to ? known : to);
    }
    /* Rank 0's word is final for what it numbered and then dropped. */
    int auth = ev->rank == 0 && lack_to >= from && from > ev->root_base
               && lack_to <= ev->gone;
    if ((end = json_pack ("{s:I s:I s:b}", "id", id, "lack_to",
                          (json_int_t)lack_to, "auth", auth))) {
        ev->ops->control (ev->arg, peer, EV_CTL_REPAIR_END, end);
        json_decref (end);
    }
}

void evrepair_recv_end (struct evlayer *ev, uint32_t source, uint32_t via,
                      json_t *o)
{
    json_int_t id, lack_to;
    int auth = 0;

    if (json_unpack (o, "{s:I s:I s?b}", "id", &id, "lack_to", &lack_to,
                     "auth", &auth) < 0 || lack_to < 0
        || lack_to > UINT32_MAX) {
        ev->rejected++;
        return;
    }
    if (!ev->rep.active || (uint32_t)id != ev->rep.id
        || source != ev->rep.peer || via != source) {
        ev->stale_answers++;
        return;
    }
    evrepair_step (ev, 1, (uint32_t)lack_to, auth && source == 0);
}

/* Was a repair answer from peer covering first..last asked for lately? */
int evrepair_asked_for (const struct evlayer *ev, uint32_t peer, uint32_t first,
                      uint32_t last)
{
    int n = ev->nrecent < RECENT_ASKS ? ev->nrecent : RECENT_ASKS;

    for (int i = 0; i < n; i++) {
        const struct ask *a = &ev->recent[i];
        if (a->peer == peer && first <= a->to && last >= a->from)
            return 1;
    }
    return 0;
}
