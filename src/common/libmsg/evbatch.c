/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* evbatch.c: batches of sequenced events (see evbatch.h).
 *
 * The checker walks the buffer once and never reads past its stated
 * size; the writer appends records to a buffer it grows by doubling and
 * writes the header last, when the count and seq range are known.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/common/libutil/wire.h"
#include "src/common/libutil/errbuf.h"

#include "evbatch.h"

int evbatch_is_batch (const void *data, size_t len)
{
    const uint8_t *p = data;
    return len >= EVBATCH_HDR_SIZE && p[0] == EVBATCH_MAGIC
           && p[1] == EVBATCH_VERSION;
}

/* Parse the record at p (n bytes left); no validation of content. */
static int parse_rec (const uint8_t *p, size_t n, struct evbatch_rec *rec)
{
    size_t tlen, plen;

    if (n < EVBATCH_REC_SIZE)
        return -1;
    tlen = p[21];
    plen = wire_get32 (p + 16);
    if (n - EVBATCH_REC_SIZE < tlen || n - EVBATCH_REC_SIZE - tlen < plen)
        return -1;
    rec->seq = wire_get32 (p);
    rec->userid = wire_get32 (p + 4);
    rec->rolemask = wire_get32 (p + 8);
    rec->publisher = wire_get32 (p + 12);
    rec->flags = p[20];
    rec->topic = (const char *)p + EVBATCH_REC_SIZE;
    rec->topic_len = tlen;
    rec->payload = plen ? rec->topic + tlen : NULL;
    rec->payload_len = plen;
    rec->raw = p;
    rec->raw_len = EVBATCH_REC_SIZE + tlen + plen;
    return 0;
}

static int printable (const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (s[i] < 0x20 || s[i] > 0x7e)
            return 0;
    return 1;
}

static const char *rec_problem (const uint8_t *p, const struct evbatch_rec *r)
{
    if (r->topic_len == 0)
        return "empty topic";
    if (!printable (r->topic, r->topic_len))
        return "topic is not printable text";
    if (r->flags & ~MSGFLAG_PRIVATE)
        return "unknown flags";
    if (wire_get16 (p + 22) != 0)
        return "reserved bytes are not 0";
    if (r->payload && memchr (r->payload, '\0', r->payload_len))
        return "payload holds a NUL";
    return NULL;
}

/* Bytes after the last record: the link and the signature. */
static size_t trailer_size (uint32_t flags)
{
    return (flags & EVBATCH_F_SIGNED ? EVBATCH_SIG_SIZE : 0)
           + (flags & EVBATCH_F_CHAINED ? EVBATCH_LINK_SIZE : 0);
}

/* Where the records end: before the trailer (if it fits). */
static size_t records_len (const void *data, size_t len)
{
    const uint8_t *p = data;
    size_t t = len >= EVBATCH_HDR_SIZE ? trailer_size (wire_get32 (p + 12)) : 0;

    return len >= EVBATCH_HDR_SIZE + t ? len - t : len;
}

int evbatch_header (const void *data, size_t len, struct evbatch_hdr *h)
{
    const uint8_t *p = data;

    if (!evbatch_is_batch (data, len)) {
        errno = EPROTO;
        return -1;
    }
    h->count = wire_get16 (p + 2);
    h->first = wire_get32 (p + 4);
    h->last = wire_get32 (p + 8);
    h->epoch = wire_get64 (p + 16);
    h->flags = wire_get32 (p + 12);
    return 0;
}

int evbatch_check (const void *data, size_t len, struct evbatch_hdr *h,
                   char *errbuf, size_t errlen)
{
    const uint8_t *p = data;
    struct evbatch_rec rec;
    const char *why;
    uint32_t prev = 0;
    size_t off = EVBATCH_HDR_SIZE;

    if (!data || len < EVBATCH_HDR_SIZE)
        return errbuf_fail (errbuf, errlen, EPROTO, "batch is %zu bytes, less "
                            "than a header", len);
    if (p[0] != EVBATCH_MAGIC || p[1] != EVBATCH_VERSION)
        return errbuf_fail (errbuf, errlen, EPROTO, "bad batch magic or "
                            "version");
    h->flags = wire_get32 (p + 12);
    if (h->flags != 0 && h->flags != EVBATCH_F_SIGNED
        && h->flags != (EVBATCH_F_SIGNED | EVBATCH_F_CHAINED))
        return errbuf_fail (errbuf, errlen, EPROTO, "batch flags 0x%x are "
                            "not known", (unsigned)h->flags);
    if (len < EVBATCH_HDR_SIZE + trailer_size (h->flags))
        return errbuf_fail (errbuf, errlen, EPROTO, "signed batch of %zu "
                            "bytes has no room for its %s", len,
                            h->flags & EVBATCH_F_CHAINED
                                ? "link and signature" : "signature");
    len = records_len (data, len);
    h->count = wire_get16 (p + 2);
    h->first = wire_get32 (p + 4);
    h->last = wire_get32 (p + 8);
    h->epoch = wire_get64 (p + 16);
    if (h->count == 0 || h->first == 0 || h->last < h->first
        || h->last - h->first < (uint32_t)h->count - 1)
        return errbuf_fail (errbuf, errlen, EPROTO, "batch header: count %u, "
                            "seqs %u..%u", (unsigned)h->count,
                            (unsigned)h->first, (unsigned)h->last);
    for (unsigned i = 0; i < h->count; i++) {
        if (parse_rec (p + off, len - off, &rec) < 0)
            return errbuf_fail (errbuf, errlen, EPROTO, "record %u is "
                                "truncated", i);
        if ((why = rec_problem (p + off, &rec)))
            return errbuf_fail (errbuf, errlen, EPROTO, "record %u: %s", i,
                                why);
        if ((i == 0 && rec.seq != h->first) || (i > 0 && rec.seq <= prev)
            || (i == h->count - 1u && rec.seq != h->last))
            return errbuf_fail (errbuf, errlen, EPROTO, "record %u: seq %u "
                                "out of order", i, (unsigned)rec.seq);
        prev = rec.seq;
        off += rec.raw_len;
    }
    if (off != len)
        return errbuf_fail (errbuf, errlen, EPROTO, "%zu bytes after the last "
                            "record", len - off);
    return 0;
}

