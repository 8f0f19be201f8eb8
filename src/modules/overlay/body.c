/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* body.c: wire frames: packing, unpacking, decoding (see body.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "src/common/libutil/errbuf.h"
#include "src/common/libmsg/packed.h"
#include "body.h"
#include "envelope.h"

/* A wire frame: the envelope 'env' (zeros if NULL) and the packed list of
 * mf[0..n-1].  NULL with errno on failure. */
static struct frame *pack_wire_frame (const uint8_t *env,
                                      const struct msg_frame *mf, size_t n)
{
    struct frame *w;

    if (!(w = frame_create (NULL, ENV_SIZE + packed_size (mf, n))))
        return NULL;
    if (env)
        memcpy (frame_data (w), env, ENV_SIZE);
    else
        memset (frame_data (w), 0, ENV_SIZE);
    if (packed_write (frame_data (w) + ENV_SIZE, frame_size (w) - ENV_SIZE,
                      mf, n) < 0) {
        int saved = errno;
        frame_decref (&w);
        errno = saved;
        return NULL;
    }
    return w;
}

struct frame *body_encode (msg_t *msg)
{
    struct msg_frame mf[MSG_MAX_FRAMES];
    int n = msg_encode (msg, mf, MSG_MAX_FRAMES);

    if (n < 0) {
        errno = EINVAL;
        return NULL;
    }
    return pack_wire_frame (NULL, mf, (size_t)n);
}

msg_t *body_decode (const struct frame *w, char *errbuf, size_t errlen)
{
    const uint8_t *p = frame_data (w);
    size_t len = frame_size (w);

    /* a signed request's block is not part of the message */
    if (len >= ENV_SIZE + ENV_SIG_BLOCK && p[0] == ENV_MAGIC
        && (p[5] & ENV_FLAG_SIGNED))
        len -= ENV_SIG_BLOCK;
    return body_decode_len (w, len, errbuf, errlen);
}

msg_t *body_decode_len (const struct frame *w, size_t len, char *errbuf,
                        size_t errlen)
{
    struct msg_frame mf[PACKED_MAX_FRAMES];
    const char *why = "message shorter than an envelope";
    int n = -1;

    if (len > frame_size (w))
        len = frame_size (w);
    if (len >= ENV_SIZE)
        n = packed_read (frame_data (w) + ENV_SIZE, len - ENV_SIZE,
                         mf, PACKED_MAX_FRAMES, &why);
    if (n < 0) {
        if (errbuf)
            errbuf_set (errbuf, errlen, "%s", why);
        errno = EPROTO;
        return NULL;
    }
    return msg_decode (mf, (size_t)n, errbuf, errlen);
}

struct frame *body_pack (const uint8_t *env, struct frame *const *frames,
                         int n)
{
    struct msg_frame mf[PACKED_MAX_FRAMES];

    if (n < 0 || n > PACKED_MAX_FRAMES) {
        errno = E2BIG;
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        mf[i].data = frame_data (frames[i]);
        mf[i].size = frame_size (frames[i]);
    }
    return pack_wire_frame (env, mf, (size_t)n);
}

/* A slice keeps its wire frame alive: the frame it points into. */
static void release_slice (struct frame *f, void *priv)
{
    struct frame **parent = priv;

    frame_decref (parent);
}

int body_unpack (struct frame *w, struct frame **frames, int max,
                 const char **why)
{
    struct msg_frame mf[PACKED_MAX_FRAMES];
    int n = -1;

    if (max > PACKED_MAX_FRAMES)
        max = PACKED_MAX_FRAMES;
    if (frame_size (w) < ENV_SIZE) {
        *why = "message shorter than an envelope";
        errno = EPROTO;
        return -1;
    }
    if ((n = packed_read (frame_data (w) + ENV_SIZE, frame_size (w) - ENV_SIZE,
                          mf, (size_t)max, why)) < 0)
        return -1;
    for (int i = 0; i < n; i++) {
        struct frame *s = frame_wrap (sizeof (struct frame *), release_slice);
        if (!s) {
            frame_decref_all (frames, i);
            errno = ENOMEM;
            *why = "out of memory";
            return -1;
        }
        *(struct frame **)frame_priv (s) = frame_incref (w);
        frame_set (s, (void *)mf[i].data, mf[i].size);
        frames[i] = s;
    }
    return n;
}
