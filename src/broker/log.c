/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* log.c: the broker's logger (see log.h).
 *
 * Flood control is keyed by the format string's address: a call site
 * that fires in a loop (a peer refusing our certificate, a client sending
 * garbage) is the flood, whatever its arguments.  A small table of
 * LIMIT_SLOTS budgets is enough: a broker has a few dozen distinct
 * warnings; when the table is full the least recently used slot is
 * reused (its pending count reported first).
 *
 * The ring is an array of ring_size slots; line number seq lives in slot
 * seq % ring_size.  Its heap (the array and each line's copy, as the
 * allocator counts them) is kept within ring_bound by dropping the
 * oldest lines first, so 'first' (the oldest line kept) may run ahead of
 * seq - ring_size + 1.
 */
#include <errno.h>
#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "src/common/libutil/loglevel.h"
#include "src/common/libutil/monotime.h"
#include "src/common/libutil/ratelimit.h"
#include "log.h"

#define LIMIT_SLOTS 64
#define LINE_MAX_LEN 1024

struct limit_slot {
    const char *fmt;          /* key; NULL: free */
    ratelimit_t *rl;
    int level;
    double last_use;
    char last[256];           /* the last line suppressed, for flush */
};

struct ring_slot {
    uint64_t seq;             /* 0: empty */
    double time;
    int level;
    char *text;
};

struct logger {
    char prog[64];
    long rank;                /* -1 until bootstrap sets it */
    int level;                /* stderr */
    struct limit_slot limits[LIMIT_SLOTS];
    uint64_t suppressed;
    int ring_level;
    size_t ring_size;
    struct ring_slot *ring;   /* [ring_size] */
    size_t ring_bound;        /* heap of the ring, at most */
    size_t text_bytes;        /* heap of the lines' copies */
    uint64_t evicted;         /* lines dropped early for the bound */
    uint64_t first;           /* oldest line possibly kept */
    uint64_t seq;             /* last assigned */
    double (*now) (void *arg);
    void *now_arg;
};

static double default_clock (void *arg)
{
    return monotime_now ();
}

void logger_set_clock (struct logger *l, double (*now) (void *arg),
                       void *arg)
{
    l->now = now ? now : default_clock;
    l->now_arg = arg;
}

struct logger *logger_create (const char *prog, int level)
{
    struct logger *l = calloc (1, sizeof (*l));
    if (!l)
        return NULL;
    if (!(l->ring = calloc (LOGGER_RING_SIZE, sizeof (*l->ring)))) {
        free (l);
        return NULL;
    }
    snprintf (l->prog, sizeof (l->prog), "%s", prog);
    l->rank = -1;
    l->level = level;
    l->ring_level = LOG_DEBUG;
    l->ring_size = LOGGER_RING_SIZE;
    l->ring_bound = LOGGER_RING_BYTES;
    l->first = 1;
    l->now = default_clock;
    return l;
}

static void ring_free (struct ring_slot *ring, size_t size)
{
    for (size_t i = 0; i < size; i++)
        free (ring[i].text);
    free (ring);
}

