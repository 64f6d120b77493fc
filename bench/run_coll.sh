#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Collective latency sweep (OSU style): one mpirun of bench/coll_bench per task
# count, amcoll and Open MPI timed in the same job, then one table per
# collective, the performance targets (ratios to Open MPI) and a plot. It builds nothing: run
# `make bench/coll_bench` first.
#
#   bash bench/run_coll.sh [path/to/coll_bench] [-- extra coll_bench flags]
#
# Environment:
#   AMC_BENCH_NP           task counts (default "2 4 8 16 32")
#   AMC_BENCH_SIZES, AMC_BENCH_COLLS, AMC_BENCH_METHODS, AMC_BENCH_REPS,
#   AMC_BENCH_TARGET_MS, AMC_BENCH_CELL_MS, AMC_BENCH_ITERS, AMC_BENCH_MAX_MIB,
#   AMC_BENCH_WATCHDOG     handed to the bench as -s -c -m -r -t -T -i -M -W
#                          (coll_bench -h explains them)
#   AMC_BENCH_OSU=1        OSU's method (coll_bench -O): each call timed alone,
#                          a barrier between calls, latency = mean over ranks
#   AMC_BENCH_TIMEOUT      seconds before one mpirun is killed (default 600)
#   AMC_BENCH_QUIET_WAIT   seconds to wait, before each N, for other runnable
#                          tasks to go away (default 60; 0 = start at once)
#   AMC_BENCH_OUT          results directory (default bench/results)
#   AMC_BENCH_MPIRUN_ARGS  extra mpirun arguments (word-split)
#   MPIRUN                 launcher (default mpirun)
# Everything else in the environment (AMC_*, UCX_*, OMPI_MCA_*) reaches the
# ranks unchanged: mpirun forwards its environment to local processes.
#
# Output in the results directory: coll_raw.txt (RESULT lines), coll.dat
# (one row per collective, size and N; header inside), coll_N<n>.log,
# coll.png; the tables go to stdout (Markdown).
set -u -o pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)

