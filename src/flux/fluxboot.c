/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* fluxboot.c: the Flux host's bootstrap exchange, through rank 0.
 *
 * What the overlay module puts at load (its endpoint, public key and
 * event key) is this rank's "card".  Each rank sends its card to rank
 * 0's host in one request, bgn.boot, naming the ranks whose cards its
 * start will read (api->boot_want: its peers and rank 0, or every rank);
 * rank 0 keeps every card it is sent and answers once it holds all the
 * ranks asked for.  Nothing here blocks the reactor at start-up: the
 * module starts from the answer's callback (fluxboot_exchange).
 *
 * Why not the KVS, as before: it made every rank commit and watch keys
 * (a commit and 2 log N watched lookups per broker, all through rank 0's
 * KVS), needed the kvs and kvs-watch modules in rc1, and a restored KVS
 * could hand out another run's keys.  One request per rank to rank 0,
 * over the TBON the broker already has, needs nothing but the broker.
 *
 * A rank whose peers have not loaded bgn yet (a Flux instance's brokers
 * join a level of the tree at a time; a node of a system instance may
 * be down) waits for their cards as long as it takes, saying every
 * boot_timeout which ranks it still waits for: giving up would leave
 * it without the BGN for good.  Only a hard error (rank 0's bgn did not
 * start, a malformed answer) ends the exchange.
 *
 * After start-up a rank asks rank 0, in the background, for a card it
 * lacks (the read says EAGAIN meanwhile) or one that may have changed (a
 * peer's module was reloaded: boot_refresh answers with the card it has
 * meanwhile): a read never holds the reactor.  When
 * rank 0's module loads it publishes the Flux event bgn.boot-call, and
 * every rank sends its card again: a reloaded rank 0 relearns them all.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include "fluxhost_int.h"

#define BOOT_TOPIC SERVICE ".boot"
#define CALL_TOPIC SERVICE ".boot-call"
#define BOOT_RETRY_MIN 0.05      /* s: rank 0's bgn not loaded yet */
#define BOOT_RETRY_MAX 1.0

/* A rank's card as rank 0 holds it, NULL if none. */
static json_t *card_of (json_t *cards, uint32_t rank)
{
    char key[16];

    snprintf (key, sizeof (key), "%u", (unsigned)rank);
    return json_object_get (cards, key);
}

static int card_store (json_t *cards, uint32_t rank, json_t *card)
{
    char key[16];

    snprintf (key, sizeof (key), "%u", (unsigned)rank);
    return json_object_set (cards, key, card);
}

/* A card is an object of strings, as boot_put made it. */
static bool card_valid (json_t *card)
{
    const char *key;
    json_t *v;

    if (!json_is_object (card) || json_object_size (card) > 16)
        return false;
    json_object_foreach (card, key, v)
        if (!json_is_string (v) || strlen (key) > 32
            || json_string_length (v) > 1024)
            return false;
    return true;
}

/* The ranks in want, or every rank (want NULL): first, then next after
 * prev, -1 at the end.  Walks the set's members, not every rank. */
static int wanted_next (const struct bgn_broker *b, const idset_t *want,
                        int prev)
{
    if (want)
        return prev < 0 ? idset_first (want) : idset_next (want, prev);
    return prev + 1 < (int)b->size ? prev + 1 : -1;
}

static int count_missing (struct bgn_broker *b, const idset_t *want)
{
    int missing = 0;

    for (int r = wanted_next (b, want, -1); r >= 0; r = wanted_next (b, want, r))
        if (!card_of (b->cards, (uint32_t)r))
            missing++;
    return missing;
}

/* The cards of the ranks in want (NULL: every rank) that 'cards' holds,
 * as a new object (NULL: out of memory). */
static json_t *cards_pick (struct bgn_broker *b, const idset_t *want)
{
    json_t *out = json_object ();

    for (int r = wanted_next (b, want, -1); out && r >= 0;
         r = wanted_next (b, want, r)) {
        json_t *card = card_of (b->cards, (uint32_t)r);
        if (card && card_store (out, (uint32_t)r, card) < 0) {
            json_decref (out);
            out = NULL;
        }
    }
    return out;
}

