/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* conf.c: the broker configuration: load TOML, check it, fill defaults.
 *
 * The schema in conf.h is encoded once, in the table 'schema' below; the
 * validator, the default filler and the reference man page (bgn.toml(5))
 * all follow it.  A configuration is built in stages: each file (or -o
 * override) is parsed and validated on its own, staged, and merged only
 * when everything in it is good, so a failed conf_load() changes nothing.
 *
 * To report "a key defined in two files" with both names, the file that
 * set each key is remembered under the reserved member "_origin" of the
 * configuration object (a flat object: "overlay.ttl" -> "a.toml");
 * conf_finalize() removes it.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "src/common/libtoml/toml.h"
#include "src/common/libutil/errbuf.h"
#include "src/common/libutil/fsd.h"
#include "src/common/libutil/hostlist.h"
#include "src/common/libutil/loglevel.h"
#include "src/common/libutil/idset.h"
#include "conf.h"

#define ORIGIN "_origin"

enum ktype { K_STRING, K_INT, K_BOOL, K_DURATION, K_HOSTS, K_STRLIST };

struct keydef {
    const char *table;
    const char *name;
    enum ktype type;
    const char *defstr;         /* default for strings and durations */
    long long defint;           /* default for integers and booleans */
    long long min, max;         /* integer range */
    const char *range;          /* message for an out-of-range integer */
    int positive;               /* duration must be > 0 */
    int (*check) (const char *s, char *msg, size_t len);
};

static int check_topology (const char *s, char *msg, size_t len);
static int check_boot_method (const char *s, char *msg, size_t len);
static int check_log_level (const char *s, char *msg, size_t len);
static int check_admin_ranks (const char *s, char *msg, size_t len);
static int check_event_key (const char *s, char *msg, size_t len);

static const struct keydef schema[] = {
    { "overlay", "topology", K_STRING, "bgn", 0, 0, 0, NULL, 0,
      check_topology },
    { "overlay", "keepalive_interval", K_DURATION, "1s", 0, 0, 0, NULL, 1,
      NULL },
    { "overlay", "peer_timeout", K_DURATION, "10s", 0, 0, 0, NULL, 1, NULL },
    { "overlay", "fence_window", K_DURATION, "10ms", 0, 0, 0, NULL, 1, NULL },
    { "overlay", "join_timeout", K_DURATION, "0", 0, 0, 0, NULL, 0, NULL },
    { "overlay", "rejoin_wait", K_DURATION, "500ms", 0, 0, 0, NULL, 0, NULL },
    { "overlay", "ttl", K_INT, NULL, 0, 0, 255,
      "must be 0 (derived from the diameter) or 1..255", 0, NULL },
    { "overlay", "heal_threshold", K_INT, NULL, -1, -1, 1024,
      "must be -1 (derived) or 0..1024", 0, NULL },
    { "overlay", "sndhwm", K_INT, NULL, 1000, 1, 1000000,
      "must be 1..1000000", 0, NULL },
    { "overlay", "backlog", K_INT, NULL, 10000, 0, 10000000,
      "must be 0..10000000", 0, NULL },
    { "overlay", "backlog_bytes", K_INT, NULL, 32ll << 20, 65536, 1ll << 40,
      "must be 65536..2^40 (bytes)", 0, NULL },
    { "overlay", "retry_bytes", K_INT, NULL, 16ll << 20, 0, 1ll << 40,
      "must be 0..2^40 (bytes)", 0, NULL },
    { "overlay", "dedup_bytes", K_INT, NULL, 16ll << 20, 0, 1ll << 40,
      "must be 0..2^40 (bytes)", 0, NULL },
    { "overlay", "tracker_bytes", K_INT, NULL, 16ll << 20, 65536, 1ll << 40,
      "must be 65536..2^40 (bytes)", 0, NULL },
    { "overlay", "held_bytes", K_INT, NULL, 4ll << 20, 0, 1ll << 40,
      "must be 0..2^40 (bytes)", 0, NULL },
    { "overlay", "sndbuf_bytes", K_INT, NULL, 4ll << 20, 65536, 1ll << 40,
      "must be 65536..2^40 (bytes)", 0, NULL },
    { "overlay", "event_buffer", K_INT, NULL, 100000, 16, 100000000,
      "must be 16..100000000", 0, NULL },
    { "overlay", "event_buffer_bytes", K_INT, NULL, 64ll << 20, 65536,
      1ll << 40, "must be 65536..2^40 (bytes)", 0, NULL },
    { "overlay", "event_batch_window", K_DURATION, "0.2ms", 0, 0, 0, NULL, 0,
      NULL },
    { "overlay", "event_batch_bytes", K_INT, NULL, 64ll << 10, 256,
      64ll << 20, "must be 256..67108864 (bytes)", 0, NULL },
    { "overlay", "event_queue_bytes", K_INT, NULL, 16ll << 20, 1024,
      1ll << 40, "must be 1024..2^40 (bytes)", 0, NULL },
    { "overlay", "bind", K_STRING, "", 0, 0, 0, NULL, 0, NULL },
    { "overlay", "curve", K_BOOL, NULL, 1, 0, 0, NULL, 0, NULL },
    { "overlay", "insecure", K_BOOL, NULL, 0, 0, 0, NULL, 0, NULL },
    { "broker", "log_level", K_INT, NULL, 5, 0, 7,
      "must be 0..7 (a syslog level)", 0, NULL },
    { "broker", "log_ring_level", K_STRING, "debug", 0, 0, 0, NULL, 0,
      check_log_level },
    { "broker", "log_ring_size", K_INT, NULL, 1024, 1, 1 << 20,
      "must be 1..1048576 (lines)", 0, NULL },
    { "broker", "log_ring_bytes", K_INT, NULL, 1ll << 20, 4096, 1ll << 40,
      "must be 4096..2^40 (bytes)", 0, NULL },
    { "broker", "client_queue_bytes", K_INT, NULL, 8ll << 20, 65536,
      1ll << 40, "must be 65536..2^40 (bytes)", 0, NULL },
    { "broker", "module_path", K_STRING, "", 0, 0, 0, NULL, 0, NULL },
    { "broker", "rundir", K_STRING, "", 0, 0, 0, NULL, 0, NULL },
    { "broker", "modules", K_STRLIST, NULL, 0, 0, 0, NULL, 0, NULL },
    { "broker", "rpc_timeout", K_DURATION, "10s", 0, 0, 0, NULL, 1, NULL },
    { "broker", "ready_timeout", K_DURATION, "30s", 0, 0, 0, NULL, 0, NULL },
    { "broker", "guest_group", K_STRING, "", 0, 0, 0, NULL, 0, NULL },
    { "broker", "admin_ranks", K_STRING, "0", 0, 0, 0, NULL, 0,
      check_admin_ranks },
    { "bootstrap", "curve_cert", K_STRING, "", 0, 0, 0, NULL, 0, NULL },
    { "bootstrap", "curve_keys", K_STRING, "", 0, 0, 0, NULL, 0, NULL },
    { "bootstrap", "event_key", K_STRING, "", 0, 0, 0, NULL, 0,
      check_event_key },
    { "bootstrap", "event_key_secret", K_STRING, "", 0, 0, 0, NULL, 0,
      NULL },
    { "bootstrap", "hostname", K_STRING, "", 0, 0, 0, NULL, 0, NULL },
    { "bootstrap", "default_port", K_INT, NULL, 8050, 1, 65535,
      "must be 1..65535", 0, NULL },
    { "bootstrap", "default_bind", K_STRING, "tcp://*:%p", 0, 0, 0, NULL, 0,
      NULL },
    { "bootstrap", "default_connect", K_STRING, "tcp://%h:%p", 0, 0, 0, NULL,
      0, NULL },
    { "bootstrap", "hosts", K_HOSTS, NULL, 0, 0, 0, NULL, 0, NULL },
    { "bootstrap", "method", K_STRING, "auto", 0, 0, 0, NULL, 0,
      check_boot_method },
};

