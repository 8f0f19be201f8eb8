/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* log.h: the broker's logger: syslog levels, a rank prefix, flood control
 * and a ring buffer of recent lines.
 *
 * Lines on stderr look like "bgn-broker[3]: error: overlay: bind failed:
 * ..." so that output from many brokers on one terminal stays readable
 * (and 'bgn start' can tell their level).  The logger is an object owned
 * by the broker, not global state.
 *
 * Flood control: every message format (the fmt pointer of the call site,
 * modules included) gets its own budget, LOGGER_BURST lines per
 * LOGGER_INTERVAL seconds (ratelimit.h).  Past it, lines are counted, not
 * printed; the next line allowed carries " (N similar messages
 * suppressed)", and logger_flush(), called from a periodic timer, reports
 * a count whose window ended with no further line.  Debug lines are not
 * limited (they are few: state changes and drops, none per message).
 *
 * Two levels: the stderr level (logger_create, logger_set_level) says
 * which lines are printed, the ring's level which lines are kept.  A line
 * above both is dropped before it is formatted.
 *
 * Ring buffer: the last lines at or below the ring's level (LOG_DEBUG and
 * LOGGER_RING_SIZE lines unless logger_set_ring says otherwise), after
 * flood control, are kept with a sequence number, the wall-clock time and
 * the level, for 'bgn dmesg' (broker.dmesg): so a broker that prints only
 * its warnings still shows how it booted.  The ring's heap (its array and
 * each line's copy, as the allocator counts them) stays within
 * LOGGER_RING_BYTES, or logger_set_ring_bytes: past it the oldest lines
 * are dropped (counted), the newest always kept.
 */
#ifndef BGN_BROKER_LOG_H
#define BGN_BROKER_LOG_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <syslog.h>

#define LOGGER_BURST 10
#define LOGGER_INTERVAL 60.0
#define LOGGER_RING_SIZE 1024
#define LOGGER_RING_BYTES (1u << 20)

struct logger;

struct log_entry {
    uint64_t seq;            /* 1, 2, ... in logging order */
    double time;             /* wall clock, seconds since the epoch */
    int level;               /* LOG_ERR .. LOG_DEBUG */
    const char *text;        /* the message, without prefix */
};

struct logger *logger_create (const char *prog, int level);
void logger_destroy (struct logger **lp);
void logger_set_rank (struct logger *l, long rank);
void logger_set_level (struct logger *l, int level);
int logger_get_level (struct logger *l);

/* Keep the lines at 'level' (LOG_EMERG .. LOG_DEBUG) and below in a ring
 * of 'size' lines (at least 1).  The lines kept so far are dropped.  -1 +
 * EINVAL for a bad level or size, ENOMEM (the ring stays as it was).
 */
int logger_set_ring (struct logger *l, int level, size_t size);
int logger_get_ring_level (struct logger *l);
size_t logger_get_ring_size (struct logger *l);

/* Bound the ring's heap to 'bytes' (at least 1; -1 + EINVAL); lines
 * past it are dropped at the next line kept. */
int logger_set_ring_bytes (struct logger *l, size_t bytes);
/* The ring's heap now, its bound, and the lines dropped for the bound. */
size_t logger_ring_bytes (struct logger *l);
size_t logger_ring_bound (struct logger *l);
uint64_t logger_ring_evicted (struct logger *l);

void logger_vlog (struct logger *l, int level, const char *fmt, va_list ap);
void logger_log (struct logger *l, int level, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

/* The monotonic clock flood control reads (default monotime_now); for
 * tests. */
void logger_set_clock (struct logger *l, double (*now) (void *arg),
                       void *arg);

/* Report suppressed counts whose window has ended (one line each). */
void logger_flush (struct logger *l);

/* Call cb for each ring entry with seq > after, oldest first.  The entry
 * is valid during the call only. */
void logger_ring_foreach (struct logger *l, uint64_t after,
                          void (*cb) (const struct log_entry *e, void *arg),
                          void *arg);

/* Empty the ring (sequence numbers keep counting). */
void logger_ring_clear (struct logger *l);

/* Lines suppressed by flood control so far. */
uint64_t logger_suppressed (struct logger *l);

/* Text for a syslog level ("err" -> "error"; loglevel.h). */
const char *logger_levelstr (int level);

#endif
