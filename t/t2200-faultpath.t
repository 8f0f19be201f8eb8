#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-or-later
test_description='the fault path, live: peers that never join, requests to a hung broker, starved start-up

Three of four static brokers start: the fourth is fenced "never joined"
after overlay.join_timeout, health is degraded (not partial for ever) and
requests to it fail at once; when it starts late it joins.  A request sent
to a stopped broker fails for its client, and once the broker runs again
it does not execute it.  Sixteen static brokers stopped in turns while
they start up never exit "partitioned".  The first requests of a
restarted broker, sent before the news of its rejoin has reached every
broker, are answered at once.'

. "$(dirname "$0")/sharness.sh"

# Short, space-free run directories (a unix socket path has ~100 bytes).
RD=$(mktemp -d /tmp/bgnf$$.XXXXXX) || exit 1
FAST="-o overlay.keepalive_interval=200ms -o overlay.peer_timeout=2s"

cleanup_static () {
	if test -f "$RD/pids"; then
		while read r pid; do
			kill -CONT "$pid" 2>/dev/null
			kill -9 "$pid" 2>/dev/null
		done <"$RD/pids"
	fi
	rm -rf "$RD"
}
trap 'rc=$?; cleanup_static; (exit $rc); die' EXIT
trap 'exit 130' INT TERM

uri () {
	echo "ipc://$RD/r$1/local"
}

# pid_of RANK: the broker's pid from $RD/pids (the last started).
pid_of () {
	sed -n "s/^$1 //p" "$RD/pids" | tail -n 1
}

# static_config FILE HOSTLIST [JOIN_TIMEOUT]: one shared key, ipc endpoints.
static_config () {
	cat >"$1" <<-EOF
	[overlay]
	keepalive_interval = "200ms"
	peer_timeout = "1s"
	join_timeout = "${3:-2s}"

	[bootstrap]
	curve_cert = "$PWD/cert"
	hosts = [
	  { host = "$2", bind = "ipc://$RD/%h.ovl", connect = "ipc://$RD/%h.ovl" },
	]
	EOF
}

# start_static CONFIG HOST RANK: one broker in the background.
start_static () {
	bgn-broker -c "$1" -o bootstrap.hostname=$2 \
		--rundir="$RD/r$3" >>broker-$2.log 2>&1 &
	echo "$3 $!" >>"$RD/pids"
}

# wait_answer RANK: rank 0's broker.info answered, 20 tries.
wait_answer () {
	_n=40
	while test $_n -gt 0; do
		bgn --uri="$(uri $1)" rpc --timeout=1s broker.info >/dev/null 2>&1 \
			&& return 0
		_n=$((_n - 1))
		sleep 0.5
	done
	return 1
}

stop_static () {
	while read r pid; do
		kill -CONT $pid 2>/dev/null
		kill $pid 2>/dev/null
	done <"$RD/pids"
	pids_gone "$RD/pids" && rm -f "$RD/pids"
}

# ---- a peer that never joins ----------------------------------------------

test_expect_success 'a key pair for the static instances' '
	bgn keygen cert >/dev/null
'

test_expect_success 'three of four static brokers: rank 3 is fenced "never joined"' '
	static_config four.toml "n[0-3]" 2s &&
	start_static four.toml n0 0 &&
	start_static four.toml n1 1 &&
	start_static four.toml n2 2 &&
	wait_answer 0 &&
	bgn --uri="$(uri 0)" overlay-status --wait=degraded --summary \
		--timeout=20s >nj.wait &&
	bgn --uri="$(uri 0)" overlay-status >nj.text &&
	bgn --uri="$(uri 1)" overlay-status --json >nj1.json &&
	grep "^degraded$" nj.wait &&
	grep "^down: 3 (1)$" nj.text &&
	grep "rank 3 (.*): down for .*never joined" nj.text &&
	grep "\"down\": \"3\"" nj1.json
'

test_expect_success 'a request to the rank that never joined fails with EHOSTUNREACH' '
	test_must_fail bgn --uri="$(uri 1)" rpc -r 3 --timeout=30s broker.info \
		2>nj.rpc.err &&
	grep "No route to host" nj.rpc.err &&
	test_must_fail grep -i "timed out" nj.rpc.err
'

