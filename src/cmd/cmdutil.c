/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* cmdutil.c: helpers every bgn sub-command uses (see cmd.h).
 *
 * Kept out of bgn.c (which is the front end: global options, dispatch,
 * help) so that each concern has one home: opening the broker with the
 * system-instance fallback, the one error form, option errors, timeouts
 * where 0 means none, and rank arguments that may be host names.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>

#include "src/common/libutil/errbuf.h"
#include "src/common/libutil/fsd.h"
#include "cmd.h"
#include "rankarg.h"

void cmd_die (const char *prog, const char *fmt, ...)
{
    va_list ap;
    fprintf (stderr, "bgn%s%s: ", *prog ? " " : "", prog);
    va_start (ap, fmt);
    vfprintf (stderr, fmt, ap);
    va_end (ap);
    fputc ('\n', stderr);
    exit (1);
}

void cmd_usage_die (const char *prog, const char *fmt, ...)
{
    va_list ap;
    fprintf (stderr, "bgn %s: ", prog);
    va_start (ap, fmt);
    vfprintf (stderr, fmt, ap);
    va_end (ap);
    fprintf (stderr, "; see 'bgn %s --help'\n", prog);
    exit (1);
}

int cmd_bad_option (const char *prog, char **argv, int c)
{
    const char *arg = optind > 0 ? argv[optind - 1] : "?";
    char opt[64];

    /* the offending word: an unknown short option is reported by
     * optopt alone, as it may be bundled ("-xv") */
    if (optopt && strncmp (arg, "--", 2))
        snprintf (opt, sizeof (opt), "-%c", optopt);
    else
        snprintf (opt, sizeof (opt), "%.*s", (int)strcspn (arg, "="), arg);
    if (c == ':')
        fprintf (stderr, "bgn %s: option '%s' needs a value; see 'bgn %s "
                 "--help'\n", prog, opt, prog);
    else
        fprintf (stderr, "bgn %s: unknown option '%s'; see 'bgn %s "
                 "--help'\n", prog, opt, prog);
    return 1;
}

void cmd_rpc_error (const char *prog, const char *what, bgn_rpc_t *rpc)
{
    int errnum = errno;
    const char *es = rpc ? bgn_rpc_error (rpc) : NULL;

    fprintf (stderr, "bgn %s: %s: %s%s%s%s\n", prog, what, strerror (errnum),
             es && *es ? " (" : "", es && *es ? es : "",
             es && *es ? ")" : "");
    errno = errnum;
}

void cmd_broker_gone (const char *prog, bgn_t *h, const char *fmt, ...)
{
    va_list ap;

    fprintf (stderr, "bgn %s: broker at %s went away ", prog,
             bgn_get_uri (h));
    va_start (ap, fmt);
    vfprintf (stderr, fmt, ap);
    va_end (ap);
    fputc ('\n', stderr);
}

double cmd_timeout_arg (const char *prog, const char *opt, const char *arg)
{
    double t;

    if (fsd_parse_duration (arg, &t) < 0)
        cmd_die (prog, "%s: '%s' is not a duration (e.g. 250ms, 5s; 0 for "
                 "none)", opt, arg);
    return t == 0 ? INFINITY : t;
}

/* $BGN_URI, else the system instance; NULL with the reason in err. */
static bgn_t *try_open (char *err, size_t len)
{
    char syserr[512] = "";
    const char *uri = getenv ("BGN_URI");
    const char *sys = getenv ("BGN_SYSTEM_URI");
    bgn_t *h;

    if (uri) {
        if (!(h = bgn_open (uri, err, len)))
            snprintf (err + strlen (err), len - strlen (err),
                      " (from BGN_URI or --uri)");
        return h;
    }
    if (!sys || !*sys)
        sys = CMD_SYSTEM_URI;
    if ((h = bgn_open (sys, syserr, sizeof (syserr))))
        return h;
    errbuf_set (err, len, "no broker: BGN_URI is not set, and the system "
                "instance is not reachable (%s%s); run under 'bgn start', or "
                "give --uri", syserr, strstr (syserr, "Permission denied")
                                      ? ": the socket is for the broker's user"
                                      : "");
    return NULL;
}

bgn_t *cmd_open (const char *prog)
{
    char err[1024] = "";
    bgn_t *h;

    if (!(h = try_open (err, sizeof (err))))
        cmd_die (prog, "%s", err);
    return h;
}

/* Parse a broker.hosts answer into a table. */
static hostmap_t *hostmap_from_json (const char *s)
{
    json_t *o = s ? json_loads (s, 0, NULL) : NULL, *hosts, *v;
    hostmap_t *hm = NULL;
    int size;
    size_t i;

    if (!o || json_unpack (o, "{s:i s:o}", "size", &size, "hosts",
                           &hosts) < 0 || size < 0 || !json_is_array (hosts)
        || !(hm = hostmap_create ((uint32_t)size)))
        goto done;
    json_array_foreach (hosts, i, v)
        if (json_is_string (v) && i < (size_t)size)
            hostmap_set (hm, (uint32_t)i, json_string_value (v));
done:
    json_decref (o);
    return hm;
}

