/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* bgn-config.c: "bgn config": dump TOML as JSON, check broker configs.
 *
 * A small front end to libtoml and libconf so that users (and the test
 * suite) can see exactly what the broker would read:
 *
 *   bgn config dump FILE       parse TOML, print it as JSON
 *   bgn config dump --defaults every key with its default (the schema)
 *   bgn config check [--print] [-o K=V]... [--host NAME|--no-host] FILE|DIR
 *                              validate a broker configuration, and what
 *                              the host NAME (default this one) needs
 *
 * "check" first validates the configuration as the broker does (errors
 * "FILE:LINE:COL: message" for syntax, "FILE: key 'x.y': message" for the
 * schema).  If it has a static host list (bootstrap.hosts) it then checks
 * the host's side, as that host's broker would start: the host is in the
 * list, the shared CURVE certificate exists, its secret is mode 0600 and
 * belongs to the public half, and the bind and connect addresses are
 * well-formed (and, for this host, the bind address can be bound).
 * Every problem is one line on stderr; exit 1 if there was any.  Silent
 * on success unless --print asks for the final configuration as JSON.
 * The bgn front end runs this program for "bgn config ...".
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <czmq.h>
#include <sodium.h>
#include <jansson.h>

#include "src/common/libconf/conf.h"
#include "src/common/libconf/keys.h"
#include "src/common/libtoml/toml.h"
#include "src/common/libutil/hostlist.h"

#define PROG "bgn config"

static const char usage_text[] =
    "Usage: bgn config dump FILE\n"
    "       bgn config dump --defaults\n"
    "       bgn config check [--print] [-o KEY=VALUE]... [--host NAME|--no-host]"
    "\n                        FILE|DIR\n"
    "\n"
    "  dump    Parse the TOML file FILE and print it as JSON; --defaults\n"
    "          prints every configuration key with its default value.\n"
    "  check   Validate a broker configuration (a TOML file, or a directory\n"
    "          of *.toml files) against the schema; with a static host list\n"
    "          also check what host NAME's broker needs (in the list, the\n"
    "          certificate and its mode, the bind and connect addresses).\n"
    "          Silent on success; one line per problem, exit 1.\n"
    "\n"
    "Options for check:\n"
    "  -o, --setattr=KEY=VALUE override a key, e.g. -o overlay.ttl=4\n"
    "                          (--option is another name for it)\n"
    "      --print             print the final configuration as JSON\n"
    "      --host=NAME         check for host NAME (default: this host)\n"
    "      --no-host           check the schema only, for no host\n"
    "  -h, --help              show this help\n";

static void usage (FILE *f)
{
    fputs (usage_text, f);
}

static int usage_error (const char *fmt, const char *arg)
{
    fprintf (stderr, PROG ": ");
    fprintf (stderr, fmt, arg);
    fprintf (stderr, "; see 'bgn config --help'\n");
    return 1;
}

static int print_json (json_t *o)
{
    char *s = json_dumps (o, JSON_INDENT (2) | JSON_SORT_KEYS);
    if (!s) {
        fprintf (stderr, PROG ": cannot encode JSON\n");
        return 1;
    }
    printf ("%s\n", s);
    free (s);
    if (fflush (stdout) != 0 || ferror (stdout)) {
        fprintf (stderr, PROG ": write error: %s\n", strerror (errno));
        return 1;
    }
    return 0;
}

