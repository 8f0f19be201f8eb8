/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* toml.h: a TOML 1.0 parser that produces jansson objects.
 *
 * The broker's configuration is written in TOML, and every consumer wants
 * it as JSON (to validate, merge, dump, or send in a message), so the
 * parser skips any intermediate tree and builds a jansson object directly.
 * The whole of TOML 1.0.0 is accepted and everything the specification
 * forbids is rejected, with the line and column of the offending character.
 *
 * Mapping of TOML values to JSON:
 *   string            JSON string (may contain U+0000 from a \u0000 escape)
 *   integer           JSON integer (int64; out-of-range literals are errors)
 *   float             JSON real, except that jansson cannot hold NaN or the
 *                     infinities, so those become the JSON *strings* "nan",
 *                     "inf" and "-inf" ("+inf" -> "inf"; "-nan" and "+nan"
 *                     -> "nan").  Caveat: after conversion such a float is
 *                     indistinguishable from a TOML string with the same
 *                     text.  A decimal literal too large for a double
 *                     (1e400) rounds to infinity, as IEEE 754 and Python do.
 *   boolean           JSON true / false
 *   offset date-time  string "YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM)"
 *   local date-time   string "YYYY-MM-DDTHH:MM:SS[.frac]"
 *   local date        string "YYYY-MM-DD"
 *   local time        string "HH:MM:SS[.frac]"
 *                     Date-times are normalised only in that the separator
 *                     (space, 't' or 'T') becomes 'T' and 'z' becomes 'Z';
 *                     fractional seconds are kept exactly as written.
 *                     Seconds may be 60 (an RFC 3339 leap second).
 *   array             JSON array (mixed types allowed, as in TOML 1.0)
 *   table             JSON object
 *
 * Input must be UTF-8; a leading byte-order mark is skipped.  Nesting of
 * arrays, inline tables, table headers and dotted keys together is
 * limited to TOML_MAX_DEPTH levels, so nothing that walks the result
 * recursively can run out of stack.
 *
 * No global state: the functions are reentrant and thread-safe.
 */
#ifndef BGN_TOML_H
#define BGN_TOML_H

#include <jansson.h>
#include <stddef.h>

#define TOML_MAX_DEPTH 128
#define TOML_MAX_FILE (4 * 1024 * 1024)   /* bytes toml_parse_file reads */

/* Where and why parsing failed.  line and col are 1-based; col counts
 * characters (code points), not bytes.  Both are 0 for errors not tied to
 * a position (e.g. a file that cannot be opened).
 */
struct toml_error {
    int line;
    int col;
    char msg[256];
};

/* Parse 'len' bytes of TOML at 'text' (need not be NUL-terminated).
 * Returns a new jansson object (caller owns the reference), or NULL with
 * errno set (EINVAL for a syntax error, ENOMEM) and, if err is non-NULL,
 * *err filled in.
 */
json_t *toml_parse (const char *text, size_t len, struct toml_error *err);

/* Read and parse the file at 'path'.  As toml_parse(), and in addition
 * NULL with errno from open/read (ENOENT, EACCES, EISDIR...) or EFBIG
 * for a file longer than TOML_MAX_FILE (so -c /dev/zero fails fast),
 * line/col 0 and strerror() in err->msg.
 */
json_t *toml_parse_file (const char *path, struct toml_error *err);

#endif /* BGN_TOML_H */
