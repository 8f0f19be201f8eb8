#!/bin/sh
# install-deps.sh: install every Debian package bgn needs to build, test,
# fuzz and benchmark.  Idempotent and non-interactive; run as root (or with
# sudo) on Debian 12.  Packages already present are left alone, so a second
# run costs one dpkg query.
set -eu

PACKAGES="
build-essential autoconf automake libtool pkg-config make
libzmq3-dev libczmq-dev libjansson-dev uuid-dev
sharness libcmocka-dev mpich
clang-14 libclang-rt-14-dev
python3 nftables iproute2 gnuplot-nox graphviz procps psmisc
groff-base
"

missing=""
for p in $PACKAGES; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done

if [ -z "$missing" ]; then
    echo "install-deps: all packages already installed"
    exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: need root to install:$missing" >&2
    echo "install-deps: run: sudo $0" >&2
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
echo "install-deps: installing:$missing"
apt-get update -q
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing
echo "install-deps: done"
