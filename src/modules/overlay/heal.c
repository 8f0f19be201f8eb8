/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* heal.c: substitute links (see heal.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/common/libutil/idmap.h"
#include "fence.h"
#include "heal.h"
#include "overlay.h"
#include "ovlog.h"
#include "route.h"

#define CONTACT_PATIENCE 3.0   /* seconds before asking someone else */
#define SUBSTITUTE_REACH 16    /* ring distance searched for a substitute */

int heal_init (struct overlay *ov)
{
    ov->heal.degree = ov->peers->n;
    ov->heal.threshold = ovconf_heal_threshold (&ov->cfg, ov->topo, ov->rank);
    if (!(ov->heal.contacts = idmap_create (sizeof (uint32_t))))
        return -1;
    return 0;
}

void heal_fini (struct overlay *ov)
{
    idmap_destroy (&ov->heal.contacts);
}

/* Take rank out of the peer table; what waited for it goes another way. */
static void peer_remove (struct overlay *ov, uint32_t rank)
{
    struct peer *p = peers_detach (ov->peers, rank);

    if (!p)
        return;
    route_requeue (ov, p);
    peer_destroy (&p);
}

static void flood_link (struct overlay *ov, const char *op, uint32_t a,
                        uint32_t b, int except)
{
    json_t *o = json_pack ("{s:s s:i s:i}", "op", op, "a", (int)a, "b", (int)b);

    if (!o)
        return;
    for (int i = 0; i < ov->peers->n; i++) {
        struct peer *p = ov->peers->v[i];
        if ((int)p->rank != except && peer_is_up (p))
            route_send_control (ov, p, ENV_LINK, o);
    }
    json_decref (o);
}

void heal_link_apply (struct overlay *ov, const char *op, uint32_t a,
                      uint32_t b, int from)
{
    bool add = !strcmp (op, "add");
    bool changed;

    if (a >= ov->size || b >= ov->size || a == b)
        return;
    if (add)
        changed = bgn_router_add_link (ov->router, a, b) == 0;
    else
        changed = bgn_router_remove_link (ov->router, a, b) == 0;
    if (!changed)
        return;
    ovl_log (ov, LOG_INFO, "substitute link %u-%u %s", (unsigned)a,
             (unsigned)b, add ? "added" : "removed");
    flood_link (ov, add ? "add" : "del", a, b, from);
    /* the far end of a dropped substitute link forgets its peer */
    if (!add && (a == ov->rank || b == ov->rank)) {
        uint32_t other = a == ov->rank ? b : a;
        struct peer *p = peers_lookup (ov->peers, other);
        if (p && p->substitute && !p->connector) {
            peer_remove (ov, other);
            ov->heal.nsubst--;
        }
    }
}

/* Forget a substitute link we made: tell everyone, disconnect, remove. */
static void substitute_drop (struct overlay *ov, struct peer *p)
{
    uint32_t rank = p->rank;

    heal_link_apply (ov, "del", ov->rank, rank, -1);
    if (p->endpoint[0])
        ov->io->disconnect (ov->ctx, rank, p->endpoint);
    peer_remove (ov, rank);
    ov->heal.nsubst--;
}

/* Every graph neighbour is back: drop the links we made. */
static void drop_substitutes (struct overlay *ov)
{
    for (int i = 0; i < ov->peers->n; i++) {
        struct peer *p = ov->peers->v[i];
        if (!p->substitute || !p->connector)
            continue;
        ovl_log (ov, LOG_INFO, "healing: neighbours are back, dropping "
                 "substitute link to %u", (unsigned)p->rank);
        json_t *o = json_pack ("{s:s s:i s:i}", "op", "del", "a",
                               (int)ov->rank, "b", (int)p->rank);
        if (o && peer_is_up (p))
            route_send_control (ov, p, ENV_LINK, o);
        json_decref (o);
        substitute_drop (ov, p);
        i = -1;   /* the table changed: start over */
    }
}

/* A substitute link the far end asked for but does not greet: it dropped
 * the link while this broker could not hear its "del" (stopped, or
 * rejoining as a new incarnation, which drops what was sent to the old
 * one), so nobody will ever come.  Waiting longer than a peer timeout
 * (and than a contact's patience) for the greeting is waiting for
 * nothing. */
static bool substitute_abandoned (struct overlay *ov, struct peer *p,
                                  double now)
{
    double patience = ov->cfg.peer_timeout > CONTACT_PATIENCE
                      ? ov->cfg.peer_timeout : CONTACT_PATIENCE;

    return p->substitute && !p->connector && p->state != PEER_UP
           && now - p->state_since > patience;
}

static void substitute_forget (struct overlay *ov, struct peer *p)
{
    uint32_t rank = p->rank;

    ovl_log (ov, LOG_INFO, "healing: substitute link from %u was never "
             "(or is no longer) greeted; forgetting it", (unsigned)rank);
    heal_link_apply (ov, "del", ov->rank, rank, -1);
    if (peers_lookup (ov->peers, rank)) {   /* the graph never had it */
        peer_remove (ov, rank);
        ov->heal.nsubst--;
    }
}

static bool has_substitute_for (struct overlay *ov, uint32_t lost)
{
    struct idmap_iter it;

    for (int i = 0; i < ov->peers->n; i++)
        if (ov->peers->v[i]->substitute
            && ov->peers->v[i]->sub_for == (int)lost)
            return true;
    for (uint32_t *v = idmap_first (ov->heal.contacts, &it); v;
         v = idmap_next (&it))
        if (*v == lost)
            return true;
    return false;
}

/* The live rank nearest to 'lost' on the ring that we are not linked to
 * or already asking, or -1. */
static int choose_substitute (struct overlay *ov, uint32_t lost)
{
    for (uint32_t d = 1; d <= SUBSTITUTE_REACH && d < ov->size; d++) {
        for (int sign = 1; sign >= -1; sign -= 2) {
            uint32_t r = (uint32_t)(((int64_t)lost + sign * (int64_t)d
                                     + ov->size) % ov->size);
            if (r == ov->rank || fence_is_fenced (ov, r)
                || peers_lookup (ov->peers, r)
                || idmap_get (ov->heal.contacts, r))
                continue;
            if (bgn_router_reachable (ov->router, ov->rank, r) != 1)
                continue;
            return (int)r;
        }
    }
    return -1;
}

static void contact (struct overlay *ov, uint32_t sub, uint32_t lost)
{
    char payload[160];
    uint32_t *slot;
    msg_t *msg;

    snprintf (payload, sizeof (payload),
              "{\"rank\":%u,\"pubkey\":\"%s\",\"lost\":%u}",
              (unsigned)ov->rank, ov->pubkey, (unsigned)lost);
    char topic[64];
    if (!(msg = msg_request_create (ovconf_topic (&ov->cfg, "contact", topic,
                                                  sizeof (topic)),
                                    sub, payload)))
        return;
    if ((slot = idmap_put (ov->heal.contacts, sub, NULL)))
        *slot = lost;
    ovl_log (ov, LOG_INFO, "healing: asking rank %u to stand in for lost "
             "neighbour %u", (unsigned)sub, (unsigned)lost);
    ov->io->request (ov->ctx, msg);
}

static bool is_lost (struct overlay *ov, struct peer *p)
{
    return p->state == PEER_DOWN || fence_is_fenced (ov, p->rank);
}

void heal_check (struct overlay *ov, double now)
{
    int lost_neighbours = 0;

    if (now - ov->heal.contacts_cleared > CONTACT_PATIENCE) {
        idmap_clear (ov->heal.contacts);   /* unanswered: try others */
        ov->heal.contacts_cleared = now;
    }
    if (ov->heal.threshold <= 0 || ov->size < 3)
        return;
    /* a substitute that died is no substitute */
    for (int i = 0; i < ov->peers->n; i++) {
        struct peer *p = ov->peers->v[i];
        if (p->substitute && p->connector && p->state == PEER_DOWN) {
            substitute_drop (ov, p);
            i = -1;   /* the table changed: start over */
        }
        else if (substitute_abandoned (ov, p, now)) {
            substitute_forget (ov, p);
            i = -1;
        }
    }
    for (int i = 0; i < ov->peers->n; i++)
        if (!ov->peers->v[i]->substitute && is_lost (ov, ov->peers->v[i]))
            lost_neighbours++;
    if (lost_neighbours == 0) {
        if (ov->heal.nsubst > 0)
            drop_substitutes (ov);
        return;
    }
    int deficit = ov->heal.threshold - ov->peers->up;
    for (int i = 0; i < ov->peers->n && deficit > 0; i++) {
        struct peer *p = ov->peers->v[i];
        if (p->substitute || !is_lost (ov, p)
            || has_substitute_for (ov, p->rank))
            continue;
        int sub = choose_substitute (ov, p->rank);
        if (sub >= 0) {
            contact (ov, (uint32_t)sub, p->rank);
            deficit--;
        }
    }
}

struct peer *heal_contact_response (struct overlay *ov, const msg_t *rsp)
{
    const char *payload = msg_get_payload (rsp, NULL);
    const char *endpoint, *pubkey = "";
    json_t *o = NULL;
    int errnum = 0, rank, lost = -1;
    struct peer *p = NULL;

    msg_get_errnum (rsp, &errnum);
    if (errnum || !payload || !(o = json_loads (payload, 0, NULL))
        || json_unpack (o, "{s:i s:s s?s s?i}", "rank", &rank, "endpoint",
                        &endpoint, "pubkey", &pubkey, "lost", &lost) < 0
        || rank < 0 || (uint32_t)rank >= ov->size)
        goto done;   /* the contact entry expires with a later heal round */
    if (!idmap_get (ov->heal.contacts, (uint32_t)rank))
        goto done;   /* we asked no such rank: unsolicited, dropped */
    idmap_delete (ov->heal.contacts, (uint32_t)rank);
    if (peers_lookup (ov->peers, rank)
        || !(p = peers_insert (ov->peers, ov->rank, rank, ovl_now (ov))))
        goto done;
    peer_substitute (p, true, lost);
    peer_set_contact (p, endpoint, pubkey);
    ov->heal.nsubst++;
    if (ov->io->connect (ov->ctx, p->rank, p->endpoint, p->pubkey) < 0)
        ovl_log (ov, LOG_ERR, "healing: connect to %u at %s: %s",
                 (unsigned)rank, p->endpoint, strerror (errno));
done:
    json_decref (o);
    return p;
}

void heal_contact_request (struct overlay *ov, const msg_t *req)
{
    json_t *o = json_loads (msg_get_payload (req, NULL) ?: "", 0, NULL);
    const char *pubkey = "";
    json_t *rsp = NULL, *lost;
    struct peer *p;
    char *s = NULL;
    int rank;

    if (!o || json_unpack (o, "{s:i s?s}", "rank", &rank, "pubkey",
                           &pubkey) < 0
        || rank < 0 || (uint32_t)rank >= ov->size
        || (uint32_t)rank == ov->rank) {
        ov->io->respond_error (ov->ctx, req, EPROTO, "bad contact request");
        goto done;
    }
    if (!(p = peers_lookup (ov->peers, rank))) {
        if (!(p = peers_insert (ov->peers, ov->rank, rank, ovl_now (ov)))) {
            ov->io->respond_error (ov->ctx, req, ENOMEM, NULL);
            goto done;
        }
        peer_substitute (p, false, -1);
        ov->heal.nsubst++;
        peer_set_contact (p, NULL, pubkey);
        if (ov->cfg.curve && strlen (pubkey) == 40)
            ov->io->authorize (ov->ctx, pubkey);
    }
    rsp = json_pack ("{s:i s:s s:s}", "rank", (int)ov->rank,
                     "endpoint", ov->endpoint, "pubkey", ov->pubkey);
    if (rsp && (lost = json_object_get (o, "lost")))
        json_object_set (rsp, "lost", lost);
    if (rsp && (s = json_dumps (rsp, JSON_COMPACT)))
        ov->io->respond (ov->ctx, req, s);
    else
        ov->io->respond_error (ov->ctx, req, ENOMEM, NULL);
done:
    free (s);
    json_decref (rsp);
    json_decref (o);
}
