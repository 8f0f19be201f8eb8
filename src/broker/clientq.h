/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* clientq.h: what the broker has queued toward each local client.
 *
 * The local connector is one ROUTER socket; libzmq keeps each client's
 * messages in a queue of their own until the client reads them, up to
 * the high-water mark (1000 messages, whatever their size).  A client
 * that stops reading (hung, stopped, or slower than its events) would
 * make the broker hold all of that.  Every message to a client goes
 * through here instead: its cost (its parts as libzmq holds them, and
 * libzmq's records) is counted on that client from the moment it is
 * handed over until libzmq frees its last part, which it does from its
 * I/O thread (a zmq_msg_init_data free callback: the counts are atomic),
 * and a message that would take the client past 'bound' bytes is
 * dropped instead (ENOBUFS), counted.  An empty queue takes any message,
 * so none is too large to ever go.
 *
 * Event batches dropped for a client are remembered as a range of
 * sequence numbers, which the caller tells the client (event.lost) once
 * its queue has room again.
 *
 * Clients are named as on the route stack (dispatch.c: a printable id,
 * or '~' and its bytes in hex).  The broker's thread does everything but
 * the release; no global state.
 */
#ifndef BGN_BROKER_CLIENTQ_H
#define BGN_BROKER_CLIENTQ_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "src/common/libmsg/message.h"

struct clientq;

/* Queues on 'zsock' (borrowed), at most 'bound' bytes per client.  NULL
 * with ENOMEM. */
struct clientq *clientq_create (void *zsock, size_t bound);
/* Messages still in libzmq keep what they need until it frees them. */
void clientq_destroy (struct clientq **qp);

/* The routing id route-stack name 'client' stands for, in out
 * (MSG_MAX_ROUTEID bytes), its length in *len.  -1 if malformed. */
int clientq_decode_id (const char *client, unsigned char *out, size_t *len);

/* Send msg (borrowed: its payload may stay referenced until libzmq is
 * done) / a one-part message of len bytes at data (copied) to 'client',
 * without blocking.  0, or -1 with errno: ENOBUFS (the client's queue is
 * at its bound: dropped, counted in drops), EINVAL (a malformed name), or
 * libzmq's (EAGAIN: its high-water mark; EHOSTUNREACH: the client is
 * gone).  Nothing is half sent. */
int clientq_send_msg (struct clientq *q, const char *client, msg_t *msg);
int clientq_send_data (struct clientq *q, const char *client,
                       const void *data, size_t len);

/* Events first..last were dropped for 'client' (widens what is noted). */
void clientq_note_lost (struct clientq *q, const char *client,
                        uint32_t first, uint32_t last);
/* The range noted for 'client' (cleared): 1, or 0 if none. */
int clientq_take_lost (struct clientq *q, const char *client,
                       uint32_t *first, uint32_t *last);

/* Forget the entries of clients that hold nothing and have nothing
 * noted (call now and then: clients come and go). */
void clientq_prune (struct clientq *q);
/* Forget 'client' (it went away). */
void clientq_forget (struct clientq *q, const char *client);

/* {"bytes", "bound", "clients", "drops"}: the bytes queued toward every
 * client and the table's entries, the bound (per client times the
 * clients with an entry, plus the entries), and the messages dropped at
 * it.  NULL on ENOMEM. */
json_t *clientq_memory (struct clientq *q);

/* Messages dropped at the bound so far. */
uint64_t clientq_drops (struct clientq *q);

#endif