/* broker.admin_ranks: the ranks whose requests keep the owner role when
 * they cross the overlay (src/broker/access.h); an idset, "" for none. */
static int check_admin_ranks (const char *s, char *msg, size_t len)
{
    char err[128];
    idset_t *set = idset_decode (s, err, sizeof (err));

    if (!set) {
        snprintf (msg, len, "must be a set of ranks such as \"0\" or "
                  "\"0-1,8\" (%s)", err);
        return -1;
    }
    idset_destroy (&set);
    return 0;
}

/* bootstrap.event_key: rank 0's public signing key, 64 hex digits
 * (bgn keygen --event-key), or "" for none. */
static int check_event_key (const char *s, char *msg, size_t len)
{
    size_t n = strlen (s);

    if (n == 0)
        return 0;
    if (n != 64 || strspn (s, "0123456789abcdef") != n) {
        snprintf (msg, len, "must be 64 lowercase hex digits (the public "
                  "key 'bgn keygen --event-key' prints), or \"\"");
        return -1;
    }
    return 0;
}

/* bootstrap.method: how the broker learns its rank (src/broker/boot.h). */
static int check_boot_method (const char *s, char *msg, size_t len)
{
    static const char *methods[] = { "auto", "pmix", "pmi1", "static",
                                     "single" };
    for (size_t i = 0; i < sizeof (methods) / sizeof (methods[0]); i++)
        if (!strcmp (s, methods[i]))
            return 0;
    snprintf (msg, len, "must be auto, pmix, pmi1, static or single");
    return -1;
}

/* broker.log_ring_level: a syslog level by name (loglevel.h). */
static int check_log_level (const char *s, char *msg, size_t len)
{
    if (loglevel_parse (s) >= 0)
        return 0;
    snprintf (msg, len, "must be a syslog level: emergency, alert, "
              "critical, error, warning, notice, info or debug");
    return -1;
}

#define NKEYS (sizeof (schema) / sizeof (schema[0]))

static const struct keydef *find_key (const char *table, const char *name)
{
    for (size_t i = 0; i < NKEYS; i++)
        if (!strcmp (schema[i].table, table) && !strcmp (schema[i].name, name))
            return &schema[i];
    return NULL;
}

