/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test/packed.c: TAP unit tests for the packed frame list (packed.h).
 *
 * Round trips (no frames, empty frames, the most frames, a large one)
 * with the exact bytes of one packed list checked by hand; then every
 * way a list can be refused, each with its errno: a count above the
 * bound (when reading and writing), a frame of 2^32 bytes or more, too
 * little room, a count or length cut short, a frame running past the
 * end, and trailing bytes.  Truncating a valid list at every length must
 * fail cleanly.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "src/common/libtap/tap.h"
#include "src/common/libmsg/packed.h"

static int same (const struct msg_frame *a, const struct msg_frame *b,
                 int n)
{
    for (int i = 0; i < n; i++) {
        if (a[i].size != b[i].size
            || (a[i].size && memcmp (a[i].data, b[i].data, a[i].size)))
            return 0;
    }
    return 1;
}

static void roundtrips (void)
{
    struct msg_frame in[PACKED_MAX_FRAMES], out[PACKED_MAX_FRAMES];
    uint8_t buf[4096];
    const uint8_t want[] = { 0, 0, 0, 2, 0, 0, 0, 2, 'h', 'i',
                             0, 0, 0, 0 };
    const char *why = NULL;
    char *big;
    long n;

    ok (packed_write (buf, sizeof (buf), NULL, 0) == 4
        && packed_read (buf, 4, out, PACKED_MAX_FRAMES, &why) == 0,
        "no frames: 4 bytes, read back as none");

    in[0].data = "hi";
    in[0].size = 2;
    in[1].data = "";
    in[1].size = 0;
    n = packed_write (buf, sizeof (buf), in, 2);
    ok (n == (long)sizeof (want) && !memcmp (buf, want, sizeof (want)),
        "count, then length and bytes per frame, network order");
    ok (packed_size (in, 2) == sizeof (want), "packed_size agrees");
    ok (packed_read (buf, (size_t)n, out, PACKED_MAX_FRAMES, &why) == 2
        && same (in, out, 2), "two frames (one empty) round trip");
    ok (out[0].data == buf + 8, "frames read point into the buffer");

    static const char letters[] = "abcdefghijklmnopqrstuvwxyz0123456789"
                                  "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    for (int i = 0; i < PACKED_MAX_FRAMES; i++) {
        /* frame i: i bytes, all inside 'letters' */
        in[i].data = letters + i % 8;
        in[i].size = (size_t)i;
    }
    n = packed_write (buf, sizeof (buf), in, PACKED_MAX_FRAMES);
    ok (n > 0 && packed_read (buf, (size_t)n, out, PACKED_MAX_FRAMES, &why)
                     == PACKED_MAX_FRAMES
        && same (in, out, PACKED_MAX_FRAMES),
        "PACKED_MAX_FRAMES frames round trip");

    big = malloc (1 << 20);
    uint8_t *bigbuf = malloc ((1 << 20) + 64);
    if (!big || !bigbuf)
        bail_out ("out of memory");
    memset (big, 'x', 1 << 20);
    in[0].data = big;
    in[0].size = 1 << 20;
    n = packed_write (bigbuf, (1 << 20) + 64, in, 1);
    ok (n == (1 << 20) + 8
        && packed_read (bigbuf, (size_t)n, out, 1, &why) == 1
        && same (in, out, 1), "a 1 MiB frame round trips");
    free (big);
    free (bigbuf);
}

static void write_bounds (void)
{
    struct msg_frame in[PACKED_MAX_FRAMES + 1];
    uint8_t buf[512];

    for (int i = 0; i <= PACKED_MAX_FRAMES; i++) {
        in[i].data = "x";
        in[i].size = 1;
    }
    errno = 0;
    ok (packed_write (buf, sizeof (buf), in, PACKED_MAX_FRAMES + 1) < 0
        && errno == E2BIG, "writing too many frames: E2BIG");
    errno = 0;
    ok (packed_write (buf, packed_size (in, 3) - 1, in, 3) < 0
        && errno == ENOSPC, "too little room: ENOSPC");
    in[0].size = (size_t)UINT32_MAX + 1;
    errno = 0;
    ok (packed_write (buf, sizeof (buf), in, 1) < 0 && errno == EMSGSIZE,
        "a frame of 2^32 bytes: EMSGSIZE");
}

static int refused (const void *buf, size_t len, size_t max, int errnum,
                    const char *word)
{
    struct msg_frame out[PACKED_MAX_FRAMES];
    const char *why = NULL;

    errno = 0;
    return packed_read (buf, len, out, max, &why) < 0 && errno == errnum
           && why && strstr (why, word) && !strchr (why, '\n');
}

static void read_bounds (void)
{
    struct msg_frame in[2] = { { "abc", 3 }, { "de", 2 } };
    uint8_t buf[64], big[8] = { 0, 0, 0, PACKED_MAX_FRAMES + 1 };
    uint8_t huge[8] = { 0xff, 0xff, 0xff, 0xff };
    uint8_t longf[12] = { 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 'a' };
    long n = packed_write (buf, sizeof (buf), in, 2);
    int clean = 1;

    ok (refused (buf, 0, PACKED_MAX_FRAMES, EPROTO, "count"),
        "empty input: EPROTO, count cut short");
    ok (refused (buf, 3, PACKED_MAX_FRAMES, EPROTO, "count"),
        "3 bytes: EPROTO, count cut short");
    ok (refused (buf, 6, PACKED_MAX_FRAMES, EPROTO, "length"),
        "a length cut short: EPROTO");
    ok (refused (buf, (size_t)n - 1, PACKED_MAX_FRAMES, EPROTO, "past"),
        "the last frame one byte short: EPROTO, runs past the end");
    ok (refused (longf, sizeof (longf), PACKED_MAX_FRAMES, EPROTO, "past"),
        "a length of 2^32-1 with 3 bytes left: EPROTO");
    buf[n] = 0;
    ok (refused (buf, (size_t)n + 1, PACKED_MAX_FRAMES, EPROTO, "trailing"),
        "a byte after the last frame: EPROTO, trailing bytes");
    ok (refused (big, 4, PACKED_MAX_FRAMES, E2BIG, "too many"),
        "a count of PACKED_MAX_FRAMES + 1: E2BIG");
    ok (refused (huge, 4, PACKED_MAX_FRAMES, E2BIG, "too many"),
        "a count of 2^32-1: E2BIG, before any frame is read");
    ok (refused (buf, (size_t)n, 1, E2BIG, "too many"),
        "two frames where the caller has room for one: E2BIG");
    for (long len = 0; len < n; len++) {
        struct msg_frame out[PACKED_MAX_FRAMES];
        errno = 0;
        if (packed_read (buf, (size_t)len, out, PACKED_MAX_FRAMES, NULL) >= 0
            || errno != EPROTO)
            clean = 0;
    }
    ok (clean, "every truncation of a valid list is refused with EPROTO");
}

int main (void)
{
    plan (NO_PLAN);
    roundtrips ();
    write_bounds ();
    read_bounds ();
    return done_testing ();
}
