/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test/body.c: the wire frame (body.c): [envelope][packed frame list].
 *
 * - a broker message survives body_encode / body_decode, route stack,
 *   topic and payload included, with the envelope's room left zeroed;
 * - body_pack / body_unpack round-trip control frames, the slices point
 *   into the wire frame and keep it alive;
 * - malformed input is refused with EPROTO (or E2BIG) and a reason:
 *   shorter than an envelope, a truncated packing, trailing bytes, too
 *   many frames, frames that are no broker message.
 */
#include <errno.h>
#include <string.h>

#include "src/common/libtap/tap.h"
#include "src/common/libmsg/packed.h"
#include "src/modules/overlay/body.h"
#include "src/modules/overlay/envelope.h"

static bool zeroes (const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return false;
    return true;
}

static void test_message (void)
{
    msg_t *m = msg_request_create ("svc.echo", 7, "{\"x\":1}");
    msg_t *back;
    struct frame *w;
    const char *payload;
    uint32_t nodeid = 0;
    char err[128] = "";
    size_t len = 0;

    msg_route_enable (m);
    msg_route_push (m, "client-1");
    msg_route_push (m, "3");
    w = body_encode (m);
    ok (w && frame_size (w) > ENV_SIZE
        && zeroes (frame_data (w), ENV_SIZE),
        "body_encode: the envelope's %d bytes of room, zeroed, then the "
        "message", ENV_SIZE);
    back = body_decode (w, err, sizeof (err));
    ok (back != NULL, "body_decode gives the message back %s", err);
    ok (back && !strcmp (msg_get_topic (back), "svc.echo")
        && msg_get_nodeid (back, &nodeid) == 0 && nodeid == 7,
        "its topic and nodeid");
    payload = back ? msg_get_payload (back, &len) : NULL;
    ok (payload && len == 7 && !memcmp (payload, "{\"x\":1}", 7),
        "its payload");
    ok (back && msg_route_count (back) == 2
        && !strcmp (msg_route_first (back), "3")
        && !strcmp (msg_route_last (back), "client-1"),
        "its route stack, in order");

    frame_data (w)[0] = 0xff;
    msg_destroy (&back);
    ok ((back = body_decode (w, NULL, 0)) != NULL,
        "the envelope is not looked at by body_decode");
    msg_destroy (&back);
    frame_decref (&w);
    msg_destroy (&m);
}

static void test_pack (void)
{
    struct envelope env = { .kind = ENV_LINK, .ttl = 9, .source = 2,
                            .dest = 5 };
    uint8_t envbuf[ENV_SIZE];
    struct frame *parts[2], *out[4], *w;
    const char *why = NULL;
    struct envelope got;
    int n;

    envelope_encode (&env, envbuf);
    parts[0] = frame_create ("{\"op\":\"add\"}", 12);
    parts[1] = frame_create ("", 0);
    w = body_pack (envbuf, parts, 2);
    ok (w && !memcmp (frame_data (w), envbuf, ENV_SIZE),
        "body_pack: the envelope first");
    ok (envelope_decode (frame_data (w), frame_size (w), &got, &why) == 0
        && got.kind == ENV_LINK && got.dest == 5,
        "and it decodes as the one written");
    frame_decref_all (parts, 2);
    n = body_unpack (w, out, 4, &why);
    ok (n == 2 && frame_size (out[0]) == 12
        && !memcmp (frame_data (out[0]), "{\"op\":\"add\"}", 12)
        && frame_size (out[1]) == 0,
        "body_unpack: the two frames, the second empty");
    ok (n == 2 && frame_data (out[0]) >= frame_data (w)
        && frame_data (out[0]) < frame_data (w) + frame_size (w),
        "as slices of the wire frame, not copies");
    ok (frame_refs (w) == 3, "each slice holds a reference to it");
    frame_decref (&w);
    ok (n == 2 && !memcmp (frame_data (out[0]), "{\"op\":\"add\"}", 12),
        "the slices keep the wire frame alive after its owner lets go");
    frame_decref_all (out, n);

    w = body_pack (NULL, NULL, 0);
    ok (w && frame_size (w) == ENV_SIZE + PACKED_HDR
        && zeroes (frame_data (w), ENV_SIZE)
        && body_unpack (w, out, 4, &why) == 0,
        "no envelope, no frames: zeroes and an empty list");
    frame_decref (&w);

    errno = 0;
    ok (body_pack (NULL, parts, PACKED_MAX_FRAMES + 1) == NULL
        && errno == E2BIG, "more than %d frames: E2BIG", PACKED_MAX_FRAMES);
    errno = 0;
    ok (body_pack (NULL, parts, -1) == NULL && errno == E2BIG,
        "a negative count: E2BIG");
}

/* A wire frame of len bytes: zeroed envelope, then 'tail'. */
static struct frame *raw (const void *tail, size_t len)
{
    struct frame *w = frame_create (NULL, ENV_SIZE + len);
    memset (frame_data (w), 0, ENV_SIZE);
    memcpy (frame_data (w) + ENV_SIZE, tail, len);
    return w;
}

static void test_malformed (void)
{
    static const uint8_t one_frame[] = { 0, 0, 0, 1, 0, 0, 0, 2, 'h', 'i' };
    static const uint8_t cut[] = { 0, 0, 0, 1, 0, 0, 0, 9, 'h', 'i' };
    static const uint8_t trailing[] = { 0, 0, 0, 0, 'x' };
    static const uint8_t many[] = { 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0,
                                    0, 0, 0, 0 };
    struct frame *out[2], *w;
    const char *why = NULL;
    char err[128];

    w = frame_create ("short", 5);
    errno = 0;
    err[0] = '\0';
    ok (body_decode (w, err, sizeof (err)) == NULL && errno == EPROTO
        && strstr (err, "shorter than an envelope"),
        "5 bytes: EPROTO, %s", err);
    errno = 0;
    ok (body_unpack (w, out, 2, &why) < 0 && errno == EPROTO
        && strstr (why, "shorter than an envelope"),
        "and body_unpack refuses it too");
    frame_decref (&w);

    w = raw (cut, sizeof (cut));
    errno = 0;
    ok (body_decode (w, err, sizeof (err)) == NULL && errno == EPROTO
        && err[0], "a frame longer than the bytes left: EPROTO, %s", err);
    why = NULL;
    ok (body_unpack (w, out, 2, &why) < 0 && errno == EPROTO && why,
        "body_unpack: EPROTO, %s", why ? why : "");
    frame_decref (&w);

    w = raw (trailing, sizeof (trailing));
    ok (body_unpack (w, out, 2, &why) < 0 && errno == EPROTO,
        "bytes after the last frame: EPROTO, %s", why);
    frame_decref (&w);

    w = raw (many, sizeof (many));
    ok (body_unpack (w, out, 2, &why) < 0 && errno == E2BIG,
        "3 frames where 2 are allowed: E2BIG, %s", why);
    frame_decref (&w);

    w = raw (one_frame, sizeof (one_frame));
    ok (body_unpack (w, out, 2, &why) == 1 && frame_size (out[0]) == 2,
        "one frame \"hi\" unpacks");
    frame_decref_all (out, 1);
    errno = 0;
    err[0] = '\0';
    ok (body_decode (w, err, sizeof (err)) == NULL && errno == EPROTO
        && err[0], "but is no broker message: EPROTO, %s", err);
    frame_decref (&w);
}

int main (void)
{
    test_message ();
    test_pack ();
    test_malformed ();
    return done_testing ();
}
