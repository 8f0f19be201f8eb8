/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* message.h: Flux-style broker messages (after Flux RFC 3).
 *
 * On the wire a message is a ZeroMQ multipart message:
 *
 *   [route frame]... [empty delimiter]   only if flags & MSGFLAG_ROUTE
 *   [topic]                              only if flags & MSGFLAG_TOPIC
 *   [payload]                            only if flags & MSGFLAG_PAYLOAD
 *   [proto]                              always, 20 bytes, last
 *
 * The proto frame, all integers in network byte order:
 *
 *   offset 0   uint8  magic     0x8e
 *   offset 1   uint8  version   1
 *   offset 2   uint8  type      MSGTYPE_*
 *   offset 3   uint8  flags     MSGFLAG_*
 *   offset 4   uint32 userid
 *   offset 8   uint32 rolemask
 *   offset 12  uint32 aux1      request: nodeid, response: errnum, event: seq,
 *                               control: control type
 *   offset 16  uint32 aux2      request/response: matchtag, control: status
 *
 * Route frames are opaque identities: a local client's uuid, or a broker
 * rank in decimal.  The route stack is a stack: push adds a frame on the
 * outside (first on the wire), pop removes it.  The frame nearest the
 * delimiter is the bottom, i.e. the original sender.
 *
 * The payload of a successful message is JSON text (an object) and must
 * be NUL-free UTF-8.  A response with errnum != 0 may carry a payload that
 * is a human-readable error string instead.
 *
 * This library does no I/O.  msg_encode() produces frames and
 * msg_decode() validates and parses frames; a frame is a (data, size)
 * pair so the same code serves zmq_msg_t, zframe_t and the fuzzer.
 *
 * Ownership: a msg_t owns copies of everything put in it.  Getters return
 * pointers into the message, valid until it is modified or destroyed.
 * Errors: -1 (or NULL) with errno set as documented per function.
 *
 * Cost: a message is one small block holding its header, topic and
 * route stack (sized to what it holds, with room for a few pushes), plus
 * its payload, an immutable reference-counted buffer that msg_copy and
 * the response helpers' callers share instead of copying.  Payload
 * validation (msg_decode, the helpers, msg_json_check) scans the text
 * without building a JSON tree; msg_get_json parses it once, on demand.
 */
#ifndef BGN_MESSAGE_H
#define BGN_MESSAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#define MSG_PROTO_MAGIC     0x8e
#define MSG_PROTO_VERSION   1
#define MSG_PROTO_SIZE      20

enum {
    MSGTYPE_REQUEST  = 0x01,
    MSGTYPE_RESPONSE = 0x02,
    MSGTYPE_EVENT    = 0x04,
    MSGTYPE_CONTROL  = 0x08,
    MSGTYPE_ANY      = 0x0f,
};

enum {
    MSGFLAG_TOPIC      = 0x01,
    MSGFLAG_PAYLOAD    = 0x02,
    MSGFLAG_NORESPONSE = 0x04, /* request expects no response */
    MSGFLAG_ROUTE      = 0x08, /* route stack (and delimiter) present */
    MSGFLAG_UPSTREAM   = 0x10, /* request: nodeid is the sender; go upstream */
    MSGFLAG_PRIVATE    = 0x20, /* event: only for its publisher's userid */
    MSGFLAG_STREAMING  = 0x40, /* request/response: many responses */
    MSGFLAG_ALL        = 0x7f,
};

/* Roles (rolemask bits, as in Flux).  The broker stamps userid and
 * rolemask on every message a local client sends (from the kernel's
 * credentials of the connection, never from the message); a service
 * checks the rolemask.  OWNER: the instance owner (and root) may do
 * anything; USER: a guest, who may only read (status, ping, lookup).
 * A message with no role bit set may do nothing that needs one. */
#define MSG_ROLE_NONE    0u
#define MSG_ROLE_OWNER   0x1u
#define MSG_ROLE_USER    0x2u
#define MSG_USERID_UNKNOWN 0xffffffffu

#define NODEID_ANY      0xffffffffu  /* request: any broker with the service */
#define NODEID_UPSTREAM 0xfffffffeu  /* request: toward rank 0, not here */

#define MSG_MAX_ROUTES   32          /* deeper route stacks are malformed */
#define MSG_MAX_TOPIC    255         /* bytes, not counting NUL */
#define MSG_MAX_ROUTEID  64          /* bytes per route frame */
/* The most frames a valid message encodes to: its route frames, the
 * delimiter, topic, payload and proto. */
#define MSG_MAX_FRAMES   (MSG_MAX_ROUTES + 4)

typedef struct msg msg_t;

/* One frame of a multipart message: borrowed bytes. */
struct msg_frame {
    const void *data;
    size_t size;
};

/* Create an empty message of 'type' (MSGTYPE_REQUEST etc.), with the
 * route stack disabled, no topic, no payload, all integers zero except
 * nodeid = NODEID_ANY for requests.  EINVAL for a bad type, ENOMEM.
 */
