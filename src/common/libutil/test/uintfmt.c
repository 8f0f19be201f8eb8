/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test/uintfmt.c: decimal without printf agrees with printf. */
#include <stdio.h>
#include <string.h>

#include "src/common/libtap/tap.h"
#include "src/common/libutil/uintfmt.h"

static int same (uint32_t v)
{
    char a[16], b[16];
    size_t n = uint_format (a, v);

    a[n] = '\0';
    snprintf (b, sizeof (b), "%u", (unsigned)v);
    return n == strlen (b) && !strcmp (a, b);
}

int main (void)
{
    int bad = 0;

    plan (NO_PLAN);
    ok (same (0) && same (9) && same (10) && same (4294967295u),
        "0, 9, 10 and 2^32-1 as printf writes them");
    for (uint32_t v = 0; v < 200000; v++)
        bad += !same (v);
    for (uint32_t v = 4294967295u - 1000; v != 0; v++)
        bad += !same (v);
    ok (bad == 0, "0..199999 and the last 1,000 values: %d differ", bad);
    char buf[12] = "xxxxxxxxxxx";
    ok (uint_format (buf, 42) == 2 && buf[2] == 'x',
        "no NUL written past the digits");
    done_testing ();
}
