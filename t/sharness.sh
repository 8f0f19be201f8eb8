# SPDX-License-Identifier: LGPL-3.0-or-later
# sharness.sh: load Debian's sharness with bgn's test settings.
# Test scripts start with:  . "$(dirname "$0")/sharness.sh"
: "${SHARNESS:=/usr/share/sharness/sharness.sh}"
if ! test -r "$SHARNESS"; then
    echo "1..0 # SKIP sharness not found at $SHARNESS (apt-get install sharness)"
    exit 0
fi
: "${SHARNESS_TEST_SRCDIR:=$(cd "$(dirname "$0")" && pwd)}"
export SHARNESS_TEST_SRCDIR
. "$SHARNESS"

# What each test body prints goes to NAME.out beside the script's log
# (it is thrown away otherwise, unless the script runs with -v): when a
# test fails in CI, .ci/run shows the failing test's part of it (its
# "expecting success:" block), the diagnostics the test wrote.
if test "$verbose" != t; then
    exec 3>"$SHARNESS_TEST_DIRECTORY/$(basename "$0" .t).out" 4>&3
fi
