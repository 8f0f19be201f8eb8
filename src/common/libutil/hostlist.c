/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* hostlist.c: host name lists with bracket ranges (see hostlist.h).
 *
 * A list is a growable array of strdup'd names.  Decoding splits the
 * string at top-level commas and expands each item recursively, one
 * bracket group at a time, into a scratch list that is appended to the
 * target only when the whole string parsed.  Encoding walks the list once
 * and merges neighbours that share a prefix and a trailing number.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errbuf.h"
#include "hostlist.h"

#define MAX_DIGITS 9

struct hostlist {
    char **hosts;
    int count;
    int cap;
};

hostlist_t *hostlist_create (void)
{
    hostlist_t *hl = calloc (1, sizeof (*hl));
    if (!hl)
        errno = ENOMEM;
    return hl;
}

void hostlist_destroy (hostlist_t **p)
{
    if (p && *p) {
        for (int i = 0; i < (*p)->count; i++)
            free ((*p)->hosts[i]);
        free ((*p)->hosts);
        free (*p);
        *p = NULL;
    }
}

/* Append a copy of name[0..len).  -1 + E2BIG/ENOMEM. */
static int push (hostlist_t *hl, const char *name, size_t len)
{
    char *s;

    if (hl->count >= HOSTLIST_MAX_HOSTS) {
        errno = E2BIG;
        return -1;
    }
    if (hl->count == hl->cap) {
        int cap = hl->cap ? hl->cap * 2 : 16;
        char **h = realloc (hl->hosts, (size_t)cap * sizeof (*h));
        if (!h) {
            errno = ENOMEM;
            return -1;
        }
        hl->hosts = h;
        hl->cap = cap;
    }
    if (!(s = malloc (len + 1))) {
        errno = ENOMEM;
        return -1;
    }
    memcpy (s, name, len);
    s[len] = '\0';
    hl->hosts[hl->count++] = s;
    return 0;
}

static bool bad_char (int c)
{
    return c <= ' ' || c == 0x7f;
}

int hostlist_append_host (hostlist_t *hl, const char *host)
{
    if (!hl || !host || !*host) {
        errno = EINVAL;
        return -1;
    }
    for (const char *p = host; *p; p++)
        if (bad_char ((unsigned char)*p) || *p == ',' || *p == '['
            || *p == ']') {
            errno = EINVAL;
            return -1;
        }
    return push (hl, host, strlen (host));
}

int hostlist_count (const hostlist_t *hl)
{
    return hl ? hl->count : 0;
}

const char *hostlist_nth (const hostlist_t *hl, int n)
{
    if (!hl || n < 0 || n >= hl->count) {
        errno = EINVAL;
        return NULL;
    }
    return hl->hosts[n];
}

int hostlist_find (const hostlist_t *hl, const char *host)
{
    if (hl && host) {
        for (int i = 0; i < hl->count; i++)
            if (!strcmp (hl->hosts[i], host))
                return i;
    }
    errno = ENOENT;
    return -1;
}

/* Decoding */

struct range {
    unsigned long lo, hi;
    int width;
};

struct ctx {
    const char *item;       /* for messages */
    size_t itemlen;
    char *errbuf;
    size_t errlen;
    hostlist_t *out;
    char *name;             /* scratch: the name being built */
    size_t namecap;
};

static int item_err (struct ctx *c, int errnum, const char *what)
{
    errbuf_set (c->errbuf, c->errlen, "hostlist item '%.*s': %s",
                (int)c->itemlen, c->item, what);
    errno = errnum;
    return -1;
}

/* Parse "1-3,7,01-04" (len bytes at g) into ranges; returns the number of
 * ranges, or -1.  *rp is malloc'd.
 */
static int parse_group (struct ctx *c, const char *g, size_t len,
                        struct range **rp)
{
    struct range *r = NULL;
    int n = 0, cap = 0;
    const char *p = g, *end = g + len;

