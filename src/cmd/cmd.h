/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* cmd.h: what bgn's built-in sub-commands share (cmdutil.c).
 *
 * Each built-in is a function int cmd_NAME (int argc, char **argv) whose
 * argv[0] is the sub-command name; it returns the exit status.  Commands
 * open their broker connection with cmd_open(), which honours the global
 * --uri / --rank options (passed down through BGN_URI) and falls back to
 * the system instance.
 *
 * One error form everywhere: "bgn CMD: message" on stderr, exit 1; a
 * usage mistake adds "; see 'bgn CMD --help'".
 */
#ifndef BGN_CMD_H
#define BGN_CMD_H

#include "src/common/libclient/client.h"
#include "src/common/libutil/idset.h"
#include "src/common/libutil/hostmap.h"
#include <jansson.h>

/* The system instance's local socket (the systemd unit's run directory,
 * see bgn-system(7)); the environment variable BGN_SYSTEM_URI overrides
 * it (tests, other layouts). */
#define CMD_SYSTEM_URI "ipc:///run/bgn/local"

int cmd_ping (int argc, char **argv);
int cmd_start (int argc, char **argv);
int cmd_rpc (int argc, char **argv);
int cmd_overlay_status (int argc, char **argv);
int cmd_fault (int argc, char **argv);
int cmd_event (int argc, char **argv);
int cmd_overlay_trace (int argc, char **argv);
int cmd_overlay_disconnect (int argc, char **argv);
int cmd_overlay (int argc, char **argv);
int cmd_dmesg (int argc, char **argv);

/* Connect to the broker named by $BGN_URI, or else the system instance;
 * prints which were tried and exits 1 on failure. */
bgn_t *cmd_open (const char *prog);

/* Print "bgn PROG: message" to stderr and exit 1. */
void cmd_die (const char *prog, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3), noreturn));

/* Print "bgn PROG: message; see 'bgn PROG --help'" and exit 1. */
void cmd_usage_die (const char *prog, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3), noreturn));

/* getopt_long returned '?' or ':' (optstrings start with ':', opterr is
 * 0): print one line naming the option, and "see 'bgn PROG --help'";
 * returns 1, the exit status. */
int cmd_bad_option (const char *prog, char **argv, int c);

/* A failed RPC: "bgn PROG: WHAT: strerror (error string)". */
void cmd_rpc_error (const char *prog, const char *what, bgn_rpc_t *rpc);

/* The broker behind h went away (a call on h failed with ECONNRESET):
 * print the one line "bgn PROG: broker at URI went away " and the rest
 * (e.g. "after 12 events") to stderr.  The caller exits non-zero. */
void cmd_broker_gone (const char *prog, bgn_t *h, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

/* A timeout option: a duration, 0 meaning none (INFINITY).  Exits 1 with
 * "bgn PROG: OPT: 'x' is not a duration" on a bad value. */
double cmd_timeout_arg (const char *prog, const char *opt, const char *arg);

/* The instance's rank -> host table (broker.hosts), fetched once through
 * h (or a connection of its own if h is NULL) and kept; NULL if it
 * cannot be had (the reason printed unless 'quiet'). */
hostmap_t *cmd_hostmap (bgn_t *h, const char *prog, int quiet);

/* Rank arguments (rankarg.h): one rank, or a non-empty set; host names
 * and hostlists are looked up in cmd_hostmap (h).  On a bad argument
 * print "bgn PROG: OPT: 'x' is not a rank" (OPT may be NULL for an
 * operand) and exit 1.  The caller destroys the set. */
uint32_t cmd_rank_arg (const char *prog, const char *opt, const char *arg,
                       bgn_t *h);
idset_t *cmd_ranks_arg (const char *prog, const char *opt, const char *arg,
                        bgn_t *h);

/* Round every real in o in place to a sensible unit: keys ending in
 * "_us" (microseconds) to 0.1, "time" (epoch seconds) to 1e-6, any other
 * real (seconds) to 1e-3, so no 17-digit noise reaches the user. */
void cmd_json_round (json_t *o);

/* Round (cmd_json_round) and print o on stdout, indented, keys sorted
 * (compact on one line if 'compact'). */
void cmd_print_json_ex (json_t *o, int compact);
#define cmd_print_json(o) cmd_print_json_ex ((o), 0)

/* The rank named by bgn's global --rank (the broker the command talks
 * to), as it was written, or NULL: commands whose own --rank defaults
 * to 0 default to it instead, so that 'bgn --rank 3 overlay-status'
 * shows rank 3 as rank 3 sees itself. */
#define CMD_RANK_ENV "BGN_CMD_RANK"
const char *cmd_default_rank (void);

/* The directory holding the bgn executable (for finding bgn-broker and
 * sub-commands in the build tree). */
const char *cmd_exe_dir (void);

/* Path of a sibling program: in the build tree, or installed. */
char *cmd_find_program (const char *name);

#endif
