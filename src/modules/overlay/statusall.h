/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* statusall.h: the status-all reduction.
 *
 * overlay.status-all is a reduction over the broadcast tree rooted at
 * rank 0: each broker answers with one summary of its subtree (counts,
 * health tallies, the down sets, summed counters, and only the brokers
 * with a problem), asking its tree children (or, for a fenced child, that
 * child's children) in parallel with a deadline that shrinks with depth,
 * so the root's answer arrives in time even when a subtree does not;
 * ranks that did not answer are listed as missing.  The answer's size
 * grows with the number of problems, not with N (statusall.c has the
 * shape).
 */
#ifndef BGN_OVERLAY_STATUSALL_H
#define BGN_OVERLAY_STATUSALL_H

#include <stdint.h>

#include "src/common/libmsg/message.h"

struct overlay;
struct idmap;

struct status_state {           /* statusall.c */
    struct idmap *gathers;      /* matchtag -> struct gather_child */
    uint32_t next_tag;
};

int status_init (struct overlay *ov);
void status_fini (struct overlay *ov);

/* overlay.status-all or overlay.gather (the same reduction). */
void status_gather_request (struct overlay *ov, const msg_t *req);
/* The answer to one of our overlay.gather requests. */
void status_gather_response (struct overlay *ov, const msg_t *rsp);

#endif
