/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* boot_pmix.c: bootstrap through a PMIx server (see boot_pmix.h).
 *
 * Keys and values are strings (PMIX_STRING); boot.c has already made the
 * key unique per rank, so the PMIx key space is used flat.  A rank reads
 * its own values from libpmix's local store (PMIX_OPTIONAL), which also
 * lets rank 0 ask for "instance" before anyone published it without
 * waiting for the timeout.
 */
#if HAVE_CONFIG_H
#include "src/common/libutil/errbuf.h"
#include "config.h"
#endif
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pmix.h>

#include "boot_pmix.h"

struct boot_pmix {
    pmix_proc_t me;
    uint32_t size;
    int timeout;            /* seconds, for PMIX_TIMEOUT */
    int finalized;
};

static int pmix_fail (char *errbuf, size_t errlen, pmix_status_t rc,
                      const char *fmt, ...)
    __attribute__ ((format (printf, 4, 5)));

/* Write "<what>: <PMIx status>" to errbuf and map the status to errno. */
static int pmix_fail (char *errbuf, size_t errlen, pmix_status_t rc,
                      const char *fmt, ...)
{
    char what[256];
    va_list ap;

    va_start (ap, fmt);
    vsnprintf (what, sizeof (what), fmt, ap);
    va_end (ap);
    if (errbuf && errlen)
        errbuf_set (errbuf, errlen, "%s: %s", what, PMIx_Error_string (rc));
    if (rc == PMIX_ERR_TIMEOUT)
        errno = ETIMEDOUT;
    else if (rc == PMIX_ERR_NOT_FOUND)
        errno = ENOENT;
    else
        errno = EPROTO;
    return -1;
}

struct boot_pmix *boot_pmix_create (double timeout, char *errbuf,
                                    size_t errlen)
{
    struct boot_pmix *p = calloc (1, sizeof (*p));
    pmix_proc_t wild;
    pmix_value_t *val = NULL;
    pmix_status_t rc;

    if (!p)
        return NULL;
    p->timeout = timeout < 1. ? 1 : (int)timeout;
    if ((rc = PMIx_Init (&p->me, NULL, 0)) != PMIX_SUCCESS) {
        pmix_fail (errbuf, errlen, rc, "PMIx_Init");
        free (p);
        return NULL;
    }
    PMIX_LOAD_PROCID (&wild, p->me.nspace, PMIX_RANK_WILDCARD);
    rc = PMIx_Get (&wild, PMIX_JOB_SIZE, NULL, 0, &val);
    if (rc != PMIX_SUCCESS || !val) {
        pmix_fail (errbuf, errlen, rc, "PMIx_Get %s", PMIX_JOB_SIZE);
        goto error;
    }
    if (val->type == PMIX_UINT32)
        p->size = val->data.uint32;
    PMIX_VALUE_RELEASE (val);
    if (p->size == 0 || p->me.rank >= p->size) {
        errbuf_set (errbuf, errlen, "PMIx: rank %u does not fit job size %u",
                    (unsigned)p->me.rank, (unsigned)p->size);
        errno = EPROTO;
        goto error;
    }
    return p;
error: {
        int saved = errno;
        boot_pmix_destroy (&p);
        errno = saved;
        return NULL;
    }
}

void boot_pmix_destroy (struct boot_pmix **pp)
{
    if (pp && *pp) {
        /* A process that leaves without finalizing looks like a crash
         * to some launchers (Open MPI aborts the whole job). */
        if (!(*pp)->finalized)
            PMIx_Finalize (NULL, 0);
        free (*pp);
        *pp = NULL;
    }
}

uint32_t boot_pmix_rank (struct boot_pmix *p)
{
    return p->me.rank;
}

uint32_t boot_pmix_size (struct boot_pmix *p)
{
    return p->size;
}

int boot_pmix_put (struct boot_pmix *p, const char *key, const char *value,
                   char *errbuf, size_t errlen)
{
    pmix_value_t v;
    pmix_status_t rc;

    PMIX_VALUE_CONSTRUCT (&v);
    v.type = PMIX_STRING;
    v.data.string = (char *)value;  /* PMIx_Put copies; not freed here */
    rc = PMIx_Put (PMIX_GLOBAL, key, &v);
    if (rc != PMIX_SUCCESS)
        return pmix_fail (errbuf, errlen, rc, "PMIx_Put %s", key);
    return 0;
}

