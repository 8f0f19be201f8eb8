/* bgn.c: the bgn front-end command.
 *
 * "bgn [GLOBAL OPTIONS] COMMAND [ARGS]": built-in commands are functions
 * in this program; any other COMMAND runs the program bgn-COMMAND, found
 * beside bgn in the build tree or in the installed command directory, so
 * new commands need no change here.  Global options choose the broker:
 * --uri URI, or --rank R for rank R of the instance that 'bgn start' made
 * (its run directory is $BGN_RUNDIR).  Both are passed to sub-commands as
 * BGN_URI.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "rankarg.h"

static const struct {
    const char *name;
    int (*fn) (int argc, char **argv);
    const char *summary;
} builtins[] = {
    { "start", cmd_start, "start an instance of N brokers and run a command" },
    { "ping", cmd_ping, "send echo requests to a rank or a service" },
    { "rpc", cmd_rpc, "send one request and print the response" },
    { "overlay-status", cmd_overlay_status, "show overlay health and peers" },
    { "overlay-trace", cmd_overlay_trace, "trace messages through a broker's overlay" },
    { "overlay-disconnect", cmd_overlay_disconnect, "make a rank leave the instance (fence it)" },
    { "event", cmd_event, "publish (pub) and watch (sub) events" },
    { "fault", cmd_fault, "inject broker faults (kill, stop, restart, chaos)" },
};

/* External commands, listed for help only (they are found at run time). */
static const struct {
    const char *name;
    const char *summary;
} externals[] = {
    { "config", "dump or check a TOML configuration" },
};

static void usage (FILE *f)
{
    fprintf (f,
"Usage: bgn [--uri URI] [--rank R] COMMAND [ARGS...]\n"
"       bgn help [COMMAND]\n"
"\n"
"Global options:\n"
"  --uri=URI     talk to the broker at URI (default $BGN_URI)\n"
"  --rank=R      talk to rank R of the instance in $BGN_RUNDIR\n"
"  -h, --help    this text\n"
"  -V, --version print the version\n"
"\n"
"Commands:\n");
    for (size_t i = 0; i < sizeof (builtins) / sizeof (builtins[0]); i++)
        fprintf (f, "  %-20s %s\n", builtins[i].name, builtins[i].summary);
    for (size_t i = 0; i < sizeof (externals) / sizeof (externals[0]); i++)
        fprintf (f, "  %-20s %s\n", externals[i].name, externals[i].summary);
    fprintf (f, "\nRun 'bgn COMMAND --help' for a command's options; "
                "see bgn(1).\n");
}

void cmd_die (const char *prog, const char *fmt, ...)
{
    va_list ap;
    fprintf (stderr, "bgn %s: ", prog);
    va_start (ap, fmt);
    vfprintf (stderr, fmt, ap);
    va_end (ap);
    fputc ('\n', stderr);
    exit (1);
}

bgn_t *cmd_open (const char *prog)
{
    char err[512] = "";
    bgn_t *h = bgn_open (NULL, err, sizeof (err));
    if (!h)
        cmd_die (prog, "%s", err);
    return h;
}

static void rank_die (const char *prog, const char *opt, const char *err)
{
    if (opt)
        cmd_die (prog, "%s: %s", opt, err);
    cmd_die (prog, "%s", err);
}

uint32_t cmd_rank_arg (const char *prog, const char *opt, const char *arg)
{
    char err[256];
    uint32_t rank;

    if (rankarg_one (arg, NULL, &rank, err, sizeof (err)) < 0)
        rank_die (prog, opt, err);
    return rank;
}

idset_t *cmd_ranks_arg (const char *prog, const char *opt, const char *arg)
{
    char err[256];
    idset_t *ids;

    if (!(ids = rankarg_set (arg, NULL, err, sizeof (err))))
        rank_die (prog, opt, err);
    return ids;
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

static int run_external (int argc, char **argv)
{
    char name[128];
    char *path;

    snprintf (name, sizeof (name), "bgn-%s", argv[0]);
    if (!(path = cmd_find_program (name)) || access (path, X_OK) < 0) {
        fprintf (stderr, "bgn: '%s' is not a bgn command; see 'bgn help'\n",
                 argv[0]);
        free (path);
        return 1;
    }
    argv[0] = name;
    execv (path, argv);
    fprintf (stderr, "bgn: %s: %s\n", path, strerror (errno));
    free (path);
    return 1;
}

static int help (int argc, char **argv)
{
    char *args[] = { argv[1], "--help", NULL };

    if (argc < 2) {
        usage (stdout);
        return 0;
    }
    for (size_t i = 0; i < sizeof (builtins) / sizeof (builtins[0]); i++) {
        if (!strcmp (argv[1], builtins[i].name)) {
            optind = 0;
            return builtins[i].fn (2, args);
        }
    }
    return run_external (2, args);
}

/* --rank R: rank R's local socket in the instance made by 'bgn start'. */
static int set_rank_uri (const char *rank)
{
    const char *rundir = getenv ("BGN_RUNDIR");
    char err[256], uri[PATH_MAX + 16];
    uint32_t r;

    if (rankarg_one (rank, NULL, &r, err, sizeof (err)) < 0) {
        fprintf (stderr, "bgn: --rank: %s\n", err);
        return -1;
    }
    if (!rundir) {
        fprintf (stderr, "bgn: --rank needs BGN_RUNDIR (run under 'bgn start')\n");
        return -1;
    }
    snprintf (uri, sizeof (uri), "ipc://%s/%u/local", rundir, (unsigned)r);
    setenv ("BGN_URI", uri, 1);
    return 0;
}

int main (int argc, char **argv)
{
    static const struct option longopts[] = {
        { "uri", required_argument, NULL, 'u' },
        { "rank", required_argument, NULL, 'r' },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    int c;

    /* '+': stop at the first non-option, the command name. */
    while ((c = getopt_long (argc, argv, "+hV", longopts, NULL)) != -1) {
        switch (c) {
        case 'u': setenv ("BGN_URI", optarg, 1); break;
        case 'r':
            if (set_rank_uri (optarg) < 0)
                return 1;
            break;
        case 'h': usage (stdout); return 0;
        case 'V': printf ("bgn %s\n", PACKAGE_VERSION); return 0;
        default: usage (stderr); return 1;
        }
    }
    if (optind >= argc) {
        usage (stderr);
        return 1;
    }
    argc -= optind;
    argv += optind;
    optind = 0;   /* sub-commands parse their own options from argv[0] */
    if (!strcmp (argv[0], "help"))
        return help (argc, argv);
    for (size_t i = 0; i < sizeof (builtins) / sizeof (builtins[0]); i++) {
        if (!strcmp (argv[0], builtins[i].name))
            return builtins[i].fn (argc, argv);
    }
    return run_external (argc, argv);
}
