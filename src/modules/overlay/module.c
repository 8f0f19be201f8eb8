/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* module.c: overlay-bgn.so, the broker's overlay network module.
 *
 * The module glue: the entry points the broker calls (load, start,
 * connect, unload), the overlay ops it installs, and the io table that
 * runs the protocol core (overlay.c and its parts) on the real world:
 * the ROUTER socket (sock.c), the certificate store (curve.c), the
 * broker's reactor for timers and its api for everything else.  The
 * keys the bootstrap carries, and when each is read, are modkeys.c's
 * (module_int.h: the state both share).
 *
 * Start-up: load binds the socket and publishes its endpoint and public
 * key through the bootstrap; start (after the barrier) learns the peers'
 * endpoints and keys and authorizes the keys of peers that connect to
 * us; connect (after a second barrier, when every peer admits
 * connections) connects to the rest and says hello.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "src/common/libutil/idmap.h"
#include "src/common/libutil/monotime.h"
#include "src/common/libutil/ratelimit.h"
#include "src/common/libzmqutil/multipart.h"
#include "curve.h"
#include "frame.h"
#include "io.h"
#include "ovconf.h"
#include "module_int.h"
#include "ovcore.h"
#include "sock.h"


/* ---- the io table ------------------------------------------------------ */

static int io_send (void *ctx, uint32_t rank, struct frame **wire)
{
    struct module *m = ctx;
    return sock_send (m->sock, rank, wire);
}

static int io_connect (void *ctx, uint32_t rank, const char *endpoint,
                       const char *pubkey)
{
    struct module *m = ctx;
    return sock_connect (m->sock, rank, endpoint, pubkey);
}

static void io_disconnect (void *ctx, uint32_t rank, const char *endpoint)
{
    struct module *m = ctx;
    sock_disconnect (m->sock, rank, endpoint);
}

static void io_admitted (void *ctx, uint32_t rank)
{
    struct module *m = ctx;
    sock_admitted (m->sock, rank);
}

static int io_authorize (void *ctx, const char *pubkey)
{
    struct module *m = ctx;

    if (!m->curve)
        return 0;
    if (curve_authorize (m->curve, pubkey) < 0) {
        mlog (m, LOG_ERR, "bad CURVE public key '%.40s'", pubkey);
        return -1;
    }
    return 0;
}

static double io_now (void *ctx)
{
    return monotime_now ();
}

static void wake_cb (void *arg)
{
    struct module *m = arg;

    m->wake_timer = -1;
    m->wake_at = INFINITY;
    overlay_run_timers (m->ov);
}

static void io_wakeup (void *ctx, double when)
{
    struct module *m = ctx;
    double delay;

    if (when == m->wake_at && m->wake_timer >= 0)
        return;
    if (m->wake_timer >= 0) {
        m->api->timer_stop (m->b, m->wake_timer);
        m->wake_timer = -1;
    }
    m->wake_at = when;
    if (isinf (when))
        return;
    delay = when - monotime_now ();
    m->wake_timer = m->api->timer_start (m->b, delay > 0 ? delay : 0,
                                         wake_cb, m);
}

static uint64_t io_random (void *ctx)
{
    struct module *m = ctx;

    /* xorshift64*: jitter, not secrets */
    m->rng ^= m->rng >> 12;
    m->rng ^= m->rng << 25;
    m->rng ^= m->rng >> 27;
    return m->rng * 2685821657736338717ULL;
}

/* Each of the core's formats goes to the broker as itself: its flood
 * control keeps a budget per format, and with one "%s" for every overlay
 * line a burst of one warning hid every other ("this broker was fenced"
 * under a run of "peer lost"). */
static void io_log (void *ctx, int level, const char *fmt, va_list ap)
{
    struct module *m = ctx;
    char buf[1024];

    if (m->api->vlog) {
        m->api->vlog (m->b, level, fmt, ap);
        return;
    }
    vsnprintf (buf, sizeof (buf), fmt, ap);
    m->api->log (m->b, level, "%s", buf);
}

static int io_deliver (void *ctx, msg_t *msg, const struct bgn_msg_info *info)
{
    struct module *m = ctx;
    return m->api->deliver (m->b, msg, info);
}

static int io_request (void *ctx, msg_t *msg)
{
    struct module *m = ctx;
    return m->api->send (m->b, msg);
}

