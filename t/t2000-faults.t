#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-or-later
test_description='failures: fencing, rerouting, rejoin, chaos, and a tree for contrast'

. "$(dirname "$0")/sharness.sh"

# Small liveness settings so failures are found fast.
FAST="-o overlay.keepalive_interval=200ms -o overlay.peer_timeout=2s"

# all_pairs "RANKS": every rank in RANKS pings every rank in RANKS once;
# prints "src dst ok|fail" lines.
cat >all-pairs.sh <<'EOT'
for s in $1; do
	for d in $1; do
		if bgn --rank $s ping --count=1 --timeout=3s $d >/dev/null 2>&1; then
			echo "$s $d ok"
		else
			echo "$s $d fail"
		fi
	done
done
EOT

# wait-down.sh N: wait until rank 0 has N ranks down (shared script)
cp "$SHARNESS_TEST_SRCDIR/scripts/wait-down.sh" . || exit 1

test_expect_success 'N=32: kill 3 interior brokers (two adjacent); survivors reach each other' '
	cat >kill3.sh <<-\EOT &&
	bgn fault kill 5 6 21 &&
	sh ./wait-down.sh 3 &&
	survivors=$(seq 0 31 | grep -v -x -e 5 -e 6 -e 21 | tr "\n" " ") &&
	sh ./all-pairs.sh "$survivors" >pairs.out &&
	for d in 5 6 21; do
		bgn ping --count=1 --timeout=2s $d 2>>dead.err && exit 1
	done
	exit 0
	EOT
	bgn start --size=32 $FAST sh ./kill3.sh &&
	test $(grep -c " ok$" pairs.out) -eq $((29*29)) &&
	test_must_fail grep " fail$" pairs.out &&
	test $(grep -c "No route to host" dead.err) -eq 3
'

# (overlay.rejoin_wait 0: by default such a request first waits half a
# second for the rank to rejoin, t2200)
test_expect_success 'a request to a rank known down fails at once with EHOSTUNREACH' '
	cat >downfast.sh <<-\EOT &&
	bgn fault kill 9 &&
	sh ./wait-down.sh 1 &&
	bgn ping --count=1 --timeout=5s 9 2>down9.err; echo rc=$? >down9.rc
	EOT
	bgn start --size=16 $FAST -o overlay.rejoin_wait=0 sh ./downfast.sh &&
	grep "rc=1" down9.rc &&
	grep "No route to host" down9.err
'

test_expect_success 'that error says the request did not run, and where the rank is down' '
	grep "could not route to rank 9 (down, or restarting, as far as rank 0 knows): the request did not run" down9.err
'

test_expect_success 'kill all but one neighbour of a broker: it stays reachable' '
	cat >lastlink.sh <<-\EOT &&
	bgn fault kill 1 3 4 6 7 9 &&
	sh ./wait-down.sh 6 &&
	bgn ping --count=1 --timeout=3s 5 &&
	bgn --rank 5 ping --count=1 --timeout=3s 0 &&
	bgn --rank 10 ping --count=1 --timeout=3s 5 &&
	bgn --rank 5 ping --count=1 --timeout=3s 15
	EOT
	bgn start --size=16 $FAST sh ./lastlink.sh >lastlink.out &&
	test $(grep -c "^reply from rank" lastlink.out) -eq 4
'

test_expect_success 'self-healing: a broker left with too few links gets substitutes, dropped later' '
	cat >heal.sh <<-\EOT &&
	bgn fault kill 1 3 4 6 7 &&
	sh ./wait-down.sh 5 &&
	i=0 &&
	while test $i -lt 100; do
		bgn overlay-status -r 5 --json >heal.status
		grep -q "\"substitutes\": [1-9]" heal.status && break
		sleep 0.1; i=$((i+1))
	done &&
	grep "\"substitute\": true" heal.status &&
	bgn ping --count=1 5 &&
	for r in 1 3 4 6 7; do bgn fault restart $r || exit 1; done &&
	bgn overlay-status --wait=full --timeout=10s &&
	i=0 &&
	while test $i -lt 100; do
		bgn overlay-status -r 5 --json >heal.after
		grep -q "\"substitutes\": 0" heal.after && break
		sleep 0.1; i=$((i+1))
	done &&
	grep "\"substitutes\": 0" heal.after
	EOT
	bgn start --size=16 $FAST sh ./heal.sh >heal.out &&
	grep "^reply from rank 5" heal.out
