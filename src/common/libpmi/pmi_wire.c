/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* pmi_wire.c: word lookup in PMI-1 "key=value key=value" lines. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "pmi_wire.h"

int pmi_wire_get (const char *line, const char *key, char *buf, size_t len)
{
    size_t klen = strlen (key);
    const char *p = line;

    while (*p) {
        while (*p == ' ')
            p++;
        const char *end = strchr (p, ' ');
        size_t wlen = end ? (size_t)(end - p) : strlen (p);
        if (wlen > klen && !strncmp (p, key, klen) && p[klen] == '=') {
            size_t vlen = wlen - klen - 1;
            if (vlen + 1 > len) {
                errno = ENOSPC;
                return -1;
            }
            memcpy (buf, p + klen + 1, vlen);
            buf[vlen] = '\0';
            return (int)vlen;
        }
        p += wlen;
    }
    errno = ENOENT;
    return -1;
}

int pmi_wire_get_int (const char *line, const char *key, int *val)
{
    char buf[32];
    char *end;
    long l;

    if (pmi_wire_get (line, key, buf, sizeof (buf)) < 0) {
        if (errno == ENOSPC)
            errno = EINVAL;
        return -1;
    }
    errno = 0;
    l = strtol (buf, &end, 10);
    if (errno != 0 || end == buf || *end != '\0' || l < INT_MIN
        || l > INT_MAX) {
        errno = EINVAL;
        return -1;
    }
    *val = (int)l;
    return 0;
}
