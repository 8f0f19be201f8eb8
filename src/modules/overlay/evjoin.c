/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* evjoin.c: where a joining broker's event sequence starts
 * (evlayer_int.h).
 *
 * A broker that comes (or comes back) has no sequence yet: it holds the
 * batches that reach it until it knows the seq it starts after.  Where
 * rank 0 signs, only rank 0's word, signed for this broker and a nonce
 * of its wait, says where that is (a neighbour's hello could lie, and
 * did, issue 42); this file is that exchange: the ask (START_QUERY), rank
 * 0's rate-bounded answer (START) and taking it, and the fallback when
 * rank 0 never answers.  It sits below events.c (which routes the
 * controls here and calls the ask from its timers) and beside evsync.c
 * (a SYNC seen while joining asks too); it calls down to the repair, the
 * signatures and the delivery only.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "evlayer_int.h"

/* Where rank 0 signs, a broker without a sequence takes its start only
 * on rank 0's word: it asks rank 0 (START_QUERY, with a nonce fresh
 * for this wait) every START_RETRY until a signed answer for it and
 * that nonce comes back.  A neighbour's hello says where the sequence is too, but
 * a lying tree parent said 1,000,000 and the broker took every real
 * batch for a duplicate, for good (issue 42). */
void evjoin_ask (struct evlayer *ev)
{
    json_t *q;
    char n[17];

    if (ev->have_base || !ev->verify || ev->rank == 0)
        return;
    if (ev->start_asked > 0 && ev->now - ev->start_asked < START_RETRY)
        return;
    /* one nonce for the whole wait: an answer to an earlier ask is as
     * fresh as our wait, and on a busy machine the answer to an ask
     * often came after the next ask had replaced a per-ask nonce */
    if (ev->start_since == 0) {
        ev->start_since = ev->now > 0 ? ev->now : 1e-9;
        ev->start_nonce = evl_nonce ();
    }
    ev->start_asked = ev->now > 0 ? ev->now : 1e-9;
    snprintf (n, sizeof (n), "%016llx", (unsigned long long)ev->start_nonce);
    if (!(q = json_pack ("{s:s}", "n", n)))
        return;
    ev->start_asks++;
    ev->ops->control (ev->arg, 0, EV_CTL_START_QUERY, q);
    json_decref (q);
}

/* Our sequence starts after 'seq': what waited is delivered from there,
 * and the gap up to 'known' (rank 0's signed word on where the stream
 * is, or what we hold) is repaired at once, not after the next SYNC. */
static void start_take (struct evlayer *ev, uint32_t seq, uint32_t known)
{
    if (ev->early.n > 0 && evstore_at (&ev->early, 0)->first - 1 < seq)
        seq = evstore_at (&ev->early, 0)->first - 1;
    ev->have_base = 1;
    ev->last = seq;
    if (ev->high < known)
        ev->high = known;
    if (ev->high < seq)
        ev->high = seq;
    evl_drain_early (ev);
    evrepair_kick (ev);
}

/* Rank 0 never answered (an older build, or cut off from us while our
 * tree parent is not): after twice learn_timeout (a rank 0 answers once
 * it has learnt the sequence itself, which takes learn_timeout at
 * most), the lowest seq a signed batch or SYNC put the start at, if any
 * came. */
void evjoin_fallback (struct evlayer *ev)
{
    double wait = 2 * ev->cfg.learn_timeout;

    if (ev->have_base || !ev->verify || ev->start_since == 0
        || ev->now - ev->start_since < wait
        || ev->start_floor == UINT32_MAX)
        return;
    ev->ops->log (ev->arg, LOG_WARNING, "events: rank 0 did not say where "
                  "the sequence is within %.0f s; starting after %u, the "
                  "lowest seq rank 0 signed that reached us",
                  wait, (unsigned)ev->start_floor);
    start_take (ev, ev->start_floor, ev->start_floor);
}

/* A nonce as sent in "n": 16 hex digits; 0 if it is not one. */
static int parse_nonce (json_t *o, uint64_t *nonce)
{
    const char *n = json_string_value (json_object_get (o, "n"));
    char *end;

    if (!n || strlen (n) != 16)
        return 0;
    errno = 0;
    *nonce = strtoull (n, &end, 16);
    return errno == 0 && *end == '\0';
}

