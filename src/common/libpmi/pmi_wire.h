/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* pmi_wire.h: internal helpers shared by the PMI-1 client and server.
 *
 * A PMI-1 line is a sequence of words separated by spaces; a word is
 * "key=value" (value ends at the next space or end of line, and may
 * itself contain '=') or a bare word.  Not installed; not a contract.
 */
#ifndef BGN_PMI_WIRE_H
#define BGN_PMI_WIRE_H

#include <stddef.h>

/* Find the word "key=..." in line (which must not contain '\n').  On
 * success copy the value into buf (NUL-terminated) and return its length;
 * -1 + ENOENT if absent, ENOSPC if buf is too small.
 */
int pmi_wire_get (const char *line, const char *key, char *buf, size_t len);

/* Same, parsing the value as a decimal int.  -1 + EINVAL if not one. */
int pmi_wire_get_int (const char *line, const char *key, int *val);

#endif /* BGN_PMI_WIRE_H */
