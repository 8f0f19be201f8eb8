/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test/ovcore.c: the core's read-only observers (ovcore.h) via a fake
 * io: each agrees with the part that owns the answer (the fence view,
 * the peers' backlogs, the routing's next hops less the links that are
 * not up). */
#include <errno.h>
#include <string.h>

#include "src/common/libtap/tap.h"
#include "src/modules/overlay/fence.h"
#include "src/modules/overlay/route.h"
#include "fakeio.h"

static struct fake *rank0 (void)
{
    struct fake *f = fake_create (0, 16, "bgn");
    fake_start (f);
    fake_all_up (f);
    fake_advance (f, 0.1);
    fake_clear (f);
    return f;
}

static int send_to (struct fake *f, uint32_t dest, uint32_t tag)
{
    msg_t *m = msg_request_create ("test.echo", dest, "{}");
    int rc;

    msg_route_enable (m);
    msg_route_push (m, "client-1");
    msg_route_push (m, "0");
    msg_set_matchtag (m, tag);
    rc = overlay_send (f->ov, &m, dest, NULL);
    msg_destroy (&m);
    return rc;
}

static void check_fenced (void)
{
    struct fake *f = rank0 ();
    bool same = true;

    ok (!overlay_is_fenced (f->ov, 5), "5 is not fenced at first");
    fake_fence1 (f, 1, ENV_REPORT, 5, 1005, true);
    fake_fence1 (f, 2, ENV_REPORT, 9, 1009, true);
    ok (overlay_is_fenced (f->ov, 5) && overlay_is_fenced (f->ov, 9)
        && !overlay_is_fenced (f->ov, 6),
        "reports fence 5 and 9, and only them");
    fake_fence1 (f, 2, ENV_REPORT, 9, 1010, false);
    for (uint32_t r = 0; r < 16; r++) {
        const struct fence_entry *e = fence_lookup (f->ov, r);
        if (overlay_is_fenced (f->ov, r) != (e && e->fenced))
            same = false;
    }
    ok (same && !overlay_is_fenced (f->ov, 9),
        "for every rank it is the fence view's record (9 lifted again)");
    fake_destroy (&f);
}

static void check_backlog (void)
{
    struct fake *f = rank0 ();

    ok (overlay_backlog_deepest (f->ov) == 0, "no backlog at first");
    f->send_errno[1] = EAGAIN;
    f->send_errno[2] = EAGAIN;
    for (uint32_t tag = 1; tag <= 3; tag++)
        send_to (f, 1, tag);
    send_to (f, 2, 4);
    ok (overlay_backlog_deepest (f->ov) == 3
        && fake_peer (f, 1)->backlog.count == 3
        && fake_peer (f, 2)->backlog.count == 1,
        "three wait for 1, one for 2: the deepest is 3");
    f->send_errno[1] = 0;
    f->send_errno[2] = 0;
    fake_advance (f, 0.01);
    ok (overlay_backlog_deepest (f->ov) == 0, "0 once they have gone");
    fake_destroy (&f);
}

static void check_next_hops (void)
{
    struct fake *f = rank0 ();
    uint32_t hops[16], all[16];
    bool live = false, near = true;
    int n;

    ok (overlay_next_hops (f->ov, 0, hops, 16) == 0, "none to itself");
    n = overlay_next_hops (f->ov, 1, hops, 16);
    ok (n == 1 && hops[0] == 1, "a neighbour: itself");
    n = overlay_next_hops (f->ov, 11, hops, 16);
    int m = route_next_hops (f->ov, 11, all, 16, &live);
    for (int i = 0; i < n; i++)
        if (bgn_topo_distance (f->ov->topo, hops[i], 11) != 1)
            near = false;
    ok (n >= 1 && n == m && !memcmp (hops, all, n * sizeof (hops[0]))
        && near,
        "a rank two hops away: the routing's hops (%d), each next to it", n);
    ok (overlay_next_hops (f->ov, 11, hops, 1) == 1 && hops[0] == all[0],
        "at most max of them, best first");

    /* 4 refuses us: its link is down, but nobody fenced it */
    fake_hello_json (f, 4, ENV_HELLO_NAK, 1004, "{\"reason\":\"testing\"}",
                     NULL);
    live = false;
    ok (route_next_hops (f->ov, 4, all, 16, &live) == 1 && all[0] == 4
        && overlay_next_hops (f->ov, 4, hops, 16) == 0,
        "a hop whose link is down is left out");
    errno = 0;
    ok (overlay_next_hops (f->ov, 99, hops, 16) < 0,
        "a rank past the size: -1");
    fake_destroy (&f);
}

int main (void)
{
    plan (NO_PLAN);
    check_fenced ();
    check_backlog ();
    check_next_hops ();
    return done_testing ();
}
