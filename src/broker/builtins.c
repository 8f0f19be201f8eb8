/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* builtins.c: the services every broker offers itself.
 *
 *   broker.ping         echo the request payload, adding the responder's
 *                       rank, the overlay hops the request travelled and
 *                       its route stack (bottom first)
 *   broker.info         rank, size, hostname, version, topology, uptime...
 *   broker.module-list  loaded modules
 *   broker.shutdown     orderly shutdown of this broker
 *   broker.subscribe    {"topic": PREFIX}: events for the calling client
 *   broker.unsubscribe  {"topic": PREFIX}
 *   broker.hosts        the rank -> host table (hosts.c)
 *   broker.hosts-register  a broker reports its host to rank 0 (hosts.c)
 *   broker.dmesg        recent log lines from the ring buffer (log.h):
 *                       {"after": SEQ, "clear": bool} ->
 *                       {"rank": R, "hostname": H, "suppressed": N,
 *                        "lines": [{"seq", "time", "level", "text"}]}
 *   event.pub           {"topic": T, "payload": {...}}, or {"events":
 *                       [such objects]}: publish; rank 0 numbers them
 *                       consecutively and answers {"seq": FIRST, "count":
 *                       N} once they have left in their batches
 *
 * Responses to requests the broker sends itself (hosts.c) also arrive at
 * the "broker" service and are handed back to their sender.  A periodic
 * timer drives hosts.c's retries and the logger's suppressed-line
 * reports.  Also here: the delivery of event batches from the overlay to
 * subscribed clients (broker_deliver_batch), each client getting a batch
 * of just the events whose topics it asked for.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <jansson.h>

#include <math.h>
#include <sys/time.h>

#include "broker.h"
#include "hosts.h"
#include "src/common/libmsg/evbatch.h"
#include "src/common/libutil/monotime.h"
#include "src/common/libutil/uintfmt.h"

#define TICK_MS 1000
#define SUBS_MAX 256            /* prefixes per client */
/* The subscriptions table's heap: per client its list, key and hash
 * item, per prefix its node and copy. */
#define SUB_CLIENT_COST 160
#define SUB_PREFIX_COST 48

/* Respond with a jansson object (stolen).  Reals are written with 15
 * significant digits, so a value rounded to milliseconds prints as such. */
static void respond_json (struct bgn_broker *b, const msg_t *req, json_t *o)
{
    char *s = o ? json_dumps (o, JSON_COMPACT | JSON_REAL_PRECISION (15))
                : NULL;
    if (!s)
        broker_respond_error (b, req, ENOMEM, NULL);
    else
        broker_respond (b, req, s);
    free (s);
    json_decref (o);
}

/* The request payload as an object (an absent payload is {}): a new
 * reference to the parse msg_decode's message keeps (msg_get_json), so
 * no service parses its request twice.  Read-only: json_copy() it to
 * add keys. */
static json_t *request_object (struct bgn_broker *b, const msg_t *req)
{
    json_t *o = msg_get_payload (req, NULL) ? msg_get_json (req)
                                            : json_object ();

    if (!o) {
        broker_respond_error (b, req, EPROTO, "payload must be a JSON object");
        return NULL;
    }
    return msg_get_payload (req, NULL) ? json_incref (o) : o;
}

/* Append s to buf[*n..cap) as a JSON string (route ids are printable
 * ASCII, so only '"' and '\' need escaping).  -1 if it does not fit. */
static int put_json_string (char *buf, size_t *n, size_t cap, const char *s)
{
    if (*n + 1 >= cap)
        return -1;
    buf[(*n)++] = '"';
    for (; *s; s++) {
        if (*n + 3 >= cap)
            return -1;
        if (*s == '"' || *s == '\\')
            buf[(*n)++] = '\\';
        buf[(*n)++] = *s;
    }
    buf[(*n)++] = '"';
    return 0;
}

/* Does any string in the text p[0..len) (no escapes) spell "route",
 * "rank" or "hops"?  Then the request may hold a key ping would add. */
