/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* scenario.h: what a protocol simulation does, and when.
 *
 * A scenario is a JSON object, built in for the named scenarios or read
 * from a TOML file (bgn-sim(1) documents the format):
 *
 *   [sim]      size, topology, seed, duration, latency, jitter, loss, hwm,
 *              notice, rpc_timeout
 *   [overlay]  keepalive_interval, peer_timeout, event_buffer,
 *              heal_threshold, backlog, ttl, join_timeout, fence_window,
 *              retry_bytes (0: requests are not sent again when a rank on
 *              their way dies) (as in bgn.toml(5))
 *   [[event]]  at = TIME, op = OP, and the op's own keys:
 *     boot       window (start times spread over it), never (fraction
 *                that never start; rank 0 always starts)
 *     kill       count (random ranks but 0) or ranks ("3,5-9"),
 *                hang_first (each hangs this long before it dies: what
 *                its peers send it meanwhile dies with it)
 *     rack       count: that many consecutive ranks; hang_first
 *     hang       count or ranks, for (then they resume)
 *     restart    count or ranks, after (down this long), skew (their
 *                clock is this far off, e.g. "-2h")
 *     partition  for, split (ranks below it against the rest; N/2)
 *     churn      for, max_down, every (a kill or restart each period),
 *                hang_first (below every)
 *     rpc        rate (requests/s in all), for, from and to (ranks that
 *                send and ranks they send to; default any), name
 *     publish    rate (events/s), for, publishers (how many ranks) or
 *                from (which ranks), name
 *
 * Built-in names: boot, kill, rack, hang, restart-root, partition, churn,
 * skew, events.  Options (count, duration, rate, hang_first) adjust
 * them.
 */
#ifndef BGN_SIM_SCENARIO_H
#define BGN_SIM_SCENARIO_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "simnet.h"

struct scenario_opts {
    uint32_t size;
    const char *topology;
    uint64_t seed;
    long count;                 /* -1: the scenario's default */
    double duration;            /* -1: default (the fault's length) */
    double rate;                /* -1: default */
    double hang_first;          /* > 0: killed ranks hang this long first */
};

/* The built-in scenario 'name' as JSON, or NULL with EINVAL (an unknown
 * name; errbuf says which exist). */
json_t *scenario_builtin (const char *name, const struct scenario_opts *o,
                          char *errbuf, size_t errlen);

/* A scenario from a TOML file; size/topology/seed from o fill in what the
 * file leaves out.  NULL with errno and FILE:LINE: reason in errbuf. */
json_t *scenario_load (const char *path, const struct scenario_opts *o,
                       char *errbuf, size_t errlen);

/* A client load of the scenario, for the report. */
struct scenario_load {
    int index;                  /* simnet's load index */
    bool events;                /* publish, else rpc */
    double at, length, rate;
    char name[64];              /* its 'name', or "rpc N" / "publish N" */
    char from[64], to[64];      /* as written ("" for any) */
};

/* What applying a scenario told us, for the report. */
struct scenario_plan {
    double duration;            /* run until */
    double fault_at;            /* first fault (INFINITY if none) */
    uint32_t failures;          /* ranks the faults hit */
    char name[64];
    int nloads;
    struct scenario_load loads[SIM_LOADS_MAX];
};

/* Simulation parameters from the scenario (defaults for what it omits). */
int scenario_params (json_t *sc, struct sim_params *p, char *errbuf,
                     size_t errlen);

/* Schedule the scenario's events on s.  -1 with a reason in errbuf. */
int scenario_apply (json_t *sc, struct simnet *s, uint64_t seed,
                    struct scenario_plan *plan, char *errbuf, size_t errlen);

#endif
