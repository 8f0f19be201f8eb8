/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* broker.c: bgn-broker, the daemon that hosts the overlay.
 *
 * What lives here: start-up and shutdown (options, config, bootstrap,
 * rundir, signals, the instance id, module loading and the barriers
 * around it).  Message routing and the local connector are in
 * dispatch.c, the api table modules get in api.c, the built-in services
 * in builtins.c.  Everything runs in one thread on a czmq reactor.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uuid/uuid.h>
#include <czmq.h>

#include "src/common/libconf/conf.h"
#include "src/common/libutil/forksrv.h"
#include "src/common/libutil/tmpbase.h"
#include "src/common/libutil/fsd.h"
#include "src/common/libutil/loglevel.h"
#include "src/common/libutil/ratelimit.h"
#include "access.h"
#include "broker.h"
#include "notify.h"
#include "src/common/libutil/monotime.h"

#define EXIT_CONFIG  1   /* bad usage or configuration: do not restart */
#define EXIT_FAILURE_RUNTIME 2

/* ---- start-up and shutdown ------------------------------------------- */

static void usage (FILE *f)
{
    fprintf (f,
"Usage: bgn-broker [OPTIONS]\n"
"Run one bgn broker.  Rank and size come from a PMI-1 launcher (PMI_FD),\n"
"a PMIx launcher (PMIX_NAMESPACE, PMIX_RANK), the config's [bootstrap]\n"
"host list, or the broker runs alone as rank 0 of 1.\n"
"\n"
"  -c, --config=PATH        TOML config file, or a directory of *.toml\n"
"  -o, --setattr=KEY=VALUE  override a config key (repeatable),\n"
"                           e.g. -o overlay.peer_timeout=2s\n"
"      --rundir=DIR         directory for the local socket (mode 0700);\n"
"                           %%r in DIR stands for the rank\n"
"      --module-path=PATH   colon-separated module directories\n"
"      --overlay=NAME       overlay module to load (default overlay-bgn;\n"
"                           \"none\" runs without one, size 1 only)\n"
"      --module=NAME|PATH   load another module after the overlay\n"
"                           (repeatable)\n"
"      --boot=METHOD        auto (default), pmix, pmi1, static or single\n"
"                           (same as -o bootstrap.method=METHOD)\n"
"  -v, --verbose            more log output (repeatable)\n"
"  -q, --quiet              errors only\n"
"  -h, --help               this text\n"
"  -V, --version            print the version\n"
"\n"
"Exit status: 0 after an orderly shutdown, 1 for bad usage or config,\n"
"2 for a runtime failure, 3 when cut off from rank 0 (partition).\n"
"See bgn-broker(8).\n");
}

struct options {
    const char *config;
    zlistx_t *overrides;
    const char *rundir;
    const char *module_path;
    const char *overlay;
    zlistx_t *modules;           /* --module arguments */
    char boot[64];               /* "bootstrap.method=M" from --boot */
    int verbose;
    int quiet;
};

