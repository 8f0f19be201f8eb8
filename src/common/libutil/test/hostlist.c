/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test/hostlist.c: unit tests for hostlist.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/common/libtap/tap.h"
#include "src/common/libutil/hostlist.h"

/* Expand 'in', join with spaces, compare to 'want'; then check that
 * encode gives 'enc' and that decoding that gives the same list.
 */
static void check (const char *in, const char *want, const char *enc)
{
    char err[256] = "";
    char got[4096] = "";
    hostlist_t *hl = hostlist_decode (in, err, sizeof (err));

    if (!hl) {
        fail ("decode '%s': %s", in, err);
        skip (2, "decode failed");
        return;
    }
    for (int i = 0; i < hostlist_count (hl); i++) {
        if (i)
            strcat (got, " ");
        strcat (got, hostlist_nth (hl, i));
    }
    is (got, want, "decode '%s'", in);
    char *e = hostlist_encode (hl);
    is (e, enc, "encode back to '%s'", enc);
    hostlist_t *hl2 = e ? hostlist_decode (e, NULL, 0) : NULL;
    int same = hl2 && hostlist_count (hl2) == hostlist_count (hl);
    for (int i = 0; same && i < hostlist_count (hl); i++)
        same = !strcmp (hostlist_nth (hl, i), hostlist_nth (hl2, i));
    ok (same, "decode (encode ('%s')) is the same list", in);
    free (e);
    hostlist_destroy (&hl2);
    hostlist_destroy (&hl);
}

static void check_bad (const char *in, int errnum)
{
    char err[256] = "";
    errno = 0;
    hostlist_t *hl = hostlist_decode (in, err, sizeof (err));
    ok (hl == NULL && errno == errnum && err[0] != '\0',
        "decode '%s' fails (%s): %s", in, strerror (errnum), err);
    hostlist_destroy (&hl);
}

int main (void)
{
    hostlist_t *hl;
    char *s;

    plan (NO_PLAN);

    check ("node[0-3,7]", "node0 node1 node2 node3 node7", "node[0-3,7]");
    check ("a1,b[01-03]", "a1 b01 b02 b03", "a1,b[01-03]");
    check ("n[8-10]", "n8 n9 n10", "n[8-10]");
    check ("n[098-101]", "n098 n099 n100 n101", "n[098-101]");
    check ("rack[1-2]n[1-2]", "rack1n1 rack1n2 rack2n1 rack2n2",
           "rack1n[1-2],rack2n[1-2]");
    check ("localhost", "localhost", "localhost");
    check ("x.example.com,y.example.com", "x.example.com y.example.com",
           "x.example.com,y.example.com");
    check ("n[3,1,2]", "n3 n1 n2", "n[3,1-2]");
    check ("n1,n2,m3,n3", "n1 n2 m3 n3", "n[1-2],m3,n3");
    check ("n[01,1]", "n01 n1", "n[01,1]");
    check ("[1-3]", "1 2 3", "[1-3]");
    check ("n[1-2]-ib", "n1-ib n2-ib", "n1-ib,n2-ib");
    check ("n5", "n5", "n5");
    check ("n[5]", "n5", "n5");
    check ("a,a", "a a", "a,a");
    check ("node[0-15,32]",
           "node0 node1 node2 node3 node4 node5 node6 node7 node8 node9"
           " node10 node11 node12 node13 node14 node15 node32",
           "node[0-15,32]");

    hl = hostlist_decode ("", NULL, 0);
    ok (hl && hostlist_count (hl) == 0, "'' is an empty list");
    s = hostlist_encode (hl);
    is (s, "", "empty list encodes as ''");
    free (s);
    hostlist_destroy (&hl);
    ok (hl == NULL, "destroy sets NULL");

    hl = hostlist_decode ("node[0-15,32]", NULL, 0);
    cmp_ok (hostlist_count (hl), "==", 17, "count 17");
    is (hostlist_nth (hl, 16), "node32", "nth 16 is node32");
    cmp_ok (hostlist_find (hl, "node32"), "==", 16, "find node32 -> 16");
    cmp_ok (hostlist_find (hl, "node0"), "==", 0, "find node0 -> 0");
    errno = 0;
    ok (hostlist_find (hl, "node16") == -1 && errno == ENOENT,
        "find node16: ENOENT");
    errno = 0;
    ok (hostlist_nth (hl, 17) == NULL && errno == EINVAL, "nth 17: EINVAL");
    ok (hostlist_nth (hl, -1) == NULL, "nth -1: NULL");
    ok (hostlist_append (hl, "x[1-2]", NULL, 0) == 0
        && hostlist_count (hl) == 19, "append x[1-2]");
    ok (hostlist_append (hl, "y[1-", NULL, 0) < 0 && hostlist_count (hl) == 19,
        "failed append leaves the list unchanged");
    ok (hostlist_append_host (hl, "z9") == 0 && hostlist_find (hl, "z9") == 19,
        "append_host z9");
    ok (hostlist_append_host (hl, "z[1]") < 0 && errno == EINVAL,
        "append_host with brackets: EINVAL");
    s = hostlist_encode (hl);
    is (s, "node[0-15,32],x[1-2],z9", "encode after appends");
    free (s);
    hostlist_destroy (&hl);

    check_bad ("a,,b", EINVAL);
    check_bad (",a", EINVAL);
    check_bad ("a,", EINVAL);
    check_bad ("n[]", EINVAL);
    check_bad ("n[1,]", EINVAL);
    check_bad ("n[,1]", EINVAL);
    check_bad ("n[3-1]", EINVAL);
    check_bad ("n[a]", EINVAL);
    check_bad ("n[1-a]", EINVAL);
    check_bad ("n[1-]", EINVAL);
    check_bad ("n[-1]", EINVAL);
    check_bad ("n[1", EINVAL);
    check_bad ("n1]", EINVAL);
    check_bad ("n[[1]]", EINVAL);
    check_bad ("n[1[2]]", EINVAL);
    check_bad ("a b", EINVAL);
    check_bad ("a\n", EINVAL);
    check_bad ("n[1234567890]", EINVAL);
    check_bad ("n[0-2000000]", E2BIG);
    check_bad ("n[0-1023]m[0-1024]", E2BIG);
    errno = 0;
    ok (hostlist_decode (NULL, NULL, 0) == NULL && errno == EINVAL,
        "decode NULL: EINVAL");

    /* large: 2^20 hosts */
    hl = hostlist_decode ("n[0-1048575]", NULL, 0);
    ok (hl && hostlist_count (hl) == 1048576, "decode 2^20 hosts");
    s = hostlist_encode (hl);
    is (s, "n[0-1048575]", "encode 2^20 hosts");
    free (s);
    cmp_ok (hostlist_find (hl, "n1048575"), "==", 1048575, "find last");
    hostlist_destroy (&hl);

    return done_testing ();
}
