#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# libamcoll_mpi: runs tests/mpi/test_mpi_shim, an ordinary MPI
# program, under mpirun without and with LD_PRELOAD=libamcoll_mpi.so and
# compares every result element by element; checks that the library routed
# the collectives (AMCOLL_MPI_STATS=1), that AMCOLL_MPI=0 and
# AMCOLL_MPI_COLLS keep results identical, and the error handlers
# (MPI_ERRORS_RETURN gets MPI_ERR_TRUNCATE, MPI_ERRORS_ARE_FATAL aborts with
# amcoll's message), that MPI_Comm_idup does not block, that the fast
# paths compute what MPI defines and are taken, persistent collectives
# started in orders that differ per rank, MPI_THREAD_MULTIPLE, amcoll
# started by MPI's exchange (AMCOLL_MPI_BOOT=mpi), and a rank that cannot
# start leaving every rank on MPI (AMCOLL_MPI_TEST_FAIL). Run from the
# build directory (make check).
# Knobs: AMCTEST_SHIM_NPROCS (default 1 2 3 4 5 8), MPIRUN.
set -u
MPIRUN=${MPIRUN:-mpirun}
NPROCS=${AMCTEST_SHIM_NPROCS-"1 2 3 4 5 8"}
BIN=./tests/mpi/test_mpi_shim
LIB=$(pwd)/.libs/libamcoll_mpi.so
LIMIT=${AMCTEST_SHIM_LIMIT:-240}
passed=0
failed=0
for f in "$BIN" "$LIB"; do
    if [ ! -e "$f" ]; then
        echo "FAIL: $f not found (run from the build directory after make)"
        echo "mpi shim: 0 passed, 1 failed"
        exit 1
    fi
done
ARGS=(--oversubscribe --bind-to none)
[ "$(id -u)" = 0 ] && ARGS+=(--allow-run-as-root)
PRE=(-x "LD_PRELOAD=$LIB" -x "LD_LIBRARY_PATH=$(pwd)/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
     -x AMC_TIMEOUT=60 -x AMCOLL_MPI_STATS=1)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/amc_shim.XXXXXX") || exit 1
trap 'rm -rf "$WORK"' EXIT

pass() { echo "PASS: $*"; passed=$((passed + 1)); }
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }

# run NAME NP OUT [mpirun args...]: the colls sub-test writing OUT.<rank>
run() {
    local name=$1 np=$2 outp=$3
    shift 3
    if ! timeout -k 10 "$LIMIT" "$MPIRUN" "${ARGS[@]}" "$@" -np "$np" "$BIN" colls "$outp" \
            </dev/null >"$WORK/$name.log" 2>&1 || ! grep -q "^ok colls N=$np" "$WORK/$name.log"; then
        fail "$name (exit or hang; last lines:)"
        tail -n 15 "$WORK/$name.log" | sed 's/^/    | /'
        return 1
    fi
    return 0
}

# compare NAME NP A B
compare() {
    if "$BIN" compare "$3" "$4" "$2" >"$WORK/$1.cmp" 2>&1; then
        pass "$1 ($(awk '{s += $3} END {print s}' "$WORK/$1.cmp") results identical)"
    else
        fail "$1"
        head -n 20 "$WORK/$1.cmp" | sed 's/^/    | /'
    fi
}

