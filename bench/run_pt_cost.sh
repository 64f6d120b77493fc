#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# What the progress thread costs blocking collectives: the same benchmark runs
# with AMC_PROGRESS_THREAD=0 and =1, alternating, several rounds per N, and
# the table shows the median latency of each and their ratio (on / off) with
# its spread over the rounds. The goal is no measurable slowdown.
# It builds nothing: ./build.sh (or make in build_dir) first.
#
#   bash bench/run_pt_cost.sh [build_dir]      (default: build/ of this checkout)
#
# Environment: AMC_BENCH_NP (default "2 4 8"), AMC_BENCH_ROUNDS (default 3),
# AMC_BENCH_TIMEOUT (s per mpirun, default 300), MPIRUN (default mpirun).
set -u -o pipefail

here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$(cd "$here/.." && pwd)/build}
for b in barrier_bench coll_bench; do
    [ -x "$build/bench/$b" ] || { echo "run_pt_cost: no $build/bench/$b (build first)" >&2; exit 1; }
done
nps=${AMC_BENCH_NP:-"2 4 8"}
rounds=${AMC_BENCH_ROUNDS:-3}
timeout_s=${AMC_BENCH_TIMEOUT:-300}
mpirun=${MPIRUN:-mpirun}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

launch() {
    local np=$1
    shift
    timeout -k 5 "$timeout_s" "$mpirun" --allow-run-as-root --oversubscribe -np "$np" \
        -x AMC_PROGRESS_THREAD "$@" </dev/null 2>&1
}

for np in $nps; do
    for r in $(seq 1 "$rounds"); do
        for pt in 0 1; do
            AMC_PROGRESS_THREAD=$pt launch "$np" "$build/bench/barrier_bench" -m amcoll -r 9 |
                sed -n "s/^RESULT N=\([0-9]*\) method=amcoll median_us=\([0-9.]*\).*/barrier 0 \1 $pt \2/p" \
                >>"$out/raw"
            AMC_PROGRESS_THREAD=$pt launch "$np" "$build/bench/coll_bench" -m amcoll -r 9 \
                -c allreduce,bcast,alltoall -s 8,64K |
                sed -n "s/^RESULT N=\([0-9]*\) coll=\([a-z_]*\) bytes=\([0-9]*\) method=amcoll status=ok median_us=\([0-9.]*\).*/\2 \3 \1 $pt \4/p" \
                >>"$out/raw"
        done
    done
done

echo "| collective | bytes | N | off µs | on µs | on/off median | on/off min..max over rounds |"
echo "|---|---:|---:|---:|---:|---:|---|"
sort -k1,1 -k2,2n -k3,3n "$out/raw" | awk '
function median(a, n,   i, j, t) {
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{
    key = $1 " " $2 " " $3
    if (!(key in seen)) { seen[key] = 1; keys[++nk] = key }
    if ($4 == 0) { off[key, ++noff[key]] = $5 } else { on[key, ++non[key]] = $5 }
}
END {
    for (k = 1; k <= nk; k++) {
        key = keys[k]; n = (noff[key] < non[key]) ? noff[key] : non[key]
        delete a; delete b; delete q
        for (i = 1; i <= n; i++) { a[i] = off[key, i]; b[i] = on[key, i]; q[i] = b[i] / a[i] }
        mo = median(a, n); mn = median(b, n); lo = 1e9; hi = 0
        for (i = 1; i <= n; i++) { if (q[i] < lo) lo = q[i]; if (q[i] > hi) hi = q[i] }
        split(key, f, " ")
        printf "| %s | %s | %s | %.3f | %.3f | %.2f | %.2f..%.2f |\n", f[1], f[2], f[3], mo, mn, mn / mo, lo, hi
    }
}'
