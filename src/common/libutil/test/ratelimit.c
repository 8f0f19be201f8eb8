/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test/ratelimit.c: unit tests for ratelimit.h. */
#include <errno.h>
#include <math.h>

#include "src/common/libtap/tap.h"
#include "src/common/libutil/ratelimit.h"

static void test_create (void)
{
    errno = 0;
    ok (ratelimit_create (0, 1.0) == NULL && errno == EINVAL,
        "burst 0 is EINVAL");
    errno = 0;
    ok (ratelimit_create (3, 0) == NULL && errno == EINVAL,
        "interval 0 is EINVAL");
    errno = 0;
    ok (ratelimit_create (3, NAN) == NULL && errno == EINVAL,
        "interval NaN is EINVAL");
    errno = 0;
    ok (ratelimit_create (3, INFINITY) == NULL && errno == EINVAL,
        "interval inf is EINVAL");
    ratelimit_destroy (NULL);
    ok (1, "destroy (NULL) is harmless");
}

static void test_burst_and_count (void)
{
    ratelimit_t *rl = ratelimit_create (3, 1.0);
    unsigned long n = 99;
    int allowed = 0;

    ok (rl != NULL, "create 3 per 1s");
    /* 7 events a second for 1 second: 3 allowed, 4 suppressed */
    for (int i = 0; i < 7; i++)
        if (ratelimit_check (rl, 10.0 + i / 7.0, &n))
            allowed++;
    ok (allowed == 3, "3 of 7 events in one window are allowed");
    ok (n == 0, "a suppressed event reports 0");
    ok (ratelimit_flush (rl, 10.5) == 0,
        "flush inside the window returns nothing");
    ok (ratelimit_check (rl, 11.0, &n) && n == 4,
        "the first event of the next window is allowed and reports 4");
    ok (ratelimit_check (rl, 11.1, &n) && n == 0,
        "the count was handed over once");
    ok (ratelimit_total_suppressed (rl) == 4, "total suppressed is 4");
    ratelimit_destroy (&rl);
    ok (rl == NULL, "destroy clears the pointer");
}

static void test_flush (void)
{
    ratelimit_t *rl = ratelimit_create (1, 2.0);
    unsigned long n;

    ratelimit_check (rl, 0.0, &n);
    ok (!ratelimit_check (rl, 0.5, &n) && !ratelimit_check (rl, 1.0, &n),
        "burst 1: the 2nd and 3rd events are suppressed");
    ok (ratelimit_flush (rl, 1.9) == 0, "flush before the window ends: 0");
    ok (ratelimit_flush (rl, 2.0) == 2, "flush at the window's end: 2");
    ok (ratelimit_flush (rl, 5.0) == 0, "a second flush: 0");
    ok (ratelimit_check (rl, 5.0, &n) && n == 0,
        "the next event reports nothing (flush took the count)");
    ratelimit_destroy (&rl);
}

static void test_clock_backwards (void)
{
    ratelimit_t *rl = ratelimit_create (1, 10.0);
    unsigned long n;

    ratelimit_check (rl, 100.0, &n);
    ok (!ratelimit_check (rl, 101.0, &n), "second event suppressed");
    ok (ratelimit_check (rl, 50.0, &n) && n == 1,
        "a clock that goes back starts a new window");
    ratelimit_destroy (&rl);
}

static void test_suffix (void)
{
    char buf[64], tiny[8];

    is (ratelimit_suffix (buf, sizeof (buf), 0), "", "suffix for 0 is empty");
    is (ratelimit_suffix (buf, sizeof (buf), 1),
        " (1 similar message suppressed)", "suffix for 1");
    is (ratelimit_suffix (buf, sizeof (buf), 37),
        " (37 similar messages suppressed)", "suffix for 37");
    is (ratelimit_suffix (tiny, sizeof (tiny), 37), " (37 si",
        "a small buffer truncates");
}

int main (void)
{
    test_create ();
    test_burst_and_count ();
    test_flush ();
    test_clock_backwards ();
    test_suffix ();
    return done_testing ();
}
