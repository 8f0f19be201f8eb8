/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* overlay_dot.h: "bgn overlay-status --dot".
 *
 * Print the live graph of 'root' (one broker's status object) in
 * Graphviz DOT on stdout: ranks round a circle (trees left to dot's
 * layout), down ranks red, links to them dotted, substitute links blue
 * and dashed.  With 'all' (the status-all summary, or NULL) the ranks
 * any broker reports down are drawn down and the ranks that did not
 * answer greyed; substitutes are always root's.
 * Returns 0, or -1 if the topology cannot be built (message printed).
 */
#ifndef BGN_CMD_OVERLAY_DOT_H
#define BGN_CMD_OVERLAY_DOT_H

#include <jansson.h>

int overlay_dot_print (json_t *root, json_t *all);

#endif