    if (len == 0)
        return item_err (c, EINVAL, "empty bracket group");
    for (;;) {
        struct range x;
        const char *q = p;
        unsigned long v = 0;
        while (q < end && *q >= '0' && *q <= '9')
            v = v * 10 + (unsigned long)(*q++ - '0');
        if (q == p) {
            free (r);
            return item_err (c, EINVAL, q < end && *q == ','
                                        ? "empty element in bracket group"
                                        : q == end ? "missing number in"
                                                     " bracket group"
                                        : "non-digit in bracket group");
        }
        if (q - p > MAX_DIGITS) {
            free (r);
            return item_err (c, EINVAL, "number with more than 9 digits");
        }
        x.lo = x.hi = v;
        x.width = (int)(q - p);
        p = q;
        if (p < end && *p == '-') {
            p++;
            q = p;
            v = 0;
            while (q < end && *q >= '0' && *q <= '9')
                v = v * 10 + (unsigned long)(*q++ - '0');
            if (q == p) {
                free (r);
                return item_err (c, EINVAL, "range without an upper bound");
            }
            if (q - p > MAX_DIGITS) {
                free (r);
                return item_err (c, EINVAL, "number with more than 9 digits");
            }
            x.hi = v;
            p = q;
            if (x.hi < x.lo) {
                free (r);
                return item_err (c, EINVAL, "reversed range");
            }
            if (x.hi - x.lo >= HOSTLIST_MAX_HOSTS) {
                free (r);
                return item_err (c, E2BIG, "range too large");
            }
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 4;
            struct range *nr = realloc (r, (size_t)cap * sizeof (*nr));
            if (!nr) {
                free (r);
                errno = ENOMEM;
                return -1;
            }
            r = nr;
        }
        r[n++] = x;
        if (p == end)
            break;
        if (*p != ',') {
            free (r);
            return item_err (c, EINVAL, "non-digit in bracket group");
        }
        p++;
        if (p == end) {
            free (r);
            return item_err (c, EINVAL, "empty element in bracket group");
        }
    }
    *rp = r;
    return n;
}

static int name_reserve (struct ctx *c, size_t need)
{
    if (need <= c->namecap)
        return 0;
    size_t cap = c->namecap ? c->namecap : 64;
    while (cap < need)
        cap *= 2;
    char *s = realloc (c->name, cap);
    if (!s) {
        errno = ENOMEM;
        return -1;
    }
    c->name = s;
    c->namecap = cap;
    return 0;
}

/* name[0..nlen) is built; expand the rest of the item, rest[0..rlen). */
static int expand (struct ctx *c, size_t nlen, const char *rest, size_t rlen)
{
    const char *open = memchr (rest, '[', rlen);
    size_t lit = open ? (size_t)(open - rest) : rlen;
    struct range *r;
    int nr;

    if (name_reserve (c, nlen + lit + MAX_DIGITS + 2) < 0)
        return -1;
    memcpy (c->name + nlen, rest, lit);
    nlen += lit;
    if (!open) {
        if (nlen == 0)
            return item_err (c, EINVAL, "empty host name");
        return push (c->out, c->name, nlen);
    }
    const char *g = open + 1;
    const char *close = memchr (g, ']', rlen - lit - 1);
    if (!close)
        return item_err (c, EINVAL, "missing ']'");
    if (memchr (g, '[', (size_t)(close - g)))
        return item_err (c, EINVAL, "nested '['");
    if ((nr = parse_group (c, g, (size_t)(close - g), &r)) < 0)
        return -1;
    const char *after = close + 1;
    size_t alen = rlen - (size_t)(after - rest);
    for (int i = 0; i < nr; i++) {
        for (unsigned long v = r[i].lo; v <= r[i].hi; v++) {
            if (name_reserve (c, nlen + MAX_DIGITS + 2) < 0) {
                free (r);
                return -1;
            }
            int n = snprintf (c->name + nlen, MAX_DIGITS + 2, "%0*lu",
                              r[i].width, v);
            if (expand (c, nlen + (size_t)n, after, alen) < 0) {
                free (r);
                return -1;
            }
        }
    }
    free (r);
    return 0;
}

