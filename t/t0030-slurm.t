#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-or-later
test_description='brokers under a real one-node Slurm cluster

Root only.  Writes a one-node cluster configuration (16 CPUs on this
machine: SlurmdParameters=config_overrides) and a munge key into a
private directory, starts munged, slurmctld and slurmd, then:
srun --mpi=pmi2 -n 16 brokers form a full overlay, every rank answers a
ping, scancel --signal=TERM of the job step stops every broker cleanly
(plain "scancel JOB.STEP" is SIGKILL in Slurm); srun --mpi=pmix -n 8 does
the same and a plain scancel of its job stops it cleanly; and the batch
script etc/bgn-slurm.sbatch (the README example) runs a command against a
whole instance.  The daemons are stopped by their PIDs at the end, also
when a test fails.'

. "$(dirname "$0")/sharness.sh"

if test "$(id -u)" != 0; then
	skip_all='needs root (starts munged, slurmctld and slurmd)'
	test_done
fi
for prog in munged munge slurmctld slurmd srun sbatch scancel squeue sinfo; do
	if ! command -v $prog >/dev/null 2>&1; then
		skip_all="$prog not found (apt-get install munge slurmctld slurmd slurm-client)"
		test_done
	fi
done

# Everything lives outside the trash directory: munged wants every
# directory above its socket searchable and none writable by others,
# and unix socket paths must stay short.
D=$(mktemp -d /tmp/bgnsl$$.XXXXXX) || exit 1
chmod 755 "$D"
mkdir "$D/munge" "$D/state" "$D/spool" "$D/run"
chmod 755 "$D/munge"
SLURM_CONF=$D/slurm.conf
export SLURM_CONF
SRUN_PIDS=

# stop_pid PID: SIGTERM, up to 5 s for it to go, then SIGKILL.
stop_pid () {
	kill -TERM "$1" 2>/dev/null || return 0
	_i=0
	while kill -0 "$1" 2>/dev/null && test $_i -lt 100; do
		sleep 0.05; _i=$((_i + 1))
	done
	kill -KILL "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	return 0
}

slurm_cleanup () {
	# Jobs first, while slurmctld can still cancel them.
	if test -f "$D/slurmctld.pid.bg" && kill -0 "$(cat "$D/slurmctld.pid.bg")" 2>/dev/null; then
		scancel --quiet --user=root 2>/dev/null
		_i=0
		while test -n "$(squeue -h 2>/dev/null)" && test $_i -lt 100; do
			sleep 0.1; _i=$((_i + 1))
		done
	fi
	for p in $SRUN_PIDS; do
		stop_pid "$p"
	done
	for d in slurmd slurmctld munged; do
		test -f "$D/$d.pid.bg" && stop_pid "$(cat "$D/$d.pid.bg")"
	done
	# Brokers that outlived their job: ours all use run directories in $D.
	for p in $(pgrep -f "bgn-broker --rundir=$D/" 2>/dev/null); do
		kill -9 "$p" 2>/dev/null
	done
	rm -rf "$D"
}
trap 'rc=$?; slurm_cleanup; (exit $rc); die' EXIT
trap 'exit 130' INT TERM

# Ports for this run only (another run may be going on the same host).
PORT=$((20000 + ($$ % 1000) * 40))
HOST=$(hostname -s)

cat >"$SLURM_CONF" <<EOT
ClusterName=bgntest
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
SrunPortRange=$((PORT + 2))-$((PORT + 39))
AuthType=auth/munge
AuthInfo=socket=$D/munge/sock
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool
SlurmctldPidFile=$D/slurmctld.pid
SlurmdPidFile=$D/slurmd.pid
SlurmctldLogFile=$D/slurmctld.log
SlurmdLogFile=$D/slurmd.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
SlurmdParameters=config_overrides
KillWait=5
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=16 State=UNKNOWN
PartitionName=bgn Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
EOT

test_expect_success 'munged, slurmctld and slurmd start; the node is idle' '
	dd if=/dev/urandom of="$D/munge/munge.key" bs=128 count=1 2>/dev/null &&
	chmod 600 "$D/munge/munge.key" || return 1
	munged -F --socket="$D/munge/sock" --key-file="$D/munge/munge.key" \
		--log-file="$D/munge/log" --pid-file="$D/munge/pid" \
		--seed-file="$D/munge/seed" >"$D/munged.out" 2>&1 &
	echo $! >"$D/munged.pid.bg" &&
	i=0 && while ! test -S "$D/munge/sock" && test $i -lt 100; do
		sleep 0.05; i=$((i+1)); done &&
	munge -S "$D/munge/sock" -n | unmunge -S "$D/munge/sock" >unmunge.out &&
	grep "STATUS: *Success" unmunge.out || return 1
	slurmctld -D -i >"$D/slurmctld.out" 2>&1 &
	echo $! >"$D/slurmctld.pid.bg"
	slurmd -D -N "$HOST" >"$D/slurmd.out" 2>&1 &
	echo $! >"$D/slurmd.pid.bg" &&
	i=0 && while test "$(sinfo -h -o %t 2>/dev/null)" != idle &&
		test $i -lt 200; do sleep 0.1; i=$((i+1)); done &&
	sinfo -h -o "%t %c" >sinfo.out &&
	cat sinfo.out &&
	test "$(cat sinfo.out)" = "idle 16"
