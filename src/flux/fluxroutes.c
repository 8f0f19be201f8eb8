/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* fluxroutes.c: route stacks between Flux's messages and bgn's (see
 * fluxroutes.h). */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fluxroutes.h"

bool fluxroutes_is_token (const char *id)
{
    size_t n = strlen (FLUXROUTES_TOKEN_PREFIX);

    if (strncmp (id, FLUXROUTES_TOKEN_PREFIX, n) != 0 || !id[n])
        return false;
    return strspn (id + n, "0123456789") == strlen (id + n);
}

/* Push a Flux route id onto msg's stack.  The origin's rank and its
 * token travel in Flux as one id, "RANK:TOKEN" (one route frame per
 * overlay crossing, as over the TBON): on bgn's stack they are two. */
static int push_from_flux (msg_t *msg, const char *id)
{
    const char *colon = strchr (id, ':');
    char rank[16];
    uint32_t r;

    if (colon && (size_t)(colon - id) < sizeof (rank)
        && fluxroutes_is_token (colon + 1)) {
        memcpy (rank, id, (size_t)(colon - id));
        rank[colon - id] = '\0';
        if (msg_route_id_rank (rank, &r))
            return msg_route_push (msg, colon + 1) < 0
                       || msg_route_push (msg, rank) < 0 ? -1 : 0;
    }
    return msg_route_push (msg, id);
}

/* Flux's route stack onto msg's, bottom first.  Flux reads a stack
 * from its top only: a copy is taken apart. */
int fluxroutes_to_bgn (const flux_msg_t *fmsg, msg_t *msg)
{
    int n = flux_msg_route_count (fmsg);
    char *ids[MSG_MAX_ROUTES];
    flux_msg_t *cpy;
    int k = 0, rc = -1;

    if (n <= 0)
        return 0;
    if (n > MSG_MAX_ROUTES) {
        errno = EPROTO;
        return -1;
    }
    if (!(cpy = flux_msg_copy (fmsg, false)))
        return -1;
    for (; k < n; k++) {
        const char *id = flux_msg_route_last (cpy);
        if (!id || !(ids[k] = strdup (id)))
            goto done;
        if (flux_msg_route_delete_last (cpy) < 0) {
            k++;
            goto done;
        }
    }
    rc = 0;
    for (int i = n - 1; i >= 0 && rc == 0; i--)
        rc = push_from_flux (msg, ids[i]);
done:
    for (int i = 0; i < k; i++)
        free (ids[i]);
    flux_msg_destroy (cpy);
    return rc;
}

/* msg's route stack onto Flux's, bottom first; a token with its rank
 * above it become one id (push_from_flux). */
int fluxroutes_to_flux (const msg_t *msg, flux_msg_t *f)
{
    char pair[MSG_MAX_ROUTEID * 2 + 2];
    uint32_t r;

    flux_msg_route_enable (f);
    for (int i = msg_route_count (msg) - 1; i >= 0; i--) {
        const char *id = msg_route_at (msg, i);
        if (i == 1 && fluxroutes_is_token (id)
            && msg_route_id_rank (msg_route_at (msg, 0), &r)) {
            snprintf (pair, sizeof (pair), "%u:%s", (unsigned)r, id);
            return flux_msg_route_push (f, pair);
        }
        if (flux_msg_route_push (f, id) < 0)
            return -1;
    }
    return 0;
}

