/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* simnet_int.h: what the parts of the simulated network share (private).
 *
 * simnet.h is the contract with its callers; this header is the one
 * object the parts below work on, and the calls they make of each other:
 *
 *   simqueue.c   random numbers, the event queue and the virtual clock
 *   simio.c      the virtual network and the io table of one broker
 *                (struct ovl_io): sending, connecting, delivering
 *   simbroker.c  the mini-broker around each core: its services and the
 *                broker's routing rules for requests and responses
 *   simload.c    load generation: clients' RPCs and what became of them,
 *                event publishers and subscribers, the status-all probe
 *   simview.c    what the observer measures: fence views against the
 *                truth (convergence), reachability, events missing
 *   simnet.c     brokers' life cycle, faults, the run loop, set-up
 */
#ifndef BGN_SIM_SIMNET_INT_H
#define BGN_SIM_SIMNET_INT_H

#include "src/common/libutil/idmap.h"
#include "simnet.h"

enum evtype {
    EV_DELIVER, EV_WAKE, EV_START, EV_CRASH, EV_HANG, EV_RESUME,
    EV_RESTART, EV_PARTITION, EV_HEAL, EV_SOCK, EV_EXIT,
    EV_RPC_TICK, EV_RPC_DEADLINE, EV_PUB_TICK, EV_SAMPLE, EV_STATUS_ALL,
};

struct smsg;

struct simev {
    double t;
    uint64_t seq;
    uint32_t type;
    uint32_t rank;
    uint32_t a;                   /* deliver: sender; sock: event; ... */
    uint32_t b;                   /* deliver: receiver's generation */
    double x;
    struct smsg *msg;
};

/* A message in flight, or held for a peer that is not running. */
#define SMSG_POOLED 2               /* frames of a pooled message */

struct smsg {
    struct smsg *next;            /* in a held or inbound list */
    int cap;                      /* room for this many frames */
    uint32_t from, to;
    uint32_t from_gen, to_gen;    /* the processes it went between */
    int sock_event;               /* inbound only: a socket event, not a
                                     message (-1) */
    int n;
    struct frame *frames[];       /* the wire frame (one) */
};

struct mlist {
    struct smsg *head, *tail;
    int count;
};

/* One direction of traffic, from the broker owning it to a peer. */
struct link {
    double last_at;               /* keeps one connection in order */
    uint32_t inflight;
    bool connected;               /* this process connected to the peer */
    struct mlist held;            /* we connected; the peer is not there */
};

enum { SB_NEVER, SB_UP, SB_HUNG, SB_DOWN };

struct rpc {
    uint32_t dest;
    uint32_t dest_gen;            /* the destination's process at send */
    double sent_at;
    int load;                     /* the load that sent it */
    bool relay_died;              /* a copy died with a broker holding it */
};

struct sbroker {
    struct simnet *s;
    uint32_t rank;
    int state;
    uint32_t gen;                 /* process generation */
    struct overlay *ov;
    double skew;
    double mono_base;             /* this host's monotonic clock at time 0 */
    uint64_t wake_gen;
    struct idmap *links;          /* peer rank -> struct link */
    struct idmap *connected_by;   /* running peers connected to it */
    struct mlist inbound;         /* hung: waiting to be read */
    struct idmap *rpcs;           /* matchtag -> struct rpc */
    bool missed_wake;             /* a wakeup came while hung */
    uint32_t next_tag;
    bool have_base;               /* subscriber: sequence start known */
    uint32_t last_seq;
    char clientid[16];
};

struct execd {
    double failed_at;             /* < 0: not failed */
    bool ran;
    int load;
};

/* Client load (simnet_rpc_load, simnet_event_load). */
struct simload {
    bool events;                  /* publishes, else requests */
    double rate, until;
    uint32_t *from;               /* origin ranks, NULL: any */
    int nfrom;
    uint32_t *to;                 /* destinations, NULL: any */
    int nto;
    int publishers;
    struct sim_rpc_counts rpc;
};

