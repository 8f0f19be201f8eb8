/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test/hosttab.c: what a bootstrap.hosts table implies (hosttab.h).
 *
 * Every broker of one configuration must compute the same endpoints,
 * keys and instance id; a rank the caller names must be the host it says;
 * a certificate is accepted in bgn's two-file form and in Flux's one-file
 * form, and refused when its secret is readable by others.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <czmq.h>

#include "src/common/libtap/tap.h"
#include "src/common/libconf/conf.h"
#include "src/broker/hosttab.h"

static char dir[] = "/tmp/hosttab.XXXXXX";

static json_t *config (const char *text)
{
    char err[256] = "";
    json_t *conf = conf_create ();

    if (!conf || conf_load_string (conf, "test.toml", text, err,
                                   sizeof (err)) < 0
        || conf_finalize (conf, err, sizeof (err)) < 0) {
        diag ("config: %s", err);
        json_decref (conf);
        return NULL;
    }
    return conf;
}

/* A table of 4 hosts with the shared certificate at CERT. */
static json_t *four_hosts (const char *cert)
{
    char text[1024];

    snprintf (text, sizeof (text),
              "[bootstrap]\n"
              "curve_cert = \"%s\"\n"
              "default_port = 8123\n"
              "hosts = [ { host = \"node[0-2]\" },\n"
              "          { host = \"gw\", connect = \"ipc:///x/%%h\", "
              "bind = \"ipc:///x/%%h\" } ]\n", cert);
    return config (text);
}

static void make_cert (const char *path, int flux_form, mode_t mode)
{
    zcert_t *c = zcert_new ();
    char secret[512];

    if (flux_form) {
        /* one file holding both halves, as flux keygen writes it */
        zcert_save_secret (c, path);
    }
    else
        zcert_save (c, path);
    snprintf (secret, sizeof (secret), "%s%s", path, flux_form ? "" : "_secret");
    chmod (secret, mode);
    zcert_destroy (&c);
}

static void check_table (const char *cert)
{
    char err[256] = "", a[256], b[256];
    json_t *conf = four_hosts (cert), *conf2 = four_hosts (cert);
    struct hosttab *t, *t2;

    t = hosttab_create (conf, "test.toml", 1, "node1", err, sizeof (err));
    ok (t != NULL, "a table of 4 hosts, rank 1 given: created (%s)", err);
    t2 = hosttab_create (conf2, "test.toml", 3, "gw", err, sizeof (err));
    ok (t2 != NULL, "... and at rank 3");
    if (!t || !t2)
        bail_out ("no table");
    ok (hosttab_size (t) == 4 && hosttab_rank (t) == 1
        && !strcmp (hosttab_hostname (t), "node1"), "size 4, rank 1, node1");
    ok (hosttab_host (t, 3) && !strcmp (hosttab_host (t, 3), "gw")
        && hosttab_host (t, 4) == NULL, "rank 3 is gw; rank 4 is none");

    ok (hosttab_get (t, 2, "endpoint", a, sizeof (a), err, sizeof (err)) == 0
        && !strcmp (a, "tcp://node2:8123"),
        "rank 2's endpoint: the default connect template (%s)", a);
    ok (hosttab_get (t, 3, "endpoint", a, sizeof (a), err, sizeof (err)) == 0
        && !strcmp (a, "ipc:///x/gw"), "rank 3's: its own template");
    ok (!strcmp (json_string_value (json_object_get (
                     json_object_get (conf, "overlay"), "bind")),
                 "tcp://*:8123"),
        "overlay.bind is set to our host's bind template");
    ok (!strcmp (json_string_value (json_object_get (
                     json_object_get (conf2, "overlay"), "bind")),
                 "ipc:///x/gw"), "... at rank 3 too");

    ok (hosttab_get (t, 0, "instance", a, sizeof (a), err, sizeof (err)) == 0
        && hosttab_get (t2, 0, "instance", b, sizeof (b), err,
                        sizeof (err)) == 0
        && !strcmp (a, b) && strlen (a) == 36,
        "both ranks derive the same instance id");
    ok (hosttab_get (t, 3, "pubkey", a, sizeof (a), err, sizeof (err)) == 0
        && hosttab_get (t2, 0, "pubkey", b, sizeof (b), err, sizeof (err)) == 0
        && !strcmp (a, b) && strlen (a) == 40,
        "every rank's public key is the shared certificate's");
    ok (hosttab_get (t, 2, "evkey", a, sizeof (a), err, sizeof (err)) == 0
        && *a == '\0', "another rank's event key: empty, not an error");
    ok (hosttab_get (t, 1, "evkey", a, sizeof (a), err, sizeof (err)) == 1,
        "our own event key: 1 (the caller keeps it)");
    errno = 0;
    ok (hosttab_get (t, 2, "other", a, sizeof (a), err, sizeof (err)) < 0
        && errno == ENOENT, "another rank's other value: ENOENT (%s)", err);
    errno = 0;
    ok (hosttab_get (t, 4, "endpoint", a, sizeof (a), err, sizeof (err)) < 0
        && errno == EINVAL, "rank 4: EINVAL (%s)", err);
    errno = 0;
    ok (hosttab_get (t, 2, "endpoint", a, 4, err, sizeof (err)) < 0,
        "a buffer too small: an error, not a truncated endpoint");
    ok (hosttab_derived ("endpoint") && hosttab_derived ("pubkey")
        && hosttab_derived ("instance") && !hosttab_derived ("evkey"),
        "derived: endpoint, pubkey, instance");
    hosttab_destroy (&t);
    hosttab_destroy (&t2);
    ok (t == NULL, "destroy clears the pointer");
    hosttab_destroy (&t);
    json_decref (conf);
    json_decref (conf2);
}

