/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* jsonv.c: one-pass JSON object validation without allocation (jsonv.h).
 *
 * An explicit stack of open containers (one byte each) replaces
 * recursion, so hostile nesting costs neither stack frames nor heap.
 * The scanner is a small state machine: after a value it either closes
 * containers or expects a separator, until the top-level object closes.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonv.h"

#define STRTOD_BUF 128          /* reals longer than this are copied to heap */

struct scan {
    const unsigned char *s;
    size_t n;
    size_t i;
    const char *err;            /* static reason, NULL while valid */
};

static bool fail (struct scan *sc, const char *what)
{
    if (!sc->err)
        sc->err = what;
    return false;
}

static void skip_ws (struct scan *sc)
{
    while (sc->i < sc->n) {
        unsigned char c = sc->s[sc->i];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
            break;
        sc->i++;
    }
}

static int hexval (unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Four hex digits at s[i..i+4) as a code unit, or -1. */
static long hex4 (const struct scan *sc, size_t i)
{
    long v = 0;

    if (sc->n - i < 4)
        return -1;
    for (size_t k = 0; k < 4; k++) {
        int h = hexval (sc->s[i + k]);
        if (h < 0)
            return -1;
        v = v * 16 + h;
    }
    return v;
}

/* "\u" at sc->i (the backslash): one escaped code point, with a
 * surrogate pair taken whole. */
static bool unicode_escape (struct scan *sc)
{
    long v = hex4 (sc, sc->i + 2);

    if (v < 0)
        return fail (sc, "invalid \\u escape");
    sc->i += 6;
    if (v == 0)
        return fail (sc, "\\u0000 is not allowed");
    if (v >= 0xDC00 && v <= 0xDFFF)
        return fail (sc, "unpaired low surrogate escape");
    if (v >= 0xD800 && v <= 0xDBFF) {
        long lo;
        if (sc->n - sc->i < 2 || sc->s[sc->i] != '\\'
            || sc->s[sc->i + 1] != 'u')
            return fail (sc, "unpaired high surrogate escape");
        if ((lo = hex4 (sc, sc->i + 2)) < 0)
            return fail (sc, "invalid \\u escape");
        if (lo < 0xDC00 || lo > 0xDFFF)
            return fail (sc, "high surrogate escape not followed by a low one");
        sc->i += 6;
    }
    return true;
}

/* One UTF-8 sequence of two to four bytes at sc->i (first byte >= 0x80):
 * shortest form, no surrogates, at most U+10FFFF. */
static bool utf8_seq (struct scan *sc)
{
    const unsigned char *p = sc->s + sc->i;
    size_t left = sc->n - sc->i;
    unsigned char c = p[0], lo = 0x80, hi = 0xBF;
    size_t len;

    if (c >= 0xC2 && c <= 0xDF)
        len = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0)
            lo = 0xA0;          /* overlong */
        else if (c == 0xED)
            hi = 0x9F;          /* surrogates */
    }
    else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0)
            lo = 0x90;          /* overlong */
        else if (c == 0xF4)
            hi = 0x8F;          /* past U+10FFFF */
    }
    else
        return fail (sc, "invalid UTF-8");
    if (left < len || p[1] < lo || p[1] > hi)
        return fail (sc, "invalid UTF-8");
    for (size_t k = 2; k < len; k++) {
        if (p[k] < 0x80 || p[k] > 0xBF)
            return fail (sc, "invalid UTF-8");
    }
    sc->i += len;
    return true;
}

/* Bytes that end a run of plain string characters: controls, the
 * quote, the backslash and every non-ASCII byte. */
static const unsigned char special[256] = {
    [0x00 ... 0x1f] = 1, ['"'] = 1, ['\\'] = 1, [0x80 ... 0xff] = 1,
};

/* Does any of the 8 bytes in v end a plain run?  Each test is the
 * "some byte is less than k" bit trick (exact for k <= 128): bytes below
 * 0x20, the quote and the backslash (xor makes them zero), and bytes
 * with the top bit set. */
#define ONES  0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL
static inline uint64_t any_below (uint64_t v, unsigned k)
{
    return (v - ONES * k) & ~v & HIGHS;
}

static inline bool special8 (uint64_t v)
{
    return ((v & HIGHS) | any_below (v, 0x20)
            | any_below (v ^ (ONES * '"'), 1)
            | any_below (v ^ (ONES * '\\'), 1)) != 0;
}

