/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* ovsign.h: brokers' own signatures, checked by any other broker.
 *
 * A broker relays what others send, so whatever reaches this one through
 * the overlay may have been written by any broker on its way.  What a
 * broker says about itself and what must be believed beyond its
 * neighbours is therefore signed by it: its live record (the incarnation
 * it runs as, fence.c), and requests that ask for more than the peer role
 * (the owner's, overlay.ready, overlay.moved).  Each broker has an
 * Ed25519 key pair (libsodium crypto_sign; the module keeps the seed in
 * the run directory and announces the public key through the bootstrap,
 * evkey.h); the core asks the io for a rank's public key when it needs
 * one (io->sign_key), and for a fresh copy when a signature fails with
 * the one it has (the rank may have restarted with a new key).
 *
 * A signed request carries, after its packed frames, a block of 80 bytes:
 *     u64 wall-clock time (microseconds), u64 nonce, 64 bytes signature
 * over "bgn-req", the instance, the origin rank (the envelope's source),
 * the destination, the time, the nonce and the packed frames.  It is
 * taken only within OVSIGN_WINDOW seconds of this broker's wall clock and
 * only once (the nonces seen in the window are kept, bounded: past
 * OVSIGN_SEEN_MAX the oldest are forgotten and nothing older than them is
 * taken any more), so a captured request cannot be played again.
 *
 * Without keys (a static bootstrap names none but rank 0's, the
 * simulator) nothing is signed and io->sign_key says so: the callers then
 * keep their older, weaker rules, and say so in the docs.
 */
#ifndef BGN_OVERLAY_OVSIGN_H
#define BGN_OVERLAY_OVSIGN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "src/include/bgn/module.h"
#include "envelope.h"
#include "frame.h"

struct overlay;

#define OVSIGN_BYTES 64
#define OVSIGN_WINDOW 120.0          /* s either side of the wall clock */
#define OVSIGN_SEEN_MAX 65536

struct idmap;

struct sign_state {             /* ovsign.c */
    bool can_sign;
    unsigned char sk[64];       /* this broker's secret signing key */
    struct idmap *seen;         /* signed requests taken in the window */
    double floor;               /* nothing signed at or before: taken */
    uint64_t signed_out;        /* requests signed here */
    uint64_t verified;          /* signed requests taken */
    uint64_t bad;               /* signatures that failed */
    uint64_t unchecked;         /* signatures refused unchecked: the
                                   signer's key could not be read */
    uint64_t stale;             /* signed outside the window */
    uint64_t replays;           /* signed requests played again */
    uint64_t unattested;        /* live records refused: not signed by
                                   their rank nor heard from it */
};

int ovsign_init (struct overlay *ov);
void ovsign_fini (struct overlay *ov);

/* This broker's secret key (64 bytes, crypto_sign); NULL: none. */
void ovsign_set_key (struct overlay *ov, const unsigned char *sk);

/* Can this broker sign? */
bool ovsign_can_sign (const struct overlay *ov);

/* Sign len bytes at data into sig.  -1 if this broker has no key. */
int ovsign_sign (struct overlay *ov, const void *data, size_t len,
                 unsigned char sig[OVSIGN_BYTES]);

/* Is sig rank's signature of data?  1 yes, 0 no (counted), -1 rank has
 * no key to check with (nothing is known either way). */
int ovsign_verify (struct overlay *ov, uint32_t rank, const void *data,
                   size_t len, const unsigned char *sig);

/* Does rank have a key, so that its word must come signed? */
bool ovsign_rank_has_key (struct overlay *ov, uint32_t rank);
/* A live record refused as not its rank's own word (fence.c): counted
 * here with the other signature failures. */
void ovsign_count_unattested (struct overlay *ov);

/* A 32-byte key only this broker and 'rank' can make, for 'label': the
 * X25519 agreement of this broker's secret and rank's public key (their
 * Ed25519 keys, converted; rank's as the io holds it now), hashed with
 * the label and both public keys.  0, or -1 if either has no key (or
 * rank is this broker). */
int ovsign_shared_key (struct overlay *ov, uint32_t rank, const char *label,
                       unsigned char key[32]);

/* The text a live record's signature covers: "bgn-live INSTANCE RANK
 * INC".  Returns its length. */
int ovsign_live_text (struct overlay *ov, uint32_t rank, uint64_t inc,
                      char *buf, size_t len);

/* A request's wire frame w (taken) for dest, sealed: a new frame with the
 * signature block after it, or w itself if this broker cannot sign.  NULL
 * with ENOMEM (w dropped). */
struct frame *ovsign_seal_request (struct overlay *ov, struct frame *w,
                                   uint32_t dest);

/* A request frame w whose envelope env has ENV_FLAG_SIGNED: check the
 * block (the origin is env->source) and say how long the frame is
 * without it (*body_len).  1 valid, fresh and new; 0 refused (bad,
 * stale, played again: counted, logged rate-limited); -1 no key for the
 * origin; -2 malformed (no block).  */
int ovsign_check_request (struct overlay *ov, const struct envelope *env,
                          const struct frame *w, size_t *body_len);

/* A request a broker sends only about itself (overlay.ready,
 * overlay.moved) says it comes from 'rank': NULL if that is the rank's
 * own word as far as the signatures go (signed by it; or no key is known
 * for its origin, or it did not cross the overlay: the caller's route
 * stack check is then all there is), else why not. */
const char *ovsign_origin_problem (const struct bgn_msg_info *info,
                                   uint32_t rank);

#endif
