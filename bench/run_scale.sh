#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# What a rank costs before its first collective, as the job grows
# (doc/design.md, "Scale"): bench/scale_probe under mpirun at each N reads,
# in every rank, its RSS, its memory mappings and the endpoints amcoll made,
# after amc_init and after one barrier; this prints the mean over the ranks
# (Markdown table). Not a test: the numbers depend on the machine.
#
#   bash bench/run_scale.sh [LABEL=LIBDIR ...]
#
# Each LABEL=LIBDIR builds the probe against the libamcoll.so in LIBDIR (the
# headers from the tree the script is in), so that two builds, say the tree
# before and after lazy connection, are measured alike; default
# "lazy=<this tree>/build/.libs". A library without amc_stat_get shows
# endpoints as -1.
#
# Environment: AMC_SCALE_NP (default "2 8 32"), AMC_SCALE_REPS (mpirun runs
# per N and build, default 3), MPIRUN (default mpirun), AMC_SCALE_TIMEOUT
# (seconds per mpirun, default 300).
set -u -o pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
nps=${AMC_SCALE_NP:-"2 8 32"}
reps=${AMC_SCALE_REPS:-3}
mpirun=${MPIRUN:-mpirun}
limit=${AMC_SCALE_TIMEOUT:-300}
builds=("$@")
[ ${#builds[@]} -gt 0 ] || builds=("lazy=$root/build/.libs")

work=$(mktemp -d "${TMPDIR:-/tmp}/amc_scale.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

margs=(--oversubscribe --bind-to none)
[ "$(id -u)" = 0 ] && margs+=(--allow-run-as-root)

echo "| build | N | amc_init ms, fastest rank | RSS after init KiB | maps after init | endpoints after init | RSS after barrier KiB | maps after barrier | endpoints after barrier |"
echo "|---|---|---|---|---|---|---|---|---|"
status=0
for b in "${builds[@]}"; do
    label=${b%%=*}
    libdir=${b#*=}
    probe="$work/probe_$label"
    if ! ${CC:-cc} -O2 -I"$root/include" -o "$probe" "$root/bench/scale_probe.c" \
            -L"$libdir" -lamcoll -Wl,-rpath,"$libdir" -ldl; then
        echo "run_scale: cannot build the probe against $libdir" >&2
        status=1
        continue
    fi
    for np in $nps; do
        : >"$work/lines"
        for ((i = 0; i < reps; i++)); do
            if ! timeout -k 10 "$limit" "$mpirun" "${margs[@]}" -np "$np" "$probe" \
                    </dev/null >>"$work/lines" 2>"$work/err"; then
                echo "run_scale: $label N=$np failed:" >&2
                tail -n 5 "$work/err" >&2
                status=1
            fi
        done
        # "probe N 8 rank 0 init_ms 1.2 barrier_ms .. rss_init_kib .. maps_init ..
        #  eps_init .. rss_barrier_kib .. maps_barrier .. eps_barrier .. rc 0"
        awk -v label="$label" -v np="$np" '
            $1 == "probe" {
                n++
                for (i = 7; i <= NF; i += 2) s[$(i - 1)] += $i
                # the last rank to start waits for nobody in the init fence:
                # its amc_init is the cost of the call itself
                if ((n == 1) || ($7 < min)) min = $7
            }
            END {
                if (n == 0) { printf "| %s | %d | (no result) |\n", label, np; exit }
                printf "| %s | %d | %.1f | %.0f | %.1f | %.2f | %.0f | %.1f | %.2f |\n", label, np,
                       min, s["rss_init_kib"] / n, s["maps_init"] / n,
                       s["eps_init"] / n, s["rss_barrier_kib"] / n, s["maps_barrier"] / n,
                       s["eps_barrier"] / n
            }' "$work/lines"
    done
done
exit $status
