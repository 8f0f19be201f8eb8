/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* boot.c: bootstrap through PMIx, PMI-1, a static host list, or as a
 * singleton.
 *
 * See boot.h for what each method provides and how one is chosen.  PMIx
 * lives in boot_pmix.c (a plugin, boot-pmix.so, built only with libpmix
 * and loaded only when PMIx is the method); this file dispatches.  The static method needs no
 * network exchange at all: everything a peer would publish (its endpoint,
 * its public key, rank 0's instance id) follows from the shared config, so
 * every broker computes the same values on its own.  That is what lets a
 * system instance start in any order, each broker under its own systemd.
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
#include "src/common/libpmi/pmi_client.h"
#include "src/common/libconf/keys.h"
#include "src/common/libutil/errbuf.h"
#include "src/common/libutil/hostlist.h"
#include "boot.h"
#include "bundle.h"
#if HAVE_PMIX
#include <dlfcn.h>
#include <limits.h>
#include "boot_pmix.h"
#endif

#define PMI_BUNDLE_MAX 4096     /* decoded bytes of one rank's bundle */

struct boot {
    pmi_client_t *pmi;       /* PMI-1; NULL otherwise */
#if HAVE_PMIX
    struct boot_pmix *pmix;  /* PMIx; NULL otherwise */
    const struct boot_pmix_ops *px;  /* boot-pmix.so's table, when loaded */
#endif
    int is_static;           /* static host list */
    uint32_t rank;
    uint32_t size;
    zhashx_t *local;         /* values kept in this process */

    /* PMI-1: a rank's values travel as one bundle, a JSON object under
     * "bgn.RANK", so a peer costs one get however many keys it has. */
    json_t *outbox;          /* our values, put at the next barrier */
    int outbox_dirty;
    struct bundle **cache;   /* rank -> its bundle as fetched, or NULL */
    int64_t last_req;        /* the rank of the last bundle asked for */
    int streak;              /* asks in a row, each last_req + 1 */
    int pipeline;            /* the PMI server takes pipelined gets */
    int late_get;            /* ... and gets after finalize */
    int finalized;

    /* static mode */
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

/* The secret half of a CURVE certificate must be private to its owner:
 * anyone who can read it can join the instance (every broker shares it).
 * On success, copy the public key (Z85) to pub[41].
 */
static int check_cert (const char *path, char *pub, char *errbuf,
                       size_t errlen)
{
    char secret[4096];
    struct stat st;
    zcert_t *cert;

    if (snprintf (secret, sizeof (secret), "%s_secret", path)
        >= (int)sizeof (secret))
        return errbuf_fail (errbuf, errlen, EINVAL,
                            "bootstrap.curve_cert: path is too long");
    if (stat (path, &st) < 0)
        return errbuf_fail (errbuf, errlen, EINVAL, "bootstrap.curve_cert %s: "
                            "%s (create the certificate with: bgn keygen %s)",
                            path, strerror (errno), path);
    if (stat (secret, &st) < 0)
        return errbuf_fail (errbuf, errlen, EINVAL, "bootstrap.curve_cert: "
                            "secret file %s: %s (create the certificate with: "
                            "bgn keygen %s)", secret, strerror (errno), path);
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
                            "holds no secret key", secret);
    }
    snprintf (pub, 41, "%s", zcert_public_txt (cert));
    zcert_destroy (&cert);
    return 0;
}

static json_t *entry_of (struct boot *b, uint32_t rank)
{
    return json_array_get (b->entries, (size_t)b->entry[rank]);
}

/* Endpoint (connect template expanded) of 'rank'. */
static int static_endpoint (struct boot *b, uint32_t rank, char *buf,
                            size_t len)
{
    json_t *e = entry_of (b, rank);
    const char *tmpl = json_string_value (json_object_get (e, "connect"));
    int port = (int)json_integer_value (json_object_get (e, "port"));

    if (!tmpl) {
        errno = EINVAL;
        return -1;
    }
    return conf_expand_template (tmpl, hostlist_nth (b->hosts, (int)rank),
                                 port, buf, len);
}