static int known_table (const char *table)
{
    for (size_t i = 0; i < NKEYS; i++)
        if (!strcmp (schema[i].table, table))
            return 1;
    return 0;
}

/* Parse a decimal integer that is the whole of s (no sign, no junk). */
static int parse_uint (const char *s, long *val)
{
    long v = 0;
    if (!*s)
        return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > 100000)
            return -1;
        v = v * 10 + (*s - '0');
    }
    *val = v;
    return 0;
}

static int check_topology (const char *s, char *msg, size_t len)
{
    long n;
    if (!strcmp (s, "bgn") || !strcmp (s, "binomial"))
        return 0;
    if (!strncmp (s, "bgn:", 4)) {
        if (parse_uint (s + 4, &n) < 0 || n < 2 || n > 64) {
            snprintf (msg, len, "radix in \"bgn:R\" must be 2..64");
            return -1;
        }
        return 0;
    }
    if (!strncmp (s, "kary:", 5)) {
        if (parse_uint (s + 5, &n) < 0 || n < 1 || n > 1024) {
            snprintf (msg, len, "K in \"kary:K\" must be 1..1024");
            return -1;
        }
        return 0;
    }
    snprintf (msg, len, "must be \"bgn\", \"bgn:R\", \"kary:K\" or "
              "\"binomial\"");
    return -1;
}

/* Duration value of a string, integer or real; -1 if not a duration. */
static int duration_value (json_t *v, double *secs)
{
    if (json_is_string (v))
        return fsd_parse_duration (json_string_value (v), secs);
    if (json_is_integer (v)) {
        if (json_integer_value (v) < 0)
            return -1;
        *secs = (double)json_integer_value (v);
        return 0;
    }
    if (json_is_real (v)) {
        double d = json_real_value (v);
        if (!(d >= 0))
            return -1;
        *secs = d;
        return 0;
    }
    return -1;
}

static int check_hosts (json_t *v, const char *name, char *errbuf,
                        size_t errlen)
{
    size_t i;
    json_t *h;

    if (!json_is_array (v))
        return errbuf_fail (errbuf, errlen, EINVAL, "%s: key "
                            "'bootstrap.hosts': must be an array of tables",
                            name);
    json_array_foreach (v, i, h) {
        const char *k;
        json_t *x;
        if (!json_is_object (h))
            return errbuf_fail (errbuf, errlen, EINVAL, "%s: key "
                                "'bootstrap.hosts[%zu]': must be a table",
                                name, i);
        json_object_foreach (h, k, x) {
            if (!strcmp (k, "host") || !strcmp (k, "bind")
                || !strcmp (k, "connect")) {
                if (!json_is_string (x))
                    return errbuf_fail (errbuf, errlen, EINVAL, "%s: key "
                                        "'bootstrap.hosts[%zu].%s': must be a "
                                        "string", name, i, k);
            }
            else if (!strcmp (k, "port")) {
                if (!json_is_integer (x))
                    return errbuf_fail (errbuf, errlen, EINVAL, "%s: key "
                                        "'bootstrap.hosts[%zu].port': must be "
                                        "an integer", name, i);
                if (json_integer_value (x) < 1
                    || json_integer_value (x) > 65535)
                    return errbuf_fail (errbuf, errlen, EINVAL, "%s: key "
                                        "'bootstrap.hosts[%zu].port': must be "
                                        "1..65535", name, i);
            }
            else
                return errbuf_fail (errbuf, errlen, EINVAL, "%s: key "
                                    "'bootstrap.hosts[%zu].%s': unknown key",
                                    name, i, k);
        }
        x = json_object_get (h, "host");
        if (!x)
            return errbuf_fail (errbuf, errlen, EINVAL, "%s: key "
                                "'bootstrap.hosts[%zu].host': required key "
                                "missing", name, i);
        if (json_string_length (x) == 0)
            return errbuf_fail (errbuf, errlen, EINVAL, "%s: key "
                                "'bootstrap.hosts[%zu].host': must not be "
                                "empty", name, i);
    }
    return 0;
}

