#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-or-later
# test-sim.sh: quick TAP check of bgn-sim's numbers and error handling.
# Runs from the build directory (make check); needs ./bgn-sim built.
SIM=./bgn-sim
n=0
fails=0
echo "1..12"

check () {   # check DESCRIPTION COMMAND...
    desc=$1; shift
    n=$((n + 1))
    if "$@" >/dev/null 2>&1; then echo "ok $n - $desc"
    else echo "not ok $n - $desc"; fails=$((fails + 1)); fi
}

# field JSON NAME: print the value of a top-level scalar field
field () {
    printf '%s\n' "$1" | tr ',{}' '\n\n\n' | sed -n "s/^\"$2\":\"*\([^\"]*\)\"*$/\1/p"
}

has () {  # has JSON NAME VALUE
    test "$(field "$1" "$2")" = "$3"
}

j16=$($SIM --topology bgn --size 16 --json)
check "bgn N=16: degree 7" has "$j16" degree_max 7
check "bgn N=16: diameter 2" has "$j16" diameter 2
check "bgn N=16: all pairs connected" has "$j16" connected_fraction 1.000000

j1k=$($SIM --topology bgn:8 --size 1024 --fail 10 --json)
check "bgn:8 N=1024: degree 43 (42 offsets below 512, plus 512)" has "$j1k" degree_min 43
check "bgn:8 N=1024: diameter 3" has "$j1k" diameter 3
check "bgn:8 N=1024, 10 failed: 1014 live" has "$j1k" live 1014
check "bgn:8 N=1024: routing walks agree with BFS" has "$j1k" route_check_mismatches 0

jt=$($SIM --topology kary:2 --size 1024 --fail 1 --fail-mode lowest --json)
check "kary:2 N=1024: diameter 19" has "$jt" diameter 19
check "kary:2 N=1024, rank 1 down: its 511 descendants cut off from rank 0" has "$jt" cut_off_from_rank0 511

check "bad topology exits 1" sh -c "$SIM --topology bgn:1 --size 16; test \$? -eq 1"
check "bad option exits 1 with one line on stderr" \
    sh -c "test \"\$($SIM --bogus 2>&1 >/dev/null)\" = \"bgn sim: unknown option '--bogus'; see 'bgn sim --help'\" && { $SIM --bogus 2>/dev/null; test \$? -eq 1; }"
check "--help prints usage" sh -c "$SIM --help | grep -q -- --fail-mode"
test $fails -eq 0
