/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test/fence.c: the fence view and how it spreads (fence.c), via a fake
 * io: records only move forward, changes go up the tree to the root in
 * one report per window, the root multicasts one batch per window down
 * its tree, brokers pass batches on without reporting them, keepalive
 * digests repair what a batch missed. */
#include <stdio.h>
#include <string.h>
#include <sodium.h>

#include "src/common/libtap/tap.h"
#include "src/modules/overlay/fence.h"
#include "src/modules/overlay/livesig.h"
#include "src/modules/overlay/suspect.h"
#include "fakeio.h"

static bool delivered_topic (struct fake *f, const char *topic)
{
    for (int i = 0; i < f->ndelivered; i++)
        if (!strcmp (msg_get_topic (f->delivered[i]) ?: "", topic))
            return true;
    return false;
}

static struct fake *up (uint32_t rank, uint32_t size)
{
    struct fake *f = fake_create (rank, size, "bgn");
    fake_start (f);
    fake_all_up (f);
    fake_advance (f, 0.1);   /* what the start-up reported is gone */
    fake_clear (f);
    return f;
}

/* Rank 0 of 16 is the fence root: its tree children are 1, 2, 4, 8. */
static void check_root (void)
{
    struct fake *f = up (0, 16);
    uint64_t batches = f->ov->fence.batches;

    fake_fence1 (f, 1, ENV_REPORT, 5, 1005, true);
    ok (fence_is_fenced (f->ov, 5) && bgn_router_is_down (f->ov->router, 5)
        && fence_count (f->ov) == 1, "a report that 5 is down fences it");
    ok (fake_logged (f, "rank 5 fenced (test)") && f->nsent == 0,
        "it is logged, and nothing goes out before the window ends");
    fake_fence1 (f, 2, ENV_REPORT, 6, 1006, true);
    fake_advance (f, 0.02);
    ok (fake_count (f, ENV_BATCH, UINT32_MAX) == 4
        && fake_count (f, ENV_BATCH, 1) == 1 && fake_count (f, ENV_BATCH, 8) == 1
        && fake_count (f, ENV_REPORT, UINT32_MAX) == 0,
        "one window later one batch goes to each tree child (1, 2, 4, 8)");
    struct sent *b = fake_last (f, ENV_BATCH, 4);
    ok (b && fake_records (b) == 2 && fake_has_record (b, 5, 1005, true)
        && fake_has_record (b, 6, 1006, true),
        "the batch carries both fences");
    ok (delivered_topic (f, "overlay.membership")
        && f->ov->fence.batches == batches + 1,
        "rank 0 publishes the batch as one overlay.membership event");
    ok (!strcmp (overlay_health (f->ov), "degraded"), "health is degraded");

    fake_clear (f);
    fake_fence1 (f, 2, ENV_REPORT, 5, 1005, true);
    fake_fence1 (f, 2, ENV_REPORT, 5, 1004, true);
    fake_fence1 (f, 2, ENV_REPORT, 5, 1004, false);
    fake_advance (f, 0.05);
    ok (f->nsent == 0 && f->ov->fence.seen == 2,
        "the same fence again, or anything older, changes nothing, sends nothing");
    fake_fence1 (f, 4, ENV_REPORT, 5, 1006, false);
    ok (!fence_is_fenced (f->ov, 5) && !bgn_router_is_down (f->ov->router, 5)
        && fence_count (f->ov) == 1, "5 live as a newer incarnation: lifted");
    fake_advance (f, 0.02);
    b = fake_last (f, ENV_BATCH, 1);
    ok (b && fake_has_record (b, 5, 1006, false) && fake_records (b) == 1,
        "and multicast as one record");
    fake_fence1 (f, 4, ENV_REPORT, 5, 1006, true);
    ok (fence_is_fenced (f->ov, 5), "the same incarnation fenced wins over live");

    fake_fence1 (f, 1, ENV_BATCH, 8, 1008, true);
    ok (fake_peer (f, 8)->state == PEER_DOWN && fence_is_fenced (f->ov, 8),
        "a fence of neighbour 8's incarnation takes it down");
    fake_fence1 (f, 1, ENV_REPORT, 0, 55, true);
    ok (f->ov->incarnation == 100, "a fence of an old incarnation of ours is "
        "ignored");
    uint64_t bad = f->ov->fence.bad_records;
    fake_fence1 (f, 1, ENV_REPORT, 7, 1ULL << 62, true);
    fake_fence1 (f, 1, ENV_REPORT, 99, 1, true);
    ok (!fence_is_fenced (f->ov, 7) && f->ov->fence.bad_records == bad + 2,
        "incarnations past 2^53 and ranks past the size are refused, counted");
    fake_fence1 (f, 1, ENV_REPORT, 0, 100, true);
    ok (f->ov->incarnation > 100 && fake_logged (f, "rejoining"),
        "a fence of our own incarnation makes us rejoin as a newer one");
    fake_destroy (&f);
}

/* Incarnations no broker can have taken yet (the fake's wall clock is
 * 1000 s: 1e9 us) are refused: the subject could never beat them. */
