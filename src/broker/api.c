/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* api.c: what the broker offers its modules (bgn/module.h's api table),
 * and the broker's own stop.
 *
 * Modules get the broker only through this table: facts (rank, size,
 * config), the bootstrap exchange, services, responses, message
 * delivery and sending, timers and socket watches on the reactor, and
 * stop.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <czmq.h>

#include "src/common/libutil/monotime.h"
#include "access.h"
#include "broker.h"
#include "watch.h"

/* Ends the reactor from a timer, so the handler that asked for the stop
 * (e.g. broker.shutdown) finishes and its response is queued first. */
static int stop_timer (zloop_t *loop, int timer_id, void *arg)
{
    return -1;
}

void broker_stop (struct bgn_broker *b, int exit_code)
{
    if (!b->stopping || exit_code > b->exit_code)
        b->exit_code = exit_code;
    if (!b->stopping && b->loop)
        zloop_timer (b->loop, 1, 1, stop_timer, b);
    b->stopping = 1;
}


static uint32_t api_rank (bgn_broker_t *b) { return b->rank; }
static uint32_t api_size (bgn_broker_t *b) { return b->size; }
static const char *api_hostname (bgn_broker_t *b) { return b->hostname; }
static const char *api_instance_id (bgn_broker_t *b) { return b->instance_id; }
static const char *api_rundir (bgn_broker_t *b) { return b->rundir; }
static const struct bgn_poller *api_poller (bgn_broker_t *b)
{
    return &b->poller;
}
static json_t *api_config (bgn_broker_t *b) { return b->conf; }

static void api_log (bgn_broker_t *b, int level, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    logger_vlog (b->log, level, fmt, ap);
    va_end (ap);
}

static void api_vlog (bgn_broker_t *b, int level, const char *fmt,
                      va_list ap)
{
    logger_vlog (b->log, level, fmt, ap);
}

static int api_boot_put (bgn_broker_t *b, const char *key, const char *value)
{
    char err[256] = "";
    if (boot_put (b->boot, key, value, err, sizeof (err)) < 0) {
        int saved = errno;
        logger_log (b->log, LOG_ERR, "bootstrap put %s: %s", key, err);
        errno = saved;
        return -1;
    }
    return 0;
}

static int api_boot_get (bgn_broker_t *b, uint32_t rank, const char *key,
                         char *buf, size_t len)
{
    char err[256] = "";
    if (boot_get (b->boot, rank, key, buf, len, err, sizeof (err)) < 0) {
        int saved = errno;
        logger_log (b->log, LOG_ERR, "bootstrap get %s of rank %u: %s", key,
                    (unsigned)rank, err);
        errno = saved;
        return -1;
    }
    return 0;
}

static int api_boot_lasting (bgn_broker_t *b)
{
    return boot_lasting (b->boot);
}

static int api_boot_refresh (bgn_broker_t *b, uint32_t rank, const char *key,
                             char *buf, size_t len)
{
    char err[256] = "";
    if (boot_refresh (b->boot, rank, key, buf, len, err, sizeof (err)) < 0) {
        int saved = errno;
        logger_log (b->log, LOG_DEBUG, "bootstrap get %s of rank %u again: "
                    "%s", key, (unsigned)rank, err);
        errno = saved;
        return -1;
    }
    return 0;
}

static int api_service_add (bgn_broker_t *b, const char *name,
                            bgn_service_f fn, void *arg)
{
    return service_add (b->services, name, fn, arg);
}

static int api_service_remove (bgn_broker_t *b, const char *name)
{
    return service_remove (b->services, name);
}

static int api_deliver (bgn_broker_t *b, msg_t *msg,
                        const struct bgn_msg_info *info)
{
    return broker_route (b, msg, info);
}

static int api_send (bgn_broker_t *b, msg_t *msg)
{
    struct bgn_msg_info info = { .source = b->rank };
    /* A module's request is the broker's own: the owner's. */
    if (msg_get_type (msg) == MSGTYPE_REQUEST)
        access_stamp_self (b->access, msg);
    if (!(msg_get_flags (msg) & MSGFLAG_ROUTE))
        msg_route_enable (msg);
    return broker_route (b, msg, &info);
}

static double api_now (bgn_broker_t *b)
{
    return monotime_now ();
}

/* Timers for modules: one-shot zloop timers whose callback takes only
 * the module's argument. */
struct api_timer {
    void (*cb) (void *arg);
    void *arg;
};

static int api_timer_fired (zloop_t *loop, int timer_id, void *arg)
{
    struct bgn_broker *b = arg;
    char key[16];
    struct api_timer *t;

    snprintf (key, sizeof (key), "%d", timer_id);
    if ((t = zhashx_lookup (b->timers, key))) {
        struct api_timer copy = *t;
        zhashx_delete (b->timers, key);   /* before cb: it may start one */
        copy.cb (copy.arg);
    }
    return 0;
}

static void timer_free (void **item)
{
    free (*item);
    *item = NULL;
}

/* The poller modules get: their sockets on the broker's zloop
 * (watch.c). */
static int poller_add (void *ctx, void *zsock, void (*cb) (void *arg),
                       void *arg)
{
    struct bgn_broker *b = ctx;
    return watches_add (b->watches, zsock, cb, arg, 0);
}

static int poller_add_quiet (void *ctx, void *zsock, void (*cb) (void *arg),
                             void *arg)
{
    struct bgn_broker *b = ctx;
    return watches_add (b->watches, zsock, cb, arg, 1);
}

static void poller_remove (void *ctx, void *zsock)
{
    struct bgn_broker *b = ctx;
    watches_remove (b->watches, zsock);
}

int api_init (struct bgn_broker *b)
{
    if (!(b->timers = zhashx_new ())
        || !(b->watches = watches_create (b->loop)))
        return -1;
    zhashx_set_destructor (b->timers, timer_free);
    b->poller = (struct bgn_poller){ .ctx = b, .zmq_ctx = zsys_init (),
                                     .add = poller_add,
                                     .remove = poller_remove,
                                     .add_quiet = poller_add_quiet };
    return 0;
}

void api_fini (struct bgn_broker *b)
{
    watches_destroy (&b->watches);
    zhashx_destroy (&b->timers);
}

static int api_timer_start (bgn_broker_t *b, double after,
                            void (*cb) (void *arg), void *arg)
{
    struct api_timer *t;
    char key[16];
    size_t ms = after > 0 ? (size_t)ceil (after * 1000) : 0;
    int id;

    if (!cb || !(t = calloc (1, sizeof (*t)))) {
        errno = cb ? ENOMEM : EINVAL;
        return -1;
    }
    t->cb = cb;
    t->arg = arg;
    if ((id = zloop_timer (b->loop, ms, 1, api_timer_fired, b)) < 0) {
        free (t);
        return -1;
    }
    snprintf (key, sizeof (key), "%d", id);
    zhashx_update (b->timers, key, t);
    return id;
}

static void api_timer_stop (bgn_broker_t *b, int id)
{
    char key[16];

    snprintf (key, sizeof (key), "%d", id);
    if (zhashx_lookup (b->timers, key)) {
        zhashx_delete (b->timers, key);
        zloop_timer_end (b->loop, id);
    }
}

static int api_set_overlay (bgn_broker_t *b, const struct bgn_overlay_ops *ops,
                            void *state)
{
    if (b->ovl) {
        errno = EBUSY;
        return -1;
    }
    b->ovl = ops;
    b->ovl_state = state;
    return 0;
}

const struct bgn_broker_api broker_api = {
    .rank = api_rank,
    .size = api_size,
    .hostname = api_hostname,
    .instance_id = api_instance_id,
    .rundir = api_rundir,
    .poller = api_poller,
    .config = api_config,
    .log = api_log,
    .boot_put = api_boot_put,
    .boot_get = api_boot_get,
    .boot_refresh = api_boot_refresh,
    .boot_lasting = api_boot_lasting,
    .service_add = api_service_add,
    .service_remove = api_service_remove,
    .respond = broker_respond,
    .respond_error = broker_respond_error,
    .deliver = api_deliver,
    .send = api_send,
    .set_overlay = api_set_overlay,
    .stop = broker_stop,
    .now = api_now,
    .timer_start = api_timer_start,
    .timer_stop = api_timer_stop,
    .deliver_events = broker_deliver_batch,
    .memory = broker_memory,
    .vlog = api_vlog,
};

