/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* protosim.h: bgn-sim --protocol, the protocol simulator's command line.
 *
 * Runs a scenario (scenario.h) on simulated brokers (simnet.h) and reports
 * what the overlay did: control messages per failure, convergence,
 * survivors fenced wrongly, reachability, RPC and event outcomes, queue
 * depths, and what the run cost this machine.  See bgn-sim(1).
 */
#ifndef BGN_SIM_PROTOSIM_H
#define BGN_SIM_PROTOSIM_H

/* argv as bgn-sim got it (with --protocol somewhere in it).  Returns the
 * exit status: 0, 1 for usage errors, 2 if the run broke an invariant
 * asked for with --check. */
int protosim_main (int argc, char *argv[]);

#endif