int boot_pmix_get (struct boot_pmix *p, uint32_t rank, const char *key,
                   char *buf, size_t len, char *errbuf, size_t errlen)
{
    pmix_proc_t proc;
    pmix_info_t info[2];
    pmix_value_t *val = NULL;
    pmix_status_t rc;
    bool yes = true;
    size_t ninfo = 1;
    int ret = 0;

    PMIX_LOAD_PROCID (&proc, p->me.nspace, rank);
    PMIX_INFO_CONSTRUCT (&info[0]);
    PMIX_INFO_CONSTRUCT (&info[1]);
    PMIx_Info_load (&info[0], PMIX_TIMEOUT, &p->timeout, PMIX_INT);
    if (rank == p->me.rank) {
        PMIx_Info_load (&info[1], PMIX_OPTIONAL, &yes, PMIX_BOOL);
        ninfo = 2;
    }
    rc = PMIx_Get (&proc, key, info, ninfo, &val);
    PMIX_INFO_DESTRUCT (&info[0]);
    PMIX_INFO_DESTRUCT (&info[1]);
    if (rc != PMIX_SUCCESS || !val)
        return pmix_fail (errbuf, errlen, rc, "PMIx_Get %s of rank %u", key,
                          (unsigned)rank);
    if (val->type != PMIX_STRING || !val->data.string) {
        errbuf_set (errbuf, errlen, "PMIx_Get %s of rank %u: not a string",
                    key, (unsigned)rank);
        errno = EPROTO;
        ret = -1;
    }
    else if (strlen (val->data.string) >= len) {
        errbuf_set (errbuf, errlen, "PMIx_Get %s of rank %u: value too long",
                    key, (unsigned)rank);
        errno = EOVERFLOW;
        ret = -1;
    }
    else
        strcpy (buf, val->data.string);
    PMIX_VALUE_RELEASE (val);
    return ret;
}

int boot_pmix_fence (struct boot_pmix *p, char *errbuf, size_t errlen)
{
    pmix_proc_t wild;
    pmix_info_t info[2];
    pmix_status_t rc;
    bool yes = true;

    if ((rc = PMIx_Commit ()) != PMIX_SUCCESS)
        return pmix_fail (errbuf, errlen, rc, "PMIx_Commit");
    PMIX_LOAD_PROCID (&wild, p->me.nspace, PMIX_RANK_WILDCARD);
    PMIX_INFO_CONSTRUCT (&info[0]);
    PMIX_INFO_CONSTRUCT (&info[1]);
    PMIx_Info_load (&info[0], PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    PMIx_Info_load (&info[1], PMIX_TIMEOUT, &p->timeout, PMIX_INT);
    rc = PMIx_Fence (&wild, 1, info, 2);
    PMIX_INFO_DESTRUCT (&info[0]);
    PMIX_INFO_DESTRUCT (&info[1]);
    if (rc != PMIX_SUCCESS)
        return pmix_fail (errbuf, errlen, rc, "PMIx_Fence");
    return 0;
}

int boot_pmix_finalize (struct boot_pmix *p, char *errbuf, size_t errlen)
{
    pmix_status_t rc;

    if (p->finalized)
        return 0;
    p->finalized = 1;
    if ((rc = PMIx_Finalize (NULL, 0)) != PMIX_SUCCESS)
        return pmix_fail (errbuf, errlen, rc, "PMIx_Finalize");
    return 0;
}

const struct boot_pmix_ops bgn_boot_pmix_ops = {
    .create = boot_pmix_create,
    .destroy = boot_pmix_destroy,
    .rank = boot_pmix_rank,
    .size = boot_pmix_size,
    .put = boot_pmix_put,
    .get = boot_pmix_get,
    .fence = boot_pmix_fence,
    .finalize = boot_pmix_finalize,
};
