/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test/evbatch.c: TAP unit tests for event batches (evbatch.h).
 *
 * A batch written from messages reads back record by record as the same
 * events; a filtered copy keeps what it copied; the writer refuses what
 * a batch cannot hold; and every malformed buffer the checker must catch
 * (short, bad magic, bad header, truncated or trailing records, bad
 * topics, NULs, seqs out of order) fails with EPROTO and a reason.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/common/libtap/tap.h"
#include "src/common/libmsg/evbatch.h"

static msg_t *event (const char *topic, const char *payload)
{
    msg_t *m = msg_event_create (topic, payload);
    msg_set_userid (m, 42);
    msg_set_rolemask (m, 7);
    msg_set_matchtag (m, 3);
    return m;
}

/* A batch of seqs first.. (n events, topics a.0, a.1, ...). */
static void build (struct evbatch_writer *w, uint32_t first, int n)
{
    char topic[16], payload[32];

    evbatch_writer_init (w, 0x0102030405060708ull);
    for (int i = 0; i < n; i++) {
        snprintf (topic, sizeof (topic), "a.%d", i);
        snprintf (payload, sizeof (payload), "{\"i\":%d}", i);
        msg_t *m = event (topic, i % 2 ? payload : NULL);
        evbatch_add (w, m, first + i);
        msg_destroy (&m);
    }
    evbatch_seal (w);
}

/* Check a copy of buf with byte 'at' set to 'v' (or cut at 'len'). */
static void bad (const uint8_t *buf, size_t len, size_t at, int v,
                 const char *what)
{
    uint8_t *copy = malloc (len ? len : 1);
    struct evbatch_hdr h;
    char why[128] = "";

    memcpy (copy, buf, len);
    if (v >= 0)
        copy[at] = (uint8_t)v;
    errno = 0;
    ok (evbatch_check (copy, len, &h, why, sizeof (why)) < 0
        && errno == EPROTO && why[0], "rejected: %s (%s)", what, why);
    free (copy);
}

