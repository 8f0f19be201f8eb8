/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* dedup.h: requests this broker ran for other ranks, remembered a while
 * so that a copy its origin sent again is not run twice.
 *
 * The origin broker sends a request again when a rank on its way may have
 * died holding it (tracker.h).  The copy can meet the original here: a
 * request already running is dropped (its response is on the way), one
 * already answered gets the cached response again.  A request is known by
 * its route stack (its client's id, then its origin's rank, which the
 * origin broker pushed; the client's id, random per connection, stands
 * in for the origin's incarnation) and its matchtag: a client must not
 * reuse a matchtag while its origin may still send copies (bgn's client
 * library counts them up, 2^32 before one comes round again).  A broker's
 * own requests (no client id under its rank) are not remembered: their
 * matchtags start again from 1 when it restarts.
 *
 * Entries live as long as the origin may still send again (what its
 * tracker keeps: twice the RPC timeout plus 5 s).  overlay.dedup_bytes
 * bounds their heap (keys, cached responses): past it the oldest go, and
 * a copy of one of those would run again (counted: dedup_evicted).
 */
#ifndef BGN_OVERLAY_DEDUP_H
#define BGN_OVERLAY_DEDUP_H

#include <stddef.h>
#include <stdint.h>

#include "src/common/libmsg/message.h"
#include "envelope.h"
#include "frame.h"

struct overlay;
struct idmap;
struct seen;

struct dedup_state {            /* dedup.c */
    struct idmap *map;          /* key hash -> struct seen * */
    struct seen *head, *tail;   /* oldest first */
    size_t bytes;
    uint64_t copies;            /* copies of a request already here */
    uint64_t answered;          /* ... answered again from the cache */
    uint64_t evicted;           /* forgotten early (overlay.dedup_bytes) */
};

int dedup_init (struct overlay *ov);
void dedup_fini (struct overlay *ov);

/* A request for this rank arrived from rank env->source.  0: run it (it
 * is remembered now); 1: it is a copy of one already here (dropped, or
 * answered again from the cache), the caller drops it. */
int dedup_request (struct overlay *ov, const struct envelope *env,
                   const msg_t *req);

/* This broker answers a request of another rank with 'rsp', encoded in
 * 'wire' (body_encode): kept for copies of the request still to come. */
void dedup_response (struct overlay *ov, const msg_t *rsp,
                     const struct frame *wire);

/* Heap the remembered requests hold. */
size_t dedup_bytes (const struct overlay *ov);

#endif
