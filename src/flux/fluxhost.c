/* fluxhost.c: the module host api on a Flux broker (see fluxhost.h).
 *
 * Banners, top to bottom: facts and configuration; the bootstrap through
 * the KVS; timers; routing (the same rules as bgn-broker's dispatch:
 * requests by nodeid, responses by route stack, this broker's rank
 * pushed once when a request leaves it); requests handed into Flux and
 * their answers; Flux clients and the host's own methods; events.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>
#include <czmq.h>
#include <jansson.h>

#include "src/common/libconf/conf.h"
#include "src/common/libmsg/evbatch.h"
#include "src/common/libutil/idset.h"
#include "src/common/libutil/monotime.h"
#include "fluxhost.h"
#include "fluxmsg.h"
#include "fluxpoll.h"

#define SERVICE "bgn"
#define MAX_SERVICES 8
#define MAX_PENDING 10000          /* Flux client requests or forwards held */
#define FWD_PREFIX "bgn-"          /* route id of a request handed to Flux */
#define CLIENT_PREFIX "f"          /* route id of a Flux client's request */
#define TEXT_KEY "bgn.text"        /* a Flux answer that is text, not JSON,
                                      crosses the BGN as {TEXT_KEY: text} */

struct service {
    char name[32];
    bgn_service_f fn;
    void *arg;
};

struct timer {
    int id;
    flux_watcher_t *w;
    void (*cb) (void *arg);
    void *arg;
    struct bgn_broker *b;
    struct timer *next;
};

/* A Flux client's request waiting for its answer(s) from the BGN. */
struct client_req {
    flux_msg_t *req;
    double deadline;               /* INFINITY for streams */
};

/* A request from the BGN handed into the Flux broker. */
struct forward {
    msg_t *req;
    double deadline;
};

/* A local Flux client streaming bgn's events. */
struct sub {
    flux_msg_t *req;
    json_t *prefixes;              /* array of strings; empty: all */
};

struct bgn_broker {
    flux_t *h;
    flux_reactor_t *r;
    uint32_t rank, size;
    char hostname[256];
    char instance[64];
    char rundir[PATH_MAX];
    json_t *conf;
    double boot_timeout;
    double rpc_timeout;
    int membership_event, disconnect_hung, orphan_relief;
    struct fluxpoll *poll;
    struct service services[MAX_SERVICES];
    int nservices;
    const struct bgn_overlay_ops *ovl;
    void *ovl_state;
    struct timer *timers;
    int next_timer;
    zhashx_t *clients;             /* "fN" -> struct client_req */
    uint64_t next_client;
    zhashx_t *forwards;            /* "bgn-N" -> struct forward */
    uint64_t next_forward;
    zlistx_t *subs;                /* struct sub */
    flux_msg_handler_t **handlers;
    flux_watcher_t *sweep;
    int stop_code;
    int *parent;                   /* rank 0: TBON parent of each rank,
                                      -1 unknown (for disconnect_hung) */
    /* rank 0, orphan_relief: what each overlay says of every rank */
    idset_t *bgn_down;             /* fenced on the BGN (membership) */
    idset_t *flux_seen;            /* once online to Flux */
    double *lost_since;            /* when each was first seen lost, or 0 */
    idset_t *told;                 /* told to exit already */
    flux_future_t *online_f;       /* a groups.get in flight */
    int exiting;                   /* this broker: told to exit */
};

static void hlog (struct bgn_broker *b, int level, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

static void hlog (struct bgn_broker *b, int level, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;

    va_start (ap, fmt);
    vsnprintf (buf, sizeof (buf), fmt, ap);
    va_end (ap);
    flux_log (b->h, level, "%s", buf);
}

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

static void api_log (bgn_broker_t *b, int level, const char *fmt, ...)
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

/* Keys of [bgn] that only the Flux host reads. */
static int read_policy (struct bgn_broker *b, json_t *tbl, char *errbuf,
                        size_t errlen)
{
    const char *boot = NULL;
    json_error_t jerr;

    if (json_unpack_ex (tbl, &jerr, 0, "{s?s s?b s?b s?b}",
                        "boot_timeout", &boot,
                        "membership_event", &b->membership_event,
                        "disconnect_hung", &b->disconnect_hung,
                        "orphan_relief", &b->orphan_relief) < 0) {
        snprintf (errbuf, errlen, "[bgn]: %s (boot_timeout is a duration "
                  "string; membership_event, disconnect_hung and "
                  "orphan_relief are booleans)", jerr.text);
        return -1;
    }
    if (boot) {
        json_t *tmp = json_pack ("{s:{s:s}}", "overlay", "boot_timeout", boot);
        double d = -1;
        /* libconf owns the duration syntax; borrow its reader */
        if (!tmp || conf_get_duration (tmp, "overlay.boot_timeout", &d) < 0
            || d <= 0) {
            json_decref (tmp);
            snprintf (errbuf, errlen, "[bgn]: key 'bgn.boot_timeout': '%s' "
                      "is not a duration above 0 (e.g. \"60s\")", boot);
            return -1;
        }
        json_decref (tmp);
        b->boot_timeout = d;
    }
    return 0;
}

/* libconf's messages name overlay.KEY; here the user wrote bgn.KEY. */
static void rename_keys (char *msg)
{
    char *p;

    while ((p = strstr (msg, "'overlay."))) {
        memmove (p + 5, p + 9, strlen (p + 9) + 1);
        memcpy (p + 1, "bgn.", 4);
    }
}

/* [bgn] (less the Flux-only keys) as an [overlay] table, through the same
 * schema as bgn-broker's configuration. */
static int read_config (struct bgn_broker *b, char *errbuf, size_t errlen)
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
        snprintf (errbuf, errlen, "[bgn]: %s", ferr.text);
        return -1;
    }
    if (tbl && !json_is_object (tbl)) {
        snprintf (errbuf, errlen, "[bgn] must be a table");
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
            || !strcmp (key, "orphan_relief"))
            continue;
        char *v = json_dumps (val, JSON_ENCODE_ANY | JSON_COMPACT);
        fprintf (f, "\"%s\" = %s\n", key, v ? v : "\"\"");
        free (v);
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
    /* The overlay's methods go under bgn.*: Flux's own overlay service
     * is "overlay".  Not a user's key: set after the schema's check. */
    json_object_set_new (json_object_get (b->conf, "overlay"), "service",
                         json_string (SERVICE));
    return 0;
}

