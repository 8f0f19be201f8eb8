/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* membership.h: rank 0's membership events.
 *
 * One "overlay.membership" event (SERVICE.membership: the configured
 * service name) per batch of ranks fenced or lifted at rank 0, so that
 * subscribers (the Flux hosts mark ranks torpid or lost by it) see
 * membership change in the global event order.  Routing never waits
 * for it.  Only rank 0 publishes; elsewhere these calls do nothing.
 */
#ifndef BGN_OVERLAY_MEMBERSHIP_H
#define BGN_OVERLAY_MEMBERSHIP_H

#include <stdint.h>

struct overlay;
struct idmap;

struct membership_state {       /* membership.c */
    struct idmap *changed;      /* ranks fenced or lifted since the
                                   last event */
};

/* -1 (ENOMEM) on failure. */
int membership_init (struct overlay *ov);
void membership_fini (struct overlay *ov);

/* Rank's record changed (fenced or lifted) at rank 0. */
void membership_note (struct overlay *ov, uint32_t rank);
/* Publish one event for the ranks noted since the last (none if none):
 * each with its record as the fence view holds it now. */
void membership_publish (struct overlay *ov);

#endif
