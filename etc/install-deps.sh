#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-or-later
# install-deps.sh: install every Debian package bgn needs to build, test,
# fuzz and benchmark.  Idempotent and non-interactive; run as root (or with
# sudo) on Debian 12.  Packages already present are left alone, so a second
# run costs one dpkg query.
#
# python3-zmq: the rogue overlay peer of the attack tests (t1400).
# debhelper, fakeroot, lintian: the Debian packages (debian/) and their
# test (t6000); rpm, rpmlint: rpmbuild -ta on the tarball's bgn.spec
# (t6010), as far as Debian's rpm goes; both in make check-packages.
# prometheus: its promtool checks 'bgn metrics' (t1200; about 100 MB, the
# server beside it is not used).
# Launchers the tests run for real: mpich (PMI-1, mpiexec), openmpi-bin
# (PMIx, mpirun.openmpi), a one-node Slurm (munge, slurmctld, slurmd,
# slurm-client; the tests start the daemons themselves), systemd's
# analyzer and nspawn for the unit.  Open MPI's package makes itself the
# default "mpiexec"/"mpirun" alternative; this script points them back at
# mpich, which the README's PMI-1 examples use.
set -eu

PACKAGES="
build-essential autoconf automake libtool pkg-config make
libzmq3-dev libczmq-dev libjansson-dev uuid-dev libsodium-dev
sharness libcmocka-dev mpich
clang-14 libclang-rt-14-dev
python3 python3-zmq nftables iproute2 gnuplot-nox graphviz procps psmisc
libpmix-dev libsystemd-dev openmpi-bin
munge slurmctld slurmd slurm-client
systemd systemd-container
groff-base
prometheus
debhelper fakeroot lintian rpm rpmlint
"

# mpiexec/mpirun mean mpich's hydra (see above); only if both are there.
pin_mpich () {
    if [ -x /usr/bin/mpirun.mpich ] && [ -x /usr/bin/mpicc.mpich ] &&
       [ "$(readlink -f /usr/bin/mpiexec 2>/dev/null)" != \
         "$(readlink -f /usr/bin/mpiexec.mpich)" ]; then
        if [ "$(id -u)" -ne 0 ]; then
            echo "install-deps: mpiexec is not mpich's; run as root to fix" >&2
            return 0
        fi
        update-alternatives --quiet --set mpirun /usr/bin/mpirun.mpich
        update-alternatives --quiet --set mpi /usr/bin/mpicc.mpich
        echo "install-deps: mpiexec/mpirun now run mpich's hydra"
    fi
}

missing=""
for p in $PACKAGES; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done

if [ -z "$missing" ]; then
    echo "install-deps: all packages already installed"
    pin_mpich
    exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: need root to install:$missing" >&2
    if command -v sudo >/dev/null 2>&1; then
        echo "install-deps: run: sudo $0" >&2
    else
        echo "install-deps: run it as root (su -c $0)" >&2
    fi
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
echo "install-deps: installing:$missing"
apt-get update -q
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing
pin_mpich
echo "install-deps: done"