/* A string; sc->i is at its opening quote. */
static bool string (struct scan *sc)
{
    sc->i++;
    for (;;) {
        /* the common case: a run of plain ASCII, eight bytes at a time
         * while none of them is special, then byte by byte */
        while (sc->n - sc->i >= 8) {
            uint64_t v;
            memcpy (&v, sc->s + sc->i, 8);
            if (special8 (v))
                break;
            sc->i += 8;
        }
        while (sc->i < sc->n && !special[sc->s[sc->i]])
            sc->i++;
        if (sc->i >= sc->n)
            return fail (sc, "unterminated string");
        unsigned char c = sc->s[sc->i];
        if (c == '"') {
            sc->i++;
            return true;
        }
        if (c < 0x20)
            return fail (sc, "control character in a string");
        if (c == '\\') {
            if (sc->i + 1 >= sc->n)
                return fail (sc, "unterminated string");
            unsigned char e = sc->s[sc->i + 1];
            if (e == 'u') {
                if (!unicode_escape (sc))
                    return false;
            }
            else if (strchr ("\"\\/bfnrt", e) && e != '\0')
                sc->i += 2;
            else
                return fail (sc, "invalid escape");
        }
        else if (c < 0x80)
            sc->i++;
        else if (!utf8_seq (sc))
            return false;
    }
}

static size_t digits (struct scan *sc)
{
    size_t start = sc->i;

    while (sc->i < sc->n && sc->s[sc->i] >= '0' && sc->s[sc->i] <= '9')
        sc->i++;
    return sc->i - start;
}

/* Does the integer text of ndig digits at p (no leading zeros) fit in
 * int64_t with this sign? */
static bool int64_fits (const unsigned char *p, size_t ndig, bool neg)
{
    const char *lim = neg ? "9223372036854775808" : "9223372036854775807";

    if (ndig != 19)
        return ndig < 19;
    return memcmp (p, lim, 19) <= 0;
}

/* Would strtod overflow on the real text s[0..len)?  Decided by the
 * decimal exponent of its first significant digit, or by strtod itself
 * at the edge of the range. */
static bool real_overflows (const unsigned char *s, size_t len,
                            size_t intdig, size_t frac_at, size_t fracdig,
                            long long exp)
{
    const unsigned char *d = s + (s[0] == '-');
    long long mag;
    size_t k;

    /* position of the first non-zero digit */
    for (k = 0; k < intdig && d[k] == '0'; k++)
        ;
    if (k < intdig)
        mag = (long long)(intdig - k) - 1 + exp;
    else {
        for (k = 0; k < fracdig && s[frac_at + k] == '0'; k++)
            ;
        if (k == fracdig)
            return false;       /* zero */
        mag = -(long long)k - 1 + exp;
    }
    if (mag <= DBL_MAX_10_EXP - 1)
        return false;
    if (mag > DBL_MAX_10_EXP)
        return true;
    /* 10^308 <= |x| < 10^309: ask strtod, as jansson does */
    char buf[STRTOD_BUF];
    char *copy = len < sizeof (buf) ? buf : malloc (len + 1);
    bool over;
    if (!copy)
        return false;           /* cannot tell: jansson decides later */
    memcpy (copy, s, len);
    copy[len] = '\0';
    errno = 0;
    double v = strtod (copy, NULL);
    over = errno == ERANGE && (v == HUGE_VAL || v == -HUGE_VAL);
    if (copy != buf)
        free (copy);
    return over;
}