void logger_destroy (struct logger **lp)
{
    if (lp && *lp) {
        struct logger *l = *lp;
        for (int i = 0; i < LIMIT_SLOTS; i++)
            ratelimit_destroy (&l->limits[i].rl);
        ring_free (l->ring, l->ring_size);
        free (l);
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

int logger_set_ring (struct logger *l, int level, size_t size)
{
    struct ring_slot *ring;

    if (level < LOG_EMERG || level > LOG_DEBUG || size < 1) {
        errno = EINVAL;
        return -1;
    }
    if (!(ring = calloc (size, sizeof (*ring)))) {
        errno = ENOMEM;
        return -1;
    }
    ring_free (l->ring, l->ring_size);
    l->ring = ring;
    l->ring_size = size;
    l->ring_level = level;
    l->text_bytes = 0;
    l->first = l->seq + 1;
    return 0;
}

int logger_set_ring_bytes (struct logger *l, size_t bytes)
{
    if (bytes < 1) {
        errno = EINVAL;
        return -1;
    }
    l->ring_bound = bytes;
    return 0;
}

size_t logger_ring_bytes (struct logger *l)
{
    return malloc_usable_size (l->ring) + l->text_bytes;
}

size_t logger_ring_bound (struct logger *l)
{
    return l->ring_bound;
}

uint64_t logger_ring_evicted (struct logger *l)
{
    return l->evicted;
}

/* Forget the line in slot s (if any). */
static void slot_clear (struct logger *l, struct ring_slot *s)
{
    if (s->text) {
        l->text_bytes -= malloc_usable_size (s->text);
        free (s->text);
        s->text = NULL;
    }
    s->seq = 0;
}

int logger_get_ring_level (struct logger *l)
{
    return l->ring_level;
}

size_t logger_get_ring_size (struct logger *l)
{
    return l->ring_size;
}

const char *logger_levelstr (int level)
{
    return loglevel_name (level);
}

static double wallclock (void)
{
    struct timeval tv;
    gettimeofday (&tv, NULL);
    return tv.tv_sec + tv.tv_usec * 1e-6;
}

static void ring_add (struct logger *l, int level, const char *text)
{
    char *copy = strdup (text);
    struct ring_slot *s;

    if (!copy)
        return;
    l->seq++;
    s = &l->ring[l->seq % l->ring_size];
    slot_clear (l, s);
    s->text = copy;
    s->seq = l->seq;
    s->time = wallclock ();
    s->level = level;
    l->text_bytes += malloc_usable_size (copy);
    if (l->seq >= l->ring_size && l->first <= l->seq - l->ring_size)
        l->first = l->seq - l->ring_size + 1;
    /* past the byte bound the oldest lines go (the newest always stays) */
    while (logger_ring_bytes (l) > l->ring_bound && l->first < l->seq) {
        struct ring_slot *old = &l->ring[l->first % l->ring_size];
        if (old->seq == l->first && old->text) {
            slot_clear (l, old);
            l->evicted++;
        }
        l->first++;
    }
}

/* Print one line if its level is printed, keep it in the ring if its
 * level is kept.  One fprintf per line so lines from one broker never
 * interleave. */
static void emit (struct logger *l, int level, const char *text)
{
    if (level <= l->level && l->rank >= 0)
        fprintf (stderr, "%s[%ld]: %s: %s\n", l->prog, l->rank,
                 logger_levelstr (level), text);
    else if (level <= l->level)
        fprintf (stderr, "%s: %s: %s\n", l->prog, logger_levelstr (level),
                 text);
    if (level <= l->ring_level)
        ring_add (l, level, text);
}

static void report_suppressed (struct logger *l, struct limit_slot *s,
                               unsigned long n)
{
    char line[LINE_MAX_LEN];

    snprintf (line, sizeof (line), "%lu similar message%s suppressed; the "
              "last: %s", n, n == 1 ? "" : "s", s->last);
    emit (l, s->level, line);
}

/* The budget of 'fmt', created or recycled as needed; NULL on ENOMEM. */
static struct limit_slot *limit_slot (struct logger *l, const char *fmt,
                                      double now)
{
    struct limit_slot *free_slot = NULL, *oldest = NULL;

    for (int i = 0; i < LIMIT_SLOTS; i++) {
        struct limit_slot *s = &l->limits[i];
        if (s->fmt == fmt)
            return s;
        if (!s->fmt && !free_slot)
            free_slot = s;
        if (s->fmt && (!oldest || s->last_use < oldest->last_use))
            oldest = s;
    }
    if (!free_slot) {
        unsigned long n = ratelimit_flush (oldest->rl, INFINITY);
        if (n > 0)
            report_suppressed (l, oldest, n);
        ratelimit_destroy (&oldest->rl);
        free_slot = oldest;
    }
    memset (free_slot, 0, sizeof (*free_slot));
    if (!(free_slot->rl = ratelimit_create (LOGGER_BURST, LOGGER_INTERVAL)))
        return NULL;
    free_slot->fmt = fmt;
    free_slot->last_use = now;
    return free_slot;
}

void logger_vlog (struct logger *l, int level, const char *fmt, va_list ap)
{
    char buf[LINE_MAX_LEN], suffix[64] = "";
    struct limit_slot *s = NULL;
    unsigned long n = 0;
    double now;

    if (level > l->level && level > l->ring_level)
        return;
    vsnprintf (buf, sizeof (buf), fmt, ap);
    if (level < LOG_DEBUG) {
        now = l->now (l->now_arg);
        if ((s = limit_slot (l, fmt, now))) {
            s->last_use = now;
            s->level = level;
            if (!ratelimit_check (s->rl, now, &n)) {
                size_t len = strnlen (buf, sizeof (s->last) - 1);
                memcpy (s->last, buf, len);
                s->last[len] = '\0';
                l->suppressed++;
                return;
            }
        }
    }
    if (n > 0) {
        ratelimit_suffix (suffix, sizeof (suffix), n);
        if (strlen (buf) + strlen (suffix) < sizeof (buf))
            strcat (buf, suffix);
    }
    emit (l, level, buf);
}

void logger_log (struct logger *l, int level, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    logger_vlog (l, level, fmt, ap);
    va_end (ap);
}

void logger_flush (struct logger *l)
{
    double now = l->now (l->now_arg);

    for (int i = 0; i < LIMIT_SLOTS; i++) {
        struct limit_slot *s = &l->limits[i];
        unsigned long n;
        if (s->fmt && (n = ratelimit_flush (s->rl, now)) > 0)
            report_suppressed (l, s, n);
    }
}

void logger_ring_foreach (struct logger *l, uint64_t after,
                          void (*cb) (const struct log_entry *e, void *arg),
                          void *arg)
{
    uint64_t first = l->seq > l->ring_size ? l->seq - l->ring_size + 1 : 1;

    if (after + 1 > first)
        first = after + 1;
    if (l->first > first)
        first = l->first;
    for (uint64_t seq = first; seq <= l->seq; seq++) {
        struct ring_slot *s = &l->ring[seq % l->ring_size];
        struct log_entry e;
        if (s->seq != seq || !s->text)
            continue;
        e.seq = s->seq;
        e.time = s->time;
        e.level = s->level;
        e.text = s->text;
        cb (&e, arg);
    }
}

void logger_ring_clear (struct logger *l)
{
    for (size_t i = 0; i < l->ring_size; i++)
        slot_clear (l, &l->ring[i]);
    l->first = l->seq + 1;
}

uint64_t logger_suppressed (struct logger *l)
{
    return l->suppressed;
}
