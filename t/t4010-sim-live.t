#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-or-later
#
# t4010-sim-live.t: the protocol simulator and a live instance agree.
#
# Three small faults in a 32-broker bgn, each once in the simulator (the
# scenario files t/sim/live-*.toml) and once live (bgn start + bgn
# fault), with the same liveness settings (keepalive 200 ms, peer
# timeout 2 s) and the same requests:
#   (a) kill 4, 6 and 13, three neighbours of rank 5;
#   (b) hang rank 9 for 3 s (SIGSTOP, SIGCONT);
#   (c) restart rank 11.
# The outcomes must agree: which ranks end fenced (by any survivor and by
# all of them), that requests to a dying or dead rank fail with
# EHOSTUNREACH ("No route to host"), not by timing out, that requests to
# live ranks are answered, and that every survivor delivers every event
# once, in order, with no gap and no lost notice.  Timing may differ.

test_description='the simulator and a live instance agree on kill, hang and restart (N=32)'

. "$(dirname "$0")/sharness.sh"

FAST="-o overlay.keepalive_interval=200ms -o overlay.peer_timeout=2s"
SIMDIR="$SHARNESS_TEST_SRCDIR/sim"
SIMCHECK="${PYTHON3:-python3} $SHARNESS_TEST_SRCDIR/scripts/simcheck.py"

# pings.sh NAME "FROM..." "TO..." TIMEOUT: each FROM rank pings each TO
# rank once; NAME.pings gets "from to ok|unreach|timeout|other" lines.
cat >pings.sh <<'EOT'
name=$1 froms=$2 tos=$3 timeout=$4
for s in $froms; do
	for d in $tos; do
		if out=$(bgn --rank $s ping --count=1 --timeout=$timeout $d 2>&1); then
			r=ok
		else
			case "$out" in
			*"No route to host"*) r=unreach ;;
			*"timed out"*) r=timeout ;;
			*) r=other ;;
			esac
		fi
		echo "$s $d $r" >>$name.pings
	done
done
EOT

# . ./subscribe.sh RANKS (sourced, so that "wait" waits for them too): a
# subscriber to every topic on each rank (ev.R), gone after 6 s without
# an event; returns once all are subscribed.
cat >subscribe.sh <<'EOT'
for r in $RANKS; do
	bgn --rank $r event sub --json --timeout=6s --ready=ready.$r "" \
		>ev.$r 2>ev.$r.err &
done
for r in $RANKS; do
	i=0
	while ! test -e ready.$r; do
		sleep 0.02; i=$((i+1)); test $i -lt 500 || exit 1
	done
done
EOT

# publish.sh N: rank 2 publishes N events "sim.x", one by one; the number
# that succeeded goes to published.
cat >publish.sh <<'EOT'
ok=0
for i in $(seq $1); do
	bgn --rank 2 event pub sim.x "{\"i\":$i}" 2>>publish.err && ok=$((ok+1))
	sleep 0.05
done
echo $ok >published
EOT

# wait-down.sh N: wait until rank 0 has N ranks down (shared with others)
cp "$SHARNESS_TEST_SRCDIR/scripts/wait-down.sh" . || exit 1

# views-clear.sh: wait (10 s at most) until no survivor sees a rank down.
# Rank 0 is "full" once every rank has told it it is ready; a relay that
# is not a neighbour of a restarted rank hears of its return a moment
# later (the live record rank 0 sends down), and until then answers
# requests for it "No route to host" (CI saw rank 0's ping of 11 fail
# that way right after --wait=full).  The pings check that a rank that
# came back answers once the instance knows it is back.
cat >views-clear.sh <<'EOT'
i=0
until bgn overlay-status --all --json | tr -d ' \n' | grep -q '"down_any":""'; do
	i=$((i+1)); test $i -lt 200 || { echo "views never cleared" >&2; exit 1; }
	sleep 0.05
done
EOT

