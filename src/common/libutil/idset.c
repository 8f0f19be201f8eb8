/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* idset.c: growable-bitmap id sets (see idset.h).
 *
 * Bit i lives in words[i / 64], bit i % 64.  nwords grows by doubling
 * when an id beyond the end is set; clearing never shrinks.  'count' is
 * kept up to date so idset_count() is O(1).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errbuf.h"
#include "idset.h"

#define WORD_BITS 64
#define MAX_WORDS ((IDSET_ID_MAX / WORD_BITS) + 1)

struct idset {
    uint64_t *words;
    size_t nwords;
    unsigned count;
};

static int grow (idset_t *s, size_t need)
{
    size_t n = s->nwords ? s->nwords : 1;
    uint64_t *w;

    if (need <= s->nwords)
        return 0;
    while (n < need)
        n *= 2;
    if (n > MAX_WORDS)
        n = MAX_WORDS;
    if (!(w = realloc (s->words, n * sizeof (*w)))) {
        errno = ENOMEM;
        return -1;
    }
    memset (w + s->nwords, 0, (n - s->nwords) * sizeof (*w));
    s->words = w;
    s->nwords = n;
    return 0;
}

idset_t *idset_create (unsigned size_hint)
{
    idset_t *s;

    if (size_hint > IDSET_ID_MAX + 1u) {
        errno = EINVAL;
        return NULL;
    }
    if (!(s = calloc (1, sizeof (*s)))) {
        errno = ENOMEM;
        return NULL;
    }
    if (size_hint > 0
        && grow (s, (size_hint + WORD_BITS - 1) / WORD_BITS) < 0) {
        free (s);
        return NULL;
    }
    return s;
}

void idset_destroy (idset_t **p)
{
    if (p && *p) {
        free ((*p)->words);
        free (*p);
        *p = NULL;
    }
}

idset_t *idset_copy (const idset_t *s)
{
    idset_t *c;

    if (!s) {
        errno = EINVAL;
        return NULL;
    }
    if (!(c = idset_create (0)))
        return NULL;
    if (s->nwords > 0) {
        if (grow (c, s->nwords) < 0) {
            idset_destroy (&c);
            return NULL;
        }
        memcpy (c->words, s->words, s->nwords * sizeof (uint64_t));
    }
    c->count = s->count;
    return c;
}

int idset_set (idset_t *s, unsigned id)
{
    if (!s || id > IDSET_ID_MAX) {
        errno = EINVAL;
        return -1;
    }
    size_t w = id / WORD_BITS;
    uint64_t bit = (uint64_t)1 << (id % WORD_BITS);
    if (grow (s, w + 1) < 0)
        return -1;
    if (!(s->words[w] & bit)) {
        s->words[w] |= bit;
        s->count++;
    }
    return 0;
}

/* Mask of bits lo..hi (0..63) inclusive. */
static uint64_t mask (unsigned lo, unsigned hi)
{
    uint64_t m = hi == 63 ? ~(uint64_t)0 : (((uint64_t)1 << (hi + 1)) - 1);
    return m & ~(((uint64_t)1 << lo) - 1);
}

int idset_set_range (idset_t *s, unsigned lo, unsigned hi)
{
    if (!s || lo > hi || hi > IDSET_ID_MAX) {
        errno = EINVAL;
        return -1;
    }
    if (grow (s, hi / WORD_BITS + 1) < 0)
        return -1;
    for (size_t w = lo / WORD_BITS; w <= hi / WORD_BITS; w++) {
        unsigned a = (w == lo / WORD_BITS) ? lo % WORD_BITS : 0;
        unsigned b = (w == hi / WORD_BITS) ? hi % WORD_BITS : 63;
        uint64_t m = mask (a, b);
        s->count += (unsigned)__builtin_popcountll (m & ~s->words[w]);
        s->words[w] |= m;
    }
    return 0;
}

int idset_clear (idset_t *s, unsigned id)
{
    if (!s) {
        errno = EINVAL;
        return -1;
    }
    size_t w = id / WORD_BITS;
    uint64_t bit = (uint64_t)1 << (id % WORD_BITS);
    if (w < s->nwords && (s->words[w] & bit)) {
        s->words[w] &= ~bit;
        s->count--;
    }
    return 0;
}

void idset_clear_all (idset_t *s)
{
    if (s) {
        if (s->nwords)
            memset (s->words, 0, s->nwords * sizeof (uint64_t));
        s->count = 0;
    }
}