static bool names_a_ping_key (const char *p, size_t len)
{
    static const char *names[] = { "route\"", "rank\"", "hops\"" };
    const char *end = p + len, *q = p;

    while ((q = memchr (q, '"', (size_t)(end - q)))) {
        q++;
        for (size_t i = 0; i < 3; i++) {
            size_t l = strlen (names[i]);
            if ((size_t)(end - q) >= l && !memcmp (q, names[i], l))
                return true;
        }
    }
    return false;
}

#define PING_SPLICE_MAX 2048    /* request payload bytes answered by splice */

/* broker.ping's answer built as text: the request's object with
 * "route", "rank" and "hops" added before its closing brace.  Only when
 * the request cannot hold those keys already (none of the names occurs
 * in its text, which has no escapes that could spell them), so the
 * answer is the one jansson would build, without a JSON tree on the path
 * every benchmark and `bgn ping` measure.  0, or -1 to take the jansson
 * path. */
static int ping_splice (struct bgn_broker *b, const msg_t *req,
                        const struct bgn_msg_info *info)
{
    char buf[PING_SPLICE_MAX + 64 * (MSG_MAX_ROUTEID * 2 + 3) + 64];
    size_t len, n = 0, end;
    const char *p = msg_get_payload (req, &len);
    int nr = msg_route_count (req);

    if (!p) {
        p = "{}";
        len = 2;
    }
    if (len > PING_SPLICE_MAX || memchr (p, '\\', len)
        || names_a_ping_key (p, len)
        || (!msg_payload_checked (req)     /* a module's own text */
            && msg_json_check (p, len, NULL, 0) < 0))
        return -1;
    /* a valid object: '{' ... '}' with only white space around */
    for (end = len; end > 0 && p[end - 1] != '}'; end--)
        ;
    if (end == 0)
        return -1;
    end--;                                  /* at the closing brace */
    memcpy (buf, p, end);
    n = end;
    while (n > 0 && strchr (" \t\r\n", buf[n - 1]))
        n--;
    if (buf[n - 1] != '{')
        buf[n++] = ',';
    memcpy (buf + n, "\"route\":[", 9);
    n += 9;
    for (int i = nr - 1; i >= 0; i--) {
        if (put_json_string (buf, &n, sizeof (buf) - 64,
                             msg_route_at (req, i)) < 0)
            return -1;
        if (i > 0)
            buf[n++] = ',';
    }
    memcpy (buf + n, "],\"rank\":", 9);
    n += 9;
    n += uint_format (buf + n, b->rank);
    memcpy (buf + n, ",\"hops\":", 8);
    n += 8;
    n += uint_format (buf + n, info && info->hops > 0 ? (uint32_t)info->hops
                                                     : 0);
    buf[n++] = '}';
    buf[n] = '\0';
    /* a checked object, with checked route ids as strings and two
     * numbers spliced in: an object still */
    broker_respond_built (b, req, buf, n);
    return 0;
}

static void ping_cb (bgn_broker_t *b, const msg_t *req,
                     const struct bgn_msg_info *info, void *arg)
{
    json_t *in, *o, *route;
    int n = msg_route_count (req);

    if (msg_get_type (req) != MSGTYPE_REQUEST)
        return;
    if (ping_splice (b, req, info) == 0)
        return;
    if (!(in = request_object (b, req)))
        return;
    o = json_copy (in);         /* the request's parse is read-only */
    json_decref (in);
    if (!o || !(route = json_array ()))
        goto nomem;
    for (int i = n - 1; i >= 0; i--)
        json_array_append_new (route, json_string (msg_route_at (req, i)));
    json_object_set_new (o, "route", route);
    json_object_set_new (o, "rank", json_integer (b->rank));
    json_object_set_new (o, "hops", json_integer (info ? info->hops : 0));
    respond_json (b, req, o);
    return;
nomem:
    json_decref (o);
    broker_respond_error (b, req, ENOMEM, NULL);
}

