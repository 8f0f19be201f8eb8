/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* pmi_exchange: run under a PMI-1 launcher (mpiexec -n N, bgn start).
 *
 * Each rank puts "key-R" = a value built from R that uses every Z85
 * symbol, enters the barrier, then gets and checks every rank's key,
 * and prints "rank R: ok" (or "rank R: FAIL: reason" and exits 1).
 * Usage: pmi_exchange [timeout-seconds]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/common/libpmi/pmi_client.h"

/* The non-alphanumeric part of the Z85 alphabet, then a space. */
#define Z85_SYMBOLS ".-:+=^!/*?&<>()[]{}@%$#"

static void make_value (char *buf, size_t len, int rank)
{
    snprintf (buf, len, "ipc:///tmp/x/%d|%s| z85=%d", rank, Z85_SYMBOLS,
              rank * 7);
}

int main (int argc, char **argv)
{
    char err[1024];
    char key[64], want[256], got[256];
    pmi_client_t *cli;
    int rank = -1, size;

    if (!(cli = pmi_client_create_from_env (err, sizeof (err)))) {
        printf ("rank ?: FAIL: %s\n", err);
        return 1;
    }
    if (argc > 1)
        pmi_client_set_timeout (cli, atof (argv[1]));
    rank = pmi_client_rank (cli);
    size = pmi_client_size (cli);
    if (pmi_client_init (cli, err, sizeof (err)) < 0
        || pmi_client_get_maxes (cli, NULL, NULL, NULL, err, sizeof (err)) < 0
        || pmi_client_get_my_kvsname (cli, NULL, 0, err, sizeof (err)) < 0)
        goto fail;
    snprintf (key, sizeof (key), "key-%d", rank);
    make_value (want, sizeof (want), rank);
    if (pmi_client_kvs_put (cli, key, want, err, sizeof (err)) < 0
        || pmi_client_barrier (cli, err, sizeof (err)) < 0)
        goto fail;
    for (int r = 0; r < size; r++) {
        snprintf (key, sizeof (key), "key-%d", r);
        make_value (want, sizeof (want), r);
        if (pmi_client_kvs_get (cli, key, got, sizeof (got), err,
                                sizeof (err)) < 0)
            goto fail;
        if (strcmp (got, want) != 0) {
            snprintf (err, sizeof (err), "%s: got '%s' want '%s'", key, got,
                      want);
            goto fail;
        }
    }
    if (pmi_client_barrier (cli, err, sizeof (err)) < 0
        || pmi_client_finalize (cli, err, sizeof (err)) < 0)
        goto fail;
    printf ("rank %d: ok\n", rank);
    pmi_client_destroy (&cli);
    return 0;
fail:
    printf ("rank %d: FAIL: %s\n", rank, err);
    pmi_client_destroy (&cli);
    return 1;
}
