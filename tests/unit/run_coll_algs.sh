#!/usr/bin/env bash
# Runs test_coll once per non-default algorithm choice (AMC_<COLL>_ALG and
# thresholds), so every algorithm meets the same random orders and checks.
set -u
bin=./tests/unit/test_coll
[ -x "$bin" ] || bin="$(dirname "$0")/test_coll"
status=0
while read -r settings; do
    [ -n "$settings" ] || continue
    if env $settings "$bin" > /dev/null 2>&1; then
        echo "PASS: test_coll with $settings"
    else
        echo "FAIL: test_coll with $settings"
        env $settings "$bin" 2>&1 | tail -n 5
        status=1
    fi
done <<'LIST'
AMC_BCAST_ALG=pipeline AMC_BCAST_SEGMENT=8 AMC_ALLREDUCE_ALG=ring AMC_ALLGATHER_ALG=bruck
AMC_BCAST_ALG=pipeline AMC_BCAST_SEGMENT=12 AMC_ALLREDUCE_ALG=linear AMC_ALLGATHER_ALG=ring
AMC_BCAST_PIPELINE_MIN=0 AMC_BCAST_SEGMENT=4 AMC_ALLREDUCE_RING_MIN=0 AMC_ALLGATHER_BRUCK_MAX=0
AMC_LINEAR_MAX_RANKS=5 AMC_ALLGATHER_BRUCK_MAX=100000
AMC_RNDV_THRESH=1
AMC_RNDV_THRESH=1 AMC_BCAST_ALG=pipeline AMC_BCAST_SEGMENT=8 AMC_ALLREDUCE_ALG=ring AMC_ALLGATHER_ALG=bruck
AMC_RNDV_THRESH=20 AMC_ALLREDUCE_ALG=linear
AMC_EAGER_TOKENS=1
AMC_EAGER_TOKENS=0
AMC_EAGER_TOKENS=2 AMC_BCAST_ALG=pipeline AMC_BCAST_SEGMENT=8 AMC_ALLGATHER_ALG=bruck
LIST
exit $status
