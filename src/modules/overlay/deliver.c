/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* deliver.c: a broker message that reached this rank, handed to the
 * broker (see deliver.h).
 *
 * Between the envelope (overlay.c's recv_data found the message is for
 * us) and the broker lie the checks only a destination makes: the body
 * decoded (a signed request without its signature block is malformed),
 * the answer to one of our own requests taken by the tracker, a request
 * meant for a fenced incarnation of this broker or a copy of one already
 * run dropped, and how far the broker may trust the origin (a detour
 * through another peer, the origin's signature).  Apart from overlay.c
 * because it is one path with its own rules, called only from there; it
 * calls down to the tracker, dedup, signatures, fences and hello's
 * rejoin time.
 */
#include <stdbool.h>
#include <stdio.h>

#include "body.h"
#include "deliver.h"
#include "dedup.h"
#include "fence.h"
#include "hello.h"
#include "overlay.h"
#include "ovlog.h"
#include "ovsign.h"
#include "tracker.h"

/* A message naming as its source a neighbour whose link is up, but
 * handed to us by another peer: a detour, or that peer's lie.  The
 * broker then grants it no more than an unknown origin (access.h). */
static int source_unverified (struct overlay *ov, const struct peer *via,
                              uint32_t source)
{
    const struct peer *sp = source != via->rank
                                ? peers_lookup (ov->peers, source)
                                : NULL;

    return sp && peer_is_up (sp);
}

/* Is stamp one of an incarnation of this life (fence_own_inc): the one
 * now, or one refuted since (a few; at most 64 looked at)? */
static bool own_stamp (struct overlay *ov, uint16_t stamp)
{
    for (uint64_t inc = ov->incarnation, i = 0;
         i < 64 && fence_own_inc (ov, inc); inc--, i++)
        if (stamp == envelope_inc_stamp (inc))
            return true;
    return false;
}

/* A request to this rank meant for an incarnation of it that was fenced
 * (its stamp, envelope.h): its origin fails it when the fence reaches it,
 * so it must not run here now.  Only a broker that rejoined checks: a
 * process that started anew cannot tell its own stamp from a
 * predecessor's, and its predecessor's requests are 'outcome unknown'
 * anyway (the destination died). */
static bool meant_for_fenced (struct overlay *ov, const struct envelope *env)
{
    if (env->dest != ov->rank || hello_rejoined_at (ov) <= 0
        || own_stamp (ov, env->stamp))
        return false;
    hello_count_stale (ov);
    ovl_log_limited (ov, LOG_NOTICE, "dropped a request from rank %u meant "
                     "for an incarnation of this broker that was fenced (not "
                     "run: its origin reports it failed)",
                     (unsigned)env->source);
    return true;
}

void deliver_local (struct overlay *ov, const struct peer *via,
                    const struct envelope *env, struct frame **body, int n)
{
    char reason[128] = "";
    struct bgn_msg_info info = { .hops = env->hops, .source = env->source,
                                 .from_overlay = 1, .ttl = env->ttl,
                                 .source_unverified = source_unverified (
                                     ov, via, env->source) };
    size_t len = n == 1 ? frame_size (body[0]) : 0;
    int sig = 0;
    msg_t *msg = NULL;

    /* a signed request ends with its signature block (ovsign.h): the
     * message is what comes before it */
    if (n == 1 && (env->flags & ENV_FLAG_SIGNED)
        && len < ENV_SIZE + ENV_SIG_BLOCK)
        snprintf (reason, sizeof (reason), "signed, without a signature");
    else if (n == 1)
        msg = body_decode_len (body[0],
                               (env->flags & ENV_FLAG_SIGNED)
                                   ? len - ENV_SIG_BLOCK : len,
                               reason, sizeof (reason));
    if (!msg) {
        route_count (ov, RC_malformed_drops, 1);
        ovl_log_limited (ov, LOG_WARNING, "dropped malformed message from "
                         "rank %u: %s", (unsigned)env->source, reason);
        return;
    }
    if (tracker_response (ov, msg, env->source)
        || (msg_get_type (msg) == MSGTYPE_REQUEST
            && (meant_for_fenced (ov, env) || dedup_request (ov, env, msg)))) {
        msg_destroy (&msg);
        return;
    }
    /* after the copies are dropped: a copy sent again carries the same
     * nonce, and is no replay */
    if (msg_get_type (msg) == MSGTYPE_REQUEST) {
        bool sealed = env->flags & ENV_FLAG_SIGNED;
        if (sealed)
            sig = ovsign_check_request (ov, env, body[0], &len);
        /* 1 signed and good; -1 a bad signature, or none where the
         * origin has a key; 0 no key known for the origin */
        info.source_signed = sig == 1 ? 1
                             : (sealed && sig == 0)
                                       || ovsign_rank_has_key (ov, env->source)
                                   ? -1 : 0;
    }
    ov->deliver.delivered++;
    ov->io->deliver (ov->ctx, msg, &info);
}
