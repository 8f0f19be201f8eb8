/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* pmi_client.c: simple PMI-1 wire protocol client (see pmi_client.h).
 *
 * Each call sends one request line and reads one reply line, both under
 * one deadline (pmi_fd.h).  The fd is non-blocking so a stalled server
 * can never block a write or read past the deadline.  Replies are read into
 * a per-client buffer; bytes after the newline are kept for the next one.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/common/libutil/errbuf.h"

#include "pmi_client.h"
#include "pmi_fd.h"
#include "pmi_wire.h"

#define CLIENT_MAXLINE 8192
#define KVSNAME_BUF 257

struct pmi_client {
    int fd;
    int rank;
    int size;
    double timeout;
    int kvsname_max;
    int keylen_max;
    int vallen_max;
    bool have_kvsname;
    char kvsname[KVSNAME_BUF];
    /* A request went out and its reply did not come back whole (a
     * timeout, a broken line): a late reply would be read as the answer
     * to the next request, so nothing more is asked on this connection. */
    bool out_of_step;
    char why[128];
    size_t inlen;
    char inbuf[CLIENT_MAXLINE];
};

pmi_client_t *pmi_client_create (int fd, int rank, int size,
                                 char *errbuf, size_t errlen)
{
    pmi_client_t *cli;
    int flags;

    if (fd < 0 || size < 1 || rank < 0 || rank >= size) {
        errbuf_set (errbuf, errlen, "pmi: bad fd=%d rank=%d size=%d",
                    fd, rank, size);
        if (fd >= 0)
            close (fd);
        errno = EINVAL;
        return NULL;
    }
    if (!(cli = calloc (1, sizeof (*cli)))) {
        errbuf_set (errbuf, errlen, "pmi: out of memory");
        close (fd);
        errno = ENOMEM;
        return NULL;
    }
    cli->fd = fd;
    cli->rank = rank;
    cli->size = size;
    cli->timeout = PMI_CLIENT_DEFAULT_TIMEOUT;
    cli->kvsname_max = 256;
    cli->keylen_max = 64;
    cli->vallen_max = 1024;
    if ((flags = fcntl (fd, F_GETFL)) < 0
        || fcntl (fd, F_SETFL, flags | O_NONBLOCK) < 0
        || fcntl (fd, F_SETFD, FD_CLOEXEC) < 0) {
        int saved = errno;
        errbuf_set (errbuf, errlen, "pmi: fd %d: %s", fd, strerror (saved));
        pmi_client_destroy (&cli);
        errno = saved == EBADF ? EINVAL : saved;
        return NULL;
    }
    return cli;
}

static int env_int (const char *name, int *val, char *errbuf, size_t errlen)
{
    const char *s = getenv (name);
    char *end;
    long l;

    if (!s)
        return errbuf_fail (errbuf, errlen, ENOENT, "pmi: %s is not set (not "
                            "started by a PMI-1 launcher?)", name);
    errno = 0;
    l = strtol (s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || l < 0 || l > INT_MAX)
        return errbuf_fail (errbuf, errlen, EINVAL, "pmi: %s='%s' is not a "
                            "number", name, s);
    *val = (int)l;
    return 0;
}

pmi_client_t *pmi_client_create_from_env (char *errbuf, size_t errlen)
{
    int fd, rank, size;

    if (!getenv ("PMI_FD") && getenv ("PMI_PORT")) {
        errbuf_fail (errbuf, errlen, ENOENT,
                     "pmi: PMI_PORT is set but PMI_FD is not:"
                     " PMI_PORT connections are not supported");
        return NULL;
    }
    if (env_int ("PMI_FD", &fd, errbuf, errlen) < 0)
        return NULL;
    if (env_int ("PMI_RANK", &rank, errbuf, errlen) < 0
        || env_int ("PMI_SIZE", &size, errbuf, errlen) < 0) {
        if (errno == ENOENT)
            errno = EINVAL;
        return NULL;
    }
    if (size < 1 || rank >= size) {
        errbuf_fail (errbuf, errlen, EINVAL,
                     "pmi: PMI_RANK=%d is not below PMI_SIZE=%d", rank, size);
        return NULL;
    }
    if (fcntl (fd, F_GETFD) < 0) {
        errbuf_fail (errbuf, errlen, EINVAL, "pmi: PMI_FD=%d is not open", fd);
        return NULL;
    }
    return pmi_client_create (fd, rank, size, errbuf, errlen);
}