test_expect_success 'the rank that never joined starts late: it joins, health full' '
	start_static four.toml n3 3 &&
	bgn --uri="$(uri 0)" overlay-status --wait=full --timeout=20s &&
	bgn --uri="$(uri 1)" rpc -r 3 --timeout=5s broker.info >late.json &&
	grep "\"rank\":3" late.json &&
	stop_static
'

# ---- start-up under starvation --------------------------------------------

test_expect_success 'sixteen static brokers stopped in turns while starting: none exits partitioned' '
	static_config sixteen.toml "s[0-15]" 10s &&
	for r in $(seq 0 15); do
		start_static sixteen.toml s$r $r || return 1
	done &&
	# stop four brokers at a time for 1.5 s (longer than peer_timeout),
	# in turns, for the first ~6 s of their lives
	for round in 0 1 2 3; do
		for k in 0 1 2 3; do
			kill -STOP $(pid_of $((round * 4 + k)))
		done
		sleep 1.5
		for k in 0 1 2 3; do
			kill -CONT $(pid_of $((round * 4 + k)))
		done
	done &&
	wait_answer 0 &&
	bgn --uri="$(uri 0)" overlay-status --wait=full --timeout=60s &&
	while read r pid; do
		kill -0 $pid || { echo "rank $r exited" >&2; return 1; }
	done <"$RD/pids" &&
	test_must_fail grep -h "partitioned" broker-s*.log &&
	stop_static
'

# ---- no execution after a reported failure ----------------------------------

test_expect_success 'a shutdown sent to a stopped broker fails; after SIGCONT it does not run' '
	cat >stall.sh <<-\EOT &&
	bgn fault stop 2 || exit 1
	bgn rpc -r 2 --timeout=20s broker.shutdown 2>stall.rpc.err
	echo rc=$? >stall.rpc.rc
	bgn overlay-status --json >stall.json
	bgn fault cont 2 || exit 1
	bgn overlay-status --wait=full --summary --timeout=20s >stall.full || exit 1
	sleep 1
	bgn rpc -r 2 --timeout=5s broker.info >stall.info || exit 1
	bgn dmesg -r 2 >stall.dmesg2
	EOT
	bgn start --size=4 --keep-going $FAST sh ./stall.sh >stall.out 2>stall.err &&
	grep "rc=1" stall.rpc.rc &&
	grep "rank 2 went down" stall.rpc.err &&
	grep "\"down\": \"2\"" stall.json &&
	grep "^full$" stall.full &&
	grep "\"rank\":2" stall.info &&
	test_must_fail grep "rank 2 exited" stall.err &&
	grep "dropped a message from rank 0 sent to this broker before it rejoined" stall.dmesg2
'

# ---- leaving and coming back ---------------------------------------------------

test_expect_success 'a broker that left with overlay-disconnect is restarted and rejoins' '
	cat >leave.sh <<-\EOT &&
	bgn overlay-disconnect 5 >leave.out || exit 1
	bgn fault restart 5 || exit 1
	bgn overlay-status --wait=full --summary --timeout=20s >leave.full || exit 1
	bgn --rank 3 ping --count=1 --timeout=5s 5 >leave.ping || exit 1
	bgn dmesg -r 0 >leave.dmesg0
	EOT
	bgn start --size=8 --keep-going $FAST sh ./leave.sh >leave.start.out \
		2>leave.start.err &&
	grep "^rank 5 disconnected" leave.out &&
	grep "^full$" leave.full &&
	grep "^reply from rank 5" leave.ping &&
	test_must_fail grep -i "not authorized" leave.dmesg0 leave.start.err
'

test_expect_success 'restarts with a pause between bind and start: every link comes back' '
	cat >race.sh <<-\EOT &&
	for r in 3 5 9 12 3 7 14 5; do
		bgn fault restart $r || exit 1
		sleep 0.3
	done
	bgn overlay-status --wait=full --summary --timeout=30s >race.full
	bgn overlay-status --all >race.all
	bgn --rank 3 ping --count=1 --timeout=5s 14 >race.ping || exit 1
	EOT
	BGN_OVERLAY_TEST_START_DELAY=0.5 \
		bgn start --size=16 --keep-going $FAST sh ./race.sh >race.out 2>race.err &&
	grep "^full$" race.full &&
	grep "^all brokers agree$" race.all &&
	test_must_fail grep "brokers with a problem" race.all &&
	grep "^reply from rank 14" race.ping
