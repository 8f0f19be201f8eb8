/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* boot.c: bootstrap through PMIx, PMI-1, a static host list, or as a
 * singleton.
 *
 * See boot.h for what each method provides and how one is chosen.  PMIx
 * lives in boot_pmix.c (a plugin, boot-pmix.so, built only with libpmix
 * and loaded only when PMIx is the method); the static method's rules in
 * hosttab.c, shared with the Flux host; this file dispatches.  The static
 * method needs no network exchange at all: everything a peer would
 * publish (its endpoint, its public key, rank 0's instance id) follows
 * from the shared config, so every broker computes the same values on its
 * own.  That is what lets a system instance start in any order, each
 * broker under its own systemd.
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
#include "boot.h"
#include "hosttab.h"
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

    struct hosttab *tab;     /* static mode: the host table */
};

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
    char pub[41];
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
        if (!(b->tab = hosttab_create (conf, confname, -1, NULL, errbuf,
                                       errlen)))
            goto error;
        b->rank = hosttab_rank (b->tab);
        b->size = hosttab_size (b->tab);
        return b;
    }
    else
        b->size = 1;
    /* pmi, pmix and single: a configured certificate must still be
     * private. */
    conf_get_bool (conf, "overlay.curve", &curve);
    conf_get_string (conf, "bootstrap.curve_cert", &cert);
    if (curve && *cert && hosttab_check_cert (cert, pub, errbuf, errlen) < 0)
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
        hosttab_destroy (&(*bp)->tab);
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
    return b->pmi ? "pmi" : b->tab ? "static" : "single";
}

const char *boot_hostname (struct boot *b)
{
    return b->tab ? hosttab_hostname (b->tab) : NULL;
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

int boot_put (struct boot *b, const char *key, const char *value,
              char *errbuf, size_t errlen)
{
    char k[128];
    if (make_key (k, sizeof (k), b->rank, key) < 0) {
        errbuf_set (errbuf, errlen, "bootstrap key '%s' is too long", key);
        return -1;
    }
    /* Static: peers compute these from the config, nobody reads ours. */
    if (b->tab && hosttab_derived (key))
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

int boot_get (struct boot *b, uint32_t rank, const char *key, char *buf,
              size_t len, char *errbuf, size_t errlen)
{
    char k[128];
    if (make_key (k, sizeof (k), rank, key) < 0) {
        errbuf_set (errbuf, errlen, "bootstrap key '%s' is too long", key);
        return -1;
    }
    if (b->tab) {
        int rc = hosttab_get (b->tab, rank, key, buf, len, errbuf, errlen);
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
        return errbuf_copy_value (v, buf, len, k, errbuf, errlen);
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
    return errbuf_copy_value (v, buf, len, k, errbuf, errlen);
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
    return b->pmi && b->late_get && !b->tab;
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
