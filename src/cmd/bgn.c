/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* bgn.c: the bgn front-end command.
 *
 * "bgn [GLOBAL OPTIONS] COMMAND [ARGS]": built-in commands are functions
 * in this program; any other COMMAND runs the program bgn-COMMAND, found
 * beside bgn in the build tree or in the installed command directory, so
 * new commands need no change here.  Global options choose the broker:
 * --uri URI, or --rank R for rank R (a rank, or the host it runs on) of
 * the instance that 'bgn start' made (its run directory is $BGN_RUNDIR).
 * Both are passed to sub-commands as BGN_URI.  Without either, commands
 * use $BGN_URI, else the system instance (cmdutil.c).
 *
 * Getopt prints nothing itself (opterr = 0): every command reports a bad
 * option in one line through cmd_bad_option().
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

#include "src/common/libutil/fsd.h"
#include "cmd.h"

static const struct {
    const char *name;
    int (*fn) (int argc, char **argv);
    const char *summary;
} builtins[] = {
    { "start", cmd_start, "start an instance of N brokers and run a command" },
    { "ping", cmd_ping, "send echo requests to a rank, a host or a service" },
    { "rpc", cmd_rpc, "send one request and print the response" },
    { "overlay-status", cmd_overlay_status, "show overlay health and peers" },
    { "overlay-trace", cmd_overlay_trace, "trace messages through a broker's overlay" },
    { "overlay-disconnect", cmd_overlay_disconnect, "make a rank leave the instance (fence it)" },
    { "overlay", cmd_overlay, "lookup ranks <-> hosts; also status, trace, disconnect" },
    { "metrics", cmd_overlay_status, "the instance's overlay metrics for Prometheus" },
    { "dmesg", cmd_dmesg, "print a broker's recent log lines" },
    { "event", cmd_event, "publish (pub) and watch (sub) events" },
    { "fault", cmd_fault, "inject broker faults (kill, stop, restart, chaos)" },
};

/* External commands, listed for help only (they are found at run time). */
static const struct {
    const char *name;
    const char *summary;
} externals[] = {
    { "config", "dump or check a TOML configuration" },
    { "keygen", "make the instance's CURVE certificate" },
    { "sim", "simulate topologies and failures (bgn-sim)" },
};

static void usage (FILE *f)
{
    fprintf (f,
"Usage: bgn [--uri URI] [--rank R] [--broker-timeout T] COMMAND [ARGS...]\n"
"       bgn help [COMMAND]\n"
"\n"
"Global options:\n"
"      --uri=URI     talk to the broker at URI (default $BGN_URI, else the\n"
"                    system instance at " CMD_SYSTEM_URI ")\n"
"  -r, --rank=R      talk to rank R (or the host running it) of the\n"
"                    instance in $BGN_RUNDIR\n"
"      --broker-timeout=T  give up on a broker that has not answered the\n"
"                    connection's heartbeats for T (default 5s, 0 for no\n"
"                    heartbeats; $BGN_BROKER_TIMEOUT): waits, streams and\n"
"                    RPCs then fail (\"broker at URI went away\")\n"
"  -h, --help        this text\n"
"  -V, --version     print the version\n"
"\n"
"Commands:\n");
    for (size_t i = 0; i < sizeof (builtins) / sizeof (builtins[0]); i++)
        fprintf (f, "  %-20s %s\n", builtins[i].name, builtins[i].summary);
    for (size_t i = 0; i < sizeof (externals) / sizeof (externals[0]); i++)
        fprintf (f, "  %-20s %s\n", externals[i].name, externals[i].summary);
    fprintf (f, "\nRun 'bgn COMMAND --help' for a command's options; "
                "see bgn(1).\n");
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

/* --rank R: rank R's local socket in the instance made by 'bgn start'.
 * A host name is looked up through rank 0 (or $BGN_URI). */
static int set_rank_uri (const char *rank)
{
    const char *rundir = getenv ("BGN_RUNDIR");
    char uri[PATH_MAX + 16];
    uint32_t r;

    if (!rundir) {
        fprintf (stderr, "bgn: --rank needs BGN_RUNDIR (run under 'bgn "
                 "start'); with a system instance use the command's own "
                 "--rank\n");
        return -1;
    }
    if (!getenv ("BGN_URI")) {
        snprintf (uri, sizeof (uri), "ipc://%s/0/local", rundir);
        setenv ("BGN_URI", uri, 1);
    }
    r = cmd_rank_arg ("", "--rank", rank, NULL);
    snprintf (uri, sizeof (uri), "ipc://%s/%u/local", rundir, (unsigned)r);
    setenv ("BGN_URI", uri, 1);
    snprintf (uri, sizeof (uri), "%u", (unsigned)r);
    setenv (CMD_RANK_ENV, uri, 1);
    return 0;
}

/* --broker-timeout T: passed to libclient (client.h) as
 * $BGN_BROKER_TIMEOUT, in seconds. */
static int set_broker_timeout (const char *arg)
{
    char buf[64];
    double t;

    if (fsd_parse_duration (arg, &t) < 0 || t > BGN_MAX_BROKER_TIMEOUT) {
        fprintf (stderr, "bgn: --broker-timeout: '%s' is not a duration "
                 "(e.g. 500ms, 3s, at most 1h; 0 for no heartbeats)\n", arg);
        return -1;
    }
    snprintf (buf, sizeof (buf), "%.3f", t);
    setenv ("BGN_BROKER_TIMEOUT", buf, 1);
    return 0;
}

int main (int argc, char **argv)
{
    static const struct option longopts[] = {
        { "uri", required_argument, NULL, 'u' },
        { "rank", required_argument, NULL, 'r' },
        { "broker-timeout", required_argument, NULL, 'B' },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    int c;

    opterr = 0;
    /* '+': stop at the first non-option, the command name. */
    while ((c = getopt_long (argc, argv, "+:r:hV", longopts, NULL)) != -1) {
        switch (c) {
        case 'u': setenv ("BGN_URI", optarg, 1); break;
        case 'r':
            if (set_rank_uri (optarg) < 0)
                return 1;
            break;
        case 'B':
            if (set_broker_timeout (optarg) < 0)
                return 1;
            break;
        case 'h': usage (stdout); return 0;
        case 'V': printf ("bgn %s\n", PACKAGE_VERSION); return 0;
        default:
            fprintf (stderr, "bgn: %s option '%s'; see 'bgn --help'\n",
                     c == ':' ? "a value is needed for" : "unknown",
                     argv[optind - 1]);
            return 1;
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
