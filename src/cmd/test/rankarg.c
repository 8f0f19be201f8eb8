/* test/rankarg.c: unit tests for rankarg.h (rank arguments). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "src/common/libtap/tap.h"
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

    ok (rankarg_numeric ("1,3-5"), "'1,3-5' is numeric");
    ok (!rankarg_numeric ("node1"), "'node1' is not numeric");
    ok (!rankarg_numeric (""), "'' is not numeric");
    return done_testing ();
}