/* Check one value against its definition. */
static int check_value (const struct keydef *d, json_t *v, const char *name,
                        char *errbuf, size_t errlen)
{
    char msg[128];
    double secs;

    switch (d->type) {
        case K_STRING:
            if (!json_is_string (v))
                return errbuf_fail (errbuf, errlen, EINVAL, "%s: key '%s.%s': "
                                    "must be a string", name, d->table,
                                    d->name);
            if (d->check && d->check (json_string_value (v), msg,
                                      sizeof (msg)) < 0)
                return errbuf_fail (errbuf, errlen, EINVAL, "%s: key '%s.%s': "
                                    "%s", name, d->table, d->name, msg);
            return 0;
        case K_INT:
            if (!json_is_integer (v))
                return errbuf_fail (errbuf, errlen, EINVAL, "%s: key '%s.%s': "
                                    "must be an integer", name, d->table,
                                    d->name);
            if (json_integer_value (v) < d->min
                || json_integer_value (v) > d->max)
                return errbuf_fail (errbuf, errlen, EINVAL, "%s: key '%s.%s': "
                                    "%s", name, d->table, d->name, d->range);
            return 0;
        case K_BOOL:
            if (!json_is_boolean (v))
                return errbuf_fail (errbuf, errlen, EINVAL, "%s: key '%s.%s': "
                                    "must be a boolean (true or false)", name,
                                    d->table, d->name);
            return 0;
        case K_DURATION:
            if (!json_is_string (v) && !json_is_number (v))
                return errbuf_fail (errbuf, errlen, EINVAL, "%s: key '%s.%s': "
                                    "must be a duration (a string like \"5s\" "
                                    "or \"250ms\", or a number of seconds)",
                                    name, d->table, d->name);
            if (duration_value (v, &secs) < 0)
                return errbuf_fail (errbuf, errlen, EINVAL, "%s: key '%s.%s': "
                                    "invalid duration (expected e.g. \"5s\", "
                                    "\"250ms\", \"1.5m\")", name, d->table,
                                    d->name);
            if (d->positive && !(secs > 0))
                return errbuf_fail (errbuf, errlen, EINVAL, "%s: key '%s.%s': "
                                    "must be greater than 0", name, d->table,
                                    d->name);
            return 0;
        case K_HOSTS:
            return check_hosts (v, name, errbuf, errlen);
        case K_STRLIST: {
            size_t i;
            json_t *e;
            if (!json_is_array (v))
                return errbuf_fail (errbuf, errlen, EINVAL, "%s: key '%s.%s': "
                                    "must be an array of strings", name,
                                    d->table, d->name);
            json_array_foreach (v, i, e) {
                if (!json_is_string (e) || !*json_string_value (e))
                    return errbuf_fail (errbuf, errlen, EINVAL, "%s: key "
                                        "'%s.%s[%zu]': must be a non-empty "
                                        "string", name, d->table, d->name, i);
            }
            return 0;
        }
    }
    return 0;
}

/* Validate a parsed document against the schema. */
static int validate (json_t *doc, const char *name, char *errbuf,
                     size_t errlen)
{
    const char *table, *key;
    json_t *t, *v;

    json_object_foreach (doc, table, t) {
        if (!known_table (table)) {
            if (json_is_object (t))
                return errbuf_fail (errbuf, errlen, EINVAL, "%s: key '%s': "
                                    "unknown table", name, table);
            return errbuf_fail (errbuf, errlen, EINVAL, "%s: key '%s': "
                                "unknown key", name, table);
        }
        if (!json_is_object (t))
            return errbuf_fail (errbuf, errlen, EINVAL, "%s: key '%s': must "
                                "be a table", name, table);
        json_object_foreach (t, key, v) {
            const struct keydef *d = find_key (table, key);
            if (!d)
                return errbuf_fail (errbuf, errlen, EINVAL, "%s: key '%s.%s': "
                                    "unknown key", name, table, key);
            if (check_value (d, v, name, errbuf, errlen) < 0)
                return -1;
        }
    }
    return 0;
}

/* Stage doc (validated) into 'stage', recording origins in 'origins'
 * (both flat: "table.key").  Duplicate keys are errors naming both files.
 */
static int stage_doc (json_t *stage, json_t *origins, json_t *doc,
                      const char *name, char *errbuf, size_t errlen)
{
    const char *table, *key;
    json_t *t, *v;
    char full[128];

    json_object_foreach (doc, table, t) {
        json_object_foreach (t, key, v) {
            json_t *o;
            snprintf (full, sizeof (full), "%s.%s", table, key);
            if ((o = json_object_get (origins, full)))
                return errbuf_fail (errbuf, errlen, EINVAL, "%s: key '%s': "
                                    "already defined in %s", name, full,
                                    json_string_value (o));
            if (json_object_set (stage, full, v) < 0
                || json_object_set_new (origins, full,
                                        json_string (name)) < 0) {
                errbuf_set (errbuf, errlen, "%s: out of memory", name);
                errno = ENOMEM;
                return -1;
            }
        }
    }
    return 0;
}

/* Merge the flat 'stage' into conf.  If 'replace', existing keys are
 * overwritten (overrides); otherwise they were checked by the caller.
 */
static int merge_stage (json_t *conf, json_t *stage, json_t *origins)
{
    const char *full;
    json_t *v;
    json_t *corig = json_object_get (conf, ORIGIN);

    if (!corig) {
        if (!(corig = json_object ())
            || json_object_set_new (conf, ORIGIN, corig) < 0)
            goto nomem;
    }
    json_object_foreach (stage, full, v) {
        char table[64];
        const char *dot = strchr (full, '.');
        size_t n = (size_t)(dot - full);
        json_t *t;
        if (n >= sizeof (table))
            n = sizeof (table) - 1;
        memcpy (table, full, n);
        table[n] = '\0';
        if (!(t = json_object_get (conf, table))) {
            if (!(t = json_object ())
                || json_object_set_new (conf, table, t) < 0)
                goto nomem;
        }
        if (json_object_set (t, dot + 1, v) < 0
            || json_object_set (corig, full,
                                json_object_get (origins, full)) < 0)
            goto nomem;
    }
    return 0;
nomem:
    errno = ENOMEM;
    return -1;
}