void pmi_client_destroy (pmi_client_t **p)
{
    if (p && *p) {
        int saved = errno;
        if ((*p)->fd >= 0)
            close ((*p)->fd);
        free (*p);
        *p = NULL;
        errno = saved;
    }
}

int pmi_client_set_timeout (pmi_client_t *cli, double seconds)
{
    if (!cli || !(seconds > 0) || isinf (seconds)) {
        errno = EINVAL;
        return -1;
    }
    cli->timeout = seconds;
    return 0;
}

double pmi_client_get_timeout (const pmi_client_t *cli)
{
    return cli ? cli->timeout : -1;
}

int pmi_client_rank (const pmi_client_t *cli)
{
    if (!cli) {
        errno = EINVAL;
        return -1;
    }
    return cli->rank;
}

int pmi_client_size (const pmi_client_t *cli)
{
    if (!cli) {
        errno = EINVAL;
        return -1;
    }
    return cli->size;
}

static int send_line (pmi_client_t *cli, const char *line, double deadline,
                      char *errbuf, size_t errlen)
{
    const char *failed;

    if (pmi_fd_write_all (cli->fd, line, strlen (line), deadline,
                          &failed) == 0)
        return 0;
    if (!failed)
        return errbuf_fail (errbuf, errlen, ETIMEDOUT, "pmi: timed out "
                            "after %gs writing to the server", cli->timeout);
    return errbuf_fail (errbuf, errlen, errno, "pmi: %s: %s", failed,
                        strerror (errno));
}

/* Read one line (without '\n') into line[len]. */
static int recv_line (pmi_client_t *cli, char *line, size_t len,
                      double deadline, char *errbuf, size_t errlen)
{
    for (;;) {
        char *nl = memchr (cli->inbuf, '\n', cli->inlen);
        if (nl) {
            size_t n = (size_t)(nl - cli->inbuf);
            if (n + 1 > len)
                return errbuf_fail (errbuf, errlen, EPROTO,
                                    "pmi: reply too long (%zu bytes)", n);
            memcpy (line, cli->inbuf, n);
            line[n] = '\0';
            if (n > 0 && line[n - 1] == '\r')
                line[n - 1] = '\0';
            cli->inlen -= n + 1;
            memmove (cli->inbuf, nl + 1, cli->inlen);
            if (memchr (line, '\0', n))
                return errbuf_fail (errbuf, errlen, EPROTO,
                                    "pmi: reply contains a NUL byte");
            return 0;
        }
        if (cli->inlen == sizeof (cli->inbuf))
            return errbuf_fail (errbuf, errlen, EPROTO,
                                "pmi: reply longer than %zu bytes",
                                sizeof (cli->inbuf));
        ssize_t n = read (cli->fd, cli->inbuf + cli->inlen,
                          sizeof (cli->inbuf) - cli->inlen);
        if (n > 0) {
            cli->inlen += (size_t)n;
            continue;
        }
        if (n == 0)
            return errbuf_fail (errbuf, errlen, ECONNRESET,
                                "pmi: the server closed the connection");
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK)
            return errbuf_fail (errbuf, errlen, errno, "pmi: read: %s",
                                strerror (errno));
        int rc = pmi_fd_wait (cli->fd, POLLIN, deadline);
        if (rc < 0)
            return errbuf_fail (errbuf, errlen, errno, "pmi: poll: %s",
                                strerror (errno));
        if (rc == 0)
            return errbuf_fail (errbuf, errlen, ETIMEDOUT,
                                "pmi: no reply from the server within %gs",
                                cli->timeout);
    }
}

/* Refuse to ask anything once the connection is out of step. */
static int in_step (pmi_client_t *cli, char *errbuf, size_t errlen)
{
    if (!cli->out_of_step)
        return 0;
    return errbuf_fail (errbuf, errlen, EPROTO, "pmi: the connection to the "
                        "server is out of step since an earlier request "
                        "failed (%s)", cli->why);
}

