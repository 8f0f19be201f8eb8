/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test/pmi.c: unit tests for the PMI-1 client and server.
 *
 * - value escaping round trips (every Z85 symbol, spaces, '=', '%')
 * - 4 forked clients against the server driven by poll() in the parent
 * - protocol errors sent raw to the server: answered with rc=-1, server
 *   survives; over-long line closes only that client
 * - barrier broken by a client that exits first
 * - client deadlines (ETIMEDOUT), malformed replies, rc != 0, EOF
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "src/common/libtap/tap.h"
#include "src/common/libpmi/pmi_client.h"
#include "src/common/libpmi/pmi_server.h"

#define Z85_ALPHABET "0123456789abcdefghijklmnopqrstuvwxyz" \
                     "ABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"

static double now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void test_escaping (void)
{
    const char *vals[] = {
        Z85_ALPHABET, "ipc:///tmp/x/3", "tcp://10.0.0.1:8050", "a b=c%d",
        "", "%", "100%", "x\ny\tz", "\xff\x01", NULL,
    };
    char enc[1024], dec[1024];

    for (int i = 0; vals[i]; i++) {
        int n = pmi_value_encode (vals[i], enc, sizeof (enc));
        int bad = (int)strcspn (enc, " =\n\t%");
        /* '%' is allowed in the encoding only as an escape introducer */
        int m = pmi_value_decode (enc, dec, sizeof (dec));
        ok (n >= 0 && m == (int)strlen (vals[i]) && !strcmp (dec, vals[i])
            && (enc[bad] == '\0' || enc[bad] == '%') && !strchr (enc, ' ')
            && !strchr (enc, '='),
            "escape round trip %d: '%s'", i, enc);
    }
    pmi_value_encode ("ipc:///tmp/x/3", enc, sizeof (enc));
    is (enc, "ipc:///tmp/x/3", "URIs are not changed by encoding");
    pmi_value_encode ("a=b c%", enc, sizeof (enc));
    is (enc, "a%3Db%20c%25", "'=', ' ', '%%' are escaped");
    errno = 0;
    ok (pmi_value_encode ("abcdef", enc, 6) < 0 && errno == ENOSPC,
        "encode into too small buffer: ENOSPC");
    ok (pmi_value_encode ("abcde", enc, 6) == 5, "encode exact fit");
    ok (pmi_value_decode ("%4", dec, sizeof (dec)) < 0 && errno == EINVAL,
        "decode '%%4': EINVAL");
    ok (pmi_value_decode ("%zz", dec, sizeof (dec)) < 0 && errno == EINVAL,
        "decode '%%zz': EINVAL");
    ok (pmi_value_decode ("%00", dec, sizeof (dec)) < 0 && errno == EINVAL,
        "decode '%%00' (NUL): EINVAL");
    ok (pmi_value_decode ("a=b", dec, sizeof (dec)) < 0 && errno == EINVAL,
        "decode of a raw '=': EINVAL");
    ok (pmi_value_decode ("%41%62", dec, sizeof (dec)) == 2
        && !strcmp (dec, "Ab"), "decode lower/upper hex");
}

