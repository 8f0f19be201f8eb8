/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* cmd_start.c: "bgn start": an instance of N brokers on this host.
 *
 * bgn start is the brokers' PMI-1 server, their parent and their reaper
 * (the mechanism is in instance.c).  It starts the brokers, waits until
 * all have bootstrapped and rank 0 reports the overlay healthy, runs
 * COMMAND with BGN_URI and BGN_RUNDIR set, and then shuts every broker
 * down.  'bgn fault' requests come in through the control FIFO
 * (fault_ctl.c).
 *
 * A broker that fails during start-up ends the instance with an error
 * naming its rank; after start-up a broker's exit is reported and also
 * ends the instance, unless --keep-going (fault tests kill brokers on
 * purpose).
 *
 * The brokers' stderr comes through bgn start (brokerlog.c): whole lines
 * only, every line into broker.log in the instance directory (or
 * --log-file), and only lines at --log-stderr-level or more severe
 * (default error) on the terminal, so a fault injected into 64 brokers
 * does not print 64 warnings.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <syslog.h>

#include "src/common/libutil/loglevel.h"
#include "cmd.h"
#include "instance.h"
#include "fault_ctl.h"

static void usage (FILE *f)
{
    fprintf (f,
"Usage: bgn start [OPTIONS] [--] [COMMAND [ARGS...]]\n"
"Start an instance of N brokers on this host, wait until the overlay is\n"
"up, run COMMAND with BGN_URI (rank 0) and BGN_RUNDIR set, then shut the\n"
"brokers down and exit with COMMAND's status.  Without COMMAND, run until\n"
"interrupted (SIGINT/SIGTERM).\n"
"\n"
"  -s, --size=N            number of brokers (default 1)\n"
"      --config=PATH       broker config file or directory\n"
"  -o, --setattr=KEY=VAL   config override for every broker (repeatable)\n"
"  -T, --topology=T        shorthand for -o overlay.topology=T\n"
"                          (bgn, bgn:R, kary:K, binomial)\n"
"      --wait-timeout=T    start-up deadline (default 60s; 0 = none)\n"
"  -k, --keep-going        a broker exiting after start-up is reported,\n"
"                          not fatal (for fault tests)\n"
"  -v, --verbose           brokers log more (repeatable)\n"
"      --log-stderr-level=LEVEL\n"
"                          brokers' lines at LEVEL or more severe go to the\n"
"                          terminal (default error; emergency .. debug or\n"
"                          0..7); all go to the log file\n"
"      --log-file=PATH     the brokers' log file (default broker.log in the\n"
"                          instance directory, removed at the end)\n"
"  -h, --help              this text\n"
"\n"
"Exit status: COMMAND's, or 1 if a broker failed or start-up failed.\n");
}

static pid_t run_command (struct instance *in, char **argv)
{
    char uri[PATH_MAX + 32];
    pid_t pid;

    snprintf (uri, sizeof (uri), "ipc://%s/0/local", in->dir);
    if ((pid = fork ()) < 0)
        return -1;
    if (pid == 0) {
        sigset_t none;
        sigemptyset (&none);
        sigprocmask (SIG_SETMASK, &none, NULL);
        prctl (PR_SET_PDEATHSIG, SIGTERM);
        /* This bgn comes first in PATH, so "bgn start ... bgn ping" runs
         * the same build (as flux start does). */
        const char *path = getenv ("PATH");
        char *newpath = NULL;
        if (asprintf (&newpath, "%s%s%s", cmd_exe_dir (), path ? ":" : "",
                      path ? path : "") >= 0)
            setenv ("PATH", newpath, 1);
        setenv ("BGN_URI", uri, 1);
        setenv ("BGN_RUNDIR", in->dir, 1);
        execvp (argv[0], argv);
        fprintf (stderr, "bgn start: %s: %s\n", argv[0], strerror (errno));
        _exit (127);
    }
    return pid;
}

/* Run until the command ends (or, without one, a signal), or a broker
 * fails and --keep-going was not given. */
static void run (struct instance *in, int keep_going)
{
    int exits = 0;

    for (;;) {
        int sig = instance_service_events (in, 0.5, INSTANCE_RUNNING,
                                           &exits);
        if (in->cmd_pid && in->cmd_exited)
            break;
        if (sig) {
            if (in->cmd_pid && !in->cmd_exited)
                kill (in->cmd_pid, sig);
            if (!in->cmd_pid)
                break;
        }
        if (exits > 0 && !keep_going) {
            in->failed = 1;
            if (in->cmd_pid && !in->cmd_exited) {
                instance_log ("ending the instance; stopping the command");
                kill (in->cmd_pid, SIGTERM);
            }
            else
                break;
        }
    }
}

/* The exit status: COMMAND's (128+N if killed by a signal), or 1 if a
 * broker failed. */
static int exit_status (struct instance *in)
{
    char why[128];
    int rc;

    if (!in->cmd_pid)
        return in->failed ? 1 : 0;
    if (WIFEXITED (in->cmd_status))
        rc = WEXITSTATUS (in->cmd_status);
    else {
        instance_describe_status (in->cmd_status, why, sizeof (why));
        instance_log ("command %s", why);
        rc = 128 + (WIFSIGNALED (in->cmd_status)
                        ? WTERMSIG (in->cmd_status) : 0);
    }
    /* A broker failure decides the status: the command's own is then
     * mostly a consequence of it. */
    return in->failed ? 1 : rc;
}

/* After a failure, say where the brokers' lines that were not shown
 * went. */
