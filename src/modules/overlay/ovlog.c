/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* ovlog.c: the core's log lines, plain and rate-limited (ovlog.h).
 *
 * Lowest part of the core: it calls only the io, so every part may log
 * without calling up the layering.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "src/common/libutil/ratelimit.h"
#include "overlay.h"
#include "ovlog.h"

#define OVLOG_BURST 10          /* lines per call site ... */
#define OVLOG_INTERVAL 60.0     /* ... per this many seconds */

int ovlog_init (struct overlay *ov)
{
    memset (ov->log.slots, 0, sizeof (ov->log.slots));
    return 0;
}

void ovlog_fini (struct overlay *ov)
{
    for (int i = 0; i < OVLOG_SLOTS; i++)
        ratelimit_destroy (&ov->log.slots[i].limit);
}

/* The budget of 'fmt': found, made in a free slot, or the least recently
 * used one reused.  NULL without memory. */
static struct ovlog_slot *slot_of (struct overlay *ov, const char *fmt,
                                   double now)
{
    struct ovlog_slot *free_slot = NULL, *oldest = NULL, *s;

    for (int i = 0; i < OVLOG_SLOTS; i++) {
        s = &ov->log.slots[i];
        if (s->fmt == fmt)
            return s;
        if (!s->fmt && !free_slot)
            free_slot = s;
        if (s->fmt && (!oldest || s->last_use < oldest->last_use))
            oldest = s;
    }
    s = free_slot ? free_slot : oldest;
    ratelimit_destroy (&s->limit);
    memset (s, 0, sizeof (*s));
    if (!(s->limit = ratelimit_create (OVLOG_BURST, OVLOG_INTERVAL)))
        return NULL;
    s->fmt = fmt;
    strcpy (s->key, "%s%s");
    return s;
}

double ovl_now (struct overlay *ov)
{
    return ov->log.held ? ov->log.now : ov->io->now (ov->ctx);
}

double ovl_now_fresh (struct overlay *ov)
{
    return ov->io->now (ov->ctx);
}

void ovl_now_hold (struct overlay *ov)
{
    ov->log.now = ov->io->now (ov->ctx);
    ov->log.held = 1;
}

void ovl_now_release (struct overlay *ov)
{
    ov->log.held = 0;
}

void ovl_log (struct overlay *ov, int level, const char *fmt, ...)
{
    va_list ap;

    va_start (ap, fmt);
    ov->io->log (ov->ctx, level, fmt, ap);
    va_end (ap);
}

void ovl_log_limited (struct overlay *ov, int level, const char *fmt, ...)
{
    char line[512], more[64];
    unsigned long suppressed = 0;
    double now = ovl_now (ov);
    struct ovlog_slot *s = slot_of (ov, fmt, now);
    va_list ap;

    if (s) {
        s->last_use = now;
        if (!ratelimit_check (s->limit, now, &suppressed))
            return;
    }
    va_start (ap, fmt);
    vsnprintf (line, sizeof (line), fmt, ap);
    va_end (ap);
    ratelimit_suffix (more, sizeof (more), suppressed);
    if (s)
        ovl_log (ov, level, s->key, line, more);
    else
        ovl_log (ov, level, "%s%s", line, more);
}
