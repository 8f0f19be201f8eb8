/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* status.h: overlay.status, this broker's view.
 *
 * overlay.status answers with this broker's view: health, peers with
 * their counters, fenced ranks with reasons, event-layer counters.  The
 * status-all reduction over the tree is statusall.h's.
 */
#ifndef BGN_OVERLAY_STATUS_H
#define BGN_OVERLAY_STATUS_H

#include <stdbool.h>
#include <jansson.h>

struct overlay;

/* This broker's status (caller decrefs). */
json_t *status_json (struct overlay *ov);

/* Its "counters" (nonzero: only those not 0) and its "memory", for the
 * status-all summary too (caller decrefs). */
json_t *status_counters (struct overlay *ov, bool nonzero);
json_t *status_memory (struct overlay *ov);

#endif
