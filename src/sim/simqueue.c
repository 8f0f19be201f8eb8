/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* simqueue.c: the simulation's random numbers, event queue and clock.
 *
 * One generator (xorshift64*, seeded by simnet_create) draws every random
 * number of a run, and one queue (a binary heap ordered by time, then by
 * the order events were scheduled) holds everything that will happen:
 * the same seed gives the same run, event for event.  Virtual time is the
 * time of the event being handled (simnet_run sets s->now).
 */
#include <stdio.h>
#include <stdlib.h>

#include "simnet_int.h"

/* ---- random numbers ---------------------------------------------------- */

uint64_t sim_rnd (struct simnet *s)
{
    s->rng ^= s->rng >> 12;
    s->rng ^= s->rng << 25;
    s->rng ^= s->rng >> 27;
    return s->rng * 2685821657736338717ULL;
}

double sim_rnd_unit (struct simnet *s)
{
    return (double)(sim_rnd (s) >> 11) / 9007199254740992.0;
}

uint32_t sim_rnd_below (struct simnet *s, uint32_t n)
{
    return n ? (uint32_t)(sim_rnd (s) % n) : 0;
}

/* ---- the event queue --------------------------------------------------- */

static bool before (const struct simev *a, const struct simev *b)
{
    return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static void push (struct simnet *s, struct simev ev)
{
    size_t i;

    if (s->heap_n == s->heap_cap) {
        size_t cap = s->heap_cap ? s->heap_cap * 2 : 4096;
        struct simev *h = realloc (s->heap, cap * sizeof (*h));
        if (!h) {
            fprintf (stderr, "bgn-sim: out of memory for events\n");
            exit (1);
        }
        s->heap = h;
        s->heap_cap = cap;
    }
    ev.seq = ++s->seq;
    for (i = s->heap_n++; i > 0; i = (i - 1) / 2) {
        struct simev *parent = &s->heap[(i - 1) / 2];
        if (!before (&ev, parent))
            break;
        s->heap[i] = *parent;
    }
    s->heap[i] = ev;
}

struct simev sim_pop (struct simnet *s)
{
    struct simev top = s->heap[0], last = s->heap[--s->heap_n];
    size_t i = 0;

    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= s->heap_n)
            break;
        if (c + 1 < s->heap_n && before (&s->heap[c + 1], &s->heap[c]))
            c++;
        if (!before (&s->heap[c], &last))
            break;
        s->heap[i] = s->heap[c];
        i = c;
    }
    if (s->heap_n)
        s->heap[i] = last;
    return top;
}

void sim_schedule (struct simnet *s, double t, uint32_t type, uint32_t rank,
                   uint32_t a, uint32_t b, double x, struct smsg *msg)
{
    struct simev ev = { .t = t, .type = type, .rank = rank, .a = a, .b = b,
                        .x = x, .msg = msg };
    push (s, ev);
}

double simnet_now (const struct simnet *s)
{
    return s->now;
}
