#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-or-later
test_description='observability: overlay-status (text, --json, --all, --dot, --wait), overlay-trace, overlay-disconnect'

. "$(dirname "$0")/sharness.sh"

# Small liveness settings so failures are found fast.
FAST="-o overlay.keepalive_interval=200ms -o overlay.peer_timeout=2s"

test_expect_success 'every observability command has --help' '
	bgn overlay-status --help | grep "^Usage: bgn overlay-status" &&
	bgn overlay-trace --help | grep "^Usage: bgn overlay-trace" &&
	bgn overlay-disconnect --help | grep "^Usage: bgn overlay-disconnect" &&
	bgn help | grep "^  overlay-trace " &&
	bgn help | grep "^  overlay-disconnect "
'

test_expect_success 'bad arguments are refused with a message' '
	test_must_fail bgn overlay-status --wait=sideways 2>bad1 &&
	grep "not a state" bad1 &&
	test_must_fail bgn overlay-status --color=sometimes 2>bad2 &&
	grep "auto, always or never" bad2 &&
	test_must_fail bgn overlay-status --json --dot 2>bad3 &&
	grep "exclude each other" bad3 &&
	test_must_fail bgn overlay-trace --types=request,gossip 2>bad4 &&
	grep "gossip.*not a type" bad4 &&
	test_must_fail bgn overlay-disconnect 0 2>bad5 &&
	grep "force" bad5 &&
	test_must_fail bgn overlay-disconnect x 2>bad6 &&
	grep "not a rank" bad6
'

# One healthy 8-broker instance for the read-only views.
test_expect_success 'a healthy instance: text, --json, --summary, --wait, --all, --dot' '
	bgn start --size=8 sh -c "
		bgn overlay-status >h.text &&
		bgn overlay-status -v -r 3 >h.verbose &&
		bgn overlay-status --json >h.json &&
		bgn overlay-status --summary >h.summary &&
		bgn overlay-status --wait=full --timeout=5s >h.wait0; echo rc=\$? >h.rc0
		bgn overlay-status --wait=degraded --timeout=1s >h.wait1 2>h.wait1.err; echo rc=\$? >h.rc1
		bgn overlay-status --all --json >h.all.json &&
		bgn overlay-status --all >h.all &&
		bgn overlay-status --color=always >h.color &&
		bgn overlay-status --dot >h.dot" &&
	head -n 1 h.text | grep "^overlay full: size 8, topology bgn, diameter 2$" &&
	grep "^down: none$" h.text &&
	test $(grep -c " up " h.text) -eq 5 &&
	grep "^counters:" h.verbose && grep "^endpoint: ipc://" h.verbose &&
	grep "^full$" h.summary &&
	grep "rc=0" h.rc0 &&
	grep "rc=1" h.rc1 && grep "^full$" h.wait1 &&
	grep "still full after 1s (waited for degraded)" h.wait1.err &&
	printf "\033\\[32mfull" >esc && grep -q "$(cat esc)" h.color &&
	test_must_fail grep -q "$(printf "\033")" h.text
'

test_expect_success PYTHON3 '--json has the documented fields' '
	jq_py h.json "o[\"rank\"] == 0 and o[\"size\"] == 8 and o[\"topology\"] == \"bgn\"" &&
	jq_py h.json "o[\"state\"] == \"full\" and o[\"down\"] == \"\" and o[\"down_ranks\"] == [] and o[\"down_detail\"] == []" &&
	jq_py h.json "sorted(p[\"rank\"] for p in o[\"peers\"]) == [1, 2, 4, 6, 7]" &&
	jq_py h.json "all(set([\"rank\", \"hostname\", \"state\", \"rtt_us\", \"tx_msgs\", \"rx_msgs\", \"tx_bytes\", \"rx_bytes\", \"reroutes\", \"ttl_drops\", \"substitute\"]) <= set(p) for p in o[\"peers\"])" &&
	jq_py h.json "all(p[\"state\"] == \"up\" and p[\"substitute\"] is False for p in o[\"peers\"])"
'

test_expect_success PYTHON3 '--all summarises every rank (JSON and text)' '
	jq_py h.all.json "o[\"brokers\"] == 8 and o[\"size\"] == 8 and o[\"missing\"] == \"\"" &&
	jq_py h.all.json "o[\"health\"] == {\"full\": 8} and o[\"down_any\"] == \"\" and o[\"down_all\"] == \"\"" &&
	jq_py h.all.json "o[\"problems\"] == [] and o[\"problems_omitted\"] == 0" &&
	jq_py h.all.json "o[\"counters\"][\"tx_msgs\"] > 0 and o[\"counters\"][\"ttl_drops\"] == 0" &&
	grep "^answered: 8 of 8 brokers; no answer: none$" h.all &&
	grep "^health as each broker sees it: full 8$" h.all &&
	grep "^down: none$" h.all &&
	grep "^all brokers agree$" h.all &&
	grep "^total: tx [0-9]* msgs" h.all &&
	test_must_fail grep "problem" h.all
'

test_expect_success DOT 'the --dot graph of a healthy instance is accepted by dot' '
	grep "^graph overlay {" h.dot &&
	test $(grep -c -- " -- " h.dot) -eq 20 &&
	dot -Tsvg h.dot >h.svg &&
	grep -q "<svg" h.svg
'

