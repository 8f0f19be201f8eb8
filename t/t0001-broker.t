#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-or-later
test_description='a single broker: start, ping, info, bad input, clean exit'

. "$(dirname "$0")/sharness.sh"

test_expect_success 'bgn start --size=1 runs a command and returns its status' '
	bgn start --size=1 true &&
	test_expect_code 3 bgn start --size=1 sh -c "exit 3"
'

test_expect_success 'the README main job works with bgn not in PATH' '
	env PATH=/usr/bin:/bin "$BGN_TOP_BUILDDIR/src/cmd/bgn" start --size=2 \
		bgn overlay-status >main.out &&
	grep "^overlay full: size 2, topology bgn" main.out
'

test_expect_success 'bgn ping --count=3 0 prints three reply lines' '
	bgn start --size=1 bgn ping --count=3 --interval=10ms 0 >ping.out &&
	test $(grep -c "^reply from rank 0: seq=[0-2] hops=0 time=" ping.out) -eq 3 &&
	grep "3 sent, 3 received, 0% lost" ping.out
'

test_expect_success 'broker.info reports rank, size, version and bootstrap' '
	bgn start --size=1 bgn rpc -n 0 broker.info >info.json &&
	grep "\"rank\":0" info.json &&
	grep "\"size\":1" info.json &&
	grep "\"bootstrap\":\"pmi\"" info.json &&
	grep "\"version\":" info.json &&
	grep "\"uptime\":" info.json
'

test_expect_success 'bgn start tells its brokers its PMI server takes pipelined gets' '
	cat >pipeline.sh <<-\EOF &&
	while read rank pid rest; do
		tr "\000" "\n" </proc/$pid/environ >env.$rank &&
		grep -qx BGN_PMI_PIPELINE=1 env.$rank || exit 1
	done <"$BGN_RUNDIR/brokers"
	EOF
	bgn start --size=2 sh pipeline.sh
'

test_expect_success 'broker.module-list names the overlay module' '
	bgn start --size=1 bgn rpc broker.module-list >mods.json &&
	grep "overlay-bgn" mods.json
'

test_expect_success 'ping to a rank that does not exist fails with EHOSTUNREACH' '
	test_must_fail bgn start --size=1 bgn ping 5 2>err &&
	grep "No route to host" err
'

test_expect_success 'ping to an unknown service fails with ENOSYS' '
	test_must_fail bgn start --size=1 bgn ping nosuchservice 2>err &&
	grep "Function not implemented" err
'

test_expect_success 'a bad config key stops bgn start with a clear error' '
	cat >bad.toml <<-EOT &&
	[overlay]
	topolgy = "bgn"
	EOT
	test_must_fail bgn start --size=2 --config=bad.toml true 2>err &&
	grep "topolgy" err &&
	grep "rank" err
'

test_expect_success 'a TOML syntax error names file, line and column' '
	printf "[overlay]\ntopology = \n" >syntax.toml &&
	test_expect_code 1 bgn-broker -c syntax.toml 2>err &&
	grep "syntax.toml:2:" err
'

test_expect_success 'a bad -o override names the key' '
	test_expect_code 1 bgn-broker -o overlay.ttl=0x1000 2>err &&
	grep "overlay.ttl" err
'

test_expect_success 'unknown command and options give usage and exit 1' '
	test_expect_code 1 bgn nosuchcommand 2>err &&
	grep "not a bgn command" err &&
	test_expect_code 1 bgn ping --bogus 0 2>err &&
	test $(wc -l <err) -eq 1 &&
	grep "^bgn ping: unknown option .--bogus.; see .bgn ping --help.$" err &&
	test_expect_code 1 bgn-broker --bogus 2>err &&
	grep "Usage" err &&
	test_expect_code 1 bgn 2>err &&
	grep "Usage" err
'

test_expect_success 'help is available for every command' '
	bgn help >help.out &&
	grep "start" help.out && grep "ping" help.out &&
	bgn ping --help | grep "Usage: bgn ping" &&
	bgn help start | grep "Usage: bgn start" &&
	bgn-broker --help | grep "Usage: bgn-broker"
'

test_expect_success 'no brokers are left behind after bgn start' '
	bgn start --size=4 sh -c "cat \$BGN_RUNDIR/brokers" >pids &&
	test $(wc -l <pids) -eq 4 &&
	pids_gone pids
'

test_expect_success 'killing bgn start with SIGKILL takes its brokers with it' '
	bgn start --size=3 sh -c "cat \$BGN_RUNDIR/brokers >pids2; exec sleep 60" &
	start_pid=$! &&
	i=0 && while ! test -s pids2 && test $i -lt 200; do sleep 0.05; i=$((i+1)); done &&
	test -s pids2 &&
	kill -9 $start_pid &&
	pids_gone pids2
