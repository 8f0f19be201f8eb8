#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-or-later
#
# t4000-sim.t: the protocol simulator (bgn-sim --protocol) runs the
# overlay's real protocol code on 1,024 simulated brokers through every
# built-in scenario, and the invariants hold: the survivors' down sets
# converge to the truth, no survivor stays fenced, every sampled survivor
# pair is reachable, no request runs after its client was told it
# failed, events arrive exactly once and in order at every survivor, no
# broker exits "partitioned", no queue reaches its limit.  A run is
# deterministic: the same seed gives the same report and the same event
# log, byte for byte; another seed gives another run.  Scenario files
# (TOML) are checked strictly.
#
# All times asserted here are simulated (virtual) seconds, the same on
# any machine.

test_description='protocol simulator: invariants at N=1024, determinism, scenario files'

. "$(dirname "$0")/sharness.sh"

SIMCHECK="${PYTHON3:-python3} $SHARNESS_TEST_SRCDIR/scripts/simcheck.py"

# sim NAME SCENARIO [OPTIONS...]: run SCENARIO with --check --json into
# NAME.json (the exit status is bgn-sim's: 2 if an invariant broke).
sim () {
	_name=$1 _sc=$2
	shift 2
	bgn-sim --protocol --size=1024 --scenario="$_sc" --check --json "$@" \
		>"$_name.json" 2>"$_name.err"
	_rc=$?
	test $_rc -eq 0 || { cat "$_name.err" >&2; return $_rc; }
}

test_expect_success PYTHON3 'kill: 64 random crashes (N/16) at once' '
	sim kill kill &&
	$SIMCHECK kill.json \
		"o[\"failures\"] == 64 and o[\"brokers\"][\"dead\"] == 64" \
		"o[\"views\"][\"down_count\"] == 64" \
		"o[\"convergence\"][\"seconds\"] < 5" \
		"o[\"convergence\"][\"wrongly_fenced_max\"] == 0" \
		"o[\"rpc\"][\"failed_fast\"] > 0" \
		"o[\"rpc\"][\"answered\"] + o[\"rpc\"][\"failed_fast\"] + o[\"rpc\"][\"timed_out\"] + o[\"rpc\"][\"pending\"] + o[\"rpc\"][\"origin_died\"] == o[\"rpc\"][\"sent\"]" \
		"o[\"control_by_kind\"][\"fence_report\"][\"messages\"] > 0" \
		"o[\"network\"][\"admissions\"] >= 1023"
'

test_expect_success PYTHON3 'rack: 64 consecutive ranks at once' '
	sim rack rack &&
	$SIMCHECK rack.json \
		"o[\"brokers\"][\"dead\"] == 64" \
		"o[\"convergence\"][\"seconds\"] < 5" \
		"o[\"convergence\"][\"wrongly_fenced_max\"] == 0" &&
	# the down set is one run of ranks
	"$PYTHON3" -c "import json,sys; d=json.load(open(\"rack.json\"))[\"views\"][\"down\"]; sys.exit(d.count(\"-\") != 1 or \",\" in d)"
'

test_expect_success PYTHON3 'hang shorter than the peer timeout: nobody is fenced, every request answered' '
	sim hang3 hang --duration=3 &&
	$SIMCHECK hang3.json \
		"o[\"views\"][\"down_count\"] == 0" \
		"o[\"convergence\"][\"wrongly_fenced_max\"] == 0" \
		"o[\"control\"][\"messages\"] == 0" \
		"o[\"rpc\"][\"sent\"] > 1000 and o[\"rpc\"][\"answered\"] == o[\"rpc\"][\"sent\"]"
'

test_expect_success PYTHON3 'hang longer than the peer timeout: fenced, then back; nothing runs after it failed' '
	sim hang12 hang --duration=12 &&
	$SIMCHECK hang12.json \
		"o[\"views\"][\"down_count\"] == 0" \
		"o[\"convergence\"][\"wrongly_fenced_max\"] == 64" \
		"o[\"rpc\"][\"failed_fast\"] > 0" \
		"o[\"control_by_kind\"][\"hello\"][\"messages\"] > 0"
'

