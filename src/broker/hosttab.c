/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* hosttab.c: a static bootstrap, what bootstrap.hosts implies (hosttab.h).
 *
 * Nothing here talks to anyone: every value is computed from the shared
 * configuration, the same on every broker of it.  Moved out of the
 * broker's boot.c so that the Flux host, booting a flux-broker from its
 * [bootstrap] table, follows the same rules rather than a copy.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <czmq.h>

#include "src/common/libconf/conf.h"
#include "src/common/libconf/keys.h"
#include "src/common/libutil/errbuf.h"
#include "src/common/libutil/hostlist.h"
#include "hosttab.h"

struct hosttab {
    uint32_t rank;
    uint32_t size;
    hostlist_t *hosts;       /* rank -> host name */
    int *entry;              /* rank -> index in bootstrap.hosts */
    json_t *entries;         /* bootstrap.hosts (a reference) */
    char hostname[256];      /* ours, as matched */
    char pubkey[41];         /* shared cert's public key, "" without CURVE */
    char evkey[65];          /* bootstrap.event_key: rank 0's, "" if none */
    char (*pubkeys)[41];     /* per-host keys (bootstrap.curve_keys): rank
                                -> public key, or NULL */
    char instance[37];       /* derived instance id */
};

int hosttab_check_cert (const char *path, char pub[41], char *errbuf,
                        size_t errlen)
{
    char secret[4096];
    struct stat pst, st;
    zcert_t *cert;

    if (snprintf (secret, sizeof (secret), "%s_secret", path)
        >= (int)sizeof (secret))
        return errbuf_fail (errbuf, errlen, EINVAL,
                            "bootstrap.curve_cert: path is too long");
    if (stat (path, &pst) < 0)
        return errbuf_fail (errbuf, errlen, EINVAL, "bootstrap.curve_cert %s: "
                            "%s (create the certificate with: bgn keygen %s)",
                            path, strerror (errno), path);
    /* no PATH_secret: the secret is in PATH, as flux keygen writes it */
    if (stat (secret, &st) < 0) {
        if (errno != ENOENT)
            return errbuf_fail (errbuf, errlen, EINVAL, "bootstrap.curve_cert: "
                                "secret file %s: %s (create the certificate "
                                "with: bgn keygen %s)", secret,
                                strerror (errno), path);
        st = pst;
        snprintf (secret, sizeof (secret), "%s", path);
    }
    if (!S_ISREG (st.st_mode))
        return errbuf_fail (errbuf, errlen, EINVAL,
                            "bootstrap.curve_cert: %s is not a regular file",
                            secret);
    if (st.st_mode & 077)
        return errbuf_fail (errbuf, errlen, EINVAL, "bootstrap.curve_cert: %s "
                            "is readable or writable by group or others (mode "
                            "%04o); fix with: chmod 600 %s", secret,
                            (unsigned)(st.st_mode & 07777), secret);
    if (!(cert = zcert_load (path)))
        return errbuf_fail (errbuf, errlen, EINVAL,
                            "bootstrap.curve_cert: cannot parse %s", path);
    if (!strcmp (zcert_secret_txt (cert),
                 "0000000000000000000000000000000000000000")) {
        zcert_destroy (&cert);
        return errbuf_fail (errbuf, errlen, EINVAL, "bootstrap.curve_cert: %s "
                            "holds no secret key (create the certificate "
                            "with: bgn keygen %s)", secret, path);
    }
    snprintf (pub, 41, "%s", zcert_public_txt (cert));
    zcert_destroy (&cert);
    return 0;
}

static json_t *entry_of (const struct hosttab *t, uint32_t rank)
{
    return json_array_get (t->entries, (size_t)t->entry[rank]);
}

/* Endpoint (connect template expanded) of 'rank'. */
static int endpoint_of (const struct hosttab *t, uint32_t rank, char *buf,
                        size_t len)
{
    json_t *e = entry_of (t, rank);
    const char *tmpl = json_string_value (json_object_get (e, "connect"));
    int port = (int)json_integer_value (json_object_get (e, "port"));

    if (!tmpl) {
        errno = EINVAL;
        return -1;
    }
    return conf_expand_template (tmpl, hostlist_nth (t->hosts, (int)rank),
                                 port, buf, len);
}

/* A name-based (version 5 layout) uuid from SHA-1 over every rank's host
 * name and endpoint and the shared public key: the same on every broker
 * of one config, different for a different host list or cert. */
