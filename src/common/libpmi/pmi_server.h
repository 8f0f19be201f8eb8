/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* pmi_server.h: the simple PMI-1 wire protocol, server side.
 *
 * Embedded in "bgn start", which spawns N brokers and gives each one end
 * of a socketpair as PMI_FD.  The server keeps one KVS (named by
 * 'kvsname'), one barrier over all N ranks, and a per-client input
 * buffer.  It has no event loop of its own: the caller polls the client
 * fds (pmi_server_fds) for POLLIN and calls pmi_server_handle() on each
 * readable fd; that reads what is there (the fds are set non-blocking),
 * answers every complete line, and returns.
 *
 * Commands understood (replies as mpich's hydra sends them):
 *   init pmi_version=1 pmi_subversion=1 -> response_to_init ... rc=0
 *   get_maxes        -> maxes kvsname_max=256 keylen_max=64 vallen_max=1024
 *   get_my_kvsname   -> my_kvsname kvsname=NAME rc=0
 *   get_universe_size-> universe_size size=N rc=0
 *   get_appnum       -> appnum appnum=0 rc=0
 *   put kvsname= key= value= -> put_result rc=0 msg=success
 *   get kvsname= key=        -> get_result rc=0 msg=success value=V
 *                               (missing key: rc=-1 msg=key_not_found)
 *   barrier_in       -> barrier_out rc=0, to every rank once all N entered
 *   finalize         -> finalize_ack rc=0
 *   abort            -> client marked aborted (see pmi_server_client_state)
 * Anything else, or a command with missing/bad arguments, gets a reply
 * "cmd=<cmd>_result rc=-1 msg=<reason>" (or cmd=error if there was no
 * cmd=) and the client stays connected.  A line longer than
 * PMI_SERVER_MAX_LINE bytes, a NUL byte, or a reply that cannot be
 * written within 1 s is a protocol error that closes that client.
 * Messages in msg= use '_' for spaces.  Values are stored and returned
 * verbatim (no escaping; see pmi_client.h for the client's encoding).
 *
 * A client that sent finalize may still get (an extension: a broker
 * asks again where a restarted peer listens now); anything else from it
 * is refused with msg=client_already_finalized.
 *
 * Barrier and exits: if a client closes before it sent finalize while
 * others wait in a barrier, they get "barrier_out rc=-1 msg=..." and the
 * barrier is broken: every later barrier_in gets rc=-1 at once.  A
 * barrier that can never complete because the missing ranks already sent
 * finalize (or abort) also ends with rc=-1 (msg=some_ranks_finalized).
 * The barrier waits for ranks that have not been added yet.
 *
 * Bounds: at most PMI_SERVER_MAX_KVS entries; key <= 64 bytes, value <=
 * 1024 bytes, kvsname <= 256; a put over a bound gets rc=-1.  A put of an
 * existing key replaces it, and a put is visible to gets at once (hydra
 * shows puts only after the next barrier: portable clients must barrier
 * between put and get).
 *
 * Not thread-safe; no global state.  Writes use MSG_NOSIGNAL, so a dead
 * client never raises SIGPIPE.
 */
#ifndef BGN_PMI_SERVER_H
#define BGN_PMI_SERVER_H

#include <stddef.h>

#define PMI_SERVER_MAX_LINE 4096
#define PMI_SERVER_MAX_KVS  65536
#define PMI_SERVER_KVSNAME_MAX 256
#define PMI_SERVER_KEYLEN_MAX 64
#define PMI_SERVER_VALLEN_MAX 1024

typedef struct pmi_server pmi_server_t;

/* Client states, for pmi_server_client_state(). */
enum {
    PMI_CLIENT_NONE = 0,      /* no client was added for this rank */
    PMI_CLIENT_CONNECTED,     /* added, not yet finalized */
    PMI_CLIENT_FINALIZED,     /* sent finalize (fd may still be open) */
    PMI_CLIENT_ABORTED,       /* sent abort */
    PMI_CLIENT_CLOSED,        /* fd closed (EOF, error) before finalize */
    PMI_CLIENT_DONE,          /* fd closed after finalize */
};

/* Optional log hook: called with a one-line message for every protocol
 * error and every client close ("rank 3: closed before finalize").
 */
typedef void (*pmi_server_log_f) (const char *msg, void *arg);

/* Create a server for 'size' ranks (1..2^24) with KVS name 'kvsname'
 * (1..255 bytes, no space, '=' or newline).  NULL + EINVAL/ENOMEM, with a
 * message in errbuf.
 */
pmi_server_t *pmi_server_create (int size, const char *kvsname,
                                 char *errbuf, size_t errlen);

/* Close every client fd still open and free everything; *p = NULL. */
void pmi_server_destroy (pmi_server_t **p);

void pmi_server_set_log (pmi_server_t *srv, pmi_server_log_f fn, void *arg);

/* Hand the server one end of a connected stream socket for 'rank'.  The
 * server owns fd afterwards (closes it on error here, too) and makes it
 * non-blocking and close-on-exec.  -1 + EINVAL for a bad rank or fd,
 * EEXIST if rank already has a client.
 */
int pmi_server_add_client (pmi_server_t *srv, int rank, int fd,
                           char *errbuf, size_t errlen);

/* A restarted rank: hand the server a new client for 'rank' whose old
 * client has finalized or gone.  The KVS keeps every value put so far (a
 * put replaces), and this client's barriers complete at once: the rest
 * of the job is running and will not enter a barrier with it.  -1 +
 * If the old client's fd is still open it is closed first (the caller
 * knows that process is gone).  -1 + EINVAL for a bad rank.
 */
int pmi_server_rejoin_client (pmi_server_t *srv, int rank, int fd,
                              char *errbuf, size_t errlen);

/* Read from the client on fd and answer every complete line.
 * Returns 0 (still connected), 1 if the client closed or was closed for a
 * protocol error (its fd is closed and forgotten: stop polling it; the
 * rank's state tells finalize-then-EOF from an early exit), or -1 + errno
 * (ENOENT: fd is not a client; ENOMEM).  Call it whenever fd is readable
 * (POLLIN, POLLHUP or POLLERR).
 */
int pmi_server_handle (pmi_server_t *srv, int fd);

/* The rank whose client is on fd, or -1 + ENOENT. */
int pmi_server_client_rank (pmi_server_t *srv, int fd);

/* The fd of rank's client, or -1 + ENOENT if none is open. */
int pmi_server_client_fd (pmi_server_t *srv, int rank);

/* One of the PMI_CLIENT_* states for rank, or -1 + EINVAL. */
int pmi_server_client_state (pmi_server_t *srv, int rank);

/* Copy up to 'max' open client fds into fds (may be NULL if max == 0);
 * returns how many are open (which may exceed max).
 */
int pmi_server_fds (pmi_server_t *srv, int *fds, int max);

/* Number of clients still open. */
int pmi_server_nclients (pmi_server_t *srv);

/* Number of ranks that sent finalize. */
int pmi_server_nfinalized (pmi_server_t *srv);

/* Look up a KVS value put by a client (for bgn start itself, e.g. to read
 * rank 0's URI).  The returned string is the server's, valid until the
 * key is replaced or the server destroyed; NULL + ENOENT.
 */
const char *pmi_server_kvs_lookup (pmi_server_t *srv, const char *key);

#endif /* BGN_PMI_SERVER_H */
