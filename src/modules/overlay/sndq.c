/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* sndq.c: the bytes waiting in libzmq toward each peer (see sndq.h).
 *
 * Kept apart from sock.c because it is the one part of the socket that
 * two threads touch: libzmq's I/O thread takes a message's cost off its
 * queue when it frees the message, so the counts are atomic and the
 * queues reference-counted, and the rules for who frees what (below)
 * live in one short file.  It calls only libutil (idmap, lfstack) and
 * the frames; sock.c calls it, never the other way.
 */
#include <stdlib.h>
#include <unistd.h>

#include "src/common/libutil/idmap.h"
#include "src/common/libutil/lfstack.h"
#include "sndq.h"

/* The bytes in libzmq's queue toward one peer: handed over, not yet
 * freed.  libzmq's I/O thread takes each message's cost off when it frees
 * it, so both threads touch this: atomically, and whoever drops the last
 * reference (the socket's table, or a message in flight) frees it.
 *
 * What libzmq is done with is freed by this thread, not by libzmq's: the
 * I/O thread only pushes the record on 'done' (lfstack.h), and sends and
 * reads here take the stack and free it (sndq_reclaim).  A record
 * and a received frame are allocated here for every message forwarded;
 * freed in another thread they never come back to this thread's malloc
 * cache, and every allocation took malloc's slow path.  Once the socket
 * is gone ('orphaned') the I/O thread frees what it releases itself. */
struct sndq {
    size_t bytes;               /* atomic */
    int refs;                   /* atomic */
    int orphaned;               /* atomic */
    struct lfstack_node *done;  /* released records, to free */
};

/* One message in libzmq's hands: the frame it reads from, and its cost
 * on its peer's queue. */
struct sndq_rec {
    struct lfstack_node node;   /* first: on q->done */
    struct sndq *q;
    struct frame *f;
    size_t cost;
};

struct sndqs {
    struct idmap *map;          /* rank -> struct sndq * */
};

static void sndq_decref (struct sndq *q)
{
    if (q && __atomic_sub_fetch (&q->refs, 1, __ATOMIC_ACQ_REL) == 0)
        free (q);
}

/* Free a list of released records (each holds a reference to its
 * queue, which may go with the last one). */
static void free_released (struct lfstack_node *n)
{
    while (n) {
        struct sndq_rec *m = (struct sndq_rec *)n;
        struct sndq *q = m->q;
        n = n->next;
        frame_decref (&m->f);
        free (m);
        sndq_decref (q);
    }
}

struct sndqs *sndqs_create (void)
{
    struct sndqs *qs = calloc (1, sizeof (*qs));

    if (qs && !(qs->map = idmap_create (sizeof (struct sndq *)))) {
        free (qs);
        return NULL;
    }
    return qs;
}

void sndqs_destroy (struct sndqs **qsp)
{
    struct sndqs *qs;
    struct idmap_iter it;

    if (!qsp || !(qs = *qsp))
        return;
    for (struct sndq **qp = idmap_first (qs->map, &it); qp;
         qp = idmap_next (&it)) {
        /* from now on the I/O thread frees what it releases */
        free_released (lfstack_orphan (&(*qp)->done, &(*qp)->orphaned));
        sndq_decref (*qp);   /* messages still in libzmq keep theirs */
    }
    idmap_destroy (&qs->map);
    free (qs);
    *qsp = NULL;
}

struct sndq *sndqs_get (struct sndqs *qs, uint32_t rank)
{
    struct sndq **qp = idmap_get (qs->map, rank), *q;

    if (qp)
        return *qp;
    if (!(q = calloc (1, sizeof (*q))))
        return NULL;
    q->refs = 1;
    if (!(qp = idmap_put (qs->map, rank, NULL))) {
        free (q);
        return NULL;
    }
    *qp = q;
    return q;
}

void sndq_reclaim (struct sndq *q)
{
    free_released (lfstack_take (&q->done));
}

void sndqs_reclaim_all (struct sndqs *qs)
{
    struct idmap_iter it;

    for (struct sndq **qp = idmap_first (qs->map, &it); qp;
         qp = idmap_next (&it))
        sndq_reclaim (*qp);
}

/* Messages libzmq still holds of ours. */
static int in_flight (struct sndqs *qs)
{
    struct idmap_iter it;
    int n = 0;

    for (struct sndq **qp = idmap_first (qs->map, &it); qp;
         qp = idmap_next (&it))
        n += __atomic_load_n (&(*qp)->refs, __ATOMIC_ACQUIRE) - 1;
    return n;
}

/* A bounded wait: libzmq's threads drop what they hold at once. */
void sndqs_wait_released (struct sndqs *qs)
{
    for (int i = 0; i < 2000 && qs; i++) {
        sndqs_reclaim_all (qs);
        if (in_flight (qs) == 0)
            break;
        usleep (1000);
    }
}

size_t sndq_bytes (struct sndq *q)
{
    return __atomic_load_n (&q->bytes, __ATOMIC_RELAXED);
}

size_t sndqs_bytes (struct sndqs *qs)
{
    struct idmap_iter it;
    size_t bytes = 0;

    for (struct sndq **qp = idmap_first (qs->map, &it); qp;
         qp = idmap_next (&it))
        bytes += sndq_bytes (*qp);
    return bytes;
}

size_t sndqs_count (struct sndqs *qs)
{
    return idmap_size (qs->map);
}

struct sndq_rec *sndq_rec_new (void)
{
    return malloc (sizeof (struct sndq_rec));
}

size_t sndq_rec_size (void)
{
    return sizeof (struct sndq_rec);
}

void sndq_rec_free (struct sndq_rec *m)
{
    free (m);
}

void sndq_hand_over (struct sndq *q, struct sndq_rec *m, struct frame **fp,
                     size_t cost)
{
    m->f = *fp;
    *fp = NULL;
    m->q = q;
    m->cost = cost;
    __atomic_add_fetch (&q->refs, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch (&q->bytes, m->cost, __ATOMIC_RELAXED);
}

void sndq_released (void *data, void *hint)
{
    struct sndq_rec *m = hint;
    struct sndq *q = m->q;

    (void)data;
    /* our own reference: q stays while we look at it, whoever frees m */
    __atomic_add_fetch (&q->refs, 1, __ATOMIC_RELAXED);
    __atomic_sub_fetch (&q->bytes, m->cost, __ATOMIC_RELAXED);
    free_released (lfstack_push_or_take (&q->done, &m->node, &q->orphaned));
    sndq_decref (q);
}
