# SPDX-License-Identifier: LGPL-3.0-or-later
# bgn.sh: helpers shared by the sharness tests (sourced by sharness).

: "${BGN_TOP_BUILDDIR:=$SHARNESS_TEST_DIRECTORY/..}"
: "${BGN_TOP_SRCDIR:=$SHARNESS_TEST_SRCDIR/..}"
export BGN_TOP_BUILDDIR BGN_TOP_SRCDIR

# Programs from the build tree come first in PATH.
PATH="$BGN_TOP_BUILDDIR/t:$BGN_TOP_BUILDDIR/src/cmd:$BGN_TOP_BUILDDIR/src/broker:$BGN_TOP_BUILDDIR/src/sim:$PATH"
export PATH

# Never let a test inherit an instance from the environment.
unset BGN_URI BGN_RUNDIR

# pids_gone FILE: every pid in FILE ("rank pid" lines) has exited (and
# been reaped) within 10 seconds.
pids_gone () {
    _i=0
    while test $_i -lt 200; do
        _alive=0
        while read _rank _pid _rest; do
            if kill -0 "$_pid" 2>/dev/null \
               && ! grep -q '^State:.*Z' /proc/$_pid/status 2>/dev/null; then
                _alive=1
            fi
        done <"$1"
        test $_alive -eq 0 && return 0
        sleep 0.05
        _i=$((_i + 1))
    done
    echo "still running: $(cat "$1")" >&2
    return 1
}

# cd_scratch TAG: the rest of the script runs in a fresh directory under
# /tmp, removed when it exits: for tools that cannot work in a path with
# a space, as "trash directory.NAME" is (libtool's install, rpmbuild).
# The directory is $SCRATCH.
cd_scratch () {
	SCRATCH=$(mktemp -d "/tmp/bgn-$1.XXXXXX") || exit 1
	trap 'rc=$?; rm -rf "$SCRATCH"; (exit $rc); die' EXIT
	cd "$SCRATCH" || exit 1
}

# release_tarball: the path of the release tarball the package tests
# build from: $BGN_TARBALL (.ci/run passes the one make distcheck made) or
# one `make dist` makes in the build tree (its output in dist.log).
release_tarball () {
	if test -n "$BGN_TARBALL"; then
		echo "$BGN_TARBALL"
		return 0
	fi
	make -C "$BGN_TOP_BUILDDIR" dist >dist.log 2>&1 &&
	ls "$BGN_TOP_BUILDDIR"/bgn-*.tar.gz | tail -n 1
}

# jq_py FILE EXPR: evaluate the python expression EXPR with o = the JSON
# in FILE; fail (naming EXPR) unless it is true.  Needs the PYTHON3
# prerequisite.
jq_py () {
	"$PYTHON3" -c "
import json, sys
o = json.load(open(sys.argv[1]))
ok = $2
if not ok:
    sys.stderr.write('check failed: %s\\n' % sys.argv[2])
    sys.exit(1)
" "$1" "$2"
}
