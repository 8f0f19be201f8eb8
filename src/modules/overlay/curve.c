/* curve.c: the certificate and the ZAP key store (see curve.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <czmq.h>

#include "src/common/libzmqutil/certstore.h"
#include "curve.h"

struct curve {
    zcert_t *cert;
    char saved[PATH_MAX];       /* key pair we keep in the rundir, or "" */
    int reused;
    zcertstore_t *store;        /* owned by zauth once it runs */
    zactor_t *auth;
    zhashx_t *holders;          /* Z85 key -> rank + 1, or SHARED */
    zhashx_t *keys;             /* decimal rank -> Z85 key */
};

#define SHARED ((void *)(uintptr_t)-1)

static int load_shared (struct curve *c, const char *path, char *errbuf,
                        size_t errlen)
{
    if (!(c->cert = zcert_load (path))) {
        snprintf (errbuf, errlen, "cannot load CURVE certificate %s "
                  "(and %s_secret)", path, path);
        errno = EINVAL;
        return -1;
    }
    if (!strcmp (zcert_secret_txt (c->cert),
                 "0000000000000000000000000000000000000000")) {
        snprintf (errbuf, errlen, "CURVE certificate %s has no secret key "
                  "(is %s_secret missing?)", path, path);
        errno = EINVAL;
        return -1;
    }
    return 0;
}

static int load_or_make (struct curve *c, const char *rundir, char *errbuf,
                         size_t errlen)
{
    char secret[PATH_MAX + 8];
    mode_t old;

    snprintf (c->saved, sizeof (c->saved), "%s/overlay.cert", rundir);
    snprintf (secret, sizeof (secret), "%s_secret", c->saved);
    if (access (secret, R_OK) == 0 && (c->cert = zcert_load (c->saved))) {
        c->reused = 1;
        return 0;
    }
    old = umask (077);
    if (!(c->cert = zcert_new ()) || zcert_save (c->cert, c->saved) < 0) {
        umask (old);
        snprintf (errbuf, errlen, "cannot create %s", c->saved);
        c->saved[0] = '\0';
        return -1;
    }
    umask (old);
    return 0;
}

struct curve *curve_create (const char *cert_path, const char *rundir,
                            char *errbuf, size_t errlen)
{
    struct curve *c = calloc (1, sizeof (*c));

    if (!c)
        return NULL;
    if ((cert_path && *cert_path ? load_shared (c, cert_path, errbuf, errlen)
                                 : load_or_make (c, rundir, errbuf, errlen))
        < 0)
        goto error;
    if (!(c->holders = zhashx_new ()) || !(c->keys = zhashx_new ())) {
        snprintf (errbuf, errlen, "out of memory");
        goto error;
    }
    zhashx_set_destructor (c->keys, (zhashx_destructor_fn *)zstr_free);
    zhashx_set_duplicator (c->keys, (zhashx_duplicator_fn *)strdup);
    if (!(c->store = zcertstore_new (NULL))
        || !(c->auth = zactor_new (zauth, c->store))) {
        snprintf (errbuf, errlen, "cannot start the ZAP handler");
        goto error;
    }
    if (getenv ("BGN_OVERLAY_ZAP_VERBOSE")) {
        zstr_send (c->auth, "VERBOSE");
        zsock_wait (c->auth);
    }
    return c;
error:
    curve_destroy (&c, 0);
    return NULL;
}

void curve_destroy (struct curve **cp, int forget_saved)
{
    struct curve *c;

    if (!cp || !(c = *cp))
        return;
    if (c->auth)
        zactor_destroy (&c->auth);   /* destroys the store too */
    else
        zcertstore_destroy (&c->store);
    if (forget_saved && c->saved[0]) {
        char secret[PATH_MAX + 8];
        snprintf (secret, sizeof (secret), "%s_secret", c->saved);
        unlink (c->saved);
        unlink (secret);
    }
    zcert_destroy (&c->cert);
    zhashx_destroy (&c->holders);
    zhashx_destroy (&c->keys);
    free (c);
    *cp = NULL;
}

const char *curve_public (const struct curve *c)
{
    return zcert_public_txt (c->cert);
}

const char *curve_secret (const struct curve *c)
{
    return zcert_secret_txt (c->cert);
}

int curve_reused (const struct curve *c)
{
    return c->reused;
}

int curve_authorize (struct curve *c, const char *pubkey)
{
    return zmqutil_certstore_add (c->store, pubkey);
}

int curve_bind (struct curve *c, uint32_t rank, const char *pubkey)
{
    uint8_t raw[32];
    char r[16];
    void *have;

    if (!pubkey || strlen (pubkey) != 40 || !zmq_z85_decode (raw, pubkey)) {
        errno = EINVAL;
        return -1;
    }
    snprintf (r, sizeof (r), "%u", (unsigned)rank);
    zhashx_update (c->keys, r, (void *)pubkey);
    have = zhashx_lookup (c->holders, pubkey);
    if (!have)
        zhashx_insert (c->holders, pubkey, (void *)(uintptr_t)(rank + 1ULL));
    else if (have != SHARED && (uintptr_t)have != rank + 1ULL)
        zhashx_update (c->holders, pubkey, SHARED);
    return 0;
}

long curve_rank_of (const struct curve *c, const char *pubkey)
{
    void *v = pubkey ? zhashx_lookup (c->holders, pubkey) : NULL;

    if (!v)
        return CURVE_KEY_UNKNOWN;
    if (v == SHARED)
        return CURVE_KEY_SHARED;
    return (long)((uintptr_t)v - 1);
}

const char *curve_key_of (const struct curve *c, uint32_t rank)
{
    char r[16];

    snprintf (r, sizeof (r), "%u", (unsigned)rank);
    return zhashx_lookup (c->keys, r);
}
