/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* evkey.c: a broker's signing key in its run directory, or rank 0's in the
 * file a static config names (evkey.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sodium.h>

#include "src/common/libutil/errbuf.h"
#include "evkey.h"

#define SEED_FILE "events.seed"

static int fail (char *errbuf, size_t errlen, const char *what,
                 const char *path)
{
    int e = errno;

    return errbuf_fail (errbuf, errlen, e, "%s %s: %s", what, path,
                        strerror (e));
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
        errbuf_set (errbuf, errlen, "libsodium could not start");
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

int evkey_load_file (const char *path, const char *want_hex,
                     unsigned char *pk, unsigned char *sk, char *pkhex,
                     char *errbuf, size_t errlen)
{
    unsigned char seed[crypto_sign_SEEDBYTES];
    char text[2 * crypto_sign_SEEDBYTES + 2];
    struct stat st;
    size_t n = 0;
    ssize_t got;
    int fd;

    if (sodium_init () < 0) {
        errno = ENOSYS;
        errbuf_set (errbuf, errlen, "libsodium could not start");
        return -1;
    }
    if ((fd = open (path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
        return fail (errbuf, errlen, "open", path);
    if (fstat (fd, &st) < 0 || !S_ISREG (st.st_mode)
        || (st.st_mode & 0777) != 0600) {
        close (fd);
        errno = EPERM;
        errbuf_set (errbuf, errlen, "%s must be a regular file of mode 0600 "
                    "(fix: chmod 600 %s)", path, path);
        return -1;
    }
    got = read (fd, text, sizeof (text) - 1);
    close (fd);
    if (got < 2 * crypto_sign_SEEDBYTES
        || sodium_hex2bin (seed, sizeof (seed), text,
                           2 * crypto_sign_SEEDBYTES, NULL, &n, NULL) != 0
        || n != sizeof (seed)) {
        errno = EINVAL;
        errbuf_set (errbuf, errlen, "%s holds no event key secret (64 hex "
                    "digits, as 'bgn keygen --event-key' writes it)", path);
        return -1;
    }
    crypto_sign_seed_keypair (pk, sk, seed);
    sodium_memzero (seed, sizeof (seed));
    sodium_memzero (text, sizeof (text));
    sodium_bin2hex (pkhex, 2 * crypto_sign_PUBLICKEYBYTES + 1, pk,
                    crypto_sign_PUBLICKEYBYTES);
    if (want_hex && strcmp (want_hex, pkhex) != 0) {
        sodium_memzero (sk, crypto_sign_SECRETKEYBYTES);
        errno = EINVAL;
        errbuf_set (errbuf, errlen, "%s is not the secret of "
                    "bootstrap.event_key (its public key is %s)", path, pkhex);
        return -1;
    }
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