/* A name-based (version 5 layout) uuid from SHA-1 over every rank's host
 * name and endpoint and the shared public key: the same on every broker
 * of one config, different for a different host list or cert. */
static int static_instance (struct boot *b)
{
    zdigest_t *d = zdigest_new ();
    const uint8_t *h;
    uint8_t u[16];
    char ep[1024];

    if (!d)
        return -1;
    zdigest_update (d, (const byte *)"bgn-static-v1", 14);
    for (uint32_t r = 0; r < b->size; r++) {
        const char *host = hostlist_nth (b->hosts, (int)r);
        if (static_endpoint (b, r, ep, sizeof (ep)) < 0) {
            zdigest_destroy (&d);
            return -1;
        }
        zdigest_update (d, (const byte *)host, strlen (host) + 1);
        zdigest_update (d, (const byte *)ep, strlen (ep) + 1);
    }
    zdigest_update (d, (const byte *)b->pubkey, strlen (b->pubkey) + 1);
    for (uint32_t r = 0; b->pubkeys && r < b->size; r++)
        zdigest_update (d, (const byte *)b->pubkeys[r], 41);
    h = zdigest_data (d);
    memcpy (u, h, 16);
    zdigest_destroy (&d);
    u[6] = (u[6] & 0x0f) | 0x50;
    u[8] = (u[8] & 0x3f) | 0x80;
    snprintf (b->instance, sizeof (b->instance),
              "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
              "%02x%02x%02x%02x%02x%02x",
              u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9],
              u[10], u[11], u[12], u[13], u[14], u[15]);
    return 0;
}

/* Per-host keys: every rank's public key from DIR/HOST.cert, after the
 * checks "bgn config check" makes (libconf/keys.h). */
static int static_keys (struct boot *b, json_t *conf, const char *dir,
                        char *errbuf, size_t errlen)
{
    char path[4096];

    if (conf_check_keys (conf, b->hostname, errbuf, errlen) < 0) {
        errno = EINVAL;
        return -1;
    }
    if (!(b->pubkeys = calloc (b->size, sizeof (*b->pubkeys))))
        return errbuf_fail (errbuf, errlen, ENOMEM, "out of memory");
    for (uint32_t r = 0; r < b->size; r++) {
        if (conf_key_path (dir, hostlist_nth (b->hosts, (int)r), path,
                           sizeof (path)) < 0
            || conf_read_pubkey (path, b->pubkeys[r], errbuf, errlen) < 0) {
            errno = EINVAL;
            return -1;
        }
    }
    return 0;   /* b->pubkey stays "": the instance id covers them all */
}