/* ---- rank 0: the cards, and the requests waiting for some ------------ */

struct boot_wait {
    flux_msg_t *req;
    idset_t *want;                 /* NULL: every rank */
    double deadline;
};

void fh_boot_wait_free (void **item)
{
    struct boot_wait *w;

    if (!item || !(w = *item))
        return;
    flux_msg_decref (w->req);
    idset_destroy (&w->want);
    free (w);
    *item = NULL;
}

/* Answer req with what it wanted if all of it is here; 1 if answered. */
static int answer_if_complete (struct bgn_broker *b, const flux_msg_t *req,
                               const idset_t *want, bool partial)
{
    json_t *cards;

    if (!partial && count_missing (b, want) > 0)
        return 0;
    if (!(cards = cards_pick (b, want)))
        return flux_respond_error (b->h, req, ENOMEM, NULL) == 0 ? 1 : -1;
    if (flux_respond_pack (b->h, req, "{s:O}", "cards", cards) < 0)
        fh_log (b, LOG_ERR, "bgn: answering %s: %s", BOOT_TOPIC,
                strerror (errno));
    json_decref (cards);
    return 1;
}

static char *missing_text (struct bgn_broker *b, const idset_t *want)
{
    idset_t *miss = idset_create (b->size);
    char *text = NULL;

    for (int r = wanted_next (b, want, -1); miss && r >= 0;
         r = wanted_next (b, want, r))
        if (!card_of (b->cards, (uint32_t)r))
            idset_set (miss, (unsigned)r);
    if (miss)
        text = idset_encode (miss, 0);
    idset_destroy (&miss);
    return text;
}

/* A new card came: answer whoever it completes, expire the overdue. */
static void waits_check (struct bgn_broker *b)
{
    double now = monotime_now ();
    struct boot_wait *w = zlistx_first (b->boot_waits);

    while (w) {
        int done = answer_if_complete (b, w->req, w->want, false);
        if (!done && now >= w->deadline) {
            char *miss = missing_text (b, w->want);
            /* the asker says it still waits, and asks again */
            if (flux_respond_error (b->h, w->req, ETIMEDOUT, miss) < 0)
                fh_log (b, LOG_ERR, "bgn: answering %s: %s", BOOT_TOPIC,
                        strerror (errno));
            free (miss);
            done = 1;
        }
        if (done) {
            zlistx_delete (b->boot_waits, zlistx_cursor (b->boot_waits));
            w = zlistx_first (b->boot_waits);   /* restart: cheap, short */
        }
        else
            w = zlistx_next (b->boot_waits);
    }
    if (b->boot_waiter) {   /* ticks while anyone waits, rank 0 too */
        if (zlistx_size (b->boot_waits) > 0 || b->boot_cb)
            flux_watcher_start (b->boot_waiter);
        else
            flux_watcher_stop (b->boot_waiter);
    }
}

static void waiter_cb (flux_reactor_t *r, flux_watcher_t *w, int revents,
                       void *arg)
{
    struct bgn_broker *b = arg;

    waits_check (b);
    fh_boot_self_check (b);
}

/* bgn.boot on rank 0: {rank, card?, want?, wait?}.  Only the instance
 * owner may send it (the handler's default role): the brokers' modules
 * run as the owner, and a card is believed as the KVS's keys were. */
