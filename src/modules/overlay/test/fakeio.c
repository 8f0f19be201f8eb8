/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* fakeio.c: one overlay core on a fake io (see fakeio.h). */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sodium.h>

#include "src/common/libmsg/packed.h"
#include "src/modules/overlay/body.h"
#include "src/modules/overlay/ovsign.h"
#include "src/common/libutil/wire.h"
#include "fakeio.h"

static int io_send (void *ctx, uint32_t rank, struct frame **wire)
{
    struct fake *f = ctx;
    struct frame *body[PACKED_MAX_FRAMES];
    struct sent *s;
    const char *why;
    int n;

    if (rank < FAKE_MAX_RANKS && f->send_errno[rank]) {
        errno = f->send_errno[rank];
        return -1;
    }
    if (f->nsent < FAKE_MAX_RECORDS) {
        s = &f->sent[f->nsent++];
        memset (s, 0, sizeof (*s));
        s->to = rank;
        s->wire = (uintptr_t)*wire;
        s->rawlen = frame_size (*wire);
        if ((s->raw = malloc (s->rawlen + 1)))
            memcpy (s->raw, frame_data (*wire), s->rawlen);
        envelope_decode (frame_data (*wire), frame_size (*wire), &s->env,
                         &why);
        n = body_unpack (*wire, body, PACKED_MAX_FRAMES, &why);
        s->n = n;
        for (int i = 0; i < n && i < 8; i++) {
            s->len[i] = frame_size (body[i]);
            s->body[i] = calloc (1, s->len[i] + 1);
            memcpy (s->body[i], frame_data (body[i]), s->len[i]);
        }
        if (n > 0)
            frame_decref_all (body, n);
        if (s->env.kind == ENV_DATA || s->env.kind == ENV_EVENT)
            s->msg = body_decode (*wire, NULL, 0);
    }
    frame_decref (wire);
    return 0;
}

static int io_connect (void *ctx, uint32_t rank, const char *endpoint,
                       const char *pubkey)
{
    ((struct fake *)ctx)->connects++;
    return 0;
}

static void io_disconnect (void *ctx, uint32_t rank, const char *endpoint)
{
    ((struct fake *)ctx)->disconnects++;
}

static int io_authorize (void *ctx, const char *pubkey)
{
    ((struct fake *)ctx)->authorized++;
    return 0;
}

static void io_admitted (void *ctx, uint32_t rank)
{
    struct fake *f = ctx;

    if (f->nadmitted < FAKE_MAX_RECORDS)
        f->admitted[f->nadmitted++] = rank;
}

static double io_now (void *ctx)
{
    return ((struct fake *)ctx)->now;
}

static void io_wakeup (void *ctx, double when)
{
    ((struct fake *)ctx)->wakeup = when;
}

static uint64_t io_random (void *ctx)
{
    return 4;   /* chosen by fair dice roll */
}

static void io_log (void *ctx, int level, const char *fmt, va_list ap)
{
    struct fake *f = ctx;
    char *s;

    if (f->nlogs < FAKE_MAX_RECORDS && vasprintf (&s, fmt, ap) >= 0) {
        f->log_levels[f->nlogs] = level;
        f->logs[f->nlogs++] = s;
    }
    if (getenv ("FAKEIO_VERBOSE"))
        fprintf (stderr, "# [%d] %s\n", level, f->logs[f->nlogs - 1]);
}

static int io_deliver (void *ctx, msg_t *msg, const struct bgn_msg_info *info)
{
    struct fake *f = ctx;

    if (f->on_deliver)
        f->on_deliver (f, msg);
    if (f->ndelivered < FAKE_MAX_RECORDS) {
        f->delivered_info[f->ndelivered] = *info;
        f->delivered[f->ndelivered++] = msg;
    }
    else
        msg_destroy (&msg);
    return 0;
}

