#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Instructions a blocking small collective takes a call, waits included, on
# every rank: bench/loop_bench (a loop of one blocking call on
# AMC_COMM_WORLD, its function's inclusive cost over the calls) under
# valgrind --tool=callgrind on each rank, AMC_SPIN_COUNT=0 (a wait looks
# once, then yields) and AMC_OVERSUB_LINEAR_MAX_RANKS=0 (the algorithms of a
# node with a core per rank); the mean over ranks.
#   bash bench/run_rounds_cg.sh [BUILD_DIR [CALLS [N... [-- COLL:BYTES...]]]]
#   (default build 2000, N = 2 4 8, barrier:0 allreduce:8)
# LIB=DIR runs the program on another build's libamcoll (DIR holding
# libamcoll.so.0), for an A/B of two libraries; extra AMC_* settings pass
# through the environment (mpirun -x of every AMC_* set).
set -eu
build=$(cd "${1:-build}" && pwd)
calls=${2:-2000}
shift $(( $# > 2 ? 2 : $# ))
nps=() cases=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do nps+=("$1"); shift; done
[ $# -gt 0 ] && shift
cases=("$@")
[ ${#nps[@]} -gt 0 ] || nps=(2 4 8)
[ ${#cases[@]} -gt 0 ] || cases=(barrier:0 allreduce:8)
libdir=${LIB:-$build/.libs}
dir=$(mktemp -d "${TMPDIR:-/tmp}/amc_rcg.XXXXXX")
trap 'rm -rf "$dir"' EXIT
args=(--oversubscribe -x AMC_SPIN_COUNT=0 -x AMC_OVERSUB_LINEAR_MAX_RANKS=0
      -x "LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
[ "$(id -u)" = 0 ] && args+=(--allow-run-as-root)
for v in $(env | sed -n 's/^\(AMC_[A-Z0-9_]*\)=.*/\1/p'); do
    case $v in AMC_SPIN_COUNT|AMC_OVERSUB_LINEAR_MAX_RANKS) ;; *) args+=(-x "$v") ;; esac
done
printf '| N |'; for c in "${cases[@]}"; do printf ' %s |' "${c/:/ }"; done; echo
printf '|---:|'; for c in "${cases[@]}"; do printf -- '---:|'; done; echo
for np in "${nps[@]}"; do
    printf '| %d |' "$np"
    for c in "${cases[@]}"; do
        rm -f "$dir"/cg.*
        mpirun "${args[@]}" -np "$np" valgrind --tool=callgrind \
            --callgrind-out-file="$dir/cg.%p" "$build/bench/loop_bench" "${c%%:*}" \
            "${c#*:}" "$calls" >"$dir/log" 2>&1 || { tail -n 20 "$dir/log"; exit 1; }
        # each rank ran CALLS + 100 calls of lb_call
        for f in "$dir"/cg.*; do
            callgrind_annotate --inclusive=yes --threshold=100 "$f" 2>/dev/null |
                awk '{ if (index($0, ":lb_call")) { c = $1; gsub(",", "", c); print c; exit } }'
        done | awk -v k=$((calls + 100)) '{ s += $1; r++ } END { printf " %.0f |", s / r / k }'
    done
    echo
done
