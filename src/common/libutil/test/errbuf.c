/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test/errbuf.c: unit tests for errbuf.h. */
#include <errno.h>
#include <string.h>

#include "src/common/libtap/tap.h"
#include "src/common/libutil/errbuf.h"

static void test_set (void)
{
    char buf[32];

    errbuf_set (buf, sizeof (buf), "rank %d is %s", 3, "down");
    is (buf, "rank 3 is down", "errbuf_set formats");

    memset (buf, 'x', sizeof (buf));
    errbuf_set (buf, 8, "%s", "a long message");
    is (buf, "a long ", "a message longer than the buffer is cut");
    ok (buf[8] == 'x', "nothing is written past the length");

    memset (buf, 'x', sizeof (buf));
    errbuf_set (buf, 0, "%s", "nothing");
    ok (buf[0] == 'x', "a zero length writes nothing");
    errbuf_set (NULL, 16, "%s", "nowhere");
    ok (1, "a NULL buffer is allowed");
}

static void test_fail (void)
{
    char buf[64];

    errno = 0;
    ok (errbuf_fail (buf, sizeof (buf), EPROTO, "bad frame %d", 2) == -1,
        "errbuf_fail returns -1");
    ok (errno == EPROTO, "and sets errno to the number given");
    is (buf, "bad frame 2", "and formats the message");

    errno = ENOENT;
    ok (errbuf_fail (buf, sizeof (buf), errno, "open: %s", strerror (errno))
            == -1 && errno == ENOENT,
        "errno passed on as it was");
    is (buf, "open: No such file or directory",
        "strerror (errno) as an argument is formatted before errno is set");

    errno = 0;
    ok (errbuf_fail (NULL, 0, EINVAL, "x") == -1 && errno == EINVAL,
        "errbuf_fail without a buffer still sets errno");
}

static void test_printable (void)
{
    char buf[32];

    errbuf_set (buf, sizeof (buf), "bad \"%s\"", "a\nb\tc\x7f" "d");
    errbuf_printable (buf, sizeof (buf));
    is (buf, "bad \"a?b?c?d\"", "control characters become '?'");

    strcpy (buf, "ab\ncd");
    errbuf_printable (buf, 2);
    is (buf, "ab\ncd", "only the first len bytes are looked at");

    errbuf_printable (NULL, 8);
    ok (1, "a NULL buffer is allowed");
}

int main (void)
{
    test_set ();
    test_fail ();
    test_printable ();
    return done_testing ();
}
