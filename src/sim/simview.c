/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* simview.c: what the observer measures about the brokers' views.
 *
 * Each core tells the io when it fences or unfences a rank (io->note);
 * here that is counted against the truth (who is really running), so
 * convergence (every live broker's down set is the real one), survivors
 * fenced wrongly and for how long are known at every event without
 * asking each core.  Also the end-of-run views, next-hop reachability
 * between sampled survivors, and events missing at survivors.
 */
#include <stdbool.h>
#include <stdint.h>

#include "simnet_int.h"

/* ---- convergence bookkeeping ------------------------------------------- */

static bool is_dead (struct simnet *s, uint32_t rank)
{
    return !sim_running (&s->b[rank]);
}

void sim_wrong_changes (struct simnet *s, int delta)
{
    s->st.wrong_fence_seconds += s->st.wrong_fenced_now
                                 * (s->now - s->wrong_since);
    s->wrong_since = s->now;
    s->st.wrong_fenced_now += delta;
    if (s->st.wrong_fenced_now > s->st.wrong_fenced_max)
        s->st.wrong_fenced_max = s->st.wrong_fenced_now;
}

/* Live broker's view changed: rank fenced (+1) or unfenced (-1). */
void sim_fenced_count (struct simnet *s, uint32_t rank, int delta)
{
    uint32_t before = s->fenced_by[rank];

    s->fenced_by[rank] += delta;
    if (is_dead (s, rank))
        s->correct += delta;
    else {
        s->wrong += delta;
        if ((before == 0) != (s->fenced_by[rank] == 0))
            sim_wrong_changes (s, before == 0 ? 1 : -1);
    }
}

/* rank started or died: its fences count as right or wrong now. */
void sim_truth_changes (struct simnet *s, uint32_t rank, bool now_dead)
{
    uint32_t k = s->fenced_by[rank];

    if (now_dead) {
        s->correct += k;
        s->wrong -= k;
        if (k)
            sim_wrong_changes (s, -1);
    }
    else {
        s->correct -= k;
        s->wrong += k;
        if (k)
            sim_wrong_changes (s, 1);
    }
    s->st.last_change = s->now;
}

bool simnet_converged (struct simnet *s)
{
    return s->wrong == 0
           && s->correct == (uint64_t)s->st.live * (s->n - s->st.live);
}

/* Note when the views become the truth again: after a crash or a start
 * (the truth changed) or after survivors were fenced wrongly (the views
 * changed). */
void sim_check_converged (struct simnet *s)
{
    bool c = simnet_converged (s);

    if (c && !s->was_converged)
        s->st.converged_at = s->now;
    s->was_converged = c;
}

uint64_t simnet_events_missing (struct simnet *s)
{
    uint64_t missing = 0;

    for (uint32_t r = 0; r < s->n; r++) {
        struct sbroker *b = &s->b[r];
        if (sim_running (b) && b->have_base && b->last_seq < s->max_seq)
            missing += s->max_seq - b->last_seq;
    }
    return missing;
}

void simnet_views (struct simnet *s, uint8_t *any, uint8_t *all,
                   uint8_t *dead)
{
    for (uint32_t r = 0; r < s->n; r++) {
        uint32_t others = s->st.live - (sim_running (&s->b[r]) ? 1 : 0);
        any[r] = s->fenced_by[r] > 0;
        all[r] = others > 0 && s->fenced_by[r] == others;
        dead[r] = !sim_running (&s->b[r]);
    }
}

#define WALK_HOPS 128           /* next hops asked of a core at most */

/* Follow each broker's first usable next hop from a to b: up in its
 * view (overlay_next_hops) and really running. */
static bool walk (struct simnet *s, uint32_t a, uint32_t b)
{
    uint32_t cur = a, hops[WALK_HOPS];
    struct overlay *ov;

    for (int step = 0; step < 64; step++) {
        if (cur == b)
            return true;
        if (!(ov = simnet_core (s, cur)))
            return false;
        int n = overlay_next_hops (ov, b, hops, WALK_HOPS);
        uint32_t next = UINT32_MAX;
        for (int i = 0; i < n && next == UINT32_MAX; i++)
            if (simnet_alive (s, hops[i]))
                next = hops[i];
        if (next == UINT32_MAX)
            return false;
        cur = next;
    }
    return false;
}

void simnet_reachability (struct simnet *s, int samples, int *reachable,
                          int *tried)
{
    *reachable = *tried = 0;
    if (s->st.live < 2)
        return;
    for (int i = 0; i < samples; i++) {
        struct sbroker *a = sim_random_live (s), *b = sim_random_live (s);
        if (!a || !b || a == b)
            continue;
        (*tried)++;
        if (walk (s, a->rank, b->rank))
            (*reachable)++;
    }
}