/* A number at sc->i ('-' or a digit). */
static bool number (struct scan *sc)
{
    size_t start = sc->i, intdig, frac_at = 0, fracdig = 0;
    bool neg = false, real = false;
    long long exp = 0;

    if (sc->s[sc->i] == '-') {
        neg = true;
        sc->i++;
    }
    size_t int_at = sc->i;
    if ((intdig = digits (sc)) == 0)
        return fail (sc, "invalid number");
    if (intdig > 1 && sc->s[int_at] == '0')
        return fail (sc, "number with a leading zero");
    if (sc->i < sc->n && sc->s[sc->i] == '.') {
        sc->i++;
        frac_at = sc->i;
        if ((fracdig = digits (sc)) == 0)
            return fail (sc, "invalid number");
        real = true;
    }
    if (sc->i < sc->n && (sc->s[sc->i] == 'e' || sc->s[sc->i] == 'E')) {
        bool eneg = false;
        sc->i++;
        if (sc->i < sc->n && (sc->s[sc->i] == '+' || sc->s[sc->i] == '-'))
            eneg = sc->s[sc->i++] == '-';
        size_t e_at = sc->i, edig = digits (sc);
        if (edig == 0)
            return fail (sc, "invalid number");
        for (size_t k = 0; k < edig; k++) {
            if (exp < 1000000000LL)     /* saturate: decisive long before */
                exp = exp * 10 + (sc->s[e_at + k] - '0');
        }
        if (eneg)
            exp = -exp;
        real = true;
    }
    if (!real) {
        if (!int64_fits (sc->s + int_at, intdig, neg))
            return fail (sc, "integer out of range");
        return true;
    }
    if (real_overflows (sc->s + start, sc->i - start, intdig,
                        fracdig ? frac_at - start : 0, fracdig, exp))
        return fail (sc, "real number overflow");
    return true;
}

static bool literal (struct scan *sc, const char *word)
{
    size_t len = strlen (word);

    if (sc->n - sc->i < len || memcmp (sc->s + sc->i, word, len) != 0)
        return fail (sc, "invalid token");
    sc->i += len;
    return true;
}

/* A scalar (anything but a container) at sc->i. */
static bool scalar (struct scan *sc)
{
    switch (sc->s[sc->i]) {
        case '"':
            return string (sc);
        case 't':
            return literal (sc, "true");
        case 'f':
            return literal (sc, "false");
        case 'n':
            return literal (sc, "null");
        default:
            if (sc->s[sc->i] == '-'
                || (sc->s[sc->i] >= '0' && sc->s[sc->i] <= '9'))
                return number (sc);
            return fail (sc, "invalid token");
    }
}

static bool scan_object (struct scan *sc)
{
    unsigned char open[JSONV_MAX_DEPTH];   /* '{' or '[' per level */
    int depth = 0;

    skip_ws (sc);
    if (sc->i >= sc->n || sc->s[sc->i] != '{')
        return fail (sc, "not a JSON object");
    /* Each state ends by jumping to the next; 'value' parses one value
     * at depth + 1, 'after' follows any complete value. */
value:
    skip_ws (sc);
    if (sc->i >= sc->n)
        return fail (sc, "unexpected end of text");
    if (depth + 1 > JSONV_MAX_DEPTH)
        return fail (sc, "nested too deep");
    if (sc->s[sc->i] == '{' || sc->s[sc->i] == '[') {
        unsigned char c = sc->s[sc->i++];
        open[depth++] = c;
        skip_ws (sc);
        if (sc->i < sc->n && sc->s[sc->i] == (c == '{' ? '}' : ']')) {
            sc->i++;
            depth--;
            goto after;
        }
        if (c == '[')
            goto value;
        goto key;
    }
    if (!scalar (sc))
        return false;
    goto after;
key:
    skip_ws (sc);
    if (sc->i >= sc->n || sc->s[sc->i] != '"')
        return fail (sc, "expected a string key");
    if (!string (sc))
        return false;
    skip_ws (sc);
    if (sc->i >= sc->n || sc->s[sc->i] != ':')
        return fail (sc, "expected ':'");
    sc->i++;
    goto value;
after:
    skip_ws (sc);
    if (depth == 0) {
        if (sc->i != sc->n)
            return fail (sc, "text after the object");
        return true;
    }
    if (sc->i >= sc->n)
        return fail (sc, "unexpected end of text");
    if (sc->s[sc->i] == ',') {
        sc->i++;
        if (open[depth - 1] == '{')
            goto key;
        goto value;
    }
    if (sc->s[sc->i] == (open[depth - 1] == '{' ? '}' : ']')) {
        sc->i++;
        depth--;
        goto after;
    }
    return fail (sc, open[depth - 1] == '{' ? "expected ',' or '}'"
                                            : "expected ',' or ']'");
}

int jsonv_object (const char *s, size_t len, char *why, size_t whylen)
{
    struct scan sc = { .s = (const unsigned char *)s, .n = len };

    if (!s && len > 0) {
        if (why && whylen)
            snprintf (why, whylen, "no text");
        return -1;
    }
    if (scan_object (&sc))
        return 0;
    if (why && whylen)
        snprintf (why, whylen, "%s at byte %zu", sc.err, sc.i);
    return -1;
}

/* vi: ts=4 sw=4 expandtab
 */
