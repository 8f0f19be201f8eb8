/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* ratelimit.h: "log at most K lines per interval, then say how many were
 * suppressed".
 *
 * A warning that can repeat (a peer refusing our certificate, a client
 * sending garbage) must not flood the log, but the reader must still learn
 * that it went on happening.  A ratelimit_t is one such warning's budget:
 * each time the warning fires the caller asks ratelimit_check() whether
 * to print it.  Within a window of 'interval' seconds, starting at the
 * first event, the first 'burst' events are allowed and the rest are
 * suppressed and counted.  The first allowed event after a suppression
 * comes with the number suppressed since the last allowed one, so the
 * caller appends e.g. " (37 similar messages suppressed)".  If the
 * warning stops for good while some are still suppressed,
 * ratelimit_flush(), called from any periodic timer, hands the count over
 * once the window has ended, so the caller can print one closing line.
 *
 * The caller passes the time (seconds on any monotonic clock, e.g.
 * monotime_now()), so this code reads no clock, keeps no global state and
 * can run in a simulator.  Not thread-safe; one object per warning.
 *
 * Typical use:
 *   unsigned long n;
 *   if (ratelimit_check (rl, now, &n))
 *       log ("peer %d refused%s", r, ratelimit_suffix (buf, sizeof buf, n));
 */
#ifndef BGN_RATELIMIT_H
#define BGN_RATELIMIT_H

#include <stdbool.h>
#include <stddef.h>

typedef struct ratelimit ratelimit_t;

/* A budget of 'burst' (>= 1) events per 'interval' (> 0, finite) seconds.
 * NULL + EINVAL for bad values, ENOMEM.
 */
ratelimit_t *ratelimit_create (int burst, double interval);

/* Free it; *p = NULL.  Safe on NULL. */
void ratelimit_destroy (ratelimit_t **p);

/* An event happens at 'now'.  Returns true if it may be logged; then
 * *suppressed (if not NULL) is the number of events suppressed since the
 * previous allowed one (usually 0), and that count starts again from 0.
 * Returns false if it must be suppressed (it is counted; *suppressed is
 * set to 0).  A clock that goes backwards starts a new window.
 */
bool ratelimit_check (ratelimit_t *rl, double now, unsigned long *suppressed);

/* If events are suppressed and their window has ended at 'now', return
 * their number and reset it (the caller logs one line saying so);
 * otherwise return 0.  Lets a warning that stopped report its tail.
 */
unsigned long ratelimit_flush (ratelimit_t *rl, double now);

/* Events suppressed over the object's whole life (for status output). */
unsigned long ratelimit_total_suppressed (const ratelimit_t *rl);

/* " (N similar messages suppressed)" for n > 0, "" for n == 0, written
 * into buf (truncated to fit); returns buf, for use in a log call.
 */
const char *ratelimit_suffix (char *buf, size_t len, unsigned long n);

#endif /* BGN_RATELIMIT_H */