static void check_identity (const char *cert)
{
    char err[256] = "";
    json_t *conf = four_hosts (cert);
    struct hosttab *t;

    errno = 0;
    t = hosttab_create (conf, "test.toml", 1, "node2", err, sizeof (err));
    ok (t == NULL && errno == EINVAL && strstr (err, "rank 1 is host 'node1'")
        && strstr (err, "'node2'"), "a rank whose host is another: refused, "
        "naming both (%s)", err);
    errno = 0;
    t = hosttab_create (conf, "test.toml", 4, "node1", err, sizeof (err));
    ok (t == NULL && errno == EINVAL && strstr (err, "rank 4"),
        "a rank past the table: refused (%s)", err);
    json_decref (conf);

    conf = config ("[bootstrap]\nhostname = \"node2\"\n"
                   "hosts = [ { host = \"node[0-3]\" } ]\n"
                   "[overlay]\ncurve = false\n");
    t = conf ? hosttab_create (conf, "test.toml", -1, NULL, err, sizeof (err))
             : NULL;
    ok (t && hosttab_rank (t) == 2, "no rank given: found by "
        "bootstrap.hostname (rank 2)");
    errno = 0;
    ok (t && hosttab_get (t, 0, "pubkey", err, sizeof (err), err,
                          sizeof (err)) < 0 && errno == ENOENT,
        "CURVE off: no public key (ENOENT)");
    hosttab_destroy (&t);
    json_decref (conf);

    conf = config ("[bootstrap]\nhostname = \"n1\"\n"
                   "hosts = [ { host = \"n[0-1]\" } ]\n"
                   "[overlay]\ncurve = false\nbind = \"tcp://127.0.0.1:*\"\n");
    errno = 0;
    t = conf ? hosttab_create (conf, "test.toml", -1, NULL, err, sizeof (err))
             : NULL;
    ok (t == NULL && errno == EINVAL && strstr (err, "overlay.bind")
        && strstr (err, "at random"), "an overlay.bind at a random port: "
        "refused (%s)", err);
    json_decref (conf);

    conf = config ("[bootstrap]\nhosts = [ { host = \"a\" }, { host = \"a\" } ]"
                   "\nhostname = \"a\"\n[overlay]\ncurve = false\n");
    errno = 0;
    t = conf ? hosttab_create (conf, "test.toml", -1, NULL, err, sizeof (err))
             : NULL;
    ok (t == NULL && errno == EINVAL && strstr (err, "more than once"),
        "a host named twice: refused (%s)", err);
    json_decref (conf);
}

static void check_certs (void)
{
    char bgn[512], flux[512], open_[512], pub[41], err[512] = "";

    snprintf (bgn, sizeof (bgn), "%s/bgn.cert", dir);
    snprintf (flux, sizeof (flux), "%s/flux.cert", dir);
    snprintf (open_, sizeof (open_), "%s/open.cert", dir);
    make_cert (bgn, 0, 0600);
    make_cert (flux, 1, 0600);
    make_cert (open_, 1, 0644);
    ok (hosttab_check_cert (bgn, pub, err, sizeof (err)) == 0
        && strlen (pub) == 40, "bgn keygen's form: PATH and PATH_secret");
    ok (hosttab_check_cert (flux, pub, err, sizeof (err)) == 0
        && strlen (pub) == 40, "flux keygen's form: one file, mode 600 (%s)",
        err);
    errno = 0;
    ok (hosttab_check_cert (open_, pub, err, sizeof (err)) < 0
        && errno == EINVAL && strstr (err, "chmod 600"),
        "one file readable by others: refused (%s)", err);
    errno = 0;
    snprintf (open_, sizeof (open_), "%s/none.cert", dir);
    ok (hosttab_check_cert (open_, pub, err, sizeof (err)) < 0
        && errno == EINVAL && strstr (err, "bgn keygen"),
        "a missing certificate: refused, saying how to make one (%s)", err);
    check_table (bgn);
    check_identity (flux);
}

int main (void)
{
    char cmd[600];

    plan (NO_PLAN);
    if (!mkdtemp (dir))
        bail_out ("mkdtemp failed");
    check_certs ();
    snprintf (cmd, sizeof (cmd), "rm -rf '%s'", dir);
    if (system (cmd) != 0)
        diag ("could not remove %s", dir);
    return done_testing ();
}
