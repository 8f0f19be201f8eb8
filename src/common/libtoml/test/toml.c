/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test/toml.c: unit tests for the TOML parser.
 *
 * Each case parses a small document and compares the compact, key-sorted
 * JSON result (or the error position) with the expected text, so one
 * table of cases covers every value form and every error class.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/common/libtap/tap.h"
#include "src/common/libtoml/toml.h"

/* Parse 'doc' and return malloc'd compact JSON, or "error L:C". */
static char *run (const char *doc, size_t len, struct toml_error *err)
{
    json_t *o = toml_parse (doc, len, err);
    char *s;
    if (!o) {
        if (asprintf (&s, "error %d:%d", err->line, err->col) < 0)
            return NULL;
        return s;
    }
    s = json_dumps (o, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII);
    json_decref (o);
    return s;
}

static void good (const char *doc, const char *want)
{
    struct toml_error err;
    char *got = run (doc, strlen (doc), &err);
    if (!is (got, want, "parse: %s", doc))
        diag ("error: %s", err.msg);
    free (got);
}

static void goodn (const char *doc, size_t len, const char *want,
                   const char *name)
{
    struct toml_error err;
    char *got = run (doc, len, &err);
    if (!is (got, want, "parse: %s", name))
        diag ("error: %s", err.msg);
    free (got);
}

/* Expect an error; 'where' is "L:C" or NULL to accept any position. */
static void bad (const char *doc, const char *where)
{
    struct toml_error err;
    char *got = run (doc, strlen (doc), &err);
    char want[64];
    if (where) {
        snprintf (want, sizeof (want), "error %s", where);
        if (!is (got, want, "reject at %s: %s", where, doc))
            diag ("msg: %s", err.msg);
    }
    else {
        ok (got && !strncmp (got, "error ", 6) && err.line > 0
            && err.col > 0 && err.msg[0],
            "reject: %s (%s: %s)", doc, got, err.msg);
    }
    free (got);
}

static void badn (const char *doc, size_t len, const char *name)
{
    struct toml_error err;
    char *got = run (doc, len, &err);
    ok (got && !strncmp (got, "error ", 6) && err.line > 0,
        "reject: %s (%s: %s)", name, got, err.msg);
    free (got);
}

static void test_strings (void)
{
    good ("a = \"hello\"", "{\"a\":\"hello\"}");
    good ("a = \"\\b\\t\\n\\f\\r\\\"\\\\\"", "{\"a\":\"\\b\\t\\n\\f\\r\\\"\\\\\"}");
    good ("a = \"\\u00e9\\U0001F600\"", "{\"a\":\"\\u00E9\\uD83D\\uDE00\"}");
    good ("a = \"\\u0000\"", "{\"a\":\"\\u0000\"}");
    good ("a = 'C:\\path\\x'", "{\"a\":\"C:\\\\path\\\\x\"}");
    good ("a = \"\"\"\nline1\nline2\"\"\"", "{\"a\":\"line1\\nline2\"}");
    good ("a = \"\"\"\r\nx\r\ny\"\"\"", "{\"a\":\"x\\ny\"}");
    good ("a = \"\"\"one \\\n   two \\  \n\n  three\"\"\"",
          "{\"a\":\"one two three\"}");
    good ("a = \"\"\"q\"\"q\"\"\"\"\"", "{\"a\":\"q\\\"\\\"q\\\"\\\"\"}");
    good ("a = '''\nraw \\n '' text'''''", "{\"a\":\"raw \\\\n '' text''\"}");
    good ("a = \"\"\"\"\"\"", "{\"a\":\"\"}");
    good ("a = ''", "{\"a\":\"\"}");
    good ("a = \"tab\there\"", "{\"a\":\"tab\\there\"}");
    good ("a = \"caf\xc3\xa9\"", "{\"a\":\"caf\\u00E9\"}");
}

