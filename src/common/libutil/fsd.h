/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* fsd.h: "Flux standard duration" strings, e.g. "250ms", "5s", "1.5m".
 *
 * A duration is a non-negative decimal number with an optional unit
 * suffix: "ms" (milliseconds), "s" (seconds, the default), "m" (minutes),
 * "h" (hours) or "d" (days).  "inf" and "infinity" are accepted.
 * Pure functions, no state.
 */
#ifndef BGN_FSD_H
#define BGN_FSD_H

#include <stddef.h>

/* Parse 's' into seconds.  Returns 0 on success, -1 with errno EINVAL
 * if 's' is NULL, empty, negative, has an unknown unit or trailing junk.
 */
int fsd_parse_duration (const char *s, double *seconds);

/* Format 'seconds' into buf in the shortest natural unit ("250ms", "5s",
 * "1.5m", "2h").  Returns the length written (as snprintf), or -1 with
 * errno EINVAL if buf is too small or seconds is negative or NaN.
 */
int fsd_format_duration (char *buf, size_t len, double seconds);

#endif /* BGN_FSD_H */
