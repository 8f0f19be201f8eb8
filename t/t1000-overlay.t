#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-or-later
test_description='overlay routing: hop counts, all pairs, services, TTL, security'

. "$(dirname "$0")/sharness.sh"

BFS="$SHARNESS_TEST_SRCDIR/scripts/bfs.py"

# ping_all_from_0 TOPOLOGY SIZE: in an instance of SIZE brokers, ping
# every rank from rank 0 and compare each reported hop count with an
# independent BFS of the topology.
ping_all_from_0 () {
	topo=$1 size=$2
	"$PYTHON3" "$BFS" $topo $size 0 >expected.$topo.$size &&
	bgn start --size=$size --topology=$topo --log-file=brokers.$topo.$size \
		sh -c "
		r=0
		while test \$r -lt $size; do
			bgn ping --count=1 \$r | sed -n \"s/^reply from rank \\([0-9]*\\): seq=0 hops=\\([0-9]*\\) .*/\\1 \\2/p\" || exit 1
			r=\$((r+1))
		done" >actual.$topo.$size ||
		{ tail -n 30 brokers.$topo.$size; false; } &&
	test_cmp expected.$topo.$size actual.$topo.$size
}

for size in 1 2 3 7 16 33 64; do
	test_expect_success PYTHON3 "bgn, $size brokers: every rank answers rank 0 in BFS hops" "
		ping_all_from_0 bgn $size
	"
done

for topo in bgn:4 kary:2 binomial; do
	for size in 7 16 33; do
		test_expect_success PYTHON3 "$topo, $size brokers: hops equal BFS distance" "
			ping_all_from_0 $topo $size
		"
	done
done

test_expect_success PYTHON3 'all pairs at N=16: every rank pings every rank in BFS hops' '
	for s in $(seq 0 15); do
		"$PYTHON3" "$BFS" bgn 16 $s | sed "s/^/$s /"
	done >expected.pairs &&
	bgn start --size=16 sh -c "
		for s in \$(seq 0 15); do
			for d in \$(seq 0 15); do
				bgn --rank \$s ping --count=1 \$d | sed -n \"s/^reply from rank \\([0-9]*\\): seq=0 hops=\\([0-9]*\\) .*/\$s \\1 \\2/p\" || exit 1
			done
		done" >actual.pairs &&
	test_cmp expected.pairs actual.pairs
'

test_expect_success 'bgn start --size=64 bgn ping --count=1 63 answers in BFS hops' '
	bgn start --size=64 bgn ping --count=1 63 >p63 &&
	grep "reply from rank 63: seq=0 hops=1 " p63
'

test_expect_success 'requests from non-zero ranks route through the overlay' '
	bgn start --size=7 bgn --rank 5 ping --count=2 --interval=10ms 2 >p52 &&
	test $(grep -c "reply from rank 2:" p52) -eq 2
'

# --route traces the brokers on the way (overlay.trace, the owner's):
# from rank 3 that needs rank 3 in broker.admin_ranks.
test_expect_success 'responses route by the top of the route stack (origin rank, client)' '
	bgn start --size=16 -o broker.admin_ranks=\"0,3\" \
		bgn --rank 3 ping --route --count=1 12 >route.out &&
	grep "reply from rank 12" route.out &&
	grep "^  route: 3 -> [0-9]* -> 12$" route.out &&
	grep "^  route stack: \[\"+[A-Za-z0-9_-]\{12\}\",\"3\"\]$" route.out
'

test_expect_success 'a service on a non-zero rank is found by name on the way to rank 0' '
	BGN_TEST_SERVICE_RANKS=5 bgn start --size=16 --topology=kary:2 sh -c "
		bgn --rank 11 ping --count=1 testsvc &&
		bgn --rank 5 ping --count=1 testsvc" >svc.out &&
	grep "reply from rank 5: seq=0 hops=1 " svc.out &&
	grep "reply from rank 5: seq=0 hops=0 " svc.out
'

test_expect_success 'a service no broker has gets ENOSYS from rank 0' '
	BGN_TEST_SERVICE_RANKS=5 test_must_fail bgn start --size=16 \
		bgn --rank 9 ping --count=1 nosuchsvc 2>enosys.err &&
	grep "Function not implemented" enosys.err
