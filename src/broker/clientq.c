/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* clientq.c: the bytes queued toward each local client (see clientq.h).
 *
 * A message leaves as its routing id, its parts but the last (copied into
 * libzmq, or a large payload by reference, as libzmqutil does), and its
 * last part from a record of ours (struct sent) that carries the whole
 * message's cost.  libzmq writes a client's parts out in order and frees
 * each once written (or when the client's connection goes), so the last
 * part's release means the whole message has left its queue: that is
 * when the cost comes off.  The release runs in libzmq's I/O thread,
 * hence the atomics, and the entry it points to is reference-counted: a
 * client forgotten here (or the whole table) stays alive for its
 * messages still in libzmq.
 *
 * The record itself is freed in the broker's thread: the I/O thread only
 * pushes it on a stack the table shares ('struct reclaim', lfstack.h),
 * which the next send empties.  Freed in libzmq's thread, the record of
 * every response never came back to the broker's malloc cache, and each
 * allocation took malloc's slow path.  Once the table is gone
 * ('orphaned') the I/O thread frees what it releases itself.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <czmq.h>

#include "src/common/libmsg/packed.h"
#include "src/common/libutil/lfstack.h"
#include "src/common/libzmqutil/multipart.h"
#include "clientq.h"

/* What libzmq holds for a part beyond its bytes: the zmq_msg_t in the
 * client's pipe and the content record of a part it allocated. */
#define PART_COST 96
/* A client's share of the table: its hash item and key copy's block. */
#define ENTRY_COST 64

struct reclaim {
    int refs;                   /* atomic: the table's and each entry's */
    int orphaned;               /* atomic: the table is gone */
    struct lfstack_node *done;  /* released records, to free */
};

struct centry {
    size_t bytes;               /* atomic: queued toward the client */
    int refs;                   /* atomic: the table's and each message's */
    int have_lost;              /* events dropped for it, not yet told */
    uint32_t lost_first, lost_last;
    struct reclaim *r;          /* the table's (a reference) */
};

struct sent {
    struct lfstack_node node;   /* first: on r->done */
    struct centry *e;
    size_t cost;
    unsigned char data[];       /* the last part's bytes */
};

struct clientq {
    void *zsock;
    size_t bound;
    zhashx_t *clients;          /* route-stack name -> struct centry * */
    uint64_t drops;
    struct reclaim *r;
};

static void reclaim_decref (struct reclaim *r)
{
    if (r && __atomic_sub_fetch (&r->refs, 1, __ATOMIC_ACQ_REL) == 0)
        free (r);
}

static void centry_decref (struct centry *e)
{
    if (e && __atomic_sub_fetch (&e->refs, 1, __ATOMIC_ACQ_REL) == 0) {
        reclaim_decref (e->r);
        free (e);
    }
}

/* Free a list of released records (each holds a reference to its
 * client's entry). */
static void free_released (struct lfstack_node *n)
{
    while (n) {
        struct sent *m = (struct sent *)n;
        struct centry *e = m->e;
        n = n->next;
        free (m);
        centry_decref (e);
    }
}

/* Free what libzmq released. */
static void reclaim (struct reclaim *r)
{
    free_released (lfstack_take (&r->done));
}

static void centry_destructor (void **item)
{
    if (item && *item) {
        centry_decref (*item);
        *item = NULL;
    }
}

struct clientq *clientq_create (void *zsock, size_t bound)
{
    struct clientq *q = calloc (1, sizeof (*q));

    if (!q || !(q->r = calloc (1, sizeof (*q->r)))
        || !(q->clients = zhashx_new ())) {
        if (q)
            free (q->r);
        free (q);
        errno = ENOMEM;
        return NULL;
    }
    q->r->refs = 1;
    zhashx_set_destructor (q->clients, centry_destructor);
    q->zsock = zsock;
    q->bound = bound;
    return q;
}

void clientq_destroy (struct clientq **qp)
{
    if (qp && *qp) {
        struct reclaim *r = (*qp)->r;
        zhashx_destroy (&(*qp)->clients);
        /* from now on the I/O thread frees what it releases */
        free_released (lfstack_orphan (&r->done, &r->orphaned));
        reclaim_decref (r);
        free (*qp);
        *qp = NULL;
    }
}

int clientq_decode_id (const char *client, unsigned char *out, size_t *len)
{
    size_t n = strlen (client);

    if (client[0] != '~') {
        if (n == 0 || n > MSG_MAX_ROUTEID)
            return -1;
        memcpy (out, client, n);
        *len = n;
        return 0;
    }
    if (n < 3 || (n - 1) % 2 || (n - 1) / 2 > MSG_MAX_ROUTEID)
        return -1;
    for (size_t i = 0; i < (n - 1) / 2; i++) {
        unsigned v;
        if (sscanf (client + 1 + 2 * i, "%2x", &v) != 1)
            return -1;
        out[i] = (unsigned char)v;
    }
    *len = (n - 1) / 2;
    return 0;
}

/* The client's entry, made on first use; NULL on ENOMEM. */
static struct centry *client_entry (struct clientq *q, const char *client)
{
    struct centry *e = zhashx_lookup (q->clients, client);

    if (e)
        return e;
    if (!(e = calloc (1, sizeof (*e))))
        return NULL;
    e->refs = 1;
    e->r = q->r;
    __atomic_add_fetch (&q->r->refs, 1, __ATOMIC_RELAXED);
    if (zhashx_insert (q->clients, client, e) < 0) {
        centry_decref (e);
        return NULL;
    }
    return e;
}

/* libzmq is done with the message's last part: in its I/O thread, or in
 * ours when the send failed. */
static void release_sent (void *data, void *hint)
{
    struct sent *m = hint;
    struct reclaim *r = m->e->r;

    /* our own reference: r stays while we look at it, whoever frees m */
    __atomic_add_fetch (&r->refs, 1, __ATOMIC_RELAXED);
    __atomic_sub_fetch (&m->e->bytes, m->cost, __ATOMIC_RELAXED);
    free_released (lfstack_push_or_take (&r->done, &m->node, &r->orphaned));
    reclaim_decref (r);
}

/* A part before the last: copied, or a large payload by reference. */
static int send_part (struct clientq *q, msg_t *msg,
                      const struct msg_frame *f)
{
    int flags = ZMQ_SNDMORE | ZMQ_DONTWAIT;
    void *ref;
    zmq_msg_t m;

    if (!msg || f->size < ZMQUTIL_ZERO_COPY_MIN
        || f->data != (const void *)msg_get_payload (msg, NULL)
        || !(ref = msg_payload_ref (msg)))
        return zmq_send (q->zsock, f->data, f->size, flags);
    if (zmq_msg_init_data (&m, (void *)f->data, f->size, msg_payload_unref,
                           ref) < 0) {
        msg_payload_unref (NULL, ref);
        return zmq_send (q->zsock, f->data, f->size, flags);
    }
    if (zmq_msg_send (&m, q->zsock, flags) < 0) {
        zmq_msg_close (&m);
        return -1;
    }
    return 0;
}

/* Send parts[0..n-1] (n >= 1) to 'client', counted (see clientq.h).
 * With 'packed' (its size), the message goes as one part holding all of
 * them in the packed form instead. */
static int send_parts (struct clientq *q, const char *client, msg_t *msg,
                       const struct msg_frame *parts, int n, size_t packed)
{
    unsigned char id[MSG_MAX_ROUTEID];
    const struct msg_frame *last = &parts[n - 1];
    size_t idlen, cost, held, lastsize = packed ? packed : last->size;
    struct centry *e;
    struct sent *m;
    zmq_msg_t z;

    if (clientq_decode_id (client, id, &idlen) < 0) {
        errno = EINVAL;
        return -1;
    }
    reclaim (q->r);
    if (!(e = client_entry (q, client)) || !(m = malloc (sizeof (*m)
                                                     + lastsize))) {
        errno = ENOMEM;
        return -1;
    }
    if (packed && packed_write (m->data, packed, parts, (size_t)n) < 0) {
        free (m);
        errno = EINVAL;
        return -1;
    }
    cost = malloc_usable_size (m) + PART_COST * (packed ? 2 : (size_t)(n + 1))
           + idlen;
    for (int i = 0; !packed && i < n - 1; i++)
        cost += parts[i].size;
    held = __atomic_load_n (&e->bytes, __ATOMIC_RELAXED);
    if (held > 0 && held + cost > q->bound) {
        free (m);
        q->drops++;
        errno = ENOBUFS;
        return -1;
    }
    /* ROUTER_MANDATORY and DONTWAIT: the id part is accepted or refused
     * for the whole message; once it is in, the rest cannot fail */
    if (zmq_send (q->zsock, id, idlen, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0) {
        int saved = errno;
        free (m);
        errno = saved;
        return -1;
    }
    for (int i = 0; !packed && i < n - 1; i++)
        send_part (q, msg, &parts[i]);
    if (!packed)
        memcpy (m->data, last->data, last->size);
    m->e = e;
    m->cost = cost;
    __atomic_add_fetch (&e->refs, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch (&e->bytes, cost, __ATOMIC_RELAXED);
    if (zmq_msg_init_data (&z, m->data, lastsize, release_sent, m) < 0) {
        zmq_send (q->zsock, m->data, lastsize, ZMQ_DONTWAIT);
        release_sent (NULL, m);
        return 0;
    }
    if (zmq_msg_send (&z, q->zsock, ZMQ_DONTWAIT) < 0)
        zmq_msg_close (&z);     /* release_sent runs now */
    return 0;
}

int clientq_send_msg (struct clientq *q, const char *client, msg_t *msg)
{
    struct msg_frame frames[ZMQUTIL_MAX_PARTS];
    int n = msg_encode (msg, frames, ZMQUTIL_MAX_PARTS);
    size_t packed = 0;

    if (n < 1) {
        errno = EINVAL;
        return -1;
    }
    /* a client that asked for the packed form by its id (multipart.h) */
    if (client[0] == ZMQUTIL_PACKED_ID_MARK
        && (packed = packed_size (frames, (size_t)n)) > ZMQUTIL_PACK_MAX)
        packed = 0;
    return send_parts (q, client, msg, frames, n, packed);
}

int clientq_send_data (struct clientq *q, const char *client,
                       const void *data, size_t len)
{
    struct msg_frame f = { .data = data, .size = len };

    return send_parts (q, client, NULL, &f, 1, 0);
}

void clientq_note_lost (struct clientq *q, const char *client,
                        uint32_t first, uint32_t last)
{
    struct centry *e = client_entry (q, client);

    if (!e)
        return;
    if (!e->have_lost || first < e->lost_first)
        e->lost_first = first;
    if (!e->have_lost || last > e->lost_last)
        e->lost_last = last;
    e->have_lost = 1;
}

int clientq_take_lost (struct clientq *q, const char *client,
                       uint32_t *first, uint32_t *last)
{
    struct centry *e = zhashx_lookup (q->clients, client);

    if (!e || !e->have_lost)
        return 0;
    *first = e->lost_first;
    *last = e->lost_last;
    e->have_lost = 0;
    return 1;
}

void clientq_prune (struct clientq *q)
{
    zlistx_t *keys;

    reclaim (q->r);
    keys = zhashx_keys (q->clients);

    if (!keys)
        return;
    for (const char *k = zlistx_first (keys); k; k = zlistx_next (keys)) {
        struct centry *e = zhashx_lookup (q->clients, k);
        if (e && !e->have_lost
            && __atomic_load_n (&e->bytes, __ATOMIC_RELAXED) == 0)
            zhashx_delete (q->clients, k);
    }
    zlistx_destroy (&keys);
}

void clientq_forget (struct clientq *q, const char *client)
{
    zhashx_delete (q->clients, client);
}

json_t *clientq_memory (struct clientq *q)
{
    size_t bytes = 0, entries = 0;

    reclaim (q->r);

    /* each entry: its queue, and itself, its name and its share of the
     * hash (which the bound allows for on top of the queue's) */
    for (struct centry *e = zhashx_first (q->clients); e;
         e = zhashx_next (q->clients)) {
        size_t own = malloc_usable_size (e)
                     + strlen (zhashx_cursor (q->clients)) + 1 + ENTRY_COST;
        bytes += __atomic_load_n (&e->bytes, __ATOMIC_RELAXED) + own;
        entries += own;
    }
    return json_pack ("{s:I s:I s:I s:I}", "bytes", (json_int_t)bytes,
                      "bound", (json_int_t)(q->bound
                                            * zhashx_size (q->clients)
                                            + entries),
                      "clients", (json_int_t)zhashx_size (q->clients),
                      "drops", (json_int_t)q->drops);
}

uint64_t clientq_drops (struct clientq *q)
{
    return q->drops;
}
