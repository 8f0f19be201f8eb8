/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* fluxpoll.h: ZeroMQ sockets watched on a Flux reactor.
 *
 * The overlay's sockets (socket, monitor, ZAP handler) are watched
 * through a struct bgn_poller (bgn/module.h).  This one runs them on a
 * flux_reactor_t, in a ZeroMQ context of its own: Flux exports no
 * ZeroMQ watcher, and sharing Flux's context would put our ZAP handler
 * in place of Flux's.
 *
 * A ZeroMQ socket's ZMQ_FD is edge-triggered: it signals that the
 * socket's state changed, not that a message waits, and a send can
 * consume the edge.  So each socket has an fd watcher (to wake the
 * reactor), a prepare watcher (before the reactor blocks: if ZMQ_EVENTS
 * says a message waits, an idle watcher keeps it from blocking) and a
 * check watcher (after it wakes: if a message waits, call the reader).
 * The reader drains up to its own budget; what remains is seen by the
 * next prepare.
 */
#ifndef BGN_FLUX_FLUXPOLL_H
#define BGN_FLUX_FLUXPOLL_H

#include <flux/core.h>

#include "src/include/bgn/module.h"

struct fluxpoll;

/* A poller on reactor r with a new ZeroMQ context.  NULL with errno. */
struct fluxpoll *fluxpoll_create (flux_reactor_t *r);
/* Stops every watch and terminates the context (every socket made in it
 * must be closed first). */
void fluxpoll_destroy (struct fluxpoll **pp);

/* The bgn_poller interface over it (borrowed: lives as long as p). */
const struct bgn_poller *fluxpoll_poller (struct fluxpoll *p);

#endif
