/* simnet.h: the overlay's real protocol code on a simulated network.
 *
 * N brokers, each the overlay's protocol core (libovcore: overlay.c and
 * its parts, the event layer) with a small broker of its own around it,
 * exchange messages over a virtual network in virtual time.  One process,
 * one thread, one event queue ordered by (time, sequence number), one
 * random generator seeded by the caller: the same parameters and seed give
 * the same run, event for event (see simnet_log).
 *
 * The network follows what ZeroMQ's ROUTER sockets do (notes/zeromq.md):
 * a broker that connected to a peer queues for it while it is gone and
 * delivers to its successor; a broker the peer connected to fails sends
 * with EHOSTUNREACH once the connection is gone; a peer's full queue
 * gives EAGAIN; messages on one connection arrive in order.  Faults: loss,
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

#include "src/modules/overlay/overlay.h"

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
/* Clients on every live rank send 'rate' sim.ping requests per second in
 * all, to random ranks, from 'at' for 'duration' seconds. */
void simnet_rpc_load (struct simnet *s, double at, double duration,
                      double rate);
/* Publishers on 'ranks' ranks publish 'rate' events per second in all. */
void simnet_event_load (struct simnet *s, double at, double duration,
                        double rate, int publishers);

/* Run until virtual time 'until' (or until nothing is left to do). */
void simnet_run (struct simnet *s, double until);
double simnet_now (const struct simnet *s);

/* ---- what happened -------------------------------------------------- */

enum { SIM_KINDS = ENV_KIND_MAX + 1 };

struct sim_stats {
    uint64_t msgs[SIM_KINDS];         /* sent, by envelope kind */
    uint64_t bytes[SIM_KINDS];
    uint64_t lost_msgs;               /* loss, cuts, dead destinations */
    uint64_t eagain, ehostunreach;
    uint32_t deepest_queue;           /* in flight on one connection, or
                                         waiting in one backlog */
    /* convergence: every live broker's fence view is the truth */
    double last_change;               /* last crash/restart/start */
    double converged_at;              /* < last_change: not converged */
    double wrong_fence_seconds;       /* sum over live ranks fenced by
                                         some live broker */
    uint32_t wrong_fenced_max;        /* most live ranks fenced at once */
    uint32_t wrong_fenced_now;
    /* RPCs */
    uint64_t rpc_sent, rpc_answered, rpc_unreachable, rpc_other_error,
        rpc_timed_out, rpc_pending, rpc_ran_after_failure;
    /* events */
    uint64_t ev_published, ev_publish_errors, ev_delivered, ev_duplicates,
        ev_out_of_order, ev_lost_notices, ev_lost_events;
    uint32_t live, dead, never_started;
    uint64_t events_processed;        /* simulation events */
};

const struct sim_stats *simnet_stats (struct simnet *s);

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
