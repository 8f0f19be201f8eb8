/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* sock.h: the overlay's one ZeroMQ ROUTER socket.
 *
 * It binds one endpoint and connects to the peers this broker is
 * responsible for, with ROUTER_MANDATORY (a send to a peer with no
 * connection fails at once with EHOSTUNREACH).  With CURVE the socket is
 * a server for connections peers make and a client, with the peer's key,
 * for each it makes.
 *
 * Who is who: ZeroMQ routing ids are never taken from the wire.  A
 * connection this socket makes gets a fresh random routing id, so no
 * peer can claim it (libzmq aborts on a duplicate connect id, and
 * ROUTER_HANDOVER would let any claimant take a link over: both are
 * gone).  A connection a peer made to us keeps the id libzmq generated
 * and speaks for one rank:
 *   - the rank whose CURVE key it holds, when the key belongs to exactly
 *     one rank (per-broker or per-host keys): a connection can only ever
 *     be the rank whose key it holds;
 *   - otherwise (one shared certificate, or CURVE off) the rank its HELLO
 *     claims: any holder of the shared key can be any rank.
 * A rank this socket connects to itself never connects to us: an
 * accepted connection naming it is nobody.
 * It becomes the route to that rank only when the core admits its HELLO
 * (it sent the HELLO_ACK and says so through the io's admitted callback:
 * sock_admitted), so a refused or silent connection takes nothing over.  Messages go up named by the decimal rank, so the core sees
 * canonical ids only; a message nobody can be named for goes up as "?"
 * (an unknown peer to the core).  While the core handles a message from
 * a connection not yet bound, what it sends to that rank (the ACK, or a
 * refusal) goes to that connection.
 *
 * What arrives is reported upward through sock_ops: each message as
 * [routing id][frames] with the CURVE key that authenticated it, and the
 * connection events libzmq's monitor gives (handshake done, closed,
 * refused), decoded into words.  Received frames are handed over without
 * copying, and frames that came from this socket leave it again without
 * copying too.
 *
 * Sending: a message handed to libzmq stays in its queue toward the peer
 * until libzmq's I/O thread has written it out.  Those bytes are counted
 * per peer until libzmq frees the message, and past sndbuf_bytes a send
 * fails with EAGAIN (as at the high-water mark, in messages), so the
 * core keeps what follows in its own bounded backlog: broker messages and
 * events past three quarters of it, so that the protocol's own messages
 * (fence news first) are not held behind them; hellos, keepalives and
 * goodbyes always go.
 */
#ifndef BGN_OVERLAY_SOCK_H
#define BGN_OVERLAY_SOCK_H

#include <stddef.h>
#include <stdint.h>

#include "src/include/bgn/module.h"
#include "frame.h"
#include "ovcore.h"     /* enum ovl_sock_event */

struct sock;

struct sock_ops {
    /* One message: routing id, frames (taken), CURVE User-Id or NULL. */
    void (*message) (void *arg, const void *id, size_t idlen,
                     struct frame **frames, int n, const char *user_id);
    void (*event) (void *arg, enum ovl_sock_event ev, const char *endpoint,
                   const char *detail);
    /* The rank holding CURVE key 'user_id': >= 0, or CURVE_KEY_SHARED /
     * CURVE_KEY_UNKNOWN (curve.h).  NULL without CURVE. */
    long (*rank_of_key) (void *arg, const char *user_id);
};

struct sock_settings {
    uint32_t rank;
    uint32_t size;               /* ranks in the instance */
    int sndhwm;                  /* send and receive high-water marks */
    size_t sndbuf_bytes;         /* per peer: past it a send fails with
                                    EAGAIN (sock_send); 0: no bound */
    int64_t maxmsgsize;          /* bytes; a larger message drops the
                                    connection (ZMQ_MAXMSGSIZE) */
    const char *curve_public;    /* NULL: no CURVE */
    const char *curve_secret;
};

/* A socket in poller's ZeroMQ context, to be watched by poller (not yet
 * bound, not yet watched; 'poller' is borrowed and must outlive the
 * socket).  NULL with errno. */
struct sock *sock_create (const struct bgn_poller *poller,
                          const struct sock_settings *set,
                          const struct sock_ops *ops, void *arg);
void sock_destroy (struct sock **sp);

/* Bind uri; the endpoint peers should use (a wildcard address replaced
 * by this host's first non-loopback IPv4 address) goes to public_uri.
 * -1 with errno. */
int sock_bind (struct sock *s, const char *uri, char *public_uri,
               size_t len);

/* libzmq's words for an errno (it has errnos of its own). */
const char *sock_strerror (int errnum);

/* Start reading (messages and monitor events go to the ops). */
int sock_start (struct sock *s);

/* The io ops (io.h) on this socket. */
int sock_connect (struct sock *s, uint32_t rank, const char *endpoint,
                  const char *pubkey);
void sock_disconnect (struct sock *s, uint32_t rank, const char *endpoint);
int sock_send (struct sock *s, uint32_t rank, struct frame **wire);
/* The core admitted rank's connection (io.h admitted): if it is the
 * accepted connection whose message is being handled, it becomes the
 * route to rank, replacing the one rank had. */
void sock_admitted (struct sock *s, uint32_t rank);

/* {"send_queues": {"bytes", "bound", "deferred"}}: the bytes handed to
 * libzmq toward every peer and not yet released by it (each message's
 * frame, up to 8 KiB of receive buffer a forwarded frame pins, and
 * libzmq's own records), the bound (sndbuf_bytes per peer sent to), and
 * how many sends the bound turned away (the core kept them in its
 * backlogs).  What libzmq released waits for this thread's next send or
 * read to be freed, uncounted: at most what was counted before.  Caller
 * decrefs; NULL on ENOMEM. */
json_t *sock_memory (struct sock *s);

#endif
