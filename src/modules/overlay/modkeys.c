/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* modkeys.c: the keys the module reads from the bootstrap.
 *
 * Every rank announces through the bootstrap its CURVE public key
 * ("pubkey": a connection is bound to the rank whose key it holds, a
 * contact request is checked against the asking rank's) and its signing
 * key ("evkey", evkey.h: rank 0's also signs the event stream).  Reading
 * them all costs one bootstrap get per rank on every broker: where the
 * bootstrap lasts (keys_lazy) only our own, rank 0's and our peers' are
 * read at start, the others' when first needed, and a failed late read
 * holds further ones back for a while (a read holds up the reactor).
 * This file is that policy; module.c calls it (set-up, start, the io's
 * sign_key, the contact check) and it calls only the host api, the
 * certificate store, evkey.c and the core's ovcore.h, never module.c.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/resource.h>

#include <sodium.h>

#include "src/common/libutil/idmap.h"
#include "curve.h"
#include "evkey.h"
#include "module_int.h"

/* Another rank's signing key as the bootstrap gave it (ovsign.h). */
struct signkey {
    unsigned char pk[32];
    double asked;                /* when the bootstrap was last asked */
    uint8_t state;               /* 0 never asked, 1 have it, 2 none,
                                    3 the bootstrap did not answer */
};

#define SIGNKEY_REFRESH 5.0      /* s between two asks for one rank */

/* A read from the bootstrap after start holds up the reactor: after one
 * fails, none is tried for a while (the ranks asked for meanwhile count
 * as not answered). */
static bool late_read_allowed (struct module *m)
{
    return m->late_failed == 0.
           || m->api->now (m->b) - m->late_failed >= SIGNKEY_REFRESH;
}

/* Which ranks' bootstrap values start() reads (modkeys_learn): with
 * keys_lazy, ours, rank 0's and our peers' (learn_keys, learn_event_key,
 * learn_near_sign_keys, the peers' endpoints); otherwise every rank's.
 * Rank 0 checks every rank's signed word from the start (their readiness
 * reports): it reads every key at once, unless a read costs it nothing
 * (boot_lasting 2).  A host that fetches ahead (api->boot_want) is told
 * the list. */
int modkeys_announce_reads (struct module *m)
{
    uint32_t self = m->api->rank (m->b);
    int lasting = m->api->boot_lasting ? m->api->boot_lasting (m->b) : 0;

    m->keys_lazy = lasting == 2 || (lasting == 1 && self != 0);
    if (!m->api->boot_want)
        return 0;
    if (!m->keys_lazy)
        return m->api->boot_want (m->b, BGN_BOOT_ALL);
    if (m->api->boot_want (m->b, self) < 0 || m->api->boot_want (m->b, 0) < 0)
        return -1;
    for (int i = 0; i < overlay_peer_count (m->ov); i++)
        if (m->api->boot_want (m->b, overlay_peer_rank (m->ov, i)) < 0)
            return -1;
    return 0;
}

/* Every broker signs what it says about itself (ovsign.h) with a key
 * kept in its run directory and announced through the bootstrap as
 * "evkey" (evkey.h); rank 0's also signs the event stream. */
int modkeys_setup (struct module *m)
{
    unsigned char pk[32], sk[64];
    char hex[65], err[256];

    const char *want = "", *secret = "";
    json_t *boot = json_object_get (m->api->config (m->b), "bootstrap");

    if (m->api->size (m->b) == 1)
        return 0;
    /* a static instance's rank 0 signs with the key its config names */
    json_unpack (boot ? boot : json_null (), "{s?s s?s}", "event_key", &want,
                 "event_key_secret", &secret);
    if (m->api->rank (m->b) == 0 && *want && !*secret) {
        mlog (m, LOG_ERR, "bootstrap.event_key is set: rank 0's host needs "
              "its secret too (bootstrap.event_key_secret)");
        errno = EINVAL;
        return -1;
    }
    if (m->api->rank (m->b) == 0 && *secret
        ? evkey_load_file (secret, *want ? want : NULL, pk, sk, hex, err,
                           sizeof (err)) < 0
        : evkey_load (m->api->rundir (m->b), pk, sk, hex, err,
                      sizeof (err)) < 0) {
        mlog (m, LOG_ERR, "signing key: %s", err);
        return -1;
    }
    overlay_set_sign_key (m->ov, sk);
    if (m->api->rank (m->b) == 0)
        overlay_set_event_keys (m->ov, sk, NULL);
    sodium_memzero (sk, sizeof (sk));
    if (!(m->keys = idmap_create (sizeof (struct signkey))))
        return -1;
    return m->api->boot_put (m->b, "evkey", hex);
}

/* The others check rank 0's signature, if the bootstrap announced it. */
static void learn_event_key (struct module *m)
{
    unsigned char pk[32];
    char hex[80];

    if (m->api->rank (m->b) == 0)
        return;
    if (m->api->boot_get (m->b, 0, "evkey", hex, sizeof (hex)) < 0
        || evkey_parse (hex, pk) < 0) {
        mlog (m, LOG_NOTICE, "rank 0 announced no event signing key: "
              "events are taken unsigned");
        return;
    }
    overlay_set_event_keys (m->ov, NULL, pk);
}

/* Bind rank's public key, from the bootstrap: a connection is bound to
 * the rank whose key it holds (sock.h), and a contact request is checked
 * against the asking rank's key. */
static int learn_key (struct module *m, uint32_t rank)
{
    char pubkey[64];

    if (m->api->boot_get (m->b, rank, "pubkey", pubkey, sizeof (pubkey)) < 0
        || curve_bind (m->curve, rank, pubkey) < 0) {
        mlog (m, LOG_ERR, "public key of rank %u: %s", (unsigned)rank,
              strerror (errno));
        return -1;
    }
    return 0;
}

/* The keys needed at start: every rank's (one bootstrap get each), or,
 * where the bootstrap lasts (keys_lazy), our own and our peers' only:
 * the only ranks that connect to us before a contact request, which
 * reads the asking rank's key first (modkeys_pubkey).  At N ranks that is
 * about 2 log2 N gets per broker instead of N. */
static int learn_keys (struct module *m)
{
    uint32_t size = m->api->size (m->b);

    if (!m->keys_lazy) {
        for (uint32_t r = 0; r < size; r++)
            if (learn_key (m, r) < 0)
                return -1;
        return 0;
    }
    if (learn_key (m, m->api->rank (m->b)) < 0)
        return -1;
    for (int i = 0; i < overlay_peer_count (m->ov); i++)
        if (learn_key (m, overlay_peer_rank (m->ov, i)) < 0)
            return -1;
    return 0;
}

/* rank's public key as the bootstrap gave it, read now if it was left
 * for later; NULL if there is none. */
const char *modkeys_pubkey (struct module *m, uint32_t rank)
{
    const char *known = curve_key_of (m->curve, rank);

    if (known || !m->keys_lazy || rank >= m->api->size (m->b)
        || !late_read_allowed (m))
        return known;
    if (learn_key (m, rank) < 0) {
        m->late_failed = m->api->now (m->b);
        return NULL;
    }
    return curve_key_of (m->curve, rank);
}

/* A rank's signing key, asked of the bootstrap once, and again (fresh,
 * past the bootstrap's copies) when a signature failed with it -- the
 * rank may have restarted with a new key -- at most every few seconds.
 * Read lazily (after start), a key the bootstrap did not answer for is
 * unknown (state 3, EAGAIN), asked again every few seconds, and not at
 * all while reads are held back after a failure. */
int modkeys_sign_key (void *ctx, uint32_t rank, int refresh,
                        unsigned char pk[32])
{
    struct module *m = ctx;
    struct signkey *k;
    char hex[80];
    double now = m->api->now (m->b);
    int rc;

    if (!m->keys || !(k = idmap_put (m->keys, rank, NULL))) {
        errno = m->keys ? ENOMEM : ENOENT;
        return -1;
    }
    bool unanswered = k->state == 0 || k->state == 3;
    bool due = now - k->asked >= SIGNKEY_REFRESH;

    if (unanswered && m->keys_lazy && !late_read_allowed (m))
        k->state = 3;
    else if (k->state == 0 || ((k->state == 3 || refresh) && due)) {
        k->asked = now;
        rc = !unanswered && m->api->boot_refresh
                 ? m->api->boot_refresh (m->b, rank, "evkey", hex,
                                         sizeof (hex))
                 : m->api->boot_get (m->b, rank, "evkey", hex, sizeof (hex));
        if (rc == 0 && evkey_parse (hex, k->pk) == 0)
            k->state = 1;
        else if (rc < 0 && unanswered && m->keys_lazy && errno != ENOENT) {
            k->state = 3;   /* asked after start, no answer: not "none" */
            m->late_failed = now;
        }
        else if (unanswered || rc == 0)
            k->state = 2;   /* none (a static bootstrap) */
    }
    if (k->state == 3) {
        errno = EAGAIN;
        return -1;
    }
    if (k->state != 1) {
        errno = ENOENT;
        return -1;
    }
    memcpy (pk, k->pk, 32);
    return 0;
}

/* Every rank's signing key, now: the bootstrap may be closed later (a
 * PMI client finalizes), and a key is needed for any rank whose word
 * arrives, neighbour or not.  With CURVE the bundles are read already. */
static void learn_sign_keys (struct module *m)
{
    unsigned char pk[32];
    uint32_t size = m->api->size (m->b);
    int have = 0;

    if (!m->keys)
        return;
    for (uint32_t r = 0; r < size; r++)
        if (modkeys_sign_key (m, r, 0, pk) == 0)
            have++;
    if ((uint32_t)have < size)
        mlog (m, LOG_NOTICE, "%u of %u ranks announced no signing key: "
              "their word about themselves is taken unsigned",
              (unsigned)(size - have), (unsigned)size);
}

/* Lazily: rank 0's signing key and our peers', now, while their bundles
 * are at hand: the words checked first (rank 0's events, the live
 * records our peers' HELLOs bring). */
static void learn_near_sign_keys (struct module *m)
{
    unsigned char pk[32];

    if (!m->keys)
        return;
    modkeys_sign_key (m, 0, 0, pk);
    for (int i = 0; i < overlay_peer_count (m->ov); i++)
        modkeys_sign_key (m, overlay_peer_rank (m->ov, i), 0, pk);
}

/* CPU seconds this thread has used (for the start-up's debug lines). */
static double thread_cpu (void)
{
    struct rusage ru;

    if (getrusage (RUSAGE_THREAD, &ru) < 0)
        return 0.;
    return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec
           + 1e-6 * (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}


/* After the bootstrap barrier: the peers' public keys (with CURVE),
 * rank 0's event key and the signing keys, each rank's or only the near
 * ones' (keys_lazy); how long it took, in a debug line. */
int modkeys_learn (struct module *m)
{
    double t0 = m->api->now (m->b), cpu0 = thread_cpu ();

    if (m->curve && learn_keys (m) < 0)
        return -1;
    learn_event_key (m);
    if (!m->keys_lazy)
        learn_sign_keys (m);
    else
        learn_near_sign_keys (m);
    mlog (m, LOG_DEBUG, "bootstrap keys read in %.3f s (%.1f ms of CPU)%s",
          m->api->now (m->b) - t0, 1e3 * (thread_cpu () - cpu0),
          m->keys_lazy ? ": ours and our peers', the others' when first "
                         "needed" : "");
    return 0;
}
