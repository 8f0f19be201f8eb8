/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* toml_fuzz.c: libFuzzer entry point for the TOML parser.
 *
 * Feeds arbitrary bytes to toml_parse() and, when a document parses,
 * serialises the result so that every value jansson holds is touched.
 * Built and run by "make fuzz" in src/common/libtoml.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "src/common/libtoml/toml.h"

/* Containers nested in v (0 for a scalar), looking no deeper than limit. */
static int depth (json_t *v, int limit)
{
    const char *key;
    json_t *child;
    size_t i;
    int max = 0;

    if (limit < 0 || (!json_is_object (v) && !json_is_array (v)))
        return 0;
    if (json_is_object (v)) {
        json_object_foreach (v, key, child) {
            int d = depth (child, limit - 1);
            if (d > max)
                max = d;
        }
    }
    else {
        json_array_foreach (v, i, child) {
            int d = depth (child, limit - 1);
            if (d > max)
                max = d;
        }
    }
    return max + 1;
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    struct toml_error err;
    json_t *o = toml_parse ((const char *)data, size, &err);
    if (o) {
        /* headers, dotted keys, arrays and inline tables together stay
         * within the bound (plus the root table) */
        if (depth (o, TOML_MAX_DEPTH + 2) > TOML_MAX_DEPTH + 1)
            abort ();
        char *s = json_dumps (o, JSON_COMPACT | JSON_SORT_KEYS);
        free (s);
        json_decref (o);
    }
    else if (err.line < 0 || err.col < 0 || !memchr (err.msg, '\0',
                                                     sizeof (err.msg)))
        abort ();
    return 0;
}
