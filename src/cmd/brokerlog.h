/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* brokerlog.h: where the brokers of 'bgn start' write their log lines.
 *
 * Each broker's stderr is a pipe to bgn start, which reads it here and
 * passes on whole lines only, so lines of different brokers (and bgn
 * start's own, prefixed "bgn start: ") never mix mid-line.  Every line
 * goes to the log file (by default broker.log in the instance directory);
 * a line at the terminal level or more severe (default: error) also goes
 * to stderr.  The level is read from the broker's prefix
 * ("bgn-broker[3]: warning: ..."); a line of another form (a crash
 * report, a sanitizer) always goes to stderr too.
 */
#ifndef BGN_CMD_BROKERLOG_H
#define BGN_CMD_BROKERLOG_H

struct brokerlog;

/* Open (create, append, mode 0600) the log file at 'path'.  Lines with a
 * level <= term_level also go to stderr.  NULL on error (errno). */
struct brokerlog *brokerlog_create (const char *path, int term_level);

/* Read what is left in every pipe, flush partial lines, close. */
void brokerlog_destroy (struct brokerlog **blp);

/* Take the read end of rank's stderr pipe (it is made non-blocking and
 * closed at EOF or destroy).  -1 + ENOMEM. */
int brokerlog_add (struct brokerlog *bl, int rank, int fd);

/* fd (one added with brokerlog_add) is readable: read and pass lines
 * on.  Returns 1 if fd was ours, 0 if not. */
int brokerlog_readable (struct brokerlog *bl, int fd);

/* Read every pipe until it has nothing more (at shutdown). */
void brokerlog_drain (struct brokerlog *bl);

/* Lines that went to the file only; the file's path. */
unsigned long brokerlog_hidden (struct brokerlog *bl);
const char *brokerlog_path (struct brokerlog *bl);

#endif