/* A request failed half way: remember why, pass the failure on. */
static int lose_step (pmi_client_t *cli, char *errbuf)
{
    int saved = errno;

    cli->out_of_step = true;
    snprintf (cli->why, sizeof (cli->why), "%s",
              errbuf && *errbuf ? errbuf : strerror (saved));
    errno = saved;
    return -1;
}

/* Send 'req' (without newline), read the reply into reply[len], check
 * that its cmd is 'expect' and that rc (if present) is 0.  On rc != 0
 * the error is 'rc_errno'.
 */
static int exchange (pmi_client_t *cli, const char *req, const char *expect,
                     int rc_errno, char *reply, size_t len,
                     char *errbuf, size_t errlen)
{
    char line[CLIENT_MAXLINE + 2];
    char cmd[64];
    double deadline = pmi_fd_now () + cli->timeout;
    int rc;

    if (in_step (cli, errbuf, errlen) < 0)
        return -1;
    if (snprintf (line, sizeof (line), "%s\n", req) >= (int)sizeof (line))
        return errbuf_fail (errbuf, errlen, EINVAL, "pmi: request too long");
    if (send_line (cli, line, deadline, errbuf, errlen) < 0
        || recv_line (cli, reply, len, deadline, errbuf, errlen) < 0)
        return lose_step (cli, errbuf);
    if (pmi_wire_get (reply, "cmd", cmd, sizeof (cmd)) < 0
        || strcmp (cmd, expect) != 0) {
        errbuf_fail (errbuf, errlen, EPROTO,
                     "pmi: expected cmd=%s, got '%s'", expect, reply);
        return lose_step (cli, errbuf);
    }
    if (pmi_wire_get_int (reply, "rc", &rc) < 0) {
        if (errno != ENOENT)
            return errbuf_fail (errbuf, errlen, EPROTO, "pmi: bad rc in '%s'",
                                reply);
    }
    else if (rc != 0)
        return errbuf_fail (errbuf, errlen, rc_errno, "pmi: server replied "
                            "'%s'", reply);
    return 0;
}

int pmi_client_init (pmi_client_t *cli, char *errbuf, size_t errlen)
{
    char reply[CLIENT_MAXLINE];
    int v;

    if (!cli)
        return errbuf_fail (errbuf, errlen, EINVAL, "pmi: init: no client");
    if (exchange (cli, "cmd=init pmi_version=1 pmi_subversion=1",
                  "response_to_init", EPROTO, reply, sizeof (reply),
                  errbuf, errlen) < 0)
        return -1;
    if (pmi_wire_get_int (reply, "rc", &v) < 0)
        return errbuf_fail (errbuf, errlen, EPROTO, "pmi: init: no rc in '%s'",
                            reply);
    if (pmi_wire_get_int (reply, "pmi_version", &v) == 0 && v != 1)
        return errbuf_fail (errbuf, errlen, EPROTO,
                            "pmi: init: server speaks PMI version %d: '%s'",
                            v, reply);
    return 0;
}

int pmi_client_get_maxes (pmi_client_t *cli, int *kvsname_max,
                          int *keylen_max, int *vallen_max,
                          char *errbuf, size_t errlen)
{
    char reply[CLIENT_MAXLINE];
    int k, kl, vl;

    if (!cli)
        return errbuf_fail (errbuf, errlen, EINVAL, "pmi: get_maxes: no "
                            "client");
    if (exchange (cli, "cmd=get_maxes", "maxes", EPROTO, reply,
                  sizeof (reply), errbuf, errlen) < 0)
        return -1;
    if (pmi_wire_get_int (reply, "kvsname_max", &k) < 0
        || pmi_wire_get_int (reply, "keylen_max", &kl) < 0
        || pmi_wire_get_int (reply, "vallen_max", &vl) < 0
        || k < 1 || kl < 1 || vl < 1)
        return errbuf_fail (errbuf, errlen, EPROTO, "pmi: get_maxes: bad "
                            "reply '%s'", reply);
    cli->kvsname_max = k;
    cli->keylen_max = kl;
    cli->vallen_max = vl;
    if (kvsname_max)
        *kvsname_max = k;
    if (keylen_max)
        *keylen_max = kl;
    if (vallen_max)
        *vallen_max = vl;
    return 0;
}

