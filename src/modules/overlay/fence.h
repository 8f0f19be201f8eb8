/* fence.h: who is down, as this broker sees it.
 *
 * A broker that loses a peer fences it: marks (rank, incarnation) down
 * and floods the fence to its live peers, each of which applies it once
 * and floods it on, so every broker routes around the rank.  A rank that
 * comes back with a newer incarnation is unfenced the same way.  A fence
 * for an incarnation older than one already known live is stale and
 * ignored.  The router's down set is this fence view.
 *
 * What a fence or unfence does below this layer (routing, the tracker,
 * backlogs, rank 0's membership events, the partition check) happens
 * here; what it means above (rejoin, readiness, greeting a neighbour that
 * came back) is reported in the returned flags.
 *
 * Partition policy (doc/overlay-protocol.md): a broker that cannot reach
 * rank 0 in its view of the live graph, two keepalive intervals after a
 * change, logs a critical line and exits 3; rank 0 keeps running,
 * reports "partitioned" and counts the live-but-unreachable ranks.
 */
#ifndef BGN_OVERLAY_FENCE_H
#define BGN_OVERLAY_FENCE_H

#include <stdbool.h>
#include <stdint.h>

struct overlay;
struct peer;

struct fence_entry {
    uint64_t inc;            /* fenced incarnation, or last known live */
    double since;
    bool fenced;
    char reason[48];
};

enum {
    FENCE_NEWS = 1,          /* applied (and flooded on) */
    FENCE_SELF = 2,          /* it names this broker's own incarnation */
    FENCE_PEER_DOWN = 4,     /* a neighbour's state went to down */
};

enum {
    UNFENCE_NEWS = 1,
    UNFENCE_NEIGHBOUR = 2,   /* a neighbour we connect to is back */
    UNFENCE_ROOT = 4,        /* rank 0 has a new incarnation */
};

int fence_init (struct overlay *ov);
void fence_fini (struct overlay *ov);

bool fence_is_fenced (struct overlay *ov, uint32_t rank);
/* The entry for rank, or NULL if nothing is known of it. */
const struct fence_entry *fence_lookup (struct overlay *ov, uint32_t rank);

/* Apply a fence of (rank, inc) heard from rank 'from' (-1: found here).
 * Returns FENCE_* flags (0: old news). */
int fence_apply (struct overlay *ov, uint32_t rank, uint64_t inc,
                 const char *reason, int from);
/* Apply an unfence: rank is alive as incarnation inc.  News (flooded on)
 * when it lifts a fence, and for rank 0 whenever its incarnation is
 * newer (a restarted rank 0 must hear everyone's ready again). */
int unfence_apply (struct overlay *ov, uint32_t rank, uint64_t inc,
                   int from);

/* Flood a fence or unfence (ENV_FENCE/ENV_UNFENCE) to every live peer
 * but 'except' and the rank itself. */
void fence_flood (struct overlay *ov, int kind, uint32_t rank, uint64_t inc,
                  const char *reason, int except);
/* Tell p every fence we know (a (re)joining broker learns the view). */
void fence_send_view (struct overlay *ov, struct peer *p);
/* p talks with incarnation 'inc' that we fenced (it was hung, not dead):
 * tell it, at most once a second, so it rejoins. */
void fence_tell (struct overlay *ov, struct peer *p, uint64_t inc);

/* Check for a partition two keepalive intervals from now. */
void fence_schedule_partition_check (struct overlay *ov);

#endif
