/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test/rankarg.c: unit tests for rankarg.h (rank arguments). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "src/common/libtap/tap.h"
#include "src/common/libutil/hostmap.h"
#include "src/cmd/rankarg.h"

static void one_good (const char *arg, uint32_t want)
{
    uint32_t r = 12345;
    char err[128] = "";
    ok (rankarg_one (arg, NULL, &r, err, sizeof (err)) == 0 && r == want,
        "'%s' is rank %u", arg, (unsigned)want);
}

static void one_bad (const char *arg)
{
    uint32_t r;
    char err[128] = "", want[128];
    errno = 0;
    snprintf (want, sizeof (want), "'%s' is not a rank", arg);
    ok (rankarg_one (arg, NULL, &r, err, sizeof (err)) < 0 && errno == EINVAL
        && !strcmp (err, want), "'%s' is refused: %s", arg, err);
}

static void set_good (const char *arg, const char *want)
{
    char err[128] = "";
    idset_t *ids = rankarg_set (arg, NULL, err, sizeof (err));
    char *s = ids ? idset_encode (ids, 0) : NULL;
    is (s, want, "set '%s' is %s", arg, want);
    free (s);
    idset_destroy (&ids);
}

static void set_bad (const char *arg, const char *want)
{
    char err[128] = "";
    errno = 0;
    idset_t *ids = rankarg_set (arg, NULL, err, sizeof (err));
    ok (ids == NULL && errno == EINVAL && strstr (err, want) != NULL,
        "set '%s' is refused: %s", arg, err);
    idset_destroy (&ids);
}

int main (void)
{
    one_good ("0", 0);
    one_good ("7", 7);
    one_good ("16777215", 16777215);
    one_bad ("16777216");
    one_bad ("-1");
    one_bad ("+3");
    one_bad ("3x");
    one_bad ("");
    one_bad (" 3");
    one_bad ("node3");
    one_bad ("3,4");

    set_good ("5", "5");
    set_good ("3,5-7", "3,5-7");
    set_good ("[7,1-2]", "1-2,7");
    set_bad ("3,,4", "not a rank or a set of ranks");
    set_bad ("node[1-3]", "not a rank or a set of ranks");
    set_bad ("7-3", "not a rank or a set of ranks");
    set_bad ("[]", "names no rank");

    hostmap_t *hm = hostmap_create (8);
    char err[128];
    uint32_t r;
    for (int i = 0; i < 6; i++) {
        char name[16];
        snprintf (name, sizeof (name), "node%d", i);
        hostmap_set (hm, i, name);
    }
    hostmap_set (hm, 6, "login");
    hostmap_set (hm, 7, "login");
    ok (rankarg_one ("node3", hm, &r, err, sizeof (err)) == 0 && r == 3,
        "with a host map, 'node3' is rank 3");
    ok (rankarg_one ("7", hm, &r, err, sizeof (err)) == 0 && r == 7,
        "with a host map, '7' is rank 7");
    ok (rankarg_one ("8", hm, &r, err, sizeof (err)) < 0
        && !strcmp (err, "rank 8 is not in the instance (size 8: ranks 0-7)"),
        "rank 8 is refused: %s", err);
    ok (rankarg_one ("login", hm, &r, err, sizeof (err)) < 0
        && !strcmp (err, "'login' runs ranks 6-7: give one rank"),
        "a host with two ranks is not one rank: %s", err);
    ok (rankarg_one ("nodeX", hm, &r, err, sizeof (err)) < 0
        && strstr (err, "'nodeX' is not a rank or a host of this instance"),
        "an unknown host: %s", err);
    idset_t *ids = rankarg_set ("node[3-5],login,0", hm, err, sizeof (err));
    char *s = ids ? idset_encode (ids, 0) : NULL;
    is (s, "0,3-7", "hostlist 'node[3-5],login,0' is ranks 0,3-7");
    free (s);
    idset_destroy (&ids);
    ok (rankarg_set ("node[1-9]", hm, err, sizeof (err)) == NULL
        && strstr (err, "'node6' is not a rank or a host"),
        "a hostlist with an unknown host: %s", err);
    ok (rankarg_set ("2-9", hm, err, sizeof (err)) == NULL
        && strstr (err, "rank 9 is not in the instance"),
        "a rank set beyond the size: %s", err);
    ok (rankarg_set ("node[3", hm, err, sizeof (err)) == NULL
        && strstr (err, "is not a rank, a set of ranks or a hostlist"),
        "a broken hostlist: %s", err);
    hostmap_destroy (&hm);

    ok (rankarg_numeric ("1,3-5"), "'1,3-5' is numeric");
    ok (!rankarg_numeric ("node1"), "'node1' is not numeric");
    ok (!rankarg_numeric (""), "'' is not numeric");
    return done_testing ();
}
