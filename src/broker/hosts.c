/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* hosts.c: the rank -> host table and its methods (see hosts.h).
 *
 * Requests this broker sends itself (registration, forwarded questions,
 * pulls) go out through broker_route() like a module's, and their
 * responses come back to the "broker" service, which hands them here;
 * each is matched to its pending record by matchtag and topic.  Tags
 * start at a value of this process's own (its pid), so a late answer
 * meant for an earlier process of the same rank is not taken for one of
 * ours.  The pending list is bounded by deadline (HOSTS_DEADLINE), and in
 * count and bytes (PENDING_MAX, PENDING_BYTES): past either a question is
 * refused (EAGAIN) and a pull or registration waits for its next round,
 * counted and logged.
 */
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <jansson.h>
#include <czmq.h>

#include "src/common/libconf/conf.h"
#include "src/common/libutil/hostlist.h"
#include "src/common/libutil/hostmap.h"
#include "src/common/libutil/monotime.h"
#include "access.h"
#include "broker.h"
#include "hosts.h"

#define PULL_INTERVAL 10.0       /* seconds between rank 0's pull rounds */
#define PULL_MAX 256             /* requests per round */
#define PENDING_MAX 256          /* requests of ours waiting, at most */
#define PENDING_BYTES (256u << 10) /* ... and their heap */
/* A pending record's share of the list: its node (zlistx's). */
#define NODE_COST 48

enum pending_kind { P_REGISTER, P_FORWARD, P_PULL };

struct pending {
    uint32_t tag;
    enum pending_kind kind;
    int attempt;                 /* P_REGISTER: 1 for the first */
    uint32_t rank;               /* P_PULL: who was asked */
    msg_t *req;                  /* P_FORWARD: the client's request */
    double deadline;
    size_t cost;                 /* heap: the record, its node, req */
};

struct hosts {
    struct bgn_broker *b;
    hostmap_t *map;
    int is_static;
    int registered;
    int attempts;                /* registrations sent */
    double next_register;
    double last_pull;
    uint32_t next_tag;
    zlistx_t *pending;
    size_t pending_bytes;        /* their cost */
    uint64_t refused;            /* not sent: the list was full */
};

static void pending_host_free (void **item)
{
    struct pending *p = *item;
    if (p) {
        msg_destroy (&p->req);
        free (p);
        *item = NULL;
    }
}

/* Take the record under the list's cursor out. */
static void pending_delete (struct hosts *h)
{
    struct pending *p = zlistx_handle_item (zlistx_cursor (h->pending));

    if (p)
        h->pending_bytes -= p->cost;
    zlistx_delete (h->pending, zlistx_cursor (h->pending));
}

/* The static bootstrap's table, from the config (hosts.h). */
static int fill_static (struct hosts *h)
{
    char err[256];
    hostlist_t *hl = conf_bootstrap_hosts (h->b->conf, err, sizeof (err));

    if (!hl) {
        logger_log (h->b->log, LOG_ERR, "host table: %s", err);
        return -1;
    }
    for (int r = 0; r < hostlist_count (hl) && (uint32_t)r < h->b->size; r++)
        hostmap_set (h->map, r, hostlist_nth (hl, r));
    hostlist_destroy (&hl);
    return 0;
}

/* Not static: bootstrap.hostname, "%r" replaced by the rank, names this
 * broker's host instead of gethostname(). */
static void name_self (struct bgn_broker *b)
{
    const char *want = "", *pct;
    char name[sizeof (b->hostname)];

    if (conf_get_string (b->conf, "bootstrap.hostname", &want) < 0 || !*want)
        return;
    if ((pct = strstr (want, "%r")))
        snprintf (name, sizeof (name), "%.*s%u%s", (int)(pct - want), want,
                  (unsigned)b->rank, pct + 2);
    else
        snprintf (name, sizeof (name), "%s", want);
    snprintf (b->hostname, sizeof (b->hostname), "%s", name);
}

struct hosts *hosts_create (struct bgn_broker *b)
{
    struct hosts *h = calloc (1, sizeof (*h));

    if (!h)
        return NULL;
    h->b = b;
    h->next_tag = ((uint32_t)getpid () << 12) | 1;
    if (!(h->map = hostmap_create (b->size)) || !(h->pending = zlistx_new ()))
        goto error;
    zlistx_set_destructor (h->pending, pending_host_free);
    h->is_static = b->boot && !strcmp (boot_method (b->boot), "static");
    if (h->is_static) {
        if (fill_static (h) < 0)
            goto error;
    }
    else if (name_self (b), hostmap_set (h->map, b->rank, b->hostname) < 0)
        logger_log (b->log, LOG_WARNING, "host table: '%s' is not a usable "
                    "host name", b->hostname);
    /* rank 0 knows its own entry; a static table is complete */
    h->registered = h->is_static || b->rank == 0;
    return h;
error:
    hosts_destroy (&h);
    return NULL;
}

