#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-or-later
test_description='bgn as the overlay of flux-broker (bgn-overlay.so)

A flux-broker patched with contrib/flux-core (the broker.overlay-module
attribute) runs bgn-overlay.so in place of its TBON.  Flux'\''s own
requests, responses and events then cross the BGN: a 4-broker instance
runs jobs, KVS and events across brokers and ends cleanly; in a 16-broker
one, SIGKILL of rank 1 (an interior broker of a kary:2 tree) leaves a job
on ranks 3, 4, 7, 8 to complete and every other broker online and
reachable, and the instance still ends; SIGSTOP makes a broker torpid to
Flux within peer_timeout + keepalive_interval, SIGCONT brings it back.
Booted from a [bootstrap] hosts table (a system instance'\''s way), a
killed broker restarted by hand rejoins.

Skipped unless configure found flux-core and its broker knows
broker.overlay-module (BGN_TEST_FLUX names another flux command, say a
patched one beside an unpatched one).'

. "$(dirname "$0")/sharness.sh"

if test "$BGN_HAVE_FLUX" != yes; then
	skip_all="flux-core not found: ${BGN_FLUX_WHY:-configure found no flux-core}"
	test_done
fi

# Not with-bgn: it would have flux-modprobe load bgn.so beside it.
OV="$BGN_TOP_BUILDDIR/src/flux/.libs/bgn-overlay.so"
FLUX=${BGN_TEST_FLUX:-${BGN_FLUX:-flux}}
PATH="$(dirname "$FLUX"):$PATH"
export PATH

if ! timeout 60 "$FLUX" start --test-size=1 \
	-Sbroker.overlay-module="$OV" -Sbroker.rc1_path= -Sbroker.rc3_path= \
	true >probe.out 2>&1; then
	if grep -q "overlay-module.*unknown attribute\|unknown attribute.*overlay-module" probe.out; then
		why="$FLUX has no broker.overlay-module attribute"
	else
		why="$FLUX start with bgn-overlay.so failed: $(grep -v "^flux-start" probe.out | tail -1)"
	fi
	skip_all="$why (apply contrib/flux-core/overlay-module.patch to flux-core 0.88.0, or set BGN_TEST_FLUX to a patched flux)"
	test_done
fi

mkdir conf
cat >conf/bgn.toml <<-EOT
[bgn]
bind = "tcp://127.0.0.1:*"
keepalive_interval = "200ms"
peer_timeout = "2s"
EOT

start () {
	size=$1; shift
	timeout -s KILL 280 "$FLUX" start --test-size=$size -c conf \
		--test-exit-mode=leader --test-exit-timeout=120 \
		-Sbroker.overlay-module="$OV" "$@"
}

cat >small.sh <<-'EOT'
#!/bin/sh
flux exec -r all flux getattr rank | sort -n | tr '\n' ' '; echo
flux run -N4 -n4 flux getattr rank | sort -n | tr '\n' ' '; echo
flux kvs put t5100.key=across && flux exec -r 3 flux kvs get t5100.key
flux exec -r 2 sh -c 'flux event sub -c 1 t5100.ev >ev2.out 2>&1 &'
sleep 1
flux exec -r 3 flux event pub t5100.ev '{"from":3}'
sleep 1
cat ev2.out
flux getattr broker.overlay-module
flux getattr tbon.descendants
flux overlay status --summary
EOT
chmod +x small.sh

test_expect_success 'four brokers: exec, jobs, KVS and events cross the BGN' '
	start 4 ./small.sh >small.out 2>small.err &&
	cat small.out &&
	sed -n 1p small.out | grep "^0 1 2 3 $" &&
	sed -n 2p small.out | grep "^0 1 2 3 $" &&
	grep "^across$" small.out &&
	grep "^t5100.ev.*\"from\":3" small.out &&
	grep "bgn-overlay.so$" small.out &&
	grep "^3$" small.out
'

test_expect_success 'the overlay'\''s status reads full, and the instance ended by itself' '
	grep "full" small.out &&
	test_must_fail grep "Exit timeout\|shutdown delayed" small.err
'

cat >kill.sh <<-'EOT'
#!/bin/sh
say () { echo "SCENARIO $*"; }
pid1=$(flux exec -r 1 flux getattr broker.pid)
id=$(flux submit -N4 -n4 --requires=rank:3,4,7,8 \
	sh -c "sleep 6; echo done-\$(flux getattr rank)")