'

test_expect_success 'service-addressed requests find the service in a bgn too' '
	BGN_TEST_SERVICE_RANKS=0 bgn start --size=16 sh -c "
		for r in 3 9 14; do bgn --rank \$r ping --count=1 testsvc || exit 1; done" >svc2.out &&
	test $(grep -c "reply from rank 0:" svc2.out) -eq 3
'

test_expect_success 'a routing loop is cut by the TTL with an error response' '
	BGN_OVERLAY_TEST_LOOP=3 bgn start --size=4 sh -c "
		bgn ping --count=1 --timeout=5s 3 2>loop.err; echo rc=\$? >loop.rc
		bgn overlay-status --json -r 1 >loop.status1
		bgn overlay-status --json -r 0 >loop.status0" &&
	grep "rc=1" loop.rc &&
	grep "No route to host" loop.err &&
	grep "TTL" loop.err &&
	cat loop.status0 loop.status1 | grep "\"ttl_drops\": [1-9]"
'

test_expect_success 'an unauthorized CURVE key is refused by the ZAP handler and logged' '
	bgn start --size=4 --log-file=zap.log sh -c "
		bgn overlay-status --json -r 1 >zap.status &&
		ep=\$(sed -n \"s/.*\\\"endpoint\\\": \\\"\\(.*\\)\\\".*/\\1/p\" zap.status) &&
		key=\$(sed -n \"s/.*\\\"pubkey\\\": \\\"\\(.*\\)\\\".*/\\1/p\" zap.status) &&
		inst=\$(sed -n \"s/.*\\\"instance\\\": \\\"\\(.*\\)\\\".*/\\1/p\" zap.status) &&
		bgn-test-garbage --rogue \$ep \$inst 0 \$key; echo rogue=\$? >zap.rc
		sleep 0.2
		bgn overlay-status --json -r 1 >zap.after
		bgn ping --count=1 1" >zap.out 2>zap.err &&
	grep "rogue=3" zap.rc &&
	grep "\"auth_failures\": [1-9]" zap.after &&
	grep "CURVE key not authorized" zap.log &&
	grep "reply from rank 1" zap.out
'

test_expect_success 'without CURVE, a hello for another instance is refused and logged' '
	bgn start --size=4 --log-file=nak.log -o overlay.curve=false sh -c "
		bgn overlay-status --json -r 1 >nak.status &&
		ep=\$(sed -n \"s/.*\\\"endpoint\\\": \\\"\\(.*\\)\\\".*/\\1/p\" nak.status) &&
		bgn-test-garbage --rogue \$ep not-this-instance 0; echo rogue=\$? >nak.rc
		bgn ping --count=1 3" >nak.out 2>nak.err &&
	grep "rogue=0" nak.rc &&
	grep "hello refused: peer belongs to another instance" nak.log &&
	grep "reply from rank 3" nak.out
'

test_expect_success 'the overlay reports full health and its peers' '
	bgn start --size=16 sh -c "
		bgn overlay-status --summary &&
		bgn overlay-status --wait=full --timeout=5s &&
		bgn overlay-status" >status.out &&
	grep "^full$" status.out &&
	grep "overlay full: size 16, topology bgn" status.out &&
	test $(grep -c " up " status.out) -eq 7
'

test_expect_success MPIEXEC 'mpiexec -n 4 bgn-broker forms a 4-broker overlay' '
	"$MPIEXEC" -n 4 bgn-broker "--rundir=$PWD/mpi%r" \
		-o overlay.bind=\"tcp://127.0.0.1:*\" >mpi.log 2>&1 &
	pid=$! &&
	i=0 && while ! test -S mpi0/local && test $i -lt 200; do sleep 0.05; i=$((i+1)); done &&
	bgn "--uri=ipc://$PWD/mpi0/local" overlay-status --wait=full --timeout=10s &&
	bgn "--uri=ipc://$PWD/mpi0/local" ping --count=1 3 >mpi.ping &&
	grep "reply from rank 3: seq=0 hops=1 " mpi.ping &&
	for r in 0 1 2 3; do
		bgn "--uri=ipc://$PWD/mpi$r/local" rpc broker.shutdown || return 1
	done &&
	wait $pid
'

test_done