# Two brokers killed in a 16-broker instance.
test_expect_success 'two brokers killed: down ranks, --down, --all, --dot' '
	cat >kill2.sh <<-\EOT &&
	bgn fault kill 5 11 &&
	bgn overlay-status --wait=degraded --summary --timeout=10s >k.wait || exit 1
	i=0
	until bgn overlay-status --json | grep -q "\"down\": \"5,11\""; do
		i=$((i+1)); test $i -lt 200 || exit 1; sleep 0.05
	done
	bgn overlay-status >k.text &&
	bgn overlay-status --down -r 4 >k.down &&
	bgn overlay-status --json >k.json &&
	bgn overlay-status --all --json >k.all.json &&
	bgn overlay-status --all >k.all &&
	bgn overlay-status --all --dot >k.dot &&
	bgn overlay-status --wait=full --timeout=1s >k.notfull; echo rc=$? >k.rc
	EOT
	bgn start --size=16 --keep-going $FAST sh ./kill2.sh &&
	grep "^degraded$" k.wait &&
	head -n 1 k.text | grep "^overlay degraded: size 16, topology bgn, diameter 2$" &&
	grep "^down: 5,11 (2)$" k.text &&
	grep "^  rank 5 (.*): down for .*, " k.text &&
	grep "^  rank 11 (.*): down for " k.text &&
	grep "^ *5 .* fenced " k.down &&
	test_must_fail grep " up " k.down &&
	grep "^answered: 14 of 16 brokers; no answer: 5,11$" k.all &&
	grep "^down (as every broker sees it): 5,11 (2)" k.all &&
	grep "rc=1" k.rc && grep "^degraded$" k.notfull
'

test_expect_success PYTHON3 'two brokers killed: the JSON agrees' '
	jq_py k.json "o[\"state\"] == \"degraded\" and o[\"down\"] == \"5,11\" and o[\"down_ranks\"] == [5, 11]" &&
	jq_py k.json "sorted(d[\"rank\"] for d in o[\"down_detail\"]) == [5, 11]" &&
	jq_py k.all.json "o[\"brokers\"] == 14 and o[\"missing\"] == \"5,11\"" &&
	jq_py k.all.json "o[\"down_any\"] == \"5,11\" and o[\"down_all\"] == \"5,11\"" &&
	jq_py k.all.json "sum(o[\"health\"].values()) == 14"
'

test_expect_success DOT 'two brokers killed: dot renders the graph with the down ranks marked' '
	grep "^  5 \[fillcolor=tomato" k.dot &&
	grep "^  11 \[fillcolor=tomato" k.dot &&
	grep "^  4 -- 5 \[style=dotted" k.dot &&
	dot -Tpng -o k.png k.dot &&
	test -s k.png
'

test_expect_success 'overlay-trace shows a ping request and its response on the traced broker' '
	cat >trace.sh <<-\EOT &&
	bgn overlay-trace -r 1 --duration=3s >tr.out 2>tr.err &
	pid=$!
	i=0
	while ! grep -q "tracing rank 1" tr.err 2>/dev/null && test $i -lt 100; do
		sleep 0.05; i=$((i+1))
	done
	bgn ping --count=1 1 >tr.ping || exit 1
	bgn overlay-trace -r 2 --types=request --duration=1s "broker.*" >tr2.out 2>/dev/null &
	pid2=$!
	sleep 0.3
	bgn ping --count=1 2 >/dev/null
	wait $pid; echo rc=$? >tr.rc
	wait $pid2; echo rc=$? >tr2.rc
	EOT
	bgn start --size=4 sh ./trace.sh &&
	grep "rc=0" tr.rc && grep "rc=0" tr2.rc &&
	head -n 1 tr.out | grep "^TIME  *DIR PEER TYPE  *TOPIC  *SIZE HOPS" &&
	grep -E "^[0-9:.]+ rx +0 request +broker.ping +[0-9]+ +1 +0->1$" tr.out &&
	grep -E "^[0-9:.]+ tx +0 response +broker.ping +[0-9]+ " tr.out &&
	grep -E " (rx|tx) +[0-9]+ keepalive " tr.out &&
	grep -E " rx +0 request +broker.ping " tr2.out &&
	test_must_fail grep -E "response|keepalive" tr2.out
'

test_expect_success 'overlay-disconnect fences the rank; the rest route around it' '
	cat >disc.sh <<-\EOT &&
	bgn overlay-disconnect 6 >d.out; echo rc=$? >d.rc
	bgn overlay-status --json >d.json
	bgn overlay-status >d.text
	bgn ping --count=1 --timeout=2s 6 2>d.ping6.err; echo rc=$? >d.ping6.rc
	bgn --rank 7 ping --count=1 5 >d.ping75 || exit 1
	bgn overlay-disconnect 6 >d.again; echo rc=$? >d.again.rc
	EOT
	bgn start --size=8 --keep-going $FAST sh ./disc.sh &&
	grep "rc=0" d.rc &&
	grep "^rank 6 disconnected: rank 0 fenced it after " d.out &&
	grep "^down: 6 (1)$" d.text &&
	grep "rank 6 (.*): down for .*left the instance" d.text &&
	grep "rc=1" d.ping6.rc &&
	grep "reply from rank 5" d.ping75 &&
	grep "rc=0" d.again.rc && grep "^rank 6 is already down$" d.again
'

test_expect_success PYTHON3 'overlay-disconnect: rank 0 lists the rank down in the JSON' '
	jq_py d.json "o[\"down\"] == \"6\" and o[\"state\"] == \"degraded\""
'

test_done
