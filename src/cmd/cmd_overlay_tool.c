/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* cmd_overlay_tool.c: "bgn overlay SUBCOMMAND", in Flux's spelling.
 *
 *   bgn overlay lookup TARGET...   ranks <-> hosts: a rank or a set of
 *                                  ranks prints the hosts (a hostlist), a
 *                                  host or a hostlist prints the ranks
 *                                  (an idset), one line per TARGET
 *   bgn overlay status|trace|disconnect ...
 *                                  the same as overlay-status,
 *                                  overlay-trace, overlay-disconnect
 *
 * lookup answers from the instance's host table (broker.hosts), which
 * every broker serves (hosts.h).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "rankarg.h"

#define PROG "overlay"

static void usage (FILE *f)
{
    fprintf (f,
"Usage: bgn overlay lookup TARGET...\n"
"       bgn overlay status|trace|disconnect [ARGS...]\n"
"lookup maps ranks to hosts and back, using the instance's host table:\n"
"a rank or a set of ranks (3, 0-7) prints their hosts as a hostlist\n"
"(node[0-7]); a host or a hostlist (node3, node[0-7]) prints their ranks\n"
"(3, 0-7).  status, trace and disconnect are overlay-status,\n"
"overlay-trace and overlay-disconnect.\n"
"\n"
"  -h, --help            this text\n");
}

static int lookup (int argc, char **argv)
{
    bgn_t *h;
    hostmap_t *hm;
    int rc = 0;

    if (argc < 1)
        cmd_usage_die (PROG, "lookup: which TARGET?");
    h = cmd_open (PROG);
    if (!(hm = cmd_hostmap (h, PROG, 0))) {
        bgn_close (&h);
        return 1;
    }
    for (int i = 0; i < argc; i++) {
        char err[256];
        idset_t *ids = rankarg_set (argv[i], hm, err, sizeof (err));
        char *s;
        if (!ids) {
            fprintf (stderr, "bgn %s: lookup: %s\n", PROG, err);
            rc = 1;
            continue;
        }
        if (rankarg_numeric (argv[i]))
            s = hostmap_hostlist (hm, ids);
        else
            s = idset_encode (ids, 0);
        if (rankarg_numeric (argv[i]) && s && !*s) {
            fprintf (stderr, "bgn %s: lookup: no host is known for %s\n",
                     PROG, argv[i]);
            rc = 1;
        }
        else
            printf ("%s\n", s ? s : "?");
        free (s);
        idset_destroy (&ids);
    }
    bgn_close (&h);
    return rc;
}

int cmd_overlay (int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*fn) (int argc, char **argv);
        const char *prog;
    } subs[] = {
        { "status", cmd_overlay_status, "overlay-status" },
        { "trace", cmd_overlay_trace, "overlay-trace" },
        { "disconnect", cmd_overlay_disconnect, "overlay-disconnect" },
    };

    if (argc < 2)
        cmd_usage_die (PROG, "which subcommand? (lookup, status, trace, "
                       "disconnect)");
    if (!strcmp (argv[1], "-h") || !strcmp (argv[1], "--help")) {
        usage (stdout);
        return 0;
    }
    if (!strcmp (argv[1], "lookup")) {
        if (argc > 2 && (!strcmp (argv[2], "-h")
                         || !strcmp (argv[2], "--help"))) {
            usage (stdout);
            return 0;
        }
        return lookup (argc - 2, argv + 2);
    }
    for (size_t i = 0; i < sizeof (subs) / sizeof (subs[0]); i++) {
        if (!strcmp (argv[1], subs[i].name)) {
            argv[1] = (char *)subs[i].prog;
            optind = 0;
            return subs[i].fn (argc - 1, argv + 1);
        }
    }
    cmd_usage_die (PROG, "'%s' is not a subcommand (lookup, status, trace, "
                   "disconnect)", argv[1]);
}
