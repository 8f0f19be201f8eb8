/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* rolecap.c: the owner role across the overlay (rolecap.h).
 *
 * One copy of the rule, so that a request's role is decided the same way
 * whichever host's overlay it arrives on.
 */
#include <stdio.h>
#include <string.h>

#include "rolecap.h"

static bool in_list (const char *s, const char *const *list, size_t n)
{
    for (size_t i = 0; s && i < n; i++)
        if (!strcmp (s, list[i]))
            return true;
    return false;
}

const char *rolecap_method (const char *topic, const char *service)
{
    size_t n = service ? strlen (service) : 0;

    if (!topic || !n || strncmp (topic, service, n) != 0 || topic[n] != '.')
        return NULL;
    return topic + n + 1;
}

/* overlay.ready and overlay.moved believe a rank only about itself (and
 * check its signature), overlay.contact gives out only the key the
 * bootstrap gave the asking rank, overlay.gather only reads. */
bool rolecap_core_method (const char *method)
{
    static const char *const methods[] = { "ready", "contact", "gather",
                                           "moved" };

    return in_list (method, methods, sizeof (methods) / sizeof (methods[0]));
}

bool rolecap_core_signed (const char *method)
{
    static const char *const methods[] = { "ready", "moved" };

    return in_list (method, methods, sizeof (methods) / sizeof (methods[0]));
}

/* The top of the route stack is the rank of the broker that sent the
 * request into the overlay (its answer goes there); a top that is not
 * that rank written canonically names someone else. */
static bool route_names (const msg_t *req, uint32_t rank)
{
    char want[16];
    const char *top = msg_route_first (req);

    snprintf (want, sizeof (want), "%u", (unsigned)rank);
    return top && !strcmp (top, want);
}

static bool own_word (const struct rolecap_origin *o)
{
    return o->signed_by_origin > 0
           || (o->signed_by_origin == 0 && !o->unverified);
}

bool rolecap_apply (msg_t *req, const struct rolecap_origin *origin,
                    bool peer_method)
{
    uint32_t roles = msg_get_rolemask (req);

    if (!(roles & MSG_ROLE_OWNER))
        return false;
    if (route_names (req, origin->rank)
        && (peer_method || (origin->admin && own_word (origin))))
        return false;
    msg_set_rolemask (req, (roles & ~MSG_ROLE_OWNER) | MSG_ROLE_USER);
    return true;
}
