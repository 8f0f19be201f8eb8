/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* partition.h: is rank 0 out of this broker's reach, and what then.
 *
 * The check runs two keepalive intervals after the fence view changed
 * (the coordinator says when: partition_check_later), on the router's
 * live graph.
 *
 * Policy: a broker (not rank 0) that cannot reach rank 0 exits 3 -- but
 * never before the overlay first formed around it, not within two peer
 * timeouts of a stall of its own, and not when every peer of its own
 * said goodbye (they were stopped on purpose: it waits).  Rank 0 keeps
 * running and reports "partitioned" with the number of live ranks it
 * cannot reach.  Neither once the host has said the instance is ending
 * (overlay_ending): its brokers then leave on purpose and the reports of
 * who left are lost with them, so ranks out of reach are counted, not
 * called lost.
 */
#ifndef BGN_OVERLAY_PARTITION_H
#define BGN_OVERLAY_PARTITION_H

#include <stdbool.h>
#include <stdint.h>

struct overlay;
struct ovtimer;

struct partition_state {        /* partition.c */
    struct ovtimer *timer;      /* the deferred check */
    bool partitioned;           /* rank 0: live ranks unreachable */
    uint32_t unreachable_live;
    bool ending;                /* the host is ending the instance: no
                                   verdicts (overlay_ending) */
    bool peers_left_logged;     /* said once: every peer left us */
    bool formed;                /* the overlay formed around us once
                                   (health.c tells: partition_formed) */
    double stalled_at;          /* when we found we had not run (live.c
                                   tells: partition_stalled) */
};

/* Create the check's timer.  -1 (ENOMEM) on failure. */
int partition_init (struct overlay *ov);
void partition_fini (struct overlay *ov);

/* The overlay formed around this broker (health.c): from now on, rank 0
 * unreachable from here is a partition. */
void partition_formed (struct overlay *ov);
/* This broker found it had not run for a while (live.c): no verdict
 * while it catches up. */
void partition_stalled (struct overlay *ov, double now);
/* The host is ending the instance (overlay_ending): no verdicts from
 * now on, ranks out of reach only counted. */
void partition_ending (struct overlay *ov);
/* The fence view changed: check two keepalive intervals from now. */
void partition_check_later (struct overlay *ov);
/* Rank 0: are live ranks unreachable from it? */
bool partition_found (struct overlay *ov);

#endif
