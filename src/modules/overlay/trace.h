/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* trace.h: overlay.trace, a streaming request that sees every message.
 *
 * Each message through this broker's overlay socket that matches a
 * trace's filter (message types, a topic glob) produces one response to
 * that trace's request, until its duration ends.  Trace responses are
 * never traced themselves (that would feed back), nor is overlay.trace.
 * At most 8 traces at once per broker.
 */
#ifndef BGN_OVERLAY_TRACE_H
#define BGN_OVERLAY_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "src/common/libmsg/message.h"
#include "envelope.h"
#include "frame.h"

struct overlay;
struct trace;

struct trace_state {            /* trace.c */
    struct trace *list[8];
    int n;
    bool emitting;              /* never trace the trace responses */
};

/* What trace_emit needs of a message, taken before the frames go. */
struct trace_info {
    bool valid;
    const char *type;
    char topic[MSG_MAX_TOPIC + 1];
    size_t size;
};

/* Is any trace running (and we are not emitting one)? */
bool trace_wanted (struct overlay *ov);
/* Look at wire frame w (borrowed; body.h) that env goes or came with. */
void trace_capture (struct overlay *ov, const struct envelope *env,
                    const struct frame *w, struct trace_info *ti);
/* dir: "rx" or "tx"; peer: the neighbour it came from or went to. */
void trace_emit (struct overlay *ov, const char *dir, uint32_t peer,
                 const struct envelope *env, const struct trace_info *ti);

/* overlay.trace request: start a trace (answers it). */
void trace_start (struct overlay *ov, const msg_t *req);
/* End traces whose duration is over (each gets ENODATA). */
void trace_expire (struct overlay *ov, double now);
void trace_fini (struct overlay *ov);

#endif