static int make_rundir (struct bgn_broker *b, char *errbuf, size_t errlen)
{
    const char *dir = flux_attr_get (b->h, "rundir");

    if (!dir) {
        snprintf (errbuf, errlen, "the broker has no rundir attribute");
        return -1;
    }
    if (snprintf (b->rundir, sizeof (b->rundir), "%s/bgn-%u", dir,
                  (unsigned)b->rank) >= (int)sizeof (b->rundir)) {
        snprintf (errbuf, errlen, "rundir %s: path too long", dir);
        errno = ENAMETOOLONG;
        return -1;
    }
    if (mkdir (b->rundir, 0700) < 0 && errno != EEXIST) {
        snprintf (errbuf, errlen, "mkdir %s: %s", b->rundir, strerror (errno));
        return -1;
    }
    return 0;
}

/* ---- the bootstrap, through the KVS ---------------------------------- */

static int api_boot_put (bgn_broker_t *b, const char *key, const char *value)
{
    flux_kvs_txn_t *txn = flux_kvs_txn_create ();
    flux_future_t *f = NULL;
    char path[128];
    int rc = -1;

    snprintf (path, sizeof (path), "bgn.boot.%u.%s", (unsigned)b->rank, key);
    if (txn && flux_kvs_txn_pack (txn, 0, path, "s", value) == 0
        && (f = flux_kvs_commit (b->h, NULL, 0, txn))
        && flux_future_wait_for (f, b->boot_timeout) == 0
        && flux_future_get (f, NULL) == 0)
        rc = 0;
    else
        hlog (b, LOG_ERR, "bgn: KVS put %s: %s", path, strerror (errno));
    flux_future_destroy (f);
    flux_kvs_txn_destroy (txn);
    return rc;
}

static int api_boot_get (bgn_broker_t *b, uint32_t rank, const char *key,
                         char *buf, size_t len)
{
    flux_future_t *f;
    char path[128];
    const char *value = NULL;
    int rc = -1;

    snprintf (path, sizeof (path), "bgn.boot.%u.%s", (unsigned)rank, key);
    if (!(f = flux_kvs_lookup (b->h, NULL, FLUX_KVS_WAITCREATE, path)))
        return -1;
    if (flux_future_wait_for (f, b->boot_timeout) < 0) {
        hlog (b, LOG_ERR, "bgn: rank %u did not publish %s within %.0fs",
              (unsigned)rank, key, b->boot_timeout);
        errno = ETIMEDOUT;
    }
    else if (flux_kvs_lookup_get_unpack (f, "s", &value) < 0)
        hlog (b, LOG_ERR, "bgn: KVS %s: %s", path, strerror (errno));
    else if (strlen (value) >= len)
        errno = EOVERFLOW;
    else {
        memcpy (buf, value, strlen (value) + 1);
        rc = 0;
    }
    flux_future_destroy (f);
    return rc;
}

/* ---- services, overlay, stop, clock ---------------------------------- */

static int api_service_add (bgn_broker_t *b, const char *name,
                            bgn_service_f fn, void *arg)
{
    for (int i = 0; i < b->nservices; i++)
        if (!strcmp (b->services[i].name, name)) {
            errno = EEXIST;
            return -1;
        }
    if (b->nservices == MAX_SERVICES || strlen (name) >= 32) {
        errno = b->nservices == MAX_SERVICES ? ENOSPC : EINVAL;
        return -1;
    }
    struct service *s = &b->services[b->nservices++];
    snprintf (s->name, sizeof (s->name), "%s", name);
    s->fn = fn;
    s->arg = arg;
    return 0;
}

static int api_service_remove (bgn_broker_t *b, const char *name)
{
    for (int i = 0; i < b->nservices; i++) {
        if (!strcmp (b->services[i].name, name)) {
            b->services[i] = b->services[--b->nservices];
            return 0;
        }
    }
    errno = ENOENT;
    return -1;
}

static struct service *service_of (struct bgn_broker *b, const char *topic)
{
    size_t n;

