/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* fluxhost.h: bgn's module host api (bgn/module.h) on a Flux broker.
 *
 * The overlay module (src/modules/overlay: its glue, socket, certificate
 * store and the sans-I/O protocol core) runs unchanged inside a Flux
 * broker module: this host gives it what bgn-broker gives it, made of
 * Flux parts:
 *   - rank, size, hostname from the Flux handle; a run directory of its
 *     own under the broker's rundir (ranks of a test instance share one);
 *   - the configuration: Flux's [bgn] table, checked with the same schema
 *     and defaults as bgn's [overlay] (plus the Flux-only policy keys
 *     below), errors naming the bgn.KEY;
 *   - the bootstrap exchange through rank 0 (fluxboot.c): each rank
 *     sends what the module put (its endpoint and keys) to rank 0 in one
 *     request that also fetches what the module's start will read;
 *     nothing but the broker is needed (no KVS), and nothing blocks;
 *   - timers and socket watches on the Flux reactor (fluxpoll.h);
 *   - routing of bgn messages as bgn-broker does it: requests to this
 *     rank go to the overlay's own service (topics bgn.*) or, any other
 *     topic, into the Flux broker as a request from a peer (credentials
 *     kept, FLUX_ROLE_LOCAL cleared); responses follow their route stack
 *     (a rank: over the BGN; a Flux client token: to that client);
 *   - Flux clients: bgn.* requests of local Flux clients enter that
 *     routing; bgn.rpc carries any request to any rank over the BGN;
 *     bgn.event-pub / bgn.event-sub publish and stream bgn's sequenced
 *     events; every client request has a deadline.
 *
 * Flux-only [bgn] keys (defaults in brackets):
 *   boot_timeout = "60s"       how long start-up waits for the peers'
 *                              endpoints and keys (their bgn to load)
 *   membership_event = true    rank 0 republishes membership changes as the
 *                              Flux event bgn.membership
 *   disconnect_hung = false    rank 0 asks Flux's overlay to disconnect a
 *                              rank bgn fenced
 *   orphan_relief = false      rank 0 tells a broker Flux has lost (for
 *                              10 s) but the BGN still reaches to exit (so
 *                              its service manager restarts it and it
 *                              rejoins)
 *
 * One host per module; not thread-safe (the module's own thread only).
 */
#ifndef BGN_FLUX_FLUXHOST_H
#define BGN_FLUX_FLUXHOST_H

#include <flux/core.h>

#include "src/include/bgn/module.h"

/* The host for handle h.  NULL with errno and a message in errbuf. */
bgn_broker_t *fluxhost_create (flux_t *h, char *errbuf, size_t errlen);
void fluxhost_destroy (bgn_broker_t **bp);

/* The host as the broker's overlay (bgn-overlay.so): the module named
 * "overlay", in the broker's overlay thread.  It carries the broker's
 * messages on interthread://overlay over the BGN (fluxchan.c), answers
 * Flux's overlay.* services and follows the state machine (fluxovsvc.c);
 * the [bgn] table configures it, less the TBON policies. */
bgn_broker_t *fluxhost_create_overlay (flux_t *h, char *errbuf,
                                       size_t errlen);

/* As the broker's overlay, after the module's load: put this rank's
 * values in its business card and read every rank's through the
 * broker's bootstrap (its PMI), blocking as the built-in overlay does.
 * Then, once started and connected, finalize it.  -1 with errbuf. */
int fluxhost_boot_broker (bgn_broker_t *b, char *errbuf, size_t errlen);
int fluxhost_boot_finalize (bgn_broker_t *b, char *errbuf, size_t errlen);

/* The api table to hand the module (static). */
const struct bgn_broker_api *fluxhost_api (void);

/* The bootstrap exchange, after the module's load: send this rank's
 * endpoint and keys to rank 0 and fetch those the module's start reads
 * (api->boot_want), then call cb (b, 0, NULL, arg) from the reactor, or
 * cb (b, errnum, why, arg) if they did not come within boot_timeout (or
 * the exchange failed).  Never blocks.  Call once. */
int fluxhost_boot_exchange (bgn_broker_t *b,
                            void (*cb) (bgn_broker_t *b, int errnum,
                                        const char *why, void *arg),
                            void *arg);

/* Start serving Flux clients (message handlers, deadline sweep): call
 * once the module has started.  -1 with errno. */
int fluxhost_serve (bgn_broker_t *b);

/* The exit code the module asked for with api->stop, -1 if none. */
int fluxhost_stop_code (const bgn_broker_t *b);

#endif