/* Check that nothing staged was already set in conf by an earlier load. */
static int check_conflicts (json_t *conf, json_t *origins, char *errbuf,
                            size_t errlen)
{
    json_t *corig = json_object_get (conf, ORIGIN);
    const char *full;
    json_t *v, *o;
    if (!corig)
        return 0;
    json_object_foreach (origins, full, v) {
        if ((o = json_object_get (corig, full)))
            return errbuf_fail (errbuf, errlen, EINVAL, "%s: key '%s': "
                                "already defined in %s", json_string_value (v),
                                full, json_string_value (o));
    }
    return 0;
}

static int syntax_error (const char *name, struct toml_error *te, int err,
                         char *errbuf, size_t errlen)
{
    if (te->line > 0)
        errbuf_set (errbuf, errlen, "%s:%d:%d: %s", name, te->line, te->col,
                    te->msg);
    else
        errbuf_set (errbuf, errlen, "%s: %s", name, te->msg);
    errno = err;
    return -1;
}

static int load_doc (json_t *stage, json_t *origins, json_t *doc,
                     const char *name, char *errbuf, size_t errlen)
{
    if (validate (doc, name, errbuf, errlen) < 0)
        return -1;
    return stage_doc (stage, origins, doc, name, errbuf, errlen);
}

static int load_file (json_t *stage, json_t *origins, const char *path,
                      char *errbuf, size_t errlen)
{
    struct toml_error te;
    json_t *doc = toml_parse_file (path, &te);
    int rc;
    if (!doc)
        return syntax_error (path, &te, errno, errbuf, errlen);
    rc = load_doc (stage, origins, doc, path, errbuf, errlen);
    json_decref (doc);
    return rc;
}

static int cmp_names (const void *a, const void *b)
{
    return strcmp (*(char *const *)a, *(char *const *)b);
}

static int load_dir (json_t *stage, json_t *origins, const char *path,
                     char *errbuf, size_t errlen)
{
    DIR *dir = opendir (path);
    struct dirent *de;
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;

    if (!dir) {
        int e = errno;
        errbuf_set (errbuf, errlen, "%s: %s", path, strerror (e));
        errno = e;
        return -1;
    }
    while ((de = readdir (dir))) {
        size_t len = strlen (de->d_name);
        if (de->d_name[0] == '.' || len < 6
            || strcmp (de->d_name + len - 5, ".toml") != 0)
            continue;
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 16;
            char **nn = realloc (names, ncap * sizeof (*nn));
            if (!nn)
                goto nomem;
            names = nn;
            cap = ncap;
        }
        if (asprintf (&names[n], "%s/%s", path, de->d_name) < 0)
            goto nomem;
        n++;
    }
    closedir (dir);
    dir = NULL;
    /* An empty directory is a mistake, not an empty config: a broker
     * would run alone as rank 0 of 1. */
    if (n == 0) {
        free (names);
        errbuf_set (errbuf, errlen, "%s: no *.toml file in this directory",
                    path);
        errno = ENOENT;
        return -1;
    }
    qsort (names, n, sizeof (*names), cmp_names);
    for (size_t i = 0; i < n && rc == 0; i++) {
        struct stat sb;
        if (stat (names[i], &sb) == 0 && !S_ISREG (sb.st_mode))
            continue;
        rc = load_file (stage, origins, names[i], errbuf, errlen);
    }
    for (size_t i = 0; i < n; i++)
        free (names[i]);
    free (names);
    return rc;
nomem:
    if (dir)
        closedir (dir);
    for (size_t i = 0; i < n; i++)
        free (names[i]);
    free (names);
    errbuf_set (errbuf, errlen, "%s: out of memory", path);
    errno = ENOMEM;
    return -1;
}

json_t *conf_create (void)
{
    json_t *o = json_object ();
    if (!o)
        errno = ENOMEM;
    return o;
}

/* Common tail of the loaders: conflict check, then merge. */
static int commit_stage (json_t *conf, json_t *stage, json_t *origins,
                         char *errbuf, size_t errlen)
{
    if (check_conflicts (conf, origins, errbuf, errlen) < 0)
        return -1;
    if (merge_stage (conf, stage, origins) < 0) {
        errbuf_set (errbuf, errlen, "out of memory");
        errno = ENOMEM;
        return -1;
    }
    return 0;
}

int conf_load (json_t *conf, const char *path, char *errbuf, size_t errlen)
{
    struct stat sb;
    json_t *stage, *origins;
    int rc;

    if (!conf || !path)
        return errbuf_fail (errbuf, errlen, EINVAL, "invalid argument");
    if (stat (path, &sb) < 0) {
        int e = errno;
        errbuf_set (errbuf, errlen, "%s: %s", path, strerror (e));
        errno = e;
        return -1;
    }
    stage = json_object ();
    origins = json_object ();
    if (!stage || !origins) {
        json_decref (stage);
        json_decref (origins);
        errbuf_set (errbuf, errlen, "out of memory");
        errno = ENOMEM;
        return -1;
    }
    if (S_ISDIR (sb.st_mode))
        rc = load_dir (stage, origins, path, errbuf, errlen);
    else
        rc = load_file (stage, origins, path, errbuf, errlen);
    if (rc == 0)
        rc = commit_stage (conf, stage, origins, errbuf, errlen);
    int e = errno;
    json_decref (stage);
    json_decref (origins);
    errno = e;
    return rc;
}

