/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* client.h: how programs talk to a bgn broker.
 *
 * A handle is one connection to one broker's local connector (a ZeroMQ
 * DEALER socket on the broker's ipc:// endpoint).  Over it a program makes
 * RPCs, matched to their responses by matchtag, and receives events it
 * subscribed to.  Every RPC has a deadline: waiting past it fails with
 * ETIMEDOUT, so nothing waits forever.
 *
 * Single-threaded: one handle per thread.  Responses and events that
 * arrive while waiting for something else are queued in the handle (events
 * up to BGN_EVENT_QUEUE_MAX, beyond which the oldest are dropped and
 * counted, see bgn_event_drops()).  The broker sends events in batches;
 * the handle unpacks them, so callers see one event at a time.
 *
 * Errors: -1 or NULL with errno.  A failed RPC sets errno to the errnum
 * the responder sent (EHOSTUNREACH, ENOSYS, ...) and bgn_rpc_error()
 * returns its error string, if any.
 *
 * A broker that goes away: when the connection to the broker ends (its
 * process exited or was killed, or it stopped answering ZMTP heartbeats
 * for the broker timeout, BGN_DEFAULT_BROKER_TIMEOUT seconds unless
 * $BGN_BROKER_TIMEOUT says otherwise when the handle is opened), the
 * handle is lost for good: responses and events that had arrived are
 * still returned, then every pending RPC, stream and event wait fails
 * with ECONNRESET, and so does every later call that would send or wait
 * (bgn_poll counts a lost handle as ready).  An exiting or killed broker
 * is noticed at once (a few milliseconds); a stopped or unreachable one
 * within the broker timeout (a ping every fifth of it, given up after
 * four fifths without an answer: a shorter hang is ridden out).  A broker restarted on the same socket is a
 * new broker that knows nothing of this handle's requests and
 * subscriptions: the handle never reconnects to it; open a new one
 * (and subscribe again).
 */
#ifndef BGN_CLIENT_H
#define BGN_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "src/common/libmsg/message.h"

#define BGN_DEFAULT_RPC_TIMEOUT 10.0   /* seconds; env BGN_RPC_TIMEOUT */
#define BGN_DEFAULT_BROKER_TIMEOUT 5.0 /* seconds; env BGN_BROKER_TIMEOUT */
#define BGN_MAX_BROKER_TIMEOUT 3600.0
#define BGN_EVENT_QUEUE_MAX 100000
#define BGN_PUBLISH_WINDOW 4096        /* unanswered asynchronous publishes */
#define BGN_PUBLISH_REQUESTS 256       /* ... and requests carrying them */
#define BGN_PUBLISH_MANY_MAX 1024      /* events in one publish request */

typedef struct bgn_handle bgn_t;
typedef struct bgn_rpc bgn_rpc_t;

/* Connect to the broker at 'uri' ("ipc:///path/local", or a plain socket
 * path).  NULL uri means $BGN_URI.  Fails with ENOENT (no uri given, or no
 * socket at that path: the message says which), ECONNREFUSED (a socket
 * nothing listens on: its broker is gone), EINVAL, ENOMEM, with a
 * message in errbuf.  The broker timeout (above) is read from
 * $BGN_BROKER_TIMEOUT here: seconds, at most BGN_MAX_BROKER_TIMEOUT, 0
 * for no heartbeats (an exiting or killed broker is still noticed); a
 * value that is not such a number means the default.
 */
bgn_t *bgn_open (const char *uri, char *errbuf, size_t errlen);
void bgn_close (bgn_t **hp);

/* The broker's URI ("ipc:///path/local"), owned by the handle. */
const char *bgn_get_uri (bgn_t *h);

/* The broker timeout this handle was opened with (0: no heartbeats). */
double bgn_get_broker_timeout (bgn_t *h);

/* 1 once the broker is known to be gone (the handle is lost: see
 * above), else 0.  Reads what is ready without waiting. */
int bgn_broker_lost (bgn_t *h);

/* The default deadline for new RPCs, in seconds (> 0; INFINITY allowed
 * only for streaming RPCs, via bgn_rpc_set_timeout).
 */
int bgn_set_timeout (bgn_t *h, double seconds);
double bgn_get_timeout (bgn_t *h);

/* Send a request for 'topic' to broker 'nodeid' (a rank, NODEID_ANY or
 * NODEID_UPSTREAM) with JSON object text 'payload' (NULL for none).
 * flags: MSGFLAG_NORESPONSE, MSGFLAG_STREAMING.  Returns an rpc that the
 * caller destroys, or NULL with errno.
 */
bgn_rpc_t *bgn_rpc (bgn_t *h, const char *topic, uint32_t nodeid,
                    const char *payload, int flags);

