#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Runs the OSU micro-benchmarks' collective tests (built separately, not part
# of this project: OSU_DIR is their c/mpi/collective folder) unmodified under
# LD_PRELOAD=libamcoll_mpi.so with validation (-c), at N = 2 4 8, and checks
# that each passes and that amcoll_mpi's statistics show the collective
# routed. AMC_OSU_TIME=1 adds an 8-byte latency table with and without the
# library (AMC_OSU_VALIDATE=0 skips the validation runs).
#   bash bench/run_osu.sh /path/to/osu/c/mpi/collective [build dir]
set -u
OSU=${1:?usage: run_osu.sh OSU_COLLECTIVE_DIR [BUILD_DIR]}
BUILD=$(cd "${2:-build}" && pwd)
LIB=$BUILD/.libs/libamcoll_mpi.so
NPS=${AMC_OSU_NP:-"2 4 8"}
ARGS=(--oversubscribe --bind-to none)
[ "$(id -u)" = 0 ] && ARGS+=(--allow-run-as-root)
PRE=(-x "LD_PRELOAD=$LIB" -x "LD_LIBRARY_PATH=$BUILD/.libs" -x AMCOLL_MPI_STATS=1)
# AMC_MPI_VIA=comp: through the coll/amcoll component instead (the build
# tree's, beside Open MPI's own; AMC_COMP_PATH= empty when it is installed)
if [ "${AMC_MPI_VIA:-preload}" = comp ]; then
    comp=${AMC_COMP_PATH-$BUILD/ompi/components}
    ompidir=$(ompi_info --path pkglibdir --parsable 2>/dev/null | sed -n 's/^path:pkglibdir://p')
    PRE=(--mca coll_amcoll_enable 1 --mca coll_amcoll_verbose 1)
    [ -n "$comp" ] && PRE+=(--mca mca_base_component_path "$comp:$ompidir")
fi
OPTS=${AMC_OSU_OPTS:-"-m 1:65536 -i 50 -x 5"}
blocking="osu_barrier osu_bcast osu_allreduce osu_reduce osu_gather osu_gatherv osu_scatter
 osu_scatterv osu_allgather osu_allgatherv osu_alltoall osu_alltoallv osu_reduce_scatter
 osu_reduce_scatter_block"
nonblocking="osu_ibarrier osu_ibcast osu_iallreduce osu_ireduce osu_igather osu_igatherv
 osu_iscatter osu_iscatterv osu_iallgather osu_iallgatherv osu_ialltoall osu_ialltoallv
 osu_ireduce_scatter osu_ireduce_scatter_block"
pass=0
fail=0
log=$(mktemp)
for np in $NPS; do
    [ "${AMC_OSU_VALIDATE:-1}" = 1 ] || break
    for b in $blocking $nonblocking; do
        case $b in osu_i*) dir=non_blocking ;; *) dir=blocking ;; esac
        coll=${b#osu_}; coll=${coll#i}
        [ "$b" = osu_ibarrier ] && coll=barrier
        opts="-c -T mpi_int $OPTS"
        # the barriers take neither sizes nor validation
        [ "$coll" = barrier ] && opts=$(echo "$OPTS" | sed 's/-m [^ ]*//')
        # shellcheck disable=SC2086
        timeout 600 mpirun "${ARGS[@]}" "${PRE[@]}" -np "$np" "$OSU/$dir/$b" $opts >"$log" 2>&1
        rc=$?
        routed=$(sed -n "s/^\(amcoll_mpi\|coll\/amcoll\) stats rank 0: on;.* $coll: routed \([0-9]*\).*/\2/p" "$log")
        if [ $rc = 0 ] && ! grep -q Fail "$log" && [ "${routed:-0}" -gt 0 ]; then
            echo "PASS: $b N=$np ($(grep -c Pass "$log") sizes validated, $coll routed ${routed} times on rank 0)"
            pass=$((pass + 1))
        else
            echo "FAIL: $b N=$np (exit $rc, routed ${routed:-0})"
            grep -v "^amcoll_mpi" "$log" | tail -n 8 | sed 's/^/    | /'
            fail=$((fail + 1))
        fi
    done
done
if [ "${AMC_OSU_TIME:-0}" = 1 ]; then
    echo
    echo "| 8 B latency, us | N | Open MPI | libamcoll_mpi | ratio |"
    echo "|---|---:|---:|---:|---:|"
    for np in $NPS; do
        for b in osu_barrier osu_bcast osu_allreduce osu_reduce osu_gather osu_scatter osu_allgather osu_alltoall; do
            size=8; [ $b = osu_barrier ] && size=0
            o="-T mpi_int -m 8:8"; [ $b = osu_barrier ] && o=""
            # shellcheck disable=SC2086
            a=$(mpirun "${ARGS[@]}" -np "$np" "$OSU/blocking/$b" $o -i 20000 -x 2000 2>/dev/null | awk '/^[0-9]/ {print $2} /^ *[0-9.]+$/ {print $1}' | tail -1)
            # shellcheck disable=SC2086
            l=$(mpirun "${ARGS[@]}" "${PRE[@]}" -x AMCOLL_MPI_STATS=0 -np "$np" "$OSU/blocking/$b" $o -i 20000 -x 2000 2>/dev/null | awk '/^[0-9]/ {print $2} /^ *[0-9.]+$/ {print $1}' | tail -1)
            r=$(awk -v a="$a" -v l="$l" 'BEGIN { if (a > 0) printf "%.2f", l / a; else print "-" }')
            echo "| ${b#osu_} | $np | $a | $l | $r |"
        done
    done
fi
rm -f "$log"
echo "osu: $pass passed, $fail failed"
[ "$fail" = 0 ]