# the views at the end, from the status-all reduction: "down_any down_all"
cat >views.sh <<'EOT'
bgn overlay-status --all --json >all.json &&
"${PYTHON3:-python3}" -c "
import json; o = json.load(open('all.json'))
print(o['down_any'] or '-', o['down_all'] or '-')" >live.views
EOT

# agree_views SIMJSON: the simulator and the live instance end with the
# same fenced sets (any survivor's and all survivors'), and both are the
# ranks that are really down.
agree_views () {
	"${PYTHON3:-python3}" -c "
import json, sys
o = json.load(open(sys.argv[1]))
v = o['views']
print(v['down_any'] or '-', v['down_all'] or '-')" "$1" >sim.views &&
	echo "sim:  $(cat sim.views) (any, all)" &&
	echo "live: $(cat live.views) (any, all)" &&
	test_cmp sim.views live.views
}

# agree_rpc SIMJSON LOAD NAME WANT: the simulator's load LOAD and the live
# pings NAME.pings all ended as WANT: answered (live "ok") or failed_fast
# (live "unreach": EHOSTUNREACH, not a timeout).
agree_rpc () {
	case $4 in answered) _live=ok ;; failed_fast) _live=unreach ;; esac
	$SIMCHECK --only "$1" \
		"[l for l in o['rpc']['loads'] if l['name'] == '$2'][0]['sent'] > 0" \
		"[l for l in o['rpc']['loads'] if l['name'] == '$2'][0]['$4'] == [l for l in o['rpc']['loads'] if l['name'] == '$2'][0]['sent']" \
		>"$3.simcheck" || { cat "$3.simcheck"; return 1; }
	echo "live $3: $(awk '{print $3}' $3.pings | sort | uniq -c | tr -s ' \n' ' ')"
	test -s $3.pings &&
	test $(grep -c -v " $_live$" $3.pings) -eq 0 || {
		echo "live pings $3 that did not end $_live:"; grep -v " $_live$" $3.pings
		return 1
	}
}

# events_ok RANKS: each rank's subscriber saw every sequence number from
# its first to rank 0's last, once, in order, no lost notice, and every
# published sim.x event.
events_ok () {
	last=$(sed -n 's/^{"seq":\([0-9]*\),.*/\1/p' ev.0 | tail -n 1) &&
	test -n "$last" &&
	for r in $1; do
		sed -n 's/^{"seq":\([0-9]*\),.*/\1/p' ev.$r >seqs.$r &&
		first=$(head -n 1 seqs.$r) &&
		seq $first $last >want.$r &&
		{ test_cmp want.$r seqs.$r || { echo "rank $r: gaps, duplicates or disorder"; return 1; }; } &&
		{ ! grep "\"lost\"" ev.$r || { echo "rank $r: lost notice"; return 1; }; } &&
		n=$(grep -c "\"topic\":\"sim.x\"" ev.$r) &&
		{ test $n -eq $(cat published) || { echo "rank $r: $n of $(cat published) sim.x events"; return 1; }; } ||
		return 1
	done
}

sim_events_ok () {
	$SIMCHECK "$1" "o['events']['published'] > 50" \
		"o['events']['lost_notices'] == 0" >"$1.check" ||
		{ cat "$1.check"; return 1; }
}

ALL=$(seq 0 31 | tr '\n' ' ')

# ---- (a) kill three neighbours of rank 5 ---------------------------------

test_expect_success PYTHON3 'sim (a): kill 4, 6 and 13' '
	bgn-sim --protocol --scenario="$SIMDIR/live-kill3.toml" --check --json \
		>kill3.json &&
	sim_events_ok kill3.json
'

test_expect_success PYTHON3 'live (a): kill 4, 6 and 13' '
	survivors=$(seq 0 31 | grep -v -x -e 4 -e 6 -e 13 | tr "\n" " ") &&
	cat >kill3.sh <<-EOT &&
	RANKS="$survivors" && . ./subscribe.sh
	sh ./publish.sh 60 &
	sleep 1
	bgn fault kill 4 6 13 &&
	sh ./pings.sh dying 0 "4 6 13" 5s &&
	sh ./wait-down.sh 3 &&
	sh ./pings.sh dead "0 5 31" "4 6 13" 5s &&
	sh ./pings.sh living "0 5 31" "$survivors" 5s &&
	wait &&
	sh ./views.sh
	EOT
	bgn start --size=32 $FAST sh ./kill3.sh &&
	events_ok "$survivors"