int conf_load_string (json_t *conf, const char *name, const char *text,
                      char *errbuf, size_t errlen)
{
    struct toml_error te;
    json_t *doc, *stage = NULL, *origins = NULL;
    int rc = -1, e;

    if (!conf || !text)
        return errbuf_fail (errbuf, errlen, EINVAL, "invalid argument");
    if (!name)
        name = "(string)";
    if (!(doc = toml_parse (text, strlen (text), &te)))
        return syntax_error (name, &te, errno, errbuf, errlen);
    if (!(stage = json_object ()) || !(origins = json_object ())) {
        errbuf_set (errbuf, errlen, "out of memory");
        errno = ENOMEM;
        goto done;
    }
    if ((rc = load_doc (stage, origins, doc, name, errbuf, errlen)) == 0)
        rc = commit_stage (conf, stage, origins, errbuf, errlen);
done:
    e = errno;
    json_decref (doc);
    json_decref (stage);
    json_decref (origins);
    errno = e;
    return rc;
}

/* The TOML value of an override, or the text as a string. */
static json_t *override_value (const char *text)
{
    char *doc;
    json_t *o, *v = NULL;
    if (asprintf (&doc, "v = %s\n", text) < 0)
        return NULL;
    o = toml_parse (doc, strlen (doc), NULL);
    free (doc);
    if (o && json_object_size (o) == 1 && (v = json_object_get (o, "v")))
        json_incref (v);
    json_decref (o);
    if (!v)
        v = json_string (text);
    return v;
}

int conf_set (json_t *conf, const char *keyval, char *errbuf, size_t errlen)
{
    const char *eq, *dot;
    char table[64], name[256];
    json_t *v, *doc = NULL, *t, *corig;
    const struct keydef *d;
    size_t tlen;
    int rc = -1;

    if (!conf || !keyval)
        return errbuf_fail (errbuf, errlen, EINVAL, "invalid argument");
    snprintf (name, sizeof (name), "-o %s", keyval);
    if (!(eq = strchr (keyval, '=')))
        return errbuf_fail (errbuf, errlen, EINVAL, "%s: expected key=value",
                            name);
    dot = memchr (keyval, '.', (size_t)(eq - keyval));
    tlen = dot ? (size_t)(dot - keyval) : 0;
    if (!dot || tlen >= sizeof (table))
        return errbuf_fail (errbuf, errlen, EINVAL, "%s: key '%.*s': unknown "
                            "key", name, (int)(eq - keyval), keyval);
    memcpy (table, keyval, tlen);
    table[tlen] = '\0';
    {
        char key[128];
        size_t klen = (size_t)(eq - dot - 1);
        if (klen >= sizeof (key))
            klen = sizeof (key) - 1;
        memcpy (key, dot + 1, klen);
        key[klen] = '\0';
        if (!(d = find_key (table, key)))
            return errbuf_fail (errbuf, errlen, EINVAL, "%s: key '%.*s': "
                                "unknown key", name, (int)(eq - keyval),
                                keyval);
    }
    if (!(v = override_value (eq + 1)))
        goto nomem;
    if (check_value (d, v, name, errbuf, errlen) < 0) {
        json_decref (v);
        return -1;
    }
    if (!(t = json_object_get (conf, d->table))) {
        if (!(t = json_object ()) || json_object_set_new (conf, d->table,
                                                          t) < 0) {
            json_decref (v);
            goto nomem;
        }
    }
    if (json_object_set_new (t, d->name, v) < 0)
        goto nomem;
    if (!(corig = json_object_get (conf, ORIGIN))) {
        if (!(corig = json_object ()) || json_object_set_new (conf, ORIGIN,
                                                              corig) < 0)
            goto nomem;
    }
    {
        char full[128];
        snprintf (full, sizeof (full), "%s.%s", d->table, d->name);
        if (json_object_set_new (corig, full, json_string (name)) < 0)
            goto nomem;
    }
    rc = 0;
    json_decref (doc);
    return rc;
nomem:
    json_decref (doc);
    errbuf_set (errbuf, errlen, "%s: out of memory", name);
    errno = ENOMEM;
    return -1;
}

/* Who set 'full' (for finalize errors), or "config". */
static const char *origin_of (json_t *conf, const char *full)
{
    json_t *o = json_object_get (json_object_get (conf, ORIGIN), full);
    return o ? json_string_value (o) : NULL;
}

static int set_default (json_t *t, const struct keydef *d)
{
    json_t *v;
    if (json_object_get (t, d->name) || d->type == K_HOSTS)
        return 0;
    switch (d->type) {
        case K_STRING:
        case K_DURATION:
            v = json_string (d->defstr);
            break;
        case K_INT:
            v = json_integer (d->defint);
            break;
        case K_BOOL:
            v = json_boolean (d->defint);
            break;
        case K_STRLIST:
            v = json_array ();
            break;
        default:
            return 0;
    }
    return json_object_set_new (t, d->name, v);
}

