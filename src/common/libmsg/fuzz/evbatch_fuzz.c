/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* evbatch_fuzz.c: libFuzzer target for evbatch_check() and the writer.
 *
 * Each input is used three times (the third: as a tags frame,
 * check_tags):
 *   1. as a batch buffer, copied to an exact-size heap block so that
 *      AddressSanitizer sees any read past its end;
 *   2. as the makings of a batch: NUL-separated pieces become topic and
 *      payload pairs written with the writer, which must check; then the
 *      input's first bytes, as (position, value) pairs, corrupt a copy of
 *      it, which is checked like any buffer.
 * Whenever a buffer passes the check, the target abort()s unless its
 * records walk to exactly 'count' of them, each makes an event message,
 * and writing them again gives back the very same bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "evbatch.h"

static void check_one (const uint8_t *data, size_t size)
{
    uint8_t *copy = malloc (size ? size : 1);
    struct evbatch_hdr h;
    struct evbatch_writer w;
    struct evbatch_rec rec;
    size_t off = 0;
    unsigned n = 0;

    if (!copy)
        abort ();
    if (size)
        memcpy (copy, data, size);
    if (evbatch_check (copy, size, &h, NULL, 0) == 0) {
        evbatch_writer_init (&w, h.epoch);
        while (evbatch_next (copy, size, &off, &rec)) {
            msg_t *m = evbatch_rec_msg (&rec);
            if (!m || evbatch_add_rec (&w, &rec) < 0)
                abort ();
            msg_destroy (&m);
            n++;
        }
        /* the writer makes the unsigned form: compare up to the trailer,
         * the flags word cleared */
        size_t body = size - (h.flags & EVBATCH_F_SIGNED ? EVBATCH_SIG_SIZE
                                                          : 0)
                      - (h.flags & EVBATCH_F_CHAINED ? EVBATCH_LINK_SIZE : 0);
        if ((evbatch_link (copy, size) != NULL)
            != ((h.flags & EVBATCH_F_CHAINED) != 0))
            abort ();
        memset (copy + 12, 0, 4);
        if (n != h.count || evbatch_seal (&w) < 0 || w.len != body
            || memcmp (w.buf, copy, body) != 0)
            abort ();
        evbatch_writer_free (&w);
    }
    free (copy);
}

/* The input as a tags frame: a checked one is found entry by entry and
 * written again to the same bytes. */
static void check_tags (const uint8_t *data, size_t size)
{
    uint8_t *copy = malloc (size ? size : 1), *again;
    uint32_t count;

    if (!copy)
        abort ();
    if (size)
        memcpy (copy, data, size);
    if (evtags_check (copy, size, &count, NULL, 0) == 0) {
        if (!(again = malloc (evtags_size (count))))
            abort ();
        evtags_put_header (again, count);
        for (uint32_t i = 0; i < count; i++) {
            uint32_t r = evtags_rank (copy, i);
            if (evtags_find (copy, count, r) != evtags_tag (copy, i))
                abort ();
            evtags_put_entry (again, i, r, evtags_tag (copy, i));
        }
        if (evtags_size (count) != size || memcmp (again, copy, size) != 0)
            abort ();
        free (again);
    }
    free (copy);
}

/* A printable topic from a piece (at most 255 bytes, never empty). */
static void topic_of (const uint8_t *p, size_t len, char *topic)
{
    size_t n = len > 255 ? 255 : len;

    for (size_t i = 0; i < n; i++)
        topic[i] = (char)(0x20 + p[i] % 0x5f);
    if (n == 0)
        topic[n++] = 't';
    topic[n] = '\0';
}

static void build (const uint8_t *data, size_t size)
{
    struct evbatch_writer w;
    struct evbatch_hdr h;
    const uint8_t *p = data, *end = data + size;
    uint32_t seq = 1;
    char topic[256];

    evbatch_writer_init (&w, size);
    while (p < end && w.count < 64) {
        const uint8_t *z = memchr (p, 0, end - p);
        size_t tlen = z ? (size_t)(z - p) : (size_t)(end - p);
        const uint8_t *pl = z ? z + 1 : end;
        const uint8_t *z2 = pl < end ? memchr (pl, 0, end - pl) : NULL;
        size_t plen = z2 ? (size_t)(z2 - pl) : (size_t)(end - pl);
        msg_t *m = msg_create (MSGTYPE_EVENT);
        topic_of (p, tlen, topic);
        if (!m || msg_set_topic (m, topic) < 0
            || (plen && msg_set_payload (m, (const char *)pl, plen) < 0)
            || evbatch_add (&w, m, seq) < 0)
            abort ();
        msg_destroy (&m);
        seq += 1 + (tlen & 3);
        p = z2 ? z2 + 1 : end;
    }
    if (w.count > 0) {
        if (evbatch_seal (&w) < 0
            || evbatch_check (w.buf, w.len, &h, NULL, 0) < 0
            || h.count != w.count)
            abort ();
        check_one (w.buf, w.len);
        for (size_t i = 0; i + 1 < size && i < 16; i += 2)
            w.buf[data[i] % w.len] = data[i + 1];
        check_one (w.buf, w.len);
    }
    evbatch_writer_free (&w);
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    check_one (data, size);
    check_tags (data, size);
    build (data, size);
    return 0;
}