/* Child side of the 4-rank exchange. */
static int child_run (int fd, int rank, int size)
{
    char err[512], key[64], want[256], got[256], name[256];
    int kmax, klen, vlen;
    pmi_client_t *cli = pmi_client_create (fd, rank, size, err, sizeof (err));

    if (!cli)
        goto fail;
    pmi_client_set_timeout (cli, 10);
    if (pmi_client_init (cli, err, sizeof (err)) < 0
        || pmi_client_get_maxes (cli, &kmax, &klen, &vlen, err,
                                 sizeof (err)) < 0
        || pmi_client_get_my_kvsname (cli, name, sizeof (name), err,
                                      sizeof (err)) < 0)
        goto fail;
    if (kmax != 256 || klen != 64 || vlen != 1024
        || strcmp (name, "bgn-test")) {
        snprintf (err, sizeof (err), "maxes/kvsname wrong");
        goto fail;
    }
    snprintf (key, sizeof (key), "uri-%d", rank);
    snprintf (want, sizeof (want), "%s|%d", Z85_ALPHABET, rank);
    if (pmi_client_kvs_put (cli, key, want, err, sizeof (err)) < 0
        || pmi_client_barrier (cli, err, sizeof (err)) < 0)
        goto fail;
    for (int r = 0; r < size; r++) {
        snprintf (key, sizeof (key), "uri-%d", r);
        snprintf (want, sizeof (want), "%s|%d", Z85_ALPHABET, r);
        if (pmi_client_kvs_get (cli, key, got, sizeof (got), err,
                                sizeof (err)) < 0)
            goto fail;
        if (strcmp (got, want)) {
            snprintf (err, sizeof (err), "%s: wrong value", key);
            goto fail;
        }
    }
    if (pmi_client_kvs_get (cli, "no-such-key", got, sizeof (got), err,
                            sizeof (err)) >= 0 || errno != ENOENT) {
        snprintf (err, sizeof (err), "missing key did not give ENOENT");
        goto fail;
    }
    /* 70 gets pipelined (three batches), one of them a missing key */
    {
        enum { N = 70, MISSING = 35 };
        char names[N][64], bufs[N][256], *vals[N];
        const char *keys[N];
        int lens[N], errs[N];
        for (int i = 0; i < N; i++) {
            if (i == MISSING)
                snprintf (names[i], sizeof (names[i]), "no-such-key");
            else
                snprintf (names[i], sizeof (names[i]), "uri-%d", i % size);
            keys[i] = names[i];
            vals[i] = bufs[i];
        }
        if (pmi_client_kvs_get_many (cli, keys, N, vals, sizeof (bufs[0]),
                                     lens, errs, err, sizeof (err)) < 0)
            goto fail;
        for (int i = 0; i < N; i++) {
            snprintf (want, sizeof (want), "%s|%d", Z85_ALPHABET, i % size);
            if (i == MISSING ? (lens[i] != -1 || errs[i] != ENOENT)
                             : (lens[i] != (int)strlen (want)
                                || strcmp (bufs[i], want) || errs[i])) {
                snprintf (err, sizeof (err), "get_many: key %d (%s) wrong",
                          i, keys[i]);
                goto fail;
            }
        }
    }
    if (pmi_client_barrier (cli, err, sizeof (err)) < 0
        || pmi_client_finalize (cli, err, sizeof (err)) < 0)
        goto fail;
    pmi_client_destroy (&cli);
    return 0;
fail:
    fprintf (stderr, "rank %d: %s\n", rank, err);
    pmi_client_destroy (&cli);
    return 1;
}

static void test_fork (int size)
{
    char err[256];
    pmi_server_t *srv = pmi_server_create (size, "bgn-test", err, sizeof (err));
    pid_t pids[16];
    int ok_add = 1;

    ok (srv != NULL, "server create size %d", size);
    fflush (stdout);
    for (int r = 0; r < size; r++) {
        int sv[2];
        if (socketpair (AF_UNIX, SOCK_STREAM, 0, sv) < 0)
            bail_out ("socketpair");
        pids[r] = fork ();
        if (pids[r] < 0)
            bail_out ("fork");
        if (pids[r] == 0) {
            close (sv[0]);
            pmi_server_destroy (&srv);  /* closes earlier ranks' fds */
            _exit (child_run (sv[1], r, size));
        }
        close (sv[1]);
        if (pmi_server_add_client (srv, r, sv[0], err, sizeof (err)) < 0)
            ok_add = 0;
    }
    ok (ok_add, "added %d clients", size);
    cmp_ok (pmi_server_nclients (srv), "==", size, "nclients %d", size);

    double deadline = now () + 20;
    int closed = 0, errors = 0;
    while (pmi_server_nclients (srv) > 0 && now () < deadline) {
        struct pollfd pfd[16];
        int fds[16];
        int n = pmi_server_fds (srv, fds, 16);
        for (int i = 0; i < n; i++)
            pfd[i] = (struct pollfd){ .fd = fds[i], .events = POLLIN };
        if (poll (pfd, (nfds_t)n, 1000) < 0)
            break;
        for (int i = 0; i < n; i++) {
            if (pfd[i].revents) {
                int rank = pmi_server_client_rank (srv, pfd[i].fd);
                int rc = pmi_server_handle (srv, pfd[i].fd);
                if (rc == 1) {
                    closed++;
                    if (pmi_server_client_state (srv, rank)
                        != PMI_CLIENT_DONE)
                        errors++;
                }
                else if (rc < 0)
                    errors++;
            }
        }
    }
    cmp_ok (closed, "==", size, "all %d clients closed", size);
    cmp_ok (errors, "==", 0, "no early exits or handle errors");
    cmp_ok (pmi_server_nfinalized (srv), "==", size, "all finalized");
    int good = 0;
    for (int r = 0; r < size; r++) {
        int status;
        if (waitpid (pids[r], &status, 0) == pids[r] && WIFEXITED (status)
            && WEXITSTATUS (status) == 0)
            good++;
    }
    cmp_ok (good, "==", size, "every child exited 0");
    char want[256];
    snprintf (want, sizeof (want), "%s|%d", Z85_ALPHABET, size - 1);
    char enc[1024];
    pmi_value_encode (want, enc, sizeof (enc));
    is (pmi_server_kvs_lookup (srv, "uri-3"), enc,
        "server-side lookup of uri-3 gives the encoded value");
    ok (pmi_server_kvs_lookup (srv, "nope") == NULL && errno == ENOENT,
        "server-side lookup of a missing key: ENOENT");
    pmi_server_destroy (&srv);
    ok (srv == NULL, "server destroy sets NULL");
}

