/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* uintfmt.h: an unsigned number in decimal, without printf.
 *
 * On paths taken for every message (a broker's ping answer, the overlay
 * naming a peer's rank) snprintf's format parsing and FILE set-up cost
 * more than the digits.  Header only.
 */
#ifndef BGN_LIBUTIL_UINTFMT_H
#define BGN_LIBUTIL_UINTFMT_H

#include <stddef.h>
#include <stdint.h>

/* Write v in decimal at buf: at most 10 characters, no NUL.  Returns how
 * many it wrote. */
static inline size_t uint_format (char *buf, uint32_t v)
{
    char tmp[10];
    size_t k = 0, n = 0;

    do {
        tmp[k++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (k > 0)
        buf[n++] = tmp[--k];
    return n;
}

#endif /* BGN_LIBUTIL_UINTFMT_H */