static void boot_request_cb (flux_t *h, flux_msg_handler_t *mh,
                             const flux_msg_t *msg, void *arg)
{
    struct bgn_broker *b = arg;
    int rank = -1, wait = 0;
    json_t *card = NULL;
    const char *want_s = NULL;
    idset_t *want = NULL;
    char why[128] = "";
    struct boot_wait *w;

    if (flux_request_unpack (msg, NULL, "{s:i s?o s?s s?b}", "rank", &rank,
                             "card", &card, "want", &want_s, "wait",
                             &wait) < 0
        || rank < 0 || (uint32_t)rank >= b->size
        || (card && !card_valid (card))) {
        flux_respond_error (h, msg, EPROTO, "bgn.boot: malformed request");
        return;
    }
    if (want_s && strcmp (want_s, "all")
        && !(want = idset_decode (want_s, why, sizeof (why)))) {
        flux_respond_error (h, msg, EPROTO, why);
        return;
    }
    if (card && card_store (b->cards, (uint32_t)rank, card) < 0) {
        flux_respond_error (h, msg, ENOMEM, NULL);
        idset_destroy (&want);
        return;
    }
    if (!want_s) {                        /* a card alone: acknowledged */
        flux_respond (h, msg, NULL);
        goto news;
    }
    if (answer_if_complete (b, msg, want, !wait) != 0) {
        idset_destroy (&want);
        goto news;
    }
    if (zlistx_size (b->boot_waits) >= b->size * 2
        || !(w = calloc (1, sizeof (*w)))) {
        flux_respond_error (h, msg, EAGAIN, "bgn.boot: too many waiting");
        idset_destroy (&want);
        goto news;
    }
    w->req = (flux_msg_t *)flux_msg_incref (msg);
    w->want = want;
    w->deadline = monotime_now () + b->boot_timeout;
    zlistx_add_end (b->boot_waits, w);
news:
    if (card) {
        waits_check (b);
        fh_boot_self_check (b);
    }
}

/* ---- every rank: this rank's card, its wants, and the answer ---------- */

int fh_boot_put (struct bgn_broker *b, const char *key, const char *value)
{
    if (json_object_set_new (b->card, key, json_string (value)) < 0) {
        errno = ENOMEM;
        return -1;
    }
    if (b->rank == 0)
        return card_store (b->cards, 0, b->card);
    if (b->boot_sent)   /* a put after the exchange: tell rank 0 again */
        fh_boot_resend (b);
    return 0;
}

int fh_boot_want (struct bgn_broker *b, uint32_t rank)
{
    if (rank == BGN_BOOT_ALL) {
        b->boot_want_all = 1;
        return 0;
    }
    if (rank >= b->size) {
        errno = EINVAL;
        return -1;
    }
    return idset_set (b->boot_wants, rank);
}

static void exchange_done (struct bgn_broker *b, int errnum, const char *why)
{
    void (*cb) (bgn_broker_t *, int, const char *, void *) = b->boot_cb;

    b->boot_cb = NULL;
    if (cb)
        cb (b, errnum, why, b->boot_cb_arg);
}

/* The wait goes on: say so once per boot_timeout. */
static void still_waiting (struct bgn_broker *b, const char *missing)
{
    double now = monotime_now ();

    if (now < b->boot_deadline)
        return;
    fh_log (b, LOG_WARNING, "bgn: still waiting for rank(s) %s to load bgn "
            "(%.0fs so far); the BGN starts on this broker once they have",
            missing ? missing : "?", now - b->boot_started);
    b->boot_deadline = now + b->boot_timeout;
}

/* Rank 0's own wants are met from its table. */
void fh_boot_self_check (struct bgn_broker *b)
{
    if (b->rank != 0 || !b->boot_cb)
        return;
    if (count_missing (b, b->boot_want_all ? NULL : b->boot_wants) == 0) {
        exchange_done (b, 0, NULL);
        return;
    }
    if (monotime_now () >= b->boot_deadline) {
        char *miss = missing_text (b, b->boot_want_all ? NULL : b->boot_wants);
        still_waiting (b, miss);
        free (miss);
    }
}

static void send_card (struct bgn_broker *b);

static void retry_cb (flux_reactor_t *r, flux_watcher_t *w, int revents,
                      void *arg)
{
    send_card (arg);
}