/* Wait for the (next) response, until the rpc's deadline.  On success
 * returns 0 and, if payload is non-NULL, points it at the response's JSON
 * text (NULL if it had none), valid until the next call on this rpc.
 * -1 with ETIMEDOUT, ECONNRESET (the broker went away), or the
 * responder's errnum.
 */
int bgn_rpc_get (bgn_rpc_t *rpc, const char **payload);

/* Streaming RPCs: drop the current response so bgn_rpc_get() waits for
 * the next one.
 */
void bgn_rpc_next (bgn_rpc_t *rpc);

/* Reset the rpc's deadline to 'seconds' from now (INFINITY for none). */
void bgn_rpc_set_timeout (bgn_rpc_t *rpc, double seconds);

/* The error string of a failed response, or NULL. */
const char *bgn_rpc_error (bgn_rpc_t *rpc);

/* The whole response message, after a successful or failed get. */
const msg_t *bgn_rpc_response (bgn_rpc_t *rpc);

void bgn_rpc_destroy (bgn_rpc_t **rpcp);

/* Events: subscribe/unsubscribe to topics starting with 'prefix' (RPCs
 * to the local broker), receive the next event (NULL with ETIMEDOUT when
 * 'timeout' seconds pass; a negative timeout waits until an event comes
 * or the broker goes away: ECONNRESET, once the queue is empty), publish
 * (an RPC to rank 0, which assigns the sequence number, returned in *seq).
 * The caller destroys received events.
 */
int bgn_event_subscribe (bgn_t *h, const char *prefix);
int bgn_event_unsubscribe (bgn_t *h, const char *prefix);
msg_t *bgn_event_recv (bgn_t *h, double timeout);
int bgn_event_publish (bgn_t *h, const char *topic, const char *payload,
                       uint32_t *seq);
uint64_t bgn_event_drops (bgn_t *h);

/* The next event without making a message (for subscribers of many
 * events): fills *ev, whose strings belong to the handle and stay valid
 * until the next call on it.  Same waiting and errors as
 * bgn_event_recv().  A lost-events notice is an event "event.lost". */
struct bgn_event {
    uint32_t seq;
    const char *topic;
    const char *payload;        /* JSON text, or NULL */
    size_t payload_len;
    uint32_t publisher;         /* the rank it was published on */
    uint32_t userid;
};
int bgn_event_next (bgn_t *h, struct bgn_event *ev, double timeout);

/* Asynchronous publishing: send without waiting for the seq.  Answers
 * come back in the order the publishes were sent and are collected with
 * bgn_event_publish_get().  At most 'window' publishes (events) wait for
 * their answer at a time (bgn_event_set_window, default
 * BGN_PUBLISH_WINDOW), in at most BGN_PUBLISH_REQUESTS requests: past
 * either, publish_async first waits, up to the handle's timeout, for the
 * oldest to be answered (ETIMEDOUT if it is not).  Rank
 * 0 answers once an event's batch has left, so this wait is the
 * back-pressure that keeps a fast publisher at the rate events drain.
 * EINVAL: no topic, or a payload that is not a JSON object.
 */
int bgn_event_publish_async (bgn_t *h, const char *topic,
                             const char *payload);

/* The same for n events (1..BGN_PUBLISH_MANY_MAX) in one request:
 * topics[i] with payloads[i] (payloads, or an element, may be NULL).
 * Rank 0 numbers them consecutively; each still gets its own answer from
 * bgn_event_publish_get(), in order, and counts in the window.  All or
 * none: one bad event fails the call (EINVAL) and nothing is sent. */
int bgn_event_publish_many (bgn_t *h, int n, const char *const *topics,
                            const char *const *payloads);

/* The answer to the oldest publish not yet collected: 0 and its seq, or
 * -1 with the error rank 0 (or the way to it) gave for it (EAGAIN: rank
 * 0 could not take it then; retry).  Waits up to 'timeout' seconds (< 0:
 * the handle's timeout; 0: no wait) and fails with ETIMEDOUT, or with
 * ENOENT when no publish is outstanding.  bgn_rpc_error()-style text for
 * the last failure: bgn_event_publish_error(). */
int bgn_event_publish_get (bgn_t *h, uint32_t *seq, double timeout);
const char *bgn_event_publish_error (bgn_t *h);

/* Publishes sent and not collected yet; set the window (>= 1). */
int bgn_event_publish_pending (bgn_t *h);
int bgn_event_set_window (bgn_t *h, int window);

/* Wait until one of handles[0..n-1] has an event or an answer to read, or
 * 'timeout' seconds pass (< 0: for ever).  Returns how many are ready
 * (ready[i] set to 1 for each, if ready is not NULL), 0 on timeout, -1
 * with errno. */
int bgn_poll (bgn_t **handles, int n, double timeout, int *ready);

/* Malformed messages from the broker that were dropped. */
uint64_t bgn_malformed_drops (bgn_t *h);

#endif /* BGN_CLIENT_H */
