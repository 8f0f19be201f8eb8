/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* evbatch.h: many sequenced events in one buffer.
 *
 * Rank 0 packs the events it numbers within a short window into one
 * batch.  Brokers forward a batch's bytes unchanged down the event tree,
 * keep them for repairs, and hand them to their local subscribers, who
 * unpack them into event messages (msg_t).  Nothing on the way decodes
 * and re-encodes an event.  Layout, integers in network byte order:
 *
 *   header, 24 bytes
 *     0  u8   magic 0xeb
 *     1  u8   version 1
 *     2  u16  count: records that follow (1..65535)
 *     4  u32  first: seq of the first record
 *     8  u32  last: seq of the last record
 *    12  u32  flags: 0, or EVBATCH_F_SIGNED (rank 0's signature follows
 *              the last record: EVBATCH_SIG_SIZE bytes over everything
 *              before it, doc/overlay-protocol.md section 3.6), or
 *              EVBATCH_F_SIGNED | EVBATCH_F_CHAINED (between the last
 *              record and the signature, a link: the EVBATCH_LINK_SIZE
 *              byte digest of the whole batch rank 0 sealed before
 *              this one, so that one signature vouches for a run)
 *    16  u64  epoch: incarnation of the rank 0 that numbered them
 *   then 'count' records, each
 *     0  u32  seq (strictly increasing from first to last)
 *     4  u32  userid
 *     8  u32  rolemask
 *    12  u32  publisher: rank that published it (the event's matchtag)
 *    16  u32  payload length, 0 for none
 *    20  u8   flags: event message flags (MSGFLAG_PRIVATE or 0)
 *    21  u8   topic length, 1..255
 *    22  u16  reserved, 0
 *    24  topic bytes, then payload bytes (JSON text, no NUL)
 *
 * A batch made by rank 0 holds consecutive seqs; one filtered for a
 * subscriber may skip some.  evbatch_check() is the trust boundary: it
 * validates a whole buffer without allocating, so readers of a checked
 * batch need no further checks.  No I/O, no global state.
 */
#ifndef BGN_EVBATCH_H
#define BGN_EVBATCH_H

#include <stddef.h>
#include <stdint.h>

#include "message.h"

#define EVBATCH_MAGIC       0xeb
#define EVBATCH_VERSION     1
#define EVBATCH_HDR_SIZE    24
#define EVBATCH_REC_SIZE    24      /* record header, before topic */
#define EVBATCH_MAX_COUNT   65535
#define EVBATCH_F_SIGNED    1u
#define EVBATCH_SIG_SIZE    64      /* an Ed25519 signature */
#define EVBATCH_F_CHAINED   2u      /* a link before the signature */
#define EVBATCH_LINK_SIZE   32      /* a BLAKE2b-256 digest */

struct evbatch_hdr {
    uint16_t count;
    uint32_t first, last;
    uint64_t epoch;
    uint32_t flags;             /* 0, EVBATCH_F_SIGNED, or that and
                                   EVBATCH_F_CHAINED */
};

/* One record, pointing into the batch buffer. */
struct evbatch_rec {
    uint32_t seq;
    uint32_t userid;
    uint32_t rolemask;
    uint32_t publisher;
    uint8_t flags;
    const char *topic;          /* not NUL-terminated */
    size_t topic_len;
    const char *payload;        /* NULL if none; not NUL-terminated */
    size_t payload_len;
    const uint8_t *raw;         /* the whole record */
    size_t raw_len;
};

/* Is this buffer (probably) a batch: magic and version?  For telling a
 * batch from a broker message frame; evbatch_check() decides. */
int evbatch_is_batch (const void *data, size_t len);

/* Validate a whole batch and fill *h.  0, or -1 with errno EPROTO and a
 * one-line reason in errbuf (if given). */
int evbatch_check (const void *data, size_t len, struct evbatch_hdr *h,
                   char *errbuf, size_t errlen);

/* The header of a batch already checked (by whoever handed it over):
 * only the size, magic and version are looked at.  0, or -1 with EPROTO. */
int evbatch_header (const void *data, size_t len, struct evbatch_hdr *h);

/* The bytes of a batch its signature covers (all before the signature;
 * len itself for an unsigned batch).  Header-only look: for a checked
 * batch. */
size_t evbatch_body_len (const void *data, size_t len);

/* The link of a checked chained batch (EVBATCH_LINK_SIZE bytes inside
 * data), or NULL if it has none.  Header-only look. */
const uint8_t *evbatch_link (const void *data, size_t len);

/* Walk the records of a checked batch: *off starts at 0.  Returns 1 with
 * *rec filled, 0 at the end (or on a malformed record, which a checked
 * batch does not have). */
int evbatch_next (const void *data, size_t len, size_t *off,
                  struct evbatch_rec *rec);

/* An event message built from a record (seq, topic, payload, userid,
 * rolemask, flags; the publisher as matchtag).  NULL with errno. */
msg_t *evbatch_rec_msg (const struct evbatch_rec *rec);

/* Bytes a record for 'event' takes in a batch. */
size_t evbatch_rec_size (const msg_t *event);

/* Building a batch in a growable buffer (owned by the writer). */
struct evbatch_writer {
    uint8_t *buf;
    size_t len, cap;
    uint16_t count;
    uint32_t first, last;
    uint64_t epoch;
};

void evbatch_writer_init (struct evbatch_writer *w, uint64_t epoch);
void evbatch_writer_free (struct evbatch_writer *w);
/* Start again, empty (keeps the buffer). */
void evbatch_writer_reset (struct evbatch_writer *w, uint64_t epoch);

/* Append an event as seq 'seq' (greater than the last one added).  The
 * event needs a topic.  -1 with errno EINVAL (no topic, seq not
 * increasing), E2BIG (the batch holds EVBATCH_MAX_COUNT), ENOMEM. */
int evbatch_add (struct evbatch_writer *w, const msg_t *event, uint32_t seq);

/* Append a record taken from another (checked) batch. */
int evbatch_add_rec (struct evbatch_writer *w, const struct evbatch_rec *rec);

/* Write the header: the batch is w->buf[0..w->len-1].  -1 with EINVAL if
 * it holds no record. */
int evbatch_seal (struct evbatch_writer *w);

/* ---- tags: a batch's authenticators, one per broker ------------------
 *
 * Beside a batch, in a frame of its own, rank 0 may send a tag for each
 * broker below: a short MAC of the batch under a key only rank 0 and that
 * broker share, far cheaper to check than the batch's signature.  A relay
 * passes each child the entries of its subtree.  Layout (network byte
 * order):
 *
 *   header, 8 bytes: u8 magic 0xea, u8 version 1, u16 reserved 0,
 *                    u32 count (0..EVTAGS_MAX_COUNT)
 *   then 'count' entries of 20 bytes: u32 rank (strictly increasing),
 *                    EVTAGS_TAG_SIZE bytes of tag
 */
#define EVTAGS_MAGIC        0xea
#define EVTAGS_VERSION      1
#define EVTAGS_HDR_SIZE     8
#define EVTAGS_TAG_SIZE     16
#define EVTAGS_ENTRY_SIZE   (4 + EVTAGS_TAG_SIZE)
#define EVTAGS_MAX_COUNT    65536

/* Bytes a tags frame of count entries takes. */
size_t evtags_size (uint32_t count);

/* Validate a tags frame; its entry count in *count.  0, or -1 with errno
 * EPROTO and a one-line reason in errbuf (if given). */
int evtags_check (const void *data, size_t len, uint32_t *count,
                  char *errbuf, size_t errlen);

/* Entry i of a checked tags frame: its rank, and its tag (inside data). */
uint32_t evtags_rank (const void *data, uint32_t i);
const uint8_t *evtags_tag (const void *data, uint32_t i);

/* The tag for 'rank' in a checked frame of count entries, or NULL. */
const uint8_t *evtags_find (const void *data, uint32_t count, uint32_t rank);

/* Writing into a buffer of evtags_size(count) bytes: the header, then
 * each entry i (ranks must increase with i). */
void evtags_put_header (void *buf, uint32_t count);
void evtags_put_entry (void *buf, uint32_t i, uint32_t rank,
                       const uint8_t *tag);

#endif
