#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Writes an AMC_TUNING_FILE from measurements: for each task count N,
# collective and message size it runs build/bench/coll_bench (-m amcoll)
# under mpirun once per algorithm of the collective, forced with
# AMC_<COLL>_ALG, takes the algorithm with the smallest median_us per
# (collective, N, size) cell, and prints the rules, adjacent sizes that chose
# the same algorithm merged into one byte range. A benchmark tool, not a
# test: what it measures is this machine, at this load.
#
#   bash bench/amc_tune.sh [options] [-- extra coll_bench flags]
#
# Options (defaults keep a run to a few minutes on a 2-core machine):
#   -n "2 4 8"      task counts
#   -c "allreduce bcast reduce allgather alltoall"
#                   collectives (coll_bench's names; every one with more than
#                   one algorithm can be tuned, the v-forms by coll_bench's equal
#                   counts)
#   -s "8 64 1024 8192 65536 1048576"
#                   bytes per rank (N and sizes are sorted ascending)
#   -r 3            timed blocks per cell (coll_bench -r)
#   -p 1            passes over every (N, collective, algorithm): each pass
#                   runs the algorithms in another order, and a cell's time
#                   is the median over passes of each pass's median. This
#                   machine's shared-memory speed moves by 2x from minute to
#                   minute, so one pass can crown an algorithm that only ran
#                   in a fast minute; 5 passes keep that out of the rules
#   -t 1            ms per timed block (coll_bench -t)
#   -O              OSU's method (coll_bench -O: each call alone, barrier
#                   between calls, mean over ranks) instead of back-to-back blocks
#   -b PATH         the bench (default build/bench/coll_bench)
#   -i PATH         amc_info, for the algorithm names (default build/amc_info;
#                   without it a list in this script)
#   -o FILE         write the rules there (default stdout)
#   -R FILE         also keep every RESULT line, with the algorithm, there
#   -T SECONDS      kill one mpirun after this long (default 120)
# Environment: MPIRUN (default mpirun), AMC_TUNE_MPIRUN_ARGS (more mpirun
# arguments, word-split); the rest (UCX_*, AMC_* but AMC_TUNING_FILE and the
# forced algorithm) reaches the ranks as usual.
#
# The rules: a size between two measured ones takes the larger one's choice,
# a communicator size between two measured N the larger N's; beyond the
# largest N or size no rule matches (amcoll's automatic choice). Every rank
# of a job must read the same file (doc/design.md, "Selection by
# measurement").
set -u -o pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)

nps="2 4 8"
colls="allreduce bcast reduce allgather alltoall"
sizes="8 64 1024 8192 65536 1048576"
reps=3
passes=1
target_ms=1
osu=0
bench="$root/build/bench/coll_bench"
info="$root/build/amc_info"
out=-
raw=
limit=120

usage() { sed -n '3,/^set -u/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; }

while getopts "n:c:s:r:p:t:Ob:i:o:R:T:h" opt; do
    case $opt in
        n) nps=$OPTARG ;;
        c) colls=$OPTARG ;;
        s) sizes=$OPTARG ;;
        r) reps=$OPTARG ;;
        p) passes=$OPTARG ;;
        t) target_ms=$OPTARG ;;
        O) osu=1 ;;
        b) bench=$OPTARG ;;
        i) info=$OPTARG ;;
        o) out=$OPTARG ;;
        R) raw=$OPTARG ;;
        T) limit=$OPTARG ;;
        h) usage; exit 0 ;;
        *) usage >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ "${1:-}" = "--" ] && shift
extra=("$@")

if [ ! -x "$bench" ]; then
    echo "amc_tune: no $bench (build it: make bench/coll_bench)" >&2
    exit 1
fi

