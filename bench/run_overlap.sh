#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Overlap of non-blocking collectives with computation (NBCBench / osu_i*
# style): bench/overlap_bench under mpirun for each task count, twice when the
# library has a progress thread (AMC_PROGRESS_THREAD=0, then =1), amcoll and
# Open MPI timed in the same job. Prints Markdown tables: t, overhead and
# overlap % per collective, N and size; the overlap target; blocking call
# against start + wait. It builds nothing: build first (./build.sh, or make
# bench/overlap_bench in a tree configured in place).
#
#   bash bench/run_overlap.sh [path/to/overlap_bench] [-- extra overlap_bench flags]
#
# Environment:
#   AMC_BENCH_NP           task counts (default "2 4 8")
#   AMC_BENCH_PT           progress-thread settings to run: auto (default: "0 1"
#                          when amc_info lists AMC_PROGRESS_THREAD, else one run
#                          without it), or a list such as "0 1" or "1"
#   AMC_BENCH_SIZES, AMC_BENCH_COLLS, AMC_BENCH_METHODS, AMC_BENCH_TESTS,
#   AMC_BENCH_REPS, AMC_BENCH_CELL_MS, AMC_BENCH_BLOCKING_SIZES,
#   AMC_BENCH_BLOCKING_COLLS, AMC_BENCH_TARGET_MS, AMC_BENCH_MAX_MIB,
#   AMC_BENCH_WATCHDOG     handed to the bench as -s -c -m -k -r -T -S -C -t -M -W
#                          (overlap_bench -h explains them)
#   AMC_BENCH_TIMEOUT      seconds before one mpirun is killed (default 300)
#   AMC_BENCH_QUIET_WAIT   seconds to wait, before each run, for other runnable
#                          tasks to go away (default 10; 0 = start at once)
#   AMC_BENCH_OUT          results directory (default bench/results)
#   AMC_BENCH_MPIRUN_ARGS  extra mpirun arguments (word-split)
#   MPIRUN                 launcher (default mpirun)
# Everything else in the environment (AMC_*, UCX_*, OMPI_MCA_*) reaches the
# ranks unchanged; AMC_PROGRESS_THREAD is set per run by this script.
#
# Output in the results directory: overlap_raw.txt (RESULT lines, each with
# pt=0|1 appended), overlap.dat (one row per collective, size, N, method and
# k), overlap_blocking.dat, overlap_N<n>_pt<p>.log; the tables go to stdout.
set -u -o pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)

die() {
    echo "run_overlap.sh: error: $*" >&2
    exit 1
}

# The newest of an in-place build and build.sh's out-of-tree one.
bin=""
for cand in "$root/bench/overlap_bench" "$root/build/bench/overlap_bench"; do
    if [ -x "$cand" ] && { [ -z "$bin" ] || [ "$cand" -nt "$bin" ]; }; then
        bin=$cand
    fi
done
if [ $# -gt 0 ] && [ "$1" != "--" ]; then
    bin=$1
    shift
fi
if [ $# -gt 0 ] && [ "$1" = "--" ]; then
    shift
fi
bench_args=("$@")

nps=${AMC_BENCH_NP:-"2 4 8"}
pts=${AMC_BENCH_PT:-auto}
timeout_s=${AMC_BENCH_TIMEOUT:-300}
quiet_s=${AMC_BENCH_QUIET_WAIT:-10}
out=${AMC_BENCH_OUT:-$root/bench/results}
mpirun=${MPIRUN:-mpirun}
read -r -a extra_mpirun <<< "${AMC_BENCH_MPIRUN_ARGS:-}"

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
add_flag AMC_BENCH_TESTS -k
add_flag AMC_BENCH_REPS -r
add_flag AMC_BENCH_CELL_MS -T
add_flag AMC_BENCH_BLOCKING_SIZES -S
add_flag AMC_BENCH_BLOCKING_COLLS -C
add_flag AMC_BENCH_TARGET_MS -t
add_flag AMC_BENCH_MAX_MIB -M
add_flag AMC_BENCH_WATCHDOG -W
unset AMC_BENCH_NP AMC_BENCH_PT AMC_BENCH_TIMEOUT AMC_BENCH_OUT AMC_BENCH_MPIRUN_ARGS \
    AMC_BENCH_QUIET_WAIT AMC_PROGRESS_THREAD

if [ -z "$bin" ] || [ ! -x "$bin" ]; then
    die "no executable benchmark (looked for '${bin:-bench/overlap_bench or build/bench/overlap_bench}'); build it first (./build.sh, or make bench/overlap_bench)"
fi
command -v "$mpirun" > /dev/null 2>&1 || die "'$mpirun' not found; set MPIRUN to a PMIx launcher"
for v in "$quiet_s" "$timeout_s"; do
    case $v in
        '' | *[!0-9]*) die "AMC_BENCH_QUIET_WAIT / AMC_BENCH_TIMEOUT: '$v' is not a number of seconds" ;;
    esac
done
for n in $nps; do
    case $n in
        '' | *[!0-9]* | 0) die "AMC_BENCH_NP: '$n' is not a positive task count" ;;
    esac
