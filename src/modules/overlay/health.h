/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* health.h: readiness reports to rank 0, and the one-word health.
 *
 * A broker whose peers are all up (or fenced) reports "ready" to rank 0
 * once, as a request rank 0 answers, re-sent every second until it is
 * answered (a report can be lost in a rank 0 restart or a reroute).
 * Rank 0 counts the ranks that reported: the overlay is "full" when all
 * have.  A rank that is fenced must report again when it is back; a
 * restarted rank 0 makes everyone report again.  Rank 0's answer names
 * its incarnation, so that news of the very rank 0 that answered (at
 * start-up every broker hears rank 0's first live record about when it
 * reports) costs no second report.
 *
 * Health: "full", "partial" (still forming), "degraded" (ranks fenced),
 * "partitioned" (rank 0: live ranks it cannot reach).
 */
#ifndef BGN_OVERLAY_HEALTH_H
#define BGN_OVERLAY_HEALTH_H

#include <stdbool.h>
#include <stdint.h>

#include "src/common/libmsg/message.h"

struct overlay;
struct bgn_msg_info;
struct bgn_rankset;

struct health_state {           /* health.c */
    struct bgn_rankset *ready;  /* rank 0: ranks that reported ready */
    uint64_t *ready_inc;        /* rank 0: the incarnation each report
                                   named (0: none) */
    bool reported;              /* this broker reported ready */
    bool acked;                 /* ... and rank 0 answered */
    uint64_t acked_inc;         /* the incarnation that answered (0: its
                                 * answer did not say) */
    bool formed;                /* ready once with links up */
    double sent_at;
    bool dirty;                 /* check readiness at the next settle */
    uint64_t refused;           /* rank 0: reports not the rank's own */
};

int health_init (struct overlay *ov);
void health_fini (struct overlay *ov);

/* Report ready if every peer is up or fenced (idempotent). */
void health_check_ready (struct overlay *ov);
/* We rejoined as a new incarnation: report again. */
void health_report_again (struct overlay *ov);
/* Rank 0's live record changed: report again unless the incarnation it
 * names answered our report already, or a report is still unanswered
 * (its answer is checked against rank 0's record when it comes). */
void health_root_news (struct overlay *ov);
/* Re-send an unanswered report (every second). */
void health_retry (struct overlay *ov, double now);

const char *health_word (struct overlay *ov);

/* Rank 0: rank was fenced as incarnation inc; it must report ready
 * again when back -- unless the report held came from a later life than
 * inc (a fence of its old life can reach rank 0 after the new life's
 * report, by the slower fence tree: forgetting it then would leave the
 * health "partial" for good, as the new life reports only once). */
void health_forget (struct overlay *ov, uint32_t rank, uint64_t inc);
/* Look at readiness again at the next settle (overlay.c); whether that
 * is asked, and its reset once settling looks. */
void health_check_later (struct overlay *ov);
bool health_dirty (struct overlay *ov);
void health_dirty_seen (struct overlay *ov);

/* overlay.ready: a report (rank 0 answers) or its answer. */
void health_ready_request (struct overlay *ov, const msg_t *req,
                           const struct bgn_msg_info *info);
void health_ready_response (struct overlay *ov, const msg_t *rsp);

#endif