flux job wait-event -t 60 $id start >/dev/null && say started
sleep 1
kill -9 $pid1 && say killed
flux job attach $id >job.out 2>job.err; say "job $? $(sort job.out | tr '\n' ' ')"
n=0; for r in 0 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do
	timeout 20 flux exec -r $r true && n=$((n+1)); done; say "exec $n"
n=0; for r in 0 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do
	timeout 20 flux ping -c 1 $r >/dev/null && n=$((n+1)); done; say "ping $n"
say "offline $(flux resource status -s offline -no {ranks})"
timeout 120 flux run -N15 -n15 --requires=-rank:1 flux getattr rank \
	| sort -n | tr '\n' ' ' | sed 's/^/SCENARIO run15 /'; echo
flux kvs put t5100.after=kill && say "kvs $(flux exec -r 7 flux kvs get t5100.after)"
flux exec -r 8 sh -c 'flux event sub -c 1 t5100.k >ev8.out 2>&1 &'
sleep 1; flux event pub t5100.k; sleep 2; say "event $(cut -f1 ev8.out)"
EOT
chmod +x kill.sh

test_expect_success 'sixteen brokers, rank 1 killed: its former subtree stays in the instance' '
	start 16 -Slog-stderr-level=5 ./kill.sh >kill.out 2>kill.err &&
	cat kill.out &&
	grep "^SCENARIO started" kill.out &&
	grep "^SCENARIO killed" kill.out &&
	grep "^SCENARIO job 0 done-3 done-4 done-7 done-8 $" kill.out &&
	grep "^SCENARIO exec 15$" kill.out &&
	grep "^SCENARIO ping 15$" kill.out &&
	grep "^SCENARIO offline 1$" kill.out &&
	grep "^SCENARIO run15 0 2 3 4 5 6 7 8 9 10 11 12 13 14 15 $" kill.out &&
	grep "^SCENARIO kvs kill$" kill.out &&
	grep "^SCENARIO event t5100.k$" kill.out
'

test_expect_success 'and the instance ended without waiting on the dead broker' '
	test_must_fail grep "Exit timeout\|shutdown delayed" kill.err
'

# The end of an instance goes from the leaves up, as the TBON's: each rank
# waits for its children in the BGN's broadcast tree (rank 2 for 3, rank
# 4 for 5 and 6, ...) before its rc3 and goodbye, so that no rank is left
# without a path to rank 0 for its goodbye (which made it exit 1).
test_expect_success 'thirty-two brokers end from the leaves up: every goodbye heard, none exits 1' '
	start 32 -Slog-stderr-level=6 -Slog-stderr-mode=local \
		flux exec -r all true >end.out 2>end.err &&
	test_must_fail grep "exited with rc\|goodbye to rank 0\|did not leave" end.err &&
	grep "broker.info\[2\]: children-complete" end.err &&
	grep "broker.info\[16\]: children-complete" end.err &&
	grep "broker.info\[3\]: children-none" end.err
'

cat >stop.sh <<-'EOT'
#!/bin/sh
torpid () { flux resource status -s torpid -no "{ranks}"; }
pid=$(flux exec -r 5 flux getattr broker.pid)
kill -STOP $pid
i=0; while test "$(torpid)" != 5 && test $i -lt 300; do sleep 0.1; i=$((i+1)); done
echo "torpid $(torpid)"
kill -CONT $pid
i=0; while test -n "$(torpid)" && test $i -lt 300; do sleep 0.1; i=$((i+1)); done
echo "after cont [$(torpid)]"
timeout 20 flux exec -r 5 flux getattr rank
EOT
chmod +x stop.sh

test_expect_success 'SIGSTOP makes a broker torpid to Flux, SIGCONT brings it back' '
	start 8 ./stop.sh >stop.out 2>stop.err &&
	cat stop.out &&
	grep "^torpid 5$" stop.out &&
	grep "^after cont \[\]$" stop.out &&
	grep "^5$" stop.out
'

