#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-or-later
# check.sh: runs inside the systemd-nspawn container of t0050-systemd.t,
# as the oneshot bgn-check.service, once systemd-sysusers has made the
# "bgn" user.  It does what bgn-system(7) tells an admin to do, starts the
# installed bgn.service, records what the test checks in /check/out, and
# powers the container off.
out=/check/out
exec >"$out/log" 2>&1
set -x

# bgn-system(7), set-up: config and certificate in /etc/bgn, the secret
# owned by the bgn user, options in /etc/default/bgn.
mkdir -p /etc/bgn /etc/default
cp /check/conf/bgn.toml /check/conf/curve.cert /check/conf/curve.cert_secret \
    /etc/bgn/
chown bgn:bgn /etc/bgn/curve.cert_secret
chmod 600 /etc/bgn/curve.cert_secret
echo 'BGN_BROKER_OPTS="-v -o broker.ready_timeout=2s"' >/etc/default/bgn

# phase NAME: record the unit's state after a start attempt.
phase () {
    {
        echo "== $1"
        echo "active=$(systemctl is-active bgn)"
        systemctl show bgn -p StatusText -p NRestarts -p Result \
            -p ExecMainStatus
    } >>"$out/result"
}

# 1. Type=notify: systemctl start returns once the broker said READY=1;
# with the second host never coming up, that is after ready_timeout.
echo 'BGN_BROKER_OPTS="-v -o broker.ready_timeout=2s"' >/etc/default/bgn
systemctl start bgn
echo "start_rc=$?" >>"$out/result"
phase partial
pid=$(systemctl show -p MainPID --value bgn)
echo "user=$(ps -o user= -p "$pid")" >>"$out/result"
echo "rundir=$(stat -c '%U %a' /run/bgn)" >>"$out/result"
/usr/local/bin/bgn --uri=ipc:///run/bgn/local rpc broker.info >"$out/info"
systemctl stop bgn
phase stopped
test -e /run/bgn && echo "rundir_left=yes" >>"$out/result"

# 2. A whole instance (one host) is ready when its overlay is full, long
# before a ready_timeout of 300s (start would time out first).
sed -i '/downnode/d' /etc/bgn/bgn.toml
echo 'BGN_BROKER_OPTS="-v -o broker.ready_timeout=300s"' >/etc/default/bgn
systemctl start bgn
echo "start_rc=$?" >>"$out/result"
phase full
systemctl stop bgn

# 3. A configuration error (this host not in the list) exits 1: the start
# fails and systemd does not restart it.
echo 'BGN_BROKER_OPTS="-o bootstrap.hostname=nothere"' >/etc/default/bgn
systemctl start bgn
echo "start_rc=$?" >>"$out/result"
sleep 1
phase configerror

journalctl -u bgn --no-pager >"$out/journal"
echo finished >>"$out/result"
systemctl poweroff --no-block
