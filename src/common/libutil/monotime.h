/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* monotime.h: the monotonic clock in seconds, for deadlines and timing.
 *
 * Deadlines, keepalive clocks and RTTs must not jump with the wall clock,
 * so every part of bgn reads CLOCK_MONOTONIC through this one function.
 */
#ifndef BGN_MONOTIME_H
#define BGN_MONOTIME_H

/* Seconds since an arbitrary fixed point (CLOCK_MONOTONIC). */
double monotime_now (void);

#endif