static int io_respond (void *ctx, const msg_t *req, const char *payload)
{
    struct module *m = ctx;
    return m->api->respond (m->b, req, payload);
}

static int io_respond_error (void *ctx, const msg_t *req, int errnum,
                             const char *errstr)
{
    struct module *m = ctx;
    return m->api->respond_error (m->b, req, errnum, errstr);
}

static void io_stop (void *ctx, int exit_code)
{
    struct module *m = ctx;
    m->api->stop (m->b, exit_code);
}

static int io_deliver_events (void *ctx, const void *batch, size_t len)
{
    struct module *m = ctx;
    return m->api->deliver_events (m->b, batch, len);
}

/* VmRSS from /proc/self/statm (pages), for overlay-status's memory. */
static long long io_resident (void *ctx)
{
    FILE *f = fopen ("/proc/self/statm", "r");
    long long size, pages = -1;

    if (f) {
        if (fscanf (f, "%lld %lld", &size, &pages) != 2)
            pages = -1;
        fclose (f);
    }
    return pages < 0 ? -1 : pages * sysconf (_SC_PAGESIZE);
}

/* The socket's send queues, and the broker's stores. */
static json_t *io_memory (void *ctx)
{
    struct module *m = ctx;
    json_t *o = m->sock ? sock_memory (m->sock) : json_object ();
    json_t *b = m->api->memory ? m->api->memory (m->b) : NULL;

    if (o && b)
        json_object_update_missing (o, b);
    json_decref (b);
    return o;
}

/* Where rank listens now: its endpoint as it last published it. */
static int io_peer_endpoint (void *ctx, uint32_t rank, char *buf, size_t len)
{
    struct module *m = ctx;

    return m->api->boot_refresh
               ? m->api->boot_refresh (m->b, rank, "endpoint", buf, len)
               : m->api->boot_get (m->b, rank, "endpoint", buf, len);
}

static const struct ovl_io io = {
    .send = io_send,
    .connect = io_connect,
    .disconnect = io_disconnect,
    .authorize = io_authorize,
    .admitted = io_admitted,
    .now = io_now,
    .wakeup = io_wakeup,
    .random = io_random,
    .log = io_log,
    .deliver = io_deliver,
    .request = io_request,
    .respond = io_respond,
    .respond_error = io_respond_error,
    .stop = io_stop,
    .deliver_events = io_deliver_events,
    .resident = io_resident,
    .memory = io_memory,
    .sign_key = modkeys_sign_key,
    .peer_endpoint = io_peer_endpoint,
};

/* ---- the socket's reports ---------------------------------------------- */

static void sock_message (void *arg, const void *id, size_t idlen,
                          struct frame **frames, int n, const char *user_id)
{
    struct module *m = arg;
    overlay_recv (m->ov, id, idlen, frames, n, user_id);
}

static void sock_event (void *arg, enum ovl_sock_event ev,
                        const char *endpoint, const char *detail)
{
    struct module *m = arg;
    overlay_sock_event (m->ov, ev, endpoint, detail);
}

static long sock_rank_of_key (void *arg, const char *user_id)
{
    struct module *m = arg;
    return m->curve ? curve_rank_of (m->curve, user_id) : CURVE_KEY_SHARED;
}

static const struct sock_ops sock_ops = {
    .message = sock_message,
    .event = sock_event,
    .rank_of_key = sock_rank_of_key,
};

/* ---- the broker's overlay ops and services ----------------------------- */

static int ops_send (void *state, msg_t **msg, uint32_t dest,
                     const struct bgn_msg_info *info)
{
    struct module *m = state;
    return overlay_send (m->ov, msg, dest, info);
}

static const char *ops_health (void *state)
{
    struct module *m = state;
    return overlay_health (m->ov);
}

static const char *ops_topology (void *state)
{
    struct module *m = state;
    return overlay_topology (m->ov);
}

static int64_t ops_publish (void *state, msg_t *event)
{
    struct module *m = state;
    return overlay_publish (m->ov, event);
}

static int ops_publish_req (void *state, msg_t **events, int n,
                            const msg_t *req)
{
    struct module *m = state;
    return overlay_publish_req (m->ov, events, n, req);
}

static void ops_ending (void *state)
{
    struct module *m = state;
    overlay_ending (m->ov);
}

