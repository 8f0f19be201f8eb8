/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* multipart.h: reading and writing whole multipart messages on a socket.
 *
 * Every bgn socket (the broker's local connector, the overlay's ROUTER,
 * the client's DEALER) reads messages the same way: all parts or none,
 * without blocking, and a message longer than the caller's limit is read
 * to its end and reported, so a peer cannot make us hold an unbounded
 * number of parts or leave the socket in the middle of a message.
 */
#ifndef BGN_ZMQUTIL_MULTIPART_H
#define BGN_ZMQUTIL_MULTIPART_H

#include <zmq.h>

#include "src/common/libmsg/message.h"

/* The most parts a socket message can have: a broker message, a ROUTER's
 * routing id and the overlay's envelope. */
#define ZMQUTIL_MAX_PARTS (MSG_MAX_FRAMES + 2)

/* The most bytes one message may have on any bgn socket (ZMQ_MAXMSGSIZE:
 * a larger one closes the connection), so no peer or client can make a
 * reader buffer without bound. */
#define ZMQUTIL_MAX_MSG_SIZE (64LL * 1024 * 1024)

/* Read the next message from sock without blocking, into parts[0..n-1]
 * (initialised here; the caller closes them).  Returns n (>= 1), 0 if
 * nothing was ready, -2 if the message had more than max parts (it was
 * read to its end and dropped), -1 with errno on a socket error. */
int zmqutil_recv (void *sock, zmq_msg_t *parts, int max);

/* Close parts[0..n-1]. */
void zmqutil_close (zmq_msg_t *parts, int n);

/* 1 if a message can be read from sock now, else 0 (an error too).  It
 * asks libzmq (ZMQ_EVENTS), which takes in the commands that made the
 * socket's ZMQ_FD readable: a reactor watching that descriptor asks
 * this after it wakes. */
int zmqutil_readable (void *sock);

/* Payloads of at least this many bytes leave without a copy. */
#define ZMQUTIL_ZERO_COPY_MIN 16384

/* Send broker message msg, preceded by routing id 'id' if not NULL;
 * flags: 0 or ZMQ_DONTWAIT.  All or nothing: a failure can only happen on
 * the first part, so nothing is half sent.  -1 with errno (EAGAIN,
 * EHOSTUNREACH, EINVAL for a message that does not encode).  A payload
 * of ZMQUTIL_ZERO_COPY_MIN bytes or more is handed to libzmq by
 * reference (msg_payload_ref): the caller may destroy msg at once, the
 * bytes stay until libzmq has sent them. */
int zmqutil_send_msg (void *sock, const char *id, msg_t *msg, int flags);
/* The same with a routing id of any bytes (idlen of them). */
int zmqutil_send_msg_to (void *sock, const void *id, size_t idlen,
                         msg_t *msg, int flags);

/* The packed form (libmsg's packed.h): a small message may travel as
 * one part holding all its frames, which costs libzmq one part instead
 * of three to five on every thread it crosses.  The first byte of a
 * packed part is 0 (its frame count's high byte), where a message's
 * first frame starts with MSG_PROTO_MAGIC and an event batch with its
 * own magic, so a reader tells the forms apart by that byte.  Only
 * messages whose packed form takes at most ZMQUTIL_PACK_MAX bytes are
 * packed: larger payloads go by reference (ZMQUTIL_ZERO_COPY_MIN), and
 * one part stays under ZMQ_MAXMSGSIZE.
 *
 * On the broker's local connector, a client whose routing id starts
 * with ZMQUTIL_PACKED_ID_MARK is sent the packed form; every client may
 * send either. */
#define ZMQUTIL_PACK_MAX 16384
#define ZMQUTIL_PACKED_ID_MARK '+'

/* Is data[0..len) one part in the packed form? */
int zmqutil_is_packed (const void *data, size_t len);

/* zmqutil_send_msg_to, with the message in the packed form when it is
 * small enough and one of its parts would have been allocated anyway
 * (more than 33 bytes: a smaller part lives inside libzmq's message, so
 * a message of small parts goes as parts and the sender allocates
 * nothing); else as zmqutil_send_msg_to sends it. */
int zmqutil_send_msg_packed (void *sock, const void *id, size_t idlen,
                             msg_t *msg, int flags);

/* Decode parts[0..n-1] (a message's frames, or one part in the packed
 * form) into a broker message.  NULL with errno EPROTO and, if errbuf is
 * given, a one-line reason. */
msg_t *zmqutil_decode (zmq_msg_t *parts, int n, char *errbuf, size_t errlen);

/* The same into *spare's memory when it is big enough (see
 * msg_decode_reuse: on success *spare is consumed). */
msg_t *zmqutil_decode_reuse (msg_t **spare, zmq_msg_t *parts, int n,
                             char *errbuf, size_t errlen);

#endif
