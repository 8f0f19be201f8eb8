/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* dedup.c: requests run here for other ranks, so a copy sent again is
 * not run twice (see dedup.h).
 *
 * Each entry is one allocation (the key follows it), found through an
 * idmap keyed by a hash of the key (a hash collision only means the
 * newer request is not remembered: a copy of it would run again), and
 * kept in a FIFO in arrival order: entries expire in that order, and the
 * oldest go first at the byte bound.
 */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/common/libutil/idmap.h"
#include "dedup.h"
#include "overlay.h"
#include "ovlog.h"
#include "route.h"

#define DEDUP_KEY_MAX (MSG_MAX_ROUTES * (MSG_MAX_ROUTEID + 1) + 32)
/* An entry's share of the idmap: its slot (id and pointer), the table
 * kept at most half full. */
#define SLOT_COST (2 * (sizeof (uint64_t) + sizeof (struct seen *)))

struct seen {
    struct seen *next;
    uint64_t hash;
    double expires;
    struct frame *rsp;          /* the response sent, once there is one */
    size_t cost;
    char key[];
};

int dedup_init (struct overlay *ov)
{
    if (!(ov->dedup.map = idmap_create (sizeof (struct seen *))))
        return -1;
    return 0;
}

static void seen_free (struct overlay *ov, struct seen *s)
{
    ov->dedup.bytes -= s->cost;
    frame_decref (&s->rsp);
    free (s);
}

void dedup_fini (struct overlay *ov)
{
    struct seen *s;

    while ((s = ov->dedup.head)) {
        ov->dedup.head = s->next;
        seen_free (ov, s);
    }
    ov->dedup.tail = NULL;
    idmap_destroy (&ov->dedup.map);
}

size_t dedup_bytes (const struct overlay *ov)
{
    return ov->dedup.bytes;
}

/* "route ids, bottom first|matchtag": the client's id, the origin's
 * rank (which its broker pushed), then any further hops' ids.  -1 for a
 * message with no client id under the origin's rank: a broker's own
 * requests (modules, built-ins) count their matchtags again from 1 when
 * the broker restarts, so they are neither remembered nor sent again. */
static int dedup_key (const msg_t *msg, char *key, size_t len, uint64_t *hash)
{
    int n = msg_route_count (msg);
    size_t off = 0;
    uint64_t h = 14695981039346656037ULL;   /* FNV-1a */

    if (n < 2)
        return -1;
    key[0] = '\0';
    for (int i = n - 1; i >= 0 && off < len; i--)
        off += (size_t)snprintf (key + off, len - off, "%s|",
                                 msg_route_at (msg, i));
    if (off < len)
        off += (size_t)snprintf (key + off, len - off, "%u",
                                 (unsigned)msg_get_matchtag (msg));
    if (off >= len)
        return -1;
    for (const char *s = key; *s; s++) {
        h ^= (uint8_t)*s;
        h *= 1099511628211ULL;
    }
    *hash = h == UINT64_MAX ? 1 : h;
    return 0;
}

static struct seen *lookup (struct overlay *ov, const char *key,
                            uint64_t hash)
{
    struct seen **sp = idmap_get (ov->dedup.map, hash);

    return sp && !strcmp ((*sp)->key, key) ? *sp : NULL;
}

/* Drop the oldest entry. */
static void pop_oldest (struct overlay *ov)
{
    struct seen *s = ov->dedup.head;
    struct seen **sp;

    if (!s)
        return;
    if (!(ov->dedup.head = s->next))
        ov->dedup.tail = NULL;
    if ((sp = idmap_get (ov->dedup.map, s->hash)) && *sp == s)
        idmap_delete (ov->dedup.map, s->hash);
    seen_free (ov, s);
}