void hosts_destroy (struct hosts **hp)
{
    if (hp && *hp) {
        hostmap_destroy (&(*hp)->map);
        zlistx_destroy (&(*hp)->pending);
        free (*hp);
        *hp = NULL;
    }
}

const char *hosts_lookup (struct hosts *h, uint32_t rank)
{
    return h ? hostmap_host (h->map, rank) : NULL;
}

/* Is there room for one more record costing 'cost'?  If not, it is
 * counted and logged (the logger limits the rate). */
static bool pending_room (struct hosts *h, const char *topic, size_t cost)
{
    if (zlistx_size (h->pending) < PENDING_MAX
        && h->pending_bytes + cost <= PENDING_BYTES)
        return true;
    h->refused++;
    logger_log (h->b->log, LOG_WARNING, "host table: %s not sent: %zu "
                "requests of ours wait already (%zu bytes)", topic,
                zlistx_size (h->pending), h->pending_bytes);
    return false;
}

/* Send a request of our own to 'rank' and remember it.  -1 if it could
 * not be built, or with EAGAIN if too much waits already (a routing
 * failure comes back as an error response).  'req' is taken. */
static int send_own (struct hosts *h, const char *topic, uint32_t rank,
                     json_t *payload, enum pending_kind kind, msg_t *req)
{
    struct bgn_msg_info info = { .source = h->b->rank };
    char *s = payload ? json_dumps (payload, JSON_COMPACT) : NULL;
    struct pending *p = calloc (1, sizeof (*p));
    msg_t *msg = msg_request_create (topic, rank, s);

    free (s);
    json_decref (payload);
    if (!p || !msg) {
        free (p);
        msg_destroy (&msg);
        msg_destroy (&req);
        return -1;
    }
    /* only its route stack and matchtag are needed to answer it */
    if (req)
        msg_set_payload (req, NULL, 0);
    p->cost = malloc_usable_size (p) + NODE_COST + msg_footprint (req);
    if (!pending_room (h, topic, p->cost)) {
        free (p);
        msg_destroy (&msg);
        msg_destroy (&req);
        errno = EAGAIN;
        return -1;
    }
    p->tag = h->next_tag++;
    if (h->next_tag == 0)   /* 0 is no tag */
        h->next_tag = 1;
    p->kind = kind;
    p->attempt = kind == P_REGISTER ? ++h->attempts : 0;
    p->rank = rank;
    p->req = req;
    p->deadline = monotime_now () + HOSTS_DEADLINE;
    zlistx_add_end (h->pending, p);
    h->pending_bytes += p->cost;
    msg_set_matchtag (msg, p->tag);
    msg_route_enable (msg);
    access_stamp_self (h->b->access, msg);   /* the broker's own: owner */
    broker_route (h->b, msg, &info);
    return 0;
}

static void send_register (struct hosts *h)
{
    json_t *o = json_pack ("{s:i s:s}", "rank", (int)h->b->rank,
                           "hostname", h->b->hostname);
    send_own (h, "broker.hosts-register", 0, o, P_REGISTER, NULL);
    h->next_register = monotime_now () + HOSTS_RETRY;
}

/* Rank 0 without a static table: ask the ranks it has no host for. */
static void pull_missing (struct hosts *h)
{
    double now = monotime_now ();
    int n = 0;

    if (h->is_static || h->b->rank != 0 || now - h->last_pull < PULL_INTERVAL
        || hostmap_known (h->map) == hostmap_size (h->map))
        return;
    h->last_pull = now;
    for (uint32_t r = 0; r < h->b->size && n < PULL_MAX; r++) {
        if (!hostmap_host (h->map, r)) {
            if (send_own (h, "broker.info", r, NULL, P_PULL, NULL) < 0
                && errno == EAGAIN)
                break;          /* the next round asks the rest */
            n++;
        }
    }
}

/* The first pending request whose deadline has passed (the list's
 * cursor is on it), or NULL. */
static struct pending *first_expired (struct hosts *h, double now)
{
    for (struct pending *p = zlistx_first (h->pending); p;
         p = zlistx_next (h->pending))
        if (now >= p->deadline)
            return p;
    return NULL;
}

void hosts_tick (struct hosts *h)
{
    double now = monotime_now ();
    struct pending *p;

    while ((p = first_expired (h, now))) {
        if (p->kind == P_FORWARD)
            broker_respond_error (h->b, p->req, ETIMEDOUT, "rank 0 did not "
                                  "answer for the host table");
        pending_delete (h);
    }
    if (!h->registered && now >= h->next_register)
        send_register (h);
}

static json_t *table_json (struct hosts *h)
{
    json_t *a = json_array (), *o;

    if (!a)
        return NULL;
    for (uint32_t r = 0; r < hostmap_size (h->map); r++) {
        const char *name = hostmap_host (h->map, r);
        json_array_append_new (a, name ? json_string (name) : json_null ());
    }
    o = json_pack ("{s:i s:o s:s}", "size", (int)hostmap_size (h->map),
                   "hosts", a, "source",
                   h->is_static ? "static" : "registered");
    return o;
}

