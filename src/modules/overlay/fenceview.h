/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* fenceview.h: the fence view as data: one record per rank, its digest.
 *
 * The records this broker holds (the latest known incarnation of each
 * rank ever heard of, fenced or live, with the reason it was written
 * with), the count of fenced ones, and a digest of them all (an XOR of
 * one hash per record, kept as records change) that keepalives carry.
 * Only fence.c writes records (fenceview_set), after its rules said a
 * record is news; everybody reads them.  The router's down set mirrors
 * the fenced records (fence.c sets it), so "is rank fenced" is a bit
 * test.
 */
#ifndef BGN_OVERLAY_FENCEVIEW_H
#define BGN_OVERLAY_FENCEVIEW_H

#include <stdbool.h>
#include <stdint.h>

struct overlay;
struct idmap;

#define FENCE_REASONS 64
#define FENCE_REASON_LEN 48

struct fenceview_state {        /* fenceview.c */
    struct idmap *map;          /* rank -> struct fence_entry */
    char reasons[FENCE_REASONS][FENCE_REASON_LEN];
                                /* interned: entries keep an index */
    int nreasons;
    uint64_t digest;            /* of the records, for keepalives */
    int nfenced;
};

/* 16 bytes: every broker holds one per rank ever fenced, and a simulator
 * holds thousands of brokers. */
struct fence_entry {
    uint64_t inc;            /* latest known incarnation */
    float since;             /* when this record last changed */
    bool fenced;
    uint8_t reason;          /* fence_reason() */
};

/* -1 (ENOMEM) on failure. */
int fenceview_init (struct overlay *ov);
void fenceview_fini (struct overlay *ov);

/* Write rank's record (fence.c only: the rules are its), keeping the
 * digest and the fenced count.  *was_fenced says what it was (false if
 * new).  NULL (ENOMEM) if a new record could not be made. */
struct fence_entry *fenceview_set (struct overlay *ov, uint32_t rank,
                                   uint64_t inc, bool fenced,
                                   const char *reason, bool *was_fenced);
/* Put every rank that has a record into 'set' (an idmap used as a set). */
void fenceview_ranks (struct overlay *ov, struct idmap *set);

/* The record of rank, or NULL if nothing is known of it. */
const struct fence_entry *fence_lookup (struct overlay *ov, uint32_t rank);
bool fence_is_fenced (struct overlay *ov, uint32_t rank);
/* How many ranks are fenced here. */
int fence_count (struct overlay *ov);
/* The stamp (envelope.h) of rank's incarnation as this broker knows it:
 * its live record's, or 0 if it has none (never heard of, or fenced). */
uint16_t fence_stamp (struct overlay *ov, uint32_t rank);
/* The reason a record was written with ("" if none). */
const char *fence_reason (struct overlay *ov, const struct fence_entry *f);
/* A reason's index in the interned table, and back ("" if unknown):
 * suspicions keep their reason the same way. */
uint8_t fence_reason_index (struct overlay *ov, const char *reason);
const char *fence_reason_text (struct overlay *ov, uint8_t index);
/* This broker's digest of its view (keepalives carry it). */
uint64_t fence_digest (struct overlay *ov);
/* The fence root: the lowest rank that is not fenced (or this one). */
uint32_t fence_root (struct overlay *ov);

#endif
