/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* timer.c: a deadline-ordered queue of timers (see timer.h).
 *
 * A broker has a handful of timers (keepalive tick, backlog retry,
 * partition check, tracker sweep, one per status gather in progress), so
 * a sorted doubly linked list beats a heap: arming is O(timers), the
 * earliest is the head.  Ties keep arming order via a sequence number.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "timer.h"

struct ovtimer {
    struct timerq *q;
    ovtimer_f cb;
    void *arg;
    double when;
    uint64_t seq;
    bool armed;
    struct ovtimer *prev, *next;     /* in q's armed list */
    struct ovtimer *all_next;        /* every timer of q, for destroy */
    struct ovtimer *all_prev;
};

struct timerq {
    struct ovtimer *head;            /* armed, by (when, seq) */
    struct ovtimer *all;
    uint64_t seq;
    int running;                   /* in timerq_run: notify once at the end */
    double notified;
    void (*notify) (void *arg, double when);
    void *arg;
};

struct timerq *timerq_create (void (*notify) (void *arg, double when),
                              void *arg)
{
    struct timerq *q = calloc (1, sizeof (*q));

    if (!q)
        return NULL;
    q->notify = notify;
    q->arg = arg;
    q->notified = INFINITY;
    return q;
}

void timerq_destroy (struct timerq **qp)
{
    if (qp && *qp) {
        struct timerq *q = *qp;
        while (q->all) {
            struct ovtimer *t = q->all;
            ovtimer_destroy (&t);
        }
        free (q);
        *qp = NULL;
    }
}

double timerq_next (const struct timerq *q)
{
    return q->head ? q->head->when : INFINITY;
}

static void notify (struct timerq *q, bool always)
{
    double next = timerq_next (q);

    if (q->running)
        return;
    if (next != q->notified || always) {
        q->notified = next;
        if (q->notify)
            q->notify (q->arg, next);
    }
}

static void unlink_armed (struct ovtimer *t)
{
    struct timerq *q = t->q;

    if (t->prev)
        t->prev->next = t->next;
    else
        q->head = t->next;
    if (t->next)
        t->next->prev = t->prev;
    t->prev = t->next = NULL;
    t->armed = false;
}

struct ovtimer *ovtimer_create (struct timerq *q, ovtimer_f cb, void *arg)
{
    struct ovtimer *t;

    if (!q || !cb) {
        errno = EINVAL;
        return NULL;
    }
    if (!(t = calloc (1, sizeof (*t))))
        return NULL;
    t->q = q;
    t->cb = cb;
    t->arg = arg;
    t->when = INFINITY;
    t->all_next = q->all;
    if (q->all)
        q->all->all_prev = t;
    q->all = t;
    return t;
}

void ovtimer_destroy (struct ovtimer **tp)
{
    struct ovtimer *t;

    if (!tp || !(t = *tp))
        return;
    ovtimer_disarm (t);
    if (t->all_prev)
        t->all_prev->all_next = t->all_next;
    else
        t->q->all = t->all_next;
    if (t->all_next)
        t->all_next->all_prev = t->all_prev;
    free (t);
    *tp = NULL;
}

void ovtimer_arm (struct ovtimer *t, double when)
{
    struct timerq *q = t->q;
    struct ovtimer *at, *before = NULL;

    if (t->armed)
        unlink_armed (t);
    t->when = when;
    t->seq = ++q->seq;
    for (at = q->head; at && at->when <= when; at = at->next)
        before = at;
    t->prev = before;
    t->next = before ? before->next : q->head;
    if (t->next)
        t->next->prev = t;
    if (before)
        before->next = t;
    else
        q->head = t;
    t->armed = true;
    notify (q, false);
}

void ovtimer_disarm (struct ovtimer *t)
{
    if (!t || !t->armed)
        return;
    unlink_armed (t);
    t->when = INFINITY;
    notify (t->q, false);
}

bool ovtimer_armed (const struct ovtimer *t)
{
    return t && t->armed;
}

double ovtimer_deadline (const struct ovtimer *t)
{
    return t && t->armed ? t->when : INFINITY;
}

int timerq_run (struct timerq *q, double now)
{
    int ran = 0;

    q->running++;
    while (q->head && q->head->when <= now) {
        struct ovtimer *t = q->head;
        unlink_armed (t);
        t->when = INFINITY;
        t->cb (t->arg);   /* may re-arm or destroy t */
        ran++;
    }
    q->running--;
    /* The driver's wakeup was used up by this run (it may even have come
     * a little early, with nothing due): always tell it the next one. */
    notify (q, true);
    return ran;
}