static int dump_defaults (void)
{
    char err[512];
    json_t *conf = conf_create ();
    int rc = 1;

    if (conf && conf_finalize (conf, err, sizeof (err)) == 0)
        rc = print_json (conf);
    else
        fprintf (stderr, PROG ": %s\n", conf ? err : "out of memory");
    json_decref (conf);
    return rc;
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
    if (argc == 2 && !strcmp (argv[1], "--defaults"))
        return dump_defaults ();
    if (argc != 2)
        return usage_error ("dump: give one FILE (or --defaults)%s", "");
    if (argv[1][0] == '-')
        return usage_error ("dump: unknown option '%s'", argv[1]);
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

/* ---- the host's side ------------------------------------------------- */

struct host_check {
    json_t *conf;
    const char *confname;
    const char *host;           /* as given or gethostname() */
    int is_self;                /* the host this runs on */
    int problems;
    int *first;                 /* first[i]: the first rank of entry i of
                                   bootstrap.hosts; first[n]: the count */
    size_t nentries;
};

static void problem (struct host_check *hc, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));
static void problem (struct host_check *hc, const char *fmt, ...)
{
    va_list ap;

    fprintf (stderr, "%s: ", hc->confname);
    va_start (ap, fmt);
    vfprintf (stderr, fmt, ap);
    va_end (ap);
    fputc ('\n', stderr);
    hc->problems++;
}

/* The rank of hc->host in the list (exact, else a fully qualified name's
 * first label, as the broker matches), or -1. */
static int find_host (const hostlist_t *hl, const char *host)
{
    char shortname[256];
    int r;

    if ((r = hostlist_find (hl, host)) >= 0)
        return r;
    snprintf (shortname, sizeof (shortname), "%s", host);
    if (strchr (shortname, '.')) {
        *strchr (shortname, '.') = '\0';
        return hostlist_find (hl, shortname);
    }
    return -1;
}

static json_t *hosts_array (json_t *conf)
{
    return json_object_get (json_object_get (conf, "bootstrap"), "hosts");
}

/* Where each entry of bootstrap.hosts starts, decoded once: a host list
 * of 200,000 names must not be decoded again for every rank.  -1 on
 * ENOMEM. */
static int entries_index (struct host_check *hc)
{
    json_t *hosts = hosts_array (hc->conf), *e;
    size_t i;
    int first = 0;

    hc->nentries = json_array_size (hosts);
    if (!(hc->first = calloc (hc->nentries + 1, sizeof (*hc->first))))
        return -1;
    json_array_foreach (hosts, i, e) {
        hostlist_t *one = hostlist_decode (json_string_value
                                           (json_object_get (e, "host")),
                                           NULL, 0);
        hc->first[i] = first;
        first += hostlist_count (one);
        hostlist_destroy (&one);
    }
    hc->first[hc->nentries] = first;
    return 0;
}

/* The entry of bootstrap.hosts that rank r comes from (binary search on
 * the index). */
static json_t *entry_of_rank (const struct host_check *hc, int r)
{
    size_t lo = 0, hi = hc->nentries;

    if (!hc->first || r < 0 || r >= hc->first[hc->nentries])
        return NULL;
    while (hi - lo > 1) {   /* first[lo] <= r < first[hi] */
        size_t mid = lo + (hi - lo) / 2;
        if (hc->first[mid] <= r)
            lo = mid;
        else
            hi = mid;
    }
    return json_array_get (hosts_array (hc->conf), lo);
}

/* One pass with a hash of the names seen (a search per rank would be
 * quadratic). */
static void check_duplicates (struct host_check *hc, const hostlist_t *hl)
{
    zhashx_t *seen = zhashx_new ();

    if (!seen) {
        problem (hc, "out of memory checking bootstrap.hosts");
        return;
    }
    for (int r = 0; r < hostlist_count (hl); r++) {
        if (zhashx_insert (seen, hostlist_nth (hl, r), (void *)1) < 0) {
            problem (hc, "host '%s' appears more than once in "
                     "bootstrap.hosts (its second rank could never start)",
                     hostlist_nth (hl, r));
            break;
        }
    }
    zhashx_destroy (&seen);
}

/* Per-host keys (bootstrap.curve_keys, libconf/keys.h): every listed
 * host's public key, and this host's secret.  1 if they are in use. */
static int check_keys (struct host_check *hc)
{
    const char *dir = "";
    char err[1024];

    conf_get_string (hc->conf, "bootstrap.curve_keys", &dir);
    if (!*dir)
        return 0;
    if (conf_check_keys (hc->conf, hc->host, err, sizeof (err)) < 0)
        problem (hc, "%s", err);
    return 1;
}

