/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* curve.c: the certificate and the ZAP handler (see curve.h).
 *
 * The ZAP handler (RFC 27) is our own, on the broker's reactor, rather
 * than czmq's zauth thread: it answers only once the keys it may admit
 * are known (curve_start, after the bootstrap barrier).  Until then the
 * handshakes of peers that reconnect early (to a restarted broker) wait
 * in the ZAP socket instead of being refused: libzmq never retries a
 * connection whose key was refused, so an early "no" would cut a link
 * for good.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <czmq.h>

#include "src/common/libutil/errbuf.h"
#include "src/common/libzmqutil/multipart.h"
#include "curve.h"

#define ZAP_ENDPOINT "inproc://zeromq.zap.01"
#define ZAP_BUDGET 256      /* requests per readable callback */

struct curve {
    zcert_t *cert;
    char saved[PATH_MAX];       /* key pair we keep in the rundir, or "" */
    int reused;
    void *zap;                  /* ROUTER bound at ZAP_ENDPOINT */
    const struct bgn_poller *poller;  /* watching zap, once started */
    zhashx_t *admitted;         /* Z85 keys that may connect */
    zhashx_t *holders;          /* Z85 key -> rank + 1, or SHARED */
    zhashx_t *keys;             /* decimal rank -> Z85 key */
};

#define SHARED ((void *)(uintptr_t)-1)

static int load_shared (struct curve *c, const char *path, char *errbuf,
                        size_t errlen)
{
    if (!(c->cert = zcert_load (path))) {
        errbuf_set (errbuf, errlen, "cannot load CURVE certificate %s "
                    "(and %s_secret)", path, path);
        errno = EINVAL;
        return -1;
    }
    if (!strcmp (zcert_secret_txt (c->cert),
                 "0000000000000000000000000000000000000000")) {
        errbuf_set (errbuf, errlen, "CURVE certificate %s has no secret key "
                    "(is %s_secret missing?)", path, path);
        errno = EINVAL;
        return -1;
    }
    return 0;
}

static int load_or_make (struct curve *c, const char *rundir, char *errbuf,
                         size_t errlen)
{
    char secret[PATH_MAX + 8];
    mode_t old;

    snprintf (c->saved, sizeof (c->saved), "%s/overlay.cert", rundir);
    snprintf (secret, sizeof (secret), "%s_secret", c->saved);
    if (access (secret, R_OK) == 0 && (c->cert = zcert_load (c->saved))) {
        c->reused = 1;
        return 0;
    }
    old = umask (077);
    if (!(c->cert = zcert_new ()) || zcert_save (c->cert, c->saved) < 0) {
        umask (old);
        errbuf_set (errbuf, errlen, "cannot create %s", c->saved);
        c->saved[0] = '\0';
        return -1;
    }
    umask (old);
    return 0;
}

struct curve *curve_create (const char *cert_path, const char *rundir,
                            void *zmq_ctx,
                            char *errbuf, size_t errlen)
{
    struct curve *c = calloc (1, sizeof (*c));

    if (!c)
        return NULL;
    if ((cert_path && *cert_path ? load_shared (c, cert_path, errbuf, errlen)
                                 : load_or_make (c, rundir, errbuf, errlen))
        < 0)
        goto error;
    if (!(c->holders = zhashx_new ()) || !(c->keys = zhashx_new ())) {
        errbuf_set (errbuf, errlen, "out of memory");
        goto error;
    }
    zhashx_set_destructor (c->keys, (zhashx_destructor_fn *)zstr_free);
    zhashx_set_duplicator (c->keys, (zhashx_duplicator_fn *)strdup);
    if (!(c->admitted = zhashx_new ())) {
        errbuf_set (errbuf, errlen, "out of memory");
        goto error;
    }
    /* Bound before any CURVE socket handshakes: without a handler libzmq
     * would admit every key. */
    if (!(c->zap = zmq_socket (zmq_ctx, ZMQ_ROUTER))
        || zmq_bind (c->zap, ZAP_ENDPOINT) < 0) {
        errbuf_set (errbuf, errlen, "cannot start the ZAP handler: %s",
                    zmq_strerror (errno));
        goto error;
    }
    return c;
error:
    curve_destroy (&c);
    return NULL;
}

void curve_destroy (struct curve **cp)
{
    struct curve *c;

    if (!cp || !(c = *cp))
        return;
    if (c->poller)
        c->poller->remove (c->poller->ctx, c->zap);
    if (c->zap)
        zmq_close (c->zap);
    zhashx_destroy (&c->admitted);
    zcert_destroy (&c->cert);
    zhashx_destroy (&c->holders);
    zhashx_destroy (&c->keys);
    free (c);
    *cp = NULL;
}

const char *curve_public (const struct curve *c)
{
    return zcert_public_txt (c->cert);
}

