/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* envelope.h: the overlay's per-hop envelope.
 *
 * Between two peers every overlay message is one frame (body.h):
 *     [envelope][packed frame list: the broker message's frames, or a
 *                control body]
 * (the ROUTER socket adds/strips the peer identity).  The envelope is
 * written by each sending broker at the front of that frame and read by
 * the receiving one, so the broker message format (libmsg) never
 * changes.  32 bytes, network order:
 *
 *   0  u8   magic 0xb6          8  u32 source rank (injected it)
 *   1  u8   version 3          12  u32 destination rank, or NODEID_ANY /
 *   2  u8   kind (ENV_*)               NODEID_UPSTREAM
 *   3  u8   ttl (hops left)    16  u64 sender incarnation
 *   4  u8   hops (so far)      24  u64 receiver incarnation as the sender
 *   5  u8   flags                      knows it (0 only in HELLO)
 *   6  u16  DATA: the destination's stamp (below); other kinds: 0
 *
 * Bytes 0-15 keep this layout in every version, so a broker can name a
 * peer of another version (the rank a HELLO claims) and refuse it
 * clearly.  Version 3: one frame per message (version 2 sent the
 * envelope and each body frame as separate ZeroMQ frames).
 *
 * Pure functions, no state.
 */
#ifndef BGN_OVERLAY_ENVELOPE_H
#define BGN_OVERLAY_ENVELOPE_H

#include <stddef.h>
#include <stdint.h>

#define ENV_MAGIC   0xb6
#define ENV_VERSION 3
#define ENV_SIZE    32

enum {
    ENV_DATA = 1,        /* a broker message follows */
    ENV_HELLO = 2,       /* connector -> binder: JSON hello */
    ENV_HELLO_ACK = 3,   /* binder -> connector: JSON hello */
    ENV_HELLO_NAK = 4,   /* refusal: JSON {"reason": "..."} */
    ENV_KEEPALIVE = 5,   /* liveness only */
    ENV_GOODBYE = 6,     /* orderly leave */
    ENV_REPORT = 7,      /* fence records, up the tree to the fence root */
    ENV_BATCH = 8,       /* fence records, down the root's tree */
    ENV_EVENT = 9,       /* an event for the event layer; flags 1: repair */
    ENV_EVCTL = 10,      /* event layer control: JSON {"k": kind, ...} */
    ENV_LINK = 11,       /* flooded: {"op": "add"|"del", "a": A, "b": B} */
    ENV_VIEW = 12,       /* fence records, one peer's whole view (repair) */
    ENV_KIND_MAX = 12,
};

/* Flag bits (per kind; these for ENV_DATA, ENV_EVENT and ENV_EVCTL):
 * 0x01 on ENV_EVENT: a repair.  ENV_FLAG_LIVE: the arithmetic found no
 * live shortest hop on the way, so from there on the message follows
 * live shortest paths (bgn_router_next_hop), which cannot loop. */
#define ENV_FLAG_LIVE 0x80
/* ENV_FLAG_DETOUR (same kinds): the message left a broker once through a
 * neighbour no closer to its destination, because every shortest hop
 * there was still connecting.  It takes no second such detour: it waits
 * for a connecting link instead, so detours cannot chain into a loop
 * while links form (at start-up every link is connecting). */
#define ENV_FLAG_DETOUR 0x20
/* ENV_DATA: a request its origin held until it learned that the
 * destination rejoined (overlay.rejoin_wait): a relay that has not heard
 * of the rejoin yet holds it for the news too, instead of failing it.
 * Brokers that do not know the flag ignore it. */
#define ENV_FLAG_WAITED 0x40
/* On ENV_DATA: the frame ends with the origin's signature block of
 * ENV_SIG_BLOCK bytes (ovsign.h); relays keep the flag. */
#define ENV_FLAG_SIGNED 0x10
#define ENV_SIG_BLOCK (8 + 8 + 64)

/* The stamp (ENV_DATA): which incarnation of the destination rank the
 * origin meant, as a 16-bit tag of it (envelope_inc_stamp), or 0 if the
 * origin knew none.  Relays carry it as it is.  A broker that rejoined
 * after a fence runs a request only if it bears its present
 * incarnation's stamp: one meant for the fenced incarnation is failed by
 * its origin when the fence reaches it ("the request may have run"), so
 * it must not run later at the new one.  Two incarnations share a stamp
 * once in 65,535. */
struct envelope {
    uint8_t kind;
    uint8_t ttl;
    uint8_t hops;
    uint8_t flags;
    uint16_t stamp;
    uint32_t source;
    uint32_t dest;
    uint64_t sender_inc;
    uint64_t receiver_inc;
};

/* The stamp of incarnation inc: 1..65535, never 0. */
uint16_t envelope_inc_stamp (uint64_t inc);

/* The head of an envelope: bytes 0-15, laid out alike in every version
 * (so its version is a field here, not a check). */
struct envelope_head {
    uint8_t version;
    uint8_t kind;
    uint8_t ttl;
    uint8_t hops;
    uint8_t flags;
    uint32_t source;
    uint32_t dest;
};

/* Write the 32-byte form of env into buf. */
void envelope_encode (const struct envelope *env, uint8_t buf[ENV_SIZE]);

/* Parse the envelope at the front of len bytes at data (what follows
 * is not looked at).  Returns 0, or -1 with errno EPROTO and a reason in
 * *why (a static string) for fewer than ENV_SIZE bytes, a wrong magic,
 * version, kind, or bytes 6-7 not zero in a kind other than ENV_DATA.
 */
int envelope_decode (const void *data, size_t len, struct envelope *env,
                     const char **why);

/* Read only the head of the envelope at the front of len bytes at data,
 * for the transport: it names the sender of a frame of any version (the
 * rank a HELLO claims, so the core can refuse a peer of another version
 * by name) and sorts the frames it sends by kind.  Neither the version
 * nor the kind is checked: envelope_decode does that.  Returns 0, or -1
 * with errno EPROTO and a reason in *why (a static string) for fewer
 * than ENV_SIZE bytes or a wrong magic.
 */
int envelope_decode_head (const void *data, size_t len,
                          struct envelope_head *head, const char **why);

const char *envelope_kindstr (int kind);

#endif