static void info_cb (bgn_broker_t *b, const msg_t *req,
                     const struct bgn_msg_info *info, void *arg)
{
    const char *topo = b->ovl && b->ovl->topology
                           ? b->ovl->topology (b->ovl_state) : "none";
    const char *health = b->ovl && b->ovl->health
                             ? b->ovl->health (b->ovl_state) : "full";
    json_t *o;

    if (msg_get_type (req) != MSGTYPE_REQUEST)
        return;
    o = json_pack ("{s:i s:i s:s s:s s:s s:s s:s s:f s:s s:s}",
                   "rank", (int)b->rank,
                   "size", (int)b->size,
                   "hostname", b->hostname,
                   "version", PACKAGE_VERSION,
                   "topology", topo,
                   "health", health,
                   "instance", b->instance_id,
                   "uptime", round ((monotime_now () - b->start_time)
                                    * 1e3) / 1e3,
                   "bootstrap", boot_method (b->boot),
                   "rundir", b->rundir);
    if (o) {
        json_object_set_new (o, "client_rx", json_integer (b->client_rx));
        json_object_set_new (o, "client_tx", json_integer (b->client_tx));
        json_object_set_new (o, "client_drops",
                             json_integer (b->client_drops));
        json_object_set_new (o, "client_send_drops",
                             json_integer (b->client_send_drops));
        json_object_set_new (o, "route_drops", json_integer (b->route_drops));
        json_object_set_new (o, "access_denied",
                             json_integer (b->access_denied));
        json_object_set_new (o, "remote_role_capped",
                             json_integer (b->remote_role_capped));
    }
    respond_json (b, req, o);
}

static void module_append (json_t *mods, struct module *m)
{
    const struct bgn_module *e = module_entry (m);
    json_array_append_new (mods, json_pack ("{s:s s:s s:s}",
                                            "name", e->name,
                                            "description",
                                            e->description ? e->description
                                                           : "",
                                            "path", module_path (m)));
}

/* The overlay first, then --module / broker.modules in load order. */
static void module_list_cb (bgn_broker_t *b, const msg_t *req,
                            const struct bgn_msg_info *info, void *arg)
{
    json_t *mods = json_array ();

    if (msg_get_type (req) != MSGTYPE_REQUEST)
        return;
    if (mods && b->overlay_mod)
        module_append (mods, b->overlay_mod);
    for (struct module *m = modlist_first (b->modules); mods && m;
         m = modlist_next (b->modules))
        module_append (mods, m);
    respond_json (b, req, json_pack ("{s:o}", "modules", mods));
}

static void shutdown_cb (bgn_broker_t *b, const msg_t *req,
                         const struct bgn_msg_info *info, void *arg)
{
    if (msg_get_type (req) != MSGTYPE_REQUEST)
        return;
    logger_log (b->log, LOG_INFO, "shutdown requested");
    broker_respond (b, req, NULL);
    broker_stop (b, 0);
}

/* The subscriber is the local client at the bottom of the route stack. */
static const char *local_client (struct bgn_broker *b, const msg_t *req)
{
    if (msg_route_count (req) != 1) {
        broker_respond_error (b, req, EPROTO,
                              "subscriptions are for local clients");
        return NULL;
    }
    return msg_route_last (req);
}

static void subscribe_cb (bgn_broker_t *b, const msg_t *req,
                          const struct bgn_msg_info *info, void *arg)
{
    const char *topic, *client;
    json_t *o;
    int unsub = !strcmp (msg_get_topic (req), "broker.unsubscribe");

    if (msg_get_type (req) != MSGTYPE_REQUEST || !(o = request_object (b, req)))
        return;
    if (json_unpack (o, "{s:s}", "topic", &topic) < 0) {
        broker_respond_error (b, req, EPROTO, "missing topic");
        goto done;
    }
    if (strlen (topic) > MSG_MAX_TOPIC) {
        broker_respond_error (b, req, EINVAL, "topic prefix longer than "
                              "any topic (255 bytes)");
        goto done;
    }
    if (!(client = local_client (b, req)))
        goto done;
    zlistx_t *subs = zhashx_lookup (b->subscriptions, client);
    if (unsub) {
        if (subs) {
            for (char *p = zlistx_first (subs); p; p = zlistx_next (subs)) {
                if (!strcmp (p, topic)) {
                    zlistx_delete (subs, zlistx_cursor (subs));
                    break;
                }
            }
        }
    }
    else {
        if (!subs) {
            if (!(subs = zlistx_new ()))
                goto nomem;
            zlistx_set_destructor (subs, (zlistx_destructor_fn *)zstr_free);
            zlistx_set_duplicator (subs, (zlistx_duplicator_fn *)strdup);
            zhashx_insert (b->subscriptions, client, subs);
        }
        if (zlistx_size (subs) >= SUBS_MAX) {
            broker_respond_error (b, req, ENOSPC, "too many subscriptions");
            goto done;
        }
        zlistx_add_end (subs, (void *)topic);
    }
    broker_respond (b, req, NULL);
done:
    json_decref (o);
    return;
nomem:
    broker_respond_error (b, req, ENOMEM, NULL);
    json_decref (o);
}

