/* sock.h: the overlay's one ZeroMQ ROUTER socket.
 *
 * It binds one endpoint and connects to the peers this broker is
 * responsible for, with socket identities that are ranks in decimal,
 * ROUTER_MANDATORY (a send to a peer with no connection fails at once
 * with EHOSTUNREACH) and ROUTER_HANDOVER (a restarted peer takes its
 * identity back).  With CURVE the socket is a server for connections
 * peers make and a client, with the peer's key, for each it makes.
 *
 * What arrives is reported upward through sock_ops: each message as
 * [routing id][frames] with the CURVE key that authenticated it, and the
 * connection events libzmq's monitor gives (handshake done, closed,
 * refused), decoded into words.  Received frames are handed over without
 * copying, and frames that came from this socket leave it again without
 * copying too.
 */
#ifndef BGN_OVERLAY_SOCK_H
#define BGN_OVERLAY_SOCK_H

#include <stddef.h>
#include <stdint.h>

#include "src/include/bgn/module.h"
#include "frame.h"
#include "overlay.h"

struct sock;

struct sock_ops {
    /* One message: routing id, frames (taken), CURVE User-Id or NULL. */
    void (*message) (void *arg, const void *id, size_t idlen,
                     struct frame **frames, int n, const char *user_id);
    void (*event) (void *arg, enum ovl_sock_event ev, const char *endpoint,
                   const char *detail);
};

struct sock_settings {
    uint32_t rank;
    int sndhwm;                  /* send and receive high-water marks */
    const char *curve_public;    /* NULL: no CURVE */
    const char *curve_secret;
};

/* A socket on loop (not yet bound, not yet polled).  NULL with errno. */
struct sock *sock_create (zloop_t *loop, const struct sock_settings *set,
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
void sock_disconnect (struct sock *s, const char *endpoint);
int sock_send (struct sock *s, uint32_t rank, const uint8_t *env,
               size_t envlen, struct frame **body, int n);

#endif