static const struct bgn_overlay_ops overlay_ops = {
    .send = ops_send,
    .ending = ops_ending,
    .health = ops_health,
    .topology = ops_topology,
    .publish = ops_publish,
    .publish_req = ops_publish_req,
};

/* overlay.contact asks us to admit a substitute's key: only the key the
 * bootstrap gave the asking rank (or the shared key) is admitted, so a
 * contact cannot smuggle a fresh key in under some rank's name. */
static const char *contact_problem (struct module *m, const msg_t *req)
{
    const char *payload = msg_get_payload (req, NULL);
    const char *pubkey = "", *known;
    json_t *o;
    int rank = -1;
    const char *why = NULL;

    if (!m->curve || msg_get_type (req) != MSGTYPE_REQUEST
        || strcmp (ovconf_method (&m->cfg, msg_get_topic (req)) ?: "",
                   "contact") != 0)
        return NULL;
    if (!payload || !(o = json_loads (payload, 0, NULL)))
        return NULL;   /* the core answers EPROTO */
    if (json_unpack (o, "{s:i s?s}", "rank", &rank, "pubkey", &pubkey) == 0
        && rank >= 0) {
        known = modkeys_pubkey (m, (uint32_t)rank);
        if (!known)
            why = "the asking rank's key could not be read from the "
                  "bootstrap";
        else if (strcmp (known, pubkey) != 0)
            why = "the key is not the one the asking rank holds";
    }
    json_decref (o);
    return why;
}

static void overlay_service_cb (bgn_broker_t *b, const msg_t *req,
                                const struct bgn_msg_info *info, void *arg)
{
    struct module *m = arg;
    const char *why;
    char more[64];
    unsigned long suppressed;

    if ((why = contact_problem (m, req))) {
        if (ratelimit_check (m->refusals, monotime_now (), &suppressed))
            mlog (m, LOG_WARNING, "refused overlay.contact: %s%s", why,
                  ratelimit_suffix (more, sizeof (more), suppressed));
        m->api->respond_error (b, req, EPERM, why);
        return;
    }
    overlay_service (m->ov, req, info);
}

/* A service that exists only on ranks listed in BGN_TEST_SERVICE_RANKS
 * (test-only), so tests can check that service-addressed requests find a
 * service that lives away from rank 0. */
static void test_service_cb (bgn_broker_t *b, const msg_t *req,
                             const struct bgn_msg_info *info, void *arg)
{
    struct module *m = arg;
    char payload[64];

    if (msg_get_type (req) != MSGTYPE_REQUEST)
        return;
    snprintf (payload, sizeof (payload), "{\"rank\":%u,\"hops\":%d}",
              (unsigned)m->api->rank (b), info ? info->hops : 0);
    m->api->respond (b, req, payload);
}

static int add_test_service (struct module *m)
{
    const char *ranks = getenv ("BGN_TEST_SERVICE_RANKS");
    char key[16], *list;
    int rc = 0;

    if (!ranks)
        return 0;
    snprintf (key, sizeof (key), ",%u,", (unsigned)m->api->rank (m->b));
    if (asprintf (&list, ",%s,", ranks) < 0)
        return -1;
    if (strstr (list, key))
        rc = m->api->service_add (m->b, "testsvc", test_service_cb, m);
    free (list);
    return rc;
}

/* ---- set-up ------------------------------------------------------------ */

/* Expand %R (rundir) and %r (rank) in a bind template. */
static int expand_bind (struct module *m, const char *tmpl, char *out,
                        size_t len)
{
    size_t o = 0;
    char rank[16];

    snprintf (rank, sizeof (rank), "%u", (unsigned)m->api->rank (m->b));
    for (const char *p = tmpl; *p; p++) {
        const char *ins = NULL;
        if (p[0] == '%' && p[1] == 'R')
            ins = m->api->rundir (m->b);
        else if (p[0] == '%' && p[1] == 'r')
            ins = rank;
        if (ins) {
            size_t l = strlen (ins);
            if (o + l >= len)
                return -1;
            memcpy (out + o, ins, l);
            o += l;
            p++;
        }
        else {
            if (o + 1 >= len)
                return -1;
            out[o++] = *p;
        }
    }
    out[o] = '\0';
    return 0;
}

