/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* bgn-keygen.c: "bgn keygen": make the CURVE certificate of a system
 * instance, or rank 0's event signing key.
 *
 *   bgn-keygen [--name NAME] [--force] PATH
 *   bgn-keygen --event-key [--force] PATH
 *
 * With --event-key: a new Ed25519 key pair (libsodium crypto_sign) for
 * the brokers of a static instance, which have no bootstrap exchange to
 * announce one: PATH gets the secret seed (64 hex digits, mode 0600, on
 * the host of rank 0 only: bootstrap.event_key_secret), and the public
 * key is printed for every broker's config (bootstrap.event_key).  Rank 0
 * then signs the event stream and its own requests (the owner's, from
 * broker.admin_ranks), and every broker checks them.
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
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <czmq.h>
#include <sodium.h>

static const char usage_text[] =
    "Usage: bgn keygen [--name NAME] [--force] PATH\n"
    "       bgn keygen --event-key [--force] PATH\n"
    "Write a CURVE certificate for the brokers of a system instance:\n"
    "PATH (public key, mode 0644) and PATH_secret (secret key, mode 0600).\n"
    "Point bootstrap.curve_cert at PATH and copy both files to every node.\n"
    "With --event-key, write rank 0's event signing key instead: PATH\n"
    "gets the secret (mode 0600; keep it on rank 0's host only, named by\n"
    "bootstrap.event_key_secret) and the public key is printed, for\n"
    "bootstrap.event_key in every broker's config.\n"
    "\n"
    "      --name=NAME  name stored in the certificate (default: host name)\n"
    "      --event-key  write an event signing key, not a certificate\n"
    "  -f, --force      overwrite an existing file\n"
    "  -h, --help       show this help\n";

/* --event-key: the secret seed as hex in PATH (0600), the public key on
 * stdout as config lines. */
static int event_key (const char *path, int force)
{
    unsigned char seed[crypto_sign_SEEDBYTES], pk[crypto_sign_PUBLICKEYBYTES],
        sk[crypto_sign_SECRETKEYBYTES];
    char hex[2 * crypto_sign_SEEDBYTES + 2], pkhex[2 * sizeof (pk) + 1];
    int fd, flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
    ssize_t n;

    if (sodium_init () < 0) {
        fprintf (stderr, "bgn keygen: libsodium could not start\n");
        return 1;
    }
    if (force && unlink (path) < 0 && errno != ENOENT) {
        fprintf (stderr, "bgn keygen: cannot remove %s: %s\n", path,
                 strerror (errno));
        return 1;
    }
    if ((fd = open (path, flags, 0600)) < 0) {
        fprintf (stderr, "bgn keygen: %s: %s%s\n", path, strerror (errno),
                 errno == EEXIST ? " (use --force to replace it)" : "");
        return 1;
    }
    randombytes_buf (seed, sizeof (seed));
    crypto_sign_seed_keypair (pk, sk, seed);
    sodium_bin2hex (hex, sizeof (hex) - 1, seed, sizeof (seed));
    strcat (hex, "\n");
    n = write (fd, hex, strlen (hex));
    sodium_memzero (seed, sizeof (seed));
    sodium_memzero (sk, sizeof (sk));
    sodium_memzero (hex, sizeof (hex));
    if (fchmod (fd, 0600) < 0 || close (fd) < 0 || n != 65) {
        fprintf (stderr, "bgn keygen: cannot write %s\n", path);
        unlink (path);
        return 1;
    }
    sodium_bin2hex (pkhex, sizeof (pkhex), pk, sizeof (pk));
    printf ("wrote %s (secret, mode 0600: keep it on rank 0's host only)\n"
            "every broker's config:\n"
            "  bootstrap.event_key = \"%s\"\n"
            "rank 0's host's config:\n"
            "  bootstrap.event_key_secret = \"%s\"\n", path, pkhex, path);
    return 0;
}

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
        { "event-key", no_argument, NULL, 'e' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *name = NULL, *path;
    char secret[256], host[256] = "", created[64];
    int force = 0, evkey = 0, c;
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
        case 'e': evkey = 1; break;
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
    if (evkey)
        return *path ? event_key (path, force) : 1;
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
