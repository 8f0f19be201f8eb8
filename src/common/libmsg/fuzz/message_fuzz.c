/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* message_fuzz.c: libFuzzer target for msg_decode().
 *
 * The input is a sequence of length-prefixed frames (see frame_split
 * below; fuzz/gen_seeds.c writes seeds in the same format).  Each frame
 * is copied into its own exact-size heap block so AddressSanitizer sees
 * any read past a frame's end, which reading in place would hide.
 *
 * For every message that decodes, the target checks the codec's
 * invariants and abort()s on a violation:
 *   - decoding is lossless: encoding it gives back the input frames;
 *   - the re-encoded frames decode again to an equal message;
 *   - msg_copy() is equal, and derived responses decode;
 *   - the payload validator (msg_json_check) accepts a frame exactly when
 *     jansson parses it as an object, for every frame of every input,
 *     so the scanner that replaced jansson at the trust boundary is
 *     fuzzed against jansson itself;
 *   - msg_get_json agrees with the validator on decoded payloads, and a
 *     payload reference keeps its bytes after the message is gone.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "message.h"

#define MAX_FRAMES 48       /* above MSG_MAX_ROUTES + 4, to test the limit */

/* Frame i: one length byte; 0xff means a 2-byte big-endian length
 * follows.  A final frame whose length runs past the end takes what is
 * left, so every input yields some frames.
 */
static size_t frame_split (const uint8_t *data, size_t size,
                           struct msg_frame *frames, size_t max)
{
    size_t n = 0;
    size_t pos = 0;
    while (pos < size && n < max) {
        size_t len = data[pos++];
        if (len == 0xff) {
            if (size - pos < 2)
                break;
            len = ((size_t)data[pos] << 8) | data[pos + 1];
            pos += 2;
        }
        if (len > size - pos)
            len = size - pos;
        void *copy = malloc (len ? len : 1);
        if (!copy)
            abort ();
        if (len > 0)
            memcpy (copy, data + pos, len);
        frames[n].data = copy;
        frames[n].size = len;
        n++;
        pos += len;
    }
    return n;
}

static void frames_free (struct msg_frame *frames, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free ((void *)frames[i].data);
}

static void check (int cond, const char *what)
{
    if (!cond) {
        fprintf (stderr, "message_fuzz: invariant failed: %s\n", what);
        abort ();
    }
}

static int streq (const char *a, const char *b)
{
    if (!a || !b)
        return a == b;
    return strcmp (a, b) == 0;
}

static int frames_equal (const struct msg_frame *a, size_t na,
                         const struct msg_frame *b, size_t nb)
{
    if (na != nb)
        return 0;
    for (size_t i = 0; i < na; i++) {
        if (a[i].size != b[i].size)
            return 0;
        if (a[i].size > 0 && memcmp (a[i].data, b[i].data, a[i].size) != 0)
            return 0;
    }
    return 1;
}

/* Compare two messages through the public API only, so a bug in the
 * library's own internals cannot hide itself.
 */
static void check_equal (const msg_t *a, const msg_t *b)
{
    check (msg_get_type (a) == msg_get_type (b), "type");
    check (msg_get_flags (a) == msg_get_flags (b), "flags");
    check (msg_get_userid (a) == msg_get_userid (b), "userid");
    check (msg_get_rolemask (a) == msg_get_rolemask (b), "rolemask");
    check (msg_get_matchtag (a) == msg_get_matchtag (b), "matchtag");
    check (streq (msg_get_topic (a), msg_get_topic (b)), "topic");

    size_t la, lb;
    const char *pa = msg_get_payload (a, &la);
    const char *pb = msg_get_payload (b, &lb);
    check ((pa == NULL) == (pb == NULL), "payload presence");
    check (la == lb, "payload length");
    check (!pa || memcmp (pa, pb, la) == 0, "payload bytes");
    check (!pa || pa[la] == '\0', "payload NUL-terminated");

    int n = msg_route_count (a);
    check (n == msg_route_count (b), "route count");
    check (n <= MSG_MAX_ROUTES, "route count limit");
    for (int i = 0; i < n; i++) {
        const char *ra = msg_route_at (a, i);
        check (ra && strlen (ra) >= 1 && strlen (ra) <= MSG_MAX_ROUTEID,
               "route id size");
        check (streq (ra, msg_route_at (b, i)), "route id");
    }
    check (msg_route_at (a, n) == NULL, "route past the end");
    if (n > 0) {
        check (streq (msg_route_first (a), msg_route_at (a, 0)), "first");
        check (streq (msg_route_last (a), msg_route_at (a, n - 1)), "last");
    }

    uint32_t ua, ub;
    int ia, ib, sa, sb;
    switch (msg_get_type (a)) {
        case MSGTYPE_REQUEST:
            check (msg_get_nodeid (a, &ua) == 0
                   && msg_get_nodeid (b, &ub) == 0 && ua == ub, "nodeid");
            break;
        case MSGTYPE_RESPONSE:
            check (msg_get_errnum (a, &ia) == 0
                   && msg_get_errnum (b, &ib) == 0 && ia == ib, "errnum");
            break;
        case MSGTYPE_EVENT:
            check (msg_get_seq (a, &ua) == 0
                   && msg_get_seq (b, &ub) == 0 && ua == ub, "seq");
            break;
        case MSGTYPE_CONTROL:
            check (msg_get_control (a, &ia, &sa) == 0
                   && msg_get_control (b, &ib, &sb) == 0
                   && ia == ib && sa == sb, "control");
            break;
        default:
            check (0, "decoded an unknown type");
    }
}

