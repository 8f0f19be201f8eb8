/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* errbuf.c: fill a caller's error buffer (see errbuf.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "errbuf.h"

void errbuf_vset (char *buf, size_t len, const char *fmt, va_list ap)
{
    if (buf && len > 0)
        vsnprintf (buf, len, fmt, ap);
}

void errbuf_set (char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;

    va_start (ap, fmt);
    errbuf_vset (buf, len, fmt, ap);
    va_end (ap);
}

int errbuf_fail (char *buf, size_t len, int errnum, const char *fmt, ...)
{
    va_list ap;

    va_start (ap, fmt);
    errbuf_vset (buf, len, fmt, ap);
    va_end (ap);
    errno = errnum;
    return -1;
}

void errbuf_printable (char *buf, size_t len)
{
    if (!buf)
        return;
    for (size_t i = 0; i < len && buf[i]; i++) {
        if ((unsigned char)buf[i] < 0x20 || (unsigned char)buf[i] == 0x7f)
            buf[i] = '?';
    }
}

int errbuf_copy_value (const char *src, char *dst, size_t size,
                       const char *what, char *buf, size_t len)
{
    size_t n = strlen (src);

    if (n >= size)
        return errbuf_fail (buf, len, EOVERFLOW, "value of %s is too long",
                            what);
    memcpy (dst, src, n + 1);
    return 0;
}
