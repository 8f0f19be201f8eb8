/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* idmap.c: open-addressing hash map with inline values (see idmap.h).
 *
 * Each slot is [u64 id + 1 (0: empty)][value padded to 8 bytes], capacity a
 * power of two, load factor at most 1/2.  Deletion shifts the following run back
 * instead of leaving tombstones, so lookups never degrade.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "idmap.h"

struct idmap {
    size_t valsize;
    size_t slotsize;
    size_t cap;            /* power of two, or 0 */
    size_t count;
    uint8_t *slots;
};

/* A slot's head: id + 1, or 0 for an empty slot (ids up to 2^64 - 2). */
struct slot_head {
    uint64_t key;
};

#define HEAD(m, i) ((struct slot_head *)((m)->slots + (i) * (m)->slotsize))
#define VALUE(m, i) ((void *)((m)->slots + (i) * (m)->slotsize \
                              + sizeof (struct slot_head)))

static size_t hash_id (uint64_t id)
{
    /* splitmix64 finalizer: consecutive ranks spread over the table */
    id ^= id >> 30;
    id *= 0xbf58476d1ce4e5b9ULL;
    id ^= id >> 27;
    id *= 0x94d049bb133111ebULL;
    id ^= id >> 31;
    return (size_t)id;
}

struct idmap *idmap_create (size_t valsize)
{
    struct idmap *m;

    if (valsize == 0) {
        errno = EINVAL;
        return NULL;
    }
    if (!(m = calloc (1, sizeof (*m))))
        return NULL;
    m->valsize = valsize;
    m->slotsize = sizeof (struct slot_head) + ((valsize + 7) & ~(size_t)7);
    return m;
}

void idmap_destroy (struct idmap **mp)
{
    if (mp && *mp) {
        free ((*mp)->slots);
        free (*mp);
        *mp = NULL;
    }
}

size_t idmap_size (const struct idmap *m)
{
    return m->count;
}

static long find (const struct idmap *m, uint64_t id)
{
    if (m->cap == 0)
        return -1;
    for (size_t i = hash_id (id) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        struct slot_head *h = HEAD (m, i);
        if (!h->key)
            return -1;
        if (h->key == id + 1)
            return (long)i;
    }
}

void *idmap_get (const struct idmap *m, uint64_t id)
{
    long i = find (m, id);
    return i < 0 ? NULL : VALUE (m, (size_t)i);
}

static int grow (struct idmap *m)
{
    size_t ncap = m->cap ? m->cap * 2 : 16;
    uint8_t *old = m->slots;
    size_t ocap = m->cap;

    if (!(m->slots = calloc (ncap, m->slotsize))) {
        m->slots = old;
        return -1;
    }
    m->cap = ncap;
    for (size_t i = 0; i < ocap; i++) {
        struct slot_head *h = (struct slot_head *)(old + i * m->slotsize);
        if (!h->key)
            continue;
        size_t j = hash_id (h->key - 1) & (ncap - 1);
        while (HEAD (m, j)->key)
            j = (j + 1) & (ncap - 1);
        memcpy (HEAD (m, j), h, m->slotsize);
    }
    free (old);
    return 0;
}

void *idmap_put (struct idmap *m, uint64_t id, int *created)
{
    long found = find (m, id);
    size_t i;

    if (created)
        *created = 0;
    if (found >= 0)
        return VALUE (m, (size_t)found);
    if ((m->count + 1) * 2 > m->cap && grow (m) < 0)
        return NULL;
    i = hash_id (id) & (m->cap - 1);
    while (HEAD (m, i)->key)
        i = (i + 1) & (m->cap - 1);
    memset (HEAD (m, i), 0, m->slotsize);
    HEAD (m, i)->key = id + 1;
    m->count++;
    if (created)
        *created = 1;
    return VALUE (m, i);
}

/* Empty slot i and shift the run after it back, so every entry stays
 * reachable from its home slot without tombstones. */
static void remove_slot (struct idmap *m, size_t i)
{
    size_t hole = i, j = i;

    for (;;) {
        j = (j + 1) & (m->cap - 1);
        struct slot_head *h = HEAD (m, j);
        if (!h->key)
            break;
        size_t home = hash_id (h->key - 1) & (m->cap - 1);
        /* it may move back to the hole only if its home is not
         * cyclically within (hole, j] */
        bool in_range = hole <= j ? (home > hole && home <= j)
                                  : (home > hole || home <= j);
        if (in_range)
            continue;
        memcpy (HEAD (m, hole), h, m->slotsize);
        hole = j;
    }
    HEAD (m, hole)->key = 0;
    m->count--;
}

int idmap_delete (struct idmap *m, uint64_t id)
{
    long i = find (m, id);

    if (i < 0) {
        errno = ENOENT;
        return -1;
    }
    remove_slot (m, (size_t)i);
    return 0;
}

void idmap_clear (struct idmap *m)
{
    if (m->slots)
        memset (m->slots, 0, m->cap * m->slotsize);
    m->count = 0;
}

size_t idmap_memory (const struct idmap *m)
{
    return sizeof (*m) + m->cap * m->slotsize;
}

size_t idmap_growth (const struct idmap *m)
{
    if ((m->count + 1) * 2 <= m->cap)
        return 0;
    return (m->cap ? m->cap : 16) * m->slotsize;
}

static void *scan (struct idmap_iter *it, size_t from)
{
    const struct idmap *m = it->m;

    for (size_t i = from; i < m->cap; i++) {
        if (HEAD (m, i)->key) {
            it->slot = i;
            it->id = HEAD (m, i)->key - 1;
            return VALUE (m, i);
        }
    }
    it->slot = m->cap;
    return NULL;
}

void *idmap_first (const struct idmap *m, struct idmap_iter *it)
{
    it->m = m;
    return scan (it, 0);
}

void *idmap_next (struct idmap_iter *it)
{
    if (it->slot >= it->m->cap)
        return NULL;
    return scan (it, it->slot + 1);
}
