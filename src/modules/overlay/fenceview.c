/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* fenceview.c: the fence view's records and digest (fenceview.h).
 *
 * Apart from fence.c, which decides what is news and what it means, so
 * that the parts that only read the view (sending it, rank 0's
 * membership events, the partition check) sit below or beside the rules
 * without calling back into them.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "src/common/libutil/idmap.h"
#include "fenceview.h"
#include "overlay.h"
#include "ovlog.h"

int fenceview_init (struct overlay *ov)
{
    if (!(ov->fenceview.map = idmap_create (sizeof (struct fence_entry))))
        return -1;
    return 0;
}

void fenceview_fini (struct overlay *ov)
{
    idmap_destroy (&ov->fenceview.map);
}

/* One record's share of the digest. */
static uint64_t record_hash (uint32_t rank, uint64_t inc, bool fenced)
{
    uint64_t h = rank * 0x9e3779b97f4a7c15ULL ^ inc ^ (fenced ? 0x5bd1e995 : 0);
    h ^= h >> 31;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 29;
    h *= 0x94d049bb133111ebULL;
    return h ^ (h >> 32);
}

/* A fence's reason is one of a few texts; the last slot takes whatever
 * does not fit. */
uint8_t fence_reason_index (struct overlay *ov, const char *r)
{
    struct fenceview_state *vs = &ov->fenceview;

    if (!r)
        r = "";
    for (int i = 0; i < vs->nreasons; i++)
        if (!strcmp (vs->reasons[i], r))
            return (uint8_t)i;
    if (vs->nreasons < FENCE_REASONS)
        snprintf (vs->reasons[vs->nreasons++], FENCE_REASON_LEN, "%s", r);
    else
        snprintf (vs->reasons[FENCE_REASONS - 1], FENCE_REASON_LEN, "%s", r);
    return (uint8_t)(vs->nreasons - 1);
}

const char *fence_reason_text (struct overlay *ov, uint8_t index)
{
    return index < ov->fenceview.nreasons ? ov->fenceview.reasons[index]
                                          : "";
}

struct fence_entry *fenceview_set (struct overlay *ov, uint32_t rank,
                                   uint64_t inc, bool fenced,
                                   const char *reason, bool *was_fenced)
{
    struct fenceview_state *vs = &ov->fenceview;
    struct fence_entry *f = idmap_get (vs->map, rank);

    *was_fenced = false;
    if (f) {
        *was_fenced = f->fenced;
        vs->digest ^= record_hash (rank, f->inc, f->fenced);
    }
    else if (!(f = idmap_put (vs->map, rank, NULL)))
        return NULL;
    f->inc = inc;
    f->fenced = fenced;
    f->since = (float)ovl_now (ov);
    f->reason = fence_reason_index (ov, reason);
    vs->digest ^= record_hash (rank, inc, fenced);
    vs->nfenced += (int)fenced - (int)*was_fenced;
    return f;
}

void fenceview_ranks (struct overlay *ov, struct idmap *set)
{
    struct idmap_iter it;

    for (void *v = idmap_first (ov->fenceview.map, &it); v;
         v = idmap_next (&it))
        idmap_put (set, (uint32_t)it.id, NULL);
}

const struct fence_entry *fence_lookup (struct overlay *ov, uint32_t rank)
{
    return idmap_get (ov->fenceview.map, rank);
}

bool fence_is_fenced (struct overlay *ov, uint32_t rank)
{
    /* the router's down set is the fenced records: a bit test */
    return bgn_router_is_down (ov->router, rank);
}

int fence_count (struct overlay *ov)
{
    return ov->fenceview.nfenced;
}

uint16_t fence_stamp (struct overlay *ov, uint32_t rank)
{
    const struct fence_entry *f = fence_lookup (ov, rank);

    return f && !f->fenced && f->inc ? envelope_inc_stamp (f->inc) : 0;
}

const char *fence_reason (struct overlay *ov, const struct fence_entry *f)
{
    return fence_reason_text (ov, f->reason);
}

uint64_t fence_digest (struct overlay *ov)
{
    return ov->fenceview.digest;
}

uint32_t fence_root (struct overlay *ov)
{
    uint32_t r = 0;

    while (r < ov->size && r != ov->rank && fence_is_fenced (ov, r))
        r++;
    return r;
}