int pmi_client_get_my_kvsname (pmi_client_t *cli, char *buf, size_t len,
                               char *errbuf, size_t errlen)
{
    char reply[CLIENT_MAXLINE];

    if (!cli)
        return errbuf_fail (errbuf, errlen, EINVAL, "pmi: get_my_kvsname: no "
                            "client");
    if (!cli->have_kvsname) {
        if (exchange (cli, "cmd=get_my_kvsname", "my_kvsname", EPROTO, reply,
                      sizeof (reply), errbuf, errlen) < 0)
            return -1;
        if (pmi_wire_get (reply, "kvsname", cli->kvsname,
                          sizeof (cli->kvsname)) <= 0)
            return errbuf_fail (errbuf, errlen, EPROTO,
                                "pmi: get_my_kvsname: bad reply '%s'", reply);
        cli->have_kvsname = true;
    }
    if (buf) {
        if (strlen (cli->kvsname) + 1 > len)
            return errbuf_fail (errbuf, errlen, ENOSPC,
                                "pmi: get_my_kvsname: buffer too small");
        strcpy (buf, cli->kvsname);
    }
    return 0;
}

static bool key_char (int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
        || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.'
        || c == ':' || c == '/';
}

static int check_key (pmi_client_t *cli, const char *op, const char *key,
                      char *errbuf, size_t errlen)
{
    if (!key || !*key)
        return errbuf_fail (errbuf, errlen, EINVAL, "pmi: %s: empty key", op);
    size_t n = strlen (key);
    if (n > (size_t)cli->keylen_max)
        return errbuf_fail (errbuf, errlen, EINVAL,
                            "pmi: %s: key is %zu bytes, the limit is %d",
                            op, n, cli->keylen_max);
    for (const char *p = key; *p; p++)
        if (!key_char ((unsigned char)*p))
            return errbuf_fail (errbuf, errlen, EINVAL,
                                "pmi: %s: key '%s' has a character outside"
                                " [A-Za-z0-9_.:/-]", op, key);
    return 0;
}

int pmi_client_kvs_put_raw (pmi_client_t *cli, const char *key,
                            const char *value, char *errbuf, size_t errlen)
{
    char req[CLIENT_MAXLINE];
    char reply[CLIENT_MAXLINE];

    if (!cli || !value)
        return errbuf_fail (errbuf, errlen, EINVAL, "pmi: put: NULL argument");
    if (check_key (cli, "put", key, errbuf, errlen) < 0)
        return -1;
    size_t n = strlen (value);
    if (n > (size_t)cli->vallen_max)
        return errbuf_fail (errbuf, errlen, EINVAL,
                            "pmi: put %s: value is %zu bytes, the limit is %d",
                            key, n, cli->vallen_max);
    for (const char *p = value; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c <= ' ' || c == '=' || c == 0x7f)
            return errbuf_fail (errbuf, errlen, EINVAL, "pmi: put %s: value "
                                "has a space, '=' or a control character (use "
                                "pmi_client_kvs_put)", key);
    }
    if (pmi_client_get_my_kvsname (cli, NULL, 0, errbuf, errlen) < 0)
        return -1;
    if (snprintf (req, sizeof (req), "cmd=put kvsname=%s key=%s value=%s",
                  cli->kvsname, key, value) >= (int)sizeof (req))
        return errbuf_fail (errbuf, errlen, EINVAL, "pmi: put %s: line too "
                            "long", key);
    return exchange (cli, req, "put_result", EPROTO, reply, sizeof (reply),
                     errbuf, errlen);
}