static int make_instance (struct hosttab *t)
{
    zdigest_t *d = zdigest_new ();
    const uint8_t *h;
    uint8_t u[16];
    char ep[1024];

    if (!d)
        return -1;
    zdigest_update (d, (const byte *)"bgn-static-v1", 14);
    for (uint32_t r = 0; r < t->size; r++) {
        const char *host = hostlist_nth (t->hosts, (int)r);
        if (endpoint_of (t, r, ep, sizeof (ep)) < 0) {
            zdigest_destroy (&d);
            return -1;
        }
        zdigest_update (d, (const byte *)host, strlen (host) + 1);
        zdigest_update (d, (const byte *)ep, strlen (ep) + 1);
    }
    zdigest_update (d, (const byte *)t->pubkey, strlen (t->pubkey) + 1);
    for (uint32_t r = 0; t->pubkeys && r < t->size; r++)
        zdigest_update (d, (const byte *)t->pubkeys[r], 41);
    h = zdigest_data (d);
    memcpy (u, h, 16);
    zdigest_destroy (&d);
    u[6] = (u[6] & 0x0f) | 0x50;
    u[8] = (u[8] & 0x3f) | 0x80;
    snprintf (t->instance, sizeof (t->instance),
              "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
              "%02x%02x%02x%02x%02x%02x",
              u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9],
              u[10], u[11], u[12], u[13], u[14], u[15]);
    return 0;
}

/* Per-host keys: every rank's public key from DIR/HOST.cert, after the
 * checks "bgn config check" makes (libconf/keys.h). */
static int read_keys (struct hosttab *t, json_t *conf, const char *dir,
                        char *errbuf, size_t errlen)
{
    char path[4096];

    if (conf_check_keys (conf, t->hostname, errbuf, errlen) < 0) {
        errno = EINVAL;
        return -1;
    }
    if (!(t->pubkeys = calloc (t->size, sizeof (*t->pubkeys))))
        return errbuf_fail (errbuf, errlen, ENOMEM, "out of memory");
    for (uint32_t r = 0; r < t->size; r++) {
        if (conf_key_path (dir, hostlist_nth (t->hosts, (int)r), path,
                           sizeof (path)) < 0
            || conf_read_pubkey (path, t->pubkeys[r], errbuf, errlen) < 0) {
            errno = EINVAL;
            return -1;
        }
    }
    return 0;   /* t->pubkey stays "": the instance id covers them all */
}

/* Who are we?  The rank the caller knows, whose host must be the name it
 * gives; else bootstrap.hostname, else gethostname(), a fully qualified
 * name also matching its first label. */
static int find_self (struct hosttab *t, json_t *conf, const char *cfgname,
                      int rank, const char *hostname, char *errbuf,
                      size_t errlen)
{
    const char *want = "";
    int idx;

    if (rank >= 0) {
        if ((uint32_t)rank >= t->size)
            return errbuf_fail (errbuf, errlen, EINVAL, "rank %d is not in "
                                "bootstrap.hosts of %s (%u hosts)", rank,
                                cfgname, (unsigned)t->size);
        if (hostname && strcmp (hostname, hostlist_nth (t->hosts, rank)) != 0)
            return errbuf_fail (errbuf, errlen, EINVAL, "rank %d is host '%s' "
                                "in bootstrap.hosts of %s, not this host "
                                "'%s'", rank, hostlist_nth (t->hosts, rank),
                                cfgname, hostname);
        snprintf (t->hostname, sizeof (t->hostname), "%s",
                  hostlist_nth (t->hosts, rank));
        t->rank = (uint32_t)rank;
        return 0;
    }
    conf_get_string (conf, "bootstrap.hostname", &want);
    if (*want)
        snprintf (t->hostname, sizeof (t->hostname), "%s", want);
    else if (gethostname (t->hostname, sizeof (t->hostname) - 1) < 0)
        return errbuf_fail (errbuf, errlen, EINVAL, "gethostname: %s",
                            strerror (errno));
    if ((idx = hostlist_find (t->hosts, t->hostname)) < 0 && !*want) {
        char *dot = strchr (t->hostname, '.');
        if (dot) {
            *dot = '\0';
            if ((idx = hostlist_find (t->hosts, t->hostname)) < 0)
                *dot = '.';
        }
    }
    if (idx < 0)
        return errbuf_fail (errbuf, errlen, EINVAL,
                            "this host '%s' is not in bootstrap.hosts of %s "
                            "(fix the host list, or set bootstrap.hostname)",
                            t->hostname, cfgname);
    t->rank = (uint32_t)idx;
    return 0;
}