bin="$root/bench/coll_bench"
if [ $# -gt 0 ] && [ "$1" != "--" ]; then
    bin=$1
    shift
fi
if [ $# -gt 0 ] && [ "$1" = "--" ]; then
    shift
fi
bench_args=("$@")

nps=${AMC_BENCH_NP:-"2 4 8 16 32"}
timeout_s=${AMC_BENCH_TIMEOUT:-600}
quiet_s=${AMC_BENCH_QUIET_WAIT:-60}
out=${AMC_BENCH_OUT:-$root/bench/results}
mpirun=${MPIRUN:-mpirun}
read -r -a extra_mpirun <<< "${AMC_BENCH_MPIRUN_ARGS:-}"
plot_gp="$here/plot_coll.gp"

die() {
    echo "run_coll.sh: error: $*" >&2
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
add_flag AMC_BENCH_SIZES -s
add_flag AMC_BENCH_COLLS -c
add_flag AMC_BENCH_METHODS -m
add_flag AMC_BENCH_REPS -r
add_flag AMC_BENCH_TARGET_MS -t
add_flag AMC_BENCH_CELL_MS -T
add_flag AMC_BENCH_ITERS -i
add_flag AMC_BENCH_MAX_MIB -M
add_flag AMC_BENCH_WATCHDOG -W
if [ "${AMC_BENCH_OSU:-0}" = 1 ]; then
    bench_args=(-O "${bench_args[@]}")
fi
unset AMC_BENCH_OSU
unset AMC_BENCH_NP AMC_BENCH_TIMEOUT AMC_BENCH_OUT AMC_BENCH_MPIRUN_ARGS AMC_BENCH_QUIET_WAIT

[ -x "$bin" ] || die "no executable benchmark at '$bin'; build it first (make bench/coll_bench)"
command -v "$mpirun" > /dev/null 2>&1 || die "'$mpirun' not found; set MPIRUN to a PMIx launcher"
case $quiet_s in
    '' | *[!0-9]*) die "AMC_BENCH_QUIET_WAIT: '$quiet_s' is not a number of seconds" ;;
esac
for n in $nps; do
    case $n in
        '' | *[!0-9]* | 0) die "AMC_BENCH_NP: '$n' is not a positive task count" ;;
    esac
done
mkdir -p "$out" || die "cannot create results directory '$out'"

raw="$out/coll_raw.txt"
dat="$out/coll.dat"
png="$out/coll.png"
: > "$raw" || die "cannot write '$raw'"

# Runnable tasks besides this script, sampled a few times: ranks share the
# cores with whatever else runs, so a busy machine makes every number noisy.
others_running() {
    local r max=0
    for _ in 1 2 3 4 5; do
        r=$(awk '/^procs_running/ { print $2 - 1 }' /proc/stat 2> /dev/null)
        [ -n "$r" ] && [ "$r" -gt "$max" ] && max=$r
        sleep 0.2
    done
    echo "$max"
}

ncpu=$(nproc 2> /dev/null || echo 1)
echo "collective sweep: N = $nps; binary $bin ${bench_args[*]}; results in $out"
t_start=$(date +%s)
failed=""
busy=""
for n in $nps; do
    log="$out/coll_N$n.log"
    echo "== N=$n"
    others=$(others_running)
    waited=0
    while [ "$others" -gt 0 ] && [ "$waited" -lt "$quiet_s" ]; do
        [ "$waited" -eq 0 ] && echo "   waiting up to ${quiet_s} s for $others other runnable task(s) to finish (AMC_BENCH_QUIET_WAIT)"
        sleep 4
        waited=$((waited + 5))
        others=$(others_running)
    done
    if [ "$others" -gt 0 ]; then
        echo "run_coll.sh: warning: $others other runnable task(s) on $ncpu core(s) before N=$n: expect noise" >&2
        busy="$busy $n"
    fi
    t0=$(date +%s)
    # The default pml (ob1) stays: Open MPI as installed is the baseline.
    # -k: mpirun 4.1.4 may itself hang or crash after a rank died.
    timeout -k 10 "$timeout_s" "$mpirun" --allow-run-as-root --oversubscribe -np "$n" \
        --mca btl_base_warn_component_unused 0 "${extra_mpirun[@]}" \
        "$bin" "${bench_args[@]}" > "$log" 2>&1
    rc=$?
    grep -v '^RESULT ' "$log"
    grep '^RESULT ' "$log" >> "$raw"
    echo "   ($(( $(date +%s) - t0 )) s)"
    if [ "$rc" -ne 0 ]; then
        case $rc in
            124 | 137) why="killed after ${timeout_s} s (AMC_BENCH_TIMEOUT)" ;;
            *) why="exit status $rc" ;;
        esac
        failed="$n"
        echo "run_coll.sh: error: mpirun -np $n failed: $why; full log: $log" >&2
        break
    fi
    if ! grep -q "^RESULT N=$n " "$log"; then
        failed="$n"
        echo "run_coll.sh: error: mpirun -np $n printed no RESULT line; full log: $log" >&2
        break
    fi
done
echo "sweep time: $(( $(date +%s) - t_start )) s"

