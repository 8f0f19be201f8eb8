#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-or-later
test_description='soak (make check-long): memory of every spared broker stays flat under chaos

N brokers (BGN_SOAK_SIZE, default 64) under chaos for BGN_SOAK_DURATION
seconds (default 1800): a kill or restart every second, at most 8 down.
Ranks 0, 9, 22, 37, 50 and 63 are never touched: clients on them ping
each other every 100 ms, rank 9 and rank 37 publish 20 events a second
each (one by one), 22, 50 and 63 subscribe.  Every spared broker resident
set and the stores its overlay-status counts (each store, the broker's
own and the transport's send queues included) are recorded each minute
in rss.series (copied to BGN_SOAK_OUT if set).  After the first
BGN_SOAK_WARMUP seconds (default 300) the RSS of a broker may grow only as
much as its stores did, plus 8 MiB, and never past the sum of its
bounds plus 8 MiB.  The event buffers are bounded at BGN_SOAK_EVENT_BYTES
(default 4 MiB, reached after some 7 minutes at 40 events a second) so
that the plateau shows within the run; the other bounds are the
defaults.'

. "$(dirname "$0")/sharness.sh"

SIZE=${BGN_SOAK_SIZE:-64}
DURATION=${BGN_SOAK_DURATION:-1800}
WARMUP=${BGN_SOAK_WARMUP:-300}
SEED=${BGN_SOAK_SEED:-$(date +%s)}
FAST="-o overlay.keepalive_interval=200ms -o overlay.peer_timeout=2s"
BOUNDS="-o overlay.event_buffer_bytes=${BGN_SOAK_EVENT_BYTES:-4194304}"
SPARE="0,9,22,37,50,63"
MARGIN_MB=8

cat >sample.sh <<'EOT'
# one line per spared broker: seconds rank rss stores sum_of_bounds, and
# each store's bytes (name=bytes/bound,...)
t=$1
for r in 0 9 22 37 50 63; do
	pid=$(awk -v r=$r '$1 == r { print $2 }' "$BGN_RUNDIR/brokers")
	rss=$(awk '/^VmRSS:/ { print $2 * 1024 }' /proc/$pid/status)
	bgn overlay-status -r $r --json | "$PYTHON3" -c "
import json, sys
m = json.load (sys.stdin)['memory']
b = sum (v['bound'] for v in m.values () if isinstance (v, dict))
s = ','.join ('%s=%d/%d' % (k, v['bytes'], v['bound'])
              for k, v in sorted (m.items ()) if isinstance (v, dict))
print ($t, $r, $rss, m['stores_bytes'], b, s)"
done
EOT

cat >gen.py <<'EOT'
import sys, time
rate, seconds, tag = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
end = time.time() + seconds
i = 0
while time.time() < end:
    sys.stdout.write('soak.%s {"i":%d,"pad":"%s"}\n' % (tag, i, "x" * 100))
    sys.stdout.flush()
    i += 1
    time.sleep(1.0 / rate)
EOT

test_expect_success PYTHON3 "soak at N=$SIZE for ${DURATION}s (seed $SEED)" '
	cat >soak.sh <<-EOT &&
	for r in 22 50 63; do
		bgn --rank \$r event sub --json --ready=sub\$r.ready soak. \
			>sub\$r.out 2>sub\$r.err &
		echo \$! >>clients.pids
	done
	for r in 22 50 63; do
		i=0; until test -f sub\$r.ready; do
			i=\$((i+1)); test \$i -lt 200 || exit 1; sleep 0.05
		done
	done
	for pair in 9:50 22:63 37:0 50:9 63:22 0:37; do
		s=\${pair%%:*} d=\${pair##*:}
		bgn --rank \$s ping --count=100000000 --interval=100ms --timeout=5s \
			\$d >ping-\$s-\$d.out 2>ping-\$s-\$d.err &
		echo \$! >>clients.pids
	done
	"$PYTHON3" gen.py 20 $DURATION a | bgn --rank 9 event pub - 2>pub9.err &
	"$PYTHON3" gen.py 20 $DURATION b | bgn --rank 37 event pub - 2>pub37.err &
	bgn fault chaos --duration=${DURATION}s --max-down=8 --seed=$SEED \
		--interval=1s --spare=$SPARE >chaos.out 2>chaos.err &
	chaos=\$!
	t0=\$(date +%s)
	while kill -0 \$chaos 2>/dev/null; do
		sh ./sample.sh \$((\$(date +%s) - t0)) >>rss.series
		sleep 60
	done
	sh ./sample.sh \$((\$(date +%s) - t0)) >>rss.series
	kill \$(cat clients.pids) 2>/dev/null || :
	EOT
	bgn start --size=$SIZE --keep-going --wait-timeout=120s $FAST $BOUNDS \
		sh ./soak.sh >start.out 2>start.err &&
	if test -n "$BGN_SOAK_OUT"; then cp rss.series "$BGN_SOAK_OUT"; fi &&
	test $(wc -l <rss.series) -ge 12
'

test_expect_success PYTHON3 'after the warm-up every spared broker stays flat within its bounds' '
	"$PYTHON3" - $WARMUP $MARGIN_MB <<-\EOF
	import sys
	warmup, margin = int(sys.argv[1]), int(sys.argv[2]) << 20
	series = {}
	last = {}
	for line in open("rss.series"):
	    f = line.split()
	    t, r, rss, stores, bounds = map(int, f[:5])
	    series.setdefault(r, []).append((t, rss, stores, bounds))
	    if len(f) > 5:
	        last[r] = f[5]
	bad = 0
	for r, s in sorted(series.items()):
	    print("rank %d: RSS MiB by minute: %s" % (r, " ".join(
	        "%.1f" % (x[1] / 2**20) for x in s)))
	    print("rank %d: stores MiB by minute: %s" % (r, " ".join(
	        "%.2f" % (x[2] / 2**20) for x in s)))
	    if r in last:
	        print("rank %d at the end, bytes/bound per store: %s" % (r, last[r]))
	    base = [x for x in s if x[0] >= warmup]
	    if not base:
	        print("rank %d: no sample after the warm-up" % r); bad = 1; continue
	    t0, rss0, st0, bounds = base[0]
	    for t, rss, st, _ in base:
	        if rss - rss0 > max(st - st0, 0) + margin or rss > bounds + rss0 + margin:
	            print("rank %d at %ds: RSS %.1f MiB, %.1f at %ds, stores grew %.1f"
	                  % (r, t, rss / 2**20, rss0 / 2**20, t0, (st - st0) / 2**20))
	            bad = 1
	sys.exit(bad)
	EOF
'

test_done