static int static_create (struct boot *b, json_t *conf, const char *confname,
                          char *errbuf, size_t errlen)
{
    const char *cfgname = confname ? confname : "the config";
    const char *want = "", *cert = "", *keys = "";
    json_t *e;
    size_t i;
    int idx, curve = 1;
    char err[256];
    zhashx_t *seen;

    b->is_static = 1;
    b->entries = json_object_get (json_object_get (conf, "bootstrap"),
                                  "hosts");
    if (!(b->hosts = hostlist_create ()))
        return -1;
    json_array_foreach (b->entries, i, e) {
        const char *spec = json_string_value (json_object_get (e, "host"));
        int before = hostlist_count (b->hosts);
        int *ne;
        if (!spec || hostlist_append (b->hosts, spec, err, sizeof (err)) < 0)
            return errbuf_fail (errbuf, errlen, EINVAL,
                                "%s: bootstrap.hosts[%zu]: %s", cfgname, i,
                                spec ? err : "no host");
        int after = hostlist_count (b->hosts);
        if (!(ne = realloc (b->entry, sizeof (int) * (after ? after : 1))))
            return -1;
        b->entry = ne;
        for (int r = before; r < after; r++)
            b->entry[r] = (int)i;
    }
    b->size = (uint32_t)hostlist_count (b->hosts);
    if (b->size == 0)
        return errbuf_fail (errbuf, errlen, EINVAL,
                            "%s: bootstrap.hosts lists no hosts", cfgname);
    /* A host named twice would leave its second rank unreachable. */
    if (!(seen = zhashx_new ()))
        return -1;
    for (uint32_t r = 0; r < b->size; r++) {
        const char *h = hostlist_nth (b->hosts, (int)r);
        if (zhashx_insert (seen, h, (void *)h) < 0) {
            zhashx_destroy (&seen);
            return errbuf_fail (errbuf, errlen, EINVAL,
                                "%s: host '%s' appears more than once in "
                                "bootstrap.hosts", cfgname, h);
        }
    }
    zhashx_destroy (&seen);

    /* Who are we?  bootstrap.hostname, else gethostname(); a fully
     * qualified name also matches its first label. */
    conf_get_string (conf, "bootstrap.hostname", &want);
    if (*want)
        snprintf (b->hostname, sizeof (b->hostname), "%s", want);
    else if (gethostname (b->hostname, sizeof (b->hostname) - 1) < 0)
        return errbuf_fail (errbuf, errlen, EINVAL, "gethostname: %s",
                            strerror (errno));
    if ((idx = hostlist_find (b->hosts, b->hostname)) < 0 && !*want) {
        char *dot = strchr (b->hostname, '.');
        if (dot) {
            *dot = '\0';
            if ((idx = hostlist_find (b->hosts, b->hostname)) < 0)
                *dot = '.';
        }
    }
    if (idx < 0)
        return errbuf_fail (errbuf, errlen, EINVAL,
                            "this host '%s' is not in bootstrap.hosts of %s "
                            "(fix the host list, or set bootstrap.hostname)",
                            b->hostname, cfgname);
    b->rank = (uint32_t)idx;

    /* The shared certificate, or per-host keys. */
    conf_get_bool (conf, "overlay.curve", &curve);
    conf_get_string (conf, "bootstrap.curve_cert", &cert);
    conf_get_string (conf, "bootstrap.curve_keys", &keys);
    if (curve && *keys) {
        if (static_keys (b, conf, keys, errbuf, errlen) < 0)
            return -1;
    }
    else if (curve) {
        if (!*cert)
            return errbuf_fail (errbuf, errlen, EINVAL, "%s: a static "
                                "bootstrap with overlay.curve = true needs "
                                "bootstrap.curve_cert (make one with: bgn "
                                "keygen PATH) or bootstrap.curve_keys",
                                cfgname);
        if (check_cert (cert, b->pubkey, errbuf, errlen) < 0)
            return -1;
    }

    /* Rank 0's event signing key (its public half), if the config names
     * one: what every broker asks for as rank 0's "evkey". */
    const char *evkey = "";
    conf_get_string (conf, "bootstrap.event_key", &evkey);
    snprintf (b->evkey, sizeof (b->evkey), "%s", evkey);

    /* Our bind address, unless the config names one. */
    const char *bind = "";
    conf_get_string (conf, "overlay.bind", &bind);
    if (!*bind) {
        char uri[1024];
        e = entry_of (b, b->rank);
        const char *tmpl = json_string_value (json_object_get (e, "bind"));
        int port = (int)json_integer_value (json_object_get (e, "port"));
        json_t *ovl = json_object_get (conf, "overlay");
        if (!tmpl || !ovl
            || conf_expand_template (tmpl, b->hostname, port, uri,
                                     sizeof (uri)) < 0)
            return errbuf_fail (errbuf, errlen, EINVAL,
                                "%s: bootstrap.hosts[%d].bind is invalid",
                                cfgname, b->entry[b->rank]);
        if (json_object_set_new (ovl, "bind", json_string (uri)) < 0)
            return -1;
    }
    /* Every endpoint must expand; check now rather than at connect. */
    if (static_instance (b) < 0)
        return errbuf_fail (errbuf, errlen, EINVAL, "%s: a bootstrap.hosts "
                            "connect template is too long", cfgname);
    return 0;
}

