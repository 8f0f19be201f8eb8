#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-or-later
# bench.sh: the live benchmarks behind `make bench` (never `make check`).
#
# Environment:
#   BGN          the bgn front end (make bench passes the build tree's)
#   BENCHDIR     where bench-fwd, bench-event, bench-fault are
#   BENCH_RUNS   repetitions per figure; tables show medians (default 5)
#   BENCH_ONLY   subset of sections to run, e.g. "a d" (default "a b c d e f g h i")
#   BENCH_CHAIN  broker counts for the chain benchmark (default "1 2 4 8")
#   BENCH_SIZES  sizes for the start-up benchmark (default "16 64 128 256")
#   EV_SIZES     sizes for the event benchmark (default "16 64")
#   EV_EVENTS    events of its sustained runs (default 100000)
#   EV_PACED     events of its paced runs, at 1,000/s (default 3000)
#   BENCH_IDLE   sizes for the idle-CPU benchmark (default "64 256")
#   BENCH_IDLE_SECONDS  length of each idle measurement (default 20)
#   FLUX_SIZES   sizes for the Flux-with-bgn benchmark (default "64")
#   WITH_BGN     src/flux/with-bgn of a build with flux-core (default:
#                the one beside this script's build tree)
#   FLUX_OVERLAY_FLUX  the flux command of a flux-core patched with
#                contrib/flux-core, for section i (bgn-overlay.so against
#                the TBON); OVERLAY_SIZES its start-up sizes (default
#                "64 256"), OVERLAY_PING_SIZE its ping and event size (64),
#                I_EVENTS its events (2000)
#
# Every section prints a Markdown table.  All traffic is ipc:// on this host.
set -u

here=$(cd "$(dirname "$0")" && pwd)
BGN=${BGN:-$here/../cmd/bgn}
BENCHDIR=${BENCHDIR:-$here}
RUNS=${BENCH_RUNS:-5}
ONLY=${BENCH_ONLY:-"a b c d e f g h i"}
CHAIN=${BENCH_CHAIN:-"1 2 4 8"}
SIZES=${BENCH_SIZES:-"16 64 128 256"}
IDLE=${BENCH_IDLE:-"64 256"}
IDLE_SECONDS=${BENCH_IDLE_SECONDS:-20}
FWD=$BENCHDIR/bench-fwd
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bgn-bench.XXXXXX") || exit 1
relays=""
cleanup () {
    [ -n "$relays" ] && kill $relays 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

want () { case " $ONLY " in *" $1 "*) return 0 ;; esac; return 1; }
# Before a section: wait (at most 60 s) until the last one's processes
# are gone and at most 2 tasks run, then 5 s more, so that a section is
# not measured in the tail of the one before.  Always succeeds.
settle () {
    i=0
    while [ $i -lt 60 ]; do
        running=$(cut -d' ' -f4 /proc/loadavg | cut -d/ -f1)
        if ! pgrep -x bgn-broker >/dev/null && [ "$running" -le 2 ]; then
            break
        fi
        sleep 1
        i=$((i + 1))
    done
    sleep 5
    return 0
}
now () { date +%s.%N; }

