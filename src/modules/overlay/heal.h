/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* heal.h: self-healing with substitute links.
 *
 * When fewer than the threshold of a broker's peers are up, it asks live
 * ranks near each lost neighbour (on the ring: X+1, X-1, X+2, ...) to
 * accept a substitute link (an overlay.contact request), and connects to
 * those that answer.  Substitute links are flooded (ENV_LINK) so every
 * router uses them.  Once every graph neighbour is back, the substitutes
 * are dropped and the graph is the plain topology again.  The default
 * threshold is half the topology degree (at least 2): the self-healing
 * paper's point is to act while a broker still has links to spare,
 * before a few more failures could isolate it.
 */
#ifndef BGN_OVERLAY_HEAL_H
#define BGN_OVERLAY_HEAL_H

#include <stdint.h>

#include "src/common/libmsg/message.h"

struct overlay;
struct peer;
struct idmap;

struct heal_state {             /* heal.c */
    int threshold;              /* heal below this many peers up */
    int degree;                 /* topology degree, without substitutes */
    int nsubst;
    struct idmap *contacts;     /* asked rank -> lost neighbour */
    double contacts_cleared;
};

int heal_init (struct overlay *ov);
void heal_fini (struct overlay *ov);

/* Look at the peers and ask for (or drop) substitutes as needed. */
void heal_check (struct overlay *ov, double now);

/* A link change "add"/"del" of a--b heard from 'from' (-1: made here):
 * applied to the router and flooded on if it was news. */
void heal_link_apply (struct overlay *ov, const char *op, uint32_t a,
                      uint32_t b, int from);

/* overlay.contact: someone asks us to accept a substitute link. */
void heal_contact_request (struct overlay *ov, const msg_t *req);
/* The answer to our request: the new substitute peer we connected to
 * (the caller greets it), or NULL. */
struct peer *heal_contact_response (struct overlay *ov, const msg_t *rsp);

#endif
