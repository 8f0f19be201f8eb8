/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test/conf.c: unit tests for the broker configuration loader.
 *
 * Covers each schema error class (unknown key, wrong type, range), the
 * defaults conf_finalize() fills in, -o overrides, loading a directory
 * with a key duplicated across files, and the peer_timeout rule.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/common/libtap/tap.h"
#include "src/common/libconf/conf.h"
#include "src/common/libutil/hostlist.h"

static char errbuf[512];

/* Load 'text' into a fresh config; return rc, leave message in errbuf. */
static int load (const char *text, json_t **out)
{
    json_t *c = conf_create ();
    int rc;
    errbuf[0] = '\0';
    rc = conf_load_string (c, "t.toml", text, errbuf, sizeof (errbuf));
    if (out)
        *out = c;
    else
        json_decref (c);
    return rc;
}

static void reject (const char *text, const char *want)
{
    int rc = load (text, NULL);
    int e = errno;
    ok (rc < 0 && e == EINVAL && strstr (errbuf, want) != NULL,
        "rejected: %s -> %s", text, errbuf);
}

static void accept (const char *text)
{
    int rc = load (text, NULL);
    ok (rc == 0, "accepted: %s %s", text, errbuf);
}

static void writefile (const char *path, const char *text)
{
    FILE *f = fopen (path, "w");
    if (!f)
        bail_out ("cannot write temp file");
    fputs (text, f);
    fclose (f);
}

static void test_schema_errors (void)
{
    reject ("[overlay]\nfoo = 1", "t.toml: key 'overlay.foo': unknown key");
    reject ("[nosuch]\nx = 1", "t.toml: key 'nosuch': unknown table");
    reject ("x = 1", "t.toml: key 'x': unknown key");
    reject ("overlay = 1", "t.toml: key 'overlay': must be a table");
    reject ("[overlay.sub]", "key 'overlay.sub': unknown key");
    reject ("[overlay]\nttl = \"5\"", "key 'overlay.ttl': must be an integer");
    reject ("[overlay]\ncurve = 1", "key 'overlay.curve': must be a boolean");
    reject ("[overlay]\nbind = 5", "key 'overlay.bind': must be a string");
    reject ("[overlay]\nttl = 256", "key 'overlay.ttl': must be 0");
    reject ("[overlay]\nttl = -1", "key 'overlay.ttl'");
    reject ("[overlay]\nheal_threshold = -2", "key 'overlay.heal_threshold'");
    reject ("[overlay]\nsndhwm = 0", "key 'overlay.sndhwm': must be 1..1000000");
    reject ("[overlay]\nevent_buffer = 15", "key 'overlay.event_buffer'");
    reject ("[overlay]\nbacklog = 10000001", "key 'overlay.backlog'");
    reject ("[broker]\nlog_level = 8", "key 'broker.log_level': must be 0..7");
    reject ("[broker]\nlog_ring_level = \"loud\"",
            "key 'broker.log_ring_level': must be a syslog level");
    reject ("[broker]\nlog_ring_level = 7",
            "key 'broker.log_ring_level': must be a string");
    reject ("[broker]\nlog_ring_size = 0",
            "key 'broker.log_ring_size': must be 1..1048576");
    reject ("[broker]\nlog_ring_size = 1048577", "key 'broker.log_ring_size'");
    reject ("[bootstrap]\ndefault_port = 0", "key 'bootstrap.default_port'");
    reject ("[bootstrap]\ndefault_port = 65536", "must be 1..65535");
    reject ("[overlay]\ntopology = \"tree\"", "key 'overlay.topology': must be");
    reject ("[overlay]\ntopology = \"bgn:1\"", "radix");
    reject ("[overlay]\ntopology = \"bgn:65\"", "radix");
    reject ("[overlay]\ntopology = \"kary:0\"", "key 'overlay.topology'");
    reject ("[overlay]\ntopology = \"kary:1025\"", "key 'overlay.topology'");
    reject ("[overlay]\ntopology = \"kary:x\"", "key 'overlay.topology'");
    reject ("[overlay]\nkeepalive_interval = \"5 parsecs\"",
            "key 'overlay.keepalive_interval': invalid duration");
    reject ("[overlay]\nkeepalive_interval = \"0s\"", "greater than 0");
    reject ("[overlay]\nkeepalive_interval = true",
            "key 'overlay.keepalive_interval': must be a duration");
    reject ("[broker]\nrpc_timeout = -1", "key 'broker.rpc_timeout'");
    reject ("[bootstrap]\nhosts = 5", "key 'bootstrap.hosts': must be an array");
    reject ("[bootstrap]\nhosts = [1]", "key 'bootstrap.hosts[0]': must be a table");
    reject ("[[bootstrap.hosts]]\nbind = \"x\"",
            "key 'bootstrap.hosts[0].host': required");
    reject ("[[bootstrap.hosts]]\nhost = \"a\"\n[[bootstrap.hosts]]\nhost = \"b\"\nfoo = 1",
            "key 'bootstrap.hosts[1].foo': unknown key");
    reject ("[[bootstrap.hosts]]\nhost = \"a\"\nport = 70000",
            "key 'bootstrap.hosts[0].port': must be 1..65535");
    reject ("[[bootstrap.hosts]]\nhost = 1", "must be a string");
    reject ("[overlay\n", "t.toml:1:9: ");
    accept ("[overlay]\ntopology = \"bgn:8\"\nkeepalive_interval = \"250ms\"\n"
            "peer_timeout = 5\nttl = 0\nheal_threshold = -1\ncurve = false");
    accept ("[overlay]\ntopology = \"kary:2\"\n[broker]\nrpc_timeout = 1.5");
    accept ("[overlay]\ntopology = \"binomial\"");
    accept ("[broker]\nlog_ring_level = \"info\"\nlog_ring_size = 16");
    accept ("[bootstrap]\nhosts = [ { host = \"node[0-15]\", bind = "
            "\"tcp://eth0:8050\", connect = \"tcp://%h:8050\" } ]");
    accept ("");
}