msg_t *msg_create (int type);

/* Destroy *msg and set it to NULL.  NULL-safe. */
void msg_destroy (msg_t **msg);

/* Deep copy.  ENOMEM. */
msg_t *msg_copy (const msg_t *msg);

/* Heap the message holds, as the allocator counts it (usable sizes):
 * its block, a topic or route stack in blocks of their own, and its
 * payload buffer, whole even when copies share it.  A JSON parse made by
 * msg_get_json is not counted.  0 for NULL. */
size_t msg_footprint (const msg_t *msg);

/* Decode and validate a multipart message.  On failure returns NULL with
 * errno EPROTO (or ENOMEM) and, if errbuf is non-NULL, a one-line reason
 * ("proto frame is 7 bytes, expected 20", "topic is not NUL-free text",
 * "payload is not valid JSON", ...).  Checks: proto size, magic, version,
 * known type, known flags, frame count matching the flags, route depth and
 * route frame size limits, topic length and content (printable, no NUL),
 * payload JSON validity (except error responses: any NUL-free text), and
 * that a response with errnum == 0 or a request has a JSON object payload
 * if it has one at all.  Never reads outside the frames given.
 */
msg_t *msg_decode (const struct msg_frame *frames, size_t nframes,
                   char *errbuf, size_t errlen);

/* msg_decode, reusing the memory of *spare (a message the caller is done
 * with, or NULL) when it is big enough, so a program that receives
 * message after message need not allocate for each.  On success *spare
 * is consumed (set to NULL; the result may be the same block) and the
 * new message returned; on failure NULL as msg_decode says, and *spare
 * is left as it was (but for ENOMEM, after which it is gone).  A payload
 * another copy shares or a reference holds is never reused.
 */
msg_t *msg_decode_reuse (msg_t **spare, const struct msg_frame *frames,
                         size_t nframes, char *errbuf, size_t errlen);

/* Number of frames msg_encode() will produce. */
size_t msg_frame_count (const msg_t *msg);

/* Encode into frames[0..n-1] (n = msg_frame_count()).  The frames point
 * into 'msg' (and a proto buffer inside it): valid until the message is
 * modified or destroyed.  Returns n, or -1 with EINVAL if max is too small.
 */
int msg_encode (msg_t *msg, struct msg_frame *frames, size_t max);

/* Header fields. */
int msg_get_type (const msg_t *msg);
uint8_t msg_get_flags (const msg_t *msg);
int msg_set_flags (msg_t *msg, uint8_t flags);   /* EINVAL: unknown bits,
                                                    or TOPIC/PAYLOAD/ROUTE,
                                                    which follow content
                                                    (accepted only if they
                                                    agree with it, so
                                                    set_flags (get_flags|X)
                                                    works) */
uint32_t msg_get_userid (const msg_t *msg);
void msg_set_userid (msg_t *msg, uint32_t userid);
uint32_t msg_get_rolemask (const msg_t *msg);
void msg_set_rolemask (msg_t *msg, uint32_t rolemask);
uint32_t msg_get_matchtag (const msg_t *msg);     /* aux2, any type; for */
void msg_set_matchtag (msg_t *msg, uint32_t matchtag); /* control = status */

/* aux1 by its per-type name.  Each returns -1 with EPROTO if the message
 * is of the wrong type.
 */
int msg_get_nodeid (const msg_t *msg, uint32_t *nodeid);    /* request */
int msg_set_nodeid (msg_t *msg, uint32_t nodeid);
int msg_get_errnum (const msg_t *msg, int *errnum);         /* response */
int msg_set_errnum (msg_t *msg, int errnum);
int msg_get_seq (const msg_t *msg, uint32_t *seq);          /* event */
int msg_set_seq (msg_t *msg, uint32_t seq);
int msg_get_control (const msg_t *msg, int *ctype, int *status); /* control */
int msg_set_control (msg_t *msg, int ctype, int status);

/* Topic: NULL clears it.  EINVAL if empty, longer than MSG_MAX_TOPIC or
 * not printable text.  "Printable" here and for route ids means ASCII
 * 0x20..0x7e (so no NUL, controls, DEL or 8-bit bytes); msg_decode uses
 * the same rule.  msg_get_topic returns NULL if there is none.
 */
int msg_set_topic (msg_t *msg, const char *topic);
const char *msg_get_topic (const msg_t *msg);

/* Payload as a string (JSON text for normal messages).  NULL clears it.
 * EINVAL if it contains a NUL within len.  msg_get_payload returns NULL
 * if there is none; the text is always NUL-terminated.  Setting a
 * payload reuses the message's buffer when no copy shares it and it is
 * big enough, so a message reused for request after request does not
 * allocate.
 */
int msg_set_payload (msg_t *msg, const char *s, size_t len);
const char *msg_get_payload (const msg_t *msg, size_t *len);

