/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* pmi_client.h: the simple PMI-1 wire protocol, client side.
 *
 * A broker started by a PMI-1 launcher (mpich's hydra "mpiexec", or
 * "bgn start") finds PMI_FD, PMI_RANK and PMI_SIZE in its environment.
 * PMI_FD is a connected stream socket; each request and each reply is one
 * newline-terminated line of space-separated key=value words, e.g.
 *   -> cmd=put kvsname=K key=k value=v
 *   <- cmd=put_result rc=0 msg=success
 * This client speaks that protocol with blocking I/O and poll() deadlines:
 * every call fails with ETIMEDOUT if the server does not answer within the
 * client's timeout (default PMI_CLIENT_DEFAULT_TIMEOUT seconds), so nothing
 * waits forever.  It is meant for bootstrap, before the broker's reactor
 * runs.  One client per process; not thread-safe; no global state.
 *
 * Value escaping.  The wire protocol cannot carry a value that contains a
 * space, a newline or (portably) '=' - and Z85 CURVE keys use '=' and '%'
 * among other symbols.  So pmi_client_kvs_put() percent-encodes the value:
 * every byte outside [A-Za-z0-9_] and "-.:/" becomes "%XX" (upper-case
 * hex), and pmi_client_kvs_get() decodes it back.  URIs such as
 * "tcp://10.0.0.1:8050" or "ipc:///tmp/x/3" go on the wire unchanged.  Values may therefore be
 * any NUL-terminated string (binary-safe except NUL); the encoded form may
 * be up to 3x longer and must fit vallen_max (from get_maxes, 1024 if
 * get_maxes was not called).  Both sides of an exchange must use this
 * client (or the same encoding); the _raw variants skip it and reject
 * values with a space, '=', a newline or a control character (EINVAL).
 * Keys are never encoded: 1..keylen_max bytes from [A-Za-z0-9_] and
 * "-.:/" (so no space, '=' or '%'), else EINVAL.
 *
 * Errors.  Every call returns 0 (or a count) on success, -1 with errno on
 * failure, and, if errbuf is non-NULL, writes a one-line message there
 * (truncated to errlen).  For a protocol failure the message quotes the
 * server's reply.  errno values:
 *   EINVAL    bad argument (NULL, bad key/value, buffer too small: ENOSPC)
 *   ETIMEDOUT no (complete) reply within the timeout
 *   EPROTO    malformed or unexpected reply, or a reply with rc != 0
 *             (also: get of a missing key gives ENOENT, see kvs_get)
 *   ECONNRESET server closed the connection (EOF) / EPIPE on write
 *   other     errno from poll/read/write
 * A request whose reply did not come back whole (a timeout, a broken or
 * unexpected line) leaves the connection out of step: a late reply would
 * be read as the answer to the next request.  Every later call then fails
 * at once with EPROTO, its message naming the first failure.
 * Launcher notes (hydra 4.0.2, checked): a put is visible to gets only
 * after the next barrier (even for the putting rank); hydra passes "="
 * inside a value through but cuts a value at the first space; a missing
 * key gives "rc=-1 msg=key_K_not_found"; an unknown command makes
 * mpiexec kill the whole job.
 *
 * A reply with rc != 0 (EPROTO, or ENOENT from get) leaves the stream in
 * step; the client may go on.  ENOENT from get means only "the server
 * answered the get with rc != 0" (the wire has no error codes), which is
 * a missing key in practice.
 *
 * After ETIMEDOUT, a malformed reply or a connection error the stream
 * may be out of step; the client should be destroyed.
 */
#ifndef BGN_PMI_CLIENT_H
#define BGN_PMI_CLIENT_H

#include <stddef.h>

#define PMI_CLIENT_DEFAULT_TIMEOUT 60.0   /* seconds */

typedef struct pmi_client pmi_client_t;

/* Create a client over the connected socket 'fd' for 'rank' of 'size'.
 * The client owns fd from then on (closed by destroy, even if create
 * fails) and marks it close-on-exec.  -1/NULL + EINVAL if fd < 0, size < 1
 * or rank not in [0, size); ENOMEM.
 */
pmi_client_t *pmi_client_create (int fd, int rank, int size,
                                 char *errbuf, size_t errlen);

/* Create a client from PMI_FD, PMI_RANK, PMI_SIZE in the environment.
 * NULL + ENOENT if PMI_FD is unset (not under a PMI-1 launcher; a
 * launcher that offers only PMI_PORT is not supported), EINVAL if a
 * variable is malformed.  The message names the variable.
 */