/* The rank that published req: the one that injected it (bottom of the
 * route stack, a decimal rank, under the client's id) or this one. */
static uint32_t publisher_of (struct bgn_broker *b, const msg_t *req)
{
    uint32_t r;

    if (msg_route_count (req) >= 2
        && msg_route_id_rank (msg_route_first (req), &r))
        return r;
    return b->rank;
}

/* An event from {"topic": T, "payload"?: {...}} (NULL with the reason in
 * *why).  Events carry their publisher's rank in the matchtag field. */
static msg_t *event_from (const msg_t *req, uint32_t publisher, json_t *o,
                          const char **why)
{
    const char *topic;
    json_t *payload = NULL;
    char *s = NULL;
    msg_t *ev;

    if (json_unpack (o, "{s:s s?o}", "topic", &topic, "payload", &payload) < 0
        || (payload && !json_is_object (payload))) {
        *why = "need topic and an object payload";
        errno = EPROTO;
        return NULL;
    }
    /* The payload was parsed already: no second check of its text. */
    if ((payload && !(s = json_dumps (payload, JSON_COMPACT)))
        || !(ev = msg_create (MSGTYPE_EVENT))) {
        free (s);
        *why = NULL;
        errno = ENOMEM;
        return NULL;
    }
    if (msg_set_topic (ev, topic) < 0
        || (s && msg_set_payload (ev, s, strlen (s)) < 0)) {
        msg_destroy (&ev);
        free (s);
        *why = "bad event topic";
        errno = EPROTO;
        return NULL;
    }
    free (s);
    msg_set_userid (ev, msg_get_userid (req));
    msg_set_matchtag (ev, publisher);
    return ev;
}

#define PUB_MAX_EVENTS 1024     /* events in one event.pub request */

