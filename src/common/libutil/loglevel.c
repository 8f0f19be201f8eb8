/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* loglevel.c: syslog level names (see loglevel.h). */
#include <string.h>

#include "loglevel.h"

static const char *names[] = {
    "emergency", "alert", "critical", "error",
    "warning", "notice", "info", "debug",
};

static const char *short_names[] = {
    "emerg", "alert", "crit", "err", "warn", "notice", "info", "debug",
};

const char *loglevel_name (int level)
{
    if (level < 0 || level > 7)
        return "log";
    return names[level];
}

int loglevel_parse (const char *s)
{
    if (!s)
        return -1;
    if (s[0] >= '0' && s[0] <= '7' && s[1] == '\0')
        return s[0] - '0';
    for (int i = 0; i < 8; i++)
        if (!strcmp (s, names[i]) || !strcmp (s, short_names[i]))
            return i;
    return -1;
}

int loglevel_of_line (const char *line)
{
    const char *p = strstr (line, ": ");
    size_t len;

    /* the program part has no spaces: "bgn-broker[3]" */
    if (!p || memchr (line, ' ', (size_t)(p - line)))
        return -1;
    p += 2;
    len = strcspn (p, ":");
    if (p[len] != ':')
        return -1;
    for (int i = 0; i < 8; i++)
        if (strlen (names[i]) == len && !strncmp (p, names[i], len))
            return i;
    return -1;
}
