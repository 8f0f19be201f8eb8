/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* boot.h: how a broker learns its rank, its size and its peers' values.
 *
 * Four ways.  bootstrap.method (broker option --boot) names one, or is
 * "auto" (the default), which picks the first that applies:
 *   pmi       PMI_FD is set (bgn start, mpiexec.mpich, srun --mpi=pmi2):
 *             the PMI-1 wire protocol; rank and size come from the
 *             launcher, values are exchanged through its KVS.  Forced
 *             with method "pmi1".
 *   pmix      PMIX_NAMESPACE and PMIX_RANK are set (mpirun.openmpi,
 *             PRRTE, srun --mpi=pmix): the same through libpmix
 *             (boot_pmix.h).  Without libpmix at build time this method
 *             fails with a message saying PMIx is unavailable.
 *   static    the config has bootstrap.hosts (a system instance, e.g.
 *             started by systemd): the rank is the
 *             index of this broker's host name in the expanded host list,
 *             the size is the list's length, and every value a peer would
 *             publish is computed from the config instead (see below).
 *   single    none of these: rank 0 of size 1; values stay in this
 *             process.
 * PMI_FD is checked before PMIX_*: bgn start sets PMI_FD for its brokers
 * but cannot clear PMIx variables inherited from a surrounding job, and
 * no PMIx launcher sets PMI_FD.  A forced method whose launcher is absent
 * fails (EINVAL) instead of falling back.
 *
 * Keys are published per rank: boot_put("endpoint", v) on rank 3 is read
 * elsewhere with boot_get(3, "endpoint").  Every call has a deadline.
 * Under PMI-1 a rank's values go out together at its next barrier (or
 * finalize), as one JSON object under the PMI key "bgn.RANK", and a
 * peer's are fetched once per barrier: one get per peer, not one per
 * key, which is most of the start-up traffic bgn start's PMI server
 * serves.
 *
 * Static mode, key by key:
 *   endpoint  the rank's host entry's "connect" template, %h replaced by
 *             the rank's host name and %p by the entry's port.
 *   pubkey    the public key of bootstrap.curve_cert, which every broker
 *             of the instance shares (required when overlay.curve is on).
 *   instance  (rank 0) a name-based uuid derived from the expanded host
 *             list, the templates and the public key, so every broker
 *             computes the same id without talking to anyone.
 * boot_put() of those keys succeeds without doing anything (the value is
 * the broker's own, already known to everyone); other keys are kept
 * locally.  boot_barrier() and boot_finalize() return at once: brokers
 * start in any order and find each other through the overlay's retries.
 * boot_create() also sets overlay.bind from this host's entry ("bind"
 * template, %h and %p expanded) unless the config already sets it.
 *
 * In every mode, a configured bootstrap.curve_cert (with overlay.curve on)
 * must have a secret file (PATH_secret) that is a regular file readable
 * by its owner only; otherwise boot_create() fails.
 *
 * Errors: NULL/-1 with errno and a message in errbuf.  boot_create() sets
 * errno EINVAL for configuration errors (host not in the list, bad
 * template, missing or exposed certificate): the broker exits 1 then.
 */
#ifndef BGN_BROKER_BOOT_H
#define BGN_BROKER_BOOT_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

struct boot;

/* Choose and start the bootstrap method.  'conf' is the finalized broker
 * config (static mode may add overlay.bind to it); 'confname' names it in
 * messages (a path, or NULL); 'plugin_dir' is where boot-pmix.so is.
 * NULL + errno with a message.
 */
struct boot *boot_create (json_t *conf, const char *confname,
                          const char *plugin_dir, double timeout,
                          char *errbuf, size_t errlen);
void boot_destroy (struct boot **bp);

uint32_t boot_rank (struct boot *b);
uint32_t boot_size (struct boot *b);
/* "pmi" (PMI-1), "pmix", "static" or "single" */
const char *boot_method (struct boot *b);

/* Static mode: this broker's host name as matched in the host list;
 * other modes: NULL. */
const char *boot_hostname (struct boot *b);

int boot_put (struct boot *b, const char *key, const char *value,
              char *errbuf, size_t errlen);
int boot_get (struct boot *b, uint32_t rank, const char *key, char *buf,
              size_t len, char *errbuf, size_t errlen);

/* boot_get, past the copies kept of other ranks' values (a PMI bundle
 * fetched once): what 'rank' published last. */
int boot_refresh (struct boot *b, uint32_t rank, const char *key, char *buf,
                  size_t len, char *errbuf, size_t errlen);
/* 1 if every rank's values can be had one at a time for the broker's
 * whole life, each a network exchange (a PMI server that answers gets
 * after finalize: bgn start's), so a module may ask for a rank's values
 * when it first needs them rather than all at start; 0 otherwise (the
 * exchange closes at finalize, or every value is already in memory). */
int boot_lasting (struct boot *b);
int boot_barrier (struct boot *b, char *errbuf, size_t errlen);
int boot_finalize (struct boot *b, char *errbuf, size_t errlen);

#endif
