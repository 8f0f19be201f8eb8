#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-or-later
#
# t0010-config.t: bgn-config and the TOML/configuration libraries.
#
# Three corpora live in t/toml/: valid/ (each document must parse, and
# where Python has tomllib, bgn-config's JSON must agree with it, see
# toml/compare.py), invalid/ (each must be rejected with exit 1 and a
# FILE:LINE:COL message) and schema/ (broker configs: good-*.toml must
# pass "check", bad-*.toml must fail with the message in their
# "# expect:" line).

test_description='bgn-config: TOML parsing and broker config checks'

. "$(dirname "$0")/sharness.sh"

TOMLDIR="$SHARNESS_TEST_SRCDIR/toml"
PY=${PYTHON3:-python3}
test -n "$PY" || PY=python3

if "$PY" -c 'import tomllib' 2>/dev/null; then
	test_set_prereq TOMLLIB
else
	say "python3 lacks tomllib (needs Python >= 3.11):" \
	    "skipping the tomllib comparisons"
fi

test_expect_success 'bgn-config --help prints usage to stdout, exit 0' '
	bgn-config --help >out &&
	grep "^Usage: bgn config dump FILE" out &&
	bgn-config -h >out2 &&
	test_cmp out out2
'
test_expect_success 'bgn-config with no arguments fails with one line' '
	test_expect_code 1 bgn-config 2>err &&
	test $(wc -l <err) -eq 1 &&
	grep "^bgn config: dump or check?; see .bgn config --help.$" err
'
test_expect_success 'unknown subcommand: usage on stderr, exit 1' '
	test_expect_code 1 bgn-config frobnicate >out 2>err &&
	test_must_be_empty out &&
	test $(wc -l <err) -eq 1 &&
	grep "^bgn config: unknown command .frobnicate. (dump, check); see .bgn config --help.$" err
'
test_expect_success 'unknown option to check: usage on stderr, exit 1' '
	test_expect_code 1 bgn-config check --bogus x.toml 2>err &&
	test $(wc -l <err) -eq 1 &&
	grep "^bgn config: check: unknown option .--bogus.; see .bgn config --help.$" err
'
test_expect_success 'dump of a missing file fails naming it' '
	test_expect_code 1 bgn-config dump nosuch.toml 2>err &&
	grep "^nosuch.toml: No such file or directory" err
'
test_expect_success 'dump prints pretty JSON with sorted keys' '
	printf "b = 1\na = { y = \"s\", x = [true] }\n" >doc.toml &&
	bgn-config dump doc.toml >out &&
	cat >expect <<-\EOT &&
	{
	  "a": {
	    "x": [
	      true
	    ],
	    "y": "s"
	  },
	  "b": 1
	}
	EOT
	test_cmp expect out
'
test_expect_success 'nan and inf are dumped as strings' '
	printf "a = nan\nb = -inf\nc = +inf\n" >special.toml &&
	bgn-config dump special.toml >out &&
	grep "\"a\": \"nan\"" out &&
	grep "\"b\": \"-inf\"" out &&
	grep "\"c\": \"inf\"" out
'
test_expect_success 'date-times are normalised RFC 3339 strings' '
	printf "a = 1979-05-27 07:32:00.50z\nb = 07:32:00\n" >dt.toml &&
	bgn-config dump dt.toml >out &&
	grep "\"a\": \"1979-05-27T07:32:00.50Z\"" out &&
	grep "\"b\": \"07:32:00\"" out
'

