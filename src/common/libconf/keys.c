/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* keys.c: per-host CURVE keys (see keys.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "src/common/libutil/errbuf.h"
#include "src/common/libutil/hostlist.h"
#include "conf.h"
#include "keys.h"

#define Z85_LEN 40
#define MAX_CERT 8192   /* bytes: a certificate file is a few hundred */

static int is_z85 (char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z')
           || (c >= 'A' && c <= 'Z')
           || (c && strchr (".-:+=^!/*?&<>()[]{}@%$#", c));
}

int conf_parse_pubkey (const char *text, size_t len, const char *name,
                       char pub[41], char *errbuf, size_t errlen)
{
    const char *end = text + len;
    const char *p = text;
    static const char word[] = "public-key";

    /* czmq's ZPL: a line "    public-key = "<40 Z85 characters>"" */
    for (; (size_t)(end - p) >= sizeof (word) - 1; p++) {
        const char *q = p + sizeof (word) - 1;
        size_t n;
        if (memcmp (p, word, sizeof (word) - 1) != 0)
            continue;
        while (q < end && (*q == ' ' || *q == '\t'))
            q++;
        if (q >= end || *q++ != '=')
            continue;
        while (q < end && (*q == ' ' || *q == '\t'))
            q++;
        if (q >= end || *q++ != '"')
            continue;
        for (n = 0; n < Z85_LEN && q + n < end && is_z85 (q[n]); n++)
            ;
        if (n == Z85_LEN && q + n < end && q[n] == '"') {
            memcpy (pub, q, Z85_LEN);
            pub[Z85_LEN] = '\0';
            return 0;
        }
    }
    return errbuf_fail (errbuf, errlen, EINVAL, "%s: no public key (make one "
                        "with: bgn keygen %s)", name, name);
}

int conf_read_pubkey (const char *path, char pub[41], char *errbuf,
                      size_t errlen)
{
    char text[MAX_CERT];
    size_t n;
    FILE *f;

    if (!(f = fopen (path, "r")))
        return errbuf_fail (errbuf, errlen, errno, "%s: %s (make it with: bgn "
                            "keygen %s)", path, strerror (errno), path);
    n = fread (text, 1, MAX_CERT, f);
    fclose (f);
    return conf_parse_pubkey (text, n, path, pub, errbuf, errlen);
}

int conf_key_path (const char *dir, const char *host, char *buf, size_t len)
{
    if (snprintf (buf, len, "%s/%s.cert", dir, host) >= (int)len) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return 0;
}

static hostlist_t *config_hosts (json_t *conf, char *errbuf, size_t errlen)
{
    json_t *hosts = json_object_get (json_object_get (conf, "bootstrap"),
                                     "hosts");
    hostlist_t *hl = hostlist_create ();
    json_t *h;
    size_t i;

    if (!hl)
        return NULL;
    json_array_foreach (hosts, i, h) {
        const char *spec = json_string_value (json_object_get (h, "host"));
        if (!spec || hostlist_append (hl, spec, errbuf, errlen) < 0) {
            hostlist_destroy (&hl);
            return NULL;
        }
    }
    return hl;
}

static int check_secret (const char *pubpath, char *errbuf, size_t errlen)
{
    char secret[4096];
    struct stat st;

    if (snprintf (secret, sizeof (secret), "%s_secret", pubpath)
        >= (int)sizeof (secret))
        return errbuf_fail (errbuf, errlen, ENAMETOOLONG, "%s: path too long",
                            pubpath);
    if (stat (secret, &st) < 0)
        return errbuf_fail (errbuf, errlen, errno, "bootstrap.curve_keys: "
                            "this host's secret key %s: %s", secret,
                            strerror (errno));
    if (!S_ISREG (st.st_mode) || (st.st_mode & 077))
        return errbuf_fail (errbuf, errlen, EPERM, "bootstrap.curve_keys: %s "
                            "must be a regular file with mode 0600 (it is "
                            "%04o)", secret, (unsigned)(st.st_mode & 07777));
    return 0;
}

int conf_check_keys (json_t *conf, const char *host, char *errbuf,
                     size_t errlen)
{
    const char *dir = "", *cert = "";
    hostlist_t *hl;
    char path[4096], (*keys)[41] = NULL;
    int n, rc = -1;

    conf_get_string (conf, "bootstrap.curve_keys", &dir);
    if (!*dir)
        return 0;
    conf_get_string (conf, "bootstrap.curve_cert", &cert);
    if (*cert)
        return errbuf_fail (errbuf, errlen, EINVAL, "bootstrap.curve_keys and "
                            "bootstrap.curve_cert exclude each other: "
                            "per-host keys or one shared certificate");
    if (!(hl = config_hosts (conf, errbuf, errlen)))
        return -1;
    if ((n = hostlist_count (hl)) == 0) {
        errbuf_fail (errbuf, errlen, EINVAL, "bootstrap.curve_keys needs "
                     "bootstrap.hosts (the hosts whose keys are in %s)", dir);
        goto done;
    }
    if (!(keys = calloc ((size_t)n, sizeof (*keys))))
        goto done;
    for (int i = 0; i < n; i++) {
        const char *h = hostlist_nth (hl, i);
        if (conf_key_path (dir, h, path, sizeof (path)) < 0) {
            errbuf_fail (errbuf, errlen, ENAMETOOLONG, "%s/%s.cert: path too "
                         "long", dir, h);
            goto done;
        }
        if (conf_read_pubkey (path, keys[i], errbuf, errlen) < 0)
            goto done;
        for (int j = 0; j < i; j++) {
            if (!strcmp (keys[i], keys[j])) {
                errbuf_fail (errbuf, errlen, EINVAL, "bootstrap.curve_keys: "
                             "hosts %s and %s have the same key: each host "
                             "needs its own (bgn keygen %s)",
                             hostlist_nth (hl, j), h, path);
                goto done;
            }
        }
        if (host && !strcmp (h, host)
            && check_secret (path, errbuf, errlen) < 0)
            goto done;
    }
    rc = 0;
done:
    free (keys);
    hostlist_destroy (&hl);
    return rc;
}
