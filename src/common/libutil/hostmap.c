/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* hostmap.c: rank <-> host table (see hostmap.h).
 *
 * An array of names indexed by rank; host -> ranks is a linear scan,
 * which is what a command asking once needs (a broker answers from the
 * array alone).
 */
#include <errno.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "hostlist.h"
#include "hostmap.h"

struct hostmap {
    uint32_t size;
    uint32_t known;
    size_t names;               /* heap of the names */
    char **host;
};

hostmap_t *hostmap_create (uint32_t size)
{
    hostmap_t *hm;

    if (size > IDSET_ID_MAX + 1u) {
        errno = EINVAL;
        return NULL;
    }
    if (!(hm = calloc (1, sizeof (*hm)))
        || !(hm->host = calloc (size ? size : 1, sizeof (char *)))) {
        free (hm);
        errno = ENOMEM;
        return NULL;
    }
    hm->size = size;
    return hm;
}

void hostmap_destroy (hostmap_t **p)
{
    if (p && *p) {
        for (uint32_t r = 0; r < (*p)->size; r++)
            free ((*p)->host[r]);
        free ((*p)->host);
        free (*p);
        *p = NULL;
    }
}

uint32_t hostmap_size (const hostmap_t *hm)
{
    return hm ? hm->size : 0;
}

static bool good_name (const char *s)
{
    if (!s || !*s || strlen (s) > HOSTMAP_NAME_MAX)
        return false;
    for (; *s; s++)
        if (*s <= 0x20 || *s >= 0x7f || strchr (",[]", *s))
            return false;
    return true;
}

int hostmap_set (hostmap_t *hm, uint32_t rank, const char *host)
{
    char *copy;

    if (!hm || rank >= hm->size || !good_name (host)) {
        errno = EINVAL;
        return -1;
    }
    if (!(copy = strdup (host)))
        return -1;
    if (!hm->host[rank])
        hm->known++;
    else
        hm->names -= malloc_usable_size (hm->host[rank]);
    free (hm->host[rank]);
    hm->host[rank] = copy;
    hm->names += malloc_usable_size (copy);
    return 0;
}

const char *hostmap_host (const hostmap_t *hm, uint32_t rank)
{
    return hm && rank < hm->size ? hm->host[rank] : NULL;
}

uint32_t hostmap_known (const hostmap_t *hm)
{
    return hm ? hm->known : 0;
}

size_t hostmap_memory (const hostmap_t *hm)
{
    if (!hm)
        return 0;
    return malloc_usable_size ((void *)hm) + malloc_usable_size (hm->host)
           + hm->names;
}

size_t hostmap_memory_bound (const hostmap_t *hm)
{
    if (!hm)
        return 0;
    /* a name's block: its bytes and NUL, rounded up as malloc does */
    return malloc_usable_size ((void *)hm) + malloc_usable_size (hm->host)
           + (size_t)hm->size * ((HOSTMAP_NAME_MAX + 1 + 8 + 15) & ~15u);
}

/* Add ranks whose name satisfies match(); returns the count. */
static int add_matching (const hostmap_t *hm, const char *host, bool label,
                         idset_t *ids)
{
    size_t len = strlen (host);
    int n = 0;

    for (uint32_t r = 0; r < hm->size; r++) {
        const char *h = hm->host[r];
        bool hit = h && (label ? !strncmp (h, host, len) && h[len] == '.'
                               : !strcmp (h, host));
        if (hit) {
            if (idset_set (ids, r) < 0)
                return -1;
            n++;
        }
    }
    return n;
}

int hostmap_ranks (const hostmap_t *hm, const char *host, idset_t *ids)
{
    int n;

    if (!hm || !host || !ids) {
        errno = EINVAL;
        return -1;
    }
    if ((n = add_matching (hm, host, false, ids)) != 0)
        return n;
    if (strchr (host, '.'))
        return 0;
    return add_matching (hm, host, true, ids);
}

char *hostmap_hostlist (const hostmap_t *hm, const idset_t *ids)
{
    hostlist_t *hl = hostlist_create ();
    char *s = NULL;

    if (!hl)
        return NULL;
    for (int r = idset_first (ids); r >= 0; r = idset_next (ids, r)) {
        const char *h = hostmap_host (hm, (uint32_t)r);
        if (!h || hostlist_find (hl, h) >= 0)
            continue;
        if (hostlist_append_host (hl, h) < 0)
            goto done;
    }
    s = hostlist_encode (hl);
done:
    hostlist_destroy (&hl);
    return s;
}