/* The method bootstrap.method asks for, or the one the environment
 * implies ("auto").  PMI_FD is looked at before PMIX_*: bgn start hands
 * its brokers a PMI_FD but cannot take PMIx variables a surrounding job
 * (mpirun, srun --mpi=pmix) left in its environment, while no PMIx
 * launcher sets PMI_FD.
 */
static const char *choose_method (json_t *conf, json_t *hosts)
{
    const char *m = "auto";

    conf_get_string (conf, "bootstrap.method", &m);
    if (strcmp (m, "auto") != 0)
        return !strcmp (m, "pmi1") ? "pmi" : m;
    if (getenv ("PMI_FD"))
        return "pmi";
    if (getenv ("PMIX_NAMESPACE") && getenv ("PMIX_RANK"))
        return "pmix";
    if (json_is_array (hosts) && json_array_size (hosts) > 0)
        return "static";
    return "single";
}

static int pmi1_create (struct boot *b, double timeout, char *errbuf,
                        size_t errlen)
{
    if (!getenv ("PMI_FD"))
        return errbuf_fail (errbuf, errlen, EINVAL,
                            "bootstrap.method is pmi1 but PMI_FD is not set "
                            "(start the broker under a PMI-1 launcher: "
                            "bgn start, mpiexec, srun --mpi=pmi2)");
    if (!(b->pmi = pmi_client_create_from_env (errbuf, errlen)))
        return -1;
    pmi_client_set_timeout (b->pmi, timeout);
    b->pipeline = getenv ("BGN_PMI_PIPELINE") != NULL;
    b->late_get = getenv ("BGN_PMI_LATE_GET") != NULL;
    b->rank = pmi_client_rank (b->pmi);
    b->size = pmi_client_size (b->pmi);
    if (!(b->cache = calloc (b->size ? b->size : 1, sizeof (*b->cache))))
        return errbuf_fail (errbuf, errlen, ENOMEM, "out of memory");
    if (pmi_client_init (b->pmi, errbuf, errlen) < 0
        || pmi_client_get_maxes (b->pmi, NULL, NULL, NULL, errbuf,
                                 errlen) < 0
        || pmi_client_get_my_kvsname (b->pmi, NULL, 0, errbuf, errlen) < 0)
        return -1;
    return 0;
}

static int pmix_in_env (void)
{
    return getenv ("PMIX_NAMESPACE") && getenv ("PMIX_RANK");
}

static int pmix_create (struct boot *b, const char *plugin_dir,
                        double timeout, char *errbuf, size_t errlen)
{
#if HAVE_PMIX
    char path[PATH_MAX];
    void *dso;

    if (!pmix_in_env ())
        return errbuf_fail (errbuf, errlen, EINVAL,
                            "bootstrap.method is pmix but PMIX_NAMESPACE and "
                            "PMIX_RANK are not set (start the broker under a "
                            "PMIx launcher: mpirun.openmpi, srun --mpi=pmix)");
    /* Loaded here, never unloaded: libpmix may keep threads. */
    snprintf (path, sizeof (path), "%s/%s", plugin_dir, BOOT_PMIX_PLUGIN);
    if (!(dso = dlopen (path, RTLD_NOW | RTLD_LOCAL))
        || !(b->px = dlsym (dso, BOOT_PMIX_SYMBOL)))
        return errbuf_fail (errbuf, errlen, EINVAL,
                            "PMIx is unavailable: %s (reinstall bgn, or use "
                            "a PMI-1 launcher or --boot=static|single)",
                            dlerror ());
    if (!(b->pmix = b->px->create (timeout, errbuf, errlen)))
        return -1;
    b->rank = b->px->rank (b->pmix);
    b->size = b->px->size (b->pmix);
    return 0;
#else
    (void)plugin_dir;
    return errbuf_fail (errbuf, errlen, EINVAL, "PMIx is unavailable: this "
                        "bgn-broker was built without libpmix (install "
                        "libpmix-dev and re-run configure), use a PMI-1 "
                        "launcher (srun --mpi=pmi2, mpiexec.mpich) or "
                        "--boot=static|single");
#endif
}

