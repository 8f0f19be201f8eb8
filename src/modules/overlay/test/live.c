/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test/live.c: peer liveness (live.c) via a fake io.
 *
 * Rank 0 of 4 (bgn: peers 1, 2, 3), keepalive interval 1 s, peer
 * timeout 5 s (the fake's settings):
 * - every interval each quiet live peer gets a keepalive carrying the
 *   8-byte fence digest; a keepalive is answered with an echo, and the
 *   echo of our own gives the peer's round-trip time;
 * - a peer silent for 3 intervals is suspect, silent for the timeout it
 *   is lost and fenced; keepalives keep peers up for as long as they come;
 * - a send failing with EHOSTUNREACH loses the peer at once;
 * - a broker that did not run for a while blames itself, not its peers;
 * - a peer that never says hello is fenced after three peer timeouts;
 * - more than half of its peers silent at once, a broker doubts itself
 *   first: none fenced on its word before twice the peer timeout.
 */
#include <errno.h>
#include <string.h>

#include "src/common/libtap/tap.h"
#include "src/modules/overlay/live.h"
#include "fakeio.h"

static struct fake *up4 (void)
{
    struct fake *f = fake_create (0, 4, "bgn");

    if (!f || fake_start (f) < 0)
        bail_out ("the fake core does not start");
    fake_all_up (f);
    fake_advance_alive (f, 0.5);
    fake_clear (f);
    return f;
}

static void keepalive_from (struct fake *f, uint32_t from, int echo)
{
    struct envelope ka = { .kind = ENV_KEEPALIVE, .flags = (uint8_t)echo,
                           .ttl = 1, .source = from, .dest = 0 };
    fake_inject (f, from, &ka, NULL, NULL, 0, NULL);
}

static bool all_up (struct fake *f)
{
    return fake_peer (f, 1)->state == PEER_UP
           && fake_peer (f, 2)->state == PEER_UP
           && fake_peer (f, 3)->state == PEER_UP;
}

static void test_keepalives (void)
{
    struct fake *f = up4 ();
    struct sent *s;

    ok (all_up (f), "rank 0 of 4 with its peers 1, 2 and 3 up");
    fake_advance_alive (f, 1.0);
    ok (fake_count (f, ENV_KEEPALIVE, 1) >= 1
        && fake_count (f, ENV_KEEPALIVE, 2) >= 1
        && fake_count (f, ENV_KEEPALIVE, 3) >= 1,
        "within an interval every quiet peer gets a keepalive");
    s = fake_last (f, ENV_KEEPALIVE, 2);
    ok (s && s->env.flags == 0 && s->env.ttl == 1 && s->n == 1
        && s->len[0] == 8, "one hop, not an echo, the 8-byte fence digest");

    fake_clear (f);
    keepalive_from (f, 3, 0);
    s = fake_last (f, ENV_KEEPALIVE, 3);
    ok (s && s->env.flags == 1, "a keepalive from 3 is echoed back to it");
    keepalive_from (f, 3, 1);
    ok (fake_count (f, ENV_KEEPALIVE, 3) == 1, "an echo is not echoed");

    /* an echo settles what is outstanding; then wait for our next
     * keepalive to 1, and echo it 4 ms later */
    keepalive_from (f, 1, 1);
    fake_clear (f);
    for (int i = 0; i < 2000 && fake_count (f, ENV_KEEPALIVE, 1) == 0; i++)
        fake_advance (f, 0.001);
    ok (fake_count (f, ENV_KEEPALIVE, 1) == 1, "a keepalive went to 1");
    fake_advance (f, 0.004);
    keepalive_from (f, 1, 1);
    ok (fake_peer (f, 1)->live.rtt_us >= 4000
        && fake_peer (f, 1)->live.rtt_us <= 5001,
        "its echo 4 ms later gives 1 a round-trip time (%.0f us)",
        fake_peer (f, 1)->live.rtt_us);
    fake_destroy (&f);
}

static void test_silence (void)
{
    struct fake *f = up4 ();

    fake_advance_alive (f, 30.0);
    ok (all_up (f) && !fake_logged (f, "lost"),
        "30 s of keepalives: every peer stays up");

    /* from now on 2 and 3 keep talking, 1 is silent */
    for (int i = 0; i < 7; i++) {
        keepalive_from (f, 2, 1);
        keepalive_from (f, 3, 1);
        fake_advance (f, 0.5);
    }
    ok (fake_peer (f, 1)->state == PEER_SUSPECT
        && fake_peer (f, 2)->state == PEER_UP,
        "1 silent for 3.5 s (3 intervals): suspect, 2 still up");
    for (int i = 0; i < 4; i++) {
        keepalive_from (f, 2, 1);
        keepalive_from (f, 3, 1);
        fake_advance (f, 0.5);
    }
    ok (fake_peer (f, 1)->state == PEER_DOWN && fake_logged (f, "peer 1 lost: "
                                                             "silent for"),
        "silent for the 5 s timeout: lost");
    ok (fake_peer (f, 2)->state == PEER_UP && fake_peer (f, 3)->state == PEER_UP,
        "the others are not");
    ok (fake_logged (f, "rank 1 fenced"), "and 1 is fenced");
    fake_destroy (&f);
}

static void test_unreachable (void)
{
    struct fake *f = up4 ();

    f->send_errno[2] = EHOSTUNREACH;
    fake_advance_alive (f, 1.0);
    ok (fake_peer (f, 2)->state == PEER_DOWN
        && fake_logged (f, "peer 2 lost: connection gone (EHOSTUNREACH)"),
        "a keepalive to 2 failing with EHOSTUNREACH: 2 is lost at once");
    ok (fake_peer (f, 1)->state == PEER_UP && fake_peer (f, 3)->state == PEER_UP,
        "1 and 3 stay up");
    struct peer *p = fake_peer (f, 1);
    p->route.unreachable = true;      /* a send failed, then it went down */
    live_set_state (f->ov, p, PEER_DOWN);
    live_set_state (f->ov, p, PEER_UP);
    ok (!p->route.unreachable, "coming up clears a stale unreachable mark");
    fake_destroy (&f);
}

static void test_stalled (void)
{
    struct fake *f = up4 ();

    f->now += 2.0;             /* not run for 2 s: under half the timeout */
    fake_advance (f, 0);
    ok (all_up (f) && !fake_logged (f, "did not run"),
        "a pause of 2 s (under half the 5 s timeout) goes unremarked");

    f->now += 20.0;            /* this broker did not run for 20 s */
    fake_advance (f, 0);
    ok (fake_logged (f, "this broker did not run for 20.0s"),
        "a broker stopped for 20 s says so when it runs again");
    ok (!fake_logged (f, "lost") && !fake_logged (f, "rank 1 fenced")
        && !fake_logged (f, "rank 2 fenced") && !fake_logged (f, "rank 3 fenced"),
        "it does not blame its peers for the silence: none lost or fenced");
    ok (fake_logged (f, "rejoining as incarnation 101")
        && fake_peer (f, 1)->state == PEER_CONNECTING,
        "it takes a new incarnation and greets its peers again instead");
    fake_destroy (&f);
}

static void test_never_joined (void)
{
    struct fake *f = fake_create (0, 4, "bgn");

    fake_start (f);
    fake_hello (f, 1, fake_peer (f, 1)->connector ? ENV_HELLO_ACK : ENV_HELLO,
                1001);
    fake_hello (f, 2, fake_peer (f, 2)->connector ? ENV_HELLO_ACK : ENV_HELLO,
                1002);
    fake_advance_alive (f, 14.0);
    ok (fake_peer (f, 3)->state == PEER_CONNECTING
        && !fake_logged (f, "never joined"),
        "3 silent since the start: not fenced within 3 peer timeouts (15 s)");
    fake_advance_alive (f, 1.5);
    ok (fake_logged (f, "never joined"), "after them it is: never joined");
    fake_destroy (&f);
}


/* Lifeguard's local health (issue 42): rank 0 of 16 has 7 peers (1, 2,
 * 4, 8, 12, 14, 15).  Three going silent is no doubt of itself: they are
 * fenced at the peer timeout.  Four (more than half) going silent at
 * once: it doubts its own link first and fences none of them before
 * twice the peer timeout. */
static void advance_hearing (struct fake *f, const uint32_t *talk, int n,
                             double seconds)
{
    for (double t = 0; t < seconds; t += 0.5) {
        for (int i = 0; i < n; i++)
            keepalive_from (f, talk[i], 1);
        fake_advance (f, 0.5);
    }
}

static void test_self_doubt (void)
{
    static const uint32_t four[] = { 1, 2, 4, 8 }, three[] = { 1, 2, 4 };
    struct fake *f = fake_create (0, 16, "bgn");

    if (!f || fake_start (f) < 0)
        bail_out ("the fake core does not start");
    fake_all_up (f);
    advance_hearing (f, four, 4, 5.5);
    ok (f->ov->peers->up == 4 && f->ov->live.self_doubts == 0,
        "3 of 7 peers silent past the peer timeout: lost, as before");
    fake_destroy (&f);

    f = fake_create (0, 16, "bgn");
    if (!f || fake_start (f) < 0)
        bail_out ("the fake core does not start");
    fake_all_up (f);
    advance_hearing (f, three, 3, 5.5);
    ok (f->ov->peers->up == 7 && f->ov->live.self_doubts == 1
        && fake_logged (f, "4 of 7 live peers silent at once"),
        "4 of 7 silent at once: it doubts itself, fences none at the peer "
        "timeout, says so once");
    advance_hearing (f, three, 3, 5.0);
    ok (f->ov->peers->up == 3 && f->ov->live.self_doubts == 1,
        "past twice the peer timeout they are lost");
    fake_destroy (&f);
}

int main (void)
{
    test_keepalives ();
    test_silence ();
    test_unreachable ();
    test_stalled ();
    test_never_joined ();
    test_self_doubt ();
    return done_testing ();
}