'

# A bind on port "*" gives a restarted broker a new port.  Its lower-ranked
# neighbours, which dial it, read its endpoint from the bootstrap once:
# it tells them where it listens now (overlay.moved), through the overlay.
test_expect_success 'a broker restarted on a new port: every link comes back' '
	cat >moved.sh <<-\EOT &&
	bgn overlay-status --wait=full --summary --timeout=20s || exit 1
	bgn overlay-status --json -r 2 >moved.before || exit 1
	bgn fault restart 2 || exit 1
	bgn overlay-status --wait=full --summary --timeout=20s >moved.full
	bgn overlay-status --json -r 2 >moved.after || exit 1
	for r in 0 1 2 3; do
		bgn --rank 1 ping --count=1 --timeout=3s $r || exit 1
	done >moved.ping
	EOT
	bgn start --size=4 --keep-going --log-stderr-level=notice $FAST \
		-o overlay.bind=\"tcp://127.0.0.1:*\" sh ./moved.sh >moved.out \
		2>moved.err &&
	grep "\"endpoint\": \"tcp://127.0.0.1:" moved.before >ep.before &&
	grep "\"endpoint\": \"tcp://127.0.0.1:" moved.after >ep.after &&
	! cmp -s ep.before ep.after &&
	grep "^full$" moved.full &&
	test $(grep -c "^reply from rank" moved.ping) -eq 4 &&
	grep "peer 2 listens at tcp://127.0.0.1:[0-9]* now" moved.err
'

# Rank 3 of 4 (topology bgn) is dialled by all its neighbours: restarted
# on a new port it has no link up to say where it listens.  Its
# neighbours ask the bootstrap again (bgn start's PMI server answers after
# finalize) and dial it there.
test_expect_success 'a broker all of whose neighbours dial it, restarted on a new port: every link comes back' '
	cat >moved3.sh <<-\EOT &&
	bgn overlay-status --wait=full --summary --timeout=20s || exit 1
	bgn overlay-status --json -r 3 >moved3.before || exit 1
	bgn fault restart 3 || exit 1
	bgn overlay-status --wait=full --summary --timeout=30s >moved3.full
	bgn overlay-status --json -r 3 >moved3.after || exit 1
	for r in 0 1 2 3; do
		bgn --rank 0 ping --count=1 --timeout=3s $r || exit 1
	done >moved3.ping
	EOT
	bgn start --size=4 --keep-going --log-stderr-level=notice $FAST \
		-o overlay.bind=\"tcp://127.0.0.1:*\" sh ./moved3.sh >moved3.out \
		2>moved3.err &&
	grep "\"endpoint\": \"tcp://127.0.0.1:" moved3.before >ep3.before &&
	grep "\"endpoint\": \"tcp://127.0.0.1:" moved3.after >ep3.after &&
	! cmp -s ep3.before ep3.after &&
	grep "^full$" moved3.full &&
	test $(grep -c "^reply from rank" moved3.ping) -eq 4 &&
	grep "peer 3 listens at tcp://127.0.0.1:[0-9]* now (was .*, says the bootstrap)" moved3.err
'

# ---- a restarted broker's first milliseconds ----------------------------------
# At N=32 rank 0's answers to rank 21 pass rank 1, no neighbour of 21,
# which learns of 21's rejoin after rank 0 does: they must wait there
# for it, not be dropped.

test_expect_success 'a restarted broker asks through the overlay at once: answered' '
	cat >first.sh <<-\EOT &&
	bgn fault kill 21 || exit 1
	bgn overlay-status --wait=degraded --summary --timeout=20s || exit 1
	sleep 0.5
	bgn fault restart 21 || exit 1
	bgn --rank 21 rpc -r 0 broker.ping >first.ping 2>first.ping.err
	echo ping=$? >first.rc
	bgn --rank 21 rpc broker.hosts >first.hosts 2>first.hosts.err
	echo hosts=$? >>first.rc
	n=50
	while test $n -gt 0 && ! bgn --rank 21 dmesg | grep -q "registered with"
	do
		sleep 0.1
		n=$((n - 1))
	done
	bgn --rank 21 dmesg >first.dmesg21
	EOT
	bgn start --size=32 --keep-going -o broker.log_level=7 $FAST \
		sh ./first.sh >first.out 2>first.err &&
	grep "^ping=0$" first.rc &&
	grep "^hosts=0$" first.rc &&
	grep "\"size\":32" first.hosts &&
	grep "\"hosts\":\[" first.hosts &&
	grep "\"rank\":0" first.ping &&
	grep "registered with rank 0 (attempt 1)$" first.dmesg21
