/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* pmi_server.c: simple PMI-1 wire protocol server (see pmi_server.h).
 *
 * State: one client slot per rank (fd, state, input buffer, barrier
 * flag), an fd -> rank map (an array indexed by fd), and the KVS, a
 * chained hash table of strdup'd keys and values.  The caller's poll loop
 * drives everything through pmi_server_handle().
 *
 * Replies to the client being handled are gathered and written once per
 * read (a client that pipelines its gets, as bgn's bootstrap does, gets
 * its answers in one write, not one write and one wake-up per line).
 *
 * A client that must be dropped while we are handling a different fd
 * (its barrier_out could not be written) is shut down, not closed, so
 * its fd number stays valid in the caller's poll set until the caller
 * sees it readable (EOF) and calls pmi_server_handle() on it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "src/common/libutil/errbuf.h"

#include "pmi_fd.h"
#include "pmi_server.h"
#include "pmi_wire.h"

/* A reply line must be written within this time (the client reads it). */
#define WRITE_TIMEOUT_MS 1000
#define READS_PER_CALL 16
#define KVS_BUCKETS 4096
#define MAX_SIZE (1 << 24)
#define REPLY_LINE_MAX (PMI_SERVER_MAX_LINE + 256)
#define BATCH_MAX (16 * REPLY_LINE_MAX)

struct kvs_entry {
    struct kvs_entry *next;
    char *key;
    char *value;
};

struct client {
    int fd;                 /* -1 when not open */
    int state;              /* PMI_CLIENT_* */
    bool in_barrier;
    bool solo;            /* rejoined: barriers do not wait for others */
    bool dead;              /* shut down; close on next handle */
    size_t inlen;
    char *inbuf;            /* PMI_SERVER_MAX_LINE + 1 bytes, lazily */
};

struct pmi_server {
    int size;
    char kvsname[PMI_SERVER_KVSNAME_MAX];
    struct client *clients;     /* [size] */
    int *fdmap;                 /* fd -> rank, -1 */
    int fdmap_len;
    int nopen;
    int nfinalized;
    int nbarrier;
    bool barrier_broken;
    char barrier_reason[128];
    int kvs_count;
    struct kvs_entry *kvs[KVS_BUCKETS];
    pmi_server_log_f log_fn;
    void *log_arg;
    /* replies to the client being handled, written at the end of a read */
    int batch_rank;             /* -1: none, replies go out at once */
    size_t batch_len;
    char batch[BATCH_MAX];
};

static void logmsg (pmi_server_t *srv, const char *fmt, ...)
{
    char buf[512];
    va_list ap;

    if (!srv->log_fn)
        return;
    va_start (ap, fmt);
    vsnprintf (buf, sizeof (buf), fmt, ap);
    va_end (ap);
    srv->log_fn (buf, srv->log_arg);
}

static bool name_ok (const char *s, size_t max)
{
    size_t n = strlen (s);
    if (n == 0 || n >= max)
        return false;
    for (; *s; s++)
        if ((unsigned char)*s <= ' ' || *s == '=' || *s == 0x7f)
            return false;
    return true;
}

pmi_server_t *pmi_server_create (int size, const char *kvsname,
                                 char *errbuf, size_t errlen)
{
    pmi_server_t *srv;

    if (size < 1 || size > MAX_SIZE) {
        errbuf_set (errbuf, errlen, "pmi server: size %d is not in 1..%d",
                    size, MAX_SIZE);
        errno = EINVAL;
        return NULL;
    }
    if (!kvsname || !name_ok (kvsname, PMI_SERVER_KVSNAME_MAX)) {
        errbuf_set (errbuf, errlen, "pmi server: bad kvsname '%s'",
                    kvsname ? kvsname : "(null)");
        errno = EINVAL;
        return NULL;
    }
    if (!(srv = calloc (1, sizeof (*srv)))
        || !(srv->clients = calloc ((size_t)size, sizeof (srv->clients[0])))) {
        free (srv);
        errbuf_set (errbuf, errlen, "pmi server: out of memory");
        errno = ENOMEM;
        return NULL;
    }
    srv->size = size;
    srv->batch_rank = -1;
    strcpy (srv->kvsname, kvsname);
    for (int i = 0; i < size; i++)
        srv->clients[i].fd = -1;
    return srv;
}

