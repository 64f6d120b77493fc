#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Predicted latency against N from the scale simulator (doc/design.md,
# "Scale simulator"): bench/amc_sim --sweep for each
# algorithm, flat and node-aware (AMC_SIM_NODE ranks per node, default 32),
# with amc_sim's default LogGP parameters unless AMC_SIM_OPTS gives others;
# writes bench/results/scale.dat and plots bench/results/scale.png.
#
#   bash bench/run_sim_scale.sh
#
# Environment: AMC_BUILD_DIR (default build), AMC_SIM_MAX (largest N for
# the latency-bound lines, default 65536), AMC_SIM_MAX_BIG (for the 1 MiB
# bcast lines, default 16384), AMC_SIM_NODE, AMC_SIM_OPTS.
set -u -o pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=${AMC_BUILD_DIR:-$root/build}
max=${AMC_SIM_MAX:-65536}
maxbig=${AMC_SIM_MAX_BIG:-16384}
node=${AMC_SIM_NODE:-32}
opts=${AMC_SIM_OPTS:-}
out=$root/bench/results
mkdir -p "$out"
sim=$build/bench/amc_sim
[ -x "$sim" ] || { echo "run_sim_scale: $sim missing (make)" >&2; exit 2; }

lines=(
    "barrier dissemination 0 0 $max"
    "barrier hierarchical 0 $node $max"
    "barrier multi_lane 0 $node $max"
    "allreduce recursive_doubling 8 0 $max"
    "allreduce hierarchical 8 $node $max"
    "allreduce multi_lane 8 $node $max"
    "bcast binomial 8 0 $max"
    "bcast hierarchical 8 $node $max"
    "bcast pipeline 1048576 0 $maxbig"
    "bcast binomial 1048576 0 $maxbig"
)
dat=$out/scale.dat
: >"$dat"
failed=0
for l in "${lines[@]}"; do
    read -r coll alg bytes ns m <<<"$l"
    # the flat lines run with the same node layout: ranks share node NICs alike
    # shellcheck disable=SC2086
    "$sim" $opts --node-size "$node" --sweep "$m" "$coll" "$alg" "$bytes" >"$out/sweep.tmp" ||
        failed=1
    {
        echo "# $coll $alg $bytes B $( [ "$ns" -gt 0 ] && echo "node-aware" || echo "flat")"
        grep -v '^#' "$out/sweep.tmp"
        echo
        echo
    } >>"$dat"
    echo "run_sim_scale: $coll $alg $bytes B done ($(tail -n 1 "$out/sweep.tmp"))"
done
rm -f "$out/sweep.tmp"
gnuplot -e "datafile='$dat'; outfile='$out/scale.png'; nodesize=$node" "$here/plot_scale.gp" ||
    failed=1
echo "run_sim_scale: $dat, $out/scale.png"
exit $failed