# --- valid corpus ------------------------------------------------------------
for f in "$TOMLDIR"/valid/*.toml; do
	name=$(basename "$f" .toml)
	test_expect_success "valid: $name parses" "
		bgn-config dump '$f' >'$name.json'
	"
	test_expect_success TOMLLIB "valid: $name agrees with tomllib" "
		'$PY' '$TOMLDIR/compare.py' '$f' '$name.json'
	"
done

# --- invalid corpus ----------------------------------------------------------
# The file is copied under its base name so the message prefix is simple.
for f in "$TOMLDIR"/invalid/*.toml; do
	name=$(basename "$f")
	test_expect_success "invalid: $name rejected with FILE:LINE:COL" "
		cp '$f' '$name' &&
		test_expect_code 1 bgn-config dump '$name' >out 2>err &&
		test_must_be_empty out &&
		grep '^$name:[1-9][0-9]*:[1-9][0-9]*: .' err
	"
done

# --- broker configuration schema ----------------------------------------------
for f in "$TOMLDIR"/schema/good-*.toml; do
	name=$(basename "$f")
	test_expect_success "check: $name is accepted silently" "
		bgn-config check --no-host '$f' >out 2>err &&
		test_must_be_empty out &&
		test_must_be_empty err
	"
done
for f in "$TOMLDIR"/schema/bad-*.toml; do
	name=$(basename "$f")
	expect=$(sed -n 's/^# expect: //p' "$f")
	test_expect_success "check: $name names the key" "
		cp '$f' '$name' &&
		test_expect_code 1 bgn-config check --no-host '$name' 2>err &&
		cat err &&
		test \"\$(wc -l <err)\" -eq 1 &&
		grep -F \"$name: \$(sed -n 's/^# expect: //p' '$name')\" err
	"
done

test_expect_success 'check reports TOML syntax errors as FILE:LINE:COL' '
	printf "[overlay]\nttl = = 3\n" >syntax.toml &&
	test_expect_code 1 bgn-config check syntax.toml 2>err &&
	grep "^syntax.toml:2:7: " err
'
test_expect_success 'check -o overrides a file value' '
	printf "[overlay]\nttl = 300\n" >ttl.toml &&
	test_expect_code 1 bgn-config check ttl.toml 2>err &&
	grep "^ttl.toml: key .overlay.ttl.: must be" err &&
	printf "[overlay]\nttl = 3\n" >ttl3.toml &&
	bgn-config check --print -o overlay.ttl=9 ttl3.toml >out &&
	grep "\"ttl\": 9" out
'
test_expect_success 'check -o with a bad value names the override' '
	test_expect_code 1 bgn-config check -o overlay.ttl=0x100 ttl3.toml \
		2>err &&
	grep "^-o overlay.ttl=0x100: key .overlay.ttl.: must be" err
'
test_expect_success 'check -o with an unknown key' '
	test_expect_code 1 bgn-config check -o overlay.tll=1 ttl3.toml 2>err &&
	grep "^-o overlay.tll=1: key .overlay.tll.: unknown key" err
'
test_expect_success 'check -o can break the peer_timeout rule' '
	test_expect_code 1 bgn-config check -o overlay.peer_timeout=500ms \
		ttl3.toml 2>err &&
	grep "key .overlay.peer_timeout.: must be greater than" err
'
test_expect_success 'a keepalive_interval above the timeout is blamed by its own name' '
	test_expect_code 1 bgn-config check -o overlay.keepalive_interval=20s \
		ttl3.toml 2>err &&
	grep "^-o overlay.keepalive_interval=20s: key .overlay.keepalive_interval.: must be less than overlay.peer_timeout (10s)" err &&
	test_must_fail grep peer_timeout.: err
'
test_expect_success 'check --print prints defaults' '
	bgn-config check --print "$TOMLDIR/schema/good-empty.toml" >out &&
	grep "\"topology\": \"bgn\"" out &&
	grep "\"default_port\": 8050" out &&
	grep "\"peer_timeout\": \"10s\"" out
'
test_expect_success 'check a directory of *.toml files' '
	mkdir confdir &&
	printf "[overlay]\nttl = 4\n" >confdir/10-overlay.toml &&
	printf "[broker]\nlog_level = 6\n" >confdir/20-broker.toml &&
	echo "not toml" >confdir/README &&
	bgn-config check --print confdir >out &&
	grep "\"ttl\": 4" out &&
	grep "\"log_level\": 6" out
'
test_expect_success 'a key defined in two files of a directory is an error' '
	printf "[overlay]\nsndhwm = 5\nttl = 5\n" >confdir/30-dup.toml &&
	test_expect_code 1 bgn-config check confdir 2>err &&
	grep "^confdir/30-dup.toml: key .overlay.ttl.: already defined in confdir/10-overlay.toml" err
'
test_expect_success 'check of a missing path fails' '
	test_expect_code 1 bgn-config check nosuchdir 2>err &&
	grep "^nosuchdir: No such file or directory" err
'

test_done
