/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* bgn-keygen.c: "bgn keygen": make the CURVE certificate of a system instance.
 *
 *   bgn-keygen [--name NAME] [--force] PATH
 *
 * Writes a new CURVE key pair with czmq's certificate format: PATH holds
 * the public key and metadata (mode 0644), PATH_secret the public and the
 * secret key (mode 0600, created under umask 077 so it is never readable
 * by others, not even for a moment).  The metadata are name (--name,
 * default the host name), hostname and created (UTC, ISO 8601).
 *
 * Every broker of a static instance loads the same certificate
 * (bootstrap.curve_cert): copy both files to every node, keeping
 * PATH_secret private to the user the broker runs as.
 *
 * An existing PATH or PATH_secret is not overwritten unless --force is
 * given; then the old files are removed first, so the new secret never
 * inherits an old file's mode.  Exit status 0 on success, 1 on error.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <czmq.h>

static const char usage_text[] =
    "Usage: bgn keygen [--name NAME] [--force] PATH\n"
    "Write a CURVE certificate for the brokers of a system instance:\n"
    "PATH (public key, mode 0644) and PATH_secret (secret key, mode 0600).\n"
    "Point bootstrap.curve_cert at PATH and copy both files to every node.\n"
    "\n"
    "      --name=NAME  name stored in the certificate (default: host name)\n"
    "  -f, --force      overwrite an existing certificate\n"
    "  -h, --help       show this help\n";

#define SEE_HELP "; see 'bgn keygen --help'"

static int exists (const char *path)
{
    struct stat st;
    return lstat (path, &st) == 0;
}

int main (int argc, char **argv)
{
    static const struct option longopts[] = {
        { "name", required_argument, NULL, 'n' },
        { "force", no_argument, NULL, 'f' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *name = NULL, *path;
    char secret[256], host[256] = "", created[64];
    int force = 0, c;
    zcert_t *cert;
    time_t now;
    struct tm tm;
    mode_t old_umask;

    opterr = 0;
    /* --name is long only: -n is a rank's nodeid in bgn rpc */
    while ((c = getopt_long (argc, argv, ":fh", longopts, NULL)) != -1) {
        switch (c) {
        case 'n': name = optarg; break;
        case 'f': force = 1; break;
        case 'h': fputs (usage_text, stdout); return 0;
        default:
            fprintf (stderr, "bgn keygen: %s '%s'" SEE_HELP "\n",
                     c == ':' ? "a value is needed for" : "unknown option",
                     argv[optind - 1]);
            return 1;
        }
    }
    if (optind != argc - 1) {
        fprintf (stderr, "bgn keygen: %s" SEE_HELP "\n", optind < argc
                 ? "too many arguments" : "missing PATH");
        return 1;
    }
    path = argv[optind];
    /* czmq names the secret file in a 256-byte buffer. */
    if (!*path
        || snprintf (secret, sizeof (secret), "%s_secret", path)
               >= (int)sizeof (secret)) {
        fprintf (stderr, "bgn keygen: PATH must be 1 to 248 characters\n");
        return 1;
    }
    if (exists (path) || exists (secret)) {
        if (!force) {
            fprintf (stderr, "bgn keygen: %s already exists; not "
                     "overwriting it (use --force to replace it)\n",
                     exists (path) ? path : secret);
            return 1;
        }
        if ((unlink (path) < 0 && errno != ENOENT)
            || (unlink (secret) < 0 && errno != ENOENT)) {
            fprintf (stderr, "bgn keygen: cannot remove the old "
                     "certificate: %s\n", strerror (errno));
            return 1;
        }
    }
    if (gethostname (host, sizeof (host) - 1) < 0)
        snprintf (host, sizeof (host), "localhost");
    now = time (NULL);
    gmtime_r (&now, &tm);
    strftime (created, sizeof (created), "%Y-%m-%dT%H:%M:%SZ", &tm);

    zsys_handler_set (NULL);
    if (!(cert = zcert_new ())) {
        fprintf (stderr, "bgn keygen: cannot make a key pair\n");
        return 1;
    }
    zcert_set_meta (cert, "name", "%s", name ? name : host);
    zcert_set_meta (cert, "hostname", "%s", host);
    zcert_set_meta (cert, "created", "%s", created);
    zcert_set_meta (cert, "created-by", "bgn-keygen %s", PACKAGE_VERSION);

    /* Both files are born private; the public one is opened up below. */
    old_umask = umask (077);
    errno = 0;
    if (zcert_save (cert, path) < 0) {
        int saved = errno;
        umask (old_umask);
        fprintf (stderr, "bgn keygen: cannot write %s: %s\n", path,
                 saved ? strerror (saved) : "write failed");
        unlink (path);
        unlink (secret);
        zcert_destroy (&cert);
        return 1;
    }
    umask (old_umask);
    zcert_destroy (&cert);
    if (chmod (secret, 0600) < 0 || chmod (path, 0644) < 0) {
        fprintf (stderr, "bgn keygen: chmod: %s\n", strerror (errno));
        return 1;
    }
    printf ("wrote %s (public) and %s (secret, mode 0600)\n", path, secret);
    return 0;
}
