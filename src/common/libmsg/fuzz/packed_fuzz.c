/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* packed_fuzz.c: libFuzzer target for the packed frame list (packed.h),
 * the one frame a broker receives from an overlay peer after its
 * envelope, and for the decode a destination runs on it.
 *
 * The input is a packed list as it comes off the wire (libFuzzer hands
 * it over in an exact-size heap block, so AddressSanitizer sees any read
 * past its end).  The target abort()s when an invariant breaks:
 *   - a refusal has errno EPROTO or E2BIG and a one-line reason;
 *   - an accepted list has at most PACKED_MAX_FRAMES frames, each inside
 *     the input and in order, and packed_size gives the input's size
 *     (nothing trailing was accepted);
 *   - packing the frames again reproduces the input byte for byte, and
 *     fails with ENOSPC given one byte less room;
 *   - msg_decode of the frames (each copied to its own block) either
 *     fails with a reason, or the message packs and reads back to the
 *     same frames.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "message.h"
#include "packed.h"

static void check (int cond, const char *what)
{
    if (!cond) {
        fprintf (stderr, "packed_fuzz: invariant failed: %s\n", what);
        abort ();
    }
}

static void refusal (const char *why)
{
    check (errno == EPROTO || errno == E2BIG, "refused with EPROTO or E2BIG");
    check (why && *why && !strchr (why, '\n'), "a one-line reason");
}

static void frames_inside (const uint8_t *data, size_t size,
                           const struct msg_frame *f, int n)
{
    const uint8_t *pos = data + PACKED_HDR;

    for (int i = 0; i < n; i++) {
        const uint8_t *p = f[i].data;
        check (p == pos + PACKED_HDR, "frames in order, after their length");
        check (f[i].size <= size && p + f[i].size <= data + size,
               "a frame inside the input");
        pos = p + f[i].size;
    }
    check (pos == data + size, "the last frame ends the input");
}

static void repack (const uint8_t *data, size_t size,
                    const struct msg_frame *f, int n)
{
    uint8_t *out = malloc (size);

    check (out != NULL, "malloc");
    check (packed_write (out, size, f, (size_t)n) == (long)size
           && memcmp (out, data, size) == 0, "pack(read(x)) == x");
    errno = 0;
    check (packed_write (out, size - 1, f, (size_t)n) < 0 && errno == ENOSPC,
           "one byte less room: ENOSPC");
    free (out);
}

/* What a destination does: decode the message the frames hold. */
static void decode (const struct msg_frame *f, int n)
{
    struct msg_frame own[PACKED_MAX_FRAMES], enc[PACKED_MAX_FRAMES];
    struct msg_frame back[PACKED_MAX_FRAMES];
    char err[128] = "x";
    const char *why = NULL;
    msg_t *m;

    for (int i = 0; i < n; i++) {
        void *copy = malloc (f[i].size ? f[i].size : 1);
        check (copy != NULL, "malloc");
        if (f[i].size)
            memcpy (copy, f[i].data, f[i].size);
        own[i].data = copy;
        own[i].size = f[i].size;
    }
    if ((m = msg_decode (own, (size_t)n, err, sizeof (err)))) {
        int ne = msg_encode (m, enc, PACKED_MAX_FRAMES);
        size_t len = packed_size (enc, ne > 0 ? (size_t)ne : 0);
        uint8_t *buf = malloc (len);
        check (ne == n && buf != NULL, "a decoded message encodes");
        check (packed_write (buf, len, enc, (size_t)ne) == (long)len,
               "a decoded message packs");
        check (packed_read (buf, len, back, PACKED_MAX_FRAMES, &why) == n,
               "and reads back");
        for (int i = 0; i < n; i++)
            check (back[i].size == f[i].size
                   && (!f[i].size
                       || !memcmp (back[i].data, f[i].data, f[i].size)),
                   "to the same frames");
        free (buf);
        msg_destroy (&m);
    }
    else
        check (err[0] != '\0' && !strchr (err, '\n'), "decode reason");
    for (int i = 0; i < n; i++)
        free ((void *)own[i].data);
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    struct msg_frame f[PACKED_MAX_FRAMES];
    const char *why = NULL;
    int n;

    errno = 0;
    if ((n = packed_read (data, size, f, PACKED_MAX_FRAMES, &why)) < 0) {
        refusal (why);
        return 0;
    }
    check (n <= PACKED_MAX_FRAMES, "count bound");
    check (packed_size (f, (size_t)n) == size, "size: nothing trailing");
    frames_inside (data, size, f, n);
    repack (data, size, f, n);
    decode (f, n);
    return 0;
}

/* vi: ts=4 sw=4 expandtab
 */