static void check_cert (struct host_check *hc)
{
    const char *path = "";
    char secret[4096], derived[41];
    struct stat st;
    zconfig_t *pub = NULL;
    zcert_t *cert = NULL;
    const char *pubkey;
    int curve = 1;

    conf_get_bool (hc->conf, "overlay.curve", &curve);
    conf_get_string (hc->conf, "bootstrap.curve_cert", &path);
    if (!curve)
        return;
    if (check_keys (hc))   /* per-host keys instead */
        return;
    if (!*path) {
        problem (hc, "bootstrap.curve_cert is not set: a static bootstrap "
                 "with overlay.curve = true needs the shared certificate "
                 "(make one with: bgn keygen PATH)");
        return;
    }
    snprintf (secret, sizeof (secret), "%s_secret", path);
    if (stat (path, &st) < 0) {
        problem (hc, "certificate %s: %s (make it with: bgn keygen %s)", path,
                 strerror (errno), path);
        return;
    }
    if (stat (secret, &st) < 0) {
        problem (hc, "certificate secret %s: %s (copy it with %s from where "
                 "'bgn keygen' made them)", secret, strerror (errno), path);
        return;
    }
    if (!S_ISREG (st.st_mode))
        problem (hc, "certificate secret %s is not a regular file", secret);
    else if ((st.st_mode & 0777) != 0600)
        problem (hc, "certificate secret %s has mode %04o, not 0600 (fix: "
                 "chmod 600 %s)", secret, (unsigned)(st.st_mode & 07777),
                 secret);
    if (!(pub = zconfig_load (path))
        || !(pubkey = zconfig_get (pub, "/curve/public-key", NULL))
        || strlen (pubkey) != 40)
        problem (hc, "certificate %s holds no public key", path);
    else if (!(cert = zcert_load (path))
             || zmq_curve_public (derived, zcert_secret_txt (cert)) < 0)
        problem (hc, "certificate secret %s holds no usable secret key",
                 secret);
    else if (strcmp (derived, pubkey) != 0)
        problem (hc, "certificate %s and %s do not belong together: the "
                 "public key is not the secret key's (copy both files from "
                 "where 'bgn keygen' made them)", path, secret);
    zconfig_destroy (&pub);
    zcert_destroy (&cert);
}

/* bootstrap.event_key (rank 0's public signing key) and its secret
 * (bootstrap.event_key_secret), which belongs on rank 0's host only:
 * there it must be a regular file of mode 0600 holding the secret of
 * that public key; elsewhere it must not be there at all.  The host
 * checked (this one, or --host) is taken to be where the check runs. */