bool idset_test (const idset_t *s, unsigned id)
{
    if (!s)
        return false;
    size_t w = id / WORD_BITS;
    return w < s->nwords
        && (s->words[w] & ((uint64_t)1 << (id % WORD_BITS)));
}

unsigned idset_count (const idset_t *s)
{
    return s ? s->count : 0;
}

/* Smallest set id >= from, or -1. */
static long next_set (const idset_t *s, unsigned long from)
{
    size_t w = from / WORD_BITS;
    if (w >= s->nwords)
        return -1;
    uint64_t x = s->words[w] & ~(((uint64_t)1 << (from % WORD_BITS)) - 1);
    for (;;) {
        if (x)
            return (long)(w * WORD_BITS + (unsigned)__builtin_ctzll (x));
        if (++w >= s->nwords)
            return -1;
        x = s->words[w];
    }
}

/* Smallest clear id >= from (may be past the bitmap's end). */
static unsigned long next_clear (const idset_t *s, unsigned long from)
{
    size_t w = from / WORD_BITS;
    if (w >= s->nwords)
        return from;
    uint64_t x = ~s->words[w] & ~(((uint64_t)1 << (from % WORD_BITS)) - 1);
    for (;;) {
        if (x)
            return w * WORD_BITS + (unsigned)__builtin_ctzll (x);
        if (++w >= s->nwords)
            return w * WORD_BITS;
        x = ~s->words[w];
    }
}

int idset_first (const idset_t *s)
{
    if (!s || s->count == 0)
        return -1;
    return (int)next_set (s, 0);
}

int idset_next (const idset_t *s, int prev)
{
    if (!s || s->count == 0 || prev >= (int)IDSET_ID_MAX)
        return -1;
    if (prev < 0)
        return (int)next_set (s, 0);
    return (int)next_set (s, (unsigned long)prev + 1);
}

int idset_last (const idset_t *s)
{
    if (!s || s->count == 0)
        return -1;
    for (size_t w = s->nwords; w-- > 0;)
        if (s->words[w])
            return (int)(w * WORD_BITS + 63
                         - (unsigned)__builtin_clzll (s->words[w]));
    return -1;
}

struct buf {
    char *data;
    size_t len, cap;
};

static int buf_printf (struct buf *b, const char *fmt, ...)
{
    va_list ap;
    int n;

    for (;;) {
        size_t room = b->cap - b->len;
        va_start (ap, fmt);
        n = vsnprintf (b->data + b->len, room, fmt, ap);
        va_end (ap);
        if (n < 0)
            return -1;
        if ((size_t)n < room) {
            b->len += (size_t)n;
            return 0;
        }
        size_t cap = b->cap * 2 + (size_t)n;
        char *d = realloc (b->data, cap);
        if (!d) {
            errno = ENOMEM;
            return -1;
        }
        b->data = d;
        b->cap = cap;
    }
}

char *idset_encode (const idset_t *s, int flags)
{
    struct buf b = { .cap = 64 };
    bool brackets = (flags & IDSET_FLAG_BRACKETS) && s && s->count > 1;
    long id;

    if (!s || (flags & ~IDSET_FLAG_BRACKETS)) {
        errno = EINVAL;
        return NULL;
    }
    if (!(b.data = malloc (b.cap))) {
        errno = ENOMEM;
        return NULL;
    }
    b.data[0] = '\0';
    if (brackets && buf_printf (&b, "[") < 0)
        goto error;
    id = next_set (s, 0);
    while (id >= 0) {
        unsigned long end = next_clear (s, (unsigned long)id) - 1;
        int rc;
        if (end == (unsigned long)id)
            rc = buf_printf (&b, "%s%ld", b.len > (size_t)brackets ? "," : "", id);
        else
            rc = buf_printf (&b, "%s%ld-%lu",
                             b.len > (size_t)brackets ? "," : "",
                             id, end);
        if (rc < 0)
            goto error;
        id = next_set (s, end + 1);
    }
    if (brackets && buf_printf (&b, "]") < 0)
        goto error;
    return b.data;
error:
    free (b.data);
    return NULL;
}

/* Parse a decimal id at *p, advancing *p.  -1 on error (message set). */
static int parse_id (const char *str, const char **p, unsigned *id,
                     char *errbuf, size_t errlen)
{
    const char *q = *p;
    unsigned long v = 0;

    if (*q < '0' || *q > '9') {
        if (*q == '\0')
            errbuf_set (errbuf, errlen, "idset '%s': missing id at end", str);
        else
            errbuf_set (errbuf, errlen, "idset '%s': expected a digit at "
                        "position %td, got '%c'", str, q - str + 1, *q);
        return -1;
    }
    while (*q >= '0' && *q <= '9') {
        v = v * 10 + (unsigned long)(*q - '0');
        if (v > IDSET_ID_MAX) {
            errbuf_set (errbuf, errlen,
                        "idset '%s': id at position %td exceeds the limit %u",
                        str, *p - str + 1, IDSET_ID_MAX);
            return -1;
        }
        q++;
    }
    *id = (unsigned)v;
    *p = q;
    return 0;
}