static void check_bounds (void)
{
    struct fake *f = up (0, 16);
    uint64_t bad = f->ov->fence.bad_records;

    fake_fence1 (f, 1, ENV_REPORT, 7, (1ULL << 53) - 1, true);
    fake_fence1 (f, 1, ENV_REPORT, 7,
                 1000000000ULL + FENCE_INC_AHEAD + 10000000, true);
    fake_fence1 (f, 1, ENV_REPORT, 9, (1ULL << 53) - 1, false);
    ok (!fence_is_fenced (f->ov, 7) && !fence_lookup (f->ov, 9)
        && f->ov->fence.bad_records == bad + 3,
        "2^53-1, or a fence or live record past the clock's bound, is refused");
    fake_fence1 (f, 1, ENV_REPORT, 7, 1000000000ULL + FENCE_INC_AHEAD / 2,
                 true);
    ok (fence_is_fenced (f->ov, 7), "one within the bound is believed");
    uint64_t claimed = 1000000000ULL + FENCE_INC_AHEAD / 2;
    fake_fence1 (f, 1, ENV_REPORT, 0, claimed, false);
    fake_advance (f, 0.5);
    ok (f->ov->incarnation == claimed + 1 && f->ov->fence.false_claims == 1
        && f->ov->incarnation < fence_inc_limit (f->ov, FENCE_BOUND_RECORD),
        "a live record of us at an incarnation we never had: we rejoin just "
        "above it, within what every broker accepts");
    fake_destroy (&f);
}

static struct fake *up_keyed (uint32_t rank, uint32_t size)
{
    struct fake *f = fake_create (rank, size, "bgn");
    f->keys = true;
    fake_start (f);
    fake_all_up (f);
    fake_advance (f, 0.1);
    fake_clear (f);
    return f;
}

/* With signing keys, a live record is believed only on its rank's own
 * word: signed by it, or over its own link.  A fence on anyone's. */
static void check_attested (void)
{
    struct fake *f = up_keyed (0, 16);
    struct fence_record rec = { .rank = 5, .inc = 2005, .fenced = false,
                                .reason = "rejoined" };
    uint8_t sig[64];

    fake_fence1 (f, 1, ENV_REPORT, 5, 1005, true);
    fake_advance (f, f->ov->cfg.keepalive_interval);
    ok (fence_is_fenced (f->ov, 5), "a fence on a peer's word is believed "
        "once nobody refutes it");
    fake_fence1 (f, 1, ENV_REPORT, 5, 2005, false);
    ok (fence_is_fenced (f->ov, 5) && f->ov->sign.unattested == 1
        && fake_logged (f, "not signed by it, nor heard from it"),
        "a live record of rank 5 from rank 1, unsigned, lifts nothing");
    fake_livesig (f, 6, 2005, sig);
    rec.sig = sig;
    fake_fence (f, 1, ENV_REPORT, 0, &rec, 1);
    ok (fence_is_fenced (f->ov, 5) && f->ov->sign.unattested == 2,
        "signed by another rank: refused too");
    fake_livesig (f, 5, 2005, sig);
    fake_fence (f, 1, ENV_REPORT, 0, &rec, 1);
    ok (!fence_is_fenced (f->ov, 5)
        && fence_lookup (f->ov, 5)->inc == 2005,
        "signed by rank 5: believed, the fence is lifted");
    fake_advance (f, 0.02);
    struct sent *b = fake_last (f, ENV_BATCH, 4);
    ok (b && fake_has_record (b, 5, 2005, false),
        "and passed down (the signature with it)");
    fake_fence1 (f, 1, ENV_REPORT, 9, 3000, false);
    ok (!fence_lookup (f->ov, 9),
        "an unsigned live record naming a new incarnation makes no record");
    fake_fence1 (f, 1, ENV_REPORT, 2, 1002, true);
    fake_hello (f, 2, ENV_HELLO, 2002);
    ok (!fence_is_fenced (f->ov, 2) && fence_lookup (f->ov, 2)->inc == 2002,
        "a neighbour's HELLO over its own link is its own word: unfenced");
    fake_destroy (&f);
}

/* Issue 42: 2,000 forged live records a second cost the victim 15 % of
 * a core, one signature check each.  A link whose live records fail 16
 * checks is in a back-off: its live records are refused unchecked,
 * counted, the back-off logged once; a record whose signature is held
 * already is not checked again. */
