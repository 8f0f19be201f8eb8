/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* fluxhost_int.h: the Flux host's parts and what they share.
 *
 * The host (see fluxhost.h) is one object, struct bgn_broker, in four
 * files, calling downward only:
 *   fluxhost.c    facts, configuration, services, timers, life, and the
 *                 api table (the top);
 *   fluxboot.c    the bootstrap exchange, through rank 0 (bgn.boot);
 *   fluxevents.c  bgn's events for Flux clients, rank 0's membership
 *                 events and the policies on them (disconnect_hung,
 *                 orphan_relief), the host's event and exit methods;
 *   fluxroute.c   routing as bgn-broker does it, requests handed into
 *                 the Flux broker and their answers, Flux clients and
 *                 their deadlines, bgn.rpc (the bottom).
 * Not for use outside src/flux.
 */
#ifndef BGN_FLUX_FLUXHOST_INT_H
#define BGN_FLUX_FLUXHOST_INT_H

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>
#include <czmq.h>
#include <jansson.h>

#include "src/common/libbgn/bgn.h"
#include "src/common/libconf/conf.h"
#include "src/common/libmsg/evbatch.h"
#include "src/common/libutil/errbuf.h"
#include "src/common/libutil/idset.h"
#include "src/common/libutil/monotime.h"
#include "src/common/libutil/ratelimit.h"
#include "src/broker/hosttab.h"
#include "src/broker/service.h"
#include "fluxhost.h"
#include "fluxmsg.h"
#include "fluxpoll.h"
#include "fluxroutes.h"

#define SERVICE "bgn"
#define MAX_PENDING 10000          /* Flux client requests or forwards held */
#define FWD_PREFIX "bgn-"          /* route id of a request handed to Flux */
#define CLIENT_PREFIX FLUXROUTES_TOKEN_PREFIX          /* route id of a Flux client's request */
#define FLUX_EVENT_TOPIC "bgn.flux-event"   /* a Flux event on the BGN */
#define TEXT_KEY "bgn.text"        /* a Flux answer that is text, not JSON,
                                      crosses the BGN as {TEXT_KEY: text} */

struct timer {
    int id;
    flux_watcher_t *w;
    void (*cb) (void *arg);
    void *arg;
    struct bgn_broker *b;
    struct timer *next;
};

/* A Flux client's request waiting for its answer(s) from the BGN. */
struct client_req {
    flux_msg_t *req;
    double deadline;               /* INFINITY for streams */
    int via_chan;                  /* the broker's own request, from the
                                      overlay channel (fluxchan.c) */
    uint32_t dest;                 /* the rank it went to */
};

/* A request from the BGN handed into the Flux broker. */
struct forward {
    msg_t *req;
    double deadline;
};

/* A local Flux client streaming bgn's events. */
struct sub {
    flux_msg_t *req;
    json_t *prefixes;              /* array of strings; empty: all */
};

/* A method of the host's own under bgn.* (fluxhost.c's table). */
struct fh_method {
    const char *topic;
    int (*fn) (struct bgn_broker *b, msg_t *req,
               const struct bgn_msg_info *info);
};

