/* bgn-config.c: "bgn config": dump TOML as JSON, check broker configs.
 *
 * A small front end to libtoml and libconf so that users (and the test
 * suite) can see exactly what the broker would read from a file:
 *
 *   bgn-config dump FILE              parse TOML, print it as JSON
 *   bgn-config check [-p] [-o K=V]... FILE|DIR
 *                                     validate a broker configuration
 *
 * "check" is silent on success (exit 0) unless -p asks for the finalized
 * configuration, defaults included, to be printed as JSON.  Errors go to
 * stderr as "FILE:LINE:COL: message" (syntax) or "FILE: key 'x.y':
 * message" (schema), exit status 1.  The bgn front end runs this program
 * for "bgn config ...".
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "src/common/libconf/conf.h"
#include "src/common/libconf/keys.h"
#include "src/common/libtoml/toml.h"

static const char usage_text[] =
    "Usage: bgn-config dump FILE\n"
    "       bgn-config check [-p] [-o KEY=VALUE]... FILE|DIR\n"
    "       bgn-config -h|--help\n"
    "\n"
    "  dump    Parse the TOML file FILE and print it as JSON.\n"
    "  check   Validate a broker configuration (a TOML file, or a directory\n"
    "          of *.toml files) against the schema; silent on success.\n"
    "\n"
    "Options for check:\n"
    "  -o, --option=KEY=VALUE  override a key, e.g. -o overlay.ttl=4\n"
    "  -p, --print             print the final configuration as JSON\n"
    "  -h, --help              show this help\n";

static void usage (FILE *f)
{
    fputs (usage_text, f);
}

static int print_json (json_t *o)
{
    char *s = json_dumps (o, JSON_INDENT (2) | JSON_SORT_KEYS);
    if (!s) {
        fprintf (stderr, "bgn-config: cannot encode JSON\n");
        return 1;
    }
    printf ("%s\n", s);
    free (s);
    if (fflush (stdout) != 0 || ferror (stdout)) {
        fprintf (stderr, "bgn-config: write error: %s\n", strerror (errno));
        return 1;
    }
    return 0;
}

static int cmd_dump (int argc, char **argv)
{
    struct toml_error err;
    json_t *o;
    int rc;

    if (argc == 2 && (!strcmp (argv[1], "-h") || !strcmp (argv[1], "--help"))) {
        usage (stdout);
        return 0;
    }
    if (argc != 2 || argv[1][0] == '-') {
        usage (stderr);
        return 1;
    }
    if (!(o = toml_parse_file (argv[1], &err))) {
        if (err.line > 0)
            fprintf (stderr, "%s:%d:%d: %s\n", argv[1], err.line, err.col,
                     err.msg);
        else
            fprintf (stderr, "%s: %s\n", argv[1], err.msg);
        return 1;
    }
    rc = print_json (o);
    json_decref (o);
    return rc;
}

static int cmd_check (int argc, char **argv)
{
    static const struct option opts[] = {
        { "option", required_argument, NULL, 'o' },
        { "print", no_argument, NULL, 'p' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    char errbuf[1024];
    const char **sets;
    int nsets = 0, print = 0, c, rc = 1;
    json_t *conf;

    if (!(sets = calloc ((size_t)argc, sizeof (*sets)))) {
        fprintf (stderr, "bgn-config: out of memory\n");
        return 1;
    }
    optind = 1;
    opterr = 0;
    while ((c = getopt_long (argc, argv, "+o:ph", opts, NULL)) != -1) {
        switch (c) {
            case 'o':
                sets[nsets++] = optarg;
                break;
            case 'p':
                print = 1;
                break;
            case 'h':
                usage (stdout);
                free (sets);
                return 0;
            default:
                fprintf (stderr, "bgn-config: unknown or incomplete option "
                         "'%s'\n", argv[optind - 1]);
                usage (stderr);
                free (sets);
                return 1;
        }
    }
    if (argc - optind != 1) {
        usage (stderr);
        free (sets);
        return 1;
    }
    if (!(conf = conf_create ())) {
        fprintf (stderr, "bgn-config: out of memory\n");
        free (sets);
        return 1;
    }
    if (conf_load (conf, argv[optind], errbuf, sizeof (errbuf)) < 0)
        goto error;
    for (int i = 0; i < nsets; i++)
        if (conf_set (conf, sets[i], errbuf, sizeof (errbuf)) < 0)
            goto error;
    if (conf_finalize (conf, errbuf, sizeof (errbuf)) < 0)
        goto error;
    /* per-host keys: every listed host's public key, this host's secret */
    char self[256] = "";
    gethostname (self, sizeof (self) - 1);
    if (conf_check_keys (conf, self, errbuf, sizeof (errbuf)) < 0)
        goto error;
    rc = print ? print_json (conf) : 0;
    json_decref (conf);
    free (sets);
    return rc;
error:
    fprintf (stderr, "%s\n", errbuf);
    json_decref (conf);
    free (sets);
    return 1;
}

int main (int argc, char **argv)
{
    if (argc < 2) {
        usage (stderr);
        return 1;
    }
    if (!strcmp (argv[1], "-h") || !strcmp (argv[1], "--help")
        || !strcmp (argv[1], "help")) {
        usage (stdout);
        return 0;
    }
    if (!strcmp (argv[1], "dump"))
        return cmd_dump (argc - 1, argv + 1);
    if (!strcmp (argv[1], "check"))
        return cmd_check (argc - 1, argv + 1);
    fprintf (stderr, "bgn-config: unknown command '%s'\n", argv[1]);
    usage (stderr);
    return 1;
}

/* vi:ts=4 sw=4 expandtab
 */
