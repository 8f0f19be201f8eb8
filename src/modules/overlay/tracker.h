/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* tracker.h: requests this broker sent into the overlay.
 *
 * The origin broker remembers each request it injects toward a rank
 * (by the sending client's id and matchtag) until its response passes
 * back through.  If the destination is fenced meanwhile, the request is
 * failed at once with EHOSTUNREACH instead of leaving the client to time
 * out, and a response that still arrives later is dropped, so the client
 * sees exactly one answer.  Entries expire after twice the RPC timeout
 * (plus 5 s) at the latest.  At most TRACKER_MAX entries and
 * overlay.tracker_bytes of them: past either a request goes untracked
 * (counted, logged), and its client learns of its rank's death only by
 * its deadline.
 *
 * A rank that dies may also have held requests for other ranks (or their
 * responses) on their way: when any rank is fenced, every request still
 * waiting for a rank that is up is sent again (at most RETRY_MAX times),
 * from the copy kept of it (overlay.retry_bytes bounds those copies; past
 * it a request is tracked but not kept, counted as unkept), and its
 * destination runs it once (dedup.h).  A copy sent again and unanswered
 * a peer timeout later goes once more, within the same RETRY_MAX: it, or
 * its answer, may have been routed into the dying rank by a broker that
 * had not heard of the death yet, and no later fence would say so.
 *
 * A request to a rank fenced here may also wait, briefly, for that rank's
 * rejoin (tracker_wait): a rank that restarted is known up by its
 * neighbours before it is by the rest of the instance.
 */
#ifndef BGN_OVERLAY_TRACKER_H
#define BGN_OVERLAY_TRACKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "src/common/libmsg/message.h"
#include "frame.h"

struct overlay;
struct idmap;
struct ovtimer;
struct waiting;

struct tracker_state {          /* tracker.c */
    struct idmap *map;          /* key hash -> struct tracked */
    struct ovtimer *sweep;
    uint64_t failed;
    uint64_t dup_drops;
    uint64_t copy_errors;       /* a relay's error for one copy, not told:
                                   another copy was still on its way */
    size_t bytes;               /* heap of the copies kept to send again */
    uint64_t retries;           /* requests sent again (a relay died) */
    uint64_t unkept;            /* not kept: past overlay.retry_bytes */
    size_t answered;            /* entries kept only to drop late copies */
    size_t entry_bytes;         /* heap of the entries' header copies */
    uint64_t untracked;         /* not tracked: TRACKER_MAX or
                                   overlay.tracker_bytes reached */
    struct waiting *wait_head, *wait_tail;   /* waiting for a rejoin */
    int nwaiting;
    size_t wait_bytes;          /* their heap (overlay.held_bytes) */
    struct ovtimer *wait_timer;  /* the first waiting request's deadline */
    uint64_t waits;             /* requests that waited for a rejoin */
    uint64_t wait_expired;      /* ... and failed: no rejoin in time */
};

int tracker_init (struct overlay *ov);
void tracker_fini (struct overlay *ov);

/* Remember request 'req' (borrowed) sent toward rank 'dest'.  Returns
 * its key (0 if it is not tracked: not a request to a rank, no response
 * expected, or the tracker is full). */
uint64_t tracker_add (struct overlay *ov, const msg_t *req, uint32_t dest);

/* Keep a copy of the request with this key as it goes out ('wire', its
 * body_encode frame, borrowed), to send it again if a rank on its way
 * dies.  Only a client's requests are kept (a route stack with its id
 * under our rank), not streaming ones.  'flags': the envelope flags
 * the copy must go with again (ENV_FLAG_SIGNED: it ends with its
 * signature block); 'stamp': the envelope stamp it went with, which the
 * copies keep (envelope.h). */
void tracker_keep (struct overlay *ov, uint64_t key, const struct frame *wire,
                   uint8_t flags, uint16_t stamp);

/* Heap the kept copies hold (overlay.retry_bytes bounds it). */
size_t tracker_bytes (struct overlay *ov);

/* Heap the entries hold: the hash table (each entry's key and state) and
 * the header copies (overlay.tracker_bytes bounds it, with TRACKER_MAX
 * entries: past either a request is not tracked, counted as untracked
 * and logged). */
size_t tracker_memory (struct overlay *ov);

/* Forget the request with this key (its send failed: the broker answers
 * it itself). */
void tracker_forget (struct overlay *ov, uint64_t key);

/* A response reached its origin broker, answered by rank 'from'.
 * Returns 1 if it must be dropped (its request was already failed or
 * answered here, or it is the error a relay gave for one copy while
 * another copy may still arrive: copy_errors), else 0. */
int tracker_response (struct overlay *ov, const msg_t *rsp, uint32_t from);

/* Rank 'dest' was fenced: fail its requests once, send the others that
 * are kept again. */
void tracker_fail_dest (struct overlay *ov, uint32_t dest);

/* Requests being tracked (waiting for their answer). */
int tracker_count (struct overlay *ov);

/* A request (*req) to rank 'dest', which is fenced here: down, or
 * restarted moments ago and the news of its rejoin not here yet (the
 * rank's neighbours admit it at once, the unfence reaches the others
 * through the fence tree).  Keep it, taken (*req set to NULL), for
 * overlay.rejoin_wait: sent to the rank's new incarnation if the rank is
 * unfenced by then (tracker_release), else answered EHOSTUNREACH "rank R
 * is down or restarting: no rejoin within Ns; the request did not run".
 * 0 if kept; -1 if not (waiting off, a request without a response, or
 * WAIT_MAX requests or overlay.held_bytes held already): the caller
 * fails it at once.  sign: seal it (ovsign) when it goes, as overlay_send
 * would have. */
int tracker_wait (struct overlay *ov, msg_t **req, uint32_t dest,
                  bool sign);

/* Rank 'rank' was unfenced: send the requests that waited for it, with
 * the stamp of its new incarnation. */
void tracker_release (struct overlay *ov, uint32_t rank, uint16_t stamp);

/* Heap the waiting requests hold (counted against overlay.held_bytes with
 * the held responses). */
size_t tracker_wait_bytes (struct overlay *ov);

#endif
