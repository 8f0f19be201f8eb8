#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-or-later
test_description='bgn beside Flux: bgn.so in flux-broker, flux bgn

A 16-broker Flux test instance (tbon.topo=kary:2) loads bgn on every rank
at start-up through flux-modprobe.  When rank 1'\''s broker is killed, the
TBON cuts its subtree (3, 4, 7-10, 15) off: flux ping 3 fails, while
flux bgn reaches every survivor over the BGN and hands requests to their
brokers.  A stopped leaf is down on the BGN while Flux still counts it
online.  Events published across the kill arrive once and in order.  A
small instance loads and unloads bgn cleanly and flux start exits 0, and
a 64-broker one ends without rank 0 taking the leaving brokers for a
partition.'

. "$(dirname "$0")/sharness.sh"

if test "$BGN_HAVE_FLUX" != yes; then
	skip_all="flux-core not found: ${BGN_FLUX_WHY:-configure found no flux-core}"
test_done
fi

WITH="$BGN_TOP_BUILDDIR/src/flux/with-bgn"
mkdir conf
cat >conf/bgn.toml <<-EOT
[bgn]
bind = "tcp://127.0.0.1:*"
keepalive_interval = "200ms"
peer_timeout = "2s"
EOT

test_expect_success 'a 4-broker instance loads bgn at start-up, is full, and exits 0' '
	timeout 120 "$WITH" flux start --test-size=4 -c conf \
		flux bgn overlay-status --wait=full -t 120 >small.out 2>small.err &&
	grep "^bgn full: size 4" small.out
'

# At the end of an instance its brokers leave in Flux's order, and the
# reports of who left go with them: rank 0 must not take that for a
# partition (at 64 brokers it used to call several ranks lost).
test_expect_success 'a 64-broker instance ends without a partition verdict' '
	timeout 300 "$WITH" flux start --test-size=64 -c conf \
		-Slog-stderr-level=6 \
		flux bgn overlay-status --wait=full -t 240 >end.out 2>end.err &&
	grep "^bgn full: size 64" end.out &&
	grep "bgn.info\[0\]: the instance is ending" end.err &&
	test_must_fail grep "partitioned:" end.err &&
	test_must_fail grep "bgn.crit" end.err
'

# A start-up that holds the module past broker.rpc_timeout (10 s) must
# not make the deadlines armed after it expire at once: the reactor'"'"'s
# clock is brought up to date before they are armed.
test_expect_success 'a start-up held 11 s leaves no stale deadline behind' '
	BGN_OVERLAY_TEST_START_DELAY=11 timeout 120 "$WITH" flux start \
		--test-size=2 -c conf -Slog-stderr-level=6 \
		flux bgn overlay-status --wait=full -t 90 >late.out 2>late.err &&
	grep "^bgn full: size 2" late.out &&
	test_must_fail grep "state-machine.monitor" late.err &&
	grep "bgn.info\[0\]: the instance is ending" late.err
'

# The bootstrap is a request per rank to rank 0 over the TBON: bgn needs
# no other module, whatever rc1 the site has.  A rank whose peer loads
# bgn late (a node down at the start) waits for it, saying so, and the
# BGN forms once it is there.
mkdir lateconf
{ cat conf/bgn.toml; echo "boot_timeout = \"2s\""; } >lateconf/bgn.toml
test_expect_success 'bgn loads with an empty rc1, and waits for a rank that loads it late' '
	timeout 120 "$WITH" flux start --test-size=4 -c lateconf \
		-Sbroker.rc1_path= -Sbroker.rc3_path= \
		sh -c "flux exec -r 0-2 flux module load bgn && sleep 5 &&
		       flux exec -r 3 flux module load bgn &&
		       flux bgn overlay-status --wait=full -t 60; rc=\$?;
		       flux dmesg >norc.dmesg;
		       flux exec -r all flux module remove bgn; exit \$rc" \
		>norc.out 2>&1 &&
	grep "^bgn full: size 4" norc.out &&
	grep "bgn: still waiting for rank(s) 3 to load bgn" norc.dmesg &&
	test_must_fail grep "bgn did not start" norc.dmesg
'

test_expect_success 'a bad [bgn] key is refused by name and Flux goes on' '
	mkdir badconf &&
	printf "[bgn]\npeer_timeout = \"soon\"\n" >badconf/bgn.toml &&
	timeout 120 "$WITH" flux start --test-size=1 -c badconf \
		sh -c "flux dmesg | grep bgn" >bad.out 2>&1 &&
	grep "bgn.peer_timeout" bad.out
'