done

# The library warns about AMC_* variables it does not know: pass
# AMC_PROGRESS_THREAD only to a library whose amc_info lists it.
amc_info="$(cd "$(dirname "$bin")/.." && pwd)/amc_info"
[ -x "$amc_info" ] || amc_info=$(command -v amc_info 2> /dev/null || true)
have_pt=0
if [ -n "$amc_info" ] && "$amc_info" 2> /dev/null | grep -q '^AMC_PROGRESS_THREAD='; then
    have_pt=1
fi
pt_note=""
if [ "$pts" = auto ]; then
    if [ "$have_pt" -eq 1 ]; then
        pts="0 1"
    else
        pts="none"
        if [ -n "$amc_info" ]; then
            pt_note="this amcoll has no progress thread ($amc_info lists no AMC_PROGRESS_THREAD)"
        else
            pt_note="no amc_info found beside the benchmark or on PATH, so this amcoll counts as having no progress thread"
        fi
        pt_note="$pt_note: one run per N without AMC_PROGRESS_THREAD; no amcoll+pt columns, and the target cannot pass"
    fi
else
    for p in $pts; do
        case $p in
            0 | 1) ;;
            *) die "AMC_BENCH_PT: '$p' is not 0 or 1 (or use auto)" ;;
        esac
    done
    [ "$have_pt" -eq 1 ] ||
        echo "run_overlap.sh: warning: AMC_BENCH_PT='$pts' but ${amc_info:-amc_info} does not list AMC_PROGRESS_THREAD: the library will ignore it (and warn)" >&2
fi

mkdir -p "$out" || die "cannot create results directory '$out'"
raw="$out/overlap_raw.txt"
dat="$out/overlap.dat"
bdat="$out/overlap_blocking.dat"
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
echo "overlap sweep: N = $nps; progress thread runs: $pts; binary $bin ${bench_args[*]}; results in $out"
[ -n "$pt_note" ] && echo "NOTE: $pt_note"
t_start=$(date +%s)
failed=""
busy=""
for n in $nps; do
    for pt in $pts; do
        tag=$pt
        [ "$pt" = none ] && tag=0
        log="$out/overlap_N${n}_pt${tag}.log"
        echo "== N=$n AMC_PROGRESS_THREAD=$( [ "$pt" = none ] && echo "(not set)" || echo "$pt")"
        others=$(others_running)
        waited=0
        while [ "$others" -gt 0 ] && [ "$waited" -lt "$quiet_s" ]; do
            [ "$waited" -eq 0 ] && echo "   waiting up to ${quiet_s} s for $others other runnable task(s) to finish (AMC_BENCH_QUIET_WAIT)"
            sleep 1
            waited=$((waited + 2))
            others=$(others_running)
        done
        if [ "$others" -gt 0 ]; then
            echo "run_overlap.sh: warning: $others other runnable task(s) on $ncpu core(s) before N=$n pt=$tag: expect noise" >&2
            busy="$busy $n/pt$tag"
        fi
        t0=$(date +%s)
        env_pt=()
        [ "$pt" != none ] && env_pt=(env "AMC_PROGRESS_THREAD=$pt")
        # -k: mpirun 4.1.4 may itself hang after a rank died.
        "${env_pt[@]}" timeout -k 5 "$timeout_s" "$mpirun" --allow-run-as-root --oversubscribe \
            -np "$n" --mca btl_base_warn_component_unused 0 "${extra_mpirun[@]}" \
            "$bin" "${bench_args[@]}" > "$log" 2>&1
        rc=$?
        grep -v '^RESULT ' "$log"
        grep '^RESULT ' "$log" | sed "s/\$/ pt=$tag/" >> "$raw"
        echo "   ($(($(date +%s) - t0)) s)"
        if [ "$rc" -ne 0 ]; then
            case $rc in
                124 | 137) why="killed after ${timeout_s} s (AMC_BENCH_TIMEOUT)" ;;
                *) why="exit status $rc" ;;
            esac
            failed="$n/pt$tag"
            echo "run_overlap.sh: error: mpirun -np $n (pt=$tag) failed: $why; full log: $log" >&2
            break 2
        fi
        if ! grep -q "^RESULT mode=[a-z]* N=$n " "$log"; then
            failed="$n/pt$tag"
            echo "run_overlap.sh: error: mpirun -np $n (pt=$tag) printed no RESULT line; full log: $log" >&2
            break 2
        fi
    done
