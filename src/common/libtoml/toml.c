/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* toml.c: TOML 1.0 parser producing jansson objects (see toml.h).
 *
 * A hand-written recursive-descent parser over a byte buffer.  The input
 * is checked for valid UTF-8 once, up front, so the scanner can treat
 * every byte >= 0x80 as part of a valid character and copy it blindly.
 *
 * TOML's redefinition rules depend on *how* a table came to exist (by a
 * [header], implicitly as the parent of a header, by dotted keys, or as an
 * inline table), which a jansson object cannot record.  The parser keeps
 * a side table mapping each container it created to a set of flags; it
 * lives in the parser state, so there is no global state.
 *
 * Recursion happens only for nested arrays and inline tables and is
 * capped at TOML_MAX_DEPTH.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "toml.h"

/* Container flags kept in the side table. */
enum {
    F_IMPLICIT = 1,     /* table created as the parent of a [header] */
    F_HEADER = 2,       /* table defined by a [header] or [[header]] */
    F_DOTTED = 4,       /* table created or extended by dotted keys */
    F_FROZEN = 8,       /* inline table: immutable once closed */
    F_AOT = 16,         /* array created by [[header]] */
};

struct meta_ent {
    const json_t *key;
    unsigned flags;
};

struct buf {
    char *data;
    size_t len;
    size_t cap;
};

struct keypart {
    char *s;
    size_t len;
    size_t pos;         /* where the key part starts in the input */
};

struct keypath {
    struct keypart *v;
    int n;
    int cap;
};

struct parser {
    const unsigned char *s;
    size_t len;
    size_t pos;
    int depth;              /* containers around what is parsed now */
    int table_depth;        /* of the table the last [header] opened */
    int failed;
    struct toml_error *err;
    json_t *root;
    json_t *cur;            /* table that key/values go into */
    struct meta_ent *meta;
    size_t meta_cap;        /* power of two, or 0 */
    size_t meta_count;
};

/* --- errors --------------------------------------------------------- */

static int fail_at (struct parser *p, size_t at, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

static int fail_at (struct parser *p, size_t at, const char *fmt, ...)
{
    if (p->failed)
        return -1;
    p->failed = 1;
    if (p->err) {
        int line = 1, col = 1;
        va_list ap;
        if (at > p->len)
            at = p->len;
        for (size_t i = 0; i < at; i++) {
            if (p->s[i] == '\n') {
                line++;
                col = 1;
            }
            else if ((p->s[i] & 0xC0) != 0x80)
                col++;
        }
        p->err->line = line;
        p->err->col = col;
        va_start (ap, fmt);
        vsnprintf (p->err->msg, sizeof (p->err->msg), fmt, ap);
        va_end (ap);
    }
    errno = EINVAL;
    return -1;
}

static int fail_nomem (struct parser *p)
{
    if (!p->failed) {
        p->failed = 1;
        if (p->err) {
            p->err->line = 0;
            p->err->col = 0;
            snprintf (p->err->msg, sizeof (p->err->msg), "out of memory");
        }
    }
    errno = ENOMEM;
    return -1;
}

/* Describe the character at 'pos' for an error message. */
static const char *describe (struct parser *p, size_t pos, char *buf,
                             size_t size)
{
    if (pos >= p->len)
        return "end of file";
    int c = p->s[pos];
    if (c == '\n')
        return "newline";
    if (c == '\r')
        return "carriage return";
    if (c >= 0x20 && c < 0x7f)
        snprintf (buf, size, "'%c'", c);
    else if (c < 0x20 || c == 0x7f)
        snprintf (buf, size, "control character 0x%02X", c);
    else
        snprintf (buf, size, "non-ASCII character");
    return buf;
}

static int fail_unexpected (struct parser *p, size_t pos, const char *want)
{
    char tmp[48];
    return fail_at (p, pos, "expected %s, found %s", want,
                    describe (p, pos, tmp, sizeof (tmp)));
}

/* --- side table of container flags ------------------------------------ */

static size_t meta_hash (const json_t *key, size_t mask)
{
    uintptr_t h = (uintptr_t)key;
    h ^= h >> 17;
    h *= (uintptr_t)0x9E3779B97F4A7C15ULL;
    h ^= h >> 29;
    return (size_t)h & mask;
}

static unsigned meta_get (struct parser *p, const json_t *key)
{
    if (p->meta_cap == 0)
        return 0;
    size_t mask = p->meta_cap - 1;
    for (size_t i = meta_hash (key, mask);; i = (i + 1) & mask) {
        if (p->meta[i].key == key)
            return p->meta[i].flags;
        if (p->meta[i].key == NULL)
            return 0;
    }
}

static int meta_grow (struct parser *p)
{
    size_t ncap = p->meta_cap ? p->meta_cap * 2 : 64;
    struct meta_ent *n = calloc (ncap, sizeof (*n));
    if (!n)
        return -1;
    for (size_t j = 0; j < p->meta_cap; j++) {
        if (p->meta[j].key) {
            size_t i = meta_hash (p->meta[j].key, ncap - 1);
            while (n[i].key)
                i = (i + 1) & (ncap - 1);
            n[i] = p->meta[j];
        }
    }
    free (p->meta);
    p->meta = n;
    p->meta_cap = ncap;
    return 0;
}

/* Set (replace) the flags of container 'key'. */
static int meta_set (struct parser *p, const json_t *key, unsigned flags)
{
    if ((p->meta_count + 1) * 2 > p->meta_cap && meta_grow (p) < 0)
        return fail_nomem (p);
    size_t mask = p->meta_cap - 1;
    size_t i = meta_hash (key, mask);
    while (p->meta[i].key && p->meta[i].key != key)
        i = (i + 1) & mask;
    if (!p->meta[i].key) {
        p->meta[i].key = key;
        p->meta_count++;
    }
    p->meta[i].flags = flags;
    return 0;
}

/* --- growable byte buffer ------------------------------------------------ */

static int buf_reserve (struct buf *b, size_t more)
{
    if (b->len + more <= b->cap)
        return 0;
    size_t ncap = b->cap ? b->cap : 32;
    while (ncap < b->len + more)
        ncap *= 2;
    char *n = realloc (b->data, ncap);
    if (!n)
        return -1;
    b->data = n;
    b->cap = ncap;
    return 0;
}

static int buf_add (struct buf *b, const void *data, size_t len)
{
    if (len == 0)
        return 0;
    if (buf_reserve (b, len) < 0)
        return -1;
    memcpy (b->data + b->len, data, len);
    b->len += len;
    return 0;
}

static int buf_addc (struct buf *b, char c)
{
    return buf_add (b, &c, 1);
}

static void keypath_free (struct keypath *k)
{
    for (int i = 0; i < k->n; i++)
        free (k->v[i].s);
    free (k->v);
    k->v = NULL;
    k->n = k->cap = 0;
}

/* Format key parts [0, n) as a dotted key for messages. */
static const char *keystr (const struct keypath *k, int n, char *out,
                           size_t size)
{
    size_t o = 0;
    out[0] = '\0';
    for (int i = 0; i < n && o + 1 < size; i++) {
        int bare = k->v[i].len > 0;
        for (size_t j = 0; j < k->v[i].len; j++) {
            char c = k->v[i].s[j];
            if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')
                  || (c >= '0' && c <= '9') || c == '_' || c == '-'))
                bare = 0;
        }
        int r = snprintf (out + o, size - o, "%s%s%.*s%s",
                          i > 0 ? "." : "", bare ? "" : "\"",
                          (int)(k->v[i].len > 200 ? 200 : k->v[i].len),
                          k->v[i].s, bare ? "" : "\"");
        if (r < 0)
            break;
        o += (size_t)r;
        if (o >= size)
            o = size - 1;
    }
    return out;
}