const uint8_t *evbatch_link (const void *data, size_t len)
{
    const uint8_t *p = data;
    uint32_t flags = len >= EVBATCH_HDR_SIZE ? wire_get32 (p + 12) : 0;

    if ((flags & (EVBATCH_F_SIGNED | EVBATCH_F_CHAINED))
            != (EVBATCH_F_SIGNED | EVBATCH_F_CHAINED)
        || len < EVBATCH_HDR_SIZE + trailer_size (flags))
        return NULL;
    return p + len - EVBATCH_SIG_SIZE - EVBATCH_LINK_SIZE;
}

size_t evbatch_body_len (const void *data, size_t len)
{
    const uint8_t *p = data;

    if (len >= EVBATCH_HDR_SIZE + EVBATCH_SIG_SIZE
        && (wire_get32 (p + 12) & EVBATCH_F_SIGNED))
        return len - EVBATCH_SIG_SIZE;
    return len;
}

int evbatch_next (const void *data, size_t len, size_t *off,
                  struct evbatch_rec *rec)
{
    len = records_len (data, len);
    if (*off == 0)
        *off = EVBATCH_HDR_SIZE;
    if (*off >= len
        || parse_rec ((const uint8_t *)data + *off, len - *off, rec) < 0)
        return 0;
    *off += rec->raw_len;
    return 1;
}

msg_t *evbatch_rec_msg (const struct evbatch_rec *rec)
{
    char topic[MSG_MAX_TOPIC + 1];
    msg_t *msg;

    if (rec->topic_len > MSG_MAX_TOPIC) {
        errno = EPROTO;
        return NULL;
    }
    memcpy (topic, rec->topic, rec->topic_len);
    topic[rec->topic_len] = '\0';
    if (!(msg = msg_create (MSGTYPE_EVENT)))
        return NULL;
    if (msg_set_topic (msg, topic) < 0
        || (rec->payload
            && msg_set_payload (msg, rec->payload, rec->payload_len) < 0)
        || msg_set_flags (msg, msg_get_flags (msg) | rec->flags) < 0) {
        msg_destroy (&msg);
        errno = EPROTO;
        return NULL;
    }
    msg_set_seq (msg, rec->seq);
    msg_set_userid (msg, rec->userid);
    msg_set_rolemask (msg, rec->rolemask);
    msg_set_matchtag (msg, rec->publisher);
    return msg;
}

size_t evbatch_rec_size (const msg_t *event)
{
    const char *topic = msg_get_topic (event);
    size_t plen = 0;

    msg_get_payload (event, &plen);
    return EVBATCH_REC_SIZE + (topic ? strlen (topic) : 0) + plen;
}

void evbatch_writer_init (struct evbatch_writer *w, uint64_t epoch)
{
    memset (w, 0, sizeof (*w));
    w->len = EVBATCH_HDR_SIZE;
    w->epoch = epoch;
}

void evbatch_writer_free (struct evbatch_writer *w)
{
    free (w->buf);
    memset (w, 0, sizeof (*w));
}

void evbatch_writer_reset (struct evbatch_writer *w, uint64_t epoch)
{
    w->len = EVBATCH_HDR_SIZE;
    w->count = 0;
    w->first = w->last = 0;
    w->epoch = epoch;
}

static int reserve (struct evbatch_writer *w, size_t more)
{
    size_t need = w->len + more, cap = w->cap ? w->cap : 4096;
    uint8_t *p;

    if (need < w->len) {
        errno = ENOMEM;
        return -1;
    }
    if (need <= w->cap)
        return 0;
    while (cap < need)
        cap *= 2;
    if (!(p = realloc (w->buf, cap)))
        return -1;
    w->buf = p;
    w->cap = cap;
    return 0;
}

static int add_check (struct evbatch_writer *w, uint32_t seq)
{
    if (w->count == EVBATCH_MAX_COUNT) {
        errno = E2BIG;
        return -1;
    }
    if (seq == 0 || (w->count > 0 && seq <= w->last)) {
        errno = EINVAL;
        return -1;
    }
    return 0;
}

