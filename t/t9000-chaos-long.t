#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-or-later
test_description='long chaos (make check-long): N=64 for 10 minutes under RPC and event load

Random kills and restarts every second, at most 8 brokers down at once,
for BGN_CHAOS_DURATION seconds (default 600).  Ranks 0, 9, 22, 37, 50 and
63 are never touched: clients on them ping each other and ranks that may
die, a publisher on rank 9 publishes in bursts, subscribers on 22, 50 and
63 record what they get.  At the end the overlay must be back to full
health, every RPC between never-killed ranks must have been answered, and
every subscriber must have every published event exactly once, in order,
with no "lost" notice.'

. "$(dirname "$0")/sharness.sh"

DURATION=${BGN_CHAOS_DURATION:-600}
SEED=${BGN_CHAOS_SEED:-$(date +%s)}
FAST="-o overlay.keepalive_interval=200ms -o overlay.peer_timeout=2s"
SPARE="0,9,22,37,50,63"

test_expect_success "chaos at N=64 for ${DURATION}s (seed $SEED)" '
	cat >pings.sh <<-EOT &&
	# one client per (source, destination), 5 requests a second each
	n=\$(( $DURATION * 5 ))
	for pair in 9:50 22:63 37:0 50:9 63:22 0:37 9:17 22:44 50:5 63:31; do
		s=\${pair%%:*} d=\${pair##*:}
		bgn --rank \$s ping --count=\$n --interval=200ms --timeout=5s \$d \
			>ping-\$s-\$d.out 2>ping-\$s-\$d.err &
	done
	wait
	EOT
	cat >events.sh <<-EOT &&
	# bursts of 20 events from rank 9 every second
	end=\$(( \$(date +%s) + $DURATION ))
	b=0
	while test \$(date +%s) -lt \$end; do
		bgn --rank 9 event pub -v --count=20 chaos.tick "{\"batch\":\$b}" \
			>>pub.out 2>>pub.err
		b=\$((b + 1))
		sleep 1
	done
	EOT
	cat >chaos.sh <<-EOT &&
	for r in 22 50 63; do
		bgn --rank \$r event sub --json --ready=sub\$r.ready chaos. \
			>sub\$r.out 2>sub\$r.err &
		echo \$! >>subs.pids
	done
	for r in 22 50 63; do
		i=0; until test -f sub\$r.ready; do
			i=\$((i+1)); test \$i -lt 200 || exit 1; sleep 0.05
		done
	done
	sh ./pings.sh & pings=\$!
	sh ./events.sh & events=\$!
	bgn fault chaos --duration=${DURATION}s --max-down=8 --seed=$SEED \
		--interval=1s --spare=$SPARE >chaos.out || exit 1
	wait \$pings \$events
	# let the last bursts arrive, then stop the subscribers
	sleep 5
	bgn overlay-status --wait=full --summary --timeout=60s >final.state
	bgn overlay-status --all >final.all
	kill \$(cat subs.pids)
	EOT
	bgn start --size=64 --keep-going --wait-timeout=120s $FAST \
		sh ./chaos.sh >start.out 2>start.err &&
	cat chaos.out | tail -n 3 &&
	grep "^full$" final.state
'

test_expect_success PYTHON3 'every RPC between never-killed ranks was answered' '
	"$PYTHON3" - <<-\EOF
	import glob, re, sys
	spare = {0, 9, 22, 37, 50, 63}
	bad = 0
	total = {"spare": [0, 0], "other": [0, 0]}
	for f in sorted(glob.glob("ping-*.out")):
	    s, d = map(int, re.match(r"ping-(\d+)-(\d+)\.out", f).groups())
	    m = re.search(r"^(\d+) sent, (\d+) received", open(f).read(), re.M)
	    if not m:
	        print("%s: no statistics" % f); bad = 1; continue
	    sent, got = int(m.group(1)), int(m.group(2))
	    k = "spare" if d in spare else "other"
	    total[k][0] += sent; total[k][1] += got
	    print("%d -> %d: %d sent, %d answered" % (s, d, sent, got))
	    if d in spare and got != sent:
	        bad = 1
	        sys.stdout.write(open(f.replace(".out", ".err")).read()[:2000])
	for k, (sent, got) in total.items():
	    print("%s destinations: %d sent, %d answered (%.3f%%)"
	          % (k, sent, got, 100.0 * got / max(sent, 1)))
	sys.exit(bad)
	EOF
'

test_expect_success PYTHON3 'every subscriber got every event once, in order, none lost' '
	"$PYTHON3" - <<-\EOF
	import json, re, sys
	published = [int(x) for x in re.findall(r"^seq=(\d+)", open("pub.out").read(), re.M)]
	print("published %d events" % len(published))
	bad = 0 if published else 1
	for r in (22, 50, 63):
	    got, lost = [], []
	    for line in open("sub%d.out" % r):
	        o = json.loads(line)
	        if "lost" in o:
	            lost.append(o["lost"])
	        elif o.get("topic") == "chaos.tick":
	            got.append(o["seq"])
	    dups = len(got) - len(set(got))
	    ordered = all(a < b for a, b in zip(got, got[1:]))
	    missing = sorted(set(published) - set(got))
	    print("rank %d: %d events, %d duplicates, in order %s, %d missing, "
	          "lost notices %s" % (r, len(got), dups, ordered, len(missing),
	                               lost[:5]))
	    if dups or not ordered or missing or lost:
	        bad = 1
	sys.exit(bad)
	EOF
'

test_done
