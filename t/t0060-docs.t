#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-or-later
#
# t0060-docs.t: the documentation is whole and true.
#  - every man page renders with groff -man -ww without a warning;
#  - one header form (.TH NAME SECTION "date" "bgn" "bgn Manual");
#  - every command "bgn help" lists has a page, and bgn(1) lists them all;
#  - the defaults bgn.toml(5) states are the ones the code applies;
#  - short options mean one thing across all commands;
#  - README's "Using it" shows the host-name forms and the metrics example.

test_description='man pages, defaults and options agree with the code'

. "$(dirname "$0")/sharness.sh"

DOC="$BGN_TOP_SRCDIR/doc"
SCRIPTS="$SHARNESS_TEST_SRCDIR/scripts"
PY=${PYTHON3:-python3}

if command -v groff >/dev/null 2>&1; then
	test_set_prereq GROFF
fi

test_expect_success GROFF 'every man page renders without a groff warning' '
	for page in "$DOC"/*.[1-8]; do
		groff -man -ww -z "$page" 2>warn || return 1
		if test -s warn; then
			echo "$page:"; cat warn; return 1
		fi
	done
'

test_expect_success GROFF 'a page with a rendering bug is caught' '
	printf ".TH X 1\n.SH NAME\nx \\\\- y\n.B a\\\\qb\n" >bad.1 &&
	groff -man -ww -z bad.1 2>warn;
	test -s warn
'

test_expect_success 'every page has the same header form' '
	for page in "$DOC"/*.[1-8]; do
		grep "^\.TH [A-Z.-]* [1-8] \"2026-12\" \"bgn\" \"bgn Manual\"$" \
			"$page" >/dev/null || { echo "bad header: $page"; return 1; }
	done
'

test_expect_success 'every command in bgn help has a page, listed in bgn(1)' '
	bgn help >help.out &&
	sed -n "s/^  \([a-z][a-z-]*\)  .*/\1/p" help.out >commands &&
	test $(wc -l <commands) -ge 14 &&
	while read cmd; do
		test -f "$DOC/bgn-$cmd.1" || { echo "no page: bgn-$cmd.1"; return 1; }
		grep "^\.BR bgn\\\\-$(echo $cmd | sed "s/-/\\\\\\\\-/g") (1)" \
			"$DOC/bgn.1" >/dev/null \
			|| { echo "bgn(1) lacks $cmd"; return 1; }
	done <commands &&
	for c in keygen sim dmesg metrics overlay; do
		grep -x "$c" commands || return 1
	done
'

test_expect_success 'every command page is installed (doc/Makefile.am)' '
	for page in "$DOC"/bgn-*.1; do
		grep "$(basename $page)" "$DOC/Makefile.am" >/dev/null \
			|| { echo "not installed: $page"; return 1; }
	done
'

test_expect_success PYTHON3 'bgn.toml(5) states the defaults the code applies' '
	bgn config dump --defaults >defaults.json &&
	"$PY" "$SCRIPTS/mandefaults.py" "$DOC/bgn.toml.5" defaults.json >check.out &&
	grep "^ok overlay.peer_timeout = 10s$" check.out &&
	grep "^ok overlay.heal_threshold = -1$" check.out &&
	test $(grep -c "^ok " check.out) -ge 19
'

test_expect_success PYTHON3 'a wrong default in the page is caught' '
	sed "s/^\(\.BR sndhwm \" (integer, default\) 1000)\"/\1 999)\"/" \
		"$DOC/bgn.toml.5" >wrong.5 &&
	test_must_fail "$PY" "$SCRIPTS/mandefaults.py" wrong.5 defaults.json >wrong.out &&
	grep "^disagree: overlay.sndhwm" wrong.out
'

test_expect_success PYTHON3 'one meaning per short option across all commands' '
	for c in start ping rpc overlay-status overlay-trace overlay-disconnect \
	         dmesg event fault config keygen sim; do
		bgn $c --help >help.$c || return 1
	done &&
	bgn --help >help.bgn &&
	"$PY" "$SCRIPTS/shortopts.py" help.* >opts.out &&
	grep "^-r --rank$" opts.out &&
	grep "^-t --timeout$" opts.out &&
	grep "^-c --count$" opts.out &&
	grep "^-s --size$" opts.out &&
	grep "^-v --verbose$" opts.out
'

test_expect_success 'a bad option is one line pointing at --help, in every command' '
	for c in start ping rpc overlay-status overlay-trace overlay-disconnect \
	         dmesg event fault config keygen sim; do
		test_expect_code 1 bgn $c --bogus >out 2>err || return 1
		test_must_be_empty out &&
		test $(wc -l <err) -eq 1 &&
		grep "^bgn $c: .*--bogus.*; see .bgn $c --help.$" err \
			|| { cat err; return 1; }
	done
'

test_expect_success 'README shows the host-name forms and the metrics example' '
	sed -n "/^## Using it/,/^## /p" "$BGN_TOP_SRCDIR/README.md" >using &&
	grep "bgn ping node5" using &&
	grep "bgn fault kill \"node\[3-4\]\"" using &&
	grep "bgn overlay lookup" using &&
	grep "bgn metrics >" using &&
	grep "bgn_overlay_instance_down_ranks{view=\"any\"}" using &&
	grep "bgn metrics -r R" using
'

test_done
