#!/bin/sh
#
# t0002-layout.t: the source layout rules the README states.
#
# The overlay's protocol core must run without sockets (the unit tests
# and the simulator link it alone), its parts must call downward only,
# and no include circle may creep in anywhere; t/scripts/layout.py checks
# the sources, the link of the core's unit tests checks the build.

test_description='source layout: include circles, layering, a sans-I/O core'

. "$(dirname "$0")/sharness.sh"

PY=${PYTHON3:-python3}

test_expect_success 'no include circles, the parts layered, ZeroMQ only in sock.c and curve.c' '
	"$PY" "$BGN_TOP_SRCDIR/t/scripts/layout.py" "$BGN_TOP_SRCDIR" >layout.out 2>&1 ||
	{ cat layout.out; false; }
'

test_expect_success 'the checker catches a part that calls upward' '
	mkdir -p bad/src/modules/overlay &&
	cp "$BGN_TOP_SRCDIR"/src/modules/overlay/*.[ch] bad/src/modules/overlay/ &&
	echo "#include \"hello.h\"" >>bad/src/modules/overlay/route.c &&
	echo "static void f (void) { gettimeofday (0, 0); }" >>bad/src/modules/overlay/fence.c &&
	test_must_fail "$PY" "$BGN_TOP_SRCDIR/t/scripts/layout.py" bad >bad.out &&
	grep "route.c: includes hello.h, a part above it" bad.out &&
	grep "fence.c: the protocol core calls gettimeofday()" bad.out
'

test_expect_success 'the core links without libzmq or czmq (its unit tests)' '
	core_test="$BGN_TOP_BUILDDIR/src/modules/overlay/test_route.t" &&
	if ! test -x "$core_test"; then
		make -C "$BGN_TOP_BUILDDIR/src/modules/overlay" test_route.t >/dev/null
	fi &&
	ldd "$core_test" >ldd.out &&
	test_must_fail grep -E "libzmq|libczmq" ldd.out
'

test_done