'

test_expect_success 'a broker that dies ends the instance with an error naming it' '
	cat >kill2.sh <<-\EOT &&
	kill -9 $(awk "\$1 == 2 {print \$2}" $BGN_RUNDIR/brokers)
	exec sleep 30
	EOT
	test_must_fail bgn start --size=3 sh ./kill2.sh 2>err &&
	grep "rank 2 killed by signal 9" err
'

test_expect_success 'SIGTERM to a broker gives an orderly shutdown' '
	bgn-broker "--rundir=$PWD/rd1" --overlay=none &
	pid=$! &&
	i=0 && while ! test -S rd1/local && test $i -lt 100; do sleep 0.05; i=$((i+1)); done &&
	bgn "--uri=ipc://$PWD/rd1/local" ping 0 &&
	kill -TERM $pid &&
	wait $pid &&
	! test -e rd1
'

test_expect_success 'broker.shutdown stops a broker' '
	bgn-broker "--rundir=$PWD/rd2" --overlay=none &
	pid=$! &&
	i=0 && while ! test -S rd2/local && test $i -lt 100; do sleep 0.05; i=$((i+1)); done &&
	bgn "--uri=ipc://$PWD/rd2/local" rpc broker.shutdown &&
	wait $pid
'

test_expect_success 'garbage from a client is dropped and counted; the broker survives' '
	bgn start --size=1 sh -c "
		bgn-test-garbage \$BGN_URI &&
		bgn ping 0 &&
		bgn rpc -n 0 broker.info" >garbage.out &&
	grep "reply from rank 0" garbage.out &&
	grep "\"client_drops\":[1-9]" garbage.out
'

test_expect_success 'libclient does not allocate per request once warm' '
	bgn start --size=1 bgn-test-client allocs 1000 >allocs.out &&
	grep "^rpcs=2000 " allocs.out &&
	a=$(sed -n "s/.*allocs=\\([0-9]*\\).*/\\1/p" allocs.out) &&
	test -n "$a" && test "$a" -lt 100
'

test_expect_success 'a 60 kB payload crosses a broker and the overlay intact (zero-copy sends)' '
	big=$(head -c 60000 /dev/zero | tr "\\0" x) &&
	bgn start --size=2 sh -c "
		bgn rpc broker.ping \"{\\\"big\\\":\\\"$big\\\"}\" >big0.out &&
		bgn rpc -r 1 broker.ping \"{\\\"big\\\":\\\"$big\\\"}\" >big1.out" &&
	test $(sed "s/.*\"big\":\"\([^\"]*\)\".*/\1/" big0.out | tr -cd x | wc -c) -eq 60000 &&
	test $(sed "s/.*\"big\":\"\([^\"]*\)\".*/\1/" big1.out | tr -cd x | wc -c) -eq 60000 &&
	grep "\"rank\":1" big1.out
'

test_expect_success 'an RPC to a broker that does not answer times out' '
	bgn-test-garbage --listen "$PWD/silent.sock" &
	pid=$! &&
	i=0 && while ! test -S silent.sock && test $i -lt 100; do sleep 0.05; i=$((i+1)); done &&
	test_must_fail bgn "--uri=ipc://$PWD/silent.sock" ping --timeout=200ms 0 2>err;
	kill $pid; wait $pid;
	grep "timed out" err
'

test_expect_success 'events published on a broker reach its subscribers' '
	bgn start --size=1 sh -c "
		bgn-test-garbage --subscribe \$BGN_URI test. >sub.out &
		sleep 0.3 &&
		bgn rpc -n 0 event.pub \"{\\\"topic\\\":\\\"test.one\\\",\\\"payload\\\":{\\\"x\\\":1}}\" &&
		wait" &&
	grep "test.one seq=1" sub.out
'

test_expect_success MPIEXEC 'mpiexec -n 1 bgn-broker bootstraps through PMI' '
	"$MPIEXEC" -n 1 bgn-broker "--rundir=$PWD/mpi%r" >mpi.out 2>&1 &
	pid=$! &&
	i=0 && while ! test -S mpi0/local && test $i -lt 200; do sleep 0.05; i=$((i+1)); done &&
	bgn "--uri=ipc://$PWD/mpi0/local" rpc -n 0 broker.info >mpiinfo &&
	grep "\"bootstrap\":\"pmi\"" mpiinfo &&
	bgn "--uri=ipc://$PWD/mpi0/local" rpc broker.shutdown &&
	wait $pid
'

test_done
