#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-or-later
#
# t6000-debian.t: the Debian packages build from the release tarball,
# install, run and go away cleanly (make check-packages; CI runs it after
# make distcheck).  As root only: it installs into this machine.
#  - dpkg-buildpackage -us -uc -b in the unpacked tarball (nocheck: the
#    tarball's make check ran in distcheck) makes bgn, libbgn0 and
#    libbgn-dev, and no bgn-flux without the pkg.bgn.flux profile;
#  - lintian reports no error;
#  - each package holds what the split says, the config is a conffile,
#    and no maintainer script starts or enables anything;
#  - apt-get install ./*.deb; bgn start --size=4 bgn overlay-status runs
#    from /usr/bin with the module from the installed path, and every
#    program reports the package's version;
#  - dpkg --purge leaves none of the packages' files behind.
# BGN_TARBALL names the tarball; without it the test makes one.
test_description='Debian packages: build, lintian, install, run, purge'

. "$(dirname "$0")/sharness.sh"

if test "$(id -u)" != 0; then
	skip_all='installs packages into this machine: run as root'
	test_done
fi
for cmd in dpkg-buildpackage dh lintian apt-get; do
	if ! command -v $cmd >/dev/null 2>&1; then
		skip_all="$cmd not found (etc/install-deps.sh installs it)"
		test_done
	fi
done
for p in bgn libbgn0 libbgn-dev; do
	if dpkg-query -W -f='${Status}' $p 2>/dev/null | grep -q "ok installed"; then
		skip_all="package $p is installed on this machine already; not touching it"
		test_done
	fi
done

MULTIARCH=$(dpkg-architecture -qDEB_HOST_MULTIARCH)

# libtool cannot install into the trash directory's path (a space).
cd_scratch t6000

test_expect_success 'the release tarball' '
	BGN_TARBALL=$(release_tarball) &&
	tar xzf "$BGN_TARBALL" &&
	SRC=$(ls -d bgn-*/ | head -n 1) && SRC=${SRC%/} &&
	test -f "$SRC/debian/control" &&
	VERSION=$(cat "$SRC/.tarball-version") &&
	echo "$SRC" >src.name && echo "$VERSION" >version
'
SRC=$(cat src.name 2>/dev/null)
VERSION=$(cat version 2>/dev/null)

# make dist wrote the tarball's version into its debian/changelog.
test_expect_success 'dpkg-buildpackage -us -uc -b builds bgn, libbgn0, libbgn-dev' '
	head -n 1 "$SRC/debian/changelog" | grep "^bgn ($VERSION-1) " &&
	(cd "$SRC" && DEB_BUILD_OPTIONS=nocheck dpkg-buildpackage -us -uc -b) \
		>build.log 2>&1 || { tail -n 60 build.log; false; } &&
	for p in bgn libbgn0 libbgn-dev; do
		test -f ${p}_${VERSION}-1_*.deb || return 1
	done &&
	! ls bgn-flux_*.deb 2>/dev/null &&
	ls -s --block-size=K *.deb
'

test_expect_success 'lintian: no error' '
	test -f bgn_${VERSION}-1_*.changes &&
	lintian --tag-display-limit 0 bgn_${VERSION}-1_*.changes >lintian.out 2>&1;
	rc=$?; cat lintian.out &&
	test $rc -eq 0 && ! grep "^E: " lintian.out
'

test_expect_success 'each package holds its part of the split' '
	dpkg-deb -c bgn_${VERSION}-1_*.deb >bgn.list &&
	dpkg-deb -c libbgn0_${VERSION}-1_*.deb >lib.list &&
	dpkg-deb -c libbgn-dev_${VERSION}-1_*.deb >dev.list &&
	for f in ./usr/bin/bgn ./usr/bin/bgn-sim ./usr/sbin/bgn-broker \
		./usr/lib/$MULTIARCH/bgn/modules/overlay-bgn.so \
		./usr/libexec/bgn/cmd/bgn-keygen ./lib/systemd/system/bgn.service \
		./usr/lib/sysusers.d/bgn.conf ./etc/bgn/bgn.toml \
		./usr/share/man/man8/bgn-broker.8.gz; do
		grep -q " $f\$" bgn.list || { echo "bgn lacks $f"; return 1; }
	done &&
	grep -q " ./usr/lib/$MULTIARCH/libbgn.so.0" lib.list &&
	! grep -q "\.h$\|\.pc$\|bgn-broker" lib.list &&
	grep -q " ./usr/include/bgn/client.h$" dev.list &&
	grep -q " ./usr/lib/$MULTIARCH/pkgconfig/bgn.pc$" dev.list &&
	grep -q " ./usr/lib/$MULTIARCH/libbgn.so -> " dev.list &&
	! grep -q "libbgn.so\|include" bgn.list &&
	! grep -q "flux-bgn\|/flux/" bgn.list &&
	dpkg-deb -I bgn_${VERSION}-1_*.deb conffiles >conffiles &&
	grep "^/etc/bgn/bgn.toml$" conffiles