# median of the numbers on stdin (one per line); "-" if none
median () {
    sort -g | awk '{ v[NR] = $1 } END {
        if (NR == 0) { print "-"; exit }
        if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
# field NAME FILE: the values of NAME=VALUE in every line of FILE
field () { sed -n "s/.*\<$1=\([^ ]*\).*/\1/p" "$2"; }

start_time=$(now)
echo "# bgn live benchmarks"
echo
echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, $(free -m | awk '/^Mem:/ {print $2}') MiB," \
     "kernel $(uname -r), load average at start: $(cut -d' ' -f1-3 /proc/loadavg)," \
     "medians of $RUNS runs"

# ---------------------------------------------------------------- a
# start_chain DIR N [--curve KEY]: N raw relays binding ipc://DIR/0..N-1
start_chain () {
    d=$1 n=$2
    shift 2
    mkdir -p "$d"
    i=$((n - 1))
    while [ $i -ge 0 ]; do
        if [ $i -eq $((n - 1)) ]; then
            "$FWD" relay --bind "ipc://$d/$i" "$@" &
        else
            "$FWD" relay --bind "ipc://$d/$i" --next "ipc://$d/$((i + 1))" "$@" &
        fi
        relays="$relays $!"
        i=$((i - 1))
    done
    for _ in 1 2 3 4 5 6 7 8 9 10; do
        [ -S "$d/0" ] && break
        sleep 0.1
    done
}

if want a; then
    echo
    echo "## a. Forwarding chain: bgn brokers (kary:1) vs raw libzmq ROUTER relays"
    echo
    echo "64-byte requests; client at the head (libclient or DEALER), echo at the"
    echo "tail; N processes = N-1 hops between them plus the client's hop."
    echo "Throughput: window of 64 outstanding requests for 1 s; RTT: one at a time."
    echo "bgn = default config (CURVE on); bgn-nc = overlay.curve=false;"
    echo "raw = the relays without encryption; raw-c = the relays with CURVE on"
    echo "every link, the route stack one frame per hop (a message of h hops is"
    echo "h+1 frames, each encrypted); raw-c1 = CURVE, the route stack packed"
    echo "into the message's one frame (bench-fwd relay --pack: one encrypted"
    echo "frame per hop, as bgn's overlay sends), the fair CURVE baseline."
    echo "The five run interleaved, run by run (both bgn instances and the"
    echo "three raw chains are up together)."
    echo "Load average at the start of the section: $(cut -d' ' -f1-3 /proc/loadavg)."
    echo
    : >"$tmp/a.fit"
    key=$("$FWD" keygen) || exit 1
    BENCH_CURVE_KEY=$key    # Z85 has shell characters: pass it in the environment
    export BENCH_CURVE_KEY
    echo "| N | hops | bgn msg/s | bgn-nc msg/s | raw msg/s | raw-c msg/s | raw-c1 msg/s | thr bgn/raw-c1 | thr bgn/raw | thr bgn-nc/raw | bgn RTT µs | bgn-nc RTT µs | raw RTT µs | raw-c RTT µs | raw-c1 RTT µs | RTT bgn/raw-c1 | RTT bgn/raw | RTT bgn-nc/raw |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    for n in $CHAIN; do
        hops=$((n - 1))
        relays=""
        start_chain "$tmp/raw$n" "$n"
        start_chain "$tmp/rawc$n" "$n" --curve "$key"
        start_chain "$tmp/rawp$n" "$n" --curve "$key" --pack
        copts="--size 64 --window 64 --duration 1 --count 1000 --maxtime 0.7"
        for k in bgn nc raw rawc rawp; do : >"$tmp/a.$k.$n"; done
        # the CURVE instance runs the no-CURVE one, which runs the loop
        "$BGN" start --size="$n" --topology=kary:1 sh -c "
            BGN_URI_CURVE=\$BGN_URI '$BGN' start --size=$n --topology=kary:1 \
                -o overlay.curve=false sh -c '
                for r in \$(seq $RUNS); do
                    \"$FWD\" bgn-client --uri \"\$BGN_URI_CURVE\" --target $hops $copts >>\"$tmp/a.bgn.$n\" || exit 1
                    \"$FWD\" bgn-client --target $hops $copts >>\"$tmp/a.nc.$n\" || exit 1
                    \"$FWD\" raw-client --connect ipc://$tmp/raw$n/0 $copts >>\"$tmp/a.raw.$n\" || exit 1
                    \"$FWD\" raw-client --connect ipc://$tmp/rawc$n/0 --curve \"\$BENCH_CURVE_KEY\" $copts >>\"$tmp/a.rawc.$n\" || exit 1
                    \"$FWD\" raw-client --connect ipc://$tmp/rawp$n/0 --curve \"\$BENCH_CURVE_KEY\" $copts >>\"$tmp/a.rawp.$n\" || exit 1
                done'" || echo "(chain N=$n failed)" >&2
        kill $relays 2>/dev/null
        wait $relays 2>/dev/null
        relays=""
        thr="" rtt=""
        for k in bgn nc raw rawc rawp; do
            thr="$thr $(field thr "$tmp/a.$k.$n" | median)"
            rtt="$rtt $(field rtt_med_us "$tmp/a.$k.$n" | median)"
        done
        # a.fit: hops, the five RTTs (columns 2-6), the five rates (7-11)
        echo "$hops$rtt$thr" >>"$tmp/a.fit"
        echo "$n $hops$rtt$thr" | awk '
            function r(a, b) { return b > 0 ? a / b : 0 }
            { printf "| %d | %d | %.0f | %.0f | %.0f | %.0f | %.0f | %.2f | %.2f | %.2f | %.0f | %.0f | %.0f | %.0f | %.0f | %.2f | %.2f | %.2f |\n",
                $1, $2, $8, $9, $10, $11, $12, r($8, $12), r($8, $10), r($9, $10),
                $3, $4, $5, $6, $7, r($3, $7), r($3, $5), r($4, $5) }'
    done
    echo
    # 0 hops (N=1): the broker's end-point cost against the raw echo
    awk '$1 == 0 && $9 > 0 {
        printf "0 hops (one broker, N=1): bgn %.0f, bgn-nc %.0f, raw echo %.0f round trips/s:\n", $7, $8, $9
        printf "bgn/raw %.2f, bgn-nc/raw %.2f (target 0.6).\n\n", $7 / $9, $8 / $9 }' "$tmp/a.fit"
    # least-squares slopes against hops: of the median RTT (k = 2..6:
    # bgn, bgn-nc, raw, raw-c, raw-c1) and of 1/throughput (k = 7..11),
    # whose inverse is the marginal forwarding rate one added hop sustains
    awk '{ n++; x += $1; xx += $1 * $1
           for (k = 2; k <= 11; k++) {
               v = (k <= 6) ? $k : 1e6 / $k
               y[k] += v; xy[k] += $1 * v } }
        END {
        if (n < 2 || n * xx - x * x == 0) { print "(need two chain lengths for a per-hop fit)"; exit }
        for (k = 2; k <= 11; k++) s[k] = (n * xy[k] - x * y[k]) / (n * xx - x * x)
        print "Per added hop: least-squares slopes against hops over the chain sizes above,"
        print "of the median RTT (latency) and of 1/throughput (µs of pipeline time per"
        print "message per hop; its inverse is the rate one added hop sustains)."
        print ""
        print "| per added hop | bgn | bgn-nc | raw | raw-c | raw-c1 | bgn/raw-c1 | bgn/raw | bgn-nc/raw |"
        print "|---|---|---|---|---|---|---|---|---|"
        printf "| RTT, µs | %.1f | %.1f | %.1f | %.1f | %.1f | %.2f | %.2f | %.2f |\n", s[2], s[3], s[4], s[5], s[6], s[2] / s[6], s[2] / s[4], s[3] / s[4]
        printf "| one-way latency, µs | %.1f | %.1f | %.1f | %.1f | %.1f | | | |\n", s[2] / 2, s[3] / 2, s[4] / 2, s[5] / 2, s[6] / 2
        printf "| 1/throughput, µs/msg | %.2f | %.2f | %.2f | %.2f | %.2f | | | |\n", s[7], s[8], s[9], s[10], s[11]
        printf "| forwarding rate, msg/s | %.0f | %.0f | %.0f | %.0f | %.0f | %.2f | %.2f | %.2f |\n", 1e6 / s[7], 1e6 / s[8], 1e6 / s[9], 1e6 / s[10], 1e6 / s[11], s[11] / s[7], s[9] / s[7], s[9] / s[8]
        printf "\nPer-hop forwarding with CURVE against the one-frame CURVE chain:\n"
        printf "bgn/raw-c1 %.2f (target 0.8); against the plain chain bgn/raw %.2f.\n", s[11] / s[7], s[9] / s[7]
    }' "$tmp/a.fit"
    # per-hop throughput: hop-traversals per second at the longest chain
    tail -n 1 "$tmp/a.fit" | awk '$1 > 0 {
        printf "\nAt %d hops: %.0f (bgn), %.0f (bgn-nc), %.0f (raw), %.0f (raw-c), %.0f (raw-c1) request\n", $1, $7 * $1, $8 * $1, $9 * $1, $10 * $1, $11 * $1
        printf "hop-traversals/s (msg/s x hops); throughput ratios at this length: bgn/raw-c1 %.2f,\n", $7 / $11
        printf "bgn/raw %.2f, bgn-nc/raw %.2f.\n", $7 / $9, $8 / $9 }'
    echo "Load average at the end of the section: $(cut -d' ' -f1-3 /proc/loadavg)."
