/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* broker.h: the broker's state, shared by its own source files.
 *
 * broker.c sets the broker up and runs it; dispatch.c routes messages;
 * api.c is what modules see; builtins.c holds the built-in services.
 *
 * Modules never see this: they get the opaque bgn_broker_t and the api
 * table of bgn/module.h.
 */
#ifndef BGN_BROKER_BROKER_H
#define BGN_BROKER_BROKER_H

#include <limits.h>
#include <stdint.h>
#include <czmq.h>
#include <jansson.h>

#include "src/include/bgn/module.h"
#include "clientq.h"
#include "log.h"
#include "service.h"
#include "boot.h"
#include "modloader.h"

struct bgn_broker {
    struct logger *log;
    json_t *conf;
    struct boot *boot;
    uint32_t rank;
    uint32_t size;
    char hostname[256];
    char instance_id[64];
    char rundir[PATH_MAX];
    int rundir_created;
    int rundir_temporary;         /* made by mkdtemp: removed with its files */
    long guest_gid;              /* broker.guest_group, or -1 */
    char local_uri[PATH_MAX + 8];
    char local_path[PATH_MAX];
    double start_time;

    zloop_t *loop;
    void *local;                 /* ROUTER for local clients (raw zmq) */
    struct clientq *clientq;     /* what is queued toward each (clientq.h) */
    long long client_queue_bytes;    /* broker.client_queue_bytes */
    int sigfd;
    struct service_registry *services;

    struct module *overlay_mod;
    struct modlist *modules;     /* --module: loaded after the overlay */
    struct notify *notify;       /* sd_notify readiness (notify.h) */
    const struct bgn_overlay_ops *ovl;
    void *ovl_state;

    zhashx_t *subscriptions;     /* client id -> zlistx of topic prefixes */
    zhashx_t *timers;            /* modules' timers: id -> struct api_timer */
    struct watches *watches;     /* modules' sockets (watch.c) */
    struct bgn_poller poller;    /* api->poller(): zloop and zsys's context */
    uint32_t event_seq;          /* rank 0: last assigned sequence number */

    /* Counters for overlay-status and logs. */
    uint64_t client_rx;
    uint64_t client_tx;
    uint64_t client_drops;       /* malformed from clients */
    uint64_t client_send_drops;  /* could not deliver to a client */
    uint64_t route_drops;        /* responses/events with nowhere to go */
    uint64_t access_denied;      /* requests refused for their role */
    uint64_t remote_role_capped; /* overlay requests whose owner role the
                                    policy took away (access_cap) */

    struct access *access;       /* credentials and roles (access.h) */
    struct ratelimit *deny_rl;   /* warnings about refused requests */
    struct ratelimit *client_rl; /* warnings about malformed client input */

    int exit_code;
    int stopping;

    struct hosts *hosts;         /* rank -> host table (hosts.c) */
    int tick_timer;              /* builtins' periodic timer, or -1 */
};

/* dispatch.c: routing of every message, and the local connector */
int broker_route (struct bgn_broker *b, msg_t *msg,
                  const struct bgn_msg_info *info);
int broker_respond (struct bgn_broker *b, const msg_t *req,
                    const char *payload);
/* The same, for a payload the broker built itself as one JSON object
 * from checked parts (msg_set_json_trusted): not scanned again. */
int broker_respond_built (struct bgn_broker *b, const msg_t *req,
                          const char *payload, size_t len);
int broker_respond_error (struct bgn_broker *b, const msg_t *req, int errnum,
                          const char *errstr);
void broker_deliver_event (struct bgn_broker *b, const msg_t *event);
/* Bind the local connector (b->local_uri) and read it on the reactor. */
int dispatch_setup_local (struct bgn_broker *b);
/* A send to a local client failed with errno (ENOBUFS: it falls behind,
 * EHOSTUNREACH: it is gone, ...): count it, forget a client gone, log
 * (rate-limited); 'what' names the message ("response", "event
 * batch").  errno is kept. */
void dispatch_send_failed (struct bgn_broker *b, const char *client,
                           const char *what);

/* api.c: the table modules get, and stop */
int api_init (struct bgn_broker *b);
void api_fini (struct bgn_broker *b);
void broker_stop (struct bgn_broker *b, int exit_code);
extern const struct bgn_broker_api broker_api;

/* builtins.c: register the broker's own services (and their state and
 * timer); builtins_destroy() frees them at shutdown. */
int builtins_register (struct bgn_broker *b);
void builtins_destroy (struct bgn_broker *b);
/* A batch of events (evbatch.h) the overlay checked when it arrived, to
 * every subscribed client: the events it asked for.  -1 if it is not a
 * batch at all. */
int broker_deliver_batch (struct bgn_broker *b, const void *batch,
                          size_t len);
/* Events were dropped for 'client' (its queue was full): tell it, with
 * an event.lost notice of its own, once its queue takes messages again.
 * 0 if told (or nothing to tell), -1 if it still cannot take one (the
 * range stays noted). */
int broker_tell_lost (struct bgn_broker *b, const char *client);
/* The broker's stores for overlay.status's "memory" (bgn/module.h's
 * api->memory). */
json_t *broker_memory (struct bgn_broker *b);

#endif
