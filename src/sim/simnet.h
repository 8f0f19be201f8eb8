/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* simnet.h: the overlay's real protocol code on a simulated network.
 *
 * N brokers, each the overlay's protocol core (libovcore: overlay.c and
 * its parts, the event layer) with a small broker of its own around it,
 * exchange messages over a virtual network in virtual time.  One process,
 * one thread, one event queue ordered by (time, sequence number), one
 * random generator seeded by the caller: the same parameters and seed give
 * the same run, event for event (see simnet_log).
 *
 * The network follows what ZeroMQ's ROUTER sockets do with
 * ZMQ_ROUTER_MANDATORY, as the overlay's socket sets it: a broker that
 * connected to a peer queues for it while it is gone and delivers to its
 * successor; a broker the peer connected to fails sends with EHOSTUNREACH
 * once the connection is gone; a peer's full queue gives EAGAIN; messages
 * on one connection arrive in order.  Faults: loss,
 * cut links (partitions), crashes (the process and its connections vanish,
 * peers notice after a delay), hangs (SIGSTOP: nothing runs while the
 * inbound queue fills), restarts (a new process, a new incarnation from
 * its own wall clock, which may be skewed), ranks that never start.
 * Local clients send requests ("sim.ping") and publish and receive events.
 *
 * What the observer needs (simreport) is counted here as it happens.
 */
#ifndef BGN_SIM_SIMNET_H
#define BGN_SIM_SIMNET_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "src/modules/overlay/envelope.h"
#include "src/modules/overlay/ovcore.h"

struct simnet;

struct sim_params {
    uint32_t size;
    char topology[64];
    uint64_t seed;
    double latency;             /* one-way per message, seconds */
    double jitter;              /* plus exponential jitter of this mean */
    double loss;                /* probability a message is lost */
    int hwm;                    /* messages in flight per connection */
    double notice;              /* a crash is noticed by peers after this */
    double rpc_timeout;         /* clients' deadline */
    struct ovl_config cfg;      /* every broker's overlay settings */
    FILE *log;                  /* event log (NULL: none) */
};

void simnet_defaults (struct sim_params *p);

struct simnet *simnet_create (const struct sim_params *p);
void simnet_destroy (struct simnet **sp);

/* ---- faults and load, scheduled at virtual time 'at' ------------------ */
void simnet_start (struct simnet *s, double at, uint32_t rank);
void simnet_crash (struct simnet *s, double at, uint32_t rank);
void simnet_hang (struct simnet *s, double at, uint32_t rank);
void simnet_resume (struct simnet *s, double at, uint32_t rank);
/* A new process of rank whose wall clock is 'skew' seconds off. */
void simnet_restart (struct simnet *s, double at, uint32_t rank, double skew);
/* Cut (or heal) every link between a rank below 'split' and one at or
 * above it: a partition in two halves. */
void simnet_partition (struct simnet *s, double at, uint32_t split, bool cut);
/* Client load, from 'at' for 'duration' seconds, 'rate' per second in
 * all (Poisson arrivals).  'from' (nfrom ranks; NULL: any) are the ranks
 * whose clients send: for requests a random running one of them (NULL: a
 * random running broker), for events a random running one of them (NULL:
 * one of the 'publishers' lowest running ranks above 0).  'to' (nto
 * ranks; NULL: any rank) are the requests' destinations, picked at
 * random.  Each load counts its own outcomes (simnet_load_rpc).  Returns
 * the load's index, or -1 (ENOMEM, or more than SIM_LOADS_MAX loads). */
#define SIM_LOADS_MAX 64
int simnet_rpc_load (struct simnet *s, double at, double duration,
                     double rate, const uint32_t *from, int nfrom,
                     const uint32_t *to, int nto);
int simnet_event_load (struct simnet *s, double at, double duration,
                       double rate, int publishers, const uint32_t *from,
                       int nfrom);

/* At 'at', rank 0's client asks overlay.status-all (gather deadline 3 s);
 * the answer's size lands in the stats. */
