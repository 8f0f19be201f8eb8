/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* multipart.c: whole multipart messages on a socket (see multipart.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "src/common/libutil/errbuf.h"
#include "src/common/libmsg/packed.h"
#include "multipart.h"

void zmqutil_close (zmq_msg_t *parts, int n)
{
    for (int i = 0; i < n; i++)
        zmq_msg_close (&parts[i]);
}

int zmqutil_readable (void *sock)
{
    int events = 0;
    size_t len = sizeof (events);

    if (zmq_getsockopt (sock, ZMQ_EVENTS, &events, &len) < 0)
        return 0;
    return (events & ZMQ_POLLIN) != 0;
}

int zmqutil_recv (void *sock, zmq_msg_t *parts, int max)
{
    int n = 0, more = 1, toolong = 0;

    while (more) {
        zmq_msg_t scratch, *m = n < max ? &parts[n] : &scratch;
        zmq_msg_init (m);
        if (zmq_msg_recv (m, sock, ZMQ_DONTWAIT) < 0) {
            int saved = errno;
            zmq_msg_close (m);
            zmqutil_close (parts, n);
            errno = saved;
            return (saved == EAGAIN && n == 0 && !toolong) ? 0 : -1;
        }
        more = zmq_msg_more (m);
        if (m == &scratch) {
            zmq_msg_close (m);
            toolong = 1;
        }
        else
            n++;
    }
    if (toolong) {
        zmqutil_close (parts, n);
        return -2;
    }
    return n;
}

/* Send one part; a large payload is handed to libzmq by reference to the
 * message's payload buffer instead of being copied into the socket. */
static int send_part (void *sock, msg_t *msg, const struct msg_frame *f,
                      int flags)
{
    void *ref;
    zmq_msg_t m;

    if (f->size < ZMQUTIL_ZERO_COPY_MIN
        || f->data != (const void *)msg_get_payload (msg, NULL)
        || !(ref = msg_payload_ref (msg)))
        return zmq_send (sock, f->data, f->size, flags);
    if (zmq_msg_init_data (&m, (void *)f->data, f->size, msg_payload_unref,
                           ref) < 0) {
        msg_payload_unref (NULL, ref);
        return zmq_send (sock, f->data, f->size, flags);
    }
    if (zmq_msg_send (&m, sock, flags) < 0) {
        int saved = errno;
        zmq_msg_close (&m);     /* drops the reference */
        errno = saved;
        return -1;
    }
    return 0;
}

int zmqutil_send_msg (void *sock, const char *id, msg_t *msg, int flags)
{
    return zmqutil_send_msg_to (sock, id, id ? strlen (id) : 0, msg, flags);
}

/* msg's frames[0..n-1] (msg_encode's), one part each, after the id. */
static int send_frames (void *sock, const void *id, size_t idlen,
                        msg_t *msg, const struct msg_frame *frames, int n,
                        int flags)
{
    /* With ROUTER_MANDATORY and DONTWAIT the first part is accepted or
     * refused for the whole message: once it is in, the rest cannot fail. */
    if (id && zmq_send (sock, id, idlen, ZMQ_SNDMORE | flags) < 0)
        return -1;
    for (int i = 0; i < n; i++) {
        if (send_part (sock, msg, &frames[i],
                       (i < n - 1 ? ZMQ_SNDMORE : 0) | flags) < 0)
            return -1;
    }
    return 0;
}

int zmqutil_send_msg_to (void *sock, const void *id, size_t idlen,
                         msg_t *msg, int flags)
{
    struct msg_frame frames[ZMQUTIL_MAX_PARTS];
    int n = msg_encode (msg, frames, ZMQUTIL_MAX_PARTS);

    if (n < 0)
        return -1;
    return send_frames (sock, id, idlen, msg, frames, n, flags);
}

int zmqutil_is_packed (const void *data, size_t len)
{
    return len >= PACKED_HDR && ((const unsigned char *)data)[0] == 0;
}

/* libzmq keeps a part of up to this many bytes inside its zmq_msg_t,
 * without allocating. */
#define INLINE_PART_MAX 33

/* Would sending frames[0..n-1] as parts allocate?  If not, a message
 * packed (one larger part, allocated) costs the sender an allocation it
 * did not have: such a message goes as parts. */
static int needs_allocation (const struct msg_frame *frames, int n)
{
    for (int i = 0; i < n; i++)
        if (frames[i].size > INLINE_PART_MAX)
            return 1;
    return 0;
}

int zmqutil_send_msg_packed (void *sock, const void *id, size_t idlen,
                             msg_t *msg, int flags)
{
    struct msg_frame frames[ZMQUTIL_MAX_PARTS];
    int n = msg_encode (msg, frames, ZMQUTIL_MAX_PARTS);
    size_t size;
    zmq_msg_t m;

    if (n < 0)
        return -1;
    if ((size = packed_size (frames, (size_t)n)) > ZMQUTIL_PACK_MAX
        || !needs_allocation (frames, n))
        return send_frames (sock, id, idlen, msg, frames, n, flags);
    if (zmq_msg_init_size (&m, size) < 0)
        return -1;
    if (packed_write (zmq_msg_data (&m), size, frames, (size_t)n) < 0
        || (id && zmq_send (sock, id, idlen, ZMQ_SNDMORE | flags) < 0)) {
        int saved = errno;
        zmq_msg_close (&m);
        errno = saved;
        return -1;
    }
    /* once the id is in, the part cannot be refused (see above) */
    if (zmq_msg_send (&m, sock, flags) < 0) {
        int saved = errno;
        zmq_msg_close (&m);
        errno = saved;
        return -1;
    }
    return 0;
}

/* The frames of a packed part, into mf (MSG_MAX_FRAMES); the count or
 * -1 with the reason in errbuf. */
static int unpack (zmq_msg_t *part, struct msg_frame *mf, char *errbuf,
                   size_t errlen)
{
    const char *why = NULL;
    int n = packed_read (zmq_msg_data (part), zmq_msg_size (part), mf,
                         MSG_MAX_FRAMES, &why);

    if (n < 0 && errbuf && errlen)
        errbuf_set (errbuf, errlen, "packed message: %s",
                    why ? why : "malformed");
    return n;
}

msg_t *zmqutil_decode_reuse (msg_t **spare, zmq_msg_t *parts, int n,
                             char *errbuf, size_t errlen)
{
    struct msg_frame mf[MSG_MAX_FRAMES];

    if (n == 1 && zmqutil_is_packed (zmq_msg_data (&parts[0]),
                                     zmq_msg_size (&parts[0]))) {
        int k = unpack (&parts[0], mf, errbuf, errlen);
        if (k < 0) {
            errno = EPROTO;
            return NULL;
        }
        return msg_decode_reuse (spare, mf, (size_t)k, errbuf, errlen);
    }
    if (n > MSG_MAX_FRAMES) {
        if (errbuf && errlen)
            errbuf_set (errbuf, errlen, "message has %d frames, max %d", n,
                        MSG_MAX_FRAMES);
        errno = EPROTO;
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        mf[i].data = zmq_msg_data (&parts[i]);
        mf[i].size = zmq_msg_size (&parts[i]);
    }
    return msg_decode_reuse (spare, mf, n, errbuf, errlen);
}

msg_t *zmqutil_decode (zmq_msg_t *parts, int n, char *errbuf, size_t errlen)
{
    return zmqutil_decode_reuse (NULL, parts, n, errbuf, errlen);
}
