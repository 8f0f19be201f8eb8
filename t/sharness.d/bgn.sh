# bgn.sh: helpers shared by the sharness tests (sourced by sharness).

: "${BGN_TOP_BUILDDIR:=$SHARNESS_TEST_DIRECTORY/..}"
: "${BGN_TOP_SRCDIR:=$SHARNESS_TEST_SRCDIR/..}"
export BGN_TOP_BUILDDIR BGN_TOP_SRCDIR

# Programs from the build tree come first in PATH.
PATH="$BGN_TOP_BUILDDIR/src/cmd:$BGN_TOP_BUILDDIR/src/broker:$BGN_TOP_BUILDDIR/src/sim:$PATH"
export PATH

# Never let a test inherit an instance from the environment.
unset BGN_URI BGN_RUNDIR
