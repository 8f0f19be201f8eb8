/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* ratelimit.c: per-warning log budgets (see ratelimit.h).
 *
 * A fixed window: it opens at the first event after the previous window
 * ended, allows 'burst' events in it and counts the rest.  Fixed windows
 * need two numbers of state and are easy to reason about in a log ("at
 * most K lines per interval"); a token bucket would smooth bursts, which
 * log readers do not need.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "ratelimit.h"

struct ratelimit {
    int burst;
    double interval;
    bool open;                  /* a window has started */
    double window_start;
    int allowed;                /* events allowed in this window */
    unsigned long suppressed;   /* since the last allowed event */
    unsigned long total;        /* over the object's life */
};

ratelimit_t *ratelimit_create (int burst, double interval)
{
    ratelimit_t *rl;

    if (burst < 1 || !(interval > 0) || !isfinite (interval)) {
        errno = EINVAL;
        return NULL;
    }
    if (!(rl = calloc (1, sizeof (*rl))))
        return NULL;
    rl->burst = burst;
    rl->interval = interval;
    return rl;
}

void ratelimit_destroy (ratelimit_t **p)
{
    if (p && *p) {
        free (*p);
        *p = NULL;
    }
}

static bool window_over (const ratelimit_t *rl, double now)
{
    return !rl->open || now < rl->window_start
           || now - rl->window_start >= rl->interval;
}

bool ratelimit_check (ratelimit_t *rl, double now, unsigned long *suppressed)
{
    if (window_over (rl, now)) {
        rl->open = true;
        rl->window_start = now;
        rl->allowed = 0;
    }
    if (rl->allowed < rl->burst) {
        rl->allowed++;
        if (suppressed)
            *suppressed = rl->suppressed;
        rl->suppressed = 0;
        return true;
    }
    rl->suppressed++;
    rl->total++;
    if (suppressed)
        *suppressed = 0;
    return false;
}

unsigned long ratelimit_flush (ratelimit_t *rl, double now)
{
    unsigned long n;

    if (rl->suppressed == 0 || !window_over (rl, now))
        return 0;
    n = rl->suppressed;
    rl->suppressed = 0;
    return n;
}

unsigned long ratelimit_total_suppressed (const ratelimit_t *rl)
{
    return rl ? rl->total : 0;
}

const char *ratelimit_suffix (char *buf, size_t len, unsigned long n)
{
    if (!buf || len == 0)
        return "";
    if (n == 0)
        buf[0] = '\0';
    else
        snprintf (buf, len, " (%lu similar message%s suppressed)", n,
                  n == 1 ? "" : "s");
    return buf;
}
