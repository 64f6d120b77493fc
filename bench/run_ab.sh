#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# A/B of two builds of libamcoll against Open MPI, OSU's method (coll_bench -O):
# the runs alternate A, B, B, A, A, B ... so both see the same machine and
# neither always runs first (the first of a pair came out ~5-10% faster with
# the same library on both sides, 2026-11-27), and each run times amcoll and
# Open MPI interleaved rep by rep in one job. Prints, per collective and
# size, the median over runs of amcoll / Open MPI for A and B.
#
#   bench/run_ab.sh LIBDIR_A LIBDIR_B [runs] [np] [-- extra mpirun args]
#
# LIBDIR_*: folders holding libamcoll.so.0 (a build's .libs, or a copy of it).
# AMC_BENCH_SIZES / AMC_BENCH_COLLS / AMC_BENCH_REPS pick the cells (default
# 8 and 64 bytes, every collective, 11 reps). Example, before/after a change:
#   cp -r build/.libs /tmp/before; (change, rebuild)
#   bash bench/run_ab.sh /tmp/before build/.libs 5 2
#   bash bench/run_ab.sh /tmp/before build/.libs 5 2 -- --mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
a=$(cd "$1" && pwd); b=$(cd "$2" && pwd)
runs=${3:-5}; np=${4:-2}
shift $(( $# < 4 ? $# : 4 ))
[ "${1:-}" = "--" ] && shift
extra=("$@")
bench=${AMC_BENCH_BIN:-$top/build/bench/coll_bench}
export AMC_BENCH_SIZES=${AMC_BENCH_SIZES:-8,64} AMC_BENCH_REPS=${AMC_BENCH_REPS:-11}
export AMC_BENCH_OSU=1 AMC_BENCH_TARGET_MS=${AMC_BENCH_TARGET_MS:-2}
root=(); [ "$(id -u)" -eq 0 ] && root=(--allow-run-as-root)
out=$(mktemp)
for ((r = 0; r < runs; r++)); do
    order="A B"
    [ $((r % 2)) = 1 ] && order="B A"
    for v in $order; do
        lib=$a; [ $v = B ] && lib=$b
        LD_LIBRARY_PATH=$lib mpirun "${root[@]}" --oversubscribe -np "$np" "${extra[@]}" \
            -x LD_LIBRARY_PATH "$bench" 2>&1 | sed -n "s/^RESULT /$v /p" >>"$out"
    done
done
awk '
function med(s,   n, a, i, j, t) { n = split(s, a, " ");
    for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
    return (n % 2) ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2 }
{ v = $1; for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
  if (f["status"] != "ok") next
  key = f["coll"] " " f["bytes"]; if (!(key in seen)) { seen[key] = 1; order[++n] = key }
  if (f["method"] == "amcoll") am[v, key] = f["median_us"]; else om[v, key] = f["median_us"]
  if ((v, key) in am && (v, key) in om) { r[v, key] = r[v, key] " " am[v, key] / om[v, key]; us[v, key] = us[v, key] " " am[v, key]; ous[v, key] = ous[v, key] " " om[v, key]; delete am[v, key]; delete om[v, key] } }
END { printf "%-22s %7s | %9s %9s %9s | %9s %9s %9s | %7s\n", "collective", "bytes", "A us", "OMPI us", "A/OMPI", "B us", "OMPI us", "B/OMPI", "B/A"
  la = 0; lb = 0; k = 0
  for (i = 1; i <= n; i++) { key = order[i]; split(key, kb, " ")
    ra = med(r["A", key]); rb = med(r["B", key])
    printf "%-22s %7s | %9.3f %9.3f %9.3f | %9.3f %9.3f %9.3f | %7.3f\n", kb[1], kb[2], med(us["A", key]), med(ous["A", key]), ra, med(us["B", key]), med(ous["B", key]), rb, rb / ra
    if (ra > 0 && rb > 0) { la += log(ra); lb += log(rb); k++ } }
  if (k) printf "geometric mean of amcoll/OMPI: A %.3f  B %.3f  (%d cells, median of %d runs each)\n", exp(la / k), exp(lb / k), k, '"$runs"' }' "$out"
rm -f "$out"