static void check_livesig_budget (void)
{
    struct fake *f = up_keyed (0, 16);
    struct fence_record rec = { .rank = 5, .inc = 3005, .fenced = false,
                                .reason = "rejoined" };
    uint8_t sig[64];
    int logs;

    fake_fence1 (f, 1, ENV_REPORT, 5, 1005, true);
    fake_advance (f, f->ov->cfg.keepalive_interval);   /* believed */
    fake_livesig (f, 6, 3005, sig);     /* well-formed, not rank 5's */
    rec.sig = sig;
    for (int i = 0; i < 20; i++) {
        rec.inc = 3005 + (uint64_t)i;
        fake_fence (f, 1, ENV_REPORT, 0, &rec, 1);
    }
    logs = 0;
    for (int i = 0; i < f->nlogs; i++)
        if (strstr (f->logs[i], "peer 1 sent 16 live records whose "
                    "signatures failed"))
            logs++;
    ok (f->ov->livesig.backoffs == 1
        && f->ov->livesig.refused == 4 && logs == 1
        && fence_is_fenced (f->ov, 5),
        "20 forged live records from rank 1: 16 checked, then its live "
        "records are refused unchecked (4), the back-off logged once");
    fake_livesig (f, 5, 4005, sig);
    rec.inc = 4005;
    fake_fence (f, 2, ENV_REPORT, 0, &rec, 1);
    ok (!fence_is_fenced (f->ov, 5) && fence_lookup (f->ov, 5)->inc == 4005,
        "rank 5's real record over another link is still believed");
    fake_fence (f, 1, ENV_REPORT, 0, &rec, 1);
    ok (f->ov->livesig.refused == 4,
        "the same record again from the banned link: its signature is held "
        "already, nothing to check or refuse");
    fake_advance_alive (f, 11);
    fake_livesig (f, 5, 5005, sig);
    rec.inc = 5005;
    fake_fence (f, 1, ENV_REPORT, 0, &rec, 1);
    ok (fence_lookup (f->ov, 5)->inc == 5005,
        "after the 10 s back-off, rank 1's word is checked again");
    fake_destroy (&f);
}

/* A HELLO with rank's signature of its live record at inc (hex) */
static void hello_signed (struct fake *f, uint32_t from, uint64_t inc,
                          const uint8_t sig[64])
{
    char json[768], hex[129];

    sodium_bin2hex (hex, sizeof (hex), sig, 64);
    snprintf (json, sizeof (json), "{\"version\":%d,\"rank\":%u,"
              "\"instance\":\"test-instance\",\"incarnation\":%llu,"
              "\"hostname\":\"host%u\",\"topology\":\"%s\",\"seq\":0,"
              "\"live\":\"%s\"}", PROTOCOL_VERSION, (unsigned)from,
              (unsigned long long)inc, (unsigned)from, f->ov->topo_spec, hex);
    fake_hello_json (f, from, ENV_HELLO, inc, json, NULL);
}

/* The signature a HELLO brings is checked when the record is first sent
 * on, not when the HELLO comes: a forged one is then dropped (the record
 * goes on unsigned), a good one goes with the record. */
static void check_hello_livesig (void)
{
    struct fake *f = up_keyed (0, 16);
    uint8_t sig[64];
    uint64_t bad = f->ov->sign.bad;
    struct sent *b;

    fake_livesig (f, 6, 2008, sig);          /* rank 6's, not rank 8's */
    hello_signed (f, 8, 2008, sig);
    ok (fake_peer (f, 8)->hello.incarnation == 2008 && f->ov->sign.bad == bad,
        "a neighbour restarted: admitted, its signature not checked yet");

    fake_fence1 (f, 1, ENV_REPORT, 2, 1002, true);
    fake_livesig (f, 6, 2002, sig);
    hello_signed (f, 2, 2002, sig);
    fake_advance (f, 0.02);
    b = fake_last (f, ENV_BATCH, 4);
    ok (!fence_is_fenced (f->ov, 2) && b && fake_has_record (b, 2, 2002, false)
        && fake_record_signed (b, 2, 2002) == 0 && f->ov->sign.bad == bad + 1,
        "a forged signature in a fenced rank's HELLO: checked when the "
        "record goes on, and it goes on unsigned");

    fake_fence1 (f, 1, ENV_REPORT, 2, 2002, true);
    fake_clear (f);
    fake_livesig (f, 2, 3002, sig);
    hello_signed (f, 2, 3002, sig);
    fake_advance (f, 0.02);
    b = fake_last (f, ENV_BATCH, 4);
    ok (!fence_is_fenced (f->ov, 2) && b && fake_record_signed (b, 2, 3002) == 1
        && f->ov->sign.bad == bad + 1,
        "its own signature goes on with its record");

    /* one who holds a shared key (or a late HELLO of an older one) says
     * rank 9's hello again with junk: the good one waiting stays */
    uint8_t good[64], junk[64];
    fake_fence1 (f, 1, ENV_REPORT, 9, 1009, true);
    fake_livesig (f, 9, 2009, good);
    fake_livesig (f, 6, 2009, junk);
    ok (livesig_note (f->ov, 9, 2009, good)
        && livesig_note (f->ov, 9, 2009, junk)
        && !livesig_note (f->ov, 9, 1500, good),
        "rank 9's signature, then junk for it, then an older one: noted "
        "(the older refused)");
    fake_clear (f);
    fence_apply (f->ov, 9, 2009, false, "rejoined", FROM_HERE);
    fake_advance (f, 0.02);
    b = fake_last (f, ENV_BATCH, 4);
    ok (!fence_is_fenced (f->ov, 9) && b && fake_record_signed (b, 9, 2009) == 1,
        "its record goes on signed: the junk did not push out the good "
        "signature");
    fake_destroy (&f);
}

