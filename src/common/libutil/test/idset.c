/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test/idset.c: unit tests for idset.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "src/common/libtap/tap.h"
#include "src/common/libutil/idset.h"

static void check_roundtrip (const char *in, const char *want)
{
    char err[256] = "";
    idset_t *s = idset_decode (in, err, sizeof (err));
    char *out = s ? idset_encode (s, 0) : NULL;
    is (out, want, "decode '%s' encodes as '%s'", in, want);
    if (!s)
        diag ("%s", err);
    free (out);
    idset_destroy (&s);
}

static void check_bad (const char *in)
{
    char err[256] = "";
    errno = 0;
    idset_t *s = idset_decode (in, err, sizeof (err));
    ok (s == NULL && errno == EINVAL && err[0] != '\0',
        "decode '%s' fails with EINVAL: %s", in, err);
    idset_destroy (&s);
}

int main (void)
{
    idset_t *s, *t;
    char *str;

    plan (NO_PLAN);

    ok ((s = idset_create (0)) != NULL, "create empty");
    cmp_ok (idset_count (s), "==", 0, "count 0");
    cmp_ok (idset_first (s), "==", -1, "first of empty is -1");
    cmp_ok (idset_last (s), "==", -1, "last of empty is -1");
    str = idset_encode (s, 0);
    is (str, "", "empty encodes as ''");
    free (str);
    ok (idset_set (s, 3) == 0 && idset_set (s, 1) == 0
        && idset_set (s, 2) == 0 && idset_set (s, 7) == 0
        && idset_set (s, 200) == 0, "set 3 1 2 7 200");
    ok (idset_set (s, 3) == 0, "set 3 again");
    cmp_ok (idset_count (s), "==", 5, "count 5");
    ok (idset_test (s, 7) && !idset_test (s, 6) && !idset_test (s, 100000),
        "test 7 yes, 6 no, 100000 no");
    str = idset_encode (s, 0);
    is (str, "1-3,7,200", "encode");
    free (str);
    str = idset_encode (s, IDSET_FLAG_BRACKETS);
    is (str, "[1-3,7,200]", "encode with brackets");
    free (str);
    cmp_ok (idset_first (s), "==", 1, "first 1");
    cmp_ok (idset_next (s, 3), "==", 7, "next after 3 is 7");
    cmp_ok (idset_next (s, 7), "==", 200, "next after 7 is 200");
    cmp_ok (idset_next (s, 200), "==", -1, "next after 200 is -1");
    cmp_ok (idset_last (s), "==", 200, "last 200");
    ok (idset_clear (s, 2) == 0 && idset_clear (s, 99999) == 0,
        "clear 2 and absent 99999");
    cmp_ok (idset_count (s), "==", 4, "count 4");
    str = idset_encode (s, 0);
    is (str, "1,3,7,200", "encode after clear");
    free (str);
    errno = 0;
    ok (idset_set (s, IDSET_ID_MAX + 1) < 0 && errno == EINVAL,
        "set above IDSET_ID_MAX: EINVAL");
    ok (idset_set (s, IDSET_ID_MAX) == 0 && idset_last (s) == (int)IDSET_ID_MAX,
        "set IDSET_ID_MAX works");
    ok (idset_clear (s, IDSET_ID_MAX) == 0, "clear it");
    t = idset_copy (s);
    ok (t && idset_equal (s, t), "copy is equal");
    idset_set (t, 5);
    ok (!idset_equal (s, t), "differs after set");
    idset_clear (t, 5);
    ok (idset_equal (s, t), "equal again after clear (capacity differs)");
    idset_destroy (&t);
    ok (t == NULL, "destroy sets NULL");
    idset_destroy (&t);
    pass ("destroy NULL is safe");

    str = idset_encode (s, 0);
    int n = 0;
    for (int id = idset_first (s); id >= 0; id = idset_next (s, id))
        n++;
    cmp_ok (n, "==", idset_count (s), "iteration visits count ids");
    free (str);
    idset_clear_all (s);
    cmp_ok (idset_count (s), "==", 0, "clear_all");
    idset_destroy (&s);

    /* word boundaries */
    s = idset_create (0);
    ok (idset_set_range (s, 60, 130) == 0, "set_range 60-130");
    cmp_ok (idset_count (s), "==", 71, "count 71");
    ok (idset_set_range (s, 0, 63) == 0, "set_range 0-63 overlapping");
    cmp_ok (idset_count (s), "==", 131, "count 131");
    str = idset_encode (s, 0);
    is (str, "0-130", "merged 0-130");
    free (str);
    ok (idset_set_range (s, 5, 4) < 0 && errno == EINVAL, "set_range 5-4 EINVAL");
    idset_destroy (&s);

    check_roundtrip ("0-3,7", "0-3,7");
    check_roundtrip ("[0-3,7]", "0-3,7");
    check_roundtrip ("", "");
    check_roundtrip ("[]", "");
    check_roundtrip ("5", "5");
    check_roundtrip ("7,0-3,2,4", "0-4,7");
    check_roundtrip ("1,1,1", "1");
    check_roundtrip ("4-5", "4-5");
    check_roundtrip ("63,64", "63-64");
    check_roundtrip ("0-63,64-127,129", "0-127,129");
    check_roundtrip ("007", "7");
    check_roundtrip ("16777215", "16777215");

    check_bad ("3-1");
    check_bad ("a");
    check_bad ("1,,2");
    check_bad ("1,");
    check_bad (",1");
    check_bad ("1-");
    check_bad ("-1");
    check_bad ("1--2");
    check_bad (" 1");
    check_bad ("1, 2");
    check_bad ("1\t");
    check_bad ("[1");
    check_bad ("1]");
    check_bad ("[[1]]");
    check_bad ("[");
    check_bad ("16777216");
    check_bad ("99999999999999999999999");
    check_bad ("0-99999999999");
    check_bad ("1+2");
    check_bad ("0x10");
    errno = 0;
    ok (idset_decode (NULL, NULL, 0) == NULL && errno == EINVAL,
        "decode NULL: EINVAL, NULL errbuf ok");

    /* big: ranks up to 2^20 */
    struct timespec t0, t1;
    clock_gettime (CLOCK_MONOTONIC, &t0);
    s = idset_decode ("0-1048575", NULL, 0);
    ok (s && idset_count (s) == 1048576, "decode 0-1048575: 2^20 ids");
    for (unsigned i = 1; i < 1048576; i += 2)
        idset_clear (s, i);
    cmp_ok (idset_count (s), "==", 524288, "cleared odd ids");
    str = idset_encode (s, 0);
    ok (str && strncmp (str, "0,2,4,", 6) == 0, "encode 2^19 singletons");
    t = idset_decode (str, NULL, 0);
    ok (t && idset_equal (s, t), "decode of that encoding is equal");
    free (str);
    n = 0;
    for (int id = idset_first (s); id >= 0; id = idset_next (s, id))
        n++;
    cmp_ok (n, "==", 524288, "iterate 2^19 ids");
    idset_destroy (&t);
    idset_destroy (&s);
    s = idset_create (1 << 20);
    idset_set (s, 1048575);
    cmp_ok (idset_first (s), "==", 1048575, "first in sparse big set");
    str = idset_encode (s, IDSET_FLAG_BRACKETS);
    is (str, "1048575", "single id: no brackets");
    free (str);
    idset_destroy (&s);
    clock_gettime (CLOCK_MONOTONIC, &t1);
    double dt = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
    ok (dt < 5.0, "big-set tests took %.3fs", dt);

    ok (idset_create (IDSET_ID_MAX + 2) == NULL && errno == EINVAL,
        "create with too large hint: EINVAL");
    ok (idset_encode (NULL, 0) == NULL && errno == EINVAL, "encode NULL");
    ok (!idset_equal (NULL, (idset_t *)1) && idset_equal (NULL, NULL),
        "equal with NULL");

    /* add / subtract */
    s = idset_decode ("0-3", NULL, 0);
    t = idset_decode ("2-5,100", NULL, 0);
    idset_add (s, t);
    str = idset_encode (s, 0);
    is (str, "0-5,100", "add");
    free (str);
    idset_destroy (&t);
    t = idset_decode ("1,4,200", NULL, 0);
    idset_subtract (s, t);
    str = idset_encode (s, 0);
    is (str, "0,2-3,5,100", "subtract");
    cmp_ok (idset_count (s), "==", 5, "count after subtract");
    free (str);
    idset_destroy (&t);
    idset_destroy (&s);

    return done_testing ();
}
