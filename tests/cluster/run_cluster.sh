#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Tests across hosts, on a two-node cluster emulated on this machine
# (tests/cluster/cluster.sh: namespaces, Slurm, an rsh agent for mpirun):
#   - the collectives and communicator tests at 2, 3 and 4 ranks on 2 nodes
#     (3: an uneven split), launched by `srun --mpi=pmix` (ranks in blocks)
#     and by `mpirun --hostfile --map-by node` (ranks round robin), with the
#     node count every rank sees asserted (2, from the launcher, no
#     AMC_NODE_SIZE) and the node-aware algorithms chosen and forced;
#   - an unmodified MPI program under libamcoll_mpi, launched by srun, its
#     results compared with the same program without the library;
#   - a node lost: every rank of one node SIGKILLed in a loop of
#     collectives; the others get AMC_ERR_PEER within 5 s, their node's
#     communicator keeps working, finalize ends in its bound;
#   - going on after it (test_shrink_mpi): a rank of the other node killed
#     in an allreduce loop (and a second in the shrink), or a whole node
#     lost; the survivors revoke, shrink and finish the loop, sums checked.
# Run from the build directory (as `make check` does); needs root. Ends
# with "cluster: N passed, N failed".
set -u

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CLUSTER="$top/tests/cluster/cluster.sh"
export AMC_CLUSTER_ID=${AMC_CLUSTER_ID:-1} # an instance of its own: a developer's cluster 0 may be up
LIMIT=${AMCTEST_CLUSTER_LIMIT:-120}
NPROCS=${AMCTEST_CLUSTER_NPROCS:-"2 3 4"}
passed=0
failed=0
failed_list=""

pass() { echo "PASS: $*"; passed=$((passed + 1)); }
fail() {
    echo "FAIL: $*"
    failed=$((failed + 1))
    failed_list="$failed_list\n  $*"
}