/* Rank 0: a broker asks where the sequence is.  The answer is signed for
 * it and its nonce; at most START_RATE a second (START_BURST at once),
 * so that asking costs rank 0 a bounded share of a core: an asker not
 * answered asks again. */
void evjoin_answer (struct evlayer *ev, uint32_t source, json_t *q)
{
    uint64_t nonce;
    json_t *o;

    if (!ev->can_sign || !ev->can_publish || !parse_nonce (q, &nonce))
        return;
    ev->start_tokens += (ev->now - ev->start_refill) * START_RATE;
    ev->start_refill = ev->now;
    if (ev->start_tokens > START_BURST)
        ev->start_tokens = START_BURST;
    if (ev->start_tokens < 1) {
        ev->start_throttled++;
        return;
    }
    ev->start_tokens -= 1;
    o = json_pack ("{s:O s:I s:I s:I s:I}", "n", json_object_get (q, "n"),
                   "seq", (json_int_t)ev->sent_seq, "epoch",
                   (json_int_t)ev->cfg.epoch, "gone", (json_int_t)ev->gone,
                   "base", (json_int_t)ev->root_base);
    if (o && evl_start_sign (ev, o, source, nonce, (json_int_t)ev->sent_seq,
                             (json_int_t)ev->cfg.epoch, (json_int_t)ev->gone,
                             (json_int_t)ev->root_base) == 0) {
        ev->start_answers++;
        ev->ops->control (ev->arg, source, EV_CTL_START, o);
    }
    json_decref (o);
}

void evjoin_hint (struct evlayer *ev, uint32_t seq)
{
    int low = 0;

    if (ev->nstart_hints < START_HINTS) {
        ev->start_hints[ev->nstart_hints++] = seq;
        return;
    }
    for (int i = 1; i < START_HINTS; i++)
        if (ev->start_hints[i] < ev->start_hints[low])
            low = i;
    if (seq > ev->start_hints[low])
        ev->start_hints[low] = seq;
}

/* Where our sequence starts, rank 0 having said the stream is at 'seq'
 * and still holds what is after 'gone'.  Rank 0 answers when it can
 * (after its own learning, after routes settle): events published
 * between our start and its answer are ours too.  Our neighbours'
 * hellos said where the stream was when we came: an honest one said at
 * most 'seq' (rank 0 numbered nothing for it since), so the highest hint
 * not above 'seq' is the most current honest word.  It may lower the
 * start, never raise it, and no lower than 'gone': a neighbour that
 * says more than rank 0 is not believed, one that says less is passed
 * over by any honest one, and lying neighbours all together cost at
 * most a repair of real, signed events. */
static uint32_t hinted_start (struct evlayer *ev, uint32_t seq, uint32_t gone)
{
    uint32_t best = 0;
    bool any = false;

    for (int i = 0; i < ev->nstart_hints; i++)
        if (ev->start_hints[i] <= seq && (!any || ev->start_hints[i] > best)) {
            best = ev->start_hints[i];
            any = true;
        }
    if (!any)
        return seq;
    return best > gone ? best : gone;
}

/* Rank 0's answer to our ask: taken only while we wait, for our latest
 * nonce, signed for us, and not from an older rank 0 than we heard. */
void evjoin_recv (struct evlayer *ev, uint32_t via, json_t *o)
{
    json_int_t seq, epoch, gone, base;
    uint64_t nonce;

    if (ev->have_base || !ev->verify || ev->start_asked == 0
        || !parse_nonce (o, &nonce) || nonce != ev->start_nonce
        || json_unpack (o, "{s:I s:I s:I s:I}", "seq", &seq, "epoch", &epoch,
                        "gone", &gone, "base", &base) < 0
        || seq < 0 || seq > UINT32_MAX || gone < 0 || gone > seq || base < 0
        || base > seq || (uint64_t)epoch < ev->root_epoch) {
        ev->stale_answers++;
        return;
    }
    if (!evl_start_signed_ok (ev, o, nonce, seq, epoch, gone, base, via))
        return;
    ev->root_epoch = (uint64_t)epoch;
    ev->root_base = (uint32_t)base;
    ev->root_gone = (uint32_t)gone;
    if ((uint32_t)seq > ev->sync_seq)
        ev->sync_seq = (uint32_t)seq;
    start_take (ev, hinted_start (ev, (uint32_t)seq, (uint32_t)gone),
                (uint32_t)seq);
}