const char *curve_secret (const struct curve *c)
{
    return zcert_secret_txt (c->cert);
}

int curve_reused (const struct curve *c)
{
    return c->reused;
}

int curve_authorize (struct curve *c, const char *pubkey)
{
    uint8_t raw[32];

    if (!pubkey || strlen (pubkey) != 40 || !zmq_z85_decode (raw, pubkey)) {
        errno = EINVAL;
        return -1;
    }
    zhashx_update (c->admitted, pubkey, (void *)1);
    return 0;
}

/* Answer one ZAP request: [id][""]["1.0"][reqid][domain][address]
 * [identity][mechanism][credentials...].  The reply carries the client's
 * key (Z85) as its User-Id, which messages on the connection then carry
 * (sock.c binds the connection to that key's rank). */
static void zap_answer (struct curve *c, zmq_msg_t *parts, int n)
{
    const char *status = "400", *text = "CURVE key not authorized";
    char key[41] = "";
    zmq_msg_t *reqid = n > 3 ? &parts[3] : NULL;

    if (n < 9 || zmq_msg_size (&parts[2]) != 3
        || memcmp (zmq_msg_data (&parts[2]), "1.0", 3) != 0) {
        status = "500";
        text = "malformed ZAP request";
    }
    else if (zmq_msg_size (&parts[7]) != 5
             || memcmp (zmq_msg_data (&parts[7]), "CURVE", 5) != 0
             || zmq_msg_size (&parts[8]) != 32) {
        text = "only CURVE is admitted";
    }
    else {
        zmq_z85_encode (key, zmq_msg_data (&parts[8]), 32);
        if (zhashx_lookup (c->admitted, key)) {
            status = "200";
            text = "OK";
        }
    }
    /* [id][""]["1.0"][reqid][status][text][user id][metadata] */
    zmq_send (c->zap, zmq_msg_data (&parts[0]), zmq_msg_size (&parts[0]),
              ZMQ_SNDMORE);
    zmq_send (c->zap, "", 0, ZMQ_SNDMORE);
    zmq_send (c->zap, "1.0", 3, ZMQ_SNDMORE);
    zmq_send (c->zap, reqid ? zmq_msg_data (reqid) : "",
              reqid ? zmq_msg_size (reqid) : 0, ZMQ_SNDMORE);
    zmq_send (c->zap, status, 3, ZMQ_SNDMORE);
    zmq_send (c->zap, text, strlen (text), ZMQ_SNDMORE);
    zmq_send (c->zap, key, strcmp (status, "200") == 0 ? strlen (key) : 0,
              ZMQ_SNDMORE);
    zmq_send (c->zap, "", 0, 0);
}

static void zap_readable (void *arg)
{
    struct curve *c = arg;
    zmq_msg_t parts[ZMQUTIL_MAX_PARTS];

    for (int budget = 0; budget < ZAP_BUDGET; budget++) {
        int n = zmqutil_recv (c->zap, parts, ZMQUTIL_MAX_PARTS);
        if (n <= 0)
            break;
        zap_answer (c, parts, n);
        zmqutil_close (parts, n);
    }
}

int curve_start (struct curve *c, const struct bgn_poller *poller)
{
    if (c->poller)
        return 0;
    if (poller->add_quiet (poller->ctx, c->zap, zap_readable, c) < 0)
        return -1;
    c->poller = poller;
    return 0;
}

int curve_bind (struct curve *c, uint32_t rank, const char *pubkey)
{
    uint8_t raw[32];
    char r[16];
    void *have;

    if (!pubkey || strlen (pubkey) != 40 || !zmq_z85_decode (raw, pubkey)) {
        errno = EINVAL;
        return -1;
    }
    snprintf (r, sizeof (r), "%u", (unsigned)rank);
    zhashx_update (c->keys, r, (void *)pubkey);
    have = zhashx_lookup (c->holders, pubkey);
    if (!have)
        zhashx_insert (c->holders, pubkey, (void *)(uintptr_t)(rank + 1ULL));
    else if (have != SHARED && (uintptr_t)have != rank + 1ULL)
        zhashx_update (c->holders, pubkey, SHARED);
    return 0;
}

long curve_rank_of (const struct curve *c, const char *pubkey)
{
    void *v = pubkey ? zhashx_lookup (c->holders, pubkey) : NULL;

    if (!v)
        return CURVE_KEY_UNKNOWN;
    if (v == SHARED)
        return CURVE_KEY_SHARED;
    return (long)((uintptr_t)v - 1);
}

const char *curve_key_of (const struct curve *c, uint32_t rank)
{
    char r[16];

    snprintf (r, sizeof (r), "%u", (unsigned)rank);
    return zhashx_lookup (c->keys, r);
}