int pmi_client_kvs_get_raw (pmi_client_t *cli, const char *key,
                            char *buf, size_t len,
                            char *errbuf, size_t errlen)
{
    char req[CLIENT_MAXLINE];
    char reply[CLIENT_MAXLINE];
    int n;

    if (!cli || !buf)
        return errbuf_fail (errbuf, errlen, EINVAL, "pmi: get: NULL argument");
    if (check_key (cli, "get", key, errbuf, errlen) < 0)
        return -1;
    if (pmi_client_get_my_kvsname (cli, NULL, 0, errbuf, errlen) < 0)
        return -1;
    snprintf (req, sizeof (req), "cmd=get kvsname=%s key=%s",
              cli->kvsname, key);
    if (exchange (cli, req, "get_result", ENOENT, reply, sizeof (reply),
                  errbuf, errlen) < 0)
        return -1;
    if ((n = pmi_wire_get (reply, "value", buf, len)) < 0) {
        if (errno == ENOSPC)
            return errbuf_fail (errbuf, errlen, ENOSPC,
                                "pmi: get %s: buffer too small", key);
        return errbuf_fail (errbuf, errlen, EPROTO, "pmi: get %s: no value in "
                            "'%s'", key, reply);
    }
    return n;
}

static bool safe_char (int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
        || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.'
        || c == ':' || c == '/';
}

int pmi_value_encode (const char *in, char *out, size_t len)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t o = 0;

    if (!in || !out) {
        errno = EINVAL;
        return -1;
    }
    for (const unsigned char *p = (const unsigned char *)in; *p; p++) {
        if (safe_char (*p)) {
            if (o + 1 >= len)
                goto nospc;
            out[o++] = (char)*p;
        }
        else {
            if (o + 3 >= len)
                goto nospc;
            out[o++] = '%';
            out[o++] = hex[*p >> 4];
            out[o++] = hex[*p & 0xf];
        }
    }
    if (o >= len)
        goto nospc;
    out[o] = '\0';
    return (int)o;
nospc:
    errno = ENOSPC;
    return -1;
}

static int hexval (int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

int pmi_value_decode (const char *in, char *out, size_t len)
{
    size_t o = 0;

    if (!in || !out) {
        errno = EINVAL;
        return -1;
    }
    for (const char *p = in; *p; p++) {
        int c;
        if (*p == '%') {
            int hi = hexval ((unsigned char)p[1]);
            int lo = hi < 0 ? -1 : hexval ((unsigned char)p[2]);
            if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) {
                errno = EINVAL;
                return -1;
            }
            c = hi * 16 + lo;
            p += 2;
        }
        else if (safe_char ((unsigned char)*p))
            c = (unsigned char)*p;
        else {
            errno = EINVAL;
            return -1;
        }
        if (o + 1 >= len) {
            errno = ENOSPC;
            return -1;
        }
        out[o++] = (char)c;
    }
    if (o >= len) {
        errno = ENOSPC;
        return -1;
    }
    out[o] = '\0';
    return (int)o;
}

int pmi_client_kvs_put (pmi_client_t *cli, const char *key,
                        const char *value, char *errbuf, size_t errlen)
{
    char enc[CLIENT_MAXLINE];

    if (!cli || !value)
        return errbuf_fail (errbuf, errlen, EINVAL, "pmi: put: NULL argument");
    if (pmi_value_encode (value, enc, sizeof (enc)) < 0
        || strlen (enc) > (size_t)cli->vallen_max)
        return errbuf_fail (errbuf, errlen, EINVAL,
                            "pmi: put %s: encoded value longer than %d bytes",
                            key ? key : "(null)", cli->vallen_max);
    return pmi_client_kvs_put_raw (cli, key, enc, errbuf, errlen);
}

/* One get_result line into value i. */
static void take_value (const char *reply, char *value, size_t len, int *vlen,
                        int *err)
{
    char cmd[32], enc[CLIENT_MAXLINE];
    int rc = 0, n;

    *vlen = -1;
    if (pmi_wire_get (reply, "cmd", cmd, sizeof (cmd)) < 0
        || strcmp (cmd, "get_result") != 0) {
        *err = EPROTO;
        return;
    }
    if (pmi_wire_get_int (reply, "rc", &rc) == 0 && rc != 0) {
        *err = ENOENT;
        return;
    }
    if (pmi_wire_get (reply, "value", enc, sizeof (enc)) < 0
        || (n = pmi_value_decode (enc, value, len)) < 0) {
        *err = errno == ENOSPC ? ENOSPC : EPROTO;
        return;
    }
    *vlen = n;
    *err = 0;
}