hostmap_t *cmd_hostmap (bgn_t *h, const char *prog, int quiet)
{
    static hostmap_t *cached;
    char err[1024];
    bgn_t *own = NULL;
    bgn_rpc_t *rpc = NULL;
    const char *rsp;

    if (cached)
        return cached;
    if (!h && !(h = own = try_open (err, sizeof (err)))) {
        if (!quiet)
            fprintf (stderr, "bgn %s: the host table: %s\n", prog, err);
        return NULL;
    }
    if (!(rpc = bgn_rpc (h, "broker.hosts", NODEID_ANY, NULL, 0))
        || bgn_rpc_get (rpc, &rsp) < 0) {
        if (!quiet)
            cmd_rpc_error (prog, "the host table (broker.hosts)", rpc);
    }
    else if (!(cached = hostmap_from_json (rsp)) && !quiet)
        fprintf (stderr, "bgn %s: broker.hosts: the answer is not a host "
                 "table\n", prog);
    bgn_rpc_destroy (&rpc);
    bgn_close (&own);
    return cached;
}

static void rank_die (const char *prog, const char *opt, const char *err)
{
    if (opt)
        cmd_die (prog, "%s: %s", opt, err);
    cmd_die (prog, "%s", err);
}

/* The host table for a non-numeric argument, or NULL: then the argument
 * is refused as "not a rank" (with no broker, no host can be looked up). */
static hostmap_t *hostmap_for (const char *arg, bgn_t *h, const char *prog)
{
    if (rankarg_numeric (arg) || arg[0] == '-')
        return NULL;
    return cmd_hostmap (h, prog, 1);
}

uint32_t cmd_rank_arg (const char *prog, const char *opt, const char *arg,
                       bgn_t *h)
{
    char err[256];
    uint32_t rank;
    hostmap_t *hm = hostmap_for (arg, h, prog);

    if (rankarg_one (arg, hm, &rank, err, sizeof (err)) < 0)
        rank_die (prog, opt, err);
    return rank;
}

idset_t *cmd_ranks_arg (const char *prog, const char *opt, const char *arg,
                        bgn_t *h)
{
    char err[256];
    idset_t *ids;
    hostmap_t *hm = hostmap_for (arg, h, prog);

    if (!(ids = rankarg_set (arg, hm, err, sizeof (err))))
        rank_die (prog, opt, err);
    return ids;
}

static double round_to (double v, double unit)
{
    return round (v / unit) * unit;
}

static void round_value (const char *key, json_t *v)
{
    size_t klen = key ? strlen (key) : 0;
    double unit = 1e-3;

    if (klen >= 3 && !strcmp (key + klen - 3, "_us"))
        unit = 0.1;
    else if (key && !strcmp (key, "time"))
        unit = 1e-6;
    if (json_is_real (v))
        json_real_set (v, round_to (json_real_value (v), unit));
    else
        cmd_json_round (v);
}

void cmd_json_round (json_t *o)
{
    const char *k;
    json_t *v;
    size_t i;

    if (json_is_object (o)) {
        json_object_foreach (o, k, v)
            round_value (k, v);
    }
    else if (json_is_array (o)) {
        json_array_foreach (o, i, v)
            round_value (NULL, v);
    }
}

void cmd_print_json_ex (json_t *o, int compact)
{
    char *s;

    cmd_json_round (o);
    /* 15 significant digits print a rounded value exactly (1518.1, not
     * 1518.0999999999999) */
    s = json_dumps (o, (compact ? JSON_COMPACT : JSON_INDENT (2))
                       | JSON_SORT_KEYS | JSON_REAL_PRECISION (15));
    printf ("%s\n", s ? s : "{}");
    free (s);
}

const char *cmd_default_rank (void)
{
    const char *r = getenv (CMD_RANK_ENV);
    return r && *r ? r : NULL;
}

const char *cmd_exe_dir (void)
{
    static char dir[PATH_MAX];
    if (!dir[0]) {
        ssize_t n = readlink ("/proc/self/exe", dir, sizeof (dir) - 1);
        char *slash;
        if (n < 0)
            return ".";
        dir[n] = '\0';
        if ((slash = strrchr (dir, '/')))
            *slash = '\0';
    }
    return dir;
}

static int in_build_tree (void)
{
    return !strcmp (cmd_exe_dir (), ABS_TOP_BUILDDIR "/src/cmd");
}

char *cmd_find_program (const char *name)
{
    char *path = NULL;
    const char *dir;

    if (!strcmp (name, "bgn-broker"))
        dir = in_build_tree () ? ABS_TOP_BUILDDIR "/src/broker" : SBINDIR;
    else if (!strcmp (name, "bgn-sim"))
        dir = in_build_tree () ? ABS_TOP_BUILDDIR "/src/sim" : BINDIR;
    else
        dir = in_build_tree () ? cmd_exe_dir () : CMDDIR;
    if (asprintf (&path, "%s/%s", dir, name) < 0)
        return NULL;
    return path;
}
