#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-or-later
test_description='bootstrap methods: --boot, and PMIx under Open MPI mpirun

bgn-broker --boot (bootstrap.method) forces a method and fails clearly when
its launcher is absent.  Then eight brokers start under Open MPI mpirun
(Debian openmpi-bin, a PMIx launcher: it sets PMIX_NAMESPACE and
PMIX_RANK, not PMI_FD), exchange endpoints and keys through libpmix, and
form a full overlay; every rank answers a ping from rank 0 and from rank
7; SIGTERM to mpirun stops every broker cleanly.'

. "$(dirname "$0")/sharness.sh"

# Run directories live outside the trash directory: a unix socket path
# has ~100 bytes and the trash directory name has a space in it.
RD=$(mktemp -d /tmp/bgnpx$$.XXXXXX) || exit 1
MPIRUN_PID=
pmix_cleanup () {
	if test -n "$MPIRUN_PID"; then
		kill -TERM "$MPIRUN_PID" 2>/dev/null
		wait "$MPIRUN_PID" 2>/dev/null
	fi
	# Brokers mpirun failed to stop: ours are the ones using $RD.
	for p in $(pgrep -f "bgn-broker --rundir=$RD/" 2>/dev/null); do
		kill -9 "$p" 2>/dev/null
	done
	rm -rf "$RD"
}
trap 'rc=$?; pmix_cleanup; (exit $rc); die' EXIT
trap 'exit 130' INT TERM

have_pmix () {
	bgn-broker --boot=pmix --overlay=none --rundir="$RD/probe" \
		</dev/null 2>&1 | grep -q "PMIx is unavailable" && return 1
	return 0
}

test_expect_success '--boot rejects an unknown method' '
	test_expect_code 1 bgn-broker --boot=carrier-pigeon --overlay=none \
		2>err &&
	grep "bootstrap.method.*must be auto, pmix, pmi1, static or single" err
'

test_expect_success '--boot=pmi1 without a PMI-1 launcher fails clearly' '
	(unset PMI_FD; test_expect_code 1 bgn-broker --boot=pmi1 \
		--overlay=none --rundir="$RD/x" 2>err) &&
	grep "bootstrap.method is pmi1 but PMI_FD is not set" err
'

test_expect_success '--boot=pmix without a PMIx launcher fails clearly' '
	(unset PMIX_NAMESPACE PMIX_RANK;
	 test_expect_code 1 bgn-broker --boot=pmix --overlay=none \
		--rundir="$RD/x" 2>err) &&
	grep -E "PMIX_NAMESPACE and PMIX_RANK are not set|PMIx is unavailable" err
'

test_expect_success '--boot=static without bootstrap.hosts fails clearly' '
	test_expect_code 1 bgn-broker --boot=static --overlay=none \
		--rundir="$RD/x" 2>err &&
	grep "bootstrap.method is static but the config has no bootstrap.hosts" err
'

test_expect_success '--boot=single runs alone even under a PMI-1 launcher' '
	bgn start --size=2 sh -c "
		bgn-broker --boot=single --overlay=none --rundir=\"$RD/single\" &
		pid=\$!
		i=0; while ! test -S \"$RD/single/local\" && test \$i -lt 200; do
			sleep 0.05; i=\$((i+1)); done
		bgn --uri=ipc://$RD/single/local rpc broker.info >single.json
		bgn --uri=ipc://$RD/single/local rpc broker.shutdown
		wait \$pid" &&
	grep "\"bootstrap\":\"single\"" single.json &&
	grep "\"size\":1," single.json
'

MPIRUN=${MPIRUN_OPENMPI:-$(command -v mpirun.openmpi)}
if test -z "$MPIRUN" || ! test -x "$MPIRUN"; then
	skip_all='mpirun.openmpi not found (apt-get install openmpi-bin); PMIx launch not tested'
	test_done
fi
if ! have_pmix; then
	say "bgn-broker was built without libpmix: skipping the mpirun tests"
	test_done
fi

# uri RANK
uri () {
	echo "ipc://$RD/b-$1/local"
}

test_expect_success 'mpirun.openmpi -n 8 bgn-broker forms a full overlay' '
	"$MPIRUN" --allow-run-as-root --oversubscribe -n 8 \
		bgn-broker --rundir="$RD/b-%r" -v \
		-o overlay.bind="\"ipc://$RD/b-%r/ov\"" >mpirun.out 2>&1 &
	MPIRUN_PID=$! &&
	i=0 && while ! test -S "$RD/b-0/local" && test $i -lt 400; do
		sleep 0.05; i=$((i+1)); done &&
	bgn --uri="$(uri 0)" overlay-status --wait=full --timeout=30s &&
	bgn --uri="$(uri 0)" overlay-status --json >status.json &&
	grep "\"state\": *\"full\"" status.json
'

test_expect_success 'every broker bootstrapped through PMIx' '
	for r in 0 1 2 3 4 5 6 7; do
		bgn --uri="$(uri $r)" rpc broker.info >info.$r &&
		grep "\"rank\":$r," info.$r &&
		grep "\"size\":8," info.$r &&
		grep "\"bootstrap\":\"pmix\"" info.$r || return 1
	done &&
	test $(cat info.* | sed "s/.*\"instance\":\"\([^\"]*\)\".*/\1/" |
		sort -u | wc -l) -eq 1
'

test_expect_success 'rank 0 and rank 7 ping every rank' '
	for s in 0 7; do
		for d in 0 1 2 3 4 5 6 7; do
			bgn --uri="$(uri $s)" ping --count=1 $d >ping.out &&
			grep "^reply from rank $d:" ping.out || return 1
		done
	done
'

# mpirun can return before its last brokers have finished exiting (and
# before their last lines are written out): they get 10 s to be gone,
# each one exiting 0 and removing its socket; what is left then is shown.
brokers_gone () {
	i=0
	while pgrep -f "bgn-broker --rundir=$RD/" >/dev/null ||
	      ls "$RD"/b-*/local >/dev/null 2>&1 ||
	      test $(grep -c "shutdown, exit 0" mpirun.out) -lt 8; do
		i=$((i+1))
		if test $i -ge 100; then
			say "still there 10 s after mpirun returned:"
			pgrep -fa "bgn-broker --rundir=$RD/"
			ls -l "$RD"/b-*
			grep -c "shutdown, exit 0" mpirun.out
			return 1
		fi
		sleep 0.1
	done
}

test_expect_success 'SIGTERM to mpirun stops every broker cleanly' '
	kill -TERM $MPIRUN_PID &&
	{ wait $MPIRUN_PID; true; } &&
	MPIRUN_PID= &&
	brokers_gone &&
	cat mpirun.out &&
	test $(grep -c "shutdown, exit 0" mpirun.out) -eq 8 &&
	! pgrep -f "bgn-broker --rundir=$RD/" &&
	! ls "$RD"/b-*/local 2>/dev/null
'

test_done
