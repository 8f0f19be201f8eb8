/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test/fencemsg.c: fence records on the wire (fencemsg.c).
 *
 * - records and the tree root round-trip, in order, reasons included;
 * - a reason repeated is sent once; past 254 distinct reasons (the
 *   table's 255 slots hold "" too) the rest go as ""; a reason is cut to
 *   255 bytes;
 * - malformed frames (every truncation of a good one, a byte too many,
 *   a wrong version, a fenced flag or reason index out of range, too
 *   many reasons) are refused with EPROTO before any record is passed on.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/common/libtap/tap.h"
#include "src/modules/overlay/fencemsg.h"

#define MAXREC 512

struct got {
    int n;
    struct fence_record rec[MAXREC];
    char reason[MAXREC][256];
};

static void collect (const struct fence_record *r, void *arg)
{
    struct got *g = arg;

    if (g->n < MAXREC) {
        g->rec[g->n] = *r;
        snprintf (g->reason[g->n], sizeof (g->reason[0]), "%s", r->reason);
        g->rec[g->n].reason = g->reason[g->n];
    }
    g->n++;
}

static int decode (struct frame *f, uint32_t *root, struct got *g)
{
    memset (g, 0, sizeof (*g));
    return fencemsg_decode (frame_data (f), frame_size (f), root, collect, g);
}

static void test_round_trip (void)
{
    struct fence_record recs[] = {
        { 5, 1001, true, "connection closed" },
        { 6, 0, false, "" },
        { 4000000000u, 0x0102030405060708ull, true, "connection closed" },
        { 9, 77, true, "keepalive timeout" },
    };
    struct frame *f = fencemsg_encode (17, recs, 4);
    static struct got g;
    uint32_t root = 0;
    size_t want = 1 + 4 + 2 + (1 + 17) + (1 + 17) + 4 + 4 * 14;

    ok (f && frame_size (f) == want,
        "4 records, 2 distinct reasons: %zu bytes (each reason once)", want);
    ok (decode (f, &root, &g) == 4 && g.n == 4 && root == 17,
        "decoded: 4 records, root 17");
    ok (g.rec[0].rank == 5 && g.rec[0].inc == 1001 && g.rec[0].fenced
        && !strcmp (g.rec[0].reason, "connection closed"),
        "the first record, as sent");
    ok (g.rec[1].rank == 6 && !g.rec[1].fenced && !strcmp (g.rec[1].reason, ""),
        "a live record without a reason");
    ok (g.rec[2].rank == 4000000000u
        && g.rec[2].inc == 0x0102030405060708ull,
        "32-bit ranks and 64-bit incarnations keep every bit");
    ok (!strcmp (g.rec[3].reason, "keepalive timeout"), "the second reason");
    frame_decref (&f);

    f = fencemsg_encode (0, NULL, 0);
    root = 99;
    ok (f && frame_size (f) == 11 && decode (f, &root, &g) == 0 && g.n == 0
        && root == 0, "no records: 11 bytes, decoded as none");
    frame_decref (&f);
}

static void test_reason_limits (void)
{
    static struct fence_record recs[300];
    static char names[300][24];
    static struct got g;
    char longr[400];
    uint32_t root;
    struct frame *f;

    for (int i = 0; i < 300; i++) {
        snprintf (names[i], sizeof (names[i]), "reason %d", i);
        recs[i] = (struct fence_record){ (uint32_t)i, 1, true, names[i] };
    }
    f = fencemsg_encode (3, recs, 300);
    ok (f && decode (f, &root, &g) == 300, "300 records, 300 reasons");
    /* the table's 255 slots include "" (index 0) */
    ok (!strcmp (g.reason[0], "reason 0")
        && !strcmp (g.reason[253], "reason 253"),
        "the first %d distinct reasons travel", FENCEMSG_MAX_REASONS - 1);
    ok (!strcmp (g.reason[254], "") && !strcmp (g.reason[299], ""),
        "the table full, later records go without one");
    frame_decref (&f);

    memset (longr, 'x', sizeof (longr) - 1);
    longr[sizeof (longr) - 1] = '\0';
    recs[0].reason = longr;
    f = fencemsg_encode (3, recs, 1);
    ok (f && decode (f, &root, &g) == 1 && strlen (g.reason[0]) == 255,
        "a reason of 399 bytes is cut to 255");
    frame_decref (&f);
}

static int refused (const uint8_t *p, size_t len)
{
    static struct got g;
    uint32_t root;

    memset (&g, 0, sizeof (g));
    errno = 0;
    return fencemsg_decode (p, len, &root, collect, &g) == -1
           && errno == EPROTO && g.n == 0;
}

static void test_malformed (void)
{
    struct fence_record recs[] = {
        { 1, 2, true, "gone" }, { 3, 4, false, "" }, { 5, 6, true, "gone" },
    };
    struct frame *f = fencemsg_encode (8, recs, 3);
    size_t len = frame_size (f);
    uint8_t *buf = malloc (len + 1);
    int all = 1;

    memcpy (buf, frame_data (f), len);
    for (size_t l = 0; l < len; l++)
        if (!refused (buf, l))
            all = 0;
    ok (all, "every truncation of a %zu-byte frame: EPROTO, nothing passed "
        "on", len);
    buf[len] = 0;
    ok (refused (buf, len + 1), "one byte too many: EPROTO");

    buf[0] = FENCEMSG_VERSION + 1;
    ok (refused (buf, len), "another version: EPROTO");
    buf[0] = FENCEMSG_VERSION;

    /* layout: 7 bytes, reason "gone" (1 + 4), count (4), records of 14 */
    size_t rec0 = 7 + 5 + 4, rec2 = rec0 + 2 * 14;
    buf[rec2 + 12] = 2;
    ok (refused (buf, len),
        "a signature flag on the last record with no signature after it: "
        "EPROTO, and not even the first two records were passed on");
    buf[rec2 + 12] = 3;
    ok (refused (buf, len), "flags 3: EPROTO");
    buf[rec2 + 12] = 1;
    buf[rec0 + 13] = 2;
    ok (refused (buf, len), "reason index 2 of 1 reason: EPROTO");
    buf[rec0 + 13] = 1;
    buf[5] = 1;
    buf[6] = 0;
    ok (refused (buf, len), "256 reasons announced: EPROTO");
    buf[5] = 0;
    buf[6] = 1;
    ok (fencemsg_decode (buf, len, &(uint32_t){ 0 }, collect,
                         &(struct got){ 0 }) == 3,
        "the frame put back decodes again");
    free (buf);
    frame_decref (&f);
}

int main (void)
{
    test_round_trip ();
    test_reason_limits ();
    test_malformed ();
    return done_testing ();
}
