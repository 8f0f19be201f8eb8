/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* peer.c: the peer table (see peer.h).
 *
 * A broker has O(log N) peers, so a sorted array with binary search and
 * memmove for the rare insert (substitute links) is all it needs.
 */
#include <errno.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "peer.h"

const char *peer_state_str (int s)
{
    switch (s) {
    case PEER_CONNECTING: return "connecting";
    case PEER_UP: return "up";
    case PEER_SUSPECT: return "suspect";
    case PEER_DOWN: return "down";
    }
    return "unknown";
}

static struct peer *peer_create (uint32_t self, uint32_t rank, double now)
{
    struct peer *p = calloc (1, sizeof (*p));

    if (!p)
        return NULL;
    p->rank = rank;
    snprintf (p->id, sizeof (p->id), "%u", (unsigned)rank);
    p->connector = self < rank;
    p->sub_for = -1;
    p->state = PEER_CONNECTING;
    p->state_since = now;
    p->live.rtt_us = -1;
    return p;
}

void peer_destroy (struct peer **pp)
{
    if (pp && *pp) {
        struct pending *pd;
        while ((pd = backlog_pop (&(*pp)->backlog)))
            pending_destroy (&pd);
        free (*pp);
        *pp = NULL;
    }
}

struct peers *peers_create (uint32_t self, const uint32_t *ranks, int n,
                            double now)
{
    struct peers *ps = calloc (1, sizeof (*ps));

    if (!ps || !(ps->v = calloc (n > 0 ? n : 1, sizeof (ps->v[0])))
        || !(ps->ranks = calloc (n > 0 ? n : 1, sizeof (ps->ranks[0]))))
        goto error;
    for (int i = 0; i < n; i++) {
        if (!(ps->v[i] = peer_create (self, ranks[i], now)))
            goto error;
        ps->ranks[i] = ranks[i];
        ps->n++;
    }
    return ps;
error:
    peers_destroy (&ps);
    errno = ENOMEM;
    return NULL;
}

void peers_destroy (struct peers **psp)
{
    if (psp && *psp) {
        struct peers *ps = *psp;
        for (int i = 0; i < ps->n; i++)
            peer_destroy (&ps->v[i]);
        free (ps->v);
        free (ps->ranks);
        free (ps);
        *psp = NULL;
    }
}

/* Index of rank, or -(insertion point) - 1. */
static int bisect (const struct peers *ps, uint32_t rank)
{
    int lo = 0, hi = ps->n - 1;

    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (ps->ranks[mid] == rank)
            return mid;
        if (ps->ranks[mid] < rank)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -lo - 1;
}

struct peer *peers_lookup (const struct peers *ps, uint32_t rank)
{
    int i = bisect (ps, rank);
    return i >= 0 ? ps->v[i] : NULL;
}

struct peer *peers_lookup_id (const struct peers *ps, const void *id,
                              size_t len)
{
    const char *s = id;
    uint64_t r = 0;

    /* canonical decimal only: no sign, no spaces, no leading zero */
    if (len == 0 || len > 10 || (s[0] == '0' && len > 1))
        return NULL;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return NULL;
        r = r * 10 + (uint64_t)(s[i] - '0');
    }
    if (r > UINT32_MAX)
        return NULL;
    return peers_lookup (ps, (uint32_t)r);
}

struct peer *peers_insert (struct peers *ps, uint32_t self, uint32_t rank,
                           double now)
{
    int i = bisect (ps, rank);
    struct peer *p, **nv;
    uint32_t *nr;

    if (i >= 0)
        return ps->v[i];
    i = -i - 1;
    if (!(p = peer_create (self, rank, now)))
        return NULL;
    if (!(nv = realloc (ps->v, (ps->n + 1) * sizeof (ps->v[0])))) {
        peer_destroy (&p);
        return NULL;
    }
    ps->v = nv;
    if (!(nr = realloc (ps->ranks, (ps->n + 1) * sizeof (ps->ranks[0])))) {
        peer_destroy (&p);
        return NULL;
    }
    ps->ranks = nr;
    memmove (&ps->v[i + 1], &ps->v[i], (ps->n - i) * sizeof (ps->v[0]));
    memmove (&ps->ranks[i + 1], &ps->ranks[i],
             (ps->n - i) * sizeof (ps->ranks[0]));
    ps->v[i] = p;
    ps->ranks[i] = rank;
    ps->n++;
    return p;
}

