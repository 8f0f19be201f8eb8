/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* fluxhost.c: the module host api on a Flux broker (see fluxhost.h).
 *
 * The top of the host (fluxhost_int.h lists its parts): facts and
 * configuration, services, timers, the host's method table, its life
 * (create, serve, destroy) and the api table the overlay module gets.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <dirent.h>

#include "fluxhost_int.h"

/* ---- facts and configuration ----------------------------------------- */

static uint32_t api_rank (bgn_broker_t *b) { return b->rank; }
static uint32_t api_size (bgn_broker_t *b) { return b->size; }
static const char *api_hostname (bgn_broker_t *b) { return b->hostname; }
static const char *api_instance_id (bgn_broker_t *b) { return b->instance; }
static const char *api_rundir (bgn_broker_t *b) { return b->rundir; }
static json_t *api_config (bgn_broker_t *b) { return b->conf; }

static const struct bgn_poller *api_poller (bgn_broker_t *b)
{
    return fluxpoll_poller (b->poll);
}

void fh_log (bgn_broker_t *b, int level, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;

    va_start (ap, fmt);
    vsnprintf (buf, sizeof (buf), fmt, ap);
    va_end (ap);
    flux_log (b->h, level, "%s", buf);
}

/* The same id on every rank of this Flux instance: a hash of what all
 * its brokers agree on (their host list, mapping, place in the job tree). */
static void make_instance_id (struct bgn_broker *b)
{
    const char *attrs[] = { "hostlist", "broker.mapping", "jobid-path",
                            "instance-level", "size" };
    uint64_t hash = 1469598103934665603ULL;

    for (size_t i = 0; i < sizeof (attrs) / sizeof (attrs[0]); i++) {
        const char *v = flux_attr_get (b->h, attrs[i]);
        for (const char *p = v ? v : ""; *p; p++)
            hash = (hash ^ (uint8_t)*p) * 1099511628211ULL;
        hash = (hash ^ '|') * 1099511628211ULL;
    }
    snprintf (b->instance, sizeof (b->instance), "flux-%016" PRIx64, hash);
}

/* A Flux-only key of [bgn] that must be a boolean. */
static int policy_bool (json_t *tbl, const char *key, int *out, char *errbuf,
                        size_t errlen)
{
    json_t *v = json_object_get (tbl, key);
    char *text;

    if (!v)
        return 0;
    if (json_is_boolean (v)) {
        *out = json_is_true (v);
        return 0;
    }
    text = json_dumps (v, JSON_ENCODE_ANY | JSON_COMPACT);
    errbuf_set (errbuf, errlen, "[bgn]: key 'bgn.%s': %s is not a boolean "
                "(true or false)", key, text ? text : "the value");
    free (text);
    errno = EINVAL;
    return -1;
}

/* A Flux-only key of [bgn] that must be a string. */
static int policy_string (json_t *tbl, const char *key, const char **out,
                          const char *what, char *errbuf, size_t errlen)
{
    json_t *v = json_object_get (tbl, key);

    if (!v)
        return 0;
    if (json_is_string (v)) {
        *out = json_string_value (v);
        return 0;
    }
    errbuf_set (errbuf, errlen, "[bgn]: key 'bgn.%s': must be %s", key, what);
    errno = EINVAL;
    return -1;
}

