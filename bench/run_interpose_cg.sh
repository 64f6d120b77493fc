#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Instructions libamcoll_mpi adds per call, every collective and form
# (blocking, non-blocking + wait, persistent start + wait): bench/interpose_bench
# at N = 1 under valgrind --tool=callgrind (deterministic: no waiting is
# counted), inclusive cost of v_X (via MPI) minus d_X (amcoll direct), per call.
#   bash bench/run_interpose_cg.sh [BUILD_DIR [CALLS]]   (default build 1000)
set -eu
build=$(cd "${1:-build}" && pwd)
calls=${2:-1000}
out=$(mktemp "${TMPDIR:-/tmp}/amc_cg.XXXXXX")
trap 'rm -f "$out" "$out.log"' EXIT
args=(--oversubscribe -np 1)
[ "$(id -u)" = 0 ] && args+=(--allow-run-as-root)
mpirun "${args[@]}" -x "LD_PRELOAD=$build/.libs/libamcoll_mpi.so" \
    -x "LD_LIBRARY_PATH=$build/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    valgrind --tool=callgrind --callgrind-out-file="$out" "$build/bench/interpose_bench" 1 \
    "$calls" >"$out.log" 2>&1 || { tail -n 20 "$out.log"; exit 1; }
# every function runs CALLS + 100 (warm-up) times
callgrind_annotate --inclusive=yes --threshold=100 "$out" 2>/dev/null |
    awk -v n=$((calls + 100)) '
        match($0, /:[dv]_[a-z_]+ \[/) {
            f = substr($0, RSTART + 1, RLENGTH - 3); c = $1; gsub(",", "", c); ir[f] = c
        }
        END {
            printf "| case | direct | via MPI | added |\n|---|---:|---:|---:|\n"
            for (f in ir) {
                if (substr(f, 1, 2) != "d_") continue
                k = substr(f, 3)
                printf "| %s | %.0f | %.0f | %.0f |\n", k, ir[f] / n, ir["v_" k] / n,
                       (ir["v_" k] - ir[f]) / n
            }
        }' | { read -r h; read -r s; echo "$h"; echo "$s"; sort -t'|' -k2,2; }
