/* boot.c: bootstrap through PMI-1 or as a singleton (see boot.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <czmq.h>

#include "src/common/libpmi/pmi_client.h"
#include "boot.h"

struct boot {
    pmi_client_t *pmi;       /* NULL for a singleton */
    uint32_t rank;
    uint32_t size;
    zhashx_t *local;         /* singleton's own values */
};

struct boot *boot_create (double timeout, char *errbuf, size_t errlen)
{
    struct boot *b = calloc (1, sizeof (*b));
    if (!b)
        return NULL;
    if (!getenv ("PMI_FD")) {
        b->size = 1;
        if (!(b->local = zhashx_new ()))
            goto error;
        zhashx_set_destructor (b->local, (zhashx_destructor_fn *)zstr_free);
        zhashx_set_duplicator (b->local, (zhashx_duplicator_fn *)strdup);
        return b;
    }
    if (!(b->pmi = pmi_client_create_from_env (errbuf, errlen)))
        goto error;
    pmi_client_set_timeout (b->pmi, timeout);
    b->rank = pmi_client_rank (b->pmi);
    b->size = pmi_client_size (b->pmi);
    if (pmi_client_init (b->pmi, errbuf, errlen) < 0
        || pmi_client_get_maxes (b->pmi, NULL, NULL, NULL, errbuf, errlen) < 0
        || pmi_client_get_my_kvsname (b->pmi, NULL, 0, errbuf, errlen) < 0)
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
        zhashx_destroy (&(*bp)->local);
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
    return b->pmi ? "pmi" : "single";
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
        snprintf (errbuf, errlen, "bootstrap key '%s' is too long", key);
        return -1;
    }
    if (!b->pmi) {
        zhashx_update (b->local, k, (void *)value);
        return 0;
    }
    return pmi_client_kvs_put (b->pmi, k, value, errbuf, errlen);
}

int boot_get (struct boot *b, uint32_t rank, const char *key, char *buf,
              size_t len, char *errbuf, size_t errlen)
{
    char k[128];
    if (make_key (k, sizeof (k), rank, key) < 0) {
        snprintf (errbuf, errlen, "bootstrap key '%s' is too long", key);
        return -1;
    }
    if (!b->pmi) {
        const char *v = zhashx_lookup (b->local, k);
        if (!v) {
            snprintf (errbuf, errlen, "bootstrap key %s not found", k);
            errno = ENOENT;
            return -1;
        }
        if (strlen (v) >= len) {
            errno = EOVERFLOW;
            return -1;
        }
        strcpy (buf, v);
        return 0;
    }
    return pmi_client_kvs_get (b->pmi, k, buf, len, errbuf, errlen) < 0 ? -1 : 0;
}

int boot_barrier (struct boot *b, char *errbuf, size_t errlen)
{
    if (!b->pmi)
        return 0;
    return pmi_client_barrier (b->pmi, errbuf, errlen);
}

int boot_finalize (struct boot *b, char *errbuf, size_t errlen)
{
    if (!b->pmi)
        return 0;
    return pmi_client_finalize (b->pmi, errbuf, errlen);
}
