/* cmd.h: what bgn's built-in sub-commands share.
 *
 * Each built-in is a function int cmd_NAME (int argc, char **argv) whose
 * argv[0] is the sub-command name; it returns the exit status.  Commands
 * open their broker connection with cmd_open(), which honours the global
 * --uri / --rank options (passed down through BGN_URI).
 */
#ifndef BGN_CMD_H
#define BGN_CMD_H

#include "src/common/libclient/client.h"
#include "src/common/libutil/idset.h"

int cmd_ping (int argc, char **argv);
int cmd_start (int argc, char **argv);
int cmd_rpc (int argc, char **argv);
int cmd_overlay_status (int argc, char **argv);
int cmd_fault (int argc, char **argv);
int cmd_event (int argc, char **argv);
int cmd_overlay_trace (int argc, char **argv);
int cmd_overlay_disconnect (int argc, char **argv);

/* Connect to the broker named by $BGN_URI; prints the reason and exits 1
 * on failure (commands own policy). */
bgn_t *cmd_open (const char *prog);

/* Print "bgn NAME: message" to stderr and exit 1. */
void cmd_die (const char *prog, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3), noreturn));

/* Rank arguments (rankarg.h): one rank, or a non-empty set.  On a bad
 * argument print "bgn PROG: OPT: 'x' is not a rank" (OPT may be NULL for
 * an operand) and exit 1.  The caller destroys the set. */
uint32_t cmd_rank_arg (const char *prog, const char *opt, const char *arg);
idset_t *cmd_ranks_arg (const char *prog, const char *opt, const char *arg);

/* The directory holding the bgn executable (for finding bgn-broker and
 * sub-commands in the build tree). */
const char *cmd_exe_dir (void);

/* Path of a sibling program: in the build tree, or installed. */
char *cmd_find_program (const char *name);

#endif