done
echo "sweep time: $(($(date +%s) - t_start)) s"

# Labels: amcoll rows of pt=1 runs are "amcoll+pt"; Open MPI rows of pt=1 runs
# "openmpi@pt" (measured beside amcoll's thread; kept in the data, not the tables).
awk -v sorter="sort | cut -f2-" '
BEGIN {
    nc = split("iallreduce ibcast ialltoall iallgather ireduce ibarrier", co, " ")
    for (i = 1; i <= nc; i++) crank[co[i]] = i
    mrank["amcoll"] = 1; mrank["amcoll+pt"] = 2; mrank["openmpi"] = 3; mrank["openmpi@pt"] = 4
    print "# coll bytes N method k t_us t_q1_us t_q3_us comp_us seq_us total_us total_q1_us total_q3_us ovh_us ovh_q1_us ovh_q3_us ovh_min_us ovh_max_us overlap_pct saved_pct reps status"
}
/^RESULT mode=overlap / {
    split("", kv)
    for (i = 2; i <= NF; i++) { eq = index($i, "="); kv[substr($i, 1, eq - 1)] = substr($i, eq + 1) }
    m = kv["method"]
    if (kv["pt"] == "1") m = (m == "amcoll") ? "amcoll+pt" : "openmpi@pt"
    c = kv["coll"]; if (!(c in crank)) crank[c] = ++nc
    row = sprintf("%s %s %s %s %s", c, kv["bytes"], kv["N"], m, kv["k"])
    if (kv["status"] == "ok") {
        row = row sprintf(" %s %s %s %s %s %s %s %s %s %s %s %s %s %s %s %s ok", kv["t_us"], kv["t_q1_us"], kv["t_q3_us"],
            kv["comp_us"], kv["seq_us"], kv["total_us"], kv["total_q1_us"], kv["total_q3_us"], kv["ovh_us"],
            kv["ovh_q1_us"], kv["ovh_q3_us"], kv["ovh_min_us"], kv["ovh_max_us"], kv["overlap_pct"], kv["saved_pct"], kv["reps"])
    } else {
        row = row " ? ? ? ? ? ? ? ? ? ? ? ? ? ? ? ? " kv["status"]
    }
    print sprintf("%03d %06d %012d %d %03d", crank[c], kv["N"], kv["bytes"], mrank[m], kv["k"]) "\t" row | sorter
}
END { fflush(); close(sorter) }' "$raw" > "$dat" || die "cannot write '$dat'"

awk -v sorter="sort | cut -f2-" '
BEGIN {
    nc = split("allreduce bcast alltoall allgather reduce barrier", co, " ")
    for (i = 1; i <= nc; i++) crank[co[i]] = i
    mrank["amcoll"] = 1; mrank["amcoll+pt"] = 2; mrank["openmpi"] = 3; mrank["openmpi@pt"] = 4
    print "# coll bytes N method blk_us blk_q1_us blk_q3_us nbw_us nbw_q1_us nbw_q3_us ratio ratio_q1 reps status"
}
/^RESULT mode=blocking / {
    split("", kv)
    for (i = 2; i <= NF; i++) { eq = index($i, "="); kv[substr($i, 1, eq - 1)] = substr($i, eq + 1) }
    m = kv["method"]
    if (kv["pt"] == "1") m = (m == "amcoll") ? "amcoll+pt" : "openmpi@pt"
    c = kv["coll"]; if (!(c in crank)) crank[c] = ++nc
    row = sprintf("%s %s %s %s", c, kv["bytes"], kv["N"], m)
    if (kv["status"] == "ok") {
        row = row sprintf(" %s %s %s %s %s %s %s %s %s ok", kv["blk_us"], kv["blk_q1_us"], kv["blk_q3_us"],
            kv["nbw_us"], kv["nbw_q1_us"], kv["nbw_q3_us"], kv["ratio"], kv["ratio_q1"], kv["reps"])
    } else {
        row = row " ? ? ? ? ? ? ? ? ? " kv["status"]
    }
    print sprintf("%03d %012d %06d %d", crank[c], kv["bytes"], kv["N"], mrank[m]) "\t" row | sorter
}
END { fflush(); close(sorter) }' "$raw" > "$bdat" || die "cannot write '$bdat'"

