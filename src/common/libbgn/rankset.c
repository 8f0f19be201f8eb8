/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* rankset.c: fixed-size bitmap of ranks with a maintained member count.
 *
 * Used for the router's down set and by the simulator and tests.  One bit
 * per rank in 64-bit words; iteration skips empty words.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bgn.h"

struct bgn_rankset {
    uint32_t size;
    uint32_t count;
    size_t nwords;
    uint64_t *words;
};

struct bgn_rankset *bgn_rankset_create (uint32_t size)
{
    struct bgn_rankset *s;

    if (size == 0) {
        errno = EINVAL;
        return NULL;
    }
    if (!(s = calloc (1, sizeof (*s))))
        return NULL;
    s->size = size;
    s->nwords = ((size_t)size + 63) / 64;
    if (!(s->words = calloc (s->nwords, sizeof (s->words[0])))) {
        free (s);
        return NULL;
    }
    return s;
}

void bgn_rankset_destroy (struct bgn_rankset **sp)
{
    if (sp && *sp) {
        int saved_errno = errno;
        free ((*sp)->words);
        free (*sp);
        *sp = NULL;
        errno = saved_errno;
    }
}

uint32_t bgn_rankset_size (const struct bgn_rankset *s)
{
    return s ? s->size : 0;
}

static inline uint64_t rank_bit (uint32_t rank)
{
    return (uint64_t)1 << (rank % 64);
}

int bgn_rankset_add (struct bgn_rankset *s, uint32_t rank)
{
    if (!s || rank >= s->size) {
        errno = EINVAL;
        return -1;
    }
    if (s->words[rank / 64] & rank_bit (rank))
        return 0;
    s->words[rank / 64] |= rank_bit (rank);
    s->count++;
    return 1;
}

int bgn_rankset_remove (struct bgn_rankset *s, uint32_t rank)
{
    if (!s || rank >= s->size) {
        errno = EINVAL;
        return -1;
    }
    if (!(s->words[rank / 64] & rank_bit (rank)))
        return 0;
    s->words[rank / 64] &= ~rank_bit (rank);
    s->count--;
    return 1;
}

bool bgn_rankset_test (const struct bgn_rankset *s, uint32_t rank)
{
    if (!s || rank >= s->size)
        return false;
    return (s->words[rank / 64] & rank_bit (rank)) != 0;
}

uint32_t bgn_rankset_count (const struct bgn_rankset *s)
{
    return s ? s->count : 0;
}

void bgn_rankset_clear (struct bgn_rankset *s)
{
    if (s) {
        memset (s->words, 0, s->nwords * sizeof (s->words[0]));
        s->count = 0;
    }
}

/* First member >= from, or -1. */
static int first_member_from (const struct bgn_rankset *s, uint64_t from)
{
    if (!s || from >= s->size)
        return -1;
    size_t w = from / 64;
    uint64_t word = s->words[w] & (~(uint64_t)0 << (from % 64));
    while (word == 0) {
        if (++w >= s->nwords)
            return -1;
        word = s->words[w];
    }
    return (int)(w * 64 + (size_t)__builtin_ctzll (word));
}

int bgn_rankset_first (const struct bgn_rankset *s)
{
    return first_member_from (s, 0);
}

int bgn_rankset_next (const struct bgn_rankset *s, uint32_t after)
{
    return first_member_from (s, (uint64_t)after + 1);
}

/* vi: ts=4 sw=4 expandtab
 */
