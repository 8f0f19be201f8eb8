/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* keys_fuzz.c: libFuzzer entry point for the per-host key file parser.
 *
 * A node's key directory is read by every broker of a system instance
 * (bootstrap.curve_keys); whatever is in a file there must give a key of
 * 40 Z85 characters or a one-line error, never a crash or an overread.
 * Built and run by "make fuzz" in src/common/libconf.
 */
#define _GNU_SOURCE   /* memmem */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "src/common/libconf/keys.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    char pub[41], err[256];
    char *copy = malloc (size ? size : 1);   /* exact size: ASan sees */

    if (!copy)
        return 0;
    memcpy (copy, data, size);
    if (conf_parse_pubkey (copy, size, "fuzz", pub, err, sizeof (err)) == 0) {
        /* a key is only ever found after the word "public-key" */
        if (strlen (pub) != 40 || !memmem (copy, size, "public-key", 10))
            abort ();
    }
    else if (!memchr (err, '\0', sizeof (err)))
        abort ();
    free (copy);
    return 0;
}
