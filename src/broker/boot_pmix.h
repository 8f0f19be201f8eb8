/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* boot_pmix.h: the PMIx half of the broker's bootstrap (see boot.h).
 *
 * A broker started by a PMIx launcher (Open MPI's mpirun, PRRTE, Slurm
 * with --mpi=pmix) finds PMIX_NAMESPACE and PMIX_RANK in its environment
 * and a PMIx server in its launcher.  This is a thin layer over libpmix's
 * client: rank and size, put + commit, a fence that collects the data,
 * get, finalize.  Each blocking call carries the timeout given at create
 * time (PMIX_TIMEOUT), so nothing waits for ever on a missing peer.
 *
 * Built only when configure found libpmix (HAVE_PMIX), as a plugin,
 * boot-pmix.so in pkglibdir, that the broker dlopen()s only when it boots
 * through PMIx: linking libpmix (and libevent, hwloc, munge... behind it)
 * into the broker cost every broker of a 'bgn start' milliseconds of
 * start-up.  The plugin exports one symbol, BOOT_PMIX_SYMBOL, the table
 * of the functions below; boot.c tells the user PMIx is unavailable when
 * the plugin is missing.  libpmix keeps global state (one PMIx_Init per
 * process), so at most one boot_pmix exists at a time, and the plugin is
 * never unloaded (libpmix may leave threads behind).
 *
 * Errors: NULL/-1 with errno (ETIMEDOUT, ENOENT for a missing key,
 * EOVERFLOW for a value longer than the caller's buffer, EPROTO for any
 * other PMIx failure) and a message naming the PMIx status in errbuf.
 */
#ifndef BGN_BROKER_BOOT_PMIX_H
#define BGN_BROKER_BOOT_PMIX_H

#include <stddef.h>
#include <stdint.h>

struct boot_pmix;

/* PMIx_Init, then rank and job size.  'timeout' (seconds) bounds every
 * later fence and get. */
struct boot_pmix *boot_pmix_create (double timeout, char *errbuf,
                                    size_t errlen);
void boot_pmix_destroy (struct boot_pmix **pp);

uint32_t boot_pmix_rank (struct boot_pmix *p);
uint32_t boot_pmix_size (struct boot_pmix *p);

/* Publish 'value' under 'key' (global scope).  Visible to other ranks
 * after the next boot_pmix_fence(). */
int boot_pmix_put (struct boot_pmix *p, const char *key, const char *value,
                   char *errbuf, size_t errlen);

/* Copy the value that 'rank' published under 'key' into buf[len]. */
int boot_pmix_get (struct boot_pmix *p, uint32_t rank, const char *key,
                   char *buf, size_t len, char *errbuf, size_t errlen);

/* Commit this rank's puts and wait for every rank of the job to do the
 * same (PMIx_Fence over the whole namespace, collecting the data). */
int boot_pmix_fence (struct boot_pmix *p, char *errbuf, size_t errlen);

/* PMIx_Finalize: tell the server this process is done with it. */
int boot_pmix_finalize (struct boot_pmix *p, char *errbuf, size_t errlen);

/* What the plugin exports, under BOOT_PMIX_SYMBOL. */
struct boot_pmix_ops {
    struct boot_pmix *(*create) (double timeout, char *errbuf,
                                 size_t errlen);
    void (*destroy) (struct boot_pmix **pp);
    uint32_t (*rank) (struct boot_pmix *p);
    uint32_t (*size) (struct boot_pmix *p);
    int (*put) (struct boot_pmix *p, const char *key, const char *value,
                char *errbuf, size_t errlen);
    int (*get) (struct boot_pmix *p, uint32_t rank, const char *key,
                char *buf, size_t len, char *errbuf, size_t errlen);
    int (*fence) (struct boot_pmix *p, char *errbuf, size_t errlen);
    int (*finalize) (struct boot_pmix *p, char *errbuf, size_t errlen);
};

#define BOOT_PMIX_PLUGIN "boot-pmix.so"
#define BOOT_PMIX_SYMBOL "bgn_boot_pmix_ops"

#endif
