/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* envelope.c: encode and decode the overlay envelope (see envelope.h). */
#include <errno.h>
#include <string.h>

#include "envelope.h"
#include "src/common/libutil/wire.h"

void envelope_encode (const struct envelope *env, uint8_t buf[ENV_SIZE])
{
    buf[0] = ENV_MAGIC;
    buf[1] = ENV_VERSION;
    buf[2] = env->kind;
    buf[3] = env->ttl;
    buf[4] = env->hops;
    buf[5] = env->flags;
    wire_put16 (buf + 6, env->kind == ENV_DATA ? env->stamp : 0);
    wire_put32 (buf + 8, env->source);
    wire_put32 (buf + 12, env->dest);
    wire_put64 (buf + 16, env->sender_inc);
    wire_put64 (buf + 24, env->receiver_inc);
}

static int refuse (const char *reason, const char **why)
{
    if (why)
        *why = reason;
    errno = EPROTO;
    return -1;
}

int envelope_decode_head (const void *data, size_t len,
                          struct envelope_head *head, const char **why)
{
    const uint8_t *p = data;

    if (len < ENV_SIZE)
        return refuse ("message shorter than an envelope (wrong size)", why);
    if (p[0] != ENV_MAGIC)
        return refuse ("envelope has a bad magic number", why);
    head->version = p[1];
    head->kind = p[2];
    head->ttl = p[3];
    head->hops = p[4];
    head->flags = p[5];
    head->source = wire_get32 (p + 8);
    head->dest = wire_get32 (p + 12);
    return 0;
}

int envelope_decode (const void *data, size_t len, struct envelope *env,
                     const char **why)
{
    const uint8_t *p = data;
    struct envelope_head h;

    if (envelope_decode_head (data, len, &h, why) < 0)
        return -1;
    if (h.version != ENV_VERSION)
        return refuse ("envelope has an unsupported version", why);
    if (h.kind < 1 || h.kind > ENV_KIND_MAX)
        return refuse ("envelope has an unknown kind", why);
    if (h.kind != ENV_DATA && (p[6] || p[7]))
        return refuse ("envelope reserved bytes are not zero", why);
    env->kind = h.kind;
    env->ttl = h.ttl;
    env->hops = h.hops;
    env->flags = h.flags;
    env->stamp = wire_get16 (p + 6);
    env->source = h.source;
    env->dest = h.dest;
    env->sender_inc = wire_get64 (p + 16);
    env->receiver_inc = wire_get64 (p + 24);
    return 0;
}

uint16_t envelope_inc_stamp (uint64_t inc)
{
    return (uint16_t)(1 + inc % 65535);
}

const char *envelope_kindstr (int kind)
{
    switch (kind) {
    case ENV_DATA: return "data";
    case ENV_HELLO: return "hello";
    case ENV_HELLO_ACK: return "hello-ack";
    case ENV_HELLO_NAK: return "hello-nak";
    case ENV_KEEPALIVE: return "keepalive";
    case ENV_GOODBYE: return "goodbye";
    case ENV_REPORT: return "report";
    case ENV_BATCH: return "batch";
    case ENV_VIEW: return "view";
    case ENV_EVENT: return "event";
    case ENV_EVCTL: return "event-control";
    case ENV_LINK: return "link";
    default: return "unknown";
    }
}
