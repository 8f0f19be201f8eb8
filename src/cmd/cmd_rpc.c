/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* cmd_rpc.c: "bgn rpc": send one request and print the response.
 *
 * A plain tool for scripts and tests: any topic, any JSON payload, any
 * rank, with a deadline.  The response payload is printed as JSON on
 * stdout, on one line, keys sorted, reals rounded (cmd_print_json); a
 * failed request prints the errno text and error string on stderr and
 * exits 1.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "src/common/libutil/fsd.h"
#include "cmd.h"
#include "rankarg.h"

static void usage (FILE *f)
{
    fprintf (f,
"Usage: bgn rpc [OPTIONS] TOPIC [JSON]\n"
"Send a request for TOPIC with payload JSON (an object; default none) and\n"
"print the response payload.\n"
"\n"
"  -r, --rank=R       send to rank R (or the broker on host R); \"any\"\n"
"                     (default) for the nearest broker with the service,\n"
"                     \"upstream\" to skip the local broker\n"
"                     (--nodeid is another name for it)\n"
"  -t, --timeout=T    response deadline (default 10s; 0 = none)\n"
"  -h, --help         this text\n");
}

static uint32_t parse_nodeid (const char *s)
{
    if (!strcmp (s, "any"))
        return NODEID_ANY;
    if (!strcmp (s, "upstream"))
        return NODEID_UPSTREAM;
    return cmd_rank_arg ("rpc", "--rank", s, NULL);
}

int cmd_rpc (int argc, char **argv)
{
    static const struct option longopts[] = {
        { "rank", required_argument, NULL, 'r' },
        { "nodeid", required_argument, NULL, 'r' },
        { "timeout", required_argument, NULL, 't' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    uint32_t nodeid = NODEID_ANY;
    double timeout = -1;
    const char *payload = NULL, *rsp = NULL;
    int c, rc = 1, flags = 0;
    bgn_t *h;
    bgn_rpc_t *rpc;
    json_t *o;

    while ((c = getopt_long (argc, argv, ":r:n:t:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'r':
        case 'n':   /* -n/--nodeid: the older name */
            nodeid = parse_nodeid (optarg);
            break;
        case 't': timeout = cmd_timeout_arg ("rpc", "--timeout", optarg); break;
        case 'h': usage (stdout); return 0;
        default: return cmd_bad_option ("rpc", argv, c);
        }
    }
    if (optind >= argc)
        cmd_usage_die ("rpc", "which TOPIC?");
    if (argc - optind > 2)
        cmd_usage_die ("rpc", "give TOPIC and at most one JSON payload");
    if (argc - optind == 2) {
        payload = argv[optind + 1];
        if (!(o = json_loads (payload, 0, NULL)) || !json_is_object (o)) {
            json_decref (o);
            cmd_die ("rpc", "the payload is not a JSON object");
        }
        json_decref (o);
    }
    h = cmd_open ("rpc");
    if (timeout > 0)
        bgn_set_timeout (h, timeout);
    if (nodeid == NODEID_UPSTREAM)
        flags = 0;
    if (!(rpc = bgn_rpc (h, argv[optind], nodeid, payload, flags))
        || bgn_rpc_get (rpc, &rsp) < 0)
        cmd_rpc_error ("rpc", argv[optind], rpc);
    else {
        json_t *r = rsp ? json_loads (rsp, JSON_DECODE_ANY, NULL) : NULL;
        if (r)
            cmd_print_json_ex (r, 1);
        else
            printf ("%s\n", rsp ? rsp : "{}");
        json_decref (r);
        rc = 0;
    }
    bgn_rpc_destroy (&rpc);
    bgn_close (&h);
    return rc;
}