'

test_expect_success 'stop then cont a broker: it is declared down, then rejoins' '
	cat >stopcont.sh <<-\EOT &&
	bgn fault stop 6 &&
	sh ./wait-down.sh 1 &&
	bgn overlay-status --summary >state.stopped &&
	bgn fault cont 6 &&
	bgn overlay-status --wait=full --timeout=10s &&
	bgn ping --count=1 6
	EOT
	bgn start --size=16 $FAST sh ./stopcont.sh >stopcont.out &&
	grep "^degraded$" state.stopped &&
	grep "^reply from rank 6" stopcont.out
'

test_expect_success 'restart a broker: it rejoins and answers' '
	cat >restart.sh <<-\EOT &&
	bgn fault kill 11 &&
	sh ./wait-down.sh 1 &&
	bgn fault restart 11 &&
	bgn overlay-status --wait=full --timeout=10s &&
	bgn ping --count=1 11 &&
	bgn --rank 11 ping --count=1 3
	EOT
	bgn start --size=16 $FAST sh ./restart.sh >restart.out &&
	test $(grep -c "^reply from rank" restart.out) -eq 2
'

test_expect_success 'rank 0 restarted: the instance keeps its identity and heals' '
	cat >restart0.sh <<-\EOT &&
	bgn fault restart 0 &&
	bgn overlay-status --wait=full --timeout=10s &&
	bgn ping --count=1 9
	EOT
	bgn start --size=16 $FAST sh ./restart0.sh >restart0.out &&
	grep "^reply from rank 9" restart0.out
'

test_expect_success 'a request in flight to a rank that dies gets an error, once' '
	cat >tracker.sh <<-\EOT &&
	bgn fault stop 12 &&
	( bgn ping --count=1 --timeout=8s 12 >tr.out 2>tr.err; echo rc=$? >tr.rc ) &
	sleep 0.2 &&
	sh ./wait-down.sh 1 &&
	wait &&
	bgn fault cont 12
	EOT
	bgn start --size=16 $FAST sh ./tracker.sh &&
	grep "rc=1" tr.rc &&
	test $(grep -c "No route to host" tr.err) -eq 1 &&
	grep "went down" tr.err
'

# A relay that dies holding a request: rank 0's request to 11 goes
# through the relay --route names; the relay is stopped (it takes the
# request into its socket and reads nothing), then killed with it.  The
# origin sends the request again once the relay is fenced.
test_expect_success PYTHON3 'a request lost in a relay that dies is sent again and answered' '
	cat >relay.sh <<-\EOT &&
	bgn ping --route --count=1 11 >route.out || exit 1
	relay=$(awk "/route:/ { print \$4 }" route.out)
	echo $relay >relay.rank
	bgn fault stop $relay || exit 1
	( bgn ping --count=1 --timeout=8s 11 >relay.out 2>relay.err; echo rc=$? >relay.rc ) &
	sleep 0.3
	bgn fault kill $relay || exit 1
	sh ./wait-down.sh 1 || exit 1
	wait
	bgn overlay-status --json >relay.status
	EOT
	bgn start --size=16 $FAST sh ./relay.sh &&
	test -s relay.rank &&
	grep "rc=0" relay.rc &&
	grep "^reply from rank 11" relay.out &&
	"$PYTHON3" -c "import json, sys; o = json.load (open (\"relay.status\")); sys.exit (0 if o[\"tracker_retries\"] >= 1 else 1)"
'