fi

# ---------------------------------------------------------------- b
if want b; then
    echo
    echo "## b. bgn ping RTT by hop count, N=64"
    echo
    echo "\`bgn ping --count 50 --interval 0 R\` from rank 0 to every rank R; median"
    echo "over all pings of that hop count (samples in brackets)."
    echo
    for topo in bgn kary:2; do
        "$BGN" start --size=64 --topology=$topo sh -c "
            r=0
            while [ \$r -lt 64 ]; do '$BGN' ping --count 50 --interval 0 \$r || exit 1; r=\$((r + 1)); done" \
            | sed -n 's/.*hops=\([0-9]*\) time=\([0-9.]*\) ms/\1 \2/p' >"$tmp/b.$topo" \
            || echo "(ping at $topo failed)" >&2
    done
    echo "| hops | bgn ms | kary:2 ms | Flux TBON (kary:2, N=16) ms |"
    echo "|---|---|---|---|"
    maxh=$(cat "$tmp/b.bgn" "$tmp/b.kary:2" | awk '$1 > m { m = $1 } END { print m + 0 }')
    h=0
    while [ "$h" -le "$maxh" ]; do
        row="| $h"
        for topo in bgn kary:2; do
            m=$(awk -v h=$h '$1 == h { print $2 }' "$tmp/b.$topo" | median)
            c=$(awk -v h=$h '$1 == h' "$tmp/b.$topo" | wc -l)
            if [ "$c" -eq 0 ]; then row="$row | -"; else row="$row | $(printf '%.3f' "$m") ($c)"; fi
        done
        case $h in 0) f=0.32 ;; 1) f=0.81 ;; 2) f=1.36 ;; 3) f=1.60 ;; 4) f=1.88 ;; *) f=- ;; esac
        echo "$row | $f |"
        h=$((h + 1))
    done
fi