# coll -> "alg alg ...": from amc_info's "# choices: auto, a, b" above each
# AMC_<COLL>_ALG=, else the algorithms of today's table
declare -A algs=(
    [bcast]="binomial pipeline hierarchical linear" [reduce]="binomial hierarchical linear"
    [allreduce]="recursive_doubling ring linear hierarchical multi_lane"
    [allgather]="ring bruck linear" [allgatherv]="ring linear" [alltoall]="pairwise linear bruck"
    [alltoallv]="pairwise linear bruck" [reduce_scatter_block]="reduce_linear direct"
    [reduce_scatter]="reduce_linear direct" [scan]="recursive_doubling hillis_steele"
    [exscan]="recursive_doubling hillis_steele" [gather]="linear" [scatter]="linear"
    [gatherv]="linear" [scatterv]="linear"
)
if [ -x "$info" ]; then
    while read -r coll list; do
        algs[$coll]=$list
    done < <(env -u AMC_TUNING_FILE "$info" 2>/dev/null | awk '
        /^# choices: auto/ { sub(/^# choices: auto,? */, ""); gsub(/,/, ""); choices = $0; next }
        /^AMC_[A-Z_]+_ALG=/ { c = $0; sub(/^AMC_/, "", c); sub(/_ALG=.*/, "", c)
                              if (choices != "") print tolower(c), choices; choices = "" }')
fi

mpirun_cmd=("${MPIRUN:-mpirun}" --oversubscribe)
[ "$(id -u)" = 0 ] && mpirun_cmd+=(--allow-run-as-root)
# shellcheck disable=SC2206
mpirun_cmd+=(${AMC_TUNE_MPIRUN_ARGS:-})

osu_flag=()
[ "$osu" = 1 ] && osu_flag=(-O)
# the rules are written for ascending N and sizes
nps=$(tr ' ' '\n' <<<"$nps" | sort -n | xargs)
sizes=$(tr ' ' '\n' <<<"$sizes" | sort -n | xargs)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
size_list=$(echo "$sizes" | tr ' ' ',')

# one RESULT line per measured cell and pass, tagged with alg= and pass=
for ((pass = 0; pass < passes; pass++)); do
for n in $nps; do
    for coll in $colls; do
        if [ -z "${algs[$coll]:-}" ]; then
            echo "amc_tune: unknown collective $coll" >&2
            exit 2
        fi
        if [ "$(wc -w <<<"${algs[$coll]}")" -lt 2 ]; then
            [ "$pass" = 0 ] && echo "amc_tune: $coll has one algorithm: nothing to choose" >&2
            continue
        fi
        var="AMC_$(echo "$coll" | tr '[:lower:]' '[:upper:]')_ALG"
        # rotated by the pass: no algorithm always runs first after a switch
        read -r -a list <<<"${algs[$coll]}"
        for ((k = 0; k < ${#list[@]}; k++)); do
            alg=${list[$(( (k + pass) % ${#list[@]} ))]}
            echo "amc_tune: pass $((pass + 1))/$passes N=$n $coll $alg" >&2
            env -u AMC_TUNING_FILE "$var=$alg" \
                timeout "$limit" "${mpirun_cmd[@]}" -np "$n" "$bench" -m amcoll -c "$coll" \
                -s "$size_list" -r "$reps" -t "$target_ms" "${osu_flag[@]}" "${extra[@]}" \
                > "$tmp/run.log" 2>&1 || echo "amc_tune: N=$n $coll $alg: exit $?" >&2
            grep '^RESULT ' "$tmp/run.log" | sed "s/\$/ alg=$alg pass=$pass/" >> "$tmp/raw"
        done
    done
done
done
[ -n "$raw" ] && cp "$tmp/raw" "$raw"

{
    echo "# AMC_TUNING_FILE written by bench/amc_tune.sh on $(hostname) $(date -u +%Y-%m-%dT%H:%MZ)"
    echo "# N: $nps; sizes: $sizes; reps $reps; passes $passes; $([ "$osu" = 1 ] && echo "OSU's method" || echo "back-to-back blocks")"
    echo "# COLL MIN_RANKS MAX_RANKS MIN_BYTES MAX_BYTES ALGORITHM"
    awk -v nps="$nps" -v colls="$colls" -v sizes="$sizes" '
        function med(s,   n, a, i, j, t) {
            n = split(s, a, " ")
            for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] + 0 > a[j] + 0; j--) {
                t = a[j]; a[j] = a[j-1]; a[j-1] = t }
            return (n % 2) ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
        }
        /status=ok/ {
            for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
            cell = f["coll"] " " f["N"] " " f["bytes"]
            times[cell SUBSEP f["alg"]] = times[cell SUBSEP f["alg"]] " " f["median_us"]
        }
        END {
            for (ca in times) {
                split(ca, part, SUBSEP); t = med(times[ca])
                if (!(part[1] in best) || (t < best[part[1]] + 0)) { best[part[1]] = t; pick[part[1]] = part[2] }
            }
            nn = split(nps, np, " "); nc = split(colls, cl, " "); ns = split(sizes, sz, " ")
            for (c = 1; c <= nc; c++) for (k = 1; k <= nn; k++) {
                lo_r = (k == 1) ? 1 : np[k - 1] + 1
                run = ""; lo_b = 0
                for (s = 1; s <= ns + 1; s++) {
                    key = cl[c] " " np[k] " " sz[s]
                    a = (s <= ns && key in pick) ? pick[key] : ""
                    if (run != "" && a != run) {
                        printf "%s %d %d %d %d %s\n", cl[c], lo_r, np[k], lo_b, sz[last], run
                        run = ""
                    }
                    if (a != "" && run == "") { run = a; lo_b = (s == 1) ? 0 : sz[s - 1] + 1 }
                    if (a != "") last = s
                }
            }
        }' "$tmp/raw"
} > "$tmp/rules"

if [ "$out" = - ]; then
    cat "$tmp/rules"
else
    cp "$tmp/rules" "$out"
    echo "amc_tune: rules in $out" >&2
fi
