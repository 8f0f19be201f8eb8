/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* timer.h: the overlay core's timers, kept without any reactor.
 *
 * The protocol core may not own a clock or an event loop (it runs under
 * the broker's reactor and under a simulator's virtual clock alike), so
 * its timers live in a queue here: each timer is an object that can be
 * armed for an absolute time on the core's monotonic clock, re-armed and
 * disarmed any number of times.  Whoever drives the core asks for the
 * earliest deadline (timerq_next, or the notify callback whenever it
 * changes) and calls timerq_run when that time comes.
 *
 * Timers due at the same time run in the order they were armed, so a run
 * is deterministic.  A callback may arm, disarm, create or destroy any
 * timer, itself included.  No global state.
 */
#ifndef BGN_OVERLAY_TIMER_H
#define BGN_OVERLAY_TIMER_H

#include <stdbool.h>

struct timerq;
struct ovtimer;

typedef void (*ovtimer_f) (void *arg);

/* notify (if not NULL) is called with the new earliest deadline
 * (INFINITY when nothing is armed) each time it changes, and at the end
 * of every timerq_run (the driver's wakeup is used up by then). */
struct timerq *timerq_create (void (*notify) (void *arg, double when),
                              void *arg);
/* Destroys the queue and every timer still in it. */
void timerq_destroy (struct timerq **qp);

/* Earliest armed deadline, INFINITY if none. */
double timerq_next (const struct timerq *q);

/* Run, in deadline order, every timer due at 'now' (deadline <= now),
 * including ones armed by callbacks for no later than now.  Returns how
 * many ran. */
int timerq_run (struct timerq *q, double now);

/* A disarmed timer that will call cb (arg) when it fires.  NULL/ENOMEM. */
struct ovtimer *ovtimer_create (struct timerq *q, ovtimer_f cb, void *arg);
/* Disarm and free; NULL-safe, sets *tp to NULL. */
void ovtimer_destroy (struct ovtimer **tp);

/* Fire once at absolute time 'when' (re-arming moves it). */
void ovtimer_arm (struct ovtimer *t, double when);
void ovtimer_disarm (struct ovtimer *t);
bool ovtimer_armed (const struct ovtimer *t);
double ovtimer_deadline (const struct ovtimer *t);   /* INFINITY if disarmed */

#endif
