#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# One library against Open MPI over many jobs, OSU's method (coll_bench -O):
# where Open MPI's own time changes from job to job (on UCX at 32 KiB and
# 1 MiB, 4-21 us for one cell here), a ratio taken job by job measures the
# pair of jobs more than either library. Prints, per collective and size,
# the median over jobs of each side's time, their ratio, and the ratio of
# each side's fastest job; then the geometric means by size and over all.
#
#   bench/run_jobs.sh LIBDIR [jobs] [np] [-- extra mpirun args]
#
# LIBDIR: a folder holding libamcoll.so.0 (a build's .libs). AMC_BENCH_SIZES /
# AMC_BENCH_COLLS / AMC_BENCH_REPS pick the cells (default 1 KiB, 32 KiB and
# 1 MiB, every collective, 11 reps). Example, against Open MPI on UCX:
#   bash bench/run_jobs.sh build/.libs 10 2 -- --mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
lib=$(cd "$1" && pwd)
jobs=${2:-10}; np=${3:-2}
shift $(( $# < 3 ? $# : 3 ))
[ "${1:-}" = "--" ] && shift
extra=("$@")
bench=${AMC_BENCH_BIN:-$top/build/bench/coll_bench}
export AMC_BENCH_SIZES=${AMC_BENCH_SIZES:-1K,32K,1M} AMC_BENCH_REPS=${AMC_BENCH_REPS:-11}
export AMC_BENCH_OSU=1 AMC_BENCH_TARGET_MS=${AMC_BENCH_TARGET_MS:-2}
root=(); [ "$(id -u)" -eq 0 ] && root=(--allow-run-as-root)
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for ((j = 0; j < jobs; j++)); do
    LD_LIBRARY_PATH=$lib mpirun "${root[@]}" --oversubscribe -np "$np" "${extra[@]}" \
        -x LD_LIBRARY_PATH "$bench" 2>&1 | sed -n 's/^RESULT //p' >>"$out"
done
awk '
function med(s,   n, a, i, j, t) { n = split(s, a, " ");
    for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
    return (n % 2) ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2 }
function low(s,   n, a, i, m) { n = split(s, a, " "); m = a[1];
    for (i = 2; i <= n; i++) if (a[i] + 0 < m + 0) m = a[i]
    return m }
{ for (i = 1; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
  if (f["status"] != "ok") next
  key = f["coll"] " " f["bytes"]; if (!(key in seen)) { seen[key] = 1; order[++n] = key }
  if (f["method"] == "amcoll") am[key] = am[key] " " f["median_us"]; else om[key] = om[key] " " f["median_us"] }
END { printf "%-31s | %-29s | %s\n", "", "medians over the jobs, us", "each side'"'"'s fastest job, us"
  printf "%-22s %8s | %9s %9s %9s | %9s %9s %9s\n", "collective", "bytes", "amcoll", "OMPI", "ratio", "amcoll", "OMPI", "ratio"
  for (i = 1; i <= n; i++) { key = order[i]; split(key, kb, " ")
    if (!(key in am) || !(key in om)) continue
    ma = med(am[key]); mo = med(om[key]); fa = low(am[key]); fo = low(om[key])
    printf "%-22s %8s | %9.3f %9.3f %9.3f | %9.3f %9.3f %9.3f\n", kb[1], kb[2], ma, mo, ma / mo, fa, fo, fa / fo
    lm[kb[2]] += log(ma / mo); lf[kb[2]] += log(fa / fo); k[kb[2]]++
    lm["all"] += log(ma / mo); lf["all"] += log(fa / fo); k["all"]++ }
  for (s in k) printf "geometric mean, %s bytes: %.3f of Open MPI (medians over %d jobs), %.3f (fastest jobs), %d cells\n", s, exp(lm[s] / k[s]), '"$jobs"', exp(lf[s] / k[s]), k[s] }' "$out"
