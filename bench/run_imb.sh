#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Runs the Intel MPI Benchmarks' collectives (IMB-MPI1 and IMB-NBC, built
# separately, not part of this project: IMB_DIR holds the two programs)
# unmodified under LD_PRELOAD=libamcoll_mpi.so at N = 2 4 (AMC_IMB_NP), one
# benchmark per job, and checks that each runs to completion and that
# amcoll_mpi's statistics show its collective routed (blocking calls for
# IMB-MPI1, non-blocking for IMB-NBC). Prints a table of the calls routed
# and fallen through on rank 0. IMB's times are not compared here: see
# bench/run_osu.sh and bench/interpose_bench for that.
#   bash bench/run_imb.sh /path/to/mpi-benchmarks [build dir]
# IMB-MPI1 has no Scan or Exscan benchmark.
set -u
IMB=${1:?usage: run_imb.sh IMB_DIR [BUILD_DIR]}
BUILD=$(cd "${2:-build}" && pwd)
LIB=$BUILD/.libs/libamcoll_mpi.so
NPS=${AMC_IMB_NP:-"2 4"}
OPTS=${AMC_IMB_OPTS:-"-msglog 0:12 -iter 200 -time 0.5 -iter_policy off"}
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
mpi1="Barrier Bcast Allreduce Reduce Reduce_scatter Reduce_scatter_block Allgather Allgatherv
 Gather Gatherv Scatter Scatterv Alltoall Alltoallv"
nbc="Ibarrier Ibcast Iallreduce Ireduce Ireduce_scatter Iallgather Iallgatherv Igather Igatherv
 Iscatter Iscatterv Ialltoall Ialltoallv"
for p in IMB-MPI1 IMB-NBC; do
    [ -x "$IMB/$p" ] || { echo "FAIL: $IMB/$p not found"; exit 1; }
done
pass=0
fail=0
log=$(mktemp)
table=$(mktemp)
trap 'rm -f "$log" "$table"' EXIT

for np in $NPS; do
    for b in $mpi1 $nbc; do
        case $b in I*) prog=IMB-NBC; nb=1; coll=${b#I} ;; *) prog=IMB-MPI1; nb=0; coll=$b ;; esac
        coll=$(echo "$coll" | tr '[:upper:]' '[:lower:]')
        # shellcheck disable=SC2086
        timeout 300 mpirun "${ARGS[@]}" "${PRE[@]}" -np "$np" "$IMB/$prog" $OPTS -npmin "$np" "$b" \
            </dev/null >"$log" 2>&1
        rc=$?
        # stderr lines of several ranks may share a line: match anywhere
        line=$(grep -o "\(amcoll_mpi\|coll/amcoll\) stats rank 0: on;.*" "$log")
        counts=$(echo "$line" | sed -n "s/.* $coll: routed [0-9]* (b \([0-9]*\), nb \([0-9]*\),.*/\1 \2/p")
        read -r nbl nnb <<<"${counts:-0 0}"
        mine=$nbl; [ $nb = 1 ] && mine=$nnb
        fell=$(echo "$line" | sed -n 's/.*; routed [0-9]*, fell through \([0-9]*\);.*/\1/p')
        if [ $rc = 0 ] && grep -q "All processes entering MPI_Finalize" "$log" && [ "${mine:-0}" -gt 0 ]; then
            echo "PASS: $prog $b N=$np ($coll routed: $nbl blocking, $nnb non-blocking on rank 0)"
            pass=$((pass + 1))
            echo "| $b | $np | completed | $nbl / $nnb | ${fell:--} |" >>"$table"
        else
            echo "FAIL: $prog $b N=$np (exit $rc, routed ${mine:-0})"
            grep -v "^amcoll_mpi" "$log" | tail -n 8 | sed 's/^/    | /'
            fail=$((fail + 1))
            echo "| $b | $np | FAILED (exit $rc) | ${nbl:-0} / ${nnb:-0} | ${fell:--} |" >>"$table"
        fi
    done
done
echo
echo "| IMB benchmark | N | run | its collective routed on rank 0 (blocking / non-blocking) | calls fallen through on rank 0 (all collectives) |"
echo "|---|---:|---|---:|---:|"
cat "$table"
echo "imb: $pass passed, $fail failed"
[ "$fail" = 0 ]
