/* body.c: broker messages to and from frames (see body.h). */
#include <errno.h>
#include <stdio.h>

#include "body.h"

int body_encode (msg_t *msg, struct frame **frames, int max)
{
    struct msg_frame mf[MSG_MAX_FRAMES];
    int n = msg_encode (msg, mf, MSG_MAX_FRAMES);

    if (n < 0 || n > max) {
        errno = EINVAL;
        return -1;
    }
    for (int i = 0; i < n; i++) {
        if (!(frames[i] = frame_create (mf[i].data, mf[i].size))) {
            frame_decref_all (frames, i);
            errno = ENOMEM;
            return -1;
        }
    }
    return n;
}

msg_t *body_decode (struct frame *const *frames, int n, char *errbuf,
                    size_t errlen)
{
    struct msg_frame mf[MSG_MAX_FRAMES];

    if (n > MSG_MAX_FRAMES) {
        if (errbuf)
            snprintf (errbuf, errlen, "too many frames");
        errno = EPROTO;
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        mf[i].data = frame_data (frames[i]);
        mf[i].size = frame_size (frames[i]);
    }
    return msg_decode (mf, n, errbuf, errlen);
}

size_t body_size (struct frame *const *frames, int n)
{
    size_t bytes = 0;

    for (int i = 0; i < n; i++)
        bytes += frame_size (frames[i]);
    return bytes;
}
