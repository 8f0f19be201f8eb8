/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* fault_ctl.h: the control FIFO through which 'bgn fault' asks 'bgn start'
 * to kill, stop, continue or restart its brokers.
 *
 * bgn start is the brokers' parent, so it alone can reap them and know
 * that an exit was intended; 'bgn fault' therefore writes one request per
 * line ("kill 3", "stop 3", "cont 3", "restart 3") into
 * $BGN_RUNDIR/control and watches $BGN_RUNDIR/brokers for the effect.
 * This file owns the FIFO and carries requests out through instance.h.
 * A malformed request is logged and ignored.
 */
#ifndef BGN_CMD_FAULT_CTL_H
#define BGN_CMD_FAULT_CTL_H

#include "instance.h"

struct fault_ctl;

/* Make $in->dir/control (mode 0600) and register it with the instance,
 * so requests are read while the instance runs.  NULL on error. */
struct fault_ctl *fault_ctl_create (struct instance *in);
void fault_ctl_destroy (struct fault_ctl **fcp);

/* Carry out one request line; exposed for the control FIFO reader and
 * for tests.  Unknown or malformed lines are logged and ignored. */
void fault_ctl_request (struct instance *in, const char *line);

#endif