struct peer *peers_detach (struct peers *ps, uint32_t rank)
{
    int i = bisect (ps, rank);
    struct peer *p;

    if (i < 0)
        return NULL;
    p = ps->v[i];
    if (peer_is_up (p))
        ps->up--;
    memmove (&ps->v[i], &ps->v[i + 1], (ps->n - i - 1) * sizeof (ps->v[0]));
    memmove (&ps->ranks[i], &ps->ranks[i + 1],
             (ps->n - i - 1) * sizeof (ps->ranks[0]));
    ps->n--;
    ps->changed = true;
    return p;
}

int peers_set_state (struct peers *ps, struct peer *p, int state, double now)
{
    int old = p->state;
    bool was_up = peer_is_up (p);

    if (old == state)
        return old;
    p->state = state;
    p->state_since = now;
    if (peer_is_up (p) && !was_up)
        ps->up++;
    if (!peer_is_up (p) && was_up)
        ps->up--;
    if (peer_is_up (p))
        p->problem[0] = '\0';
    ps->changed = true;
    return old;
}

void peer_set_contact (struct peer *p, const char *endpoint,
                       const char *pubkey)
{
    if (endpoint)
        snprintf (p->endpoint, sizeof (p->endpoint), "%s", endpoint);
    if (pubkey)
        snprintf (p->pubkey, sizeof (p->pubkey), "%s", pubkey);
}

void peer_substitute (struct peer *p, bool connector, int sub_for)
{
    p->substitute = true;
    p->connector = connector;
    p->sub_for = sub_for;
}

void peer_set_problem (struct peer *p, const char *fmt, ...)
{
    va_list ap;

    va_start (ap, fmt);
    vsnprintf (p->problem, sizeof (p->problem), fmt, ap);
    va_end (ap);
}

void peer_reset_since (struct peer *p, double now)
{
    p->state_since = now;
}

bool peers_changed (struct peers *ps)
{
    bool c = ps->changed;
    ps->changed = false;
    return c;
}

size_t pending_cost (const struct pending *pd)
{
    size_t c = malloc_usable_size ((void *)pd);

    for (int i = 0; i < pd->nframes; i++)
        if (pd->frames[i])
            c += frame_footprint (pd->frames[i]);
    return c;
}

void backlog_push (struct backlog *bl, struct pending *pd)
{
    pd->cost = pending_cost (pd);
    bl->bytes += pd->cost;
    pd->next = NULL;
    if (bl->tail)
        bl->tail->next = pd;
    else
        bl->head = pd;
    bl->tail = pd;
    bl->count++;
}

struct pending *backlog_pop (struct backlog *bl)
{
    struct pending *pd = bl->head;

    if (!pd)
        return NULL;
    bl->head = pd->next;
    if (!bl->head)
        bl->tail = NULL;
    bl->count--;
    bl->bytes -= pd->cost;
    pd->next = NULL;
    return pd;
}

struct pending *pending_create (const struct envelope *env, int n, double now)
{
    struct pending *pd = calloc (1, sizeof (*pd) + n * sizeof (pd->frames[0]));

    if (!pd)
        return NULL;
    pd->env = *env;
    pd->nframes = n;
    pd->queued = now;
    return pd;
}

void pending_destroy (struct pending **pdp)
{
    if (pdp && *pdp) {
        frame_decref_all ((*pdp)->frames, (*pdp)->nframes);
        free (*pdp);
        *pdp = NULL;
    }
}
