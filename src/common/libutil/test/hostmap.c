/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test/hostmap.c: unit tests for hostmap.h. */
#include <errno.h>
#include <stdlib.h>

#include "src/common/libtap/tap.h"
#include "src/common/libutil/hostmap.h"

static void check_ranks (hostmap_t *hm, const char *host, const char *want)
{
    idset_t *ids = idset_create (0);
    int n = hostmap_ranks (hm, host, ids);
    char *s = idset_encode (ids, 0);
    ok (n >= 0, "ranks of '%s': %d", host, n);
    is (s, want, "ranks of '%s' are '%s'", host, want);
    free (s);
    idset_destroy (&ids);
}

static void check_hostlist (hostmap_t *hm, const char *ranks, const char *want)
{
    idset_t *ids = idset_decode (ranks, NULL, 0);
    char *s = hostmap_hostlist (hm, ids);
    is (s, want, "hosts of ranks %s are '%s'", ranks, want);
    free (s);
    idset_destroy (&ids);
}

int main (void)
{
    hostmap_t *hm = hostmap_create (8);
    char name[32];

    ok (hm != NULL && hostmap_size (hm) == 8, "create a table of 8 ranks");
    ok (hostmap_host (hm, 3) == NULL && hostmap_known (hm) == 0,
        "every host is unknown at first");
    for (int r = 0; r < 6; r++) {
        snprintf (name, sizeof (name), "node%d", r);
        hostmap_set (hm, r, name);
    }
    hostmap_set (hm, 6, "login0.cluster");
    is (hostmap_host (hm, 4), "node4", "rank 4 is node4");
    ok (hostmap_known (hm) == 7, "7 known");
    ok (hostmap_set (hm, 4, "n4") == 0 && hostmap_known (hm) == 7,
        "replacing a host keeps the count");
    hostmap_set (hm, 4, "node4");
    errno = 0;
    ok (hostmap_set (hm, 8, "x") < 0 && errno == EINVAL, "rank 8: EINVAL");
    errno = 0;
    ok (hostmap_set (hm, 1, "a b") < 0 && errno == EINVAL,
        "a name with a space: EINVAL");
    ok (hostmap_set (hm, 1, "n[1]") < 0, "a name with brackets: EINVAL");
    ok (hostmap_set (hm, 1, "") < 0, "an empty name: EINVAL");
    ok (hostmap_host (hm, 99) == NULL, "out of range: NULL");

    check_ranks (hm, "node3", "3");
    check_ranks (hm, "nodeX", "");
    check_ranks (hm, "login0", "6");
    check_ranks (hm, "login0.cluster", "6");
    check_ranks (hm, "login0.other", "");
    hostmap_set (hm, 7, "node3");
    check_ranks (hm, "node3", "3,7");

    check_hostlist (hm, "0-2,5", "node[0-2,5]");
    check_hostlist (hm, "3,7", "node3");
    check_hostlist (hm, "6", "login0.cluster");
    check_hostlist (hm, "", "");
    hostmap_destroy (&hm);
    ok (hm == NULL, "destroy clears the pointer");

    hm = hostmap_create (3);
    check_hostlist (hm, "0-2", "");
    hostmap_destroy (&hm);
    errno = 0;
    ok (hostmap_create (IDSET_ID_MAX + 2u) == NULL && errno == EINVAL,
        "too large: EINVAL");
    return done_testing ();
}
