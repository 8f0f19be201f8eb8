/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* fsd.c: parse and format duration strings ("250ms", "5s").
 *
 * Config files and command-line options spell every time interval this way,
 * as Flux does, so one parser serves the broker, the commands and the
 * config validator.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fsd.h"

static int unit_multiplier (const char *unit, double *mult)
{
    if (*unit == '\0' || !strcmp (unit, "s"))
        *mult = 1.;
    else if (!strcmp (unit, "ms"))
        *mult = 1e-3;
    else if (!strcmp (unit, "m"))
        *mult = 60.;
    else if (!strcmp (unit, "h"))
        *mult = 3600.;
    else if (!strcmp (unit, "d"))
        *mult = 86400.;
    else
        return -1;
    return 0;
}

int fsd_parse_duration (const char *s, double *seconds)
{
    char *end;
    double value, mult;

    if (!s || !*s || !seconds)
        goto inval;
    if (!strcasecmp (s, "inf") || !strcasecmp (s, "infinity")) {
        *seconds = INFINITY;
        return 0;
    }
    /* strtod would accept hex, "nan", leading blanks: insist on a plain
     * decimal number. */
    size_t digits = strspn (s, "0123456789.");
    if (digits == 0)
        goto inval;
    errno = 0;
    value = strtod (s, &end);
    if (errno != 0 || end != s + digits || !isfinite (value) || value < 0)
        goto inval;
    if (unit_multiplier (end, &mult) < 0)
        goto inval;
    *seconds = value * mult;
    return 0;
inval:
    errno = EINVAL;
    return -1;
}

int fsd_format_duration (char *buf, size_t len, double seconds)
{
    const char *unit = "s";
    double value = seconds;
    int n;

    if (!buf || isnan (seconds) || seconds < 0)
        goto inval;
    if (isinf (seconds))
        n = snprintf (buf, len, "inf");
    else {
        if (seconds < 1. && seconds > 0.) {
            value = seconds * 1e3;
            unit = "ms";
        }
        else if (seconds >= 86400. * 2) {
            value = seconds / 86400.;
            unit = "d";
        }
        else if (seconds >= 3600. * 2) {
            value = seconds / 3600.;
            unit = "h";
        }
        else if (seconds >= 60. * 2) {
            value = seconds / 60.;
            unit = "m";
        }
        n = snprintf (buf, len, "%.4g%s", value, unit);
    }
    if (n < 0 || (size_t)n >= len)
        goto inval;
    return n;
inval:
    errno = EINVAL;
    return -1;
}