/* Is the payload known to be one JSON object (msg_json_check's rule)?
 * True for a payload msg_decode accepted as JSON (not an error
 * response's text), or set by a helper that checks (msg_response_create
 * and the like) or by msg_set_json_trusted; false after msg_set_payload,
 * which checks nothing.  A service that must have an object skips its
 * own scan when this says so.
 */
bool msg_payload_checked (const msg_t *msg);

/* Set a payload the caller vouches for: s[0..len) is one JSON object it
 * built itself from parts already checked (a checked payload with keys
 * spliced in, say).  It is not scanned again, and msg_payload_checked
 * says true.  Never for text from outside the process: a receiver's
 * msg_decode checks it all the same, so a mistake here makes the peer
 * drop the message, not believe it.  EINVAL for s NULL or holding a NUL.
 */
int msg_set_json_trusted (msg_t *msg, const char *s, size_t len);

/* The payload parsed as a JSON object: parsed once, on first use, and
 * kept with the message (copies share it), so a service reads its
 * request without parsing it again.  Borrowed: valid until the payload
 * changes or the message is destroyed; do not modify it (json_copy() it
 * to add keys).  NULL with errno ENOENT (no payload), EPROTO (not a JSON
 * object: an error response's text, or text set with msg_set_payload
 * that is not JSON) or ENOMEM.  The first call writes to the message:
 * not for a message other threads are reading.
 */
json_t *msg_get_json (const msg_t *msg);

/* 0 if s[0..len) is one JSON object by the rule msg_decode applies to
 * payloads (what jansson 2.14's json_loadb accepts: RFC 8259, valid
 * UTF-8, no \u0000, integers within int64, reals within double, at most
 * 2048 levels deep), else -1 with EINVAL and, if errbuf is non-NULL, a
 * one-line reason.  Allocates nothing.
 */
int msg_json_check (const char *s, size_t len, char *errbuf, size_t errlen);

/* Zero-copy hand-off of the payload (to libzmq's zmq_msg_init_data, for
 * instance): a reference that keeps the payload's bytes, at the address
 * msg_get_payload returns, valid and unchanged after the message is
 * modified or destroyed.  NULL (errno ENOENT) if there is no payload.
 * Release it exactly once with msg_payload_unref (NULL, ref), from any
 * thread: the (data, hint) shape is libzmq's zmq_free_fn.
 */
void *msg_payload_ref (const msg_t *msg);
void msg_payload_unref (void *data, void *ref);

/* Route stack.  msg_route_enable() turns on MSGFLAG_ROUTE with an empty
 * stack (no-op if already enabled); msg_route_disable() clears it.
 * push/pop EPROTO if routing is not enabled; push EINVAL for an empty,
 * over-long or non-printable id, E2BIG past
 * MSG_MAX_ROUTES; pop ENOENT on an empty stack.  The popped id is copied
 * into id[idlen] (NUL-terminated; EOVERFLOW if it does not fit); id may
 * be NULL to discard.
 */
void msg_route_enable (msg_t *msg);
void msg_route_disable (msg_t *msg);
int msg_route_push (msg_t *msg, const char *id);
int msg_route_pop (msg_t *msg, char *id, size_t idlen);
int msg_route_count (const msg_t *msg);       /* -1 if routing disabled */
const char *msg_route_first (const msg_t *msg); /* top (last pushed) */
const char *msg_route_last (const msg_t *msg);  /* bottom: the sender */
const char *msg_route_at (const msg_t *msg, int i); /* 0 = top */
/* Is route id 'id' a broker rank (decimal, up to UINT32_MAX)?  Client ids
 * are uuids, which never are.  1 with *rank set, else 0. */
int msg_route_id_rank (const char *id, uint32_t *rank);

/* Helpers that build common messages.  Each returns a new message or
 * NULL with errno (EINVAL, ENOMEM).  JSON payloads given to the helpers
 * are checked to be a JSON object (EINVAL otherwise), so a locally built
 * message always passes msg_decode; topics are required (non-NULL).
 */

/* A request for 'topic' to 'nodeid' with JSON text 'payload' (may be NULL). */
msg_t *msg_request_create (const char *topic, uint32_t nodeid,
                           const char *payload);

/* A response to 'request': copies its route stack, topic, matchtag,
 * userid, rolemask and MSGFLAG_STREAMING; errnum 0 and JSON 'payload'
 * (may be NULL).  EINVAL if 'request' is not a request.
 */
msg_t *msg_response_create (const msg_t *request, const char *payload);

/* An error response to 'request': errnum (must be non-zero) and an
 * optional human-readable error string carried as the payload (NULL or
 * "" means no payload).
 */
msg_t *msg_error_response_create (const msg_t *request, int errnum,
                                  const char *errstr);

/* An event 'topic' with JSON 'payload' (may be NULL), seq 0. */
msg_t *msg_event_create (const char *topic, const char *payload);

/* A control message. */
msg_t *msg_control_create (int ctype, int status);

/* A short text for a message type ("request", "response", "event",
 * "control"), "unknown" otherwise.
 */
const char *msg_typestr (int type);

#endif /* BGN_MESSAGE_H */