# ---------------------------------------------------------------- c
if want c && settle; then
    echo
    echo "## c. Events: bgn against a raw libzmq relay of the same events down the same tree"
    echo
    "$BGN" start --size=16 "$BENCHDIR/bench-event" --check
    rc=$?
    if [ $rc -ne 0 ]; then
        echo "(event check failed to run, status $rc: an event published at rank 0"
        echo "did not reach a subscriber on rank 15 within 1 s)"
    else
        echo "bgn: \`bgn start --size=N\` (default config, CURVE on), a subscriber on every"
        echo "broker (libclient, bgn_event_next), two publishers (rank 0 and rank N-1,"
        echo "asynchronous, window 4096) publishing alternately.  raw: N processes, a"
        echo "PULL socket each and a PUSH to each child in the same binomial tree"
        echo "(libbgn, root 0), every message forwarded with zmq_msg_copy; both"
        echo "publishers push to the root; an event counts as delivered when the"
        echo "relay has it.  raw+sub (the fair baseline): the same relays, each also"
        echo "pushing every event over ipc to a subscriber process of its own (2N"
        echo "processes); an event counts as delivered when that subscriber has it,"
        echo "as for bgn.  Events of about 64 bytes.  Sustained: ${EV_EVENTS:=100000}"
        echo "events flat out, timed until every subscriber (relay) has them all"
        echo "(bgn: G events per publish request; G=1 is one request per event)."
        echo "Paced: ${EV_PACED:=3000} events at 1,000/s, one per request; time-to-all ="
        echo "when the last subscriber got it - when it was published.  Medians of"
        echo "$RUNS runs; raw, raw+sub and bgn run interleaved, run by run."
        echo "Load average at the start of the section: $(cut -d' ' -f1-3 /proc/loadavg)."
        echo
        echo "| N | run | events/s | vs raw | vs raw+sub | p50 time-to-all ms | p50 / raw | p50 / raw+sub | p99 ms | lost |"
        echo "|---|---|---|---|---|---|---|---|---|---|"
        for n in ${EV_SIZES:=16 64}; do
            for k in raw fair g32 g1; do : >"$tmp/c.$k.$n"; done
            for r in $(seq "$RUNS"); do
                "$BENCHDIR/bench-event" raw --size $n --events $EV_EVENTS \
                    --paced $EV_PACED --rate 1000 >>"$tmp/c.raw.$n" \
                    || echo "(raw N=$n failed)" >&2
                "$BENCHDIR/bench-event" raw --fair --size $n --events $EV_EVENTS \
                    --paced $EV_PACED --rate 1000 >>"$tmp/c.fair.$n" \
                    || echo "(raw+sub N=$n failed)" >&2
                "$BGN" start --size=$n "$BENCHDIR/bench-event" bgn --group 32 \
                    --events $EV_EVENTS --paced $EV_PACED --rate 1000 \
                    >>"$tmp/c.g32.$n" 2>/dev/null || echo "(bgn N=$n failed)" >&2
                "$BGN" start --size=$n "$BENCHDIR/bench-event" bgn --group 1 \
                    --events $((EV_EVENTS / 4)) --paced 100 --rate 1000 \
                    >>"$tmp/c.g1.$n" 2>/dev/null || echo "(bgn G=1 N=$n failed)" >&2
            done
            raw=$(field rate_eps "$tmp/c.raw.$n" | median)
            fair=$(field rate_eps "$tmp/c.fair.$n" | median)
            rawp=$(field tta_p50_ms "$tmp/c.raw.$n" | median)
            fairp=$(field tta_p50_ms "$tmp/c.fair.$n" | median)
            for run in raw fair g32 g1; do
                f=$tmp/c.$run.$n
                eps=$(field rate_eps "$f" | median)
                p50=$(field tta_p50_ms "$f" | median)
                p99=$(field tta_p99_ms "$f" | median)
                lost=$(field lost "$f" | awk '{ s += $1 } END { print s + 0 }')
                case $run in
                    raw) label="raw libzmq" ;;
                    fair) label="raw+sub (fair)" ;;
                    g32) label="bgn, G=32" ;;
                    g1) label="bgn, G=1"; p50=-; p99=- ;;
                esac
                awk -v n=$n -v l="$label" -v e="$eps" -v r="$raw" -v fr="$fair" \
                    -v a="$p50" -v rp="$rawp" -v fp="$fairp" \
                    -v b="$p99" -v lost="$lost" '
                    function ratio(x, y) { return (x != "-" && y > 0) ? sprintf ("%.2f", x / y) : "-" }
                    BEGIN {
                    printf "| %d | %s | %.0f | %s | %s | %s | %s | %s | %s | %d |\n", n, l, e,
                        ratio(e, r), ratio(e, fr), a, ratio(a, rp), ratio(a, fp), b, lost }'
            done
        done
        echo
        echo "(G=1 runs sustained only, with a quarter of the events; its paced"
        echo "figures are the G=32 row's, whose paced run is one event per request."
        echo "Target (issue 24): bgn's paced p50 at most 3x the fair raw+sub's.)"
        echo "Load average at the end of the section: $(cut -d' ' -f1-3 /proc/loadavg)."
    fi
fi

