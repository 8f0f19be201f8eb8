#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-or-later
test_description='clients notice a broker that is gone: streams and waits end with one line, within the bound'

. "$(dirname "$0")/sharness.sh"

# Far more than the 5 s bound (an exiting or killed broker is noticed in
# milliseconds): a loaded machine must not fail these.
BOUND=30

# watch.sh NAME CMD...: run "bgn CMD..." against rank 1 in the
# background; when it exits, NAME.rc holds its exit status and NAME.err
# its stderr.  Outlives the instance that started it.
cat >watch.sh <<'EOT'
name=$1; shift
( bgn --rank 1 "$@" >$name.out 2>$name.err; echo $? >$name.rc.tmp;
  mv $name.rc.tmp $name.rc ) &
EOT

# started NAME: wait until watcher NAME is connected and waiting: its
# --ready file (event sub), its first line (overlay-trace), or a moment
# (overlay-status --wait prints nothing while it waits).
cat >started.sh <<'EOT'
i=0
while test $i -lt 300; do
	case $1 in
	sub) test -e sub.ready && exit 0 ;;
	trace) grep -q tracing trace.err 2>/dev/null && exit 0 ;;
	wait) sleep 1; exit 0 ;;
	esac
	sleep 0.05; i=$((i + 1))
done
echo "$1 did not start" >&2; exit 1
EOT

# ended NAME: NAME.rc appears within $BOUND s, is not 0, and NAME.err
# says which broker went away.
ended () {
	i=0
	while ! test -e $1.rc; do
		test $i -lt $((BOUND * 10)) || { echo "$1 still running" >&2; return 1; }
		sleep 0.1; i=$((i + 1))
	done
	cat $1.err &&
	test "$(cat $1.rc)" -ne 0 &&
	grep -E "^bgn [a-z -]+: broker at ipc://.*/1/local went away $2" $1.err
}

start_all () {
	rm -f sub.* trace.* wait.* &&
	cat >watchers.sh <<-\EOT
	sh ./watch.sh sub event sub --ready=sub.ready zz. &&
	sh ./watch.sh trace overlay-trace &&
	sh ./watch.sh wait overlay-status --wait=degraded --timeout=0 &&
	sh ./started.sh sub && sh ./started.sh trace && sh ./started.sh wait
	EOT
}

test_expect_success 'the instance ends: each streaming command exits 1 naming the broker' '
	start_all &&
	bgn start --size=2 sh ./watchers.sh &&
	ended sub "after 0 events" &&
	ended trace "after [0-9]+ messages traced" &&
	ended wait "while waiting for degraded \(last seen: full\)"
'

test_expect_success 'its broker is SIGKILLed: each exits 1 naming the broker' '
	start_all &&
	cat >kill.sh <<-\EOT &&
	sh ./watchers.sh &&
	bgn event pub zz.one &&
	while ! grep -q zz.one sub.out; do sleep 0.05; done &&
	bgn fault kill 1 &&
	for n in sub trace wait; do
		i=0
		while ! test -e $n.rc && test $i -lt 300; do sleep 0.1; i=$((i + 1)); done
	done
	# ended while the instance still ran: not by its end
	test -e sub.rc && test -e trace.rc && test -e wait.rc
	EOT
	bgn start --size=2 sh ./kill.sh &&
	ended sub "after 1 events" &&
	ended trace "after [0-9]+ messages traced" &&
	ended wait "while waiting for degraded"
'

test_expect_success 'its broker hangs (SIGSTOP): heartbeats end the stream (--broker-timeout)' '
	rm -f hung.* &&
	cat >hung.sh <<-\EOT &&
	( bgn --broker-timeout=1s --rank 1 event sub --ready=hung.ready zz. \
		>hung.out 2>hung.err; echo $? >hung.rc ) &
	while ! test -e hung.ready; do sleep 0.05; done &&
	bgn fault stop 1 &&
	i=0
	while ! test -e hung.rc && test $i -lt 300; do sleep 0.1; i=$((i + 1)); done
	bgn fault cont 1
	test -e hung.rc
	EOT
	bgn start --size=2 sh ./hung.sh &&
	ended hung "after 0 events"
'

test_expect_success 'a bad --broker-timeout is refused in one line' '
	test_must_fail bgn --broker-timeout=soon ping 0 2>bad.err &&
	test $(wc -l <bad.err) -eq 1 &&
	grep "broker-timeout: .soon. is not a duration" bad.err
'

