/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* hello-client.c: an out-of-tree client, built by t0040-sdk.t against
 * the installed SDK only (pkg-config bgn, -lbgn).
 *
 * Usage: hello-client RANK TOPIC [JSON]
 * Sends TOPIC with payload JSON to broker RANK of the instance at
 * $BGN_URI and prints the response payload, or "error: MESSAGE" and
 * exits 1.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bgn/client.h>

int main (int argc, char **argv)
{
    char err[256] = "";
    bgn_t *h;
    bgn_rpc_t *rpc;
    const char *rsp = NULL;
    int rc = 0;

    if (argc < 3 || argc > 4) {
        fprintf (stderr, "Usage: hello-client RANK TOPIC [JSON]\n");
        return 2;
    }
    if (!(h = bgn_open (NULL, err, sizeof (err)))) {
        fprintf (stderr, "hello-client: %s\n", err);
        return 1;
    }
    bgn_set_timeout (h, 10.);
    rpc = bgn_rpc (h, argv[2], (uint32_t)strtoul (argv[1], NULL, 10),
                   argc > 3 ? argv[3] : NULL, 0);
    if (!rpc) {
        fprintf (stderr, "hello-client: %s\n", strerror (errno));
        rc = 1;
    }
    else if (bgn_rpc_get (rpc, &rsp) < 0) {
        const char *e = bgn_rpc_error (rpc);
        printf ("error: %s\n", e ? e : strerror (errno));
        rc = 1;
    }
    else
        printf ("%s\n", rsp ? rsp : "");
    bgn_rpc_destroy (&rpc);
    bgn_close (&h);
    return rc;
}
