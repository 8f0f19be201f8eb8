/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* rankarg.h: one parser for the rank arguments of every bgn command.
 *
 * Commands name brokers in options and operands (bgn --rank R, ping
 * TARGET, overlay-status -r R, fault kill R..., rpc -n R, ...).  They all
 * parse them here, so the syntax and the error messages are the same
 * everywhere:
 *
 *   one rank     "7"                   rankarg_one()
 *   a set        "3,5-7" (idset form)  rankarg_set()
 *
 * A rank is a decimal number from 0 to RANKARG_MAX, no sign, no spaces.
 * With a host map (the instance's rank -> host table, hostmap.h) a host
 * name ("node3") or a hostlist ("node[3-5],login0", whose items may also
 * be ranks) names the ranks running on those hosts, and a rank beyond the
 * instance's size is refused; without one (hm == NULL) only numbers are
 * accepted.  A host running several ranks is a set, not one rank.
 * Pure functions: the caller fetches the host map (it takes an RPC) only
 * when rankarg_numeric() says the argument needs it.
 *
 * Errors: -1 / NULL with errno EINVAL (or ENOMEM) and a one-line reason
 * in errbuf that quotes the argument, e.g. "'x' is not a rank".
 */
#ifndef BGN_CMD_RANKARG_H
#define BGN_CMD_RANKARG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "src/common/libutil/idset.h"

#define RANKARG_MAX IDSET_ID_MAX

struct hostmap;

/* True if arg is written with digits, ',', '-' and brackets only (an
 * idset): it needs no host map. */
bool rankarg_numeric (const char *arg);

/* Exactly one rank. */
int rankarg_one (const char *arg, const struct hostmap *hm, uint32_t *rank,
                 char *errbuf, size_t errlen);

/* A non-empty set of ranks; the caller destroys it. */
idset_t *rankarg_set (const char *arg, const struct hostmap *hm,
                      char *errbuf, size_t errlen);

#endif
