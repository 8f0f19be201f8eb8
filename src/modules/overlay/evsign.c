/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* evsign.c: rank 0's signature on the event stream (events.h,
 * evlayer_set_keys).
 *
 * Every broker relays event batches and SYNCs, so the envelope's source
 * field says nothing about who made them: a broker in the way could
 * write its own events under rank 0's numbers.  Rank 0 therefore signs
 * what only it may say -- each batch it closes (the signature goes after
 * the records, evbatch.h) and each SYNC (its numbers, in a fixed text
 * form, as "sig") -- and every other broker checks the signature before
 * it delivers, keeps or forwards anything.  Repairs carry the stored
 * frames, so their signatures with them.  Ed25519 (libsodium
 * crypto_sign_detached); the frames are signed once, at rank 0.
 *
 * Checking a signature costs a broker some 70 us, 30 times what it
 * costs to relay the batch: with many brokers to a core, a paced stream
 * of small batches is bound by it.  So rank 0 chains its batches: each
 * carries, signed with it, the BLAKE2b digest of the whole batch sealed
 * before it (the link).  A broker that reads several tree batches in one
 * go checks only the newest's signature, and takes each older one whose
 * digest is the next one's link: one check per read, however many
 * batches a busy broker finds waiting.  A batch that does not link is
 * checked on its own, so a broken chain (a batch lost, a relay's lie)
 * costs what it did before and no more.  Every batch still stands
 * alone: a repair, or a broker that joins midway, checks its signature.
 *
 * Cheaper still, where every broker has a key of its own and the
 * instance is small enough (TAG_MAX_RANKS): rank 0 sends beside each
 * tree batch a tags frame (evbatch.h), a 16-byte MAC of the batch per
 * rank under a key only rank 0 and that rank can make (ops->tag_key: an
 * X25519 agreement of their keys).  A broker whose tag matches needs no
 * signature check; relays pass each child its subtree's entries only
 * (evdeliver.c).  A missing or wrong tag falls back to the signature, so
 * a relay can withhold the shortcut but never forge with it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <sodium.h>

#include "evlayer_int.h"

void evl_set_keys (struct evlayer *ev, const unsigned char *sk,
                   const unsigned char *root_pk)
{
    ev->can_sign = sk != NULL;
    if (sk) {
        memcpy (ev->sign_sk, sk, sizeof (ev->sign_sk));
        /* rank 0 checks proofs of its own signature (SEQ_REPORT) */
        crypto_sign_ed25519_sk_to_pk (ev->root_pk, sk);
    }
    ev->verify = root_pk != NULL && ev->rank != 0;
    if (root_pk)
        memcpy (ev->root_pk, root_pk, sizeof (ev->root_pk));
}

/* The BLAKE2b digest of a whole batch frame: a link, and what tags MAC. */
static void digest_of (const struct frame *batch, unsigned char *digest)
{
    crypto_generichash (digest, EVBATCH_LINK_SIZE, frame_data (batch),
                        frame_size (batch), NULL, 0);
}

struct frame *evl_sealed_frame (struct evlayer *ev, const uint8_t *buf,
                                size_t len)
{
    size_t signed_len = len + EVBATCH_LINK_SIZE;
    size_t total = signed_len + EVBATCH_SIG_SIZE;
    unsigned char *b;
    struct frame *f;

    if (!ev->can_sign)
        return frame_create (buf, len);
    if (!(b = malloc (total)))
        return NULL;
    memcpy (b, buf, len);
    b[12] = b[13] = b[14] = 0;
    b[15] = EVBATCH_F_SIGNED | EVBATCH_F_CHAINED;
    memcpy (b + len, ev->chain_prev, EVBATCH_LINK_SIZE);
    crypto_sign_detached (b + signed_len, NULL, b, signed_len, ev->sign_sk);
    f = frame_create (b, total);
    free (b);
    if (f)
        digest_of (f, ev->chain_prev);
    return f;
}

/* Is sig rank 0's signature of data? */
static int root_signed (struct evlayer *ev, const void *data, size_t len,
                        const unsigned char *sig)
{
    if (ev->ops->verify)
        return ev->ops->verify (ev->arg, data, len, sig);
    return crypto_sign_verify_detached (sig, data, len, ev->root_pk) == 0;
}

/* ---- what checking costs, per link ------------------------------------ */

/* The budget of neighbour 'via', or NULL (not a rank: not counted). */
static struct siglink *link_of (struct evlayer *ev, uint32_t via)
{
    uint32_t size = bgn_topo_size (ev->topo);

    if (via >= size)
        return NULL;
    if (!ev->links && !(ev->links = calloc (size, sizeof (*ev->links))))
        return NULL;
    return &ev->links[via];
}

int evl_sig_admit (struct evlayer *ev, uint32_t via)
{
    struct siglink *l = link_of (ev, via);

    if (!l)
        return 1;
    if (sigbudget_banned (&l->fails, ev->now)) {
        ev->sig_refused++;
        ev->rejected++;
        return 0;
    }
    if (l->refill == 0)
        l->tokens = SIG_BURST;
    else
        l->tokens += (ev->now - l->refill) * SIG_RATE;
    l->refill = ev->now > 0 ? ev->now : 1e-9;
    if (l->tokens > SIG_BURST)
        l->tokens = SIG_BURST;
    if (l->tokens < 1) {
        ev->sig_throttled++;
        ev->rejected++;
        evl_warn_counted (ev, ev->sig_throttled, "signature checks past "
                          "the link's bound: dropped unchecked (repaired "
                          "later)", via, via);
        return 0;
    }
    l->tokens -= 1;
    return 1;
}

void evl_sig_verdict (struct evlayer *ev, uint32_t via, int good)
{
    struct siglink *l = link_of (ev, via);

    if (!l || good || !sigbudget_failed (&l->fails, ev->now))
        return;
    ev->sig_bans++;
    ev->ops->log (ev->arg, LOG_WARNING, "events: peer %u sent %d signatures "
                  "rank 0 did not make: what it sends signed is dropped "
                  "unchecked for %.0f s (%llu back-offs so far)",
                  (unsigned)via, SIGBUDGET_FAILS, l->fails.ban,
                  (unsigned long long)ev->sig_bans);
}

int evl_batch_signed_ok (struct evlayer *ev, const struct frame *batch,
                         const struct evbatch_hdr *h, uint32_t via)
{
    const unsigned char *p = frame_data (batch);
    size_t len = frame_size (batch), body;
    int good;

    if (!ev->verify)
        return 1;
    if (!evl_sig_admit (ev, via))
        return 0;
    body = evbatch_body_len (p, len);
    ev->sig_checks++;
    good = (h->flags & EVBATCH_F_SIGNED) && body + EVBATCH_SIG_SIZE == len
           && root_signed (ev, p, body, p + body);
    evl_sig_verdict (ev, via, good);
    if (!good) {
        ev->bad_signatures++;
        ev->rejected++;
        evl_warn_counted (ev, ev->bad_signatures, "dropped a batch that "
                          "rank 0 did not sign", h->first, h->last);
        return 0;
    }
    return 1;
}

/* Does 'next' carry the digest of 'prev' as its link? */
static int links_to (const struct frame *next, const struct frame *prev)
{
    const uint8_t *link = evbatch_link (frame_data (next), frame_size (next));
    unsigned char digest[EVBATCH_LINK_SIZE];

    if (!link)
        return 0;
    digest_of (prev, digest);
    return sodium_memcmp (digest, link, sizeof (digest)) == 0;
}

void evl_verify_run (struct evlayer *ev, const struct pending *p, int n,
                     char *ok)
{
    for (int i = n - 1; i >= 0; i--) {
        if (ev->verify && i < n - 1 && ok[i + 1]
            && links_to (p[i + 1].f, p[i].f)) {
            ok[i] = 1;
            ev->sig_chained++;
            continue;
        }
        ok[i] = (char)evl_batch_signed_ok (ev, p[i].f, &p[i].h, p[i].via);
    }
}

/* The text a SYNC's signature covers. */
static int sync_text (char *buf, size_t len, json_int_t seq,
                      json_int_t epoch, json_int_t gone, json_int_t base)
{
    return snprintf (buf, len, "bgn-sync %lld %lld %lld %lld",
                     (long long)seq, (long long)epoch, (long long)gone,
                     (long long)base);
}

/* Rank 0: o's "sig", its signature of text[0..n-1] in hex. */
static int text_sign (struct evlayer *ev, json_t *o, const char *text, int n)
{
    char hex[2 * crypto_sign_BYTES + 1];
    unsigned char sig[crypto_sign_BYTES];

    crypto_sign_detached (sig, NULL, (const unsigned char *)text, (size_t)n,
                          ev->sign_sk);
    sodium_bin2hex (hex, sizeof (hex), sig, sizeof (sig));
    return json_object_set_new (o, "sig", json_string (hex));
}

/* Is hex rank 0's signature of text[0..n-1]?  Checked within the
 * budget of the link it came through; a failure is counted and logged
 * as 'what' (about seq). */
static int text_signed_ok (struct evlayer *ev, const char *hex,
                           const char *text, int n, uint32_t via,
                           const char *what, uint32_t seq)
{
    unsigned char sig[crypto_sign_BYTES];
    size_t siglen = 0;
    int good;

    if (!evl_sig_admit (ev, via))
        return 0;
    good = hex && sodium_hex2bin (sig, sizeof (sig), hex, strlen (hex), NULL,
                                  &siglen, NULL) == 0
           && siglen == sizeof (sig) && root_signed (ev, text, (size_t)n, sig);
    evl_sig_verdict (ev, via, good);
    if (!good) {
        ev->bad_signatures++;
        ev->rejected++;
        evl_warn_counted (ev, ev->bad_signatures, what, seq, seq);
    }
    return good;
}

int evl_sync_sign (struct evlayer *ev, json_t *o, json_int_t seq,
                   json_int_t epoch, json_int_t gone, json_int_t base)
{
    char text[128];
    int n = sync_text (text, sizeof (text), seq, epoch, gone, base);

    if (!ev->can_sign)
        return 0;
    return text_sign (ev, o, text, n);
}

int evl_sync_signed_ok (struct evlayer *ev, json_t *o, json_int_t seq,
                        json_int_t epoch, json_int_t gone, json_int_t base,
                        uint32_t via)
{
    char text[128];
    const char *hex = json_string_value (json_object_get (o, "sig"));
    int n;

    if (!ev->verify)
        return 1;
    /* the SYNC checked last, again (a quiet rank 0 repeats it): the same
     * numbers with the same signature need no second check */
    if (hex && ev->sync_sig[0] && strcmp (hex, ev->sync_sig) == 0
        && (uint64_t)epoch == ev->root_epoch && (uint32_t)seq == ev->sync_seq
        && (uint32_t)gone == ev->root_gone && (uint32_t)base == ev->root_base)
        return 1;
    n = sync_text (text, sizeof (text), seq, epoch, gone, base);
    if (!text_signed_ok (ev, hex, text, n, via, "dropped a sync that rank 0 "
                         "did not sign", (uint32_t)seq))
        return 0;
    if (strlen (hex) < sizeof (ev->sync_sig))
        strcpy (ev->sync_sig, hex);
    return 1;
}

/* ---- where a joining broker starts ------------------------------------ */

/* The text a START answer's signature covers: a SYNC's numbers, bound to
 * the asking rank and its nonce, so that no relay can hand a broker an
 * answer meant for another or one from an earlier ask. */
static int start_text (char *buf, size_t len, uint32_t rank, uint64_t nonce,
                       json_int_t seq, json_int_t epoch, json_int_t gone,
                       json_int_t base)
{
    return snprintf (buf, len, "bgn-start %u %016llx %lld %lld %lld %lld",
                     (unsigned)rank, (unsigned long long)nonce,
                     (long long)seq, (long long)epoch, (long long)gone,
                     (long long)base);
}

int evl_start_sign (struct evlayer *ev, json_t *o, uint32_t rank,
                    uint64_t nonce, json_int_t seq, json_int_t epoch,
                    json_int_t gone, json_int_t base)
{
    char text[160];
    int n = start_text (text, sizeof (text), rank, nonce, seq, epoch, gone,
                        base);

    if (!ev->can_sign)
        return -1;
    return text_sign (ev, o, text, n);
}

int evl_start_signed_ok (struct evlayer *ev, json_t *o, uint64_t nonce,
                         json_int_t seq, json_int_t epoch, json_int_t gone,
                         json_int_t base, uint32_t via)
{
    char text[160];
    int n = start_text (text, sizeof (text), ev->rank, nonce, seq, epoch,
                        gone, base);

    return text_signed_ok (ev, json_string_value (json_object_get (o, "sig")),
                           text, n, via, "dropped a start answer that rank "
                           "0 did not sign", (uint32_t)seq);
}

uint64_t evl_nonce (void)
{
    uint64_t n;

    randombytes_buf (&n, sizeof (n));
    return n;
}

/* ---- proof of a seq, for a restarted rank 0 --------------------------- */

void evl_report_proof (struct evlayer *ev, json_t *o)
{
    const struct held *h;
    char *hex;
    size_t len;

    if (ev->sync_proof)
        json_object_set (o, "sync", ev->sync_proof);
    if (ev->ring.n == 0 || !(h = evstore_at (&ev->ring, ev->ring.n - 1))
        || !h->f)
        return;
    len = frame_size (h->f);
    if (!(hex = malloc (2 * len + 1)))
        return;
    sodium_bin2hex (hex, 2 * len + 1, frame_data (h->f), len);
    json_object_set_new (o, "batch", json_string (hex));
    free (hex);
}

static uint32_t sync_proves (struct evlayer *ev, json_t *s)
{
    json_int_t seq, epoch = 0, gone = 0, base = 0;
    const char *hex;
    char text[128];
    unsigned char sig[crypto_sign_BYTES];
    size_t siglen = 0;
    int n;

    if (!s || json_unpack (s, "{s:I s?I s?I s?I s:s}", "seq", &seq, "epoch",
                           &epoch, "gone", &gone, "base", &base, "sig",
                           &hex) < 0
        || seq < 0 || seq > UINT32_MAX
        || sodium_hex2bin (sig, sizeof (sig), hex, strlen (hex), NULL,
                           &siglen, NULL) != 0
        || siglen != sizeof (sig))
        return 0;
    n = sync_text (text, sizeof (text), seq, epoch, gone, base);
    return root_signed (ev, text, (size_t)n, sig) ? (uint32_t)seq : 0;
}

static uint32_t batch_proves (struct evlayer *ev, const char *hex)
{
    struct evbatch_hdr h;
    unsigned char *b;
    size_t len = hex ? strlen (hex) / 2 : 0, got = 0, body;
    uint32_t last = 0;

    if (!hex || len == 0 || len > REPAIR_MAX_BYTES || !(b = malloc (len)))
        return 0;
    if (sodium_hex2bin (b, len, hex, strlen (hex), NULL, &got, NULL) == 0
        && got == len && evbatch_check (b, len, &h, NULL, 0) == 0
        && (h.flags & EVBATCH_F_SIGNED)
        && (body = evbatch_body_len (b, len)) + EVBATCH_SIG_SIZE == len
        && root_signed (ev, b, body, b + body))
        last = h.last;
    free (b);
    return last;
}

uint32_t evl_report_proven (struct evlayer *ev, json_t *o)
{
    uint32_t a = sync_proves (ev, json_object_get (o, "sync"));
    uint32_t b = batch_proves (ev, json_string_value (json_object_get (o,
                                                                  "batch")));
    return a > b ? a : b;
}

/* ---- tags: one MAC per broker, beside a batch ------------------------ */

/* The MAC of a batch under key: over the batch's digest, so that rank 0
 * hashes the batch once and then MACs 32 bytes per rank. */
static void tag_of (const unsigned char *digest, const unsigned char *key,
                    unsigned char *tag)
{
    crypto_generichash (tag, EVTAGS_TAG_SIZE, digest, EVBATCH_LINK_SIZE,
                        key, 32);
}

/* Rank 0: rank's tag key, asked once; NULL if it has none. */
static const unsigned char *root_key_for (struct evlayer *ev, uint32_t rank)
{
    uint32_t size = bgn_topo_size (ev->topo);

    if (!ev->tag_keys) {
        ev->tag_keys = calloc (size, sizeof (*ev->tag_keys));
        ev->tag_state = calloc (size, 1);
        if (!ev->tag_keys || !ev->tag_state) {
            free (ev->tag_keys);
            free (ev->tag_state);
            ev->tag_keys = NULL;
            ev->tag_state = NULL;
            return NULL;
        }
    }
    if (ev->tag_state[rank] == 0)
        ev->tag_state[rank] = ev->ops->tag_key (ev->arg, rank,
                                                ev->tag_keys[rank]) == 0
                                  ? 1 : 2;
    return ev->tag_state[rank] == 1 ? ev->tag_keys[rank] : NULL;
}

static int cmp_key (const void *a, const void *b, void *keys)
{
    const unsigned char (*k)[32] = keys;
    return memcmp (k[*(const uint32_t *)a], k[*(const uint32_t *)b], 32);
}

/* Rank 0, once: every rank's key made, and none kept for ranks whose
 * keys are the same (they share a signing key, and one could make the
 * other's tags): those check signatures. */
static void root_keys_check (struct evlayer *ev, uint32_t size)
{
    uint32_t *order, n = 0;

    ev->tag_keys_checked = 1;
    for (uint32_t r = 1; r < size; r++)
        root_key_for (ev, r);
    if (!ev->tag_keys || !(order = malloc (size * sizeof (*order))))
        return;
    for (uint32_t r = 1; r < size; r++)
        if (ev->tag_state[r] == 1)
            order[n++] = r;
    qsort_r (order, n, sizeof (*order), cmp_key, ev->tag_keys);
    for (uint32_t i = 1; i < n; i++)
        if (memcmp (ev->tag_keys[order[i]], ev->tag_keys[order[i - 1]],
                    32) == 0)
            ev->tag_state[order[i]] = ev->tag_state[order[i - 1]] = 3;
    free (order);
}

struct frame *evl_root_tags (struct evlayer *ev, struct frame *batch)
{
    uint32_t size = bgn_topo_size (ev->topo), n = 0;
    unsigned char digest[EVBATCH_LINK_SIZE], tag[EVTAGS_TAG_SIZE];
    uint8_t *buf;
    struct frame *f;

    if (!ev->can_sign || !ev->ops->tag_key || size < 2
        || size > TAG_MAX_RANKS
        || !(buf = malloc (evtags_size (size - 1))))
        return NULL;
    if (!ev->tag_keys_checked)
        root_keys_check (ev, size);
    digest_of (batch, digest);
    for (uint32_t r = 1; r < size; r++) {
        const unsigned char *key = root_key_for (ev, r);
        if (!key)
            continue;
        tag_of (digest, key, tag);
        evtags_put_entry (buf, n++, r, tag);
    }
    evtags_put_header (buf, n);
    f = n > 0 ? frame_create (buf, evtags_size (n)) : NULL;
    free (buf);
    if (f)
        ev->tags_made++;
    return f;
}

/* Others: our own tag key; NULL if we have none.  remake: it did not
 * match; make it again from the keys the overlay holds now (a rank 0
 * restarted with a new key is learnt when its signature fails), at most
 * every TAG_REKEY_DELAY: a relay that spoils tags costs us no more. */
static const unsigned char *own_key (struct evlayer *ev, int remake)
{
    if (!ev->ops->tag_key)
        return NULL;
    if (remake && ev->my_tag_state != 0 && ev->now >= ev->tag_rekey_at) {
        ev->tag_rekey_at = ev->now + TAG_REKEY_DELAY;
        ev->my_tag_state = ev->ops->tag_key (ev->arg, ev->rank,
                                             ev->tag_key) == 0 ? 1 : 2;
    }
    if (ev->my_tag_state == 0)
        ev->my_tag_state = ev->ops->tag_key (ev->arg, ev->rank,
                                             ev->tag_key) == 0 ? 1 : 2;
    return ev->my_tag_state == 1 ? ev->tag_key : NULL;
}

int evl_tag_ok (struct evlayer *ev, struct frame *batch, struct frame *tags)
{
    unsigned char digest[EVBATCH_LINK_SIZE], want[EVTAGS_TAG_SIZE];
    const unsigned char *key;
    const uint8_t *have;
    uint32_t count;

    if (!tags || !ev->verify
        || evtags_check (frame_data (tags), frame_size (tags), &count, NULL,
                         0) < 0
        || !(have = evtags_find (frame_data (tags), count, ev->rank))
        || !(key = own_key (ev, 0)))
        return 0;
    digest_of (batch, digest);
    tag_of (digest, key, want);
    if (sodium_memcmp (want, have, sizeof (want)) != 0) {
        ev->tag_bad++;
        own_key (ev, 1);    /* rank 0 may have a new key: now and then */
        return 0;
    }
    ev->tag_ok++;
    return 1;
}