static void retry_later (struct bgn_broker *b)
{
    b->boot_backoff = b->boot_backoff > 0 ? b->boot_backoff * 2
                                          : BOOT_RETRY_MIN;
    if (b->boot_backoff > BOOT_RETRY_MAX)
        b->boot_backoff = BOOT_RETRY_MAX;
    flux_timer_watcher_reset (b->boot_retry, b->boot_backoff, 0.);
    flux_watcher_start (b->boot_retry);
}

static void learn_cards (struct bgn_broker *b, json_t *cards)
{
    const char *key;
    json_t *card;

    json_object_foreach (cards, key, card) {
        char *end;
        unsigned long r = strtoul (key, &end, 10);
        if (*end || r >= b->size || !card_valid (card))
            continue;
        card_store (b->cards, (uint32_t)r, card);
    }
}

static void answer_cb (flux_future_t *f, void *arg)
{
    struct bgn_broker *b = arg;
    json_t *cards = NULL;

    b->boot_f = NULL;
    if (flux_rpc_get_unpack (f, "{s:o}", "cards", &cards) == 0) {
        learn_cards (b, cards);
        flux_future_destroy (f);
        exchange_done (b, 0, NULL);
        return;
    }
    int err = errno;
    const char *text = flux_future_error_string (f);
    char why[300];
    /* rank 0's bgn is not loaded yet, or some of our peers' are not:
     * ask again (rank 0 named those it lacks) */
    if (err == ENOSYS || err == ETIMEDOUT) {
        still_waiting (b, err == ENOSYS ? "0" : text ? text : "0");
        flux_future_destroy (f);
        if (err == ENOSYS)
            retry_later (b);
        else
            send_card (b);
        return;
    }
    errbuf_set (why, sizeof (why), "rank 0 answered: %s",
                text ? text : strerror (err));
    flux_future_destroy (f);
    exchange_done (b, err, why);
}

/* Send this rank's card, with its wants while the exchange is open. */
static void send_card (struct bgn_broker *b)
{
    flux_future_t *f;
    char *want = NULL;
    bool open = b->boot_cb != NULL;

    if (open && !b->boot_want_all && !(want = idset_encode (b->boot_wants, 0)))
        goto fail;
    f = open ? flux_rpc_pack (b->h, BOOT_TOPIC, 0, 0, "{s:i s:O s:s s:b}",
                              "rank", (int)b->rank, "card", b->card, "want",
                              want ? want : "all", "wait", 1)
             : flux_rpc_pack (b->h, BOOT_TOPIC, 0, 0, "{s:i s:O}", "rank",
                              (int)b->rank, "card", b->card);
    free (want);
    if (!f)
        goto fail;
    if (!open) {          /* a card again: nothing waits on the answer */
        if (flux_future_then (f, b->rpc_timeout, fh_boot_ack_cb, b) < 0)
            flux_future_destroy (f);
        return;
    }
    /* rank 0 answers within boot_timeout; a little more covers the trip */
    if (flux_future_then (f, b->boot_timeout + 5., answer_cb, b) < 0) {
        flux_future_destroy (f);
        goto fail;
    }
    b->boot_f = f;
    b->boot_sent = 1;
    return;
fail:
    if (open)
        exchange_done (b, errno, strerror (errno));
}

void fh_boot_ack_cb (flux_future_t *f, void *arg)
{
    struct bgn_broker *b = arg;

    if (flux_rpc_get (f, NULL) < 0 && errno != ENOSYS)
        fh_log (b, LOG_WARNING, "bgn: sending this rank's card to rank 0: %s",
                strerror (errno));
    flux_future_destroy (f);
}

void fh_boot_resend (struct bgn_broker *b)
{
    if (b->rank == 0 || b->boot_f)   /* one in flight carries the card */
        return;
    send_card (b);
}

