#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-3.0-or-later
"""protosweep.py: run the protocol simulator over sizes and topologies.

What `make sim` runs.  Two parts, each a list of `bgn-sim --protocol`
runs (every one under `nice -n 10`, one at a time):

  sweep   the `kill` scenario (min(1000, N/16) crashes at once) for each
          topology and size, with --status-all; plus, for the first
          topology, a run with no fault (`kill --count=0`) to size the
          status-all answer of a healthy instance;
  large   the large scenarios at one size on bgn, with --check; an entry
          NAME@T gives the scenario --duration T (e.g. hang@12, a hang
          longer than the peer timeout).

Each run's JSON report is kept in OUT/json/.  Written to OUT:
  sweep.csv, large.csv     one line per run
  results.md               the same as Markdown tables, with the exact
                           commands, the seed, and this machine's times
  *.png                    gnuplot plots (if gnuplot is installed):
                           control messages per failure, convergence time,
                           status-all bytes, wall time and memory, vs N

Usage: protosweep.py [--sim PATH] [--out DIR] [--sizes 1024,4096,16384]
                     [--topologies bgn,bgn:8,kary:16] [--seed S]
                     [--large-size N] [--large kill,rack,hang,hang@12,...]
                     [--no-large] [--no-sweep]
Only the Python 3 standard library is used.
"""
import argparse
import csv
import json
import os
import resource
import shutil
import subprocess
import sys
import time

SWEEP_FIELDS = [
    "topology", "size", "failures", "control_messages", "per_failure",
    "per_broker_per_failure", "fence_messages", "event_control_messages",
    "converged", "convergence_s", "wrongly_fenced_max", "reachable",
    "sampled", "exited_partitioned", "status_all_bytes",
    "status_all_problems", "healthy_status_all_bytes", "wall_s", "cpu_s",
    "kib_per_broker", "sim_events",
]

LARGE_FIELDS = [
    "scenario", "topology", "size", "failures", "control_messages",
    "per_broker_per_failure", "converged", "convergence_s",
    "wrongly_fenced_max", "wrongly_fenced_seconds", "reachable", "sampled",
    "rpc_sent", "rpc_answered", "rpc_failed_fast", "rpc_timed_out",
    "ran_after_failure", "events_delivered", "events_duplicates",
    "events_missing", "check", "wall_s", "cpu_s", "peak_rss_mib",
    "kib_per_broker", "sim_events",
]


