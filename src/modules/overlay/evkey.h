/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* evkey.h: rank 0's event signing key, kept and announced (module side).
 *
 * Rank 0 signs every event batch and SYNC (evsign.c).  Its key pair is
 * made from a 32-byte seed kept in its run directory (events.seed, mode
 * 0600), so a rank 0 restarted in the same run directory signs with the
 * same key the others learned at their start; its public key goes out
 * through the bootstrap as "evkey" (hex).  Every other broker reads it
 * after the barrier.  A bootstrap with no exchange (static host lists)
 * has none, unless the config names rank 0's (bootstrap.event_key, its
 * secret in bootstrap.event_key_secret on rank 0's host): without it,
 * events are neither signed nor checked, and the broker says so once.
 */
#ifndef BGN_OVERLAY_EVKEY_H
#define BGN_OVERLAY_EVKEY_H

#include <stddef.h>

/* Rank 0: load or make the seed in rundir; fill pk (32 bytes, hex in
 * pkhex, 65 bytes) and sk (64 bytes).  -1 with errno and a reason. */
int evkey_load (const char *rundir, unsigned char *pk, unsigned char *sk,
                char *pkhex, char *errbuf, size_t errlen);

/* Rank 0 of a static instance: the key pair whose secret seed is in
 * 'path' (64 hex digits, as 'bgn keygen --event-key' writes it; a
 * regular file of mode 0600) and whose public key must be 'want_hex'
 * (bootstrap.event_key).  -1 with errno and a reason. */
int evkey_load_file (const char *path, const char *want_hex,
                     unsigned char *pk, unsigned char *sk, char *pkhex,
                     char *errbuf, size_t errlen);

/* Others: rank 0's public key from its hex form.  -1 with EINVAL. */
int evkey_parse (const char *hex, unsigned char *pk);

#endif