# One row per (collective, bytes, N), grouped by collective then N then bytes,
# so each (collective, N) curve is a contiguous run of rows. '?' = no number.
awk '
BEGIN {
    nc = split("bcast reduce allreduce gather scatter allgather alltoall reduce_scatter_block reduce_scatter scan exscan gatherv scatterv allgatherv alltoallv", co, " ")
    for (i = 1; i <= nc; i++) rank[co[i]] = i
}
/^RESULT / {
    split("", kv)
    for (i = 2; i <= NF; i++) {
        eq = index($i, "=")
        kv[substr($i, 1, eq - 1)] = substr($i, eq + 1)
    }
    c = kv["coll"]; n = kv["N"]; b = kv["bytes"]; m = kv["method"]
    if (!(c in rank)) rank[c] = ++nc
    key = c SUBSEP b SUBSEP n
    if (!(key in seen)) {
        seen[key] = 1
        keys[++cnt] = key
        # sortable: collective order, N, bytes
        sk[cnt] = sprintf("%03d %06d %012d", rank[c], n, b)
    }
    st[key, m] = kv["status"]
    if (kv["status"] == "ok") {
        med[key, m] = kv["median_us"]; q1[key, m] = kv["q1_us"]; q3[key, m] = kv["q3_us"]
        it[key, m] = kv["iters"]; reps[key] = kv["reps"]
    }
}
END {
    print "# coll bytes N amcoll_median_us amcoll_q1_us amcoll_q3_us openmpi_median_us openmpi_q1_us openmpi_q3_us amcoll/openmpi amcoll_status openmpi_status amcoll_iters openmpi_iters reps"
    # insertion sort on the sort keys (a few hundred rows)
    for (i = 1; i <= cnt; i++) idx[i] = i
    for (i = 2; i <= cnt; i++) {
        v = idx[i]; j = i - 1
        while (j >= 1 && sk[idx[j]] > sk[v]) { idx[j + 1] = idx[j]; j-- }
        idx[j + 1] = v
    }
    for (r = 1; r <= cnt; r++) {
        key = keys[idx[r]]
        split(key, p, SUBSEP)
        a = ((key, "amcoll") in med) ? med[key, "amcoll"] : "?"
        o = ((key, "openmpi") in med) ? med[key, "openmpi"] : "?"
        printf "%s %s %s", p[1], p[2], p[3]
        printf " %s %s %s", a, ((key, "amcoll") in q1) ? q1[key, "amcoll"] : "?", ((key, "amcoll") in q3) ? q3[key, "amcoll"] : "?"
        printf " %s %s %s", o, ((key, "openmpi") in q1) ? q1[key, "openmpi"] : "?", ((key, "openmpi") in q3) ? q3[key, "openmpi"] : "?"
        printf " %s", (a != "?" && o != "?" && o + 0 > 0) ? sprintf("%.4f", a / o) : "?"
        printf " %s %s", ((key, "amcoll") in st) ? st[key, "amcoll"] : "?", ((key, "openmpi") in st) ? st[key, "openmpi"] : "?"
        printf " %s %s %s\n", ((key, "amcoll") in it) ? it[key, "amcoll"] : "?", ((key, "openmpi") in it) ? it[key, "openmpi"] : "?", (key in reps) ? reps[key] : "?"
    }
}' "$raw" > "$dat" || die "cannot write '$dat'"

# Tables (Markdown), one per collective: rows = bytes per rank, per N the
# amcoll and Open MPI medians (µs) and their ratio.
case " ${bench_args[*]} " in
    *" -O "*) how="median over reps of the mean over ranks, as OSU times: each call alone, a barrier between calls" ;;
    *) how="median over reps of the mean of the slowest rank" ;;
