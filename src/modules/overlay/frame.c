/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* frame.c: reference-counted byte buffers (see frame.h).
 *
 * A frame made here keeps its bytes right after the struct: one
 * allocation.  A wrapped frame keeps the transport's private storage
 * there instead and points data at whatever the transport set.  What a
 * frame costs in heap (frame_footprint) is its allocation's usable size,
 * as the allocator reports it, not its payload length.
 */
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"

struct frame {
    int refs;                   /* atomic */
    uint8_t *data;
    size_t size;
    frame_release_f release;    /* NULL: data is inline */
    _Alignas (16) uint8_t storage[];
};

struct frame *frame_create (const void *data, size_t size)
{
    struct frame *f = malloc (sizeof (*f) + (size ? size : 1));

    if (!f)
        return NULL;
    f->refs = 1;
    f->release = NULL;
    f->data = f->storage;
    f->size = size;
    if (data && size)
        memcpy (f->data, data, size);
    return f;
}

struct frame *frame_wrap (size_t privsize, frame_release_f release)
{
    struct frame *f = calloc (1, sizeof (*f) + (privsize ? privsize : 1));

    if (!f)
        return NULL;
    f->refs = 1;
    f->release = release;
    return f;
}

void *frame_priv (struct frame *f)
{
    return f->storage;
}

frame_release_f frame_release_fn (const struct frame *f)
{
    return f->release;
}

void frame_set (struct frame *f, void *data, size_t size)
{
    f->data = data;
    f->size = size;
}

uint8_t *frame_data (const struct frame *f)
{
    return f->data;
}

size_t frame_size (const struct frame *f)
{
    return f->size;
}

struct frame *frame_incref (struct frame *f)
{
    if (f)
        __atomic_add_fetch (&f->refs, 1, __ATOMIC_RELAXED);
    return f;
}

int frame_refs (const struct frame *f)
{
    return __atomic_load_n (&f->refs, __ATOMIC_ACQUIRE);
}

void frame_decref (struct frame **fp)
{
    struct frame *f;

    if (!fp || !(f = *fp))
        return;
    *fp = NULL;
    if (__atomic_sub_fetch (&f->refs, 1, __ATOMIC_ACQ_REL) > 0)
        return;
    if (f->release)
        f->release (f, f->storage);
    free (f);
}

void frame_decref_all (struct frame **frames, int n)
{
    for (int i = 0; i < n; i++)
        frame_decref (&frames[i]);
}

struct frame *frame_keep (struct frame *f)
{
    if (!f->release)
        return frame_incref (f);
    return frame_create (f->data, f->size);
}

size_t frame_footprint (const struct frame *f)
{
    size_t own = malloc_usable_size ((void *)f);

    return f->release ? own + f->size : own;
}