static void check_event_secret (struct host_check *hc, int rank)
{
    const char *want = "", *path = "";
    unsigned char seed[crypto_sign_SEEDBYTES], pk[crypto_sign_PUBLICKEYBYTES],
        sk[crypto_sign_SECRETKEYBYTES];
    char text[2 * crypto_sign_SEEDBYTES + 2] = "", pkhex[2 * sizeof (pk) + 1];
    struct stat st;
    size_t n = 0;
    FILE *f;

    conf_get_string (hc->conf, "bootstrap.event_key", &want);
    conf_get_string (hc->conf, "bootstrap.event_key_secret", &path);
    if (!*want && *path) {
        problem (hc, "bootstrap.event_key_secret is set but not "
                 "bootstrap.event_key (every broker needs the public key)");
        return;
    }
    if (!*want || rank < 0)
        return;
    if (rank != 0) {
        if (*path && stat (path, &st) == 0)
            problem (hc, "%s (bootstrap.event_key_secret) is on this host, "
                     "which is not rank 0's: the secret belongs on rank 0's "
                     "host only", path);
        return;
    }
    if (!*path) {
        problem (hc, "bootstrap.event_key is set: this host (rank 0) needs "
                 "its secret, bootstrap.event_key_secret (make the pair "
                 "with: bgn keygen --event-key PATH)");
        return;
    }
    if (stat (path, &st) < 0) {
        problem (hc, "event key secret %s: %s", path, strerror (errno));
        return;
    }
    if (!S_ISREG (st.st_mode)) {
        problem (hc, "event key secret %s is not a regular file", path);
        return;
    }
    if ((st.st_mode & 0777) != 0600)
        problem (hc, "event key secret %s has mode %04o, not 0600 (fix: "
                 "chmod 600 %s)", path, (unsigned)(st.st_mode & 07777), path);
    if (sodium_init () < 0 || !(f = fopen (path, "r"))) {
        problem (hc, "event key secret %s: cannot read it", path);
        return;
    }
    if (!fgets (text, sizeof (text), f)
        || sodium_hex2bin (seed, sizeof (seed), text, strlen (text), "\n",
                           &n, NULL) != 0
        || n != sizeof (seed))
        problem (hc, "event key secret %s holds no key (64 hex digits, as "
                 "'bgn keygen --event-key' writes it)", path);
    else {
        crypto_sign_seed_keypair (pk, sk, seed);
        sodium_bin2hex (pkhex, sizeof (pkhex), pk, sizeof (pk));
        if (strcmp (pkhex, want) != 0)
            problem (hc, "event key secret %s is not the secret of "
                     "bootstrap.event_key (its public key is %s)", path,
                     pkhex);
    }
    fclose (f);
    sodium_memzero (seed, sizeof (seed));
    sodium_memzero (sk, sizeof (sk));
    sodium_memzero (text, sizeof (text));
}

/* Bind a scratch socket to uri (this host only): the address exists.  In
 * use is fine: the broker may be running. */
static void try_bind (struct host_check *hc, const char *uri)
{
    void *ctx = zmq_ctx_new ();
    void *s = ctx ? zmq_socket (ctx, ZMQ_ROUTER) : NULL;
    int linger = 0;

    if (!s) {
        zmq_ctx_term (ctx);
        return;
    }
    zmq_setsockopt (s, ZMQ_LINGER, &linger, sizeof (linger));
    if (zmq_bind (s, uri) < 0 && errno != EADDRINUSE)
        problem (hc, "bind address %s cannot be bound on this host: %s", uri,
                 zmq_strerror (errno));
    zmq_close (s);
    zmq_ctx_term (ctx);
}

static void check_addresses (struct host_check *hc, const hostlist_t *hl,
                             int rank)
{
    json_t *e = entry_of_rank (hc, rank);
    const char *bind = "", *tmpl;
    char uri[1024], err[512];
    int port = (int)json_integer_value (json_object_get (e, "port"));

    conf_get_string (hc->conf, "overlay.bind", &bind);
    tmpl = *bind ? bind : json_string_value (json_object_get (e, "bind"));
    if (!tmpl || conf_expand_template (tmpl, hostlist_nth (hl, rank), port,
                                       uri, sizeof (uri)) < 0)
        problem (hc, "the bind address of '%s' cannot be expanded", hc->host);
    else if (conf_check_endpoint (uri, err, sizeof (err)) < 0)
        problem (hc, "bind address of '%s': %s", hc->host, err);
    else if (hc->is_self && !strncmp (uri, "tcp://", 6))
        try_bind (hc, uri);
    /* every peer's connect address, as this broker would dial it */
    for (int r = 0; r < hostlist_count (hl); r++) {
        json_t *pe = entry_of_rank (hc, r);
        const char *ct = json_string_value (json_object_get (pe, "connect"));
        int pport = (int)json_integer_value (json_object_get (pe, "port"));
        if (!ct || conf_expand_template (ct, hostlist_nth (hl, r), pport, uri,
                                         sizeof (uri)) < 0
            || conf_check_endpoint (uri, err, sizeof (err)) < 0) {
            problem (hc, "connect address of '%s' (rank %d): %s",
                     hostlist_nth (hl, r), r, ct ? err : "no template");
            break;
        }
    }
}

