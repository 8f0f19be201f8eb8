/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* topo_private.h: topology internals shared by topo.c and router.c.
 *
 * Not part of the public contract (bgn.h); only libbgn's own files use it.
 */
#ifndef BGN_LIBBGN_TOPO_PRIVATE_H
#define BGN_LIBBGN_TOPO_PRIVATE_H

#include "bgn.h"

/* Write every neighbour of rank (sorted ascending) into buf, which must
 * hold bgn_topo_max_degree (t) entries.  rank must be valid.  Returns count.
 */
int topo_fill_neighbours (const struct bgn_topo *t, uint32_t rank,
                          uint32_t *buf);

/* Tree helpers; t must be a tree and ranks valid. */
uint32_t topo_tree_parent (const struct bgn_topo *t, uint32_t rank);
uint32_t topo_tree_depth (const struct bgn_topo *t, uint32_t rank);
bool topo_is_chain (const struct bgn_topo *t);   /* kary:1 */
/* The unique next hop from self toward dest (self != dest). */
uint32_t topo_tree_next_hop (const struct bgn_topo *t, uint32_t self,
                             uint32_t dest);

#endif /* BGN_LIBBGN_TOPO_PRIVATE_H */