/* Encode 'm', decode the result, and check both agree with 'm'. */
static void check_reencode (msg_t *m)
{
    struct msg_frame f1[MAX_FRAMES + 4], f2[MAX_FRAMES + 4];
    char err[128];

    size_t n = msg_frame_count (m);
    check (n <= MAX_FRAMES + 4, "frame count bound");
    int n1 = msg_encode (m, f1, n);
    check (n1 >= 0 && (size_t)n1 == n, "encode count");
    msg_t *m2 = msg_decode (f1, (size_t)n1, err, sizeof (err));
    if (!m2) {
        fprintf (stderr, "message_fuzz: re-decode failed: %s\n", err);
        abort ();
    }
    check_equal (m, m2);
    int n2 = msg_encode (m2, f2, MAX_FRAMES + 4);
    check (frames_equal (f1, (size_t)n1, f2, (size_t)n2), "re-encode bytes");
    msg_destroy (&m2);
}

/* msg_json_check and jansson must agree on data[0..len).  Text with a
 * NUL byte is refused by msg_json_check (and by msg_decode before any
 * JSON is looked at), while jansson 2.14's lexer silently skips a NUL
 * that follows a token it read one byte past: no comparison there. */
static void check_json_verdict (const void *data, size_t len)
{
    char why[128];

    if (len > 0 && memchr (data, '\0', len)) {
        check (msg_json_check (data, len, NULL, 0) < 0, "NUL refused");
        return;
    }
    json_t *o = json_loadb (data, len, 0, NULL);
    int theirs = o && json_is_object (o);
    int mine = msg_json_check (data, len, why, sizeof (why)) == 0;

    json_decref (o);
    if (mine != theirs) {
        fprintf (stderr, "message_fuzz: msg_json_check %s, jansson %s\n",
                 mine ? "accepts" : why, theirs ? "accepts" : "rejects");
        abort ();
    }
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    struct msg_frame in[MAX_FRAMES];
    struct msg_frame out[MAX_FRAMES + 4];
    char err[128];

    size_t nin = frame_split (data, size, in, MAX_FRAMES);
    for (size_t i = 0; i < nin; i++)
        check_json_verdict (in[i].data, in[i].size);
    err[0] = 'x';
    msg_t *m = msg_decode (in, nin, err, sizeof (err));
    if (!m) {
        check (err[0] != '\0' && strchr (err, '\n') == NULL,
               "a failed decode gives a one-line reason");
        frames_free (in, nin);
        return 0;
    }

    /* Decoding is lossless: encoding reproduces the input exactly. */
    int nout = msg_encode (m, out, MAX_FRAMES + 4);
    check (nout > 0 && frames_equal (in, nin, out, (size_t)nout),
           "encode(decode(x)) == x");
    frames_free (in, nin);

    check_reencode (m);

    /* A valid request or success response payload is an object, and
     * msg_get_json says so; a referenced payload outlives its message. */
    size_t jl;
    const char *jp = msg_get_payload (m, &jl);
    int errresp = 0;
    if (msg_get_type (m) == MSGTYPE_RESPONSE)
        check (msg_get_errnum (m, &errresp) == 0, "errnum");
    if (jp && !errresp) {
        check (msg_json_check (jp, jl, NULL, 0) == 0, "payload checks");
        check (msg_get_json (m) != NULL && msg_get_json (m) == msg_get_json (m),
               "msg_get_json parses and caches a valid payload");
    }
    if (jp) {
        msg_t *tmp = msg_copy (m);
        check (tmp != NULL, "copy for a payload reference");
        void *ref = msg_payload_ref (tmp);
        const char *tp = msg_get_payload (tmp, NULL);
        check (ref != NULL, "payload reference");
        msg_destroy (&tmp);
        check (memcmp (tp, jp, jl) == 0 && tp[jl] == '\0',
               "referenced bytes outlive their message");
        msg_payload_unref (NULL, ref);
    }

    /* Decoding into a spare (a copy of this message, so big enough)
     * gives an equal message. */
    {
        struct msg_frame f[MAX_FRAMES + 4];
        msg_t *spare = msg_copy (m);
        int nf = msg_encode (m, f, MAX_FRAMES + 4);
        check (spare != NULL && nf > 0, "spare");
        msg_t *again = msg_decode_reuse (&spare, f, (size_t)nf, NULL, 0);
        check (again != NULL && spare == NULL, "decode_reuse");
        check_equal (m, again);
        msg_destroy (&again);
    }

    msg_t *cpy = msg_copy (m);
    check (cpy != NULL, "copy");
    check_equal (m, cpy);
    msg_destroy (&cpy);

    if (msg_get_type (m) == MSGTYPE_REQUEST) {
        msg_t *rsp = msg_response_create (m, "{}");
        check (rsp != NULL, "response_create");
        check (msg_route_count (rsp) == msg_route_count (m), "rsp routes");
        check (msg_get_matchtag (rsp) == msg_get_matchtag (m), "rsp tag");
        check_reencode (rsp);
        msg_destroy (&rsp);

        const char *topic = msg_get_topic (m);
        rsp = msg_error_response_create (m, 2, topic ? topic : "error");
        check (rsp != NULL, "error_response_create");
        check_reencode (rsp);
        msg_destroy (&rsp);
    }

    /* Mutators, fed with decoded (hence hostile-but-valid) strings: each
     * either works and keeps the message encodable, or fails cleanly.
     */
    check (msg_set_flags (m, msg_get_flags (m)) == 0, "set_flags(get_flags)");
    const char *topic = msg_get_topic (m);
    int nr0 = msg_route_count (m);
    if (topic && nr0 >= 0) {
        if (msg_route_push (m, topic) == 0) {
            char id[MSG_MAX_ROUTEID + 1];
            check (msg_route_count (m) == nr0 + 1, "push count");
            check (streq (msg_route_first (m), topic), "push top");
            check_reencode (m);
            check (msg_route_pop (m, id, sizeof (id)) == 0
                   && streq (id, topic), "pop what was pushed");
        }
        else
            check ((errno == EINVAL && strlen (topic) > MSG_MAX_ROUTEID)
                   || (errno == E2BIG && nr0 == MSG_MAX_ROUTES),
                   "push fails only for length or depth");
    }
    size_t plen;
    const char *payload = msg_get_payload (m, &plen);
    if (payload) {
        cpy = msg_copy (m);
        check (cpy != NULL, "copy for set_topic");
        /* a payload is NUL-free, so it is a valid C string of plen bytes */
        if (msg_set_topic (cpy, payload) == 0) {
            check (streq (msg_get_topic (cpy), payload), "set_topic");
            check_reencode (cpy);
        }
        else
            check (errno == EINVAL, "set_topic fails with EINVAL");
        check (msg_set_payload (cpy, payload, plen) == 0, "set_payload");
        msg_destroy (&cpy);
    }

    /* Popping every route leaves an empty, still-valid stack. */
    int nr = msg_route_count (m);
    for (int i = 0; i < nr; i++) {
        char id[MSG_MAX_ROUTEID + 1];
        check (msg_route_pop (m, id, sizeof (id)) == 0, "route pop");
    }
    check (nr < 0 || msg_route_count (m) == 0, "routes popped");
    check_reencode (m);

    msg_destroy (&m);
    return 0;
}

/* vi: ts=4 sw=4 expandtab
 */