'

test_expect_success 'no maintainer script starts or enables the service' '
	mkdir ctl && dpkg-deb -e bgn_${VERSION}-1_*.deb ctl &&
	cat ctl/postinst &&
	grep -q "systemd-sysusers" ctl/postinst &&
	! grep -E "(deb-systemd-invoke|systemctl)[^|;]* (start|restart|enable)" ctl/* &&
	# enabling only again what the admin had enabled (an upgrade)
	n=$(grep -c "deb-systemd-helper enable" ctl/postinst) &&
	test $(grep -B3 "deb-systemd-helper enable" ctl/postinst |
		grep -c "deb-systemd-helper --quiet was-enabled") -eq $n
'

test_expect_success 'apt-get install ./*.deb' '
	apt-get install -y --no-install-recommends ./bgn_${VERSION}-1_*.deb \
		./libbgn0_${VERSION}-1_*.deb ./libbgn-dev_${VERSION}-1_*.deb \
		>install.log 2>&1 || { cat install.log; false; } &&
	dpkg-query -W -f="\${Version}\n" bgn >installed &&
	echo "${VERSION}-1" >expect && test_cmp expect installed &&
	getent passwd bgn
'

# A clean environment: nothing from the build tree in PATH, so the
# installed bgn runs, and its brokers load the installed module.
INSTALLED_ENV="env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=$SCRATCH TMPDIR=$SCRATCH"

test_expect_success 'the installed bgn start --size=4 bgn overlay-status' '
	$INSTALLED_ENV sh -c "command -v bgn" >which &&
	echo /usr/bin/bgn >expect && test_cmp expect which &&
	(cd / && $INSTALLED_ENV bgn start --size=4 sh -c \
		"bgn overlay-status && bgn dmesg -r 2") >run.out 2>&1 ||
		{ cat run.out; false; } &&
	cat run.out &&
	grep "^overlay full: size 4, topology bgn" run.out &&
	grep "loaded /usr/lib/$MULTIARCH/bgn/modules/overlay-bgn.so$" run.out &&
	! grep "$BGN_TOP_BUILDDIR" run.out
'

test_expect_success 'the installed programs report the package version' '
	$INSTALLED_ENV bgn --version >v1 &&
	$INSTALLED_ENV bgn-broker --version >v2 &&
	echo "bgn $VERSION" >e1 && echo "bgn-broker $VERSION" >e2 &&
	test_cmp e1 v1 && test_cmp e2 v2 &&
	pkg-config --modversion bgn >v3 && echo "$VERSION" >e3 && test_cmp e3 v3
'

test_expect_success 'the service is installed but neither enabled nor started' '
	test -f /lib/systemd/system/bgn.service &&
	if command -v systemctl >/dev/null 2>&1; then
		test "$(systemctl is-enabled bgn.service 2>&1)" != enabled &&
		! systemctl is-active -q bgn.service
	fi &&
	! pgrep -x -u bgn bgn-broker
'

test_expect_success 'dpkg --purge leaves nothing behind' '
	dpkg-query -L bgn libbgn0 libbgn-dev >files.raw &&
	sort -u files.raw >files && test -s files &&
	dpkg --purge bgn libbgn-dev libbgn0 >purge.log 2>&1 ||
		{ cat purge.log; false; } &&
	for p in bgn libbgn0 libbgn-dev; do
		! dpkg-query -W -f="\${Status}\n" $p 2>/dev/null | grep -q "installed" ||
			return 1
	done &&
	while read -r f; do
		case $f in
		/|/etc|/lib|/lib/*/|/usr|/usr/*/) continue ;;
		esac
		if test -f "$f" || test -L "$f"; then
			echo "left behind: $f"; return 1
		fi
	done <files &&
	! test -e /etc/bgn &&
	! test -e /usr/lib/$MULTIARCH/bgn &&
	! test -e /usr/libexec/bgn &&
	! ls /var/lib/systemd/deb-systemd-helper-enabled/*bgn* 2>/dev/null
'

test_done