/* A request waiting for a rank's rejoin must still be answered before its
 * client gives up: overlay.rejoin_wait below broker.rpc_timeout. */
static int check_rejoin_wait (json_t *conf, char *errbuf, size_t errlen)
{
    double wait, rpc;
    const char *who;
    char rpcbuf[64];

    if (conf_get_duration (conf, "overlay.rejoin_wait", &wait) < 0
        || conf_get_duration (conf, "broker.rpc_timeout", &rpc) < 0)
        return errbuf_fail (errbuf, errlen, EINVAL, "config: invalid "
                            "overlay.rejoin_wait or broker.rpc_timeout");
    if (wait < rpc)
        return 0;
    if (!(who = origin_of (conf, "overlay.rejoin_wait")))
        who = origin_of (conf, "broker.rpc_timeout");
    if (fsd_format_duration (rpcbuf, sizeof (rpcbuf), rpc) < 0)
        snprintf (rpcbuf, sizeof (rpcbuf), "%g", rpc);
    return errbuf_fail (errbuf, errlen, EINVAL, "%s: key "
                        "'overlay.rejoin_wait': must be less than "
                        "broker.rpc_timeout (%s)", who ? who : "config",
                        rpcbuf);
}

/* peer_timeout <= keepalive_interval: blame the key the user set (the
 * timeout, if both were), naming the other's value. */
static int order_error (json_t *conf, double ka, double pt, char *errbuf,
                        size_t errlen)
{
    const char *who = origin_of (conf, "overlay.peer_timeout");
    bool blame_timeout = who != NULL;
    char other[64];

    if (!who)
        who = origin_of (conf, "overlay.keepalive_interval");
    if (fsd_format_duration (other, sizeof (other),
                             blame_timeout ? ka : pt) < 0)
        snprintf (other, sizeof (other), "%g", blame_timeout ? ka : pt);
    if (blame_timeout)
        return errbuf_fail (errbuf, errlen, EINVAL, "%s: key "
                            "'overlay.peer_timeout': must be greater than "
                            "overlay.keepalive_interval (%s)",
                            who ? who : "config", other);
    return errbuf_fail (errbuf, errlen, EINVAL, "%s: key "
                        "'overlay.keepalive_interval': must be less than "
                        "overlay.peer_timeout (%s)", who ? who : "config",
                        other);
}

int conf_finalize (json_t *conf, char *errbuf, size_t errlen)
{
    double ka, pt;
    json_t *boot, *hosts, *h;
    size_t i;

    if (!conf)
        return errbuf_fail (errbuf, errlen, EINVAL, "invalid argument");
    for (size_t k = 0; k < NKEYS; k++) {
        json_t *t = json_object_get (conf, schema[k].table);
        if (!t) {
            if (!(t = json_object ())
                || json_object_set_new (conf, schema[k].table, t) < 0)
                goto nomem;
        }
        if (set_default (t, &schema[k]) < 0)
            goto nomem;
    }
    if (conf_get_duration (conf, "overlay.keepalive_interval", &ka) < 0
        || conf_get_duration (conf, "overlay.peer_timeout", &pt) < 0)
        return errbuf_fail (errbuf, errlen, EINVAL, "config: invalid overlay "
                            "durations");
    if (!(pt > ka))
        return order_error (conf, ka, pt, errbuf, errlen);
    if (check_rejoin_wait (conf, errbuf, errlen) < 0)
        return -1;
    boot = json_object_get (conf, "bootstrap");
    hosts = json_object_get (boot, "hosts");
    json_array_foreach (hosts, i, h) {
        static const char *const keys[] = { "bind", "connect", "port" };
        static const char *const defs[] = { "default_bind", "default_connect",
                                            "default_port" };
        for (int k = 0; k < 3; k++) {
            if (!json_object_get (h, keys[k])
                && json_object_set (h, keys[k],
                                    json_object_get (boot, defs[k])) < 0)
                goto nomem;
        }
    }
    json_object_del (conf, ORIGIN);
    return 0;
nomem:
    errbuf_set (errbuf, errlen, "out of memory");
    errno = ENOMEM;
    return -1;
}

/* Walk a dotted key "table.key" to its value. */
static json_t *lookup (json_t *conf, const char *key)
{
    const char *dot;
    char table[64];
    json_t *t;
    if (!conf || !key || !(dot = strchr (key, '.'))
        || (size_t)(dot - key) >= sizeof (table))
        return NULL;
    memcpy (table, key, (size_t)(dot - key));
    table[dot - key] = '\0';
    if (!(t = json_object_get (conf, table)) || !json_is_object (t))
        return NULL;
    return json_object_get (t, dot + 1);
}

int conf_get_string (json_t *conf, const char *key, const char **val)
{
    json_t *v = lookup (conf, key);
    if (!v) {
        errno = ENOENT;
        return -1;
    }
    if (!json_is_string (v)) {
        errno = EINVAL;
        return -1;
    }
    if (val)
        *val = json_string_value (v);
    return 0;
}