static int io_request (void *ctx, msg_t *msg)
{
    struct fake *f = ctx;

    if (f->nrequests < FAKE_MAX_RECORDS)
        f->requests[f->nrequests++] = msg;
    else
        msg_destroy (&msg);
    return 0;
}

static int record_answer (struct fake *f, const msg_t *req, int errnum,
                          const char *text)
{
    struct answer *a;

    if (f->nanswers >= FAKE_MAX_RECORDS)
        return 0;
    a = &f->answers[f->nanswers++];
    a->req = msg_copy (req);
    a->errnum = errnum;
    a->text = text ? strdup (text) : NULL;
    return 0;
}

static int io_respond (void *ctx, const msg_t *req, const char *payload)
{
    return record_answer (ctx, req, 0, payload);
}

static int io_respond_error (void *ctx, const msg_t *req, int errnum,
                             const char *errstr)
{
    return record_answer (ctx, req, errnum, errstr);
}

static void io_stop (void *ctx, int exit_code)
{
    ((struct fake *)ctx)->stopped = exit_code + 1;
}

void fake_keypair (uint32_t r, unsigned char pk[32], unsigned char sk[64])
{
    unsigned char seed[crypto_sign_SEEDBYTES];

    memset (seed, (int)(r & 0xff), sizeof (seed));
    seed[0] = (unsigned char)(r >> 8);
    crypto_sign_seed_keypair (pk, sk, seed);
}

void fake_livesig (struct fake *f, uint32_t r, uint64_t inc, uint8_t sig[64])
{
    unsigned char pk[32], sk[64];
    char text[160];
    int n = ovsign_live_text (f->ov, r, inc, text, sizeof (text));

    fake_keypair (r, pk, sk);
    crypto_sign_detached (sig, NULL, (const unsigned char *)text, (size_t)n,
                          sk);
}

static int io_sign_key (void *ctx, uint32_t rank, int refresh,
                        unsigned char pk[32])
{
    struct fake *f = ctx;
    unsigned char sk[64];

    (void)refresh;
    if (!f->keys || rank >= f->size) {
        errno = ENOENT;
        return -1;
    }
    if (rank < FAKE_MAX_RANKS && f->key_unanswered[rank]) {
        errno = EAGAIN;
        return -1;
    }
    fake_keypair (rank, pk, sk);
    return 0;
}

static int io_peer_endpoint (void *ctx, uint32_t rank, char *buf,
                             size_t len)
{
    struct fake *f = ctx;

    f->peer_ep_asked++;
    if (rank >= FAKE_MAX_RANKS || !f->peer_ep[rank])
        return -1;
    snprintf (buf, len, "%s", f->peer_ep[rank]);
    return 0;
}

static const struct ovl_io fake_io = {
    .send = io_send,
    .connect = io_connect,
    .disconnect = io_disconnect,
    .authorize = io_authorize,
    .admitted = io_admitted,
    .now = io_now,
    .wakeup = io_wakeup,
    .random = io_random,
    .log = io_log,
    .deliver = io_deliver,
    .request = io_request,
    .respond = io_respond,
    .respond_error = io_respond_error,
    .stop = io_stop,
    .sign_key = io_sign_key,
    .peer_endpoint = io_peer_endpoint,
};

struct fake *fake_create (uint32_t rank, uint32_t size, const char *topology)
{
    struct fake *f = calloc (1, sizeof (*f));

    if (!f)
        return NULL;
    f->now = 1000.0;
    f->wakeup = INFINITY;
    ovconf_defaults (&f->cfg);
    f->cfg.curve = 0;
    f->cfg.keepalive_interval = 1.0;
    f->cfg.peer_timeout = 5.0;
    snprintf (f->cfg.topology, sizeof (f->cfg.topology), "%s",
              topology ? topology : "bgn");
    /* the core is made in fake_start, so tests can change cfg first */
    f->rank = rank;
    f->size = size;
    f->incarnation = 100;
    return f;
}

