#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The whole test suite from a fresh checkout: installs what is missing,
# builds with -Wall -Wextra -Werror, runs the unit tests (fake transport) and
# the integration tests (real UCX under mpirun), then rebuilds with
# AddressSanitizer + UBSan and runs the unit tests again, and with
# ThreadSanitizer for the threaded ones, runs the fuzz target for a minute
# (tests/fuzz/, clang + libFuzzer), runs make distcheck, and last builds the
# Debian packages from a clean copy of the tree, installs them, uses them and
# purges them (tests/debian/). Ends with one line "N passed, N failed".
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

passed=0
failed=0

# Adds the PASS/FAIL counts of an automake test-suite.log summary; no log
# (the tests did not even build) is a failure.
tally() {
    local log=$1 p f e
    if [ ! -f "$log" ]; then
        echo "FAIL: no $log: the tests did not build or run"
        failed=$((failed + 1))
        return
    fi
    p=$(sed -n 's/^# PASS: *\([0-9]*\)/\1/p' "$log" | head -1)
    f=$(sed -n 's/^# FAIL: *\([0-9]*\)/\1/p' "$log" | head -1)
    e=$(sed -n 's/^# ERROR: *\([0-9]*\)/\1/p' "$log" | head -1)
    passed=$((passed + ${p:-0}))
    failed=$((failed + ${f:-0} + ${e:-0}))
}

step() { echo; echo "==== $*"; }

# script_step NAME SCRIPT: runs SCRIPT from build/ (log build/NAME.log),
# shows its PASS/FAIL lines and adds its closing "NAME: N passed, N failed";
# no such line (it died) counts one failure and shows the log's end.
script_step() {
    local name=$1 script=$2 log=build/$1.log p f rc
    ( cd build && bash "../$script" ) >"$log" 2>&1; rc=$?
    grep -E "^(PASS|FAIL):|^    \|" "$log"
    p=$(sed -n "s/^$name: \([0-9]*\) passed, \([0-9]*\) failed$/\1/p" "$log")
    f=$(sed -n "s/^$name: \([0-9]*\) passed, \([0-9]*\) failed$/\2/p" "$log")
    passed=$((passed + ${p:-0}))
    failed=$((failed + ${f:-1}))
    [ $rc -eq 0 ] || [ -n "$f" ] || tail -n 30 "$log"
}

step "build (-Wall -Wextra -Werror)"
./build.sh || { echo "run_all: build failed"; echo "0 passed, 1 failed"; exit 1; }