# Shared by the table printers: number formats, bytes, method labels.
awk_lib='
function us(v) {
    if (v == "?" || v == "") return "-"
    if (v + 0 < 0 && v + 0 > -10) return sprintf("%.2f", v)
    if (v + 0 < 10) return sprintf("%.2f", v)
    if (v + 0 < 1000) return sprintf("%.1f", v)
    return sprintf("%.0f", v)
}
function hb(b) {
    if (b >= 1048576 && b % 1048576 == 0) return (b / 1048576) "M"
    if (b >= 1024 && b % 1024 == 0) return (b / 1024) "K"
    return b
}
function label(m) { return (m == "openmpi") ? "OMPI" : m }
function nsort(a, n,    i, j, v) {
    for (i = 2; i <= n; i++) { v = a[i]; j = i - 1; while (j >= 1 && a[j] + 0 > v + 0) { a[j + 1] = a[j]; j-- } a[j + 1] = v }
}
'

echo
echo "## Overlap (µs; medians over reps of the slowest rank)"
echo
echo "t = start + wait alone; each k column: overhead = total - comp (OSU), where total = start; busy loop worth t µs of CPU with k evenly"
echo "spaced test calls; wait; in parentheses overlap % = 100 (1 - overhead / t), clipped to [0, 100]. amcoll+pt = AMC_PROGRESS_THREAD=1;"
echo "OMPI = MPI_I* + MPI_Wait (libnbc), from the run without the progress thread. '~' = noisy (IQR of total > t / 2);"
echo "comp = that busy loop timed alone (overlap.dat); '!' after t = comp was under 0.75 t or over 1.25 t."
echo "With more ranks than the $ncpu core(s), the ranks' loops cannot run at once: total grows by about (N / cores - 1) t for any library."
awk "$awk_lib"'
/^#/ { next }
{
    c = $1; b = $2; n = $3; m = $4; k = $5
    if (!(c in hasc)) { hasc[c] = 1; corder[++nc] = c }
    if (!((c, n) in hascn)) { hascn[c, n] = 1; nlist[c, ++nn[c]] = n }
    if (!((c, n, b) in hasb)) { hasb[c, n, b] = 1; border[c, n, ++nb[c, n]] = b }
    if (!(k in hask)) { hask[k] = 1; korder[++nk] = k }
    if (!(m in hasm)) hasm[m] = 1
    key = c SUBSEP n SUBSEP b SUBSEP m
    st[key, k] = $22
    t[key] = $6; ovh[key, k] = $14; pct[key, k] = $19
    # the loop missed t by over a quarter (calibration, or ranks sharing cores)
    if ($6 != "?" && $6 + 0 > 0 && ($9 / $6 > 1.25 || $9 / $6 < 0.75)) cal[key] = 1
    noisy[key, k] = ($6 != "?" && ($13 - $12) > $6 / 2)
}
END {
    nsort(korder, nk)
    nm = 0
    split("amcoll amcoll+pt openmpi", all, " ")
    for (i = 1; i <= 3; i++) if (all[i] in hasm) ms[++nm] = all[i]
    for (ci = 1; ci <= nc; ci++) {
        c = corder[ci]
        for (i = 1; i <= nn[c]; i++) ns[i] = nlist[c, i]
        nsort(ns, nn[c])
        for (ni = 1; ni <= nn[c]; ni++) {
            n = ns[ni]
            printf "\n### %s, N=%s\n\n| bytes |", c, n
            for (j = 1; j <= nm; j++) {
                printf " %s t |", label(ms[j])
                for (kk = 1; kk <= nk; kk++) printf " %s k=%s |", label(ms[j]), korder[kk]
            }
            printf "\n|------:|"
            for (j = 1; j <= nm; j++) for (kk = 0; kk <= nk; kk++) printf "------:|"
            printf "\n"
            for (bi = 1; bi <= nb[c, n]; bi++) {
                b = border[c, n, bi]
                printf "| %5s |", hb(b)
                for (j = 1; j <= nm; j++) {
                    key = c SUBSEP n SUBSEP b SUBSEP ms[j]
                    printf " %s%s |", (key in t) ? us(t[key]) : "-", (key in cal) ? "!" : ""
                    for (kk = 1; kk <= nk; kk++) {
                        k = korder[kk]
                        if (!((key, k) in st)) { printf " - |"; continue }
                        s = st[key, k]
                        if (s != "ok") { printf " %s |", (s == "wrong") ? "WRONG" : (s == "error") ? "ERROR" : (s == "unsupported") ? "n/a" : "-"; continue }
                        printf " %s (%.0f%%)%s |", us(ovh[key, k]), pct[key, k], noisy[key, k] ? "~" : ""
                    }
                }
                printf "\n"
            }
        }
    }
}' "$dat"