'

# ---- a request to a rank that is restarting --------------------------------
# A restarted rank is admitted by its neighbours at once; a broker far
# from it (rank 7 at N=32 is no neighbour of 21) learns of the rejoin
# later, through the fence tree.  A request it sends to the rank meanwhile
# waits there for the news (overlay.rejoin_wait) and goes to the new
# incarnation, instead of failing at once.  The request is sent while 21
# is still down and the restart waits until rank 7 holds it, so the
# outcome does not depend on timing; the wait is long (8 s) so that a
# loaded machine restarts 21 well within it.

test_expect_success PYTHON3 'a request to a restarting rank waits for its rejoin and is answered by the new incarnation' '
	cat >rejoin.sh <<-\EOT &&
	stat7 () {
		bgn overlay-status -r 7 --json | tr -d " \n"
	}
	bgn fault kill 21 || exit 1
	i=0
	until stat7 | grep -q "\"down_ranks\":\[21\]"; do
		i=$((i+1)); test $i -lt 200 || exit 1; sleep 0.05
	done
	( bgn --rank 7 rpc -r 21 broker.ping >rejoin.ping 2>rejoin.err
	  echo rc=$? >rejoin.rc ) &
	i=0
	until stat7 | grep -q "\"rejoin_waits\":1"; do
		i=$((i+1)); test $i -lt 200 || exit 1; sleep 0.05
	done
	bgn fault restart 21 || exit 1
	wait
	bgn overlay-status -r 7 --json >rejoin.status7
	EOT
	bgn start --size=32 --keep-going $FAST -o overlay.rejoin_wait=8s \
		sh ./rejoin.sh >rejoin.out 2>rejoin.start.err &&
	cat rejoin.rc rejoin.ping rejoin.err &&
	grep "^rc=0$" rejoin.rc &&
	grep "\"rank\":21" rejoin.ping &&
	jq_py rejoin.status7 "o[\"counters\"][\"rejoin_waits\"] == 1 and o[\"counters\"][\"rejoin_wait_expired\"] == 0"
'

test_expect_success PYTHON3 'a request to a rank that does not come back fails: it did not run' '
	cat >norejoin.sh <<-\EOT &&
	bgn fault kill 3 || exit 1
	i=0
	until bgn overlay-status -r 1 --json | tr -d " \n" \
		| grep -q "\"down_ranks\":\[3\]"; do
		i=$((i+1)); test $i -lt 200 || exit 1; sleep 0.05
	done
	bgn --rank 1 rpc -r 3 broker.ping >norejoin.ping 2>norejoin.err
	echo rc=$? >norejoin.rc
	bgn overlay-status -r 1 --json >norejoin.status1
	EOT
	bgn start --size=4 --keep-going $FAST -o overlay.rejoin_wait=300ms \
		sh ./norejoin.sh >norejoin.out 2>norejoin.start.err &&
	cat norejoin.rc norejoin.err &&
	grep "^rc=1$" norejoin.rc &&
	grep "rank 3 is down or restarting: no rejoin within 0.3s; the request did not run" norejoin.err &&
	jq_py norejoin.status1 "o[\"counters\"][\"rejoin_wait_expired\"] == 1"
'

# A start-up cut short (--wait-timeout) stops every broker mid-way; the
# overlay, unloaded after the broker's builtins, fails their pending
# requests on the way out.  That crashed a broker (SIGSEGV in hosts.c)
# once in three runs at N=128 on a loaded machine; how often depends on
# timing, so this is a smoke test, not a reliable reproduction.
test_expect_success 'brokers stopped mid start-up exit without a crash' '
	for t in 0.5 0.8 1.2; do
		bgn start --size=128 --wait-timeout=${t}s true 2>cut.err;
		if grep "killed by signal" cut.err; then return 1; fi
	done
'

test_done