/* Forget the bundles fetched (all, or rank's). */
static void cache_clear (struct boot *b)
{
    for (uint32_t r = 0; b->cache && r < b->size; r++)
        bundle_destroy (&b->cache[r]);
}

static void cache_drop (struct boot *b, uint32_t rank)
{
    if (b->cache && rank < b->size)
        bundle_destroy (&b->cache[rank]);
}

struct boot *boot_create (json_t *conf, const char *confname,
                          const char *plugin_dir, double timeout,
                          char *errbuf, size_t errlen)
{
    struct boot *b = calloc (1, sizeof (*b));
    json_t *hosts = json_object_get (json_object_get (conf, "bootstrap"),
                                     "hosts");
    const char *method = choose_method (conf, hosts);
    const char *cert = "";
    int curve = 1;

    if (!b)
        return NULL;
    b->last_req = -1;
    b->streak = 0;
    if (!(b->local = zhashx_new ()) || !(b->outbox = json_object ()))
        goto error;
    zhashx_set_destructor (b->local, (zhashx_destructor_fn *)zstr_free);
    zhashx_set_duplicator (b->local, (zhashx_duplicator_fn *)strdup);
    if (!strcmp (method, "pmi")) {
        if (pmi1_create (b, timeout, errbuf, errlen) < 0)
            goto error;
    }
    else if (!strcmp (method, "pmix")) {
        if (pmix_create (b, plugin_dir, timeout, errbuf, errlen) < 0)
            goto error;
    }
    else if (!strcmp (method, "static")) {
        if (!json_is_array (hosts) || json_array_size (hosts) == 0) {
            errbuf_fail (errbuf, errlen, EINVAL, "bootstrap.method is static "
                         "but %s has no bootstrap.hosts",
                         confname ? confname : "the config");
            goto error;
        }
        if (static_create (b, conf, confname, errbuf, errlen) < 0)
            goto error;
        return b;
    }
    else
        b->size = 1;
    /* pmi, pmix and single: a configured certificate must still be
     * private. */
    conf_get_bool (conf, "overlay.curve", &curve);
    conf_get_string (conf, "bootstrap.curve_cert", &cert);
    if (curve && *cert && check_cert (cert, b->pubkey, errbuf, errlen) < 0)
        goto error;
    return b;
error: {
        int saved = errno;
        boot_destroy (&b);
        errno = saved;
        return NULL;
    }
}

void boot_destroy (struct boot **bp)
{
    if (bp && *bp) {
        pmi_client_destroy (&(*bp)->pmi);
#if HAVE_PMIX
        if ((*bp)->pmix)
            (*bp)->px->destroy (&(*bp)->pmix);
#endif
        zhashx_destroy (&(*bp)->local);
        json_decref ((*bp)->outbox);
        cache_clear (*bp);
        free ((*bp)->cache);
        hostlist_destroy (&(*bp)->hosts);
        free ((*bp)->entry);
        free ((*bp)->pubkeys);
        free (*bp);
        *bp = NULL;
    }
}

uint32_t boot_rank (struct boot *b)
{
    return b->rank;
}

uint32_t boot_size (struct boot *b)
{
    return b->size;
}

const char *boot_method (struct boot *b)
{
#if HAVE_PMIX
    if (b->pmix)
        return "pmix";
#endif
    return b->pmi ? "pmi" : b->is_static ? "static" : "single";
}

const char *boot_hostname (struct boot *b)
{
    return b->is_static ? b->hostname : NULL;
}

/* ---- PMI-1 bundles ------------------------------------------------------ */

