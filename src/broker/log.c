/* log.c: the broker's stderr logger (see log.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

struct logger {
    char prog[64];
    long rank;          /* -1 until bootstrap sets it */
    int level;
};

struct logger *logger_create (const char *prog, int level)
{
    struct logger *l = calloc (1, sizeof (*l));
    if (!l)
        return NULL;
    snprintf (l->prog, sizeof (l->prog), "%s", prog);
    l->rank = -1;
    l->level = level;
    return l;
}

void logger_destroy (struct logger **lp)
{
    if (lp && *lp) {
        free (*lp);
        *lp = NULL;
    }
}

void logger_set_rank (struct logger *l, long rank)
{
    l->rank = rank;
}

void logger_set_level (struct logger *l, int level)
{
    l->level = level;
}

int logger_get_level (struct logger *l)
{
    return l->level;
}

const char *logger_levelstr (int level)
{
    static const char *names[] = {
        "emergency", "alert", "critical", "error",
        "warning", "notice", "info", "debug",
    };
    if (level < 0 || level > LOG_DEBUG)
        return "log";
    return names[level];
}

void logger_vlog (struct logger *l, int level, const char *fmt, va_list ap)
{
    char buf[1024];

    if (level > l->level)
        return;
    vsnprintf (buf, sizeof (buf), fmt, ap);
    /* One fprintf per line so lines from one broker never interleave. */
    if (l->rank >= 0)
        fprintf (stderr, "%s[%ld]: %s: %s\n", l->prog, l->rank,
                 logger_levelstr (level), buf);
    else
        fprintf (stderr, "%s: %s: %s\n", l->prog, logger_levelstr (level),
                 buf);
}

void logger_log (struct logger *l, int level, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    logger_vlog (l, level, fmt, ap);
    va_end (ap);
}