static int fill (struct hosttab *t, json_t *conf, const char *confname,
                 int rank, const char *hostname, char *errbuf, size_t errlen)
{
    const char *cfgname = confname ? confname : "the config";
    const char *cert = "", *keys = "";
    json_t *e;
    size_t i;
    int curve = 1;
    char err[256];
    zhashx_t *seen;

    t->entries = json_object_get (json_object_get (conf, "bootstrap"),
                                  "hosts");
    if (!(t->hosts = hostlist_create ()))
        return -1;
    json_array_foreach (t->entries, i, e) {
        const char *spec = json_string_value (json_object_get (e, "host"));
        int before = hostlist_count (t->hosts);
        int *ne;
        if (!spec || hostlist_append (t->hosts, spec, err, sizeof (err)) < 0)
            return errbuf_fail (errbuf, errlen, EINVAL,
                                "%s: bootstrap.hosts[%zu]: %s", cfgname, i,
                                spec ? err : "no host");
        int after = hostlist_count (t->hosts);
        if (!(ne = realloc (t->entry, sizeof (int) * (after ? after : 1))))
            return -1;
        t->entry = ne;
        for (int r = before; r < after; r++)
            t->entry[r] = (int)i;
    }
    t->size = (uint32_t)hostlist_count (t->hosts);
    if (t->size == 0)
        return errbuf_fail (errbuf, errlen, EINVAL,
                            "%s: bootstrap.hosts lists no hosts", cfgname);
    /* A host named twice would leave its second rank unreachable. */
    if (!(seen = zhashx_new ()))
        return -1;
    for (uint32_t r = 0; r < t->size; r++) {
        const char *h = hostlist_nth (t->hosts, (int)r);
        if (zhashx_insert (seen, h, (void *)h) < 0) {
            zhashx_destroy (&seen);
            return errbuf_fail (errbuf, errlen, EINVAL,
                                "%s: host '%s' appears more than once in "
                                "bootstrap.hosts", cfgname, h);
        }
    }
    zhashx_destroy (&seen);

    if (find_self (t, conf, cfgname, rank, hostname, errbuf, errlen) < 0)
        return -1;

    /* The shared certificate, or per-host keys. */
    conf_get_bool (conf, "overlay.curve", &curve);
    conf_get_string (conf, "bootstrap.curve_cert", &cert);
    conf_get_string (conf, "bootstrap.curve_keys", &keys);
    if (curve && *keys) {
        if (read_keys (t, conf, keys, errbuf, errlen) < 0)
            return -1;
    }
    else if (curve) {
        if (!*cert)
            return errbuf_fail (errbuf, errlen, EINVAL, "%s: a static "
                                "bootstrap with overlay.curve = true needs "
                                "bootstrap.curve_cert (make one with: bgn "
                                "keygen PATH) or bootstrap.curve_keys",
                                cfgname);
        if (hosttab_check_cert (cert, t->pubkey, errbuf, errlen) < 0)
            return -1;
    }

    /* Rank 0's event signing key (its public half), if the config names
     * one: what every broker asks for as rank 0's "evkey". */
    const char *evkey = "";
    conf_get_string (conf, "bootstrap.event_key", &evkey);
    snprintf (t->evkey, sizeof (t->evkey), "%s", evkey);

    /* Our bind address, unless the config names one: then at a port of
     * its own, since peers connect where the table says we are. */
    const char *bind = "";
    conf_get_string (conf, "overlay.bind", &bind);
    if (*bind && (strstr (bind, ":*") || !strcmp (bind, "ipc://*")
                  || (strlen (bind) > 2 && !strcmp (bind + strlen (bind) - 2,
                                                    ":0"))))
        return errbuf_fail (errbuf, errlen, EINVAL, "%s: overlay.bind '%s' "
                            "picks a port or path at random, but peers "
                            "connect where bootstrap.hosts says: bind at "
                            "its connect URI's port (or leave overlay.bind "
                            "unset)", cfgname, bind);
    if (!*bind) {
        char uri[1024];
        e = entry_of (t, t->rank);
        const char *tmpl = json_string_value (json_object_get (e, "bind"));
        int port = (int)json_integer_value (json_object_get (e, "port"));
        json_t *ovl = json_object_get (conf, "overlay");
        if (!tmpl || !ovl
            || conf_expand_template (tmpl, t->hostname, port, uri,
                                     sizeof (uri)) < 0)
            return errbuf_fail (errbuf, errlen, EINVAL,
                                "%s: bootstrap.hosts[%d].bind is invalid",
                                cfgname, t->entry[t->rank]);
        if (json_object_set_new (ovl, "bind", json_string (uri)) < 0)
            return -1;
    }
    /* Every endpoint must expand; check now rather than at connect. */
    if (make_instance (t) < 0)
        return errbuf_fail (errbuf, errlen, EINVAL, "%s: a bootstrap.hosts "
                            "connect template is too long", cfgname);
    return 0;
}