/* Keys of [bgn] that only the Flux host reads. */
static int read_policy (struct bgn_broker *b, json_t *tbl, char *errbuf,
                        size_t errlen)
{
    const char *boot = NULL, *admins = NULL;
    char why[128];

    if (policy_bool (tbl, "membership_event", &b->membership_event, errbuf,
                     errlen) < 0
        || policy_bool (tbl, "disconnect_hung", &b->disconnect_hung, errbuf,
                        errlen) < 0
        || policy_bool (tbl, "orphan_relief", &b->orphan_relief, errbuf,
                        errlen) < 0
        || policy_string (tbl, "boot_timeout", &boot, "a duration string "
                          "(e.g. \"60s\")", errbuf, errlen) < 0
        || policy_string (tbl, "admin_ranks", &admins, "a set of ranks as a "
                          "string (e.g. \"0-1\")", errbuf, errlen) < 0)
        return -1;
    if (admins) {
        idset_destroy (&b->admins);
        if (!(b->admins = idset_decode (admins, why, sizeof (why)))) {
            errbuf_set (errbuf, errlen,
                        "[bgn]: key 'bgn.admin_ranks': '%s': %s",
                        admins, why);
            return -1;
        }
    }
    if (boot) {
        json_t *tmp = json_pack ("{s:{s:s}}", "overlay", "boot_timeout", boot);
        double d = -1;
        /* libconf owns the duration syntax; borrow its reader */
        if (!tmp || conf_get_duration (tmp, "overlay.boot_timeout", &d) < 0
            || d <= 0) {
            json_decref (tmp);
            errbuf_set (errbuf, errlen, "[bgn]: key 'bgn.boot_timeout': '%s' "
                        "is not a duration above 0 (e.g. \"60s\")", boot);
            return -1;
        }
        json_decref (tmp);
        b->boot_timeout = d;
    }
    return 0;
}

/* libconf's and the overlay's messages name overlay.KEY (the table of
 * bgn-broker's configuration, and the overlay's service there); here
 * the user wrote bgn.KEY, and the service is bgn.  A word that only
 * ends in "overlay." (flux's own "tbon.overlay.x") is left alone. */
static void rename_keys (char *msg)
{
    char *p = msg;

    while ((p = strstr (p, "overlay."))) {
        if (p > msg && (isalnum ((unsigned char)p[-1]) || p[-1] == '_'
                        || p[-1] == '.' || p[-1] == '-')) {
            p += 8;
            continue;
        }
        memmove (p + 4, p + 8, strlen (p + 8) + 1);
        memcpy (p, "bgn.", 4);
        p += 4;
    }
}

/* The overlay's log lines, in the words of a Flux user. */
static void api_log (bgn_broker_t *b, int level, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;

    va_start (ap, fmt);
    vsnprintf (buf, sizeof (buf), fmt, ap);
    va_end (ap);
    rename_keys (buf);
    flux_log (b->h, level, "%s", buf);
}

/* One TOML line "KEY = VALUE" (a JSON scalar reads as TOML). */
#define LONE_BIND "tcp://127.0.0.1:*"   /* a one-broker table's bind */

static void emit_value (FILE *f, const char *key, json_t *val)
{
    char *v = json_dumps (val, JSON_ENCODE_ANY | JSON_COMPACT);

    fprintf (f, "\"%s\" = %s\n", key, v ? v : "\"\"");
    free (v);
}

/* Keys of [bgn] that go to bgn's [bootstrap]: per-host keys and rank 0's
 * event key, which Flux's [bootstrap] has no words for. */
static bool is_bootstrap_key (const char *key)
{
    return !strcmp (key, "curve_keys") || !strcmp (key, "event_key")
           || !strcmp (key, "event_key_secret");
}

/* A one-broker instance booted from a [bootstrap] that lists no hosts. */
static bool lone_broker (struct bgn_broker *b, bool from_table)
{
    json_t *hosts = NULL;

    if (!from_table || b->size != 1
        || flux_conf_unpack (flux_get_conf (b->h), NULL,
                             "{s:{s:o}}", "bootstrap", "hosts", &hosts) < 0)
        return from_table && b->size == 1;
    return json_array_size (hosts) == 0;
}

/* bgn's [bootstrap]: [bgn]'s bootstrap keys and, as the overlay of a
 * broker booted from its [bootstrap] table, that table less what a BGN
 * has no use for (a host's parent in the tree, the TBON's IPv6 switch).
 * Each host's bind and connect default as bgn-broker's do (tcp://[*]:%p,
 * tcp://%h:%p): in a BGN every broker takes connections. */
