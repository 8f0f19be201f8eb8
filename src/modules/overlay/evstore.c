/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* evstore.c: the event layer's batch stores (evlayer_int.h).
 *
 * A store holds batches sorted by first seq, disjoint (every seq belongs
 * to one batch, so two are the same or apart), in a ring of entries: the
 * oldest drop out and the newest come in at no cost, and a lookup is a
 * binary search.  A store's bytes are what it holds in heap: each
 * batch's frame allocation (frame_footprint) and its entry, not the
 * batch's payload length.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "evlayer_int.h"

#define STORE_MIN_CAP 64           /* entries of a store's first array */

struct held *evstore_at (const struct store *s, int i)
{
    return &s->v[(s->head + i) % s->cap];
}

void evstore_free (struct store *s)
{
    for (int i = 0; i < s->n; i++)
        frame_decref (&evstore_at (s, i)->f);
    free (s->v);
    memset (s, 0, sizeof (*s));
}

/* Index of the first batch whose last >= seq (s->n if none). */
int evstore_lower (const struct store *s, uint32_t seq)
{
    int lo = 0, hi = s->n;

    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (evstore_at (s, mid)->last < seq)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Does any batch overlap first..last? */
int evstore_overlaps (const struct store *s, uint32_t first,
                           uint32_t last)
{
    int i = evstore_lower (s, first);
    return i < s->n && evstore_at (s, i)->first <= last;
}

static int store_grow (struct store *s)
{
    int cap = s->cap ? s->cap * 2 : STORE_MIN_CAP;
    struct held *v = malloc (cap * sizeof (*v));

    if (!v)
        return -1;
    for (int i = 0; i < s->n; i++)
        v[i] = *evstore_at (s, i);
    free (s->v);
    s->v = v;
    s->cap = cap;
    s->head = 0;
    return 0;
}

/* In order; batches mostly come in last, a repair's now and then in the
 * middle (then the entries after it move up by one). */
int evstore_insert (struct store *s, const struct held *h)
{
    int i = evstore_lower (s, h->first);

    if (s->n == s->cap && store_grow (s) < 0)
        return -1;
    for (int j = s->n; j > i; j--)
        *evstore_at (s, j) = *evstore_at (s, j - 1);
    *evstore_at (s, i) = *h;
    s->n++;
    s->events += h->count;
    s->bytes += h->bytes;
    return 0;
}

/* Take out entry i; its frame reference goes to *out (or is dropped).
 * The first and the last go at no cost. */
void evstore_remove (struct store *s, int i, struct held *out)
{
    struct held h = *evstore_at (s, i);

    if (i == 0)
        s->head = (s->head + 1) % s->cap;
    else
        for (int j = i; j < s->n - 1; j++)
            *evstore_at (s, j) = *evstore_at (s, j + 1);
    s->n--;
    s->events -= h.count;
    s->bytes -= h.bytes;
    if (out)
        *out = h;
    else
        frame_decref (&h.f);
}

int evstore_full (const struct store *s, const struct evlayer_config *c,
                       uint32_t count, size_t bytes)
{
    size_t grow = s->n == s->cap ? (size_t)(s->cap ? s->cap : STORE_MIN_CAP)
                                   * sizeof (struct held) : 0;

    return s->events + count > (uint64_t)c->buffer
           || evstore_memory (s) + bytes + grow > c->buffer_bytes;
}

size_t evstore_cost (const struct frame *f)
{
    return frame_footprint (f) + sizeof (struct held);
}

size_t evstore_memory (const struct store *s)
{
    return s->bytes + (size_t)(s->cap - s->n) * sizeof (struct held);
}
