/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* gen_seeds.c: write a small seed corpus for message_fuzz (and, with
 * --packed, for packed_fuzz).
 *
 * Usage: gen_seeds [--packed] DIR.  With --packed each seed is written
 * as the overlay packs a message (packed.h: a u32 count, then each frame
 * as a u32 length and its bytes, network order), plus near misses of
 * that packing (trailing byte, cut short, a count too large).  Each seed is a multipart message in the fuzz
 * target's framing (a length byte per frame, 0xff = 2-byte length
 * follows), built by hand here rather than with libmsg so the seeds do
 * not inherit the encoder's bugs.  Seeds cover every type, with and
 * without routes, topic and payload, plus a few near-misses, and JSON
 * payloads at the validator's edges (escapes, surrogates, UTF-8, numbers
 * at the limits of int64 and double, deep nesting).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct seed {
    uint8_t buf[8192];
    size_t len;
};

static void frame (struct seed *s, const void *data, size_t len)
{
    if (len >= 0xff) {
        s->buf[s->len++] = 0xff;
        s->buf[s->len++] = (uint8_t)(len >> 8);
        s->buf[s->len++] = (uint8_t)len;
    }
    else
        s->buf[s->len++] = (uint8_t)len;
    memcpy (s->buf + s->len, data, len);
    s->len += len;
}

static void str (struct seed *s, const char *text)
{
    frame (s, text, strlen (text));
}

