/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* curve.h: this broker's CURVE certificate and the keys it admits.
 *
 * A system instance shares one certificate (bootstrap.curve_cert: every
 * broker holds the same key pair, as in Flux).  Otherwise each broker
 * makes a key pair, keeps it in its run directory (so a broker restarted
 * in the same place presents the key its peers already trust) and
 * publishes the public key through the bootstrap exchange.  Peers that
 * connect to us are admitted by our ZAP handler only with a key
 * authorized here; it answers from curve_start() on (see curve.c).
 */
#ifndef BGN_OVERLAY_CURVE_H
#define BGN_OVERLAY_CURVE_H

#include <stddef.h>
#include <stdint.h>

#include "src/include/bgn/module.h"   /* struct bgn_poller */

struct curve;

/* Load cert_path (and cert_path_secret), or, if cert_path is "", reuse or
 * make rundir/overlay.cert; bind the ZAP handler in ZeroMQ context
 * 'zmq_ctx' (the one the overlay's socket is made in: ZAP is per
 * context).  NULL with errno and a message in errbuf. */
struct curve *curve_create (const char *cert_path, const char *rundir,
                            void *zmq_ctx, char *errbuf, size_t errlen);
/* Stops the ZAP handler.  A key pair made in the run directory stays
 * there, even after an orderly leave: a broker restarted on the same run
 * directory comes back with the key its peers learnt, so they admit it. */
void curve_destroy (struct curve **cp);

/* Z85 keys (40 characters). */
const char *curve_public (const struct curve *c);
const char *curve_secret (const struct curve *c);
/* Was the key pair reused from the run directory? */
int curve_reused (const struct curve *c);

/* Admit connections with this public key (Z85).  0, or -1 with EINVAL. */
int curve_authorize (struct curve *c, const char *pubkey);

/* Start answering ZAP requests, watched by 'poller' (borrowed; the ones
 * that waited included): call once the keys to admit are authorized.
 * -1 with errno. */
int curve_start (struct curve *c, const struct bgn_poller *poller);

/* Key -> rank: who holds which key.  The module records every rank's
 * public key from the bootstrap; a key recorded for two ranks (a shared
 * certificate) names no rank.  0, or -1 with EINVAL (bad key), ENOMEM. */
int curve_bind (struct curve *c, uint32_t rank, const char *pubkey);

/* The rank that holds 'pubkey': >= 0; CURVE_KEY_SHARED if several ranks
 * hold it; CURVE_KEY_UNKNOWN if none does (or pubkey is NULL). */
#define CURVE_KEY_UNKNOWN (-1)
#define CURVE_KEY_SHARED (-2)
long curve_rank_of (const struct curve *c, const char *pubkey);

/* The key recorded for 'rank', or NULL. */
const char *curve_key_of (const struct curve *c, uint32_t rank);

#endif