# Under chaos, a request that is inside a broker when it is SIGKILLed is
# lost on the wire (ZeroMQ has no acknowledgements); its origin sends it
# again once that broker is fenced (overlay-protocol.md 6b), and what is
# still lost the client's deadline turns into ETIMEDOUT.  That is the only
# failure allowed for a rank that stayed up, and only if a broker died
# while the request was out.
test_expect_success 'chaos for 60s under RPC load: RPCs to ranks that stayed up succeed' '
	cat >load.sh <<-\EOT &&
	end=$(( $(date +%s) + 55 ))
	while test $(date +%s) -lt $end; do
		for d in 0 3 7 12 18 25; do
			t0=$(date +%s.%N)
			if err=$(bgn --rank $1 ping --count=1 --timeout=3s $d 2>&1 >/dev/null); then
				echo "$d ok"
			else
				echo "$d fail $t0 $(echo $err | tr -s " " | head -c 120)"
			fi
		done
	done
	EOT
	cat >chaos.sh <<-\EOT &&
	sh ./load.sh 0 >load0.out &
	sh ./load.sh 7 >load7.out &
	sh ./load.sh 25 >load25.out &
	bgn fault chaos --duration=60s --max-down=3 --seed=42 --interval=1s \
		--spare=7,25 | while read l; do echo "$(date +%s.%N) $l"; done >chaos.out &&
	wait &&
	bgn overlay-status --wait=full --timeout=15s
	EOT
	bgn start --size=32 $FAST sh ./chaos.sh &&
	victims=$(sed -n "s/.* kill \([0-9]*\)$/\1/p" chaos.out | sort -u | tr "\n" " ") &&
	echo "killed: $victims" &&
	grep "chaos: [1-9][0-9]* kills" chaos.out &&
	cat load0.out load7.out load25.out >load.all &&
	test $(grep -c " ok$" load.all) -gt 100 &&
	for v in $victims; do sed -i "/^$v /d" load.all; done &&
	grep " fail " load.all >fails || true &&
	echo "$(wc -l <fails) failed RPCs to ranks that stayed up" &&
	while read d f t0 msg; do
		echo "$msg" | grep -q "timed out" || { echo "not a timeout: $d $msg"; return 1; }
		awk -v t=$t0 "\$3 == \"kill\" && \$1 >= t - 0.5 && \$1 <= t + 3.5 {k=1} END {exit !k}" chaos.out ||
			{ echo "no broker died during: $d $t0 $msg"; return 1; }
	done <fails
'

test_expect_success 'no process is left behind after the fault tests' '
	bgn start --size=8 $FAST sh -c "bgn fault restart 3 && cat \$BGN_RUNDIR/brokers" >pids.out &&
	pids_gone pids.out
'

test_expect_success 'contrast: in a kary:2 tree, killing rank 1 cuts off its whole subtree' '
	cat >tree.sh <<-\EOT &&
	bgn fault kill 1 &&
	sleep 2 &&
	for d in $(seq 2 15); do
		if bgn ping --count=1 --timeout=2s $d >/dev/null 2>&1; then
			echo "$d ok"
		else
			echo "$d fail"
		fi
	done
	EOT
	test_expect_code 1 bgn start --size=16 --topology=kary:2 --keep-going \
		$FAST sh ./tree.sh >tree.out 2>tree.err &&
	grep "rank 3 exited with status 3" tree.err &&
	test $(grep -c " fail$" tree.out) -eq 7 &&
	for d in 3 4 7 8 9 10 15; do grep -x "$d fail" tree.out || return 1; done
'

test_expect_success 'the same kill in a bgn cuts off nobody' '
	cat >bgnkill.sh <<-\EOT &&
	bgn fault kill 1 &&
	sleep 2 &&
	for d in $(seq 2 15); do
		if bgn ping --count=1 --timeout=2s $d >/dev/null 2>&1; then
			echo "$d ok"
		else
			echo "$d fail"
		fi
	done
	EOT
	bgn start --size=16 $FAST sh ./bgnkill.sh >bgnkill.out &&
	test $(grep -c " ok$" bgnkill.out) -eq 14
'

test_done