def run(sim, args, out, name):
    """Run bgn-sim with args; return (report, cpu seconds, peak RSS KiB,
    exit status, command line)."""
    cmd = ["nice", "-n", "10", sim, "--protocol"] + args + ["--json", "--host"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if p.returncode not in (0, 2) or not p.stdout.strip():
        sys.stderr.write("protosweep: %s failed (%d): %s\n"
                         % (" ".join(cmd), p.returncode, p.stderr.strip()))
        return None, cpu, 0, p.returncode, cmd
    with open(os.path.join(out, "json", name + ".json"), "w") as f:
        f.write(p.stdout)
    o = json.loads(p.stdout)
    rss = o["host"]["kib_per_broker"] * o["size"]
    line = shown(cmd)
    sys.stderr.write("protosweep: %s: %.1f s wall, %.1f s cpu\n"
                     % (line, wall, cpu))
    return o, cpu, rss, p.returncode, cmd


def shown(cmd):
    """The command as the reader would type it (bgn-sim on PATH)."""
    return " ".join(["bgn-sim"] + cmd[4:])


def fence_messages(o):
    k = o["control_by_kind"]
    return sum(k[x]["messages"] for x in ("fence_report", "fence_batch",
                                          "fence_view"))


def sweep(a):
    rows = []
    for ti, topo in enumerate(a.topologies):
        for n in a.sizes:
            base = ["--topology", topo, "--size", str(n), "--seed",
                    str(a.seed), "--scenario", "kill"]
            o, cpu, _, _, cmd = run(a.sim, base + ["--status-all"], a.out,
                                    "kill-%s-%d" % (topo.replace(":", "_"), n))
            if not o:
                continue
            healthy = hcmd = ""
            if ti == 0:
                h, _, _, _, hc = run(a.sim, base + ["--count", "0",
                                                    "--status-all"],
                                     a.out, "healthy-%s-%d"
                                     % (topo.replace(":", "_"), n))
                hcmd = shown(hc)
                if h and "status_all" in h:
                    healthy = h["status_all"]["bytes"]
            sa = o.get("status_all", {})
            rows.append({
                "topology": topo, "size": n, "failures": o["failures"],
                "control_messages": o["control"]["messages"],
                "per_failure": round(o["control"]["per_failure"], 1),
                "per_broker_per_failure":
                    round(o["control"]["per_broker_per_failure"], 4),
                "fence_messages": fence_messages(o),
                "event_control_messages":
                    o["control_by_kind"]["event_control"]["messages"],
                "converged": o["convergence"]["converged"],
                "convergence_s": "" if o["convergence"]["seconds"] is None
                else round(o["convergence"]["seconds"], 3),
                "wrongly_fenced_max": o["convergence"]["wrongly_fenced_max"],
                "reachable": o["reachability"]["reachable"],
                "sampled": o["reachability"]["sampled"],
                "exited_partitioned": o["brokers"]["exited_partitioned"],
                "status_all_bytes": sa.get("bytes", ""),
                "status_all_problems": sa.get("problems", ""),
                "healthy_status_all_bytes": healthy,
                "wall_s": round(o["host"]["wall_seconds"], 1),
                "cpu_s": round(cpu, 1),
                "kib_per_broker": round(o["host"]["kib_per_broker"], 1),
                "sim_events": o["sim_events"],
                "command": shown(cmd),
                "healthy_command": hcmd,
            })
    return rows


def large(a):
    rows = []
    for entry in a.large:
        sc, _, dur = entry.partition("@")
        args = ["--topology", "bgn", "--size", str(a.large_size), "--seed",
                str(a.seed), "--scenario", sc, "--check"]
        if dur:
            args += ["--duration", dur]
        o, cpu, rss, rc, cmd = run(a.sim, args, a.out, "large-%s-%d"
                                   % (entry.replace("@", "-"), a.large_size))
        if not o:
            continue
        conv = o["convergence"]
        rows.append({
            "scenario": sc + (" %ss" % dur if dur else ""), "topology": "bgn",
            "size": a.large_size,
            "failures": o["failures"],
            "control_messages": o["control"]["messages"],
            "per_broker_per_failure":
                round(o["control"]["per_broker_per_failure"], 4),
            "converged": conv["converged"],
            "convergence_s": "" if conv["seconds"] is None
            else round(conv["seconds"], 3),
            "wrongly_fenced_max": conv["wrongly_fenced_max"],
            "wrongly_fenced_seconds": round(conv["wrongly_fenced_seconds"], 1),
            "reachable": o["reachability"]["reachable"],
            "sampled": o["reachability"]["sampled"],
            "rpc_sent": o["rpc"]["sent"],
            "rpc_answered": o["rpc"]["answered"],
            "rpc_failed_fast": o["rpc"]["failed_fast"],
            "rpc_timed_out": o["rpc"]["timed_out"],
            "ran_after_failure": o["rpc"]["ran_after_failure"],
            "events_delivered": o["events"]["delivered"],
            "events_duplicates": o["events"]["duplicates"],
            "events_missing": o["events"]["missing"],
            "check": "held" if rc == 0 else "BROKEN",
            "wall_s": round(o["host"]["wall_seconds"], 1),
            "cpu_s": round(cpu, 1),
            "peak_rss_mib": round(rss / 1024),
            "kib_per_broker": round(o["host"]["kib_per_broker"], 1),
            "sim_events": o["sim_events"],
            "command": shown(cmd),
        })
    return rows


def write_csv(path, fields, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow(r)


def md_table(fields, rows, names):
    head = "| " + " | ".join(names[f] for f in fields) + " |"
    sep = "|" + "|".join("---:" if f not in ("topology", "scenario", "check")
                         else "---" for f in fields) + "|"
    lines = [head, sep]
    for r in rows:
        lines.append("| " + " | ".join(str(r.get(f, "")) for f in fields)
                     + " |")
    return "\n".join(lines)


def write_md(a, srows, lrows):
    names = {
        "topology": "topology", "scenario": "scenario", "size": "N",
        "failures": "failures", "control_messages": "control msgs",
        "per_failure": "per failure",
        "per_broker_per_failure": "per broker per failure",
        "fence_messages": "fence msgs",
        "event_control_messages": "event ctl msgs",
        "convergence_s": "converged after (s)",
        "wrongly_fenced_max": "survivors fenced (max)",
        "wrongly_fenced_seconds": "rank-s fenced wrongly",
        "reachable": "reachable", "sampled": "of pairs",
        "exited_partitioned": "exit 3",
        "status_all_bytes": "status-all B",
        "healthy_status_all_bytes": "status-all B, healthy",
        "rpc_failed_fast": "rpc failed fast",
        "rpc_timed_out": "rpc timed out",
        "ran_after_failure": "ran after failure",
        "events_missing": "events missing", "check": "--check",
        "wall_s": "wall s", "cpu_s": "cpu s", "peak_rss_mib": "RSS MiB",
        "kib_per_broker": "KiB/broker", "sim_events": "sim events",
    }
    out = []
    if srows:
        out.append("Control messages and convergence after `kill` "
                   "(min(1000, N/16) crashes at once), seed %d:\n" % a.seed)
        out.append(md_table(["topology", "size", "failures",
                             "control_messages", "per_failure",
                             "per_broker_per_failure", "fence_messages",
                             "event_control_messages", "convergence_s",
                             "wrongly_fenced_max", "reachable", "sampled",
                             "exited_partitioned"], srows, names))
        out.append("\nstatus-all at rank 0 (bytes of the answer) with the "
                   "crashed ranks down, and healthy; what the runs cost:\n")
        out.append(md_table(["topology", "size", "status_all_bytes",
                             "healthy_status_all_bytes", "wall_s", "cpu_s",
                             "kib_per_broker", "sim_events"], srows, names))
    if lrows:
        out.append("\nLarge scenarios on bgn, N=%d, seed %d, with "
                   "--check:\n" % (a.large_size, a.seed))
        out.append(md_table(["scenario", "failures", "control_messages",
                             "per_broker_per_failure", "convergence_s",
                             "wrongly_fenced_max", "wrongly_fenced_seconds",
                             "reachable", "sampled", "rpc_failed_fast",
                             "rpc_timed_out", "ran_after_failure",
                             "events_missing", "check"], lrows, names))
        out.append("")
        out.append(md_table(["scenario", "wall_s", "cpu_s", "peak_rss_mib",
                             "kib_per_broker", "sim_events"], lrows, names))
    out.append("\nCommands (each under `nice -n 10`):\n")
    out.append("```")
    for r in srows + lrows:
        out.append(r["command"])
        if r.get("healthy_command"):
            out.append(r["healthy_command"])
    out.append("```")
    with open(os.path.join(a.out, "results.md"), "w") as f:
        f.write("\n".join(out) + "\n")


def plot(a, srows):
    if not srows or not shutil.which("gnuplot"):
        sys.stderr.write("protosweep: no gnuplot (or no sweep): no plots\n")
        return
    csvp = os.path.join(a.out, "sweep.csv")
    col = {f: i + 1 for i, f in enumerate(SWEEP_FIELDS)}

    def lines(field):
        parts = []
        for t in a.topologies:
            parts.append(
                "\"< awk -F, '$1==\\\"%s\\\"' %s\" using %d:%d with "
                "linespoints title \"%s\"" % (t, csvp, col["size"],
                                              col[field], t))
        return ", ".join(parts)

    plots = [
        ("control-per-failure.png", "per_failure",
         "control messages per failure (kill)", True),
        ("control-per-broker.png", "per_broker_per_failure",
         "control messages per broker per failure (kill)", True),
        ("convergence.png", "convergence_s",
         "seconds until every survivor's view is right (kill)", False),
        ("status-all-bytes.png", "status_all_bytes",
         "status-all answer at rank 0, bytes (kill)", True),
        ("wall.png", "wall_s", "wall seconds per run (kill)", True),
        ("memory.png", "kib_per_broker", "KiB per simulated broker (kill)",
         False),
    ]
    script = ["set datafile separator \",\"", "set terminal png size 900,600",
              "set logscale x 2", "set key top left",
              "set xlabel \"brokers (N)\"", "set grid"]
    for png, field, label, logy in plots:
        script.append("set output \"%s\"" % os.path.join(a.out, png))
        script.append("set ylabel \"%s\"" % label)
        script.append("set logscale y" if logy else "unset logscale y")
        script.append("plot " + lines(field))
    p = subprocess.run(["gnuplot"], input="\n".join(script) + "\n",
                       universal_newlines=True, stderr=subprocess.PIPE)
    if p.returncode != 0:
        sys.stderr.write("protosweep: gnuplot: %s\n" % p.stderr.strip())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--sim", default=os.environ.get(
        "BGN_SIM", os.path.join(here, "bgn-sim")))
    ap.add_argument("--out", default="sim-results")
    ap.add_argument("--sizes", default="1024,4096,16384")
    ap.add_argument("--topologies", default="bgn,bgn:8,kary:16")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--large-size", type=int, default=16384)
    ap.add_argument("--large", default="kill,rack,hang,hang@12,boot,churn")
    ap.add_argument("--no-large", action="store_true")
    ap.add_argument("--no-sweep", action="store_true")
    a = ap.parse_args()
    try:
        a.sizes = [int(x) for x in a.sizes.split(",") if x]
    except ValueError:
        ap.error("--sizes: a comma-separated list of integers")
    a.topologies = [t for t in a.topologies.split(",") if t]
    a.large = [] if a.no_large else [s for s in a.large.split(",") if s]
    if not os.access(a.sim, os.X_OK):
        ap.error("no bgn-sim at %s (build it, or give --sim)" % a.sim)
    os.makedirs(os.path.join(a.out, "json"), exist_ok=True)
    srows = [] if a.no_sweep else sweep(a)
    lrows = large(a)
    write_csv(os.path.join(a.out, "sweep.csv"), SWEEP_FIELDS, srows)
    write_csv(os.path.join(a.out, "large.csv"), LARGE_FIELDS, lrows)
    write_md(a, srows, lrows)
    plot(a, srows)
    sys.stderr.write("protosweep: results in %s\n" % a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
