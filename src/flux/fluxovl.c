/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* fluxovl.c: bgn-overlay.so, bgn as the overlay of a Flux broker.
 *
 * A flux-broker patched with contrib/flux-core's patch starts the DSO
 * named by its attribute broker.overlay-module in place of its built-in
 * TBON, as the module "overlay", in a thread of its own, first of all.
 * This is that DSO: the overlay module of bgn-broker (the protocol core,
 * unchanged) on the Flux host (fluxhost.c) in its overlay mode.  Its
 * life is the built-in overlay's: set up and bootstrap synchronously
 * through the broker's own bootstrap service (the broker holds the
 * PMI), then serve until the broker unloads its built-in modules.
 *
 * Failing hard: unlike bgn.so, nothing runs without it, so a set-up
 * failure (bad [bgn] configuration, a bootstrap that fails) fails the
 * module's load, and with it the broker's start, with the reason.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <stdio.h>
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
    int rc = -1;

    if (argc > 0) {
        flux_log (h, LOG_ERR, "bgn-overlay: takes no arguments (configure it "
                  "in the [bgn] table), got '%s'", argv[0]);
        errno = EINVAL;
        return -1;
    }
    if (!(b = fluxhost_create_overlay (h, err, sizeof (err)))) {
        flux_log (h, LOG_ERR, "bgn-overlay: %s", err);
        return -1;
    }
    if (mod->load (fluxhost_api (), b, &state) < 0) {
        flux_log (h, LOG_ERR, "bgn-overlay: the overlay did not load (see "
                  "the lines above)");
        state = NULL;
        goto done;
    }
    if (fluxhost_boot_broker (b, err, sizeof (err)) < 0) {
        flux_log (h, LOG_ERR, "bgn-overlay: bootstrap: %s", err);
        goto done;
    }
    if (mod->start (state) < 0 || (mod->connect && mod->connect (state) < 0)) {
        flux_log (h, LOG_ERR, "bgn-overlay: the overlay did not start (see "
                  "the lines above)");
        goto done;
    }
    if (fluxhost_boot_finalize (b, err, sizeof (err)) < 0) {
        flux_log (h, LOG_ERR, "bgn-overlay: bootstrap: %s", err);
        goto done;
    }
    if (fluxhost_serve (b) < 0) {
        flux_log (h, LOG_ERR, "bgn-overlay: cannot serve requests: %s",
                  strerror (errno));
        goto done;
    }
    if (flux_module_set_running (h) < 0)
        flux_log (h, LOG_WARNING, "bgn-overlay: flux_module_set_running: %s",
                  strerror (errno));
    if (flux_reactor_run (flux_get_reactor (h), 0) < 0) {
        flux_log (h, LOG_ERR, "bgn-overlay: reactor: %s", strerror (errno));
        goto done;
    }
    rc = 0;
done:
    if (state)
        mod->unload (state);
    fluxhost_destroy (&b);
    return rc;
}
