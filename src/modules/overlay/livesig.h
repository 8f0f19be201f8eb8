/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* livesig.h: each rank's own signature of its live record.
 *
 * A live record that lifts a fence, or names an incarnation newer than
 * the one known, is believed beyond the rank's neighbours only with the
 * rank's own signature of it (fence.h).  This part keeps, per rank, the
 * newest such signature known to check out, and the one its HELLO
 * brought last, kept unchecked until first used: a HELLO comes over the
 * rank's own link, so the broker that hears it needs no signature to
 * believe it, and checking only when the record is passed on saves two
 * Ed25519 checks per link at start-up.  Nobody else's word is taken
 * unchecked.
 *
 * Checks cost the checker (56 us each), not the sender: each link has a
 * budget of failed checks (sigbudget.h), past which its live records are
 * refused unchecked for a back-off.
 */
#ifndef BGN_OVERLAY_LIVESIG_H
#define BGN_OVERLAY_LIVESIG_H

#include <stdbool.h>
#include <stdint.h>

struct overlay;
struct idmap;

struct livesig_state {          /* livesig.c */
    struct idmap *map;          /* rank -> struct livesig */
    uint64_t refused;           /* dropped unchecked: their link in a
                                   back-off (sigbudget.h) */
    uint64_t backoffs;          /* back-offs begun */
};

/* One rank's: the checked one (inc 0: none) and the pending one
 * (pending_inc 0: none). */
struct livesig {
    uint64_t inc;
    uint8_t sig[64];
    uint64_t pending_inc;
    uint8_t pending[64];
};

/* -1 (ENOMEM) on failure. */
int livesig_init (struct overlay *ov);
void livesig_fini (struct overlay *ov);

/* Is sig rank's own signature of its live record at inc?  Charged to
 * the budget of the link from peer rank 'via' (UINT32_MAX: none). */
bool livesig_check (struct overlay *ov, uint32_t via, uint32_t rank,
                    uint64_t inc, const uint8_t *sig);
/* Keep a checked signature (if it is not older than the one held). */
void livesig_keep (struct overlay *ov, uint32_t rank, uint64_t inc,
                   const uint8_t *sig);
/* The checked signature held of rank's live record at inc, copied to sig
 * (a pending one is checked first); false if none (never for
 * incarnation 0). */
bool livesig_get (struct overlay *ov, uint32_t rank, uint64_t inc,
                  uint8_t sig[64]);
/* Is a checked signature of rank at inc or newer held? */
bool livesig_held (struct overlay *ov, uint32_t rank, uint64_t inc);

/* Rank's own signature of its live record at inc (64 bytes, from its
 * HELLO, over its own link): kept, and sent with the record so that
 * others believe it.  It is checked when first sent on (or used here),
 * and dropped then if it does not check out; false if not kept (older
 * than the one held, or no memory). */
bool livesig_note (struct overlay *ov, uint32_t rank, uint64_t inc,
                   const uint8_t *sig);

/* This broker's signature of its live record at its incarnation, for its
 * HELLO (false: it has no key).  Made once per incarnation and kept with
 * the others, so that its record goes out signed. */
bool livesig_own (struct overlay *ov, uint8_t sig[64]);

#endif