/* Put our bundle if it changed since the last put. */
static int bundle_flush (struct boot *b, char *errbuf, size_t errlen)
{
    char k[32];
    char *v;
    int rc;

    if (!b->outbox_dirty)
        return 0;
    snprintf (k, sizeof (k), "bgn.%u", (unsigned)b->rank);
    if (!(v = json_dumps (b->outbox, JSON_COMPACT)))
        return errbuf_fail (errbuf, errlen, ENOMEM, "bootstrap values: out of "
                            "memory");
    rc = pmi_client_kvs_put (b->pmi, k, v, errbuf, errlen);
    free (v);
    if (rc == 0)
        b->outbox_dirty = 0;
    return rc;
}

/* A fetched bundle (text) into the cache.  NULL + EPROTO if it is not a
 * JSON object of strings. */
static struct bundle *bundle_store (struct boot *b, uint32_t rank,
                                    const char *text, char *errbuf,
                                    size_t errlen)
{
    struct bundle *o = bundle_parse (text);

    if (!o) {
        if (errno == ENOMEM)
            errbuf_fail (errbuf, errlen, ENOMEM, "bootstrap values of rank "
                         "%u: out of memory", (unsigned)rank);
        else
            errbuf_fail (errbuf, errlen, EPROTO, "bootstrap values of rank "
                         "%u are not a JSON object of strings (each key "
                         "once)", (unsigned)rank);
        return NULL;
    }
    bundle_destroy (&b->cache[rank]);
    b->cache[rank] = o;
    return o;
}

/* Read-ahead: once three ranks in a row have been asked for (a module
 * walking every rank), a bundle not yet here is fetched with those after
 * it in one pipelined exchange, more the longer the walk (2, 4, ... up
 * to BUNDLE_AHEAD): a broker walking every rank costs the PMI server a
 * few round trips, not one per rank, while one that asks for a few ranks
 * here and there (its peers) fetches little more than those.  The ones
 * not asked for stay cached until the next barrier.  Only where the
 * server is known to answer requests written back to back: bgn start's
 * (it sets BGN_PMI_PIPELINE=1); Slurm's pmi2 plugin, for one, drops all
 * but the first line it reads. */
#define BUNDLE_AHEAD 64
static int bundle_prefetch (struct boot *b, uint32_t rank, int ahead)
{
    const char *keys[BUNDLE_AHEAD] = { NULL };
    char names[BUNDLE_AHEAD][32], *values[BUNDLE_AHEAD] = { NULL };
    int lens[BUNDLE_AHEAD], errs[BUNDLE_AHEAD], n = 0, rc = -1;
    uint32_t ranks[BUNDLE_AHEAD];

    for (uint32_t q = rank; q < b->size && n < ahead; q++) {
        if (b->cache[q])
            continue;
        snprintf (names[n], sizeof (names[n]), "bgn.%u", (unsigned)q);
        keys[n] = names[n];
        ranks[n] = q;
        if (!(values[n] = malloc (PMI_BUNDLE_MAX)))
            goto done;
        n++;
    }
    if (pmi_client_kvs_get_many (b->pmi, keys, n, values, PMI_BUNDLE_MAX,
                                 lens, errs, NULL, 0) < 0)
        goto done;
    for (int i = 0; i < n; i++)   /* a bad one is fetched again alone */
        if (lens[i] >= 0)
            bundle_store (b, ranks[i], values[i], NULL, 0);
    rc = 0;
done:
    for (int i = 0; i < n; i++)
        free (values[i]);
    return rc;
}

/* rank's bundle: fetched once per barrier.  NULL + errno (and the
 * message) if the rank published none or it is not an object. */
