/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* bundle_fuzz.c: libFuzzer target for bundle_parse(): no crash on any
 * text, and the fast path agrees with jansson: a bundle is made exactly
 * when jansson reads an object of strings with no key twice, with the
 * same keys and values. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "src/broker/bundle.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    char *text = malloc (size + 1);
    struct bundle *b;
    json_t *o, *v;
    const char *key;
    int strings = 1, n = 0;

    if (!text)
        return 0;
    memcpy (text, data, size);
    text[size] = '\0';
    b = bundle_parse (text);
    o = json_loads (text, JSON_REJECT_DUPLICATES, NULL);
    if (!json_is_object (o))
        strings = 0;
    else
        json_object_foreach (o, key, v) {
            if (!json_is_string (v))
                strings = 0;
            n++;
        }
    if (!!b != strings)
        abort ();
    if (b) {
        if (bundle_count (b) != n)
            abort ();
        json_object_foreach (o, key, v)
            if (strcmp (bundle_value (b, key) ?: "(none)",
                        json_string_value (v)) != 0)
                abort ();
    }
    json_decref (o);
    bundle_destroy (&b);
    free (text);
    return 0;
}