static int emit_bootstrap (struct bgn_broker *b, json_t *bgn,
                           bool from_table, FILE *f, char *errbuf,
                           size_t errlen)
{
    flux_error_t ferr;
    json_t *boot = NULL, *hosts = NULL, *val, *entry;
    const char *key;
    size_t i;

    fprintf (f, "[bootstrap]\n");
    json_object_foreach (bgn, key, val)
        if (is_bootstrap_key (key))
            emit_value (f, key, val);
    if (!from_table)
        return 0;
    if (flux_conf_unpack (flux_get_conf (b->h), &ferr, "{s?o}", "bootstrap",
                          &boot) < 0 || (boot && !json_is_object (boot))) {
        errbuf_set (errbuf, errlen, "[bootstrap]: %s",
                    boot ? "must be a table" : ferr.text);
        return -1;
    }
    json_object_foreach (boot, key, val) {
        if (!strcmp (key, "hosts"))
            hosts = val;
        else if (strcmp (key, "enable_ipv6") != 0)
            emit_value (f, key, val);
    }
    json_array_foreach (hosts, i, entry) {
        fprintf (f, "[[bootstrap.hosts]]\n");
        json_object_foreach (entry, key, val)
            if (strcmp (key, "parent") != 0)
                emit_value (f, key, val);
    }
    /* Flux boots one broker from a [bootstrap] with no hosts (or an
     * empty list): a table of this host alone, bound to loopback, with
     * no peer to reach (read_config leaves CURVE off for it) */
    if (lone_broker (b, from_table)) {
        json_t *me = json_string (b->hostname);
        json_t *bind = json_string (LONE_BIND);
        fprintf (f, "[[bootstrap.hosts]]\n");
        if (me && bind) {
            emit_value (f, "host", me);
            emit_value (f, "bind", bind);
        }
        json_decref (me);
        json_decref (bind);
    }
    return 0;
}

/* [bgn] (less the Flux-only keys) as an [overlay] table, through the same
 * schema as bgn-broker's configuration. */
static int read_config (struct bgn_broker *b, bool from_table, char *errbuf,
                        size_t errlen)
{
    flux_error_t ferr;
    json_t *tbl = NULL;
    const char *key;
    json_t *val;
    char *text = NULL;
    size_t len = 0;
    FILE *f;

    if (flux_conf_unpack (flux_get_conf (b->h), &ferr, "{s?o}", "bgn",
                          &tbl) < 0) {
        errbuf_set (errbuf, errlen, "[bgn]: %s", ferr.text);
        return -1;
    }
    if (tbl && !json_is_object (tbl)) {
        errbuf_set (errbuf, errlen, "[bgn] must be a table");
        return -1;
    }
    if (tbl && read_policy (b, tbl, errbuf, errlen) < 0)
        return -1;
    if (!(f = open_memstream (&text, &len)))
        return -1;
    fprintf (f, "[overlay]\n");
    json_object_foreach (tbl, key, val) {
        if (!strcmp (key, "boot_timeout") || !strcmp (key, "membership_event")
            || !strcmp (key, "disconnect_hung")
            || !strcmp (key, "orphan_relief") || !strcmp (key, "admin_ranks")
            || is_bootstrap_key (key))
            continue;
        emit_value (f, key, val);
    }
    /* alone, on loopback: no peer needs a key, and none can link */
    if (lone_broker (b, from_table) && !json_object_get (tbl, "curve"))
        fprintf (f, "curve = false\n");
    if (emit_bootstrap (b, tbl, from_table, f, errbuf, errlen) < 0) {
        fclose (f);
        free (text);
        return -1;
    }
    fclose (f);
    if (!(b->conf = conf_create ())
        || conf_load_string (b->conf, "[bgn]", text, errbuf, errlen) < 0
        || conf_finalize (b->conf, errbuf, errlen) < 0) {
        rename_keys (errbuf);
        free (text);
        return -1;
    }
    free (text);
    conf_get_duration (b->conf, "broker.rpc_timeout", &b->rpc_timeout);
    json_t *ovl = json_object_get (b->conf, "overlay");
    /* The overlay's methods go under bgn.*: Flux's own overlay service
     * is "overlay".  Not a user's key: set after the schema's check. */
    json_object_set_new (ovl, "service", json_string (SERVICE));
    /* A system instance's brokers start on their own: one that has not
     * joined within a peer timeout is taken as down (its first hello
     * lifts that), so that requests to it fail rather than wait, as the
     * TBON fails them for a node that is offline.  bgn-broker's default
     * is three peer timeouts. */
    if (from_table && !json_object_get (tbl, "join_timeout"))
        json_object_set (ovl, "join_timeout",
                         json_object_get (ovl, "peer_timeout"));
    return 0;
}

