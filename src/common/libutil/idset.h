/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* idset.h: sets of non-negative integer ids (broker ranks), "0-3,7,9-12".
 *
 * An idset is a growable bitmap: set/clear/test are O(1), iteration and
 * encoding skip empty 64-bit words, so a set of ranks up to 2^20 costs at
 * most 128 KiB and encodes in well under a millisecond.  Ids are limited to
 * 0 .. IDSET_ID_MAX (2^24 - 1), which bounds memory at 2 MiB per set.
 *
 * String form (encode/decode): comma-separated items, each an id "7" or an
 * inclusive range "0-3", optionally wrapped in one pair of brackets
 * "[0-3,7]".  decode accepts items in any order, overlapping or repeated;
 * encode writes the canonical form: ascending, maximal ranges merged, a
 * range of two written "4-5".  "" and "[]" are the empty set.  decode
 * rejects (EINVAL, message in errbuf): whitespace anywhere, empty items
 * ("1,,2", "1,", ",1"), a reversed range "3-1", signs, non-digits ("a"),
 * unbalanced brackets, and ids above IDSET_ID_MAX (overflow).
 *
 * Errors: -1 / NULL with errno (EINVAL bad argument or id, ENOMEM).
 * No global state; a set is not thread-safe.
 */
#ifndef BGN_IDSET_H
#define BGN_IDSET_H

#include <stdbool.h>
#include <stddef.h>

#define IDSET_ID_MAX ((1u << 24) - 1)

/* encode flags */
enum {
    IDSET_FLAG_BRACKETS = 1,   /* wrap in [] if the set has more than one id */
};

typedef struct idset idset_t;

/* Create an empty set with room for ids below size_hint (0 is fine; the
 * set grows as ids are added).  NULL + ENOMEM, EINVAL if size_hint >
 * IDSET_ID_MAX + 1.
 */
idset_t *idset_create (unsigned size_hint);

/* Free the set; *p = NULL.  Safe on NULL / *p == NULL. */
void idset_destroy (idset_t **p);

/* A new set with the same ids.  NULL + EINVAL/ENOMEM. */
idset_t *idset_copy (const idset_t *s);

/* Add id (already present is fine).  -1 + EINVAL (id > IDSET_ID_MAX),
 * ENOMEM (the set is unchanged).
 */
int idset_set (idset_t *s, unsigned id);

/* Add every id in lo..hi inclusive.  -1 + EINVAL if lo > hi or hi >
 * IDSET_ID_MAX, ENOMEM.
 */
int idset_set_range (idset_t *s, unsigned lo, unsigned hi);

/* Remove id (absent is fine; any id value is accepted).  -1 + EINVAL
 * only if s is NULL.
 */
int idset_clear (idset_t *s, unsigned id);

/* Remove every id. */
void idset_clear_all (idset_t *s);

/* True if id is in the set (false for NULL s). */
bool idset_test (const idset_t *s, unsigned id);

/* Number of ids in the set (0 for NULL). */
unsigned idset_count (const idset_t *s);

/* Iteration in ascending order:
 *   for (int id = idset_first (s); id >= 0; id = idset_next (s, id))
 * first: the smallest id, or -1 if empty.  next: the smallest id > prev,
 * or -1.  last: the largest id, or -1.  Modifying the set while iterating
 * is allowed (ids added behind the cursor are not seen).
 */
int idset_first (const idset_t *s);
int idset_next (const idset_t *s, int prev);
int idset_last (const idset_t *s);

/* Canonical string, malloc'd (caller frees): "" for the empty set.
 * NULL + EINVAL/ENOMEM.
 */
char *idset_encode (const idset_t *s, int flags);

/* Parse a string (see top of file).  NULL + EINVAL with a message in
 * errbuf (may be NULL) naming the problem and its position, or ENOMEM.
 */
idset_t *idset_decode (const char *str, char *errbuf, size_t errlen);

/* True if a and b hold the same ids (capacity does not matter). */
bool idset_equal (const idset_t *a, const idset_t *b);

/* dst |= src, dst &= ~src.  -1 + EINVAL/ENOMEM. */
int idset_add (idset_t *dst, const idset_t *src);
int idset_subtract (idset_t *dst, const idset_t *src);

#endif /* BGN_IDSET_H */