/* A refusal may push a rank past the record bound (up to the follow
 * bound); its rejoin record is its own word, which peers take up to the
 * HELLO bound: "fence it, then refuse it far ahead" evicts nobody. */
static void check_refusal_bound (void)
{
    struct fake *r3 = up_keyed (3, 16), *r0 = up_keyed (0, 16);
    uint64_t ahead = 1000000000ULL + FENCE_INC_AHEAD * 3 / 2;
    char nak[128];
    struct fence_record rec = { .rank = 3, .fenced = false,
                                .reason = "up" };
    uint8_t sig[64];

    snprintf (nak, sizeof (nak), "{\"reason\":\"fenced: rejoin\","
              "\"incarnation\":%llu}", (unsigned long long)ahead);
    fake_hello_json (r3, 2, ENV_HELLO_NAK, 1002, nak, NULL);
    fake_advance (r3, 0.5);
    ok (r3->ov->incarnation == ahead + 1,
        "a refusal naming an incarnation 1.5 years ahead is followed");
    uint64_t bad = r3->ov->fence.bad_records;
    fake_hello (r3, 2, ENV_HELLO, 1002);   /* rank 2 up again */
    fake_fence1 (r3, 2, ENV_VIEW, 3, ahead + 1, false);
    ok (r3->ov->fence.bad_records == bad,
        "its own live record coming back from a peer is no bad record");
    fake_fence1 (r0, 1, ENV_REPORT, 3, 1003, true);
    rec.inc = r3->ov->incarnation;
    fake_livesig (r0, 3, rec.inc, sig);
    rec.sig = sig;
    fake_fence (r0, 1, ENV_REPORT, 0, &rec, 1);
    ok (!fence_is_fenced (r0->ov, 3),
        "and the rank's signed rejoin record, as far ahead, is taken: it "
        "is not kept out");
    fake_fence1 (r0, 1, ENV_REPORT, 3, rec.inc, true);
    fake_advance (r0, r0->ov->cfg.keepalive_interval);
    ok (fence_is_fenced (r0->ov, 3),
        "and when it dies, a fence of that incarnation (the one it "
        "announced) is taken once nobody refutes it: it is not live for "
        "ever either");
    fake_fence1 (r0, 1, ENV_REPORT, 7, ahead, true);
    ok (!fence_is_fenced (r0->ov, 7),
        "a fence that far ahead, on a peer's word, is refused");
    fake_destroy (&r3);
    fake_destroy (&r0);
}

/* A fence above any incarnation a broker had (someone's word, on anyone's
 * word): its neighbours fence it, and when it talks it must be told, in a
 * message addressed to the incarnation it talks with, naming the fence, so
 * it rejoins above it at once.  (It was told nothing: only the fence's own
 * incarnation was told, and a message to that one it dropped as stale, so
 * it went on unheard until some hello of its was refused.) */
static void check_fenced_above (void)
{
    struct fake *r4 = up (4, 16), *r5 = up (5, 16);
    struct envelope ka = { .kind = ENV_KEEPALIVE, .ttl = 1, .source = 5 };
    uint64_t talks_as = fake_peer (r4, 5)->hello.incarnation;
    uint64_t above = talks_as + 500;
    struct sent *s;

    fake_fence1 (r4, 0, ENV_BATCH, 5, above, true);
    ok (fence_is_fenced (r4->ov, 5) && fake_peer (r4, 5)->state == PEER_DOWN,
        "a fence of neighbour 5 above its incarnation: 5 is down here");
    fake_clear (r4);
    ka.sender_inc = talks_as;
    fake_inject (r4, 5, &ka, NULL, NULL, 0, NULL);
    s = fake_last (r4, ENV_VIEW, 5);
    ok (s && s->env.receiver_inc == talks_as
        && fake_has_record (s, 5, above, true),
        "5 still talks: it is told the fence, addressed to the incarnation "
        "it talks with");
    fake_inject (r4, 5, &ka, NULL, NULL, 0, NULL);
    ok (fake_count (r4, ENV_VIEW, 5) == 1, "told once a second at most");

    fake_fence1 (r5, 4, ENV_VIEW, 5, r5->ov->incarnation + 500, true);
    fake_advance (r5, 0.5);
    ok (fake_logged (r5, "which it never had")
        && r5->ov->incarnation == r5->incarnation + 501,
        "told so, 5 rejoins just above the fence");
    fake_destroy (&r4);
    fake_destroy (&r5);
}