int conf_get_int (json_t *conf, const char *key, long long *val)
{
    json_t *v = lookup (conf, key);
    if (!v) {
        errno = ENOENT;
        return -1;
    }
    if (!json_is_integer (v)) {
        errno = EINVAL;
        return -1;
    }
    if (val)
        *val = json_integer_value (v);
    return 0;
}

int conf_get_bool (json_t *conf, const char *key, int *val)
{
    json_t *v = lookup (conf, key);
    if (!v) {
        errno = ENOENT;
        return -1;
    }
    if (!json_is_boolean (v)) {
        errno = EINVAL;
        return -1;
    }
    if (val)
        *val = json_is_true (v);
    return 0;
}

int conf_get_duration (json_t *conf, const char *key, double *seconds)
{
    json_t *v = lookup (conf, key);
    double d;
    if (!v) {
        errno = ENOENT;
        return -1;
    }
    if (duration_value (v, &d) < 0) {
        errno = EINVAL;
        return -1;
    }
    if (seconds)
        *seconds = d;
    return 0;
}

/* vi:ts=4 sw=4 expandtab
 */

struct hostlist *conf_bootstrap_hosts (json_t *conf, char *errbuf,
                                       size_t errlen)
{
    json_t *hosts = lookup (conf, "bootstrap.hosts"), *e;
    hostlist_t *hl;
    char err[256];
    size_t i;

    if (!json_is_array (hosts)) {
        errbuf_set (errbuf, errlen, "no bootstrap.hosts");
        errno = ENOENT;
        return NULL;
    }
    if (!(hl = hostlist_create ()))
        return NULL;
    json_array_foreach (hosts, i, e) {
        const char *spec = json_string_value (json_object_get (e, "host"));
        if (!spec || hostlist_append (hl, spec, err, sizeof (err)) < 0) {
            errbuf_set (errbuf, errlen, "bootstrap.hosts[%zu]: %s", i,
                        spec ? err : "no host");
            hostlist_destroy (&hl);
            errno = EINVAL;
            return NULL;
        }
    }
    return hl;
}

int conf_expand_template (const char *tmpl, const char *host, int port,
                          char *out, size_t len)
{
    size_t o = 0;
    char portstr[16];

    snprintf (portstr, sizeof (portstr), "%d", port);
    for (const char *p = tmpl; *p; p++) {
        const char *ins = NULL;
        size_t l = 1;
        if (p[0] == '%' && p[1] == 'h')
            ins = host;
        else if (p[0] == '%' && p[1] == 'p')
            ins = portstr;
        if (ins)
            l = strlen (ins);
        if (o + l >= len) {
            errno = EOVERFLOW;
            return -1;
        }
        if (ins) {
            memcpy (out + o, ins, l);
            p++;
        }
        else
            out[o] = *p;
        o += l;
    }
    out[o] = '\0';
    return 0;
}

static int check_port (const char *port, char *errbuf, size_t errlen,
                       const char *uri)
{
    long v;

    if (!strcmp (port, "*"))
        return 0;
    if (parse_uint (port, &v) < 0 || v < 1 || v > 65535)
        return errbuf_fail (errbuf, errlen, EINVAL, "%s: the port '%s' is not "
                            "1..65535 or *", uri, port);
    return 0;
}

int conf_check_endpoint (const char *uri, char *errbuf, size_t errlen)
{
    const char *rest, *colon;
    char host[256];

    if (!uri || !*uri)
        return errbuf_fail (errbuf, errlen, EINVAL, "the endpoint is empty");
    if (!strncmp (uri, "ipc://", 6))
        return uri[6] ? 0 : errbuf_fail (errbuf, errlen, EINVAL, "%s: no path",
                                         uri);
    if (strncmp (uri, "tcp://", 6))
        return errbuf_fail (errbuf, errlen, EINVAL, "%s: not tcp://HOST:PORT "
                            "or ipc://PATH", uri);
    rest = uri + 6;
    if (*rest == '[') {
        const char *end = strchr (rest, ']');
        if (!end || end[1] != ':')
            return errbuf_fail (errbuf, errlen, EINVAL, "%s: an IPv6 address "
                                "needs [ADDR]:PORT", uri);
        return check_port (end + 2, errbuf, errlen, uri);
    }
    if (!(colon = strrchr (rest, ':')) || colon == rest)
        return errbuf_fail (errbuf, errlen, EINVAL, "%s: no HOST:PORT after "
                            "tcp://", uri);
    if ((size_t)(colon - rest) >= sizeof (host))
        return errbuf_fail (errbuf, errlen, EINVAL, "%s: the host is too long",
                            uri);
    memcpy (host, rest, (size_t)(colon - rest));
    host[colon - rest] = '\0';
    if (strchr (host, ':') || strpbrk (host, " /%"))
        return errbuf_fail (errbuf, errlen, EINVAL, "%s: '%s' is not a host, "
                            "an address or an interface", uri, host);
    return check_port (colon + 1, errbuf, errlen, uri);
}
