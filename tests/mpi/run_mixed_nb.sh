#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Mixed non-blocking collectives under libamcoll_mpi: runs
# tests/mpi/test_mixed_nb (an ordinary MPI program that checks every
# result itself) under mpirun at each N, without the library (the program
# and Open MPI agree) and with LD_PRELOAD=libamcoll_mpi.so for several
# seeds, then at N=4 under settings that change amcoll's protocols. With the
# library the run must also route its collectives (AMCOLL_MPI_STATS=1) and
# let none fall through. AMC_TIMEOUT turns a lost step into a failure, and
# timeout(1) a hang outside amcoll's waits. Run from the build directory
# (make check).
# Knobs: AMCTEST_MIXED_NPROCS (default 1 2 3 4 5 6 7 8), AMCTEST_MIXED_SEEDS
# (default 2 seeds), AMCTEST_MIXED_OPS (operations per run, default 2500),
# MPIRUN.
set -u
MPIRUN=${MPIRUN:-mpirun}
NPROCS=${AMCTEST_MIXED_NPROCS-"1 2 3 4 5 6 7 8"}
SEEDS=${AMCTEST_MIXED_SEEDS-"0x10bc 7"}
OPS=${AMCTEST_MIXED_OPS:-2500}
LIMIT=${AMCTEST_MIXED_LIMIT:-120}
BIN=./tests/mpi/test_mixed_nb
LIB=$(pwd)/.libs/libamcoll_mpi.so
passed=0
failed=0
for f in "$BIN" "$LIB"; do
    if [ ! -e "$f" ]; then
        echo "FAIL: $f not found (run from the build directory after make)"
        echo "mixed nb: 0 passed, 1 failed"
        exit 1
    fi
done
ARGS=(--oversubscribe --bind-to none)
[ "$(id -u)" = 0 ] && ARGS+=(--allow-run-as-root)
PRE=(-x "LD_PRELOAD=$LIB" -x "LD_LIBRARY_PATH=$(pwd)/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
     -x AMC_TIMEOUT=30 -x AMCOLL_MPI_STATS=1)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/amc_mixed.XXXXXX") || exit 1
trap 'rm -rf "$WORK"' EXIT

pass() { echo "PASS: $*"; passed=$((passed + 1)); }
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }

# run NAME NP SEED [mpirun args...]
run() {
    local name=$1 np=$2 seed=$3 log
    shift 3
    log="$WORK/run.log"
    if timeout -k 10 "$LIMIT" "$MPIRUN" "${ARGS[@]}" "$@" -np "$np" "$BIN" "$OPS" "$seed" \
            </dev/null >"$log" 2>&1 && grep -q "^ok mixed N=$np " "$log"; then
        if [ "$*" = "" ] || ! grep -q "amcoll_mpi stats" "$log"; then
            pass "$name"
            return
        fi
        # rank 0's line: everything routed, nothing fallen through
        local routed fell
        routed=$(sed -n 's/^amcoll_mpi stats rank 0: on; routed \([0-9]*\),.*/\1/p' "$log")
        fell=$(sed -n 's/^amcoll_mpi stats rank 0: on; routed [0-9]*, fell through \([0-9]*\);.*/\1/p' "$log")
        if [ "${routed:-0}" -gt 100 ] && [ "${fell:-1}" = 0 ]; then
            pass "$name ($routed collectives routed on rank 0)"
        else
            fail "$name: routed ${routed:-none}, fell through ${fell:-none}"
            grep "stats rank 0" "$log" | cut -c1-300 | sed 's/^/    | /'
        fi
    else
        fail "$name (wrong result, exit or hang; first lines:)"
        grep -v "^\[" "$log" | head -n 12 | sed 's/^/    | /'
    fi
}

for np in $NPROCS; do
    run "mixed N=$np without the library" "$np" 0x10bc
    for seed in $SEEDS; do
        run "mixed N=$np seed $seed with libamcoll_mpi" "$np" "$seed" "${PRE[@]}"
    done
done
# the same under other protocols: everything by rendezvous with one eager
# token per peer, and no small collectives on the barrier's rounds
run "mixed N=4 with libamcoll_mpi, AMC_RNDV_THRESH=1 AMC_EAGER_TOKENS=1" 4 3 "${PRE[@]}" \
    -x AMC_RNDV_THRESH=1 -x AMC_EAGER_TOKENS=1
run "mixed N=4 with libamcoll_mpi, AMC_FAST_MAX=0" 4 5 "${PRE[@]}" -x AMC_FAST_MAX=0
run "mixed N=3 with libamcoll_mpi, AMC_PROGRESS_THREAD=1" 3 9 "${PRE[@]}" -x AMC_PROGRESS_THREAD=1

echo "mixed nb: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
