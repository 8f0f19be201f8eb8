/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* hostlist.h: ordered lists of host names, "node[0-15,32]", "a1,b[01-03]".
 *
 * Used to map host names to ranks in a static bootstrap config: the rank
 * of a host is its index in the expanded list, so order is significant
 * and is preserved by decode and encode (nothing is sorted or
 * de-duplicated; find() returns the first match).
 *
 * Syntax: a comma-separated list of items.  Each item is a host name
 * with zero or more bracket groups; a group is a comma-separated list of
 * decimal numbers "7" and inclusive ranges "1-3".  Several groups in one
 * item expand as a cartesian product, leftmost slowest:
 *   "rack[1-2]n[1-2]" -> rack1n1 rack1n2 rack2n1 rack2n2
 * Zero padding is preserved: a range is printed with at least as many
 * digits as its low bound was written with ("b[01-03]" -> b01 b02 b03,
 * "n[8-10]" -> n8 n9 n10, "n[098-100]" -> n098 n099 n100).
 * Rejected with EINVAL (message in errbuf naming the item): an empty
 * item or group ("a,,b", "n[]", "n[1,]"), a reversed range "n[3-1]",
 * non-digits in a group "n[a]", nested or unbalanced brackets, numbers
 * of more than 9 digits, and any whitespace or control character.
 * Host names may otherwise contain any printable character except
 * ",[]".  More than HOSTLIST_MAX_HOSTS hosts in total is E2BIG.
 *
 * encode compresses runs of consecutive names that differ only in a
 * trailing number into one bracket group ("n1,n2,n3,n7" -> "n[1-3,7]",
 * "b01,b02" -> "b[01-02]"), only between neighbours in list order, so
 * decode (encode (l)) yields l again.  Only the trailing number is
 * compressed: "rack1n1,rack1n2" -> "rack1n[1-2]".
 *
 * Errors: -1/NULL with errno (EINVAL, E2BIG, ENOMEM, ENOENT for find).
 * No global state; a list is not thread-safe.
 */
#ifndef BGN_HOSTLIST_H
#define BGN_HOSTLIST_H

#include <stddef.h>

#define HOSTLIST_MAX_HOSTS (1 << 20)

typedef struct hostlist hostlist_t;

/* An empty list.  NULL + ENOMEM. */
hostlist_t *hostlist_create (void);

/* Free the list and its names; *p = NULL.  Safe on NULL. */
void hostlist_destroy (hostlist_t **p);

/* Parse a hostlist string into a new list.  "" gives an empty list.
 * NULL + EINVAL/E2BIG (message in errbuf, which may be NULL), ENOMEM.
 */
hostlist_t *hostlist_decode (const char *s, char *errbuf, size_t errlen);

/* Expand s and append its hosts to hl.  On error hl is unchanged. */
int hostlist_append (hostlist_t *hl, const char *s,
                     char *errbuf, size_t errlen);

/* Append one literal host name (no brackets or commas; EINVAL). */
int hostlist_append_host (hostlist_t *hl, const char *host);

/* Number of hosts (0 for NULL). */
int hostlist_count (const hostlist_t *hl);

/* The n'th host (0-based), owned by the list; NULL + EINVAL if out of
 * range.
 */
const char *hostlist_nth (const hostlist_t *hl, int n);

/* Index of the first host equal to 'host', or -1 + ENOENT. */
int hostlist_find (const hostlist_t *hl, const char *host);

/* Compressed string (see above), malloc'd, caller frees; "" for an
 * empty list.  NULL + EINVAL/ENOMEM.
 */
char *hostlist_encode (const hostlist_t *hl);

#endif /* BGN_HOSTLIST_H */
