/* broker.c: bgn-broker, the daemon that hosts the overlay.
 *
 * What lives here: start-up (options, config, bootstrap, rundir, module
 * loading), the local connector that clients talk to, and the broker's
 * message routing: every message a client, a service or the overlay hands
 * over goes through broker_route(), which decides whether it is handled
 * here (a service), goes to a local client, or leaves through the overlay.
 * Everything runs in one thread on a czmq reactor.
 *
 * Route stack rules (DESIGN.md, "Routing"): a request from a local client
 * gets the client's id pushed when it arrives; when a request leaves this
 * broker for the overlay, the broker pushes its own rank once.  Brokers in
 * between never touch the stack.  A response goes toward the top of its
 * route stack: a rank (through the overlay, or popped if it is ours) or a
 * local client id (popped, then sent to that client).
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uuid/uuid.h>
#include <czmq.h>

#include "src/common/libconf/conf.h"
#include "src/common/libutil/fsd.h"
#include "broker.h"
#include "src/common/libutil/monotime.h"

#define EXIT_CONFIG  1   /* bad usage or configuration: do not restart */
#define EXIT_FAILURE_RUNTIME 2

#define MAX_FRAMES (MSG_MAX_ROUTES + 8)

/* A route frame naming a broker is a decimal rank; client ids are uuids. */
static int route_is_rank (const char *id, uint32_t *rank)
{
    char *end;
    unsigned long v;

    if (!id || *id < '0' || *id > '9')
        return 0;
    errno = 0;
    v = strtoul (id, &end, 10);
    if (errno || *end || v > UINT32_MAX)
        return 0;
    *rank = v;
    return 1;
}

/* ---- local connector ------------------------------------------------- */

static void subscriptions_drop (struct bgn_broker *b, const char *client)
{
    zhashx_delete (b->subscriptions, client);
}

/* Send 'msg' to local client 'client'.  Drops (and counts) on failure:
 * a client that went away (EHOSTUNREACH) also loses its subscriptions.
 */
