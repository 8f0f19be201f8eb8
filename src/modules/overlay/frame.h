/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* frame.h: a reference-counted byte buffer, the unit the overlay core
 * hands to its transport.
 *
 * The protocol core never sees a transport's message type.  A frame either
 * holds its own bytes (frame_create) or wraps a buffer the transport owns
 * (frame_wrap: a ZeroMQ message kept in the frame's private area, say), so
 * a frame received from one peer can be forwarded to another without
 * copying.  References are counted atomically because a transport may let
 * go of a frame from another thread (libzmq frees zero-copy messages in
 * its I/O thread).
 *
 * Ownership: whoever holds a reference drops it with frame_decref(), which
 * sets the pointer to NULL; the last reference frees the frame (calling
 * the release function of a wrapped frame).
 */
#ifndef BGN_OVERLAY_FRAME_H
#define BGN_OVERLAY_FRAME_H

#include <stddef.h>
#include <stdint.h>

struct frame;

/* Called once, when the last reference goes: free what 'priv' holds.
 * The frame itself is freed by frame.c afterwards. */
typedef void (*frame_release_f) (struct frame *f, void *priv);

/* A frame of 'size' bytes copied from data (uninitialised if data is
 * NULL).  NULL with ENOMEM. */
struct frame *frame_create (const void *data, size_t size);

/* A frame with 'privsize' bytes of private storage for the transport
 * (frame_priv), whose data and size the transport sets with frame_set()
 * once it has filled the storage.  NULL with ENOMEM. */
struct frame *frame_wrap (size_t privsize, frame_release_f release);
void *frame_priv (struct frame *f);
frame_release_f frame_release_fn (const struct frame *f);
void frame_set (struct frame *f, void *data, size_t size);

uint8_t *frame_data (const struct frame *f);
size_t frame_size (const struct frame *f);

/* Take another reference (returns f) / drop one (NULL-safe). */
struct frame *frame_incref (struct frame *f);
void frame_decref (struct frame **fp);
int frame_refs (const struct frame *f);

/* A reference fit to be held for long (a store, a cache): f itself
 * (another reference) when it holds its own bytes, else a private copy.
 * A wrapped frame may pin far more than its bytes: a ZeroMQ message
 * received zero-copy shares the socket's whole receive buffer (some 8 KiB
 * plus its counters) with the other messages of that read, and keeps it
 * alive as long as it lives.  NULL with ENOMEM. */
struct frame *frame_keep (struct frame *f);

/* Heap bytes the frame holds: its allocation's usable size; for a
 * wrapped frame plus its data size (what the transport holds for it at
 * the least: hold wrapped frames for long only through frame_keep). */
size_t frame_footprint (const struct frame *f);

/* Drop a reference on each of frames[0..n-1]. */
void frame_decref_all (struct frame **frames, int n);

#endif