# ---------------------------------------------------------------- d
if want d && settle; then
    echo
    echo "## d. bgn start to a fully connected overlay, and memory per broker"
    echo
    echo "Start-up: from launching \`bgn start --size=N\` (default topology bgn,"
    echo "CURVE on) to its COMMAND running (overlay health \"full\"); total adds"
    echo "the shutdown; CPU = user + sys of every process of the run (bgn start,"
    echo "its fork server and the brokers, from /usr/bin/time).  RSS: VmRSS of"
    echo "every broker while idle, from the median run; VmRSS counts shared"
    echo "library pages in every broker, RssAnon is the private part."
    echo "Load average at the start of the section: $(cut -d' ' -f1-3 /proc/loadavg)."
    echo
    flux=$(command -v flux 2>/dev/null)
    if [ -n "$flux" ]; then
        echo "Flux: \`flux start --test-size=N -Sbroker.rc1_path= -Sbroker.rc3_path= true\`"
        echo "($flux, $("$flux" version 2>/dev/null | sed -n 's/^commands:[[:space:]]*//p')), run"
        echo "interleaved with bgn, run by run: its total (there is no COMMAND"
        echo "to time apart from the shutdown) and to COMMAND (the same with"
        echo "\`sh -c 'date'\` as the initial program)."
    else
        echo "Flux: no \`flux\` on PATH, so no Flux figures (install flux-core and"
        echo "put its bin directory first in PATH, e.g. PATH=/opt/flux/bin:\$PATH)."
    fi
    echo
    if [ -n "$flux" ]; then
        echo "| N | start-up s | total s | CPU s | Flux to COMMAND s | Flux total s | Flux CPU s | bgn/Flux start-up | RSS/broker mean MiB | RSS max MiB | private (RssAnon)/broker MiB | sum of RSS MiB |"
        echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
    else
        echo "| N | start-up s | total s | CPU s | RSS/broker mean MiB | RSS max MiB | private (RssAnon)/broker MiB | sum of RSS MiB |"
        echo "|---|---|---|---|---|---|---|---|"
    fi
    : >"$tmp/d.fit"
    for n in $SIZES; do
        : >"$tmp/d.$n"; : >"$tmp/d.flux.$n"
        for r in $(seq "$RUNS"); do
            t0=$(now)
            /usr/bin/time -f "%U %S" -o "$tmp/d.cpu" "$BGN" start --size=$n sh -c "
                date +%s.%N >'$tmp/d.t'
                while read rank pid rest; do
                    [ \"\$pid\" -gt 0 ] 2>/dev/null || continue
                    awk '/^VmRSS:/ { r = \$2 } /^RssAnon:/ { a = \$2 } END { print r, a }' /proc/\$pid/status
                done <\"\$BGN_RUNDIR/brokers\" >'$tmp/d.rss'" || echo "(start N=$n failed)" >&2
            t2=$(now)
            t1=$(cat "$tmp/d.t")
            cpu=$(tail -n 1 "$tmp/d.cpu" | awk '{ print $1 + $2 }')
            rss=$(awk '{ s += $1; a += $2; if ($1 > m) m = $1 } END { if (NR) printf "%.1f %.1f %.0f %.1f", s / NR / 1024, m / 1024, s / 1024, a / NR / 1024 }' "$tmp/d.rss")
            echo "$t0 $t1 $t2 $cpu $rss" | awk '{ printf "%.3f %.3f %.2f %s %s %s %s\n", $2 - $1, $3 - $1, $4, $5, $6, $7, $8 }' >>"$tmp/d.$n"
            if [ -n "$flux" ]; then
                t0=$(now)
                "$flux" start --test-size=$n -Sbroker.rc1_path= -Sbroker.rc3_path= \
                    sh -c "date +%s.%N >'$tmp/d.ft'" >/dev/null 2>&1 \
                    || echo "(flux start N=$n failed)" >&2
                t1=$(cat "$tmp/d.ft" 2>/dev/null || echo 0)
                t2=$(now)
                /usr/bin/time -f "%U %S" -o "$tmp/d.fcpu" "$flux" start --test-size=$n \
                    -Sbroker.rc1_path= -Sbroker.rc3_path= true >/dev/null 2>&1
                t3=$(now)
                fcpu=$(tail -n 1 "$tmp/d.fcpu" | awk '{ print $1 + $2 }')
                echo "$t0 $t1 $t2 $t3 $fcpu" | awk '{ printf "%.3f %.3f %.2f\n", $2 - $1, $4 - $3, $5 }' >>"$tmp/d.flux.$n"
            fi
        done
        sort -g "$tmp/d.$n" | awk '{ l[NR] = $0 } END {
            split(l[int((NR + 1) / 2)], m, " ")
            print m[1], m[4], m[5], m[7], m[6] }' >"$tmp/d.row"
        tot=$(awk '{ print $2 }' "$tmp/d.$n" | median)
        cpu=$(awk '{ print $3 }' "$tmp/d.$n" | median)
        su=$(awk '{ print $1 }' "$tmp/d.row")
        echo "$n $su" >>"$tmp/d.fit"
        if [ -n "$flux" ]; then
            fs=$(awk '{ print $1 }' "$tmp/d.flux.$n" | median)
            ft=$(awk '{ print $2 }' "$tmp/d.flux.$n" | median)
            fc=$(awk '{ print $3 }' "$tmp/d.flux.$n" | median)
            awk -v n=$n -v tot="$tot" -v cpu="$cpu" -v fs="$fs" -v ft="$ft" -v fc="$fc" '{
                printf "| %d | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %s | %s | %s | %s |\n",
                    n, $1, tot, cpu, fs, ft, fc, (ft > 0 ? $1 / ft : 0), $2, $3, $4, $5 }' "$tmp/d.row"
        else
            awk -v n=$n -v tot="$tot" -v cpu="$cpu" '{
                printf "| %d | %.2f | %.2f | %.2f | %s | %s | %s | %s |\n", n, $1, tot, cpu, $2, $3, $4, $5 }' "$tmp/d.row"
        fi
    done
    echo
    # growth: start-up at the largest size over start-up at 64
    awk '$1 == 64 { a = $2 } { l = $1; b = $2 } END {
        if (a > 0 && l > 64) printf "Start-up at %d / at 64: %.2f (%d times the brokers; target at 256: 4.5).\n", l, b / a, l / 64 }' "$tmp/d.fit"
    [ -n "$flux" ] && echo "(bgn/Flux start-up: bgn to COMMAND over Flux's total with \`true\`, the issue's figure; target at 256: 0.3.)"
    echo "Load average at the end of the section: $(cut -d' ' -f1-3 /proc/loadavg)."
fi