/* Send a raw line, let the server handle it, return its reply. */
static char reply[8192];
static const char *xchg (pmi_server_t *srv, int sfd, int tfd,
                         const char *line, int *handle_rc)
{
    size_t len = strlen (line);
    if (write (tfd, line, len) != (ssize_t)len)
        return "(write failed)";
    int rc = pmi_server_handle (srv, sfd);
    if (handle_rc)
        *handle_rc = rc;
    size_t off = 0;
    reply[0] = '\0';
    while (off < sizeof (reply) - 1) {
        struct pollfd pfd = { .fd = tfd, .events = POLLIN };
        if (poll (&pfd, 1, 200) <= 0)
            break;
        ssize_t n = read (tfd, reply + off, 1);
        if (n <= 0)
            break;
        if (reply[off] == '\n')
            break;
        off++;
    }
    reply[off] = '\0';
    return reply;
}

static int nlogs;
static char lastlog[512];
static void log_cb (const char *msg, void *arg)
{
    nlogs++;
    snprintf (lastlog, sizeof (lastlog), "%s", msg);
    (void)arg;
}

static void test_protocol_errors (void)
{
    char err[256];
    pmi_server_t *srv = pmi_server_create (2, "K", err, sizeof (err));
    int sv[2], sv2[2];
    int rc;
    char big[6000];

    pmi_server_set_log (srv, log_cb, NULL);
    socketpair (AF_UNIX, SOCK_STREAM, 0, sv);
    ok (pmi_server_add_client (srv, 0, sv[0], err, sizeof (err)) == 0,
        "add rank 0");
    socketpair (AF_UNIX, SOCK_STREAM, 0, sv2);
    errno = 0;
    ok (pmi_server_add_client (srv, 0, sv2[0], err, sizeof (err)) < 0
        && errno == EEXIST, "add rank 0 again: EEXIST (%s)", err);
    socketpair (AF_UNIX, SOCK_STREAM, 0, sv2);
    ok (pmi_server_add_client (srv, 2, sv2[0], err, sizeof (err)) < 0
        && errno == EINVAL, "add rank 2 of 2: EINVAL");
    ok (pmi_server_handle (srv, 12345) < 0 && errno == ENOENT,
        "handle unknown fd: ENOENT");
    ok (pmi_server_client_rank (srv, sv[0]) == 0, "client_rank");
    ok (pmi_server_client_fd (srv, 0) == sv[0], "client_fd");

    is (xchg (srv, sv[0], sv[1], "cmd=init pmi_version=1 pmi_subversion=1\n",
              NULL),
        "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0", "init");
    is (xchg (srv, sv[0], sv[1], "cmd=init pmi_version=2\n", NULL),
        "cmd=response_to_init rc=-1 msg=unsupported_pmi_version",
        "init version 2: rc=-1");
    is (xchg (srv, sv[0], sv[1], "hello world\n", NULL),
        "cmd=error rc=-1 msg=no_cmd", "garbage line: rc=-1");
    is (xchg (srv, sv[0], sv[1], "cmd=bogus x=y\n", NULL),
        "cmd=bogus_result rc=-1 msg=unknown_command", "unknown command");
    is (xchg (srv, sv[0], sv[1], "cmd=%%$#\n", NULL),
        "cmd=error rc=-1 msg=unknown_command", "unprintable command name");
    is (xchg (srv, sv[0], sv[1], "cmd=put kvsname=X key=a value=b\n", NULL),
        "cmd=put_result rc=-1 msg=unknown_kvsname", "put to wrong kvsname");
    is (xchg (srv, sv[0], sv[1], "cmd=put kvsname=K key=a\n", NULL),
        "cmd=put_result rc=-1 msg=missing_value", "put without value");
    is (xchg (srv, sv[0], sv[1], "cmd=put kvsname=K value=b\n", NULL),
        "cmd=put_result rc=-1 msg=missing_or_empty_key", "put without key");
    is (xchg (srv, sv[0], sv[1], "cmd=put key=a value=b\n", NULL),
        "cmd=put_result rc=-1 msg=missing_or_bad_kvsname",
        "put without kvsname");
    memset (big, 'k', 100);
    snprintf (big + 100, sizeof (big) - 100, " value=1\n");
    char line[7000];
    snprintf (line, sizeof (line), "cmd=put kvsname=K key=%s", big);
    is (xchg (srv, sv[0], sv[1], line, NULL),
        "cmd=put_result rc=-1 msg=key_too_long", "put with 100-byte key");
    memset (big, 'v', 2000);
    big[2000] = '\0';
    snprintf (line, sizeof (line), "cmd=put kvsname=K key=a value=%s\n", big);
    is (xchg (srv, sv[0], sv[1], line, NULL),
        "cmd=put_result rc=-1 msg=value_too_long", "put with 2000-byte value");
    is (xchg (srv, sv[0], sv[1], "cmd=put kvsname=K key=a value=x=y\n",
              NULL),
        "cmd=put_result rc=0 msg=success", "put value with '='");
    is (xchg (srv, sv[0], sv[1], "cmd=get kvsname=K key=a\n", NULL),
        "cmd=get_result rc=0 msg=success value=x=y", "get it back");
    is (xchg (srv, sv[0], sv[1], "cmd=get kvsname=K key=missing\n", NULL),
        "cmd=get_result rc=-1 msg=key_not_found", "get missing key: rc=-1");
    is (xchg (srv, sv[0], sv[1], "cmd=get_maxes\r\n", NULL),
        "cmd=maxes rc=0 kvsname_max=256 keylen_max=64 vallen_max=1024",
        "get_maxes (CRLF accepted)");
    is (xchg (srv, sv[0], sv[1], "\ncmd=get_universe_size\n", NULL),
        "cmd=universe_size rc=0 size=2", "empty line ignored; universe size");
    is (xchg (srv, sv[0], sv[1], "mcmd=spawn\n", NULL),
        "cmd=error rc=-1 msg=spawn_not_supported", "spawn: rc=-1");
    /* two commands in one write: both answered, in order */
    xchg (srv, sv[0], sv[1], "cmd=get_my_kvsname\ncmd=get_appnum\n", NULL);
    is (reply, "cmd=my_kvsname rc=0 kvsname=K", "pipelined command 1");
    xchg (srv, sv[0], sv[1], "", NULL);
    is (reply, "cmd=appnum rc=0 appnum=0", "pipelined command 2");
    /* a line split over two writes */
    is (xchg (srv, sv[0], sv[1], "cmd=get_app", &rc), "",
        "partial line: no reply yet");
    cmp_ok (rc, "==", 0, "handle returns 0 on a partial line");
    is (xchg (srv, sv[0], sv[1], "num\n", NULL), "cmd=appnum rc=0 appnum=0",
        "rest of the line: answered");
    cmp_ok (pmi_server_client_state (srv, 0), "==", PMI_CLIENT_CONNECTED,
            "rank 0 still connected after all errors");

    /* rank 1: a well-behaved client enters the barrier */
    socketpair (AF_UNIX, SOCK_STREAM, 0, sv2);
    ok (pmi_server_add_client (srv, 1, sv2[0], err, sizeof (err)) == 0,
        "add rank 1");
    is (xchg (srv, sv2[0], sv2[1], "cmd=barrier_in\n", NULL), "",
        "rank 1 waits in the barrier");

    /* rank 0: an over-long line closes it */
    char *huge = malloc (PMI_SERVER_MAX_LINE + 100);
    memset (huge, 'x', PMI_SERVER_MAX_LINE + 99);
    huge[PMI_SERVER_MAX_LINE + 99] = '\0';
    rc = 0;
    for (int i = 0; i < 4 && rc == 0; i++)   /* the server reads in chunks */
        xchg (srv, sv[0], sv[1], i == 0 ? huge : "", &rc);
    free (huge);
    cmp_ok (rc, "==", 1, "over-long line: handle returns 1 (closed)");
    is (reply, "cmd=error rc=-1 msg=line_too_long", "told why");
    char c;
    ok (read (sv[1], &c, 1) <= 0, "then EOF/ECONNRESET on the client side");
    cmp_ok (pmi_server_client_state (srv, 0), "==", PMI_CLIENT_CLOSED,
            "rank 0 state CLOSED");
    is (lastlog, "rank 0: closed before finalize", "log callback: %d messages",
        nlogs);
    ok (pmi_server_client_rank (srv, sv[0]) < 0,
        "its fd is forgotten");
    cmp_ok (pmi_server_nclients (srv), "==", 1, "one client left");

    /* rank 1 was in the barrier: the exit broke it */
    xchg (srv, sv2[0], sv2[1], "", NULL);
    is (reply, "cmd=barrier_out rc=-1 msg=rank_0_exited",
        "waiting rank gets barrier_out rc=-1");
    is (xchg (srv, sv2[0], sv2[1], "cmd=barrier_in\n", NULL),
        "cmd=barrier_out rc=-1 msg=rank_0_exited",
        "later barrier fails at once");
    is (xchg (srv, sv2[0], sv2[1], "cmd=finalize\n", NULL),
        "cmd=finalize_ack rc=0", "server still answers rank 1");
    is (xchg (srv, sv2[0], sv2[1], "cmd=get_maxes\n", NULL),
        "cmd=maxes rc=-1 msg=client_already_finalized",
        "command after finalize: rc=-1");
    is (xchg (srv, sv2[0], sv2[1], "cmd=get kvsname=K key=nokey\n",
              NULL),
        "cmd=get_result rc=-1 msg=key_not_found",
        "but a get after finalize is answered (a broker asks again where "
        "a restarted peer listens)");
    close (sv2[1]);
    ok (pmi_server_handle (srv, sv2[0]) == 1, "EOF after finalize: 1");
    cmp_ok (pmi_server_client_state (srv, 1), "==", PMI_CLIENT_DONE,
            "rank 1 state DONE");
    close (sv[1]);
    pmi_server_destroy (&srv);

    /* NUL byte */
    srv = pmi_server_create (1, "K", NULL, 0);
    socketpair (AF_UNIX, SOCK_STREAM, 0, sv);
    pmi_server_add_client (srv, 0, sv[0], NULL, 0);
    if (write (sv[1], "cmd=init\0x\n", 11) != 11)
        diag ("write failed");
    ok (pmi_server_handle (srv, sv[0]) == 1, "NUL byte: client closed");
    close (sv[1]);
    pmi_server_destroy (&srv);

    /* barrier that cannot complete: the other rank finalized */
    srv = pmi_server_create (3, "K", NULL, 0);
    socketpair (AF_UNIX, SOCK_STREAM, 0, sv);
    socketpair (AF_UNIX, SOCK_STREAM, 0, sv2);
    int sv3[2];
    socketpair (AF_UNIX, SOCK_STREAM, 0, sv3);
    pmi_server_add_client (srv, 0, sv[0], NULL, 0);
    pmi_server_add_client (srv, 1, sv2[0], NULL, 0);
    pmi_server_add_client (srv, 2, sv3[0], NULL, 0);
    is (xchg (srv, sv[0], sv[1], "cmd=barrier_in\n", NULL), "",
        "3 ranks: rank 0 waits in the barrier");
    is (xchg (srv, sv2[0], sv2[1], "cmd=finalize\n", NULL),
        "cmd=finalize_ack rc=0", "rank 1 finalizes");
    is (xchg (srv, sv3[0], sv3[1], "cmd=barrier_in\n", NULL),
        "cmd=barrier_out rc=-1 msg=some_ranks_finalized",
        "rank 2 enters: the barrier fails (rank 1 finalized)");
    xchg (srv, sv[0], sv[1], "", NULL);
    is (reply, "cmd=barrier_out rc=-1 msg=some_ranks_finalized",
        "rank 0 is released with rc=-1 too");
    xchg (srv, sv3[0], sv3[1], "cmd=abort exitcode=3\n", NULL);
    cmp_ok (pmi_server_client_state (srv, 2), "==", PMI_CLIENT_ABORTED,
            "abort: state ABORTED");
    close (sv[1]);
    close (sv2[1]);
    close (sv3[1]);
    pmi_server_destroy (&srv);

    ok (pmi_server_create (0, "K", err, sizeof (err)) == NULL
        && errno == EINVAL, "create size 0: EINVAL");
    ok (pmi_server_create (2, "a b", err, sizeof (err)) == NULL
        && errno == EINVAL, "create kvsname with space: EINVAL");
}

