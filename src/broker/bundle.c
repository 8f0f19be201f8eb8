/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* bundle.c: a rank's bootstrap values, parsed once (bundle.h).
 *
 * The bundles a broker reads are written by json_dumps in other brokers
 * of the same build: plain ASCII, no escapes.  Those are parsed here in
 * one pass over a copy of the text, which the table then points into.
 * Anything else (an escape, a byte past ASCII) is handed to jansson, so
 * the rules of JSON and UTF-8 are jansson's and not re-implemented; the
 * fast path only ever accepts text jansson would read the same way.  A
 * key named twice is refused by both (which value would be meant?).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "bundle.h"

struct bundle {
    int n;                  /* pairs */
    const char *kv[];       /* key, value, key, value...; the text after */
};

/* Text the fast path may take: printable ASCII and JSON's white space,
 * no backslash. */
static bool plain (const char *s, size_t *quotes)
{
    size_t q = 0;

    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"')
            q++;
        else if (*p == '\\' || *p > 0x7e
                 || (*p < 0x20 && *p != ' ' && *p != '\t' && *p != '\n'
                     && *p != '\r'))
            return false;
    }
    *quotes = q;
    return true;
}

static char *skip_ws (char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    return p;
}

/* A string at p (which must be '"'): NUL-terminated in place; *end past
 * its closing quote.  NULL if p is no string (JSON allows no raw control
 * character in one, white space included). */
static const char *take_string (char *p, char **end)
{
    char *q;

    if (*p != '"')
        return NULL;
    for (q = p + 1; *q != '"'; q++)
        if ((unsigned char)*q < 0x20)     /* the NUL at the end too */
            return NULL;
    *q = '\0';
    *end = q + 1;
    return p + 1;
}

static struct bundle *alloc_bundle (size_t pairs, size_t textlen,
                                    char **text)
{
    size_t head = sizeof (struct bundle) + 2 * pairs * sizeof (char *);
    struct bundle *b = malloc (head + textlen + 1);

    if (!b)
        return NULL;
    b->n = 0;
    *text = (char *)b + head;
    return b;
}

static struct bundle *fail (struct bundle *b, int errnum)
{
    free (b);
    errno = errnum;
    return NULL;
}

static struct bundle *parse_plain (const char *text, size_t quotes)
{
    size_t len = strlen (text);
    char *p;
    struct bundle *b = alloc_bundle (quotes / 4, len, &p);

    if (!b)
        return fail (NULL, ENOMEM);
    memcpy (p, text, len + 1);
    p = skip_ws (p);
    if (*p++ != '{')
        return fail (b, EPROTO);
    p = skip_ws (p);
    if (*p == '}')
        p++;
    else {
        for (;;) {
            const char *k, *v;
            if (!(k = take_string (p, &p)))
                return fail (b, EPROTO);
            p = skip_ws (p);
            if (*p++ != ':')
                return fail (b, EPROTO);
            if (!(v = take_string (skip_ws (p), &p)))
                return fail (b, EPROTO);
            if ((size_t)b->n >= quotes / 4    /* cannot be: 4 quotes each */
                || bundle_value (b, k))
                return fail (b, EPROTO);
            b->kv[2 * b->n] = k;
            b->kv[2 * b->n + 1] = v;
            b->n++;
            p = skip_ws (p);
            if (*p == '}') {
                p++;
                break;
            }
            if (*p++ != ',')
                return fail (b, EPROTO);
            p = skip_ws (p);
        }
    }
    if (*skip_ws (p) != '\0')
        return fail (b, EPROTO);
    return b;
}

static struct bundle *parse_json (const char *text)
{
    json_t *o = json_loads (text, JSON_REJECT_DUPLICATES, NULL), *v;
    const char *key;
    size_t pairs = 0, bytes = 0;
    struct bundle *b;
    char *p;

    if (!json_is_object (o)) {
        json_decref (o);
        return fail (NULL, EPROTO);
    }
    json_object_foreach (o, key, v) {
        if (!json_is_string (v)) {
            json_decref (o);
            return fail (NULL, EPROTO);
        }
        pairs++;
        bytes += strlen (key) + json_string_length (v) + 2;
    }
    if (!(b = alloc_bundle (pairs, bytes, &p))) {
        json_decref (o);
        return fail (NULL, ENOMEM);
    }
    json_object_foreach (o, key, v) {
        size_t kl = strlen (key), vl = json_string_length (v);
        memcpy (p, key, kl + 1);
        b->kv[2 * b->n] = p;
        p += kl + 1;
        memcpy (p, json_string_value (v), vl + 1);
        b->kv[2 * b->n + 1] = p;
        p += vl + 1;
        b->n++;
    }
    json_decref (o);
    return b;
}

struct bundle *bundle_parse (const char *text)
{
    size_t quotes;

    if (!text)
        return fail (NULL, EPROTO);
    if (plain (text, &quotes))
        return parse_plain (text, quotes);
    return parse_json (text);
}

const char *bundle_value (const struct bundle *b, const char *key)
{
    if (!b || !key)
        return NULL;
    for (int i = 0; i < b->n; i++)
        if (!strcmp (b->kv[2 * i], key))
            return b->kv[2 * i + 1];
    return NULL;
}

int bundle_count (const struct bundle *b)
{
    return b ? b->n : 0;
}

void bundle_destroy (struct bundle **bp)
{
    if (bp) {
        free (*bp);
        *bp = NULL;
    }
}
