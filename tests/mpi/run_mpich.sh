#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# libamcoll_mpich: tests/mpi's programs built against MPICH
# (test_mpi_shim_mpich, test_mixed_nb_mpich: plain MPICH programs, never
# linked with amcoll) under MPICH's Hydra, which gives no PMIx server, so
# amcoll starts by MPI's exchange:
#   - test_mpi_shim colls (every collective, blocking, non-blocking and
#     persistent, in place, dups and splits, what falls through, mixed
#     arrays of routed and MPI requests) without and with
#     LD_PRELOAD=libamcoll_mpich.so, every result compared element by
#     element; the calls routed (AMCOLL_MPI_STATS=1), amcoll started by
#     MPI's exchange (the info line);
#   - test_mixed_nb (self-checking mixed windows) with the library at
#     N=1..8, everything routed, and without it at N=2 and 3;
#   - test_mpi_shim fast and porder (self-checking, with and without), threads
#     (MPI_THREAD_MULTIPLE), errors (an amcoll error reaches an
#     MPI_ERRORS_RETURN handler as MPI_ERR_TRUNCATE), fatal, idup;
#   - one rank failing its start (AMCOLL_MPI_TEST_FAIL) before, inside and
#     after MPI's exchange: every rank stays on MPICH, results right, and
#     only that rank's warning and rank 0's.
# MPICH 4.0.2 (Debian 12) fails on its own three things these programs do,
# so every run here sets MPIR_CVAR_REDUCE_DEVICE_COLLECTIVE=0 (its device
# reduce reads MPI_IN_PLACE as a buffer at a root other than 0 and
# crashes, pmodels/mpich#6540, fixed in 4.1.2), the runs without the
# library take the persistent calls' results from their non-blocking forms
# (AMCTEST_PERSISTENT_AS_NB: its persistent collectives fail a restart and
# MPI_Testall, pmodels/mpich#6423), and test_mixed_nb runs without the
# library at N=2 and 3 only (its MPI_Allgatherv on one rank ignores the
# displacement). MPICH spins where ranks share cores: its colls runs
# without the library take long on 2 cores (N=4 about 30 s, N=8 over two
# minutes), so those runs have PLAIN_LIMIT.
# Run from the build directory (make check). Ends with "mpich: N passed, N failed".
# Knobs: MPIEXEC_MPICH, AMCTEST_MPICH_NPROCS (colls, default 1..8),
# AMCTEST_MPICH_MIXED_NPROCS (with the library, default 1..8),
# AMCTEST_MPICH_MIXED_PLAIN (without, default 2 3), AMCTEST_MPICH_OPS (test_mixed_nb
# operations, default 1500), AMCTEST_MPICH_LIMIT (seconds a run, default
# 240), AMCTEST_MPICH_PLAIN_LIMIT (seconds a colls run without the library,
# default 600).
set -u
MPIEXEC=${MPIEXEC_MPICH:-mpiexec.mpich}
NPROCS=${AMCTEST_MPICH_NPROCS-"1 2 3 4 5 6 7 8"}
MIXED_NPROCS=${AMCTEST_MPICH_MIXED_NPROCS-"1 2 3 4 5 6 7 8"}
MIXED_PLAIN=${AMCTEST_MPICH_MIXED_PLAIN-"2 3"}
OPS=${AMCTEST_MPICH_OPS:-1500}
LIMIT=${AMCTEST_MPICH_LIMIT:-240}
PLAIN_LIMIT=${AMCTEST_MPICH_PLAIN_LIMIT:-600}
BIN=./tests/mpi/test_mpi_shim_mpich
MIXED=./tests/mpi/test_mixed_nb_mpich
LIB=$(pwd)/.libs/libamcoll_mpich.so
passed=0
failed=0

pass() { echo "PASS: $*"; passed=$((passed + 1)); }
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
finish() {
    echo "mpich: $passed passed, $failed failed"
    [ "$failed" = 0 ] && [ "$passed" -gt 0 ]
    exit $?
}

for f in "$BIN" "$MIXED" "$LIB"; do
    if [ ! -e "$f" ]; then
        fail "$f not found (run from the build directory after make)"
        finish
    fi
done
if ! command -v "$MPIEXEC" >/dev/null; then
    fail "$MPIEXEC not found (MPIEXEC_MPICH)"
    finish