step "unit and integration tests"
# the test programs build two at a time; the tests then run one at a time
# (the integration scripts oversubscribe the node on their own)
( cd build && make -j2 check TESTS= >/dev/null && make -j1 check ) ; rc=$?
tally build/test-suite.log
[ -f build/tests/integration/run_integration.sh.log ] && cat build/tests/integration/run_integration.sh.log | grep -E "^(PASS|FAIL):|integration:" || true
[ $rc -eq 0 ] || { echo "---- failing test logs"; grep -l -E "^(FAIL|ERROR)" build/tests/*/*.trs 2>/dev/null | sed 's/\.trs$/.log/' | xargs -r tail -n 40; }

step "across hosts: an emulated two-node cluster (Slurm's srun, mpirun --hostfile, MPICH's Hydra)"
# tests/cluster/: namespaces for nodes, Slurm and munge from Debian, the
# programs the step above built
script_step cluster tests/cluster/run_cluster.sh

step "Open MPI component: the MPI test programs under coll/amcoll"
# tests/ompi/: the programs the unit and integration step built, plain MPI
# programs under mpirun with the build tree's mca_coll_amcoll.so enabled
if [ -e build/ompi/components/mca_coll_amcoll.so ]; then
    script_step component tests/ompi/run_component.sh
else
    echo "FAIL: build/ompi/components/mca_coll_amcoll.so not built (Open MPI's headers not found?)"
    failed=$((failed + 1))
fi

step "unit tests under AddressSanitizer + UBSan, control-structure locks on"
san="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g -O1"
AMC_BUILD_DIR=build-asan ./build.sh --disable-shared CFLAGS="$san" LDFLAGS="-fsanitize=address,undefined" ||
    { echo "run_all: sanitizer build failed"; failed=$((failed + 1)); }
if [ -f build-asan/Makefile ]; then
    # the fake-transport tests are one process each and assert no wall-clock
    # durations: two at a time on two cores halves the suite's slowest step
    jobs=$(nproc 2>/dev/null || echo 1)
    [ "$jobs" -gt 2 ] && jobs=2
    unit="$(ls tests/unit/test_*.c | sed 's/\.c$//' | tr '\n' ' ') tests/unit/run_coll_algs.sh"
    # AMCTEST_QUICK=1: the exhaustive and random explorations at a smaller
    # size (tests/unit/harness.h); the plain pass above ran them whole
    ( cd build-asan && AMCTEST_LOCKS=1 AMCTEST_QUICK=1 ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
        LSAN_OPTIONS=suppressions="$top/tests/lsan.supp" UBSAN_OPTIONS=print_stacktrace=1 \
        make -j"$jobs" check TESTS="$unit" ); rc=$?
    tally build-asan/test-suite.log
    [ $rc -eq 0 ] || grep -l -E "^(FAIL|ERROR)" build-asan/tests/unit/*.trs 2>/dev/null | sed 's/\.trs$/.log/' | xargs -r tail -n 40
fi

step "threaded unit tests under ThreadSanitizer"
# UCX's memory hooks (libucm) patch mmap/madvise at load, under TSan's own
# interceptors: off here, where no test touches UCX.
AMC_BUILD_DIR=build-tsan ./build.sh --disable-shared CFLAGS="-fsanitize=thread -g -O1" \
    LDFLAGS="-fsanitize=thread" ||
    { echo "run_all: ThreadSanitizer build failed"; failed=$((failed + 1)); }
if [ -f build-tsan/Makefile ]; then
    ( cd build-tsan && UCX_MEM_MMAP_HOOK_MODE=none TSAN_OPTIONS=second_deadlock_stack=1 \
        make -j1 check TESTS="tests/unit/test_threads tests/unit/test_shm tests/unit/test_shm_pull" ); rc=$?
    tally build-tsan/test-suite.log
    [ $rc -eq 0 ] || tail -n 60 build-tsan/tests/unit/test_threads.log build-tsan/tests/unit/test_shm.log \
        build-tsan/tests/unit/test_shm_pull.log
fi

step "fuzz target (libFuzzer, ASan + UBSan): forged messages beside legitimate collectives, 60 s"
# The seeds (tests/fuzz/corpus, earlier findings among them) run first; new
# inputs go to a scratch corpus, a crashing one to build-fuzz/ (replay it:
# build-fuzz/fuzz_coll FILE, with AMC_FUZZ_TRACE=1 for its story).
if tests/fuzz/build.sh >build-fuzz.log 2>&1; then
    scratch=$(mktemp -d)
    if ASAN_OPTIONS=malloc_context_size=5 build-fuzz/fuzz_coll -max_total_time=60 -max_len=128 \
           -entropic=0 -timeout=10 -print_final_stats=1 -artifact_prefix=build-fuzz/ \
           "$scratch" tests/fuzz/corpus >build-fuzz/fuzz.log 2>&1 &&
       grep -q "^Done [0-9]* runs" build-fuzz/fuzz.log; then
        echo "PASS: fuzz_coll ($(grep -o "^Done [0-9]* runs in [0-9]* second(s)" build-fuzz/fuzz.log))"
        passed=$((passed + 1))
    else
        echo "FAIL: fuzz_coll (last lines of build-fuzz/fuzz.log follow)"
        grep -v "^\"\|# Uses" build-fuzz/fuzz.log | tail -n 40
        failed=$((failed + 1))
    fi
    rm -rf "$scratch"
else
    echo "FAIL: fuzz target build (last lines of build-fuzz.log follow)"
    tail -n 30 build-fuzz.log
    failed=$((failed + 1))
fi

step "make distcheck (tarball builds, tests pass from a read-only source tree)"
# The packaging check: everything builds from the tarball (every test program
# included), and the tests that read files from the source tree pass from a
# read-only one: the layer check, the GOAL files, the integration and shim
# scripts at small rank counts. The other unit tests ran twice above (plain
# and sanitized) on the same code. AMC_SHM=0: the integration and shim runs
# here send everything through UCX, the way the runs above do not (the
# on-node mailboxes are on by default).
distcheck_tests="tests/check_layers.sh tests/unit/test_config tests/unit/test_coll tests/unit/test_goal_parse"
distcheck_tests+=" tests/integration/run_integration.sh tests/mpi/run_mpi_shim.sh"
if ( cd build && AMCTEST_NPROCS="1 2 4" AMCTEST_FEW_NPROCS="2" AMCTEST_COLL_FULL_NPROCS="2" \
         AMCTEST_COLL_NPROCS="1 2 4" AMCTEST_COLL_VARIANT_NPROCS="4" AMCTEST_THREADS_NPROCS="2" \
         AMCTEST_COMM_NPROCS="2" AMCTEST_REL_NPROCS="2" AMCTEST_REL_FLOOD_NPROCS="2" AMCTEST_PEER_NPROCS="2" \
         AMCTEST_SHIM_NPROCS="2 4" AMCTEST_GOAL_NPROCS="2" AMC_SHM=0 \
         make distcheck DISTCHECK_CONFIGURE_FLAGS=--enable-werror TESTS="$distcheck_tests" \
             >distcheck.log 2>&1 ); then
    echo "PASS: distcheck"
    passed=$((passed + 1))
else
    echo "FAIL: distcheck (last lines of build/distcheck.log follow)"
    tail -n 30 build/distcheck.log
    failed=$((failed + 1))
fi

step "Debian packages: built from a clean copy, lintian, installed, used, purged"
# tests/debian/run_packages.sh: dpkg-buildpackage of the tracked tree (the
# unit tests ran above: nocheck), lintian without errors, apt-get install of
# the .debs, a C program via pkg-config and an MPI program under the preloaded
# libamcoll_mpi and under the installed component, then the purge. Last: the
# packages are on the machine only while this step runs.
script_step packages tests/debian/run_packages.sh

echo
echo "${passed} passed, ${failed} failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
