/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* io.h: everything the overlay's protocol core needs from the world.
 *
 * The core (every part of the overlay but the socket and the certificate
 * store) is sans-I/O: it never touches a socket, a file, the wall clock or
 * a reactor.  It gets this table instead.  The module (module.c) fills it
 * with ZeroMQ and the broker's reactor; the protocol simulator fills it
 * with a virtual network and a virtual clock, so the same code runs in
 * both.  Every callback gets the 'ctx' the table was registered with.
 *
 * Peers are named by rank.  Frames passed to send are taken on success
 * (their pointers set to NULL) and left with the caller on failure, like
 * zmq_msg_send.  The core follows the same rule wherever it takes frames,
 * so a caller may always drop whatever frames it still points to.
 */
#ifndef BGN_OVERLAY_IO_H
#define BGN_OVERLAY_IO_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "src/include/bgn/module.h"
#include "frame.h"

/* What the core may tell an observer (a simulator measuring it). */
enum ovl_note {
    OVL_NOTE_FENCED,        /* 'rank' (incarnation 'inc') is fenced here */
    OVL_NOTE_UNFENCED,      /* its fence is lifted here */
};

struct ovl_io {
    /* Send one wire frame ([envelope][packed body], body.h) to peer
     * 'rank' now, without blocking, as one transport message.  0: sent
     * (the frame taken: the io sets *wire to NULL).  -1 with errno
     * EAGAIN (the peer's queue is full) or EHOSTUNREACH (no connection
     * to that peer), as a ROUTER_MANDATORY socket with ZMQ_DONTWAIT says
     * them: nothing was sent and the frame is still the caller's.  The
     * io may keep a reference (zero-copy): the core never writes into a
     * frame it does not hold alone. */
    int (*send) (void *ctx, uint32_t rank, struct frame **wire);

    /* Open a connection to peer 'rank' at 'endpoint', expecting its CURVE
     * public key (Z85, "" without CURVE); close one.  Messages sent to a
     * connecting peer wait for the connection. */
    int (*connect) (void *ctx, uint32_t rank, const char *endpoint,
                    const char *pubkey);
    void (*disconnect) (void *ctx, uint32_t rank, const char *endpoint);

    /* Let the holder of CURVE public key 'pubkey' (Z85) connect to us. */
    int (*authorize) (void *ctx, const char *pubkey);

    /* The core admitted the connection of peer 'rank' that said HELLO:
     * its HELLO_ACK was just sent (io->send took it).  Called from inside
     * the core's handling of that HELLO (overlay_recv), once per
     * admission.  A transport that names a peer's connection by the rank
     * it claims (sock.h) makes that connection the route to 'rank' now;
     * a refused hello (HELLO_NAK) never gets here. */
    void (*admitted) (void *ctx, uint32_t rank);

    /* Monotonic clock, seconds. */
    double (*now) (void *ctx);
    /* Call overlay_run_timers() at (or soon after) 'when' on that clock;
     * INFINITY: nothing is due.  Each call replaces the previous one. */
    void (*wakeup) (void *ctx, double when);
    /* Uniform random bits (jitter); deterministic in a simulation. */
    uint64_t (*random) (void *ctx);
    /* A log line at a syslog level (LOG_ERR .. LOG_DEBUG). */
    void (*log) (void *ctx, int level, const char *fmt, va_list ap);

    /* The broker.  deliver takes msg; request takes msg (a request of the
     * overlay's own, routed by the broker like a local client's); respond
     * and respond_error answer 'req' (borrowed). */
    int (*deliver) (void *ctx, msg_t *msg, const struct bgn_msg_info *info);
    int (*request) (void *ctx, msg_t *msg);
    int (*respond) (void *ctx, const msg_t *req, const char *payload);
    int (*respond_error) (void *ctx, const msg_t *req, int errnum,
                          const char *errstr);
    /* Ask the broker to shut down with this exit code. */
    void (*stop) (void *ctx, int exit_code);

    /* Optional (may be NULL): changes of this broker's view, for an
     * observer.  Never needed for the protocol to work. */
    void (*note) (void *ctx, enum ovl_note what, uint32_t rank, uint64_t inc);

    /* Hand a batch of events (src/common/libmsg/evbatch.h, checked) to
     * the broker's subscribers: 'len' bytes at 'batch', borrowed.  May be
     * NULL: the core then delivers each event as a message. */
    int (*deliver_events) (void *ctx, const void *batch, size_t len);

    /* The process's resident set in bytes, -1 if unknown.  May be NULL
     * (the simulator, tests): overlay-status then leaves it out. */
    long long (*resident) (void *ctx);

    /* The stores outside the core that grow with traffic (the
     * transport's send queues, the broker's own), as {"name": {"bytes",
     * "bound", ...}} (a new reference, or NULL).  May be NULL. */
    json_t *(*memory) (void *ctx);

    /* Rank's public signing key (Ed25519, 32 bytes, ovsign.h) into pk:
     * 0, or -1 if that rank has none the io knows of (-1 with EAGAIN: it
     * could not be asked just now, so whether it has one is not known:
     * its word is then refused, not taken unsigned).  refresh: the
     * key known may be old (a signature failed with it): ask where keys
     * come from again, at most every few seconds per rank.  May be NULL
     * (no broker has a key: nothing is signed or checked). */
    int (*sign_key) (void *ctx, uint32_t rank, int refresh,
                     unsigned char pk[32]);

    /* Where rank listens now, as the bootstrap has it (past any copy
     * kept: a broker restarted on a new port published its new endpoint):
     * 0, or -1 if it cannot say (the bootstrap is closed).  It may block
     * as long as one bootstrap lookup.  May be NULL. */
    int (*peer_endpoint) (void *ctx, uint32_t rank, char *buf, size_t len);
};

#endif