test_expect_success PYTHON3 'boot: 1% never start and are fenced by everyone ("never joined")' '
	sim boot boot &&
	$SIMCHECK boot.json \
		"o[\"brokers\"][\"never_started\"] > 0" \
		"o[\"views\"][\"down_count\"] == o[\"brokers\"][\"never_started\"]" \
		"o[\"brokers\"][\"live\"] + o[\"brokers\"][\"never_started\"] == 1024"
'

test_expect_success PYTHON3 'churn: kills and restarts for 30 s; everyone back at the end' '
	sim churn churn &&
	$SIMCHECK churn.json \
		"o[\"failures\"] > 5" \
		"o[\"brokers\"][\"dead\"] == 0 and o[\"views\"][\"down_count\"] == 0" \
		"o[\"control_by_kind\"][\"hello\"][\"messages\"] > 0"
'

test_expect_success PYTHON3 'skew: restarts with clocks 2 h behind rejoin at once' '
	sim skew skew &&
	$SIMCHECK skew.json \
		"o[\"brokers\"][\"dead\"] == 0 and o[\"views\"][\"down_count\"] == 0" \
		"o[\"convergence\"][\"seconds\"] < 5" \
		"o[\"convergence\"][\"wrongly_fenced_seconds\"] < 3"
'

test_expect_success PYTHON3 'restart-root: rank 0 restarts while events flow; no event twice or out of order' '
	sim root restart-root &&
	$SIMCHECK root.json \
		"o[\"brokers\"][\"dead\"] == 0 and o[\"views\"][\"down_count\"] == 0" \
		"o[\"events\"][\"published\"] > 100" \
		"o[\"events\"][\"publish_errors\"] > 0" \
		"o[\"events\"][\"delivered\"] >= o[\"events\"][\"published\"] * 1000"
'

test_expect_success PYTHON3 'partition shorter than the peer timeout: nobody fenced, nobody exits' '
	sim part5 partition &&
	$SIMCHECK part5.json \
		"o[\"views\"][\"down_count\"] == 0" \
		"o[\"convergence\"][\"wrongly_fenced_max\"] == 0" \
		"o[\"rpc\"][\"timed_out\"] > 0" \
		"o[\"rpc\"][\"lost_in_relay\"] == 0"
'

# A partition detected by both halves costs about N^2 log N fence-view
# records when it heals, so this one runs at N=256.
test_expect_success PYTHON3 'partition for 15 s at N=256: both halves fence, then heal' '
	sim part15 partition --size=256 --duration=15 &&
	$SIMCHECK part15.json \
		"o[\"views\"][\"down_count\"] == 0" \
		"o[\"convergence\"][\"wrongly_fenced_max\"] == 256" \
		"o[\"rpc\"][\"failed_fast\"] > 0"
'

test_expect_success PYTHON3 'events: a publish load through churn; every survivor gets every event once' '
	sim events events --duration=10 --rate=50 &&
	$SIMCHECK events.json \
		"o[\"events\"][\"published\"] > 300" \
		"o[\"events\"][\"publish_errors\"] == 0" \
		"o[\"events\"][\"lost_notices\"] == 0" \
		"o[\"brokers\"][\"dead\"] == 0"
'

# Relays that hang 300 ms before they die hold what their peers send them
# meanwhile: requests between ranks that stay up are lost with them
# unless the origin sends them again when it learns of the death
# (overlay.retry_bytes > 0, the default).
test_expect_success PYTHON3 'relays dying with requests: lost without the retry, none with it' '
	cat >relay.toml <<-\EOF &&
	[sim]
	size = 64
	seed = 4
	duration = "40s"
	[overlay]
	retry_bytes = 0
	[[event]]
	op = "boot"
	window = "1s"
	[[event]]
	at = "5s"
	op = "churn"
	for = "20s"
	max_down = 6
	every = "500ms"
	hang_first = "300ms"
	[[event]]
	at = "2s"
	op = "rpc"
	rate = 400
	for = "30s"
	EOF
	bgn-sim --protocol --scenario=relay.toml --check --json >relay-off.json &&
	$SIMCHECK relay-off.json \
		"o[\"rpc\"][\"lost_in_relay\"] > 0" \
		"o[\"rpc\"][\"lost_in_relay\"] == o[\"rpc\"][\"timed_out\"]" \
		"o[\"rpc\"][\"loads\"][0][\"lost_in_relay\"] == o[\"rpc\"][\"lost_in_relay\"]" &&
	bgn-sim --protocol --scenario=relay.toml --set overlay.retry_bytes=16777216 \
		--check --json >relay-on.json &&
	$SIMCHECK relay-on.json \
		"o[\"rpc\"][\"lost_in_relay\"] == 0" \
		"o[\"rpc\"][\"timed_out\"] == 0" \
		"o[\"rpc\"][\"answered\"] + o[\"rpc\"][\"failed_fast\"] + o[\"rpc\"][\"pending\"] + o[\"rpc\"][\"origin_died\"] == o[\"rpc\"][\"sent\"]" &&
	bgn-sim --protocol --scenario=relay.toml --set overlay.retry_bytes=0 \
		--json >relay-again.json &&
	test_cmp relay-off.json relay-again.json &&
	# a deadline shorter than the fence and the resend: --check says so
	test_expect_code 2 bgn-sim --protocol --scenario=relay.toml \
		--set overlay.retry_bytes=16777216 --set sim.rpc_timeout=310ms \
		--check --json >relay-late.json 2>relay-late.err &&
	grep "check: [0-9]* requests to ranks that stayed up were lost in relays that died" relay-late.err