static int parse_options (int argc, char **argv, struct options *o)
{
    static const struct option longopts[] = {
        { "config", required_argument, NULL, 'c' },
        { "setattr", required_argument, NULL, 'o' },
        { "rundir", required_argument, NULL, 'R' },
        { "module-path", required_argument, NULL, 'M' },
        { "overlay", required_argument, NULL, 'O' },
        { "module", required_argument, NULL, 'L' },
        { "boot", required_argument, NULL, 'B' },
        { "verbose", no_argument, NULL, 'v' },
        { "quiet", no_argument, NULL, 'q' },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    int c;

    while ((c = getopt_long (argc, argv, "c:o:vqhV", longopts, NULL)) != -1) {
        switch (c) {
        case 'c': o->config = optarg; break;
        case 'o': zlistx_add_end (o->overrides, optarg); break;
        case 'R': o->rundir = optarg; break;
        case 'M': o->module_path = optarg; break;
        case 'O': o->overlay = optarg; break;
        case 'L': zlistx_add_end (o->modules, optarg); break;
        case 'B':
            if (snprintf (o->boot, sizeof (o->boot), "bootstrap.method=%s",
                          optarg) >= (int)sizeof (o->boot)) {
                fprintf (stderr, "bgn-broker: --boot=%s: unknown method\n",
                         optarg);
                return -1;
            }
            break;
        case 'v': o->verbose++; break;
        case 'q': o->quiet = 1; break;
        case 'h': usage (stdout); exit (0);
        case 'V': printf ("bgn-broker %s\n", PACKAGE_VERSION); exit (0);
        default: usage (stderr); return -1;
        }
    }
    if (optind < argc) {
        fprintf (stderr, "bgn-broker: unexpected argument '%s'\n", argv[optind]);
        usage (stderr);
        return -1;
    }
    return 0;
}

static int load_config (struct bgn_broker *b, struct options *o)
{
    char err[512] = "";

    if (!(b->conf = conf_create ()))
        return -1;
    if (o->config && conf_load (b->conf, o->config, err, sizeof (err)) < 0)
        goto error;
    for (const char *kv = zlistx_first (o->overrides); kv;
         kv = zlistx_next (o->overrides)) {
        if (conf_set (b->conf, kv, err, sizeof (err)) < 0)
            goto error;
    }
    if (*o->boot && conf_set (b->conf, o->boot, err, sizeof (err)) < 0)
        goto error;
    if (conf_finalize (b->conf, err, sizeof (err)) < 0)
        goto error;
    return 0;
error:
    fprintf (stderr, "bgn-broker: %s\n", err);
    return -1;
}

/* Directory of this executable, to find modules in the build tree. */
static int exe_dir (char *buf, size_t len)
{
    ssize_t n = readlink ("/proc/self/exe", buf, len - 1);
    char *slash;
    if (n < 0)
        return -1;
    buf[n] = '\0';
    if ((slash = strrchr (buf, '/')))
        *slash = '\0';
    return 0;
}

static int in_build_tree (void)
{
    char dir[PATH_MAX];
    return exe_dir (dir, sizeof (dir)) == 0
           && !strcmp (dir, ABS_TOP_BUILDDIR "/src/broker");
}

static char *default_module_path (void)
{
    return strdup (in_build_tree ()
                   ? ABS_TOP_BUILDDIR "/src/modules/overlay/.libs"
                   : MODULEDIR);
}

/* Where the bootstrap plugins (boot-pmix.so) are. */
static const char *plugin_dir (void)
{
    return in_build_tree () ? ABS_TOP_BUILDDIR "/src/broker/.libs"
                            : PKGLIBDIR;
}

/* broker.guest_group: members of this group may connect as guests
 * (access.h): the run directory becomes 0710 and the socket 0660, both
 * of that group.  -1 if the group does not exist. */
static int guest_group (struct bgn_broker *b)
{
    const char *name = NULL;
    struct group *gr;

    b->guest_gid = -1;
    if (conf_get_string (b->conf, "broker.guest_group", &name) < 0 || !*name)
        return 0;
    if (!(gr = getgrnam (name))) {
        logger_log (b->log, LOG_ERR, "broker.guest_group: no group '%s'",
                    name);
        return -1;
    }
    b->guest_gid = (long)gr->gr_gid;
    return 0;
}

/* broker.admin_ranks: whose requests keep the owner role when they
 * reach this broker over the overlay (access.h).  The config check has
 * validated the idset already; a failure here is ENOMEM. */
static int admin_ranks (struct bgn_broker *b)
{
    const char *ranks = "0";

    conf_get_string (b->conf, "broker.admin_ranks", &ranks);
    if (access_set_admins (b->access, ranks) < 0) {
        logger_log (b->log, LOG_ERR, "broker.admin_ranks: %s: %s", ranks,
                    strerror (errno));
        return -1;
    }
    return 0;
}

/* Let the guest group into the run directory (and no one else). */
static int open_rundir (struct bgn_broker *b)
{
    if (b->guest_gid < 0)
        return 0;
    if (chown (b->rundir, (uid_t)-1, (gid_t)b->guest_gid) < 0
        || chmod (b->rundir, 0710) < 0) {
        logger_log (b->log, LOG_ERR, "rundir %s: cannot give group %ld "
                    "access: %s", b->rundir, b->guest_gid, strerror (errno));
        return -1;
    }
    return 0;
}

static int setup_rundir (struct bgn_broker *b, const char *dir)
{
    const char *cfg = NULL;
    struct stat st;

    if (!dir && conf_get_string (b->conf, "broker.rundir", &cfg) == 0 && *cfg)
        dir = cfg;
    if (dir) {
        /* "%r" stands for the rank, so one command line serves every
         * broker of a launcher (mpiexec ... --rundir=/tmp/bgn-%r). */
        const char *pct = strstr (dir, "%r");
        int n = pct ? snprintf (b->rundir, sizeof (b->rundir), "%.*s%u%s",
                                (int)(pct - dir), dir, (unsigned)b->rank,
                                pct + 2)
                    : snprintf (b->rundir, sizeof (b->rundir), "%s", dir);
        if (n >= (int)sizeof (b->rundir))
            goto toolong;
        if (mkdir (b->rundir, 0700) == 0)
            b->rundir_created = 1;
        else if (errno != EEXIST) {
            logger_log (b->log, LOG_ERR, "rundir %s: %s", b->rundir,
                        strerror (errno));
            return -1;
        }
        /* lstat: a symlink planted at the path is refused, not followed
         * to a directory someone else chose. */
        if (lstat (b->rundir, &st) < 0 || !S_ISDIR (st.st_mode)
            || st.st_uid != getuid ()
            || (st.st_mode & 077 & ~(b->guest_gid >= 0 ? 010 : 0))) {
            logger_log (b->log, LOG_ERR,
                        "rundir %s must be a directory (not a symlink) "
                        "owned by uid %d with mode 0700", b->rundir,
                        (int)getuid ());
            return -1;
        }
    }
    else {
        snprintf (b->rundir, sizeof (b->rundir), "%s/bgn-broker-XXXXXX",
                  tmpbase ());
        if (!mkdtemp (b->rundir)) {
            logger_log (b->log, LOG_ERR, "mkdtemp %s: %s", b->rundir,
                        strerror (errno));
            return -1;
        }
        b->rundir_created = 1;
        b->rundir_temporary = 1;
    }
    if (open_rundir (b) < 0)
        return -1;
    if (snprintf (b->local_path, sizeof (b->local_path), "%s/local",
                  b->rundir) >= 100)
        goto toolong;
    snprintf (b->local_uri, sizeof (b->local_uri), "ipc://%s", b->local_path);
    return 0;
toolong:
    logger_log (b->log, LOG_ERR,
                "rundir path %s is too long for a unix socket (max ~100)",
                dir ? dir : b->rundir);
    return -1;
}

static int signal_readable (zloop_t *loop, zmq_pollitem_t *item, void *arg)
{
    struct bgn_broker *b = arg;
    struct signalfd_siginfo si;

    if (read (b->sigfd, &si, sizeof (si)) == sizeof (si))
        logger_log (b->log, LOG_INFO, "signal %d: shutting down",
                    (int)si.ssi_signo);
    broker_stop (b, 0);
    return -1;
}

static int setup_signals (struct bgn_broker *b)
{
    sigset_t set;
    zmq_pollitem_t item = { 0 };

    signal (SIGPIPE, SIG_IGN);
    sigemptyset (&set);
    sigaddset (&set, SIGTERM);
    sigaddset (&set, SIGINT);
    sigaddset (&set, SIGHUP);
    if (sigprocmask (SIG_BLOCK, &set, NULL) < 0
        || (b->sigfd = signalfd (-1, &set, SFD_CLOEXEC | SFD_NONBLOCK)) < 0)
        return -1;
    item.fd = b->sigfd;
    item.events = ZMQ_POLLIN;
    return zloop_poller (b->loop, &item, signal_readable, b);
}

static int setup_instance_id (struct bgn_broker *b)
{
    char err[256] = "";

    /* A static instance's id follows from its config: every broker,
     * rank 0 included, computes the same one. */
    if (!strcmp (boot_method (b->boot), "static")) {
        if (boot_get (b->boot, 0, "instance", b->instance_id,
                      sizeof (b->instance_id), err, sizeof (err)) < 0)
            goto error;
        return 0;
    }
    if (b->rank == 0) {
        uuid_t u;
        /* A restarted rank 0 (bgn fault restart) finds the instance id
         * already published: keep it, or no peer would let it back in --
         * and publish it again, since its new bundle replaces the old
         * one (a broker restarted after it reads it there). */
        if (boot_get (b->boot, 0, "instance", b->instance_id,
                      sizeof (b->instance_id), err, sizeof (err)) != 0) {
            uuid_generate (u);
            uuid_unparse_lower (u, b->instance_id);
        }
        if (boot_put (b->boot, "instance", b->instance_id, err,
                      sizeof (err)) < 0)
            goto error;
    }
    return 0;
error:
    logger_log (b->log, LOG_ERR, "bootstrap: %s", err);
    return -1;
}

/* Where modules are searched: --module-path, broker.module_path,
 * $BGN_MODULE_PATH, else the build tree or the installed directory.
 * The caller frees the result. */
static char *module_search_path (struct bgn_broker *b, struct options *o)
{
    const char *cfgpath = NULL;

    if (o->module_path)
        return strdup (o->module_path);
    if (conf_get_string (b->conf, "broker.module_path", &cfgpath) == 0
        && *cfgpath)
        return strdup (cfgpath);
    if (getenv ("BGN_MODULE_PATH"))
        return strdup (getenv ("BGN_MODULE_PATH"));
    return default_module_path ();
}

static int load_overlay (struct bgn_broker *b, struct options *o)
{
    char err[512] = "";
    char *path = NULL;
    const char *name = o->overlay ? o->overlay : "overlay-bgn";

    if (!strcmp (name, "none")) {
        if (b->size > 1) {
            logger_log (b->log, LOG_ERR,
                        "--overlay=none needs size 1, not %u",
                        (unsigned)b->size);
            return -1;
        }
        return 0;
    }
    path = module_search_path (b, o);
    b->overlay_mod = module_open (name, path, err, sizeof (err));
    free (path);
    if (!b->overlay_mod) {
        logger_log (b->log, LOG_ERR, "%s", err);
        return -1;
    }
    if (module_load (b->overlay_mod, &broker_api, b) < 0) {
        logger_log (b->log, LOG_ERR, "module %s: load failed: %s", name,
                    strerror (errno));
        return -1;
    }
    logger_log (b->log, LOG_DEBUG, "loaded %s", module_path (b->overlay_mod));
    return 0;
}

/* broker.modules and --module: load each after the overlay. */
static int load_modules (struct bgn_broker *b, struct options *o)
{
    char err[512] = "";
    char *path;
    int rc = 0;

    json_t *cfg = json_object_get (json_object_get (b->conf, "broker"),
                                   "modules");
    size_t i = json_array_size (cfg);

    if (!(b->modules = modlist_create ()))
        return -1;
    /* broker.modules first, then --module, each in its given order. */
    while (i-- > 0)
        zlistx_add_start (o->modules,
                          (void *)json_string_value (json_array_get (cfg, i)));
    if (zlistx_size (o->modules) == 0)
        return 0;
    if (!(path = module_search_path (b, o)))
        return -1;
    for (const char *name = zlistx_first (o->modules); name;
         name = zlistx_next (o->modules)) {
        if (modlist_add (b->modules, name, path, &broker_api, b, err,
                         sizeof (err)) < 0) {
            logger_log (b->log, LOG_ERR, "%s", err);
            rc = -1;
            break;
        }
        logger_log (b->log, LOG_DEBUG, "loaded module %s", name);
    }
    free (path);
    return rc;
}

static int bootstrap_finish (struct bgn_broker *b)
{
    char err[256] = "";

    if (boot_barrier (b->boot, err, sizeof (err)) < 0)
        goto error;
    if (b->rank != 0 && boot_get (b->boot, 0, "instance", b->instance_id,
                                  sizeof (b->instance_id), err,
                                  sizeof (err)) < 0)
        goto error;
    if (b->overlay_mod && module_start (b->overlay_mod) < 0) {
        logger_log (b->log, LOG_ERR, "overlay start failed: %s",
                    strerror (errno));
        return -1;
    }
    if (modlist_start (b->modules, err, sizeof (err)) < 0) {
        logger_log (b->log, LOG_ERR, "%s", err);
        return -1;
    }
    /* Second barrier: every peer now admits connections (CURVE keys are
     * authorized), so connecting cannot race a peer's ZAP set-up. */
    if (boot_barrier (b->boot, err, sizeof (err)) < 0)
        goto error;
    if (b->overlay_mod && module_connect (b->overlay_mod) < 0) {
        logger_log (b->log, LOG_ERR, "overlay connect failed: %s",
                    strerror (errno));
        return -1;
    }
    if (modlist_connect (b->modules, err, sizeof (err)) < 0) {
        logger_log (b->log, LOG_ERR, "%s", err);
        return -1;
    }
    if (boot_finalize (b->boot, err, sizeof (err)) < 0)
        goto error;
    return 0;
error:
    logger_log (b->log, LOG_ERR, "bootstrap: %s", err);
    return -1;
}

/* The health log and systemd readiness: from here on, see notify.h for
 * what "ready" means. */
static int start_notify (struct bgn_broker *b)
{
    double timeout = 30.;

    conf_get_duration (b->conf, "broker.ready_timeout", &timeout);
    if (!(b->notify = notify_create (b, timeout))) {
        logger_log (b->log, LOG_ERR, "sd_notify: %s", strerror (errno));
        return -1;
    }
    return 0;
}

/* A temporary run directory (mkdtemp, no --rundir) dies with its broker,
 * whatever the modules left there (the overlay's key pair).  A given run
 * directory keeps its files, and is removed only if empty: a broker
 * restarted on it reuses its key pair, so its peers still trust it. */
static void remove_own_rundir (struct bgn_broker *b)
{
    DIR *d = opendir (b->rundir);
    struct dirent *e;

    if (d) {
        while ((e = readdir (d)))
            if (e->d_type == DT_REG || e->d_type == DT_SOCK)
                unlinkat (dirfd (d), e->d_name, 0);
        closedir (d);
    }
    rmdir (b->rundir);
}

static void broker_cleanup (struct bgn_broker *b)
{
    notify_destroy (&b->notify);
    /* Extra modules may use the overlay: they go first. */
    modlist_destroy (&b->modules);
    module_close (&b->overlay_mod);
    if (b->local) {
        zmq_close (b->local);
        unlink (b->local_path);
    }
    clientq_destroy (&b->clientq);
    if (b->rundir_temporary)
        remove_own_rundir (b);
    else if (b->rundir_created)
        rmdir (b->rundir);
    if (b->sigfd > 0)
        close (b->sigfd);
    api_fini (b);
    zloop_destroy (&b->loop);
    zhashx_destroy (&b->subscriptions);
    service_registry_destroy (&b->services);
    access_destroy (&b->access);
    ratelimit_destroy (&b->deny_rl);
    ratelimit_destroy (&b->client_rl);
    boot_destroy (&b->boot);
    json_decref (b->conf);
    logger_destroy (&b->log);
}

/* The logger: stderr gets broker.log_level (moved by -v and -q), the
 * ring for 'bgn dmesg' keeps broker.log_ring_size lines (and at most
 * broker.log_ring_bytes of heap) at broker.log_ring_level and below,
 * whatever stderr shows.
 */
static struct logger *create_logger (json_t *conf, const struct options *o)
{
    long long level, size, bytes;
    const char *ring_level;
    struct logger *l;

    if (conf_get_int (conf, "broker.log_level", &level) < 0)
        level = LOG_NOTICE;
    level += o->verbose;
    if (o->quiet)
        level = LOG_ERR;
    if (!(l = logger_create ("bgn-broker", level > LOG_DEBUG ? LOG_DEBUG
                                                             : (int)level)))
        return NULL;
    if (conf_get_string (conf, "broker.log_ring_level", &ring_level) < 0)
        ring_level = "debug";
    if (conf_get_int (conf, "broker.log_ring_size", &size) < 0)
        size = LOGGER_RING_SIZE;
    if (logger_set_ring (l, loglevel_parse (ring_level), (size_t)size) < 0)
        logger_destroy (&l);
    if (l && conf_get_int (conf, "broker.log_ring_bytes", &bytes) == 0)
        logger_set_ring_bytes (l, (size_t)bytes);
    return l;
}

static int broker_main (int argc, char **argv)
{
    struct bgn_broker broker = { .sigfd = -1 }, *b = &broker;
    struct options opts = { 0 };
    char err[512] = "";
    double boot_timeout = 60.;
    int rc = EXIT_FAILURE_RUNTIME;

    b->start_time = monotime_now ();
    opts.overrides = zlistx_new ();
    opts.modules = zlistx_new ();
    if (!opts.overrides || !opts.modules
        || parse_options (argc, argv, &opts) < 0
        || load_config (b, &opts) < 0) {
        zlistx_destroy (&opts.overrides);
        zlistx_destroy (&opts.modules);
        json_decref (b->conf);
        return EXIT_CONFIG;
    }
    b->log = create_logger (b->conf, &opts);
    zsys_handler_set (NULL);
    zsys_set_logstream (stderr);
    zsys_init ();
    b->services = service_registry_create ();
    b->subscriptions = zhashx_new ();
    b->loop = zloop_new ();
    b->access = access_create ((uint32_t)geteuid ());
    b->deny_rl = ratelimit_create (5, 60.);
    b->client_rl = ratelimit_create (5, 60.);
    if (!b->log || !b->services || !b->subscriptions || !b->loop
        || !b->access || !b->deny_rl || !b->client_rl || api_init (b) < 0)
        goto done;
    zhashx_set_destructor (b->subscriptions,
                           (zhashx_destructor_fn *)zlistx_destroy);
    if (conf_get_int (b->conf, "broker.client_queue_bytes",
                      &b->client_queue_bytes) < 0)
        b->client_queue_bytes = 8ll << 20;
    if (gethostname (b->hostname, sizeof (b->hostname) - 1) < 0)
        snprintf (b->hostname, sizeof (b->hostname), "localhost");
    if (setup_signals (b) < 0) {
        logger_log (b->log, LOG_ERR, "signals: %s", strerror (errno));
        goto done;
    }
    if (!(b->boot = boot_create (b->conf, opts.config, plugin_dir (),
                                 boot_timeout, err,
                                 sizeof (err)))) {
        /* EINVAL: the config is wrong; restarting will not help. */
        if (errno == EINVAL)
            rc = EXIT_CONFIG;
        logger_log (b->log, LOG_ERR, "bootstrap: %s", err);
        goto done;
    }
    b->rank = boot_rank (b->boot);
    b->size = boot_size (b->boot);
    if (boot_hostname (b->boot))
        snprintf (b->hostname, sizeof (b->hostname), "%s",
                  boot_hostname (b->boot));
    logger_set_rank (b->log, b->rank);
    if (guest_group (b) < 0 || admin_ranks (b) < 0) {
        rc = EXIT_CONFIG;
        goto done;
    }
    if (setup_rundir (b, opts.rundir) < 0 || dispatch_setup_local (b) < 0
        || builtins_register (b) < 0 || setup_instance_id (b) < 0
        || load_overlay (b, &opts) < 0 || load_modules (b, &opts) < 0
        || bootstrap_finish (b) < 0)
        goto done;
    logger_log (b->log, LOG_INFO, "up: rank %u of %u, %s bootstrap, %s",
                (unsigned)b->rank, (unsigned)b->size, boot_method (b->boot),
                b->local_uri);
    if (start_notify (b) < 0)
        goto done;
    zloop_start (b->loop);
    rc = b->exit_code;
    /* No new client from now on, and no socket file left behind should
     * the rest of the shutdown be cut short (a launcher's SIGKILL after
     * its SIGTERM). */
    unlink (b->local_path);
    logger_log (b->log, rc ? LOG_ERR : LOG_INFO, "shutdown, exit %d", rc);
done:
    zlistx_destroy (&opts.overrides);
    zlistx_destroy (&opts.modules);
    builtins_destroy (b);
    broker_cleanup (b);
    return rc;
}

/* ---- fork server (bgn start) ------------------------------------------ */

struct fork_args {
    int argc;
    char **argv;
};

/* A child of the fork server becomes the broker its SPAWN asked for:
 * the PMI socket (fds[0]) and the log pipe for stderr (fds[1]) are what
 * an exec'd broker would have inherited, and it dies with the server as
 * it would have died with bgn start. */
static int fork_child (void *arg, const struct forksrv_msg *req)
{
    struct fork_args *fa = arg;
    char fd[16], rank[16], size[16];

    prctl (PR_SET_PDEATHSIG, SIGKILL);
    if (req->nfds < 1)
        return EXIT_CONFIG;
    if (req->nfds >= 2 && req->fds[1] >= 0) {
        if (dup2 (req->fds[1], STDERR_FILENO) < 0)
            return EXIT_FAILURE_RUNTIME;
        close (req->fds[1]);
    }
    snprintf (fd, sizeof (fd), "%d", req->fds[0]);
    snprintf (rank, sizeof (rank), "%d", (int)req->rank);
    snprintf (size, sizeof (size), "%d", (int)req->size);
    setenv ("PMI_FD", fd, 1);
    setenv ("PMI_RANK", rank, 1);
    setenv ("PMI_SIZE", size, 1);
    unsetenv ("BGN_URI");
    return broker_main (fa->argc, fa->argv);
}

/* The value of --NAME=VALUE or --NAME VALUE in argv, or NULL. */
static const char *long_arg (int argc, char **argv, const char *name)
{
    size_t len = strlen (name);

    for (int i = 1; i < argc; i++) {
        if (strncmp (argv[i], "--", 2) != 0
            || strncmp (argv[i] + 2, name, len) != 0)
            continue;
        if (argv[i][2 + len] == '=')
            return argv[i] + 3 + len;
        if (argv[i][2 + len] == '\0' && i + 1 < argc)
            return argv[i + 1];
    }
    return NULL;
}

/* What every broker would do for itself on the same libraries, done once
 * here and inherited by each fork: the overlay module loaded and
 * relocated (a child's dlopen of it then only counts a reference), and
 * libzmq's first-context work (its PGM transport looks a protocol up
 * through NSS, which reads nsswitch.conf and probes for NSS modules).
 * Best effort: a module not found here is found, or reported, by the
 * child.  No thread and no socket outlives this: a context with no
 * socket has no I/O thread yet, and it is ended here. */
static void fork_server_warm (int argc, char **argv)
{
    const char *name = long_arg (argc, argv, "overlay");
    const char *dirs = long_arg (argc, argv, "module-path");
    char *path = dirs ? strdup (dirs)
                      : getenv ("BGN_MODULE_PATH")
                            ? strdup (getenv ("BGN_MODULE_PATH"))
                            : default_module_path ();
    char err[512];
    void *ctx;

    if (!name)
        name = "overlay-bgn";
    /* kept open for good: the children share it */
    if (path && strcmp (name, "none") != 0)
        (void)module_open (name, path, err, sizeof (err));
    free (path);
    if ((ctx = zmq_ctx_new ()))
        zmq_ctx_term (ctx);
}

/* bgn-broker --fork-server=FD [broker options]: started once by bgn
 * start, which asks it for each broker over FD (forksrv.h); every child
 * runs with the broker options given here.  Nothing else happens in this
 * process, so forking it is safe: no threads, no sockets. */
static int fork_server (int argc, char **argv)
{
    struct fork_args fa;
    char *end;
    long fd = strtol (argv[1] + strlen ("--fork-server="), &end, 10);

    if (*end || fd < 0 || fd > INT_MAX) {
        fprintf (stderr, "bgn-broker: %s: not a file descriptor\n", argv[1]);
        return EXIT_CONFIG;
    }
    prctl (PR_SET_PDEATHSIG, SIGKILL);
    /* the children's argv: this one without --fork-server */
    argv[1] = argv[0];
    fa.argc = argc - 1;
    fa.argv = argv + 1;
    fork_server_warm (fa.argc, fa.argv);
    return forksrv_serve ((int)fd, fork_child, &fa) == 0 ? 0
                                                         : EXIT_FAILURE_RUNTIME;
}

int main (int argc, char **argv)
{
    if (argc > 1 && !strncmp (argv[1], "--fork-server=", 14))
        return fork_server (argc, argv);
    return broker_main (argc, argv);
}