int pmi_client_kvs_get_many (pmi_client_t *cli, const char *const keys[],
                             int n, char *values[], size_t len, int lens[],
                             int errs[], char *errbuf, size_t errlen)
{
    char reply[CLIENT_MAXLINE];
    char *batch;
    size_t cap;

    if (!cli || (n > 0 && (!keys || !values || !lens || !errs)))
        return errbuf_fail (errbuf, errlen, EINVAL, "pmi: get: NULL argument");
    /* "cmd=get kvsname=K key=k\n", each at its longest */
    cap = (size_t)PMI_CLIENT_PIPELINE
          * (32 + KVSNAME_BUF + (size_t)cli->keylen_max) + 1;
    if (pmi_client_get_my_kvsname (cli, NULL, 0, errbuf, errlen) < 0
        || in_step (cli, errbuf, errlen) < 0)
        return -1;
    if (!(batch = malloc (cap)))
        return errbuf_fail (errbuf, errlen, ENOMEM, "pmi: out of memory");
    for (int first = 0; first < n; first += PMI_CLIENT_PIPELINE) {
        int last = first + PMI_CLIENT_PIPELINE < n ? first + PMI_CLIENT_PIPELINE
                                                   : n;
        double deadline = pmi_fd_now () + cli->timeout;
        size_t used = 0;
        for (int i = first; i < last; i++) {
            if (check_key (cli, "get", keys[i], errbuf, errlen) < 0) {
                free (batch);
                return -1;
            }
            used += (size_t)snprintf (batch + used, cap - used,
                                      "cmd=get kvsname=%s key=%s\n",
                                      cli->kvsname, keys[i]);
        }
        if (send_line (cli, batch, deadline, errbuf, errlen) < 0) {
            free (batch);
            return lose_step (cli, errbuf);
        }
        for (int i = first; i < last; i++) {
            if (recv_line (cli, reply, sizeof (reply), deadline, errbuf,
                           errlen) < 0) {
                free (batch);
                return lose_step (cli, errbuf);
            }
            take_value (reply, values[i], len, &lens[i], &errs[i]);
        }
    }
    free (batch);
    return 0;
}

int pmi_client_kvs_get (pmi_client_t *cli, const char *key,
                        char *buf, size_t len, char *errbuf, size_t errlen)
{
    char enc[CLIENT_MAXLINE];
    int n;

    if (!cli || !buf)
        return errbuf_fail (errbuf, errlen, EINVAL, "pmi: get: NULL argument");
    if (pmi_client_kvs_get_raw (cli, key, enc, sizeof (enc),
                                errbuf, errlen) < 0)
        return -1;
    if ((n = pmi_value_decode (enc, buf, len)) < 0) {
        if (errno == ENOSPC)
            return errbuf_fail (errbuf, errlen, ENOSPC,
                                "pmi: get %s: buffer too small", key);
        return errbuf_fail (errbuf, errlen, EPROTO,
                            "pmi: get %s: value '%s' is not percent-encoded",
                            key, enc);
    }
    return n;
}

int pmi_client_barrier (pmi_client_t *cli, char *errbuf, size_t errlen)
{
    char reply[CLIENT_MAXLINE];

    if (!cli)
        return errbuf_fail (errbuf, errlen, EINVAL, "pmi: barrier: no client");
    return exchange (cli, "cmd=barrier_in", "barrier_out", EPROTO, reply,
                     sizeof (reply), errbuf, errlen);
}

int pmi_client_finalize (pmi_client_t *cli, char *errbuf, size_t errlen)
{
    char reply[CLIENT_MAXLINE];

    if (!cli)
        return errbuf_fail (errbuf, errlen, EINVAL, "pmi: finalize: no "
                            "client");
    return exchange (cli, "cmd=finalize", "finalize_ack", EPROTO, reply,
                     sizeof (reply), errbuf, errlen);
}