static void test_defaults (void)
{
    json_t *c;
    const char *s;
    long long i;
    int b;
    double d;

    ok (load ("[overlay]\nttl = 7\n[[bootstrap.hosts]]\nhost = \"n[0-3]\"\n"
              "[[bootstrap.hosts]]\nhost = \"m0\"\nport = 9000\nbind = \"tcp://*:1\"",
              &c) == 0, "load for defaults");
    ok (conf_finalize (c, errbuf, sizeof (errbuf)) == 0, "finalize: %s",
        errbuf);
    ok (json_object_get (c, "_origin") == NULL, "finalize removes _origin");
    ok (conf_get_int (c, "overlay.ttl", &i) == 0 && i == 7, "ttl kept: 7");
    ok (conf_get_string (c, "overlay.topology", &s) == 0
        && !strcmp (s, "bgn"), "default topology bgn");
    ok (conf_get_duration (c, "overlay.keepalive_interval", &d) == 0
        && d == 1.0, "default keepalive 1s");
    ok (conf_get_duration (c, "overlay.peer_timeout", &d) == 0 && d == 10.0,
        "default peer_timeout 10s");
    ok (conf_get_int (c, "overlay.heal_threshold", &i) == 0 && i == -1,
        "default heal_threshold -1");
    ok (conf_get_int (c, "overlay.sndhwm", &i) == 0 && i == 1000,
        "default sndhwm 1000");
    ok (conf_get_string (c, "broker.log_ring_level", &s) == 0
        && !strcmp (s, "debug"), "default log_ring_level debug");
    ok (conf_get_int (c, "broker.log_ring_size", &i) == 0 && i == 1024,
        "default log_ring_size 1024");
    ok (conf_get_int (c, "overlay.backlog", &i) == 0 && i == 10000,
        "default backlog");
    ok (conf_get_int (c, "overlay.event_buffer", &i) == 0 && i == 100000,
        "default event_buffer");
    ok (conf_get_bool (c, "overlay.curve", &b) == 0 && b == 1,
        "default curve true");
    ok (conf_get_int (c, "broker.log_level", &i) == 0 && i == 5,
        "default log_level 5");
    ok (conf_get_string (c, "broker.rundir", &s) == 0 && !strcmp (s, ""),
        "default rundir empty");
    ok (conf_get_duration (c, "broker.rpc_timeout", &d) == 0 && d == 10.0,
        "default rpc_timeout");
    ok (conf_get_int (c, "bootstrap.default_port", &i) == 0 && i == 8050,
        "default port 8050");
    ok (conf_get_string (c, "bootstrap.default_bind", &s) == 0
        && !strcmp (s, "tcp://*:%p"), "default_bind");
    ok (conf_get_string (c, "bootstrap.default_connect", &s) == 0
        && !strcmp (s, "tcp://%h:%p"), "default_connect");
    {
        json_t *h = json_object_get (json_object_get (c, "bootstrap"),
                                     "hosts");
        json_t *h0 = json_array_get (h, 0), *h1 = json_array_get (h, 1);
        ok (json_array_size (h) == 2
            && !strcmp (json_string_value (json_object_get (h0, "bind")),
                        "tcp://*:%p")
            && !strcmp (json_string_value (json_object_get (h0, "connect")),
                        "tcp://%h:%p")
            && json_integer_value (json_object_get (h0, "port")) == 8050
            && json_integer_value (json_object_get (h1, "port")) == 9000
            && !strcmp (json_string_value (json_object_get (h1, "bind")),
                        "tcp://*:1"),
            "hosts entries get bind/connect/port defaults");
    }
    errno = 0;
    ok (conf_get_int (c, "overlay.nosuch", &i) < 0 && errno == ENOENT,
        "getter: missing key ENOENT");
    errno = 0;
    ok (conf_get_int (c, "overlay.topology", &i) < 0 && errno == EINVAL,
        "getter: type mismatch EINVAL");
    errno = 0;
    ok (conf_get_bool (c, "overlay.ttl", &b) < 0 && errno == EINVAL,
        "getter: bool mismatch EINVAL");
    errno = 0;
    ok (conf_get_string (c, "nodot", &s) < 0 && errno == ENOENT,
        "getter: malformed key ENOENT");
    json_decref (c);
}