# ---------------------------------------------------------------- e
if want e; then
    echo
    echo "## e. Failure detection and reroute, N=16"
    echo
    ka=100ms
    pt=1s
    echo "\`bgn start --size=16 --keep-going -o overlay.keepalive_interval=$ka"
    echo "-o overlay.peer_timeout=$pt\`; the victim is the preferred first hop from"
    echo "rank 0 to the farthest rank D that has one.  Detection: time until"
    echo "\`overlay.status\` on the victim's neighbours shows it \"down\" (first"
    echo "and last neighbour); reroute: until a ping 0 -> D (20 ms deadline each)"
    echo "is answered again.  KILL = SIGKILL (sockets close); STOP = SIGSTOP (a"
    echo "hung broker: only keepalives tell).  Target: detection within"
    echo "peer_timeout + keepalive_interval = 1.1 s."
    echo
    echo "| topology | signal | victim | dest | hops before/after | detect first ms | detect last ms | reroute ms |"
    echo "|---|---|---|---|---|---|---|---|"
    for case in "bgn KILL $RUNS" "bgn STOP $RUNS" "kary:2 KILL 1"; do
        set -- $case
        topo=$1 sig=$2 runs=$3
        f=$tmp/e.$topo.$sig
        : >"$f"
        for r in $(seq "$runs"); do
            "$BGN" start --size=16 --topology=$topo --keep-going \
                -o overlay.keepalive_interval=$ka -o overlay.peer_timeout=$pt \
                "$BENCHDIR/bench-fault" --topology $topo --signal $sig --timeout 3 \
                >>"$f" 2>/dev/null
        done
        v=$(field victim "$f" | head -n 1)
        dd=$(field dest "$f" | head -n 1)
        hb=$(field hops_before "$f" | median)
        ha=$(field hops_after "$f" | median)
        df=$(field detect_first_ms "$f" | median)
        dl=$(field detect_last_ms "$f" | median)
        rr=$(field reroute_ms "$f" | median)
        [ "$rr" = "-1" ] && rr="never (cut off, 3 s)"
        [ "$ha" = "-1" ] && ha="-"
        echo "| $topo | $sig | $v | $dd | $hb/$ha | $df | $dl | $rr |"
    done
    echo
    echo "(medians of $RUNS runs for bgn, one run for kary:2; -1 = not seen within 3 s)"
fi

# ---------------------------------------------------------------- f
if want f; then
    echo
    echo "## f. Next-hop lookup cost with ranks down (libbgn, one process)"
    echo
    echo "One rank looks up the next hop to 1,000 distinct live destinations;"
    echo "exact = bgn_router_next_hop (live shortest paths: a search per"
    echo "destination once anything is down), route = bgn_router_route (what"
    echo "the overlay forwards with: the arithmetic's hops less the down ones)."
    echo
    echo "| N | topology | down | exact µs/lookup | route µs/lookup | searches/lookup |"
    echo "|---|---|---|---|---|---|"
    for topo in bgn bgn:8; do
        "$BENCHDIR/bench-route" 16384 $topo | while read -r line; do
            echo "| 16384 | $topo | $(echo "$line" | field down /dev/stdin) |" \
                 "$(echo "$line" | field exact_us /dev/stdin) |" \
                 "$(echo "$line" | field route_us /dev/stdin) |" \
                 "$(echo "$line" | field searches_per_lookup /dev/stdin) |"
        done
    done
fi

# ---------------------------------------------------------------- g
if want g && settle; then
    echo
    echo "## g. Idle CPU per broker"
    echo
    echo "\`bgn start --size=N\` with the default configuration (CURVE on,"
    echo "keepalive_interval 1 s), left alone 5 s after it is whole, then the CPU"
    echo "time of every thread of every broker over ${IDLE_SECONDS} s (from"
    echo "/proc/PID/task/*/schedstat, nanoseconds).  % = of one core."
    echo
    # the CPU nanoseconds of every broker thread, one line per broker
    cat >"$tmp/idle.sh" <<'EOF'
