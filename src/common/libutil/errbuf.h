/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* errbuf.h: the one-line reason a failed call leaves its caller.
 *
 * The libraries report a failure as -1 with errno set and, when the caller
 * passes a buffer (char *errbuf, size_t errlen), a one-line message in it.
 * These helpers fill such a buffer; a NULL buffer or a zero length is
 * allowed everywhere and means the caller wants no message.  A message
 * longer than the buffer is cut, always NUL-terminated.  No state.
 */
#ifndef BGN_ERRBUF_H
#define BGN_ERRBUF_H

#include <stdarg.h>
#include <stddef.h>

/* Format the message into buf. */
void errbuf_set (char *buf, size_t len, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));
void errbuf_vset (char *buf, size_t len, const char *fmt, va_list ap)
    __attribute__ ((format (printf, 3, 0)));

/* Format the message into buf, set errno to errnum and return -1, for
 * "return errbuf_fail (errbuf, errlen, EINVAL, ...);".  errno is set after
 * the formatting, so an argument such as strerror (errno) is safe. */
int errbuf_fail (char *buf, size_t len, int errnum, const char *fmt, ...)
    __attribute__ ((format (printf, 4, 5)));

/* Copy the string src into dst[size], for a function that hands out a
 * value: 0, or if it does not fit -1 with errno EOVERFLOW, dst untouched
 * and "value of WHAT is too long" in buf. */
int errbuf_copy_value (const char *src, char *dst, size_t size,
                       const char *what, char *buf, size_t len);

/* Replace every control character in buf (below 0x20, and 0x7f) by '?',
 * so that a message quoting untrusted input stays one printable line. */
void errbuf_printable (char *buf, size_t len);

#endif