int fake_start (struct fake *f)
{
    struct ovl_identity id = {
        .rank = f->rank,
        .size = f->size,
        .incarnation = f->incarnation,
        .hostname = "testhost",
        .instance = "test-instance",
        .pubkey = "",
        .endpoint = "ipc://fake",
        .version = f->version,
    };

    if (!(f->ov = overlay_create (&f->cfg, &id, &fake_io, f)))
        return -1;
    if (f->keys) {
        unsigned char pk[32], sk[64];
        fake_keypair (f->rank, pk, sk);
        overlay_set_sign_key (f->ov, sk);
    }
    for (int i = 0; i < overlay_peer_count (f->ov); i++) {
        char ep[64], key[41];
        uint32_t r = overlay_peer_rank (f->ov, i);
        snprintf (ep, sizeof (ep), "ipc://peer-%u", (unsigned)r);
        if (overlay_set_peer (f->ov, r, ep, f->cfg.curve ? fake_key (r, key)
                                                          : "") < 0)
            return -1;
    }
    return overlay_start (f->ov);
}

static void clear_sent (struct sent *s)
{
    for (int i = 0; i < 8; i++)
        free (s->body[i]);
    free (s->raw);
    msg_destroy (&s->msg);
}

void fake_clear (struct fake *f)
{
    for (int i = 0; i < f->nsent; i++)
        clear_sent (&f->sent[i]);
    f->nsent = 0;
    for (int i = 0; i < f->ndelivered; i++)
        msg_destroy (&f->delivered[i]);
    f->ndelivered = 0;
    for (int i = 0; i < f->nrequests; i++)
        msg_destroy (&f->requests[i]);
    f->nrequests = 0;
    for (int i = 0; i < f->nanswers; i++) {
        msg_destroy (&f->answers[i].req);
        free (f->answers[i].text);
    }
    f->nanswers = 0;
    for (int i = 0; i < f->nlogs; i++)
        free (f->logs[i]);
    f->nlogs = 0;
    f->nadmitted = 0;
}

void fake_destroy (struct fake **fp)
{
    if (fp && *fp) {
        overlay_destroy (&(*fp)->ov);
        fake_clear (*fp);
        free (*fp);
        *fp = NULL;
    }
}

void fake_advance (struct fake *f, double seconds)
{
    double until = f->now + seconds;

    while (f->wakeup <= until) {
        f->now = f->wakeup > f->now ? f->wakeup : f->now;
        overlay_run_timers (f->ov);
    }
    f->now = until;
}

void fake_inject (struct fake *f, uint32_t from, struct envelope *env,
                  const char *const *frames, const size_t *lens, int n,
                  const char *user_id)
{
    struct frame *fr[16], *w;
    uint8_t buf[ENV_SIZE];
    char id[16];
    struct peer *p = peers_lookup (f->ov->peers, from);

    if (p && env->sender_inc == 0 && env->kind != ENV_HELLO)
        env->sender_inc = p->hello.incarnation;
    if (env->receiver_inc == 0 && env->kind != ENV_HELLO)
        env->receiver_inc = f->ov->incarnation;
    if (env->source == 0 && from != 0)
        env->source = from;
    envelope_encode (env, buf);
    if (n > 15)
        n = 15;
    for (int i = 0; i < n; i++)
        fr[i] = frame_create (frames[i], lens[i]);
    /* one wire frame, as a peer sends it (body.h) */
    w = body_pack (buf, fr, n);
    f->injected = (uintptr_t)w;
    frame_decref_all (fr, n);
    snprintf (id, sizeof (id), "%u", (unsigned)from);
    overlay_recv (f->ov, id, strlen (id), &w, 1, user_id);
}

void fake_inject_wire (struct fake *f, uint32_t from, const uint8_t *raw,
                       size_t len)
{
    struct peer *p = peers_lookup (f->ov->peers, from);
    struct frame *w = frame_create (raw, len);
    char id[16];

    if (!w)
        return;
    if (p && len >= ENV_SIZE) {
        wire_put64 (frame_data (w) + 16, p->hello.incarnation);
        wire_put64 (frame_data (w) + 24, f->ov->incarnation);
    }
    snprintf (id, sizeof (id), "%u", (unsigned)from);
    overlay_recv (f->ov, id, strlen (id), &w, 1, NULL);
}