'

test_expect_success '--set and --hang-first: bad values are one clear line' '
	test_expect_code 1 bgn-sim --protocol --size=16 --scenario=kill \
		--set overlay.retry_bytes 2>s1.err &&
	grep "^bgn-sim: --set .overlay.retry_bytes.: not TABLE.KEY=VALUE" s1.err &&
	test_expect_code 1 bgn-sim --protocol --size=16 --scenario=kill \
		--set event.x=1 2>s2.err &&
	grep "the table is sim or overlay" s2.err &&
	test_expect_code 1 bgn-sim --protocol --size=16 --scenario=kill \
		--set overlay.retry_byte=0 2>s3.err &&
	grep "\[overlay\]: unknown key .retry_byte." s3.err &&
	test_expect_code 1 bgn-sim --protocol --size=16 --scenario=kill \
		--set overlay.retry_bytes=-1 2>s4.err &&
	grep "retry_bytes >= 0" s4.err &&
	test_expect_code 1 bgn-sim --protocol --size=16 --scenario=churn \
		--hang-first=2s 2>s5.err &&
	grep "0 <= hang_first < every" s5.err &&
	test_expect_code 1 bgn-sim --protocol --size=16 --scenario=kill \
		--hang-first=soon 2>s6.err &&
	grep "invalid value .soon. for --hang-first" s6.err &&
	test $(cat s1.err s2.err s3.err s4.err s5.err s6.err | wc -l) -eq 6 &&
	bgn-sim --protocol --size=16 --scenario=churn --hang-first=100ms \
		--set overlay.retry_bytes=0 --print-scenario >hf.sc &&
	grep "\"hang_first\": 0.1" hf.sc &&
	grep "\"retry_bytes\": 0" hf.sc
'

test_expect_success PYTHON3 'a broken invariant fails the check (and simcheck.py sees it)' '
	cat >stuck.toml <<-\EOF &&
	[sim]
	size = 64
	duration = "8s"
	[overlay]
	keepalive_interval = "200ms"
	peer_timeout = "2s"
	[[event]]
	op = "boot"
	window = "200ms"
	[[event]]
	at = 2
	op = "hang"
	ranks = "5"
	for = "1h"
	EOF
	test_expect_code 2 bgn-sim --protocol --scenario=stuck.toml --check \
		--json >stuck.json 2>stuck.err &&
	grep "check: survivors" stuck.err &&
	test_must_fail $SIMCHECK stuck.json >stuck.out &&
	grep "^FAIL: o\[.views.\]\[.down_any.\] == o\[.views.\]\[.down.\]" stuck.out
'

# ---- determinism ---------------------------------------------------------

test_expect_success 'the same seed twice: the same report and the same event log' '
	bgn-sim --protocol --size=1024 --scenario=kill --seed=7 --json \
		--log=a.log >a.json &&
	bgn-sim --protocol --size=1024 --scenario=kill --seed=7 --json \
		--log=b.log >b.json &&
	test_cmp a.json b.json &&
	test $(wc -l <a.log) -gt 100000 &&
	sha256sum <a.log >a.sum && sha256sum <b.log >b.sum &&
	test_cmp a.sum b.sum &&
	rm -f b.log
'

