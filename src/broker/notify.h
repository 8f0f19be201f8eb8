/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* notify.h: tell the log and systemd (sd_notify) how the broker's overlay
 * is doing; tell systemd when the broker is ready and that it is stopping.
 *
 * Every change of the overlay's health ("partial", "full", "degraded",
 * ...) is logged at info level with the time since the broker started, so
 * the log ring ('bgn dmesg') shows when the overlay became full.
 *
 * What "ready" means (Type=notify units, see bgn-system(7)): the broker
 * has bootstrapped, its local socket accepts clients, its overlay module
 * is connecting to its peers, and then either the overlay is "full"
 * (every rank connected, as far as this broker can tell) or
 * broker.ready_timeout has passed since start, whichever comes first.
 * The timeout is what keeps a system instance from blocking "systemctl
 * start" (and boot) when another node is down: its brokers start in any
 * order and join whenever they can.  A ready_timeout of 0 reports ready
 * as soon as the broker is up.
 *
 * Until stopped, STATUS= carries "rank R of N: overlay HEALTH" and is
 * updated when the health changes, so "systemctl status bgn" shows it.
 * notify_destroy() sends STOPPING=1.
 *
 * Without $NOTIFY_SOCKET (not started by systemd), or when built without
 * libsystemd, nothing is sent to systemd; the health is still logged.
 */
#ifndef BGN_BROKER_NOTIFY_H
#define BGN_BROKER_NOTIFY_H

struct bgn_broker;
struct notify;

/* Start watching: called once the broker is up (bootstrap done).  Adds a
 * timer to the broker's reactor.  Returns NULL with errno on failure. */
struct notify *notify_create (struct bgn_broker *b, double ready_timeout);
void notify_destroy (struct notify **np);

#endif
