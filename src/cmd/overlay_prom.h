/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* overlay_prom.h: "bgn overlay-status --format=prometheus" / "bgn metrics".
 *
 * Writes the Prometheus text exposition format (version 0.0.4) on stdout
 * from status objects that overlay-status already has: per broker
 * (health, down ranks, drops, event sequence, auth failures, ...) and per
 * peer link (messages, bytes, reroutes, TTL drops, backlog, state, RTT),
 * plus, for --all, how many brokers answered.  Every metric is named
 * bgn_overlay_* and labelled with the reporting broker's rank and host
 * (and the peer's, for links).  "bgn metrics" prints the instance
 * summary instead (overlay.status-all): bgn_overlay_instance_* totals,
 * health tallies, down counts and the links that are not up; its size
 * grows with the problems, not with the instance.  The output suits node_exporter's textfile collector
 * (write it to a *.prom file, atomically).
 */
#ifndef BGN_CMD_OVERLAY_PROM_H
#define BGN_CMD_OVERLAY_PROM_H

#include <jansson.h>

#include "src/common/libutil/hostmap.h"

/* 'objs' is an array of normalized status objects; 'hm' the host table
 * or NULL (hosts then come from the status objects). */
void overlay_prom_print (json_t *objs, const hostmap_t *hm);

/* 'all' is the overlay.status-all summary, host names filled in. */
void overlay_prom_print_summary (json_t *all);

#endif
