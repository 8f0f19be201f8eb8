#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-or-later
# wait-down.sh N: under `bgn start`, wait (10 s at most) until rank 0's
# overlay-status lists N ranks down; exit 1 naming what it saw if not.
i=0
while test $i -lt 200; do
	n=$(bgn overlay-status --json | tr -d ' \n' | sed 's/.*"down_ranks":\[\([^]]*\)\].*/\1/' | tr ',' '\n' | grep -c '[0-9]')
	test "$n" -eq "$1" && exit 0
	sleep 0.05
	i=$((i+1))
done
echo "rank 0 sees $n down, expected $1" >&2
exit 1