static void test_numbers (void)
{
    good ("a = 42\nb = +17\nc = -5\nd = 0\ne = -0\nf = +0",
          "{\"a\":42,\"b\":17,\"c\":-5,\"d\":0,\"e\":0,\"f\":0}");
    good ("a = 1_000_000", "{\"a\":1000000}");
    good ("a = 0xDEAD_beef\nb = 0o755\nc = 0b1101\nd = 0x00ff",
          "{\"a\":3735928559,\"b\":493,\"c\":13,\"d\":255}");
    good ("a = 9223372036854775807\nb = -9223372036854775808",
          "{\"a\":9223372036854775807,\"b\":-9223372036854775808}");
    good ("a = 0x7fffffffffffffff", "{\"a\":9223372036854775807}");
    good ("a = 1.5\nb = -0.25\nc = 5e+2\nd = 1E-2\ne = 6.25e1\nf = 1_0.5_0",
          "{\"a\":1.5,\"b\":-0.25,\"c\":500.0,\"d\":0.01,\"e\":62.5,\"f\":10.5}");
    good ("a = 1e06\nb = 0.0\nc = -0e0", "{\"a\":1000000.0,\"b\":0.0,\"c\":-0.0}");
    good ("a = inf\nb = +inf\nc = -inf\nd = nan\ne = +nan\nf = -nan",
          "{\"a\":\"inf\",\"b\":\"inf\",\"c\":\"-inf\",\"d\":\"nan\","
          "\"e\":\"nan\",\"f\":\"nan\"}");
    good ("a = 1e400", "{\"a\":\"inf\"}");
    good ("a = true\nb = false", "{\"a\":true,\"b\":false}");
}

static void test_datetimes (void)
{
    good ("a = 1979-05-27T07:32:00Z", "{\"a\":\"1979-05-27T07:32:00Z\"}");
    good ("a = 1979-05-27 07:32:00z", "{\"a\":\"1979-05-27T07:32:00Z\"}");
    good ("a = 1979-05-27t00:32:00.999999-07:00",
          "{\"a\":\"1979-05-27T00:32:00.999999-07:00\"}");
    good ("a = 1979-05-27T07:32:00", "{\"a\":\"1979-05-27T07:32:00\"}");
    good ("a = 1979-05-27", "{\"a\":\"1979-05-27\"}");
    good ("a = 07:32:00.5", "{\"a\":\"07:32:00.5\"}");
    good ("a = 2000-02-29\nb = 2024-02-29", "{\"a\":\"2000-02-29\",\"b\":\"2024-02-29\"}");
    good ("a = 1990-12-31T23:59:60Z", "{\"a\":\"1990-12-31T23:59:60Z\"}");
    good ("a = 1979-05-27 # date then comment", "{\"a\":\"1979-05-27\"}");
    good ("a = [1979-05-27,07:32:00]", "{\"a\":[\"1979-05-27\",\"07:32:00\"]}");
    bad ("a = 1900-02-29", "1:13");
    bad ("a = 2023-13-01", "1:10");
    bad ("a = 2023-04-31", "1:13");
    bad ("a = 1979-05-27T24:00:00", "1:16");
    bad ("a = 1979-05-27T07:60:00", NULL);
    bad ("a = 1979-05-27T07:32:61", NULL);
    bad ("a = 1979-05-27T07:32", NULL);
    bad ("a = 07:32", NULL);
    bad ("a = 1979-5-27", NULL);
    bad ("a = 1979-05-27T07:32:00.", NULL);
    bad ("a = 1979-05-27T07:32:00+7:00", NULL);
    bad ("a = 1979-05-27T07:32:00+24:00", NULL);
    bad ("a = 07:32:00Z", NULL);
    bad ("a = 1979-05-27T", NULL);
}