'

# uri RANK
uri () {
	echo "ipc://$D/run/b-$1/local"
}

# start_brokers MPI N: srun N brokers in the background; wait for rank 0.
start_brokers () {
	srun --mpi=$1 -n $2 bgn-broker --rundir="$D/run/b-%r" -v \
		-o overlay.bind="\"ipc://%R/ov\"" >srun.$1.out 2>&1 &
	SRUN_PID=$!
	SRUN_PIDS="$SRUN_PIDS $SRUN_PID"
	_i=0
	while ! test -S "$D/run/b-0/local"; do
		kill -0 $SRUN_PID 2>/dev/null && test $_i -lt 400 ||
			{ cat srun.$1.out; return 1; }
		sleep 0.05; _i=$((_i + 1))
	done
}

# check_instance MPI N BOOT: full overlay, every broker in the expected
# bootstrap, and rank 0 pings every rank.
check_instance () {
	bgn --uri="$(uri 0)" overlay-status --wait=full --timeout=30s &&
	for r in $(seq 0 $(($2 - 1))); do
		bgn --uri="$(uri $r)" rpc broker.info >info.$r &&
		grep "\"size\":$2," info.$r &&
		grep "\"bootstrap\":\"$3\"" info.$r &&
		bgn --uri="$(uri 0)" ping --count=1 $r >ping.out &&
		grep "^reply from rank $r:" ping.out || return 1
	done
}

# stopped_cleanly MPI N: srun exited 0, every broker logged an orderly
# exit, and none is left.
stopped_cleanly () {
	# within a minute: a step that hangs fails the test, not the run
	_i=0
	while kill -0 $SRUN_PID 2>/dev/null && test $_i -lt 1200; do
		sleep 0.05; _i=$((_i + 1))
	done
	kill -0 $SRUN_PID 2>/dev/null && { echo "srun still running after 60s"; kill -9 $SRUN_PID; }
	wait $SRUN_PID
	_rc=$?
	cat srun.$1.out
	test $_rc -eq 0 &&
	test "$(grep -c "shutdown, exit 0" srun.$1.out)" -eq $2 &&
	! pgrep -f "bgn-broker --rundir=$D/" &&
	! ls "$D"/run/b-*/local 2>/dev/null &&
	test -z "$(squeue -h -s)"
}

test_expect_success 'srun --mpi=pmi2 -n 16 brokers form a full overlay' '
	start_brokers pmi2 16 &&
	check_instance pmi2 16 pmi
'

test_expect_success 'scancel --signal=TERM of the step stops all 16 cleanly' '
	job=$(squeue -h -o %i) &&
	test -n "$job" &&
	scancel --signal=TERM "$job.0" &&
	stopped_cleanly pmi2 16
'

test_expect_success 'srun --mpi=pmix -n 8 brokers form a full overlay' '
	rm -rf "$D"/run/b-* &&
	start_brokers pmix 8 &&
	check_instance pmix 8 pmix
'

test_expect_success 'scancel of the job stops all 8 cleanly' '
	job=$(squeue -h -o %i) &&
	test -n "$job" &&
	scancel "$job" &&
	stopped_cleanly pmix 8
'

test_expect_success 'the README batch script runs a command on a whole instance' '
	rm -rf "$D"/run/b-* &&
	TMPDIR="$D/run" BGN_BROKER_OPTS="-v -o overlay.bind=\"ipc://%R/ov\"" \
	sbatch --wait -n 4 --ntasks-per-node=4 -o "$D/batch.out" \
		"$BGN_TOP_SRCDIR/etc/bgn-slurm.sbatch" \
		sh -c "bgn ping --count=1 3 && bgn rpc broker.info" >sbatch.out
	rc=$?
	cat sbatch.out "$D/batch.out"
	test $rc -eq 0 &&
	grep "^reply from rank 3:" "$D/batch.out" &&
	grep "\"size\":4," "$D/batch.out" &&
	grep "\"bootstrap\":\"pmi\"" "$D/batch.out" &&
	test "$(grep -c "shutdown, exit 0" "$D/batch.out")" -eq 4 &&
	! pgrep -f "bgn-broker --rundir=$D/"
'

test_done
