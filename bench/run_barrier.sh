#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Barrier benchmark sweep: one mpirun of bench/barrier_bench per task count,
# then a table and a plot. It builds nothing: run `make bench/barrier_bench`
# first.
#
#   bash bench/run_barrier.sh [path/to/barrier_bench] [-- extra barrier_bench flags]
#
# Environment:
#   AMC_BENCH_NP           task counts (default "2 4 8 16 32")
#   AMC_BENCH_ITERS, AMC_BENCH_REPS, AMC_BENCH_TARGET_MS, AMC_BENCH_WARMUP,
#   AMC_BENCH_WATCHDOG, AMC_BENCH_METHODS
#                          handed to the bench as -i -r -t -w -W -m
#   AMC_BENCH_TIMEOUT      seconds before one mpirun is killed (default 240)
#   AMC_BENCH_OUT          results directory (default bench/results)
#   AMC_BENCH_MPIRUN_ARGS  extra mpirun arguments (word-split)
#   MPIRUN                 launcher (default mpirun)
# Everything else in the environment (AMC_*, UCX_*, OMPI_MCA_*) reaches the
# ranks unchanged: mpirun forwards its environment to local processes.
set -u -o pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)

bin="$root/bench/barrier_bench"
if [ $# -gt 0 ] && [ "$1" != "--" ]; then
    bin=$1
    shift
fi
if [ $# -gt 0 ] && [ "$1" = "--" ]; then
    shift
fi
bench_args=("$@")

nps=${AMC_BENCH_NP:-"2 4 8 16 32"}
timeout_s=${AMC_BENCH_TIMEOUT:-240}
out=${AMC_BENCH_OUT:-$root/bench/results}
mpirun=${MPIRUN:-mpirun}
read -r -a extra_mpirun <<< "${AMC_BENCH_MPIRUN_ARGS:-}"
plot_gp="$here/plot_barrier.gp"

die() {
    echo "run_barrier.sh: error: $*" >&2
    exit 1
}

# The knobs become flags and leave the environment, so the library's check for
# unknown AMC_* variables does not fire once per rank over them.
add_flag() {
    local var=$1 flag=$2
    if [ -n "${!var:-}" ]; then
        bench_args=("$flag" "${!var}" "${bench_args[@]}")
    fi
    unset "$var"
}
add_flag AMC_BENCH_ITERS -i
add_flag AMC_BENCH_REPS -r
add_flag AMC_BENCH_TARGET_MS -t
add_flag AMC_BENCH_WARMUP -w
add_flag AMC_BENCH_WATCHDOG -W
add_flag AMC_BENCH_METHODS -m
unset AMC_BENCH_NP AMC_BENCH_TIMEOUT AMC_BENCH_OUT AMC_BENCH_MPIRUN_ARGS

[ -x "$bin" ] || die "no executable benchmark at '$bin'; build it first (make bench/barrier_bench)"
command -v "$mpirun" > /dev/null 2>&1 || die "'$mpirun' not found; set MPIRUN to a PMIx launcher"
for n in $nps; do
    case $n in
        '' | *[!0-9]* | 0) die "AMC_BENCH_NP: '$n' is not a positive task count" ;;
    esac
done
mkdir -p "$out" || die "cannot create results directory '$out'"

raw="$out/barrier_raw.txt"
dat="$out/barrier.dat"
png="$out/barrier.png"
: > "$raw" || die "cannot write '$raw'"

echo "barrier sweep: N = $nps; binary $bin; results in $out"
failed=""
for n in $nps; do
    log="$out/barrier_N$n.log"
    echo "== N=$n"
    # The default pml (ob1) stays: Open MPI as installed is the baseline.
    # -k: mpirun 4.1.4 may itself hang or crash after a rank died in a fence.
    timeout -k 10 "$timeout_s" "$mpirun" --allow-run-as-root --oversubscribe -np "$n" \
        --mca btl_base_warn_component_unused 0 "${extra_mpirun[@]}" \
        "$bin" "${bench_args[@]}" > "$log" 2>&1
    rc=$?
    grep -v '^RESULT ' "$log"
    grep '^RESULT ' "$log" >> "$raw"
    if [ "$rc" -ne 0 ]; then
        case $rc in
            124 | 137) why="killed after ${timeout_s} s (AMC_BENCH_TIMEOUT)" ;;
            *) why="exit status $rc" ;;
        esac
        failed="$n"
        echo "run_barrier.sh: error: mpirun -np $n failed: $why; full log: $log" >&2
        break
    fi
    if ! grep -q "^RESULT N=$n " "$log"; then
        failed="$n"
        echo "run_barrier.sh: error: mpirun -np $n printed no RESULT line; full log: $log" >&2
        break
    fi
done