static void test_overrides (void)
{
    json_t *c;
    long long i;
    double d;
    const char *s;
    int b;

    ok (load ("[overlay]\nttl = 7\npeer_timeout = \"5s\"", &c) == 0,
        "load for overrides");
    ok (conf_set (c, "overlay.ttl=9", errbuf, sizeof (errbuf)) == 0,
        "-o overlay.ttl=9");
    ok (conf_set (c, "overlay.peer_timeout=2s", errbuf, sizeof (errbuf)) == 0,
        "-o overlay.peer_timeout=2s (unquoted string)");
    ok (conf_set (c, "overlay.topology=\"kary:3\"", errbuf,
                  sizeof (errbuf)) == 0, "-o quoted string");
    ok (conf_set (c, "overlay.curve=false", errbuf, sizeof (errbuf)) == 0,
        "-o boolean");
    ok (conf_set (c, "bootstrap.default_bind=tcp://*:%p", errbuf,
                  sizeof (errbuf)) == 0, "-o unquoted endpoint");
    ok (conf_set (c, "bootstrap.hosts=[{host=\"x[0-1]\"}]", errbuf,
                  sizeof (errbuf)) == 0, "-o array of inline tables");
    errno = 0;
    ok (conf_set (c, "overlay.ttl=0x100", errbuf, sizeof (errbuf)) < 0
        && errno == EINVAL
        && !strcmp (errbuf, "-o overlay.ttl=0x100: key 'overlay.ttl': must be "
                    "0 (derived from the diameter) or 1..255"),
        "-o range error: %s", errbuf);
    ok (conf_set (c, "overlay.nope=1", errbuf, sizeof (errbuf)) < 0
        && strstr (errbuf, "key 'overlay.nope': unknown key"),
        "-o unknown key: %s", errbuf);
    ok (conf_set (c, "overlay", errbuf, sizeof (errbuf)) < 0
        && strstr (errbuf, "expected key=value"), "-o without '=': %s",
        errbuf);
    ok (conf_set (c, "ttl=1", errbuf, sizeof (errbuf)) < 0
        && strstr (errbuf, "unknown key"), "-o undotted key: %s", errbuf);
    ok (conf_set (c, "broker.log_level=five", errbuf, sizeof (errbuf)) < 0
        && strstr (errbuf, "must be an integer"), "-o type error: %s",
        errbuf);
    ok (conf_finalize (c, errbuf, sizeof (errbuf)) == 0, "finalize: %s",
        errbuf);
    ok (conf_get_int (c, "overlay.ttl", &i) == 0 && i == 9,
        "override replaced file value");
    ok (conf_get_duration (c, "overlay.peer_timeout", &d) == 0 && d == 2.0,
        "override duration 2s");
    ok (conf_get_string (c, "overlay.topology", &s) == 0
        && !strcmp (s, "kary:3"), "override topology");
    ok (conf_get_bool (c, "overlay.curve", &b) == 0 && b == 0,
        "override curve");
    json_decref (c);
}

