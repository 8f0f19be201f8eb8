/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test/peer.c: the peer table (peer.c). */
#include <errno.h>
#include <string.h>

#include "src/common/libtap/tap.h"
#include "src/modules/overlay/peer.h"

static void check_table (void)
{
    uint32_t ranks[] = { 1, 2, 4, 8, 12, 14, 15 };
    struct peers *ps = peers_create (0, ranks, 7, 5.0);
    struct peer *p;

    ok (ps && ps->n == 7 && ps->up == 0, "a table of 7 peers, none up");
    ok (peers_lookup (ps, 8) && peers_lookup (ps, 8)->rank == 8
        && !peers_lookup (ps, 3), "lookup by rank finds 8, not 3");
    p = peers_lookup (ps, 4);
    ok (p->connector && p->state == PEER_CONNECTING && p->live.rtt_us < 0
        && p->state_since == 5.0 && !strcmp (p->id, "4"),
        "rank 0 connects to 4; it starts connecting, no RTT yet, id \"4\"");
    ok (peers_lookup_id (ps, "12", 2) == peers_lookup (ps, 12),
        "routing id \"12\" is rank 12");
    ok (!peers_lookup_id (ps, "012", 3) && !peers_lookup_id (ps, "12 ", 3)
        && !peers_lookup_id (ps, "+1", 2) && !peers_lookup_id (ps, "", 0)
        && !peers_lookup_id (ps, "4294967297", 10),
        "only canonical decimal ids name a peer (not 012, '12 ', +1, '', 2^32+1)");

    ok (peers_set_state (ps, p, PEER_UP, 6.0) == PEER_CONNECTING
        && ps->up == 1 && peers_changed (ps) && !peers_changed (ps),
        "up: the count follows and the table says it changed, once");
    peers_set_state (ps, p, PEER_SUSPECT, 7.0);
    ok (ps->up == 1 && p->state_since == 7.0, "suspect still counts as up");
    peers_set_state (ps, p, PEER_DOWN, 8.0);
    ok (ps->up == 0, "down does not");
    peers_set_state (ps, p, PEER_UP, 9.0);

    struct peer *s = peers_insert (ps, 0, 6, 10.0);
    ok (s && ps->n == 8 && ps->v[3] == s && ps->v[2]->rank == 4
        && ps->v[4]->rank == 8, "a substitute peer is inserted in order");
    ok (peers_insert (ps, 0, 6, 11.0) == s, "inserting it again finds it");
    struct peer *d = peers_detach (ps, 4);
    ok (d == p && ps->n == 7 && ps->up == 0 && !peers_lookup (ps, 4),
        "detaching an up peer takes it out and off the up count");
    peer_destroy (&d);
    ok (d == NULL, "peer_destroy clears the pointer");
    peers_destroy (&ps);
    ok (ps == NULL, "peers_destroy clears the pointer");
}

static void check_backlog (void)
{
    struct backlog bl = { 0 };
    struct envelope env = { .kind = ENV_DATA };
    int order = 1;

    for (uint32_t i = 0; i < 5; i++) {
        env.dest = i;
        struct pending *pd = pending_create (&env, 1, 1.0);
        pd->frames[0] = frame_create ("x", 1);
        backlog_push (&bl, pd);
    }
    ok (bl.count == 5 && backlog_first (&bl)->env.dest == 0,
        "five messages wait, the first first");
    for (uint32_t i = 0; i < 5; i++) {
        struct pending *pd = backlog_pop (&bl);
        if (!pd || pd->env.dest != i)
            order = 0;
        pending_destroy (&pd);
    }
    ok (order && bl.count == 0 && !backlog_pop (&bl),
        "they come out in order and the backlog is empty");
}

int main (void)
{
    plan (NO_PLAN);
    check_table ();
    check_backlog ();
    done_testing ();
}
