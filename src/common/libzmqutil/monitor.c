/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* monitor.c: libzmq socket monitor events (see monitor.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <zmq.h>

#include "monitor.h"

void *zmqutil_monitor_start (void *ctx, void *sock, int mask,
                             const char *name)
{
    char uri[128];
    void *mon;

    snprintf (uri, sizeof (uri), "inproc://bgn-monitor-%s-%p", name, sock);
    if (zmq_socket_monitor (sock, uri, mask) < 0)
        return NULL;
    if (!(mon = zmq_socket (ctx, ZMQ_PAIR)))
        return NULL;
    int linger = 0;
    zmq_setsockopt (mon, ZMQ_LINGER, &linger, sizeof (linger));
    if (zmq_connect (mon, uri) < 0) {
        int saved = errno;
        zmq_close (mon);
        errno = saved;
        return NULL;
    }
    return mon;
}

void zmqutil_monitor_stop (void *sock, void **monitor)
{
    if (monitor && *monitor) {
        zmq_socket_monitor (sock, NULL, 0);
        zmq_close (*monitor);
        *monitor = NULL;
    }
}

int zmqutil_monitor_recv (void *monitor, struct zmqutil_monitor_event *ev)
{
    for (;;) {
        zmq_msg_t head, ep;
        int good;

        zmq_msg_init (&head);
        if (zmq_msg_recv (&head, monitor, ZMQ_DONTWAIT) < 0) {
            zmq_msg_close (&head);
            return 0;
        }
        zmq_msg_init (&ep);
        if (zmq_msg_more (&head))
            zmq_msg_recv (&ep, monitor, 0);
        good = zmq_msg_size (&head) >= 6;
        if (good) {
            memcpy (&ev->event, zmq_msg_data (&head), 2);
            memcpy (&ev->value, (char *)zmq_msg_data (&head) + 2, 4);
            snprintf (ev->endpoint, sizeof (ev->endpoint), "%.*s",
                      (int)zmq_msg_size (&ep), (char *)zmq_msg_data (&ep));
        }
        zmq_msg_close (&head);
        zmq_msg_close (&ep);
        if (good)
            return 1;
    }
}

static const char *protocol_error (uint32_t value)
{
    if (value >= ZMQ_PROTOCOL_ERROR_ZAP_UNSPECIFIED
        && value <= ZMQ_PROTOCOL_ERROR_ZAP_INVALID_METADATA)
        return "the authentication handler answered badly";
    if (value >= ZMQ_PROTOCOL_ERROR_ZMTP_UNSPECIFIED
        && value <= ZMQ_PROTOCOL_ERROR_ZMTP_INVALID_METADATA)
        return "the peer broke the ZMTP protocol (is it a bgn broker?)";
    if (value == ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH)
        return "one side uses CURVE and the other does not "
               "(check overlay.curve)";
    return "the peer broke the security handshake (a different "
           "certificate or CURVE setting?)";
}

const char *zmqutil_monitor_describe (const struct zmqutil_monitor_event *ev,
                                      char *buf, size_t len)
{
    switch (ev->event) {
    case ZMQ_EVENT_HANDSHAKE_FAILED_AUTH:
        snprintf (buf, len, "CURVE key not authorized (ZAP status %u): the "
                  "peer has a different certificate", (unsigned)ev->value);
        break;
    case ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL:
        snprintf (buf, len, "%s (protocol error 0x%x)",
                  protocol_error (ev->value), (unsigned)ev->value);
        break;
    case ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL:
        snprintf (buf, len, "handshake failed: %s", zmq_strerror (ev->value));
        break;
    case ZMQ_EVENT_DISCONNECTED:
        snprintf (buf, len, "disconnected");
        break;
    case ZMQ_EVENT_HANDSHAKE_SUCCEEDED:
        snprintf (buf, len, "handshake succeeded");
        break;
    default:
        snprintf (buf, len, "event 0x%x (value %u)", (unsigned)ev->event,
                  (unsigned)ev->value);
        break;
    }
    return buf;
}