fi
BASE=(-genv MPIR_CVAR_REDUCE_DEVICE_COLLECTIVE 0)
PLAIN=("${BASE[@]}" -genv AMCTEST_PERSISTENT_AS_NB 1)
PRE=("${BASE[@]}" -genv LD_PRELOAD "$LIB"
     -genv LD_LIBRARY_PATH "$(pwd)/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
     -genv AMC_TIMEOUT 60 -genv AMCOLL_MPI_STATS 1)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/amc_mpich.XXXXXX") || exit 1
trap 'rm -rf "$WORK"' EXIT

# mpich NAME NP [mpiexec args...] -- PROGRAM ARGS...: its log in $WORK/NAME.log
mpich() {
    local name=$1 np=$2 args=()
    shift 2
    while [ "$1" != "--" ]; do
        args+=("$1")
        shift
    done
    shift
    timeout -k 10 "$LIMIT" "$MPIEXEC" "${args[@]}" -n "$np" "$@" </dev/null \
        >"$WORK/$name.log" 2>&1
}
showlog() { grep -v "stats rank" "$WORK/$1.log" | tail -n 12 | cut -c1-300 | sed 's/^/    | /'; }
# rank 0's statistics: "ROUTED FELL", nothing when it printed none or was off
stats0() {
    sed -n 's/^amcoll_mpich stats rank 0: on; routed \([0-9]*\), fell through \([0-9]*\);.*/\1 \2/p' \
        "$WORK/$1.log"
}

# ---------------------------------------------------------------- every collective, compared
for np in $NPROCS; do
    if ! LIMIT=$PLAIN_LIMIT mpich "ref$np" "$np" "${PLAIN[@]}" -- "$BIN" colls "$WORK/ref$np" ||
       ! grep -q "^ok colls N=$np" "$WORK/ref$np.log"; then
        fail "colls N=$np without the library (exit or hang)"
        showlog "ref$np"
        continue
    fi
    if ! mpich "lib$np" "$np" "${PRE[@]}" -genv AMC_LOG_LEVEL info -- "$BIN" colls "$WORK/lib$np" ||
       ! grep -q "^ok colls N=$np" "$WORK/lib$np.log"; then
        fail "colls N=$np with libamcoll_mpich (exit or hang)"
        showlog "lib$np"
        continue
    fi
    if "$BIN" compare "$WORK/ref$np" "$WORK/lib$np" "$np" >"$WORK/cmp$np" 2>&1; then
        pass "every collective N=$np under Hydra, with libamcoll_mpich vs plain MPICH" \
             "($(awk '{s += $3} END {print s}' "$WORK/cmp$np") results identical)"
    else
        fail "every collective N=$np, with libamcoll_mpich vs plain MPICH"
        head -n 20 "$WORK/cmp$np" | sed 's/^/    | /'
    fi
    st=$(stats0 "lib$np")
    boots=$(grep -c "initialized: rank [0-9]* of $np over ucx, started by the caller's exchange" \
            "$WORK/lib$np.log")
    if [ "${st% *}" -gt 1000 ] 2>/dev/null && [ "$boots" = "$np" ] &&
       grep -q "^amcoll_mpich: amcoll started by MPI's exchange .*(no PMIx server in the environment)" \
           "$WORK/lib$np.log"; then
        pass "routed N=$np (${st% *} calls on rank 0, ${st#* } fell through), every rank started by MPI's exchange"
    else
        fail "routed and started by MPI's exchange N=$np (stats: ${st:-none}; ranks started so: $boots)"
        grep "amcoll_mpich" "$WORK/lib$np.log" | head -n 3 | cut -c1-300 | sed 's/^/    | /'
    fi
done

# ---------------------------------------------------------------- mixed windows
for np in $MIXED_NPROCS; do
    if [[ " $MIXED_PLAIN " == *" $np "* ]]; then
        if mpich "mixref$np" "$np" "${PLAIN[@]}" -- "$MIXED" "$OPS" 0x10bc &&
           grep -q "^ok mixed N=$np " "$WORK/mixref$np.log"; then
            pass "mixed windows N=$np without the library (the program and MPICH agree)"
        else
            fail "mixed windows N=$np without the library"
            showlog "mixref$np"
        fi
    fi
    if mpich "mix$np" "$np" "${PRE[@]}" -genv AMC_TIMEOUT 30 -- "$MIXED" "$OPS" 7 &&
       grep -q "^ok mixed N=$np " "$WORK/mix$np.log"; then
        st=$(stats0 "mix$np")
        if [ "${st% *}" -gt 100 ] 2>/dev/null && [ "${st#* }" = 0 ]; then
            pass "mixed windows N=$np with libamcoll_mpich (${st% *} collectives routed on rank 0, none fell through)"
        else
            fail "mixed windows N=$np with libamcoll_mpich: stats ${st:-none}"
        fi
    else
        fail "mixed windows N=$np with libamcoll_mpich (wrong result, exit or hang)"
        showlog "mix$np"
    fi
