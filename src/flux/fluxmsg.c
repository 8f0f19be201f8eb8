/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* fluxmsg.c: converting messages between bgn and Flux (see fluxmsg.h). */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <zmq.h>
#include <jansson.h>

#include "fluxmsg.h"

/* The flag bits both sides define alike; the route flag is each side's. */
#define SHARED_FLAGS (MSGFLAG_NORESPONSE | MSGFLAG_UPSTREAM | MSGFLAG_PRIVATE \
                      | MSGFLAG_STREAMING)

static int type_known (int type)
{
    return type == MSGTYPE_REQUEST || type == MSGTYPE_RESPONSE
           || type == MSGTYPE_EVENT;
}

/* The aux field: nodeid, errnum or seq by type. */
static int aux_to_flux (const msg_t *msg, flux_msg_t *f, int type)
{
    uint32_t v = 0;
    int errnum = 0;

    switch (type) {
    case MSGTYPE_REQUEST:
        msg_get_nodeid (msg, &v);
        return flux_msg_set_nodeid (f, v);
    case MSGTYPE_RESPONSE:
        msg_get_errnum (msg, &errnum);
        return flux_msg_set_errnum (f, errnum);
    default:
        msg_get_seq (msg, &v);
        return flux_msg_set_seq (f, v);
    }
}

static int aux_to_bgn (const flux_msg_t *f, msg_t *msg, int type)
{
    uint32_t v = 0;
    int errnum = 0;

    switch (type) {
    case MSGTYPE_REQUEST:
        if (flux_msg_get_nodeid (f, &v) < 0)
            return -1;
        return msg_set_nodeid (msg, v);
    case MSGTYPE_RESPONSE:
        if (flux_msg_get_errnum (f, &errnum) < 0)
            return -1;
        return msg_set_errnum (msg, errnum);
    default:
        if (flux_msg_get_seq (f, &v) < 0)
            return -1;
        return msg_set_seq (msg, v);
    }
}

/* Flux's string payloads carry their NUL (flux_msg_get_string checks
 * for it); bgn's are counted text. */
static int set_text (flux_msg_t *f, const char *text, size_t len)
{
    char *buf = malloc (len + 1);
    int rc;

    if (!buf)
        return -1;
    memcpy (buf, text, len);
    buf[len] = '\0';
    rc = flux_msg_set_payload (f, buf, len + 1);
    free (buf);
    return rc;
}

void *fluxmsg_unwrap (const char *text, size_t len, size_t *size)
{
    json_t *o = json_loadb (text, len, 0, NULL);
    const char *z = NULL;
    json_int_t n = -1;
    size_t zlen;
    uint8_t *out = NULL;

    if (!o || json_unpack (o, "{s:s s:I}", FLUXMSG_WRAP_KEY, &z, "bgn.len",
                           &n) < 0)
        goto done;
    zlen = strlen (z);
    if (zlen % 5 != 0 || n < 0 || (size_t)n > zlen / 5 * 4
        || (size_t)n + 4 <= zlen / 5 * 4)
        goto done;
    if (!(out = malloc (zlen / 5 * 4 + 1)))
        goto done;
    if (zlen > 0 && !zmq_z85_decode (out, z)) {
        free (out);
        out = NULL;
        goto done;
    }
    *size = (size_t)n;
done:
    json_decref (o);
    return out;
}

int fluxmsg_set_payload (flux_msg_t *f, const char *text, size_t len)
{
    size_t size = 0;
    void *bytes;
    int rc;

    if (!text || len == 0)
        return 0;
    if (len > strlen (FLUXMSG_WRAP_KEY) + 3
        && !strncmp (text, "{\"" FLUXMSG_WRAP_KEY "\"",
                     strlen (FLUXMSG_WRAP_KEY) + 3)) {
        if (!(bytes = fluxmsg_unwrap (text, len, &size))) {
            errno = EPROTO;
            return -1;
        }
        rc = flux_msg_set_payload (f, size ? bytes : NULL, size);
        free (bytes);
        return rc;
    }
    return set_text (f, text, len);
}

flux_msg_t *fluxmsg_from_bgn (const msg_t *msg)
{
    int type = msg_get_type (msg);
    const char *topic = msg_get_topic (msg);
    const char *payload;
    size_t len = 0;
    flux_msg_t *f;

    if (!type_known (type)) {
        errno = EPROTO;
        return NULL;
    }
    if (!(f = flux_msg_create (type)))
        return NULL;
    payload = msg_get_payload (msg, &len);
    if ((topic && flux_msg_set_topic (f, topic) < 0)
        || fluxmsg_set_payload (f, payload, len) < 0
        || flux_msg_set_userid (f, msg_get_userid (msg)) < 0
        || flux_msg_set_rolemask (f, msg_get_rolemask (msg)) < 0
        || (type != MSGTYPE_EVENT
            && flux_msg_set_matchtag (f, msg_get_matchtag (msg)) < 0)
        || aux_to_flux (msg, f, type) < 0)
        goto error;
    uint8_t flags = msg_get_flags (msg) & SHARED_FLAGS;
    for (int bit = 1; bit <= MSGFLAG_STREAMING; bit <<= 1)
        if ((flags & bit) && flux_msg_set_flag (f, bit) < 0)
            goto error;
    return f;
error:
    flux_msg_destroy (f);
    return NULL;
}

