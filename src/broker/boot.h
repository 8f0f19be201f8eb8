/* boot.h: how a broker learns its rank, its size and its peers' values.
 *
 * Three ways, chosen by the environment and the config:
 *   PMI-1     PMI_FD is set (bgn start, mpiexec, srun): rank and size come
 *             from the launcher; values are exchanged through its KVS.
 *   single    neither: rank 0 of size 1; values stay in this process.
 * (A static [bootstrap] host list is the third; see boot_static.)
 *
 * Keys are published per rank: boot_put("endpoint", v) on rank 3 is read
 * elsewhere with boot_get(3, "endpoint").  Every call has a deadline.
 */
#ifndef BGN_BROKER_BOOT_H
#define BGN_BROKER_BOOT_H

#include <stddef.h>
#include <stdint.h>

struct boot;

/* Choose and start the bootstrap method.  NULL + errno with a message. */
struct boot *boot_create (double timeout, char *errbuf, size_t errlen);
void boot_destroy (struct boot **bp);

uint32_t boot_rank (struct boot *b);
uint32_t boot_size (struct boot *b);
const char *boot_method (struct boot *b);        /* "pmi" or "single" */

int boot_put (struct boot *b, const char *key, const char *value,
              char *errbuf, size_t errlen);
int boot_get (struct boot *b, uint32_t rank, const char *key, char *buf,
              size_t len, char *errbuf, size_t errlen);
int boot_barrier (struct boot *b, char *errbuf, size_t errlen);
int boot_finalize (struct boot *b, char *errbuf, size_t errlen);

#endif