static void put32 (uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static void proto (struct seed *s, uint8_t type, uint8_t flags,
                   uint32_t aux1, uint32_t aux2)
{
    uint8_t p[20] = { 0x8e, 1, type, flags };
    put32 (p + 4, 1000);
    put32 (p + 8, 1);
    put32 (p + 12, aux1);
    put32 (p + 16, aux2);
    frame (s, p, sizeof (p));
}

static int packed_mode;

/* s (the fuzz framing) as a packed list, written by hand. */
static size_t to_packed (const struct seed *s, uint8_t *out, size_t max)
{
    size_t pos = 0, len = 4;
    uint32_t n = 0;

    while (pos < s->len) {
        size_t flen = s->buf[pos++];
        if (flen == 0xff) {
            flen = (size_t)s->buf[pos] << 8 | s->buf[pos + 1];
            pos += 2;
        }
        if (len + 4 + flen > max)
            return 0;
        put32 (out + len, (uint32_t)flen);
        memcpy (out + len + 4, s->buf + pos, flen);
        len += 4 + flen;
        pos += flen;
        n++;
    }
    put32 (out, n);
    return len;
}

static int write_file (const char *dir, const char *name, const void *data,
                       size_t len)
{
    char path[4096];
    snprintf (path, sizeof (path), "%s/seed-%s", dir, name);
    FILE *f = fopen (path, "wb");
    if (!f || fwrite (data, 1, len, f) != len || fclose (f) != 0) {
        perror (path);
        return -1;
    }
    return 0;
}

static int save (const char *dir, const char *name, const struct seed *s)
{
    static uint8_t packed[sizeof (s->buf) * 4];
    size_t len;

    if (!packed_mode)
        return write_file (dir, name, s->buf, s->len);
    if (!(len = to_packed (s, packed, sizeof (packed))))
        return -1;
    return write_file (dir, name, packed, len);
}

/* Near misses of the packing itself, from one valid packed seed. */
static int packed_misses (const char *dir, const struct seed *s)
{
    static uint8_t p[sizeof (s->buf) * 4 + 1];
    size_t len = to_packed (s, p, sizeof (p) - 1);
    int rc = 0;

    if (!len)
        return -1;
    p[len] = 0;
    rc |= write_file (dir, "packed-trailing", p, len + 1);
    rc |= write_file (dir, "packed-short", p, len - 1);
    rc |= write_file (dir, "packed-count-only", p, 4);
    put32 (p, 37);
    rc |= write_file (dir, "packed-count-37", p, len);
    put32 (p, 0xffffffff);
    rc |= write_file (dir, "packed-count-max", p, len);
    put32 (p, 0);
    rc |= write_file (dir, "packed-empty", p, 4);
    return rc;
}

int main (int argc, char **argv)
{
    struct seed s;
    int rc = 0;

    if (argc == 3 && !strcmp (argv[1], "--packed"))
        packed_mode = 1;
    else if (argc != 2) {
        fprintf (stderr, "Usage: gen_seeds [--packed] DIR\n");
        return 1;
    }
    const char *dir = argv[argc - 1];

    /* request, routed, topic + payload */
    s.len = 0;
    str (&s, "0");
    str (&s, "8c1a2b3c-0000-4000-8000-000000000001");
    str (&s, "");
    str (&s, "kvs.get");
    str (&s, "{\"key\":\"a.b\",\"flags\":0}");
    proto (&s, 0x01, 0x01 | 0x02 | 0x08, 0xffffffff, 42);
    rc |= save (dir, "request-routed", &s);

    /* request, no routes, no payload, upstream */
    s.len = 0;
    str (&s, "broker.ping");
    proto (&s, 0x01, 0x01 | 0x10, 3, 7);
    rc |= save (dir, "request-plain", &s);
    if (packed_mode)
        rc |= packed_misses (dir, &s);

    /* success response, routed */
    s.len = 0;
    str (&s, "client-1");
    str (&s, "");
    str (&s, "kvs.get");
    str (&s, "{\"val\":[1,2,{\"x\":null}]}");
    proto (&s, 0x02, 0x01 | 0x02 | 0x08 | 0x40, 0, 42);
    rc |= save (dir, "response-ok", &s);

    /* error response with a text payload */
    s.len = 0;
    str (&s, "");
    str (&s, "kvs.get");
    str (&s, "No such key: a.b");
    proto (&s, 0x02, 0x01 | 0x02 | 0x08, 2, 42);
    rc |= save (dir, "response-error", &s);

    /* event */
    s.len = 0;
    str (&s, "heartbeat.pulse");
    str (&s, "{\"epoch\":12}");
    proto (&s, 0x04, 0x01 | 0x02 | 0x20, 99, 0);
    rc |= save (dir, "event", &s);

    /* control: proto only */
    s.len = 0;
    proto (&s, 0x08, 0, 1, 5);
    rc |= save (dir, "control", &s);

    /* a deep route stack and a long topic (2-byte length frames) */
    s.len = 0;
    for (int i = 0; i < 31; i++) {
        char id[16];
        snprintf (id, sizeof (id), "%d", i);
        str (&s, id);
    }
    str (&s, "");
    char topic[300];
    memset (topic, 't', 255);
    topic[255] = '\0';
    str (&s, topic);
    proto (&s, 0x01, 0x01 | 0x08 | 0x04, 0, 1);
    rc |= save (dir, "request-deep", &s);

    /* near miss: JSON array payload on a request */
    s.len = 0;
    str (&s, "a.b");
    str (&s, "[1,2,3]");
    proto (&s, 0x01, 0x01 | 0x02, 0, 0);
    rc |= save (dir, "bad-array", &s);

    /* JSON at the validator's edges, one event each */
    static const char *edges[] = {
        "{\"s\":\"\\ud83d\\ude00 \\u00e9 \\n \\/ \\\"\"}",
        "{\"u\":\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"}",
        "{\"i\":[9223372036854775807,-9223372036854775808,0,-0]}",
        "{\"r\":[1.5e308,1.7976931348623157e308,1e-400,0.0e99999]}",
        "{\"d\":[[[[[[[[[[[[[[[[{\"a\":[true,false,null]}]]]]]]]]]]]]]]]]}",
        "{\"k\":{},\"l\":[],\"m\":{\"\":\"\"},\"k\":1}",
    };
    for (size_t i = 0; i < sizeof (edges) / sizeof (edges[0]); i++) {
        char name[32];
        s.len = 0;
        str (&s, "json.edge");
        str (&s, edges[i]);
        proto (&s, 0x04, 0x01 | 0x02, 1, 0);
        snprintf (name, sizeof (name), "json-edge-%zu", i);
        rc |= save (dir, name, &s);
    }

    return rc ? 1 : 0;
}

/* vi: ts=4 sw=4 expandtab
 */