/* Is the host part of a tcp:// endpoint a loopback address? */
static bool loopback_host (const char *uri)
{
    const char *h = uri + 6;   /* after "tcp://" */

    if (!strncmp (h, "127.", 4) || !strncmp (h, "localhost:", 10)
        || !strncmp (h, "[::1]:", 6) || !strncmp (h, "lo:", 3))
        return true;
    return false;
}

/* Without CURVE nothing authenticates a peer: anyone who reaches the
 * port can be any rank.  So a bind others can reach needs the config to
 * say so (overlay.insecure = true). */
static int insecure_bind (struct module *m, const char *uri)
{
    if (m->cfg.curve || m->cfg.insecure || strncmp (uri, "tcp://", 6) != 0
        || loopback_host (uri))
        return 0;
    mlog (m, LOG_ERR, "overlay.curve is off and overlay.bind %s is not a "
          "loopback address: anyone who reaches it could pose as any rank; "
          "bind 127.0.0.1, turn CURVE on, or set overlay.insecure = true",
          uri);
    errno = EPERM;
    return -1;
}

static int setup_socket (struct module *m)
{
    struct sock_settings set = {
        .rank = m->api->rank (m->b),
        .size = m->api->size (m->b),
        .sndhwm = m->cfg.sndhwm,
        .sndbuf_bytes = (size_t)m->cfg.sndbuf_bytes,
        .maxmsgsize = ZMQUTIL_MAX_MSG_SIZE,
        .curve_public = m->curve ? curve_public (m->curve) : NULL,
        .curve_secret = m->curve ? curve_secret (m->curve) : NULL,
    };
    char uri[512] = "tcp://*:*";

    if (m->cfg.bind[0] && expand_bind (m, m->cfg.bind, uri, sizeof (uri)) < 0) {
        mlog (m, LOG_ERR, "overlay.bind %s is too long", m->cfg.bind);
        errno = EINVAL;
        return -1;
    }
    if (insecure_bind (m, uri) < 0)
        return -1;
    if (!(m->sock = sock_create (m->api->poller (m->b), &set, &sock_ops, m)))
        return -1;
    if (sock_bind (m->sock, uri, m->endpoint, sizeof (m->endpoint)) < 0) {
        mlog (m, LOG_ERR, "overlay bind %s: %s", uri, sock_strerror (errno));
        return -1;
    }
    return 0;
}

static int setup_curve (struct module *m)
{
    char err[512] = "", own[1024];
    const char *cert = m->cfg.curve_cert;

    if (!m->cfg.curve)
        return 0;
    /* per-host keys: this host's pair is DIR/HOST.cert (libconf/keys.h) */
    if (m->cfg.curve_keys[0]) {
        if (snprintf (own, sizeof (own), "%s/%s.cert", m->cfg.curve_keys,
                      m->api->hostname (m->b)) >= (int)sizeof (own)) {
            mlog (m, LOG_ERR, "bootstrap.curve_keys: path too long");
            errno = ENAMETOOLONG;
            return -1;
        }
        cert = own;
    }
    if (!(m->curve = curve_create (cert, m->api->rundir (m->b),
                                   m->api->poller (m->b)->zmq_ctx,
                                   err, sizeof (err)))) {
        mlog (m, LOG_ERR, "%s", err);
        return -1;
    }
    if (curve_reused (m->curve))
        mlog (m, LOG_INFO, "reusing the overlay key pair in %s/overlay.cert",
              m->api->rundir (m->b));
    return 0;
}

static int setup_core (struct module *m)
{
    struct timeval tv;
    struct ovl_identity id = {
        .rank = m->api->rank (m->b),
        .size = m->api->size (m->b),
        .hostname = m->api->hostname (m->b),
        .instance = "",   /* known after the bootstrap barrier */
        .pubkey = m->curve ? curve_public (m->curve) : "",
        .endpoint = m->endpoint,
        .version = PACKAGE_VERSION,
    };

    /* A new process's incarnation is the wall clock in microseconds: it
     * must be above any incarnation an earlier process of this rank had. */
    gettimeofday (&tv, NULL);
    id.incarnation = (uint64_t)tv.tv_sec * 1000000 + tv.tv_usec;
    id.wall_offset = tv.tv_sec + tv.tv_usec * 1e-6 - monotime_now ();
    m->rng = id.incarnation ^ ((uint64_t)getpid () << 32) ^ 0x9e3779b97f4a7c15ULL;
    if (!(m->ov = overlay_create (&m->cfg, &id, &io, m)))
        return -1;
    return 0;
}

