/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* notify.c: the overlay's health, told to the log and to systemd
 * (sd_notify readiness and status; see notify.h).
 *
 * A reactor timer samples the overlay's health; that is cheap (a
 * function call) and keeps this file out of the message path.  It runs
 * every 250 ms until the overlay is first full (or ready_timeout has
 * passed), so readiness is told promptly, then every second: an idle
 * broker wakes for it once a second, not four times.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <czmq.h>
#if HAVE_LIBSYSTEMD
#include <systemd/sd-daemon.h>
#endif

#include "src/common/libutil/monotime.h"
#include "broker.h"
#include "notify.h"

#define NOTIFY_TICK_MS 250
#define NOTIFY_SLOW_TICK_MS 1000

struct notify {
    struct bgn_broker *b;
    int active;              /* under systemd: $NOTIFY_SOCKET was set */
    int timer_id;
    double start;
    double ready_timeout;
    int ready;
    int slow;                /* ticking every NOTIFY_SLOW_TICK_MS */
    char status[128];        /* last STATUS= sent */
    char health[32];         /* last health logged, "" before the first */
};

static void send_state (struct notify *n, const char *state)
{
#if HAVE_LIBSYSTEMD
    int rc = sd_notify (0, state);
    if (rc < 0)
        logger_log (n->b->log, LOG_WARNING, "sd_notify: %s", strerror (-rc));
#else
    (void)n;
    (void)state;
#endif
}

static const char *overlay_health_word (struct bgn_broker *b)
{
    if (!b->ovl || !b->ovl->health)
        return "full";      /* no overlay: size 1, nothing to wait for */
    return b->ovl->health (b->ovl_state);
}

/* One info line per change of health, with the time since the broker
 * started, so that 'bgn dmesg' shows when the overlay became full. */
static void log_health (struct notify *n, const char *health)
{
    if (!strcmp (health, n->health))
        return;
    logger_log (n->b->log, LOG_INFO, "overlay health: %s%s%s, %.3fs after "
                "start", n->health, n->health[0] ? " -> " : "", health,
                monotime_now () - n->b->start_time);
    snprintf (n->health, sizeof (n->health), "%s", health);
}

/* READY=1 once the overlay is full or ready_timeout has passed, then
 * STATUS= whenever the health changes. */
static void tell_systemd (struct notify *n, const char *health)
{
    char status[128], msg[160];

    snprintf (status, sizeof (status), "rank %u of %u: overlay %s",
              (unsigned)n->b->rank, (unsigned)n->b->size, health);
    if (!n->ready && (!strcmp (health, "full")
                      || monotime_now () - n->start >= n->ready_timeout)) {
        n->ready = 1;
        snprintf (n->status, sizeof (n->status), "%s", status);
        snprintf (msg, sizeof (msg), "READY=1\nSTATUS=%s", status);
        send_state (n, msg);
        logger_log (n->b->log, LOG_INFO, "ready (systemd): %s", status);
        return;
    }
    if (n->ready && strcmp (status, n->status) != 0) {
        snprintf (n->status, sizeof (n->status), "%s", status);
        snprintf (msg, sizeof (msg), "STATUS=%s", status);
        send_state (n, msg);
    }
}

static int tick (zloop_t *loop, int timer_id, void *arg);

/* Once full (or past ready_timeout), sample once a second. */
static void slow_down (struct notify *n, const char *health)
{
    int id;

    if (n->slow || n->timer_id < 0
        || (strcmp (health, "full") != 0
            && monotime_now () - n->start < n->ready_timeout))
        return;
    if ((id = zloop_timer (n->b->loop, NOTIFY_SLOW_TICK_MS, 0, tick, n)) < 0)
        return;     /* keeps the fast tick */
    zloop_timer_end (n->b->loop, n->timer_id);
    n->timer_id = id;
    n->slow = 1;
}

static int tick (zloop_t *loop, int timer_id, void *arg)
{
    struct notify *n = arg;
    const char *health = overlay_health_word (n->b);

    log_health (n, health);
    if (n->active)
        tell_systemd (n, health);
    slow_down (n, health);
    return 0;
}

struct notify *notify_create (struct bgn_broker *b, double ready_timeout)
{
    struct notify *n = calloc (1, sizeof (*n));

    if (!n)
        return NULL;
    n->b = b;
    n->timer_id = -1;
#if HAVE_LIBSYSTEMD
    n->active = getenv ("NOTIFY_SOCKET") != NULL;
#endif
    n->start = monotime_now ();
    n->ready_timeout = ready_timeout;
    if ((n->timer_id = zloop_timer (b->loop, NOTIFY_TICK_MS, 0, tick,
                                    n)) < 0) {
        free (n);
        errno = ENOMEM;
        return NULL;
    }
    /* The first health line, and ready at once if there is nothing to
     * wait for. */
    tick (b->loop, n->timer_id, n);
    return n;
}

void notify_destroy (struct notify **np)
{
    if (np && *np) {
        struct notify *n = *np;
        if (n->active)
            send_state (n, "STOPPING=1");
        if (n->timer_id >= 0)
            zloop_timer_end (n->b->loop, n->timer_id);
        free (n);
        *np = NULL;
    }
}
