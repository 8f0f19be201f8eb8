#!/bin/sh
test_description='events: sequenced, exactly once, in order, through failures'

. "$(dirname "$0")/sharness.sh"

FAST="-o overlay.keepalive_interval=200ms -o overlay.peer_timeout=2s"

# check.sh FILE FIRST STORM: FILE (bgn event sub --json on "storm." and
# "overlay.", whose fence/unfence events share the one sequence) holds
# every seq from FIRST to its last line, each once, in order, and STORM
# "storm." events among them.
cat >check.sh <<'EOT'
f=$1 first=$2 storm=$3
sed -n 's/^{"seq":\([0-9]*\),.*/\1/p' "$f" >"$f.seqs"
last=$(tail -n 1 "$f.seqs")
seq $first ${last:-0} >"$f.want"
cmp -s "$f.seqs" "$f.want" || {
	echo "$f: $(wc -l <"$f.seqs") seqs, want $first..$last" >&2
	diff "$f.want" "$f.seqs" | head -5 >&2
	exit 1
}
n=$(grep -c '"topic":"storm.x"' "$f")
test "$n" -eq "$storm" || { echo "$f: $n storm events, want $storm" >&2; exit 1; }
EOT

test_expect_success 'an event reaches every broker once, with seq, topic, payload, publisher' '
	cat >one.sh <<-\EOT &&
	for r in $(seq 0 15); do
		bgn --rank $r event sub --count=1 --json --timeout=10s --ready=ready.$r ev. >one.$r &
	done
	for r in $(seq 0 15); do while ! test -e ready.$r; do sleep 0.02; done; done
	bgn --rank 7 event pub ev.hello "{\"n\":42}" &&
	wait
	EOT
	bgn start --size=16 sh ./one.sh &&
	for r in $(seq 0 15); do
		grep -x "{\"seq\":1,\"topic\":\"ev.hello\",\"payload\":{\"n\":42},\"publisher\":7}" one.$r || return 1
	done
'

test_expect_success 'plain output is one readable line per event; prefixes filter' '
	cat >plain.sh <<-\EOT &&
	bgn --rank 3 event sub --count=2 --timeout=10s --ready=rp a.b c. >plain.out &
	while ! test -e rp; do sleep 0.02; done
	bgn event pub x.nope &&
	bgn event pub a.b.c "{\"k\":1}" &&
	bgn event pub c.d &&
	wait
	EOT
	bgn start --size=4 sh ./plain.sh &&
	test $(wc -l <plain.out) -eq 2 &&
	grep "^seq=2 topic=a.b.c from=0 {\"k\":1}$" plain.out &&
	grep "^seq=3 topic=c.d from=0" plain.out
'

test_expect_success 'a publisher gets an error, not silence, when rank 0 is unreachable' '
	cat >nopub.sh <<-\EOT &&
	bgn fault kill 0 &&
	sleep 0.5 &&
	bgn --rank 5 event pub ev.x 2>nopub.err; echo rc=$? >nopub.rc
	EOT
	bgn start --size=8 --keep-going $FAST sh ./nopub.sh;
	grep "rc=1" nopub.rc &&
	grep "No route to host" nopub.err
'

test_expect_success 'N=32: 10,000 events from 4 ranks while 3 brokers die and 1 restarts' '
	cat >storm.sh <<-\EOT &&
	for r in $(seq 0 31); do
		bgn --rank $r event sub --json --timeout=8s --ready=rs.$r storm. overlay. >storm.$r 2>storm.$r.err &
	done
	for r in $(seq 0 31); do while ! test -e rs.$r; do sleep 0.02; done; done
	for p in 2 11 17 30; do
		bgn --rank $p event pub --count=2500 storm.x >pub.$p 2>&1 &
	done
	sleep 1
	bgn fault kill 5 6 21
	sleep 1
	bgn fault restart 21
	# one prefix ("" = every topic): a single subscription starts at one
	# point of the sequence (two could miss an event between them)
	bgn --rank 21 event sub --json --timeout=8s --ready=rs.21b "" >storm.21b 2>/dev/null &
	wait
	EOT
	bgn start --size=32 $FAST sh ./storm.sh &&
	for r in $(seq 0 31); do
		case $r in 5|6|21) continue ;; esac
		sh ./check.sh storm.$r 1 10000 || return 1
	done &&
	first=$(sed -n "1s/^{\"seq\":\([0-9]*\),.*/\1/p" storm.21b) &&
	test -n "$first" &&
	n21=$(grep -c "\"topic\":\"storm.x\"" storm.21b) &&
	sh ./check.sh storm.21b $first $n21 &&
	test $(tail -n 1 storm.21b.seqs) -eq $(tail -n 1 storm.0.seqs) &&
	echo "restarted rank 21 joined at seq $first"
'

test_expect_success 'the same storm in a kary:2 tree loses events below a dead interior broker' '
	cat >treestorm.sh <<-\EOT &&
	for r in $(seq 0 15); do
		bgn --rank $r event sub --json --timeout=5s --ready=rt.$r storm. overlay. >tree.$r 2>/dev/null &
	done
	for r in $(seq 0 15); do while ! test -e rt.$r; do sleep 0.02; done; done
	bgn --rank 2 event pub --count=4000 storm.x >treepub 2>&1 &
	sleep 1
	bgn fault kill 1
	wait
	EOT
	bgn start --size=16 --topology=kary:2 --keep-going $FAST sh ./treestorm.sh;
	for r in 2 5 6 11 12 13 14; do
		sh ./check.sh tree.$r 1 4000 || return 1
	done &&
	for r in 3 4 7 8 9 10 15; do
		test $(grep -c "\"topic\":\"storm.x\"" tree.$r) -lt 4000 || return 1
	done
'

test_done