# Run flux bgn ARGS in a 1-broker instance with [bgn] from $1; its
# one-line error and exit code, and the broker log, are kept.
bad_conf () {
	name=$1; shift
	rm -rf "$name" && mkdir "$name" &&
	cat >"$name/bgn.toml" &&
	timeout 120 "$WITH" flux start --test-size=1 -c "$name" \
		sh -c "flux bgn overlay-status >$name.out 2>$name.err;
		       echo \$? >$name.rc; flux dmesg >$name.dmesg"
}

test_expect_success 'a policy key of the wrong type is named, and flux bgn says why in one line' '
	printf "[bgn]\norphan_relief = \"yes\"\n" | bad_conf policy &&
	grep "key .bgn.orphan_relief.: \"yes\" is not a boolean" policy.dmesg &&
	test "$(cat policy.rc)" = 1 &&
	test "$(wc -l <policy.err)" = 1 &&
	grep "^flux-bgn: bgn did not start on this broker: .*bgn.orphan_relief" \
		policy.err
'

test_expect_success 'a keepalive_interval above the timeout is named as bgn.keepalive_interval' '
	printf "[bgn]\nkeepalive_interval = \"20s\"\n" | bad_conf ka &&
	grep "key .bgn.keepalive_interval.: must be less than bgn.peer_timeout" \
		ka.dmesg &&
	test_must_fail grep "overlay\." ka.dmesg &&
	test_must_fail grep "bgn.peer_timeout.:" ka.dmesg
'

test_expect_success 'curve off on an open bind advises bgn.insecure, not overlay.insecure' '
	printf "[bgn]\ncurve = false\nbind = \"tcp://*:*\"\n" | bad_conf curveoff &&
	grep "bgn.curve is off and bgn.bind" curveoff.dmesg &&
	grep "set bgn.insecure = true" curveoff.dmesg &&
	test_must_fail grep "overlay\.insecure" curveoff.dmesg
'

test_expect_success 'flux module load bgn ARG fails the load and says why' '
	timeout 60 "$WITH" flux start --test-size=1 -c conf \
		sh -c "flux module remove bgn &&
		       flux module load bgn extra-arg; echo \$? >modarg.rc;
		       flux dmesg >modarg.dmesg" &&
	test "$(cat modarg.rc)" != 0 &&
	grep "bgn: takes no arguments.*got .extra-arg." modarg.dmesg
'

