/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* ovconf.h: the overlay's settings, read once from the broker's config.
 *
 * The broker has already validated the TOML against libconf's schema, so
 * reading cannot fail on a bad value; what is left here are the overlay's
 * own derived defaults (TTL from the diameter, the self-healing threshold
 * from the degree), kept in one place so the module and the simulator
 * agree on them.
 */
#ifndef BGN_OVERLAY_OVCONF_H
#define BGN_OVERLAY_OVCONF_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

struct bgn_topo;

struct ovl_config {
    char topology[64];          /* overlay.topology */
    int ttl;                    /* overlay.ttl; 0: 2 * diameter + 4 */
    double keepalive_interval;  /* overlay.keepalive_interval, s */
    double peer_timeout;        /* overlay.peer_timeout, s */
    int heal_threshold;         /* overlay.heal_threshold; -1: derived */
    int sndhwm;                 /* overlay.sndhwm (transport) */
    int backlog_max;            /* overlay.backlog, per peer */
    long long backlog_bytes;    /* overlay.backlog_bytes, all backlogs */
    long long retry_bytes;      /* overlay.retry_bytes: copies to resend */
    long long dedup_bytes;      /* overlay.dedup_bytes: requests run here */
    long long tracker_bytes;    /* overlay.tracker_bytes: its entries */
    long long held_bytes;       /* overlay.held_bytes: held for a rejoin */
    long long sndbuf_bytes;     /* overlay.sndbuf_bytes: per peer, in the
                                   transport's queue */
    int event_buffer;           /* overlay.event_buffer */
    long long event_buffer_bytes; /* overlay.event_buffer_bytes */
    double event_batch_window;  /* overlay.event_batch_window, s */
    long long event_batch_bytes; /* overlay.event_batch_bytes */
    long long event_queue_bytes; /* overlay.event_queue_bytes */
    int curve;                  /* overlay.curve */
    int insecure;               /* overlay.insecure: CURVE off off-host */
    char bind[512];             /* overlay.bind, "" for the default */
    char curve_cert[512];       /* bootstrap.curve_cert, "" for per-broker */
    char curve_keys[512];       /* bootstrap.curve_keys: per-host keys */
    double rpc_timeout;         /* broker.rpc_timeout, s */
    double rejoin_wait;         /* overlay.rejoin_wait: a request to a
                                   fenced rank waits this long for news of
                                   its rejoin, s; 0: fails at once */
    double fence_window;        /* fence reports and batches gather this
                                   long before they go, s */
    double join_timeout;        /* a peer that never says hello is fenced
                                   after this, s; 0: 3 * peer_timeout */
    long test_loop;             /* BGN_OVERLAY_TEST_LOOP rank, -1 off */
    char service[32];           /* the service name the overlay's methods
                                   and events go under: "overlay" in
                                   bgn-broker, "bgn" beside Flux, whose
                                   own overlay has that name */
    struct bgn_topo *topo;      /* borrowed: a topology shared by many
                                   cores (a simulator); NULL: the core
                                   makes its own from 'topology' */
};

/* Defaults, as libconf's schema has them. */
void ovconf_defaults (struct ovl_config *cfg);

/* Read a finalized broker config (keys absent keep their defaults). */
void ovconf_read (json_t *conf, struct ovl_config *cfg);

/* "SERVICE.METHOD" into buf (e.g. "overlay.status"); returns buf. */
const char *ovconf_topic (const struct ovl_config *cfg, const char *method,
                          char *buf, size_t len);

/* The method of a topic under cfg's service ("status" for
 * "overlay.status"), or NULL if the topic is not the service's. */
const char *ovconf_method (const struct ovl_config *cfg, const char *topic);

/* The TTL a message starts with on this topology. */
int ovconf_ttl (const struct ovl_config *cfg, struct bgn_topo *topo);

/* Peers below which a broker heals (0: never, as for trees). */
int ovconf_heal_threshold (const struct ovl_config *cfg,
                           struct bgn_topo *topo, uint32_t rank);

#endif