/* --- scanning helpers ---------------------------------------------------- */

static int peek (struct parser *p)
{
    return p->pos < p->len ? p->s[p->pos] : -1;
}

static int peek_at (struct parser *p, size_t k)
{
    return p->pos + k < p->len ? p->s[p->pos + k] : -1;
}

static int is_bare (int c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')
        || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

static int is_digit (int c)
{
    return c >= '0' && c <= '9';
}

static int is_hex (int c)
{
    return is_digit (c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static int hexval (int c)
{
    if (is_digit (c))
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return c - 'A' + 10;
}

/* A control character not allowed in strings or comments (tab is ok). */
static int is_ctrl (int c)
{
    return (c >= 0 && c < 0x20 && c != '\t') || c == 0x7f;
}

static void skip_ws (struct parser *p)
{
    while (p->pos < p->len && (p->s[p->pos] == ' ' || p->s[p->pos] == '\t'))
        p->pos++;
}

/* Length of the newline at pos (1 for LF, 2 for CRLF) or 0. */
static int newline_len (struct parser *p)
{
    int c = peek (p);
    if (c == '\n')
        return 1;
    if (c == '\r' && peek_at (p, 1) == '\n')
        return 2;
    return 0;
}

/* At '#': skip to (not past) the end of line. */
static int skip_comment (struct parser *p)
{
    p->pos++;
    while (p->pos < p->len) {
        int c = p->s[p->pos];
        if (c == '\n')
            break;
        if (c == '\r' && peek_at (p, 1) == '\n')
            break;
        if (is_ctrl (c))
            return fail_at (p, p->pos, "control character 0x%02X in comment",
                            c);
        p->pos++;
    }
    return 0;
}

/* Skip whitespace, newlines and comments (inside arrays). */
static int skip_ws_nl (struct parser *p)
{
    for (;;) {
        skip_ws (p);
        int c = peek (p);
        int n;
        if (c == '#') {
            if (skip_comment (p) < 0)
                return -1;
        }
        else if ((n = newline_len (p)) > 0)
            p->pos += n;
        else if (c == '\r')
            return fail_at (p, p->pos, "carriage return not followed by "
                            "line feed");
        else
            return 0;
    }
}

/* After a key/value pair or header: optional comment, then newline/EOF. */
static int expect_eol (struct parser *p)
{
    skip_ws (p);
    if (peek (p) == '#' && skip_comment (p) < 0)
        return -1;
    if (p->pos >= p->len)
        return 0;
    int n = newline_len (p);
    if (n == 0)
        return fail_unexpected (p, p->pos, "end of line");
    p->pos += n;
    return 0;
}

static int check_utf8 (struct parser *p)
{
    const unsigned char *s = p->s;
    size_t i = 0;
    while (i < p->len) {
        unsigned c = s[i];
        size_t n;
        uint32_t cp, min;
        if (c < 0x80) {
            i++;
            continue;
        }
        if (c >= 0xC2 && c <= 0xDF) {
            n = 1;
            cp = c & 0x1F;
            min = 0x80;
        }
        else if (c >= 0xE0 && c <= 0xEF) {
            n = 2;
            cp = c & 0x0F;
            min = 0x800;
        }
        else if (c >= 0xF0 && c <= 0xF4) {
            n = 3;
            cp = c & 0x07;
            min = 0x10000;
        }
        else
            goto bad;
        if (p->len - i <= n)
            goto bad;
        for (size_t k = 1; k <= n; k++) {
            if ((s[i + k] & 0xC0) != 0x80)
                goto bad;
            cp = (cp << 6) | (s[i + k] & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            goto bad;
        i += n + 1;
        continue;
bad:
        return fail_at (p, i, "invalid UTF-8");
    }
    return 0;
}

/* --- strings ------------------------------------------------------------- */

static int add_utf8 (struct buf *b, uint32_t cp)
{
    char tmp[4];
    size_t n;
    if (cp < 0x80) {
        tmp[0] = (char)cp;
        n = 1;
    }
    else if (cp < 0x800) {
        tmp[0] = (char)(0xC0 | (cp >> 6));
        tmp[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    }
    else if (cp < 0x10000) {
        tmp[0] = (char)(0xE0 | (cp >> 12));
        tmp[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        tmp[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    }
    else {
        tmp[0] = (char)(0xF0 | (cp >> 18));
        tmp[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        tmp[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        tmp[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    return buf_add (b, tmp, n);
}

/* At a backslash in a basic string: decode one escape into b. */
static int parse_escape (struct parser *p, struct buf *b)
{
    size_t start = p->pos;
    int c = peek_at (p, 1);
    char out;
    switch (c) {
        case 'b': out = '\b'; break;
        case 't': out = '\t'; break;
        case 'n': out = '\n'; break;
        case 'f': out = '\f'; break;
        case 'r': out = '\r'; break;
        case '"': out = '"'; break;
        case '\\': out = '\\'; break;
        case 'u':
        case 'U': {
            int ndig = c == 'u' ? 4 : 8;
            uint32_t cp = 0;
            for (int i = 0; i < ndig; i++) {
                int h = peek_at (p, 2 + (size_t)i);
                if (!is_hex (h))
                    return fail_at (p, start, "\\%c escape needs %d hex "
                                    "digits", c, ndig);
                cp = (cp << 4) | (uint32_t)hexval (h);
            }
            if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
                return fail_at (p, start, "escape \\%c%.*s is not a Unicode "
                                "scalar value", c, ndig,
                                (const char *)p->s + start + 2);
            p->pos += 2 + (size_t)ndig;
            if (add_utf8 (b, cp) < 0)
                return fail_nomem (p);
            return 0;
        }
        default: {
            char tmp[48];
            return fail_at (p, start, "invalid escape sequence: backslash "
                            "followed by %s",
                            describe (p, start + 1, tmp, sizeof (tmp)));
        }
    }
    p->pos += 2;
    if (buf_addc (b, out) < 0)
        return fail_nomem (p);
    return 0;
}

/* At '"' (not '"""'): single-line basic string. */
static int parse_basic (struct parser *p, struct buf *b)
{
    size_t start = p->pos;
    p->pos++;
    for (;;) {
        int c = peek (p);
        if (c < 0 || c == '\n' || (c == '\r' && peek_at (p, 1) == '\n'))
            return fail_at (p, start, "unterminated string");
        if (c == '"') {
            p->pos++;
            return 0;
        }
        if (c == '\\') {
            if (parse_escape (p, b) < 0)
                return -1;
            continue;
        }
        if (is_ctrl (c))
            return fail_at (p, p->pos, "control character 0x%02X in string",
                            c);
        if (buf_addc (b, (char)c) < 0)
            return fail_nomem (p);
        p->pos++;
    }
}

/* At "'" (not "'''"): literal string. */
static int parse_literal (struct parser *p, struct buf *b)
{
    size_t start = p->pos;
    p->pos++;
    for (;;) {
        int c = peek (p);
        if (c < 0 || c == '\n' || (c == '\r' && peek_at (p, 1) == '\n'))
            return fail_at (p, start, "unterminated string");
        if (c == '\'') {
            p->pos++;
            return 0;
        }
        if (is_ctrl (c))
            return fail_at (p, p->pos, "control character 0x%02X in string",
                            c);
        if (buf_addc (b, (char)c) < 0)
            return fail_nomem (p);
        p->pos++;
    }
}

/* At '"""' or "'''": multi-line string; q is the quote character. */
static int parse_multiline (struct parser *p, struct buf *b, int q)
{
    size_t start = p->pos;
    int nl;
    p->pos += 3;
    if ((nl = newline_len (p)) > 0)     /* newline after opening is trimmed */
        p->pos += nl;
    for (;;) {
        int c = peek (p);
        if (c < 0)
            return fail_at (p, start, "unterminated multi-line string");
        if (c == q) {
            size_t n = 0;
            while (peek_at (p, n) == q)
                n++;
            if (n < 3) {
                if (buf_add (b, p->s + p->pos, n) < 0)
                    return fail_nomem (p);
                p->pos += n;
                continue;
            }
            if (n > 5)
                return fail_at (p, p->pos + 5, "too many quotes at end of "
                                "multi-line string");
            if (buf_add (b, p->s + p->pos, n - 3) < 0)
                return fail_nomem (p);
            p->pos += n;
            return 0;
        }
        if (c == '\\' && q == '"') {
            /* line-ending backslash: \ [ws] newline, then trim ws/newlines */
            size_t k = 1;
            while (peek_at (p, k) == ' ' || peek_at (p, k) == '\t')
                k++;
            int d = peek_at (p, k);
            if (d == '\n' || (d == '\r' && peek_at (p, k + 1) == '\n')) {
                p->pos += k;
                for (;;) {
                    int e = peek (p);
                    if (e == ' ' || e == '\t' || e == '\n')
                        p->pos++;
                    else if (e == '\r' && peek_at (p, 1) == '\n')
                        p->pos += 2;
                    else
                        break;
                }
                continue;
            }
            if (parse_escape (p, b) < 0)
                return -1;
            continue;
        }
        if (c == '\n') {
            if (buf_addc (b, '\n') < 0)
                return fail_nomem (p);
            p->pos++;
            continue;
        }
        if (c == '\r' && peek_at (p, 1) == '\n') {
            if (buf_addc (b, '\n') < 0)     /* CRLF normalised to LF */
                return fail_nomem (p);
            p->pos += 2;
            continue;
        }
        if (is_ctrl (c))
            return fail_at (p, p->pos, "control character 0x%02X in string",
                            c);
        if (buf_addc (b, (char)c) < 0)
            return fail_nomem (p);
        p->pos++;
    }
}

static int at_triple (struct parser *p, int q)
{
    return peek (p) == q && peek_at (p, 1) == q && peek_at (p, 2) == q;
}

/* --- keys ---------------------------------------------------------------- */

static int parse_simple_key (struct parser *p, struct keypath *k)
{
    struct buf b = { 0 };
    size_t start = p->pos;
    int c = peek (p);

    if (c == '"' || c == '\'') {
        if (at_triple (p, c))
            return fail_at (p, start, "multi-line string cannot be a key");
        if ((c == '"' ? parse_basic (p, &b) : parse_literal (p, &b)) < 0) {
            free (b.data);
            return -1;
        }
    }
    else if (is_bare (c)) {
        while (is_bare (peek (p)))
            p->pos++;
        if (buf_add (&b, p->s + start, p->pos - start) < 0)
            return fail_nomem (p);
    }
    else
        return fail_unexpected (p, start, "a key");
    if (buf_addc (&b, '\0') < 0)  /* NUL for convenience, not in len */
        goto nomem;
    if (k->n == k->cap) {
        int ncap = k->cap ? k->cap * 2 : 4;
        struct keypart *n = realloc (k->v, sizeof (*n) * (size_t)ncap);
        if (!n)
            goto nomem;
        k->v = n;
        k->cap = ncap;
    }
    k->v[k->n].s = b.data;
    k->v[k->n].len = b.len - 1;
    k->v[k->n].pos = start;
    k->n++;
    return 0;
nomem:
    free (b.data);
    return fail_nomem (p);
}

/* key = simple-key *( ws '.' ws simple-key ); trailing ws skipped. */
/* Every part of a dotted key (or header) is one more level of nesting
 * below p->depth: bounded like arrays, so a key 100,000 parts deep is an
 * error here, not a stack overflow in whoever walks the result. */
static int parse_key (struct parser *p, struct keypath *k)
{
    for (;;) {
        if (p->depth + k->n > TOML_MAX_DEPTH)
            return fail_at (p, p->pos, "nesting deeper than %d levels",
                            TOML_MAX_DEPTH);
        if (parse_simple_key (p, k) < 0)
            return -1;
        skip_ws (p);
        if (peek (p) != '.')
            return 0;
        p->pos++;
        skip_ws (p);
    }
}

/* --- numbers and date-times ---------------------------------------------- */

/* Scan digits valid for 'base' with single underscores between digits,
 * appending the digits (without underscores) to b.  At least one digit.
 */
static int scan_digits (struct parser *p, int base, struct buf *b)
{
    int n = 0;
    for (;;) {
        int c = peek (p);
        int valid;
        if (base == 16)
            valid = is_hex (c);
        else if (base == 10)
            valid = is_digit (c);
        else if (base == 8)
            valid = c >= '0' && c <= '7';
        else
            valid = c == '0' || c == '1';
        if (valid) {
            if (buf_addc (b, (char)c) < 0)
                return fail_nomem (p);
            p->pos++;
            n++;
            continue;
        }
        if (c == '_') {
            if (n == 0)
                return fail_at (p, p->pos, "underscore must be between "
                                "digits");
            int d = peek_at (p, 1);
            int dvalid = base == 16 ? is_hex (d)
                       : base == 10 ? is_digit (d)
                       : base == 8 ? (d >= '0' && d <= '7')
                       : (d == '0' || d == '1');
            if (!dvalid)
                return fail_at (p, p->pos, "underscore must be between "
                                "digits");
            p->pos++;
            continue;
        }
        break;
    }
    if (n == 0)
        return fail_unexpected (p, p->pos, "a digit");
    return 0;
}

static int days_in_month (int y, int m)
{
    static const int days[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30,
                                31 };
    if (m == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0))
        return 29;
    return days[m - 1];
}

/* Read exactly n digits at pos as a number, or -1. */
static int fixed_digits (struct parser *p, int n)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        int c = peek_at (p, (size_t)i);
        if (!is_digit (c))
            return -1;
        v = v * 10 + (c - '0');
    }
    p->pos += (size_t)n;
    return v;
}

static int expect_char (struct parser *p, int ch, const char *what)
{
    if (peek (p) != ch)
        return fail_unexpected (p, p->pos, what);
    p->pos++;
    return 0;
}

/* HH:MM:SS[.frac] appended to b. */
static int parse_time (struct parser *p, struct buf *b)
{
    size_t start = p->pos;
    int h, m, s;
    if ((h = fixed_digits (p, 2)) < 0)
        return fail_unexpected (p, p->pos, "two-digit hour");
    if (expect_char (p, ':', "':' in time") < 0)
        return -1;
    if ((m = fixed_digits (p, 2)) < 0)
        return fail_unexpected (p, p->pos, "two-digit minute");
    if (expect_char (p, ':', "':' and seconds in time") < 0)
        return -1;
    if ((s = fixed_digits (p, 2)) < 0)
        return fail_unexpected (p, p->pos, "two-digit second");
    if (h > 23)
        return fail_at (p, start, "hour %d out of range 00..23", h);
    if (m > 59)
        return fail_at (p, start + 3, "minute %d out of range 00..59", m);
    if (s > 60)
        return fail_at (p, start + 6, "second %d out of range 00..60", s);
    if (buf_add (b, p->s + start, 8) < 0)
        return fail_nomem (p);
    if (peek (p) == '.') {
        size_t fs = p->pos;
        p->pos++;
        if (!is_digit (peek (p)))
            return fail_unexpected (p, p->pos, "digit after '.' in time");
        while (is_digit (peek (p)))
            p->pos++;
        if (buf_add (b, p->s + fs, p->pos - fs) < 0)
            return fail_nomem (p);
    }
    return 0;
}

/* At YYYY-: a date, local date-time or offset date-time. */
static int parse_datetime (struct parser *p, json_t **out)
{
    struct buf b = { 0 };
    size_t start = p->pos;
    int y, mo, d;

    y = fixed_digits (p, 4);
    if (expect_char (p, '-', "'-' in date") < 0)
        goto error;
    if ((mo = fixed_digits (p, 2)) < 0) {
        fail_unexpected (p, p->pos, "two-digit month");
        goto error;
    }
    if (expect_char (p, '-', "'-' in date") < 0)
        goto error;
    if ((d = fixed_digits (p, 2)) < 0) {
        fail_unexpected (p, p->pos, "two-digit day");
        goto error;
    }
    if (mo < 1 || mo > 12) {
        fail_at (p, start + 5, "month %02d out of range 01..12", mo);
        goto error;
    }
    if (d < 1 || d > days_in_month (y, mo)) {
        fail_at (p, start + 8, "day %02d out of range for %04d-%02d", d, y,
                 mo);
        goto error;
    }
    if (buf_add (&b, p->s + start, 10) < 0)
        goto nomem;
    int c = peek (p);
    if (c == 'T' || c == 't'
        || (c == ' ' && is_digit (peek_at (p, 1)) && is_digit (peek_at (p, 2))
            && peek_at (p, 3) == ':')) {
        p->pos++;
        if (buf_addc (&b, 'T') < 0)
            goto nomem;
        if (parse_time (p, &b) < 0)
            goto error;
        c = peek (p);
        if (c == 'Z' || c == 'z') {
            p->pos++;
            if (buf_addc (&b, 'Z') < 0)
                goto nomem;
        }
        else if (c == '+' || c == '-') {
            size_t os = p->pos;
            int oh, om;
            p->pos++;
            if ((oh = fixed_digits (p, 2)) < 0) {
                fail_unexpected (p, p->pos, "two-digit offset hour");
                goto error;
            }
            if (expect_char (p, ':', "':' in offset") < 0)
                goto error;
            if ((om = fixed_digits (p, 2)) < 0) {
                fail_unexpected (p, p->pos, "two-digit offset minute");
                goto error;
            }
            if (oh > 23 || om > 59) {
                fail_at (p, os, "time offset out of range");
                goto error;
            }
            if (buf_add (&b, p->s + os, 6) < 0)
                goto nomem;
        }
    }
    if (!(*out = json_stringn (b.data, b.len)))
        goto nomem;
    free (b.data);
    return 0;
nomem:
    fail_nomem (p);
error:
    free (b.data);
    return -1;
}

static int parse_local_time (struct parser *p, json_t **out)
{
    struct buf b = { 0 };
    if (parse_time (p, &b) < 0) {
        free (b.data);
        return -1;
    }
    if (!(*out = json_stringn (b.data, b.len))) {
        free (b.data);
        return fail_nomem (p);
    }
    free (b.data);
    return 0;
}

/* Integer from digit string in 'base'; neg applies for base 10 only. */
static int to_int64 (struct parser *p, size_t at, const char *digits,
                     size_t n, int base, int neg, json_int_t *out)
{
    uint64_t limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t dv = (uint64_t)hexval ((unsigned char)digits[i]);
        if (v > (limit - dv) / (uint64_t)base)
            return fail_at (p, at, "integer out of 64-bit range");
        v = v * (uint64_t)base + dv;
    }
    if (neg)
        *out = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(json_int_t)v;
    else
        *out = (json_int_t)v;
    return 0;
}

static int parse_number (struct parser *p, json_t **out)
{
    struct buf b = { 0 };
    size_t start = p->pos;
    int neg = 0, sign = 0, isfloat = 0;
    int c = peek (p);

    if (c == '+' || c == '-') {
        sign = 1;
        neg = c == '-';
        p->pos++;
        c = peek (p);
    }
    if (c == 'i' || c == 'n') {
        const char *word = c == 'i' ? "inf" : "nan";
        if (p->len - p->pos < 3 || memcmp (p->s + p->pos, word, 3) != 0
            || is_bare (peek_at (p, 3)))
            return fail_at (p, start, "invalid value");
        p->pos += 3;
        if (!(*out = json_string (c == 'n' ? "nan" : neg ? "-inf" : "inf")))
            return fail_nomem (p);
        return 0;
    }
    if (c == '0' && (peek_at (p, 1) == 'x' || peek_at (p, 1) == 'o'
                     || peek_at (p, 1) == 'b')) {
        int base = peek_at (p, 1) == 'x' ? 16 : peek_at (p, 1) == 'o' ? 8 : 2;
        json_int_t v;
        if (sign)
            return fail_at (p, start, "sign not allowed on hexadecimal, "
                            "octal or binary integers");
        p->pos += 2;
        if (scan_digits (p, base, &b) < 0)
            goto error;
        if (is_bare (peek (p)) || peek (p) == '.') {
            fail_at (p, p->pos, "invalid digit in base-%d integer", base);
            goto error;
        }
        if (to_int64 (p, start, b.data, b.len, base, 0, &v) < 0)
            goto error;
        free (b.data);
        if (!(*out = json_integer (v)))
            return fail_nomem (p);
        return 0;
    }
    if (!is_digit (c))
        return fail_at (p, start, "invalid value");
    if (scan_digits (p, 10, &b) < 0)
        goto error;
    if (b.data[0] == '0' && b.len > 1) {
        fail_at (p, start, "leading zeros are not allowed");
        goto error;
    }
    if (peek (p) == '.') {
        isfloat = 1;
        if (buf_addc (&b, '.') < 0)
            goto nomem;
        p->pos++;
        if (!is_digit (peek (p))) {
            fail_unexpected (p, p->pos, "digit after decimal point");
            goto error;
        }
        if (scan_digits (p, 10, &b) < 0)
            goto error;
    }
    if (peek (p) == 'e' || peek (p) == 'E') {
        isfloat = 1;
        if (buf_addc (&b, 'e') < 0)
            goto nomem;
        p->pos++;
        if (peek (p) == '+' || peek (p) == '-') {
            if (buf_addc (&b, (char)peek (p)) < 0)
                goto nomem;
            p->pos++;
        }
        if (!is_digit (peek (p))) {
            fail_unexpected (p, p->pos, "digit in exponent");
            goto error;
        }
        if (scan_digits (p, 10, &b) < 0)
            goto error;
    }
    if (is_bare (peek (p)) || peek (p) == '.') {
        fail_at (p, p->pos, "invalid character in number");
        goto error;
    }
    if (isfloat) {
        double d;
        if (buf_addc (&b, '\0') < 0)
            goto nomem;
        d = strtod (b.data, NULL);
        if (neg)
            d = -d;
        free (b.data);
        if (isinf (d))
            *out = json_string (d < 0 ? "-inf" : "inf");
        else
            *out = json_real (d);
        if (!*out)
            return fail_nomem (p);
        return 0;
    }
    json_int_t v;
    if (to_int64 (p, start, b.data, b.len, 10, neg, &v) < 0)
        goto error;
    free (b.data);
    if (!(*out = json_integer (v)))
        return fail_nomem (p);
    return 0;
nomem:
    fail_nomem (p);
error:
    free (b.data);
    return -1;
}

/* --- values -------------------------------------------------------------- */

static int parse_value (struct parser *p, json_t **out);
static int insert_kv (struct parser *p, json_t *tbl, struct keypath *k,
                      json_t *val);

static int parse_string_value (struct parser *p, json_t **out)
{
    struct buf b = { 0 };
    int c = peek (p);
    int rc;
    if (at_triple (p, c))
        rc = parse_multiline (p, &b, c);
    else if (c == '"')
        rc = parse_basic (p, &b);
    else
        rc = parse_literal (p, &b);
    if (rc == 0 && !(*out = json_stringn (b.data ? b.data : "", b.len)))
        rc = fail_nomem (p);
    free (b.data);
    return rc;
}

static int parse_array (struct parser *p, json_t **out)
{
    json_t *arr;
    if (++p->depth > TOML_MAX_DEPTH)
        return fail_at (p, p->pos, "nesting deeper than %d levels",
                        TOML_MAX_DEPTH);
    if (!(arr = json_array ()))
        return fail_nomem (p);
    p->pos++;
    for (;;) {
        json_t *v;
        if (skip_ws_nl (p) < 0)
            goto error;
        if (peek (p) == ']')
            break;
        if (parse_value (p, &v) < 0)
            goto error;
        if (json_array_append_new (arr, v) < 0) {
            fail_nomem (p);
            goto error;
        }
        if (skip_ws_nl (p) < 0)
            goto error;
        if (peek (p) == ',') {
            p->pos++;
            continue;
        }
        if (peek (p) != ']') {
            fail_unexpected (p, p->pos, "',' or ']' in array");
            goto error;
        }
        break;
    }
    p->pos++;
    p->depth--;
    *out = arr;
    return 0;
error:
    json_decref (arr);
    return -1;
}

static int parse_inline_table (struct parser *p, json_t **out)
{
    json_t *tbl;
    size_t start = p->pos;
    if (++p->depth > TOML_MAX_DEPTH)
        return fail_at (p, p->pos, "nesting deeper than %d levels",
                        TOML_MAX_DEPTH);
    if (!(tbl = json_object ()))
        return fail_nomem (p);
    if (meta_set (p, tbl, 0) < 0)
        goto error;
    p->pos++;
    skip_ws (p);
    if (peek (p) != '}') {
        for (;;) {
            struct keypath k = { 0 };
            json_t *v;
            if (newline_len (p) > 0 || peek (p) == '\r') {
                fail_at (p, p->pos, "newline not allowed in inline table");
                goto error;
            }
            if (parse_key (p, &k) < 0) {
                keypath_free (&k);
                goto error;
            }
            if (peek (p) != '=') {
                fail_unexpected (p, p->pos, "'=' after key");
                keypath_free (&k);
                goto error;
            }
            p->pos++;
            skip_ws (p);
            int saved = p->depth, rc;
            p->depth += k.n - 1;   /* dotted keys nest too */
            rc = parse_value (p, &v);
            p->depth = saved;
            if (rc < 0) {
                keypath_free (&k);
                goto error;
            }
            if (insert_kv (p, tbl, &k, v) < 0) {
                keypath_free (&k);
                goto error;
            }
            keypath_free (&k);
            skip_ws (p);
            int c = peek (p);
            if (c == ',') {
                p->pos++;
                skip_ws (p);
                if (peek (p) == '}') {
                    fail_at (p, p->pos, "trailing comma not allowed in "
                             "inline table");
                    goto error;
                }
                continue;
            }
            if (c == '}')
                break;
            if (c < 0) {
                fail_at (p, start, "unterminated inline table");
                goto error;
            }
            if (newline_len (p) > 0 || c == '\r') {
                fail_at (p, p->pos, "newline not allowed in inline table");
                goto error;
            }
            fail_unexpected (p, p->pos, "',' or '}' in inline table");
            goto error;
        }
    }
    p->pos++;
    p->depth--;
    if (meta_set (p, tbl, F_FROZEN) < 0)
        goto error;
    *out = tbl;
    return 0;
error:
    json_decref (tbl);
    return -1;
}

static int parse_bool (struct parser *p, json_t **out)
{
    int t = peek (p) == 't';
    const char *word = t ? "true" : "false";
    size_t n = t ? 4 : 5;
    if (p->len - p->pos < n || memcmp (p->s + p->pos, word, n) != 0
        || is_bare (peek_at (p, n)))
        return fail_at (p, p->pos, "invalid value (strings must be quoted)");
    p->pos += n;
    if (!(*out = json_boolean (t)))
        return fail_nomem (p);
    return 0;
}

static int parse_value (struct parser *p, json_t **out)
{
    int c = peek (p);
    switch (c) {
        case '"':
        case '\'':
            return parse_string_value (p, out);
        case 't':
        case 'f':
            return parse_bool (p, out);
        case '[':
            return parse_array (p, out);
        case '{':
            return parse_inline_table (p, out);
        case 'i':
        case 'n':
        case '+':
        case '-':
            return parse_number (p, out);
        default:
            break;
    }
    if (is_digit (c)) {
        if (is_digit (peek_at (p, 1)) && is_digit (peek_at (p, 2))
            && is_digit (peek_at (p, 3)) && peek_at (p, 4) == '-')
            return parse_datetime (p, out);
        if (is_digit (peek_at (p, 1)) && peek_at (p, 2) == ':')
            return parse_local_time (p, out);
        return parse_number (p, out);
    }
    if (c < 0 || c == '\n' || c == '\r' || c == '#')
        return fail_unexpected (p, p->pos, "a value");
    if (is_bare (c))
        return fail_at (p, p->pos, "invalid value (strings must be quoted)");
    return fail_unexpected (p, p->pos, "a value");
}

/* --- tables -------------------------------------------------------------- */

/* Insert dotted key k = val into table tbl (takes ownership of val). */
static int insert_kv (struct parser *p, json_t *tbl, struct keypath *k,
                      json_t *val)
{
    char ks[256];
    for (int i = 0; i < k->n - 1; i++) {
        json_t *child = json_object_getn (tbl, k->v[i].s, k->v[i].len);
        if (!child) {
            if (!(child = json_object ())
                || json_object_setn_new (tbl, k->v[i].s, k->v[i].len,
                                         child) < 0) {
                json_decref (val);
                return fail_nomem (p);
            }
            if (meta_set (p, child, F_DOTTED) < 0)
                goto error;
        }
        else if (json_is_object (child)) {
            unsigned f = meta_get (p, child);
            if (f & F_FROZEN) {
                fail_at (p, k->v[i].pos, "cannot add keys to inline table "
                         "'%s'", keystr (k, i + 1, ks, sizeof (ks)));
                goto error;
            }
            if (f & F_HEADER) {
                fail_at (p, k->v[i].pos, "table '%s' was defined by a "
                         "[header]; dotted keys cannot extend it",
                         keystr (k, i + 1, ks, sizeof (ks)));
                goto error;
            }
            if (meta_set (p, child, f | F_DOTTED) < 0)
                goto error;
        }
        else {
            fail_at (p, k->v[i].pos, "key '%s' is already defined as a "
                     "value, not a table", keystr (k, i + 1, ks, sizeof (ks)));
            goto error;
        }
        tbl = child;
    }
    struct keypart *last = &k->v[k->n - 1];
    if (json_object_getn (tbl, last->s, last->len)) {
        fail_at (p, last->pos, "duplicate key '%s'",
                 keystr (k, k->n, ks, sizeof (ks)));
        goto error;
    }
    if (json_object_setn_new (tbl, last->s, last->len, val) < 0)
        return fail_nomem (p);
    return 0;
error:
    json_decref (val);
    return -1;
}

/* At '[': a [table] or [[array of tables]] header. */
static int parse_header (struct parser *p)
{
    struct keypath k = { 0 };
    char ks[256];
    int aot = peek_at (p, 1) == '[';
    json_t *tbl = p->root;

    p->pos += aot ? 2 : 1;
    skip_ws (p);
    p->depth = aot;   /* an array of tables is one level more */
    if (parse_key (p, &k) < 0)
        goto error;
    p->depth = 0;
    if (k.n + aot > TOML_MAX_DEPTH) {
        fail_at (p, p->pos, "nesting deeper than %d levels", TOML_MAX_DEPTH);
        goto error;
    }
    p->table_depth = k.n + aot;
    if (peek (p) != ']' || (aot && peek_at (p, 1) != ']')) {
        fail_unexpected (p, p->pos, aot ? "']]' to close header"
                                        : "']' to close header");
        goto error;
    }
    p->pos += aot ? 2 : 1;
    if (expect_eol (p) < 0)
        goto error;

    for (int i = 0; i < k.n - 1; i++) {
        json_t *child = json_object_getn (tbl, k.v[i].s, k.v[i].len);
        if (!child) {
            if (!(child = json_object ())
                || json_object_setn_new (tbl, k.v[i].s, k.v[i].len,
                                         child) < 0) {
                fail_nomem (p);
                goto error;
            }
            if (meta_set (p, child, F_IMPLICIT) < 0)
                goto error;
        }
        else if (json_is_object (child)) {
            if (meta_get (p, child) & F_FROZEN) {
                fail_at (p, k.v[i].pos, "cannot extend inline table '%s'",
                         keystr (&k, i + 1, ks, sizeof (ks)));
                goto error;
            }
        }
        else if (json_is_array (child) && (meta_get (p, child) & F_AOT)) {
            child = json_array_get (child, json_array_size (child) - 1);
        }
        else {
            fail_at (p, k.v[i].pos, "key '%s' is %s, not a table",
                     keystr (&k, i + 1, ks, sizeof (ks)),
                     json_is_array (child) ? "a static array" : "a value");
            goto error;
        }
        tbl = child;
    }
    struct keypart *last = &k.v[k.n - 1];
    json_t *child = json_object_getn (tbl, last->s, last->len);
    keystr (&k, k.n, ks, sizeof (ks));
    if (aot) {
        json_t *arr = child, *elem;
        if (!arr) {
            if (!(arr = json_array ())
                || json_object_setn_new (tbl, last->s, last->len, arr) < 0) {
                fail_nomem (p);
                goto error;
            }
            if (meta_set (p, arr, F_AOT) < 0)
                goto error;
        }
        else if (!json_is_array (arr) || !(meta_get (p, arr) & F_AOT)) {
            fail_at (p, last->pos, "cannot define '%s' as an array of "
                     "tables: already defined as %s", ks,
                     json_is_array (arr) ? "a static array"
                     : json_is_object (arr) ? "a table" : "a value");
            goto error;
        }
        if (!(elem = json_object ()) || json_array_append_new (arr, elem) < 0) {
            fail_nomem (p);
            goto error;
        }
        if (meta_set (p, elem, F_HEADER) < 0)
            goto error;
        p->cur = elem;
    }
    else {
        if (!child) {
            if (!(child = json_object ())
                || json_object_setn_new (tbl, last->s, last->len,
                                         child) < 0) {
                fail_nomem (p);
                goto error;
            }
        }
        else if (json_is_object (child)) {
            unsigned f = meta_get (p, child);
            if (f & F_FROZEN) {
                fail_at (p, last->pos, "cannot redefine inline table '%s'",
                         ks);
                goto error;
            }
            if (f & (F_HEADER | F_DOTTED)) {
                fail_at (p, last->pos, "table '%s' defined more than once",
                         ks);
                goto error;
            }
        }
        else {
            fail_at (p, last->pos, "cannot define table '%s': already "
                     "defined as %s", ks, json_is_array (child)
                     ? "an array" : "a value");
            goto error;
        }
        if (meta_set (p, child, F_HEADER) < 0)
            goto error;
        p->cur = child;
    }
    keypath_free (&k);
    return 0;
error:
    keypath_free (&k);
    return -1;
}

static int parse_keyval (struct parser *p)
{
    struct keypath k = { 0 };
    json_t *v;
    int rc;
    p->depth = p->table_depth;
    if (parse_key (p, &k) < 0)
        goto error;
    if (peek (p) != '=') {
        fail_unexpected (p, p->pos, "'=' after key");
        goto error;
    }
    p->pos++;
    skip_ws (p);
    p->depth = p->table_depth + k.n - 1;   /* its dotted parts nest */
    rc = parse_value (p, &v);
    p->depth = 0;
    if (rc < 0)
        goto error;
    if (insert_kv (p, p->cur, &k, v) < 0)
        goto error;
    keypath_free (&k);
    return expect_eol (p);
error:
    keypath_free (&k);
    return -1;
}

static int parse_document (struct parser *p)
{
    if (p->len >= 3 && memcmp (p->s, "\xEF\xBB\xBF", 3) == 0)
        p->pos = 3;
    if (check_utf8 (p) < 0)
        return -1;
    while (p->pos < p->len) {
        skip_ws (p);
        int c = peek (p);
        int n;
        if (c < 0)
            break;
        if (c == '#') {
            if (expect_eol (p) < 0)
                return -1;
        }
        else if ((n = newline_len (p)) > 0)
            p->pos += n;
        else if (c == '[') {
            if (parse_header (p) < 0)
                return -1;
        }
        else if (is_bare (c) || c == '"' || c == '\'') {
            if (parse_keyval (p) < 0)
                return -1;
        }
        else if (c == '\r')
            return fail_at (p, p->pos, "carriage return not followed by "
                            "line feed");
        else
            return fail_unexpected (p, p->pos, "a key or [table]");
    }
    return 0;
}

json_t *toml_parse (const char *text, size_t len, struct toml_error *err)
{
    struct parser p = { 0 };
    if (err)
        memset (err, 0, sizeof (*err));
    if (!text && len > 0) {
        if (err)
            snprintf (err->msg, sizeof (err->msg), "invalid argument");
        errno = EINVAL;
        return NULL;
    }
    p.s = (const unsigned char *)(text ? text : "");
    p.len = len;
    p.err = err;
    if (!(p.root = json_object ())) {
        fail_nomem (&p);
        return NULL;
    }
    p.cur = p.root;
    if (parse_document (&p) < 0) {
        int saved = errno;
        json_decref (p.root);
        free (p.meta);
        errno = saved;
        return NULL;
    }
    free (p.meta);
    return p.root;
}

/* A FIFO or a socket is no config file: reading one would wait for a
 * writer for ever (or take whatever someone writes).  -1 with EINVAL and
 * the reason in err. */
static int not_a_file (int fd, struct toml_error *err)
{
    struct stat sb;
    const char *what = NULL;

    if (fstat (fd, &sb) < 0)
        return -1;
    if (S_ISFIFO (sb.st_mode))
        what = "a FIFO";
    else if (S_ISSOCK (sb.st_mode))
        what = "a socket";
    else if (S_ISDIR (sb.st_mode))
        what = "a directory";
    if (!what)
        return 0;
    if (err)
        snprintf (err->msg, sizeof (err->msg), "not a regular file (%s)",
                  what);
    errno = EINVAL;
    return -1;
}

json_t *toml_parse_file (const char *path, struct toml_error *err)
{
    struct buf b = { 0 };
    int fd, saved;
    json_t *o;

    if (err)
        memset (err, 0, sizeof (*err));
    if (!path) {
        errno = EINVAL;
        goto syserr;
    }
    /* O_NONBLOCK: opening a FIFO must not wait for a writer; it and a
     * socket are refused at once below (a device such as /dev/zero meets
     * the size limit). */
    if ((fd = open (path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) < 0)
        goto syserr;
    if (not_a_file (fd, err) < 0)
        goto close_err;
    for (;;) {
        ssize_t n;
        if (buf_reserve (&b, 65536) < 0) {
            errno = ENOMEM;
            goto close_err;
        }
        n = read (fd, b.data + b.len, b.cap - b.len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            goto close_err;
        }
        if (n == 0)
            break;
        b.len += (size_t)n;
        /* A config is small; /dev/zero or a runaway file is not one. */
        if (b.len > TOML_MAX_FILE) {
            errno = EFBIG;
            goto close_err;
        }
    }
    close (fd);
    o = toml_parse (b.data, b.len, err);
    saved = errno;
    free (b.data);
    errno = saved;
    return o;
close_err:
    saved = errno;
    close (fd);
    free (b.data);
    errno = saved;
syserr:
    saved = errno;
    if (err && !err->msg[0])
        snprintf (err->msg, sizeof (err->msg), "%s", strerror (saved));
    errno = saved;
    return NULL;
}

/* vi:ts=4 sw=4 expandtab
 */
