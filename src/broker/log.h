/* log.h: the broker's stderr logger: syslog levels and a rank prefix.
 *
 * Lines look like "bgn-broker[3]: error: overlay: bind failed: ..." so
 * that output from many brokers on one terminal stays readable.  The
 * logger is an object owned by the broker, not global state.
 */
#ifndef BGN_BROKER_LOG_H
#define BGN_BROKER_LOG_H

#include <stdarg.h>
#include <syslog.h>

struct logger;

struct logger *logger_create (const char *prog, int level);
void logger_destroy (struct logger **lp);
void logger_set_rank (struct logger *l, long rank);
void logger_set_level (struct logger *l, int level);
int logger_get_level (struct logger *l);

void logger_vlog (struct logger *l, int level, const char *fmt, va_list ap);
void logger_log (struct logger *l, int level, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

/* Text for a syslog level ("err" -> "error"). */
const char *logger_levelstr (int level);

#endif
