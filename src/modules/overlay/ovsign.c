/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* ovsign.c: brokers' own signatures (ovsign.h).
 *
 * State (struct sign_state in ovsign.h): this broker's secret key, the
 * request nonces seen within the freshness window (idmap: a hash of the
 * origin and nonce -> the request's time), the floor below which no
 * request is taken any more (nonces forgotten early), counters.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sodium.h>

#include "src/common/libutil/idmap.h"
#include "overlay.h"
#include "ovlog.h"
#include "ovsign.h"
#include "src/common/libutil/wire.h"

int ovsign_init (struct overlay *ov)
{
    if (!(ov->sign.seen = idmap_create (sizeof (double))))
        return -1;
    return 0;
}

void ovsign_fini (struct overlay *ov)
{
    sodium_memzero (ov->sign.sk, sizeof (ov->sign.sk));
    idmap_destroy (&ov->sign.seen);
}

void ovsign_set_key (struct overlay *ov, const unsigned char *sk)
{
    ov->sign.can_sign = sk != NULL;
    if (sk)
        memcpy (ov->sign.sk, sk, sizeof (ov->sign.sk));
}

bool ovsign_can_sign (const struct overlay *ov)
{
    return ov->sign.can_sign;
}

int ovsign_sign (struct overlay *ov, const void *data, size_t len,
                 unsigned char sig[OVSIGN_BYTES])
{
    if (!ov->sign.can_sign)
        return -1;
    crypto_sign_detached (sig, NULL, data, len, ov->sign.sk);
    return 0;
}

/* rank's public key (refresh: ask the bootstrap again).  -1 if none. */
static int rank_key (struct overlay *ov, uint32_t rank, int refresh,
                     unsigned char pk[32])
{
    if (rank == ov->rank && ov->sign.can_sign) {
        crypto_sign_ed25519_sk_to_pk (pk, ov->sign.sk);
        return 0;
    }
    if (!ov->io->sign_key) {
        errno = ENOENT;
        return -1;
    }
    return ov->io->sign_key (ov->ctx, rank, refresh, pk);
}

bool ovsign_rank_has_key (struct overlay *ov, uint32_t rank)
{
    unsigned char pk[32];
    /* a key that could not be asked for may exist: its word must come
     * signed (and is refused until the key is known) */
    return rank_key (ov, rank, 0, pk) == 0 || errno == EAGAIN;
}

int ovsign_verify (struct overlay *ov, uint32_t rank, const void *data,
                   size_t len, const unsigned char *sig)
{
    unsigned char pk[32];

    if (rank_key (ov, rank, 0, pk) < 0) {
        if (errno != EAGAIN)
            return -1;
        ov->sign.unchecked++;   /* it may have a key we could not get */
        return 0;
    }
    if (sig && crypto_sign_verify_detached (sig, data, len, pk) == 0)
        return 1;
    /* the rank may have restarted with a new key: ask once more (the io
     * bounds how often it really asks the bootstrap) */
    if (sig && rank != ov->rank && rank_key (ov, rank, 1, pk) == 0
        && crypto_sign_verify_detached (sig, data, len, pk) == 0)
        return 1;
    ov->sign.bad++;
    return 0;
}

int ovsign_shared_key (struct overlay *ov, uint32_t rank, const char *label,
                       unsigned char key[32])
{
    unsigned char pk[32], own_pk[32], xsk[32], xpk[32], shared[32];
    crypto_generichash_state st;
    int rc = -1;

    if (!ov->sign.can_sign || rank == ov->rank
        || rank_key (ov, rank, 0, pk) < 0)
        return -1;
    crypto_sign_ed25519_sk_to_pk (own_pk, ov->sign.sk);
    if (crypto_sign_ed25519_sk_to_curve25519 (xsk, ov->sign.sk) == 0
        && crypto_sign_ed25519_pk_to_curve25519 (xpk, pk) == 0
        && crypto_scalarmult (shared, xsk, xpk) == 0) {
        /* both ends hash the same: the label, then the lower rank's key */
        const unsigned char *lo = ov->rank < rank ? own_pk : pk;
        const unsigned char *hi = ov->rank < rank ? pk : own_pk;
        crypto_generichash_init (&st, shared, sizeof (shared), 32);
        crypto_generichash_update (&st, (const unsigned char *)label,
                                   strlen (label) + 1);
        crypto_generichash_update (&st, lo, 32);
        crypto_generichash_update (&st, hi, 32);
        crypto_generichash_final (&st, key, 32);
        rc = 0;
    }
    sodium_memzero (xsk, sizeof (xsk));
    sodium_memzero (shared, sizeof (shared));
    return rc;
}

int ovsign_live_text (struct overlay *ov, uint32_t rank, uint64_t inc,
                      char *buf, size_t len)
{
    int n = snprintf (buf, len, "bgn-live %s %u %llu", ov->instance,
                      (unsigned)rank, (unsigned long long)inc);
    return n < 0 || (size_t)n >= len ? (int)len - 1 : n;
}

static double sign_clock (struct overlay *ov)
{
    return ovl_now (ov) + ov->wall_offset;
}

/* The bytes a request signature covers: a header, then the packed frames
 * (the wire frame past its envelope). */
static size_t req_header (struct overlay *ov, uint32_t origin, uint32_t dest,
                          const uint8_t *block, uint8_t *hdr, size_t len)
{
    int n = snprintf ((char *)hdr, len, "bgn-req %s %u %u ", ov->instance,
                      (unsigned)origin, (unsigned)dest);
    size_t off = n < 0 || (size_t)n >= len - 16 ? 0 : (size_t)n;

    memcpy (hdr + off, block, 16);   /* time and nonce */
    return off + 16;
}

static int req_verify_sig (struct overlay *ov, uint32_t origin, uint32_t dest,
                           const uint8_t *packed, size_t plen,
                           const uint8_t *block)
{
    uint8_t hdr[160];
    size_t hlen = req_header (ov, origin, dest, block, hdr, sizeof (hdr));
    unsigned char *buf = malloc (hlen + plen);
    int rc;

    if (!buf)
        return 0;
    memcpy (buf, hdr, hlen);
    memcpy (buf + hlen, packed, plen);
    rc = ovsign_verify (ov, origin, buf, hlen + plen, block + 16);
    free (buf);
    return rc;
}

struct frame *ovsign_seal_request (struct overlay *ov, struct frame *w,
                                   uint32_t dest)
{
    size_t len = frame_size (w), hlen;
    uint8_t hdr[160], block[ENV_SIG_BLOCK];
    unsigned char *buf;
    struct frame *out;
    double t = sign_clock (ov);

    if (!ov->sign.can_sign || len < ENV_SIZE)
        return w;
    wire_put64 (block, t > 0 ? (uint64_t)(t * 1e6) : 0);
    wire_put64 (block + 8, ov->io->random (ov->ctx));
    hlen = req_header (ov, ov->rank, dest, block, hdr, sizeof (hdr));
    if (!(buf = malloc (hlen + len - ENV_SIZE))) {
        frame_decref (&w);
        errno = ENOMEM;
        return NULL;
    }
    memcpy (buf, hdr, hlen);
    memcpy (buf + hlen, frame_data (w) + ENV_SIZE, len - ENV_SIZE);
    crypto_sign_detached (block + 16, NULL, buf, hlen + len - ENV_SIZE,
                          ov->sign.sk);
    free (buf);
    if ((out = frame_create (NULL, len + ENV_SIG_BLOCK))) {
        memcpy (frame_data (out), frame_data (w), len);
        memcpy (frame_data (out) + len, block, ENV_SIG_BLOCK);
        ov->sign.signed_out++;
    }
    else
        errno = ENOMEM;
    frame_decref (&w);
    return out;
}

/* Forget what is past the window; if that is not enough, raise the floor
 * (nothing at or below it is taken any more) until a quarter is free. */
static void seen_prune (struct overlay *ov, double now)
{
    double cut = now - OVSIGN_WINDOW;

    for (int round = 0; round < 8; round++) {
        struct idmap_iter it;
        uint64_t *drop = malloc (idmap_size (ov->sign.seen) * sizeof (*drop)
                                 + 1);
        size_t n = 0;
        if (!drop)
            return;
        for (double *v = idmap_first (ov->sign.seen, &it); v;
             v = idmap_next (&it))
            if (*v <= cut)
                drop[n++] = it.id;
        for (size_t i = 0; i < n; i++)
            idmap_delete (ov->sign.seen, drop[i]);
        free (drop);
        if (cut > ov->sign.floor && round > 0)
            ov->sign.floor = cut;
        if (idmap_size (ov->sign.seen) < OVSIGN_SEEN_MAX * 3 / 4)
            return;
        cut = now - (now - cut) / 2;   /* halve what is kept */
    }
}

int ovsign_check_request (struct overlay *ov, const struct envelope *env,
                          const struct frame *w, size_t *body_len)
{
    size_t len = frame_size (w);
    const uint8_t *p = frame_data (w), *block;
    double t, now = sign_clock (ov);
    uint64_t key;
    double *slot;
    int rc;

    if (len < ENV_SIZE + ENV_SIG_BLOCK)
        return -2;
    *body_len = len - ENV_SIG_BLOCK;
    block = p + *body_len;
    t = wire_get64 (block) * 1e-6;
    if ((rc = req_verify_sig (ov, env->source, env->dest, p + ENV_SIZE,
                              *body_len - ENV_SIZE, block)) <= 0) {
        if (rc == 0)
            ovl_log_limited (ov, LOG_WARNING, "refused a request signature "
                             "that is not rank %u's", (unsigned)env->source);
        return rc;
    }
    if (fabs (t - now) > OVSIGN_WINDOW || t <= ov->sign.floor) {
        ov->sign.stale++;
        ovl_log_limited (ov, LOG_WARNING, "refused a request signed by rank "
                         "%u %.0f s from this broker's clock (taken within "
                         "%.0f s)", (unsigned)env->source, t - now,
                         OVSIGN_WINDOW);
        return 0;
    }
    key = (wire_get64 (block + 8) ^ ((uint64_t)env->source * 0x9e3779b97f4a7c15ULL))
          & ~(1ULL << 63);
    if (idmap_get (ov->sign.seen, key)) {
        ov->sign.replays++;
        ovl_log_limited (ov, LOG_WARNING, "refused a signed request of rank "
                         "%u played again", (unsigned)env->source);
        return 0;
    }
    if (idmap_size (ov->sign.seen) >= OVSIGN_SEEN_MAX)
        seen_prune (ov, now);
    if ((slot = idmap_put (ov->sign.seen, key, NULL)))
        *slot = t;
    ov->sign.verified++;
    return 1;
}

const char *ovsign_origin_problem (const struct bgn_msg_info *info,
                                   uint32_t rank)
{
    if (!info || !info->from_overlay || info->source_signed == 0)
        return NULL;
    if (info->source_signed < 0)
        return "not signed by the broker it names";
    if (info->source != rank)
        return "signed by another broker than the one it names";
    return NULL;
}

void ovsign_count_unattested (struct overlay *ov)
{
    ov->sign.unattested++;
}
