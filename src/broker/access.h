/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* access.h: who a request comes from, and what it may do.
 *
 * The broker never believes the userid and rolemask a local client puts
 * in its messages.  It reads the peer's credentials that the kernel gave
 * the connection (SO_PEERCRED on the ipc socket; libzmq 4.3 exposes them
 * as the "Peer-Address" metadata of every message, "...:UID:GID:PID") and
 * stamps them on the message: the instance owner (the broker's own uid)
 * and root get MSG_ROLE_OWNER, any other user MSG_ROLE_USER (a guest).
 * Requests the broker or a module sends itself are the owner's.
 * A request from another broker carries the role its origin stamped,
 * but that is the origin's word: the receiving broker grants it at most
 * what its policy gives that origin (access_cap).  The owner role crosses
 * the overlay only from the ranks of broker.admin_ranks (rank 0 by
 * default) and, for the protocol's own broker-to-broker methods (the
 * core's listed in libmsg/rolecap.c, the broker's in access.c, each with
 * its own check of the caller), from any broker; everything else from
 * another broker is a guest's (doc/overlay-protocol.md, "Trust model").
 * The rule itself is libmsg/rolecap.h's, which every host applies.
 *
 * Every request is checked before its service sees it: the owner may call
 * anything; a guest (or a request with no role) only the read-only
 * methods listed in access.c (status, ping, lookup and info).  A refusal
 * is an EPERM response and a warning in the log, rate-limited.
 */
#ifndef BGN_BROKER_ACCESS_H
#define BGN_BROKER_ACCESS_H

#include <stdbool.h>
#include <stdint.h>
#include <zmq.h>

#include "src/common/libmsg/message.h"

struct access;

/* Access rules for a broker run by 'owner' (uid).  NULL on ENOMEM. */
struct access *access_create (uint32_t owner);
void access_destroy (struct access **ap);

/* Stamp userid and rolemask on 'msg' from the credentials of the
 * connection 'frame' (any part of the message) arrived on.  -1 with
 * EPERM if the connection carries no credentials (the message must then
 * be dropped). */
int access_stamp (struct access *a, msg_t *msg, zmq_msg_t *frame);

/* Stamp a request the broker itself (or a module) sends: the owner's. */
void access_stamp_self (struct access *a, msg_t *msg);

/* broker.admin_ranks: the ranks (an idset string) whose requests keep
 * the owner role here.  Rank 0 until set.  -1 with EINVAL if 'ranks' is
 * not an idset. */
int access_set_admins (struct access *a, const char *ranks);

/* Cap the role of a request that arrived over the overlay from broker
 * 'origin': the owner role stays only if the route stack names origin as
 * the sender and either the topic is a broker-to-broker method
 * (access_peer_topic: each checks its caller itself) or origin is an
 * admin rank whose word is its own: 'signed' 1 (origin signed the
 * request end to end, checked by the overlay: bgn_msg_info), or, where
 * origin has no signing key ('signed' 0: a static bootstrap without
 * one), not 'unverified' (the origin is a neighbour with its link up,
 * yet another peer handed the request over).  'signed' -1 (origin has a
 * key and this request is not validly signed by it) keeps nothing but a
 * peer method.  Otherwise the role becomes a guest's.  Returns true if
 * the owner role was taken away. */
bool access_cap (const struct access *a, msg_t *req, uint32_t origin,
                 bool unverified, int signed_by_origin);

/* Is 'topic' a method brokers call on each other's cores? */
bool access_peer_topic (const char *topic);

/* Does a request on 'topic' with the owner role need its origin's
 * signature where it arrives (so that the origin must seal it)?  Not a
 * guest's topic (any role may call it), nor a peer method that does not
 * look at it (overlay.ready and overlay.moved do). */
bool access_signed_topic (const char *topic);

/* May this request reach its service?  NULL if so, else why not (for
 * an EPERM response). */
const char *access_check (const struct access *a, const msg_t *req);

/* The userid and role, in words, for a log line ("uid 1000 (guest)"). */
const char *access_describe (const msg_t *msg, char *buf, size_t len);

/* Is 'topic' one a guest may call?  (Exposed for the unit test.) */
bool access_guest_topic (const char *topic);

/* Parse libzmq's "Peer-Address" of an ipc connection: 0, or -1 with
 * EINVAL if it carries no credentials. */
int access_parse_peer (const char *peer, uint32_t *uid, uint32_t *gid);

#endif
