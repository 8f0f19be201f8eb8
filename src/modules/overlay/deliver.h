/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* deliver.h: a broker message for this rank, checked and handed to the
 * broker (io->deliver) with what the broker may believe of its origin
 * (struct bgn_msg_info: detour, signature).
 */
#ifndef BGN_OVERLAY_DELIVER_H
#define BGN_OVERLAY_DELIVER_H

#include <stdint.h>

struct overlay;
struct peer;
struct envelope;
struct frame;

struct deliver_state {          /* deliver.c */
    uint64_t delivered;         /* messages delivered to this broker */
};

/* The message body[0..n-1] (one frame) that peer 'via' passed us, for
 * this rank: decoded, dropped if stale, a copy or our own answer (the
 * tracker's), else delivered; the frames stay the caller's. */
void deliver_local (struct overlay *ov, const struct peer *via,
                    const struct envelope *env, struct frame **body, int n);

#endif
