#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# coll/amcoll, the Open MPI component: the project's MPI test
# programs, plain (no LD_PRELOAD), under mpirun with the build tree's
# component beside Open MPI's own, enabled and verbose:
#   - test_mpi_shim colls at N=2,3,4: every collective, blocking,
#     non-blocking and persistent, results compared element by element
#     with a run without
#     the component, and the statistics must show the calls taken;
#   - the component disabled (the default): not selected, silent, the
#     same results;
#   - coll_amcoll_colls: what it excludes stays with Open MPI;
#   - test_mixed_nb (self-checking) at N=2,3,4; test_mpi_shim's fast,
#     errors, idup, porder (persistent collectives started in orders that
#     differ per rank) and fatal sub-tests (errors reach the handler with
#     amcoll's message);
#   - tests/ompi/test_component: 10,000 MPI_Comm_dup/free without a leak,
#     MPI_IN_PLACE, what must fall back (MINLOC, MAXLOC, long double) and a
#     user's op (taken),
#     split/create/create_group/split_type/idup, an intercommunicator,
#     Open MPI's internal datatypes (MPI_Intercomm_merge, an
#     intercommunicator's allgatherv) at N=3 and 4, MPI_THREAD_MULTIPLE;
#   - amcoll failing to start on one rank: every rank falls back;
#   - ompi_info lists the parameters.
# Run from the build directory (make check, or bash ../tests/ompi/run_component.sh).
# Ends with "component: N passed, N failed". Knobs: MPIRUN, AMCTEST_COMP_LIMIT.
set -u
MPIRUN=${MPIRUN:-mpirun}
LIMIT=${AMCTEST_COMP_LIMIT:-120}
COMP=$(pwd)/ompi/components
SHIM=./tests/mpi/test_mpi_shim
MIXED=./tests/mpi/test_mixed_nb
TC=./tests/ompi/test_component
passed=0
failed=0

pass() { echo "PASS: $*"; passed=$((passed + 1)); }
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
finish() {
    echo "component: $passed passed, $failed failed"
    [ "$failed" = 0 ] && [ "$passed" -gt 0 ]
    exit $?
}

for f in "$COMP/mca_coll_amcoll.so" "$SHIM" "$MIXED" "$TC"; do
    if [ ! -e "$f" ]; then
        fail "$f not found (run from the build directory after make check TESTS=)"
        finish
    fi
done
# Open MPI's own components: where ompi_info says they are
ompidir=$(ompi_info --path pkglibdir --parsable 2>/dev/null | sed -n 's/^path:pkglibdir://p')
[ -d "$ompidir" ] || ompidir=/usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3
ARGS=(--oversubscribe --bind-to none --mca mca_base_component_path "$COMP:$ompidir")
[ "$(id -u)" = 0 ] && ARGS+=(--allow-run-as-root)
ON=(--mca coll_amcoll_enable 1 --mca coll_amcoll_verbose 1 -x AMC_TIMEOUT=60)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/amc_comp.XXXXXX") || exit 1
trap 'rm -rf "$WORK"' EXIT