static void tell_hidden (struct instance *in, int kept)
{
    unsigned long n = brokerlog_hidden (in->log);

    if (!in->failed || n == 0)
        return;
    if (kept)
        instance_log ("%lu broker log line%s below the terminal level are "
                      "in %s", n, n == 1 ? "" : "s",
                      brokerlog_path (in->log));
    else
        instance_log ("%lu broker log line%s below the terminal level were "
                      "not shown (keep them with --log-file=PATH, or show "
                      "them with --log-stderr-level=debug)", n,
                      n == 1 ? "" : "s");
}

int cmd_start (int argc, char **argv)
{
    static const struct option longopts[] = {
        { "size", required_argument, NULL, 's' },
        { "config", required_argument, NULL, 'c' },
        { "setattr", required_argument, NULL, 'o' },
        { "topology", required_argument, NULL, 'T' },
        { "wait-timeout", required_argument, NULL, 'w' },
        { "keep-going", no_argument, NULL, 'k' },
        { "verbose", no_argument, NULL, 'v' },
        { "log-stderr-level", required_argument, NULL, 'L' },
        { "log-file", required_argument, NULL, 'F' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    struct instance in = { .size = 1, .sigfd = -1, .epfd = -1, .ctlfd = -1,
                           .fsfd = -1,
                           .startup_timeout = 60.,
                           .shutdown_grace = 10. };
    struct fault_ctl *fc = NULL;
    char *end, *topo_opt = NULL, logpath[PATH_MAX + 16];
    const char *logfile = NULL;
    int c, rc = 1, keep_going = 0, term_level = LOG_ERR;

    in.broker_path = cmd_find_program ("bgn-broker");
    instance_add_arg (&in, "bgn-broker");
    instance_add_arg (&in, "--rundir=");        /* filled in per rank */
    /* All brokers share this host: ipc:// is the fastest transport.  A
     * later -o overlay.bind=... from the user wins. */
    instance_add_arg (&in, "-o");
    instance_add_arg (&in, "overlay.bind=\"ipc://%R/overlay\"");
    while ((c = getopt_long (argc, argv, "+:s:o:T:kvh", longopts,
                             NULL)) != -1) {
        switch (c) {
        case 's':
            errno = 0;
            in.size = strtol (optarg, &end, 10);
            if (errno || *end || in.size < 1 || in.size > 4096) {
                fprintf (stderr, "bgn start: --size: '%s' is not a size "
                         "(1..4096)\n", optarg);
                goto done;
            }
            break;
        case 'L':
            if ((term_level = loglevel_parse (optarg)) < 0) {
                fprintf (stderr, "bgn start: --log-stderr-level: '%s' is "
                         "not a level (emergency .. debug, or 0..7)\n",
                         optarg);
                goto done;
            }
            break;
        case 'F': logfile = optarg; break;
        case 'c':
            instance_add_arg (&in, "-c");
            instance_add_arg (&in, optarg);
            break;
        case 'o':
            instance_add_arg (&in, "-o");
            instance_add_arg (&in, optarg);
            break;
        case 'T':
            free (topo_opt);
            if (asprintf (&topo_opt, "overlay.topology=%s", optarg) < 0)
                goto done;
            break;
        case 'w':
            in.startup_timeout = cmd_timeout_arg ("start", "--wait-timeout",
                                                  optarg);
            break;
        case 'k': keep_going = 1; break;
        case 'v': instance_add_arg (&in, "-v"); break;
        case 'h': usage (stdout); rc = 0; goto done;
        default: rc = cmd_bad_option ("start", argv, c); goto done;
        }
    }
    if (topo_opt) {
        instance_add_arg (&in, "-o");
        instance_add_arg (&in, topo_opt);
    }
    if (optind < argc && !strcmp (argv[optind], "--"))
        optind++;
    if (!in.broker_path || access (in.broker_path, X_OK) < 0) {
        fprintf (stderr, "bgn start: broker program %s not found\n",
                 in.broker_path ? in.broker_path : "bgn-broker");
        goto done;
    }
    if (!(in.procs = calloc (in.size, sizeof (*in.procs)))
        || instance_setup_signals (&in) < 0 || instance_make_dir (&in) < 0
        || !(fc = fault_ctl_create (&in)))
        goto done;
    snprintf (logpath, sizeof (logpath), "%s/broker.log", in.dir);
    if (!logfile)
        logfile = logpath;
    if (!(in.log = brokerlog_create (logfile, term_level))) {
        fprintf (stderr, "bgn start: %s: %s\n", logfile, strerror (errno));
        goto done;
    }
    if (instance_start (&in) < 0) {
        instance_shutdown (&in);
        in.failed = 1;
        tell_hidden (&in, logfile != logpath);
        goto done;
    }
    if (optind < argc) {
        if ((in.cmd_pid = run_command (&in, argv + optind)) < 0) {
            fprintf (stderr, "bgn start: fork: %s\n", strerror (errno));
            instance_shutdown (&in);
            goto done;
        }
    }
    else
        fprintf (stderr, "bgn start: %d broker(s) up; BGN_URI=ipc://%s/0/local "
                 "BGN_RUNDIR=%s; interrupt to stop\n", in.size, in.dir, in.dir);
    run (&in, keep_going);
    instance_shutdown (&in);
    rc = exit_status (&in);
    tell_hidden (&in, logfile != logpath);
done:
    fault_ctl_destroy (&fc);
    instance_cleanup (&in);
    free (topo_opt);
    return rc;
}
