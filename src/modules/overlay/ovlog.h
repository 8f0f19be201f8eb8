/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* ovlog.h: logging and the clock, at the bottom of the core's layering.
 *
 * Every part logs and reads the time; these calls sit below all of them
 * so that no part calls up to do either.  Both go through the io
 * (io.h).  The budget of ovl_log_limited and the held time are this
 * file's state in the hub (struct log_state below, ov->log).
 */
#ifndef BGN_OVERLAY_OVLOG_H
#define BGN_OVERLAY_OVLOG_H

struct overlay;
struct ratelimit;

#define OVLOG_SLOTS 64           /* budgets: more than the call sites */

/* One call site's budget, keyed by its format's address. */
struct ovlog_slot {
    const char *fmt;            /* NULL: free */
    struct ratelimit *limit;
    double last_use;
    char key[5];                /* "%s%s": the format this slot hands the
                                   io, its own address, so that a logger
                                   keyed by format (the broker's) keeps
                                   the call sites apart too */
};

struct log_state {              /* ovlog.c */
    struct ovlog_slot slots[OVLOG_SLOTS];   /* ovl_log_limited's budgets */
    double now;                 /* the time held (ovl_now_hold) */
    int held;
};

/* The limited log's budgets (ovl_log_limited): 0 (made as needed). */
int ovlog_init (struct overlay *ov);
void ovlog_fini (struct overlay *ov);

/* Log through the io (printf-style). */
void ovl_log (struct overlay *ov, int level, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));
/* The same for what a peer can make happen again and again (drops of
 * malformed or unknown traffic): a budget per format (call site), a few
 * lines a minute, then " (N similar messages suppressed)" -- so one
 * noisy warning never hides another.  Past OVLOG_SLOTS formats the
 * least recently used budget is reused (its count of suppressed lines
 * is dropped); without memory for a budget the line is logged. */
void ovl_log_limited (struct overlay *ov, int level, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

/* The io's monotonic clock, in seconds.  While held (from the start of
 * an entry into the core to its end), the time read when the hold began:
 * one clock read per message handled instead of one per part that looks
 * (a forwarded message was read three times, 4 % of a relay's thread). */
double ovl_now (struct overlay *ov);
/* Read the clock now, held or not: for timestamps a user compares
 * across one handler (traces). */
double ovl_now_fresh (struct overlay *ov);
/* Hold the time (ovl_now), and let it go.  Not nested: the hub holds it
 * for its outermost entry point only. */
void ovl_now_hold (struct overlay *ov);
void ovl_now_release (struct overlay *ov);

#endif