/* Expired entries go; past the bound, the oldest too (counted). */
static void trim (struct overlay *ov, double now)
{
    while (ov->dedup.head && ov->dedup.head->expires < now)
        pop_oldest (ov);
    while (ov->dedup.head
           && ov->dedup.bytes > (size_t)ov->cfg.dedup_bytes) {
        pop_oldest (ov);
        ov->dedup.evicted++;
        ovl_log_limited (ov, LOG_WARNING, "dedup: forgot a request run here "
                         "before its origin stopped tracking it "
                         "(overlay.dedup_bytes); %llu so far",
                         (unsigned long long)ov->dedup.evicted);
    }
}

static void remember (struct overlay *ov, const char *key, uint64_t hash,
                      double now)
{
    size_t klen = strlen (key) + 1;
    struct seen *s = malloc (sizeof (*s) + klen);
    struct seen **sp;
    int created;

    if (!s)
        return;
    if (!(sp = idmap_put (ov->dedup.map, hash, &created)) || !created) {
        free (s);       /* no memory, or a collision: not remembered */
        return;
    }
    memcpy (s->key, key, klen);
    s->next = NULL;
    s->hash = hash;
    s->rsp = NULL;
    s->expires = now + ov->cfg.rpc_timeout * 2 + 5;
    s->cost = malloc_usable_size (s) + SLOT_COST;
    *sp = s;
    if (ov->dedup.tail)
        ov->dedup.tail->next = s;
    else
        ov->dedup.head = s;
    ov->dedup.tail = s;
    ov->dedup.bytes += s->cost;
    trim (ov, now);
}

/* The rank a response goes to: the top of the request's route stack, as
 * the broker routes responses. */
static int origin_rank (struct overlay *ov, const msg_t *req, uint32_t *rank)
{
    const char *top = msg_route_first (req);
    char *end;
    unsigned long r;

    if (!top || !*top)
        return -1;
    errno = 0;
    r = strtoul (top, &end, 10);
    if (errno || *end || r >= ov->size || r == ov->rank)
        return -1;
    *rank = (uint32_t)r;
    return 0;
}

/* Send the cached response to 'origin' again. */
static void answer_again (struct overlay *ov, struct seen *s, uint32_t origin)
{
    struct envelope env = { .kind = ENV_DATA, .ttl = ov->ttl,
                            .source = ov->rank, .dest = origin };
    struct frame *f = frame_incref (s->rsp);

    if (route_ttl_step (&env) < 0 || route_out (ov, &env, &f, 1, -1) < 0)
        frame_decref (&f);
    else
        ov->dedup.answered++;
}

int dedup_request (struct overlay *ov, const struct envelope *env,
                   const msg_t *req)
{
    char key[DEDUP_KEY_MAX];
    uint64_t hash;
    struct seen *s;
    uint32_t origin;
    double now = ovl_now (ov);

    if (env->dest != ov->rank || env->source == ov->rank
        || (msg_get_flags (req) & (MSGFLAG_NORESPONSE | MSGFLAG_STREAMING))
        || dedup_key (req, key, sizeof (key), &hash) < 0)
        return 0;
    trim (ov, now);
    if (!(s = lookup (ov, key, hash))) {
        remember (ov, key, hash, now);
        return 0;
    }
    ov->dedup.copies++;
    if (s->rsp && origin_rank (ov, req, &origin) == 0)
        answer_again (ov, s, origin);
    return 1;
}

void dedup_response (struct overlay *ov, const msg_t *rsp,
                     const struct frame *wire)
{
    char key[DEDUP_KEY_MAX];
    uint64_t hash;
    struct seen *s;

    if (dedup_key (rsp, key, sizeof (key), &hash) < 0
        || (msg_get_flags (rsp) & MSGFLAG_STREAMING)
        || !(s = lookup (ov, key, hash)) || s->rsp
        || !(s->rsp = frame_create (frame_data (wire), frame_size (wire))))
        return;
    s->cost += frame_footprint (s->rsp);
    ov->dedup.bytes += frame_footprint (s->rsp);
    trim (ov, ovl_now (ov));
}
