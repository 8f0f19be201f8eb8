/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* ovlog.c: the core's log lines, plain and rate-limited (ovlog.h).
 *
 * Lowest part of the core: it calls only the io, so every part may log
 * without calling up the layering.
 */
#include <stdarg.h>
#include <stdio.h>

#include "src/common/libutil/ratelimit.h"
#include "overlay.h"
#include "ovlog.h"

int ovlog_init (struct overlay *ov)
{
    return (ov->log.limit = ratelimit_create (10, 60.)) ? 0 : -1;
}

void ovlog_fini (struct overlay *ov)
{
    ratelimit_destroy (&ov->log.limit);
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
    unsigned long suppressed;
    va_list ap;

    if (!ratelimit_check (ov->log.limit, ovl_now (ov), &suppressed))
        return;
    va_start (ap, fmt);
    vsnprintf (line, sizeof (line), fmt, ap);
    va_end (ap);
    ovl_log (ov, level, "%s%s", line,
             ratelimit_suffix (more, sizeof (more), suppressed));
}
