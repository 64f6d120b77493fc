#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The collective sweep across two hosts: one rank on each of two nodes of
# the emulated cluster (tests/cluster/cluster.sh; UCX over TCP on the
# namespaces' link), OSU's method (coll_bench -O), amcoll and Open MPI
# interleaved rep by rep in one job, against Open MPI's default (ob1, its
# TCP BTL) and Open MPI on UCX's PML, the two kinds of job alternating run
# by run. Prints per cell the median over runs of each time and of amcoll /
# Open MPI, and the geometric means.
#
#   bench/run_cluster_bench.sh [runs] [-- extra mpirun args]
#
# AMC_BENCH_SIZES / AMC_BENCH_COLLS / AMC_BENCH_REPS pick the cells (default
# 8 B and 1 KiB, every collective, 11 reps). Root only; brings the cluster up
# and down unless one is up already (then it is left up).
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-3}
shift $(( $# < 1 ? $# : 1 ))
[ "${1:-}" = "--" ] && shift
extra=("$@")
cluster="$top/tests/cluster/cluster.sh"
bench=${AMC_BENCH_BIN:-$top/build/bench/coll_bench}
[ -x "$bench" ] || { echo "no $bench: build first (./build.sh)"; exit 1; }
export AMC_BENCH_SIZES=${AMC_BENCH_SIZES:-8,1024} AMC_BENCH_REPS=${AMC_BENCH_REPS:-11}
export AMC_BENCH_OSU=1 AMC_BENCH_TARGET_MS=${AMC_BENCH_TARGET_MS:-5}

if ! bash "$cluster" status >/dev/null 2>&1; then
    bash "$cluster" up 2 || exit 1
    trap 'bash "$cluster" down >/dev/null 2>&1' EXIT
fi
hostfile=$(bash "$cluster" hostfile)
agent=$(bash "$cluster" agent)
out=$(mktemp)
for ((r = 0; r < runs; r++)); do
    for peer in ob1 ucx; do
        if [ "$peer" = ob1 ]; then
            pml=(--mca pml ob1 --mca btl "tcp,self,vader")
        else
            pml=(--mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any)
        fi
        (cd "$top/build" && bash "$cluster" run mpirun --allow-run-as-root --bind-to none \
            --hostfile "$hostfile" --mca plm_rsh_agent "$agent" --map-by node -np 2 \
            "${pml[@]}" "${extra[@]}" -x AMC_BENCH_SIZES -x AMC_BENCH_REPS -x AMC_BENCH_OSU \
            -x AMC_BENCH_TARGET_MS ${AMC_BENCH_COLLS:+-x AMC_BENCH_COLLS} "$bench" 2>&1) |
            sed -n "s/^RESULT /$peer /p" >>"$out"
    done
done
echo "# across 2 emulated nodes, 1 rank each, OSU's method, median of $runs runs ($(date -u +%F))"
awk '
function med(s,   n, a, i, j, t) { n = split(s, a, " ");
    for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
    return (n % 2) ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2 }
{ v = $1; delete f; for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
  if (f["status"] != "ok") next
  key = f["coll"] " " f["bytes"]; if (!(key in seen)) { seen[key] = 1; order[++n] = key }
  if (f["method"] == "amcoll") am[v, key] = f["median_us"]; else om[v, key] = f["median_us"]
  if ((v, key) in am && (v, key) in om) { r[v, key] = r[v, key] " " am[v, key] / om[v, key]
    us[v, key] = us[v, key] " " am[v, key]; ous[v, key] = ous[v, key] " " om[v, key]
    delete am[v, key]; delete om[v, key] } }
END { printf "| %s | %s | %s | %s | %s | %s | %s |\n|---|---:|---:|---:|---:|---:|---:|\n", "collective", "bytes", "amcoll us", "ob1 us", "amcoll/ob1", "UCX PML us", "amcoll/UCX PML"
  la = 0; lb = 0; k = 0; wa = 0; wb = 0
  for (i = 1; i <= n; i++) { key = order[i]; split(key, kb, " ")
    ra = med(r["ob1", key]); rb = med(r["ucx", key])
    printf "| %s | %s | %.2f | %.2f | %.2f | %.2f | %.2f |\n", kb[1], kb[2], med(us["ob1", key] " " us["ucx", key]), med(ous["ob1", key]), ra, med(ous["ucx", key]), rb
    if (ra > 0 && rb > 0) { la += log(ra); lb += log(rb); k++; wa += (ra > 0.9); wb += (rb > 0.9) } }
  if (k) printf "\ngeometric mean of amcoll / Open MPI over %d cells: ob1 %.3f, UCX PML %.3f; cells above 0.9: %d and %d\n", k, exp(la / k), exp(lb / k), wa, wb }' "$out"
rm -f "$out"
