/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* hosts.h: every broker's knowledge of which host each rank runs on.
 *
 * Commands take host names where they take ranks and print hosts beside
 * ranks, so they need the instance's rank -> host table.  Where it comes
 * from depends on the bootstrap:
 *
 *   static   every broker computes the whole table from the config's
 *            bootstrap.hosts (the same list that assigns the ranks) and
 *            answers from it.
 *   pmi,     each broker reports {rank, hostname} to rank 0 once it is up
 *   single   (broker.hosts-register, re-sent every HOSTS_RETRY seconds
 *            until rank 0 answers; a restarted broker reports again);
 *            rank 0 keeps the table.  A restarted rank 0 learns the ranks
 *            it is missing by asking them (broker.info) when the table is
 *            next requested.  Other ranks forward broker.hosts to rank 0.
 *
 * Under PMI (or alone) a broker's host name is gethostname(), unless the
 * config sets bootstrap.hostname, in which "%r" stands for the rank
 * (hosts_create() then renames the broker: bgn start -o
 * bootstrap.hostname=node%r gives each broker a host of its own, as on a
 * cluster).  In a static bootstrap the name is the one matched in the
 * list.
 *
 * Methods (builtins.c routes them here):
 *   broker.hosts           -> {"size": N, "hosts": [name or null, ...],
 *                              "source": "static" | "registered"}
 *   broker.hosts-register  {"rank": R, "hostname": H} (rank 0 only; R
 *                          must be the requesting broker's own rank)
 *
 * Every request this file sends has a deadline (HOSTS_DEADLINE); a
 * forwarded question that rank 0 does not answer in time fails with
 * ETIMEDOUT.
 */
#ifndef BGN_BROKER_HOSTS_H
#define BGN_BROKER_HOSTS_H

#include <jansson.h>

#include "src/common/libmsg/message.h"

#define HOSTS_RETRY 2.0
#define HOSTS_DEADLINE 5.0

struct bgn_broker;
struct hosts;

/* Fill the table (static) or this broker's own entry; NULL + errno (a
 * message is logged). */
struct hosts *hosts_create (struct bgn_broker *b);
void hosts_destroy (struct hosts **hp);

/* Called about once a second: registration retries, expired requests. */
void hosts_tick (struct hosts *h);

/* The two methods. */
void hosts_request (struct hosts *h, const msg_t *req);
void hosts_register_request (struct hosts *h, const msg_t *req);

/* A response to a request this broker sent (broker.* service).  Returns
 * 0 if it was one of ours, -1 otherwise. */
int hosts_response (struct hosts *h, const msg_t *rsp);

/* rank's host, or NULL if not known here. */
const char *hosts_lookup (struct hosts *h, uint32_t rank);

/* {"bytes", "bound", "pending", "refused"}: the heap of the table and of
 * the requests of ours waiting for an answer, the most they can hold,
 * how many wait, and how many were not sent because too many waited.
 * NULL on ENOMEM. */
json_t *hosts_memory (struct hosts *h);

#endif