/* Preload the reply, then run init against it. */
static int client_vs_reply (const char *canned, double timeout,
                            char *err, size_t errlen, double *elapsed)
{
    int sv[2];
    socketpair (AF_UNIX, SOCK_STREAM, 0, sv);
    pmi_client_t *cli = pmi_client_create (sv[0], 0, 1, err, errlen);
    pmi_client_set_timeout (cli, timeout);
    if (canned && *canned) {
        if (write (sv[1], canned, strlen (canned)) < 0)
            diag ("write failed");
    }
    if (!canned)
        close (sv[1]);
    double t0 = now ();
    int rc = pmi_client_init (cli, err, errlen);
    int saved = errno;
    if (elapsed)
        *elapsed = now () - t0;
    pmi_client_destroy (&cli);
    if (canned)
        close (sv[1]);
    errno = saved;
    return rc;
}

static void test_client_errors (void)
{
    char err[512];
    double dt;
    pmi_client_t *cli;
    int sv[2];

    errno = 0;
    ok (client_vs_reply ("", 0.3, err, sizeof (err), &dt) < 0
        && errno == ETIMEDOUT, "silent server: ETIMEDOUT (%s)", err);
    ok (dt >= 0.29 && dt < 2.0, "within the deadline (%.3fs for 0.3s)", dt);
    ok (client_vs_reply ("cmd=response_to_init rc=0", 0.3, err, sizeof (err),
                         NULL) < 0 && errno == ETIMEDOUT,
        "reply without newline: ETIMEDOUT");
    ok (client_vs_reply ("cmd=wrong rc=0\n", 1, err, sizeof (err), NULL) < 0
        && errno == EPROTO && strstr (err, "cmd=wrong rc=0"),
        "unexpected reply: EPROTO, quoted: %s", err);
    ok (client_vs_reply ("cmd=response_to_init pmi_version=1 rc=-1 msg=no\n",
                         1, err, sizeof (err), NULL) < 0
        && errno == EPROTO && strstr (err, "rc=-1 msg=no"),
        "rc=-1: EPROTO, quoted: %s", err);
    ok (client_vs_reply ("cmd=response_to_init rc=x\n", 1, err, sizeof (err),
                         NULL) < 0 && errno == EPROTO,
        "bad rc: EPROTO: %s", err);
    ok (client_vs_reply ("cmd=response_to_init pmi_version=1\n", 1, err,
                         sizeof (err), NULL) < 0 && errno == EPROTO,
        "init reply without rc: EPROTO: %s", err);
    ok (client_vs_reply ("garbage\n", 1, err, sizeof (err), NULL) < 0
        && errno == EPROTO, "garbage reply: EPROTO: %s", err);
    ok (client_vs_reply (NULL, 1, err, sizeof (err), NULL) < 0
        && (errno == ECONNRESET || errno == EPIPE),
        "server closed: ECONNRESET/EPIPE: %s", err);
    ok (client_vs_reply ("cmd=response_to_init pmi_version=1 pmi_subversion=1"
                         " rc=0\n", 1, err, sizeof (err), NULL) == 0,
        "good canned reply: init ok");

    /* barrier against a server that never answers it */
    pmi_server_t *srv = pmi_server_create (2, "K", NULL, 0);
    socketpair (AF_UNIX, SOCK_STREAM, 0, sv);
    int sfd = sv[0];
    pmi_server_add_client (srv, 0, sfd, NULL, 0);
    cli = pmi_client_create (sv[1], 0, 2, err, sizeof (err));
    pmi_client_set_timeout (cli, 0.3);
    pid_t pid = fork ();
    if (pid == 0) {
        /* serve the parent's client for 2 s: rank 1 never comes */
        pmi_client_destroy (&cli);
        double end = now () + 2;
        while (now () < end) {
            struct pollfd pfd = { .fd = sfd, .events = POLLIN };
            if (poll (&pfd, 1, 100) > 0 && pmi_server_handle (srv, sfd) != 0)
                break;
        }
        pmi_server_destroy (&srv);
        _exit (0);
    }
    pmi_server_destroy (&srv);       /* parent: closes sfd */
    ok (pmi_client_init (cli, err, sizeof (err)) == 0, "init via server");
    double t0 = now ();
    errno = 0;
    ok (pmi_client_barrier (cli, err, sizeof (err)) < 0 && errno == ETIMEDOUT,
        "barrier with a rank missing: ETIMEDOUT (%s)", err);
    dt = now () - t0;
    ok (dt >= 0.29 && dt < 2.0, "barrier timed out after %.3fs", dt);
    pmi_client_destroy (&cli);
    waitpid (pid, NULL, 0);

    /* argument checks */
    socketpair (AF_UNIX, SOCK_STREAM, 0, sv);
    close (sv[1]);
    cli = pmi_client_create (sv[0], 0, 1, err, sizeof (err));
    ok (pmi_client_kvs_put (cli, "a b", "v", err, sizeof (err)) < 0
        && errno == EINVAL, "key with space: EINVAL (%s)", err);
    ok (pmi_client_kvs_put (cli, "a=b", "v", err, sizeof (err)) < 0
        && errno == EINVAL, "key with '=': EINVAL");
    ok (pmi_client_kvs_put (cli, "", "v", err, sizeof (err)) < 0
        && errno == EINVAL, "empty key: EINVAL");
    char longkey[100];
    memset (longkey, 'k', 99);
    longkey[99] = '\0';
    ok (pmi_client_kvs_put (cli, longkey, "v", err, sizeof (err)) < 0
        && errno == EINVAL, "99-byte key: EINVAL (%s)", err);
    ok (pmi_client_kvs_put_raw (cli, "k", "a b", err, sizeof (err)) < 0
        && errno == EINVAL, "raw value with space: EINVAL");
    ok (pmi_client_kvs_put_raw (cli, "k", "a=b", err, sizeof (err)) < 0
        && errno == EINVAL, "raw value with '=': EINVAL");
    char longval[400];
    memset (longval, '=', 399);
    longval[399] = '\0';
    ok (pmi_client_kvs_put (cli, "k", longval, err, sizeof (err)) < 0
        && errno == EINVAL, "value whose encoding exceeds 1024: EINVAL (%s)",
        err);
    ok (pmi_client_set_timeout (cli, 0) < 0 && errno == EINVAL,
        "timeout 0: EINVAL");
    ok (pmi_client_get_timeout (cli) == PMI_CLIENT_DEFAULT_TIMEOUT,
        "default timeout %g", PMI_CLIENT_DEFAULT_TIMEOUT);
    ok (pmi_client_rank (cli) == 0 && pmi_client_size (cli) == 1,
        "rank/size getters");
    pmi_client_destroy (&cli);
    ok (cli == NULL, "destroy sets NULL");
    ok (pmi_client_create (-1, 0, 1, err, sizeof (err)) == NULL
        && errno == EINVAL, "create fd -1: EINVAL");
    socketpair (AF_UNIX, SOCK_STREAM, 0, sv);
    close (sv[1]);
    ok (pmi_client_create (sv[0], 2, 2, err, sizeof (err)) == NULL
        && errno == EINVAL, "create rank 2 of 2: EINVAL (fd closed)");
    ok (fcntl (sv[0], F_GETFD) < 0, "create failure closed the fd");

    /* environment */
    unsetenv ("PMI_FD");
    unsetenv ("PMI_PORT");
    errno = 0;
    ok (pmi_client_create_from_env (err, sizeof (err)) == NULL
        && errno == ENOENT && strstr (err, "PMI_FD"),
        "from_env without PMI_FD: ENOENT (%s)", err);
    setenv ("PMI_FD", "abc", 1);
    ok (pmi_client_create_from_env (err, sizeof (err)) == NULL
        && errno == EINVAL, "PMI_FD=abc: EINVAL (%s)", err);
    socketpair (AF_UNIX, SOCK_STREAM, 0, sv);
    char buf[16];
    snprintf (buf, sizeof (buf), "%d", sv[0]);
    setenv ("PMI_FD", buf, 1);
    unsetenv ("PMI_RANK");
    ok (pmi_client_create_from_env (err, sizeof (err)) == NULL
        && errno == EINVAL, "PMI_RANK unset: EINVAL (%s)", err);
    setenv ("PMI_RANK", "3", 1);
    setenv ("PMI_SIZE", "2", 1);
    ok (pmi_client_create_from_env (err, sizeof (err)) == NULL
        && errno == EINVAL, "PMI_RANK >= PMI_SIZE: EINVAL (%s)", err);
    setenv ("PMI_RANK", "1", 1);
    cli = pmi_client_create_from_env (err, sizeof (err));
    ok (cli && pmi_client_rank (cli) == 1 && pmi_client_size (cli) == 2,
        "from_env: rank 1 of 2");
    pmi_client_destroy (&cli);
    close (sv[1]);
}