static void test_cross_rules (void)
{
    json_t *c;

    ok (load ("[overlay]\nkeepalive_interval = \"2s\"\npeer_timeout = \"2s\"",
              &c) == 0, "load equal keepalive/peer_timeout");
    errno = 0;
    ok (conf_finalize (c, errbuf, sizeof (errbuf)) < 0 && errno == EINVAL
        && strstr (errbuf, "t.toml: key 'overlay.peer_timeout': must be "
                   "greater than overlay.keepalive_interval"),
        "peer_timeout == keepalive rejected: %s", errbuf);
    json_decref (c);

    ok (load ("[overlay]\nkeepalive_interval = \"20s\"", &c) == 0,
        "load keepalive above default peer_timeout");
    ok (conf_finalize (c, errbuf, sizeof (errbuf)) < 0
        && strstr (errbuf, "overlay.peer_timeout"),
        "default peer_timeout < keepalive rejected: %s", errbuf);
    json_decref (c);

    c = conf_create ();
    ok (conf_set (c, "overlay.peer_timeout=500ms", errbuf,
                  sizeof (errbuf)) == 0, "-o peer_timeout=500ms");
    ok (conf_finalize (c, errbuf, sizeof (errbuf)) < 0
        && !strncmp (errbuf, "-o overlay.peer_timeout=500ms: key "
                     "'overlay.peer_timeout'", 50),
        "cross-rule error names the override: %s", errbuf);
    json_decref (c);

    ok (load ("[overlay]\nkeepalive_interval = \"100ms\"\npeer_timeout = 1",
              &c) == 0 && conf_finalize (c, errbuf, sizeof (errbuf)) == 0,
        "peer_timeout > keepalive accepted");
    json_decref (c);

    /* a request waiting for a rejoin is answered before its deadline */
    ok (load ("[overlay]\nrejoin_wait = \"10s\"", &c) == 0, "load "
        "rejoin_wait equal to the default rpc_timeout");
    errno = 0;
    ok (conf_finalize (c, errbuf, sizeof (errbuf)) < 0 && errno == EINVAL
        && strstr (errbuf, "t.toml: key 'overlay.rejoin_wait': must be "
                   "less than broker.rpc_timeout (10s)"),
        "rejoin_wait == rpc_timeout rejected: %s", errbuf);
    json_decref (c);
    c = conf_create ();
    ok (conf_set (c, "broker.rpc_timeout=400ms", errbuf,
                  sizeof (errbuf)) == 0
        && conf_finalize (c, errbuf, sizeof (errbuf)) < 0
        && strstr (errbuf, "-o broker.rpc_timeout=400ms: key "
                   "'overlay.rejoin_wait'"),
        "an rpc_timeout below the default rejoin_wait is rejected, naming "
        "the override: %s", errbuf);
    json_decref (c);
    ok (load ("[overlay]\nrejoin_wait = 0\n[broker]\nrpc_timeout = "
              "\"300ms\"", &c) == 0
        && conf_finalize (c, errbuf, sizeof (errbuf)) == 0,
        "rejoin_wait 0 (off) with a short rpc_timeout accepted");
    json_decref (c);
}