# mpi NAME NP [mpirun args...] -- PROGRAM ARGS...: runs, log in $WORK/NAME.log
mpi() {
    local name=$1 np=$2 i
    shift 2
    for ((i = 1; i <= $#; i++)); do [ "${!i}" = -- ] && break; done
    timeout -k 10 "$LIMIT" "$MPIRUN" "${ARGS[@]}" "${@:1:i-1}" -np "$np" "${@:i+1}" \
        </dev/null >"$WORK/$name.log" 2>&1
}
# the rank-0 statistics line of a log
stats0() { grep -m1 "^coll/amcoll stats rank 0:" "$WORK/$1.log"; }
# routed count of rank 0
routed0() { stats0 "$1" | sed -n 's/.*: on; routed \([0-9]*\),.*/\1/p'; }
showlog() { grep -v "^\[vm\|^ *$" "$WORK/$1.log" | tail -n 12 | cut -c1-240 | sed 's/^/    | /'; }

# ---------------------------------------------------------------- every collective
for np in 2 3 4; do
    if ! mpi "ref$np" "$np" -- $SHIM colls "$WORK/ref$np" || ! grep -q "^ok colls N=$np" "$WORK/ref$np.log"; then
        fail "reference run N=$np (without the component)"
        showlog "ref$np"
        continue
    fi
    if ! mpi "on$np" "$np" "${ON[@]}" -- $SHIM colls "$WORK/on$np" ||
       ! grep -q "^ok colls N=$np" "$WORK/on$np.log"; then
        fail "test_mpi_shim colls N=$np under coll/amcoll (exit or hang)"
        showlog "on$np"
        continue
    fi
    if $SHIM compare "$WORK/ref$np" "$WORK/on$np" "$np" >"$WORK/cmp$np" 2>&1; then
        pass "every collective N=$np: results identical with and without coll/amcoll ($(awk '{s += $3} END {print s}' "$WORK/cmp$np") records)"
    else
        fail "every collective N=$np: results differ"
        head -n 10 "$WORK/cmp$np" | sed 's/^/    | /'
    fi
    r=$(routed0 "on$np")
    line=$(stats0 "on$np")
    if [ "${r:-0}" -gt 500 ] && grep -q "^coll/amcoll: took communicator MPI_COMM_WORLD" "$WORK/on$np.log" &&
       echo "$line" | grep -q "alltoallw: routed [1-9][0-9]* (b [1-9][0-9]*, nb [1-9]" &&
       echo "$line" | grep -q " reduce: routed [1-9][0-9]* (b [1-9][0-9]*, nb [1-9][0-9]*, p [1-9][0-9]*; fast 0);" &&
       echo "$line" | grep -q "allreduce: routed [0-9]* ([^)]*) fell through [1-9][0-9]* (type [1-9][0-9]*, op [1-9]"; then
        pass "coll/amcoll took the world and ran the calls N=$np ($r on rank 0, blocking, non-blocking and persistent, user ops included; MINLOC-like ops and types amcoll lacks passed on)"
    else
        fail "coll/amcoll statistics N=$np: ${line:-none}"
    fi
done

# ---------------------------------------------------------------- disabled (the default)
if mpi off 4 --mca coll_amcoll_verbose 1 --mca coll_base_verbose 10 -- $SHIM colls "$WORK/off" &&
   grep -q "^ok colls N=4" "$WORK/off.log"; then
    if [ -f "$WORK/ref4" ] || [ -f "$WORK/ref4.0" ]; then
        $SHIM compare "$WORK/ref4" "$WORK/off" 4 >"$WORK/cmpoff" 2>&1 &&
            pass "disabled: results identical to a run without the component" ||
            fail "disabled: results differ"
    fi
    if grep -q "coll component amcoll is not available" "$WORK/off.log" &&
       ! grep -q "selecting *amcoll" "$WORK/off.log" && ! grep -q "^coll/amcoll" "$WORK/off.log"; then
        pass "disabled: loaded, declines, never selected, says nothing"
    else
        fail "disabled: selected or verbose"
        grep -i "amcoll" "$WORK/off.log" | head -n 5 | sed 's/^/    | /'
    fi
else
    fail "disabled N=4 (exit or hang)"
    showlog off
fi

# ---------------------------------------------------------------- coll_amcoll_colls
if mpi some 3 "${ON[@]}" --mca coll_amcoll_colls "^allreduce,ibcast" -- $SHIM colls "$WORK/some" &&
   grep -q "^ok colls N=3" "$WORK/some.log" && $SHIM compare "$WORK/ref3" "$WORK/some" 3 >/dev/null 2>&1; then
    line=$(stats0 some)
    if echo "$line" | grep -q " bcast: routed [1-9][0-9]* (b [1-9][0-9]*, nb 0," &&
       echo "$line" | grep -q " allreduce: routed [1-9][0-9]* (b 0, nb [1-9]" &&
       echo "$line" | grep -q " reduce: routed [1-9]"; then
        pass "coll_amcoll_colls=^allreduce,ibcast leaves those two to Open MPI (ibcast and iallreduce still taken), results identical"
    else
        fail "coll_amcoll_colls=^allreduce,ibcast: $line"
    fi
else
    fail "coll_amcoll_colls N=3 (exit, hang or results differ)"
    showlog some
fi

# ---------------------------------------------------------------- self-checking programs
for np in 2 3 4; do
    if mpi "mixed$np" "$np" "${ON[@]}" -- $MIXED 1500 7 && grep -q "^ok mixed N=$np " "$WORK/mixed$np.log" &&
       [ "$(routed0 "mixed$np")" -gt 100 ]; then
        pass "test_mixed_nb N=$np: mixed blocking and non-blocking, checked ($(routed0 "mixed$np") taken on rank 0)"
    else
        fail "test_mixed_nb N=$np"
        showlog "mixed$np"
    fi
done
for sub in fast errors idup porder; do
    np=3
    [ "$sub" = errors ] && np=2
    if mpi "$sub" "$np" "${ON[@]}" -- $SHIM "$sub" && grep -q "^ok $sub N=$np" "$WORK/$sub.log" &&
       [ "$(routed0 "$sub")" -gt 0 ]; then
        pass "test_mpi_shim $sub N=$np under coll/amcoll"
    else
        fail "test_mpi_shim $sub N=$np"
        showlog "$sub"
    fi
done

# an amcoll error under MPI_ERRORS_ARE_FATAL: Open MPI's handler aborts
# with amcoll's message (N = 2: one rank fails, one abort)
mpi fatal 2 "${ON[@]}" -- $SHIM fatal
rc=$?
if [ "$rc" != 0 ] && [ "$rc" != 124 ] && grep -q "amcoll: message truncated" "$WORK/fatal.log"; then
    pass "MPI_ERRORS_ARE_FATAL aborts with amcoll's message (exit $rc)"
else
    fail "MPI_ERRORS_ARE_FATAL (exit $rc)"
    showlog fatal
fi

# ---------------------------------------------------------------- lifecycle, in place, fallback, threads
for np in 2 4; do
    if mpi "dup$np" "$np" "${ON[@]}" -- $TC dupfree 10000 && grep -q "^ok dupfree N=$np" "$WORK/dup$np.log" &&
       [ "$(grep -c "^coll/amcoll: took communicator MPI COMMUNICATOR" "$WORK/dup$np.log")" -ge 10000 ]; then
        pass "10,000 MPI_Comm_dup/free N=$np: each taken, no leak, clean finalize"
    else
        fail "10,000 MPI_Comm_dup/free N=$np"
        showlog "dup$np"
    fi
done
for np in 2 3 4; do
    if mpi "inplace$np" "$np" "${ON[@]}" -- $TC inplace && grep -q "^ok inplace N=$np" "$WORK/inplace$np.log" &&
       stats0 "inplace$np" | grep -q "fell through 0;"; then
        pass "MPI_IN_PLACE N=$np: allreduce, reduce, allgather, gather, iallreduce, scan, all taken"
    else
        fail "MPI_IN_PLACE N=$np"
        showlog "inplace$np"
    fi
done
if mpi fallback 3 "${ON[@]}" -- $TC fallback && grep -q "^ok fallback N=3" "$WORK/fallback.log" &&
   stats0 fallback | grep -q "allreduce: routed 1 ([^)]*) fell through 3 (type 1, op 2)"; then
    pass "fallback N=3: MINLOC, MAXLOC, long double right via the previous module; a user's op taken"
else
    fail "fallback N=3: $(stats0 fallback)"
    showlog fallback
fi
if mpi comms 4 "${ON[@]}" -- $TC comms && grep -q "^ok comms N=4" "$WORK/comms.log" &&
   [ "$(grep -c "^coll/amcoll: took communicator" "$WORK/comms.log")" -ge 7 ]; then
    pass "split, split_type, create, create_group, idup N=4: taken and right; an intercommunicator's allreduce right (Open MPI's)"
else
    fail "communicator creations N=4"
    showlog comms
fi
# Open MPI's own datatypes (no recorded arguments for MPI_Type_get_envelope)
# in the local group's collectives: MPI_Intercomm_merge's allgatherv
# bcasts an indexed type Open MPI built; once fatal at N=3 and 4
for np in 3 4; do
    if mpi "internal$np" "$np" "${ON[@]}" -- $TC internal && grep -q "^ok internal N=$np" "$WORK/internal$np.log" &&
       [ "$(routed0 "internal$np")" -gt 0 ]; then
        pass "Open MPI's internal datatypes N=$np: an intercommunicator's allgatherv, MPI_Intercomm_merge, right"
    else
        fail "Open MPI's internal datatypes N=$np (intercommunicator allgatherv, MPI_Intercomm_merge)"
        showlog "internal$np"
    fi
done
for np in 2 4; do
    if mpi "threads$np" "$np" "${ON[@]}" -- $TC threads && grep -q "^ok threads N=$np" "$WORK/threads$np.log" &&
       [ "$(routed0 "threads$np")" -ge 400 ]; then
        pass "MPI_THREAD_MULTIPLE N=$np: two threads' collectives on their own communicators"
    else
        fail "MPI_THREAD_MULTIPLE N=$np"
        showlog "threads$np"
    fi
done

# ---------------------------------------------------------------- amcoll cannot start on one rank
if mpi nostart 3 "${ON[@]}" --mca coll_amcoll_test_fail_rank 1 -- $TC comms &&
   grep -q "^ok comms N=3" "$WORK/nostart.log" &&
   grep -q "another rank could not start amcoll" "$WORK/nostart.log" &&
   ! grep -q "took communicator" "$WORK/nostart.log"; then
    pass "amcoll not starting on rank 1 of 3: every rank falls back, results right"
else
    fail "amcoll not starting on one rank"
    showlog nostart
fi

# ---------------------------------------------------------------- parameters
n=$(OMPI_MCA_mca_base_component_path="$COMP:$ompidir" ompi_info --param coll amcoll --level 9 2>/dev/null |
    grep -c 'parameter "coll_amcoll_\(enable\|priority\|np\|colls\|verbose\)"')
if [ "$n" = 5 ]; then
    pass "ompi_info --param coll amcoll --level 9 lists enable, priority, np, colls, verbose"
else
    fail "ompi_info lists $n of the 5 parameters"
fi

finish
