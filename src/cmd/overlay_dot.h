/* overlay_dot.h: "bgn overlay-status --dot".
 *
 * Print the live graph of 'root' (one broker's status object) in
 * Graphviz DOT on stdout: ranks round a circle (trees left to dot's
 * layout), down ranks red, links to them dotted, substitute links blue
 * and dashed.  With 'all' (the --all answer, or NULL) every broker's down
 * ranks and substitutes are drawn and non-answering ranks greyed.
 * Returns 0, or -1 if the topology cannot be built (message printed).
 */
#ifndef BGN_CMD_OVERLAY_DOT_H
#define BGN_CMD_OVERLAY_DOT_H

#include <jansson.h>

int overlay_dot_print (json_t *root, json_t *all);

#endif
