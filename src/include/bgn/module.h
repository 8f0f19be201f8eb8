/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* bgn/module.h: the ABI between bgn-broker and its loadable modules.
 *
 * A module is a shared object (e.g. overlay-bgn.so) that exports one data
 * symbol, BGN_MODULE_SYMBOL ("bgn_module_entry"), of type struct
 * bgn_module.  The broker dlopen()s the file, looks the symbol up, checks
 * abi_version == BGN_MODULE_ABI_VERSION and that name is set, and refuses
 * the module otherwise (logging the module path and the reason).
 *
 * The broker hands the module a table of functions (struct bgn_broker_api)
 * instead of letting it call broker symbols directly, so modules link
 * against nothing in the broker executable and the ABI is exactly this
 * file.  Everything runs in the broker's single thread, driven by its
 * reactor; a module must never block.  A module that reads ZeroMQ sockets
 * makes them in the context api->poller() names and has them watched
 * through that poller, never through a reactor of its own: the same
 * module code then runs in bgn-broker (a czmq zloop) and inside other
 * hosts (a Flux broker module, whose reactor is libev).
 *
 * Life cycle:
 *   load()    called once after the broker has bootstrapped its rank and
 *             size; the module sets itself up, may bind sockets and may
 *             publish bootstrap values with api->boot_put().
 *   start()   called once after the bootstrap barrier: every broker's
 *             boot_put values are visible through api->boot_get().  The
 *             module reads its peers' values and authorizes their keys.
 *   connect() optional: called after a second barrier, when every
 *             broker's start() has run (so every peer is ready to admit
 *             connections); the module connects to its peers.
 *   unload()  called at shutdown, in reverse load order; frees everything.
 *
 * Ownership: msg_t pointers passed to the api's deliver()/send() are
 * taken over by the broker in every case, success or failure; the caller
 * must not touch them afterwards.  The overlay's send op takes msg_t **
 * and leaves the message with the broker when it fails.  Strings returned by the api are owned by the broker
 * and live as long as it does.
 */
#ifndef BGN_MODULE_H
#define BGN_MODULE_H

#include <stdarg.h>
#include <stdint.h>
#include <syslog.h>   /* LOG_ERR .. LOG_DEBUG for api->log */
#include <jansson.h>

#include "src/common/libmsg/message.h"

#define BGN_MODULE_ABI_VERSION 8  /* 5: boot_lasting, ops->ending;
                                     6: poller add_quiet;
                                     7: boot_want;
                                     8: vlog */
#define BGN_MODULE_SYMBOL "bgn_module_entry"

typedef struct bgn_broker bgn_broker_t;

/* How a host watches a module's ZeroMQ sockets.  'zmq_ctx' is the
 * context to make them in (the host owns it; CURVE's ZAP handler is per
 * context, so a module's sockets share one).  add() arranges for
 * cb (arg) to run on the host's reactor whenever 'zsock' may have a
 * message to read; cb reads without blocking until EAGAIN or a budget
 * of its own, and is called again while messages remain, so an
 * edge-triggered reactor and a level-triggered one look the same.
 * 0, or -1 with errno (EEXIST: already watched).  remove() stops
 * watching 'zsock' (unknown sockets are ignored); call it before
 * zmq_close.
 *
 * add_quiet() is add() for a socket that is seldom readable (a monitor,
 * the ZAP handler) and that the module touches only inside cb: no send
 * or receive on it anywhere else.  A socket watched by add() costs the
 * host a question to libzmq (a poll and a getpid in the calling thread)
 * on every turn of its reactor, because a send or receive elsewhere may
 * have taken the wake-up its file descriptor would have given; a quiet
 * socket is asked only when its descriptor wakes, once after it is
 * added, and again after each cb while messages remain.  Same errors
 * as add(); remove() ends either kind. */
struct bgn_poller {
    void *ctx;
    void *zmq_ctx;
    int (*add) (void *ctx, void *zsock, void (*cb) (void *arg), void *arg);
    void (*remove) (void *ctx, void *zsock);
    int (*add_quiet) (void *ctx, void *zsock, void (*cb) (void *arg),
                      void *arg);
};

/* Facts the overlay knows about a message it delivers.  The broker hands
 * the same info back with a request it sends on (a service-addressed
 * request this broker does not serve), so it continues its trip with the
 * hops it has left instead of starting a new one. */
