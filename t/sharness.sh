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
