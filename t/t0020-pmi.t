#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-or-later
# t0020-pmi.t: the PMI-1 client (src/common/libpmi) against the real
# launcher, Debian mpich's hydra mpiexec.  pmi_exchange puts a value made
# of every Z85 symbol (and a space) under its rank's key, enters the
# barrier, gets and checks every rank's value, and prints "rank R: ok".

test_description='PMI-1 client under a real mpiexec'

. "$(dirname "$0")/sharness.sh"

PMI_EXCHANGE="$BGN_TOP_BUILDDIR/src/common/libpmi/test/pmi_exchange"
: "${MPIEXEC:=$(command -v mpiexec)}"

if ! test -x "$PMI_EXCHANGE"; then
    skip_all="pmi_exchange is not built ($PMI_EXCHANGE); run make first"
    test_done
fi
if test -z "$MPIEXEC" || ! test -x "$MPIEXEC"; then
    skip_all='mpiexec not found (apt-get install mpich)'
    test_done
fi

run_exchange() {
    n=$1
    timeout 60 "$MPIEXEC" -n "$n" "$PMI_EXCHANGE" 20 >out.$n 2>err.$n
    rc=$?
    cat out.$n err.$n
    test $rc -eq 0 &&
    test "$(grep -c '^rank [0-9]*: ok$' out.$n)" -eq "$n" &&
    for r in $(seq 0 $((n - 1))); do
        grep -q "^rank $r: ok$" out.$n || return 1
    done
}

test_expect_success 'pmi_exchange under mpiexec -n 1' '
    run_exchange 1
'

test_expect_success 'pmi_exchange under mpiexec -n 4' '
    run_exchange 4
'

test_expect_success 'pmi_exchange under mpiexec -n 16' '
    run_exchange 16
'

test_expect_success 'pmi_exchange without a launcher fails clearly' '
    (unset PMI_FD PMI_PORT PMI_RANK PMI_SIZE;
     test_must_fail "$PMI_EXCHANGE" >out.nolauncher) &&
    cat out.nolauncher &&
    grep "PMI_FD is not set" out.nolauncher
'

test_done