void fake_control (struct fake *f, uint32_t from, int kind, const char *json)
{
    struct envelope env = { .kind = kind, .ttl = 1, .source = from,
                            .dest = f->ov->rank };
    size_t len = json ? strlen (json) : 0;

    fake_inject (f, from, &env, &json, &len, json ? 1 : 0, NULL);
}

void fake_data (struct fake *f, uint32_t from, struct envelope *env,
                msg_t *msg)
{
    struct msg_frame mf[64];
    const char *data[64];
    size_t lens[64];
    int n = msg_encode (msg, mf, 64);

    for (int i = 0; i < n; i++) {
        data[i] = mf[i].data;
        lens[i] = mf[i].size;
    }
    fake_inject (f, from, env, data, lens, n, NULL);
}

const char *fake_key (uint32_t r, char buf[41])
{
    snprintf (buf, 41, "key%037u", (unsigned)r);
    return buf;
}

void fake_hello_json (struct fake *f, uint32_t from, int kind,
                      uint64_t sender_inc, const char *json,
                      const char *user_id)
{
    struct envelope env = { .kind = kind, .ttl = 1, .source = from,
                            .dest = f->ov->rank, .sender_inc = sender_inc };
    size_t len = strlen (json);

    if (kind != ENV_HELLO)
        env.receiver_inc = f->ov->incarnation;
    fake_inject (f, from, &env, &json, &len, 1, user_id);
}

void fake_hello (struct fake *f, uint32_t from, int kind, uint64_t inc)
{
    char json[512];
    struct envelope env = { .kind = kind, .ttl = 1, .source = from,
                            .dest = f->ov->rank, .sender_inc = inc };
    const char *frames[1] = { json };
    size_t len;

    char key[41];

    snprintf (json, sizeof (json), "{\"version\":%d,\"rank\":%u,"
              "\"instance\":\"test-instance\",\"incarnation\":%llu,"
              "\"hostname\":\"host%u\",\"topology\":\"%s\",\"seq\":0}",
              PROTOCOL_VERSION, (unsigned)from, (unsigned long long)inc,
              (unsigned)from, f->ov->topo_spec);
    len = strlen (json);
    if (kind == ENV_HELLO_ACK)
        env.receiver_inc = f->ov->incarnation;
    fake_inject (f, from, &env, frames, &len, 1,
                 f->cfg.curve ? fake_key (from, key) : NULL);
}

int fake_count (struct fake *f, int kind, uint32_t to)
{
    int count = 0;

    for (int i = 0; i < f->nsent; i++)
        if (f->sent[i].env.kind == kind
            && (to == UINT32_MAX || f->sent[i].to == to))
            count++;
    return count;
}

struct sent *fake_last (struct fake *f, int kind, uint32_t to)
{
    for (int i = f->nsent - 1; i >= 0; i--)
        if (f->sent[i].env.kind == kind
            && (to == UINT32_MAX || f->sent[i].to == to))
            return &f->sent[i];
    return NULL;
}

bool fake_logged (struct fake *f, const char *s)
{
    return fake_logged_level (f, s) >= 0;
}

int fake_logged_level (struct fake *f, const char *s)
{
    for (int i = 0; i < f->nlogs; i++)
        if (strstr (f->logs[i], s))
            return f->log_levels[i];
    return -1;
}

void fake_all_up (struct fake *f)
{
    for (int i = 0; i < f->ov->peers->n; i++) {
        struct peer *p = f->ov->peers->v[i];
        fake_hello (f, p->rank, p->connector ? ENV_HELLO_ACK : ENV_HELLO,
                    1000 + p->rank);
    }
}

