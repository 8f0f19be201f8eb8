/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* fakeio.h: one overlay core on a fake io, for the parts' unit tests.
 *
 * The core under test believes it has a socket, a clock and a broker;
 * everything it does is recorded here instead (what it sent to which
 * peer, what it delivered, answered, asked, logged), and the test plays
 * its peers by injecting envelopes.  Time only moves when the test says.
 * Links with the core library alone: no sockets anywhere.
 */
#ifndef BGN_OVERLAY_TEST_FAKEIO_H
#define BGN_OVERLAY_TEST_FAKEIO_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>

#include "src/modules/overlay/overlay.h"
#include "src/modules/overlay/fencemsg.h"

#define FAKE_MAX_RANKS 1024
#define FAKE_MAX_RECORDS 4096

struct sent {
    uint32_t to;
    struct envelope env;
    int n;
    char *body[8];          /* copies of the first frames, NUL-added */
    size_t len[8];
    msg_t *msg;             /* ENV_DATA / ENV_EVENT body decoded */
    uintptr_t wire;         /* which frame went (its address) */
    uint8_t *raw;           /* a copy of the whole wire frame */
    size_t rawlen;
};

struct answer {
    msg_t *req;             /* copy of what was answered */
    int errnum;             /* 0: a response */
    char *text;             /* payload or error string (may be NULL) */
};

struct fake {
    struct overlay *ov;
    struct ovl_config cfg;
    uint32_t rank, size;
    uint64_t incarnation;   /* the core's first incarnation */
    const char *version;     /* the software's, told in hellos (NULL: none) */
    double now;
    double wakeup;
    /* what a send to each rank does: 0 sends, else fails with this errno */
    int send_errno[FAKE_MAX_RANKS];
    struct sent sent[FAKE_MAX_RECORDS];
    int nsent;
    uintptr_t injected;     /* the last wire frame fake_inject made */
    msg_t *delivered[FAKE_MAX_RECORDS];
    struct bgn_msg_info delivered_info[FAKE_MAX_RECORDS];
    int ndelivered;
    msg_t *requests[FAKE_MAX_RECORDS];   /* the core's own requests */
    int nrequests;
    struct answer answers[FAKE_MAX_RECORDS];
    int nanswers;
    char *logs[FAKE_MAX_RECORDS];
    int log_levels[FAKE_MAX_RECORDS];   /* each line's LOG_ level */
    int nlogs;
    int connects, disconnects, authorized;
    uint32_t admitted[FAKE_MAX_RECORDS];   /* io->admitted's ranks, in order */
    int nadmitted;
    int stopped;            /* exit code + 1, 0 if not stopped */
    bool keys;              /* every rank has a signing key (fake_keypair):
                               set before fake_start */
    bool key_unanswered[FAKE_MAX_RANKS];   /* with keys: asking for this
                                              rank's fails (EAGAIN) */
    const char *peer_ep[FAKE_MAX_RANKS];   /* where the bootstrap says a
                                              rank listens (NULL: -1) */
    int peer_ep_asked;      /* io->peer_endpoint calls */
    /* Called by io->deliver before it records msg, from inside the core:
     * a test plays a broker that calls the core back (NULL: none). */
    void (*on_deliver) (struct fake *f, const msg_t *msg);
};

/* A core for rank of size on topology (NULL: "bgn"), started (its
 * connector peers "connected" and greeted).  Settings may be changed in
 * cfg before fake_start. */
struct fake *fake_create (uint32_t rank, uint32_t size, const char *topology);
int fake_start (struct fake *f);
void fake_destroy (struct fake **fp);

/* Move the clock on by 'seconds', running timers as they fall due. */
void fake_advance (struct fake *f, double seconds);

/* Deliver [env][frames...] from peer 'from' (its routing id is its rank).
 * env's incarnations are filled in for an admitted peer unless set. */
void fake_inject (struct fake *f, uint32_t from, struct envelope *env,
                  const char *const *frames, const size_t *lens, int n,
                  const char *user_id);
/* A whole wire frame (a copy of one a fake sent: struct sent raw) from
 * peer 'from', its incarnations set to what this core knows. */
void fake_inject_wire (struct fake *f, uint32_t from, const uint8_t *raw,
                       size_t len);
/* A JSON control message of kind from peer 'from'. */
void fake_control (struct fake *f, uint32_t from, int kind, const char *json);
/* A broker message (encoded) of kind ENV_DATA or ENV_EVENT. */
void fake_data (struct fake *f, uint32_t from, struct envelope *env,
                msg_t *msg);
/* A valid hello (kind ENV_HELLO or ENV_HELLO_ACK) from 'from' as
 * incarnation inc. */
void fake_hello (struct fake *f, uint32_t from, int kind, uint64_t inc);

/* Bring every peer of the core up: hellos from the peers that connect
 * to it, acks from those it connects to (incarnation 1000 + rank). */
void fake_all_up (struct fake *f);
/* fake_advance, with a keepalive from every peer that is up (or
 * suspect) at each keepalive interval: time passes, nobody dies. */
void fake_advance_alive (struct fake *f, double seconds);
/* The core's peer for rank (or NULL). */
struct peer *fake_peer (struct fake *f, uint32_t rank);
/* A peer of this broker that is not 'rank' nor a neighbour of it, or
 * UINT32_MAX if there is none. */
uint32_t fake_peer_not_near (struct fake *f, uint32_t rank);
/* The last answer the core gave (respond or respond_error), or NULL. */
struct answer *fake_last_answer (struct fake *f);

/* The signing key pair the fake gives rank r (with keys set). */
void fake_keypair (uint32_t r, unsigned char pk[32], unsigned char sk[64]);
/* Rank r's signature of its live record at inc (ovsign.h). */
void fake_livesig (struct fake *f, uint32_t r, uint64_t inc,
                   uint8_t sig[64]);

/* The CURVE key the fake gives rank r (with cfg.curve set). */
const char *fake_key (uint32_t r, char buf[41]);
/* A HELLO-kind message with this exact JSON body (checks of content). */
void fake_hello_json (struct fake *f, uint32_t from, int kind,
                      uint64_t sender_inc, const char *json,
                      const char *user_id);

/* Fence records from peer 'from' in a message of kind (ENV_REPORT,
 * ENV_BATCH with root, ENV_VIEW), addressed to the core. */
void fake_fence (struct fake *f, uint32_t from, int kind, uint32_t root,
                 const struct fence_record *recs, int n);
/* One record, the common case. */
void fake_fence1 (struct fake *f, uint32_t from, int kind, uint32_t rank,
                  uint64_t inc, bool fenced);
/* Does sent message s carry this record?  (root of a batch in *root.) */
bool fake_has_record (const struct sent *s, uint32_t rank, uint64_t inc,
                      bool fenced);
/* Does the live record of rank at inc in sent message s carry a
 * signature?  1 yes, 0 no, -1 no such record. */
int fake_record_signed (const struct sent *s, uint32_t rank, uint64_t inc);
/* How many records it carries (-1: not a fence message). */
int fake_records (const struct sent *s);

/* Count sent messages of kind to rank (UINT32_MAX: any rank). */
int fake_count (struct fake *f, int kind, uint32_t to);
/* The last message of kind sent to 'to' (UINT32_MAX: any), or NULL. */
struct sent *fake_last (struct fake *f, int kind, uint32_t to);
/* A log line containing s? */
bool fake_logged (struct fake *f, const char *s);
/* The level of the first log line containing s; -1 without one. */
int fake_logged_level (struct fake *f, const char *s);
/* Forget what was recorded. */
void fake_clear (struct fake *f);

#endif
