/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* membership.c: rank 0's membership events (membership.h).
 *
 * Apart from fence.c because it only reads the view and talks to the
 * event layer: fence.c notes what changed, and publishes with its batch.
 */
#include <stdint.h>
#include <stdlib.h>
#include <jansson.h>

#include "src/common/libutil/idmap.h"
#include "events.h"
#include "fenceview.h"
#include "membership.h"
#include "overlay.h"

int membership_init (struct overlay *ov)
{
    if (!(ov->membership.changed = idmap_create (1)))
        return -1;
    return 0;
}

void membership_fini (struct overlay *ov)
{
    idmap_destroy (&ov->membership.changed);
}

void membership_note (struct overlay *ov, uint32_t rank)
{
    if (ov->rank == 0)
        idmap_put (ov->membership.changed, rank, NULL);
}

void membership_publish (struct overlay *ov)
{
    json_t *fenced = json_array (), *live = json_array (), *o = NULL;
    struct idmap_iter it;
    char *payload = NULL;
    msg_t *ev;

    if (ov->rank != 0 || !ov->events || !fenced || !live
        || idmap_size (ov->membership.changed) == 0)
        goto done;
    for (void *v = idmap_first (ov->membership.changed, &it); v;
         v = idmap_next (&it)) {
        const struct fence_entry *f = fence_lookup (ov, (uint32_t)it.id);
        if (!f)
            continue;
        json_array_append_new (f->fenced ? fenced : live,
                               json_pack ("{s:i s:I s:s}", "rank",
                                          (int)it.id, "incarnation",
                                          (json_int_t)f->inc, "reason",
                                          fence_reason (ov, f)));
    }
    idmap_clear (ov->membership.changed);
    if (!(o = json_pack ("{s:O s:O}", "fenced", fenced, "live", live))
        || !(payload = json_dumps (o, JSON_COMPACT)))
        goto done;
    char topic[64];
    if ((ev = msg_event_create (ovconf_topic (&ov->cfg, "membership", topic,
                                              sizeof (topic)), payload))) {
        msg_set_matchtag (ev, 0);
        evlayer_publish (ov->events, ev, NULL);
    }
done:
    free (payload);
    json_decref (o);
    json_decref (fenced);
    json_decref (live);
}