# One row per N. Columns per method: median q1 q3 min max (µs); '?' = not measured.
awk '
BEGIN {
    nm = split("amcoll layered openmpi am_pingpong", meth, " ")
    nf = split("median_us q1_us q3_us min_us max_us", fld, " ")
}
/^RESULT / {
    split("", kv)
    for (i = 2; i <= NF; i++) {
        eq = index($i, "=")
        kv[substr($i, 1, eq - 1)] = substr($i, eq + 1)
    }
    n = kv["N"]; m = kv["method"]
    if (!(n in seen)) { seen[n] = 1; order[++cnt] = n }
    for (f = 1; f <= nf; f++) val[n, m, f] = kv[fld[f]]
    cpu[n, m] = ("cpu_us" in kv) ? kv["cpu_us"] : "?"
    have[n, m] = 1
}
END {
    printf "# N"
    for (j = 1; j <= nm; j++) for (f = 1; f <= nf; f++) printf " %s_%s", meth[j], fld[f]
    printf " amcoll/layered amcoll/openmpi"
    printf " amcoll_cpu_us layered_cpu_us openmpi_cpu_us amcoll/layered_cpu\n"
    for (c = 1; c <= cnt; c++) {
        n = order[c]
        printf "%s", n
        for (j = 1; j <= nm; j++)
            for (f = 1; f <= nf; f++)
                printf " %s", ((n, meth[j]) in have) ? val[n, meth[j], f] : "?"
        a = ((n, "amcoll") in have) ? val[n, "amcoll", 1] : ""
        l = ((n, "layered") in have) ? val[n, "layered", 1] : ""
        o = ((n, "openmpi") in have) ? val[n, "openmpi", 1] : ""
        printf " %s", (a != "" && l != "" && l + 0 > 0) ? sprintf("%.4f", a / l) : "?"
        printf " %s", (a != "" && o != "" && o + 0 > 0) ? sprintf("%.4f", a / o) : "?"
        ac = ((n, "amcoll") in have) ? cpu[n, "amcoll"] : "?"
        lc = ((n, "layered") in have) ? cpu[n, "layered"] : "?"
        oc = ((n, "openmpi") in have) ? cpu[n, "openmpi"] : "?"
        printf " %s %s %s", ac, lc, oc
        printf " %s\n", (ac != "?" && lc != "?" && lc + 0 > 0) ? sprintf("%.4f", ac / lc) : "?"
    }
}' "$raw" > "$dat" || die "cannot write '$dat'"

# Columns: 1 N, 2 amcoll, 7 layered, 12 openmpi, 17 ping-pong, 22/23 ratios,
# 24-26 user CPU µs per barrier (busiest rank), 27 CPU ratio amcoll/layered.
echo
echo "barrier latency, median over reps (µs); ratios below 1 mean amcoll is faster"
echo "    N |  amcoll µs | layered µs | Open MPI µs | AM ping-pong µs | amcoll/layered | amcoll/OpenMPI | user CPU µs amcoll/layered/OMPI (ratio)"
echo "------+------------+------------+-------------+-----------------+----------------+----------------+----------------------------------------"
awk '
function cell(v, w, fmt) { return (v == "?") ? sprintf("%" w "s", "-") : sprintf("%" w fmt, v) }
/^#/ { next }
{
    cpucol = sprintf("%s / %s / %s (%s)", cell($24, 7, ".2f"), cell($25, 7, ".2f"), cell($26, 7, ".2f"),
                     cell($27, 5, ".2f"))
    printf "%5s | %s | %s | %s | %s | %s | %s | %38s\n", $1, cell($2, 10, ".3f"), cell($7, 10, ".3f"),
        cell($12, 11, ".3f"), cell($17, 15, ".3f"), cell($22, 14, ".3f"), cell($23, 14, ".3f"), cpucol
}' "$dat"
echo
echo "data: $dat"

if [ -s "$dat" ] && grep -qv '^#' "$dat"; then
    if command -v gnuplot > /dev/null 2>&1; then
        # An unmeasured method leaves an empty curve and a single N an empty
        # x range: neither is worth a warning.
        if gnuplot -e "datafile='$dat'; outfile='$png'" "$plot_gp" 2>&1 |
            grep -Ev 'Skipping data file with no valid points|empty x range' >&2
            [ "${PIPESTATUS[0]}" -eq 0 ]; then
            echo "plot: $png"
        else
            echo "run_barrier.sh: warning: gnuplot failed; no plot" >&2
        fi
    else
        echo "run_barrier.sh: warning: gnuplot not found; no plot" >&2
    fi
fi

if [ -n "$failed" ]; then
    echo "run_barrier.sh: stopped at N=$failed; table and plot hold the task counts before it" >&2
    exit 1
fi
exit 0