void pmi_server_destroy (pmi_server_t **p)
{
    if (p && *p) {
        pmi_server_t *srv = *p;
        int saved = errno;
        for (int i = 0; i < srv->size; i++) {
            if (srv->clients[i].fd >= 0)
                close (srv->clients[i].fd);
            free (srv->clients[i].inbuf);
        }
        for (int b = 0; b < KVS_BUCKETS; b++) {
            struct kvs_entry *e = srv->kvs[b];
            while (e) {
                struct kvs_entry *next = e->next;
                free (e->key);
                free (e->value);
                free (e);
                e = next;
            }
        }
        free (srv->clients);
        free (srv->fdmap);
        free (srv);
        *p = NULL;
        errno = saved;
    }
}

void pmi_server_set_log (pmi_server_t *srv, pmi_server_log_f fn, void *arg)
{
    if (srv) {
        srv->log_fn = fn;
        srv->log_arg = arg;
    }
}

int pmi_server_add_client (pmi_server_t *srv, int rank, int fd,
                           char *errbuf, size_t errlen)
{
    int flags;

    if (!srv || fd < 0 || rank < 0 || rank >= srv->size) {
        errbuf_set (errbuf, errlen, "pmi server: bad rank %d or fd %d", rank,
                    fd);
        if (fd >= 0)
            close (fd);
        errno = EINVAL;
        return -1;
    }
    if (srv->clients[rank].state != PMI_CLIENT_NONE) {
        errbuf_set (errbuf, errlen, "pmi server: rank %d already has a client",
                    rank);
        close (fd);
        errno = EEXIST;
        return -1;
    }
    if ((flags = fcntl (fd, F_GETFL)) < 0
        || fcntl (fd, F_SETFL, flags | O_NONBLOCK) < 0
        || fcntl (fd, F_SETFD, FD_CLOEXEC) < 0) {
        int saved = errno;
        errbuf_set (errbuf, errlen, "pmi server: fd %d: %s", fd,
                    strerror (saved));
        close (fd);
        errno = saved == EBADF ? EINVAL : saved;
        return -1;
    }
    if (fd >= srv->fdmap_len) {
        int n = srv->fdmap_len ? srv->fdmap_len : 64;
        while (n <= fd)
            n *= 2;
        int *m = realloc (srv->fdmap, (size_t)n * sizeof (*m));
        if (!m) {
            errbuf_set (errbuf, errlen, "pmi server: out of memory");
            close (fd);
            errno = ENOMEM;
            return -1;
        }
        for (int i = srv->fdmap_len; i < n; i++)
            m[i] = -1;
        srv->fdmap = m;
        srv->fdmap_len = n;
    }
    struct client *c = &srv->clients[rank];
    if (!c->inbuf && !(c->inbuf = malloc (PMI_SERVER_MAX_LINE + 1))) {
        errbuf_set (errbuf, errlen, "pmi server: out of memory");
        close (fd);
        errno = ENOMEM;
        return -1;
    }
    c->fd = fd;
    c->state = PMI_CLIENT_CONNECTED;
    c->inlen = 0;
    c->in_barrier = false;
    c->dead = false;
    srv->fdmap[fd] = rank;
    srv->nopen++;
    return 0;
}

static int close_client (pmi_server_t *srv, int rank, const char *why);

int pmi_server_rejoin_client (pmi_server_t *srv, int rank, int fd,
                              char *errbuf, size_t errlen)
{
    struct client *c;
    int st;

    if (!srv || rank < 0 || rank >= srv->size) {
        errbuf_set (errbuf, errlen, "pmi server: bad rank %d", rank);
        if (fd >= 0)
            close (fd);
        errno = EINVAL;
        return -1;
    }
    c = &srv->clients[rank];
    /* The caller knows the old process is gone; its fd may not have
     * shown EOF yet. */
    if (c->fd >= 0)
        close_client (srv, rank, NULL);
    st = c->state;
    if (st == PMI_CLIENT_FINALIZED || st == PMI_CLIENT_DONE)
        srv->nfinalized--;
    c->state = PMI_CLIENT_NONE;
    if (pmi_server_add_client (srv, rank, fd, errbuf, errlen) < 0) {
        c->state = st;
        if (st == PMI_CLIENT_FINALIZED || st == PMI_CLIENT_DONE)
            srv->nfinalized++;
        return -1;
    }
    c->solo = true;
    return 0;
}