int hostlist_append (hostlist_t *hl, const char *s,
                     char *errbuf, size_t errlen)
{
    struct ctx c = { .errbuf = errbuf, .errlen = errlen };
    const char *p, *start;
    int depth = 0;

    if (!hl || !s) {
        errbuf_set (errbuf, errlen, "hostlist: NULL argument");
        errno = EINVAL;
        return -1;
    }
    if (*s == '\0')
        return 0;
    for (p = s; *p; p++) {
        if (bad_char ((unsigned char)*p)) {
            errbuf_set (errbuf, errlen,
                        "hostlist '%s': whitespace or control character at"
                        " position %td", s, p - s + 1);
            errno = EINVAL;
            return -1;
        }
    }
    if (!(c.out = hostlist_create ()))
        return -1;
    start = s;
    for (p = s;; p++) {
        if (*p == '[') {
            depth++;
        }
        else if (*p == ']') {
            if (--depth < 0) {
                errbuf_set (errbuf, errlen, "hostlist '%s': unmatched ']' at"
                            " position %td", s, p - s + 1);
                errno = EINVAL;
                goto error;
            }
        }
        else if ((*p == ',' && depth == 0) || *p == '\0') {
            if (*p == '\0' && depth > 0) {
                errbuf_set (errbuf, errlen, "hostlist '%s': missing ']'", s);
                errno = EINVAL;
                goto error;
            }
            c.item = start;
            c.itemlen = (size_t)(p - start);
            if (c.itemlen == 0) {
                errbuf_set (errbuf, errlen, "hostlist '%s': empty item at"
                            " position %td", s, p - s + 1);
                errno = EINVAL;
                goto error;
            }
            if (expand (&c, 0, start, c.itemlen) < 0)
                goto error;
            if (*p == '\0')
                break;
            start = p + 1;
        }
    }
    if (hl->count + c.out->count > HOSTLIST_MAX_HOSTS) {
        errbuf_set (errbuf, errlen, "hostlist: more than %d hosts",
                    HOSTLIST_MAX_HOSTS);
        errno = E2BIG;
        goto error;
    }
    /* Move the names over; reserve first so this cannot fail halfway. */
    if (hl->cap < hl->count + c.out->count) {
        int cap = hl->count + c.out->count;
        char **h = realloc (hl->hosts, (size_t)cap * sizeof (*h));
        if (!h) {
            errno = ENOMEM;
            goto error;
        }
        hl->hosts = h;
        hl->cap = cap;
    }
    memcpy (hl->hosts + hl->count, c.out->hosts,
            (size_t)c.out->count * sizeof (char *));
    hl->count += c.out->count;
    c.out->count = 0;
    hostlist_destroy (&c.out);
    free (c.name);
    return 0;
error:
    if (errno == ENOMEM)
        errbuf_set (errbuf, errlen, "hostlist: out of memory");
    else if (errno == E2BIG && c.out->count >= HOSTLIST_MAX_HOSTS)
        errbuf_set (errbuf, errlen, "hostlist: more than %d hosts",
                    HOSTLIST_MAX_HOSTS);
    {
        int saved = errno;
        hostlist_destroy (&c.out);
        free (c.name);
        errno = saved;
    }
    return -1;
}

hostlist_t *hostlist_decode (const char *s, char *errbuf, size_t errlen)
{
    hostlist_t *hl = hostlist_create ();

    if (!hl) {
        errbuf_set (errbuf, errlen, "hostlist: out of memory");
        return NULL;
    }
    if (hostlist_append (hl, s, errbuf, errlen) < 0) {
        int saved = errno;
        hostlist_destroy (&hl);
        errno = saved;
        return NULL;
    }
    return hl;
}