/* What the host table implies, checked against what the broker found:
 * the same size, and our rank's host is this broker's host name. */
static int read_table (struct bgn_broker *b, char *errbuf, size_t errlen)
{
    char err[512];
    const char *keys = "";

    conf_get_string (b->conf, "bootstrap.curve_keys", &keys);
    if (*keys) {
        /* then a rank's owner requests would need its signing key, which
         * cannot be known without an exchange: relayed, they would run as
         * a user's, and the instance would not reach quorum */
        errbuf_set (errbuf, errlen, "[bgn] curve_keys with a [bootstrap] "
                    "hosts table is not supported as the broker's overlay yet "
                    "(the ranks' signing keys would need an exchange): use the "
                    "shared bootstrap.curve_cert");
        errno = EINVAL;
        return -1;
    }
    if (!(b->tab = hosttab_create (b->conf, "[bootstrap]", (int)b->rank,
                                   b->hostname, err, sizeof (err)))) {
        errbuf_set (errbuf, errlen, "%s", err);
        return -1;
    }
    if (hosttab_size (b->tab) != b->size) {
        errbuf_set (errbuf, errlen, "[bootstrap] hosts lists %u hosts, the "
                    "instance has %u brokers", (unsigned)hosttab_size (b->tab),
                    (unsigned)b->size);
        errno = EINVAL;
        return -1;
    }
    return 0;
}

static int make_rundir (struct bgn_broker *b, char *errbuf, size_t errlen)
{
    const char *dir = flux_attr_get (b->h, "rundir");

    if (!dir) {
        errbuf_set (errbuf, errlen, "the broker has no rundir attribute");
        return -1;
    }
    if (snprintf (b->rundir, sizeof (b->rundir), "%s/bgn-%u", dir,
                  (unsigned)b->rank) >= (int)sizeof (b->rundir)) {
        errbuf_set (errbuf, errlen, "rundir %s: path too long", dir);
        errno = ENAMETOOLONG;
        return -1;
    }
    if (mkdir (b->rundir, 0700) < 0 && errno != EEXIST) {
        errbuf_set (errbuf, errlen,
                    "mkdir %s: %s", b->rundir, strerror (errno));
        return -1;
    }
    return 0;
}

/* ---- the bootstrap (fluxboot.c) ----------------------------------------- */

static int api_boot_put (bgn_broker_t *b, const char *key, const char *value)
{
    return fh_boot_put (b, key, value);
}

static int api_boot_get (bgn_broker_t *b, uint32_t rank, const char *key,
                         char *buf, size_t len)
{
    return fh_boot_get (b, rank, key, buf, len, false);
}

static int api_boot_refresh (bgn_broker_t *b, uint32_t rank, const char *key,
                             char *buf, size_t len)
{
    return fh_boot_get (b, rank, key, buf, len, true);
}

/* Rank 0 keeps every card for the instance's life, in memory: a read
 * there is a lookup (2); elsewhere it is a request to rank 0 (1).  As the
 * broker's overlay every broker holds every card (fluxboot.c's
 * whois_cards, or derived from a [bootstrap] table). */
static int api_boot_lasting (bgn_broker_t *b)
{
    return b->rank == 0 || b->chan ? 2 : 1;
}

static int api_boot_want (bgn_broker_t *b, uint32_t rank)
{
    return fh_boot_want (b, rank);
}

/* ---- services, overlay, stop, clock ---------------------------------- */

static int api_service_add (bgn_broker_t *b, const char *name,
                            bgn_service_f fn, void *arg)
{
    return service_add (b->services, name, fn, arg);
}