static struct bundle *fetch_bundle (struct boot *b, uint32_t rank,
                                    char *errbuf, size_t errlen)
{
    char k[32], *v;
    struct bundle *o;
    int len;

    if (rank >= b->size) {
        errbuf_fail (errbuf, errlen, EINVAL, "rank %u is not in 0-%u",
                     (unsigned)rank, (unsigned)b->size - 1);
        return NULL;
    }
    b->streak = (int64_t)rank == b->last_req + 1 ? b->streak + 1 : 1;
    b->last_req = rank;
    if ((o = b->cache[rank]))
        return o;
    if (b->pipeline && b->streak >= 3) {
        int ahead = b->streak >= 8 ? BUNDLE_AHEAD : 1 << (b->streak - 2);
        if (bundle_prefetch (b, rank, ahead) == 0 && (o = b->cache[rank]))
            return o;
    }
    snprintf (k, sizeof (k), "bgn.%u", (unsigned)rank);
    if (!(v = malloc (PMI_BUNDLE_MAX)))
        return NULL;
    len = pmi_client_kvs_get (b->pmi, k, v, PMI_BUNDLE_MAX, errbuf, errlen);
    o = len < 0 ? NULL : bundle_store (b, rank, v, errbuf, errlen);
    free (v);
    return o;
}

static int make_key (char *buf, size_t len, uint32_t rank, const char *key)
{
    int n = snprintf (buf, len, "bgn.%u.%s", (unsigned)rank, key);
    if (n < 0 || (size_t)n >= len) {
        errno = EINVAL;
        return -1;
    }
    return 0;
}

static int is_derived_key (const char *key)
{
    return !strcmp (key, "endpoint") || !strcmp (key, "pubkey")
           || !strcmp (key, "instance");
}

int boot_put (struct boot *b, const char *key, const char *value,
              char *errbuf, size_t errlen)
{
    char k[128];
    if (make_key (k, sizeof (k), b->rank, key) < 0) {
        snprintf (errbuf, errlen, "bootstrap key '%s' is too long", key);
        return -1;
    }
    /* Static: peers compute these from the config, nobody reads ours. */
    if (b->is_static && is_derived_key (key))
        return 0;
#if HAVE_PMIX
    if (b->pmix)
        return b->px->put (b->pmix, k, value, errbuf, errlen);
#endif
    if (!b->pmi) {
        zhashx_update (b->local, k, (void *)value);
        return 0;
    }
    if (json_object_set_new (b->outbox, key, json_string (value)) < 0)
        return errbuf_fail (errbuf, errlen, EINVAL, "bootstrap value of %s is "
                            "not UTF-8 text", k);
    b->outbox_dirty = 1;
    return 0;
}

static int copy_out (const char *v, char *buf, size_t len, const char *what,
                     char *errbuf, size_t errlen)
{
    if (strlen (v) >= len)
        return errbuf_fail (errbuf, errlen, EOVERFLOW,
                            "bootstrap value of %s is too long", what);
    strcpy (buf, v);
    return 0;
}

static int static_get (struct boot *b, uint32_t rank, const char *key,
                       const char *k, char *buf, size_t len, char *errbuf,
                       size_t errlen)
{
    if (rank >= b->size)
        return errbuf_fail (errbuf, errlen, EINVAL, "rank %u is not in 0-%u",
                            (unsigned)rank, (unsigned)b->size - 1);
    if (!strcmp (key, "endpoint")) {
        if (static_endpoint (b, rank, buf, len) < 0)
            return errbuf_fail (errbuf, errlen, errno,
                                "endpoint of rank %u: %s", (unsigned)rank,
                                strerror (errno));
        return 0;
    }
    if (!strcmp (key, "pubkey")) {
        if (b->pubkeys)
            return copy_out (b->pubkeys[rank], buf, len, k, errbuf, errlen);
        if (!*b->pubkey)
            return errbuf_fail (errbuf, errlen, ENOENT,
                                "no bootstrap.curve_cert, so no public key");
        return copy_out (b->pubkey, buf, len, k, errbuf, errlen);
    }
    if (!strcmp (key, "instance"))
        return copy_out (b->instance, buf, len, k, errbuf, errlen);
    /* Signing keys cannot travel without an exchange: rank 0's is the
     * config's bootstrap.event_key, if any; the others have none (empty,
     * not an error: the overlay then takes their word unsigned, and rank
     * 0's events too without an event key, and says so). */
    if (!strcmp (key, "evkey") && rank != b->rank)
        return copy_out (rank == 0 ? b->evkey : "", buf, len, k, errbuf,
                         errlen);
    if (rank != b->rank)
        return errbuf_fail (errbuf, errlen, ENOENT,
                            "bootstrap key %s: a static bootstrap has no "
                            "exchange with other ranks", k);
    return 1;   /* our own value: look it up locally */
}