/* Rank 4 of 16: its parent in rank 0's tree is 0, its children 5 and 6. */
static void check_member (void)
{
    struct fake *f = up (4, 16);
    struct sent *s;

    fake_fence1 (f, 0, ENV_BATCH, 9, 1009, true);
    ok (fence_is_fenced (f->ov, 9), "a batch from the root is applied");
    ok (fake_count (f, ENV_BATCH, 5) == 1 && fake_count (f, ENV_BATCH, 6) == 1
        && fake_count (f, ENV_BATCH, UINT32_MAX) == 2,
        "and passed on to its children 5 and 6, no one else");
    s = fake_last (f, ENV_BATCH, 6);
    ok (s && fake_has_record (s, 9, 1009, true), "as it came");
    fake_advance (f, 0.05);
    ok (fake_count (f, ENV_REPORT, UINT32_MAX) == 0,
        "what came from the root is not reported back up");

    fake_clear (f);
    fake_fence1 (f, 5, ENV_REPORT, 10, 1010, true);
    fake_fence1 (f, 6, ENV_REPORT, 11, 1011, true);
    ok (f->nsent == 0, "reports from children wait for the window");
    fake_advance (f, 0.02);
    s = fake_last (f, ENV_REPORT, 0);
    ok (fake_count (f, ENV_REPORT, UINT32_MAX) == 1 && s
        && fake_has_record (s, 10, 1010, true)
        && fake_has_record (s, 11, 1011, true),
        "then one report to the parent, rank 0, carries both");

    /* a view from a peer: news is reported up as well */
    fake_clear (f);
    fake_fence1 (f, 5, ENV_VIEW, 12, 1012, true);
    fake_advance (f, 0.02);
    s = fake_last (f, ENV_REPORT, 0);
    ok (fence_is_fenced (f->ov, 12) && s && fake_has_record (s, 12, 1012, true),
        "a view's news is applied and reported up");

    /* keepalive digests: two that differ, and we send our view */
    fake_clear (f);
    struct envelope ka = { .kind = ENV_KEEPALIVE, .flags = 1, .ttl = 1,
                           .source = 5, .dest = 4 };
    const char *d = "\x01\x02\x03\x04\x05\x06\x07\x08";
    size_t len = 8;
    fake_inject (f, 5, &ka, &d, &len, 1, NULL);
    ok (fake_count (f, ENV_VIEW, 5) == 0, "one keepalive with another digest: "
        "wait");
    fake_advance (f, 2.5);
    fake_inject (f, 5, &ka, &d, &len, 1, NULL);
    s = fake_last (f, ENV_VIEW, 5);
    ok (s && fake_has_record (s, 9, 1009, true)
        && fake_has_record (s, 12, 1012, true),
        "the second: our whole view goes to 5");
    fake_destroy (&f);
}

/* Rank 5 of 16 loses its parent 4: it reports to 4's parent, rank 0. */
static void check_skip_parent (void)
{
    struct fake *f = up (5, 16);
    struct sent *s;

    fake_control (f, 4, ENV_GOODBYE, NULL);
    ok (fence_is_fenced (f->ov, 4) && fake_peer (f, 4)->state == PEER_DOWN,
        "4 said goodbye: down and fenced");
    fake_advance (f, 0.02);
    s = fake_last (f, ENV_REPORT, UINT32_MAX);
    ok (s && s->env.dest == 0 && s->to != 4
        && fake_has_record (s, 4, 1004, true),
        "the report goes to rank 0 (via %u), skipping fenced parent 4",
        s ? s->to : 0);
    fake_destroy (&f);
}

static void check_malformed (void)
{
    struct fake *f = up (0, 16);
    struct envelope env = { .kind = ENV_REPORT, .ttl = 1, .source = 2,
                            .dest = 0 };
    const char *junk = "\x01\x00\x00";
    size_t len = 3;

    uint64_t bad = f->ov->route.count[RC_malformed_drops];
    fake_inject (f, 2, &env, &junk, &len, 1, NULL);
    fake_control (f, 2, ENV_BATCH, "{\"rank\":1}");
    ok (f->ov->route.count[RC_malformed_drops] == bad + 2
        && fence_count (f->ov) == 0,
        "malformed fence frames are counted and change nothing");
    fake_destroy (&f);
}

/* Rank 3 of 4 loses every peer: it is the one cut off, and exits 3. */
static void check_partition (void)
{
    struct fake *f = up (3, 4);

    ok (f->ov->peers->up == 3 && f->ov->health.formed,
        "rank 3 of 4 has its 3 peers up: the overlay formed");
    fake_advance (f, 5.6);
    ok (f->ov->peers->up == 3 && !fence_is_fenced (f->ov, 0)
        && f->ov->live.self_doubts == 1 && fake_logged (f, "3 of 3 live peers "
                                                     "silent at once"),
        "all three silent at once: it doubts itself first and fences none "
        "at the peer timeout (logged, counted)");
    fake_advance (f, 5.0);
    ok (f->ov->peers->up == 0 && fence_is_fenced (f->ov, 0),
        "silent past twice the peer timeout, all three are lost and "
        "fenced");
    ok (f->stopped == 0, "it does not exit at once");
    fake_advance (f, 2.1);
    ok (f->stopped == 3 + 1 && fake_logged (f, "partitioned"),
        "two keepalive intervals later it exits 3, partitioned");
    fake_destroy (&f);
}

/* Rank 1 of 2 whose one peer, rank 0, says goodbye (its overlay was
 * unloaded): alone, but not partitioned; no crit line. */