static int api_service_remove (bgn_broker_t *b, const char *name)
{
    return service_remove (b->services, name);
}

bool fh_ours (const char *topic)
{
    return topic && !strncmp (topic, SERVICE ".", strlen (SERVICE) + 1);
}

void fh_future_free (void **item)
{
    if (item && *item) {
        flux_future_destroy (*item);
        *item = NULL;
    }
}

static int api_set_overlay (bgn_broker_t *b, const struct bgn_overlay_ops *ops,
                            void *state)
{
    if (b->ovl) {
        errno = EBUSY;
        return -1;
    }
    b->ovl = ops;
    b->ovl_state = state;
    return 0;
}

/* A Flux module cannot stop its broker, and should not: the TBON and
 * everything else still run.  Say what bgn-broker would have done. */
static void api_stop (bgn_broker_t *b, int exit_code)
{
    if (b->stop_code < exit_code)
        b->stop_code = exit_code;
    fh_log (b, exit_code ? LOG_WARNING : LOG_INFO, "bgn: the overlay asked "
            "to stop (exit code %d, see the line above); a Flux broker goes "
            "on, and so does bgn, which rejoins when it can", exit_code);
}

static double api_now (bgn_broker_t *b)
{
    return monotime_now ();
}

/* ---- timers ----------------------------------------------------------- */

static void timer_unlink (struct bgn_broker *b, struct timer *t)
{
    for (struct timer **tp = &b->timers; *tp; tp = &(*tp)->next)
        if (*tp == t) {
            *tp = t->next;
            break;
        }
    flux_watcher_destroy (t->w);
    free (t);
}

static void timer_fired (flux_reactor_t *r, flux_watcher_t *w, int revents,
                         void *arg)
{
    struct timer *t = arg;
    void (*cb) (void *) = t->cb;
    void *cbarg = t->arg;

    timer_unlink (t->b, t);   /* before cb: it may start another */
    cb (cbarg);
}

static int api_timer_start (bgn_broker_t *b, double after,
                            void (*cb) (void *arg), void *arg)
{
    struct timer *t;

    if (!cb) {
        errno = EINVAL;
        return -1;
    }
    if (!(t = calloc (1, sizeof (*t))))
        return -1;
    /* libev counts 'after' from the time it cached at its last turn;
     * refreshed here so that a timer armed after any wait is not short */
    flux_reactor_now_update (b->r);
    if (!(t->w = flux_timer_watcher_create (b->r, after > 0 ? after : 0, 0,
                                            timer_fired, t))) {
        free (t);
        return -1;
    }
    if (++b->next_timer < 0)
        b->next_timer = 1;
    *t = (struct timer){ .id = b->next_timer, .w = t->w, .cb = cb, .arg = arg,
                         .b = b, .next = b->timers };
    b->timers = t;
    flux_watcher_start (t->w);
    return t->id;
}

static void api_timer_stop (bgn_broker_t *b, int id)
{
    for (struct timer *t = b->timers; t; t = t->next)
        if (t->id == id) {
            timer_unlink (b, t);
            return;
        }
}

/* ---- life -------------------------------------------------------------- */

/* The host's own methods under bgn.*; the rest there is the core's. */
static const struct fh_method methods[] = {
    { SERVICE ".rpc", fh_method_rpc },
    { SERVICE ".event-pub", fh_method_event_pub },
    { SERVICE ".event-sub", fh_method_event_sub },
    { SERVICE ".exit", fh_method_exit },
    { SERVICE ".flux-event", fh_method_flux_event },
    { SERVICE ".leave-wait", fh_method_leave_wait },
};

static int api_deliver (bgn_broker_t *b, msg_t *msg,
                        const struct bgn_msg_info *info)
{
    if (msg_get_type (msg) == MSGTYPE_EVENT) {
        fh_deliver_event_msg (b, msg);
        msg_destroy (&msg);
        return 0;
    }
    return fh_route_deliver (b, msg, info);
}

