/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* treecast.h: who to send to, multicasting down a spanning tree when some
 * ranks are down.
 *
 * A broker multicasting down the binomial tree rooted at 'root' sends to
 * its children; a child that is down is replaced by that child's own
 * children, recursively, so the tree re-forms around failures and the
 * subtree below a dead broker is still reached (routed through the live
 * graph).  Pure: the caller says what is down.
 */
#ifndef BGN_OVERLAY_TREECAST_H
#define BGN_OVERLAY_TREECAST_H

#include <stdbool.h>
#include <stdint.h>

#include "src/common/libbgn/bgn.h"

typedef bool (*treecast_down_f) (void *arg, uint32_t rank);

/* The ranks 'rank' sends to in root's tree, into out[0..max-1]; returns
 * how many were written (never more than max). */
int treecast_targets (struct bgn_topo *topo, uint32_t root, uint32_t rank,
                      treecast_down_f is_down, void *arg, uint32_t *out,
                      int max);

#endif
