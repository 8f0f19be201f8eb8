/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* trace.c: overlay.trace (see trace.h). */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "body.h"
#include "overlay.h"
#include "ovlog.h"
#include "trace.h"

#define MAX_TRACES 8

struct trace {
    msg_t *req;               /* header copy, to respond to */
    unsigned types;           /* bit per MSGTYPE; 0x100: overlay control */
    char glob[128];
    double expires;
};

static void trace_destroy (struct trace **tp)
{
    if (tp && *tp) {
        msg_destroy (&(*tp)->req);
        free (*tp);
        *tp = NULL;
    }
}

bool trace_wanted (struct overlay *ov)
{
    return ov->trace.n > 0 && !ov->trace.emitting;
}

void trace_capture (struct overlay *ov, const struct envelope *env,
                    const struct frame *w, struct trace_info *ti)
{
    ti->size = frame_size (w);
    ti->topic[0] = '\0';
    if (env->kind == ENV_DATA || env->kind == ENV_EVENT) {
        /* an event batch is no broker message: not traced, as before */
        msg_t *msg = body_decode (w, NULL, 0);
        if (!msg)
            return;
        const char *topic = msg_get_topic (msg);
        const char *method = ovconf_method (&ov->cfg, topic);
        if (method && !strcmp (method, "trace")) {
            msg_destroy (&msg);
            return;   /* never trace the trace */
        }
        snprintf (ti->topic, sizeof (ti->topic), "%s", topic ? topic : "");
        ti->type = msg_typestr (msg_get_type (msg));
        msg_destroy (&msg);
    }
    else
        ti->type = envelope_kindstr (env->kind);
    ti->valid = true;
}

static unsigned type_bit (const char *type)
{
    if (!strcmp (type, "request")) return MSGTYPE_REQUEST;
    if (!strcmp (type, "response")) return MSGTYPE_RESPONSE;
    if (!strcmp (type, "event")) return MSGTYPE_EVENT;
    return 0x100;   /* control: everything the overlay says itself */
}

void trace_emit (struct overlay *ov, const char *dir, uint32_t peer,
                 const struct envelope *env, const struct trace_info *ti)
{
    unsigned bit = type_bit (ti->type);
    double when = ovl_now_fresh (ov) + ov->wall_offset;

    ov->trace.emitting = true;
    for (int i = 0; i < ov->trace.n; i++) {
        struct trace *t = ov->trace.list[i];
        if (!(t->types & bit))
            continue;
        if (t->glob[0] && fnmatch (t->glob, ti->topic, 0) != 0)
            continue;
        json_t *o = json_pack ("{s:f s:s s:i s:s s:s s:I s:i s:i s:i}",
                               "time", when, "dir", dir, "peer", (int)peer,
                               "type", ti->type, "topic", ti->topic,
                               "size", (json_int_t)ti->size,
                               "hops", (int)env->hops,
                               "source", (int)env->source,
                               "dest", (int)env->dest);
        char *s = o ? json_dumps (o, JSON_COMPACT) : NULL;
        if (s)
            ov->io->respond (ov->ctx, t->req, s);
        free (s);
        json_decref (o);
    }
    ov->trace.emitting = false;
}

static void respond_error (struct overlay *ov, const msg_t *req, int errnum,
                           const char *errstr)
{
    ov->io->respond_error (ov->ctx, req, errnum, errstr);
}

void trace_start (struct overlay *ov, const msg_t *req)
{
    json_t *o = json_loads (msg_get_payload (req, NULL) ?: "{}", 0, NULL);
    json_t *types = NULL;
    const char *glob = "";
    double duration = 60;
    struct trace *t;

    if (!o || json_unpack (o, "{s?o s?s s?F}", "types", &types, "topic", &glob,
                           "duration", &duration) < 0
        || !(msg_get_flags (req) & MSGFLAG_STREAMING)) {
        respond_error (ov, req, EPROTO, "trace is a streaming request "
                       "with optional types, topic, duration");
        goto done;
    }
    if (ov->trace.n >= MAX_TRACES) {
        respond_error (ov, req, EBUSY, "too many traces (8)");
        goto done;
    }
    if (!(t = calloc (1, sizeof (*t))) || !(t->req = msg_copy (req))) {
        free (t);
        respond_error (ov, req, ENOMEM, NULL);
        goto done;
    }
    msg_set_payload (t->req, NULL, 0);
    snprintf (t->glob, sizeof (t->glob), "%s", glob);
    if (duration <= 0 || duration > 3600)
        duration = 60;
    t->expires = ovl_now (ov) + duration;
    if (json_is_array (types) && json_array_size (types) > 0) {
        size_t i;
        json_t *v;
        json_array_foreach (types, i, v)
            if (json_is_string (v))
                t->types |= type_bit (json_string_value (v));
    }
    else
        t->types = ~0u;
    ov->io->respond (ov->ctx, req, "{\"tracing\":true}");
    ov->trace.list[ov->trace.n++] = t;
done:
    json_decref (o);
}

void trace_expire (struct overlay *ov, double now)
{
    for (int i = 0; i < ov->trace.n; i++) {
        struct trace *t = ov->trace.list[i];
        if (t->expires >= now)
            continue;
        /* out of the list first: the error response is not traced */
        memmove (&ov->trace.list[i], &ov->trace.list[i + 1],
                 (ov->trace.n - i - 1) * sizeof (ov->trace.list[0]));
        ov->trace.n--;
        i--;
        respond_error (ov, t->req, ENODATA, "trace ended");
        trace_destroy (&t);
    }
}

void trace_fini (struct overlay *ov)
{
    for (int i = 0; i < ov->trace.n; i++)
        trace_destroy (&ov->trace.list[i]);
    ov->trace.n = 0;
}