test_expect_success 'another seed: another run' '
	bgn-sim --protocol --size=1024 --scenario=kill --seed=8 --json \
		--log=c.log >c.json &&
	sha256sum <c.log >c.sum &&
	! test_cmp a.sum c.sum &&
	! test_cmp a.json c.json &&
	rm -f a.log c.log
'

test_expect_success 'churn (restarts, events, RPCs) twice: the same report' '
	bgn-sim --protocol --size=512 --scenario=churn --seed=3 --json >d.json &&
	bgn-sim --protocol --size=512 --scenario=churn --seed=3 --json >e.json &&
	test_cmp d.json e.json
'

test_expect_success '--host adds the machine section, only to the JSON asked for it' '
	bgn-sim --protocol --size=64 --scenario=kill --json --host >h.json &&
	grep "\"host\":{\"kib_per_broker\":[0-9.]*,\"wall_seconds\":[0-9.]*}" h.json &&
	bgn-sim --protocol --size=64 --scenario=kill --json >noh.json &&
	! grep "\"host\"" noh.json
'

# ---- scenario files --------------------------------------------------------

test_expect_success PYTHON3 'a scenario file: every op, targeted loads reported one by one' '
	cat >all.toml <<-\EOF &&
	# every op once, at N=128
	[sim]
	size = 128
	seed = 5
	duration = "40s"
	latency = "100us"
	jitter = "10us"
	rpc_timeout = "5s"
	[overlay]
	keepalive_interval = "200ms"
	peer_timeout = "2s"
	[[event]]
	op = "boot"
	window = "500ms"
	[[event]]
	at = "3s"
	op = "kill"
	ranks = "4,6,13"
	[[event]]
	at = "3s"
	op = "rack"
	count = 3            # seed 5 puts it on 66-68
	[[event]]
	at = "4s"
	op = "hang"
	ranks = "40"
	for = "3s"
	[[event]]
	at = "4s"
	op = "restart"
	ranks = "50"
	after = "1s"
	skew = "-1h"
	[[event]]
	at = "12s"
	op = "partition"
	split = 64
	for = "1s"
	[[event]]
	at = "15s"
	op = "churn"
	for = "10s"
	max_down = 2
	every = "1s"
	[[event]]
	at = "8s"
	op = "rpc"
	name = "to the dead"
	from = "0-3"
	to = "4,6,13"
	rate = 20
	for = "2s"
	[[event]]
	at = "8s"
	op = "rpc"
	name = "to the living"
	from = "1"
	to = "7,8,100"
	rate = 20
	for = "2s"
	[[event]]
	at = "2s"
	op = "publish"
	from = "9"
	rate = 10
	for = "30s"
	EOF
	bgn-sim --protocol --scenario=all.toml --check --json >all.json &&
	$SIMCHECK all.json \
		"o[\"size\"] == 128 and o[\"seed\"] == 5 and o[\"sim_seconds\"] == 40" \
		"o[\"scenario\"] == \"all.toml\"" \
		"o[\"views\"][\"down\"] == \"4,6,13,66-68\"" \
		"o[\"brokers\"][\"dead\"] == 6" \
		"[l[\"name\"] for l in o[\"rpc\"][\"loads\"]] == [\"to the dead\", \"to the living\"]" \
		"o[\"rpc\"][\"loads\"][0][\"to\"] == \"4,6,13\"" \
		"o[\"rpc\"][\"loads\"][0][\"sent\"] > 10" \
		"o[\"rpc\"][\"loads\"][0][\"failed_fast\"] == o[\"rpc\"][\"loads\"][0][\"sent\"]" \
		"o[\"rpc\"][\"loads\"][1][\"answered\"] == o[\"rpc\"][\"loads\"][1][\"sent\"] > 10" \
		"o[\"events\"][\"published\"] > 200"
'