static void event_pub_cb (bgn_broker_t *b, const msg_t *req,
                          const struct bgn_msg_info *info, void *arg)
{
    msg_t *evs[PUB_MAX_EVENTS] = { NULL };
    json_t *o, *list;
    const char *why = NULL;
    uint32_t publisher = publisher_of (b, req);
    size_t n = 1;

    if (msg_get_type (req) != MSGTYPE_REQUEST || !(o = request_object (b, req)))
        return;
    /* One event, or {"events": [{"topic", "payload"}, ...]}: numbered
     * consecutively, answered {"seq": FIRST, "count": N}. */
    if ((list = json_object_get (o, "events"))) {
        n = json_is_array (list) ? json_array_size (list) : 0;
        if (n < 1 || n > PUB_MAX_EVENTS) {
            broker_respond_error (b, req, EPROTO, "events: an array of 1 to "
                                  "1024 events");
            goto done;
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (!(evs[i] = event_from (req, publisher,
                                   list ? json_array_get (list, i) : o,
                                   &why))) {
            broker_respond_error (b, req, errno, why);
            goto done;
        }
    }
    if (b->rank != 0) {
        broker_respond_error (b, req, EHOSTUNREACH, "rank 0 is not reachable");
        goto done;
    }
    if (b->ovl && b->ovl->publish_req) {
        /* answered by the overlay once the events have left */
        int rc = b->ovl->publish_req (b->ovl_state, evs, (int)n, req);
        if (rc < 0)
            broker_respond_error (b, req, errno,
                                  errno == EAGAIN ? "rank 0 cannot take "
                                  "events now (learning the sequence, or "
                                  "too many waiting); retry" : NULL);
        goto done;
    }
    uint32_t first = 0;
    for (size_t i = 0; i < n; i++) {
        msg_t *ev = evs[i];
        int64_t seq;
        evs[i] = NULL;
        if (b->ovl && b->ovl->publish) {
            if ((seq = b->ovl->publish (b->ovl_state, ev)) < 0) {
                broker_respond_error (b, req, errno, NULL);
                goto done;
            }
        }
        else {
            msg_set_seq (ev, (uint32_t)(seq = ++b->event_seq));
            broker_deliver_event (b, ev);
            msg_destroy (&ev);
        }
        if (i == 0)
            first = (uint32_t)seq;
    }
    respond_json (b, req, json_pack ("{s:I s:I}", "seq", (json_int_t)first,
                                     "count", (json_int_t)n));
done:
    for (size_t i = 0; i < n; i++)
        msg_destroy (&evs[i]);
    json_decref (o);
}

/* Does the topic (len bytes) start with one of the client's prefixes? */
static int wants (zlistx_t *subs, const char *topic, size_t len)
{
    for (const char *p = zlistx_first (subs); p; p = zlistx_next (subs)) {
        size_t n = strlen (p);
        if (n <= len && !memcmp (topic, p, n))
            return 1;
    }
    return 0;
}

#define LOST_REASON "dropped for this client: it fell behind " \
                    "(broker.client_queue_bytes)"

int broker_tell_lost (struct bgn_broker *b, const char *client)
{
    uint32_t first, last;
    char payload[192];
    msg_t *ev;

    if (!clientq_take_lost (b->clientq, client, &first, &last))
        return 0;
    snprintf (payload, sizeof (payload), "{\"from\":%u,\"to\":%u,"
              "\"reason\":\"%s\"}", (unsigned)first, (unsigned)last,
              LOST_REASON);
    if (!(ev = msg_event_create ("event.lost", payload))
        || clientq_send_msg (b->clientq, client, ev) < 0) {
        clientq_note_lost (b->clientq, client, first, last);
        msg_destroy (&ev);
        return -1;
    }
    msg_destroy (&ev);
    b->client_tx++;
    return 0;
}

/* Send a batch (seqs first..last) as one message to a local client,
 * after telling it of events dropped for it before.  A batch the client
 * cannot take now (its queue full) is dropped, counted, and noted to be
 * told; a client that went away loses its subscriptions. */
static void send_batch (struct bgn_broker *b, const char *client,
                        const void *data, size_t len, uint32_t first,
                        uint32_t last)
{
    if (broker_tell_lost (b, client) < 0) {
        clientq_note_lost (b->clientq, client, first, last);
        b->client_send_drops++;
        return;
    }
    if (clientq_send_data (b->clientq, client, data, len) < 0) {
        if (errno == ENOBUFS)
            clientq_note_lost (b->clientq, client, first, last);
        dispatch_send_failed (b, client, "an event batch");
        return;
    }
    b->client_tx++;
}

/* The part of a checked batch that a client wants, to it. */
static void deliver_to (struct bgn_broker *b, const char *client,
                        zlistx_t *subs, const uint8_t *data, size_t len,
                        const struct evbatch_hdr *h)
{
    struct evbatch_writer w;
    struct evbatch_rec rec;
    size_t off = 0;
    unsigned n = 0;

    while (evbatch_next (data, len, &off, &rec))
        n += wants (subs, rec.topic, rec.topic_len);
    if (n == h->count) {
        send_batch (b, client, data, len, h->first, h->last);
        return;
    }
    if (n == 0)
        return;
    evbatch_writer_init (&w, h->epoch);
    off = 0;
    while (evbatch_next (data, len, &off, &rec))
        if (wants (subs, rec.topic, rec.topic_len)
            && evbatch_add_rec (&w, &rec) < 0)
            break;
    if (w.count == n && evbatch_seal (&w) == 0)
        send_batch (b, client, w.buf, w.len, w.first, w.last);
    evbatch_writer_free (&w);
}

int broker_deliver_batch (struct bgn_broker *b, const void *batch,
                          size_t len)
{
    struct evbatch_hdr h;
    zlistx_t *targets;
    zlistx_t *subs;

    /* The overlay checked it when it arrived (module.h). */
    if (evbatch_header (batch, len, &h) < 0) {
        b->route_drops++;
        logger_log (b->log, LOG_WARNING, "dropped an event batch: not a "
                    "batch");
        return -1;
    }
    if (zhashx_size (b->subscriptions) == 0)
        return 0;
    /* Collect first: sending may drop a client from the hash. */
    if (!(targets = zlistx_new ()))
        return -1;
    zlistx_set_destructor (targets, (zlistx_destructor_fn *)zstr_free);
    zlistx_set_duplicator (targets, (zlistx_duplicator_fn *)strdup);
    for (subs = zhashx_first (b->subscriptions); subs;
         subs = zhashx_next (b->subscriptions))
        zlistx_add_end (targets, (void *)zhashx_cursor (b->subscriptions));
    for (const char *c = zlistx_first (targets); c; c = zlistx_next (targets))
        if ((subs = zhashx_lookup (b->subscriptions, c)))
            deliver_to (b, c, subs, batch, len, &h);
    zlistx_destroy (&targets);
    return 0;
}

static void hosts_cb (bgn_broker_t *b, const msg_t *req,
                      const struct bgn_msg_info *info, void *arg)
{
    if (msg_get_type (req) != MSGTYPE_REQUEST)
        return;
    if (!strcmp (msg_get_topic (req), "broker.hosts"))
        hosts_request (b->hosts, req);
    else
        hosts_register_request (b->hosts, req);
}

/* "2024-05-01T12:00:00.123Z" */
static void iso_time (double t, char *buf, size_t len)
{
    time_t secs = (time_t)floor (t);
    struct tm tm;
    char s[32];

    if (!gmtime_r (&secs, &tm) || !strftime (s, sizeof (s),
                                             "%Y-%m-%dT%H:%M:%S", &tm))
        snprintf (s, sizeof (s), "%lld", (long long)secs);
    snprintf (buf, len, "%s.%03dZ", s, (int)((t - floor (t)) * 1000));
}

static void dmesg_add (const struct log_entry *e, void *arg)
{
    json_t *lines = arg;
    char t[64];

    iso_time (e->time, t, sizeof (t));
    json_array_append_new (lines, json_pack ("{s:I s:s s:s s:s}",
                                             "seq", (json_int_t)e->seq,
                                             "time", t,
                                             "level",
                                             logger_levelstr (e->level),
                                             "text", e->text));
}

static void dmesg_cb (bgn_broker_t *b, const msg_t *req,
                      const struct bgn_msg_info *info, void *arg)
{
    json_t *o, *lines;
    json_int_t after = 0;
    int clear = 0;

    if (msg_get_type (req) != MSGTYPE_REQUEST || !(o = request_object (b, req)))
        return;
    if (json_unpack (o, "{s?I s?b}", "after", &after, "clear", &clear) < 0
        || after < 0) {
        broker_respond_error (b, req, EPROTO, "after must be a sequence "
                              "number and clear a boolean");
        json_decref (o);
        return;
    }
    json_decref (o);
    if (!(lines = json_array ())) {
        broker_respond_error (b, req, ENOMEM, NULL);
        return;
    }
    logger_ring_foreach (b->log, (uint64_t)after, dmesg_add, lines);
    if (clear)
        logger_ring_clear (b->log);
    respond_json (b, req, json_pack ("{s:i s:s s:I s:o}", "rank",
                                     (int)b->rank, "hostname", b->hostname,
                                     "suppressed",
                                     (json_int_t)logger_suppressed (b->log),
                                     "lines", lines));
}

static void broker_service_cb (bgn_broker_t *b, const msg_t *req,
                               const struct bgn_msg_info *info, void *arg)
{
    static const struct {
        const char *topic;
        bgn_service_f fn;
    } methods[] = {
        { "broker.ping", ping_cb },
        { "broker.info", info_cb },
        { "broker.module-list", module_list_cb },
        { "broker.shutdown", shutdown_cb },
        { "broker.subscribe", subscribe_cb },
        { "broker.unsubscribe", subscribe_cb },
        { "broker.hosts", hosts_cb },
        { "broker.hosts-register", hosts_cb },
        { "broker.dmesg", dmesg_cb },
    };
    const char *topic = msg_get_topic (req);

    /* answers to the broker's own requests (hosts.c); at shutdown the
     * overlay, unloaded after the builtins, fails what is still pending:
     * nobody waits for those answers any more */
    if (msg_get_type (req) == MSGTYPE_RESPONSE) {
        if (b->hosts)
            hosts_response (b->hosts, req);
        return;
    }
    for (size_t i = 0; i < sizeof (methods) / sizeof (methods[0]); i++) {
        if (!strcmp (topic, methods[i].topic)) {
            methods[i].fn (b, req, info, arg);
            return;
        }
    }
    if (msg_get_type (req) == MSGTYPE_REQUEST)
        broker_respond_error (b, req, ENOSYS, "unknown broker method");
}

static void event_service_cb (bgn_broker_t *b, const msg_t *req,
                              const struct bgn_msg_info *info, void *arg)
{
    if (!strcmp (msg_get_topic (req), "event.pub"))
        event_pub_cb (b, req, info, arg);
    else if (msg_get_type (req) == MSGTYPE_REQUEST)
        broker_respond_error (b, req, ENOSYS, "unknown event method");
}

static int tick_cb (zloop_t *loop, int timer_id, void *arg)
{
    struct bgn_broker *b = arg;

    hosts_tick (b->hosts);
    logger_flush (b->log);
    clientq_prune (b->clientq);
    return 0;
}


static size_t subscriptions_bytes (struct bgn_broker *b)
{
    size_t n = 0;

    for (zlistx_t *subs = zhashx_first (b->subscriptions); subs;
         subs = zhashx_next (b->subscriptions)) {
        n += SUB_CLIENT_COST + strlen (zhashx_cursor (b->subscriptions));
        for (const char *p = zlistx_first (subs); p; p = zlistx_next (subs))
            n += SUB_PREFIX_COST + malloc_usable_size ((void *)p);
    }
    return n;
}

json_t *broker_memory (struct bgn_broker *b)
{
    size_t nclients = zhashx_size (b->subscriptions);
    size_t sub_bound = nclients * (SUB_CLIENT_COST + MSG_MAX_ROUTEID + 1
                                   + SUBS_MAX * (SUB_PREFIX_COST
                                                 + MSG_MAX_TOPIC + 9));
    json_t *o = json_object ();

    if (!o)
        return NULL;
    json_object_set_new (o, "client_queues", clientq_memory (b->clientq));
    json_object_set_new (o, "subscriptions",
                         json_pack ("{s:I s:I s:I}", "bytes",
                                    (json_int_t)subscriptions_bytes (b),
                                    "bound", (json_int_t)sub_bound,
                                    "clients", (json_int_t)nclients));
    json_object_set_new (o, "log_ring",
                         json_pack ("{s:I s:I s:I}", "bytes",
                                    (json_int_t)logger_ring_bytes (b->log),
                                    "bound",
                                    (json_int_t)logger_ring_bound (b->log),
                                    "evicted",
                                    (json_int_t)logger_ring_evicted (b->log)));
    if (b->hosts)
        json_object_set_new (o, "hosts", hosts_memory (b->hosts));
    return o;
}

/* Once, as soon as the reactor runs: register this broker's host. */
static int first_tick_cb (zloop_t *loop, int timer_id, void *arg)
{
    struct bgn_broker *b = arg;

    hosts_tick (b->hosts);
    return 0;
}

int builtins_register (struct bgn_broker *b)
{
    b->tick_timer = -1;
    if (!(b->hosts = hosts_create (b))) {
        logger_log (b->log, LOG_ERR, "host table: %s", strerror (errno));
        return -1;
    }
    if (service_add (b->services, "broker", broker_service_cb, NULL) < 0
        || service_add (b->services, "event", event_service_cb, NULL) < 0) {
        logger_log (b->log, LOG_ERR, "registering built-in services: %s",
                    strerror (errno));
        return -1;
    }
    if (zloop_timer (b->loop, 10, 1, first_tick_cb, b) < 0
        || (b->tick_timer = zloop_timer (b->loop, TICK_MS, 0, tick_cb,
                                         b)) < 0) {
        logger_log (b->log, LOG_ERR, "built-in timers: %s", strerror (errno));
        return -1;
    }
    return 0;
}

void builtins_destroy (struct bgn_broker *b)
{
    hosts_destroy (&b->hosts);
}