test_expect_success 'flux bgn: bad JSON, a bad rank, no instance: one line each, exit 1' '
	timeout 60 "$WITH" flux start --test-size=1 -c conf \
		sh -c "flux bgn overlay-status --wait=full -t 30 >/dev/null;
		       flux bgn event pub t.x {bad >pub.out 2>pub.err;
		       echo \$? >pub.rc;
		       flux bgn overlay-status -r 99 >r99.out 2>r99.err;
		       echo \$? >r99.rc" &&
	test "$(cat pub.rc)" = 1 && test "$(wc -l <pub.err)" = 1 &&
	grep "^flux-bgn: payload is not JSON" pub.err &&
	test "$(cat r99.rc)" = 1 && test "$(wc -l <r99.err)" = 1 &&
	grep "^flux-bgn: 99: no such rank (size 1)" r99.err &&
	(unset FLUX_URI; test_expect_code 1 "$WITH" flux bgn overlay-status \
		>none.out 2>none.err) &&
	test "$(wc -l <none.err)" = 1 &&
	grep "^flux-bgn: cannot reach a Flux broker" none.err
'

test_expect_success 'bgn removed on rank 0: rank 1 says so, at no crit level' '
	timeout 60 "$WITH" flux start --test-size=2 -c conf \
		sh -c "flux bgn overlay-status --wait=full -t 30 >/dev/null &&
		       flux module remove bgn && sleep 5 &&
		       flux exec -r 1 flux dmesg >gone.dmesg" &&
	grep "rank 0 left the instance and no peer is up here" gone.dmesg &&
	test_must_fail grep "bgn.crit" gone.dmesg
'

cat >scenario.sh <<'EOT'
#!/bin/sh
# runs inside the instance; writes what it saw into files
flux bgn overlay-status --wait=full -t 120 >status-full.out 2>&1 || exit 1
flux exec -r 2 flux bgn event sub --count=20 -t 60 t5000. >events.out 2>&1 &
sub=$!
sleep 1
for i in 0 1 2 3 4 5 6 7 8 9; do flux bgn event pub t5000.e "{\"i\":$i}" >/dev/null; done
kill -9 "$(flux exec -r 1 flux getattr broker.pid)"
# the BGN notices the kill within its peer timeout
n=0
until flux bgn overlay-status --json | grep -q '"down_ranks": \[{"rank": 1\|"down_ranks":\[{"rank":1\|"rank": 1, "incarnation"'; do
	n=$((n + 1)); test $n -gt 100 && break; sleep 0.1
done
for i in 10 11 12 13 14 15 16 17 18 19; do flux bgn event pub t5000.e "{\"i\":$i}" >/dev/null; done
flux ping --count=1 3 >flux-ping.out 2>&1; echo "$?" >flux-ping.rc
: >bgn-ping.out
for r in 0 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do
	flux bgn ping -t 5 $r >>bgn-ping.out 2>&1 || echo "FAILED $r" >>bgn-ping.out
done
flux bgn rpc -r 3 broker.ping '{}' >rpc3.out 2>&1
flux bgn dmesg -r 4 >dmesg4.out 2>&1
# authority: rank 2 is no admin rank, so its owner requests arrive as a user's
flux exec -r 2 flux bgn rpc -r 3 broker.ping '{}' >rpc-from2.out 2>&1
flux exec -r 2 flux bgn dmesg -r 4 >dmesg-from2.out 2>&1; echo "$?" >dmesg-from2.rc
flux bgn overlay-status >status-cut.out 2>&1
wait $sub
# a leaf the BGN sees stop, while Flux still counts it online
leaf=14
pid=$(flux exec -r $leaf flux getattr broker.pid)
kill -STOP "$pid"
n=0
until flux bgn overlay-status --json >status-stop.json 2>&1 &&
      grep -q "\"rank\": $leaf, \"incarnation\"" status-stop.json; do
	n=$((n + 1)); test $n -gt 150 && break; sleep 0.1
done
flux python -c 'import flux; print(flux.Flux().rpc("groups.get", {"name": "broker.online"}, 0).get()["members"])' >online-stop.out 2>&1
kill -CONT "$pid"
exit 0
EOT

test_expect_success 'the 16-broker scenario runs (kill rank 1, stop a leaf)' '
	timeout 300 "$WITH" flux start --test-size=16 -Stbon.topo=kary:2 \
		--test-exit-mode=leader --test-exit-timeout=5s -c conf sh ./scenario.sh \
		>scenario.out 2>&1;
	test -s status-full.out
'

test_expect_success 'bgn was full on all 16 ranks' '
	grep "^bgn full: size 16" status-full.out
'

test_expect_success 'flux ping 3 fails: the TBON cut rank 3 off' '
	test "$(cat flux-ping.rc)" != 0
'

test_expect_success 'flux bgn ping reaches each of the 15 survivors' '
	test_must_fail grep FAILED bgn-ping.out &&
	test "$(grep -c "^reply from rank" bgn-ping.out)" = 15
'

test_expect_success 'a request carried over the BGN is answered by rank 3'"'"'s broker' '
	grep "\"rank\": 3" rpc3.out
'

test_expect_success 'a cut-off broker'"'"'s log ring is read over the BGN' '
	grep "bgn" dmesg4.out
'

test_expect_success 'the owner role crosses the BGN only from bgn.admin_ranks (rank 0)' '
	grep "\"rolemask\": 1" rpc3.out &&
	grep "\"rolemask\": 2" rpc-from2.out &&
	test "$(cat dmesg-from2.rc)" != 0 &&
	grep "requires owner" dmesg-from2.out
'

test_expect_success 'overlay-status names the ranks cut off from the TBON' '
	grep "^down: 1" status-cut.out &&
	grep "cut off from the TBON, reached over the BGN: 3-4,7-10,15" status-cut.out
'

test_expect_success 'every event arrived once, in order, across the kill' '
	test "$(grep -c " t5000.e " events.out)" = 20 &&
	sed -n "s/.*{\"i\": *\([0-9]*\)}.*/\1/p" events.out >order.out &&
	seq 0 19 >order.exp &&
	test_cmp order.exp order.out &&
	awk "{print \$1}" events.out | sort -n -c
'

test_expect_success 'a stopped leaf is down on the BGN, still online to Flux' '
	grep "\"rank\": 14, \"incarnation\"" status-stop.json &&
	"$PYTHON3" -c "
import sys
members = open(\"online-stop.out\").read().strip()
ids = set()
for part in members.split(\",\"):
    a, _, b = part.partition(\"-\")
    ids.update(range(int(a), int(b or a) + 1))
sys.exit(0 if 14 in ids else 1)
"
'

cat >conf2.toml <<-EOT
[bgn]
bind = "tcp://127.0.0.1:*"
keepalive_interval = "200ms"
peer_timeout = "2s"
orphan_relief = true
disconnect_hung = true
EOT
mkdir conf2 && mv conf2.toml conf2/bgn.toml

cat >scenario2.sh <<'EOT'
#!/bin/sh
flux bgn overlay-status --wait=full -t 120 >s2-full.out 2>&1 || exit 1
online () {
	flux python -c 'import flux; print(flux.Flux().rpc("groups.get", {"name": "broker.online"}, 0).get()["members"])'
}
# disconnect_hung: a stopped leaf, fenced by bgn, is let go by Flux too
leaf=14
lpid=$(flux exec -r $leaf flux getattr broker.pid)
kill -STOP "$lpid"
n=0
until online | "$PYTHON3" -c "
import sys
ids = set()
for part in sys.stdin.read().strip().split(','):
    a, _, b = part.partition('-')
    ids.update(range(int(a), int(b or a) + 1))
sys.exit(1 if $leaf in ids else 0)"; do
	n=$((n + 1)); test $n -gt 200 && break; sleep 0.1
done
online >s2-online-after-stop.out 2>&1
kill -CONT "$lpid"
# orphan_relief: the brokers cut off by rank 1's death are told to exit
for r in 3 4 7 8 9 10 15; do
	echo "$r $(flux exec -r $r flux getattr broker.pid)"
done >orphans.pids
kill -9 "$(flux exec -r 1 flux getattr broker.pid)"
n=0
while :; do
	alive=0
	while read r pid; do
		kill -0 "$pid" 2>/dev/null && alive=$((alive + 1))
	done <orphans.pids
	test $alive = 0 && break
	n=$((n + 1)); test $n -gt 600 && break; sleep 0.1
done
echo "$alive" >orphans-alive.out
flux dmesg >s2-dmesg.out 2>&1
exit 0
EOT

test_expect_success 'scenario 2 runs (disconnect_hung, orphan_relief)' '
	PYTHON3="$PYTHON3" timeout 300 "$WITH" flux start --test-size=16 \
		-Stbon.topo=kary:2 --test-exit-mode=leader \
		--test-exit-timeout=5s -c conf2 sh ./scenario2.sh \
		>scenario2.out 2>&1;
	test -s s2-full.out
'

test_expect_success 'disconnect_hung: Flux let go of the leaf bgn fenced' '
	grep "asked rank 6 to disconnect its TBON child rank 14" s2-dmesg.out &&
	"$PYTHON3" -c "
import sys
ids = set()
for part in open(\"s2-online-after-stop.out\").read().strip().split(\",\"):
    a, _, b = part.partition(\"-\")
    ids.update(range(int(a), int(b or a) + 1))
sys.exit(1 if 14 in ids else 0)
"
'

test_expect_success 'orphan_relief: every broker cut off by the kill exited' '
	grep "is lost to Flux.s TBON but up on the BGN: telling it to exit" \
		s2-dmesg.out &&
	test "$(cat orphans-alive.out)" = 0
'

# A pause of an interior broker with both policies on: the BGN fences it
# (silent), but Flux would drop its whole subtree if told to let it go,
# so it is left to Flux, and nobody below it is told to exit.
cat >scenario3.sh <<'EOT'
#!/bin/sh
flux bgn overlay-status --wait=full -t 120 >s3-full.out 2>&1 || exit 1
for r in $(seq 1 15); do
	echo "$r $(flux exec -r $r flux getattr broker.pid)"
done >s3.pids
pid=$(awk '$1 == 1 {print $2}' s3.pids)
kill -STOP "$pid"
# past peer_timeout + keepalive_interval (fenced) and orphan relief's
# 10 s grace, with a margin
sleep 16
kill -CONT "$pid"
sleep 4
alive=0
while read r p; do kill -0 "$p" 2>/dev/null && alive=$((alive + 1)); done <s3.pids
echo "$alive" >s3-alive.out
n=0
until flux python -c 'import flux; print(flux.Flux().rpc("groups.get", {"name": "broker.online"}, 0).get()["members"])' >s3-online.out 2>&1 &&
      grep -qx "0-15" s3-online.out; do
	n=$((n + 1)); test $n -gt 100 && break; sleep 0.2
done
flux dmesg >s3-dmesg.out 2>&1
exit 0
EOT

test_expect_success 'scenario 3 runs (an interior broker paused 16 s, both policies on)' '
	timeout 300 "$WITH" flux start --test-size=16 -Stbon.topo=kary:2 \
		--test-exit-mode=leader --test-exit-timeout=5s -c conf2 \
		sh ./scenario3.sh >scenario3.out 2>&1;
	test -s s3-full.out
'

test_expect_success 'the paused interior broker was fenced, and left to Flux' '
	grep "rank 1 (.*) is down on the BGN: silent" s3-dmesg.out &&
	grep "rank 1 has TBON children: left to Flux" s3-dmesg.out &&
	test_must_fail grep "asked rank 0 to disconnect its TBON child rank 1" \
		s3-dmesg.out
'

test_expect_success 'no broker exited, none was told to, and all 16 are online to Flux' '
	test "$(cat s3-alive.out)" = 15 &&
	test_must_fail grep "telling it to exit" s3-dmesg.out &&
	grep -x "0-15" s3-online.out
'

test_done