test_expect_success PYTHON3 'event sub --reconnect: every event after the restart, once, in order; the gap reported' '
	rm -f re.* &&
	cat >re.sh <<-\EOT &&
	bgn --rank 1 event sub --reconnect=30s --json --count=6 --ready=re.ready zz. \
		>re.out 2>re.err &
	while ! test -e re.ready; do sleep 0.05; done
	for i in 1 2 3; do bgn event pub zz.a "{\"i\":$i}" || exit 1; done
	while test $(wc -l <re.out) -lt 3; do sleep 0.05; done
	bgn fault kill 1 &&
	for i in 4 5 6; do bgn event pub zz.a "{\"i\":$i}" || exit 1; done
	bgn fault restart 1 &&
	i=0
	while ! grep -q resubscribed re.err; do
		test $i -lt 300 || exit 1
		sleep 0.1; i=$((i + 1))
	done
	for i in 7 8 9; do bgn event pub zz.a "{\"i\":$i}" || exit 1; done
	wait
	EOT
	bgn start --size=3 sh ./re.sh &&
	cat re.out re.err &&
	grep "^bgn event sub: broker at ipc://.*/1/local went away after 3 events; reconnecting (for up to 30s)$" re.err &&
	"$PYTHON3" - re.out re.err <<-\EOT
	import json, re, sys
	evs = [json.loads(l) for l in open(sys.argv[1])]
	err = open(sys.argv[2]).read()
	got = [e["payload"]["i"] for e in evs]
	assert got == [1, 2, 3, 7, 8, 9], got
	seqs = [e["seq"] for e in evs]
	assert seqs == sorted(set(seqs)), seqs
	m = re.search(r"resumes at seq (\d+); missed seq (\d+)\.\.(\d+) "
	              r"\((\d+) events published while away\)", err)
	assert m, err
	at, lo, hi, n = map(int, m.groups())
	# the gap starts after the last event seen and covers 4..6
	assert lo == seqs[2] + 1 and hi >= seqs[2] + 3 and n == hi - lo + 1, m.groups()
	assert at == hi + 1 and seqs[3] >= at, (at, seqs)
	EOT
'

# broker.sh NAME: a one-broker instance on ./rd (its pid in NAME.pid);
# waits for its socket.
cat >broker.sh <<'EOT'
bgn-broker --boot=single --rundir="$PWD/rd" </dev/null >$1.out 2>$1.err &
echo $! >$1.pid
i=0
while ! test -S rd/local; do
	test $i -lt 300 || exit 1; sleep 0.05; i=$((i + 1))
done
EOT

# waitfor SECS CMD...: until CMD succeeds, for up to SECS seconds
waitfor () {
	_n=$(($1 * 10)); shift
	while ! "$@"; do
		test $_n -gt 0 || { echo "never: $*" >&2; return 1; }
		sleep 0.1; _n=$((_n - 1))
	done
}

test_expect_success 'event sub --reconnect to a new instance on the same socket says so' '
	rm -rf rd ni.* b1.* b2.* && mkdir -m 700 rd &&
	test_when_finished "kill \$(cat b1.pid b2.pid ni.pid 2>/dev/null) 2>/dev/null; :" &&
	sh ./broker.sh b1 &&
	u="ipc://$PWD/rd/local" || return 1
	( bgn --uri="$u" event sub --reconnect=30s --json --count=4 \
		--ready=ni.ready zz. >ni.out 2>ni.err; echo $? >ni.rc ) \
		</dev/null >/dev/null 2>&1 &
	echo $! >ni.pid &&
	waitfor $BOUND test -e ni.ready &&
	bgn --uri="$u" event pub zz.a "{\"i\":1}" &&
	bgn --uri="$u" event pub zz.a "{\"i\":2}" &&
	waitfor $BOUND grep -q "\"i\":2" ni.out &&
	kill -9 $(cat b1.pid) &&
	sh ./broker.sh b2 &&
	waitfor $BOUND grep -q resubscribed ni.err &&
	bgn --uri="$u" event pub zz.a "{\"i\":3}" &&
	bgn --uri="$u" event pub zz.a "{\"i\":4}" &&
	waitfor $BOUND test -e ni.rc &&
	cat ni.out ni.err &&
	test "$(cat ni.rc)" = 0 &&
	test "$(sed "s/.*\"seq\":\([0-9]*\).*\"i\":\([0-9]*\).*/\1:\2/" ni.out | tr "\n" " ")" = "1:1 2:2 1:3 2:4 " &&
	grep "went away after 2 events; reconnecting" ni.err &&
	grep "resubscribed at $u, a new instance (.*): the stream resumes at seq 1 of its own sequence" ni.err
'

test_expect_success 'event sub --reconnect gives up when no broker comes back' '
	rm -f gone.* &&
	cat >gone.sh <<-\EOT &&
	( bgn --rank 1 event sub --reconnect=1s --ready=gone.ready zz. \
		>gone.out 2>gone.err; echo $? >gone.rc ) &
	while ! test -e gone.ready; do sleep 0.05; done
	EOT
	bgn start --size=2 sh ./gone.sh &&
	i=0 &&
	while ! test -e gone.rc; do
		test $i -lt $((BOUND * 10)) || return 1
		sleep 0.1; i=$((i + 1))
	done &&
	cat gone.err &&
	test "$(cat gone.rc)" -ne 0 &&
	grep "went away after 0 events; reconnecting (for up to 1s)" gone.err &&
	grep "no broker came back at ipc://.*/1/local within 1s" gone.err
'

test_done
