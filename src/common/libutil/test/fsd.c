/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* Unit tests for duration parsing and formatting. */
#include <errno.h>
#include <math.h>
#include "src/common/libtap/tap.h"
#include "src/common/libutil/fsd.h"

static void good (const char *s, double want)
{
    double d = -1;
    ok (fsd_parse_duration (s, &d) == 0 && fabs (d - want) < 1e-9,
        "\"%s\" parses as %g s", s, want);
}

static void bad (const char *s)
{
    double d;
    errno = 0;
    ok (fsd_parse_duration (s, &d) < 0 && errno == EINVAL,
        "\"%s\" is rejected with EINVAL", s ? s : "(null)");
}

static void fmt (double s, const char *want)
{
    char buf[32];
    ok (fsd_format_duration (buf, sizeof (buf), s) > 0, "format %g works", s);
    is (buf, want, "%g formats as %s", s, want);
}

int main (void)
{
    char small[2];

    good ("250ms", 0.25);
    good ("5s", 5);
    good ("5", 5);
    good ("1.5m", 90);
    good ("2h", 7200);
    good ("1d", 86400);
    good ("0", 0);
    good (".5s", 0.5);
    ok (fsd_parse_duration ("inf", &(double){0}) == 0, "inf parses");
    bad (NULL);
    bad ("");
    bad ("-1s");
    bad ("5x");
    bad ("5 s");
    bad (" 5s");
    bad ("0x10");
    bad ("nan");
    bad ("s");
    fmt (0.25, "250ms");
    fmt (5, "5s");
    fmt (90, "90s");
    fmt (300, "5m");
    fmt (0, "0s");
    ok (fsd_format_duration (small, sizeof (small), 100) < 0 && errno == EINVAL,
        "too small buffer gives EINVAL");
    ok (fsd_format_duration (small, sizeof (small), -1) < 0 && errno == EINVAL,
        "negative duration gives EINVAL");
    return done_testing ();
}