echo
echo "## Saved against computing first (k = 0)"
echo
echo "saved % = 100 (seq - total) / t, where seq = the same busy loop, then start + wait: what overlapping gained over not overlapping"
echo "(can be negative). Unlike overhead, this stays comparable when ranks outnumber cores."
awk "$awk_lib"'
/^#/ { next }
$5 != 0 { next }
{
    c = $1; b = $2; n = $3; m = $4
    if (m == "openmpi@pt") next
    if (!(c in hasc)) { hasc[c] = 1; corder[++nc] = c }
    if (!((c, b) in hasb)) { hasb[c, b] = 1; border[c, ++nb[c]] = b }
    if (!(n in hasn)) { hasn[n] = 1; norder[++nn] = n }
    if (!(m in hasm)) hasm[m] = 1
    v[c, b, n, m] = ($22 == "ok") ? sprintf("%.0f", $20) : toupper($22)
    if (v[c, b, n, m] == "-0") v[c, b, n, m] = "0"
}
END {
    nsort(norder, nn)
    split("amcoll amcoll+pt openmpi", all, " ")
    for (i = 1; i <= 3; i++) if (all[i] in hasm) ms[++nm] = all[i]
    printf "\n| coll | bytes |"
    for (i = 1; i <= nn; i++) for (j = 1; j <= nm; j++) printf " N=%s %s |", norder[i], label(ms[j])
    printf "\n|---|---:|"
    for (i = 1; i <= nn * nm; i++) printf "---:|"
    printf "\n"
    for (ci = 1; ci <= nc; ci++) {
        c = corder[ci]
        for (bi = 1; bi <= nb[c]; bi++) {
            b = border[c, bi]
            printf "| %s | %s |", c, hb(b)
            for (i = 1; i <= nn; i++) for (j = 1; j <= nm; j++) {
                key = c SUBSEP b SUBSEP norder[i] SUBSEP ms[j]
                printf " %s |", (key in v) ? v[key] : "-"
            }
            printf "\n"
        }
    }
}' "$dat"

echo
echo "## Target: overhead with the progress thread <= 20% of t (64 KiB, k = 0)"
echo
echo "Cells: overhead / t of amcoll+pt, PASS or MISS; in parentheses amcoll without the thread."
[ -n "$pt_note" ] && echo "NOTE: $pt_note."
awk "$awk_lib"'
/^#/ { next }
$2 != 65536 || $5 != 0 { next }
{
    c = $1; n = $3; m = $4
    if (!(n in hasn)) { hasn[n] = 1; norder[++nn] = n }
    key = c SUBSEP n SUBSEP m
    st[key] = $22
    if ($22 == "ok" && $6 + 0 > 0) r[key] = $14 / $6
}
END {
    nsort(norder, nn)
    printf "\n| target |"
    for (i = 1; i <= nn; i++) printf " N=%s |", norder[i]
    printf "\n|---|"
    for (i = 1; i <= nn; i++) printf "---|"
    printf "\n"
    nt = split("iallreduce ibcast ialltoall", tc, " ")
    for (ti = 1; ti <= nt; ti++) {
        c = tc[ti]
        printf "| %s 64 KiB |", c
        for (i = 1; i <= nn; i++) {
            n = norder[i]
            kp = c SUBSEP n SUBSEP "amcoll+pt"; k0 = c SUBSEP n SUBSEP "amcoll"
            base = (k0 in r) ? sprintf(" (%.2f)", r[k0]) : ""
            if (kp in r) { printf " %.2f %s%s |", r[kp], (r[kp] <= 0.20) ? "PASS" : "MISS", base; continue }
            if (kp in st) { printf " %s MISS%s |", toupper(st[kp]), base; continue }
            if (k0 in st) { printf " no pt: MISS%s |", base; continue }
            printf " - |"
        }
        printf "\n"
    }
}' "$dat"