int main (void)
{
    struct evbatch_writer w, f;
    struct evbatch_hdr h;
    struct evbatch_rec rec;
    size_t off = 0;
    char why[128];
    int n = 0, same = 1;

    build (&w, 100, 5);
    ok (evbatch_is_batch (w.buf, w.len), "a sealed batch looks like one");
    ok (evbatch_check (w.buf, w.len, &h, why, sizeof (why)) == 0
        && h.count == 5 && h.first == 100 && h.last == 104
        && h.epoch == 0x0102030405060708ull, "it checks: 5 events, 100..104, "
        "the epoch");
    struct evbatch_hdr h2;
    ok (evbatch_header (w.buf, w.len, &h2) == 0 && h2.count == 5
        && h2.first == 100 && h2.last == 104 && h2.epoch == h.epoch
        && evbatch_header (w.buf, 10, &h2) < 0 && errno == EPROTO,
        "evbatch_header reads the header of a checked batch, refuses a "
        "short one");
    while (evbatch_next (w.buf, w.len, &off, &rec)) {
        char topic[16];
        msg_t *m = evbatch_rec_msg (&rec);
        uint32_t seq = 0;
        const char *p;
        snprintf (topic, sizeof (topic), "a.%d", n);
        msg_get_seq (m, &seq);
        p = msg_get_payload (m, NULL);
        same &= m && seq == 100u + n && !strcmp (msg_get_topic (m), topic)
                && msg_get_userid (m) == 42 && msg_get_rolemask (m) == 7
                && msg_get_matchtag (m) == 3
                && (n % 2 ? p && strstr (p, "\"i\"") != NULL : p == NULL);
        msg_destroy (&m);
        n++;
    }
    ok (n == 5 && same, "each record is the event put in: seq, topic, "
        "payload (or none), userid, rolemask, publisher");

    /* filtered copy */
    evbatch_writer_init (&f, h.epoch);
    off = 0;
    while (evbatch_next (w.buf, w.len, &off, &rec))
        if (rec.seq % 2 == 0)
            evbatch_add_rec (&f, &rec);
    ok (evbatch_seal (&f) == 0
        && evbatch_check (f.buf, f.len, &h, NULL, 0) == 0 && h.count == 3
        && h.first == 100 && h.last == 104, "a copy of some records is a "
        "batch of those (100, 102, 104)");
    evbatch_writer_free (&f);

    /* writer limits */
    evbatch_writer_init (&f, 1);
    msg_t *m = event ("x", NULL);
    errno = 0;
    ok (evbatch_seal (&f) < 0 && errno == EINVAL, "an empty batch does not "
        "seal");
    ok (evbatch_add (&f, m, 0) < 0 && errno == EINVAL, "seq 0 is refused");
    evbatch_add (&f, m, 5);
    errno = 0;
    ok (evbatch_add (&f, m, 5) < 0 && errno == EINVAL, "seqs must increase");
    msg_t *nt = msg_create (MSGTYPE_EVENT);
    errno = 0;
    ok (evbatch_add (&f, nt, 9) < 0 && errno == EINVAL, "an event without "
        "a topic is refused");
    ok (evbatch_rec_size (m) == EVBATCH_REC_SIZE + 1, "a record is 24 bytes "
        "plus topic and payload");
    msg_destroy (&nt);
    msg_destroy (&m);
    evbatch_writer_free (&f);

    /* signed: flag 1 in the header word, 64 bytes after the records */
    {
        uint8_t *sb = malloc (w.len + EVBATCH_SIG_SIZE);
        size_t soff = 0;
        int nrec = 0;
        memcpy (sb, w.buf, w.len);
        memset (sb + w.len, 0xa5, EVBATCH_SIG_SIZE);
        sb[15] = EVBATCH_F_SIGNED;
        ok (evbatch_check (sb, w.len + EVBATCH_SIG_SIZE, &h, why,
                           sizeof (why)) == 0
            && (h.flags & EVBATCH_F_SIGNED)
            && evbatch_body_len (sb, w.len + EVBATCH_SIG_SIZE) == w.len,
            "a signed batch checks; its signature covers all before it");
        while (evbatch_next (sb, w.len + EVBATCH_SIG_SIZE, &soff, &rec))
            nrec++;
        ok (nrec == 5, "the signature is not walked as a record");
        ok (evbatch_check (sb, w.len, &h, why, sizeof (why)) < 0,
            "the flag without the signature is malformed");
        ok (evbatch_body_len (w.buf, w.len) == w.len,
            "an unsigned batch is all body");
        free (sb);
    }

    /* chained: flags 3, a 32-byte link between the records and the
     * signature; the signature covers the link too */
    {
        size_t clen = w.len + EVBATCH_LINK_SIZE + EVBATCH_SIG_SIZE;
        uint8_t *cb = malloc (clen);
        size_t coff = 0;
        int nrec = 0;
        memcpy (cb, w.buf, w.len);
        memset (cb + w.len, 0x5a, EVBATCH_LINK_SIZE);
        memset (cb + w.len + EVBATCH_LINK_SIZE, 0xa5, EVBATCH_SIG_SIZE);
        cb[15] = EVBATCH_F_SIGNED | EVBATCH_F_CHAINED;
        ok (evbatch_check (cb, clen, &h, why, sizeof (why)) == 0
            && h.flags == (EVBATCH_F_SIGNED | EVBATCH_F_CHAINED)
            && evbatch_body_len (cb, clen) == w.len + EVBATCH_LINK_SIZE,
            "a chained batch checks; its signature covers the link");
        ok (evbatch_link (cb, clen) == cb + w.len && cb[w.len] == 0x5a,
            "the link is the 32 bytes before the signature");
        ok (evbatch_link (w.buf, w.len) == NULL,
            "an unchained batch has no link");
        while (evbatch_next (cb, clen, &coff, &rec))
            nrec++;
        ok (nrec == 5, "the link is not walked as a record");
        cb[15] = EVBATCH_F_CHAINED;
        ok (evbatch_check (cb, clen, &h, why, sizeof (why)) < 0
            && strstr (why, "flags"),
            "a link without a signature is malformed: %s", why);
        cb[15] = EVBATCH_F_SIGNED | EVBATCH_F_CHAINED;
        ok (evbatch_check (cb, w.len + EVBATCH_SIG_SIZE, &h, why,
                           sizeof (why)) < 0,
            "a chained batch without room for its link is malformed");
        cb[15] = 4;
        ok (evbatch_check (cb, clen, &h, why, sizeof (why)) < 0
            && strstr (why, "not known"),
            "an unknown flag is refused: %s", why);
        free (cb);
    }

    /* tags: a header and sorted 20-byte entries */
    {
        uint8_t tb[EVTAGS_HDR_SIZE + 3 * EVTAGS_ENTRY_SIZE], tag[EVTAGS_TAG_SIZE];
        uint32_t count = 0;
        evtags_put_header (tb, 3);
        for (uint32_t i = 0; i < 3; i++) {
            memset (tag, (int)(0x10 + i), sizeof (tag));
            evtags_put_entry (tb, i, 2 + 5 * i, tag);
        }
        ok (evtags_size (3) == sizeof (tb)
            && evtags_check (tb, sizeof (tb), &count, why, sizeof (why)) == 0
            && count == 3, "a tags frame of 3 entries checks");
        ok (evtags_find (tb, 3, 7) == evtags_tag (tb, 1)
            && evtags_tag (tb, 1)[0] == 0x11 && evtags_find (tb, 3, 2)
            && evtags_find (tb, 3, 12) && !evtags_find (tb, 3, 3)
            && !evtags_find (tb, 3, 13), "each rank's tag is found, no "
            "other");
        ok (evtags_check (tb, sizeof (tb) - 1, &count, why, sizeof (why)) < 0
            && strstr (why, "entries"), "a short tags frame is refused: %s",
            why);
        evtags_put_entry (tb, 2, 7, tag);
        ok (evtags_check (tb, sizeof (tb), &count, why, sizeof (why)) < 0
            && strstr (why, "out of order"),
            "ranks out of order are refused: %s", why);
        tb[0] = EVBATCH_MAGIC;
        ok (evtags_check (tb, sizeof (tb), &count, why, sizeof (why)) < 0,
            "a batch is not a tags frame");
        evtags_put_header (tb, 0);
        ok (evtags_check (tb, EVTAGS_HDR_SIZE, &count, NULL, 0) == 0
            && count == 0, "an empty tags frame checks");
    }

    /* malformed */
    bad (w.buf, 10, 0, -1, "shorter than a header");
    bad (w.buf, w.len, 0, 0xec, "bad magic");
    bad (w.buf, w.len, 1, 2, "bad version");
    bad (w.buf, w.len, 3, 0, "count 0");
    bad (w.buf, w.len, 3, 9, "count larger than the records");
    bad (w.buf, w.len, 7, 0, "first seq 0");
    bad (w.buf, w.len, 11, 99, "last seq before first");
    bad (w.buf, w.len, 13, 1, "reserved header bytes");
    bad (w.buf, w.len - 3, 0, -1, "a truncated record");
    bad (w.buf, w.len, EVBATCH_HDR_SIZE + 3, 101, "record seq out of order");
    bad (w.buf, w.len, EVBATCH_HDR_SIZE + 21, 0, "empty topic");
    bad (w.buf, w.len, EVBATCH_HDR_SIZE + 24, 0x07, "topic with a control "
         "character");
    bad (w.buf, w.len, EVBATCH_HDR_SIZE + 20, 0x40, "unknown record flags");
    bad (w.buf, w.len, EVBATCH_HDR_SIZE + 23, 1, "reserved record bytes");
    /* the second record has a payload: put a NUL in it */
    size_t second = EVBATCH_HDR_SIZE + EVBATCH_REC_SIZE + 3;
    bad (w.buf, w.len, second + EVBATCH_REC_SIZE + 3 + 2, 0, "a NUL in a "
         "payload");
    bad (w.buf, w.len, second + 19, 0xff, "payload length past the end");
    uint8_t *longer = calloc (1, w.len + 2);
    memcpy (longer, w.buf, w.len);
    bad (longer, w.len + 2, 0, -1, "bytes after the last record");
    free (longer);
    evbatch_writer_free (&w);
    return done_testing ();
}
