/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* fencemsg.h: fence records on the wire.
 *
 * The fence view travels as batches of records (rank, incarnation,
 * fenced or live, a reason), in one binary frame, so a batch of a
 * thousand fences costs 14 bytes each and one message per hop:
 *
 *   u8  version (1)     u32 root (ENV_BATCH: the tree's root; else 0)
 *   u16 R reasons, each u8 length + bytes (deduplicated)
 *   u32 N records, each u32 rank, u64 incarnation, u8 flags, u8 reason
 *       [, 64 bytes: the rank's own signature of its live record]
 *
 * flags: 1 fenced (else live); 2 a signature follows the record (a live
 * record its rank signed: "bgn-live INSTANCE RANK INC", ovsign.h), so
 * that brokers that never heard from the rank may believe it.
 *
 * All integers in network order.  Pure functions, no state.
 */
#ifndef BGN_OVERLAY_FENCEMSG_H
#define BGN_OVERLAY_FENCEMSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "frame.h"

#define FENCEMSG_VERSION 1
#define FENCEMSG_MAX_REASONS 255

struct fence_record {
    uint32_t rank;
    uint64_t inc;
    bool fenced;
    const char *reason;      /* borrowed; "" if none */
    const uint8_t *sig;      /* FENCEMSG_SIG_SIZE bytes, borrowed, or NULL */
};

#define FENCEMSG_SIG_SIZE 64

/* A frame holding recs[0..n-1] for tree root 'root'.  NULL/ENOMEM. */
struct frame *fencemsg_encode (uint32_t root, const struct fence_record *recs,
                               size_t n);

/* Call fn for each record of a frame (reasons point into the decoder's
 * own copy, valid during the call); root goes to *root.  Returns the
 * number of records, or -1 with errno EPROTO (malformed: nothing was
 * passed to fn) or ENOMEM. */
int fencemsg_decode (const void *data, size_t len, uint32_t *root,
                     void (*fn) (const struct fence_record *rec, void *arg),
                     void *arg);

#endif
