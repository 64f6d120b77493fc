#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Reruns unit tests with non-default algorithm and protocol choices (AMC_*
# variables), so every algorithm meets the same random orders and checks.
# Each line: the test program, then the settings; @SRC@ is this script's
# folder in the source tree (files such as tuning_example.rules).
set -u
dir=./tests/unit
[ -x "$dir/test_coll" ] || dir="$(dirname "$0")"
src=$(cd "$(dirname "$0")" && pwd)
status=0
while read -r test settings; do
    [ -n "$test" ] || continue
    settings=${settings//@SRC@/$src}
    if env $settings "$dir/$test" > /dev/null 2>&1; then
        echo "PASS: $test with $settings"
    else
        echo "FAIL: $test with $settings"
        env $settings "$dir/$test" 2>&1 | tail -n 5
        status=1
    fi
done <<'LIST'
test_coll AMC_BCAST_ALG=pipeline AMC_BCAST_SEGMENT=8 AMC_ALLREDUCE_ALG=ring AMC_ALLGATHER_ALG=bruck
test_coll AMC_BCAST_ALG=pipeline AMC_BCAST_SEGMENT=12 AMC_ALLREDUCE_ALG=linear AMC_ALLGATHER_ALG=ring
test_coll AMC_BCAST_PIPELINE_MIN=0 AMC_BCAST_SEGMENT=4 AMC_ALLREDUCE_RING_MIN=0 AMC_ALLGATHER_BRUCK_MAX=0
test_coll AMC_LINEAR_MAX_RANKS=5 AMC_ALLGATHER_BRUCK_MAX=100000
test_coll AMC_RNDV_THRESH=1
test_coll AMC_FAST_MAX=0
test_coll AMC_OVERSUB_LINEAR_MAX_RANKS=0 AMC_ALLREDUCE_ALG=recursive_doubling AMC_ALLTOALL_ALG=bruck AMC_REDUCE_SCATTER_BLOCK_ALG=recursive_halving
test_persistent AMC_OVERSUB_LINEAR_MAX_RANKS=0 AMC_ALLREDUCE_ALG=recursive_doubling
test_coll AMC_BCAST_ALG=knomial
test_coll AMC_BCAST_ALG=knomial AMC_RNDV_THRESH=1 AMC_EAGER_TOKENS=1
test_coll AMC_REDUCE_ALG=knomial AMC_ALLREDUCE_ALG=knomial AMC_REDUCE_SCATTER_BLOCK_ALG=recursive_halving AMC_REDUCE_SCATTER_ALG=recursive_halving AMC_ALLGATHER_ALG=recursive_doubling AMC_ALLGATHERV_ALG=recursive_doubling AMC_BCAST_ALG=scatter_allgather AMC_ALLTOALL_ALG=bruck AMC_GATHER_ALG=binomial AMC_SCATTER_ALG=binomial AMC_SCAN_ALG=linear AMC_EXSCAN_ALG=linear
test_coll AMC_REDUCE_ALG=knomial AMC_ALLREDUCE_ALG=knomial AMC_REDUCE_SCATTER_BLOCK_ALG=recursive_halving AMC_REDUCE_SCATTER_ALG=recursive_halving AMC_ALLGATHER_ALG=recursive_doubling AMC_ALLGATHERV_ALG=recursive_doubling AMC_BCAST_ALG=scatter_allgather AMC_ALLTOALL_ALG=bruck AMC_GATHER_ALG=binomial AMC_SCATTER_ALG=binomial AMC_SCAN_ALG=linear AMC_EXSCAN_ALG=linear AMC_RNDV_THRESH=1 AMC_EAGER_TOKENS=1
test_coll AMC_REDUCE_ALG=rabenseifner AMC_ALLREDUCE_ALG=rabenseifner AMC_REDUCE_SCATTER_BLOCK_ALG=ring AMC_REDUCE_SCATTER_ALG=ring AMC_ALLGATHER_ALG=neighbor_exchange AMC_ALLGATHERV_ALG=bruck AMC_SCAN_ALG=pipeline AMC_EXSCAN_ALG=pipeline AMC_BCAST_SEGMENT=8
test_coll AMC_REDUCE_ALG=rabenseifner AMC_ALLREDUCE_ALG=rabenseifner AMC_REDUCE_SCATTER_BLOCK_ALG=ring AMC_REDUCE_SCATTER_ALG=ring AMC_ALLGATHER_ALG=neighbor_exchange AMC_ALLGATHERV_ALG=bruck AMC_SCAN_ALG=pipeline AMC_EXSCAN_ALG=pipeline AMC_BCAST_SEGMENT=8 AMC_RNDV_THRESH=1 AMC_EAGER_TOKENS=1
test_coll AMC_REDUCE_SCATTER_BLOCK_ALG=pairwise AMC_REDUCE_SCATTER_ALG=pairwise AMC_ALLGATHERV_ALG=neighbor_exchange
test_coll AMC_REDUCE_SCATTER_BLOCK_ALG=pairwise AMC_REDUCE_SCATTER_ALG=pairwise AMC_ALLGATHERV_ALG=neighbor_exchange AMC_RNDV_THRESH=1 AMC_EAGER_TOKENS=1
test_coll AMC_RNDV_THRESH=1 AMC_BCAST_ALG=pipeline AMC_BCAST_SEGMENT=8 AMC_ALLREDUCE_ALG=ring AMC_ALLGATHER_ALG=bruck
test_coll AMC_RNDV_THRESH=20 AMC_ALLREDUCE_ALG=linear AMC_ALLTOALL_ALG=pairwise AMC_ALLTOALLV_ALG=pairwise
test_coll AMC_EAGER_TOKENS=1 AMC_BCAST_ALG=linear AMC_REDUCE_ALG=linear AMC_ALLGATHER_ALG=linear AMC_ALLGATHERV_ALG=linear
test_coll AMC_EAGER_TOKENS=0
test_coll AMC_DEFER_BYTES=1
test_coll AMC_DEFER_BYTES=1 AMC_RNDV_THRESH=1 AMC_EAGER_TOKENS=1
test_persistent AMC_DEFER_BYTES=1 AMC_RNDV_THRESH=1
test_coll AMC_REDUCE_SCATTER_BLOCK_ALG=reduce_linear AMC_REDUCE_SCATTER_ALG=reduce_linear AMC_SCAN_ALG=recursive_doubling AMC_EXSCAN_ALG=recursive_doubling
test_coll AMC_RNDV_THRESH=1 AMC_EAGER_TOKENS=1 AMC_REDUCE_SCATTER_ALG=direct AMC_SCAN_ALG=hillis_steele
test_coll AMC_EAGER_TOKENS=2 AMC_BCAST_ALG=pipeline AMC_BCAST_SEGMENT=8 AMC_ALLGATHER_ALG=bruck
test_coll AMC_TUNING_FILE=@SRC@/tuning_example.rules
test_coll AMC_TUNING_FILE=@SRC@/tuning_example.rules AMC_RNDV_THRESH=1 AMC_EAGER_TOKENS=1
test_persistent AMC_TUNING_FILE=@SRC@/tuning_example.rules
test_coll AMC_NODE_SIZE=2
test_coll AMC_NODE_SIZE=3 AMC_RNDV_THRESH=1
test_coll AMC_NODE_SIZE=4 AMC_EAGER_TOKENS=1
test_coll AMC_NODE_SIZE=3 AMC_BCAST_ALG=hierarchical AMC_REDUCE_ALG=hierarchical AMC_ALLREDUCE_ALG=hierarchical AMC_ALLREDUCE_RING_MIN=0
test_coll AMC_NODE_SIZE=3 AMC_BARRIER_ALG=multi_lane AMC_ALLREDUCE_ALG=multi_lane AMC_ALLREDUCE_RING_MIN=0
test_coll AMC_NODE_SIZE=2 AMC_BARRIER_ALG=multi_lane AMC_ALLREDUCE_ALG=multi_lane AMC_RNDV_THRESH=1
test_coll AMC_NODE_SIZE=4 AMC_BARRIER_ALG=multi_lane AMC_ALLREDUCE_ALG=multi_lane AMC_EAGER_TOKENS=1
test_persistent AMC_NODE_SIZE=3
test_persistent AMC_NODE_SIZE=2 AMC_BARRIER_ALG=multi_lane AMC_ALLREDUCE_ALG=multi_lane
test_barrier_orders AMC_BARRIER_ALG=dissemination
test_coll AMC_ALLTOALLV_ALG=bruck
test_coll AMC_ALLTOALLV_ALG=bruck AMC_ALLTOALLV_BRUCK_BLOCK=12
test_coll AMC_ALLTOALLV_ALG=bruck AMC_ALLTOALLV_BRUCK_BLOCK=8 AMC_RNDV_THRESH=1 AMC_EAGER_TOKENS=1
test_coll AMC_ALLTOALLV_ALG=bruck AMC_ALLTOALLV_BRUCK_BLOCK=0 AMC_DEFER_BYTES=1
test_persistent AMC_ALLTOALLV_ALG=bruck AMC_ALLTOALLV_BRUCK_BLOCK=12
test_barrier_orders AMC_TUNING_FILE=@SRC@/tuning_example.rules
test_barrier_perms AMC_BARRIER_ALG=dissemination
test_barrier_orders AMC_BARRIER_ALG=knomial
test_barrier_perms AMC_BARRIER_ALG=knomial
test_barrier_orders AMC_BARRIER_ALG=linear
test_coll AMC_TUNING_BUILTIN=0
test_reliability AMC_RNDV_THRESH=1 AMC_EAGER_TOKENS=1
test_dag_random AMC_RNDV_THRESH=1 AMC_EAGER_TOKENS=1
test_barrier_perms AMC_BARRIER_ALG=linear
test_barrier_outstanding AMC_BARRIER_ALG=dissemination
LIST
exit $status
