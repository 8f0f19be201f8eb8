/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* ping_route.h: "bgn ping --route": which ranks a request crossed.
 *
 * The overlay does not record a message's path, and the reply carries
 * only the hop count.  So the path is observed instead of recorded:
 * before each ping, a short overlay.trace (types request, the ping's
 * topic) is started on every rank that lies on a failure-free shortest
 * path from the origin broker to the destination (libbgn distances; at
 * most ROUTE_MAX_TRACED ranks, nearest first).  Each traced broker
 * reports the ping's arrival with the peer it came from and the hops so
 * far, so the path is rebuilt from those (peer -> rank) steps, and a hop
 * through a broker that was not traced still shows, as the peer of the
 * next one.  Hops that no traced broker saw (a detour through two
 * untraced brokers) are printed as "?".  Nothing in the overlay changes.
 */
#ifndef BGN_CMD_PING_ROUTE_H
#define BGN_CMD_PING_ROUTE_H

#include <stddef.h>
#include <stdint.h>

#include "src/common/libclient/client.h"

#define ROUTE_MAX_TRACED 32

struct route_probe;

/* Learn the origin broker's rank, the size and topology (broker.info)
 * through h.  NULL (message printed) if they cannot be had. */
struct route_probe *route_probe_create (bgn_t *h, const char *prog);
void route_probe_destroy (struct route_probe **pp);

/* Start tracing 'topic' toward 'dest' (NODEID_ANY: toward rank 0, where
 * service requests go).  -1 if no trace could be started. */
int route_probe_arm (struct route_probe *p, const char *topic, uint32_t dest);

/* After the reply from 'dest' with 'hops': collect what the traces saw
 * and write "0 -> 4 -> 5" (or "0 -> ? -> 5") into buf.  Ends the traces. */
void route_probe_result (struct route_probe *p, uint32_t dest, int hops,
                         char *buf, size_t len);

#endif