static int local_send (struct bgn_broker *b, const char *client, msg_t *msg)
{
    struct msg_frame frames[MAX_FRAMES];
    int n = msg_encode (msg, frames, MAX_FRAMES);

    if (n < 0)
        goto drop;
    if (zmq_send (b->local, client, strlen (client),
                  ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0)
        goto drop;
    for (int i = 0; i < n; i++) {
        /* The first frame is accepted or refused as a whole message, so
         * once it is in, the rest cannot fail. */
        if (zmq_send (b->local, frames[i].data, frames[i].size,
                      (i < n - 1 ? ZMQ_SNDMORE : 0) | ZMQ_DONTWAIT) < 0)
            goto drop;
    }
    b->client_tx++;
    return 0;
drop:
    if (errno == EHOSTUNREACH)
        subscriptions_drop (b, client);
    b->client_send_drops++;
    logger_log (b->log, LOG_DEBUG, "dropped %s for client %.8s: %s",
                msg_typestr (msg_get_type (msg)), client, strerror (errno));
    return -1;
}

static void local_malformed (struct bgn_broker *b, const char *client,
                             const char *reason)
{
    b->client_drops++;
    /* Logged once, then every 1000th, so a broken client cannot flood. */
    if (b->client_drops == 1 || b->client_drops % 1000 == 0)
        logger_log (b->log, LOG_WARNING,
                    "dropped malformed message from client %.8s: %s "
                    "(%llu dropped so far)", client, reason,
                    (unsigned long long)b->client_drops);
}

/* Read one multipart message from the local ROUTER: identity first.
 * Returns the number of frames read into msgs (closing them is the
 * caller's job), 0 if nothing was ready, -1 on error.  A message with more
 * than 'max' frames is read to its end and reported as too long (-2).
 */
static int recv_multipart (void *sock, zmq_msg_t *msgs, int max)
{
    int n = 0, more = 1, toolong = 0;

    while (more) {
        zmq_msg_t scratch, *m = n < max ? &msgs[n] : &scratch;
        zmq_msg_init (m);
        if (zmq_msg_recv (m, sock, ZMQ_DONTWAIT) < 0) {
            int saved = errno;
            zmq_msg_close (m);
            for (int i = 0; i < n && i < max; i++)
                zmq_msg_close (&msgs[i]);
            errno = saved;
            return (saved == EAGAIN && n == 0) ? 0 : -1;
        }
        more = zmq_msg_more (m);
        if (n >= max) {
            zmq_msg_close (m);
            toolong = 1;
        }
        else
            n++;
    }
    if (toolong) {
        for (int i = 0; i < n; i++)
            zmq_msg_close (&msgs[i]);
        return -2;
    }
    return n;
}

static void local_handle_one (struct bgn_broker *b, zmq_msg_t *frames, int n)
{
    struct msg_frame mf[MAX_FRAMES];
    char client[MSG_MAX_ROUTEID + 1];
    char reason[128] = "";
    size_t idlen = zmq_msg_size (&frames[0]);
    msg_t *msg;
    struct bgn_msg_info info = { 0 };

    if (idlen == 0 || idlen > MSG_MAX_ROUTEID)
        return;
    memcpy (client, zmq_msg_data (&frames[0]), idlen);
    client[idlen] = '\0';
    for (int i = 1; i < n; i++) {
        mf[i - 1].data = zmq_msg_data (&frames[i]);
        mf[i - 1].size = zmq_msg_size (&frames[i]);
    }
    if (!(msg = msg_decode (mf, n - 1, reason, sizeof (reason)))) {
        local_malformed (b, client, reason);
        return;
    }
    b->client_rx++;
    if (msg_get_flags (msg) & MSGFLAG_ROUTE) {
        /* Clients do not route; a stack from one is forged or broken. */
        local_malformed (b, client, "client message carries a route stack");
        msg_destroy (&msg);
        return;
    }
    msg_route_enable (msg);
    if (msg_route_push (msg, client) < 0) {
        local_malformed (b, client, "bad client id");
        msg_destroy (&msg);
        return;
    }
    info.source = b->rank;
    broker_route (b, msg, &info);
}

static int local_readable (zloop_t *loop, zmq_pollitem_t *item, void *arg)
{
    struct bgn_broker *b = arg;
    zmq_msg_t frames[MAX_FRAMES];
    int n;

    /* Drain what is ready, but yield to the reactor now and then so one
     * busy client cannot starve the overlay. */
    for (int budget = 0; budget < 256; budget++) {
        n = recv_multipart (b->local, frames, MAX_FRAMES);
        if (n == 0)
            break;
        if (n == -2) {
            local_malformed (b, "?", "too many frames");
            continue;
        }
        if (n < 0) {
            if (errno == EINTR)
                continue;
            logger_log (b->log, LOG_ERR, "local connector: %s",
                        strerror (errno));
            break;
        }
        if (n >= 2)
            local_handle_one (b, frames, n);
        else
            local_malformed (b, "?", "empty message");
        for (int i = 0; i < n; i++)
            zmq_msg_close (&frames[i]);
    }
    return 0;
}

/* ---- routing ---------------------------------------------------------- */

static int overlay_send (struct bgn_broker *b, msg_t *msg, uint32_t dest)
{
    if (!b->ovl) {
        msg_destroy (&msg);
        errno = EHOSTUNREACH;
        return -1;
    }
    return b->ovl->send (b->ovl_state, msg, dest);
}

/* Fail a request with errnum, and free it. */
static int request_fail (struct bgn_broker *b, msg_t *req, int errnum,
                         const char *errstr)
{
    broker_respond_error (b, req, errnum, errstr);
    msg_destroy (&req);
    return -1;
}

static int call_service (struct bgn_broker *b, msg_t *msg,
                         const struct bgn_msg_info *info,
                         bgn_service_f fn, void *arg)
{
    fn (b, msg, info, arg);
    msg_destroy (&msg);
    return 0;
}

/* Send a request out through the overlay toward dest. */
static int request_forward (struct bgn_broker *b, msg_t *msg,
                            const struct bgn_msg_info *info, uint32_t dest)
{
    char rankstr[16];
    msg_t *copy;

    if (!b->ovl || b->size == 1)
        return request_fail (b, msg, EHOSTUNREACH,
                             dest < b->size || dest >= NODEID_UPSTREAM
                                 ? "no overlay to reach that rank"
                                 : "no such rank");
    if (!info->from_overlay) {
        snprintf (rankstr, sizeof (rankstr), "%u", (unsigned)b->rank);
        if (msg_route_push (msg, rankstr) < 0)
            return request_fail (b, msg, errno, "route stack is full");
    }
    /* The overlay takes the message in every case; keep a copy only if a
     * refusal must be answered. */
    if (msg_get_flags (msg) & MSGFLAG_NORESPONSE)
        copy = NULL;
    else if (!(copy = msg_copy (msg)))
        return request_fail (b, msg, ENOMEM, NULL);
    if (b->ovl->send (b->ovl_state, msg, dest) < 0) {
        int errnum = errno;
        if (copy) {
            if (!info->from_overlay)
                msg_route_pop (copy, NULL, 0);
            broker_respond_error (b, copy, errnum, "overlay could not route");
        }
        msg_destroy (&copy);
        return -1;
    }
    msg_destroy (&copy);
    return 0;
}

static int route_request (struct bgn_broker *b, msg_t *msg,
                          const struct bgn_msg_info *info)
{
    uint32_t nodeid;
    uint8_t flags = msg_get_flags (msg);
    bgn_service_f fn;
    void *arg;
    int have = service_lookup (b->services, msg_get_topic (msg), &fn, &arg) == 0;

    msg_get_nodeid (msg, &nodeid);
    if (flags & MSGFLAG_UPSTREAM) {
        /* nodeid is the sender: never handled there. */
        if (nodeid != b->rank && have)
            return call_service (b, msg, info, fn, arg);
        if (b->rank == 0)
            return request_fail (b, msg, ENOSYS, "no service upstream");
        return request_forward (b, msg, info, NODEID_UPSTREAM);
    }
    if (nodeid == NODEID_ANY) {
        if (have)
            return call_service (b, msg, info, fn, arg);
        if (b->rank == 0 || !b->ovl)
            return request_fail (b, msg, ENOSYS, NULL);
        return request_forward (b, msg, info, NODEID_ANY);
    }
    if (nodeid == b->rank) {
        if (have)
            return call_service (b, msg, info, fn, arg);
        return request_fail (b, msg, ENOSYS, NULL);
    }
    if (nodeid >= b->size)
        return request_fail (b, msg, EHOSTUNREACH, "no such rank");
    return request_forward (b, msg, info, nodeid);
}

static int route_response (struct bgn_broker *b, msg_t *msg,
                           const struct bgn_msg_info *info)
{
    const char *top;
    uint32_t rank;

    while (msg_route_count (msg) > 0) {
        top = msg_route_first (msg);
        if (!route_is_rank (top, &rank)) {
            char client[MSG_MAX_ROUTEID + 1];
            msg_route_pop (msg, client, sizeof (client));
            local_send (b, client, msg);
            msg_destroy (&msg);
            return 0;
        }
        if (rank != b->rank) {
            if (overlay_send (b, msg, rank) < 0) {
                b->route_drops++;
                logger_log (b->log, LOG_DEBUG,
                            "response %s to rank %u dropped: %s",
                            "", (unsigned)rank, strerror (errno));
                return -1;
            }
            return 0;
        }
        msg_route_pop (msg, NULL, 0);
    }
    /* The stack ran out here: the request came from this broker itself
     * (a module or built-in), so its service gets the response. */
    bgn_service_f fn;
    void *arg;
    if (service_lookup (b->services, msg_get_topic (msg), &fn, &arg) == 0)
        return call_service (b, msg, info, fn, arg);
    b->route_drops++;
    msg_destroy (&msg);
    return -1;
}

int broker_route (struct bgn_broker *b, msg_t *msg,
                  const struct bgn_msg_info *info)
{
    switch (msg_get_type (msg)) {
    case MSGTYPE_REQUEST:
        return route_request (b, msg, info);
    case MSGTYPE_RESPONSE:
        return route_response (b, msg, info);
    case MSGTYPE_EVENT:
        broker_deliver_event (b, msg);
        msg_destroy (&msg);
        return 0;
    default:
        b->route_drops++;
        msg_destroy (&msg);
        return -1;
    }
}

int broker_respond (struct bgn_broker *b, const msg_t *req,
                    const char *payload)
{
    msg_t *rsp;
    struct bgn_msg_info info = { .source = b->rank };

    if (msg_get_flags (req) & MSGFLAG_NORESPONSE)
        return 0;
    if (!(rsp = msg_response_create (req, payload)))
        return -1;
    return route_response (b, rsp, &info);
}

int broker_respond_error (struct bgn_broker *b, const msg_t *req, int errnum,
                          const char *errstr)
{
    msg_t *rsp;
    struct bgn_msg_info info = { .source = b->rank };

    if (msg_get_flags (req) & MSGFLAG_NORESPONSE)
        return 0;
    if (!(rsp = msg_error_response_create (req, errnum ? errnum : EINVAL,
                                           errstr)))
        return -1;
    return route_response (b, rsp, &info);
}

/* Deliver an event to every local client subscribed to a prefix of it. */
void broker_deliver_event (struct bgn_broker *b, const msg_t *event)
{
    const char *topic = msg_get_topic (event);
    zlistx_t *subs;
    zlistx_t *targets = zlistx_new ();

    if (!topic || !targets) {
        zlistx_destroy (&targets);
        return;
    }
    /* Collect first: local_send may drop a client from the hash.
     * "event.lost" (a gap no peer could fill) goes to every subscriber:
     * nobody may miss events silently. */
    int to_all = !strcmp (topic, "event.lost");
    for (subs = zhashx_first (b->subscriptions); subs;
         subs = zhashx_next (b->subscriptions)) {
        for (const char *p = zlistx_first (subs); p; p = zlistx_next (subs)) {
            if (to_all || !strncmp (topic, p, strlen (p))) {
                zlistx_add_end (targets,
                                (void *)zhashx_cursor (b->subscriptions));
                break;
            }
        }
    }
    for (const char *c = zlistx_first (targets); c; c = zlistx_next (targets)) {
        char client[MSG_MAX_ROUTEID + 1];
        msg_t *copy = msg_copy (event);
        snprintf (client, sizeof (client), "%s", c);
        if (copy) {
            msg_route_disable (copy);
            local_send (b, client, copy);
            msg_destroy (&copy);
        }
    }
    zlistx_destroy (&targets);
}

/* Ends the reactor from a timer, so the handler that asked for the stop
 * (e.g. broker.shutdown) finishes and its response is queued first. */
static int stop_timer (zloop_t *loop, int timer_id, void *arg)
{
    return -1;
}

void broker_stop (struct bgn_broker *b, int exit_code)
{
    if (!b->stopping || exit_code > b->exit_code)
        b->exit_code = exit_code;
    if (!b->stopping && b->loop)
        zloop_timer (b->loop, 1, 1, stop_timer, b);
    b->stopping = 1;
}

/* ---- the api table given to modules ---------------------------------- */

static uint32_t api_rank (bgn_broker_t *b) { return b->rank; }
static uint32_t api_size (bgn_broker_t *b) { return b->size; }
static const char *api_hostname (bgn_broker_t *b) { return b->hostname; }
static const char *api_instance_id (bgn_broker_t *b) { return b->instance_id; }
static const char *api_rundir (bgn_broker_t *b) { return b->rundir; }
static zloop_t *api_loop (bgn_broker_t *b) { return b->loop; }
static json_t *api_config (bgn_broker_t *b) { return b->conf; }

static void api_log (bgn_broker_t *b, int level, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    logger_vlog (b->log, level, fmt, ap);
    va_end (ap);
}

static int api_boot_put (bgn_broker_t *b, const char *key, const char *value)
{
    char err[256] = "";
    if (boot_put (b->boot, key, value, err, sizeof (err)) < 0) {
        int saved = errno;
        logger_log (b->log, LOG_ERR, "bootstrap put %s: %s", key, err);
        errno = saved;
        return -1;
    }
    return 0;
}

static int api_boot_get (bgn_broker_t *b, uint32_t rank, const char *key,
                         char *buf, size_t len)
{
    char err[256] = "";
    if (boot_get (b->boot, rank, key, buf, len, err, sizeof (err)) < 0) {
        int saved = errno;
        logger_log (b->log, LOG_ERR, "bootstrap get %s of rank %u: %s", key,
                    (unsigned)rank, err);
        errno = saved;
        return -1;
    }
    return 0;
}

static int api_service_add (bgn_broker_t *b, const char *name,
                            bgn_service_f fn, void *arg)
{
    return service_add (b->services, name, fn, arg);
}

static int api_service_remove (bgn_broker_t *b, const char *name)
{
    return service_remove (b->services, name);
}

static int api_deliver (bgn_broker_t *b, msg_t *msg,
                        const struct bgn_msg_info *info)
{
    return broker_route (b, msg, info);
}

static int api_send (bgn_broker_t *b, msg_t *msg)
{
    struct bgn_msg_info info = { .source = b->rank };
    if (!(msg_get_flags (msg) & MSGFLAG_ROUTE))
        msg_route_enable (msg);
    return broker_route (b, msg, &info);
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

const struct bgn_broker_api broker_api = {
    .rank = api_rank,
    .size = api_size,
    .hostname = api_hostname,
    .instance_id = api_instance_id,
    .rundir = api_rundir,
    .loop = api_loop,
    .config = api_config,
    .log = api_log,
    .boot_put = api_boot_put,
    .boot_get = api_boot_get,
    .service_add = api_service_add,
    .service_remove = api_service_remove,
    .respond = broker_respond,
    .respond_error = broker_respond_error,
    .deliver = api_deliver,
    .send = api_send,
    .set_overlay = api_set_overlay,
    .stop = broker_stop,
};

/* ---- start-up and shutdown ------------------------------------------- */

static void usage (FILE *f)
{
    fprintf (f,
"Usage: bgn-broker [OPTIONS]\n"
"Run one bgn broker.  Rank and size come from a PMI-1 launcher (PMI_FD),\n"
"from the config's [bootstrap] host list, or the broker runs alone as\n"
"rank 0 of 1.\n"
"\n"
"  -c, --config=PATH        TOML config file, or a directory of *.toml\n"
"  -o, --setattr=KEY=VALUE  override a config key (repeatable),\n"
"                           e.g. -o overlay.peer_timeout=2s\n"
"      --rundir=DIR         directory for the local socket (mode 0700);\n"
"                           %%r in DIR stands for the rank\n"
"      --module-path=PATH   colon-separated module directories\n"
"      --overlay=NAME       overlay module to load (default overlay-bgn;\n"
"                           \"none\" runs without one, size 1 only)\n"
"  -v, --verbose            more log output (repeatable)\n"
"  -q, --quiet              errors only\n"
"  -h, --help               this text\n"
"  -V, --version            print the version\n"
"\n"
"Exit status: 0 after an orderly shutdown, 1 for bad usage or config,\n"
"2 for a runtime failure, 3 when cut off from rank 0 (partition).\n"
"See bgn-broker(8).\n");
}

struct options {
    const char *config;
    zlistx_t *overrides;
    const char *rundir;
    const char *module_path;
    const char *overlay;
    int verbose;
    int quiet;
};

static int parse_options (int argc, char **argv, struct options *o)
{
    static const struct option longopts[] = {
        { "config", required_argument, NULL, 'c' },
        { "setattr", required_argument, NULL, 'o' },
        { "rundir", required_argument, NULL, 'R' },
        { "module-path", required_argument, NULL, 'M' },
        { "overlay", required_argument, NULL, 'O' },
        { "verbose", no_argument, NULL, 'v' },
        { "quiet", no_argument, NULL, 'q' },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    int c;

    while ((c = getopt_long (argc, argv, "c:o:vqhV", longopts, NULL)) != -1) {
        switch (c) {
        case 'c': o->config = optarg; break;
        case 'o': zlistx_add_end (o->overrides, optarg); break;
        case 'R': o->rundir = optarg; break;
        case 'M': o->module_path = optarg; break;
        case 'O': o->overlay = optarg; break;
        case 'v': o->verbose++; break;
        case 'q': o->quiet = 1; break;
        case 'h': usage (stdout); exit (0);
        case 'V': printf ("bgn-broker %s\n", PACKAGE_VERSION); exit (0);
        default: usage (stderr); return -1;
        }
    }
    if (optind < argc) {
        fprintf (stderr, "bgn-broker: unexpected argument '%s'\n", argv[optind]);
        usage (stderr);
        return -1;
    }
    return 0;
}

static int load_config (struct bgn_broker *b, struct options *o)
{
    char err[512] = "";

    if (!(b->conf = conf_create ()))
        return -1;
    if (o->config && conf_load (b->conf, o->config, err, sizeof (err)) < 0)
        goto error;
    for (const char *kv = zlistx_first (o->overrides); kv;
         kv = zlistx_next (o->overrides)) {
        if (conf_set (b->conf, kv, err, sizeof (err)) < 0)
            goto error;
    }
    if (conf_finalize (b->conf, err, sizeof (err)) < 0)
        goto error;
    return 0;
error:
    fprintf (stderr, "bgn-broker: %s\n", err);
    return -1;
}

/* Directory of this executable, to find modules in the build tree. */
static int exe_dir (char *buf, size_t len)
{
    ssize_t n = readlink ("/proc/self/exe", buf, len - 1);
    char *slash;
    if (n < 0)
        return -1;
    buf[n] = '\0';
    if ((slash = strrchr (buf, '/')))
        *slash = '\0';
    return 0;
}

static char *default_module_path (void)
{
    char dir[PATH_MAX], *path;
    if (exe_dir (dir, sizeof (dir)) == 0
        && !strcmp (dir, ABS_TOP_BUILDDIR "/src/broker")) {
        path = strdup (ABS_TOP_BUILDDIR "/src/modules/overlay/.libs");
    }
    else
        path = strdup (MODULEDIR);
    return path;
}

static int setup_rundir (struct bgn_broker *b, const char *dir)
{
    const char *cfg = NULL;
    struct stat st;

    if (!dir && conf_get_string (b->conf, "broker.rundir", &cfg) == 0 && *cfg)
        dir = cfg;
    if (dir) {
        /* "%r" stands for the rank, so one command line serves every
         * broker of a launcher (mpiexec ... --rundir=/tmp/bgn-%r). */
        const char *pct = strstr (dir, "%r");
        int n = pct ? snprintf (b->rundir, sizeof (b->rundir), "%.*s%u%s",
                                (int)(pct - dir), dir, (unsigned)b->rank,
                                pct + 2)
                    : snprintf (b->rundir, sizeof (b->rundir), "%s", dir);
        if (n >= (int)sizeof (b->rundir))
            goto toolong;
        if (mkdir (b->rundir, 0700) == 0)
            b->rundir_created = 1;
        else if (errno != EEXIST) {
            logger_log (b->log, LOG_ERR, "rundir %s: %s", b->rundir,
                        strerror (errno));
            return -1;
        }
        if (stat (b->rundir, &st) < 0 || !S_ISDIR (st.st_mode)
            || st.st_uid != getuid () || (st.st_mode & 077)) {
            logger_log (b->log, LOG_ERR,
                        "rundir %s must be a directory owned by uid %d "
                        "with mode 0700", b->rundir, (int)getuid ());
            return -1;
        }
    }
    else {
        const char *tmp = getenv ("TMPDIR");
        snprintf (b->rundir, sizeof (b->rundir), "%s/bgn-broker-XXXXXX",
                  tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp (b->rundir)) {
            logger_log (b->log, LOG_ERR, "mkdtemp %s: %s", b->rundir,
                        strerror (errno));
            return -1;
        }
        b->rundir_created = 1;
    }
    if (snprintf (b->local_path, sizeof (b->local_path), "%s/local",
                  b->rundir) >= 100)
        goto toolong;
    snprintf (b->local_uri, sizeof (b->local_uri), "ipc://%s", b->local_path);
    return 0;
toolong:
    logger_log (b->log, LOG_ERR,
                "rundir path %s is too long for a unix socket (max ~100)",
                dir ? dir : b->rundir);
    return -1;
}

static int setup_local (struct bgn_broker *b)
{
    int one = 1;
    zmq_pollitem_t item = { 0 };

    if (!(b->local = zmq_socket (zsys_init (), ZMQ_ROUTER)))
        return -1;
    zmq_setsockopt (b->local, ZMQ_ROUTER_MANDATORY, &one, sizeof (one));
    /* Linger briefly so a final response (broker.shutdown) gets out. */
    int linger = 1000;
    zmq_setsockopt (b->local, ZMQ_LINGER, &linger, sizeof (linger));
    unlink (b->local_path);
    if (zmq_bind (b->local, b->local_uri) < 0) {
        logger_log (b->log, LOG_ERR, "bind %s: %s", b->local_uri,
                    zmq_strerror (errno));
        return -1;
    }
    chmod (b->local_path, 0600);
    item.socket = b->local;
    item.events = ZMQ_POLLIN;
    return zloop_poller (b->loop, &item, local_readable, b);
}

static int signal_readable (zloop_t *loop, zmq_pollitem_t *item, void *arg)
{
    struct bgn_broker *b = arg;
    struct signalfd_siginfo si;

    if (read (b->sigfd, &si, sizeof (si)) == sizeof (si))
        logger_log (b->log, LOG_INFO, "signal %d: shutting down",
                    (int)si.ssi_signo);
    broker_stop (b, 0);
    return -1;
}

static int setup_signals (struct bgn_broker *b)
{
    sigset_t set;
    zmq_pollitem_t item = { 0 };

    signal (SIGPIPE, SIG_IGN);
    sigemptyset (&set);
    sigaddset (&set, SIGTERM);
    sigaddset (&set, SIGINT);
    sigaddset (&set, SIGHUP);
    if (sigprocmask (SIG_BLOCK, &set, NULL) < 0
        || (b->sigfd = signalfd (-1, &set, SFD_CLOEXEC | SFD_NONBLOCK)) < 0)
        return -1;
    item.fd = b->sigfd;
    item.events = ZMQ_POLLIN;
    return zloop_poller (b->loop, &item, signal_readable, b);
}

static int setup_instance_id (struct bgn_broker *b)
{
    char err[256] = "";

    /* A static instance's id follows from its config: every broker,
     * rank 0 included, computes the same one. */
    if (!strcmp (boot_method (b->boot), "static")) {
        if (boot_get (b->boot, 0, "instance", b->instance_id,
                      sizeof (b->instance_id), err, sizeof (err)) < 0)
            goto error;
        return 0;
    }
    if (b->rank == 0) {
        uuid_t u;
        /* A restarted rank 0 (bgn fault restart) finds the instance id
         * already published: keep it, or no peer would let it back in. */
        if (boot_get (b->boot, 0, "instance", b->instance_id,
                      sizeof (b->instance_id), err, sizeof (err)) == 0)
            return 0;
        uuid_generate (u);
        uuid_unparse_lower (u, b->instance_id);
        if (boot_put (b->boot, "instance", b->instance_id, err,
                      sizeof (err)) < 0)
            goto error;
    }
    return 0;
error:
    logger_log (b->log, LOG_ERR, "bootstrap: %s", err);
    return -1;
}

static int load_overlay (struct bgn_broker *b, struct options *o)
{
    char err[512] = "";
    char *path = NULL;
    const char *name = o->overlay ? o->overlay : "overlay-bgn";
    const char *cfgpath = NULL;

    if (!strcmp (name, "none")) {
        if (b->size > 1) {
            logger_log (b->log, LOG_ERR,
                        "--overlay=none needs size 1, not %u",
                        (unsigned)b->size);
            return -1;
        }
        return 0;
    }
    if (o->module_path)
        path = strdup (o->module_path);
    else if (conf_get_string (b->conf, "broker.module_path", &cfgpath) == 0
             && *cfgpath)
        path = strdup (cfgpath);
    else if (getenv ("BGN_MODULE_PATH"))
        path = strdup (getenv ("BGN_MODULE_PATH"));
    else
        path = default_module_path ();
    b->overlay_mod = module_open (name, path, err, sizeof (err));
    free (path);
    if (!b->overlay_mod) {
        logger_log (b->log, LOG_ERR, "%s", err);
        return -1;
    }
    if (module_load (b->overlay_mod, &broker_api, b) < 0) {
        logger_log (b->log, LOG_ERR, "module %s: load failed: %s", name,
                    strerror (errno));
        return -1;
    }
    logger_log (b->log, LOG_DEBUG, "loaded %s", module_path (b->overlay_mod));
    return 0;
}

static int bootstrap_finish (struct bgn_broker *b)
{
    char err[256] = "";

    if (boot_barrier (b->boot, err, sizeof (err)) < 0)
        goto error;
    if (b->rank != 0 && boot_get (b->boot, 0, "instance", b->instance_id,
                                  sizeof (b->instance_id), err,
                                  sizeof (err)) < 0)
        goto error;
    if (b->overlay_mod && module_start (b->overlay_mod) < 0) {
        logger_log (b->log, LOG_ERR, "overlay start failed: %s",
                    strerror (errno));
        return -1;
    }
    /* Second barrier: every peer now admits connections (CURVE keys are
     * authorized), so connecting cannot race a peer's ZAP set-up. */
    if (boot_barrier (b->boot, err, sizeof (err)) < 0)
        goto error;
    if (b->overlay_mod && module_connect (b->overlay_mod) < 0) {
        logger_log (b->log, LOG_ERR, "overlay connect failed: %s",
                    strerror (errno));
        return -1;
    }
    if (boot_finalize (b->boot, err, sizeof (err)) < 0)
        goto error;
    return 0;
error:
    logger_log (b->log, LOG_ERR, "bootstrap: %s", err);
    return -1;
}

static void broker_cleanup (struct bgn_broker *b)
{
    module_close (&b->overlay_mod);
    if (b->local) {
        zmq_close (b->local);
        unlink (b->local_path);
    }
    if (b->rundir_created)
        rmdir (b->rundir);
    if (b->sigfd > 0)
        close (b->sigfd);
    zloop_destroy (&b->loop);
    zhashx_destroy (&b->subscriptions);
    service_registry_destroy (&b->services);
    boot_destroy (&b->boot);
    json_decref (b->conf);
    logger_destroy (&b->log);
}

int main (int argc, char **argv)
{
    struct bgn_broker broker = { .sigfd = -1 }, *b = &broker;
    struct options opts = { 0 };
    char err[512] = "";
    long long level;
    double boot_timeout = 60.;
    int rc = EXIT_FAILURE_RUNTIME;

    b->start_time = monotime_now ();
    opts.overrides = zlistx_new ();
    if (!opts.overrides || parse_options (argc, argv, &opts) < 0) {
        zlistx_destroy (&opts.overrides);
        return EXIT_CONFIG;
    }
    if (load_config (b, &opts) < 0) {
        zlistx_destroy (&opts.overrides);
        json_decref (b->conf);
        return EXIT_CONFIG;
    }
    if (conf_get_int (b->conf, "broker.log_level", &level) < 0)
        level = LOG_NOTICE;
    level += opts.verbose;
    if (opts.quiet)
        level = LOG_ERR;
    b->log = logger_create ("bgn-broker", level > LOG_DEBUG ? LOG_DEBUG
                                                            : (int)level);
    zsys_handler_set (NULL);
    zsys_set_logstream (stderr);
    zsys_init ();
    b->services = service_registry_create ();
    b->subscriptions = zhashx_new ();
    b->loop = zloop_new ();
    if (!b->log || !b->services || !b->subscriptions || !b->loop)
        goto done;
    zhashx_set_destructor (b->subscriptions,
                           (zhashx_destructor_fn *)zlistx_destroy);
    if (gethostname (b->hostname, sizeof (b->hostname) - 1) < 0)
        snprintf (b->hostname, sizeof (b->hostname), "localhost");
    if (setup_signals (b) < 0) {
        logger_log (b->log, LOG_ERR, "signals: %s", strerror (errno));
        goto done;
    }
    if (!(b->boot = boot_create (b->conf, opts.config, boot_timeout, err,
                                 sizeof (err)))) {
        /* EINVAL: the config is wrong; restarting will not help. */
        if (errno == EINVAL)
            rc = EXIT_CONFIG;
        logger_log (b->log, LOG_ERR, "bootstrap: %s", err);
        goto done;
    }
    b->rank = boot_rank (b->boot);
    b->size = boot_size (b->boot);
    if (boot_hostname (b->boot))
        snprintf (b->hostname, sizeof (b->hostname), "%s",
                  boot_hostname (b->boot));
    logger_set_rank (b->log, b->rank);
    if (setup_rundir (b, opts.rundir) < 0 || setup_local (b) < 0
        || builtins_register (b) < 0 || setup_instance_id (b) < 0
        || load_overlay (b, &opts) < 0 || bootstrap_finish (b) < 0)
        goto done;
    logger_log (b->log, LOG_INFO, "up: rank %u of %u, %s bootstrap, %s",
                (unsigned)b->rank, (unsigned)b->size, boot_method (b->boot),
                b->local_uri);
    zloop_start (b->loop);
    rc = b->exit_code;
    logger_log (b->log, rc ? LOG_ERR : LOG_INFO, "shutdown, exit %d", rc);
done:
    zlistx_destroy (&opts.overrides);
    builtins_destroy (b);
    broker_cleanup (b);
    return rc;
}
