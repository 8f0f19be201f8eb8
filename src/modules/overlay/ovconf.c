/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* ovconf.c: the overlay's settings and derived defaults (see ovconf.h). */
#include <stdio.h>
#include <string.h>

#include "src/common/libbgn/bgn.h"
#include "src/common/libconf/conf.h"
#include "ovconf.h"

void ovconf_defaults (struct ovl_config *cfg)
{
    memset (cfg, 0, sizeof (*cfg));
    snprintf (cfg->topology, sizeof (cfg->topology), "bgn");
    cfg->keepalive_interval = 1.0;
    cfg->peer_timeout = 10.0;
    cfg->heal_threshold = -1;
    cfg->sndhwm = 1000;
    cfg->backlog_max = 10000;
    cfg->backlog_bytes = 32ll << 20;
    cfg->retry_bytes = 16ll << 20;
    cfg->dedup_bytes = 16ll << 20;
    cfg->tracker_bytes = 16ll << 20;
    cfg->held_bytes = 4ll << 20;
    cfg->sndbuf_bytes = 4ll << 20;
    cfg->event_buffer = 100000;
    cfg->event_buffer_bytes = 64ll << 20;
    cfg->event_batch_window = 0.0002;
    cfg->event_batch_bytes = 64ll << 10;
    cfg->event_queue_bytes = 16ll << 20;
    cfg->curve = 1;
    cfg->rpc_timeout = 10.0;
    cfg->rejoin_wait = 0.5;
    cfg->fence_window = 0.01;
    cfg->join_timeout = 0;
    cfg->test_loop = -1;
    snprintf (cfg->service, sizeof (cfg->service), "overlay");
}

const char *ovconf_topic (const struct ovl_config *cfg, const char *method,
                          char *buf, size_t len)
{
    snprintf (buf, len, "%s.%s", cfg->service, method);
    return buf;
}

const char *ovconf_method (const struct ovl_config *cfg, const char *topic)
{
    size_t n = strlen (cfg->service);

    if (!topic || strncmp (topic, cfg->service, n) != 0 || topic[n] != '.')
        return NULL;
    return topic + n + 1;
}

static void copy_string (json_t *conf, const char *key, char *buf,
                         size_t len)
{
    const char *s;

    if (conf_get_string (conf, key, &s) == 0)
        snprintf (buf, len, "%s", s);
}

static void copy_int (json_t *conf, const char *key, int *val)
{
    long long v;

    if (conf_get_int (conf, key, &v) == 0)
        *val = (int)v;
}

void ovconf_read (json_t *conf, struct ovl_config *cfg)
{
    copy_string (conf, "overlay.topology", cfg->topology,
                 sizeof (cfg->topology));
    copy_int (conf, "overlay.ttl", &cfg->ttl);
    /* not in bgn-broker's schema: a host sets it (the Flux module) */
    copy_string (conf, "overlay.service", cfg->service, sizeof (cfg->service));
    copy_int (conf, "overlay.heal_threshold", &cfg->heal_threshold);
    copy_int (conf, "overlay.sndhwm", &cfg->sndhwm);
    copy_int (conf, "overlay.backlog", &cfg->backlog_max);
    conf_get_int (conf, "overlay.backlog_bytes", &cfg->backlog_bytes);
    conf_get_int (conf, "overlay.retry_bytes", &cfg->retry_bytes);
    conf_get_int (conf, "overlay.dedup_bytes", &cfg->dedup_bytes);
    conf_get_int (conf, "overlay.tracker_bytes", &cfg->tracker_bytes);
    conf_get_int (conf, "overlay.held_bytes", &cfg->held_bytes);
    conf_get_int (conf, "overlay.sndbuf_bytes", &cfg->sndbuf_bytes);
    copy_int (conf, "overlay.event_buffer", &cfg->event_buffer);
    conf_get_int (conf, "overlay.event_buffer_bytes", &cfg->event_buffer_bytes);
    conf_get_int (conf, "overlay.event_batch_bytes", &cfg->event_batch_bytes);
    conf_get_int (conf, "overlay.event_queue_bytes", &cfg->event_queue_bytes);
    conf_get_duration (conf, "overlay.event_batch_window",
                       &cfg->event_batch_window);
    conf_get_bool (conf, "overlay.curve", &cfg->curve);
    conf_get_bool (conf, "overlay.insecure", &cfg->insecure);
    conf_get_duration (conf, "overlay.keepalive_interval",
                       &cfg->keepalive_interval);
    conf_get_duration (conf, "overlay.peer_timeout", &cfg->peer_timeout);
    conf_get_duration (conf, "broker.rpc_timeout", &cfg->rpc_timeout);
    conf_get_duration (conf, "overlay.rejoin_wait", &cfg->rejoin_wait);
    conf_get_duration (conf, "overlay.fence_window", &cfg->fence_window);
    conf_get_duration (conf, "overlay.join_timeout", &cfg->join_timeout);
    copy_string (conf, "overlay.bind", cfg->bind, sizeof (cfg->bind));
    copy_string (conf, "bootstrap.curve_cert", cfg->curve_cert,
                 sizeof (cfg->curve_cert));
    copy_string (conf, "bootstrap.curve_keys", cfg->curve_keys,
                 sizeof (cfg->curve_keys));
}

int ovconf_ttl (const struct ovl_config *cfg, struct bgn_topo *topo)
{
    /* Room for detours around failures, bounded by the wire's u8. */
    int ttl = cfg->ttl > 0 ? cfg->ttl : 2 * bgn_topo_diameter (topo) + 4;
    return ttl > 255 ? 255 : ttl;
}

int ovconf_heal_threshold (const struct ovl_config *cfg,
                           struct bgn_topo *topo, uint32_t rank)
{
    int degree = bgn_topo_degree (topo, rank);

    if (cfg->heal_threshold >= 0)
        return cfg->heal_threshold;
    if (bgn_topo_is_tree (topo))
        return 0;   /* trees are the baseline: no healing */
    /* Half the degree, at least 2: act while links are still to spare. */
    return degree / 2 > 2 ? degree / 2 : 2;
}
