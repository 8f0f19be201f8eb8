/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* hostmap.h: which host each broker rank runs on, and back.
 *
 * An instance's rank -> host table, as the broker keeps it (filled from
 * the static bootstrap's host list, or from what each broker reports to
 * rank 0) and as commands use it to accept host names where they take
 * ranks ("bgn ping node3", "bgn fault kill node[3-5]") and to print hosts
 * beside ranks.  Several ranks may run on one host (bgn start runs them
 * all on this one), so a host maps to a set of ranks.
 *
 * Host names follow hostlist.h: printable, no whitespace, no ",[]", at
 * most HOSTMAP_NAME_MAX bytes (a DNS name is at most 253).  A
 * lookup matches a name exactly, or else matches the first label of a
 * fully qualified name in the table ("node3" finds "node3.cluster").
 *
 * Errors: -1 / NULL with errno (EINVAL, ENOMEM).  No global state; not
 * thread-safe.
 */
#ifndef BGN_HOSTMAP_H
#define BGN_HOSTMAP_H

#include <stddef.h>
#include <stdint.h>

#include "idset.h"

typedef struct hostmap hostmap_t;

#define HOSTMAP_NAME_MAX 255

/* A table for ranks 0..size-1, every host unknown.  NULL + EINVAL if
 * size > IDSET_ID_MAX + 1, ENOMEM. */
hostmap_t *hostmap_create (uint32_t size);
void hostmap_destroy (hostmap_t **p);

uint32_t hostmap_size (const hostmap_t *hm);

/* Record rank's host (replacing what was there).  -1 + EINVAL for a rank
 * out of range or a bad host name, ENOMEM. */
int hostmap_set (hostmap_t *hm, uint32_t rank, const char *host);

/* rank's host, owned by the table; NULL if unknown or out of range. */
const char *hostmap_host (const hostmap_t *hm, uint32_t rank);

/* Number of ranks whose host is known. */
uint32_t hostmap_known (const hostmap_t *hm);

/* Heap the table holds (its arrays and names, as the allocator counts
 * them), and the most it can hold: every rank with a name of
 * HOSTMAP_NAME_MAX bytes. */
size_t hostmap_memory (const hostmap_t *hm);
size_t hostmap_memory_bound (const hostmap_t *hm);

/* Add the ranks running on 'host' to ids; returns how many (0 if the
 * host is not in the table), -1 + ENOMEM. */
int hostmap_ranks (const hostmap_t *hm, const char *host, idset_t *ids);

/* The hosts of the ranks in ids, in rank order, each host once, as a
 * compressed hostlist ("node[3,5-7]"); ranks with no known host are left
 * out.  malloc'd; "" if none.  NULL + ENOMEM. */
char *hostmap_hostlist (const hostmap_t *hm, const idset_t *ids);

#endif