struct bgn_msg_info {
    int hops;               /* overlay hops travelled, 0 if local */
    uint32_t source;        /* rank that injected it into the overlay */
    int from_overlay;       /* 1 if it arrived over the overlay */
    int ttl;                /* hops it may still make (from_overlay) */
    int source_unverified;  /* 'source' is a neighbour of this broker
                               whose link is up, yet the message came
                               through another peer: the source field is
                               only that peer's word (access.h) */
    int sign;               /* to the overlay, with a request that starts
                               here: sign it end to end as this broker
                               (it asks for more than a peer's role) */
    int source_signed;      /* from the overlay: 1 'source' signed the
                               request and the signature is valid, fresh
                               and new; -1 'source' has a signing key but
                               the request is not (validly) signed by
                               it; 0 no key is known for 'source' (a
                               static bootstrap, an overlay that does
                               not sign): only the older rules apply */
};

/* A service handler: called for each request addressed to the service.
 * It answers with api->respond() / respond_error() (or not at all for
 * MSGFLAG_NORESPONSE requests).  'req' is only valid during the call.
 */
typedef void (*bgn_service_f) (bgn_broker_t *b, const msg_t *req,
                               const struct bgn_msg_info *info, void *arg);

/* What an overlay module provides to the broker (api->set_overlay). */
struct bgn_overlay_ops {
    /* Carry *msg toward rank 'dest' (requests: its nodeid; responses: the
     * rank on top of the route stack; NODEID_ANY / NODEID_UPSTREAM for
     * service-addressed requests, which the overlay forwards toward rank
     * 0).  'info' is the delivery info of a message that arrived over the
     * overlay and goes on (from_overlay set), or NULL / from_overlay 0
     * for a message that starts here.  Returns 0 and takes the message
     * (*msg set to NULL), or -1 with errno and leaves it with the caller,
     * not sent (EHOSTUNREACH: no route or TTL spent; ENOBUFS: backlog
     * full), as czmq's zmsg_send does.
     */
    int (*send) (void *state, msg_t **msg, uint32_t dest,
                 const struct bgn_msg_info *info);
    /* A one-word health ("full", "degraded", "partitioned", ...). */
    const char *(*health) (void *state);
    /* Topology name and diameter, for broker.info. */
    const char *(*topology) (void *state);
    /* Rank 0: number event (taken over) and multicast it to every
     * broker, this one included.  Returns the seq, or -1 with errno
     * (EAGAIN: not ready yet).  May be NULL (events stay local). */
    int64_t (*publish) (void *state, msg_t *event);
    /* Rank 0, asynchronous: number events[0..n-1] (taken over in every
     * case, pointers set to NULL) consecutively into the next batches and
     * answer the request 'req' (borrowed; the overlay keeps a copy) with
     * {"seq": FIRST, "count": n} once they have left, so that a publisher
     * waiting for its answers goes no faster than events drain.  All or
     * none: 0, or -1 with errno and nothing published or answered
     * (EAGAIN: not ready yet, or too many events waiting).  May be NULL
     * (publish is used). */
    int (*publish_req) (void *state, msg_t **events, int n, const msg_t *req);
    /* The host has begun to end the whole instance (Flux: the broker
     * entered its cleanup state): brokers leave on purpose from now on,
     * and ranks out of reach are not a partition.  Called once, before
     * unload.  May be NULL. */
    void (*ending) (void *state);
};

struct bgn_broker_api {
    uint32_t (*rank) (bgn_broker_t *b);
    uint32_t (*size) (bgn_broker_t *b);
    const char *(*hostname) (bgn_broker_t *b);
    const char *(*instance_id) (bgn_broker_t *b);   /* same on all ranks */
    const char *(*rundir) (bgn_broker_t *b);
    const struct bgn_poller *(*poller) (bgn_broker_t *b);
    json_t *(*config) (bgn_broker_t *b);            /* finalized config */

    /* Log at a syslog level (LOG_ERR .. LOG_DEBUG). */
    void (*log) (bgn_broker_t *b, int level, const char *fmt, ...)
        __attribute__ ((format (printf, 3, 4)));

    /* Bootstrap exchange: put before start(), get from start() on.
     * get copies the value of 'key' published by 'rank' into buf.
     * -1 with errno (ENOENT, EOVERFLOW, ETIMEDOUT, EPROTO).
     */
    int (*boot_put) (bgn_broker_t *b, const char *key, const char *value);
    int (*boot_get) (bgn_broker_t *b, uint32_t rank, const char *key,
                     char *buf, size_t len);

    /* Services: requests whose topic's first component (up to the first
     * '.') is 'name' go to fn.  EEXIST if taken.
     */
    int (*service_add) (bgn_broker_t *b, const char *name, bgn_service_f fn,
                        void *arg);
    int (*service_remove) (bgn_broker_t *b, const char *name);

