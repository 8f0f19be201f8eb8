/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* rankarg.c: rank arguments (see rankarg.h).
 *
 * Sets use libutil's idset syntax, so "3,5-7" means the same in every
 * command and in every output that prints a set.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "src/common/libutil/errbuf.h"
#include "src/common/libutil/hostlist.h"
#include "src/common/libutil/hostmap.h"
#include "rankarg.h"

/* A rank that is not in the instance. */
static int out_of_range (const struct hostmap *hm, uint32_t rank,
                         char *errbuf, size_t errlen)
{
    uint32_t size = hostmap_size (hm);

    return errbuf_fail (errbuf, errlen, EINVAL, "rank %u is not in the "
                        "instance (size %u: ranks 0-%u)", (unsigned)rank,
                        (unsigned)size, (unsigned)(size ? size - 1 : 0));
}

/* Digits only: a rank. */
static bool all_digits (const char *s)
{
    return *s && strspn (s, "0123456789") == strlen (s);
}

/* Add the ranks 'name' stands for (a rank or a host) to ids. */
static int add_name (const char *name, const struct hostmap *hm, idset_t *ids,
                     char *errbuf, size_t errlen)
{
    uint32_t rank;
    int n;

    if (all_digits (name)) {
        if (rankarg_one (name, hm, &rank, errbuf, errlen) < 0)
            return -1;
        return idset_set (ids, rank);
    }
    if ((n = hostmap_ranks (hm, name, ids)) < 0)
        return -1;
    if (n == 0)
        return errbuf_fail (errbuf, errlen, EINVAL, "'%s' is not a rank or a "
                            "host of this instance", name);
    return 0;
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

    if (!arg || *arg < '0' || *arg > '9') {
        idset_t *ids;
        char *s;
        if (!hm || !arg)
            return errbuf_fail (errbuf, errlen, EINVAL, "'%s' is not a rank",
                                arg ? arg : "");
        if (!(ids = rankarg_set (arg, hm, errbuf, errlen)))
            return -1;
        if (idset_count (ids) == 1) {
            *rank = (uint32_t)idset_first (ids);
            idset_destroy (&ids);
            return 0;
        }
        s = idset_encode (ids, 0);
        errbuf_set (errbuf, errlen, "'%s' runs ranks %s: give one rank",
                    arg, s ? s : "?");
        free (s);
        idset_destroy (&ids);
        errno = EINVAL;
        return -1;
    }
    errno = 0;
    v = strtoul (arg, &end, 10);
    if (errno || *end || v > RANKARG_MAX)
        return errbuf_fail (errbuf, errlen, EINVAL, "'%s' is not a rank", arg);
    if (hm && v >= hostmap_size (hm))
        return out_of_range (hm, (uint32_t)v, errbuf, errlen);
    *rank = (uint32_t)v;
    return 0;
}

/* A hostlist whose items are host names or ranks: "node[3-5],0". */
static idset_t *hostlist_set (const char *arg, const struct hostmap *hm,
                              char *errbuf, size_t errlen)
{
    char err[128];
    hostlist_t *hl = hostlist_decode (arg, err, sizeof (err));
    idset_t *ids = idset_create (0);

    if (!hl || !ids) {
        if (!hl)
            errbuf_fail (errbuf, errlen, EINVAL, "'%s' is not a rank, a set "
                         "of ranks or a hostlist", arg);
        goto error;
    }
    for (int i = 0; i < hostlist_count (hl); i++)
        if (add_name (hostlist_nth (hl, i), hm, ids, errbuf, errlen) < 0)
            goto error;
    hostlist_destroy (&hl);
    return ids;
error:
    hostlist_destroy (&hl);
    idset_destroy (&ids);
    return NULL;
}

idset_t *rankarg_set (const char *arg, const struct hostmap *hm,
                      char *errbuf, size_t errlen)
{
    idset_t *ids;

    if (!arg || !*arg) {
        errbuf_fail (errbuf, errlen, EINVAL, "'%s' names no rank", "");
        return NULL;
    }
    if (!rankarg_numeric (arg)) {
        if (!hm) {
            errbuf_fail (errbuf, errlen, EINVAL, "'%s' is not a rank or a set "
                         "of ranks (e.g. 3,5-7)", arg);
            return NULL;
        }
        return hostlist_set (arg, hm, errbuf, errlen);
    }
    if (!(ids = idset_decode (arg, NULL, 0))) {
        errbuf_fail (errbuf, errlen, EINVAL, "'%s' is not a rank or a set of "
                     "ranks (e.g. 3,5-7)", arg);
        return NULL;
    }
    if (hm && idset_count (ids) > 0
        && (uint32_t)idset_last (ids) >= hostmap_size (hm)) {
        out_of_range (hm, (uint32_t)idset_last (ids), errbuf, errlen);
        idset_destroy (&ids);
        return NULL;
    }
    if (idset_count (ids) == 0) {
        idset_destroy (&ids);
        errbuf_fail (errbuf, errlen, EINVAL, "'%s' names no rank", arg);
        return NULL;
    }
    return ids;
}