esac
echo
echo "Latency per call, µs: $how; ratio = amcoll / Open MPI (lower is better)."
echo "Bytes are per rank (for the N-block collectives, the block each rank sends to or receives from one peer; v-forms and reduce_scatter with equal counts); reductions sum doubles."
echo "'-' = not run (reductions below 8 B, or N x bytes over the per-rank cap); WRONG/ERROR = the checked call failed, not timed; n/a = AMC_ERR_UNSUPPORTED;"
echo "'~' after a ratio = noisy cell (interquartile range over reps above 1/3 of the median for either library)."
awk '
function us(v) {
    if (v == "?") return "-"
    if (v + 0 < 10) return sprintf("%.2f", v)
    if (v + 0 < 1000) return sprintf("%.1f", v)
    return sprintf("%.0f", v)
}
function hb(b) {
    if (b >= 1048576 && b % 1048576 == 0) return (b / 1048576) "M"
    if (b >= 1024 && b % 1024 == 0) return (b / 1024) "K"
    return b
}
function cell(key, m,    s) {
    s = ((key, m) in st) ? st[key, m] : "?"
    if (s == "wrong") return "WRONG"
    if (s == "error") return "ERROR"
    if (s == "unsupported") return "n/a"
    return us(med[key, m])
}
/^#/ { next }
{
    c = $1; b = $2; n = $3; key = c SUBSEP b SUBSEP n
    if (!(c in hasc)) { hasc[c] = 1; corder[++nc] = c }
    if (!((c, b) in hasb)) { hasb[c, b] = 1; border[c, ++nb[c]] = b }
    if (!(n in hasn)) { hasn[n] = 1; norder[++nn] = n }
    med[key, "amcoll"] = $4; med[key, "openmpi"] = $7; ratio[key] = $10
    # noisy: the interquartile range of either method exceeds a third of its median
    noisy[key] = ($4 != "?" && $4 + 0 > 0 && ($6 - $5) / $4 > 0.33) || ($7 != "?" && $7 + 0 > 0 && ($9 - $8) / $7 > 0.33)
    st[key, "amcoll"] = $11; st[key, "openmpi"] = $12
    have[key] = 1
}
END {
    # N in numeric order
    for (i = 2; i <= nn; i++) {
        v = norder[i]; j = i - 1
        while (j >= 1 && norder[j] + 0 > v + 0) { norder[j + 1] = norder[j]; j-- }
        norder[j + 1] = v
    }
    for (ci = 1; ci <= nc; ci++) {
        c = corder[ci]
        printf "\n### %s\n\n| bytes |", c
        for (k = 1; k <= nn; k++) printf " N=%s amcoll | N=%s OMPI | N=%s ratio |", norder[k], norder[k], norder[k]
        printf "\n|------:|"
        for (k = 1; k <= nn; k++) printf "------:|------:|------:|"
        printf "\n"
        for (bi = 1; bi <= nb[c]; bi++) {
            b = border[c, bi]
            printf "| %5s |", hb(b)
            for (k = 1; k <= nn; k++) {
                key = c SUBSEP b SUBSEP norder[k]
                if (!(key in have)) { printf " - | - | - |"; continue }
                r = (ratio[key] == "?") ? "-" : sprintf("%.2f%s", ratio[key], noisy[key] ? "~" : "")
                printf " %s | %s | %s |", cell(key, "amcoll"), cell(key, "openmpi"), r
            }
            printf "\n"
        }
    }
}' "$dat"

