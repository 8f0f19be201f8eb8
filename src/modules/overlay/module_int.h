/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* module_int.h: the overlay module's state, shared by its two files.
 *
 * module.c is the module (entry points, the io table, the broker's ops
 * and services, set-up); modkeys.c reads the keys the bootstrap carries
 * for it.  module.c calls modkeys.c, never the other way.  Nothing else
 * includes this header.
 */
#ifndef BGN_OVERLAY_MODULE_INT_H
#define BGN_OVERLAY_MODULE_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "src/common/libutil/ratelimit.h"
#include "src/include/bgn/module.h"
#include "ovconf.h"
#include "ovcore.h"

struct curve;
struct idmap;
struct sock;

struct module {
    const struct bgn_broker_api *api;
    bgn_broker_t *b;
    struct ovl_config cfg;
    struct curve *curve;
    struct sock *sock;
    struct overlay *ov;
    char endpoint[512];
    int wake_timer;              /* broker timer id, -1 when none */
    double wake_at;
    uint64_t rng;
    ratelimit_t *refusals;       /* warnings about refused contacts */
    struct idmap *keys;          /* rank -> struct signkey (modkeys.c) */
    bool keys_lazy;              /* other ranks' keys read when first needed */
    double late_failed;          /* when such a read last failed, or 0 */
};

#define mlog(m, level, ...) (m)->api->log ((m)->b, (level), __VA_ARGS__)

/* ---- modkeys.c: the keys from the bootstrap --------------------------- */
/* Which ranks' bootstrap values start reads (keys_lazy or not); a host
 * that fetches ahead is told the list. */
int modkeys_announce_reads (struct module *m);
/* At load: our signing key (made, or read from the run directory or
 * the config), handed to the core and announced as "evkey". */
int modkeys_setup (struct module *m);
/* At start: the public and signing keys needed now. */
int modkeys_learn (struct module *m);
/* rank's CURVE public key (for the contact check). */
const char *modkeys_pubkey (struct module *m, uint32_t rank);
/* The io's sign_key (io.h): a rank's signing key, asked of the
 * bootstrap once, and again after a failed check. */
int modkeys_sign_key (void *ctx, uint32_t rank, int refresh,
                      unsigned char pk[32]);

#endif