done

# ---------------------------------------------------------------- self-checking sub-tests
# sub NAME NP PLAIN(0/1) SUB: with the library (and without if PLAIN), "ok SUB"
sub() {
    local name=$1 np=$2 plain=$3 what=$4 st
    if [ "$plain" = 1 ]; then
        if mpich "$name-plain" "$np" "${PLAIN[@]}" -- "$BIN" "$what" &&
           grep -q "^ok $what N=$np" "$WORK/$name-plain.log"; then
            pass "$what N=$np without the library"
        else
            fail "$what N=$np without the library"
            showlog "$name-plain"
        fi
    fi
    if mpich "$name" "$np" "${PRE[@]}" -- "$BIN" "$what" &&
       grep -q "^ok $what N=$np" "$WORK/$name.log"; then
        st=$(stats0 "$name")
        if [ "${st% *}" -gt 0 ] 2>/dev/null; then
            pass "$what N=$np with libamcoll_mpich (${st% *} routed, ${st#* } fell through)"
        else
            fail "$what N=$np with libamcoll_mpich: nothing routed (${st:-no stats})"
        fi
    else
        fail "$what N=$np with libamcoll_mpich"
        showlog "$name"
    fi
}
sub fast3 3 1 fast
# persistent collectives started in orders that differ per rank (MPI-4
# matches them at their init; MPICH's coll/p_order): plain MPICH passes it
sub porder2 2 1 porder
sub porder4 4 1 porder
sub threads2 2 1 threads
sub threads4 4 0 threads
sub idup2 2 0 idup
sub idup4 4 0 idup
if grep -q "stats rank 0: on; routed [1-9][0-9]*, fell through 0;" "$WORK/idup4.log"; then
    pass "MPI_Comm_idup's communicators routed, none fell through N=4"
else
    fail "MPI_Comm_idup's communicators N=4: $(grep 'stats rank 0' "$WORK/idup4.log" | cut -c1-120)"
fi
for np in 2 4; do
    if mpich "err$np" "$np" "${PRE[@]}" -- "$BIN" errors && grep -q "^ok errors N=$np" "$WORK/err$np.log"; then
        pass "MPI_ERRORS_RETURN gets MPI_ERR_TRUNCATE N=$np"
    else
        fail "MPI_ERRORS_RETURN N=$np"
        showlog "err$np"
    fi
done
mpich fatal 2 "${PRE[@]}" -- "$BIN" fatal
rc=$?
if [ "$rc" != 0 ] && [ "$rc" != 124 ] && grep -q "amcoll: message truncated" "$WORK/fatal.log"; then
    pass "MPI_ERRORS_ARE_FATAL aborts with amcoll's message (exit $rc)"
else
    fail "MPI_ERRORS_ARE_FATAL (exit $rc)"
    showlog fatal
fi

# ---------------------------------------------------------------- a rank that cannot start
# rank 1 of 3 fails before MPI's exchange, at its second allgather, and
# after amcoll started: every rank stays on MPICH (stats "off"), the
# self-checking sub-test passes, and the only lines are rank 1's warning
# and rank 0's; no line of amcoll's own (the others gave up quietly)
for at in 0 2 9; do
    name=nostart$at
    if mpich "$name" 3 "${PRE[@]}" -genv AMCOLL_MPI_TEST_FAIL "1:$at" -- "$BIN" fast &&
       grep -q "^ok fast N=3" "$WORK/$name.log"; then
        off=$(grep -c "^amcoll_mpich stats rank [0-2]: off; routed 0," "$WORK/$name.log")
        said=$(grep -v "stats rank" "$WORK/$name.log" | grep -c "amcoll")
        if [ "$off" = 3 ] && [ "$said" = 2 ] &&
           grep -q "^amcoll_mpich: rank 1: AMCOLL_MPI_TEST_FAIL" "$WORK/$name.log" &&
           grep -q "^amcoll_mpich: another rank could not start amcoll" "$WORK/$name.log"; then
            pass "rank 1 failing its start (step $at): every rank on MPICH, results right, two lines"
        else
            fail "rank 1 failing its start (step $at): $off of 3 ranks off, $said lines"
            showlog "$name"
        fi
    else
        fail "rank 1 failing its start (step $at): wrong result, exit or hang"
        showlog "$name"
    fi
done

finish