/* Bytes bgn cannot carry as they are, as one JSON object of text:
 * {"bgn.z85": Z85 of the bytes zero-padded to a multiple of 4,
 *  "bgn.len": the bytes' count}.  Z85's alphabet has no quote or
 * backslash, so the text needs no escaping. */
int fluxmsg_wrap (msg_t *msg, const void *buf, size_t size)
{
    size_t padded = (size + 3) / 4 * 4;
    unsigned char *in = calloc (1, padded ? padded : 4);
    char *text = NULL;
    size_t zlen = padded / 4 * 5;
    int n, rc = -1;

    if (!in || !(text = malloc (zlen + 64)))
        goto done;
    memcpy (in, buf, size);
    n = snprintf (text, 64, "{\"" FLUXMSG_WRAP_KEY "\":\"");
    if (padded && !zmq_z85_encode (text + n, in, padded)) {
        errno = EPROTO;
        goto done;
    }
    n += (int)zlen;
    n += snprintf (text + n, 64, "\",\"bgn.len\":%zu}", size);
    rc = msg_set_payload (msg, text, (size_t)n);
done:
    free (in);
    free (text);
    return rc;
}

/* A payload bgn can carry: absent, or JSON text (one trailing NUL, as
 * flux_msg_set_string leaves it, is not part of the text); anything else
 * is wrapped (wrap) or refused. */
static int payload_to_bgn (const flux_msg_t *f, msg_t *msg, bool wrap)
{
    const void *buf = NULL;
    size_t size = 0, text = 0;
    char err[128];

    if (!flux_msg_has_payload (f))
        return 0;
    if (flux_msg_get_payload (f, &buf, &size) < 0)
        return -1;
    text = size;
    if (text > 0 && ((const char *)buf)[text - 1] == '\0')
        text--;
    if (text == 0 && !(wrap && size > 0))
        return 0;
    /* wrap: only a string payload (its NUL, which the far side puts
     * back) crosses as text; raw bytes that happen to be JSON (Flux's
     * content blobs) cross wrapped, so that they arrive byte for byte */
    if ((!wrap || text < size) && !memchr (buf, '\0', text)
        && msg_json_check (buf, text, err, sizeof (err)) == 0
        && strncmp (buf, "{\"" FLUXMSG_WRAP_KEY "\"",
                    strlen (FLUXMSG_WRAP_KEY) + 3) != 0)
        return msg_set_payload (msg, buf, text);
    if (!wrap) {
        errno = EPROTO;
        return -1;
    }
    return fluxmsg_wrap (msg, buf, size);
}

static msg_t *to_bgn (const flux_msg_t *f, bool wrap)
{
    int type = 0;
    const char *topic = NULL;
    struct flux_msg_cred cred;
    uint32_t matchtag = 0;
    msg_t *msg;

    if (flux_msg_get_type (f, &type) < 0)
        return NULL;
    if (!type_known (type)) {
        errno = EPROTO;
        return NULL;
    }
    if (!(msg = msg_create (type)))
        return NULL;
    if (flux_msg_get_topic (f, &topic) < 0 || msg_set_topic (msg, topic) < 0
        || flux_msg_get_cred (f, &cred) < 0
        || (type != MSGTYPE_EVENT && flux_msg_get_matchtag (f, &matchtag) < 0)
        || aux_to_bgn (f, msg, type) < 0 || payload_to_bgn (f, msg, wrap) < 0)
        goto error;
    msg_set_userid (msg, cred.userid);
    msg_set_rolemask (msg, cred.rolemask);
    msg_set_matchtag (msg, matchtag);
    uint8_t flags = msg_get_flags (msg);
    for (int bit = 1; bit <= MSGFLAG_STREAMING; bit <<= 1)
        if ((bit & SHARED_FLAGS) && flux_msg_has_flag (f, bit))
            flags |= bit;
    if (msg_set_flags (msg, flags) < 0)
        goto error;
    return msg;
error:
    if (errno != ENOMEM)
        errno = EPROTO;
    msg_destroy (&msg);
    return NULL;
}

msg_t *fluxmsg_to_bgn (const flux_msg_t *f)
{
    return to_bgn (f, false);
}

msg_t *fluxmsg_to_bgn_any (const flux_msg_t *f)
{
    return to_bgn (f, true);
}