idset_t *idset_decode (const char *str, char *errbuf, size_t errlen)
{
    idset_t *s;
    const char *p;
    size_t len;
    bool brackets = false;

    if (!str) {
        errbuf_set (errbuf, errlen, "idset: NULL string");
        errno = EINVAL;
        return NULL;
    }
    if (!(s = idset_create (0))) {
        errbuf_set (errbuf, errlen, "idset: out of memory");
        return NULL;
    }
    len = strlen (str);
    p = str;
    if (len > 0 && str[0] == '[') {
        if (str[len - 1] != ']') {
            errbuf_set (errbuf, errlen, "idset '%s': missing closing ']'",
                        str);
            goto inval;
        }
        brackets = true;
        p++;
        len -= 2;
    }
    else if (len > 0 && str[len - 1] == ']') {
        errbuf_set (errbuf, errlen, "idset '%s': unmatched ']'", str);
        goto inval;
    }
    const char *end = p + len;
    if (p == end) {
        (void)brackets;
        return s;                   /* "" or "[]" */
    }
    for (;;) {
        unsigned lo, hi;
        if (*p == ',') {
            errbuf_set (errbuf, errlen, "idset '%s': empty item at position "
                        "%td", str, p - str + 1);
            goto inval;
        }
        if (parse_id (str, &p, &lo, errbuf, errlen) < 0)
            goto inval;
        hi = lo;
        if (p < end && *p == '-') {
            p++;
            if (p == end) {
                errbuf_set (errbuf, errlen, "idset '%s': range without an end",
                            str);
                goto inval;
            }
            if (parse_id (str, &p, &hi, errbuf, errlen) < 0)
                goto inval;
            if (hi < lo) {
                errbuf_set (errbuf, errlen,
                            "idset '%s': reversed range %u-%u", str, lo, hi);
                goto inval;
            }
        }
        if (p > end) {
            errbuf_set (errbuf, errlen, "idset '%s': bad syntax", str);
            goto inval;
        }
        if (idset_set_range (s, lo, hi) < 0) {
            errbuf_set (errbuf, errlen, "idset: out of memory");
            idset_destroy (&s);
            errno = ENOMEM;
            return NULL;
        }
        if (p == end)
            break;
        if (*p != ',') {
            errbuf_set (errbuf, errlen,
                        "idset '%s': unexpected '%c' at position %td", str, *p,
                        p - str + 1);
            goto inval;
        }
        p++;
        if (p == end) {
            errbuf_set (errbuf, errlen, "idset '%s': trailing ','", str);
            goto inval;
        }
    }
    return s;
inval:
    idset_destroy (&s);
    errno = EINVAL;
    return NULL;
}

bool idset_equal (const idset_t *a, const idset_t *b)
{
    if (!a || !b)
        return a == b;
    if (a->count != b->count)
        return false;
    size_t n = a->nwords < b->nwords ? a->nwords : b->nwords;
    if (n > 0 && memcmp (a->words, b->words, n * sizeof (uint64_t)) != 0)
        return false;
    /* Equal counts and equal common prefix: the tails must be empty. */
    return true;
}

int idset_add (idset_t *dst, const idset_t *src)
{
    if (!dst || !src) {
        errno = EINVAL;
        return -1;
    }
    if (grow (dst, src->nwords) < 0)
        return -1;
    for (size_t w = 0; w < src->nwords; w++) {
        dst->count += (unsigned)__builtin_popcountll (src->words[w]
                                                      & ~dst->words[w]);
        dst->words[w] |= src->words[w];
    }
    return 0;
}

int idset_subtract (idset_t *dst, const idset_t *src)
{
    if (!dst || !src) {
        errno = EINVAL;
        return -1;
    }
    size_t n = dst->nwords < src->nwords ? dst->nwords : src->nwords;
    for (size_t w = 0; w < n; w++) {
        dst->count -= (unsigned)__builtin_popcountll (src->words[w]
                                                      & dst->words[w]);
        dst->words[w] &= ~src->words[w];
    }
    return 0;
}
