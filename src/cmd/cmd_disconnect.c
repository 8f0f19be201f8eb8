/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* cmd_disconnect.c: "bgn overlay-disconnect RANK": fence a rank by hand.
 *
 * Sends overlay.disconnect to RANK's broker, which answers and then leaves
 * the instance cleanly (goodbye to its peers, exit 0); the others fence it
 * and route around it.  The command then asks rank 0 for overlay.status
 * until RANK is in its down_ranks, or the deadline (--timeout) passes, and
 * prints one line saying which.  Exit 0 when rank 0 lists RANK as down,
 * 1 otherwise.
 *
 * Rank 0 keeps the instance's down list, so disconnecting rank 0 itself is
 * refused unless --force is given (and then nothing is waited for).  The
 * connection used must not be to RANK's own broker (bgn --rank RANK).
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>

#include "src/common/libutil/fsd.h"
#include "cmd.h"
#include "src/common/libutil/monotime.h"

#define PROG "overlay-disconnect"

static void usage (FILE *f)
{
    fprintf (f,
"Usage: bgn overlay-disconnect [OPTIONS] TARGET\n"
"Ask the broker TARGET (a rank, or the host it runs on) to leave the\n"
"instance cleanly; the other brokers fence it and route around it.  Waits\n"
"until rank 0 lists it as down.\n"
"\n"
"  -t, --timeout=T       how long to wait for rank 0 to fence it\n"
"                        (default 10s; 0 = none); exit 1 if it has not\n"
"  -f, --force           allow RANK 0 (the instance loses its rank 0)\n"
"  -h, --help            this text\n");
}

/* 1 if rank 0 lists 'rank' in down_ranks, 0 if not, -1 on no answer. */
static int fenced_by_rank0 (bgn_t *h, uint32_t rank, double timeout,
                            int *err)
{
    bgn_rpc_t *rpc;
    const char *rsp = NULL;
    json_t *o = NULL, *down, *v;
    size_t i;
    int rc = -1;

    bgn_set_timeout (h, timeout);
    if ((rpc = bgn_rpc (h, "overlay.status", 0, NULL, 0))
        && bgn_rpc_get (rpc, &rsp) == 0 && rsp
        && (o = json_loads (rsp, 0, NULL))) {
        rc = 0;
        down = json_object_get (o, "down_ranks");
        json_array_foreach (down, i, v)
            if (json_is_integer (v) && json_integer_value (v) == rank)
                rc = 1;
    }
    else
        *err = errno;
    json_decref (o);
    bgn_rpc_destroy (&rpc);
    return rc;
}

int cmd_overlay_disconnect (int argc, char **argv)
{
    static const struct option longopts[] = {
        { "timeout", required_argument, NULL, 't' },
        { "force", no_argument, NULL, 'f' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    double timeout = 10., t0, deadline;
    int c, force = 0, rc = 1, err = 0, r;
    uint32_t rank;
    char dur[32];
    bgn_t *h;
    bgn_rpc_t *rpc;

    while ((c = getopt_long (argc, argv, ":t:fh", longopts, NULL)) != -1) {
        switch (c) {
        case 't': timeout = cmd_timeout_arg (PROG, "--timeout", optarg); break;
        case 'f': force = 1; break;
        case 'h': usage (stdout); return 0;
        default: return cmd_bad_option (PROG, argv, c);
        }
    }
    if (argc - optind != 1)
        cmd_usage_die (PROG, "give exactly one TARGET");
    rank = cmd_rank_arg (PROG, NULL, argv[optind], NULL);
    if (rank == 0 && !force) {
        fprintf (stderr, "bgn %s: rank 0 keeps the instance's down list; "
                 "use --force to disconnect it anyway\n", PROG);
        return 1;
    }
    h = cmd_open (PROG);
    t0 = monotime_now ();
    deadline = t0 + timeout;

    /* already gone? then there is nothing to ask it */
    if (rank != 0 && fenced_by_rank0 (h, rank, timeout, &err) == 1) {
        printf ("rank %u is already down\n", (unsigned)rank);
        rc = 0;
        goto done;
    }
    bgn_set_timeout (h, timeout);
    if (!(rpc = bgn_rpc (h, "overlay.disconnect", rank, NULL, 0))
        || bgn_rpc_get (rpc, NULL) < 0) {
        char what[32];
        snprintf (what, sizeof (what), "rank %u", (unsigned)rank);
        cmd_rpc_error (PROG, what, rpc);
        bgn_rpc_destroy (&rpc);
        goto done;
    }
    bgn_rpc_destroy (&rpc);
    if (rank == 0) {
        printf ("rank 0 is leaving (not waiting: rank 0 keeps the down "
                "list)\n");
        rc = 0;
        goto done;
    }
    for (;;) {
        double left = deadline - monotime_now ();
        r = fenced_by_rank0 (h, rank, left > 1.0 ? 1.0
                                      : (left > 0.05 ? left : 0.05), &err);
        if (r == 1) {
            fsd_format_duration (dur, sizeof (dur), monotime_now () - t0);
            printf ("rank %u disconnected: rank 0 fenced it after %s\n",
                    (unsigned)rank, dur);
            rc = 0;
            break;
        }
        if (monotime_now () >= deadline) {
            if (r < 0)
                fprintf (stderr, "bgn %s: rank %u was asked to leave, but "
                         "rank 0 did not answer (%s)\n", PROG,
                         (unsigned)rank, strerror (err));
            else
                fprintf (stderr, "bgn %s: rank %u was asked to leave, but "
                         "rank 0 still lists it up after %gs\n", PROG,
                         (unsigned)rank, timeout);
            break;
        }
        usleep (50000);
    }
done:
    bgn_close (&h);
    return rc;
}
