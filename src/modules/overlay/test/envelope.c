/* Unit tests for the overlay envelope codec. */
#include <errno.h>
#include <string.h>
#include "src/common/libtap/tap.h"
#include "src/modules/overlay/envelope.h"

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
    bad[7] = 1;
    ok (envelope_decode (bad, ENV_SIZE, &out, &why) < 0
        && strstr (why, "reserved"), "non-zero reserved bytes rejected");
    is (envelope_kindstr (ENV_HELLO), "hello", "kind names");
    is (envelope_kindstr (99), "unknown", "unknown kind name");
    return done_testing ();
}