/* bgn.boot-call: rank 0's bgn (re)loaded, and holds no cards. */
static void call_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                     void *arg)
{
    struct bgn_broker *b = arg;

    if (b->rank == 0)
        return;
    if (b->boot_f)                   /* in flight: rank 0 answers it */
        return;
    if (b->boot_cb) {                /* waiting to ask again: now */
        flux_watcher_stop (b->boot_retry);
        b->boot_backoff = 0;
        send_card (b);
        return;
    }
    if (b->boot_sent)
        send_card (b);
}

static const struct flux_msg_handler_spec boot_htab[] = {
    { FLUX_MSGTYPE_REQUEST, BOOT_TOPIC, boot_request_cb, 0 },
    { FLUX_MSGTYPE_EVENT, CALL_TOPIC, call_cb, 0 },
    FLUX_MSGHANDLER_TABLE_END,
};

int fh_boot_init (struct bgn_broker *b)
{
    if (!(b->card = json_object ()) || !(b->cards = json_object ())
        || !(b->boot_wants = idset_create (b->size))
        || !(b->boot_waits = zlistx_new ()) || !(b->fetches = zlistx_new ())
        || !(b->fetching = idset_create (b->size))
        || !(b->fetched_at = calloc (b->size, sizeof (double)))) {
        errno = ENOMEM;
        return -1;
    }
    zlistx_set_destructor (b->boot_waits, fh_boot_wait_free);
    zlistx_set_destructor (b->fetches, fh_future_free);
    if (!(b->boot_retry = flux_timer_watcher_create (b->r, 0., 0., retry_cb, b)))
        return -1;
    if (b->rank == 0
        && !(b->boot_waiter = flux_timer_watcher_create (b->r, 1., 1.,
                                                         waiter_cb, b)))
        return -1;
    if (flux_msg_handler_addvec (b->h, boot_htab, b, &b->boot_handlers) < 0)
        return -1;
    if (b->rank != 0 && flux_event_subscribe (b->h, CALL_TOPIC) < 0)
        return -1;
    return 0;
}

int fluxhost_boot_exchange (bgn_broker_t *b,
                            void (*cb) (bgn_broker_t *b, int errnum,
                                        const char *why, void *arg),
                            void *arg)
{
    b->boot_cb = cb;
    b->boot_cb_arg = arg;
    flux_reactor_now_update (b->r);
    b->boot_started = monotime_now ();
    b->boot_deadline = b->boot_started + b->boot_timeout;
    if (b->rank != 0) {
        send_card (b);
        return 0;
    }
    /* rank 0: every rank that loaded first sends its card again */
    flux_future_t *f = flux_event_publish (b->h, CALL_TOPIC, 0, NULL);
    if (!f)
        fh_log (b, LOG_WARNING, "bgn: publishing %s: %s", CALL_TOPIC,
                strerror (errno));
    flux_future_destroy (f);
    flux_watcher_start (b->boot_waiter);
    fh_boot_self_check (b);
    return 0;
}

/* ---- reads ----------------------------------------------------------- */

#define FETCH_MIN_INTERVAL 1.0   /* s between two asks for one rank */

static void fetched_cb (flux_future_t *f, void *arg)
{
    struct bgn_broker *b = arg;
    uint32_t rank = (uint32_t)(uintptr_t)flux_future_aux_get (f, "rank");
    json_t *cards = NULL;

    if (flux_rpc_get_unpack (f, "{s:o}", "cards", &cards) == 0)
        learn_cards (b, cards);
    else
        fh_log (b, LOG_DEBUG, "bgn: rank %u's card from rank 0: %s",
                (unsigned)rank, strerror (errno));
    idset_clear (b->fetching, rank);
    zlistx_delete (b->fetches, zlistx_find (b->fetches, f));
}

/* Ask rank 0 for rank's card in the background, not waiting for a card
 * not there yet; the next read finds it.  Never blocks: after start-up a
 * read must not hold the reactor on the TBON (a broker the TBON has cut
 * off would go silent on the BGN too). */