void hosts_request (struct hosts *h, const msg_t *req)
{
    json_t *o;
    char *s;

    if (!h->is_static && h->b->rank != 0) {
        msg_t *copy = msg_copy (req);
        if (!copy || send_own (h, "broker.hosts", 0, NULL, P_FORWARD,
                               copy) < 0)
            broker_respond_error (h->b, req, errno == EAGAIN ? EAGAIN
                                                             : ENOMEM,
                                  errno == EAGAIN
                                      ? "too many host-table questions "
                                        "wait for rank 0; retry"
                                      : NULL);
        return;
    }
    if (!(o = table_json (h)) || !(s = json_dumps (o, JSON_COMPACT))) {
        json_decref (o);
        broker_respond_error (h->b, req, ENOMEM, NULL);
        return;
    }
    broker_respond (h->b, req, s);
    free (s);
    json_decref (o);
    pull_missing (h);
}

/* The rank a request came from: the broker rank on top of its route
 * stack, or -1 (a local client's request: its id is on top). */
static long origin_rank (const msg_t *req)
{
    uint32_t r;

    if (msg_route_count (req) < 1
        || !msg_route_id_rank (msg_route_first (req), &r))
        return -1;
    return r;
}

void hosts_register_request (struct hosts *h, const msg_t *req)
{
    json_t *o = msg_get_json (req);     /* parsed once, borrowed */
    const char *name;
    int rank;

    if (!o || json_unpack (o, "{s:i s:s}", "rank", &rank, "hostname",
                           &name) < 0) {
        broker_respond_error (h->b, req, EPROTO, "need rank and hostname");
        return;
    }
    if (h->b->rank != 0 || h->is_static) {
        broker_respond_error (h->b, req, EINVAL, "hosts are registered with "
                              "rank 0 of a PMI or single instance");
        return;
    }
    if (origin_rank (req) != rank) {
        broker_respond_error (h->b, req, EPERM, "a broker registers only "
                              "its own host");
        return;
    }
    if (hostmap_set (h->map, (uint32_t)rank, name) < 0) {
        broker_respond_error (h->b, req, EINVAL, "bad rank or host name");
        return;
    }
    broker_respond (h->b, req, NULL);
}

static const char *const kind_topic[] = {
    [P_REGISTER] = "broker.hosts-register",
    [P_FORWARD] = "broker.hosts",
    [P_PULL] = "broker.info",
};

/* The pending request rsp answers: same tag, same topic. */
static struct pending *find_pending (struct hosts *h, const msg_t *rsp)
{
    uint32_t tag = msg_get_matchtag (rsp);
    const char *topic = msg_get_topic (rsp);

    for (struct pending *p = zlistx_first (h->pending); p;
         p = zlistx_next (h->pending))
        if (p->tag == tag && topic && !strcmp (topic, kind_topic[p->kind]))
            return p;
    return NULL;
}

/* A pulled broker.info answer: note the host. */
static void pulled (struct hosts *h, struct pending *p, const msg_t *rsp)
{
    json_t *o = msg_get_json (rsp);     /* parsed once, borrowed */
    const char *name;
    int rank;

    if (o && json_unpack (o, "{s:i s:s}", "rank", &rank, "hostname",
                          &name) == 0 && (uint32_t)rank == p->rank)
        hostmap_set (h->map, p->rank, name);
}

int hosts_response (struct hosts *h, const msg_t *rsp)
{
    struct pending *p = find_pending (h, rsp);
    int errnum = 0;

    if (!p)
        return -1;
    msg_get_errnum (rsp, &errnum);
    switch (p->kind) {
    case P_REGISTER:
        if (errnum == 0 && !h->registered) {
            h->registered = 1;
            logger_log (h->b->log, LOG_DEBUG, "host %s registered with "
                        "rank 0 (attempt %d)", h->b->hostname, p->attempt);
        }
        break;
    case P_FORWARD:
        if (errnum)
            broker_respond_error (h->b, p->req, errnum,
                                  msg_get_payload (rsp, NULL));
        else
            broker_respond (h->b, p->req, msg_get_payload (rsp, NULL));
        break;
    case P_PULL:
        if (errnum == 0)
            pulled (h, p, rsp);
        break;
    }
    pending_delete (h);
    return 0;
}

json_t *hosts_memory (struct hosts *h)
{
    return json_pack ("{s:I s:I s:I s:I}",
                      "bytes", (json_int_t)(hostmap_memory (h->map)
                                            + h->pending_bytes),
                      "bound", (json_int_t)(hostmap_memory_bound (h->map)
                                            + PENDING_BYTES),
                      "pending", (json_int_t)zlistx_size (h->pending),
                      "refused", (json_int_t)h->refused);
}
