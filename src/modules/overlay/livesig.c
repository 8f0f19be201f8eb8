/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* livesig.c: each rank's own signature of its live record (livesig.h).
 *
 * Apart from fence.c because it is a store with its own cost rule (the
 * per-link budget of failed checks), which fence.c and hello.c ask; the
 * rule of when a live record needs a signature stays fence.c's.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "src/common/libutil/idmap.h"
#include "livesig.h"
#include "overlay.h"
#include "ovlog.h"
#include "ovsign.h"
#include "peer.h"
#include "sigbudget.h"

int livesig_init (struct overlay *ov)
{
    if (!(ov->livesig.map = idmap_create (sizeof (struct livesig))))
        return -1;
    return 0;
}

void livesig_fini (struct overlay *ov)
{
    idmap_destroy (&ov->livesig.map);
}

bool livesig_held (struct overlay *ov, uint32_t rank, uint64_t inc)
{
    const struct livesig *ls = idmap_get (ov->livesig.map, rank);

    return ls && ls->inc >= inc;
}

/* Within the budget of the link the record came over (sigbudget.h):
 * forged records cost the attacker nothing and each check 56 us here. */
bool livesig_check (struct overlay *ov, uint32_t via, uint32_t rank,
                    uint64_t inc, const uint8_t *sig)
{
    struct peer *p = via == UINT32_MAX ? NULL : peers_lookup (ov->peers, via);
    double now = ovl_now (ov);
    char text[160];
    int n;
    bool good;

    if (p && sigbudget_banned (&p->livesig.sigs, now)) {
        ov->livesig.refused++;
        return false;
    }
    n = ovsign_live_text (ov, rank, inc, text, sizeof (text));
    good = ovsign_verify (ov, rank, text, (size_t)n, sig) == 1;
    if (!good && p && sigbudget_failed (&p->livesig.sigs, now)) {
        ov->livesig.backoffs++;
        ovl_log (ov, LOG_WARNING, "peer %u sent %d live records whose "
                 "signatures failed: its live records are refused unchecked "
                 "for %.0f s (%llu back-offs so far)", (unsigned)p->rank,
                 SIGBUDGET_FAILS, p->livesig.sigs.ban,
                 (unsigned long long)ov->livesig.backoffs);
    }
    return good;
}

void livesig_keep (struct overlay *ov, uint32_t rank, uint64_t inc,
                   const uint8_t *sig)
{
    struct livesig *ls = idmap_put (ov->livesig.map, rank, NULL);

    if (ls && inc >= ls->inc) {
        ls->inc = inc;
        memcpy (ls->sig, sig, sizeof (ls->sig));
    }
}

/* A HELLO's signature, if it is the one for inc, checked now: kept if
 * good, forgotten either way. */
static void check_pending (struct overlay *ov, uint32_t rank, uint64_t inc)
{
    struct livesig *ls = idmap_get (ov->livesig.map, rank);
    uint8_t sig[64];

    if (!ls || ls->pending_inc == 0 || ls->pending_inc != inc
        || ls->inc == inc)
        return;
    memcpy (sig, ls->pending, sizeof (sig));
    ls->pending_inc = 0;
    if (livesig_check (ov, rank, rank, inc, sig))   /* its own link */
        livesig_keep (ov, rank, inc, sig);   /* may move the table: ls */
}

/* A copy: checking a pending one may move the table.  Never for
 * incarnation 0: an entry made for a pending one holds 0 and zeros
 * there. */
bool livesig_get (struct overlay *ov, uint32_t rank, uint64_t inc,
                  uint8_t sig[64])
{
    const struct livesig *ls;

    if (inc == 0)
        return false;
    check_pending (ov, rank, inc);
    if (!(ls = idmap_get (ov->livesig.map, rank)) || ls->inc != inc)
        return false;
    memcpy (sig, ls->sig, 64);
    return true;
}

bool livesig_own (struct overlay *ov, uint8_t sig[64])
{
    char text[160];
    int n;

    if (livesig_get (ov, ov->rank, ov->incarnation, sig))
        return true;
    n = ovsign_live_text (ov, ov->rank, ov->incarnation, text, sizeof (text));
    if (ovsign_sign (ov, text, (size_t)n, sig) < 0)
        return false;
    livesig_keep (ov, ov->rank, ov->incarnation, sig);
    return true;
}

/* Is sig at inc no news beside the checked one held? */
static bool held_already (const struct livesig *ls, uint64_t inc,
                          const uint8_t *sig)
{
    return inc < ls->inc || (inc == ls->inc && !memcmp (ls->sig, sig, 64));
}

bool livesig_note (struct overlay *ov, uint32_t rank, uint64_t inc,
                   const uint8_t *sig)
{
    struct livesig *ls;

    if (!sig || inc == 0 || !(ls = idmap_put (ov->livesig.map, rank, NULL)))
        return false;
    if (held_already (ls, inc, sig) || inc < ls->pending_inc)
        return false;
    /* another one waiting, not this: checked now, so that a bad or late
     * signature never pushes out a good one */
    if (ls->pending_inc
        && (ls->pending_inc != inc || memcmp (ls->pending, sig, 64) != 0)) {
        check_pending (ov, rank, ls->pending_inc);
        if (!(ls = idmap_get (ov->livesig.map, rank))
            || held_already (ls, inc, sig))
            return false;
    }
    ls->pending_inc = inc;
    memcpy (ls->pending, sig, sizeof (ls->pending));
    return true;
}
