/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test/wire.c: network-order integers: the bytes are big-endian, any
 * alignment, and every width reads back what was written. */
#include <string.h>

#include "src/common/libtap/tap.h"
#include "src/common/libutil/wire.h"

int main (void)
{
    uint8_t buf[16];
    const uint8_t be64[8] = { 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef };

    plan (NO_PLAN);
    wire_put16 (buf, 0xbeef);
    ok (buf[0] == 0xbe && buf[1] == 0xef, "put16 writes the high byte first");
    ok (wire_get16 (buf) == 0xbeef, "get16 reads it back");
    wire_put32 (buf + 1, 0xdeadbeefu);
    ok (buf[1] == 0xde && buf[2] == 0xad && buf[3] == 0xbe && buf[4] == 0xef,
        "put32 at an odd address writes big-endian");
    ok (wire_get32 (buf + 1) == 0xdeadbeefu, "get32 reads it back there");
    wire_put64 (buf + 3, 0x0123456789abcdefull);
    ok (!memcmp (buf + 3, be64, 8), "put64 writes big-endian");
    ok (wire_get64 (buf + 3) == 0x0123456789abcdefull, "get64 reads it back");
    wire_put32 (buf, 0xffffffffu);
    wire_put64 (buf + 4, UINT64_MAX);
    ok (wire_get32 (buf) == 0xffffffffu && wire_get64 (buf + 4) == UINT64_MAX,
        "all ones survive (no sign extension)");
    return done_testing ();
}
