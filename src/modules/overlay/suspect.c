/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* suspect.c: fences on another broker's word, held as suspicions until
 * refuted or believed (suspect.h).
 *
 * State: one struct fence_suspect per suspected rank (at most one per
 * rank: the newest suspicion), one timer for the earliest to run out,
 * and per peer the count of its suspicions refuted (peer.h).
 */
#include <stdlib.h>

#include "src/common/libutil/idmap.h"
#include "overlay.h"
#include "ovlog.h"
#include "ovsign.h"
#include "suspect.h"

static void expire_cb (void *arg);

int suspect_init (struct overlay *ov,
                  void (*confirm) (struct overlay *ov, uint32_t rank,
                                   uint64_t inc, uint8_t reason))
{
    ov->suspect.confirm = confirm;
    if (!(ov->suspect.suspects = idmap_create (sizeof (struct fence_suspect)))
        || !(ov->suspect.timer = ovtimer_create (ov->timers, expire_cb,
                                                       ov)))
        return -1;
    return 0;
}

void suspect_fini (struct overlay *ov)
{
    idmap_destroy (&ov->suspect.suspects);
    ovtimer_destroy (&ov->suspect.timer);
}

/* How long a suspicion waits for its refutation: half a keepalive
 * interval, so that a neighbour's finding after the peer timeout (on
 * the half-interval tick) is believed everywhere within peer_timeout +
 * keepalive_interval. */
static double grace (struct overlay *ov)
{
    return ov->cfg.keepalive_interval / 2;
}

static bool banned (const struct peer *p, double now)
{
    return now < p->fencepower.until;
}

bool suspect_powerless (struct overlay *ov, uint32_t rank)
{
    const struct peer *p = peers_lookup (ov->peers, rank);

    return p && banned (p, ovl_now (ov));
}

const struct fence_suspect *suspect_lookup (struct overlay *ov, uint32_t rank)
{
    return ov->suspect.suspects ? idmap_get (ov->suspect.suspects, rank) : NULL;
}

static void arm (struct overlay *ov, double at)
{
    if (at < ovtimer_deadline (ov->suspect.timer))
        ovtimer_arm (ov->suspect.timer, at);
}

bool suspect_hold (struct overlay *ov, uint32_t rank, uint64_t inc,
                   bool settled, uint8_t reason, uint32_t via, bool charge)
{
    struct peer *from = via == UINT32_MAX ? NULL
                                          : peers_lookup (ov->peers, via);
    double now = ovl_now (ov);
    struct fence_suspect *s;

    if (from && banned (from, now)) {
        ov->suspect.fences_ignored++;
        return true;
    }
    /* only a fence of the live incarnation held here or one ahead (or of
     * a rank never fenced, which has no record here), of a rank that can
     * refute it; anything else is believed as before */
    if (settled || !ovsign_rank_has_key (ov, rank))
        return false;
    if ((s = idmap_get (ov->suspect.suspects, rank)) && s->inc >= inc)
        return true;
    if (!s && !(s = idmap_put (ov->suspect.suspects, rank, NULL)))
        return false;             /* no memory: believed, as before */
    *s = (struct fence_suspect){ .inc = inc, .since = now, .via = via,
                                 .reason = reason, .charge = charge };
    ov->suspect.suspected++;
    ovl_log (ov, LOG_DEBUG, "rank %u suspected on rank %u's word "
             "(incarnation %llu)", (unsigned)rank, (unsigned)via,
             (unsigned long long)inc);
    arm (ov, now + grace (ov));
    return true;
}

/* Peer via's suspicion was refuted: after SUSPECT_REFUTED within
 * SUSPECT_WINDOW it loses the power to fence for a back-off. */
static void charge (struct overlay *ov, uint32_t via, double now)
{
    struct peer *p = via == UINT32_MAX ? NULL : peers_lookup (ov->peers, via);
    struct fencepower *fp;

    if (!p)
        return;
    fp = &p->fencepower;
    fp->total++;
    if (now - fp->last > SUSPECT_WINDOW)
        fp->refuted = 0;
    fp->last = now;
    if (++fp->refuted < SUSPECT_REFUTED)
        return;
    fp->refuted = 0;
    fp->ban = fp->ban > 0 ? fp->ban * 2 : SUSPECT_BAN_MIN;
    if (fp->ban > SUSPECT_BAN_MAX)
        fp->ban = SUSPECT_BAN_MAX;
    fp->until = now + fp->ban;
    ov->suspect.power_lost++;
    ovl_log (ov, LOG_WARNING, "peer %u brought %d fences their ranks "
             "refuted: its fences are ignored for %.0f s (%llu refuted in "
             "all)", (unsigned)via, SUSPECT_REFUTED, fp->ban,
             (unsigned long long)fp->total);
}

void suspect_settle (struct overlay *ov, uint32_t rank, uint64_t inc,
                     bool fenced)
{
    struct fence_suspect *s = ov->suspect.suspects
                                  ? idmap_get (ov->suspect.suspects, rank)
                                  : NULL;
    uint32_t via;
    bool charged;

    if (!s || (fenced && inc < s->inc) || (!fenced && inc <= s->inc))
        return;
    via = s->via;
    charged = s->charge;
    idmap_delete (ov->suspect.suspects, rank);
    if (fenced)
        return;                   /* believed otherwise: found here, say */
    ov->suspect.refuted++;
    if (charged)
        charge (ov, via, ovl_now (ov));
}

/* A neighbour we heard within two keepalive intervals (one end of a
 * quiet link speaks every 1.5) is alive to us: our own ears outweigh
 * another's word, whatever the refutation's fate. */
static bool witnessed (struct overlay *ov, uint32_t rank, double now)
{
    const struct peer *p = peers_lookup (ov->peers, rank);

    return p && peer_is_up (p)
           && now - p->live.last_heard < 2 * ov->cfg.keepalive_interval;
}

static void expire_cb (void *arg)
{
    struct overlay *ov = arg;
    double now = ovl_now (ov), next = 0;
    size_t n = idmap_size (ov->suspect.suspects), k = 0;
    uint32_t *due = calloc (n + 1, sizeof (*due));
    struct idmap_iter it;

    if (!due) {
        arm (ov, now + grace (ov));
        return;
    }
    for (struct fence_suspect *s = idmap_first (ov->suspect.suspects, &it); s;
         s = idmap_next (&it)) {
        if (s->since + grace (ov) <= now)
            due[k++] = (uint32_t)it.id;
        else if (next == 0 || s->since + grace (ov) < next)
            next = s->since + grace (ov);
    }
    for (size_t i = 0; i < k; i++) {
        const struct fence_suspect *s = idmap_get (ov->suspect.suspects, due[i]);
        struct fence_suspect copy;
        if (!s)
            continue;
        copy = *s;
        idmap_delete (ov->suspect.suspects, due[i]);
        if (witnessed (ov, due[i], now))
            continue;
        ov->suspect.confirmed++;
        ov->suspect.confirm (ov, due[i], copy.inc, copy.reason);
    }
    free (due);
    if (next > 0)
        arm (ov, next);
}
