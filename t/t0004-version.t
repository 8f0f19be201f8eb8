#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-or-later
#
# t0004-version.t: every place an admin reads bgn's version says the
# same one, the one configure took (config/bgn-version: git describe in a
# clone, .tarball-version in a release tarball): bgn --version,
# bgn-broker --version, overlay-status --json (the broker's and each
# peer's, from its hello), the status-all summary, bgn metrics and the
# log line of each admitted peer.
test_description='the version is the same everywhere an admin reads it'

. "$(dirname "$0")/sharness.sh"

# The version configure took, from the build tree's config.h.
VERSION=$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"$/\1/p' \
	"$BGN_TOP_BUILDDIR/config/config.h")

test_expect_success 'configure took a version of the documented form' '
	test -n "$VERSION" &&
	echo "$VERSION" |
	grep -E "^[0-9]+\.[0-9]+\.[0-9]+(\+([0-9]+\.g[0-9a-f]+(\.dirty)?|dirty|unknown))?$"
'

test_expect_success 'bgn --version and bgn-broker --version print it' '
	bgn --version >v.bgn &&
	bgn-broker --version >v.broker &&
	echo "bgn $VERSION" >expect.bgn &&
	echo "bgn-broker $VERSION" >expect.broker &&
	test_cmp expect.bgn v.bgn &&
	test_cmp expect.broker v.broker
'

test_expect_success 'a tarball build takes .tarball-version, not git' '
	mkdir -p fake &&
	echo 9.8.7 >fake/.tarball-version &&
	"$BGN_TOP_SRCDIR/config/bgn-version" fake >v.fake &&
	printf 9.8.7 >expect.fake &&
	test_cmp expect.fake v.fake &&
	: >fake/.tarball-version &&
	test_must_fail "$BGN_TOP_SRCDIR/config/bgn-version" fake 2>empty.err &&
	grep "is empty" empty.err
'

test_expect_success 'a directory inside another git tree does not take its version' '
	rm -f fake/.tarball-version &&
	"$BGN_TOP_SRCDIR/config/bgn-version" fake >v.none &&
	printf 0.0.0+unknown >expect.none &&
	test_cmp expect.none v.none
'

test_expect_success 'status, summary, metrics and the hello log show it' '
	bgn start --size=4 sh -c "
		bgn overlay-status --json >s.json &&
		bgn overlay-status --all --json >all.json &&
		bgn metrics >m.prom &&
		bgn metrics -r 1 >m1.prom &&
		bgn dmesg -r 0 >dmesg0" &&
	grep "\"version\": \"$VERSION\"" s.json &&
	test $(grep -c "\"version\": \"$VERSION\"" s.json) -ge 3 &&
	grep "\"$VERSION\": 4" all.json &&
	grep "^bgn_build_info{version=\"$VERSION\"} 1$" m.prom &&
	grep "^bgn_overlay_instance_version_brokers{version=\"$VERSION\"} 4$" m.prom &&
	grep "^bgn_build_info{version=\"$VERSION\"} 1$" m1.prom &&
	grep "^bgn_overlay_broker_info{rank=\"1\",host=\"[^\"]*\",version=\"$VERSION\"} 1$" m1.prom &&
	grep "debug: peer 1 ([^)]*) up: incarnation [0-9]*, bgn $VERSION$" dmesg0 &&
	test_must_fail grep "this broker runs" dmesg0
'

# At 64 brokers rank 0 has 11 peers, all up within a second: more than a
# flood-limited line may print in a minute (10).  Each peer's line is
# there all the same, so dmesg names the version of every peer.
test_expect_success PYTHON3 'every peer of a 64-broker instance has its version line' '
	bgn start --size=64 sh -c "
		bgn overlay-status --json -r 0 >s64.json &&
		bgn dmesg -r 0 >dmesg64" &&
	"$PYTHON3" -c "import json; print(len(json.load(open(\"s64.json\"))[\"peers\"]))" >npeers &&
	test $(cat npeers) -gt 10 &&
	sed -n "s/.* peer \([0-9]*\) ([^)]*) up: incarnation [0-9]*, bgn $VERSION$/\1/p" \
		dmesg64 | sort -un >up.ranks &&
	test $(wc -l <up.ranks) -eq $(cat npeers)
'

test_done