static void added (struct evbatch_writer *w, uint32_t seq)
{
    if (w->count++ == 0)
        w->first = seq;
    w->last = seq;
}

int evbatch_add (struct evbatch_writer *w, const msg_t *event, uint32_t seq)
{
    const char *topic = msg_get_topic (event);
    size_t tlen = topic ? strlen (topic) : 0, plen = 0;
    const char *payload = msg_get_payload (event, &plen);
    uint8_t *p;

    if (tlen == 0 || tlen > MSG_MAX_TOPIC || plen > UINT32_MAX) {
        errno = EINVAL;
        return -1;
    }
    if (add_check (w, seq) < 0 || reserve (w, EVBATCH_REC_SIZE + tlen + plen) < 0)
        return -1;
    p = w->buf + w->len;
    wire_put32 (p, seq);
    wire_put32 (p + 4, msg_get_userid (event));
    wire_put32 (p + 8, msg_get_rolemask (event));
    wire_put32 (p + 12, msg_get_matchtag (event));
    wire_put32 (p + 16, (uint32_t)plen);
    p[20] = msg_get_flags (event) & MSGFLAG_PRIVATE;
    p[21] = (uint8_t)tlen;
    wire_put16 (p + 22, 0);
    memcpy (p + EVBATCH_REC_SIZE, topic, tlen);
    if (plen)
        memcpy (p + EVBATCH_REC_SIZE + tlen, payload, plen);
    w->len += EVBATCH_REC_SIZE + tlen + plen;
    added (w, seq);
    return 0;
}

int evbatch_add_rec (struct evbatch_writer *w, const struct evbatch_rec *rec)
{
    if (add_check (w, rec->seq) < 0 || reserve (w, rec->raw_len) < 0)
        return -1;
    memcpy (w->buf + w->len, rec->raw, rec->raw_len);
    w->len += rec->raw_len;
    added (w, rec->seq);
    return 0;
}

int evbatch_seal (struct evbatch_writer *w)
{
    if (w->count == 0 || reserve (w, 0) < 0 || !w->buf) {
        errno = EINVAL;
        return -1;
    }
    w->buf[0] = EVBATCH_MAGIC;
    w->buf[1] = EVBATCH_VERSION;
    wire_put16 (w->buf + 2, w->count);
    wire_put32 (w->buf + 4, w->first);
    wire_put32 (w->buf + 8, w->last);
    wire_put32 (w->buf + 12, 0);
    wire_put64 (w->buf + 16, w->epoch);
    return 0;
}

/* ---- tags ------------------------------------------------------------- */

size_t evtags_size (uint32_t count)
{
    return EVTAGS_HDR_SIZE + (size_t)count * EVTAGS_ENTRY_SIZE;
}

int evtags_check (const void *data, size_t len, uint32_t *count,
                  char *errbuf, size_t errlen)
{
    const uint8_t *p = data;
    uint32_t n;

    if (!data || len < EVTAGS_HDR_SIZE)
        return errbuf_fail (errbuf, errlen, EPROTO, "tags frame is %zu "
                            "bytes, less than a header", len);
    if (p[0] != EVTAGS_MAGIC || p[1] != EVTAGS_VERSION || p[2] || p[3])
        return errbuf_fail (errbuf, errlen, EPROTO, "bad tags magic, "
                            "version or reserved bytes");
    n = wire_get32 (p + 4);
    if (n > EVTAGS_MAX_COUNT || len != evtags_size (n))
        return errbuf_fail (errbuf, errlen, EPROTO, "tags frame of %zu bytes "
                            "says %u entries", len, (unsigned)n);
    for (uint32_t i = 1; i < n; i++)
        if (evtags_rank (data, i) <= evtags_rank (data, i - 1))
            return errbuf_fail (errbuf, errlen, EPROTO, "tag entry %u: rank "
                                "%u out of order", (unsigned)i,
                                (unsigned)evtags_rank (data, i));
    *count = n;
    return 0;
}

uint32_t evtags_rank (const void *data, uint32_t i)
{
    return wire_get32 ((const uint8_t *)data + evtags_size (i));
}

const uint8_t *evtags_tag (const void *data, uint32_t i)
{
    return (const uint8_t *)data + evtags_size (i) + 4;
}

const uint8_t *evtags_find (const void *data, uint32_t count, uint32_t rank)
{
    uint32_t lo = 0, hi = count;

    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        uint32_t r = evtags_rank (data, mid);
        if (r == rank)
            return evtags_tag (data, mid);
        if (r < rank)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

void evtags_put_header (void *buf, uint32_t count)
{
    uint8_t *p = buf;

    p[0] = EVTAGS_MAGIC;
    p[1] = EVTAGS_VERSION;
    p[2] = p[3] = 0;
    wire_put32 (p + 4, count);
}

void evtags_put_entry (void *buf, uint32_t i, uint32_t rank,
                       const uint8_t *tag)
{
    uint8_t *p = (uint8_t *)buf + evtags_size (i);

    wire_put32 (p, rank);
    memcpy (p + 4, tag, EVTAGS_TAG_SIZE);
}