int hosttab_get (const struct hosttab *t, uint32_t rank, const char *key,
                 char *buf, size_t len, char *errbuf, size_t errlen)
{
    if (rank >= t->size)
        return errbuf_fail (errbuf, errlen, EINVAL, "rank %u is not in 0-%u",
                            (unsigned)rank, (unsigned)t->size - 1);
    if (!strcmp (key, "endpoint")) {
        if (endpoint_of (t, rank, buf, len) < 0)
            return errbuf_fail (errbuf, errlen, errno,
                                "endpoint of rank %u: %s", (unsigned)rank,
                                strerror (errno));
        return 0;
    }
    if (!strcmp (key, "pubkey")) {
        if (t->pubkeys)
            return errbuf_copy_value (t->pubkeys[rank], buf, len, key,
                                      errbuf, errlen);
        if (!*t->pubkey)
            return errbuf_fail (errbuf, errlen, ENOENT,
                                "no bootstrap.curve_cert, so no public key");
        return errbuf_copy_value (t->pubkey, buf, len, key, errbuf, errlen);
    }
    if (!strcmp (key, "instance"))
        return errbuf_copy_value (t->instance, buf, len, key, errbuf, errlen);
    /* Signing keys cannot travel without an exchange: rank 0's is the
     * config's bootstrap.event_key, if any; the others have none (empty,
     * not an error: the overlay then takes their word unsigned, and rank
     * 0's events too without an event key, and says so). */
    if (!strcmp (key, "evkey") && rank != t->rank)
        return errbuf_copy_value (rank == 0 ? t->evkey : "", buf, len, key,
                                  errbuf, errlen);
    if (rank != t->rank)
        return errbuf_fail (errbuf, errlen, ENOENT,
                            "bootstrap key %s of rank %u: a static "
                            "bootstrap has no exchange with other ranks",
                            key, (unsigned)rank);
    return 1;   /* our own value: look it up locally */
}

struct hosttab *hosttab_create (json_t *conf, const char *confname,
                                int rank, const char *hostname,
                                char *errbuf, size_t errlen)
{
    struct hosttab *t = calloc (1, sizeof (*t));
    json_t *hosts = json_object_get (json_object_get (conf, "bootstrap"),
                                     "hosts");

    if (!t) {
        errbuf_fail (errbuf, errlen, ENOMEM, "out of memory");
        return NULL;
    }
    if (!json_is_array (hosts) || json_array_size (hosts) == 0) {
        errbuf_fail (errbuf, errlen, EINVAL, "%s has no bootstrap.hosts",
                     confname ? confname : "the config");
        goto error;
    }
    if (fill (t, conf, confname, rank, hostname, errbuf, errlen) < 0)
        goto error;
    return t;
error: {
        int saved = errno;
        hosttab_destroy (&t);
        errno = saved;
        return NULL;
    }
}

void hosttab_destroy (struct hosttab **tp)
{
    if (tp && *tp) {
        hostlist_destroy (&(*tp)->hosts);
        free ((*tp)->entry);
        free ((*tp)->pubkeys);
        free (*tp);
        *tp = NULL;
    }
}

uint32_t hosttab_rank (const struct hosttab *t)
{
    return t->rank;
}

uint32_t hosttab_size (const struct hosttab *t)
{
    return t->size;
}

const char *hosttab_hostname (const struct hosttab *t)
{
    return t->hostname;
}

const char *hosttab_host (const struct hosttab *t, uint32_t rank)
{
    return rank < t->size ? hostlist_nth (t->hosts, (int)rank) : NULL;
}

int hosttab_derived (const char *key)
{
    return !strcmp (key, "endpoint") || !strcmp (key, "pubkey")
           || !strcmp (key, "instance");
}