/* A message of the module's own: a request is the owner's, from here. */
static int api_send (bgn_broker_t *b, msg_t *msg)
{
    if (msg_get_type (msg) == MSGTYPE_EVENT)
        return api_deliver (b, msg, NULL);
    return fh_route_send (b, msg);
}

static void sweep_cb (flux_reactor_t *r, flux_watcher_t *w, int revents,
                      void *arg)
{
    struct bgn_broker *b = arg;

    fh_route_sweep (b);
    fh_orphan_check (b);
    fh_ovsvc_health_check (b);
}

static const struct flux_msg_handler_spec htab[] = {
    { FLUX_MSGTYPE_REQUEST, SERVICE ".disconnect", fh_client_disconnect_cb, 0 },
    { FLUX_MSGTYPE_REQUEST, SERVICE ".*", fh_client_request_cb, FLUX_ROLE_ALL },
    { FLUX_MSGTYPE_RESPONSE, NULL, fh_flux_response_cb, 0 },
    FLUX_MSGHANDLER_TABLE_END,
};

static bgn_broker_t *create (flux_t *h, bool as_overlay, char *errbuf,
                             size_t errlen)
{
    struct bgn_broker *b = calloc (1, sizeof (*b));
    const char *host, *method = flux_attr_get (h, "broker.boot-method");
    /* a broker booted from its [bootstrap] table (Flux's "config"
     * method): bgn's cards follow from that table, no exchange */
    bool from_table = as_overlay && method && !strcmp (method, "config");

    if (!b)
        return NULL;
    b->h = h;
    b->r = flux_get_reactor (h);
    b->boot_timeout = 60.;
    b->rpc_timeout = 10.;
    b->membership_event = 1;
    if (!(b->admins = idset_create (0)) || idset_set (b->admins, 0) < 0
        || !(b->capped_rl = ratelimit_create (5, 60.))) {
        errbuf_set (errbuf, errlen, "out of memory");
        goto error;
    }
    b->stop_code = -1;
    b->methods = methods;
    b->nmethods = sizeof (methods) / sizeof (methods[0]);
    if (flux_get_rank (h, &b->rank) < 0 || flux_get_size (h, &b->size) < 0) {
        errbuf_set (errbuf, errlen, "rank and size: %s", strerror (errno));
        goto error;
    }
    /* As the broker's overlay, every broker is the instance owner's
     * (Flux's TBON keeps their owner role): the owner role crosses from
     * any rank, signed by that rank itself ([bgn] admin_ranks narrows
     * it).  Beside the TBON, only rank 0's does by default. */
    if (as_overlay && b->size > 1
        && idset_set_range (b->admins, 0, b->size - 1) < 0) {
        errbuf_set (errbuf, errlen, "out of memory");
        goto error;
    }
    /* the broker's overlay loads before the host list exists */
    host = as_overlay ? flux_attr_get (h, "hostname")
                      : flux_get_hostbyrank (h, b->rank);
    snprintf (b->hostname, sizeof (b->hostname), "%s", host ? host : "localhost");
    make_instance_id (b);
    if (read_config (b, from_table, errbuf, errlen) < 0
        || make_rundir (b, errbuf, errlen) < 0)
        goto error;
    if (from_table && read_table (b, errbuf, errlen) < 0)
        goto error;
    if (as_overlay && (b->disconnect_hung || b->orphan_relief)) {
        fh_log (b, LOG_WARNING, "bgn: disconnect_hung and orphan_relief act "
                "on Flux's TBON; bgn is the overlay here: ignored");
        b->disconnect_hung = b->orphan_relief = 0;
    }
    if (as_overlay && fh_chan_open (b) < 0) {
        errbuf_set (errbuf, errlen, "the broker's overlay channel: %s",
                    strerror (errno));
        goto error;
    }
    if (!(b->poll = fluxpoll_create (b->r))) {
        errbuf_set (errbuf, errlen, "ZeroMQ context: %s", strerror (errno));
        goto error;
    }
    if (!(b->services = service_registry_create ())
        || !(b->clients = zhashx_new ()) || !(b->forwards = zhashx_new ())
        || !(b->subs = zlistx_new ())) {
        errbuf_set (errbuf, errlen, "out of memory");
        goto error;
    }
    zhashx_set_destructor (b->clients, fh_client_free);
    zhashx_set_destructor (b->forwards, fh_forward_free);
    zlistx_set_destructor (b->subs, fh_sub_free);
    if (fh_boot_init (b) < 0) {
        errbuf_set (errbuf, errlen, "the bootstrap exchange: %s",
                    strerror (errno));
        goto error;
    }
    return b;
error:
    fluxhost_destroy (&b);
    return NULL;
}