static void check_root_left (void)
{
    struct fake *f = up (1, 2);

    fake_control (f, 0, ENV_GOODBYE, NULL);
    fake_advance (f, 2.1);
    ok (f->ov->peers->up == 0 && fence_is_fenced (f->ov, 0)
        && f->stopped == 3 + 1,
        "rank 1 of 2 after rank 0's goodbye: alone, it asks to stop (3)");
    ok (fake_logged (f, "rank 0 left the instance and no peer is up here")
        && !fake_logged (f, "partitioned"),
        "... and says rank 0 left, not that it is partitioned");
    fake_destroy (&f);
}

/* Rank 5 of 8 (rank 0 is no neighbour of it) hears every peer say
 * goodbye, as when a launcher stops every broker at once and 5 runs
 * last: nothing was cut, so no partition and no exit; but a peer that
 * falls silent instead of saying goodbye is a cut. */
static void check_peers_left (void)
{
    static const uint32_t nb[] = { 1, 3, 4, 6, 7 };
    struct fake *f = up (5, 8);

    for (int i = 0; i < 5; i++)
        fake_control (f, nb[i], ENV_GOODBYE, NULL);
    fake_advance (f, 2.1);
    ok (f->ov->peers->up == 0 && !fence_is_fenced (f->ov, 0)
        && f->stopped == 0 && !fake_logged (f, "partitioned")
        && fake_logged (f, "every peer left the instance"),
        "rank 5 of 8, every peer said goodbye: no partition, no exit");
    fake_destroy (&f);

    f = up (5, 8);
    for (int i = 0; i < 4; i++)
        fake_control (f, nb[i], ENV_GOODBYE, NULL);
    fake_advance (f, 5.6 + 2.1);
    ok (f->ov->peers->up == 0 && f->stopped == 3 + 1
        && fake_logged (f, "partitioned: rank 0 is unreachable"),
        "... four said goodbye and the fifth fell silent: partitioned, "
        "exit 3");
    fake_destroy (&f);
}

/* Rank 0 of 16 hears, from a peer that is no neighbour of 5, that every
 * neighbour of 5 is fenced: 5 is live and out of reach. */
static struct fake *cut_off_5 (bool ending)
{
    struct fake *f = up (0, 16);
    uint32_t nb[64];
    int n = bgn_topo_neighbours (f->ov->topo, 5, nb, 64);
    struct fence_record recs[64];
    uint32_t from = fake_peer_not_near (f, 5);

    if (ending)
        overlay_ending (f->ov);
    for (int i = 0; i < n; i++)
        recs[i] = (struct fence_record){ .rank = nb[i], .inc = 2000 + nb[i],
                                         .fenced = true, .reason = "left" };
    fake_fence (f, from, ENV_VIEW, 0, recs, n);
    fake_advance (f, 2.1);
    return f;
}

/* Rank 0 that cannot reach a live rank says so, once, at crit. */
static void check_partition_root (void)
{
    struct fake *f = cut_off_5 (false);

    ok (partition_found (f->ov) && f->ov->partition.unreachable_live == 1
        && fake_logged (f, "partitioned: 1 live ranks cannot be reached"),
        "rank 0: rank 5 out of reach is a partition, logged");
    ok (f->stopped == 0, "rank 0 goes on");
    fake_destroy (&f);
}

/* While the instance ends, brokers leave on purpose and the reports of
 * who left are lost with them: ranks out of reach are counted only. */
static void check_partition_ending (void)
{
    struct fake *f = cut_off_5 (true);

    ok (!partition_found (f->ov) && f->ov->partition.unreachable_live == 1
        && !fake_logged (f, "partitioned"),
        "rank 0, instance ending: rank 5 out of reach is counted, not "
        "called lost");
    fake_destroy (&f);

    f = up (3, 4);
    overlay_ending (f->ov);
    fake_advance (f, 10.6 + 2.1);
    ok (f->ov->peers->up == 0 && f->stopped == 0
        && !fake_logged (f, "partitioned"),
        "rank 3 of 4, instance ending: every peer gone, it does not exit 3");
    fake_destroy (&f);
}

/* Before the overlay ever formed, a broker never exits partitioned. */
static void check_not_formed (void)
{
    struct fake *f = fake_create (3, 4, "bgn");

    fake_start (f);
    fake_hello (f, 2, ENV_HELLO, 1002);   /* 0 and 1 never answer */
    fake_advance (f, 40);
    ok (!f->ov->health.formed && f->stopped == 0,
        "with two peers never up, 40 s on it has not exited");
    ok (fence_is_fenced (f->ov, 0) && fence_is_fenced (f->ov, 1)
        && fake_logged (f, "never joined"),
        "the peers that never joined are fenced as such");
    fake_destroy (&f);
}

/* A rank whose key could not be asked for (the bootstrap did not
 * answer) may have one: its word is refused, even signed, until the key
 * is known; it is not taken unsigned. */
