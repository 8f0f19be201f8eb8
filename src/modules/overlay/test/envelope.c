/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* Unit tests for the overlay envelope codec (the whole envelope and its
 * head alone) and the wire frame (body.h):
 * a broker message packed once with room for the envelope, decoded once;
 * control bodies packed and unpacked as slices that keep their frame. */
#include <errno.h>
#include <string.h>
#include "src/common/libtap/tap.h"
#include "src/modules/overlay/body.h"
#include "src/modules/overlay/envelope.h"

static void wire_frames (void)
{
    struct envelope env = { .kind = ENV_DATA, .ttl = 5, .source = 3,
                            .dest = 9, .sender_inc = 7, .receiver_inc = 8 };
    struct envelope got;
    struct frame *w, *bad, *parts[4], *slices[4];
    char err[128] = "";
    const char *why = NULL;
    msg_t *m = msg_create (MSGTYPE_REQUEST), *back;

    if (!m || msg_set_topic (m, "a.b") < 0
        || msg_set_payload (m, "{\"x\":1}", 7) < 0)
        bail_out ("msg_create");
    ok ((w = body_encode (m)) != NULL && frame_size (w) > ENV_SIZE + 4,
        "a message packs into one wire frame");
    envelope_encode (&env, frame_data (w));
    ok (envelope_decode (frame_data (w), frame_size (w), &got, &why) == 0
        && got.dest == 9 && got.ttl == 5,
        "the envelope is read from the front of the frame");
    back = body_decode (w, err, sizeof (err));
    ok (back && !strcmp (msg_get_topic (back), "a.b")
        && msg_get_type (back) == MSGTYPE_REQUEST,
        "the message decodes from the frame after its envelope");
    msg_destroy (&back);
    bad = frame_create (NULL, frame_size (w) + 1);
    memcpy (frame_data (bad), frame_data (w), frame_size (w));
    frame_data (bad)[frame_size (w)] = 0;
    errno = 0;
    ok (!body_decode (bad, err, sizeof (err)) && errno == EPROTO
        && strstr (err, "trailing"), "a byte after the message: EPROTO");
    frame_decref (&bad);
    bad = frame_create (frame_data (w), frame_size (w) - 1);
    errno = 0;
    ok (!body_decode (bad, err, sizeof (err)) && errno == EPROTO,
        "a frame one byte short: EPROTO");
    frame_decref (&bad);
    bad = frame_create (frame_data (w), ENV_SIZE - 1);
    ok (!body_decode (bad, err, sizeof (err)) && strstr (err, "envelope"),
        "shorter than an envelope: refused");
    frame_decref (&bad);
    frame_decref (&w);
    msg_destroy (&m);

    parts[0] = frame_create ("{\"a\":1}", 7);
    parts[1] = frame_create ("", 0);
    w = body_pack (NULL, parts, 2);
    ok (w && frame_size (w) == ENV_SIZE + 4 + 4 + 7 + 4,
        "a control body packs: envelope, count, length-prefixed frames");
    ok (body_unpack (w, slices, 4, &why) == 2
        && frame_size (slices[0]) == 7
        && !memcmp (frame_data (slices[0]), "{\"a\":1}", 7)
        && frame_size (slices[1]) == 0
        && frame_data (slices[0]) == frame_data (w) + ENV_SIZE + 8,
        "it unpacks into slices of the frame, not copies");
    ok (frame_refs (w) == 3, "each slice holds the frame");
    frame_decref (&w);
    ok (!memcmp (frame_data (slices[0]), "{\"a\":1}", 7),
        "a slice keeps the bytes after the frame's own reference went");
    frame_decref_all (slices, 2);
    w = body_pack (NULL, parts, 2);
    errno = 0;
    ok (body_unpack (w, slices, 1, &why) < 0 && errno == E2BIG,
        "more frames than the caller's room: E2BIG");
    frame_decref (&w);
    frame_decref_all (parts, 2);
}

/* DATA carries the destination's stamp in bytes 6-7; no other kind does. */
static void stamps (void)
{
    struct envelope in = { .kind = ENV_DATA, .stamp = 0xbeef, .source = 1,
                           .dest = 2 }, out;
    uint8_t buf[ENV_SIZE];
    const char *why = NULL;

    envelope_encode (&in, buf);
    ok (envelope_decode (buf, sizeof (buf), &out, &why) == 0
        && out.stamp == 0xbeef && buf[6] == 0xbe && buf[7] == 0xef,
        "a DATA envelope's stamp survives, in network order at byte 6");
    in.kind = ENV_KEEPALIVE;
    envelope_encode (&in, buf);
    ok (envelope_decode (buf, sizeof (buf), &out, &why) == 0
        && out.stamp == 0 && buf[6] == 0 && buf[7] == 0,
        "another kind is written with bytes 6-7 zero, whatever the struct says");
    ok (envelope_inc_stamp (0) != 0 && envelope_inc_stamp (65535) != 0
        && envelope_inc_stamp (65535ULL * 7) != 0,
        "no incarnation has stamp 0 (0: the origin knew none)");
    ok (envelope_inc_stamp (1700000000706313ULL)
            != envelope_inc_stamp (1700000000706314ULL),
        "an incarnation and the next one have different stamps");
}