/* A reply that comes after its request timed out is not taken for the
 * answer to the next request: the connection is out of step for good. */
static void test_out_of_step (void)
{
    const char *kvsname = "cmd=my_kvsname kvsname=K\n";
    const char *late = "cmd=get_result rc=0 value=rank1\n";
    const char *keys[1] = { "bgn.3" };
    char err[256] = "", val[64], *values[1] = { val };
    int sv[2], lens[1], errs[1];
    pmi_client_t *cli;

    if (socketpair (AF_UNIX, SOCK_STREAM, 0, sv) < 0)
        bail_out ("socketpair");
    cli = pmi_client_create (sv[0], 0, 4, err, sizeof (err));
    pmi_client_set_timeout (cli, 0.2);
    if (write (sv[1], kvsname, strlen (kvsname)) < 0)
        bail_out ("write");
    errno = 0;
    ok (pmi_client_kvs_get (cli, "bgn.1", val, sizeof (val), err,
                            sizeof (err)) < 0 && errno == ETIMEDOUT,
        "a get the server does not answer times out");
    if (write (sv[1], late, strlen (late)) < 0)
        bail_out ("write");
    errno = 0;
    ok (pmi_client_kvs_get (cli, "bgn.2", val, sizeof (val), err,
                            sizeof (err)) < 0 && errno == EPROTO
        && strstr (err, "out of step"),
        "its late answer is not taken for the next get's: EPROTO (%s)", err);
    errno = 0;
    ok (pmi_client_kvs_get_many (cli, keys, 1, values, sizeof (val), lens,
                                 errs, err, sizeof (err)) < 0
        && errno == EPROTO,
        "nor for a pipelined get's");
    pmi_client_destroy (&cli);
    close (sv[1]);
}

int main (void)
{
    plan (NO_PLAN);
    test_escaping ();
    test_fork (4);
    test_protocol_errors ();
    test_client_errors ();
    test_out_of_step ();
    return done_testing ();
}