    /* Answer a request.  No-op for NORESPONSE requests. */
    int (*respond) (bgn_broker_t *b, const msg_t *req, const char *payload);
    int (*respond_error) (bgn_broker_t *b, const msg_t *req, int errnum,
                          const char *errstr);

    /* The overlay hands a message that reached this rank to the broker,
     * which routes it locally (service, client, or back out).
     */
    int (*deliver) (bgn_broker_t *b, msg_t *msg,
                    const struct bgn_msg_info *info);

    /* Send a message as if a local client had: through the broker's
     * routing.  For module-originated requests, a response comes back to
     * the module's 'response' handler registered with service_add under
     * the request topic's service name (routes end at this rank).
     */
    int (*send) (bgn_broker_t *b, msg_t *msg);

    /* Install the overlay.  One per broker; EBUSY if already set. */
    int (*set_overlay) (bgn_broker_t *b, const struct bgn_overlay_ops *ops,
                        void *state);

    /* Ask the broker to shut down with this exit code. */
    void (*stop) (bgn_broker_t *b, int exit_code);

    /* The monotonic clock, seconds. */
    double (*now) (bgn_broker_t *b);
    /* Call cb (arg) once, 'after' seconds from now, on the reactor.
     * Returns a timer id for timer_stop, or -1 with errno. */
    int (*timer_start) (bgn_broker_t *b, double after,
                        void (*cb) (void *arg), void *arg);
    /* Cancel a timer that has not fired (an id that fired is ignored). */
    void (*timer_stop) (bgn_broker_t *b, int id);

    /* The overlay hands a batch of sequenced events (the event batch
     * format of doc/overlay-protocol.md, already checked) to the broker,
     * which passes to each subscribed client the events it asked for, a
     * batch at a time.  'batch' is borrowed. */
    int (*deliver_events) (bgn_broker_t *b, const void *batch, size_t len);

    /* The broker's own stores that grow with traffic (its clients'
     * queues, subscriptions, log ring, host table), for the "memory" of
     * overlay.status: {"name": {"bytes": B, "bound": N, ...}, ...}, heap
     * counted as the allocator does, a new reference.  May be NULL (a
     * host that keeps no such stores). */
    json_t *(*memory) (bgn_broker_t *b);

    /* boot_get, but past any copy this broker kept: what 'rank' put last
     * (a broker restarted since the exchange put its values again).  It
     * blocks at most as long as boot_get.  May be NULL: boot_get is then
     * always fresh. */
    int (*boot_refresh) (bgn_broker_t *b, uint32_t rank, const char *key,
                         char *buf, size_t len);

    /* 1 if boot_get answers for the broker's whole life, a rank at a time
     * (bgn start's PMI server): a module may then read a rank's values
     * when it first needs them instead of every rank's in start(), which
     * at N ranks costs every broker N exchanges.  2: the same, and a read
     * costs nothing here (the host holds every rank's values on this
     * broker, as a Flux rank 0 does), so even a rank that would read
     * them all at start (rank 0) may wait until it needs each.  0 if the
     * exchange closes after start-up (a PMI finalize) or the values cost
     * nothing to read at start.  May be NULL (= 0). */
    int (*boot_lasting) (bgn_broker_t *b);

    /* The module will read rank's bootstrap values in start()
     * (BGN_BOOT_ALL: every rank's); called from load(), after its puts.
     * A host whose exchange is a request per rank (a Flux broker's, to
     * rank 0) fetches them ahead in one, so that start() waits for
     * nothing; a host whose every rank sees every value needs no list.
     * 0, or -1 with errno (EINVAL: rank out of range).  May be NULL. */
    int (*boot_want) (bgn_broker_t *b, uint32_t rank);

    /* log, with the arguments as a va_list: a module that formats its
     * lines in one place passes each call site's own format, so the
     * broker's flood control (a budget per format) keeps one noisy line
     * from hiding another.  May be NULL: log is used. */
    void (*vlog) (bgn_broker_t *b, int level, const char *fmt, va_list ap)
        __attribute__ ((format (printf, 3, 0)));
};

#define BGN_BOOT_ALL UINT32_MAX

struct bgn_module {
    uint32_t abi_version;
    const char *name;
    const char *description;
    int (*load) (const struct bgn_broker_api *api, bgn_broker_t *b,
                 void **state);
    int (*start) (void *state);
    void (*unload) (void *state);
    int (*connect) (void *state);
};

#endif /* BGN_MODULE_H */