/* Encoding */

/* Split host into prefix length and trailing number.  Returns false if
 * it has no trailing number of 1..MAX_DIGITS digits.
 */
static bool split (const char *host, size_t *plen, unsigned long *num,
                   int *ndig)
{
    size_t len = strlen (host);
    size_t i = len;

    while (i > 0 && host[i - 1] >= '0' && host[i - 1] <= '9')
        i--;
    if (i == len || len - i > MAX_DIGITS)
        return false;
    *plen = i;
    *ndig = (int)(len - i);
    *num = strtoul (host + i, NULL, 10);
    return true;
}

struct buf {
    char *data;
    size_t len, cap;
};

static int buf_add (struct buf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *d = realloc (b->data, cap);
        if (!d) {
            errno = ENOMEM;
            return -1;
        }
        b->data = d;
        b->cap = cap;
    }
    memcpy (b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
    return 0;
}

static int buf_str (struct buf *b, const char *s)
{
    return buf_add (b, s, strlen (s));
}

/* Does host have prefix p[0..plen) and a trailing number? */
static bool same_prefix (const char *host, const char *p, size_t plen,
                         unsigned long *num, int *ndig)
{
    size_t hp;
    return split (host, &hp, num, ndig) && hp == plen
        && !strncmp (host, p, plen);
}

char *hostlist_encode (const hostlist_t *hl)
{
    struct buf b = { 0 };
    char tmp[2 * (MAX_DIGITS + 2) + 2];
    int i = 0;

    if (!hl) {
        errno = EINVAL;
        return NULL;
    }
    if (buf_str (&b, "") < 0)
        return NULL;
    while (i < hl->count) {
        const char *h = hl->hosts[i];
        size_t plen;
        unsigned long num;
        int ndig;

        if (b.len > 0 && buf_str (&b, ",") < 0)
            goto error;
        if (!split (h, &plen, &num, &ndig)) {
            if (buf_str (&b, h) < 0)
                goto error;
            i++;
            continue;
        }
        /* Collect ranges of hosts with this prefix, while neighbours. */
        struct buf g = { 0 };
        int nranges = 0, nhosts = 0;
        unsigned long n2;
        int d2;
        while (i < hl->count && same_prefix (hl->hosts[i], h, plen, &n2, &d2)) {
            unsigned long lo = n2, hi = n2;
            int width = d2;
            const char *last = hl->hosts[i];
            i++;
            nhosts++;
            while (i < hl->count
                   && same_prefix (hl->hosts[i], h, plen, &n2, &d2)
                   && n2 == hi + 1) {
                char want[MAX_DIGITS + 2];
                snprintf (want, sizeof (want), "%0*lu", width, n2);
                if (strcmp (want, hl->hosts[i] + plen) != 0)
                    break;
                hi = n2;
                last = hl->hosts[i];
                i++;
                nhosts++;
            }
            if (lo == hi)
                snprintf (tmp, sizeof (tmp), "%s%0*lu", nranges ? "," : "",
                          width, lo);
            else
                snprintf (tmp, sizeof (tmp), "%s%0*lu-%s",
                          nranges ? "," : "", width, lo, last + plen);
            nranges++;
            if (buf_str (&g, tmp) < 0) {
                free (g.data);
                goto error;
            }
        }
        int rc;
        if (nhosts == 1)
            rc = buf_add (&b, h, plen) < 0 || buf_str (&b, g.data) < 0;
        else
            rc = buf_add (&b, h, plen) < 0 || buf_str (&b, "[") < 0
                 || buf_str (&b, g.data) < 0 || buf_str (&b, "]") < 0;
        free (g.data);
        if (rc)
            goto error;
    }
    return b.data;
error:
    free (b.data);
    errno = ENOMEM;
    return NULL;
}
