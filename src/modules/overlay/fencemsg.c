/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* fencemsg.c: fence records on the wire (see fencemsg.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fencemsg.h"
#include "src/common/libutil/wire.h"

#define RECORD_SIZE 14

/* Index of reason r in the table (adding it), or 0 ("") when full. */
static int reason_index (const char **table, int *n, const char *r)
{
    if (!r || !*r)
        return 0;
    for (int i = 1; i < *n; i++)
        if (!strcmp (table[i], r))
            return i;
    if (*n >= FENCEMSG_MAX_REASONS)
        return 0;
    table[*n] = r;
    return (*n)++;
}

struct frame *fencemsg_encode (uint32_t root, const struct fence_record *recs,
                               size_t n)
{
    const char *table[FENCEMSG_MAX_REASONS] = { "" };
    uint8_t *idx = n ? malloc (n) : NULL;
    int nreasons = 1;
    size_t size = 1 + 4 + 2 + 4 + n * RECORD_SIZE, off = 0;

    for (size_t i = 0; i < n; i++)
        if (recs[i].sig && !recs[i].fenced)
            size += FENCEMSG_SIG_SIZE;
    struct frame *f;
    uint8_t *p;

    if (n && !idx) {
        errno = ENOMEM;
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        idx[i] = (uint8_t)reason_index (table, &nreasons, recs[i].reason);
    for (int i = 1; i < nreasons; i++) {
        size_t len = strlen (table[i]);
        size += 1 + (len > 255 ? 255 : len);
    }
    if (!(f = frame_create (NULL, size))) {
        free (idx);
        return NULL;
    }
    p = frame_data (f);
    p[off++] = FENCEMSG_VERSION;
    wire_put32 (p + off, root);
    off += 4;
    p[off++] = (uint8_t)((nreasons - 1) >> 8);
    p[off++] = (uint8_t)(nreasons - 1);
    for (int i = 1; i < nreasons; i++) {
        size_t len = strlen (table[i]);
        if (len > 255)
            len = 255;
        p[off++] = (uint8_t)len;
        memcpy (p + off, table[i], len);
        off += len;
    }
    wire_put32 (p + off, (uint32_t)n);
    off += 4;
    for (size_t i = 0; i < n; i++) {
        wire_put32 (p + off, recs[i].rank);
        wire_put64 (p + off + 4, recs[i].inc);
        p[off + 12] = recs[i].fenced ? 1 : 0;
        p[off + 13] = idx[i];
        off += RECORD_SIZE;
        if (recs[i].sig && !recs[i].fenced) {
            p[off - 2] |= 2;
            memcpy (p + off, recs[i].sig, FENCEMSG_SIG_SIZE);
            off += FENCEMSG_SIG_SIZE;
        }
    }
    free (idx);
    return f;
}

int fencemsg_decode (const void *data, size_t len, uint32_t *root,
                     void (*fn) (const struct fence_record *rec, void *arg),
                     void *arg)
{
    const uint8_t *p = data;
    char *reasons[FENCEMSG_MAX_REASONS + 1] = { "" };
    size_t off = 0;
    uint32_t nrec;
    int nreasons, rc = -1;

    if (len < 11 || p[0] != FENCEMSG_VERSION)
        goto proto;
    *root = wire_get32 (p + 1);
    nreasons = (int)p[5] << 8 | p[6];
    off = 7;
    if (nreasons > FENCEMSG_MAX_REASONS)
        goto proto;
    for (int i = 1; i <= nreasons; i++) {
        size_t l;
        if (off + 1 > len || off + 1 + (l = p[off]) > len)
            goto proto;
        if (!(reasons[i] = strndup ((const char *)p + off + 1, l))) {
            errno = ENOMEM;
            goto done;
        }
        off += 1 + l;
    }
    if (off + 4 > len)
        goto proto;
    nrec = wire_get32 (p + off);
    off += 4;
    if (len - off < (size_t)nrec * RECORD_SIZE)
        goto proto;
    /* check every record before passing any on */
    size_t at = off;
    for (uint32_t i = 0; i < nrec; i++) {
        const uint8_t *r;
        if (len - at < RECORD_SIZE)
            goto proto;
        r = p + at;
        if (r[12] > 2 || r[13] > nreasons)
            goto proto;
        at += RECORD_SIZE + (r[12] == 2 ? FENCEMSG_SIG_SIZE : 0);
        if (at > len)
            goto proto;
    }
    if (at != len)
        goto proto;
    for (uint32_t i = 0; i < nrec; i++) {
        const uint8_t *r = p + off;
        struct fence_record rec = { .rank = wire_get32 (r), .inc = wire_get64 (r + 4),
                                    .fenced = r[12] == 1,
                                    .reason = reasons[r[13]],
                                    .sig = r[12] == 2 ? r + RECORD_SIZE
                                                      : NULL };
        off += RECORD_SIZE + (rec.sig ? FENCEMSG_SIG_SIZE : 0);
        fn (&rec, arg);
    }
    rc = (int)nrec;
    goto done;
proto:
    errno = EPROTO;
done:
    for (int i = 1; i <= FENCEMSG_MAX_REASONS; i++)
        free (reasons[i]);
    return rc;
}