# A system instance boots from its [bootstrap] hosts table, not PMI: the
# brokers here are fake0-7 on this host (--test-hosts), each bound to an
# ipc socket in a short directory, with the certificate flux keygen makes.
# Nothing is exchanged, so a broker restarted by hand rejoins.  Eight:
# ranks 3 and 5 are no neighbours of rank 0, so what they ask of it is
# relayed.
IPCDIR=$(mktemp -d /tmp/bgnt5100.XXXXXX) || exit 1
trap 'rc=$?; rm -rf "$IPCDIR"; (exit $rc); die' EXIT
mkdir tconf
grep -v "^bind" conf/bgn.toml >tconf/bgn.toml
cat >tconf/bootstrap.toml <<-EOT
[bootstrap]
curve_cert = "$PWD/tconf/cert"
[[bootstrap.hosts]]
host = "fake[0-7]"
bind = "ipc://$IPCDIR/%h"
connect = "ipc://$IPCDIR/%h"
EOT

cat >restart.sh <<-'EOT'
#!/bin/bash
status () { flux overlay status 2>/dev/null | grep " 1 fake1: "; }
pid=$(flux exec -r 1 flux getattr broker.pid)
mapfile -d "" -t args </proc/$pid/cmdline
mapfile -d "" -t envs </proc/$pid/environ
kill -9 $pid
i=0; until status | grep -q "lost\|offline" || test $i -ge 100; do
	sleep 0.2; i=$((i+1)); done
echo "after kill: $(status)"
env -i "${envs[@]}" "${args[@]}" >r1.out 2>&1 &
i=0; until status | grep -q full || test $i -ge 150; do
	sleep 0.2; i=$((i+1)); done
echo "after restart: $(status)"
echo "exec $(flux exec -r all flux getattr rank | sort -n | tr '\n' ' ')"
echo "method $(flux exec -r 1 flux getattr broker.boot-method)"
flux overlay disconnect fake6 >/dev/null 2>&1; echo "disconnect $?"
i=0; until flux overlay status --timeout=0 --down --no-pretty | grep -q fake6 \
	|| test $i -ge 100; do sleep 0.2; i=$((i+1)); done
echo "down: $(flux overlay status --timeout=0 --down --no-pretty | grep fake6)"
echo "exec2 $(flux exec -r 0-5,7 flux getattr rank | sort -n | tr '\n' ' ')"
EOT
chmod +x restart.sh

test_expect_success 'booted from a [bootstrap] hosts table, a broker killed and restarted rejoins; flux overlay disconnect drops one' '
	"$FLUX" keygen tconf/cert &&
	timeout -s KILL 200 "$FLUX" start --test-size=8 --test-hosts=fake[0-7] \
		--config-path=tconf --test-exit-mode=leader \
		--test-exit-timeout=60 -Sbroker.overlay-module="$OV" \
		./restart.sh >restart.out 2>restart.err &&
	cat restart.out &&
	grep "^after kill: .*1 fake1: \(lost\|offline\)" restart.out &&
	grep "^after restart: .*1 fake1: full" restart.out &&
	grep "^exec 0 1 2 3 4 5 6 7 $" restart.out &&
	grep "^method config$" restart.out &&
	grep "^disconnect 0$" restart.out &&
	grep "^down: 6 fake6: lost administrative disconnect$" restart.out &&
	grep "^exec2 0 1 2 3 4 5 7 $" restart.out
'

test_expect_success 'a [bootstrap] table whose certificate others may read is refused, named' '
	mkdir badconf &&
	sed "s|tconf/cert|badconf/cert|" tconf/bootstrap.toml >badconf/bootstrap.toml &&
	"$FLUX" keygen badconf/cert && chmod 644 badconf/cert &&
	test_must_fail timeout -s KILL 60 "$FLUX" start --test-size=8 \
		--test-hosts=fake[0-7] --config-path=badconf \
		-Sbroker.overlay-module="$OV" true 2>bad.err &&
	grep "badconf/cert is readable or writable by group or others" bad.err
'

# Flux boots one broker from a [bootstrap] that lists no hosts (flux-core's
# t0013 tests 18-19); bgn-overlay.so refused it ("[bootstrap] has no
# bootstrap.hosts").
test_expect_success 'one broker from a [bootstrap] with no hosts, or an empty list' '
	mkdir lone1 lone2 &&
	printf "[bootstrap]\n" >lone1/bootstrap.toml &&
	printf "[bootstrap]\nhosts = [\n]\n" >lone2/bootstrap.toml &&
	for c in lone1 lone2; do
		timeout -s KILL 60 "$FLUX" broker -Sbroker.overlay-module="$OV" \
			-c $c flux getattr broker.boot-method >$c.out || return 1
	done &&
	grep "^config$" lone1.out && grep "^config$" lone2.out
'

test_done
