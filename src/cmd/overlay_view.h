/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* overlay_view.h: the text views of "bgn overlay-status".
 *
 * The status objects are the --json shape (doc/overlay-status.md): the
 * command normalizes the module's answer first ("down" an idset string,
 * "down_detail" the per-rank array).  'color' adds ANSI colours.
 */
#ifndef BGN_CMD_OVERLAY_VIEW_H
#define BGN_CMD_OVERLAY_VIEW_H

#include <jansson.h>

#include "src/common/libutil/hostmap.h"

/* The "down_ranks" of a status object as an idset string ("3,7-9"),
 * malloc'd; NULL on ENOMEM. */
char *overlay_down_idset (json_t *o);

/* One broker's view: headline, down ranks (and their hosts), details
 * (verbose >= 1), peers (verbose >= 2: more columns).  down_only: only the
 * problems.  hm (may be NULL) supplies host names. */
void overlay_view_status (json_t *o, int down_only, int verbose, int color,
                          const hostmap_t *hm);

/* --all: the overlay.status-all summary (doc/overlay-status.md): who
 * answered, health tallies, the down ranks as every broker and as some
 * broker sees them, the brokers with a problem, summed counters.  root is
 * rank 0's own status (the headline). */
void overlay_view_all (json_t *all, json_t *root, int down_only, int color,
                       const hostmap_t *hm);

#endif