finish() {
    echo "cluster: $passed passed, $failed failed"
    [ "$failed" -gt 0 ] && printf "failed:$failed_list\n"
    [ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
    exit $?
}

if [ "$(id -u)" != 0 ]; then
    fail "the emulated cluster needs root (namespaces, a bridge, slurmd)"
    finish
fi
for f in tests/integration/test_coll_mpi tests/integration/test_comm_mpi \
         tests/integration/test_peer_mpi tests/integration/test_shrink_mpi; do
    [ -x "$f" ] || { fail "$f not found (run from the build directory after make check)"; finish; }
done

WORK=$(mktemp -d "${TMPDIR:-/tmp}/amc_cluster.XXXXXX") || exit 1
if ! bash "$CLUSTER" up 2 >"$WORK/up.log" 2>&1; then
    fail "cluster up ($(tail -n 3 "$WORK/up.log" | tr '\n' ' '))"
    rm -rf "$WORK"
    finish
fi
trap 'bash "$CLUSTER" down >/dev/null 2>&1; rm -rf "$WORK"' EXIT
HOSTFILE=$(bash "$CLUSTER" hostfile)
AGENT=$(bash "$CLUSTER" agent)

# launch LAUNCHER NP LOG ENV... -- PROGRAM ARGS...
launch() {
    local how=$1 np=$2 log=$3 envs=() mca=()

    shift 3
    while [ "$1" != "--" ]; do
        envs+=("$1")
        shift
    done
    shift
    if [ "$how" = srun ]; then
        # srun passes the caller's environment on; SRUN_ARGS: a layout
        env "${envs[@]}" timeout -k 10 "$LIMIT" bash "$CLUSTER" run \
            srun --mpi=pmix -N 2 -n "$np" --kill-on-bad-exit=0 ${SRUN_ARGS:-} "$@" \
            </dev/null >"$log" 2>&1
    else
        for e in "${envs[@]}"; do
            mca+=(-x "$e")
        done
        timeout -k 10 "$LIMIT" bash "$CLUSTER" run \
            mpirun --allow-run-as-root --oversubscribe --bind-to none --hostfile "$HOSTFILE" \
            --mca plm_rsh_agent "$AGENT" --map-by node -x LD_LIBRARY_PATH "${mca[@]}" \
            -np "$np" "$@" </dev/null >"$log" 2>&1
    fi
}

# The node count every rank logged for the world communicator.
nodes_seen() {
    local log=$1 np=$2 n

    n=$(grep -c "communicator 0x1: $np ranks on 2 nodes" "$log")
    [ "$n" = "$np" ]
}

for how in srun mpirun; do
    for np in $NPROCS; do
        log="$WORK/$how.coll.$np.log"
        if launch "$how" "$np" "$log" AMC_LOG_LEVEL=debug -- \
                tests/integration/test_coll_mpi sample &&
           grep -q "^ok sample" "$log" && nodes_seen "$log" "$np"; then
            pass "$how -N 2 -n $np: coll sample, every rank sees 2 nodes"
        else
            fail "$how -N 2 -n $np: coll sample (or a rank not seeing 2 nodes)"
            grep -E "FAIL|error|on [0-9]+ node|nodes from|NODEID" "$log" | head -n 12 | sed 's/^/    | /'
        fi
        # two nodes with one rank each have no level to share: flat
        if [ "$np" -gt 2 ]; then
            if grep -q "communicator 0x1: $np ranks on 2 nodes: node-aware algorithms" "$log"; then
                pass "$how -N 2 -n $np: node-aware algorithms chosen"
            else
                fail "$how -N 2 -n $np: node-aware algorithms not chosen"
            fi
        fi
        for sub in nb badarg; do
            log="$WORK/$how.coll.$sub.$np.log"
            if launch "$how" "$np" "$log" -- tests/integration/test_coll_mpi "$sub" &&
               grep -q "^ok $sub" "$log"; then
                pass "$how -N 2 -n $np: coll $sub"
            else
                fail "$how -N 2 -n $np: coll $sub"
                grep -E "FAIL|error" "$log" | head -n 8 | sed 's/^/    | /'
            fi
        done
        for sub in reproducer random; do
            log="$WORK/$how.comm.$sub.$np.log"
            if launch "$how" "$np" "$log" -- tests/integration/test_comm_mpi "$sub" &&
               ! grep -q "FAIL" "$log"; then
                pass "$how -N 2 -n $np: comm $sub"
            else
                fail "$how -N 2 -n $np: comm $sub"
                grep -E "FAIL|error" "$log" | head -n 8 | sed 's/^/    | /'
            fi
        done
    done
    # forced: the node-aware algorithms where the defaults might not pick them
    log="$WORK/$how.forced.log"
    if launch "$how" 4 "$log" AMC_BARRIER_ALG=hierarchical AMC_BCAST_ALG=hierarchical \
              AMC_REDUCE_ALG=hierarchical AMC_ALLREDUCE_ALG=hierarchical AMC_LOG_LEVEL=debug -- \
              tests/integration/test_coll_mpi sample &&
       grep -q "^ok sample" "$log" && nodes_seen "$log" 4; then
        pass "$how -N 2 -n 4: hierarchical barrier, bcast, reduce, allreduce forced"
    else
        fail "$how -N 2 -n 4: hierarchical algorithms forced"
        grep -E "FAIL|error" "$log" | head -n 8 | sed 's/^/    | /'
    fi
    log="$WORK/$how.lanes.log"
    if launch "$how" 4 "$log" AMC_BARRIER_ALG=multi_lane AMC_ALLREDUCE_ALG=multi_lane -- \
              tests/integration/test_coll_mpi sample && grep -q "^ok sample" "$log"; then
        pass "$how -N 2 -n 4: multi-lane barrier and allreduce forced"
    else
        fail "$how -N 2 -n 4: multi-lane algorithms forced"
        grep -E "FAIL|error" "$log" | head -n 8 | sed 's/^/    | /'
    fi
done

# An MPI program, unmodified, under libamcoll_mpi (LD_PRELOAD) and without it.
SHIM_LIB=$(pwd)/.libs/libamcoll_mpi.so
if [ -x tests/mpi/test_mpi_shim ] && [ -e "$SHIM_LIB" ]; then
    for np in 3 4; do
        ref="$WORK/shim.ref.$np" out="$WORK/shim.amc.$np"
        if launch srun "$np" "$WORK/shim.ref.$np.log" -- tests/mpi/test_mpi_shim colls "$ref" &&
           launch srun "$np" "$WORK/shim.amc.$np.log" LD_PRELOAD="$SHIM_LIB" AMCOLL_MPI_STATS=1 -- \
               tests/mpi/test_mpi_shim colls "$out" &&
           grep -q "^ok colls N=$np" "$WORK/shim.amc.$np.log" &&
           grep -q "amcoll_mpi" "$WORK/shim.amc.$np.log" &&
           tests/mpi/test_mpi_shim compare "$ref" "$out" "$np" >"$WORK/shim.cmp.$np" 2>&1; then
            pass "srun -N 2 -n $np: MPI program under libamcoll_mpi, results as without it"
        else
            fail "srun -N 2 -n $np: MPI program under libamcoll_mpi"
            tail -n 8 "$WORK/shim.ref.$np.log" "$WORK/shim.amc.$np.log" "$WORK/shim.cmp.$np" \
                2>/dev/null | sed 's/^/    | /'
        fi
    done
else
    fail "tests/mpi/test_mpi_shim or libamcoll_mpi.so not built (configure found no mpicc?)"
fi

# A node lost: every rank of one node dies at once; AMC_TIMEOUT unset. Two
# ranks on each node, n2 lost; and n1 (rank 0 among its two) lost, where
# srun's blocks put two ranks on n1 and one on n2.
for lost in "4 n2 --ntasks-per-node=2" "3 n1"; do
    read -r np host layout <<<"$lost"
    res="$WORK/lost.$np.$host"
    mkdir -p "$res"
    SRUN_ARGS=${layout:-} launch srun "$np" "$res.log" AMCTEST_KILL_HOST="$host" \
        AMCTEST_OP=allreduce -- tests/integration/test_peer_mpi node "$res"
    survivors=$(grep -l "^ok node" "$res"/rank.* 2>/dev/null | wc -l)
    # the survivors say how many ranks the lost node had
    victims=$(sed -n "s/.*loss of $host (\\([0-9]*\\) ranks.*/\\1/p" "$res"/rank.* 2>/dev/null | head -n 1)
    expect=$((np - ${victims:-$np}))
    if [ "$expect" -gt 0 ] && [ "$survivors" = "$expect" ]; then
        pass "srun -N 2 -n $np: $host lost ($victims ranks), $survivors survivors got" \
             "AMC_ERR_PEER ($(grep -h "loss of" "$res"/rank.* | sed 's/.*ended at [0-9]*, //' | head -n 1))"
    else
        fail "srun -N 2 -n $np: $host lost ($survivors of $expect survivors passed)"
        cat "$res"/rank.* 2>/dev/null | head -n 12 | sed 's/^/    | /'
        tail -n 8 "$res.log" | sed 's/^/    | /'
    fi
done

# Going on after a failure across hosts. A rank killed in the loop (the
# last, on n2 with --map-by node), and also rank 1 during the shrink, under
# mpirun with orte_enable_recovery (srun aborts the step when a task is
# killed by a signal, at times before the survivors finish); node n2 lost
# whole under srun (--kill-on-bad-exit=0), as above.
for case in "mpirun 4 loop" "mpirun 4 loop AMCTEST_SHRINK_VICTIM=1" "srun 4 node AMCTEST_KILL_HOST=n2"; do
    read -r how np mode extra <<<"$case"
    res="$WORK/shrink.$how.$np.$mode${extra:+.2}"
    mkdir -p "$res"
    OMPI_MCA_orte_enable_recovery=1 SRUN_ARGS=--ntasks-per-node=2 launch "$how" "$np" "$res.log" \
        ${extra:+"$extra"} -- tests/integration/test_shrink_mpi "$mode" "$res"
    survivors=$(grep -l "^ok " "$res"/rank.* 2>/dev/null | wc -l)
    killed=$(sed -n 's/.*killed=\([0-9]*\).*/\1/p' "$res"/rank.* 2>/dev/null | head -n 1)
    expect=$((np - ${killed:-$np}))
    if [ "$expect" -gt 0 ] && [ "$survivors" = "$expect" ]; then
        pass "$how -N 2 -n $np: test_shrink_mpi $mode ${extra:-}: $survivors survivors shrank and" \
             "finished ($(head -n 1 "$(ls "$res"/rank.* | head -n 1)" | cut -c4-))"
    else
        fail "$how -N 2 -n $np: test_shrink_mpi $mode ${extra:-} ($survivors of $expect survivors passed)"
        cat "$res"/rank.* 2>/dev/null | head -n 12 | sed 's/^/    | /'
        tail -n 8 "$res.log" | sed 's/^/    | /'
    fi
done

finish
