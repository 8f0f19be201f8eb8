/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* evkey.c: rank 0's event signing key in its run directory (evkey.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sodium.h>

#include "evkey.h"

#define SEED_FILE "events.seed"

static int fail (char *errbuf, size_t errlen, const char *what,
                 const char *path)
{
    int e = errno;
    snprintf (errbuf, errlen, "%s %s: %s", what, path, strerror (e));
    errno = e;
    return -1;
}

/* Read the seed if it is there, whole; 1 if read, 0 if absent. */
static int seed_read (const char *path, unsigned char *seed, char *errbuf,
                      size_t errlen)
{
    int fd = open (path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    ssize_t n;

    if (fd < 0)
        return errno == ENOENT ? 0 : fail (errbuf, errlen, "open", path);
    n = read (fd, seed, crypto_sign_SEEDBYTES);
    close (fd);
    if (n != crypto_sign_SEEDBYTES) {
        errno = EINVAL;
        return fail (errbuf, errlen, "short seed in", path);
    }
    return 1;
}

static int seed_write (const char *path, const unsigned char *seed,
                       char *errbuf, size_t errlen)
{
    int fd = open (path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                   0600);
    ssize_t n;

    if (fd < 0)
        return fail (errbuf, errlen, "create", path);
    n = write (fd, seed, crypto_sign_SEEDBYTES);
    if (close (fd) < 0 || n != crypto_sign_SEEDBYTES)
        return fail (errbuf, errlen, "write", path);
    return 0;
}

int evkey_load (const char *rundir, unsigned char *pk, unsigned char *sk,
                char *pkhex, char *errbuf, size_t errlen)
{
    char path[4096];
    unsigned char seed[crypto_sign_SEEDBYTES];
    int rc;

    if (sodium_init () < 0) {
        errno = ENOSYS;
        snprintf (errbuf, errlen, "libsodium could not start");
        return -1;
    }
    snprintf (path, sizeof (path), "%s/%s", rundir, SEED_FILE);
    if ((rc = seed_read (path, seed, errbuf, errlen)) < 0)
        return -1;
    if (rc == 0) {
        randombytes_buf (seed, sizeof (seed));
        if (seed_write (path, seed, errbuf, errlen) < 0)
            return -1;
    }
    crypto_sign_seed_keypair (pk, sk, seed);
    sodium_memzero (seed, sizeof (seed));
    sodium_bin2hex (pkhex, 2 * crypto_sign_PUBLICKEYBYTES + 1, pk,
                    crypto_sign_PUBLICKEYBYTES);
    return 0;
}

int evkey_parse (const char *hex, unsigned char *pk)
{
    size_t n = 0;

    if (!hex || sodium_init () < 0
        || sodium_hex2bin (pk, crypto_sign_PUBLICKEYBYTES, hex, strlen (hex),
                           NULL, &n, NULL) != 0
        || n != crypto_sign_PUBLICKEYBYTES) {
        errno = EINVAL;
        return -1;
    }
    return 0;
}