int pmi_server_client_rank (pmi_server_t *srv, int fd)
{
    if (!srv || fd < 0 || fd >= srv->fdmap_len || srv->fdmap[fd] < 0) {
        errno = ENOENT;
        return -1;
    }
    return srv->fdmap[fd];
}

int pmi_server_client_fd (pmi_server_t *srv, int rank)
{
    if (!srv || rank < 0 || rank >= srv->size || srv->clients[rank].fd < 0) {
        errno = ENOENT;
        return -1;
    }
    return srv->clients[rank].fd;
}

int pmi_server_client_state (pmi_server_t *srv, int rank)
{
    if (!srv || rank < 0 || rank >= srv->size) {
        errno = EINVAL;
        return -1;
    }
    return srv->clients[rank].state;
}

int pmi_server_fds (pmi_server_t *srv, int *fds, int max)
{
    int n = 0;

    if (!srv) {
        errno = EINVAL;
        return -1;
    }
    for (int i = 0; i < srv->size; i++) {
        if (srv->clients[i].fd >= 0) {
            if (n < max && fds)
                fds[n] = srv->clients[i].fd;
            n++;
        }
    }
    return n;
}

int pmi_server_nclients (pmi_server_t *srv)
{
    return srv ? srv->nopen : 0;
}

int pmi_server_nfinalized (pmi_server_t *srv)
{
    return srv ? srv->nfinalized : 0;
}

/* KVS */

static unsigned kvs_hash (const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 16777619u;
    }
    return h % KVS_BUCKETS;
}

static struct kvs_entry *kvs_find (pmi_server_t *srv, const char *key)
{
    for (struct kvs_entry *e = srv->kvs[kvs_hash (key)]; e; e = e->next)
        if (!strcmp (e->key, key))
            return e;
    return NULL;
}

/* 0, or -1 with errno ENOSPC (full) or ENOMEM. */
static int kvs_put (pmi_server_t *srv, const char *key, const char *value)
{
    struct kvs_entry *e = kvs_find (srv, key);
    char *v;

    if (e) {
        if (!(v = strdup (value)))
            return -1;
        free (e->value);
        e->value = v;
        return 0;
    }
    if (srv->kvs_count >= PMI_SERVER_MAX_KVS) {
        errno = ENOSPC;
        return -1;
    }
    if (!(e = calloc (1, sizeof (*e)))
        || !(e->key = strdup (key)) || !(e->value = strdup (value))) {
        if (e) {
            free (e->key);
            free (e);
        }
        errno = ENOMEM;
        return -1;
    }
    unsigned b = kvs_hash (key);
    e->next = srv->kvs[b];
    srv->kvs[b] = e;
    srv->kvs_count++;
    return 0;
}

const char *pmi_server_kvs_lookup (pmi_server_t *srv, const char *key)
{
    struct kvs_entry *e;

    if (!srv || !key || !(e = kvs_find (srv, key))) {
        errno = ENOENT;
        return NULL;
    }
    return e->value;
}

/* I/O */

static void mark_dead (pmi_server_t *srv, int rank, const char *why)
{
    struct client *c = &srv->clients[rank];
    if (!c->dead) {
        logmsg (srv, "rank %d: %s", rank, why);
        c->dead = true;
        shutdown (c->fd, SHUT_RDWR);
    }
}

static void write_out (pmi_server_t *srv, int rank, const char *buf,
                       size_t len)
{
    struct client *c = &srv->clients[rank];

    if (c->dead || c->fd < 0 || len == 0)
        return;
    if (pmi_fd_write_all (c->fd, buf, len,
                          pmi_fd_now () + WRITE_TIMEOUT_MS / 1000.0,
                          NULL) < 0) {
        char why[128];
        snprintf (why, sizeof (why), "write failed: %s", strerror (errno));
        mark_dead (srv, rank, why);
    }
}

/* Write what was gathered for the client being handled. */
static void batch_flush (pmi_server_t *srv)
{
    if (srv->batch_rank >= 0)
        write_out (srv, srv->batch_rank, srv->batch, srv->batch_len);
    srv->batch_len = 0;
}

/* Send one reply line (a newline is appended): gathered if it is for
 * the client being handled, else written at once. */