while read rank pid rest; do
    [ "$pid" -gt 0 ] 2>/dev/null || continue
    cat /proc/$pid/task/*/schedstat 2>/dev/null \
        | awk -v r=$rank '{ t += $1 } END { print r, t }'
done <"$BGN_RUNDIR/brokers"
EOF
    echo "| N | mean % per broker | max % | total % (all brokers) | load at start |"
    echo "|---|---|---|---|---|"
    for n in $IDLE; do
        load=$(cut -d' ' -f1 /proc/loadavg)
        "$BGN" start --size=$n sh -c "
            sleep 5
            sh '$tmp/idle.sh' >'$tmp/g.a'
            sleep $IDLE_SECONDS
            sh '$tmp/idle.sh' >'$tmp/g.b'" || echo "(idle N=$n failed)" >&2
        awk -v secs=$IDLE_SECONDS -v n=$n -v load=$load '
            NR == FNR { a[$1] = $2; next }
            ($1 in a) { d = ($2 - a[$1]) / 1e9 / secs * 100; s += d; k++
                        if (d > m) m = d }
            END { if (k) printf "| %d | %.3f | %.3f | %.2f | %s |\n", n, s / k, m, s, load }' \
            "$tmp/g.a" "$tmp/g.b"
    done
fi

# ---------------------------------------------------------------- h
# One Flux instance start and stop: its wall time and the CPU of every
# process of it (/usr/bin/time on flux start, which waits for them all).
flux_run () {   # flux_run OUT WRAPPER ARGS...
    out=$1; shift
    t0=$(now)
    /usr/bin/time -f "%U %S" -o "$tmp/h.cpu" "$@" >/dev/null 2>&1 \
        || echo "(flux start failed: $*)" >&2
    t1=$(now)
    echo "$t0 $t1 $(tail -n 1 "$tmp/h.cpu")" \
        | awk '{ printf "%.3f %.2f\n", $2 - $1, $3 + $4 }' >>"$out"
}
if want h && settle; then
    echo
    echo "## h. A Flux instance with and without bgn.so"
    echo
    flux=$(command -v flux 2>/dev/null)
    withbgn=${WITH_BGN:-$here/../flux/with-bgn}
    if [ -z "$flux" ] || [ ! -x "$withbgn" ]; then
        echo "No \`flux\` on PATH or no $withbgn (bgn built without flux-core):"
        echo "no figures."
    else
        echo "\`flux start --test-size=N true\` ($flux), without bgn and with it"
        echo "(src/flux/with-bgn: flux-modprobe loads bgn.so on every rank), with"
        echo "Flux's default rc1 and with a minimal rc1 (content, kvs, kvs-watch;"
        echo "and bgn), run by run interleaved; wall time and the CPU of every"
        echo "process (user + sys).  Load average at the start of the section:"
        echo "$(cut -d' ' -f1-3 /proc/loadavg)."
        echo
        printf '#!/bin/sh\nflux module load content && flux module load kvs && flux module load kvs-watch\n' >"$tmp/rc1"
        printf '#!/bin/sh\nflux module remove -f kvs-watch; flux module remove -f kvs; flux module remove -f content\n' >"$tmp/rc3"
        printf '#!/bin/sh\nflux module load content && flux module load kvs && flux module load kvs-watch && flux module load bgn\n' >"$tmp/rc1b"
        printf '#!/bin/sh\nflux module remove -f bgn; flux module remove -f kvs-watch; flux module remove -f kvs; flux module remove -f content\n' >"$tmp/rc3b"
        chmod +x "$tmp/rc1" "$tmp/rc3" "$tmp/rc1b" "$tmp/rc3b"
        echo "| N | rc1 | wall s without | wall s with | wall ratio | CPU s without | CPU s with | CPU ratio | load at start |"
        echo "|---|---|---|---|---|---|---|---|---|"
        for n in ${FLUX_SIZES:-64}; do
            load=$(cut -d' ' -f1 /proc/loadavg)
            for f in def.no def.bgn min.no min.bgn; do : >"$tmp/h.$f"; done
            for r in $(seq "$RUNS"); do
                flux_run "$tmp/h.def.no" "$flux" start --test-size=$n true
                flux_run "$tmp/h.def.bgn" "$withbgn" "$flux" start --test-size=$n true
                flux_run "$tmp/h.min.no" "$flux" start --test-size=$n \
                    -Sbroker.rc1_path="$tmp/rc1" -Sbroker.rc3_path="$tmp/rc3" true
                flux_run "$tmp/h.min.bgn" "$withbgn" "$flux" start --test-size=$n \
                    -Sbroker.rc1_path="$tmp/rc1b" -Sbroker.rc3_path="$tmp/rc3b" true
            done
            for rc in def min; do
                wn=$(awk '{ print $1 }' "$tmp/h.$rc.no" | median)
                wb=$(awk '{ print $1 }' "$tmp/h.$rc.bgn" | median)
                cn=$(awk '{ print $2 }' "$tmp/h.$rc.no" | median)
                cb=$(awk '{ print $2 }' "$tmp/h.$rc.bgn" | median)
                name=$([ $rc = def ] && echo default || echo minimal)
                awk -v n=$n -v rc=$name -v wn="$wn" -v wb="$wb" -v cn="$cn" -v cb="$cb" -v load="$load" 'BEGIN {
                    printf "| %d | %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %s |\n",
                        n, rc, wn, wb, (wn > 0 ? wb / wn : 0), cn, cb, (cn > 0 ? cb / cn : 0), load }'
            done
        done
        echo
        echo "(Target: with bgn at most 1.10 times the wall time and CPU without.)"
        echo "Load average at the end of the section: $(cut -d' ' -f1-3 /proc/loadavg)."
    fi
fi

# i. bgn as the overlay of a patched flux-broker, against its TBON.
if want i && settle; then
    echo
    echo "## i. bgn-overlay.so against Flux's TBON, one patched flux-broker"
    echo
    pflux=${FLUX_OVERLAY_FLUX:-}
    ovso=${OVERLAY_SO:-$here/../flux/.libs/bgn-overlay.so}
    if [ -z "$pflux" ] || [ ! -x "$pflux" ] || [ ! -f "$ovso" ]; then
        echo "Set FLUX_OVERLAY_FLUX to the flux command of a flux-core patched"
        echo "with contrib/flux-core (and build bgn with flux-core): no figures."
    else
        echo "\`$pflux start --test-size=N\`, the TBON (tbon.topo=kary:2) and"
        echo "bgn (-Sbroker.overlay-module=bgn-overlay.so), run by run interleaved."
        echo "Start-up: from \`flux start\` to its initial program's first line;"
        echo "end: from that program's exit to \`flux start\`'s.  Load average at"
        echo "the start of the section: $(cut -d' ' -f1-3 /proc/loadavg)."
        echo
        cat >"$tmp/i.rc2" <<-'EOT'
	#!/bin/sh
	date +%s.%N >"$I_OUT.up"
	if [ -n "$I_PING" ]; then
	    for r in $I_PING; do
	        flux ping -c 20 -i 0.01 $r 2>/dev/null | awk -v r=$r '/^'$r'!broker.ping/ { sub("time=", "", $4); s += $4; n++ } END { if (n) printf "%s %.3f\n", r, s / n }'
	    done >"$I_OUT.ping"
	    flux exec -r $I_LEAF sh -c "flux python $I_SUB $I_EVENTS >$I_OUT.ev 2>&1 &"
	    sleep 2
	    flux python $I_PUB $I_EVENTS
	    i=0; while [ ! -s "$I_OUT.ev" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done
	fi
	date +%s.%N >"$I_OUT.down"
	EOT
        cat >"$tmp/i.sub.py" <<-'EOT'
	import sys, time, flux
	h = flux.Flux(); n = int(sys.argv[1]); got = 0; t0 = None
	h.event_subscribe("ibench.")
	while got < n:
	    m = h.event_recv()
	    if t0 is None: t0 = time.time()
	    got += 1
	print("%d %.3f" % (got, time.time() - t0))
	EOT
        cat >"$tmp/i.pub.py" <<-'EOT'
	import sys, flux
	h = flux.Flux()
	for i in range(int(sys.argv[1])):
	    h.event_send("ibench.x", {"i": i})
	EOT
        chmod +x "$tmp/i.rc2"
        i_one () {   # i_one OUT SIZE PING ARGS...
            o=$1; n=$2; p=$3; shift 3
            t0=$(now)
            I_OUT=$o I_PING="$p" I_LEAF=$((n - 1)) I_EVENTS=${I_EVENTS:-2000} \
            I_SUB=$tmp/i.sub.py I_PUB=$tmp/i.pub.py \
                timeout 900 "$pflux" start --test-size=$n "$@" "$tmp/i.rc2" \
                >/dev/null 2>&1 || echo "(flux start failed: $n $*)" >&2
            t1=$(now)
            echo "$t0 $(cat "$o.up" 2>/dev/null || echo 0) $(cat "$o.down" 2>/dev/null || echo 0) $t1" \
                | awk '{ printf "%.2f %.2f\n", $2 - $1, $4 - $3 }' >>"$o.times"
        }
        echo "| N | overlay | start-up s | end s | runs | load |"
        echo "|---|---|---|---|---|---|"
        for n in ${OVERLAY_SIZES:-64 256}; do
            rm -f "$tmp"/i.*.times
            for r in $(seq "$RUNS"); do
                i_one "$tmp/i.tbon" $n "" -Stbon.topo=kary:2
                i_one "$tmp/i.bgn" $n "" -Sbroker.overlay-module="$ovso"
            done
            load=$(cut -d' ' -f1 /proc/loadavg)
            for o in tbon bgn; do
                up=$(awk '{ print $1 }' "$tmp/i.$o.times" | median)
                dn=$(awk '{ print $2 }' "$tmp/i.$o.times" | median)
                echo "| $n | $o | $up | $dn | $(wc -l <"$tmp/i.$o.times") | $load |"
            done
        done
        echo
        n=${OVERLAY_PING_SIZE:-64}
        echo "\`flux ping -c 20\` from rank 0 (mean ms) at $n brokers, ranks at"
        echo "kary:2 depths 1 to 6, and $((${I_EVENTS:-2000})) events published on rank 0"
        echo "(flux python, event_send) as received by a subscriber on rank $((n - 1))"
        echo "(seconds from the first to the last):"
        echo
        pr="1 3 7 15 31 63"
        rm -f "$tmp"/i.p*.ping "$tmp"/i.p*.ev
        i_one "$tmp/i.ptbon" $n "$pr" -Stbon.topo=kary:2
        i_one "$tmp/i.pbgn" $n "$pr" -Sbroker.overlay-module="$ovso"
        echo "| rank | kary:2 depth | TBON ms | bgn ms |"
        echo "|---|---|---|---|"
        for r in $pr; do
            d=$(awk -v r=$r 'BEGIN { d = 0; while (r > 0) { r = int((r - 1) / 2); d++ } print d }')
            echo "| $r | $d | $(awk -v r=$r '$1 == r { print $2 }' "$tmp/i.ptbon.ping") | $(awk -v r=$r '$1 == r { print $2 }' "$tmp/i.pbgn.ping") |"
        done
        echo
        echo "| overlay | events received | seconds | events/s |"
        echo "|---|---|---|---|"
        for o in tbon bgn; do
            awk -v o=$o '{ printf "| %s | %d | %.3f | %.0f |\n", o, $1, $2, ($2 > 0 ? $1 / $2 : 0) }' "$tmp/i.p$o.ev" 2>/dev/null \
                || echo "| $o | - | - | - |"
        done
        echo
        echo "Load average at the end of the section: $(cut -d' ' -f1-3 /proc/loadavg)."
    fi
fi

echo
awk -v a="$start_time" -v b="$(now)" 'BEGIN { printf "Total benchmark time: %.0f s\n", b - a }'