    for (int i = 0; topic && i < b->nservices; i++) {
        n = strlen (b->services[i].name);
        if (!strncmp (topic, b->services[i].name, n)
            && (topic[n] == '.' || topic[n] == '\0'))
            return &b->services[i];
    }
    return NULL;
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
    hlog (b, exit_code ? LOG_ERR : LOG_INFO, "bgn: the overlay asked to stop "
          "(exit code %d%s); the Flux broker goes on", exit_code,
          exit_code == 3 ? ": partitioned" : "");
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

/* ---- routing ------------------------------------------------------------ */

static int route_response (struct bgn_broker *b, msg_t *msg);
static int to_flux (struct bgn_broker *b, msg_t *req);
static int host_method (struct bgn_broker *b, msg_t *req,
                        const struct bgn_msg_info *info);
static int method_exit (struct bgn_broker *b, msg_t *req,
                        const struct bgn_msg_info *info);
static void orphan_check (struct bgn_broker *b);

static int api_respond (bgn_broker_t *b, const msg_t *req, const char *payload)
{
    msg_t *rsp;

    if (msg_get_flags (req) & MSGFLAG_NORESPONSE)
        return 0;
    if (!(rsp = msg_response_create (req, payload)))
        return -1;
    return route_response (b, rsp);
}

static int api_respond_error (bgn_broker_t *b, const msg_t *req, int errnum,
                              const char *errstr)
{
    msg_t *rsp;

    if (msg_get_flags (req) & MSGFLAG_NORESPONSE)
        return 0;
    if (!(rsp = msg_error_response_create (req, errnum ? errnum : EINVAL,
                                           errstr)))
        return -1;
    return route_response (b, rsp);
}

static int request_fail (struct bgn_broker *b, msg_t *req, int errnum,
                         const char *why)
{
    api_respond_error (b, req, errnum, why);
    msg_destroy (&req);
    return -1;
}

static int is_rank (const char *id, uint32_t *rank)
{
    char *end;
    unsigned long v;

    if (!id || *id < '0' || *id > '9')
        return 0;
    errno = 0;
    v = strtoul (id, &end, 10);
    if (errno || *end || v > UINT32_MAX)
        return 0;
    *rank = (uint32_t)v;
    return 1;
}

/* Out over the BGN toward dest; a request that starts here carries this
 * broker's rank on its route stack, for the answer. */
static int request_out (struct bgn_broker *b, msg_t *msg,
                        const struct bgn_msg_info *info, uint32_t dest)
{
    char me[16];
    int errnum;

    if (!b->ovl || b->size == 1)
        return request_fail (b, msg, EHOSTUNREACH, "no overlay");
    if (!info->from_overlay) {
        snprintf (me, sizeof (me), "%u", (unsigned)b->rank);
        if (msg_route_push (msg, me) < 0)
            return request_fail (b, msg, errno, "route stack is full");
    }
    if (b->ovl->send (b->ovl_state, &msg, dest, info) == 0)
        return 0;
    errnum = errno;
    if (!info->from_overlay)
        msg_route_pop (msg, NULL, 0);
    return request_fail (b, msg, errnum, "the BGN could not route it");
}

static int request_here (struct bgn_broker *b, msg_t *msg,
                         const struct bgn_msg_info *info)
{
    struct service *s = service_of (b, msg_get_topic (msg));

    if (s && !strcmp (s->name, SERVICE) && host_method (b, msg, info) == 0)
        return 0;   /* the host's own method took it */
    if (s) {
        s->fn (b, msg, info, s->arg);
        msg_destroy (&msg);
        return 0;
    }
    return to_flux (b, msg);
}

static int route_request (struct bgn_broker *b, msg_t *msg,
                          const struct bgn_msg_info *info)
{
    uint32_t nodeid = NODEID_ANY;

    msg_get_nodeid (msg, &nodeid);
    if (msg_get_flags (msg) & MSGFLAG_UPSTREAM)
        return request_fail (b, msg, ENOSYS, "upstream requests are the "
                             "TBON's, not the BGN's");
    if (nodeid == NODEID_ANY || nodeid == b->rank)
        return request_here (b, msg, info);
    if (nodeid >= b->size)
        return request_fail (b, msg, EHOSTUNREACH, "no such rank");
    return request_out (b, msg, info, nodeid);
}

static void client_answer (struct bgn_broker *b, const char *token,
                           msg_t *rsp);

static int route_response (struct bgn_broker *b, msg_t *msg)
{
    uint32_t rank;
    char id[MSG_MAX_ROUTEID + 1];

    while (msg_route_count (msg) > 0) {
        const char *top = msg_route_first (msg);
        if (!is_rank (top, &rank)) {
            msg_route_pop (msg, id, sizeof (id));
            client_answer (b, id, msg);
            msg_destroy (&msg);
            return 0;
        }
        if (rank != b->rank) {
            if (!b->ovl || b->ovl->send (b->ovl_state, &msg, rank, NULL) < 0) {
                hlog (b, LOG_DEBUG, "bgn: response %s to rank %u dropped: %s",
                      msg_get_topic (msg) ?: "", (unsigned)rank,
                      strerror (errno));
                msg_destroy (&msg);
                return -1;
            }
            return 0;
        }
        msg_route_pop (msg, NULL, 0);
    }
    /* The stack ran out: an answer to the module's own request. */
    struct service *s = service_of (b, msg_get_topic (msg));
    if (s)
        s->fn (b, msg, NULL, s->arg);
    msg_destroy (&msg);
    return 0;
}

static void deliver_event_msg (struct bgn_broker *b, const msg_t *ev);

static int api_deliver (bgn_broker_t *b, msg_t *msg,
                        const struct bgn_msg_info *info)
{
    struct bgn_msg_info none = { .source = b->rank };

    switch (msg_get_type (msg)) {
    case MSGTYPE_REQUEST:
        return route_request (b, msg, info ? info : &none);
    case MSGTYPE_RESPONSE:
        return route_response (b, msg);
    case MSGTYPE_EVENT:
        deliver_event_msg (b, msg);
        break;
    default:
        break;
    }
    msg_destroy (&msg);
    return 0;
}

/* A module's own request: the instance owner's, from this broker. */
static int api_send (bgn_broker_t *b, msg_t *msg)
{
    struct bgn_msg_info info = { .source = b->rank };

    if (msg_get_type (msg) == MSGTYPE_REQUEST) {
        msg_set_userid (msg, (uint32_t)getuid ());
        msg_set_rolemask (msg, MSG_ROLE_OWNER);
        if (!(msg_get_flags (msg) & MSGFLAG_ROUTE))
            msg_route_enable (msg);
        return route_request (b, msg, &info);
    }
    return api_deliver (b, msg, &info);
}

/* ---- requests handed into Flux ---------------------------------------- */

static void forward_free (void **item)
{
    struct forward *f = *item;

    if (f) {
        msg_destroy (&f->req);
        free (f);
        *item = NULL;
    }
}

/* A request that reached this rank over the BGN, for a Flux service:
 * sent into this broker as a peer's request would be (the original
 * credentials, less FLUX_ROLE_LOCAL: it did not start on this node),
 * with a route id of ours on top, so its answers come back to us. */
static int to_flux (struct bgn_broker *b, msg_t *req)
{
    flux_msg_t *f = fluxmsg_from_bgn (req);
    struct forward *fw = NULL;
    char id[32];
    int noresponse = msg_get_flags (req) & MSGFLAG_NORESPONSE;

    if (service_of (b, msg_get_topic (req)) || !strncmp (msg_get_topic (req),
                                                         SERVICE ".", 4)) {
        flux_msg_destroy (f);   /* it would come straight back to us */
        return request_fail (b, req, ENOSYS, "no such bgn method");
    }
    if (!f)
        return request_fail (b, req, errno, "cannot carry it into Flux");
    if (!noresponse && zhashx_size (b->forwards) >= MAX_PENDING) {
        flux_msg_destroy (f);
        return request_fail (b, req, EAGAIN, "too many requests waiting for "
                             "Flux here");
    }
    snprintf (id, sizeof (id), FWD_PREFIX "%" PRIu64, ++b->next_forward);
    flux_msg_set_rolemask (f, msg_get_rolemask (req) & ~FLUX_ROLE_LOCAL);
    flux_msg_set_nodeid (f, b->rank);
    flux_msg_set_matchtag (f, FLUX_MATCHTAG_NONE);
    flux_msg_route_enable (f);
    if (flux_msg_route_push (f, id) < 0 || flux_send (b->h, f, 0) < 0) {
        int errnum = errno;
        flux_msg_destroy (f);
        return request_fail (b, req, errnum, "cannot send it into Flux");
    }
    flux_msg_destroy (f);
    if (noresponse) {
        msg_destroy (&req);
        return 0;
    }
    if (!(fw = calloc (1, sizeof (*fw)))) {
        msg_destroy (&req);
        return -1;
    }
    fw->req = req;
    fw->deadline = msg_get_flags (req) & MSGFLAG_STREAMING
                       ? monotime_now () + 3600.
                       : monotime_now () + 6 * b->rpc_timeout;
    zhashx_update (b->forwards, id, fw);
    return 0;
}

/* Text answers (log.dmesg's lines, say) are wrapped to cross the BGN,
 * which carries JSON payloads only, and unwrapped for the client. */
static msg_t *text_response (const msg_t *req, const char *text)
{
    json_t *o = json_pack ("{s:s}", TEXT_KEY, text);
    char *s = o ? json_dumps (o, JSON_COMPACT) : NULL;
    msg_t *rsp = s ? msg_response_create (req, s) : NULL;

    free (s);
    json_decref (o);
    return rsp;
}

static int flux_respond_unwrapped (flux_t *h, const flux_msg_t *req,
                                   const char *payload)
{
    const char *text;
    json_t *o;
    int rc;

    if (!payload || strncmp (payload, "{\"" TEXT_KEY "\":", strlen (TEXT_KEY) + 4)
        || !(o = json_loads (payload, 0, NULL)))
        return flux_respond (h, req, payload);
    if (json_unpack (o, "{s:s}", TEXT_KEY, &text) < 0)
        text = payload;
    rc = flux_respond (h, req, text);
    json_decref (o);
    return rc;
}

/* An answer from Flux to a request we handed in: back over the BGN. */
static void flux_response_cb (flux_t *h, flux_msg_handler_t *mh,
                              const flux_msg_t *fmsg, void *arg)
{
    struct bgn_broker *b = arg;
    const char *id = flux_msg_route_last (fmsg);
    struct forward *fw;
    int errnum = 0;
    const char *errstr = NULL;
    msg_t *rsp = NULL, *conv = NULL;

    if (!id || strncmp (id, FWD_PREFIX, strlen (FWD_PREFIX)) != 0
        || !(fw = zhashx_lookup (b->forwards, id)))
        return;   /* not one of ours (or its deadline passed) */
    flux_msg_get_errnum (fmsg, &errnum);
    if (errnum) {
        if (flux_msg_get_string (fmsg, &errstr) < 0)
            errstr = NULL;
        rsp = msg_error_response_create (fw->req, errnum, errstr);
    }
    else if ((conv = fluxmsg_to_bgn (fmsg)))
        rsp = msg_response_create (fw->req, msg_get_payload (conv, NULL));
    else if (errno == EPROTO && flux_msg_get_string (fmsg, &errstr) == 0
             && errstr)
        rsp = text_response (fw->req, errstr);
    else
        rsp = msg_error_response_create (fw->req, EPROTO, "the Flux answer's "
                                         "payload is neither JSON nor text");
    msg_destroy (&conv);
    if (errnum || !(msg_get_flags (fw->req) & MSGFLAG_STREAMING))
        zhashx_delete (b->forwards, id);
    if (rsp)
        route_response (b, rsp);
}

/* ---- Flux clients -------------------------------------------------------- */

static void client_free (void **item)
{
    struct client_req *c = *item;

    if (c) {
        flux_msg_decref (c->req);
        free (c);
        *item = NULL;
    }
}

/* An answer for Flux client token 'token', from the BGN or the core. */
static void client_answer (struct bgn_broker *b, const char *token,
                           msg_t *rsp)
{
    struct client_req *c = zhashx_lookup (b->clients, token);
    int errnum = 0;
    const char *payload;

    if (!c) {
        hlog (b, LOG_DEBUG, "bgn: answer for %s, a request no longer "
              "waiting: dropped", token);
        return;
    }
    msg_get_errnum (rsp, &errnum);
    payload = msg_get_payload (rsp, NULL);
    if (errnum) {
        if (flux_respond_error (b->h, c->req, errnum, payload) < 0)
            hlog (b, LOG_ERR, "bgn: flux_respond_error: %s", strerror (errno));
    }
    else if (flux_respond_unwrapped (b->h, c->req, payload) < 0)
        hlog (b, LOG_ERR, "bgn: flux_respond: %s", strerror (errno));
    if (errnum || !flux_msg_is_streaming (c->req))
        zhashx_delete (b->clients, token);
}

/* A Flux client's bgn.* request as a bgn request from a client of this
 * broker: its token on the route stack, its Flux credentials kept. */
static msg_t *client_enter (struct bgn_broker *b, const flux_msg_t *fmsg)
{
    struct client_req *c;
    char token[32];
    msg_t *msg;

    if (zhashx_size (b->clients) >= MAX_PENDING) {
        flux_respond_error (b->h, fmsg, EAGAIN, "bgn: too many requests "
                            "waiting here");
        return NULL;
    }
    if (!(msg = fluxmsg_to_bgn (fmsg))) {
        flux_respond_error (b->h, fmsg, errno, errno == EPROTO
                            ? "bgn: the payload must be a JSON object" : NULL);
        return NULL;
    }
    msg_route_enable (msg);
    if (flux_msg_is_noresponse (fmsg))
        return msg;
    snprintf (token, sizeof (token), CLIENT_PREFIX "%" PRIu64,
              ++b->next_client);
    if (!(c = calloc (1, sizeof (*c))) || msg_route_push (msg, token) < 0) {
        free (c);
        msg_destroy (&msg);
        flux_respond_error (b->h, fmsg, ENOMEM, NULL);
        return NULL;
    }
    c->req = (flux_msg_t *)flux_msg_incref (fmsg);
    c->deadline = flux_msg_is_streaming (fmsg) ? INFINITY
                                               : monotime_now () + b->rpc_timeout;
    zhashx_update (b->clients, token, c);
    return msg;
}

static void client_request_cb (flux_t *h, flux_msg_handler_t *mh,
                               const flux_msg_t *fmsg, void *arg)
{
    struct bgn_broker *b = arg;
    struct bgn_msg_info info = { .source = b->rank };
    msg_t *msg = client_enter (b, fmsg);

    if (msg)
        route_request (b, msg, &info);
}

/* A client went away: its streams and waiting requests go with it. */
static void client_disconnect_cb (flux_t *h, flux_msg_handler_t *mh,
                                  const flux_msg_t *fmsg, void *arg)
{
    struct bgn_broker *b = arg;
    zlistx_t *gone = zlistx_new ();

    for (struct sub *s = zlistx_first (b->subs); s; s = zlistx_next (b->subs))
        if (flux_msg_route_match_first (s->req, fmsg))
            zlistx_add_end (gone, zlistx_cursor (b->subs));
    for (void *h2 = zlistx_first (gone); h2; h2 = zlistx_next (gone))
        zlistx_delete (b->subs, h2);
    zlistx_destroy (&gone);
    zlistx_t *keys = zhashx_keys (b->clients);
    for (const char *k = zlistx_first (keys); k; k = zlistx_next (keys)) {
        struct client_req *c = zhashx_lookup (b->clients, k);
        if (c && flux_msg_route_match_first (c->req, fmsg))
            zhashx_delete (b->clients, k);
    }
    zlistx_destroy (&keys);
}

/* Every request waits for at most its deadline. */
static void sweep_cb (flux_reactor_t *r, flux_watcher_t *w, int revents,
                      void *arg)
{
    struct bgn_broker *b = arg;
    double now = monotime_now ();
    zlistx_t *keys = zhashx_keys (b->clients);

    for (const char *k = zlistx_first (keys); k; k = zlistx_next (keys)) {
        struct client_req *c = zhashx_lookup (b->clients, k);
        if (c && now >= c->deadline) {
            flux_respond_error (b->h, c->req, ETIMEDOUT, "bgn: no answer over "
                                "the BGN in time (the destination or a relay "
                                "may have failed; the outcome is unknown)");
            zhashx_delete (b->clients, k);
        }
    }
    zlistx_destroy (&keys);
    keys = zhashx_keys (b->forwards);
    for (const char *k = zlistx_first (keys); k; k = zlistx_next (keys)) {
        struct forward *fw = zhashx_lookup (b->forwards, k);
        if (fw && now >= fw->deadline)
            zhashx_delete (b->forwards, k);
    }
    zlistx_destroy (&keys);
    orphan_check (b);
}

/* ---- the host's own methods -------------------------------------------- */

/* bgn.rpc {rank, topic, payload?}: the request inside, to that rank. */
static int method_rpc (struct bgn_broker *b, msg_t *req,
                       const struct bgn_msg_info *info)
{
    json_t *o = msg_get_json (req), *payload = NULL;
    const char *topic = NULL;
    json_int_t rank = -1;
    char *text = NULL;
    msg_t *inner;

    if (info->from_overlay)
        return request_fail (b, req, EPERM, "bgn.rpc starts at the "
                             "requester's own broker");
    if (!o || json_unpack (o, "{s:I s:s s?o}", "rank", &rank, "topic", &topic,
                           "payload", &payload) < 0
        || rank < 0 || rank >= (json_int_t)b->size || !*topic
        || (payload && !json_is_object (payload)))
        return request_fail (b, req, EPROTO, "bgn.rpc takes {\"rank\": R, "
                             "\"topic\": T, \"payload\": {...}} with R a rank "
                             "of this instance");
    if (payload && !(text = json_dumps (payload, JSON_COMPACT)))
        return request_fail (b, req, ENOMEM, NULL);
    inner = msg_request_create (topic, (uint32_t)rank, text);
    free (text);
    if (!inner)
        return request_fail (b, req, errno, "bad topic");
    msg_set_userid (inner, msg_get_userid (req));
    msg_set_rolemask (inner, msg_get_rolemask (req));
    msg_set_flags (inner, msg_get_flags (inner)
                              | (msg_get_flags (req) & (MSGFLAG_STREAMING
                                                        | MSGFLAG_NORESPONSE)));
    msg_route_enable (inner);
    for (int i = msg_route_count (req) - 1; i >= 0; i--)
        msg_route_push (inner, msg_route_at (req, i));
    msg_destroy (&req);
    return route_request (b, inner, info);
}

/* bgn.event-pub {topic, payload?}: numbered by rank 0 and multicast. */
static int method_event_pub (struct bgn_broker *b, msg_t *req,
                             const struct bgn_msg_info *info)
{
    json_t *o = msg_get_json (req), *payload = NULL;
    const char *topic = NULL;
    char *text = NULL;
    msg_t *ev;

    if (!o || json_unpack (o, "{s:s s?o}", "topic", &topic, "payload",
                           &payload) < 0 || !*topic
        || (payload && !json_is_object (payload)))
        return request_fail (b, req, EPROTO, "bgn.event-pub takes {\"topic\": "
                             "T, \"payload\": {...}}");
    if (b->rank != 0) {
        uint32_t zero = 0;
        msg_set_nodeid (req, zero);
        return request_out (b, req, info, 0);
    }
    if (!b->ovl || !b->ovl->publish_req)
        return request_fail (b, req, ENOSYS, "no event layer");
    if (payload && !(text = json_dumps (payload, JSON_COMPACT)))
        return request_fail (b, req, ENOMEM, NULL);
    ev = msg_event_create (topic, text);
    free (text);
    if (!ev)
        return request_fail (b, req, errno, "bad event topic");
    msg_set_userid (ev, msg_get_userid (req));
    msg_set_matchtag (ev, info->from_overlay ? info->source : b->rank);
    if (b->ovl->publish_req (b->ovl_state, &ev, 1, req) < 0) {
        int errnum = errno;
        msg_destroy (&ev);
        return request_fail (b, req, errnum, errnum == EAGAIN
                             ? "rank 0 cannot take events now; retry" : NULL);
    }
    msg_destroy (&req);
    return 0;
}

/* bgn.event-sub {topics?: [prefix...]}: a stream of this broker's events. */
static int method_event_sub (struct bgn_broker *b, msg_t *req,
                             const struct bgn_msg_info *info)
{
    json_t *o = msg_get_json (req), *topics = NULL;
    const char *token = msg_route_first (req);
    struct client_req *c = token ? zhashx_lookup (b->clients, token) : NULL;
    struct sub *s;

    if (info->from_overlay || !c || !flux_msg_is_streaming (c->req))
        return request_fail (b, req, EPROTO, "bgn.event-sub is a streaming "
                             "request of a client of this broker");
    if (o && json_unpack (o, "{s?o}", "topics", &topics) < 0)
        topics = NULL;
    if (topics && !json_is_array (topics))
        return request_fail (b, req, EPROTO, "topics: an array of prefixes");
    if (!(s = calloc (1, sizeof (*s))))
        return request_fail (b, req, ENOMEM, NULL);
    s->req = (flux_msg_t *)flux_msg_incref (c->req);
    s->prefixes = topics ? json_incref (topics) : json_array ();
    zlistx_add_end (b->subs, s);
    zhashx_delete (b->clients, token);   /* answered from the sub list now */
    msg_destroy (&req);
    return 0;
}

/* The host's methods under bgn.*; everything else there is the core's. */
static int host_method (struct bgn_broker *b, msg_t *req,
                        const struct bgn_msg_info *info)
{
    const char *topic = msg_get_topic (req);

    if (msg_get_type (req) != MSGTYPE_REQUEST)
        return -1;
    if (!strcmp (topic, SERVICE ".rpc"))
        return method_rpc (b, req, info), 0;
    if (!strcmp (topic, SERVICE ".event-pub"))
        return method_event_pub (b, req, info), 0;
    if (!strcmp (topic, SERVICE ".event-sub"))
        return method_event_sub (b, req, info), 0;
    if (!strcmp (topic, SERVICE ".exit"))
        return method_exit (b, req, info), 0;
    return -1;
}

/* ---- events ------------------------------------------------------------- */

static void sub_free (void **item)
{
    struct sub *s = *item;

    if (s) {
        flux_msg_decref (s->req);
        json_decref (s->prefixes);
        free (s);
        *item = NULL;
    }
}

static int sub_wants (const struct sub *s, const char *topic, size_t len)
{
    size_t i;
    json_t *p;

    if (json_array_size (s->prefixes) == 0
        || (len == 10 && !strncmp (topic, "event.lost", 10)))
        return 1;
    json_array_foreach (s->prefixes, i, p) {
        const char *pre = json_string_value (p);
        if (pre && strlen (pre) <= len && !strncmp (topic, pre, strlen (pre)))
            return 1;
    }
    return 0;
}

static void note_membership (struct bgn_broker *b, const char *payload,
                             size_t len);

/* One sequenced event to the subscribers that asked for it; rank 0 also
 * tells Flux about membership changes. */
static void deliver_one (struct bgn_broker *b, uint32_t seq, const char *topic,
                         size_t topic_len, const char *payload,
                         size_t payload_len, uint32_t publisher)
{
    char t[256];

    snprintf (t, sizeof (t), "%.*s", (int)topic_len, topic);
    if (b->rank == 0 && !strcmp (t, SERVICE ".membership"))
        note_membership (b, payload, payload_len);
    for (struct sub *s = zlistx_first (b->subs); s; s = zlistx_next (b->subs)) {
        if (!sub_wants (s, topic, topic_len))
            continue;
        if (flux_respond_pack (b->h, s->req, "{s:I s:s s:s# s:I}",
                               "seq", (json_int_t)seq, "topic", t,
                               "payload", payload ? payload : "",
                               payload ? (int)payload_len : 0,
                               "publisher", (json_int_t)publisher) < 0)
            hlog (b, LOG_DEBUG, "bgn: event to a subscriber: %s",
                  strerror (errno));
    }
}

static int api_deliver_events (bgn_broker_t *b, const void *batch, size_t len)
{
    struct evbatch_rec rec;
    size_t off = 0;

    while (evbatch_next (batch, len, &off, &rec) == 1)
        deliver_one (b, rec.seq, rec.topic, rec.topic_len, rec.payload,
                     rec.payload_len, rec.publisher);
    return 0;
}

static void deliver_event_msg (struct bgn_broker *b, const msg_t *ev)
{
    const char *topic = msg_get_topic (ev), *payload;
    uint32_t seq = 0;
    size_t len = 0;

    if (!topic)
        return;
    msg_get_seq (ev, &seq);
    payload = msg_get_payload (ev, &len);
    deliver_one (b, seq, topic, strlen (topic), payload, len,
                 msg_get_matchtag (ev));
}

/* Rank 0: the overlay's membership record ({"fenced": [...], "live":
 * [...]}) as a Flux event, and the policies that act on it. */
/* The TBON's parent of every rank, from Flux's overlay.topology. */
static void learn_parents (struct bgn_broker *b, json_t *node)
{
    json_t *children, *child;
    size_t i;
    int rank, c;

    if (json_unpack (node, "{s:i s:o}", "rank", &rank, "children",
                     &children) < 0)
        return;
    json_array_foreach (children, i, child) {
        if (json_unpack (child, "{s:i}", "rank", &c) == 0 && c >= 0
            && (uint32_t)c < b->size)
            b->parent[c] = rank;
        learn_parents (b, child);
    }
}

static void topology_cb (flux_future_t *f, void *arg)
{
    struct bgn_broker *b = arg;
    json_t *topo = NULL;

    if (flux_rpc_get_unpack (f, "o", &topo) == 0)
        learn_parents (b, topo);
    else
        hlog (b, LOG_WARNING, "bgn: overlay.topology: %s (disconnect_hung "
              "cannot find parents)", strerror (errno));
    flux_future_destroy (f);
}

/* disconnect_hung: Flux's overlay waits on a hung child for ever (it is
 * only "torpid"); its parent is told to let it go, as `flux overlay
 * disconnect` does.  Only a broker Flux has online now: one still
 * joining (slow to start, fenced "never joined" by bgn) must not be cut
 * out of Flux's quorum. */
static void disconnect_online_cb (flux_future_t *f, void *arg)
{
    struct bgn_broker *b = arg;
    uint32_t rank = (uint32_t)(uintptr_t)flux_future_aux_get (f, "rank");
    const char *members = NULL;
    idset_t *online = NULL;
    flux_future_t *req;
    int parent = b->parent ? b->parent[rank] : -1;

    if (flux_rpc_get_unpack (f, "{s:s}", "members", &members) < 0
        || !(online = idset_decode (members, NULL, 0))) {
        hlog (b, LOG_WARNING, "bgn: disconnect_hung: Flux's broker.online "
              "group: %s; rank %u left alone", strerror (errno),
              (unsigned)rank);
        flux_future_destroy (f);
        return;
    }
    flux_future_destroy (f);
    if (!idset_test (online, rank)) {
        hlog (b, LOG_INFO, "bgn: disconnect_hung: rank %u is not online to "
              "Flux: left alone", (unsigned)rank);
        idset_destroy (&online);
        return;
    }
    idset_destroy (&online);
    if (parent < 0) {
        hlog (b, LOG_WARNING, "bgn: disconnect_hung: the TBON parent of rank "
              "%u is not known", (unsigned)rank);
        return;
    }
    if (!(req = flux_rpc_pack (b->h, "overlay.disconnect-subtree",
                             (uint32_t)parent, FLUX_RPC_NORESPONSE, "{s:i}",
                             "rank", (int)rank))) {
        hlog (b, LOG_ERR, "bgn: overlay.disconnect-subtree: %s",
              strerror (errno));
        return;
    }
    flux_future_destroy (req);
    hlog (b, LOG_NOTICE, "bgn: asked rank %d to disconnect its TBON child "
          "rank %u, which the BGN fenced (disconnect_hung)", parent,
          (unsigned)rank);
}

static void disconnect_in_flux (struct bgn_broker *b, uint32_t rank)
{
    flux_future_t *f;

    if (!(f = flux_rpc_pack (b->h, "groups.get", 0, 0, "{s:s}", "name",
                             "broker.online"))
        || flux_future_aux_set (f, "rank", (void *)(uintptr_t)rank, NULL) < 0
        || flux_future_then (f, 10., disconnect_online_cb, b) < 0) {
        hlog (b, LOG_ERR, "bgn: disconnect_hung: groups.get: %s",
              strerror (errno));
        flux_future_destroy (f);
    }
}

static void note_membership (struct bgn_broker *b, const char *payload,
                             size_t len)
{
    json_t *o = payload ? json_loadb (payload, len, 0, NULL) : NULL;
    json_t *fenced = o ? json_object_get (o, "fenced") : NULL;
    size_t i;
    json_t *v;

    if (!o)
        return;
    if (b->membership_event) {
        char *text = json_dumps (o, JSON_COMPACT);
        flux_future_t *f = text ? flux_event_publish (b->h, SERVICE
                                                      ".membership", 0, text)
                                : NULL;
        if (!f)
            hlog (b, LOG_ERR, "bgn: publishing bgn.membership: %s",
                  strerror (errno));
        flux_future_destroy (f);
        free (text);
    }
    json_array_foreach (fenced, i, v) {
        json_int_t rank = -1;
        const char *reason = "";
        if (json_is_integer (v))
            rank = json_integer_value (v);
        else
            json_unpack (v, "{s:I s?s}", "rank", &rank, "reason", &reason);
        if (rank <= 0 || rank >= (json_int_t)b->size)
            continue;
        if (b->bgn_down)
            idset_set (b->bgn_down, (unsigned)rank);
        hlog (b, LOG_WARNING, "bgn: rank %d (%s) is down on the BGN: %s",
              (int)rank, flux_get_hostbyrank (b->h, (uint32_t)rank), reason);
        /* hung: it stopped answering ("silent for ..."), not gone */
        if (b->disconnect_hung && !strncmp (reason, "silent", 6))
            disconnect_in_flux (b, (uint32_t)rank);
    }
    json_array_foreach (json_object_get (o, "live"), i, v) {
        json_int_t rank = -1;
        if (json_unpack (v, "{s:I}", "rank", &rank) == 0 && rank > 0
            && rank < (json_int_t)b->size && b->bgn_down)
            idset_clear (b->bgn_down, (unsigned)rank);
    }
    json_decref (o);
}

/* ---- orphan relief ------------------------------------------------------ */

/* This broker was told its TBON has written it off: exit, so that its
 * service manager restarts it and it rejoins.  SIGTERM first (an orderly
 * shutdown, if the broker can still do one).  A broker stuck in shutdown
 * (its TBON parent gone) unloads this module and then waits for ever, so
 * the backstop is a small watchdog process of its own: SIGKILL to the
 * broker 10 seconds on, unless it is gone by then. */
#define EXIT_GRACE 10
static void start_watchdog (struct bgn_broker *b)
{
    pid_t broker = getpid ();
    pid_t pid = fork ();

    if (pid < 0) {
        hlog (b, LOG_ERR, "bgn: fork for the exit watchdog: %s",
              strerror (errno));
        return;
    }
    if (pid == 0) {   /* async-signal-safe calls only: we are a fork */
        for (int i = 0; i < EXIT_GRACE * 10; i++) {
            struct timespec ts = { 0, 100000000 };
            nanosleep (&ts, NULL);
            if (getppid () != broker)
                _exit (0);   /* it exited by itself */
        }
        kill (broker, SIGKILL);
        _exit (0);
    }
}

static int method_exit (struct bgn_broker *b, msg_t *req,
                        const struct bgn_msg_info *info)
{
    if (!info->from_overlay || info->source != 0
        || !(msg_get_rolemask (req) & MSG_ROLE_OWNER))
        return request_fail (b, req, EPERM, "only rank 0's bgn may tell a "
                             "broker to exit");
    hlog (b, LOG_CRIT, "bgn: rank 0 says Flux's TBON has lost this broker "
          "while the BGN still reaches it: exiting, to be restarted and "
          "rejoin (orphan_relief)");
    api_respond (b, req, NULL);
    msg_destroy (&req);
    if (!b->exiting) {
        b->exiting = 1;
        start_watchdog (b);
        kill (getpid (), SIGTERM);
    }
    return 0;
}

static void tell_orphan (struct bgn_broker *b, uint32_t rank)
{
    struct bgn_msg_info info = { .source = b->rank };
    msg_t *req = msg_request_create (SERVICE ".exit", rank, "{}");

    if (!req)
        return;
    msg_set_flags (req, msg_get_flags (req) | MSGFLAG_NORESPONSE);
    msg_set_userid (req, (uint32_t)getuid ());
    msg_set_rolemask (req, MSG_ROLE_OWNER);
    msg_route_enable (req);
    idset_set (b->told, rank);
    hlog (b, LOG_WARNING, "bgn: rank %u (%s) is lost to Flux's TBON but up on "
          "the BGN: telling it to exit (orphan_relief)", (unsigned)rank,
          flux_get_hostbyrank (b->h, rank));
    route_request (b, req, &info);
}

/* Flux's view (broker.online) against the BGN's: a rank that was online,
 * is no more, and is up on the BGN is an orphan, once it has been so for
 * ORPHAN_GRACE seconds: a broker that restarted is up on the BGN at once
 * and needs a moment to rejoin the TBON. */
#define ORPHAN_GRACE 10.
static void online_cb (flux_future_t *f, void *arg)
{
    struct bgn_broker *b = arg;
    const char *members = NULL;
    idset_t *online = NULL;

    b->online_f = NULL;
    if (flux_rpc_get_unpack (f, "{s:s}", "members", &members) < 0
        || !(online = idset_decode (members, NULL, 0))) {
        flux_future_destroy (f);
        return;
    }
    flux_future_destroy (f);
    double now = monotime_now ();
    for (uint32_t r = 1; r < b->size; r++) {
        if (idset_test (online, r)) {
            idset_set (b->flux_seen, r);
            b->lost_since[r] = 0;
            idset_clear (b->told, r);
            continue;
        }
        if (!idset_test (b->flux_seen, r) || idset_test (b->bgn_down, r)
            || idset_test (b->told, r)) {
            b->lost_since[r] = 0;
            continue;
        }
        if (b->lost_since[r] == 0)
            b->lost_since[r] = now;
        else if (now - b->lost_since[r] >= ORPHAN_GRACE)
            tell_orphan (b, r);
    }
    idset_destroy (&online);
}

static void orphan_check (struct bgn_broker *b)
{
    flux_future_t *f;

    if (b->rank != 0 || !b->orphan_relief || b->online_f)
        return;
    if (!(f = flux_rpc_pack (b->h, "groups.get", 0, 0, "{s:s}", "name",
                             "broker.online"))
        || flux_future_then (f, 5., online_cb, b) < 0) {
        flux_future_destroy (f);
        return;
    }
    b->online_f = f;
}

/* ---- life -------------------------------------------------------------- */

static const struct flux_msg_handler_spec htab[] = {
    { FLUX_MSGTYPE_REQUEST, SERVICE ".disconnect", client_disconnect_cb, 0 },
    { FLUX_MSGTYPE_REQUEST, SERVICE ".*", client_request_cb, FLUX_ROLE_ALL },
    { FLUX_MSGTYPE_RESPONSE, NULL, flux_response_cb, 0 },
    FLUX_MSGHANDLER_TABLE_END,
};

bgn_broker_t *fluxhost_create (flux_t *h, char *errbuf, size_t errlen)
{
    struct bgn_broker *b = calloc (1, sizeof (*b));
    const char *host;

    if (!b)
        return NULL;
    b->h = h;
    b->r = flux_get_reactor (h);
    b->boot_timeout = 60.;
    b->rpc_timeout = 10.;
    b->membership_event = 1;
    b->stop_code = -1;
    if (flux_get_rank (h, &b->rank) < 0 || flux_get_size (h, &b->size) < 0) {
        snprintf (errbuf, errlen, "rank and size: %s", strerror (errno));
        goto error;
    }
    host = flux_get_hostbyrank (h, b->rank);
    snprintf (b->hostname, sizeof (b->hostname), "%s", host ? host : "localhost");
    make_instance_id (b);
    if (read_config (b, errbuf, errlen) < 0 || make_rundir (b, errbuf, errlen) < 0)
        goto error;
    if (!(b->poll = fluxpoll_create (b->r))) {
        snprintf (errbuf, errlen, "ZeroMQ context: %s", strerror (errno));
        goto error;
    }
    if (!(b->clients = zhashx_new ()) || !(b->forwards = zhashx_new ())
        || !(b->subs = zlistx_new ())) {
        snprintf (errbuf, errlen, "out of memory");
        goto error;
    }
    zhashx_set_destructor (b->clients, client_free);
    zhashx_set_destructor (b->forwards, forward_free);
    zlistx_set_destructor (b->subs, sub_free);
    return b;
error:
    fluxhost_destroy (&b);
    return NULL;
}

int fluxhost_serve (bgn_broker_t *b)
{
    if (flux_msg_handler_addvec (b->h, htab, b, &b->handlers) < 0)
        return -1;
    if (!(b->sweep = flux_timer_watcher_create (b->r, 1., 1., sweep_cb, b)))
        return -1;
    flux_watcher_start (b->sweep);
    if (b->rank == 0 && b->orphan_relief
        && (!(b->bgn_down = idset_create (b->size))
            || !(b->flux_seen = idset_create (b->size))
            || !(b->lost_since = calloc (b->size, sizeof (double)))
            || !(b->told = idset_create (b->size))))
        return -1;
    if (b->rank == 0 && b->disconnect_hung) {
        flux_future_t *f;
        if (!(b->parent = calloc (b->size, sizeof (int))))
            return -1;
        for (uint32_t r = 0; r < b->size; r++)
            b->parent[r] = -1;
        if (!(f = flux_rpc_pack (b->h, "overlay.topology", 0, 0, "{s:i}",
                                 "rank", 0))
            || flux_future_then (f, -1., topology_cb, b) < 0) {
            flux_future_destroy (f);
            return -1;
        }
    }
    return 0;
}

int fluxhost_stop_code (const bgn_broker_t *b)
{
    return b->stop_code;
}

void fluxhost_destroy (bgn_broker_t **bp)
{
    struct bgn_broker *b;

    if (!bp || !(b = *bp))
        return;
    flux_msg_handler_delvec (b->handlers);
    flux_watcher_destroy (b->sweep);
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
    zhashx_destroy (&b->forwards);
    zlistx_destroy (&b->subs);
    fluxpoll_destroy (&b->poll);
    json_decref (b->conf);
    free (b->parent);
    flux_future_destroy (b->online_f);
    idset_destroy (&b->bgn_down);
    idset_destroy (&b->flux_seen);
    free (b->lost_since);
    idset_destroy (&b->told);
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
    .service_add = api_service_add,
    .service_remove = api_service_remove,
    .respond = api_respond,
    .respond_error = api_respond_error,
    .deliver = api_deliver,
    .send = api_send,
    .set_overlay = api_set_overlay,
    .stop = api_stop,
    .now = api_now,
    .timer_start = api_timer_start,
    .timer_stop = api_timer_stop,
    .deliver_events = api_deliver_events,
};

const struct bgn_broker_api *fluxhost_api (void)
{
    return &api;
}