static int check_host (json_t *conf, const char *confname, const char *host)
{
    struct host_check hc = { .conf = conf, .confname = confname };
    char self[256] = "", err[512];
    const char *want = "";
    hostlist_t *hl;
    int rank;

    if (!json_object_get (json_object_get (conf, "bootstrap"), "hosts")) {
        if (host) {
            fprintf (stderr, "%s: --host %s: there is no bootstrap.hosts "
                     "(a PMI-launched instance has no host list)\n", confname,
                     host);
            return 1;
        }
        return 0;
    }
    if (gethostname (self, sizeof (self) - 1) < 0)
        snprintf (self, sizeof (self), "localhost");
    conf_get_string (conf, "bootstrap.hostname", &want);
    hc.host = host ? host : *want ? want : self;
    hc.is_self = !host || !strcmp (host, self);
    if (!(hl = conf_bootstrap_hosts (conf, err, sizeof (err)))) {
        problem (&hc, "%s", err);
        return 1;
    }
    if (entries_index (&hc) < 0) {
        problem (&hc, "out of memory");
        hostlist_destroy (&hl);
        return 1;
    }
    check_duplicates (&hc, hl);
    if ((rank = find_host (hl, hc.host)) < 0) {
        char *all = hostlist_encode (hl);
        problem (&hc, "host '%s' is not in bootstrap.hosts (%s)%s", hc.host,
                 all ? all : "?", host ? "" : "; check another host with "
                 "--host NAME");
        free (all);
    }
    check_cert (&hc);
    check_event_secret (&hc, rank);
    if (rank >= 0)
        check_addresses (&hc, hl, rank);
    hostlist_destroy (&hl);
    free (hc.first);
    return hc.problems ? 1 : 0;
}

static int cmd_check (int argc, char **argv)
{
    static const struct option opts[] = {
        { "setattr", required_argument, NULL, 'o' },
        { "option", required_argument, NULL, 'o' },
        { "print", no_argument, NULL, 'p' },
        { "host", required_argument, NULL, 'H' },
        { "no-host", no_argument, NULL, 'N' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    char errbuf[1024];
    const char **sets;
    const char *host = NULL;
    int nsets = 0, print = 0, c, rc = 1, no_host = 0;
    json_t *conf;

    if (!(sets = calloc ((size_t)argc, sizeof (*sets)))) {
        fprintf (stderr, PROG ": out of memory\n");
        return 1;
    }
    optind = 1;
    opterr = 0;
    while ((c = getopt_long (argc, argv, "+:o:h", opts, NULL)) != -1) {
        switch (c) {
            case 'o': sets[nsets++] = optarg; break;
            case 'p': print = 1; break;
            case 'H': host = optarg; break;
            case 'N': no_host = 1; break;
            case 'h':
                usage (stdout);
                free (sets);
                return 0;
            default:
                free (sets);
                return usage_error (c == ':' ? "check: option '%s' needs a "
                                    "value" : "check: unknown option '%s'",
                                    argv[optind - 1]);
        }
    }
    if (argc - optind != 1) {
        free (sets);
        return usage_error ("check: give one FILE or DIR%s", "");
    }
    if (!(conf = conf_create ())) {
        fprintf (stderr, PROG ": out of memory\n");
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
    rc = no_host ? 0 : check_host (conf, argv[optind], host);
    if (rc == 0 && print)
        rc = print_json (conf);
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
    if (argc < 2)
        return usage_error ("dump or check?%s", "");
    if (!strcmp (argv[1], "-h") || !strcmp (argv[1], "--help")
        || !strcmp (argv[1], "help")) {
        usage (stdout);
        return 0;
    }
    if (!strcmp (argv[1], "dump"))
        return cmd_dump (argc - 1, argv + 1);
    if (!strcmp (argv[1], "check"))
        return cmd_check (argc - 1, argv + 1);
    return usage_error ("unknown command '%s' (dump, check)", argv[1]);
}
