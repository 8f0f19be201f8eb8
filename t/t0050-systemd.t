#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-or-later
test_description='the installed systemd unit: verified, and run by a real systemd

The unit from make install DESTDIR= passes systemd-analyze verify and reads
/etc/bgn and /etc/default/bgn whatever the prefix.  As root, with
systemd-nspawn (Debian systemd-container), a container boots systemd as
PID 1 over this machine'\''s own /usr (--volatile=yes: a throw-away root, the
installed /usr/local bound read-only) and t/systemd/check.sh does what
bgn-system(7) tells an admin: the bgn user from the installed sysusers.d
file, config and certificate in /etc/bgn, options in /etc/default/bgn,
then systemctl start bgn.  Checked: with a peer host that never starts,
the unit still becomes active (READY=1 after broker.ready_timeout, status
"overlay partial") running as user bgn in /run/bgn (mode 700), and stops
cleanly; a one-host instance is ready when its overlay is full; a
configuration error fails the start with exit 1 and is not restarted.'

. "$(dirname "$0")/sharness.sh"

T=$(mktemp -d /tmp/bgnsd$$.XXXXXX) || exit 1
# nspawn leaves an empty propagation directory per machine name behind.
trap 'rc=$?; rm -rf "$T"; rmdir /run/systemd/nspawn/propagate/bgnt$$ 2>/dev/null; (exit $rc); die' EXIT
trap 'exit 130' INT TERM
DEST=$T/dest
# Built with libsystemd: the unit is Type=notify and the broker reports
# readiness and status; otherwise Type=simple and only the rest holds.
grep -q "define HAVE_LIBSYSTEMD 1" "$BGN_TOP_BUILDDIR/config/config.h" &&
	test_set_prereq NOTIFY

test_expect_success 'make install DESTDIR= installs the unit and the sysusers file' '
	# not the jobserver of a "make -j check" that runs this test
	env -u MAKEFLAGS -u MFLAGS make -C "$BGN_TOP_BUILDDIR" install DESTDIR="$DEST" >install.log 2>&1 ||
		{ tail -20 install.log; false; } &&
	unit=$(find "$DEST" -name bgn.service) &&
	test -n "$unit" && cp "$unit" bgn.service &&
	test -f "$(dirname "$unit")/../../sysusers.d/bgn.conf" &&
	grep "^u bgn " "$(dirname "$unit")/../../sysusers.d/bgn.conf"
'

test_expect_success 'the unit reads /etc/bgn and /etc/default/bgn, runs as bgn' '
	grep "^ExecStart=.*/bgn-broker -c /etc/bgn --rundir=%t/bgn " bgn.service &&
	grep "^EnvironmentFile=-/etc/default/bgn$" bgn.service &&
	grep "^User=bgn$" bgn.service &&
	grep "^RuntimeDirectory=bgn$" bgn.service &&
	grep "^RuntimeDirectoryMode=0700$" bgn.service &&
	if test_have_prereq NOTIFY
	then grep "^Type=notify$" bgn.service
	else grep "^Type=simple$" bgn.service
	fi
'

: "${SYSTEMD_ANALYZE:=$(command -v systemd-analyze)}"
test -n "$SYSTEMD_ANALYZE" && test_set_prereq ANALYZE

test_expect_success ANALYZE 'systemd-analyze verify accepts the installed unit' '
	sbin=$(sed -n "s|^ExecStart=\(/[^ ]*\)/bgn-broker .*|\1|p" bgn.service) &&
	test -x "$DEST$sbin/bgn-broker" &&
	sed "s|^ExecStart=$sbin/|ExecStart=$DEST$sbin/|" bgn.service \
		>"$T/bgn.service" &&
	"$SYSTEMD_ANALYZE" verify --man=no "$T/bgn.service" >verify.out 2>&1;
	rc=$?; cat verify.out; test $rc -eq 0 && test_must_be_empty verify.out
'

# The container finds the unit and bgn where systemd and check.sh look:
# under /usr/local.  make distcheck installs under a prefix of its own,
# where the container part cannot run (it ran in the plain build).
prefix=$(sed -n "s|^ExecStart=\(/[^ ]*\)/sbin/bgn-broker .*|\1|p" \
	"$SHARNESS_TRASH_DIRECTORY/bgn.service" 2>/dev/null)
if test "$prefix" = /usr/local; then
	test_set_prereq USRLOCAL
else
	say "the unit runs in a container only from prefix /usr/local, not ${prefix:-?}"
fi

if test "$(id -u)" != 0 || ! command -v systemd-nspawn >/dev/null 2>&1; then
	skip_all='not root, or no systemd-nspawn (apt-get install systemd-container): the unit was not run'
	test_done
fi

test_expect_success USRLOCAL 'systemd in a container runs the installed unit' '
	mkdir -p "$T/check/out" "$T/check/conf" "$T/units" &&
	cp "$SHARNESS_TEST_SRCDIR/systemd/check.sh" "$T/check/" &&
	cp "$SHARNESS_TEST_SRCDIR/systemd/bgn.toml" "$T/check/conf/" &&
	cp "$SHARNESS_TEST_SRCDIR/systemd/bgn-check.service" "$T/units/" &&
	ln -s /dev/null "$T/units/systemd-firstboot.service" &&
	bgn keygen "$T/check/conf/curve.cert" >/dev/null &&
	usrlocal=$(dirname "$sbin") &&
	timeout 120 systemd-nspawn --volatile=yes -D / -M bgnt$$ \
		--register=no --keep-unit \
		--bind-ro="$DEST$usrlocal:$usrlocal" --bind="$T/check:/check" \
		--bind="$T/units:/etc/systemd/system" \
		-b -- --unit=bgn-check.service >nspawn.log 2>&1;
	rc=$?
	cp "$T"/check/out/* . 2>/dev/null
	cat result journal log 2>/dev/null
	test $rc -eq 0 && grep "^finished$" result
'

# phase NAME: the result lines of that phase of check.sh.
phase () {
	sed -n "/^== $1$/,/^ExecMainStatus/p" result
}

test_expect_success NOTIFY,USRLOCAL 'a missing peer does not block start: ready after ready_timeout' '
	grep -m1 "^start_rc=0$" result &&
	phase partial >partial &&
	grep "^active=active$" partial &&
	grep "^StatusText=rank 0 of 2: overlay partial$" partial &&
	grep "ready (systemd): rank 0 of 2: overlay partial" journal &&
	grep "\"bootstrap\":\"static\"" info &&
	grep "\"size\":2," info
'

test_expect_success USRLOCAL 'the broker runs as user bgn in /run/bgn, mode 700' '
	grep "^user=bgn$" result &&
	grep "^rundir=bgn 700$" result
'

test_expect_success USRLOCAL 'systemctl stop ends it cleanly and removes /run/bgn' '
	phase stopped >stopped &&
	grep "^active=inactive$" stopped &&
	grep "^Result=success$" stopped &&
	grep "^ExecMainStatus=0$" stopped &&
	grep "shutdown, exit 0" journal &&
	! grep "^rundir_left" result
'

test_expect_success NOTIFY,USRLOCAL 'a whole instance is ready when its overlay is full' '
	phase full >full &&
	grep "^active=active$" full &&
	grep "^StatusText=rank 0 of 1: overlay full$" full
'

test_expect_success USRLOCAL 'a configuration error fails the start and is not restarted' '
	phase configerror >configerror &&
	grep "^active=failed$" configerror &&
	grep "^ExecMainStatus=1$" configerror &&
	grep "^NRestarts=0$" configerror &&
	grep "nothere.*not in bootstrap.hosts" journal
'

test_done
