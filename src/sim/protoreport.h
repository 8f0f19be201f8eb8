/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* protoreport.h: the protocol simulator's report (bgn-sim(1), REPORT and
 * CHECKS).
 *
 * What a run gathered (struct sim_result, filled by protosim.c) as the
 * text report, as the JSON (the same for the same options and seed; the
 * machine's figures only with --host), and the invariants --check
 * asserts.
 */
#ifndef BGN_SIM_PROTOREPORT_H
#define BGN_SIM_PROTOREPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "scenario.h"
#include "simnet.h"

struct sim_result {
    struct sim_stats before;      /* at the first fault */
    struct sim_stats after;       /* at the end */
    struct scenario_plan plan;
    struct sim_rpc_counts loads[SIM_LOADS_MAX];   /* each rpc load's */
    char *down_any, *down_all, *down;   /* views at the end (idsets) */
    uint32_t n_any, n_all, n_down;
    uint64_t events_missing;
    int backlog_max;
    bool retry;                   /* the core sends requests again */
    int reachable, tried;
    double wall;
    long rss_kib;
    uint32_t size;
    char topology[64];
    uint64_t seed;
    int exits3;
    bool converged;
    bool status_asked;            /* --status-all */
    size_t status_bytes;
    double status_seconds;
    uint32_t status_brokers, status_problems;
};

/* The report as a JSON object (NULL: out of memory); 'host' adds the
 * wall time and memory. */
json_t *protoreport_json (const struct sim_result *r, bool host);

/* The report as text on stdout. */
void protoreport_text (const struct sim_result *r);

/* The invariants: each one broken is a line on stderr.  1 if any is. */
int protoreport_check (const struct sim_result *r);

#endif
