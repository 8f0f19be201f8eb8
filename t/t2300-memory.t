#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-or-later
test_description='memory: every broker stays within its configured bounds under load and churn

Eight brokers with small configured bounds (1 MiB for each event buffer,
rank 0 queue and the backlogs).  Rank 3 publishes events one by one
(every event its own batch, the costliest way to hold them), rank 5
subscribes, rank 3 pings rank 5, while brokers other than 0, 3 and 5 are
killed and restarted.  The resident set of each never-killed broker is
sampled every 2 seconds, with the stores its overlay-status counts: it
may grow by the sum of the bounds plus a fixed margin, no more, and the
stores must stay within their bounds.  No timing is asserted.'

. "$(dirname "$0")/sharness.sh"

FAST="-o overlay.keepalive_interval=200ms -o overlay.peer_timeout=2s"
BOUND=1048576
BOUNDS="-o overlay.event_buffer_bytes=$BOUND -o overlay.event_queue_bytes=$BOUND -o overlay.backlog_bytes=$BOUND"
EVENTS=${BGN_MEMORY_EVENTS:-8000}
# What a broker may grow by beyond its stores' bounds: allocator slack,
# libzmq's queues and buffers, the tracker and other per-peer state.
MARGIN_MB=8

# gen.py N PAUSE: N "mem.ev {...}" lines of ~150 bytes, a pause after each
cat >gen.py <<'EOT'
import sys, time
n, pause = int(sys.argv[1]), float(sys.argv[2])
for i in range(n):
    sys.stdout.write('mem.ev {"i":%d,"pad":"%s"}\n' % (i, "x" * 100))
    sys.stdout.flush()
    time.sleep(pause)
EOT

# sample.sh: "rank rss_bytes stores_bytes bytes:bound,..." per spared broker
cat >sample.sh <<'EOT'
for r in 0 3 5; do
	pid=$(awk -v r=$r '$1 == r { print $2 }' "$BGN_RUNDIR/brokers")
	rss=$(awk '/^VmRSS:/ { print $2 * 1024 }' /proc/$pid/status)
	bgn overlay-status -r $r --json | "$PYTHON3" -c "
import json, sys
m = json.load (sys.stdin)['memory']
s = ','.join ('%s=%d/%d' % (k, v['bytes'], v['bound'])
              for k, v in sorted (m.items ()) if isinstance (v, dict))
print ($r, $rss, m['stores_bytes'], s)"
done
EOT

test_expect_success PYTHON3 'load and churn at N=8 with 1 MiB bounds' '
	cat >load.sh <<-EOT &&
	bgn --rank 5 event sub --json --ready=sub.ready mem. >sub.out 2>sub.err &
	sub=\$!
	i=0; until test -f sub.ready; do
		i=\$((i+1)); test \$i -lt 200 || exit 1; sleep 0.05
	done
	bgn --rank 3 ping --count=100000 --interval=100ms --timeout=5s 5 \
		>ping.out 2>ping.err &
	ping=\$!
	sleep 1
	sh ./sample.sh >start.samples
	"$PYTHON3" gen.py $EVENTS 0.002 | bgn --rank 3 event pub - 2>pub.err &
	pub=\$!
	bgn fault chaos --duration=30s --max-down=2 --seed=22 --interval=1s \
		--spare=0,3,5 >chaos.out 2>chaos.err &
	chaos=\$!
	while kill -0 \$pub 2>/dev/null; do
		sh ./sample.sh >>samples
		sleep 2
	done
	wait \$chaos
	sleep 2
	sh ./sample.sh >>samples
	kill \$ping \$sub 2>/dev/null || :
	EOT
	bgn start --size=8 --keep-going $FAST $BOUNDS sh ./load.sh \
		>start.out 2>start.err &&
	test $(wc -l <samples) -ge 6
'

test_expect_success PYTHON3 'the subscriber got every event once, in order' '
	"$PYTHON3" -c "
import json, sys
got = [o[\"payload\"][\"i\"] for o in map (json.loads, open (\"sub.out\"))
       if o.get (\"topic\") == \"mem.ev\"]
print (\"%d of $EVENTS events\" % len (got))
sys.exit (0 if got == list (range ($EVENTS)) else 1)"
'

test_expect_success PYTHON3 'each store stays within its bound; RSS within the bounds plus a margin' '
	"$PYTHON3" - $BOUND $MARGIN_MB <<-\EOF
	import sys
	bound, margin = int(sys.argv[1]), int(sys.argv[2]) << 20
	start = {}
	for line in open("start.samples"):
	    r, rss, stores, _ = line.split()
	    start[int(r)] = (int(rss), int(stores))
	bad = 0
	worst = {}
	for line in open("samples"):
	    r, rss, stores, detail = line.split()
	    r, rss, stores = int(r), int(rss), int(stores)
	    for item in detail.split(","):
	        name, v = item.split("=")
	        held, lim = map(int, v.split("/"))
	        if held > lim:
	            print("rank %d: %s holds %d bytes, bound %d" % (r, name, held, lim))
	            bad = 1
	    grow = rss - start[r][0]
	    limit = 4 * bound + margin
	    if grow > limit:
	        print("rank %d: RSS grew %.1f MiB, more than %.1f MiB (bounds + margin)"
	              % (r, grow / 2**20, limit / 2**20))
	        bad = 1
	    if grow > stores - start[r][1] + margin:
	        print("rank %d: RSS grew %.1f MiB, its stores %.1f MiB: more than the margin apart"
	              % (r, grow / 2**20, (stores - start[r][1]) / 2**20))
	        bad = 1
	    worst[r] = max(worst.get(r, 0), grow)
	for r in sorted(worst):
	    print("rank %d: RSS %.1f MiB at the start, grew at most %.1f MiB"
	          % (r, start[r][0] / 2**20, worst[r] / 2**20))
	sys.exit(bad)
	EOF
'

test_done