static void reply (pmi_server_t *srv, int rank, const char *fmt, ...)
{
    struct client *c = &srv->clients[rank];
    char buf[REPLY_LINE_MAX];
    va_list ap;
    int n;

    if (c->dead || c->fd < 0)
        return;
    va_start (ap, fmt);
    n = vsnprintf (buf, sizeof (buf) - 1, fmt, ap);
    va_end (ap);
    if (n < 0 || (size_t)n >= sizeof (buf) - 1)
        n = snprintf (buf, sizeof (buf) - 1, "cmd=error rc=-1 msg=reply_too_long");
    buf[n++] = '\n';
    if (rank != srv->batch_rank) {
        write_out (srv, rank, buf, (size_t)n);
        return;
    }
    if (srv->batch_len + (size_t)n > sizeof (srv->batch))
        batch_flush (srv);
    memcpy (srv->batch + srv->batch_len, buf, (size_t)n);
    srv->batch_len += (size_t)n;
}

/* Barrier */

static void barrier_release (pmi_server_t *srv, bool ok, const char *why)
{
    for (int i = 0; i < srv->size; i++) {
        if (srv->clients[i].in_barrier) {
            srv->clients[i].in_barrier = false;
            if (ok)
                reply (srv, i, "cmd=barrier_out rc=0");
            else
                reply (srv, i, "cmd=barrier_out rc=-1 msg=%s", why);
        }
    }
    srv->nbarrier = 0;
}

static void barrier_break (pmi_server_t *srv, const char *why)
{
    if (!srv->barrier_broken) {
        srv->barrier_broken = true;
        snprintf (srv->barrier_reason, sizeof (srv->barrier_reason), "%s",
                  why);
    }
    barrier_release (srv, false, srv->barrier_reason);
}

/* Commands */

static const char *reply_cmd (const char *cmd)
{
    static const struct { const char *req, *rep; } map[] = {
        { "init", "response_to_init" },
        { "get_maxes", "maxes" },
        { "get_my_kvsname", "my_kvsname" },
        { "get_universe_size", "universe_size" },
        { "get_appnum", "appnum" },
        { "put", "put_result" },
        { "get", "get_result" },
        { "barrier_in", "barrier_out" },
        { "finalize", "finalize_ack" },
    };
    for (size_t i = 0; i < sizeof (map) / sizeof (map[0]); i++)
        if (!strcmp (cmd, map[i].req))
            return map[i].rep;
    return NULL;
}

static void reply_error (pmi_server_t *srv, int rank, const char *cmd,
                         const char *msg)
{
    const char *rep = cmd ? reply_cmd (cmd) : NULL;
    bool printable = cmd && *cmd && strlen (cmd) < 48;

    if (printable) {
        for (const char *p = cmd; *p; p++)
            if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9')
                  || *p == '_'))
                printable = false;
    }
    logmsg (srv, "rank %d: %s%s%s", rank, cmd ? "cmd=" : "",
            cmd ? cmd : "", msg);
    if (rep)
        reply (srv, rank, "cmd=%s rc=-1 msg=%s", rep, msg);
    else if (printable)
        reply (srv, rank, "cmd=%s_result rc=-1 msg=%s", cmd, msg);
    else
        reply (srv, rank, "cmd=error rc=-1 msg=%s", msg);
}

static void do_put (pmi_server_t *srv, int rank, const char *line)
{
    char kvsname[PMI_SERVER_KVSNAME_MAX];
    char key[PMI_SERVER_KEYLEN_MAX + 1];
    char value[PMI_SERVER_VALLEN_MAX + 1];

    if (pmi_wire_get (line, "kvsname", kvsname, sizeof (kvsname)) < 0)
        return reply_error (srv, rank, "put", "missing_or_bad_kvsname");
    if (strcmp (kvsname, srv->kvsname) != 0)
        return reply_error (srv, rank, "put", "unknown_kvsname");
    if (pmi_wire_get (line, "key", key, sizeof (key)) <= 0)
        return reply_error (srv, rank, "put",
                            errno == ENOSPC ? "key_too_long"
                                            : "missing_or_empty_key");
    if (pmi_wire_get (line, "value", value, sizeof (value)) < 0)
        return reply_error (srv, rank, "put",
                            errno == ENOSPC ? "value_too_long"
                                            : "missing_value");
    if (kvs_put (srv, key, value) < 0)
        return reply_error (srv, rank, "put",
                            errno == ENOSPC ? "kvs_full" : "out_of_memory");
    reply (srv, rank, "cmd=put_result rc=0 msg=success");
}

