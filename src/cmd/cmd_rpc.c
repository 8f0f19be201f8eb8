/* cmd_rpc.c: "bgn rpc": send one request and print the response.
 *
 * A plain tool for scripts and tests: any topic, any JSON payload, any
 * rank, with a deadline.  The response payload is printed as JSON on
 * stdout; a failed request prints the errno text and error string on
 * stderr and exits 1.
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
"  -n, --nodeid=N     send to rank N; \"any\" (default) for the nearest\n"
"                     broker with the service, \"upstream\" to skip the\n"
"                     local broker\n"
"  -t, --timeout=T    response deadline (default 10s)\n"
"  -h, --help         this text\n");
}

static int parse_nodeid (const char *s, uint32_t *nodeid)
{
    if (!strcmp (s, "any")) {
        *nodeid = NODEID_ANY;
        return 0;
    }
    if (!strcmp (s, "upstream")) {
        *nodeid = NODEID_UPSTREAM;
        return 0;
    }
    return rankarg_one (s, NULL, nodeid, NULL, 0);
}

int cmd_rpc (int argc, char **argv)
{
    static const struct option longopts[] = {
        { "nodeid", required_argument, NULL, 'n' },
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

    while ((c = getopt_long (argc, argv, "n:t:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'n':
            if (parse_nodeid (optarg, &nodeid) < 0) {
                fprintf (stderr, "bgn rpc: --nodeid: '%s' is not a rank, "
                         "'any' or 'upstream'\n", optarg);
                return 1;
            }
            break;
        case 't':
            if (fsd_parse_duration (optarg, &timeout) < 0 || !(timeout > 0)) {
                fprintf (stderr, "bgn rpc: --timeout: '%s' is not a "
                         "duration\n", optarg);
                return 1;
            }
            break;
        case 'h': usage (stdout); return 0;
        default: usage (stderr); return 1;
        }
    }
    if (optind >= argc || argc - optind > 2) {
        usage (stderr);
        return 1;
    }
    if (argc - optind == 2) {
        payload = argv[optind + 1];
        if (!(o = json_loads (payload, 0, NULL)) || !json_is_object (o)) {
            fprintf (stderr, "bgn rpc: payload is not a JSON object\n");
            json_decref (o);
            return 1;
        }
        json_decref (o);
    }
    h = cmd_open ("rpc");
    if (timeout > 0)
        bgn_set_timeout (h, timeout);
    if (nodeid == NODEID_UPSTREAM)
        flags = 0;
    if (!(rpc = bgn_rpc (h, argv[optind], nodeid, payload, flags)))
        fprintf (stderr, "bgn rpc: %s: %s\n", argv[optind], strerror (errno));
    else if (bgn_rpc_get (rpc, &rsp) < 0) {
        const char *es = bgn_rpc_error (rpc);
        fprintf (stderr, "bgn rpc: %s: %s%s%s%s\n", argv[optind],
                 strerror (errno), es ? " (" : "", es ? es : "",
                 es ? ")" : "");
    }
    else {
        printf ("%s\n", rsp ? rsp : "{}");
        rc = 0;
    }
    bgn_rpc_destroy (&rpc);
    bgn_close (&h);
    return rc;
}
