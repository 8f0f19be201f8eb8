/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test/loglevel.c: unit tests for loglevel.h. */
#include "src/common/libtap/tap.h"
#include "src/common/libutil/loglevel.h"

int main (void)
{
    is (loglevel_name (3), "error", "3 is error");
    is (loglevel_name (7), "debug", "7 is debug");
    is (loglevel_name (9), "log", "9 is not a level");
    ok (loglevel_parse ("warning") == 4, "warning is 4");
    ok (loglevel_parse ("warn") == 4, "warn is 4");
    ok (loglevel_parse ("err") == 3, "err is 3");
    ok (loglevel_parse ("6") == 6, "6 is 6");
    ok (loglevel_parse ("8") == -1, "8 is refused");
    ok (loglevel_parse ("loud") == -1, "loud is refused");
    ok (loglevel_parse ("") == -1, "empty is refused");
    ok (loglevel_of_line ("bgn-broker[3]: warning: peer 5 lost: x") == 4,
        "a broker's warning line");
    ok (loglevel_of_line ("bgn-broker: error: bind: x") == 3,
        "a line before the rank is known");
    ok (loglevel_of_line ("bgn-broker[0]: info: up") == 6, "an info line");
    ok (loglevel_of_line ("==123== ERROR: AddressSanitizer") == -1,
        "another program's line");
    ok (loglevel_of_line ("bgn-broker[1]: chatter: x") == -1,
        "an unknown level word");
    ok (loglevel_of_line ("no colon here") == -1, "no prefix");
    return done_testing ();
}
