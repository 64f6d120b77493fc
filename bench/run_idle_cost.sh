#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# What waiting ranks cost a computing one where ranks share cores
# (bench/idle_cost.c): rank 0's loop while N-1 ranks wait in a barrier,
# under plain MPICH (its waits spin), preloaded with libamcoll_mpich
# (amcoll's waits: spin, yield for AMC_YIELD_USEC, then sleep) and
# preloaded with AMC_YIELD_USEC=1000000 (yield, never sleep); the modes
# alternate run by run. Prints each mode's loop times, in seconds.
#   bash bench/run_idle_cost.sh [BUILD_DIR [N [runs [ITERATIONS]]]]
set -eu
build=$(cd "${1:-build}" && pwd)
np=${2:-8}
runs=${3:-3}
iters=${4:-300000000}
preload=$build/.libs/libamcoll_mpich.so
[ -f "$preload" ] || { echo "run_idle_cost: no $preload" >&2; exit 1; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/amc_idle.XXXXXX")
trap 'rm -rf "$dir"' EXIT
mpicc.mpich -O2 -o "$dir/idle_cost" "$(dirname "$0")/idle_cost.c"
for ((r = 0; r < runs; r++)); do
    for mode in plain preload yield; do
        case $mode in
        plain)   env=() ;;
        preload) env=(-genv LD_PRELOAD "$preload") ;;
        yield)   env=(-genv LD_PRELOAD "$preload" -genv AMC_YIELD_USEC 1000000) ;;
        esac
        printf 'N=%d %-8s' "$np" "$mode"
        timeout 300 mpiexec.mpich "${env[@]}" -n "$np" "$dir/idle_cost" "$iters" |
            awk '{ printf " %s", $2 } END { print "" }'
    done
done