for np in $NPROCS; do
    ref=$WORK/ref$np
    run "reference N=$np (no library)" "$np" "$ref" || continue
    if run "library N=$np" "$np" "$WORK/lib$np" "${PRE[@]}"; then
        compare "every collective N=$np, with library vs without" "$np" "$ref" "$WORK/lib$np"
        routed=$(sed -n 's/^amcoll_mpi stats rank 0: on; routed \([0-9]*\),.*/\1/p' "$WORK/library N=$np.log")
        if [ "${routed:-0}" -gt 1000 ]; then
            pass "collectives routed N=$np ($routed calls on rank 0)"
        else
            fail "collectives routed N=$np (stats: ${routed:-none})"
            grep "amcoll_mpi" "$WORK/library N=$np.log" | head -n 3 | sed 's/^/    | /'
        fi
    fi
    if [ "$np" = 4 ]; then
        # amcoll started by MPI's exchange, as under a launcher without PMIx
        # (MPICH's Hydra, srun --mpi=pmi2): the same results, routed
        if run "AMCOLL_MPI_BOOT=mpi N=4" 4 "$WORK/boot" "${PRE[@]}" -x AMCOLL_MPI_BOOT=mpi \
                -x AMC_LOG_LEVEL=info; then
            compare "AMCOLL_MPI_BOOT=mpi N=4 vs without" 4 "$ref" "$WORK/boot"
            log="$WORK/AMCOLL_MPI_BOOT=mpi N=4.log"
            routed=$(sed -n 's/^amcoll_mpi stats rank 0: on; routed \([0-9]*\),.*/\1/p' "$log")
            boots=$(grep -c "initialized: rank [0-3] of 4 over ucx, started by the caller's exchange" "$log")
            if [ "${routed:-0}" -gt 1000 ] && [ "$boots" = 4 ] &&
               grep -q "^amcoll_mpi: amcoll started by MPI's exchange .*(AMCOLL_MPI_BOOT=mpi)" "$log"; then
                pass "AMCOLL_MPI_BOOT=mpi: every rank started by MPI's exchange, $routed calls routed on rank 0"
            else
                fail "AMCOLL_MPI_BOOT=mpi: routed ${routed:-none}, $boots of 4 ranks started by MPI's exchange"
                grep "amcoll" "$log" | head -n 5 | cut -c1-200 | sed 's/^/    | /'
            fi
        fi
        if run "AMCOLL_MPI=0 N=4" 4 "$WORK/off" "${PRE[@]}" -x AMCOLL_MPI=0; then
            compare "AMCOLL_MPI=0 N=4 vs without" 4 "$ref" "$WORK/off"
            grep -q "stats rank 0: off; routed 0," "$WORK/AMCOLL_MPI=0 N=4.log" &&
                pass "AMCOLL_MPI=0 routes nothing" || fail "AMCOLL_MPI=0 routes nothing"
        fi
        if run "AMCOLL_MPI_COLLS=allreduce,bcast N=4" 4 "$WORK/some" "${PRE[@]}" \
                -x AMCOLL_MPI_COLLS=allreduce,bcast; then
            compare "AMCOLL_MPI_COLLS=allreduce,bcast N=4 vs without" 4 "$ref" "$WORK/some"
            line=$(grep "stats rank 0" "$WORK/AMCOLL_MPI_COLLS=allreduce,bcast N=4.log")
            if echo "$line" | grep -q "allreduce: routed [1-9]" &&
               echo "$line" | grep -q "gather: routed 0 .*filter"; then
                pass "AMCOLL_MPI_COLLS limits the routing"
            else
                fail "AMCOLL_MPI_COLLS limits the routing: $line"
            fi
        fi
    fi
done

for np in 2 4; do
    if timeout -k 10 120 "$MPIRUN" "${ARGS[@]}" "${PRE[@]}" -np "$np" "$BIN" errors \
            </dev/null >"$WORK/err.log" 2>&1 && grep -q "^ok errors N=$np" "$WORK/err.log"; then
        pass "MPI_ERRORS_RETURN gets MPI_ERR_TRUNCATE with amcoll's message N=$np"
    else
        fail "MPI_ERRORS_RETURN N=$np"
        tail -n 10 "$WORK/err.log" | sed 's/^/    | /'
    fi
done
# MPI_Comm_idup is non-blocking: the sub-test deadlocks (and times out) if
# the idup waits for the other members; its communicators must be mapped
# (nothing falls through) and work
for np in 2 4; do
    if timeout -k 10 60 "$MPIRUN" "${ARGS[@]}" "${PRE[@]}" -np "$np" "$BIN" idup \
            </dev/null >"$WORK/idup.log" 2>&1 && grep -q "^ok idup N=$np" "$WORK/idup.log" &&
            grep -q "^amcoll_mpi stats rank 0: on; routed [1-9][0-9]*, fell through 0;" "$WORK/idup.log"; then
        pass "MPI_Comm_idup overlaps point-to-point, its communicators routed N=$np"
    else
        fail "MPI_Comm_idup N=$np (hang, wrong result or not routed)"
        tail -n 10 "$WORK/idup.log" | sed 's/^/    | /'
    fi
done

# the fast paths (test_mpi_shim fast checks its own results, with and
# without the library): every v-form, scan, exscan and reduce_scatter(_block)
# call took one in every mode, the derived-type alltoallv the general path,
# the MINLOC scan MPI's own
for np in 3 4; do
    for lib in 0 1; do
        if [ $lib = 1 ]; then pre=("${PRE[@]}"); what="with library"; else pre=(); what="without"; fi
        if timeout -k 10 120 "$MPIRUN" "${ARGS[@]}" "${pre[@]}" -np "$np" "$BIN" fast \
                </dev/null >"$WORK/fast.log" 2>&1 && grep -q "^ok fast N=$np" "$WORK/fast.log"; then
            pass "fast-path cases checked element by element, $what, N=$np"
        else
            fail "fast-path cases, $what, N=$np"
            grep -m 10 "FAIL" "$WORK/fast.log" | sed 's/^/    | /'
            continue
        fi
        [ $lib = 1 ] || continue
        line=$(grep "stats rank 0" "$WORK/fast.log")
        bad=""
        for c in gatherv scatterv allgatherv alltoallv scan exscan reduce_scatter reduce_scatter_block; do
            echo "$line" | grep -q " $c: routed [0-9]* (b [1-9][0-9]*, nb [1-9][0-9]*, p [0-9]*; fast [1-9]" ||
                bad="$bad $c"
        done
        a2a=$(echo "$line" | sed -n 's/.* alltoallv: routed \([0-9]*\) ([^;]*; fast \([0-9]*\)).*/\1 \2/p')
        [ -n "$a2a" ] && [ "${a2a% *}" -gt "${a2a#* }" ] || bad="$bad alltoallv-general($a2a)"
        echo "$line" | grep -q " scan: routed [0-9]* ([^)]*) fell through [1-9][0-9]* (op " ||
            bad="$bad scan-minloc"
        if [ -z "$bad" ]; then
            pass "fast paths taken (and left where they must be) N=$np"
        else
            fail "fast paths taken N=$np:$bad"
            echo "$line" | sed 's/^/    | /'
        fi
    done
