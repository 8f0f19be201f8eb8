/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* monitor.h: libzmq socket monitor events, decoded.
 *
 * zmq_socket_monitor() reports a socket's connection events as two-part
 * messages [u16 event, u32 value][endpoint] on an inproc PAIR socket.
 * This reads them and says what they mean in words an administrator can
 * act on (a refused CURVE key, a protocol mismatch).
 */
#ifndef BGN_ZMQUTIL_MONITOR_H
#define BGN_ZMQUTIL_MONITOR_H

#include <stdint.h>

struct zmqutil_monitor_event {
    uint16_t event;          /* ZMQ_EVENT_* */
    uint32_t value;          /* fd, errno, ZAP status, protocol error */
    char endpoint[256];
};

/* Start monitoring sock for the events in 'mask' on a new PAIR socket
 * made in ctx (returned: poll it, read with zmqutil_monitor_recv, close
 * with zmqutil_monitor_stop).  'name' makes the inproc address unique.
 * NULL with errno. */
void *zmqutil_monitor_start (void *ctx, void *sock, int mask,
                             const char *name);
void zmqutil_monitor_stop (void *sock, void **monitor);

/* Read one event without blocking: 1 if one was read, 0 if none was
 * ready (malformed event messages are skipped). */
int zmqutil_monitor_recv (void *monitor, struct zmqutil_monitor_event *ev);

/* "handshake failed: ..." and other events in words. */
const char *zmqutil_monitor_describe (const struct zmqutil_monitor_event *ev,
                                      char *buf, size_t len);

#endif
