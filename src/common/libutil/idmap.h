/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* idmap.h: a hash map from 64-bit ids to fixed-size values stored inline.
 *
 * The overlay keeps per-rank and per-request state (fences, request
 * trackers, gathers in progress) for up to millions of ranks in the
 * protocol simulator, so entries are compact: the value lives in the
 * table itself (open addressing, linear probing, backward-shift delete),
 * with no allocation per entry.
 *
 * Ids are any 64-bit value but UINT64_MAX.
 *
 * Pointers returned by idmap_get/idmap_put point into the table: valid
 * until the next idmap_put or idmap_delete on the map.  Iteration visits
 * entries in table order (deterministic for a given sequence of
 * operations); the map must not change during it (collect the ids to
 * delete, then delete them).  No global state.
 */
#ifndef BGN_IDMAP_H
#define BGN_IDMAP_H

#include <stddef.h>
#include <stdint.h>

struct idmap;

/* Values of 'valsize' bytes (> 0).  NULL with EINVAL or ENOMEM. */
struct idmap *idmap_create (size_t valsize);
void idmap_destroy (struct idmap **mp);

size_t idmap_size (const struct idmap *m);

/* The value stored for id, or NULL. */
void *idmap_get (const struct idmap *m, uint64_t id);

/* The value slot for id, zero-filled if the id is new (*created set to
 * 1, else 0; created may be NULL).  NULL with ENOMEM. */
void *idmap_put (struct idmap *m, uint64_t id, int *created);

/* Remove id.  0, or -1 with ENOENT. */
int idmap_delete (struct idmap *m, uint64_t id);

/* Remove everything. */
void idmap_clear (struct idmap *m);

/* Heap the map holds: its table (which grows by doubling, kept at most
 * half full, and never shrinks) and itself. */
size_t idmap_memory (const struct idmap *m);
/* Bytes the table would grow by if a new id were put now (0 if it has
 * room). */
size_t idmap_growth (const struct idmap *m);

/*   struct idmap_iter it;
 *   for (void *v = idmap_first (m, &it); v; v = idmap_next (&it))
 *       ... it.id is v's id ...
 */
struct idmap_iter {
    const struct idmap *m;
    size_t slot;
    uint64_t id;
};
void *idmap_first (const struct idmap *m, struct idmap_iter *it);
void *idmap_next (struct idmap_iter *it);

#endif
