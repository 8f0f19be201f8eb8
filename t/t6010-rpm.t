#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-or-later
#
# t6010-rpm.t: rpmbuild -ta builds bgn's RPMs from the release tarball
# (make check-packages; CI runs it after make distcheck), as far as
# Debian's rpm allows:
#  - --nodeps: the BuildRequires name RHEL's packages (pkgconfig(...),
#    systemd-rpm-macros), which no rpm database here knows; the build
#    uses the Debian libraries instead;
#  - %check runs make check only with BGN_RPM_CHECK=1 (it is the
#    tarball's make check, which make distcheck ran already);
#  - the packages are not installed: rpm -i here would go around dpkg.
# What is checked: the three packages and their split, the version from
# the tarball, the scriptlets, and rpmlint with bgn.rpmlintrc (which
# filters, each with why, what is another distribution's rule or a
# Fedora build step Debian's rpm lacks).
# BGN_TARBALL names the tarball; without it the test makes one.
test_description='RPM packages: rpmbuild -ta, the split, rpmlint'

. "$(dirname "$0")/sharness.sh"

for cmd in rpmbuild rpm; do
	if ! command -v $cmd >/dev/null 2>&1; then
		skip_all="$cmd not found (etc/install-deps.sh installs it)"
		test_done
	fi
done
command -v rpmlint >/dev/null 2>&1 && test_set_prereq RPMLINT

# rpmbuild and libtool cannot work in the trash directory's path (a space).
cd_scratch t6010

test_expect_success 'the release tarball carries bgn.spec with its version' '
	BGN_TARBALL=$(release_tarball) &&
	cp "$BGN_TARBALL" . &&
	TARBALL=$(basename "$BGN_TARBALL") &&
	DIR=${TARBALL%.tar.gz} &&
	VERSION=${DIR#bgn-} &&
	tar xzf "$TARBALL" "$DIR/bgn.spec" "$DIR/bgn.rpmlintrc" &&
	grep "^Version: *$VERSION$" "$DIR/bgn.spec" &&
	echo "$TARBALL" >tarball.name && echo "$VERSION" >version &&
	echo "$DIR" >dir.name
'
TARBALL=$(cat tarball.name 2>/dev/null)
VERSION=$(cat version 2>/dev/null)
DIR=$(cat dir.name 2>/dev/null)

test_expect_success 'rpmbuild -ta builds bgn, bgn-libs, bgn-devel' '
	if test "$BGN_RPM_CHECK" = 1; then nocheck=; else nocheck=--nocheck; fi &&
	rpmbuild -ta --nodeps $nocheck --define "_topdir $(pwd)/rpm" \
		"$TARBALL" >build.log 2>&1 || { tail -n 60 build.log; false; } &&
	for p in bgn bgn-libs bgn-devel; do
		test -f rpm/RPMS/*/$p-$VERSION-1.*.rpm || return 1
	done &&
	test -f rpm/SRPMS/bgn-$VERSION-1.src.rpm &&
	! ls rpm/RPMS/*/bgn-flux-* 2>/dev/null &&
	ls -s --block-size=K rpm/RPMS/*/*.rpm
'

test_expect_success 'each package holds its part of the split' '
	rpm -qpl rpm/RPMS/*/bgn-$VERSION-1.*.rpm >bgn.list &&
	rpm -qpl rpm/RPMS/*/bgn-libs-$VERSION-1.*.rpm >libs.list &&
	rpm -qpl rpm/RPMS/*/bgn-devel-$VERSION-1.*.rpm >devel.list &&
	LIBDIR=$(rpm --eval %_libdir) &&
	for f in /usr/bin/bgn /usr/bin/bgn-sim /usr/sbin/bgn-broker \
		$LIBDIR/bgn/modules/overlay-bgn.so /usr/libexec/bgn/cmd/bgn-keygen \
		/usr/lib/systemd/system/bgn.service /usr/lib/sysusers.d/bgn.conf \
		/etc/bgn/bgn.toml; do
		grep -qx "$f" bgn.list || { echo "bgn lacks $f"; return 1; }
	done &&
	grep -q "^$LIBDIR/libbgn.so.0" libs.list &&
	grep -qx "/usr/include/bgn/client.h" devel.list &&
	grep -qx "$LIBDIR/pkgconfig/bgn.pc" devel.list &&
	grep -qx "$LIBDIR/libbgn.so" devel.list &&
	! grep -q "libbgn.so\|/usr/include" bgn.list &&
	! grep -q "flux-bgn\|/flux/" bgn.list &&
	rpm -qp --configfiles rpm/RPMS/*/bgn-$VERSION-1.*.rpm >conf &&
	grep -qx /etc/bgn/bgn.toml conf
'

test_expect_success 'the scriptlets make the user and start or enable nothing' '
	rpm -qp --scripts rpm/RPMS/*/bgn-$VERSION-1.*.rpm >scripts &&
	cat scripts &&
	grep -q "useradd -r -g bgn" scripts &&
	! grep -E "systemctl[^|;]* (start|restart|enable)" scripts &&
	! grep "%" scripts &&
	rpm -qp --scripts rpm/RPMS/*/bgn-libs-$VERSION-1.*.rpm | grep ldconfig
'

test_expect_success RPMLINT 'rpmlint: no error or warning beyond the filtered ones' '
	rpmlint -r "$DIR/bgn.rpmlintrc" "$DIR/bgn.spec" rpm/RPMS/*/*.rpm \
		rpm/SRPMS/*.rpm >lint.out 2>&1;
	cat lint.out &&
	grep " 0 errors, 0 warnings" lint.out
'

test_done
