/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* fluxmod.c: bgn.so, bgn's overlay as a Flux broker module.
 *
 * Loaded on every rank of a Flux instance (flux-modprobe does it at
 * start-up, see modprobe/), beside Flux's own TBON: the overlay module
 * of bgn-broker (src/modules/overlay, unchanged) runs on the host api of
 * fluxhost.c, which makes it out of Flux parts.  The life cycle is the
 * one bgn-broker drives: load (bind, put the endpoint and keys), start
 * (learn the peers'), connect, then the reactor; unload at the end.
 * Here the exchange between load and start is a request to rank 0 that
 * runs on the reactor (fluxhost_boot_exchange): the module tells Flux
 * it is running right after its load, and starts from the answer.
 *
 * Failing soft: a module whose mod_main returns -1 after it is running
 * takes the broker down (unless broker.module-nopanic), and a load
 * that fails in rc1 fails the instance's start, so a set-up failure
 * (bad [bgn] configuration, a bootstrap that timed out) leaves the
 * module loaded but not started: the reason is logged, and every bgn.*
 * request is answered with it, so `flux bgn` says why in one line.
 * Only a bad module argument (`flux module load bgn ARG`, by hand)
 * fails the load itself.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <flux/core.h>

#include "src/include/bgn/module.h"
#include "fluxhost.h"

extern const struct bgn_module bgn_module_entry;

struct modctx {
    flux_t *h;
    const struct bgn_module *mod;
    void *state;
    int failed;                    /* set-up failed: why says how */
    char why[512];
};

/* Not started: answer every request to bgn's service with the reason. */
static void not_started_cb (flux_t *h, flux_msg_handler_t *mh,
                            const flux_msg_t *msg, void *arg)
{
    const char *why = arg;

    if (flux_respond_error (h, msg, EHOSTDOWN, why) < 0)
        flux_log_error (h, "bgn: answering a request");
}

static int serve_not_started (flux_t *h, const char *why, bool running)
{
    struct flux_match match = FLUX_MATCH_REQUEST;
    flux_msg_handler_t *mh;
    char text[600];
    int rc;

    snprintf (text, sizeof (text), "bgn did not start on this broker: %s",
              why);
    flux_log (h, LOG_ERR, "%s; Flux goes on without it", text);
    match.topic_glob = "bgn.*";
    if (!(mh = flux_msg_handler_create (h, match, not_started_cb, text))) {
        flux_log_error (h, "bgn: flux_msg_handler_create");
        return 0;
    }
    flux_msg_handler_allow_rolemask (mh, FLUX_ROLE_ALL);
    flux_msg_handler_start (mh);
    if (!running && flux_module_set_running (h) < 0)
        flux_log_error (h, "bgn: flux_module_set_running");
    if ((rc = flux_reactor_run (flux_get_reactor (h), 0)) < 0)
        flux_log_error (h, "bgn: reactor");
    flux_msg_handler_destroy (mh);
    return 0;
}

static void fail (struct modctx *c, const char *fmt, const char *arg)
{
    snprintf (c->why, sizeof (c->why), fmt, arg);
    c->failed = 1;
    flux_reactor_stop (flux_get_reactor (c->h));
}

/* The peers' endpoints and keys are here: start, connect, serve. */
static void exchanged_cb (bgn_broker_t *b, int errnum, const char *why,
                          void *arg)
{
    struct modctx *c = arg;

    if (errnum) {
        fail (c, "the bootstrap exchange with rank 0: %s", why);
        return;
    }
    if (c->mod->start (c->state) < 0
        || (c->mod->connect && c->mod->connect (c->state) < 0)) {
        fail (c, "the overlay did not start (%s)", "see the lines above");
        return;
    }
    if (fluxhost_serve (b) < 0) {
        fail (c, "cannot serve requests: %s", strerror (errno));
        return;
    }
    flux_log (c->h, LOG_INFO, "bgn: the overlay is up on this broker");
}

int mod_main (flux_t *h, int argc, char **argv)
{
    struct modctx c = { .h = h, .mod = &bgn_module_entry };
    char err[512] = "";
    bgn_broker_t *b;

    if (argc > 0) {
        flux_log (h, LOG_ERR, "bgn: takes no arguments (configure it in "
                  "the [bgn] table), got '%s'", argv[0]);
        errno = EINVAL;
        return -1;
    }
    if (!(b = fluxhost_create (h, err, sizeof (err))))
        return serve_not_started (h, err, false);
    if (c.mod->load (fluxhost_api (), b, &c.state) < 0) {
        fluxhost_destroy (&b);
        return serve_not_started (h, "the overlay did not load (see the "
                                     "lines above)", false);
    }
    /* Let rc1 go on: the exchange runs on the reactor. */
    if (flux_module_set_running (h) < 0)
        flux_log (h, LOG_WARNING, "bgn: flux_module_set_running: %s",
                  strerror (errno));
    if (fluxhost_boot_exchange (b, exchanged_cb, &c) < 0)
        fail (&c, "the bootstrap exchange: %s", strerror (errno));
    else if (flux_reactor_run (flux_get_reactor (h), 0) < 0)
        flux_log (h, LOG_ERR, "bgn: reactor: %s", strerror (errno));
    if (c.state)
        c.mod->unload (c.state);
    fluxhost_destroy (&b);
    if (c.failed)
        return serve_not_started (h, c.why, true);
    return 0;
}
