/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* cmd_dmesg.c: "bgn dmesg": a broker's recent log lines.
 *
 * Every broker keeps its last lines (log.h's ring buffer, after flood
 * control) and serves them with broker.dmesg, so an administrator can
 * read what a broker said without its terminal or journal.  Lines are
 * printed as the broker wrote them, with the time in front:
 *
 *   2024-05-01T12:00:00.123Z bgn-broker[3]: warning: peer 5 lost: ...
 *
 * -r takes a rank, a host, or a set/hostlist: each broker's lines are
 * printed in turn.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "cmd.h"

#define PROG "dmesg"

static void usage (FILE *f)
{
    fprintf (f,
"Usage: bgn dmesg [OPTIONS]\n"
"Print the recent log lines a broker keeps in its ring buffer (the last\n"
"1024 lines of every level by default, oldest first), with the time they\n"
"were logged.\n"
"\n"
"  -r, --rank=RANKS      the broker(s) to ask: a rank, a host, a set of\n"
"                        ranks (0-3) or a hostlist (default: the local\n"
"                        broker)\n"
"  -C, --clear           empty the ring buffer, print nothing\n"
"      --read-clear      print, then empty the ring buffer\n"
"  -j, --json            print one JSON object per line\n"
"  -t, --timeout=T       deadline for each answer (default 10s; 0 = none)\n"
"  -h, --help            this text\n");
}

struct dmesg_opts {
    int clear, print, json;
};

static void print_lines (json_t *o, const struct dmesg_opts *d)
{
    const char *host = "?";
    int rank = -1;
    json_int_t suppressed = 0;
    json_t *lines = NULL, *l;
    size_t i;

    json_unpack (o, "{s?i s?s s?I s?o}", "rank", &rank, "hostname", &host,
                 "suppressed", &suppressed, "lines", &lines);
    json_array_foreach (lines, i, l) {
        const char *time = "?", *level = "?", *text = "";
        if (d->json) {
            json_object_set_new (l, "rank", json_integer (rank));
            json_object_set_new (l, "hostname", json_string (host));
            cmd_print_json_ex (l, 1);
            continue;
        }
        json_unpack (l, "{s?s s?s s?s}", "time", &time, "level", &level,
                     "text", &text);
        printf ("%s bgn-broker[%d]: %s: %s\n", time, rank, level, text);
    }
}

/* Ask one broker; 0 or -1 (message printed). */
static int dmesg_one (bgn_t *h, uint32_t nodeid, const struct dmesg_opts *d)
{
    char payload[64], what[64];
    const char *rsp;
    bgn_rpc_t *rpc;
    json_t *o;
    int rc = -1;

    snprintf (payload, sizeof (payload), "{\"clear\":%s}",
              d->clear ? "true" : "false");
    if (nodeid == NODEID_ANY)
        snprintf (what, sizeof (what), "broker.dmesg");
    else
        snprintf (what, sizeof (what), "broker.dmesg to rank %u",
                  (unsigned)nodeid);
    if (!(rpc = bgn_rpc (h, "broker.dmesg", nodeid, payload, 0))
        || bgn_rpc_get (rpc, &rsp) < 0)
        cmd_rpc_error (PROG, what, rpc);
    else if (!rsp || !(o = json_loads (rsp, 0, NULL)))
        fprintf (stderr, "bgn %s: %s: the answer is not JSON\n", PROG, what);
    else {
        if (d->print)
            print_lines (o, d);
        json_decref (o);
        rc = 0;
    }
    bgn_rpc_destroy (&rpc);
    return rc;
}

int cmd_dmesg (int argc, char **argv)
{
    static const struct option longopts[] = {
        { "rank", required_argument, NULL, 'r' },
        { "clear", no_argument, NULL, 'C' },
        { "read-clear", no_argument, NULL, 'c' },   /* long only: -c is
                                                       a count elsewhere */
        { "json", no_argument, NULL, 'j' },
        { "timeout", required_argument, NULL, 't' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    struct dmesg_opts d = { .print = 1 };
    const char *ranks = NULL;
    double timeout = -1;
    int c, rc = 0;
    idset_t *ids = NULL;
    bgn_t *h;

    while ((c = getopt_long (argc, argv, ":r:Cjt:h", longopts, NULL))
           != -1) {
        switch (c) {
        case 'r': ranks = optarg; break;
        case 'C': d.clear = 1; d.print = 0; break;
        case 'c': d.clear = 1; break;
        case 'j': d.json = 1; break;
        case 't': timeout = cmd_timeout_arg (PROG, "--timeout", optarg); break;
        case 'h': usage (stdout); return 0;
        default: return cmd_bad_option (PROG, argv, c);
        }
    }
    if (optind < argc)
        cmd_usage_die (PROG, "unexpected argument '%s'", argv[optind]);
    h = cmd_open (PROG);
    if (timeout > 0)
        bgn_set_timeout (h, timeout);
    if (!ranks)
        rc = dmesg_one (h, NODEID_ANY, &d) < 0;
    else {
        ids = cmd_ranks_arg (PROG, "--rank", ranks, h);
        for (int r = idset_first (ids); r >= 0; r = idset_next (ids, r))
            if (dmesg_one (h, (uint32_t)r, &d) < 0)
                rc = 1;
        idset_destroy (&ids);
    }
    bgn_close (&h);
    return rc;
}
