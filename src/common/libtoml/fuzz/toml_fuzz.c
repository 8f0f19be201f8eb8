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

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    struct toml_error err;
    json_t *o = toml_parse ((const char *)data, size, &err);
    if (o) {
        char *s = json_dumps (o, JSON_COMPACT | JSON_SORT_KEYS);
        free (s);
        json_decref (o);
    }
    else if (err.line < 0 || err.col < 0 || !memchr (err.msg, '\0',
                                                     sizeof (err.msg)))
        abort ();
    return 0;
}
