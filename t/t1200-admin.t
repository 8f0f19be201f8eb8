#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-or-later
#
# t1200-admin.t: day-one administration (issue 18).
#  - host names: the host table (registered with rank 0 under PMI, from
#    the config in a static bootstrap), host names and hostlists wherever
#    ranks are taken, overlay lookup both ways, hosts of up and down ranks
#    in overlay-status text and JSON;
#  - logs: bgn start prints only brokers' errors and whole lines, every
#    line in the log file; bgn dmesg reads a broker's ring buffer;
#  - the system instance's socket is tried without BGN_URI;
#  - Prometheus metrics (checked with promtool too when it is installed);
#  - bgn dmesg on a fresh broker: the ring keeps how it booted;
#  - ping: summary on SIGINT, --route, unknown service and bad rank
#    errors, timeout 0; rounded JSON.

test_description='host names, logs, dmesg, system instance, metrics, ping'

. "$(dirname "$0")/sharness.sh"

FAST="-o overlay.keepalive_interval=200ms -o overlay.peer_timeout=2s"
SCRIPTS="$SHARNESS_TEST_SRCDIR/scripts"

# Prometheus's own checker, when installed (Debian package prometheus;
# PROMTOOL=PATH names another).
PROMTOOL=${PROMTOOL:-promtool}
if command -v "$PROMTOOL" >/dev/null 2>&1; then
	test_set_prereq PROMTOOL
else
	say "promtool not found (apt-get install prometheus): bgn metrics is" \
	    "checked by promcheck.py only"
fi

# One 8-broker instance named like a cluster, two brokers killed by
# hostlist: everything that needs a running instance.
test_expect_success 'an instance with host names: lookups, pings, faults by host' '
	cat >hosts.sh <<-\EOT &&
	bgn overlay lookup 3 0-7 node5 "node[1-3],7" >lookup.out || exit 1
	bgn overlay lookup nodeX 2>lookup.err; echo rc=$? >lookup.rc
	bgn --rank 5 rpc broker.hosts >hosts5.json || exit 1
	bgn --rank node5 overlay-status >own5.out || exit 1
	bgn --rank 5 overlay-status -r 1 >own5r1.out || exit 1
	bgn ping node6 >ping6.out || exit 1
	bgn --rank node2 rpc broker.info >info2.json || exit 1
	bgn ping --rank=node3 broker >pingsvc.out || exit 1
	bgn ping --route 5 >route.out || exit 1
	bgn fault kill "node[3-4]" || exit 1
	bgn overlay-status --wait=degraded --timeout=10s || exit 1
	i=0
	# every broker that answers sees 3-4 down (the fence may still be on
	# its way to some when rank 0 has it)
	until bgn overlay-status --all --json | grep -q "\"down_all\": \"3-4\""; do
		i=$((i+1)); test $i -lt 200 || exit 1; sleep 0.05
	done
	bgn overlay-status >status.out &&
	bgn overlay-status --json >status.json &&
	bgn overlay-status -v -r node1 >v1.out &&
	bgn overlay-status -vv -r node1 >v2.out &&
	bgn metrics >metrics.prom &&
	bgn metrics -r 0 >metrics0.prom &&
	bgn overlay-status -r 2 --format=prometheus >one.prom &&
	bgn dmesg -r 0 >dmesg0.out &&
	bgn dmesg -r "node[1-2]" >dmesg12.out &&
	bgn dmesg --json -r 0 >dmesg0.json &&
	bgn fault kill nodeX 2>faultx.err; echo rc=$? >faultx.rc
	EOT
	bgn start --size=8 --keep-going -v $FAST --log-file=all.log \
		-o bootstrap.hostname=node%r sh ./hosts.sh >start.out 2>start.err &&
	cat >lookup.expect <<-\EOT &&
	node3
	node[0-7]
	5
	1-3,7
	EOT
	test_cmp lookup.expect lookup.out &&
	grep "rc=1" lookup.rc &&
	grep "^bgn overlay: lookup: .nodeX. is not a rank or a host of this instance$" lookup.err &&
	grep "^reply from rank 6: " ping6.out &&
	grep "\"rank\":2" info2.json && grep "\"hostname\":\"node2\"" info2.json &&
	grep "^reply from rank 3: " pingsvc.out &&
	grep "rc=1" faultx.rc &&
	grep "^bgn fault: .nodeX. is not a rank or a host of this instance$" faultx.err