'

test_expect_success PYTHON3 'agree (a): the same ranks fenced, dead fail fast, living answer' '
	agree_views kill3.json &&
	agree_rpc kill3.json "to the dying" dying failed_fast &&
	agree_rpc kill3.json "to the dead" dead failed_fast &&
	agree_rpc kill3.json "to the living" living answered
'

# ---- (b) hang rank 9 for 3 s ---------------------------------------------

test_expect_success PYTHON3 'sim (b): hang 9 for 3 s' '
	bgn-sim --protocol --scenario="$SIMDIR/live-hang.toml" --check --json \
		>hang.json &&
	sim_events_ok hang.json &&
	$SIMCHECK --only hang.json \
		"o[\"convergence\"][\"wrongly_fenced_max\"] == 1" \
		"o[\"rpc\"][\"ran_after_failure\"] == 0"
'

test_expect_success PYTHON3 'live (b): hang 9 for 3 s' '
	rm -f ready.* ev.* published publish.err &&
	cat >hang.sh <<-EOT &&
	RANKS="$ALL" && . ./subscribe.sh
	sh ./publish.sh 80 &
	sleep 1
	bgn fault stop 9 &&
	t0=\$(date +%s.%N) &&
	sh ./pings.sh hang 0 9 8s &&
	sh ./wait-down.sh 1 &&
	sleep \$(awk "BEGIN { d = 3 - (\$(date +%s.%N) - \$t0); print (d > 0 ? d : 0) }") &&
	bgn fault cont 9 &&
	bgn overlay-status --wait=full --timeout=15s >/dev/null &&
	sh ./pings.sh after "0 5 31" 9 5s &&
	sh ./pings.sh living2 "0 5 31" "$ALL" 5s &&
	wait &&
	sh ./views.sh
	EOT
	bgn start --size=32 $FAST sh ./hang.sh &&
	events_ok "$ALL"
'

test_expect_success PYTHON3 'agree (b): fenced while hung, back after; requests into the hang fail fast' '
	agree_views hang.json &&
	agree_rpc hang.json "into the hang" hang failed_fast &&
	agree_rpc hang.json "after the hang" after answered &&
	agree_rpc hang.json "to the living" living2 answered
'

# ---- (c) restart rank 11 -------------------------------------------------

test_expect_success PYTHON3 'sim (c): restart 11' '
	bgn-sim --protocol --scenario="$SIMDIR/live-restart.toml" --check \
		--json >restart.json &&
	sim_events_ok restart.json
'

test_expect_success PYTHON3 'live (c): restart 11' '
	rm -f ready.* ev.* published publish.err &&
	others=$(seq 0 31 | grep -v -x 11 | tr "\n" " ") &&
	cat >restart.sh <<-EOT &&
	RANKS="$others" && . ./subscribe.sh
	sh ./publish.sh 60 &
	sleep 1
	bgn fault restart 11 &&
	bgn overlay-status --wait=full --timeout=15s >/dev/null &&
	sh ./views-clear.sh &&
	sh ./pings.sh restarted "0 5 31" 11 5s &&
	sh ./pings.sh living3 "0 5 31" "$ALL" 5s &&
	wait &&
	sh ./views.sh
	EOT
	bgn start --size=32 $FAST sh ./restart.sh &&
	events_ok "$others"
'

test_expect_success PYTHON3 'agree (c): nobody fenced at the end, the restarted rank answers' '
	agree_views restart.json &&
	agree_rpc restart.json "to the restarted" restarted answered &&
	agree_rpc restart.json "to the living" living3 answered
'

test_done
