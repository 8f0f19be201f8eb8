/* envelope.c: encode and decode the overlay envelope (see envelope.h). */
#include <errno.h>
#include <string.h>

#include "envelope.h"

static void put32 (uint8_t *p, uint32_t v)
{
    p[0] = v >> 24;
    p[1] = v >> 16;
    p[2] = v >> 8;
    p[3] = v;
}

static void put64 (uint8_t *p, uint64_t v)
{
    put32 (p, (uint32_t)(v >> 32));
    put32 (p + 4, (uint32_t)v);
}

static uint32_t get32 (const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8
           | p[3];
}

static uint64_t get64 (const uint8_t *p)
{
    return (uint64_t)get32 (p) << 32 | get32 (p + 4);
}

void envelope_encode (const struct envelope *env, uint8_t buf[ENV_SIZE])
{
    buf[0] = ENV_MAGIC;
    buf[1] = ENV_VERSION;
    buf[2] = env->kind;
    buf[3] = env->ttl;
    buf[4] = env->hops;
    buf[5] = env->flags;
    buf[6] = buf[7] = 0;
    put32 (buf + 8, env->source);
    put32 (buf + 12, env->dest);
    put64 (buf + 16, env->sender_inc);
    put64 (buf + 24, env->receiver_inc);
}

int envelope_decode (const void *data, size_t len, struct envelope *env,
                     const char **why)
{
    const uint8_t *p = data;
    const char *reason = NULL;

    if (len != ENV_SIZE)
        reason = "envelope has the wrong size";
    else if (p[0] != ENV_MAGIC)
        reason = "envelope has a bad magic number";
    else if (p[1] != ENV_VERSION)
        reason = "envelope has an unsupported version";
    else if (p[2] < 1 || p[2] > ENV_KIND_MAX)
        reason = "envelope has an unknown kind";
    else if (p[6] || p[7])
        reason = "envelope reserved bytes are not zero";
    if (reason) {
        if (why)
            *why = reason;
        errno = EPROTO;
        return -1;
    }
    env->kind = p[2];
    env->ttl = p[3];
    env->hops = p[4];
    env->flags = p[5];
    env->source = get32 (p + 8);
    env->dest = get32 (p + 12);
    env->sender_inc = get64 (p + 16);
    env->receiver_inc = get64 (p + 24);
    return 0;
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
    case ENV_FENCE: return "fence";
    case ENV_UNFENCE: return "unfence";
    case ENV_EVENT: return "event";
    case ENV_EVCTL: return "event-control";
    case ENV_LINK: return "link";
    default: return "unknown";
    }
}