pmi_client_t *pmi_client_create_from_env (char *errbuf, size_t errlen);

/* Close the fd and free the client; sets *p to NULL.  Safe on NULL or
 * *p == NULL.  Does not send finalize.
 */
void pmi_client_destroy (pmi_client_t **p);

/* Per-call deadline in seconds (> 0), applied to each request/reply
 * exchange separately.  Barrier waits for all ranks, so give it room.
 * -1 + EINVAL for seconds <= 0 or NaN.
 */
int pmi_client_set_timeout (pmi_client_t *cli, double seconds);
double pmi_client_get_timeout (const pmi_client_t *cli);

int pmi_client_rank (const pmi_client_t *cli);
int pmi_client_size (const pmi_client_t *cli);

/* cmd=init pmi_version=1 pmi_subversion=1 -> response_to_init rc=0. */
int pmi_client_init (pmi_client_t *cli, char *errbuf, size_t errlen);

/* cmd=get_maxes -> maxes.  Any out pointer may be NULL.  The values are
 * remembered and used to check later keys/values.
 */
int pmi_client_get_maxes (pmi_client_t *cli, int *kvsname_max,
                          int *keylen_max, int *vallen_max,
                          char *errbuf, size_t errlen);

/* cmd=get_my_kvsname -> my_kvsname kvsname=NAME.  The name is stored in
 * the client (used by put/get) and copied to buf if buf is non-NULL
 * (-1 + ENOSPC if it does not fit).  put/get call this themselves if it
 * has not been called yet.
 */
int pmi_client_get_my_kvsname (pmi_client_t *cli, char *buf, size_t len,
                               char *errbuf, size_t errlen);

/* Put key=value in the job's KVS (percent-encoded, see above).  Values
 * are visible to other ranks after the next barrier.
 */
int pmi_client_kvs_put (pmi_client_t *cli, const char *key,
                        const char *value, char *errbuf, size_t errlen);

/* Get key's value, decoded, into buf (NUL-terminated).  Returns the
 * decoded length; -1 + ENOENT if the server says the key is missing,
 * ENOSPC if buf is too small, EPROTO if the stored value is not a valid
 * encoding.
 */
int pmi_client_kvs_get (pmi_client_t *cli, const char *key,
                        char *buf, size_t len, char *errbuf, size_t errlen);

/* Get n keys at once: the requests are written back to back (at most
 * PMI_CLIENT_PIPELINE in flight) and the replies read in order, so n gets
 * cost a few round trips instead of n (the server answers each line in
 * turn; a stream socket keeps them in order).  values[i] (len bytes each)
 * gets key i's decoded value and lens[i] its length, or -1 with errs[i]
 * the errno of that key alone (ENOENT, ENOSPC, EPROTO).  Returns 0, or -1
 * with errno if the exchange itself failed (then nothing is reliable).
 */
#define PMI_CLIENT_PIPELINE 32
int pmi_client_kvs_get_many (pmi_client_t *cli, const char *const keys[],
                             int n, char *values[], size_t len, int lens[],
                             int errs[], char *errbuf, size_t errlen);

/* As put/get, without escaping (the value goes on the wire as is). */
int pmi_client_kvs_put_raw (pmi_client_t *cli, const char *key,
                            const char *value, char *errbuf, size_t errlen);
int pmi_client_kvs_get_raw (pmi_client_t *cli, const char *key,
                            char *buf, size_t len,
                            char *errbuf, size_t errlen);

/* cmd=barrier_in -> barrier_out, after all ranks entered.  A reply with
 * rc != 0 (bgn's server sends one when a rank exits first) is EPROTO.
 */
int pmi_client_barrier (pmi_client_t *cli, char *errbuf, size_t errlen);

/* cmd=finalize -> finalize_ack.  The fd stays open until destroy. */
int pmi_client_finalize (pmi_client_t *cli, char *errbuf, size_t errlen);

/* The escaping helpers, exposed for tests and for other speakers.
 * encode: writes the encoded, NUL-terminated form of 'in' to out; returns
 * its length or -1 + ENOSPC.  decode: the reverse; -1 + EINVAL for a bad
 * "%XX" or a byte that encode never produces, ENOSPC if out is too small.
 */
int pmi_value_encode (const char *in, char *out, size_t len);
int pmi_value_decode (const char *in, char *out, size_t len);

#endif /* BGN_PMI_CLIENT_H */