static void test_arrays_tables (void)
{
    good ("a = [1, 'two', 3.0, [4], {x = 5}]",
          "{\"a\":[1,\"two\",3.0,[4],{\"x\":5}]}");
    good ("a = [\n  1, # one\n  2,\n  # c\n]\n", "{\"a\":[1,2]}");
    good ("a = []\nb = [ ]\nc = [[]]", "{\"a\":[],\"b\":[],\"c\":[[]]}");
    good ("a = {}\nb = { x = 1, y.z = 2 }", "{\"a\":{},\"b\":{\"x\":1,\"y\":{\"z\":2}}}");
    good ("[t]\nx = 1\n[t.u]\ny = 2", "{\"t\":{\"u\":{\"y\":2},\"x\":1}}");
    good ("[a.b.c]\n[a]\nx = 1", "{\"a\":{\"b\":{\"c\":{}},\"x\":1}}");
    good ("[[p]]\nn = 1\n[[p]]\nn = 2\n[p.q]\nr = 3",
          "{\"p\":[{\"n\":1},{\"n\":2,\"q\":{\"r\":3}}]}");
    good ("[[a.b]]\n[a]\nc = 1", "{\"a\":{\"b\":[{}],\"c\":1}}");
    good ("a.b.c = 1\na.b.d = 2", "{\"a\":{\"b\":{\"c\":1,\"d\":2}}}");
    good ("[fruit]\napple.color = 'red'\n[fruit.apple.texture]\nsmooth = true",
          "{\"fruit\":{\"apple\":{\"color\":\"red\",\"texture\":{\"smooth\":true}}}}");
    good ("\"a.b\" = 1\n'c d' = 2\n\"\" = 3\n1234 = 4\n-_- = 5",
          "{\"\":3,\"-_-\":5,\"1234\":4,\"a.b\":1,\"c d\":2}");
    good ("3.14 = 1", "{\"3\":{\"14\":1}}");
    good ("[ a . \"b\" . 'c' ]\n[[ d ]]", "{\"a\":{\"b\":{\"c\":{}}},\"d\":[{}]}");
    good ("a = [{b = [1,\n2]}]", "{\"a\":[{\"b\":[1,2]}]}");
    good ("a = 1 # comment\n# full line\n\n\t  \r\n", "{\"a\":1}");
    good ("", "{}");
    good ("\xef\xbb\xbf" "a = 1", "{\"a\":1}");
    good ("true = 1\nfalse = 2\ninf = 3\nnan = 4",
          "{\"false\":2,\"inf\":3,\"nan\":4,\"true\":1}");
    goodn ("\"a\\u0000b\" = \"x\\u0000y\"", 23, "{\"a\\u0000b\":\"x\\u0000y\"}",
           "NUL in key and value");
}