static void do_get (pmi_server_t *srv, int rank, const char *line)
{
    char kvsname[PMI_SERVER_KVSNAME_MAX];
    char key[PMI_SERVER_KEYLEN_MAX + 1];
    struct kvs_entry *e;

    if (pmi_wire_get (line, "kvsname", kvsname, sizeof (kvsname)) < 0)
        return reply_error (srv, rank, "get", "missing_or_bad_kvsname");
    if (strcmp (kvsname, srv->kvsname) != 0)
        return reply_error (srv, rank, "get", "unknown_kvsname");
    if (pmi_wire_get (line, "key", key, sizeof (key)) <= 0)
        return reply_error (srv, rank, "get",
                            errno == ENOSPC ? "key_too_long"
                                            : "missing_or_empty_key");
    if (!(e = kvs_find (srv, key))) {
        reply (srv, rank, "cmd=get_result rc=-1 msg=key_not_found");
        return;
    }
    reply (srv, rank, "cmd=get_result rc=0 msg=success value=%s", e->value);
}

/* Complete the barrier if everyone is in; fail it if the ranks that are
 * not in can never come (they finalized or aborted).
 */
static void barrier_check (pmi_server_t *srv)
{
    int gone = 0;

    if (srv->nbarrier == 0)
        return;
    if (srv->nbarrier == srv->size) {
        barrier_release (srv, true, NULL);
        return;
    }
    for (int i = 0; i < srv->size; i++) {
        int st = srv->clients[i].state;
        if (st != PMI_CLIENT_NONE && st != PMI_CLIENT_CONNECTED)
            gone++;
    }
    if (gone > 0 && srv->nbarrier + gone >= srv->size)
        barrier_release (srv, false, "some_ranks_finalized");
}

static void do_barrier (pmi_server_t *srv, int rank)
{
    struct client *c = &srv->clients[rank];

    if (c->in_barrier)
        return reply_error (srv, rank, "barrier_in", "already_in_barrier");
    if (c->solo) {
        reply (srv, rank, "cmd=barrier_out rc=0");
        return;
    }
    if (srv->barrier_broken) {
        reply (srv, rank, "cmd=barrier_out rc=-1 msg=%s",
               srv->barrier_reason);
        return;
    }
    c->in_barrier = true;
    srv->nbarrier++;
    barrier_check (srv);
}

static void do_line (pmi_server_t *srv, int rank, const char *line)
{
    struct client *c = &srv->clients[rank];
    char cmd[64];
    int v;

    if (pmi_wire_get (line, "cmd", cmd, sizeof (cmd)) < 0) {
        if (!strncmp (line, "mcmd=", 5))
            return reply_error (srv, rank, NULL, "spawn_not_supported");
        return reply_error (srv, rank, NULL, "no_cmd");
    }
    /* a finalized client may still read (bgn's own extension, pmi_server.h) */
    if (c->state == PMI_CLIENT_FINALIZED && !strcmp (cmd, "get"))
        return do_get (srv, rank, line);
    if (c->state == PMI_CLIENT_FINALIZED || c->state == PMI_CLIENT_ABORTED)
        return reply_error (srv, rank, cmd, "client_already_finalized");
    if (!strcmp (cmd, "init")) {
        if (pmi_wire_get_int (line, "pmi_version", &v) < 0 || v != 1)
            return reply_error (srv, rank, cmd, "unsupported_pmi_version");
        reply (srv, rank,
               "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0");
    }
    else if (!strcmp (cmd, "get_maxes"))
        reply (srv, rank, "cmd=maxes rc=0 kvsname_max=%d keylen_max=%d"
               " vallen_max=%d", PMI_SERVER_KVSNAME_MAX,
               PMI_SERVER_KEYLEN_MAX, PMI_SERVER_VALLEN_MAX);
    else if (!strcmp (cmd, "get_my_kvsname"))
        reply (srv, rank, "cmd=my_kvsname rc=0 kvsname=%s", srv->kvsname);
    else if (!strcmp (cmd, "get_universe_size"))
        reply (srv, rank, "cmd=universe_size rc=0 size=%d", srv->size);
    else if (!strcmp (cmd, "get_appnum"))
        reply (srv, rank, "cmd=appnum rc=0 appnum=0");
    else if (!strcmp (cmd, "put"))
        do_put (srv, rank, line);
    else if (!strcmp (cmd, "get"))
        do_get (srv, rank, line);
    else if (!strcmp (cmd, "barrier_in"))
        do_barrier (srv, rank);
    else if (!strcmp (cmd, "finalize")) {
        c->state = PMI_CLIENT_FINALIZED;
        srv->nfinalized++;
        reply (srv, rank, "cmd=finalize_ack rc=0");
        barrier_check (srv);
    }
    else if (!strcmp (cmd, "abort")) {
        c->state = PMI_CLIENT_ABORTED;
        logmsg (srv, "rank %d: abort: %s", rank, line);
        char why[64];
        snprintf (why, sizeof (why), "rank_%d_aborted", rank);
        barrier_break (srv, why);
    }
    else
        reply_error (srv, rank, cmd, "unknown_command");
}