/* The head alone (envelope_decode_head): what the transport reads of a
 * frame of any version. */
static void head (void)
{
    struct envelope in = { .kind = ENV_HELLO, .ttl = 1, .hops = 2,
                           .flags = ENV_FLAG_LIVE, .source = 70001,
                           .dest = 12, .sender_inc = 5 };
    struct envelope_head h;
    struct envelope full;
    uint8_t buf[ENV_SIZE];
    const char *why = NULL;

    envelope_encode (&in, buf);
    memset (&h, 0, sizeof (h));
    ok (envelope_decode_head (buf, sizeof (buf), &h, &why) == 0
        && h.version == ENV_VERSION && h.kind == ENV_HELLO && h.ttl == 1
        && h.hops == 2 && h.flags == ENV_FLAG_LIVE && h.source == 70001
        && h.dest == 12,
        "head: version, kind, ttl, hops, flags, source and destination");
    errno = 0;
    why = NULL;
    ok (envelope_decode_head (buf, ENV_SIZE - 1, &h, &why) < 0
        && errno == EPROTO && why && strstr (why, "size"),
        "head of a short frame: EPROTO, size");
    ok (envelope_decode_head (buf, 0, &h, NULL) < 0 && errno == EPROTO,
        "head of an empty frame: EPROTO (why may be NULL)");
    buf[0] = ENV_MAGIC ^ 1;
    errno = 0;
    ok (envelope_decode_head (buf, sizeof (buf), &h, &why) < 0
        && errno == EPROTO && strstr (why, "magic"),
        "head with a bad magic: EPROTO, magic");
    buf[0] = ENV_MAGIC;
    buf[1] = ENV_VERSION - 1;
    buf[6] = 1;     /* a field another version may use */
    memset (&h, 0, sizeof (h));
    ok (envelope_decode_head (buf, sizeof (buf), &h, &why) == 0
        && h.version == ENV_VERSION - 1 && h.kind == ENV_HELLO
        && h.source == 70001,
        "another version's head still names its sender and its version");
    ok (envelope_decode (buf, sizeof (buf), &full, &why) < 0
        && strstr (why, "version"),
        "... while the whole envelope of that version is refused");
    buf[1] = ENV_VERSION;
    buf[6] = 0;
    buf[2] = ENV_KIND_MAX + 1;
    ok (envelope_decode_head (buf, sizeof (buf), &h, &why) == 0
        && h.kind == ENV_KIND_MAX + 1,
        "the head does not judge the kind");
}

int main (void)
{
    struct envelope in = { .kind = ENV_DATA, .ttl = 9, .hops = 3, .flags = 1,
                           .source = 70000, .dest = 0xffffffffu,
                           .sender_inc = 0x0102030405060708ull,
                           .receiver_inc = 42 };
    struct envelope out;
    uint8_t buf[ENV_SIZE], bad[ENV_SIZE];
    const char *why = NULL;

    envelope_encode (&in, buf);
    ok (buf[0] == ENV_MAGIC && buf[1] == ENV_VERSION, "magic and version first");
    ok (envelope_decode (buf, sizeof (buf), &out, &why) == 0, "decodes");
    ok (out.kind == in.kind && out.ttl == 9 && out.hops == 3 && out.flags == 1,
        "kind, ttl, hops, flags survive");
    ok (out.source == 70000 && out.dest == 0xffffffffu, "ranks survive");
    ok (out.sender_inc == in.sender_inc && out.receiver_inc == 42,
        "incarnations survive");

    errno = 0;
    ok (envelope_decode (buf, ENV_SIZE - 1, &out, &why) < 0 && errno == EPROTO
        && why && strstr (why, "size"), "short envelope: EPROTO, size");
    memcpy (bad, buf, ENV_SIZE);
    bad[0] = 0;
    ok (envelope_decode (bad, ENV_SIZE, &out, &why) < 0 && strstr (why, "magic"),
        "bad magic rejected");
    memcpy (bad, buf, ENV_SIZE);
    bad[1] = ENV_VERSION - 1;
    ok (envelope_decode (bad, ENV_SIZE, &out, &why) < 0
        && strstr (why, "version"), "an older version is rejected");
    bad[1] = ENV_VERSION + 1;
    ok (envelope_decode (bad, ENV_SIZE, &out, &why) < 0
        && strstr (why, "version"), "a newer one too");
    memcpy (bad, buf, ENV_SIZE);
    bad[2] = 0;
    ok (envelope_decode (bad, ENV_SIZE, &out, &why) < 0 && strstr (why, "kind"),
        "kind 0 rejected");
    bad[2] = ENV_KIND_MAX + 1;
    ok (envelope_decode (bad, ENV_SIZE, &out, &why) < 0 && strstr (why, "kind"),
        "kind past the last rejected");
    memcpy (bad, buf, ENV_SIZE);
    bad[2] = ENV_KEEPALIVE;
    bad[7] = 1;
    ok (envelope_decode (bad, ENV_SIZE, &out, &why) < 0
        && strstr (why, "reserved"),
        "bytes 6-7 not zero in a kind other than DATA: rejected");
    stamps ();
    head ();
    is (envelope_kindstr (ENV_HELLO), "hello", "kind names");
    is (envelope_kindstr (99), "unknown", "unknown kind name");
    wire_frames ();
    return done_testing ();
}
