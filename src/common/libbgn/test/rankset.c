/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test/rankset.c: unit tests for the rank bitmap. */
#include <errno.h>

#include "src/common/libtap/tap.h"
#include "src/common/libbgn/bgn.h"

int main (int argc, char *argv[])
{
    struct bgn_rankset *s;

    plan (NO_PLAN);
    errno = 0;
    ok (bgn_rankset_create (0) == NULL && errno == EINVAL,
        "create (0) fails with EINVAL");
    s = bgn_rankset_create (200);
    ok (s != NULL && bgn_rankset_size (s) == 200, "create (200)");
    ok (bgn_rankset_count (s) == 0 && bgn_rankset_first (s) == -1,
        "new set is empty");
    ok (bgn_rankset_add (s, 0) == 1 && bgn_rankset_add (s, 63) == 1
        && bgn_rankset_add (s, 64) == 1 && bgn_rankset_add (s, 199) == 1,
        "add 0, 63, 64, 199");
    ok (bgn_rankset_add (s, 63) == 0, "adding a member again returns 0");
    errno = 0;
    ok (bgn_rankset_add (s, 200) == -1 && errno == EINVAL,
        "add out of range is EINVAL");
    cmp_ok (bgn_rankset_count (s), "==", 4, "count is 4");
    ok (bgn_rankset_test (s, 64) && !bgn_rankset_test (s, 65)
        && !bgn_rankset_test (s, 5000), "test members, non-members, out of range");
    int seen[4], n = 0;
    for (int r = bgn_rankset_first (s); r >= 0 && n < 4; r = bgn_rankset_next (s, (uint32_t)r))
        seen[n++] = r;
    ok (n == 4 && seen[0] == 0 && seen[1] == 63 && seen[2] == 64 && seen[3] == 199,
        "iteration visits members in order");
    ok (bgn_rankset_next (s, 199) == -1, "next after the last member is -1");
    ok (bgn_rankset_remove (s, 63) == 1 && bgn_rankset_remove (s, 63) == 0,
        "remove returns 1 then 0");
    cmp_ok (bgn_rankset_count (s), "==", 3, "count is 3 after remove");
    bgn_rankset_clear (s);
    ok (bgn_rankset_count (s) == 0 && bgn_rankset_first (s) == -1,
        "clear empties the set");
    bgn_rankset_destroy (&s);
    ok (s == NULL, "destroy nulls the pointer");
    bgn_rankset_destroy (&s);
    pass ("destroy (NULL) is harmless");

    s = bgn_rankset_create (1u << 20);
    for (uint32_t r = 0; r < (1u << 20); r += 1000)
        bgn_rankset_add (s, r);
    long visited = 0;
    for (int r = bgn_rankset_first (s); r >= 0; r = bgn_rankset_next (s, (uint32_t)r))
        visited++;
    ok (visited == 1049 && bgn_rankset_count (s) == 1049,
        "2^20 ranks: every 1000th is iterated (1049)");
    bgn_rankset_destroy (&s);
    return done_testing ();
}