struct bgn_broker {
    flux_t *h;
    flux_reactor_t *r;
    uint32_t rank, size;
    char hostname[256];
    char instance[64];
    char rundir[PATH_MAX];
    json_t *conf;
    double boot_timeout;
    /* the bootstrap exchange (fluxboot.c) */
    json_t *card;                  /* this rank's puts: key -> string */
    json_t *cards;                 /* "rank" -> card: rank 0 every one it
                                      was sent, others those fetched */
    idset_t *boot_wants;           /* ranks start() reads (boot_want) */
    int boot_want_all;
    int boot_sent;                 /* the card went to rank 0 once */
    flux_future_t *boot_f;         /* the exchange's request in flight */
    flux_watcher_t *boot_retry;    /* ask again: rank 0's bgn not loaded */
    double boot_backoff;
    double boot_started;
    double boot_deadline;          /* next "still waiting" line */
    zlistx_t *boot_waits;          /* rank 0: requests waiting for cards */
    struct hosttab *tab;           /* as the overlay of a broker booted from
                                      its [bootstrap] table: what it implies
                                      (every card but our own), with one
                                      shared certificate; else NULL */
    zlistx_t *fetches;             /* cards asked for after start-up */
    idset_t *fetching;             /* their ranks */
    double *fetched_at;            /* when each rank's card was last asked */
    flux_watcher_t *boot_waiter;   /* rank 0: their deadlines, its own */
    flux_msg_handler_t **boot_handlers;
    void (*boot_cb) (bgn_broker_t *b, int errnum, const char *why,
                     void *arg);   /* the exchange is open until called */
    void *boot_cb_arg;
    int started;                   /* the module has started: a card is
                                      read late (fluxboot.c, fh_boot_get) */
    double rpc_timeout;
    int membership_event, disconnect_hung, orphan_relief;
    struct fluxpoll *poll;
    struct service_registry *services;  /* bgn-broker's registry (service.h) */
    const struct bgn_overlay_ops *ovl;
    void *ovl_state;
    struct timer *timers;
    int next_timer;
    zhashx_t *clients;             /* "fN" -> struct client_req */
    uint64_t next_client;
    zhashx_t *forwards;            /* "bgn-N" -> struct forward */
    uint64_t next_forward;
    zlistx_t *subs;                /* struct sub */
    flux_msg_handler_t **handlers;
    flux_watcher_t *sweep;
    int stop_code;
    flux_future_t *state_f;        /* the broker's states, up to cleanup */
    int state_seen;                /* its first answer came */
    int ending;                    /* the instance is ending (told the
                                      overlay: ops->ending) */
    /* as the broker's overlay (bgn-overlay.so, fluxchan.c, fluxovsvc.c) */
    flux_t *chan;                  /* interthread://overlay; NULL: bgn.so,
                                      beside the TBON */
    flux_watcher_t *chan_w;
    zlistx_t *pub_backlog;         /* rank 0: Flux events the core could
                                      not take yet (EAGAIN), in order */
    flux_watcher_t *pub_retry;
    uint64_t pub_dropped;          /* Flux events lost to a full backlog */
    uint64_t chan_in, chan_out;    /* messages from / to the broker */
    struct flux_msglist *monitors; /* overlay.monitor streams */
    struct flux_msglist *healths;  /* overlay.health streams */
    struct flux_msglist *traces;   /* overlay.trace streams (kept open) */
    char *rank_status;             /* rank 0: 'f'ull, 'l'ost, 'o'ffline */
    double *status_since;          /* when each rank's status last changed */
    char *dropped;                 /* rank 0: disconnected on request */
    double started_at;
    const char *own_word;          /* the health last reported, and since */
    double own_since;
    flux_future_t *ovstate_f;      /* this broker's states, to goodbye */
    int broker_state;
    int children_posted;           /* rank 0: children-complete posted */
    flux_future_t *goodbye_f;      /* rank > 0: overlay.goodbye to rank 0 */
    double goodbye_first;          /* when the first goodbye went */
    int cut_off;                   /* told to disconnect from the parent */
    /* rank > 0 at shutdown: this broker leaves after its children in
     * the BGN's broadcast tree from rank 0 (fluxovsvc.c, "leaving") */
    zlistx_t *leave_waits;         /* bgn.leave-wait to each child */
    zlistx_t *leave_askers;        /* our parent's (msg_t), answered
                                      once our goodbye is over */
    int goodbye_over;              /* answered, or given up on */
    flux_watcher_t *probe_w;       /* rank 0 at shutdown: who is left */
    char *probing;                 /* a probe in flight, by rank */
    zlistx_t *probes;              /* their futures */
    int *probe_silent;             /* probes unanswered in time, by rank */
    char *left;                    /* rank 0: said goodbye, then left */
    flux_watcher_t *grace_w;       /* rank 0: for those still leaving */
    int grace_over;
    flux_msg_handler_t **ov_handlers;
    int *parent;                   /* rank 0: TBON parent of each rank,
                                      -1 unknown (for disconnect_hung) */
    /* rank 0, orphan_relief: what each overlay says of every rank */
    idset_t *bgn_down;             /* fenced on the BGN (membership) */
    idset_t *bgn_hung;             /* of those, fenced as silent (hung) */
    idset_t *held;                 /* lost below a hung broker: said so */
    idset_t *flux_seen;            /* once online to Flux */
    double *lost_since;            /* when each was first seen lost, or 0 */
    idset_t *told;                 /* told to exit already */
    flux_future_t *online_f;       /* a groups.get in flight */
    int exiting;                   /* this broker: told to exit */
    const struct fh_method *methods;
    int nmethods;
    idset_t *admins;               /* [bgn] admin_ranks: owner may come from */
    uint64_t role_capped;          /* owner requests made user's here */
    struct ratelimit *capped_rl;   /* warnings about them */
};

/* fluxhost.c */
void fh_log (bgn_broker_t *b, int level, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));
/* Is topic under the host's own service name (SERVICE.*)? */
bool fh_ours (const char *topic);
/* A zlistx destructor for lists of flux futures. */
void fh_future_free (void **item);

/* fluxboot.c: the bootstrap exchange */
int fh_boot_init (struct bgn_broker *b);
void fh_boot_free (struct bgn_broker *b);
int fh_boot_put (struct bgn_broker *b, const char *key, const char *value);
int fh_boot_want (struct bgn_broker *b, uint32_t rank);
/* a card's value; fresh: ask rank 0 again (after start-up) */
int fh_boot_get (struct bgn_broker *b, uint32_t rank, const char *key,
                 char *buf, size_t len, bool fresh);
void fh_boot_self_check (struct bgn_broker *b);
void fh_boot_resend (struct bgn_broker *b);
void fh_boot_ack_cb (flux_future_t *f, void *arg);
void fh_boot_wait_free (void **item);

/* fluxroute.c: routing (requests by nodeid, responses by route stack) */
int fh_route_request (struct bgn_broker *b, msg_t *msg,
                      const struct bgn_msg_info *info);
