/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* loglevel.h: syslog level names, as the broker prints them.
 *
 * The broker writes "bgn-broker[3]: warning: ..." and 'bgn start' reads
 * the level back to decide where a line goes, so both use these names:
 * emergency, alert, critical, error, warning, notice, info, debug (0..7,
 * syslog's LOG_EMERG .. LOG_DEBUG).  Pure functions.
 */
#ifndef BGN_LOGLEVEL_H
#define BGN_LOGLEVEL_H

/* The name of level 0..7, "log" for anything else. */
const char *loglevel_name (int level);

/* The level for a name above, syslog's short name ("err", "warn", "crit",
 * "emerg") or a digit 0..7; -1 if none. */
int loglevel_parse (const char *s);

/* The level of a broker log line "PROG[RANK]: LEVEL: text" or "PROG:
 * LEVEL: text"; -1 if the line has another form. */
int loglevel_of_line (const char *line);

#endif