struct simnet {
    struct sim_params p;
    struct bgn_topo *topo;
    struct sbroker *b;
    uint32_t n;
    double now;
    uint64_t seq;
    uint64_t rng;
    struct simev *heap;
    size_t heap_n, heap_cap;
    struct sim_stats st;
    uint32_t *fenced_by;          /* live brokers that have rank fenced */
    uint64_t correct;             /* (live broker, dead rank) fenced pairs */
    uint64_t wrong;               /* (live broker, live rank) fenced pairs */
    double wrong_since;           /* time wrong_fenced_now last changed */
    uint32_t partition_split;     /* 0: none */
    struct idmap *execd;          /* (origin << 32 | tag) -> struct execd */
    int exits[256];
    char instance[40];
    struct simload loads[SIM_LOADS_MAX];
    int nloads;
    uint32_t max_seq;             /* highest event sequence delivered */
    bool was_converged;           /* after the last event */
    double status_asked_at;       /* the status-all probe went out */
    bool destroying;              /* cores going away: no new events */
    struct smsg *pool;            /* free messages of SMSG_POOLED frames */
};

/* ---- simqueue.c: random numbers, the event queue ----------------------- */

uint64_t sim_rnd (struct simnet *s);
double sim_rnd_unit (struct simnet *s);           /* in [0, 1) */
uint32_t sim_rnd_below (struct simnet *s, uint32_t n);   /* 0..n-1 */

/* Schedule an event of 'type' at virtual time t; events at the same time
 * run in the order they were scheduled. */
void sim_schedule (struct simnet *s, double t, uint32_t type, uint32_t rank,
                   uint32_t a, uint32_t b, double x, struct smsg *msg);
/* The next event (the queue must not be empty). */
struct simev sim_pop (struct simnet *s);

/* ---- simio.c: the network and the io of one broker --------------------- */

extern const struct ovl_io sim_io;   /* ctx: the struct sbroker */

bool sim_running (const struct sbroker *b);   /* up or hung */
bool sim_connected (struct sbroker *b, uint32_t peer);
char *sim_endpoint (uint32_t rank, char *buf, size_t len);
void sim_note_queue (struct simnet *s, uint32_t depth);
struct smsg *sim_mlist_pop (struct mlist *l);
void sim_mlist_free (struct simnet *s, struct mlist *l);
/* Free l's messages as lost with a dying broker (sim_rpc_dropped). */
void sim_mlist_drop (struct simnet *s, struct mlist *l);
void sim_smsg_free (struct simnet *s, struct smsg **mp);
/* Put m on the wire from 'from' over link l toward its receiver. */
void sim_transmit (struct simnet *s, struct sbroker *from, struct link *l,
                   struct smsg *m);
/* Hand m to its receiver's core; the sender's link has one less in
 * flight (delivered). */
void sim_recv_msg (struct simnet *s, struct sbroker *to, struct smsg *m);
void sim_delivered (struct simnet *s, struct smsg *m);
void sim_on_deliver (struct simnet *s, struct simev *ev);
void sim_on_sock (struct simnet *s, struct simev *ev);

/* ---- simbroker.c: the mini-broker -------------------------------------- */

/* What bgn-broker's dispatch does with a request (taken) or a response
 * (taken), and the io's deliver, request and respond calls. */
void sim_route_request (struct sbroker *b, msg_t *req,
                        const struct bgn_msg_info *info);
void sim_route_response (struct sbroker *b, msg_t *rsp);
int sim_respond (struct sbroker *b, const msg_t *req, const char *payload);
int sim_respond_error (struct sbroker *b, const msg_t *req, int errnum,
                       const char *errstr);

/* ---- simload.c: clients and their load --------------------------------- */

struct sbroker *sim_random_live (struct simnet *s);
void sim_rpc_tick (struct simnet *s, int load);
void sim_rpc_deadline (struct simnet *s, struct simev *ev);
void sim_pub_tick (struct simnet *s, int load);
void sim_status_all_ask (struct simnet *s);
/* Message m dies with the process holding it (or receiving it): if it
 * is a sim.ping request or response, its RPC is marked (lost_in_relay). */
void sim_rpc_dropped (struct simnet *s, const struct smsg *m);
/* A response (borrowed) reached b's client; an event b's subscriber. */
void sim_client_response (struct sbroker *b, msg_t *rsp);
void sim_subscriber_event (struct sbroker *b, const msg_t *ev);

/* ---- simview.c: views against the truth -------------------------------- */

/* A live broker's view changed: rank fenced (+1) or unfenced (-1). */
void sim_fenced_count (struct simnet *s, uint32_t rank, int delta);
/* rank started or died: its fences count as right or wrong now. */
void sim_truth_changes (struct simnet *s, uint32_t rank, bool now_dead);
/* Time spent wrongly fenced up to now; delta: survivors fenced more. */
void sim_wrong_changes (struct simnet *s, int delta);
void sim_check_converged (struct simnet *s);

#endif