static void check_key_unanswered (void)
{
    struct fake *f = up_keyed (0, 16);
    struct fence_record rec = { .rank = 5, .inc = 2005, .fenced = false,
                                .reason = "rejoined" };
    uint8_t sig[64];
    uint64_t bad;

    fake_fence1 (f, 1, ENV_REPORT, 5, 1005, true);
    fake_advance (f, f->ov->cfg.keepalive_interval);   /* believed */
    f->key_unanswered[5] = true;
    fake_fence1 (f, 1, ENV_REPORT, 5, 2005, false);
    ok (fence_is_fenced (f->ov, 5),
        "rank 5's key could not be asked for: its unsigned live record "
        "lifts nothing");
    fake_livesig (f, 5, 2005, sig);
    rec.sig = sig;
    bad = f->ov->sign.bad;
    fake_fence (f, 1, ENV_REPORT, 0, &rec, 1);
    ok (fence_is_fenced (f->ov, 5) && f->ov->sign.bad == bad
        && f->ov->sign.unchecked == 1,
        "nor its signed one (counted as not checked, not as bad)");
    f->key_unanswered[5] = false;
    fake_fence (f, 1, ENV_REPORT, 0, &rec, 1);
    ok (!fence_is_fenced (f->ov, 5) && fence_lookup (f->ov, 5)->inc == 2005,
        "once the key is had, the same signed record lifts the fence");
    fake_destroy (&f);
}


/* Rank r's own signed live record at inc, from peer 'from'. */
static void signed_live (struct fake *f, uint32_t from, uint32_t r,
                         uint64_t inc)
{
    struct fence_record rec = { .rank = r, .inc = inc, .fenced = false,
                                .reason = "up" };
    uint8_t sig[64];

    fake_livesig (f, r, inc, sig);
    rec.sig = sig;
    fake_fence (f, from, ENV_REPORT, 0, &rec, 1);
}

/* Issue 42, item 4: a fence on a peer's word of the incarnation a rank
 * lives with is a suspicion, sent on but not acted on; the rank refutes
 * it with its signed record one up; a peer three of whose fences are
 * refuted loses the power to fence; a suspicion nobody refutes is
 * believed after half a keepalive interval. */
static void check_suspicion (void)
{
    struct fake *f = up_keyed (0, 16);
    double grace = f->ov->cfg.keepalive_interval / 2;

    signed_live (f, 1, 6, 1005);
    ok (!fence_is_fenced (f->ov, 6) && fence_lookup (f->ov, 6)->inc == 1005,
        "rank 6 (no neighbour of rank 0, one of rank 2) is live as 1005");
    fake_fence1 (f, 2, ENV_VIEW, 6, 1005, true);
    ok (!fence_is_fenced (f->ov, 6) && f->ov->suspect.suspected == 1
        && suspect_lookup (f->ov, 6),
        "a fence of it from rank 2 is a suspicion: routing unchanged");
    fake_advance (f, 0.02);
    struct sent *b = fake_last (f, ENV_BATCH, 4);
    ok (b && fake_has_record (b, 6, 1005, true),
        "it goes on as a fence, for rank 6 to hear");
    signed_live (f, 1, 6, 1006);
    ok (!fence_is_fenced (f->ov, 6) && f->ov->suspect.refuted == 1
        && !suspect_lookup (f->ov, 6),
        "rank 6's signed record one up refutes it");
    fake_advance (f, grace * 2);
    ok (!fence_is_fenced (f->ov, 6) && f->ov->suspect.confirmed == 0,
        "and it is not believed later");
    fake_fence1 (f, 2, ENV_VIEW, 6, 1006, true);
    signed_live (f, 1, 6, 1007);
    ok (!suspect_powerless (f->ov, 2) && f->ov->suspect.power_lost == 0,
        "two refuted: rank 2 still may fence");
    fake_fence1 (f, 2, ENV_VIEW, 6, 1007, true);
    signed_live (f, 1, 6, 1008);
    ok (suspect_powerless (f->ov, 2) && f->ov->suspect.power_lost == 1
        && fake_logged (f, "peer 2 brought 3 fences their ranks refuted"),
        "three refuted: rank 2 loses the power to fence, logged");
    fake_fence1 (f, 2, ENV_VIEW, 6, 1008, true);
    fake_fence1 (f, 2, ENV_VIEW, 9, 1009, true);
    ok (!suspect_lookup (f->ov, 6) && !fence_lookup (f->ov, 9)
        && f->ov->suspect.fences_ignored == 2,
        "its fences are ignored, counted, whoever they name");
    fake_fence1 (f, 1, ENV_REPORT, 6, 1008, true);
    fake_advance (f, grace / 2);
    ok (!fence_is_fenced (f->ov, 6),
        "another peer's fence waits for a refutation");
    fake_advance (f, grace);
    ok (fence_is_fenced (f->ov, 6) && f->ov->suspect.confirmed == 1,
        "nobody refutes it: believed after half a keepalive interval");
    fake_advance_alive (f, 10.5);
    ok (!suspect_powerless (f->ov, 2), "the back-off ends after 10 s");
    /* rank 5 is no neighbour of rank 2: rank 2 cannot have found it,
     * it only passed it on; nor is a root's batch its sender's word */
    uint64_t lost = f->ov->suspect.power_lost;
    for (uint64_t i = 0; i < 3; i++) {
        signed_live (f, 1, 5, 2005 + 2 * i);
        fake_fence1 (f, 2, ENV_REPORT, 5, 2005 + 2 * i, true);
        signed_live (f, 1, 5, 2006 + 2 * i);
    }
    for (uint64_t i = 0; i < 3; i++) {
        struct fence_record rec = { .rank = 6, .inc = 1009 + 2 * i,
                                    .fenced = true, .reason = "batch" };
        signed_live (f, 1, 6, 1009 + 2 * i);
        fake_fence (f, 2, ENV_BATCH, 0, &rec, 1);
        signed_live (f, 1, 6, 1010 + 2 * i);
    }
    ok (f->ov->suspect.power_lost == lost && !suspect_powerless (f->ov, 2)
        && f->ov->suspect.refuted == 9,
        "refuted fences it only relayed (a report of a non-neighbour, a "
        "root's batch) cost it nothing");
    fake_destroy (&f);
}