static void module_free (struct module *m)
{
    if (m->wake_timer >= 0)
        m->api->timer_stop (m->b, m->wake_timer);
    overlay_destroy (&m->ov);
    sock_destroy (&m->sock);
    curve_destroy (&m->curve);
    ratelimit_destroy (&m->refusals);
    idmap_destroy (&m->keys);
    free (m);
}

static int overlay_load (const struct bgn_broker_api *api, bgn_broker_t *b,
                         void **state)
{
    struct module *m = calloc (1, sizeof (*m));

    if (!m)
        return -1;
    m->api = api;
    m->b = b;
    m->wake_timer = -1;
    m->wake_at = INFINITY;
    if (!(m->refusals = ratelimit_create (5, 60.))) {
        free (m);
        return -1;
    }
    ovconf_defaults (&m->cfg);
    ovconf_read (api->config (b), &m->cfg);
    if (getenv ("BGN_OVERLAY_TEST_LOOP"))
        m->cfg.test_loop = strtol (getenv ("BGN_OVERLAY_TEST_LOOP"), NULL, 10);
    if (setup_curve (m) < 0 || setup_socket (m) < 0 || setup_core (m) < 0
        || modkeys_setup (m) < 0)
        goto error;
    if (api->boot_put (b, "endpoint", m->endpoint) < 0)
        goto error;
    if (m->curve && api->boot_put (b, "pubkey", curve_public (m->curve)) < 0)
        goto error;
    if (modkeys_announce_reads (m) < 0)
        goto error;
    if (api->service_add (b, m->cfg.service, overlay_service_cb, m) < 0
        || add_test_service (m) < 0)
        goto error;
    if (api->set_overlay (b, &overlay_ops, m) < 0)
        goto error;
    *state = m;
    return 0;
error:
    api->log (b, LOG_ERR, "overlay: set-up failed: %s", strerror (errno));
    module_free (m);
    return -1;
}

/* After the bootstrap barrier: learn the peers' endpoints and keys,
 * authorize the keys of those that connect to us, start reading. */
static int overlay_start_cb (void *state)
{
    struct module *m = state;
    char endpoint[256];

    /* Tests widen the window between the bind (at load) and the keys
     * being known, where a restarted broker used to refuse neighbours
     * that reconnected early (t2200). */
    if (getenv ("BGN_OVERLAY_TEST_START_DELAY"))
        usleep ((useconds_t)(1e6 * strtod (getenv
                                 ("BGN_OVERLAY_TEST_START_DELAY"), NULL)));
    overlay_set_instance (m->ov, m->api->instance_id (m->b));
    if (modkeys_learn (m) < 0)
        return -1;
    for (int i = 0; i < overlay_peer_count (m->ov); i++) {
        uint32_t rank = overlay_peer_rank (m->ov, i);
        if (m->api->boot_get (m->b, rank, "endpoint", endpoint,
                              sizeof (endpoint)) < 0)
            return -1;
        /* its key: bound by learn_keys a moment ago */
        if (overlay_set_peer (m->ov, rank, endpoint,
                              m->curve ? curve_key_of (m->curve, rank)
                                       : "") < 0)
            return -1;
    }
    /* the keys to admit are known: answer handshakes from now on */
    if (m->curve && curve_start (m->curve, m->api->poller (m->b)) < 0)
        return -1;
    return sock_start (m->sock);
}

/* After the second barrier: connect and say hello. */
static int overlay_connect_cb (void *state)
{
    struct module *m = state;
    return overlay_start (m->ov);
}

static void overlay_unload (void *state)
{
    struct module *m = state;

    if (!m)
        return;
    overlay_leave (m->ov);
    module_free (m);
}

const struct bgn_module bgn_module_entry = {
    .abi_version = BGN_MODULE_ABI_VERSION,
    .name = "overlay-bgn",
    .description = "binomial graph overlay (also kary:K and binomial trees)",
    .load = overlay_load,
    .start = overlay_start_cb,
    .unload = overlay_unload,
    .connect = overlay_connect_cb,
};