bgn_broker_t *fluxhost_create (flux_t *h, char *errbuf, size_t errlen)
{
    return create (h, false, errbuf, errlen);
}

bgn_broker_t *fluxhost_create_overlay (flux_t *h, char *errbuf, size_t errlen)
{
    return create (h, true, errbuf, errlen);
}

int fluxhost_boot_broker (bgn_broker_t *b, char *errbuf, size_t errlen)
{
    return fh_boot_broker (b, errbuf, errlen);
}

int fluxhost_boot_finalize (bgn_broker_t *b, char *errbuf, size_t errlen)
{
    return fh_boot_finalize (b, errbuf, errlen);
}

/* The Flux broker's states (flux-core's state machine, the numbers its
 * state-machine.monitor answers with): from cleanup on, the instance is
 * ending. */
#define FLUX_STATE_CLEANUP 6

static void tell_ending (struct bgn_broker *b, int state)
{
    if (b->ending)
        return;
    b->ending = 1;
    fh_log (b, LOG_DEBUG, "bgn: the Flux broker is in state %d: the "
            "instance is ending", state);
    if (b->ovl && b->ovl->ending)
        b->ovl->ending (b->ovl_state);
}

/* Each state of this broker, up to cleanup; the stream ends with ENODATA
 * once the broker is past it (also when it skipped cleanup, straight to
 * shutdown). */
static void state_cb (flux_future_t *f, void *arg)
{
    struct bgn_broker *b = arg;
    int state;

    if (flux_rpc_get_unpack (f, "{s:i}", "state", &state) == 0) {
        flux_future_reset (f);
        if (!b->state_seen) {
            /* the first answer came: from now on a watch, not a wait */
            b->state_seen = 1;
            if (flux_future_then (f, -1., state_cb, b) < 0)
                fh_log (b, LOG_WARNING, "bgn: watching the broker's state: "
                        "%s", strerror (errno));
        }
        if (state >= FLUX_STATE_CLEANUP)
            tell_ending (b, state);
        return;
    }
    int err = errno;
    const char *why = flux_future_error_string (f);
    if (err == ENODATA)
        tell_ending (b, FLUX_STATE_CLEANUP);
    else
        fh_log (b, LOG_WARNING, "bgn: state-machine.monitor: %s; an "
                "instance shutdown will look like a partition",
                why ? why : strerror (err));
    flux_future_destroy (f);
    b->state_f = NULL;
}

/* Learn when the instance ends, so that brokers leaving then are not
 * taken for a partition (module.h, ops->ending).  The local broker
 * answers at once with its state; a module whose broker does not
 * answer within rpc_timeout goes on without knowing. */
static int watch_state (struct bgn_broker *b)
{
    if (!(b->state_f = flux_rpc_pack (b->h, "state-machine.monitor",
                                      FLUX_NODEID_ANY, FLUX_RPC_STREAMING,
                                      "{s:i}", "final", FLUX_STATE_CLEANUP))
        || flux_future_then (b->state_f, b->rpc_timeout, state_cb, b) < 0) {
        flux_future_destroy (b->state_f);
        b->state_f = NULL;
        return -1;
    }
    return 0;
}