int boot_get (struct boot *b, uint32_t rank, const char *key, char *buf,
              size_t len, char *errbuf, size_t errlen)
{
    char k[128];
    if (make_key (k, sizeof (k), rank, key) < 0) {
        snprintf (errbuf, errlen, "bootstrap key '%s' is too long", key);
        return -1;
    }
    if (b->is_static) {
        int rc = static_get (b, rank, key, k, buf, len, errbuf, errlen);
        if (rc <= 0)
            return rc;
    }
#if HAVE_PMIX
    if (b->pmix)
        return b->px->get (b->pmix, rank, k, buf, len, errbuf, errlen);
#endif
    if (!b->pmi) {
        const char *v = zhashx_lookup (b->local, k);
        if (!v)
            return errbuf_fail (errbuf, errlen, ENOENT,
                                "bootstrap key %s not found", k);
        return copy_out (v, buf, len, k, errbuf, errlen);
    }
    /* Our own values before they went out; else the rank's bundle (for
     * our own rank: what an earlier process of it published). */
    json_t *own = rank == b->rank ? json_object_get (b->outbox, key) : NULL;
    const char *v = json_string_value (own);
    if (!v) {
        struct bundle *bundle = fetch_bundle (b, rank, errbuf, errlen);
        if (!bundle)
            return -1;
        if (!(v = bundle_value (bundle, key)))
            return errbuf_fail (errbuf, errlen, ENOENT,
                                "bootstrap key %s not found", k);
    }
    return copy_out (v, buf, len, k, errbuf, errlen);
}

int boot_refresh (struct boot *b, uint32_t rank, const char *key, char *buf,
                  size_t len, char *errbuf, size_t errlen)
{
    /* PMI-1 says nothing may be asked after finalize: only a server that
     * says it takes it (bgn start's) is asked again */
    if (b->pmi && b->finalized && !b->late_get)
        return errbuf_fail (errbuf, errlen, ENOTSUP, "the PMI exchange is "
                            "closed (finalized)");
    if (b->pmi && rank != b->rank)
        cache_drop (b, rank);
    return boot_get (b, rank, key, buf, len, errbuf, errlen);
}

int boot_lasting (struct boot *b)
{
    return b->pmi && b->late_get && !b->is_static;
}

int boot_barrier (struct boot *b, char *errbuf, size_t errlen)
{
#if HAVE_PMIX
    if (b->pmix)
        return b->px->fence (b->pmix, errbuf, errlen);
#endif
    if (!b->pmi)
        return 0;
    if (bundle_flush (b, errbuf, errlen) < 0
        || pmi_client_barrier (b->pmi, errbuf, errlen) < 0)
        return -1;
    cache_clear (b);                    /* peers may have put anew */
    b->last_req = -1;
    b->streak = 0;
    return 0;
}

#define BOOT_LATE_TIMEOUT 5.0   /* s a get after finalize may wait */

int boot_finalize (struct boot *b, char *errbuf, size_t errlen)
{
#if HAVE_PMIX
    if (b->pmix)
        return b->px->finalize (b->pmix, errbuf, errlen);
#endif
    if (!b->pmi)
        return 0;
    if (bundle_flush (b, errbuf, errlen) < 0)
        return -1;
    b->finalized = 1;
    /* from now on a get (a module's, when it first needs a rank's value)
     * holds up the broker's reactor: a few seconds at most */
    if (b->late_get && pmi_client_get_timeout (b->pmi) > BOOT_LATE_TIMEOUT)
        pmi_client_set_timeout (b->pmi, BOOT_LATE_TIMEOUT);
    return pmi_client_finalize (b->pmi, errbuf, errlen);
}