test_expect_success 'scenario file errors are one clear line, exit 1' '
	printf "[sim]\nsize = 16\nsizes = 3\n[[event]]\nop = \"boot\"\n" >e1.toml &&
	test_expect_code 1 bgn-sim --protocol --scenario=e1.toml 2>e1.err &&
	test_cmp - e1.err <<-\EOF &&
	bgn-sim: e1.toml: [sim]: unknown key '"'"'sizes'"'"'
	EOF
	printf "[sim]\nsize = 16\n[[event]]\nop = \"boot\"\n[[event]]\nop = \"kill\"\ncuont = 3\n" >e2.toml &&
	test_expect_code 1 bgn-sim --protocol --scenario=e2.toml 2>e2.err &&
	grep "\[\[event\]\] 2 (kill): unknown key .cuont." e2.err &&
	printf "[sim]\nsize = 16\n[[event]]\nop = \"explode\"\n" >e3.toml &&
	test_expect_code 1 bgn-sim --protocol --scenario=e3.toml 2>e3.err &&
	grep "unknown op .explode." e3.err &&
	printf "[sim]\nsize = 16\n[overlay]\npeer_timeout = \"soon\"\n[[event]]\nop = \"boot\"\n" >e4.toml &&
	test_expect_code 1 bgn-sim --protocol --scenario=e4.toml 2>e4.err &&
	grep "\[overlay\]: peer_timeout must be a duration" e4.err &&
	printf "[sim]\nsize = 16\n[[event]]\nop = \"rpc\"\nto = \"99\"\n" >e5.toml &&
	test_expect_code 1 bgn-sim --protocol --scenario=e5.toml 2>e5.err &&
	grep "names no rank below the size" e5.err &&
	printf "[sim]\nsize = 16\n[[event]]\nop = \"boot\"\n[overlays]\n" >e6.toml &&
	test_expect_code 1 bgn-sim --protocol --scenario=e6.toml 2>e6.err &&
	grep "not a scenario table" e6.err &&
	printf "[sim\nsize = 16\n" >e7.toml &&
	test_expect_code 1 bgn-sim --protocol --scenario=e7.toml 2>e7.err &&
	grep "^bgn-sim: e7.toml:1:" e7.err &&
	test_expect_code 1 bgn-sim --protocol --scenario=nosuch 2>e8.err &&
	grep "unknown scenario .nosuch." e8.err &&
	test $(cat e1.err e2.err e3.err e4.err e5.err e6.err e7.err e8.err | wc -l) -eq 8
'

test_expect_success '--print-scenario shows a built-in with the options applied' '
	bgn-sim --protocol --size=100 --scenario=hang --count=7 --duration=4 \
		--print-scenario >hang.sc &&
	grep "\"op\": \"hang\"" hang.sc &&
	grep "\"count\": 7" hang.sc &&
	grep "\"for\": 4" hang.sc &&
	grep "\"size\": 100" hang.sc
'

test_expect_success 'options mean what they mean elsewhere; a bad one is one line' '
	bgn-sim --protocol -s 64 -T bgn:4 --seed=3 --scenario=kill --json >o.json &&
	grep "\"size\":64," o.json &&
	grep "\"topology\":\"bgn:4\"" o.json &&
	grep "\"seed\":3," o.json &&
	bgn-sim --protocol -n 64 --scenario=kill --json >n.json &&
	grep "\"size\":64," n.json &&
	test_expect_code 1 bgn-sim --protocol --bogus 2>bad1 &&
	echo "bgn-sim: unknown option '"'"'--bogus'"'"'; see '"'"'bgn-sim --protocol --help'"'"'" >bad1.want &&
	test_cmp bad1.want bad1 &&
	test_expect_code 1 bgn-sim --protocol -s x --scenario=kill 2>bad2 &&
	grep "^bgn-sim: invalid value .x. for --size; see" bad2 &&
	test_expect_code 1 bgn-sim --protocol --size=16 2>bad3 &&
	grep "needs --scenario" bad3 &&
	test $(cat bad1 bad2 bad3 | wc -l) -eq 3
'

test_expect_success 'the text report names every figure' '
	bgn-sim --protocol --size=64 --scenario=kill --count=3 >text.out &&
	grep "^scenario kill: 64 brokers, bgn, seed 1" text.out &&
	grep "^failures: 3 at 5.0 s; live 61, dead 3" text.out &&
	grep "^  total " text.out &&
	grep "^converged: [0-9.]* s after the fault" text.out &&
	grep "^views at the end: down 3 (" text.out &&
	grep "^reachability: \([0-9]*\) of \1 sampled survivor pairs" text.out &&
	grep "^rpc: [0-9]* sent" text.out &&
	grep "^events: " text.out &&
	grep "^deepest queue: " text.out &&
	grep "^this machine: " text.out
'

test_done