static void test_errors (void)
{
    /* syntax */
    bad ("a = ", "1:5");
    bad ("a =\nb = 1", "1:4");
    bad ("a", "1:2");
    bad ("= 1", "1:1");
    bad ("a = 1 b = 2", "1:7");
    bad ("a = \"unterminated", "1:5");
    bad ("a = \"\"\"open", "1:5");
    bad ("a = '''open", "1:5");
    bad ("a = 'x\ny'", "1:5");
    bad ("a = \"\\x\"", "1:6");
    bad ("a = \"\\uD800\"", "1:6");
    bad ("a = \"\\U00110000\"", "1:6");
    bad ("a = \"\\u12\"", "1:6");
    bad ("a = \"\"\"x\"\"\"\"\"\"", NULL);
    bad ("a = \"\\ \n\"", NULL);
    bad ("a = \"\"\"\\ x\"\"\"", NULL);
    bad ("a = bare", "1:5");
    bad ("a = True", NULL);
    bad ("a = truee", NULL);
    bad ("a = \"x\" # \x01", "1:11");
    bad ("a = \"\x7f\"", "1:6");
    bad ("a = 'a\x1b'", "1:7");
    bad ("a = 1\r\n\rb = 2", "2:1");
    bad ("a = 1\rb = 2", "1:6");
    bad ("\"\"\"k\"\"\" = 1", "1:1");
    bad ("a.\"b\nc\" = 1", NULL);
    bad ("[a\n]", NULL);
    bad ("[a]]", NULL);
    bad ("[[a]", NULL);
    bad ("[[a] ]", NULL);
    bad ("[ [a]]", NULL);
    bad ("[]", "1:2");
    bad ("[a.]", NULL);
    bad ("a..b = 1", NULL);
    bad (".a = 1", NULL);
    /* numbers */
    bad ("a = 01", "1:5");
    bad ("a = -01", NULL);
    bad ("a = 1__0", "1:6");
    bad ("a = 1_", "1:6");
    bad ("a = _1", NULL);
    bad ("a = 0x_1", NULL);
    bad ("a = +0x1", "1:5");
    bad ("a = 0xG", NULL);
    bad ("a = 0o8", NULL);
    bad ("a = 0b2", NULL);
    bad ("a = 0X1", NULL);
    bad ("a = 9223372036854775808", "1:5");
    bad ("a = -9223372036854775809", "1:5");
    bad ("a = 0x8000000000000000", NULL);
    bad ("a = 1.", NULL);
    bad ("a = .5", NULL);
    bad ("a = 1.e5", NULL);
    bad ("a = 1e", NULL);
    bad ("a = 1e_5", NULL);
    bad ("a = 1_.5", NULL);
    bad ("a = 1._5", NULL);
    bad ("a = 01.5", NULL);
    bad ("a = 1.5.5", NULL);
    bad ("a = Inf", NULL);
    bad ("a = infinity", NULL);
    bad ("a = ++1", NULL);
    bad ("a = 1 2", NULL);
    /* arrays and inline tables */
    bad ("a = [1 2]", "1:8");
    bad ("a = [,]", NULL);
    bad ("a = [1,,2]", NULL);
    bad ("a = [1", NULL);
    bad ("a = {x = 1,}", "1:12");
    bad ("a = {x = 1\n}", "1:11");
    bad ("a = {\nx = 1}", NULL);
    bad ("a = {x = 1, x = 2}", "1:13");
    bad ("a = {x}", NULL);
    bad ("a = {x = {y = 1}, x.z = 2}", NULL);
    /* redefinition */
    bad ("a = 1\na = 2", "2:1");
    bad ("a.b = 1\na.b = 2", "2:3");
    bad ("a = 1\na.b = 2", "2:1");
    bad ("[a]\n[a]", "2:2");
    bad ("[a]\nb = 1\n[a.b]", "3:4");
    bad ("[a.b]\n[a]\nb = 1", "3:1");
    bad ("a = {}\n[a]", "2:2");
    bad ("a = {b = 1}\n[a.c]", "2:2");
    bad ("a = {b = 1}\na.c = 2", "2:1");
    bad ("[a]\nb = {c = 1}\n[a.b.d]", NULL);
    bad ("a = [1]\n[[a]]", "2:3");
    bad ("a = [{b = 1}]\n[a.c]", NULL);
    bad ("[[a]]\n[a]", "2:2");
    bad ("[a]\n[[a]]", "2:3");
    bad ("a.b = 1\n[a]", "2:2");
    bad ("[fruit]\napple.color = 1\n[fruit.apple]", NULL);
    bad ("[a.b.c]\nz = 1\n[a]\nb.c.t = 2", "4:3");
    bad ("[a.b.c]\n[a]\nb.d = 1\n[a.b]", "4:4");
    bad ("[t]\na = 1\n[[t.a]]", NULL);
    bad ("a = 1\n[a.b]", "2:2");
    bad ("[a]\nx = 1\n[a]\ny = 2", "3:2");
    bad ("a = {b.c = 1, b = 2}", NULL);
}