/* Close rank's fd and forget it.  Returns 1 (for pmi_server_handle). */
static int close_client (pmi_server_t *srv, int rank, const char *why)
{
    struct client *c = &srv->clients[rank];
    bool early = (c->state == PMI_CLIENT_CONNECTED);

    if (rank == srv->batch_rank)
        batch_flush (srv);      /* its last answers (an error) go first */
    if (why)
        logmsg (srv, "rank %d: %s", rank, why);
    srv->fdmap[c->fd] = -1;
    close (c->fd);
    c->fd = -1;
    c->inlen = 0;
    srv->nopen--;
    if (c->in_barrier) {
        c->in_barrier = false;
        srv->nbarrier--;
    }
    if (early && c->solo)
        c->state = PMI_CLIENT_CLOSED;
    else if (early) {
        c->state = PMI_CLIENT_CLOSED;
        logmsg (srv, "rank %d: closed before finalize", rank);
        char reason[64];
        snprintf (reason, sizeof (reason), "rank_%d_exited", rank);
        barrier_break (srv, reason);
    }
    else if (c->state == PMI_CLIENT_FINALIZED)
        c->state = PMI_CLIENT_DONE;
    return 1;
}

static int handle_reads (pmi_server_t *srv, int rank, int fd);

int pmi_server_handle (pmi_server_t *srv, int fd)
{
    int rank, rc;

    if (!srv || (rank = pmi_server_client_rank (srv, fd)) < 0) {
        errno = ENOENT;
        return -1;
    }
    srv->batch_rank = rank;
    srv->batch_len = 0;
    rc = handle_reads (srv, rank, fd);
    batch_flush (srv);  /* after a close: c->fd < 0, nothing written */
    srv->batch_rank = -1;
    return rc;
}

/* Read and answer what rank sent (its replies gathered in the batch). */
static int handle_reads (pmi_server_t *srv, int rank, int fd)
{
    struct client *c = &srv->clients[rank];

    for (int reads = 0; reads < READS_PER_CALL; reads++) {
        if (c->dead)
            return close_client (srv, rank, NULL);
        ssize_t n = read (fd, c->inbuf + c->inlen,
                          PMI_SERVER_MAX_LINE + 1 - c->inlen);
        if (n == 0)
            return close_client (srv, rank, NULL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return 0;
            char why[128];
            snprintf (why, sizeof (why), "read: %s", strerror (errno));
            return close_client (srv, rank, why);
        }
        c->inlen += (size_t)n;
        /* Answer every complete line in the buffer. */
        size_t start = 0;
        for (;;) {
            char *nl = memchr (c->inbuf + start, '\n', c->inlen - start);
            if (!nl)
                break;
            size_t len = (size_t)(nl - (c->inbuf + start));
            char *line = c->inbuf + start;
            *nl = '\0';
            if (memchr (line, '\0', len)) {
                reply_error (srv, rank, NULL, "nul_byte_in_line");
                return close_client (srv, rank, "protocol error: NUL byte");
            }
            if (len > 0 && line[len - 1] == '\r')
                line[len - 1] = '\0';
            if (line[0] != '\0')
                do_line (srv, rank, line);
            start += len + 1;
            if (c->dead)
                return close_client (srv, rank, NULL);
        }
        memmove (c->inbuf, c->inbuf + start, c->inlen - start);
        c->inlen -= start;
        batch_flush (srv);      /* this read's answers, in one write */
        if (c->inlen > PMI_SERVER_MAX_LINE) {
            reply_error (srv, rank, NULL, "line_too_long");
            return close_client (srv, rank,
                                 "protocol error: line too long");
        }
    }
    return 0;
}