/* A neighbour we keep hearing is alive to us, whatever a peer says. */
static void check_witness (void)
{
    struct fake *f = up_keyed (0, 16);

    fake_fence1 (f, 1, ENV_REPORT, 10, 1010, true);
    ok (!fence_is_fenced (f->ov, 10) && suspect_lookup (f->ov, 10),
        "a rank never fenced (no record here) is suspected too, not fenced");
    fake_advance (f, 0.02);
    struct sent *b = fake_last (f, ENV_BATCH, UINT32_MAX);
    ok (b && fake_has_record (b, 10, 1010, true),
        "and the suspicion goes on as a fence");

    signed_live (f, 1, 4, 1004);
    fake_fence1 (f, 2, ENV_VIEW, 4, 1004, true);
    fake_advance_alive (f, f->ov->cfg.keepalive_interval * 2);
    ok (!fence_is_fenced (f->ov, 4) && !suspect_lookup (f->ov, 4)
        && fence_is_fenced (f->ov, 10) && f->ov->suspect.confirmed == 1,
        "a fence of neighbour 4, which we hear, is never believed here "
        "(10's, which nobody refuted, is)");
    fake_destroy (&f);
}

/* The accused refutes: one incarnation up, signed, links kept; what its
 * peers send to the incarnation it refuted from is still taken, and a
 * peer's traffic at its own refuted incarnation is its word. */
static void check_refute (void)
{
    struct fake *f = up_keyed (5, 16);
    uint64_t inc = f->ov->incarnation;
    int ups = f->ov->peers->up;

    fake_fence1 (f, 4, ENV_VIEW, 5, inc, true);
    ok (f->ov->incarnation == inc + 1 && f->ov->fence.refutations == 1
        && f->ov->peers->up == ups && f->ov->hello.rejoined_at == 0,
        "a fence of this broker's incarnation is refuted: one up, no "
        "rejoin, every link still up");
    char incstr[48];
    int readies = 0;
    snprintf (incstr, sizeof (incstr), "\"incarnation\":%llu",
              (unsigned long long)(inc + 1));
    for (int i = 0; i < f->nrequests; i++)
        if (!strcmp (msg_get_topic (f->requests[i]), "overlay.ready")
            && strstr (msg_get_payload (f->requests[i], NULL), incstr))
            readies++;
    ok (readies == 1, "and it reports ready again, as that incarnation: "
        "rank 0 may have taken the fence and forgotten its readiness");
    fake_advance (f, 0.02);
    struct sent *r = fake_last (f, ENV_REPORT, UINT32_MAX);
    ok (r && fake_record_signed (r, 5, inc + 1) == 1,
        "its live record one up goes out signed");
    struct envelope ka = { .kind = ENV_KEEPALIVE, .ttl = 1, .source = 4,
                           .dest = 5, .receiver_inc = inc };
    uint64_t stale = f->ov->hello.stale_drops;
    fake_inject (f, 4, &ka, NULL, NULL, 0, NULL);
    ok (f->ov->hello.stale_drops == stale,
        "a message to the incarnation it refuted from is not stale");
    struct peer *p4 = fake_peer (f, 4);
    uint64_t p4inc = p4->hello.incarnation;
    struct envelope ka2 = { .kind = ENV_KEEPALIVE, .ttl = 1, .source = 4,
                            .dest = 5, .sender_inc = p4inc + 1 };
    fake_inject (f, 4, &ka2, NULL, NULL, 0, NULL);
    ok (f->ov->hello.stale_drops == stale && p4->hello.incarnation == p4inc + 1
        && fence_lookup (f->ov, 4) && fence_lookup (f->ov, 4)->inc == p4inc + 1,
        "a neighbour talking one incarnation up over its link refuted: "
        "its word, taken");
    fake_destroy (&f);
}

int main (void)
{
    plan (NO_PLAN);
    check_root ();
    check_bounds ();
    check_member ();
    check_fenced_above ();
    check_skip_parent ();
    check_malformed ();
    check_partition ();
    check_root_left ();
    check_peers_left ();
    check_partition_root ();
    check_partition_ending ();
    check_not_formed ();
    check_attested ();
    check_livesig_budget ();
    check_hello_livesig ();
    check_key_unanswered ();
    check_refusal_bound ();
    check_suspicion ();
    check_witness ();
    check_refute ();
    done_testing ();
}