static void test_encoding_and_limits (void)
{
    char *deep;
    size_t n = TOML_MAX_DEPTH + 10, i;
    struct toml_error err;
    json_t *o;

    badn ("a = \"\xc3\x28\"", 8, "invalid continuation byte");
    badn ("a = \"\xc0\xaf\"", 8, "overlong encoding");
    badn ("a = \"\xed\xa0\x80\"", 9, "UTF-8 surrogate");
    badn ("a = \"\xf4\x90\x80\x80\"", 10, "beyond U+10FFFF");
    badn ("a = \"\xe2\x82", 7, "truncated sequence at EOF");
    badn ("a = 1\0", 6, "NUL byte outside string");
    badn ("a = \"x\0\"", 8, "NUL byte in string");
    goodn ("a = 1", 3, "error 1:4", "length honoured");

    /* column counts characters, not bytes */
    bad ("a = \"\xc3\xa9\xc3\xa9\" x", "1:10");

    deep = malloc (n * 2 + 8);
    strcpy (deep, "a = ");
    for (i = 0; i < n; i++)
        deep[4 + i] = '[';
    for (i = 0; i < n; i++)
        deep[4 + n + i] = ']';
    deep[4 + 2 * n] = '\0';
    o = toml_parse (deep, strlen (deep), &err);
    ok (o == NULL && errno == EINVAL && strstr (err.msg, "nesting"),
        "deep array nesting rejected: %s", err.msg);
    for (i = 0; i < n; i++)
        deep[4 + i] = '[';
    deep[4 + TOML_MAX_DEPTH] = '\0';
    for (i = 0; i < TOML_MAX_DEPTH; i++)
        deep[4 + TOML_MAX_DEPTH + i] = ']';
    deep[4 + 2 * TOML_MAX_DEPTH] = '\0';
    o = toml_parse (deep, strlen (deep), &err);
    ok (o != NULL, "nesting of exactly TOML_MAX_DEPTH accepted");
    json_decref (o);
    free (deep);

    /* headers and dotted keys count too (jansson would recurse on them) */
    {
        size_t len = 4096;
        char *h = malloc (len);
        char *d;
        strcpy (h, "[a");
        for (i = 0; i < n; i++)
            strcat (h, ".a");
        strcat (h, "]\nx = 1\n");
        o = toml_parse (h, strlen (h), &err);
        ok (o == NULL && strstr (err.msg, "nesting"),
            "a header %zu keys deep is rejected: %s", n + 1, err.msg);
        strcpy (h, "[[a");
        for (i = 0; i < n; i++)
            strcat (h, ".a");
        strcat (h, "]]\n");
        o = toml_parse (h, strlen (h), &err);
        ok (o == NULL && strstr (err.msg, "nesting"),
            "an array-of-tables header that deep is rejected");
        d = h;
        strcpy (d, "a");
        for (i = 0; i < n; i++)
            strcat (d, ".a");
        strcat (d, " = 1\n");
        o = toml_parse (d, strlen (d), &err);
        ok (o == NULL && strstr (err.msg, "nesting"),
            "a dotted key that deep is rejected");
        /* 64 header levels + 64 dotted + 64 arrays: over 128 together */
        strcpy (h, "[a");
        for (i = 1; i < 64; i++)
            strcat (h, ".a");
        strcat (h, "]\nb");
        for (i = 1; i < 64; i++)
            strcat (h, ".b");
        strcat (h, " = ");
        for (i = 0; i < 64; i++)
            strcat (h, "[");
        for (i = 0; i < 64; i++)
            strcat (h, "]");
        o = toml_parse (h, strlen (h), &err);
        ok (o == NULL && strstr (err.msg, "nesting"),
            "header, dotted key and arrays add up: %s", err.msg);
        strcpy (h, "[a");
        for (i = 1; i < 60; i++)
            strcat (h, ".a");
        strcat (h, "]\nb");
        for (i = 1; i < 60; i++)
            strcat (h, ".b");
        strcat (h, " = [[1]]\n");
        o = toml_parse (h, strlen (h), &err);
        ok (o != NULL, "120 levels in all are fine");
        json_decref (o);
        free (h);
    }
    errno = 0;
    o = toml_parse_file ("/dev/zero", &err);
    ok (o == NULL && errno == EFBIG, "/dev/zero is refused as too big: %s",
        err.msg);

    o = toml_parse ("a = {b = {c = {}}}", 18, NULL);
    ok (o != NULL, "NULL err pointer allowed");
    json_decref (o);
    errno = 0;
    o = toml_parse_file ("/nonexistent/x.toml", &err);
    ok (o == NULL && errno == ENOENT && err.line == 0 && err.msg[0],
        "toml_parse_file missing file: ENOENT (%s)", err.msg);
}

int main (void)
{
    plan (NO_PLAN);
    test_strings ();
    test_numbers ();
    test_datetimes ();
    test_arrays_tables ();
    test_errors ();
    test_encoding_and_limits ();
    return done_testing ();
}