int fh_route_deliver (bgn_broker_t *b, msg_t *msg,
                      const struct bgn_msg_info *info);
int fh_route_send (bgn_broker_t *b, msg_t *msg);
/* out over the BGN toward dest (this rank pushed for a new request) */
int fh_request_out (struct bgn_broker *b, msg_t *msg,
                    const struct bgn_msg_info *info, uint32_t dest);
/* answer req with errnum and free it; returns -1 */
int fh_request_fail (struct bgn_broker *b, msg_t *req, int errnum,
                     const char *why);
int fh_respond (bgn_broker_t *b, const msg_t *req, const char *payload);
int fh_respond_error (bgn_broker_t *b, const msg_t *req, int errnum,
                      const char *errstr);
void fh_client_request_cb (flux_t *h, flux_msg_handler_t *mh,
                           const flux_msg_t *fmsg, void *arg);
void fh_client_disconnect_cb (flux_t *h, flux_msg_handler_t *mh,
                              const flux_msg_t *fmsg, void *arg);
void fh_flux_response_cb (flux_t *h, flux_msg_handler_t *mh,
                          const flux_msg_t *fmsg, void *arg);
void fh_client_free (void **item);
void fh_forward_free (void **item);
/* expire what waited past its deadline */
void fh_route_sweep (struct bgn_broker *b);
int fh_method_rpc (struct bgn_broker *b, msg_t *req,
                   const struct bgn_msg_info *info);

/* fluxchan.c: the broker's overlay channel (bgn-overlay.so) */
int fh_chan_open (struct bgn_broker *b);
void fh_chan_close (struct bgn_broker *b);
/* a message to the broker */
int fh_chan_send (struct bgn_broker *b, flux_msg_t **fmsg);
/* a Flux event the core delivered (topic FLUX_EVENT_TOPIC): rank > 0
 * hands it to the broker */
void fh_chan_event (struct bgn_broker *b, const char *payload, size_t len);
int fh_method_flux_event (struct bgn_broker *b, msg_t *req,
                          const struct bgn_msg_info *info);
/* the answer to a channel request (client_answer's via_chan case) */
void fh_chan_answer (struct bgn_broker *b, const struct client_req *c,
                     const msg_t *rsp);
/* a Flux answer to a request handed in (from b->h, or the channel) */
void fh_forward_answer (struct bgn_broker *b, const flux_msg_t *fmsg);
/* a response by its route stack (a rank: over the BGN) */
int fh_route_response (struct bgn_broker *b, msg_t *msg);
/* a request from the BGN into the broker (fluxroute.c's to_flux, as
 * the broker's overlay): its Flux route stack and matchtag as they
 * left their origin, the origin's rank on top */
int fh_chan_request_in (struct bgn_broker *b, msg_t *req,
                        const struct bgn_msg_info *info);
/* a response from the BGN to the broker, by its Flux route stack */
int fh_chan_response_in (struct bgn_broker *b, msg_t *rsp);
/* the rank a request from the BGN came from (its top route id, which
 * only the overlay writes), -1 with ENOENT for a local one */
int fh_chan_origin (const flux_msg_t *fmsg, uint32_t *rank);

/* fluxboot.c, as the broker's overlay: the exchange through the
 * broker's own bootstrap (bootstrap.iam, barrier, whois, finalize),
 * synchronous, as the built-in overlay does it */
int fh_boot_broker (struct bgn_broker *b, char *errbuf, size_t errlen);
int fh_boot_finalize (struct bgn_broker *b, char *errbuf, size_t errlen);

/* fluxovsvc.c: Flux's overlay.* services and the state machine's
 * join, quorum and shutdown, as the broker's overlay */
int fh_ovsvc_start (struct bgn_broker *b);
int fh_method_leave_wait (struct bgn_broker *b, msg_t *req,
                          const struct bgn_msg_info *info);
void fh_ovsvc_free (struct bgn_broker *b);
/* rank 0: what the BGN says of a rank ('f' full, 'l' lost) */
void fh_ovsvc_rank_status (struct bgn_broker *b, uint32_t rank, char st);
void fh_ovsvc_health_check (struct bgn_broker *b);

/* fluxevents.c */
int fh_method_event_pub (struct bgn_broker *b, msg_t *req,
                         const struct bgn_msg_info *info);
int fh_method_event_sub (struct bgn_broker *b, msg_t *req,
                         const struct bgn_msg_info *info);
int fh_method_exit (struct bgn_broker *b, msg_t *req,
                    const struct bgn_msg_info *info);
int fh_deliver_events (bgn_broker_t *b, const void *batch, size_t len);
void fh_deliver_event_msg (struct bgn_broker *b, const msg_t *ev);
void fh_sub_free (void **item);
void fh_orphan_check (struct bgn_broker *b);
/* rank 0's policies: what they need, set up in fluxhost_serve */
int fh_events_serve (struct bgn_broker *b);
void fh_events_free (struct bgn_broker *b);

#endif
