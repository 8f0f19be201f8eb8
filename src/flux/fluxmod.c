/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* fluxmod.c: bgn.so, bgn's overlay as a Flux broker module.
 *
 * Loaded on every rank of a Flux instance (flux-modprobe does it at
 * start-up, see modprobe/), beside Flux's own TBON: the overlay module
 * of bgn-broker (src/modules/overlay, unchanged) runs on the host api of
 * fluxhost.c, which makes it out of Flux parts.  The life cycle is the
 * one bgn-broker drives: load (bind, publish the endpoint and key),
 * start (learn the peers'), connect, then the reactor; unload at the end.
 *
 * Failing soft: a module whose mod_main returns -1 takes the broker's
 * subtree down with it (unless broker.module-nopanic), so any set-up
 * failure is logged, with its cause, and the module ends with 0: Flux
 * goes on without the BGN.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <string.h>
#include <flux/core.h>

#include "src/include/bgn/module.h"
#include "fluxhost.h"

extern const struct bgn_module bgn_module_entry;

int mod_main (flux_t *h, int argc, char **argv)
{
    const struct bgn_module *mod = &bgn_module_entry;
    char err[512] = "";
    bgn_broker_t *b;
    void *state = NULL;

    if (argc > 0) {
        flux_log (h, LOG_ERR, "bgn: takes no arguments (configure it in "
                  "the [bgn] table), got '%s'", argv[0]);
        return 0;
    }
    if (!(b = fluxhost_create (h, err, sizeof (err)))) {
        flux_log (h, LOG_ERR, "bgn: %s; the BGN is not started", err);
        return 0;
    }
    if (mod->load (fluxhost_api (), b, &state) < 0) {
        flux_log (h, LOG_ERR, "bgn: the overlay did not load (see above); "
                  "the BGN is not started");
        goto done;
    }
    if (fluxhost_boot_commit (b) < 0) {
        flux_log (h, LOG_ERR, "bgn: this rank's endpoint and keys are not in "
                  "the KVS (see above); the BGN is not started");
        goto done;
    }
    /* Let rc1 go on: the rest waits for the other ranks' KVS keys. */
    if (flux_module_set_running (h) < 0)
        flux_log (h, LOG_WARNING, "bgn: flux_module_set_running: %s",
                  strerror (errno));
    if (mod->start (state) < 0 || (mod->connect && mod->connect (state) < 0)) {
        flux_log (h, LOG_ERR, "bgn: the overlay did not start (see above); "
                  "the BGN is not started");
        goto done;
    }
    if (fluxhost_serve (b) < 0) {
        flux_log (h, LOG_ERR, "bgn: cannot serve requests: %s",
                  strerror (errno));
        goto done;
    }
    flux_log (h, LOG_INFO, "bgn: the overlay is up on this broker");
    if (flux_reactor_run (flux_get_reactor (h), 0) < 0)
        flux_log (h, LOG_ERR, "bgn: reactor: %s", strerror (errno));
done:
    if (state)
        mod->unload (state);
    fluxhost_destroy (&b);
    return 0;
}
