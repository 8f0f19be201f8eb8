/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* sndq.h: the bytes waiting in libzmq toward each peer (sock.c's send
 * queues), counted across libzmq's I/O thread.
 *
 * sock.c hands every message to libzmq by reference, with a record
 * (struct sndq_rec) that libzmq gives back through sndq_released when
 * it is done with it; the record's cost is on its peer's queue until
 * then, so sock.c knows, and bounds, what each peer has waiting.  The
 * records are freed by the socket's own thread (sndq_reclaim), not by
 * libzmq's.  No ZeroMQ here: the one call into libzmq that takes a
 * record is sock.c's.
 */
#ifndef BGN_OVERLAY_SNDQ_H
#define BGN_OVERLAY_SNDQ_H

#include <stddef.h>
#include <stdint.h>

#include "frame.h"

struct sndq;        /* one peer's queue */
struct sndqs;       /* rank -> its queue */
struct sndq_rec;    /* one message in libzmq's hands */

struct sndqs *sndqs_create (void);
/* Once the socket is closed: libzmq's I/O thread frees from now on what
 * it still releases, with its queue (sndqs_wait_released first). */
void sndqs_destroy (struct sndqs **qsp);

/* The queue toward 'rank' (made on first use), or NULL (ENOMEM). */
struct sndq *sndqs_get (struct sndqs *qs, uint32_t rank);
/* Free the records libzmq released toward every peer. */
void sndqs_reclaim_all (struct sndqs *qs);
/* Once the socket is closed (linger 0): wait, bounded, for libzmq's
 * threads to release what they hold (the code they call is the
 * module's, which must not be unloaded before). */
void sndqs_wait_released (struct sndqs *qs);
/* The bytes waiting toward all peers; how many peers have a queue. */
size_t sndqs_bytes (struct sndqs *qs);
size_t sndqs_count (struct sndqs *qs);

/* Free the records libzmq released toward q. */
void sndq_reclaim (struct sndq *q);
/* The bytes waiting toward q's peer. */
size_t sndq_bytes (struct sndq *q);

/* A record for one message (NULL on ENOMEM), and its size (part of what
 * a message costs); sndq_rec_free for one never handed over. */
struct sndq_rec *sndq_rec_new (void);
size_t sndq_rec_size (void);
void sndq_rec_free (struct sndq_rec *m);
/* The message reading frame *fp (taken) is handed to libzmq with record
 * m: its cost is on q until sndq_released. */
void sndq_hand_over (struct sndq *q, struct sndq_rec *m, struct frame **fp,
                     size_t cost);
/* libzmq's free function for a message with record 'hint' (its I/O
 * thread's, or ours when a send fails): the cost comes off its queue. */
void sndq_released (void *data, void *hint);

#endif
