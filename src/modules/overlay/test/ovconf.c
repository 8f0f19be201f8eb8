/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test/ovconf.c: the overlay's settings (ovconf.c).
 *
 * - ovconf_defaults are libconf's: an empty config, finalized and read,
 *   changes nothing;
 * - every key set in a config lands in its field; keys absent keep what
 *   was there;
 * - the derived defaults: the TTL (2 * diameter + 4, or the configured
 *   one, at most 255) and the self-healing threshold (half the degree,
 *   at least 2; 0 on trees; or the configured one).
 */
#include <string.h>

#include "src/common/libtap/tap.h"
#include "src/common/libbgn/bgn.h"
#include "src/common/libconf/conf.h"
#include "src/modules/overlay/ovconf.h"

static json_t *config (const char *toml)
{
    char err[256] = "";
    json_t *c = conf_create ();

    if (!c || conf_load_string (c, "t.toml", toml, err, sizeof (err)) < 0
        || conf_finalize (c, err, sizeof (err)) < 0)
        bail_out ("config does not load");
    return c;
}

static void test_defaults (void)
{
    struct ovl_config def, cfg;
    json_t *c = config ("");

    ovconf_defaults (&def);
    ok (!strcmp (def.topology, "bgn") && def.ttl == 0
        && def.keepalive_interval == 1.0 && def.peer_timeout == 10.0
        && def.heal_threshold == -1 && def.curve == 1 && def.insecure == 0
        && def.bind[0] == '\0' && def.test_loop == -1 && def.topo == NULL,
        "defaults: bgn, derived TTL, 1s keepalive, 10s timeout, CURVE on");
    cfg = def;
    ovconf_read (c, &cfg);
    ok (!memcmp (&cfg, &def, sizeof (cfg)),
        "they are libconf's: reading an empty finalized config changes "
        "no byte");
    json_decref (c);

    c = json_object ();
    ovconf_read (c, &cfg);
    ok (!memcmp (&cfg, &def, sizeof (cfg)),
        "a config without the keys leaves every field as it was");
    json_decref (c);
}

static void test_read (void)
{
    struct ovl_config cfg;
    json_t *c = config (
        "[overlay]\n"
        "topology = \"kary:2\"\nttl = 9\nkeepalive_interval = \"250ms\"\n"
        "peer_timeout = 5\nheal_threshold = 3\nsndhwm = 50\nbacklog = 7\n"
        "event_buffer = 64\nevent_buffer_bytes = 1048576\n"
        "event_batch_window = \"1ms\"\nevent_batch_bytes = 4096\n"
        "event_queue_bytes = 2048\ncurve = false\ninsecure = true\n"
        "bind = \"tcp://10.0.0.1:8050\"\nfence_window = \"20ms\"\n"
        "join_timeout = \"30s\"\nrejoin_wait = \"300ms\"\n"
        "held_bytes = 65536\ntracker_bytes = 131072\nsndbuf_bytes = 262144\n"
        "[broker]\nrpc_timeout = 1.5\n"
        "[bootstrap]\ncurve_cert = \"/etc/bgn/curve.cert\"\n");

    ovconf_defaults (&cfg);
    ovconf_read (c, &cfg);
    ok (!strcmp (cfg.topology, "kary:2") && cfg.ttl == 9
        && cfg.heal_threshold == 3, "topology, ttl, heal_threshold");
    ok (cfg.keepalive_interval == 0.25 && cfg.peer_timeout == 5.0
        && cfg.fence_window == 0.02 && cfg.join_timeout == 30.0
        && cfg.rpc_timeout == 1.5 && cfg.rejoin_wait == 0.3,
        "durations, in seconds");
    ok (cfg.held_bytes == 65536 && cfg.tracker_bytes == 131072
        && cfg.sndbuf_bytes == 262144, "held, tracker and send queue bounds");
    ok (cfg.sndhwm == 50 && cfg.backlog_max == 7 && cfg.event_buffer == 64
        && cfg.event_buffer_bytes == 1048576 && cfg.event_batch_bytes == 4096
        && cfg.event_queue_bytes == 2048 && cfg.event_batch_window == 0.001,
        "queue and event limits");
    ok (cfg.curve == 0 && cfg.insecure == 1
        && !strcmp (cfg.bind, "tcp://10.0.0.1:8050")
        && !strcmp (cfg.curve_cert, "/etc/bgn/curve.cert")
        && cfg.curve_keys[0] == '\0', "CURVE, bind and certificate");
    json_decref (c);
}

static void test_derived (void)
{
    struct bgn_topo *bgn = bgn_topo_create ("bgn", 16);
    struct bgn_topo *small = bgn_topo_create ("bgn", 4);
    struct bgn_topo *tree = bgn_topo_create ("kary:2", 16);
    struct ovl_config cfg;
    int d = bgn_topo_diameter (bgn);

    ovconf_defaults (&cfg);
    ok (d > 0 && ovconf_ttl (&cfg, bgn) == 2 * d + 4,
        "ttl 0: 2 * diameter (%d) + 4 = %d", d, 2 * d + 4);
    cfg.ttl = 9;
    ok (ovconf_ttl (&cfg, bgn) == 9, "a configured ttl is used as it is");
    cfg.ttl = 300;
    ok (ovconf_ttl (&cfg, bgn) == 255, "at most 255, the wire's byte");

    ok (ovconf_heal_threshold (&cfg, bgn, 3) == bgn_topo_degree (bgn, 3) / 2,
        "bgn, 16 brokers: heal below half the degree (%d of %d)",
        ovconf_heal_threshold (&cfg, bgn, 3), bgn_topo_degree (bgn, 3));
    ok (bgn_topo_degree (small, 0) / 2 < 2
        && ovconf_heal_threshold (&cfg, small, 0) == 2,
        "4 brokers (degree %d): at least 2", bgn_topo_degree (small, 0));
    ok (ovconf_heal_threshold (&cfg, tree, 0) == 0
        && ovconf_heal_threshold (&cfg, tree, 9) == 0,
        "a tree never heals");
    cfg.heal_threshold = 5;
    ok (ovconf_heal_threshold (&cfg, tree, 0) == 5
        && ovconf_heal_threshold (&cfg, bgn, 0) == 5,
        "a configured threshold wins, trees included");
    cfg.heal_threshold = 0;
    ok (ovconf_heal_threshold (&cfg, bgn, 0) == 0, "0: never heal");
    bgn_topo_destroy (&bgn);
    bgn_topo_destroy (&small);
    bgn_topo_destroy (&tree);
}

int main (void)
{
    test_defaults ();
    test_read ();
    test_derived ();
    return done_testing ();
}