void fake_advance_alive (struct fake *f, double seconds)
{
    double step = f->cfg.keepalive_interval > 0 ? f->cfg.keepalive_interval
                                                : 1.0;
    while (seconds > 0) {
        double d = seconds < step ? seconds : step;
        for (int i = 0; i < f->ov->peers->n; i++) {
            struct peer *p = f->ov->peers->v[i];
            struct envelope ka = { .kind = ENV_KEEPALIVE, .flags = 1,
                                   .ttl = 1, .source = p->rank,
                                   .dest = f->rank };
            if (p->state == PEER_UP || p->state == PEER_SUSPECT)
                fake_inject (f, p->rank, &ka, NULL, NULL, 0, NULL);
        }
        fake_advance (f, d);
        seconds -= d;
    }
}

struct peer *fake_peer (struct fake *f, uint32_t rank)
{
    return peers_lookup (f->ov->peers, rank);
}

uint32_t fake_peer_not_near (struct fake *f, uint32_t rank)
{
    uint32_t nb[64];
    int n = bgn_topo_neighbours (f->ov->topo, rank, nb, 64);

    for (int i = 0; i < f->ov->peers->n; i++) {
        uint32_t r = f->ov->peers->v[i]->rank;
        bool near = r == rank;
        for (int j = 0; j < n && !near; j++)
            near = nb[j] == r;
        if (!near)
            return r;
    }
    return UINT32_MAX;
}

struct answer *fake_last_answer (struct fake *f)
{
    return f->nanswers > 0 ? &f->answers[f->nanswers - 1] : NULL;
}

void fake_fence (struct fake *f, uint32_t from, int kind, uint32_t root,
                 const struct fence_record *recs, int n)
{
    struct envelope env = { .kind = kind, .ttl = 9, .hops = 1,
                            .source = from, .dest = f->ov->rank };
    struct frame *fr = fencemsg_encode (root, recs, (size_t)n);
    const char *data = (const char *)frame_data (fr);
    size_t len = frame_size (fr);

    fake_inject (f, from, &env, &data, &len, 1, NULL);
    frame_decref (&fr);
}

void fake_fence1 (struct fake *f, uint32_t from, int kind, uint32_t rank,
                  uint64_t inc, bool fenced)
{
    struct fence_record rec = { .rank = rank, .inc = inc, .fenced = fenced,
                                .reason = "test" };
    fake_fence (f, from, kind, 0, &rec, 1);
}

struct find {
    uint32_t rank;
    uint64_t inc;
    bool fenced;
    bool found;
    bool signed_;
};

static void find_cb (const struct fence_record *rec, void *arg)
{
    struct find *w = arg;
    if (rec->rank == w->rank && rec->inc == w->inc && rec->fenced == w->fenced) {
        w->found = true;
        w->signed_ = rec->sig != NULL;
    }
}

static void count_cb (const struct fence_record *rec, void *arg)
{
    (*(int *)arg)++;
}

bool fake_has_record (const struct sent *s, uint32_t rank, uint64_t inc,
                      bool fenced)
{
    struct find w = { .rank = rank, .inc = inc, .fenced = fenced };
    uint32_t root;

    if (!s || s->n < 1)
        return false;
    fencemsg_decode (s->body[0], s->len[0], &root, find_cb, &w);
    return w.found;
}

int fake_record_signed (const struct sent *s, uint32_t rank, uint64_t inc)
{
    struct find w = { .rank = rank, .inc = inc, .fenced = false };
    uint32_t root;

    if (!s || s->n < 1)
        return -1;
    fencemsg_decode (s->body[0], s->len[0], &root, find_cb, &w);
    return w.found ? w.signed_ : -1;
}

int fake_records (const struct sent *s)
{
    uint32_t root;
    int n = 0;

    if (!s || s->n < 1 || fencemsg_decode (s->body[0], s->len[0], &root,
                                           count_cb, &n) < 0)
        return -1;
    return n;
}
