#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-3.0-or-later
"""simcheck.py: assert invariants on a `bgn-sim --protocol --json` report.

Usage: simcheck.py [--only] REPORT.json [EXPR...]

Without --only, the invariants every scenario must keep once it has
settled are checked first:
  - the survivors' views converged, and every survivor's down set is the
    truth (no survivor fenced, every dead rank fenced by every survivor);
  - every sampled survivor pair is reachable (and some were sampled);
  - no request ran after its client was told it failed;
  - events: no duplicate, none out of order, none missing at a survivor;
  - no broker exited "partitioned";
  - the deepest queue stays below the per-connection limit (1000
    messages) and no backlog reached its limit.
Each EXPR is then a Python expression over `o` (the report) that must be
true, e.g. "o['rpc']['failed_fast'] > 0".  Every check prints one line,
"ok: ..." or "FAIL: ..."; the exit status is 1 if any failed.
"""
import json
import sys

COMMON = [
    "o['convergence']['converged']",
    "o['views']['down_any'] == o['views']['down']",
    "o['views']['down_all'] == o['views']['down']",
    "o['reachability']['sampled'] > 0",
    "o['reachability']['reachable'] == o['reachability']['sampled']",
    "o['rpc']['ran_after_failure'] == 0",
    "o['events']['duplicates'] == 0",
    "o['events']['out_of_order'] == 0",
    "o['events']['missing'] == 0",
    "o['brokers']['exited_partitioned'] == 0",
    "o['network']['deepest_queue'] < 1000",
    "o['network']['deepest_backlog'] < 10000",
]


def main(argv):
    only = False
    if argv and argv[0] == "--only":
        only = True
        argv = argv[1:]
    if not argv:
        sys.stderr.write(__doc__)
        return 1
    with open(argv[0]) as f:
        o = json.load(f)
    exprs = ([] if only else COMMON) + argv[1:]
    failed = 0
    for e in exprs:
        try:
            ok = bool(eval(e, {}, {"o": o}))
            why = ""
        except Exception as x:  # a missing field is a failure, named
            ok = False
            why = " (%s: %s)" % (type(x).__name__, x)
        if ok:
            print("ok: %s" % e)
        else:
            print("FAIL: %s%s" % (e, why))
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