done

# persistent collectives started in orders that differ per rank, as MPI-4
# allows (it matches them at their init): self-checking, with and without
for np in 2 4; do
    for lib in 0 1; do
        if [ $lib = 1 ]; then pre=("${PRE[@]}"); what="with library"; else pre=(); what="without"; fi
        if timeout -k 10 120 "$MPIRUN" "${ARGS[@]}" "${pre[@]}" -np "$np" "$BIN" porder \
                </dev/null >"$WORK/porder.log" 2>&1 && grep -q "^ok porder N=$np" "$WORK/porder.log" &&
                { [ $lib = 0 ] || grep -q "^amcoll_mpi stats rank 0: on; .* p [1-9]" "$WORK/porder.log"; }; then
            pass "persistent collectives started in orders that differ per rank, $what, N=$np"
        else
            fail "persistent collectives started in orders that differ per rank, $what, N=$np"
            grep -v "stats rank" "$WORK/porder.log" | tail -n 10 | sed 's/^/    | /'
        fi
    done
done

# MPI_THREAD_MULTIPLE: threads running collectives at once (self-checking)
for np in 2 4; do
    if timeout -k 10 120 "$MPIRUN" "${ARGS[@]}" "${PRE[@]}" -np "$np" "$BIN" threads \
            </dev/null >"$WORK/threads.log" 2>&1 && grep -q "^ok threads N=$np" "$WORK/threads.log" &&
            grep -q "^amcoll_mpi stats rank 0: on; routed [1-9][0-9]*, fell through 0;" "$WORK/threads.log"; then
        pass "MPI_THREAD_MULTIPLE: threads' collectives routed and right N=$np"
    else
        fail "MPI_THREAD_MULTIPLE N=$np"
        tail -n 10 "$WORK/threads.log" | sed 's/^/    | /'
    fi
done

# a rank that cannot start (AMCOLL_MPI_TEST_FAIL): rank 2 of 3 fails before
# MPI's exchange, at its second allgather, after amcoll started, and under
# PMIx: every rank stays on Open MPI, the self-checking sub-test passes,
# and the only lines are rank 2's warning and rank 0's
for how in mpi:0 mpi:2 mpi:9 pmix:0; do
    if timeout -k 10 120 "$MPIRUN" "${ARGS[@]}" "${PRE[@]}" -x AMCOLL_MPI_BOOT="${how%:*}" \
            -x AMCOLL_MPI_TEST_FAIL="2:${how#*:}" -np 3 "$BIN" fast </dev/null \
            >"$WORK/nostart.log" 2>&1 && grep -q "^ok fast N=3" "$WORK/nostart.log"; then
        off=$(grep -c "^amcoll_mpi stats rank [0-2]: off; routed 0," "$WORK/nostart.log")
        said=$(grep -v "stats rank" "$WORK/nostart.log" | grep -c "amcoll")
        if [ "$off" = 3 ] && [ "$said" = 2 ] &&
           grep -q "^amcoll_mpi: rank 2: AMCOLL_MPI_TEST_FAIL" "$WORK/nostart.log"; then
            pass "rank 2 failing its start (AMCOLL_MPI_BOOT=${how%:*}, step ${how#*:}): every rank on MPI, two lines"
        else
            fail "rank 2 failing its start ($how): $off of 3 ranks off, $said lines"
            grep -v "stats rank" "$WORK/nostart.log" | tail -n 8 | sed 's/^/    | /'
        fi
    else
        fail "rank 2 failing its start ($how): wrong result, exit or hang"
        tail -n 8 "$WORK/nostart.log" | sed 's/^/    | /'
    fi
done

# N = 2: one rank fails, so one abort (two at once can lose Open MPI's help
# message in its aggregation: "Data unpack would read past end of buffer")
timeout -k 10 120 "$MPIRUN" "${ARGS[@]}" "${PRE[@]}" -np 2 "$BIN" fatal </dev/null \
    >"$WORK/fatal.log" 2>&1
rc=$?
if [ "$rc" != 0 ] && [ "$rc" != 124 ] && grep -q "amcoll: message truncated" "$WORK/fatal.log"; then
    pass "MPI_ERRORS_ARE_FATAL aborts with amcoll's message (exit $rc)"
else
    fail "MPI_ERRORS_ARE_FATAL (exit $rc)"
    tail -n 10 "$WORK/fatal.log" | sed 's/^/    | /'
fi

echo "mpi shim: $passed passed, $failed failed"
[ "$failed" = 0 ] && [ "$passed" -gt 0 ]