if grep -qv '^#' "$bdat"; then
    echo
    echo "## Blocking call against start + wait"
    echo
    echo "µs per call, medians of blocks of back-to-back calls, the variants interleaved; ratio = (start + wait) / blocking;"
    echo "'~' = noisy (IQR over a third of the median for either variant), followed by the ratio of the lower quartiles."
    awk "$awk_lib"'
    /^#/ { next }
    {
        c = $1; b = $2; n = $3; m = $4
        if (m == "openmpi@pt") next
        if (!((c, b, n) in hasr)) { hasr[c, b, n] = 1; rows[++nr] = c SUBSEP b SUBSEP n }
        if (!(m in hasm)) hasm[m] = 1
        key = c SUBSEP b SUBSEP n SUBSEP m
        if ($14 == "ok") {
            blk[key] = $5; nbw[key] = $8; ratio[key] = $11; rq1[key] = $12
            noisy[key] = ($5 + 0 > 0 && ($7 - $6) / $5 > 0.33) || ($8 + 0 > 0 && ($10 - $9) / $8 > 0.33)
        } else bad[key] = toupper($14)
    }
    END {
        split("amcoll amcoll+pt openmpi", all, " ")
        for (i = 1; i <= 3; i++) if (all[i] in hasm) ms[++nm] = all[i]
        printf "\n| coll | bytes | N |"
        for (j = 1; j <= nm; j++) printf " %s blocking | %s start+wait | ratio |", label(ms[j]), label(ms[j])
        printf "\n|---|---:|---:|"
        for (j = 1; j <= nm; j++) printf "---:|---:|---:|"
        printf "\n"
        for (i = 1; i <= nr; i++) {
            split(rows[i], p, SUBSEP)
            printf "| %s | %s | %s |", p[1], hb(p[2]), p[3]
            for (j = 1; j <= nm; j++) {
                key = rows[i] SUBSEP ms[j]
                if (key in blk) printf " %s | %s | %.2f%s |", us(blk[key]), us(nbw[key]), ratio[key],
                    noisy[key] ? sprintf("~ (q1 %.2f)", rq1[key]) : ""
                else if (key in bad) printf " %s | %s | - |", bad[key], bad[key]
                else printf " - | - | - |"
            }
            printf "\n"
        }
    }' "$bdat"
fi
echo
echo "data: $dat $bdat"

if [ -n "$busy" ]; then
    echo "run_overlap.sh: warning: other tasks were running before runs$busy; rerun on a quiet machine for figures to quote" >&2
fi
bad=$(awk '!/^#/ && ($22 == "wrong" || $22 == "error") && !(($1, $2, $3, $4) in s) { s[$1, $2, $3, $4]; printf " %s/%sB/N=%s/%s", $1, $2, $3, $4 }' "$dat")
bad="$bad$(awk '!/^#/ && ($14 == "wrong" || $14 == "error") && !(($1, $2, $3, $4) in s) { s[$1, $2, $3, $4]; printf " %s/%sB/N=%s/%s", $1, $2, $3, $4 }' "$bdat")"
if [ -n "$bad" ]; then
    echo "run_overlap.sh: error: failed result check or call error in:$bad" >&2
fi
if [ -n "$failed" ]; then
    echo "run_overlap.sh: stopped at N=$failed; the tables hold what was measured before it" >&2
    exit 1
fi
[ -z "$bad" ] || exit 1
exit 0