void simnet_status_all (struct simnet *s, double at);

/* Run until virtual time 'until' (or until nothing is left to do). */
void simnet_run (struct simnet *s, double until);
double simnet_now (const struct simnet *s);

/* ---- what happened -------------------------------------------------- */

enum { SIM_KINDS = ENV_KIND_MAX + 1 };

/* What became of sim.ping requests (all of them, or one load's).
 * lost_in_relay: of those timed out, the ones whose origin and
 * destination processes stayed up throughout while a copy of the
 * request or of its response died with a broker holding it (read but
 * not passed on, queued toward a peer, or on the wire to it): lost in a
 * relay, not to a cut link or random loss. */
struct sim_rpc_counts {
    uint64_t sent, answered, unreachable, other_error, timed_out, pending,
        ran_after_failure, lost_in_relay,
        origin_died;                  /* their client's broker died first */
};

struct sim_stats {
    uint64_t msgs[SIM_KINDS];         /* sent, by envelope kind */
    uint64_t bytes[SIM_KINDS];
    uint64_t lost_msgs;               /* loss, cuts, dead destinations */
    uint64_t eagain, ehostunreach;
    uint64_t admissions;              /* peers' connections admitted (a
                                         HELLO answered by a HELLO_ACK) */
    uint32_t deepest_queue;           /* in flight on one connection, or
                                         waiting in one backlog, or read
                                         by a hung broker when it resumes */
    uint32_t deepest_backlog;         /* waiting in one peer's backlog */
    /* convergence: every live broker's fence view is the truth */
    double last_change;               /* last crash/restart/start */
    double converged_at;              /* when the views last became the
                                         truth (after being wrong), -1:
                                         never */
    double wrong_fence_seconds;       /* sum over live ranks fenced by
                                         some live broker */
    uint32_t wrong_fenced_max;        /* most live ranks fenced at once */
    uint32_t wrong_fenced_now;
    struct sim_rpc_counts rpc;        /* every load's requests */
    /* events */
    uint64_t ev_published, ev_publish_errors, ev_delivered, ev_duplicates,
        ev_out_of_order, ev_lost_notices, ev_lost_events;
    uint32_t live, dead, never_started;
    uint64_t events_processed;        /* simulation events */
    /* the overlay.status-all probe (simnet_status_all) */
    size_t status_bytes;              /* the answer at rank 0, 0: none */
    double status_seconds;            /* from asking to the answer */
    uint32_t status_brokers, status_problems;
};

const struct sim_stats *simnet_stats (struct simnet *s);

/* The outcomes of load i's requests (NULL if i is not an RPC load). */
const struct sim_rpc_counts *simnet_load_rpc (struct simnet *s, int i);

/* Events a running broker has not delivered (nor been told were lost)
 * although some broker delivered a later one: the sum over running
 * brokers of (highest sequence delivered anywhere - its last), counting
 * only brokers that delivered at least one event in their current life.
 * 0 once every event reached every survivor. */
uint64_t simnet_events_missing (struct simnet *s);

/* The brokers' views of who is down, as rank bitmaps of size N (caller's
 * arrays, set to 0 or 1): any[r] if some running broker has r fenced,
 * all[r] if every running broker but r has r fenced, dead[r] if r is not
 * running (crashed or never started). */
void simnet_views (struct simnet *s, uint8_t *any, uint8_t *all,
                   uint8_t *dead);

/* Survivor pairs (sampled) from which next-hop walks reach their
 * destination through live brokers: reachable / tried. */
void simnet_reachability (struct simnet *s, int samples, int *reachable,
                          int *tried);

/* Is every live broker's fence view the set of brokers that are down? */
bool simnet_converged (struct simnet *s);

/* A live broker's core (NULL if rank is not running), for inspection. */
struct overlay *simnet_core (struct simnet *s, uint32_t rank);
bool simnet_alive (struct simnet *s, uint32_t rank);

/* Exit codes brokers asked for (partition policy), how many. */
int simnet_exits (struct simnet *s, int code);

#endif
