#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-or-later
# sweep.sh: run bgn-sim over sizes, topologies and failure counts; write
# CSV files and (if gnuplot is installed) PNG plots into OUTDIR.
#
# Usage: sweep.sh OUTDIR [MAX_LOG2_N]
#   MAX_LOG2_N  largest size as a power of two (default 20 = 1,048,576)
# Environment: BGN_SIM (path to bgn-sim; default: next to this script, or
#   on PATH), SEED (default 1), PAIRS (default 100000).
#
# Outputs:
#   hops.csv      topology,size,degree_min,degree_max,diameter,mean_hops,seconds
#   failures.csv  topology,size,fail_mode,fail,live,connected_fraction,
#                 cut_off_from_rank0,largest_component,mean_stretch,seconds
#   hops-mean.png, hops-worst.png, connected-<N>-<mode>.png
set -e

usage () { echo "Usage: $0 OUTDIR [MAX_LOG2_N]" >&2; exit 1; }
[ $# -ge 1 ] && [ $# -le 2 ] || usage
out=$1
maxlog=${2:-20}
case $maxlog in ''|*[!0-9]*) usage ;; esac
seed=${SEED:-1}
pairs=${PAIRS:-100000}
here=$(cd "$(dirname "$0")" && pwd)
sim=${BGN_SIM:-}
if [ -z "$sim" ]; then
    if [ -x "$here/bgn-sim" ]; then sim=$here/bgn-sim; else sim=bgn-sim; fi
fi
mkdir -p "$out"

# json_field JSON NAME
json_field () {
    printf '%s\n' "$1" | tr ',{}' '\n\n\n' | sed -n "s/^\"$2\":\"*\([^\"]*\)\"*$/\1/p"
}

topologies="bgn bgn:8 kary:2 kary:16 binomial kary:64"

echo "topology,size,degree_min,degree_max,diameter,mean_hops,seconds" >"$out/hops.csv"
for topo in $topologies; do
    k=4
    while [ $k -le "$maxlog" ]; do
        n=$((1 << k))
        j=$("$sim" --topology "$topo" --size $n --pairs "$pairs" --seed "$seed" --json)
        line="$topo,$n"
        for f in degree_min degree_max diameter mean_hops elapsed_s; do
            line="$line,$(json_field "$j" $f)"
        done
        echo "$line" >>"$out/hops.csv"
        echo "hops: $line" >&2
        k=$((k + 2))
    done
done

echo "topology,size,fail_mode,fail,live,connected_fraction,cut_off_from_rank0,largest_component,mean_stretch,seconds" >"$out/failures.csv"
for n in 1024 16384; do
    [ $n -le $((1 << maxlog)) ] || continue
    for mode in random interior lowest; do
        for topo in $topologies; do
            for pct in 0 1 2 5 10 20 30 40 50; do
                f=$((n * pct / 100))
                j=$("$sim" --topology "$topo" --size $n --fail $f --fail-mode $mode \
                    --pairs "$pairs" --seed "$seed" --json)
                line="$topo,$n,$mode,$f"
                for fld in live connected_fraction cut_off_from_rank0 \
                           largest_component mean_stretch elapsed_s; do
                    line="$line,$(json_field "$j" $fld)"
                done
                echo "$line" >>"$out/failures.csv"
                echo "failures: $line" >&2
            done
        done
    done
done

if ! command -v gnuplot >/dev/null 2>&1; then
    echo "sweep.sh: gnuplot not found; CSV files written to $out, no plots" >&2
    exit 0
fi

plot_lines () {  # plot_lines CSV FILTER_AWK XCOL YCOL
    first=1
    for topo in $topologies; do
        [ $first -eq 1 ] || printf ', '
        printf "\"< awk -F, '\$1==\\\"%s\\\"%s' %s\" using %s:%s with linespoints title \"%s\"" \
            "$topo" "$2" "$1" "$3" "$4" "$topo"
        first=0
    done
}

gnuplot <<GP
set datafile separator ","
set terminal png size 900,600
set logscale x 2
set key top left
set xlabel "ranks (N)"
set output "$out/hops-mean.png"
set ylabel "mean hops (all pairs, exact)"
plot $(plot_lines "$out/hops.csv" "" 2 6)
set output "$out/hops-worst.png"
set ylabel "worst hops (diameter)"
plot $(plot_lines "$out/hops.csv" "" 2 5)
GP

for n in 1024 16384; do
    for mode in random interior lowest; do
        grep -q ",$n,$mode," "$out/failures.csv" || continue
        gnuplot <<GP
set datafile separator ","
set terminal png size 900,600
set key bottom left
set xlabel "failed ranks ($mode)"
set ylabel "fraction of surviving pairs connected"
set yrange [0:1.05]
set title "N = $n, $mode failures"
set output "$out/connected-$n-$mode.png"
plot $(plot_lines "$out/failures.csv" " \\&\\& \$2==$n \\&\\& \$3==\\\"$mode\\\"" 4 6)
GP
    done
done
echo "sweep.sh: results in $out" >&2
