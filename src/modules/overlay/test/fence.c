/* test/fence.c: fence and unfence rules (fence.c) through a fake io. */
#include <string.h>

#include "src/common/libtap/tap.h"
#include "src/modules/overlay/fence.h"
#include "fakeio.h"

static bool delivered_topic (struct fake *f, const char *topic)
{
    for (int i = 0; i < f->ndelivered; i++)
        if (!strcmp (msg_get_topic (f->delivered[i]) ?: "", topic))
            return true;
    return false;
}

static void check_rules (void)
{
    struct fake *f = fake_create (0, 16, "bgn");

    fake_start (f);
    fake_all_up (f);
    ok (f->ov->peers->up == 7, "rank 0 has its 7 peers up");
    fake_clear (f);

    fake_control (f, 1, ENV_FENCE, "{\"rank\":5,\"incarnation\":1005,"
                  "\"reason\":\"test\"}");
    ok (fence_is_fenced (f->ov, 5) && bgn_router_is_down (f->ov->router, 5)
        && f->ov->fence.nfenced == 1, "a fence of 5 from 1 puts 5 down");
    ok (fake_count (f, ENV_FENCE, UINT32_MAX) == 6
        && fake_count (f, ENV_FENCE, 1) == 0,
        "and is flooded to every live peer but the one it came from");
    ok (fake_logged (f, "rank 5 fenced (test)"), "it is logged with its reason");
    fake_advance (f, 0.001);    /* the event batch leaves after its window */
    ok (delivered_topic (f, "overlay.fence"),
        "rank 0 publishes it as an overlay.fence event");
    ok (!strcmp (overlay_health (f->ov), "degraded"), "health is degraded");

    fake_clear (f);
    fake_control (f, 2, ENV_FENCE, "{\"rank\":5,\"incarnation\":1005}");
    fake_control (f, 2, ENV_FENCE, "{\"rank\":5,\"incarnation\":1004}");
    ok (fake_count (f, ENV_FENCE, UINT32_MAX) == 0 && f->ov->fence.seen == 1,
        "the same fence again, or an older one, stops here: no flood");

    fake_control (f, 4, ENV_UNFENCE, "{\"rank\":5,\"incarnation\":1006}");
    ok (!fence_is_fenced (f->ov, 5) && !bgn_router_is_down (f->ov->router, 5)
        && f->ov->fence.nfenced == 0, "an unfence with a newer incarnation "
        "lifts it");
    fake_advance (f, 0.001);
    ok (fake_count (f, ENV_UNFENCE, UINT32_MAX) == 6
        && fake_count (f, ENV_UNFENCE, 4) == 0
        && delivered_topic (f, "overlay.unfence"),
        "and is flooded on (not back to 4) and published");
    fake_clear (f);
    fake_control (f, 4, ENV_UNFENCE, "{\"rank\":5,\"incarnation\":1006}");
    fake_control (f, 4, ENV_FENCE, "{\"rank\":5,\"incarnation\":1005}");
    ok (fake_count (f, ENV_UNFENCE, UINT32_MAX) == 0
        && fake_count (f, ENV_FENCE, UINT32_MAX) == 0
        && !fence_is_fenced (f->ov, 5),
        "a repeated unfence, or a fence older than the live incarnation, "
        "is ignored");

    fake_control (f, 1, ENV_FENCE, "{\"rank\":8,\"incarnation\":1008,"
                  "\"reason\":\"silent\"}");
    ok (fake_peer (f, 8)->state == PEER_DOWN && fence_is_fenced (f->ov, 8)
        && fake_count (f, ENV_FENCE, 8) == 0,
        "a fence of neighbour 8's incarnation takes it down (8 is not told)");
    fake_control (f, 1, ENV_FENCE, "{\"rank\":0,\"incarnation\":55}");
    ok (f->ov->incarnation == 100, "a fence of an old incarnation of ours "
        "is ignored");
    fake_control (f, 1, ENV_FENCE, "{\"rank\":0,\"incarnation\":100}");
    ok (f->ov->incarnation == 101, "a fence of our own incarnation makes us "
        "rejoin as a new one");
    ok (fake_peer (f, 1)->state == PEER_CONNECTING
        && fake_count (f, ENV_HELLO, 1) >= 1,
        "and greets its peers again");
    fake_destroy (&f);
}

static void check_malformed (void)
{
    struct fake *f = fake_create (0, 16, "bgn");

    fake_start (f);
    fake_all_up (f);
    uint64_t bad = f->ov->c.malformed_drops;
    fake_control (f, 2, ENV_FENCE, "{\"rank\":-3,\"incarnation\":1}");
    fake_control (f, 2, ENV_FENCE, "{\"incarnation\":1}");
    fake_control (f, 2, ENV_UNFENCE, "[]");
    ok (f->ov->c.malformed_drops == bad + 3 && f->ov->fence.nfenced == 0,
        "malformed fences are counted and change nothing");
    fake_control (f, 2, ENV_FENCE, "{\"rank\":99,\"incarnation\":1}");
    ok (f->ov->fence.nfenced == 0, "a fence of a rank beyond the size is "
        "ignored");
    fake_destroy (&f);
}

/* Rank 3 of 4 loses every peer: it is the one cut off, and exits 3. */
static void check_partition (void)
{
    struct fake *f = fake_create (3, 4, "bgn");

    fake_start (f);
    fake_all_up (f);
    ok (f->ov->peers->up == 3, "rank 3 of 4 has 3 peers up");
    fake_advance (f, 5.6);
    ok (f->ov->peers->up == 0 && fence_is_fenced (f->ov, 0),
        "silent past the peer timeout, all three are lost and fenced");
    ok (f->stopped == 0, "it does not exit at once");
    fake_advance (f, 2.1);
    ok (f->stopped == 3 + 1 && fake_logged (f, "partitioned"),
        "two keepalive intervals later it exits 3, partitioned");
    fake_destroy (&f);
}

int main (void)
{
    plan (NO_PLAN);
    check_rules ();
    check_malformed ();
    check_partition ();
    done_testing ();
}
