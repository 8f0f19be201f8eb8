/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test/bundle.c: a rank's bootstrap values, parsed once: what the fast
 * path takes, what goes to jansson, and what is refused. */
#include <errno.h>
#include <string.h>

#include "src/common/libtap/tap.h"
#include "src/broker/bundle.h"

static void check_plain (void)
{
    struct bundle *b = bundle_parse ("{\"endpoint\":\"ipc:///tmp/x/3/overlay\","
                                     "\"pubkey\":\"abc\",\"evkey\":\"00ff\"}");

    ok (b && bundle_count (b) == 3, "json_dumps' compact form: 3 keys");
    ok (b && !strcmp (bundle_value (b, "endpoint"), "ipc:///tmp/x/3/overlay")
        && !strcmp (bundle_value (b, "pubkey"), "abc")
        && !strcmp (bundle_value (b, "evkey"), "00ff"),
        "each value as published");
    ok (b && bundle_value (b, "instance") == NULL, "a key it lacks: NULL");
    bundle_destroy (&b);
    ok (b == NULL, "destroy clears the pointer");

    b = bundle_parse (" {\n\t\"a\" : \"1\" ,\r\n \"b\":\"\" } \n");
    ok (b && !strcmp (bundle_value (b, "a"), "1")
        && !strcmp (bundle_value (b, "b"), ""),
        "white space anywhere JSON allows it, an empty value");
    bundle_destroy (&b);
    b = bundle_parse ("{}");
    ok (b && bundle_count (b) == 0, "an empty object");
    bundle_destroy (&b);
}

static void check_json_path (void)
{
    struct bundle *b = bundle_parse ("{\"host\":\"n\\u00e9\\\"1\\\\\","
                                     "\"x\":\"\\ud83d\\ude00\"}");

    ok (b && !strcmp (bundle_value (b, "host"), "n\xc3\xa9\"1\\"),
        "escapes are jansson's: \\u00e9, \\\" and \\\\");
    ok (b && !strcmp (bundle_value (b, "x"), "\xf0\x9f\x98\x80"),
        "a surrogate pair becomes one UTF-8 character");
    bundle_destroy (&b);
    b = bundle_parse ("{\"h\\u006fst\":\"caf\xc3\xa9\"}");
    ok (b && !strcmp (bundle_value (b, "host"), "caf\xc3\xa9"),
        "an escaped key, UTF-8 in a value");
    bundle_destroy (&b);
}

static void refused (const char *text, const char *what)
{
    struct bundle *b;

    errno = 0;
    b = bundle_parse (text);
    ok (b == NULL && errno == EPROTO, "refused (EPROTO): %s", what);
    bundle_destroy (&b);
}

static void check_refused (void)
{
    refused ("", "nothing");
    refused ("[\"a\"]", "an array");
    refused ("\"a\"", "a string");
    refused ("{\"a\":1}", "a number value");
    refused ("{\"a\":{\"b\":\"c\"}}", "a nested object");
    refused ("{\"a\":null}", "null");
    refused ("{\"a\":\"b\"", "no closing brace");
    refused ("{\"a\":\"b}", "no closing quote");
    refused ("{\"a\" \"b\"}", "no colon");
    refused ("{\"a\":\"b\" \"c\":\"d\"}", "no comma");
    refused ("{\"a\":\"b\",}", "a trailing comma");
    refused ("{\"a\":\"b\"} x", "text after the object");
    refused ("{a:\"b\"}", "a bare key");
    refused ("{\"a\":\"\\u0000\"}", "a NUL in a value");
    refused ("{\"a\":\"\xff\"}", "a value that is not UTF-8");
    refused ("{\"a\":\"x\ty\"}", "a raw tab inside a string");
    refused ("{\"k\":\"first\",\"k\":\"last\"}", "a key named twice");
    refused ("{\"k\":\"\\u0041\",\"k\":\"b\"}",
             "a key named twice (jansson's path)");
    refused ("{\"k\":{},\"k\":\"b\"}", "a key named twice, first not a string");
    refused (NULL, "NULL");
}

int main (void)
{
    plan (NO_PLAN);
    check_plain ();
    check_json_path ();
    check_refused ();
    ok (bundle_value (NULL, "a") == NULL && bundle_count (NULL) == 0,
        "NULL bundle: no value, no keys");
    done_testing ();
}