static void test_files (void)
{
    char dir[] = "/tmp/test_conf.XXXXXX";
    char path[256], path2[256], path3[256];
    json_t *c;
    long long i;

    if (!mkdtemp (dir))
        bail_out ("mkdtemp failed");
    snprintf (path, sizeof (path), "%s/10-a.toml", dir);
    snprintf (path2, sizeof (path2), "%s/20-b.toml", dir);
    snprintf (path3, sizeof (path3), "%s/notes.txt", dir);
    writefile (path, "[overlay]\nttl = 3\n");
    writefile (path2, "[overlay]\nsndhwm = 5\n[broker]\nlog_level = 7\n");
    writefile (path3, "this is not toml");

    c = conf_create ();
    ok (conf_load (c, dir, errbuf, sizeof (errbuf)) == 0,
        "directory loads (non-.toml ignored): %s", errbuf);
    ok (conf_finalize (c, errbuf, sizeof (errbuf)) == 0, "finalize");
    ok (conf_get_int (c, "overlay.ttl", &i) == 0 && i == 3, "from 10-a");
    ok (conf_get_int (c, "overlay.sndhwm", &i) == 0 && i == 5, "from 20-b");
    ok (conf_get_int (c, "broker.log_level", &i) == 0 && i == 7,
        "from 20-b broker");
    json_decref (c);

    c = conf_create ();
    ok (conf_load (c, path, errbuf, sizeof (errbuf)) == 0, "single file");
    errno = 0;
    ok (conf_load (c, path, errbuf, sizeof (errbuf)) < 0 && errno == EINVAL
        && strstr (errbuf, "key 'overlay.ttl': already defined in"),
        "loading the same key twice rejected: %s", errbuf);
    json_decref (c);

    writefile (path2, "[overlay]\nsndhwm = 5\nttl = 4\n");
    c = conf_create ();
    errno = 0;
    ok (conf_load (c, dir, errbuf, sizeof (errbuf)) < 0 && errno == EINVAL
        && strstr (errbuf, "20-b.toml: key 'overlay.ttl': already defined "
                   "in ") && strstr (errbuf, "10-a.toml"),
        "cross-file duplicate names both files: %s", errbuf);
    ok (json_object_size (c) == 0, "nothing merged on error");
    json_decref (c);

    writefile (path2, "[overlay]\nsndhwm = = 5\n");
    c = conf_create ();
    ok (conf_load (c, dir, errbuf, sizeof (errbuf)) < 0
        && strstr (errbuf, "20-b.toml:2:10: "),
        "syntax error in directory file: %s", errbuf);
    json_decref (c);

    c = conf_create ();
    errno = 0;
    ok (conf_load (c, "/nonexistent/bgn.toml", errbuf, sizeof (errbuf)) < 0
        && errno == ENOENT && strstr (errbuf, "/nonexistent/bgn.toml"),
        "missing file: ENOENT: %s", errbuf);
    json_decref (c);

    unlink (path);
    unlink (path2);
    unlink (path3);
    rmdir (dir);
}