'

test_expect_success 'bgn --rank R overlay-status shows rank R as it sees itself; -r still wins' '
	grep "^rank 5 (node5) has [0-9]* peers:$" own5.out &&
	grep "^rank 1 (node1) has [0-9]* peers:$" own5r1.out
'

test_expect_success PYTHON3 'the host table is whole, also asked through rank 5' '
	jq_py hosts5.json "o[\"size\"] == 8 and o[\"hosts\"] == [\"node%d\" % r for r in range(8)] and o[\"source\"] == \"registered\""
'

test_expect_success 'overlay-status names the hosts of up and down ranks' '
	grep "^down: 3-4 (2)$" status.out &&
	grep "^down hosts: node\[3-4\]$" status.out &&
	grep "^  rank 3 (node3): down for " status.out &&
	grep "^  rank 4 (node4): down for " status.out &&
	grep "^rank 0 (node0) has 5 peers:$" status.out &&
	grep -E "^ +1 node1 +up " status.out &&
	grep -E "^ +4 node4 +fenced " status.out
'

test_expect_success PYTHON3 'the JSON has the hosts, and no float noise' '
	jq_py status.json "o[\"down\"] == \"3-4\" and o[\"down_hosts\"] == \"node[3-4]\"" &&
	jq_py status.json "sorted((d[\"rank\"], d[\"hostname\"]) for d in o[\"down_detail\"]) == [(3, \"node3\"), (4, \"node4\")]" &&
	jq_py status.json "all(p[\"hostname\"] == \"node%d\" % p[\"rank\"] for p in o[\"peers\"])" &&
	"$PYTHON3" -c "
import json, sys
def reals(x, key=None):
    if isinstance(x, dict):
        for k, v in x.items(): yield from reals(v, k)
    elif isinstance(x, list):
        for v in x: yield from reals(v, key)
    elif isinstance(x, float):
        yield key, x