static void fetch_card (struct bgn_broker *b, uint32_t rank)
{
    flux_future_t *f;
    char want[16];
    double now = monotime_now ();

    if (idset_test (b->fetching, rank)
        || now - b->fetched_at[rank] < FETCH_MIN_INTERVAL)
        return;
    snprintf (want, sizeof (want), "%u", (unsigned)rank);
    if (!(f = flux_rpc_pack (b->h, BOOT_TOPIC, 0, 0, "{s:i s:s s:b}", "rank",
                             (int)b->rank, "want", want, "wait", 0))
        || flux_future_aux_set (f, "rank", (void *)(uintptr_t)rank, NULL) < 0
        || flux_future_then (f, b->rpc_timeout, fetched_cb, b) < 0
        || !zlistx_add_end (b->fetches, f)) {
        flux_future_destroy (f);
        return;
    }
    b->fetched_at[rank] = now;
    idset_set (b->fetching, rank);
}

int fh_boot_get (struct bgn_broker *b, uint32_t rank, const char *key,
                 char *buf, size_t len, bool fresh)
{
    json_t *card;
    const char *value;

    if (rank >= b->size) {
        errno = EINVAL;
        return -1;
    }
    if (b->tab) {
        char err[256];
        int rc = hosttab_get (b->tab, rank, key, buf, len, err, sizeof (err));
        if (rc <= 0)
            return rc;
        card = b->card;     /* our own value */
    }
    else
        card = card_of (b->cards, rank);
    /* after start-up, elsewhere than rank 0: a card not here, or one to
     * refresh, is asked for; what is here meanwhile is the answer */
    if ((fresh || !card) && b->rank != 0 && rank != b->rank && b->started)
        fetch_card (b, rank);
    if (!card) {
        /* not sent yet (still loading, or a false claim about it) */
        errno = b->started ? EAGAIN : ENOENT;
        return -1;
    }
    if (!(value = json_string_value (json_object_get (card, key)))) {
        errno = ENOENT;
        return -1;
    }
    if (strlen (value) >= len) {
        errno = EOVERFLOW;
        return -1;
    }
    memcpy (buf, value, strlen (value) + 1);
    return 0;
}

void fh_boot_free (struct bgn_broker *b)
{
    flux_msg_handler_delvec (b->boot_handlers);
    b->boot_handlers = NULL;
    if (b->boot_waits) {
        for (struct boot_wait *w = zlistx_first (b->boot_waits); w;
             w = zlistx_next (b->boot_waits))
            flux_respond_error (b->h, w->req, ENOSYS, "bgn is unloading");
        zlistx_destroy (&b->boot_waits);
    }
    flux_future_destroy (b->boot_f);
    zlistx_destroy (&b->fetches);
    idset_destroy (&b->fetching);
    free (b->fetched_at);
    flux_watcher_destroy (b->boot_retry);
    flux_watcher_destroy (b->boot_waiter);
    hosttab_destroy (&b->tab);
    json_decref (b->card);
    json_decref (b->cards);
    idset_destroy (&b->boot_wants);
}

/* ---- as the broker's overlay: the broker's own bootstrap --------------- */

/* This rank's card in a business card the broker's bootstrap carries:
 * Flux's fields (host, uri) and bgn's values under "bgn". */
static json_t *bizcard (struct bgn_broker *b)
{
    const char *ep = json_string_value (json_object_get (b->card, "endpoint"));

    return json_pack ("{s:s s:[s] s:O}", "host", b->hostname, "uri",
                      ep ? ep : "", "bgn", b->card);
}

static int rpc_wait (struct bgn_broker *b, flux_future_t *f, const char *what,
                     char *errbuf, size_t errlen)
{
    if (!f || flux_future_get (f, NULL) < 0) {
        const char *why = f ? flux_future_error_string (f) : NULL;
        errbuf_set (errbuf, errlen,
                    "%s: %s", what, why ? why : strerror (errno));
        flux_future_destroy (f);
        return -1;
    }
    flux_future_destroy (f);
    return 0;
}