# Per N: the geometric mean of amcoll / Open MPI over the cells both timed,
# the cells where amcoll is slower, the worst ones, and the targets (N = 2:
# no cell above 1.0, geometric mean at most 0.8; oversubscribed N: mean at
# most 1.0, no cell above 1.5).
echo
echo "### Summary per N (ratio amcoll / Open MPI, same run)"
echo
awk '
/^#/ { next }
$10 != "?" {
    n = $3; if (!(n in cnt)) norder[++nn] = n
    cnt[n]++; lsum[n] += log($10 + 0)
    if ($10 + 0 > 1.0) slower[n]++
    if ($10 + 0 > 1.5) { above[n]++; worst[n] = worst[n] sprintf(" %s %s B %.2f;", $1, $2, $10) }
    if ($10 + 0 > max[n] + 0) { max[n] = $10; maxc[n] = $1 " " $2 " B" }
}
END {
    for (i = 2; i <= nn; i++) {
        v = norder[i]; j = i - 1
        while (j >= 1 && norder[j] + 0 > v + 0) { norder[j + 1] = norder[j]; j-- }
        norder[j + 1] = v
    }
    print "| N | cells | geometric mean | cells above 1.0 | cells above 1.5 | worst cell | target | met |"
    print "|---|---:|---:|---:|---:|---|---|---|"
    for (k = 1; k <= nn; k++) {
        n = norder[k]; g = exp(lsum[n] / cnt[n])
        if (n == 2) { t = "every cell <= 1.0, mean <= 0.8"; ok = (max[n] + 0 <= 1.0) && (g <= 0.8) }
        else        { t = "mean <= 1.0, no cell above 1.5"; ok = (g <= 1.0) && (above[n] + 0 == 0) }
        printf "| %s | %d | %.3f | %d | %d | %s %.2f | %s | %s |\n", n, cnt[n], g, slower[n], above[n],
               maxc[n], max[n], t, ok ? "yes" : "no"
    }
}' "$dat"
# The same ratios in one table per N: a row per collective, a column per size.
awk '
function hb(b) {
    if (b >= 1048576 && b % 1048576 == 0) return (b / 1048576) " MiB"
    if (b >= 1024 && b % 1024 == 0) return (b / 1024) " KiB"
    return b " B"
}
/^#/ { next }
{
    if (!($3 in hasn)) { hasn[$3] = 1; norder[++nn] = $3 }
    if (!($1 in hasc)) { hasc[$1] = 1; corder[++nc] = $1 }
    if (!($2 in hasb)) { hasb[$2] = 1; border[++nb] = $2 }
    r[$1, $2, $3] = $10
}
END {
    for (i = 2; i <= nn; i++) { v = norder[i]; j = i - 1
        while (j >= 1 && norder[j] + 0 > v + 0) { norder[j + 1] = norder[j]; j-- } norder[j + 1] = v }
    for (i = 2; i <= nb; i++) { v = border[i]; j = i - 1
        while (j >= 1 && border[j] + 0 > v + 0) { border[j + 1] = border[j]; j-- } border[j + 1] = v }
    for (k = 1; k <= nn; k++) {
        printf "\n#### N=%s: amcoll / Open MPI\n\n| collective |", norder[k]
        for (b = 1; b <= nb; b++) printf " %s |", hb(border[b])
        printf "\n|---|"
        for (b = 1; b <= nb; b++) printf "---:|"
        printf "\n"
        for (c = 1; c <= nc; c++) {
            printf "| %s |", corder[c]
            for (b = 1; b <= nb; b++) {
                key = corder[c] SUBSEP border[b] SUBSEP norder[k]
                printf " %s |", ((key in r) && r[key] != "?") ? sprintf("%.2f", r[key]) : "-"
            }
            printf "\n"
        }
    }
}' "$dat"
echo
echo "data: $dat"

if [ -s "$dat" ] && grep -qv '^#' "$dat"; then
    if command -v gnuplot > /dev/null 2>&1; then
        colls=$(awk '!/^#/ && !($1 in s) { s[$1] = 1; printf "%s%s", (n++ ? " " : ""), $1 }' "$dat")
        plotnps=$(awk '!/^#/ { print $3 }' "$dat" | sort -n -u | tr '\n' ' ' | sed 's/ $//')
        # Cells with no ratio leave gaps, a single size an empty x range:
        # neither is worth a warning.
        if gnuplot -e "datafile='$dat'; outfile='$png'; colls='$colls'; nps='$plotnps'; how=\"$how\"" "$plot_gp" 2>&1 |
            grep -Ev 'Skipping data file with no valid points|empty x range|empty y range' >&2
            [ "${PIPESTATUS[0]}" -eq 0 ]; then
            echo "plot: $png"
        else
            echo "run_coll.sh: warning: gnuplot failed; no plot" >&2
        fi
    else
        echo "run_coll.sh: warning: gnuplot not found; no plot" >&2
    fi
fi

if [ -n "$busy" ]; then
    echo "run_coll.sh: warning: other tasks were running before N =$busy; rerun on a quiet machine for figures to quote" >&2
fi
bad=$(awk '!/^#/ && ($11 == "wrong" || $11 == "error") { printf " %s/%sB/N=%s", $1, $2, $3 }' "$dat")
if [ -n "$bad" ]; then
    echo "run_coll.sh: error: amcoll failed its result check in:$bad" >&2
fi
if [ -n "$failed" ]; then
    echo "run_coll.sh: stopped at N=$failed; tables and plot hold what was measured before it" >&2
    exit 1
fi
[ -z "$bad" ] || exit 1
exit 0