bad = [(k, v) for k, v in reals(json.load(open(\"status.json\")))
       if len(repr(v).split(\".\")[-1]) > (1 if k.endswith(\"_us\") else 3)]
sys.exit(\"unrounded: %r\" % bad if bad else 0)
"
'

test_expect_success '-v adds details, -vv adds peer columns' '
	grep "^counters:" v1.out && test_must_fail grep "BACKLOG" v1.out &&
	grep "^counters:" v2.out && grep " SINCE BACKLOG B-DROPS CONN$" v2.out
'

test_expect_success 'ping --route prints the ranks crossed and the stack' '
	grep "^reply from rank 5: seq=0 hops=2 " route.out &&
	grep -E "^  route: 0 -> [0-9]+ -> 5$" route.out &&
	grep "^  route stack: \[\"+[A-Za-z0-9_-]\{12\}\",\"0\"\]$" route.out
'

test_expect_success PYTHON3 'bgn metrics is valid Prometheus text with the numbers' '
	"$PYTHON3" "$SCRIPTS/promcheck.py" metrics.prom >samples &&
	grep "^bgn_overlay_instance_size 8$" samples &&
	grep "^bgn_overlay_instance_down_ranks{view=\"any\"} 2$" samples &&
	grep "^bgn_overlay_instance_down_ranks{view=\"every\"} 2$" samples &&
	grep "^bgn_overlay_instance_health_brokers{state=\"degraded\"} 6$" samples &&
	grep "^bgn_overlay_instance_health_brokers{state=\"full\"} 0$" samples &&
	grep "^bgn_overlay_brokers{answered=\"no\"} 2$" samples &&
	grep "^bgn_overlay_brokers{answered=\"yes\"} 6$" samples &&
	grep "^bgn_overlay_instance_tx_messages_total [1-9]" samples &&
	grep "^bgn_overlay_instance_ttl_drops_total 0$" samples &&
	grep "^bgn_overlay_instance_problem_brokers 0$" samples &&
	test_must_fail grep "rank=" samples &&
	"$PYTHON3" "$SCRIPTS/promcheck.py" metrics0.prom >samples0 &&
	grep "^bgn_overlay_down_ranks{host=\"node0\",rank=\"0\"} 2$" samples0 &&
	grep "^bgn_overlay_health{host=\"node0\",rank=\"0\",state=\"degraded\"} 1$" samples0 &&
	grep "^bgn_overlay_health{host=\"node0\",rank=\"0\",state=\"full\"} 0$" samples0 &&
	grep "^bgn_overlay_peer_up{host=\"node0\",peer=\"4\",peer_host=\"node4\",rank=\"0\"} 0$" samples0 &&
	grep "^bgn_overlay_peer_tx_messages_total{host=\"node0\",peer=\"1\",peer_host=\"node1\",rank=\"0\"} [1-9]" samples0 &&
	grep "^bgn_overlay_event_sequence{host=\"node0\",rank=\"0\"} [0-9]" samples0 &&
	grep "^bgn_overlay_reroutes_total{" samples0 &&
	test_must_fail grep "rank=\"[1-7]\"" samples0 &&
	"$PYTHON3" "$SCRIPTS/promcheck.py" one.prom >one.samples &&
	test $(grep -c "^bgn_overlay_size{" one.samples) -eq 1 &&
	grep "^bgn_overlay_size{host=\"node2\",rank=\"2\"} 8$" one.samples
'

test_expect_success PYTHON3 'bgn metrics -r shows the heap of each store and the resident set' '
	"$PYTHON3" "$SCRIPTS/promcheck.py" metrics0.prom >mem0 &&
	for m in event_ring event_early event_queue backlogs retry_copies dedup stores; do
		grep "^bgn_overlay_memory_${m}_bytes{host=\"node0\",rank=\"0\"} [0-9]" mem0 || return 1
	done &&
	grep "^bgn_overlay_resident_bytes{host=\"node0\",rank=\"0\"} [1-9][0-9]\{6,\}$" mem0
'

test_expect_success PYTHON3 'promcheck refuses broken exposition text' '
	printf "bgn_x 1\n" >bad1.prom &&
	test_must_fail "$PYTHON3" "$SCRIPTS/promcheck.py" bad1.prom &&
	printf "# HELP a_total x\n# TYPE a_total counter\na_total{l=\"1} 1\n" >bad2.prom &&
	test_must_fail "$PYTHON3" "$SCRIPTS/promcheck.py" bad2.prom
'

# promtool check metrics parses the text and lints it (names, suffixes,
# help); it prints each problem, so its output must be empty too.
test_expect_success PROMTOOL 'promtool check metrics accepts bgn metrics' '
	for f in metrics.prom metrics0.prom one.prom; do
		"$PROMTOOL" check metrics <$f >$f.promtool 2>&1 ||
		{ cat $f.promtool; return 1; }
		test_must_be_empty $f.promtool || return 1
	done
'

test_expect_success PROMTOOL 'promtool check metrics refuses a lint error' '
	printf "# HELP bgn_x a counter\n# TYPE bgn_x counter\nbgn_x 1\n" >lint.prom &&
	test_must_fail "$PROMTOOL" check metrics <lint.prom >lint.out 2>&1 &&
	grep "_total" lint.out &&
	test_must_fail "$PROMTOOL" check metrics <bad2.prom
'

test_expect_success 'bgn start showed whole lines: its own and brokers'"'"' errors only' '
	grep "^bgn start: rank 3 killed by signal 9" start.err &&
	while read line; do
		case "$line" in
		"bgn start: "*) ;;
		bgn-broker\[*\]:\ error:*|bgn-broker\[*\]:\ critical:*) ;;
		*) echo "unexpected on the terminal: $line"; exit 1 ;;
		esac
	done <start.err &&
	grep "^bgn-broker\[0\]: notice: rank 3 fenced" all.log &&
	grep "^bgn-broker\[[0-9]\]: warning: peer 4 lost" all.log &&
	grep "^bgn-broker\[5\]: info: up: rank 5 of 8" all.log
'

test_expect_success 'bgn dmesg prints a broker'"'"'s lines with the time' '
	grep -E "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z bgn-broker\[0\]: notice: rank 3 fenced" dmesg0.out &&
	grep "bgn-broker\[1\]: info: up: rank 1 of 8" dmesg12.out &&
	grep "bgn-broker\[2\]: info: up: rank 2 of 8" dmesg12.out &&
	test_must_fail grep "bgn-broker\[0\]" dmesg12.out
'

test_expect_success PYTHON3 'bgn dmesg --json: one object per line' '
	grep "up: rank 0 of 8" dmesg0.json >first.json &&
	jq_py first.json "o[\"rank\"] == 0 and o[\"hostname\"] == \"node0\" and o[\"level\"] == \"info\" and o[\"seq\"] >= 1 and \"up: rank 0 of 8\" in o[\"text\"]"
'

# A fresh instance at the brokers' default stderr level (notice): the
# ring still keeps the info and debug lines that tell how each broker
# booted (broker.log_ring_level defaults to debug).
test_expect_success 'bgn dmesg on a fresh broker shows its boot, whatever stderr shows' '
	cat >fresh.sh <<-\EOT &&
	bgn overlay-status --wait=full --timeout=10s >/dev/null || exit 1
	for r in 0 2; do
		i=0
		until bgn dmesg -r $r | grep -q "overlay health: .*full"; do
			i=$((i+1)); test $i -lt 100 || exit 1; sleep 0.05
		done
		bgn dmesg -r $r >fresh.dmesg$r || exit 1
	done
	EOT
	bgn start --size=4 --log-file=fresh.log sh ./fresh.sh &&
	cat fresh.dmesg0 &&
	grep "bgn-broker\[0\]: info: up: rank 0 of 4, [a-z0-9]* bootstrap" fresh.dmesg0 &&
	grep "bgn-broker\[0\]: debug: overlay bgn: 3 peers, bind ipc://.*/0/overlay" fresh.dmesg0 &&
	grep "bgn-broker\[0\]: debug: peer 1: connecting -> up" fresh.dmesg0 &&
	grep "bgn-broker\[0\]: info: overlay complete: all 4 ranks connected" fresh.dmesg0 &&
	grep "bgn-broker\[0\]: info: overlay health: partial -> full" fresh.dmesg0 &&
	grep "bgn-broker\[2\]: info: up: rank 2 of 4" fresh.dmesg2 &&
	grep "bgn-broker\[2\]: info: overlay health: partial -> full" fresh.dmesg2 &&
	test_must_fail grep -E "info: up:|debug:|overlay health" fresh.log
'

test_expect_success 'broker.log_ring_level and log_ring_size bound the ring' '
	cat >ring.sh <<-\EOT &&
	bgn overlay-status --wait=full --timeout=10s >/dev/null || exit 1
	bgn dmesg -r 1 >ring.dmesg1 || exit 1
	EOT
	bgn start --size=2 -o broker.log_ring_level=\"info\" \
		-o broker.log_ring_size=2 sh ./ring.sh &&
	cat ring.dmesg1 &&
	test $(wc -l <ring.dmesg1) -le 2 &&
	test_must_fail grep "debug:" ring.dmesg1 &&
	grep "bgn-broker\[1\]: info: " ring.dmesg1 &&
	test_must_fail bgn start --size=1 -o broker.log_ring_level=\"loud\" true \
		2>loud.err &&
	grep "broker.log_ring_level.: must be a syslog level" loud.err
'

test_expect_success 'ping: summary on SIGINT, timeout 0, errors; a restarted rank 0 relearns hosts' '
	cat >ping.sh <<-\EOT &&
	bgn ping --count=0 --interval=100ms 1 >int.out 2>int.err &
	pid=$!
	i=0
	until test $(grep -c "^reply" int.out 2>/dev/null || echo 0) -ge 3; do
		i=$((i+1)); test $i -lt 100 || break; sleep 0.05
	done
	kill -INT $pid
	wait $pid; echo rc=$? >int.rc
	bgn ping --timeout=0 2 >t0.out || exit 1
	bgn ping nosuchsvc 2>svc.err; echo rc=$? >svc.rc
	bgn ping 9 2>rank9.err
	bgn ping -1 2>neg.err
	bgn fault restart 0 &&
	bgn overlay-status --wait=full --timeout=20s &&
	bgn rpc -r 0 broker.hosts >restart0.first &&
	i=0
	until bgn rpc -r 0 broker.hosts | grep -q "\"h1\",\"h2\",\"h3\""; do
		i=$((i+1)); test $i -lt 100 || exit 1; sleep 0.05
	done
	bgn rpc -r 0 broker.hosts >restart0.later
	EOT
	bgn start --size=4 --keep-going -o bootstrap.hostname=h%r sh ./ping.sh &&
	grep "^--- 1 ping statistics ---$" int.out &&
	grep "^[0-9]* sent, [0-9]* received, 0% lost; time min/avg/max" int.out &&
	grep "rc=0" int.rc &&
	grep "^reply from rank 2" t0.out &&
	grep "rc=1" svc.rc &&
	grep "^bgn ping: nosuchsvc: seq=0: Function not implemented (unknown service .nosuchsvc.: no broker on the way to rank 0 has it)$" svc.err &&
	grep "^bgn ping: 9: seq=0: No route to host (no such rank)$" rank9.err &&
	grep "^bgn ping: .-1. is not a rank$" neg.err &&
	grep "\"hosts\":\[\"h0\",null,null,null\]" restart0.first &&
	grep "\"hosts\":\[\"h0\",\"h1\",\"h2\",\"h3\"\]" restart0.later
'

# A static bootstrap on this host: three brokers, ipc endpoints, no CURVE,
# each told its host name; the system instance's socket is rank 0's.
test_expect_success 'a static instance answers the host table from its config' '
	cat >static.toml <<-EOT &&
	[overlay]
	curve = false
	keepalive_interval = "200ms"
	peer_timeout = "2s"
	[bootstrap]
	hosts = [ { host = "sn[0-2]", bind = "ipc://$PWD/%h.sock", connect = "ipc://$PWD/%h.sock" } ]
	EOT
	for r in 0 1 2; do
		bgn-broker -c static.toml -o bootstrap.hostname=sn$r \
			--rundir="$PWD/srun$r" 2>broker$r.err &
		echo $! >>static.pids
	done &&
	i=0 &&
	while ! test -S srun0/local || ! test -S srun1/local || ! test -S srun2/local; do
		i=$((i+1)); test $i -lt 400 || return 1; sleep 0.05
	done &&
	BGN_URI="ipc://$PWD/srun0/local" bgn overlay-status --wait=full --timeout=20s &&
	BGN_URI="ipc://$PWD/srun2/local" bgn rpc broker.hosts >static2.json &&
	grep "\"source\":\"static\"" static2.json &&
	grep "\"hosts\":\[\"sn0\",\"sn1\",\"sn2\"\]" static2.json &&
	BGN_URI="ipc://$PWD/srun1/local" bgn overlay lookup sn2 0-2 >slookup.out &&
	printf "2\nsn[0-2]\n" >slookup.expect &&
	test_cmp slookup.expect slookup.out
'

test_expect_success 'without BGN_URI the system instance is used, or named' '
	BGN_SYSTEM_URI="ipc://$PWD/srun0/local" bgn overlay-status --summary >sys.out &&
	grep "^full$" sys.out &&
	test_expect_code 1 env BGN_SYSTEM_URI="ipc://$PWD/nowhere/local" \
		bgn overlay-status 2>nosys.err &&
	test $(wc -l <nosys.err) -eq 1 &&
	grep "^bgn overlay-status: no broker: BGN_URI is not set, and the system instance is not reachable (no broker at $PWD/nowhere/local: No such file or directory); run under .bgn start., or give --uri$" nosys.err
'

test_expect_success 'the static brokers stop in order' '
	kill $(cat static.pids) &&
	for p in $(cat static.pids); do wait $p || return 1; done
'

test_done
