/* rankarg.c: rank arguments (see rankarg.h).
 *
 * Sets use libutil's idset syntax, so "3,5-7" means the same in every
 * command and in every output that prints a set.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rankarg.h"

static int fail (char *errbuf, size_t errlen, const char *fmt,
                 const char *arg)
{
    if (errbuf && errlen)
        snprintf (errbuf, errlen, fmt, arg);
    errno = EINVAL;
    return -1;
}

bool rankarg_numeric (const char *arg)
{
    return arg && *arg && strspn (arg, "0123456789,-[]") == strlen (arg);
}

int rankarg_one (const char *arg, const struct hostmap *hm, uint32_t *rank,
                 char *errbuf, size_t errlen)
{
    char *end;
    unsigned long v;

    (void)hm;
    if (!arg || *arg < '0' || *arg > '9')
        return fail (errbuf, errlen, "'%s' is not a rank", arg ? arg : "");
    errno = 0;
    v = strtoul (arg, &end, 10);
    if (errno || *end || v > RANKARG_MAX)
        return fail (errbuf, errlen, "'%s' is not a rank", arg);
    *rank = (uint32_t)v;
    return 0;
}

idset_t *rankarg_set (const char *arg, const struct hostmap *hm,
                      char *errbuf, size_t errlen)
{
    idset_t *ids;

    (void)hm;
    if (!rankarg_numeric (arg)
        || !(ids = idset_decode (arg, NULL, 0))) {
        fail (errbuf, errlen, "'%s' is not a rank or a set of ranks (e.g. "
              "3,5-7)", arg ? arg : "");
        return NULL;
    }
    if (idset_count (ids) == 0) {
        idset_destroy (&ids);
        fail (errbuf, errlen, "'%s' names no rank", arg);
        return NULL;
    }
    return ids;
}