int fluxhost_serve (bgn_broker_t *b)
{
    /* the module's start may have held the reactor (a long start, a
     * stopped process): deadlines armed below count from now */
    flux_reactor_now_update (b->r);
    b->started = 1;
    if (flux_msg_handler_addvec (b->h, htab, b, &b->handlers) < 0)
        return -1;
    if (b->chan) {
        /* the module is "overlay" here: bgn's own service is a second
         * name, so that `flux bgn` works as it does beside the TBON */
        flux_future_t *f = flux_service_register (b->h, SERVICE);
        if (!f || flux_future_get (f, NULL) < 0) {
            flux_future_destroy (f);
            return -1;
        }
        flux_future_destroy (f);
        if (fh_ovsvc_start (b) < 0)
            return -1;
    }
    else if (watch_state (b) < 0)
        fh_log (b, LOG_WARNING, "bgn: cannot watch the broker's state: %s; "
                "an instance shutdown will look like a partition",
                strerror (errno));
    if (!(b->sweep = flux_timer_watcher_create (b->r, 1., 1., sweep_cb, b)))
        return -1;
    flux_watcher_start (b->sweep);
    if (fh_events_serve (b) < 0)
        return -1;
    return 0;
}

int fluxhost_stop_code (const bgn_broker_t *b)
{
    return b->stop_code;
}

/* As the broker's overlay the module lives as long as the broker: what
 * it kept in its run directory (certificate, event seed) goes with it,
 * so that a run directory the user gave (flux start --test-rundir) is
 * left as it was found. */
static void remove_rundir (struct bgn_broker *b)
{
    DIR *d = b->rundir[0] ? opendir (b->rundir) : NULL;
    struct dirent *e;
    char path[PATH_MAX + 256];

    if (!d)
        return;
    while ((e = readdir (d))) {
        if (e->d_type != DT_REG)
            continue;
        snprintf (path, sizeof (path), "%s/%s", b->rundir, e->d_name);
        (void)unlink (path);
    }
    closedir (d);
    (void)rmdir (b->rundir);
}

void fluxhost_destroy (bgn_broker_t **bp)
{
    struct bgn_broker *b;

    if (!bp || !(b = *bp))
        return;
    flux_msg_handler_delvec (b->handlers);
    if (b->chan)
        remove_rundir (b);
    fh_ovsvc_free (b);
    fh_chan_close (b);
    flux_watcher_destroy (b->sweep);
    flux_future_destroy (b->state_f);
    fh_boot_free (b);
    while (b->timers)
        timer_unlink (b, b->timers);
    /* answer what still waits: nobody is left to */
    if (b->clients) {
        for (struct client_req *c = zhashx_first (b->clients); c;
             c = zhashx_next (b->clients))
            flux_respond_error (b->h, c->req, ENOSYS, "bgn is unloading");
    }
    for (struct sub *s = b->subs ? zlistx_first (b->subs) : NULL; s;
         s = zlistx_next (b->subs))
        flux_respond_error (b->h, s->req, ENODATA, "bgn is unloading");
    zhashx_destroy (&b->clients);
    service_registry_destroy (&b->services);
    zhashx_destroy (&b->forwards);
    zlistx_destroy (&b->subs);
    fluxpoll_destroy (&b->poll);
    json_decref (b->conf);
    fh_events_free (b);
    idset_destroy (&b->admins);
    ratelimit_destroy (&b->capped_rl);
    free (b);
    *bp = NULL;
}

static const struct bgn_broker_api api = {
    .rank = api_rank,
    .size = api_size,
    .hostname = api_hostname,
    .instance_id = api_instance_id,
    .rundir = api_rundir,
    .poller = api_poller,
    .config = api_config,
    .log = api_log,
    .boot_put = api_boot_put,
    .boot_get = api_boot_get,
    .boot_lasting = api_boot_lasting,
    .boot_refresh = api_boot_refresh,
    .boot_want = api_boot_want,
    .service_add = api_service_add,
    .service_remove = api_service_remove,
    .respond = fh_respond,
    .respond_error = fh_respond_error,
    .deliver = api_deliver,
    .send = api_send,
    .set_overlay = api_set_overlay,
    .stop = api_stop,
    .now = api_now,
    .timer_start = api_timer_start,
    .timer_stop = api_timer_stop,
    .deliver_events = fh_deliver_events,
};

const struct bgn_broker_api *fluxhost_api (void)
{
    return &api;
}