/* Every rank's card, streamed by bootstrap.whois.  Every rank reads
 * every card (N squared reads of the PMI in all): after start-up the
 * broker's bootstrap is closed, and a card asked of rank 0 instead would
 * go through this broker's Flux side, which is offline until the BGN is
 * up here: a rank fenced during start-up could then never check the
 * live records it needs to rejoin (seen at 64 brokers under load). */
static int whois_cards (struct bgn_broker *b, char *errbuf, size_t errlen)
{
    char ranks[64];
    flux_future_t *f;
    int got = 0;

    snprintf (ranks, sizeof (ranks), b->size > 1 ? "0-%u" : "%u",
              (unsigned)(b->size - 1));
    if (!(f = flux_rpc_pack (b->h, "bootstrap.whois", FLUX_NODEID_ANY,
                             FLUX_RPC_STREAMING, "{s:s}", "ranks", ranks)))
        goto error;
    for (;;) {
        json_t *bc, *card;
        int rank;
        if (flux_rpc_get_unpack (f, "{s:i s:o}", "rank", &rank, "bizcard",
                                 &bc) < 0) {
            if (errno == ENODATA)
                break;
            goto error;
        }
        if (rank < 0 || (uint32_t)rank >= b->size) {
            errbuf_set (errbuf, errlen, "bootstrap.whois: rank %d out of range",
                        rank);
            flux_future_destroy (f);
            return -1;
        }
        card = json_object_get (bc, "bgn");
        if (!card_valid (card)) {
            errbuf_set (errbuf, errlen, "rank %d's business card has no bgn "
                        "values: every broker's overlay must be bgn-overlay.so "
                        "(is broker.overlay-module set on every broker?)",
                        rank);
            flux_future_destroy (f);
            errno = EPROTO;
            return -1;
        }
        card_store (b->cards, (uint32_t)rank, card);
        got++;
        flux_future_reset (f);
    }
    flux_future_destroy (f);
    if ((uint32_t)got != b->size) {
        errbuf_set (errbuf, errlen, "bootstrap.whois: %d card(s) of %u", got,
                    (unsigned)b->size);
        errno = EPROTO;
        return -1;
    }
    return 0;
error:
    errbuf_set (errbuf, errlen, "bootstrap.whois: %s",
                f && flux_future_error_string (f) ? flux_future_error_string (f)
                                                : strerror (errno));
    flux_future_destroy (f);
    return -1;
}

int fh_boot_broker (struct bgn_broker *b, char *errbuf, size_t errlen)
{
    json_t *bc;
    flux_future_t *f;

    /* from the [bootstrap] table: every card follows from it, and the
     * broker's own bootstrap has nothing to exchange (its TBON asks it
     * only for that table's entries) */
    if (b->tab)
        return 0;
    if (!(bc = bizcard (b))) {
        errbuf_set (errbuf, errlen, "out of memory");
        return -1;
    }
    f = flux_rpc_pack (b->h, "bootstrap.iam", FLUX_NODEID_ANY, 0, "{s:O}",
                       "bizcard", bc);
    json_decref (bc);
    if (rpc_wait (b, f, "bootstrap.iam", errbuf, errlen) < 0)
        return -1;
    f = flux_rpc (b->h, "bootstrap.barrier", NULL, FLUX_NODEID_ANY, 0);
    if (rpc_wait (b, f, "bootstrap.barrier", errbuf, errlen) < 0)
        return -1;
    if (whois_cards (b, errbuf, errlen) < 0)
        return -1;
    return 0;
}

/* The broker's bootstrap ends: no rank is critical but rank 0 (a BGN
 * routes around any other). */
int fh_boot_finalize (struct bgn_broker *b, char *errbuf, size_t errlen)
{
    flux_future_t *f = flux_rpc_pack (b->h, "bootstrap.finalize",
                                      FLUX_NODEID_ANY, 0, "{s:s}", "crit", "0");

    return rpc_wait (b, f, "bootstrap.finalize", errbuf, errlen);
}
