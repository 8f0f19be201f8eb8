/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* sigbudget.h: how many failed signature checks one link may cost us.
 *
 * A check costs the checker 56-70 us and the sender nothing: a signature
 * made once can be sent on every frame.  A relay passes signed words on
 * unchanged, so a link whose signatures fail again and again is broken
 * or lying, and checking them is the price it makes us pay.  After
 * SIGBUDGET_FAILS failures within SIGBUDGET_WINDOW of each other the link
 * is in a back-off: what it sends that needs a check is dropped unchecked
 * for SIGBUDGET_BAN_MIN seconds, doubling with each back-off up to
 * SIGBUDGET_BAN_MAX.  The event layer (evsign.c) and the fence records
 * (fence.c) each keep one per link.  Plain data, no allocation.
 */
#ifndef BGN_OVERLAY_SIGBUDGET_H
#define BGN_OVERLAY_SIGBUDGET_H

#include <stdint.h>

#define SIGBUDGET_FAILS 16
#define SIGBUDGET_WINDOW 60.0   /* s */
#define SIGBUDGET_BAN_MIN 10.0  /* s */
#define SIGBUDGET_BAN_MAX 300.0 /* s */

struct sigbudget {
    uint32_t fails;
    double last_fail;
    double ban, banned_until;   /* the last back-off's length, its end */
};

/* Is the link in a back-off at 'now'? */
static inline int sigbudget_banned (const struct sigbudget *b, double now)
{
    return now < b->banned_until;
}

/* A check of the link's failed at 'now': 1 if that starts a back-off
 * (the caller counts and logs it once; its length is b->ban), else 0. */
static inline int sigbudget_failed (struct sigbudget *b, double now)
{
    if (now - b->last_fail > SIGBUDGET_WINDOW)
        b->fails = 0;
    b->last_fail = now;
    if (++b->fails < SIGBUDGET_FAILS)
        return 0;
    b->fails = 0;
    b->ban = b->ban > 0 ? b->ban * 2 : SIGBUDGET_BAN_MIN;
    if (b->ban > SIGBUDGET_BAN_MAX)
        b->ban = SIGBUDGET_BAN_MAX;
    b->banned_until = now + b->ban;
    return 1;
}

#endif
