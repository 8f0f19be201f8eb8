/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* watch.h: modules' ZeroMQ sockets on the broker's zloop.
 *
 * What bgn/module.h's struct bgn_poller promises, for bgn-broker: a
 * callback runs whenever a watched socket may have a message, and again
 * while messages remain, whatever the callback's budget.  A plain watch
 * is asked on every turn of the loop; a quiet one (a socket the module
 * touches only in its callback) only when its ZMQ_FD wakes, once after
 * it is added, and after each callback while messages remain.
 */
#ifndef BROKER_WATCH_H
#define BROKER_WATCH_H

#include <czmq.h>

struct watches;

/* A set of watches on 'loop', which must outlive it.  NULL with errno. */
struct watches *watches_create (zloop_t *loop);

/* Ends every watch, then frees the set; *wp is set to NULL. */
void watches_destroy (struct watches **wp);

/* Watch 'zsock' (quiet or not); cb (arg) runs on the loop.  0, or -1
 * with errno: EINVAL (no socket or no callback), EEXIST (already
 * watched), ENOMEM, or libzmq's (the socket's descriptor). */
int watches_add (struct watches *ws, void *zsock, void (*cb) (void *arg),
                 void *arg, int quiet);

/* Stop watching 'zsock'; an unknown socket is ignored.  Safe from the
 * socket's own callback. */
void watches_remove (struct watches *ws, void *zsock);

#endif
