/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* tap.h: a minimal Test Anything Protocol producer for the unit tests.
 *
 * Debian ships no libtap, and the tests need only a handful of primitives,
 * so this header provides them: plan(), ok(), is(), cmp_ok(), skip(),
 * diag(), done_testing().  Output goes to stdout in TAP 13 form, which
 * automake's tap-driver.sh reads.  Each test program includes this header
 * in exactly one translation unit (state lives in static variables there).
 */
#ifndef BGN_TAP_H
#define BGN_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NO_PLAN (-1)

static int tap_planned = -2;
static int tap_run;
static int tap_failed;

static inline void plan (int n)
{
    tap_planned = n;
    if (n >= 0)
        printf ("1..%d\n", n);
    fflush (stdout);
}

static inline void diag (const char *fmt, ...)
{
    va_list ap;
    fputs ("# ", stdout);
    va_start (ap, fmt);
    vprintf (fmt, ap);
    va_end (ap);
    fputc ('\n', stdout);
    fflush (stdout);
}

static inline int tap_vok (int pass, const char *file, int line,
                           const char *fmt, va_list ap)
{
    tap_run++;
    printf ("%sok %d - ", pass ? "" : "not ", tap_run);
    vprintf (fmt, ap);
    fputc ('\n', stdout);
    if (!pass) {
        tap_failed++;
        printf ("#   Failed test at %s line %d\n", file, line);
    }
    fflush (stdout);
    return pass;
}

static inline int tap_ok (int pass, const char *file, int line,
                          const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    tap_vok (pass, file, line, fmt, ap);
    va_end (ap);
    return pass;
}

static inline int tap_is (const char *got, const char *want,
                          const char *file, int line, const char *fmt, ...)
{
    int pass;
    va_list ap;
    if (got == NULL || want == NULL)
        pass = (got == want);
    else
        pass = (strcmp (got, want) == 0);
    va_start (ap, fmt);
    tap_vok (pass, file, line, fmt, ap);
    va_end (ap);
    if (!pass) {
        printf ("#          got: '%s'\n", got ? got : "(null)");
        printf ("#     expected: '%s'\n", want ? want : "(null)");
    }
    return pass;
}

static inline int tap_cmp (long long a, const char *op, long long b,
                           const char *file, int line, const char *fmt, ...)
{
    int pass = 0;
    va_list ap;
    if (!strcmp (op, "=="))
        pass = (a == b);
    else if (!strcmp (op, "!="))
        pass = (a != b);
    else if (!strcmp (op, "<"))
        pass = (a < b);
    else if (!strcmp (op, "<="))
        pass = (a <= b);
    else if (!strcmp (op, ">"))
        pass = (a > b);
    else if (!strcmp (op, ">="))
        pass = (a >= b);
    va_start (ap, fmt);
    tap_vok (pass, file, line, fmt, ap);
    va_end (ap);
    if (!pass)
        printf ("#     %lld %s %lld is false\n", a, op, b);
    return pass;
}

#define ok(test, ...) tap_ok (!!(test), __FILE__, __LINE__, __VA_ARGS__)
#define is(got, want, ...) tap_is ((got), (want), __FILE__, __LINE__, __VA_ARGS__)
#define cmp_ok(a, op, b, ...) \
    tap_cmp ((long long)(a), (op), (long long)(b), __FILE__, __LINE__, __VA_ARGS__)
#define pass(...) ok (1, __VA_ARGS__)
#define fail(...) ok (0, __VA_ARGS__)

static inline void skip (int n, const char *why)
{
    for (int i = 0; i < n; i++) {
        tap_run++;
        printf ("ok %d # SKIP %s\n", tap_run, why);
    }
    fflush (stdout);
}

static inline void bail_out (const char *why)
{
    printf ("Bail out! %s\n", why);
    fflush (stdout);
    exit (255);
}

/* Ends the program: prints the plan if none was given and returns the
 * exit status (0 only if every test passed and the plan was met).
 */
static inline int done_testing (void)
{
    if (tap_planned < 0)
        printf ("1..%d\n", tap_run);
    else if (tap_planned != tap_run) {
        printf ("# planned %d tests but ran %d\n", tap_planned, tap_run);
        return 1;
    }
    fflush (stdout);
    return tap_failed ? 1 : 0;
}

#endif /* BGN_TAP_H */