static void test_bootstrap_hosts (void)
{
    json_t *c;
    hostlist_t *hl;

    ok (load ("[broker]\nlog_level = 5\n", &c) == 0
        && conf_finalize (c, errbuf, sizeof (errbuf)) == 0, "no host list");
    errno = 0;
    ok (conf_bootstrap_hosts (c, errbuf, sizeof (errbuf)) == NULL
        && errno == ENOENT, "conf_bootstrap_hosts without hosts: ENOENT");
    json_decref (c);

    ok (load ("[bootstrap]\nhosts = [ { host = \"n[0-2]\" }, "
              "{ host = \"login0\", port = 9 } ]\n", &c) == 0
        && conf_finalize (c, errbuf, sizeof (errbuf)) == 0, "two entries");
    hl = conf_bootstrap_hosts (c, errbuf, sizeof (errbuf));
    ok (hl && hostlist_count (hl) == 4, "four hosts in rank order");
    is (hostlist_nth (hl, 0), "n0", "rank 0 is n0");
    is (hostlist_nth (hl, 3), "login0", "rank 3 is login0");
    hostlist_destroy (&hl);
    json_decref (c);

    ok (load ("[bootstrap]\nhosts = [ { host = \"n[3-1]\" } ]\n", &c) == 0
        && conf_finalize (c, errbuf, sizeof (errbuf)) == 0,
        "a bad range passes the schema");
    errno = 0;
    ok (conf_bootstrap_hosts (c, errbuf, sizeof (errbuf)) == NULL
        && errno == EINVAL && strstr (errbuf, "bootstrap.hosts[0]: "),
        "and fails the expansion naming the entry: %s", errbuf);
    json_decref (c);
}

static void test_endpoints (void)
{
    char out[64];
    static const char *good[] = { "tcp://*:8050", "tcp://eth0:8050",
                                  "tcp://10.0.0.7:*", "tcp://[::1]:80",
                                  "ipc:///run/bgn/overlay",
                                  "tcp://node3.cluster:1" };
    static const char *bad[] = { "", "udp://x:1", "tcp://x", "tcp://:80",
                                 "tcp://x:0", "tcp://x:70000", "tcp://x:y",
                                 "tcp://[::1]80", "ipc://", "tcp://a b:1",
                                 "tcp://%h:8050" };

    ok (conf_expand_template ("tcp://%h:%p", "node3", 8050, out,
                              sizeof (out)) == 0, "expand a template");
    is (out, "tcp://node3:8050", "%%h and %%p expand");
    ok (conf_expand_template ("ipc://%R/%r", "n", 1, out, sizeof (out)) == 0
        && !strcmp (out, "ipc://%R/%r"), "other %%-sequences stay");
    errno = 0;
    ok (conf_expand_template ("tcp://%h:%p", "averyveryveryverylonghostname"
                              "thatdoesnotfit", 1, out, 24) < 0
        && errno == EOVERFLOW, "too long: EOVERFLOW");
    for (size_t i = 0; i < sizeof (good) / sizeof (good[0]); i++)
        ok (conf_check_endpoint (good[i], errbuf, sizeof (errbuf)) == 0,
            "endpoint '%s' is good", good[i]);
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        errbuf[0] = '\0';
        errno = 0;
        ok (conf_check_endpoint (bad[i], errbuf, sizeof (errbuf)) < 0
            && errno == EINVAL && errbuf[0],
            "endpoint '%s' is refused: %s", bad[i], errbuf);
    }
}

static void test_empty_dir (void)
{
    char dir[] = "/tmp/conf-test-empty-XXXXXX";
    json_t *c = conf_create ();

    ok (mkdtemp (dir) != NULL, "an empty directory");
    errno = 0;
    ok (conf_load (c, dir, errbuf, sizeof (errbuf)) < 0 && errno == ENOENT
        && strstr (errbuf, "no *.toml file in this directory"),
        "loading it fails: %s", errbuf);
    rmdir (dir);
    json_decref (c);
}

int main (void)
{
    plan (NO_PLAN);
    test_schema_errors ();
    test_defaults ();
    test_overrides ();
    test_cross_rules ();
    test_files ();
    test_bootstrap_hosts ();
    test_endpoints ();
    test_empty_dir ();
    return done_testing ();
}
