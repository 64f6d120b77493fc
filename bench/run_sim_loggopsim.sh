#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Cross-checks the scale simulator (bench/amc_sim) against LogGOPSim on the
# same schedules (doc/design.md, "Scale simulator"): each
# algorithm is exported with amc_goal export, converted with txt2bin and
# simulated by LogGOPSim with the same L, o, g, G (picoseconds, so that both
# integer clocks agree), one parameter set for all ranks; amc_sim runs the
# library's real schedules and handlers on one node with the same set.
# Prints a Markdown table; fails if an agreement is outside 5 %. Not a test:
# LogGOPSim is not part of this tree (spcl/LogGOPSim, built elsewhere).
#
#   bash bench/run_sim_loggopsim.sh [LOGGOPSIM_DIR]
#
# LOGGOPSIM_DIR holds the txt2bin and LogGOPSim binaries (default
# /tmp/lgs/src/LogGOPSim). Environment: AMC_BUILD_DIR (default build),
# AMC_SIM_NS (default "16 64 256 1024"), AMC_SIM_L/O/GAP/G (ps; defaults
# 600000 200000 5000 40), AMC_SIM_NODE (node size for the node-aware
# algorithms' layout, default 8).
set -u -o pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
lgs=${1:-/tmp/lgs/src/LogGOPSim}
build=${AMC_BUILD_DIR:-$root/build}
ns=${AMC_SIM_NS:-"16 64 256 1024"}
L=${AMC_SIM_L:-600000}
o=${AMC_SIM_O:-200000}
g=${AMC_SIM_GAP:-5000}
G=${AMC_SIM_G:-40}
node=${AMC_SIM_NODE:-8}

for bin in "$lgs/txt2bin" "$lgs/LogGOPSim" "$build/amc_goal" "$build/bench/amc_sim"; do
    [ -x "$bin" ] || { echo "run_sim_loggopsim: $bin missing" >&2; exit 2; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/amc_simx.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

# the library's eager limit, for LogGOPSim's -S (eager up to S bytes)
rndv=$(AMC_LOG_LEVEL=error "$build/amc_info" 2>/dev/null |
       sed -n 's/.*AMC_RNDV_THRESH[^0-9]*\([0-9][0-9]*\).*/\1/p' | head -n 1)
S=$(( ${rndv:-8192} - 1 ))
ns_of() { awk -v ps="$1" 'BEGIN { printf "%.3f", ps / 1e3 }'; }

cases=(
    "barrier dissemination 0"
    "barrier hierarchical 0"
    "barrier multi_lane 0"
    "bcast binomial 8"
    "bcast hierarchical 8"
    "bcast binomial 1048576"
    "bcast pipeline 1048576"
    "allreduce recursive_doubling 8"
    "allreduce hierarchical 8"
    "allreduce multi_lane 8"
    "allreduce ring 65536"
)
bad=0
echo "LogGP (ps): L=$L o=$o g=$g G=$G, S=$S; node-aware layout: $node ranks per node"
echo
echo "| collective | algorithm | bytes | N | amc_sim us | LogGOPSim us | difference |"
echo "|---|---|---|---|---|---|---|"
for c in "${cases[@]}"; do
    read -r coll alg bytes <<<"$c"
    for n in $ns; do
        nodeopt=0
        case $alg in hierarchical | multi_lane) nodeopt=$node ;; esac
        # GOAL sizes of 0 bytes read as 1: LogGOPSim charges (s - 1) G
        "$build/amc_goal" export --node-size "$nodeopt" "$coll" "$alg" "$n" "$bytes" \
            2>"$work/err" | sed 's/ 0b / 1b /' >"$work/s.goal" || {
            echo "| $coll | $alg | $bytes | $n | export failed: $(head -c 80 "$work/err") | | |"
            continue
        }
        "$lgs/txt2bin" -i "$work/s.goal" -o "$work/s.bin" >/dev/null 2>&1 || {
            echo "| $coll | $alg | $bytes | $n | | txt2bin failed | |"
            bad=$((bad + 1))
            continue
        }
        lgs_ps=$("$lgs/LogGOPSim" -f "$work/s.bin" -L "$L" -o "$o" -g "$g" -G "$G" -S "$S" \
                     -b 2>/dev/null | sed -n 's/.*[Mm]aximum finishing time at host [0-9]*: \([0-9]*\).*/\1/p')
        sim_ps=$("$build/bench/amc_sim" --node-size "$nodeopt" --L "$(ns_of "$L")" \
                     --o "$(ns_of "$o")" --g "$(ns_of "$g")" --G "$(ns_of "$G")" \
                     --xL "$(ns_of "$L")" --xo "$(ns_of "$o")" --xg "$(ns_of "$g")" \
                     --xG "$(ns_of "$G")" --data shared "$coll" "$alg" "$n" "$bytes" |
                 sed -n 's/.*predicted: \([0-9.]*\) us.*/\1/p')
        if [ -z "$lgs_ps" ] || [ -z "$sim_ps" ]; then
            echo "| $coll | $alg | $bytes | $n | ${sim_ps:-failed} | ${lgs_ps:-failed} | |"
            bad=$((bad + 1))
            continue
        fi
        line=$(awk -v s="$sim_ps" -v l="$lgs_ps" 'BEGIN {
            lu = l / 1e6; d = (lu > 0) ? 100 * (s - lu) / lu : 0;
            printf "%.3f | %.3f | %+.1f %%%s", s, lu, d, (d > 5 || d < -5) ? " (over 5 %)" : "" }')
        echo "| $coll | $alg | $bytes | $n | $line |"
        case $line in *"over 5"*) bad=$((bad + 1)) ;; esac
    done
done
echo
[ "$bad" -eq 0 ] && echo "run_sim_loggopsim: every case within 5 %" ||
    echo "run_sim_loggopsim: $bad case(s) outside 5 % or failed"
[ "$bad" -eq 0 ]
