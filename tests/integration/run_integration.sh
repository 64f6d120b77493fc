#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Integration tests: amcoll barriers over real UCX, ranks started by mpirun
# (PMIx), oversubscribed on however few cores the machine has.
#
# Run by `make check` (TESTS_ENVIRONMENT exports MPIRUN; the current directory
# is the build directory, $srcdir points at the sources) or by hand from the
# top build directory (the repository root for an in-tree build):
#
#     MPIRUN=mpirun bash tests/integration/run_integration.sh
#
# Knobs (environment; none starts with AMC_, which the library reserves):
#   MPIRUN           launcher (default: mpirun)
#   AMCTEST_BIN      test program (default: ./tests/integration/test_barrier_mpi)
#   (the data-collective and thread sections have knobs of their own, below)
#   AMCTEST_NPROCS   rank counts for the main sub-tests (default: 1 2 3 4 5 7 8 16 32)
#   AMCTEST_FEW_NPROCS rank counts for timeout/misuse/stale (default: 2 5 8)
#   AMCTEST_RUN_LIMIT  seconds before one mpirun is killed (default: 120)
#   AMCTEST_ITERS    barriers of the semantics sub-test (default chosen by N)
#   AMC_TIMEOUT      passed on for the ordinary sub-tests (default 60, so that
#                    a lost barrier fails instead of hanging); the timeout
#                    sub-test always runs with AMC_TIMEOUT=1
#
# Prints PASS:/FAIL: per run and "integration: X passed, Y failed"; exits 0
# only when everything passed (never 77: a missing program is a failure).

set -u

srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
MPIRUN=${MPIRUN:-mpirun}
NPROCS=${AMCTEST_NPROCS-"1 2 3 4 5 7 8 16 32"}
FEW_NPROCS=${AMCTEST_FEW_NPROCS-"2 5 8"}
RUN_LIMIT=${AMCTEST_RUN_LIMIT:-120}
DEFAULT_TIMEOUT=${AMC_TIMEOUT:-60}

passed=0
failed=0
failed_list=""

# ---------------------------------------------------------------- locate things

# locate_program NAME OVERRIDE: OVERRIDE if set, else the first executable
# NAME in the build tree, next to this script, or in the source tree.
locate_program() {
    local name=$1 override=$2 cand
    if [ -n "$override" ]; then
        echo "$override"
        return
    fi
    for cand in "./tests/integration/$name" "$(dirname "$0")/$name" \
                "$srcdir/tests/integration/$name"; do
        if [ -x "$cand" ]; then
            echo "$cand"
            return
        fi
    done
}

BIN=$(locate_program test_barrier_mpi "${AMCTEST_BIN:-}")
if [ -z "$BIN" ] || [ ! -x "$BIN" ]; then
    echo "FAIL: test program not found (looked for ./tests/integration/test_barrier_mpi;" \
         "build it with 'make tests/integration/test_barrier_mpi' or set AMCTEST_BIN)"
    echo "integration: 0 passed, 1 failed"
    exit 1
fi

if ! command -v "$MPIRUN" >/dev/null 2>&1; then
    echo "FAIL: launcher '$MPIRUN' not found (set MPIRUN)"
    echo "integration: 0 passed, 1 failed"
    exit 1
fi

if ! command -v timeout >/dev/null 2>&1; then
    echo "FAIL: coreutils 'timeout' not found; refusing to run without a hang guard"
    echo "integration: 0 passed, 1 failed"
    exit 1
fi

MPIRUN_ARGS=(--oversubscribe --bind-to none)
if [ "$(id -u)" = 0 ]; then
    MPIRUN_ARGS+=(--allow-run-as-root)
fi

SHM_DIR=/dev/shm
if [ ! -d "$SHM_DIR" ] || [ ! -w "$SHM_DIR" ]; then
    SHM_DIR=${TMPDIR:-/tmp}
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/amc_integration.XXXXXX") || exit 1
SHM_FILE=""
cleanup() {
    [ -n "$SHM_FILE" ] && rm -f "$SHM_FILE"
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "integration: program $BIN, launcher $MPIRUN ${MPIRUN_ARGS[*]}, shared files in $SHM_DIR"

# ---------------------------------------------------------------- one run

# run_one DESC NPROCS(0 = no launcher) AMC_TIMEOUT_VALUE SUBTEST [VAR=VALUE...]
# (the VAR=VALUE pairs are set for the run and forwarded to every rank; those
# of RANK_ENV go to the ranks alone, as mpirun's -x VAR=VALUE, not to the
# launcher: an LD_PRELOAD of a test's shim)
RANK_ENV=()
run_one() {
    local desc=$1 np=$2 tmo=$3 sub=$4
    shift 4
    local log="$WORK/run.log" rc t0 t1 expect kv
    local -a cmd envs=("$@")

    SHM_FILE=$(mktemp "$SHM_DIR/amc_test.XXXXXX") || {
        echo "FAIL: $desc (mktemp in $SHM_DIR failed)"
        failed=$((failed + 1)); failed_list="$failed_list\n  $desc"
        return
    }
    if [ "$np" = 0 ]; then
        cmd=("$BIN" "$sub" "$SHM_FILE")
        expect="ok $sub N=1"
    else
        cmd=("$MPIRUN" "${MPIRUN_ARGS[@]}" -x AMC_TIMEOUT)
        if [ -n "${AMCTEST_ITERS:-}" ]; then
            cmd+=(-x AMCTEST_ITERS)
        fi
        for kv in "${envs[@]}"; do
            cmd+=(-x "${kv%%=*}")
        done
        for kv in "${RANK_ENV[@]}"; do
            cmd+=(-x "$kv")
        done
        cmd+=(-np "$np" "$BIN" "$sub" "$SHM_FILE")
        expect="ok $sub N=$np"
    fi

    t0=$(date +%s.%N)
    env AMC_TIMEOUT="$tmo" "${envs[@]}" timeout -k 10 "$RUN_LIMIT" "${cmd[@]}" \
        </dev/null >"$log" 2>&1
    rc=$?
    t1=$(date +%s.%N)
    rm -f "$SHM_FILE"
    SHM_FILE=""
    local secs
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')

    if [ "$rc" = 0 ] && grep -qx "$expect" "$log"; then
        echo "PASS: $desc (${secs} s)"
        passed=$((passed + 1))
        if [ "$sub" = timeout ]; then
            # Show what the library logged about the timeouts (informational).
            grep -i -E 'time.?out|timed out' "$log" | grep -v '^ok ' | head -n 4 |
                sed 's/^/    log: /'
        fi
        return
    fi

    local why
    if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
        why="killed after ${RUN_LIMIT} s: hang"
    elif [ "$rc" = 0 ]; then
        why="exit 0 but no line '$expect'"
    else
        why="exit status $rc"
    fi
    echo "FAIL: $desc ($why, ${secs} s)"
    echo "    command: AMC_TIMEOUT=$tmo ${envs[*]} ${cmd[*]}"
    local lines
    lines=$(wc -l <"$log")
    if [ "$lines" -gt 80 ]; then
        # Too long to show whole: the test's own failure lines, then the rest.
        local nfail
        nfail=$(grep -c '^FAIL ' "$log")
        echo "    | ($lines lines of output, $nfail FAIL lines; first 40 FAIL lines:)"
        grep -E '^FAIL ' "$log" | head -n 40 | sed 's/^/    | /'
        echo "    | (last 30 other lines:)"
        grep -v -E '^FAIL ' "$log" | tail -n 30 | sed 's/^/    | /'
    else
        sed 's/^/    | /' "$log"
    fi
    failed=$((failed + 1))
    failed_list="$failed_list\n  $desc"
}

# ---------------------------------------------------------------- the runs

start=$(date +%s)

# Singleton: no launcher, the job has one rank.
for sub in semantics dup ibarrier misuse; do
    run_one "$sub, singleton (no launcher)" 0 "$DEFAULT_TIMEOUT" "$sub"
done

for np in $NPROCS; do
    for sub in semantics dup ibarrier; do
        run_one "$sub N=$np" "$np" "$DEFAULT_TIMEOUT" "$sub"
    done
done

for np in $FEW_NPROCS; do
    for sub in misuse stale; do
        run_one "$sub N=$np" "$np" "$DEFAULT_TIMEOUT" "$sub"
    done
    if [ "$np" -ge 2 ]; then
        run_one "timeout N=$np (AMC_TIMEOUT=1, one rank late in 3 phases)" "$np" 1 timeout
    fi
done
# The same timeouts with the barrier on the engine (the automatic choice
# where ranks share cores, so whatever the machine's cores): the late rank's
# barrier must still complete.
for alg in linear dissemination; do
    run_one "timeout N=5, $alg barrier on the engine (AMC_TIMEOUT=1)" 5 1 timeout \
        AMC_BARRIER_ALG=$alg
done

# Another UCX transport (TCP over loopback instead of shared memory): other
# message timing and ordering for the same barrier protocol.
for sub in semantics dup ibarrier; do
    run_one "$sub N=5 UCX_TLS=tcp,self" 5 "$DEFAULT_TIMEOUT" "$sub" UCX_TLS=tcp,self
done

# ---------------------------------------------------------------- data collectives
# tests/integration/test_coll_mpi: bcast, reduce, allreduce, gather, scatter,
# allgather, alltoall, the v-forms, reduce_scatter(_block), scan, exscan; every
# result checked against values each rank computes locally (see the program's
# header for the sub-tests).  Same run_one, with BIN switched to that program.
# Knobs:
#   AMCTEST_COLL_BIN          program (default: ./tests/integration/test_coll_mpi)
#   AMCTEST_COLL_FULL_NPROCS  rank counts for the full cross product (default: 1 2 3 4 5)
#   AMCTEST_COLL_NPROCS       rank counts for sample/nb/stress/badarg (default: 1 2 3 4 5 8 16 32)
#   AMCTEST_COLL_VARIANT_NPROCS rank counts for the other algorithms/protocols (default: 5 8)
#   AMCTEST_SEED, AMCTEST_STRESS_STEPS, AMCTEST_BIG_BYTES: passed on to every rank when set
COLL_FULL_NPROCS=${AMCTEST_COLL_FULL_NPROCS-"1 2 3 4 5"}
COLL_NPROCS=${AMCTEST_COLL_NPROCS-"1 2 3 4 5 8 16 32"}
COLL_VARIANT_NPROCS=${AMCTEST_COLL_VARIANT_NPROCS-"5 8"}

COLL_BIN=$(locate_program test_coll_mpi "${AMCTEST_COLL_BIN:-}")
if [ -z "$COLL_BIN" ] || [ ! -x "$COLL_BIN" ]; then
    echo "FAIL: data collective test program not found (looked for" \
         "./tests/integration/test_coll_mpi; build it with" \
         "'make tests/integration/test_coll_mpi' or set AMCTEST_COLL_BIN)"
    failed=$((failed + 1))
    failed_list="$failed_list\n  test_coll_mpi not found"
else
    coll_start=$(date +%s)
    BARRIER_BIN=$BIN
    BIN=$COLL_BIN
    echo "integration: data collectives, program $BIN"
    coll_env=()
    for var in AMCTEST_SEED AMCTEST_STRESS_STEPS AMCTEST_BIG_BYTES; do
        if [ -n "${!var:-}" ]; then
            coll_env+=("$var=${!var}")
        fi
    done

    for sub in sample nb stress badarg; do
        run_one "coll $sub, singleton (no launcher)" 0 "$DEFAULT_TIMEOUT" "$sub" "${coll_env[@]}"
    done
    for np in $COLL_FULL_NPROCS; do
        run_one "coll full N=$np" "$np" "$DEFAULT_TIMEOUT" full "${coll_env[@]}"
    done
    for np in $COLL_NPROCS; do
        for sub in sample nb stress badarg; do
            run_one "coll $sub N=$np" "$np" "$DEFAULT_TIMEOUT" "$sub" "${coll_env[@]}"
        done
    done

    # Algorithms and protocols the defaults do not pick for these sizes, and TCP
    # instead of shared memory (a shorter stress; AMCTEST_STRESS_STEPS still wins);
    # every block by rendezvous, pulled through the mailboxes or by UCX's;
    # eager messages of several tokens to the ranks of a node, rendezvous to the
    # others (AMC_RNDV_THRESH_NODE with AMC_NODE_SIZE's nodes).
    for np in $COLL_VARIANT_NPROCS; do
        for variant in "AMC_ALLREDUCE_ALG=linear AMC_ALLGATHER_ALG=ring AMC_BCAST_ALG=binomial" \
                       "AMC_ALLREDUCE_ALG=ring AMC_ALLGATHER_ALG=bruck AMC_BCAST_ALG=pipeline AMC_BCAST_SEGMENT=1000" \
                       "AMC_OVERSUB_LINEAR_MAX_RANKS=0 AMC_ALLREDUCE_ALG=recursive_doubling AMC_ALLTOALL_ALG=bruck AMC_REDUCE_SCATTER_BLOCK_ALG=recursive_halving AMC_ALLTOALLV_ALG=bruck AMC_ALLTOALLV_BRUCK_BLOCK=24" \
                       "AMC_RNDV_THRESH=1" \
                       "AMC_RNDV_THRESH=1 AMC_SHM_PULL=0" \
                       "AMC_RNDV_THRESH=1073741824" \
                       "AMC_RNDV_THRESH_NODE=65536 AMC_EAGER_TOKENS=3 AMC_NODE_SIZE=3" \
                       "UCX_TLS=tcp,self" \
                       "AMC_PROGRESS_THREAD=1"; do
            for sub in sample nb stress; do
                # shellcheck disable=SC2086 # the variant is a list of VAR=VALUE words
                run_one "coll $sub N=$np $variant" "$np" "$DEFAULT_TIMEOUT" "$sub" \
                    $variant AMCTEST_STRESS_STEPS=2000 "${coll_env[@]}"
            done
        done
    done

    # Cross-memory attach refused at run time (a seccomp profile, a
    # container): tests/integration/libcma_refuse.so (AMCTEST_CMA_REFUSE),
    # preloaded into the ranks only, fails every process_vm_readv and
    # process_vm_writev with EPERM. Every block by rendezvous, the largest
    # 1 MiB: the results must be right all the same (the data goes by UCX),
    # and the refusal said at warn level, by no rank twice. Not by every rank
    # in every run: one whose peers met the refusal first pulls from them no
    # more, nor do they from it, so it may never meet it itself (at N=2 rank
    # 0 said nothing in 4 runs of 20, where rank 1 refused before rank 0
    # wrote its half of the first pull). Not where the caller turned the
    # mailboxes or their pulls off (nothing to refuse).
    CMA_REFUSE=$(locate_program .libs/libcma_refuse.so "${AMCTEST_CMA_REFUSE:-}")
    if [ "${AMC_SHM:-1}" = 0 ] || [ "${AMC_SHM_PULL:-1}" = 0 ]; then
        echo "integration: cross-memory attach refused: not run (the caller set AMC_SHM=0 or AMC_SHM_PULL=0)"
    elif [ -z "$CMA_REFUSE" ] || [ ! -f "$CMA_REFUSE" ]; then
        echo "FAIL: the shim that refuses cross-memory attach not found (looked for" \
             "./tests/integration/.libs/libcma_refuse.so; build it with" \
             "'make tests/integration/libcma_refuse.la' or set AMCTEST_CMA_REFUSE)"
        failed=$((failed + 1))
        failed_list="$failed_list\n  libcma_refuse.so not found"
    else
        CMA_REFUSE=$(cd "$(dirname "$CMA_REFUSE")" && pwd)/$(basename "$CMA_REFUSE")
        RANK_ENV=(LD_PRELOAD="$CMA_REFUSE")
        for np in 2 4; do
            run_one "coll sample N=$np, cross-memory attach refused, all by rendezvous, to 1 MiB" \
                "$np" "$DEFAULT_TIMEOUT" sample AMC_RNDV_THRESH=1 AMC_LOG_LEVEL=warn \
                AMCTEST_BIG_BYTES=$((np * 1048576)) "${coll_env[@]}"
            said="" said_twice=0 said_all=0
            for ((r = 0; r < np; r++)); do
                times=$(grep -c "^\[amcoll [0-9]*:$r\] warn .*cross-memory attach is refused.*AMC_SHM_PULL=0" \
                    "$WORK/run.log")
                said="$said $times"
                said_all=$((said_all + times))
                [ "$times" -le 1 ] || said_twice=1
            done
            if [ "$said_all" -gt 0 ] && [ "$said_twice" = 0 ]; then
                echo "PASS: the refusal said at warn level N=$np, by no rank twice (times, by rank:$said)"
                passed=$((passed + 1))
            else
                echo "FAIL: the refusal at warn level N=$np (times said, by rank:$said; once at most" \
                     "each, and by some rank)"
                grep -i "cross-memory\|process_vm" "$WORK/run.log" | head -n 8 | sed 's/^/    | /'
                failed=$((failed + 1))
                failed_list="$failed_list\n  refusal of cross-memory attach not said, or twice, N=$np"
            fi
        done
        RANK_ENV=()
    fi

    # Node-aware algorithms: AMC_NODE_SIZE=k makes every k ranks a node, so
    # the two-level barrier, bcast, reduce and allreduce run on one machine
    # (uneven last nodes included); results checked as for the flat ones.
    # The debug log must say they were chosen (world spans the nodes).
    for case in "4 2" "5 3" "7 2" "8 3"; do
        read -r np k <<<"$case"
        run_one "coll sample N=$np AMC_NODE_SIZE=$k" "$np" "$DEFAULT_TIMEOUT" sample \
            AMC_NODE_SIZE="$k" AMC_LOG_LEVEL=debug "${coll_env[@]}"
        if ! grep -q "communicator 0x1: $np ranks on $(( (np + k - 1) / k )) nodes: node-aware" \
                "$WORK/run.log"; then
            echo "FAIL: coll sample N=$np AMC_NODE_SIZE=$k (no node-aware line in the debug log)"
            failed=$((failed + 1))
            failed_list="$failed_list\n  node-aware N=$np k=$k not chosen"
        fi
    done
    BIN=$BARRIER_BIN
    run_one "semantics N=8 AMC_NODE_SIZE=3" 8 "$DEFAULT_TIMEOUT" semantics AMC_NODE_SIZE=3
    echo "integration: data collectives took $(($(date +%s) - coll_start)) s"
fi

# ---------------------------------------------------------------- mixed non-blocking
# tests/integration/test_mixed_nb_mpi: MPICH's coll/nonblocking3 shape through
# amcoll's own API: a window of up to 20 outstanding collectives of every
# kind on each of 4 communicators (dups and splits of the world), blocking,
# non-blocking and persistent starts, user ops freed right after the start,
# completed by wait/test/waitall/testall/waitany/request_free drawn alike on
# every rank (what a test finds done differs per rank, so the ranks drift),
# every result checked; first the idle hook (amc_set_idle_hook). AMC_TIMEOUT
# (default 20 here) turns a lost step into a failure instead of a hang.
# Then at N=4 other protocols (every message pulled, one eager message per
# peer), at N=8 the trees, recursive doubling and fast paths that this
# oversubscribed machine does not choose by itself, and the hook set
# throughout. Knobs:
#   AMCTEST_MIXED_API_BIN     program (default: ./tests/integration/test_mixed_nb_mpi)
#   AMCTEST_MIXED_API_NPROCS  rank counts (default: 1 2 3 4 5 8)
#   AMCTEST_MIXED_API_ITERS   collectives per run (default by N: 10000 up to 4,
#                             6000 up to 8, 3000 beyond; the variants half)
#   AMCTEST_MIXED_API_TIMEOUT AMC_TIMEOUT of these runs (default 20)
#   AMCTEST_SEED              passed on when set
MIXED_API_NPROCS=${AMCTEST_MIXED_API_NPROCS-"1 2 3 4 5 8"}
MIXED_API_TIMEOUT=${AMCTEST_MIXED_API_TIMEOUT:-20}
MIXED_API_BIN=$(locate_program test_mixed_nb_mpi "${AMCTEST_MIXED_API_BIN:-}")
if [ -z "$MIXED_API_BIN" ] || [ ! -x "$MIXED_API_BIN" ]; then
    echo "FAIL: mixed non-blocking test program not found (looked for" \
         "./tests/integration/test_mixed_nb_mpi; build it with" \
         "'make tests/integration/test_mixed_nb_mpi' or set AMCTEST_MIXED_API_BIN)"
    failed=$((failed + 1))
    failed_list="$failed_list\n  test_mixed_nb_mpi not found"
else
    mixed_start=$(date +%s)
    SAVED_BIN=$BIN
    BIN=$MIXED_API_BIN
    mixed_env=()
    if [ -n "${AMCTEST_SEED:-}" ]; then
        mixed_env+=("AMCTEST_SEED=$AMCTEST_SEED")
    fi
    # mixed_iters N: collectives per run at N ranks
    mixed_iters() {
        if [ -n "${AMCTEST_MIXED_API_ITERS:-}" ]; then
            echo "$AMCTEST_MIXED_API_ITERS"
        elif [ "$1" -le 4 ]; then
            echo 10000
        elif [ "$1" -le 8 ]; then
            echo 6000
        else
            echo 3000
        fi
    }
    for np in $MIXED_API_NPROCS; do
        it=$(mixed_iters "$np")
        run_one "mixed nb (amcoll API) N=$np, $it collectives" "$np" "$MIXED_API_TIMEOUT" \
            mixed AMCTEST_MIXED_ITERS="$it" "${mixed_env[@]}"
    done
    for case in "4|AMC_RNDV_THRESH=1 AMC_EAGER_TOKENS=1" \
                "8|AMC_OVERSUB_LINEAR_MAX_RANKS=0" \
                "8|AMC_OVERSUB_LINEAR_MAX_RANKS=0 AMC_RNDV_THRESH=1 AMC_EAGER_TOKENS=1" \
                "4|AMCTEST_MIXED_HOOK=1"; do
        np=${case%%|*}
        variant=${case#*|}
        it=$(( $(mixed_iters "$np") / 2 ))
        # shellcheck disable=SC2086 # the variant is a list of VAR=VALUE words
        run_one "mixed nb (amcoll API) N=$np, $it collectives, $variant" "$np" \
            "$MIXED_API_TIMEOUT" mixed AMCTEST_MIXED_ITERS="$it" $variant "${mixed_env[@]}"
    done
    BIN=$SAVED_BIN
    echo "integration: mixed non-blocking took $(($(date +%s) - mixed_start)) s"
fi

# ---------------------------------------------------------------- threads
# tests/integration/test_threads_mpi: AMC_THREAD_MULTIPLE with 4 application
# threads on their own dup'd communicators, with and without the progress
# thread; an ibarrier nobody tests completed by the progress thread alone, and
# the thread's CPU use while it waits for late peers.
# Knobs:
#   AMCTEST_THREADS_BIN     program (default: ./tests/integration/test_threads_mpi)
#   AMCTEST_THREADS_NPROCS  rank counts (default: 2 4 8)
THREADS_NPROCS=${AMCTEST_THREADS_NPROCS-"2 4 8"}
THREADS_BIN=$(locate_program test_threads_mpi "${AMCTEST_THREADS_BIN:-}")
if [ -z "$THREADS_BIN" ] || [ ! -x "$THREADS_BIN" ]; then
    echo "FAIL: thread test program not found (looked for ./tests/integration/test_threads_mpi;" \
         "build it with 'make tests/integration/test_threads_mpi' or set AMCTEST_THREADS_BIN)"
    failed=$((failed + 1))
    failed_list="$failed_list\n  test_threads_mpi not found"
else
    SAVED_BIN=$BIN
    BIN=$THREADS_BIN
    for np in $THREADS_NPROCS; do
        run_one "threads N=$np MULTIPLE" "$np" "$DEFAULT_TIMEOUT" threads AMC_PROGRESS_THREAD=0
        run_one "threads N=$np MULTIPLE + progress thread" "$np" "$DEFAULT_TIMEOUT" threads \
            AMC_PROGRESS_THREAD=1
        run_one "untested ibarrier N=$np, progress thread" "$np" "$DEFAULT_TIMEOUT" untested \
            AMC_PROGRESS_THREAD=1 AMC_SLEEP_MSEC=60000
        run_one "untested ibarrier N=$np, progress thread, THREAD_SINGLE" "$np" \
            "$DEFAULT_TIMEOUT" untested AMC_PROGRESS_THREAD=1 AMC_SLEEP_MSEC=60000 \
            AMCTEST_THREAD_LEVEL=single
    done
    run_one "untested ibarrier N=2, progress thread, level 1 (FUNNELED) given SERIALIZED" 2 \
        "$DEFAULT_TIMEOUT" untested AMC_PROGRESS_THREAD=1 AMC_SLEEP_MSEC=60000 \
        AMCTEST_THREAD_LEVEL=funneled
    BIN=$SAVED_BIN
fi

# ---------------------------------------------------------------- communicators
# tests/integration/test_comm_mpi: context ids of dup and split: the
# issue's reproducer (two splits of the world), and the random script of
# tests/unit/test_comm_cid (dups and splits with random colours and keys on
# nested parents, frees interleaved), the same seed on every rank, every new
# communicator checked by collectives that depend on its exact membership.
# Knobs:
#   AMCTEST_COMM_BIN     program (default: ./tests/integration/test_comm_mpi)
#   AMCTEST_COMM_NPROCS  rank counts (default: 2 4 8)
#   AMCTEST_COMM_STEPS   creations of the random script (default: the program's, 1000)
#   AMCTEST_SEED         passed on when set (default: the program's, 1000 + N)
COMM_NPROCS=${AMCTEST_COMM_NPROCS-"2 4 8"}
COMM_BIN=$(locate_program test_comm_mpi "${AMCTEST_COMM_BIN:-}")
if [ -z "$COMM_BIN" ] || [ ! -x "$COMM_BIN" ]; then
    echo "FAIL: communicator test program not found (looked for ./tests/integration/test_comm_mpi;" \
         "build it with 'make tests/integration/test_comm_mpi' or set AMCTEST_COMM_BIN)"
    failed=$((failed + 1))
    failed_list="$failed_list\n  test_comm_mpi not found"
else
    SAVED_BIN=$BIN
    BIN=$COMM_BIN
    comm_env=()
    for var in AMCTEST_SEED AMCTEST_COMM_STEPS; do
        if [ -n "${!var:-}" ]; then
            comm_env+=("$var=${!var}")
        fi
    done
    run_one "comm reproducer, singleton (no launcher)" 0 "$DEFAULT_TIMEOUT" reproducer
    for np in $COMM_NPROCS; do
        run_one "comm reproducer N=$np" "$np" "$DEFAULT_TIMEOUT" reproducer
        run_one "comm random N=$np" "$np" "$DEFAULT_TIMEOUT" random "${comm_env[@]}"
    done
    # lazy connection: the endpoints a barrier, a dup and a split
    # make, counted by the library; AMC_STATS=1 prints the counters at
    # amc_finalize, and that line is checked too
    for np in 5 8; do
        run_one "comm lazy linear barrier N=$np" "$np" "$DEFAULT_TIMEOUT" lazy AMC_BARRIER_ALG=linear
        run_one "comm lazy dissemination barrier N=$np" "$np" "$DEFAULT_TIMEOUT" lazy \
            AMC_BARRIER_ALG=dissemination
        run_one "comm lazy N=$np AMC_SHM=0 (UCX endpoints only)" "$np" "$DEFAULT_TIMEOUT" lazy AMC_SHM=0
        run_one "comm lazy N=$np" "$np" "$DEFAULT_TIMEOUT" lazy AMC_STATS=1
        if grep -q "^amcoll stats rank 0: ranks $np endpoints [0-9]" "$WORK/run.log"; then
            echo "PASS: stats line N=$np"
            passed=$((passed + 1))
        else
            echo "FAIL: stats line N=$np (no 'amcoll stats rank 0: ranks $np endpoints' with AMC_STATS=1)"
            failed=$((failed + 1))
            failed_list="$failed_list\n  stats line N=$np"
        fi
    done
    # mailboxes: used by default between ranks of a node, not
    # with AMC_SHM=0, and nothing of ours left in /dev/shm after a normal
    # exit or after every rank was SIGKILLed (the inboxes are memfds)
    for np in 2 4; do
        [ "${AMC_SHM:-1}" = 0 ] && break # the caller turned them off: nothing to look at
        shm_before=$(ls -A "$SHM_DIR" 2>/dev/null | sort)
        run_one "mailboxes used N=$np" "$np" "$DEFAULT_TIMEOUT" mbox
        run_one "mailboxes off N=$np (AMC_SHM=0)" "$np" "$DEFAULT_TIMEOUT" mbox AMC_SHM=0
        AMC_TIMEOUT=$DEFAULT_TIMEOUT timeout -k 10 "$RUN_LIMIT" "$MPIRUN" "${MPIRUN_ARGS[@]}" \
            -x AMC_TIMEOUT -np "$np" "$BIN" mbox_kill </dev/null >"$WORK/kill.log" 2>&1
        killed=$(grep -c "^mbox rank [0-9]*: AMC_SHM=1 mailboxes_out=[1-9]" "$WORK/kill.log")
        sleep 1
        # Only names this job can leave: amcoll's (amc*, less this script's
        # amc_test.*) and UCX's (ucx_shm_posix_*). The ranks are no MPI
        # processes, so a vader_segment.* (or anything else new) is another
        # job's, one that runs beside this (make -j check, a second user).
        left=$(comm -13 <(echo "$shm_before") <(ls -A "$SHM_DIR" 2>/dev/null | sort) |
            grep -E '^(amc|ucx_)' | grep -v '^amc_test\.' || true)
        if [ "$killed" = "$np" ] && [ -z "$left" ]; then
            echo "PASS: nothing left in $SHM_DIR after a normal exit and a SIGKILL of all $np ranks"
            passed=$((passed + 1))
        else
            echo "FAIL: leftovers N=$np ($killed of $np ranks used mailboxes before the kill;" \
                 "new in $SHM_DIR: ${left:-nothing})"
            sed 's/^/    | /' "$WORK/kill.log" | tail -n 20
            failed=$((failed + 1))
            failed_list="$failed_list\n  leftovers N=$np"
        fi
    done
    BIN=$SAVED_BIN
fi

# ---------------------------------------------------------------- reliability
# tests/integration/test_reliability_mpi: the API's promise under misuse:
# a clear error, never a crash, a hang or a silent wrong answer.
# algmismatch runs under tests/integration/rank_env.sh, which gives rank 1
# other AMC_ALLREDUCE_ALG / AMC_BCAST_ALG values than the rest; rootarg has
# scatterv / gatherv calls whose root (or one other rank) passes a bad
# argument; flood starts 10,000 ibcasts per rank without waiting, retrying
# the starts the bound on outstanding collectives refuses.
# Knobs:
#   AMCTEST_REL_BIN     program (default: ./tests/integration/test_reliability_mpi)
#   AMCTEST_REL_NPROCS  rank counts (default: 2 4 8)
#   AMCTEST_REL_FLOOD_NPROCS  rank counts of the flood (default: 2 4)
REL_NPROCS=${AMCTEST_REL_NPROCS-"2 4 8"}
REL_FLOOD_NPROCS=${AMCTEST_REL_FLOOD_NPROCS-"2 4"}
REL_BIN=$(locate_program test_reliability_mpi "${AMCTEST_REL_BIN:-}")
REL_WRAP=$srcdir/tests/integration/rank_env.sh
if [ -z "$REL_BIN" ] || [ ! -x "$REL_BIN" ]; then
    echo "FAIL: reliability test program not found (looked for" \
         "./tests/integration/test_reliability_mpi; build it with" \
         "'make tests/integration/test_reliability_mpi' or set AMCTEST_REL_BIN)"
    failed=$((failed + 1))
    failed_list="$failed_list\n  test_reliability_mpi not found"
else
    SAVED_BIN=$BIN
    REL_BIN=$(cd "$(dirname "$REL_BIN")" && pwd)/$(basename "$REL_BIN")
    for np in $REL_NPROCS; do
        BIN=$REL_WRAP
        run_one "alg mismatch N=$np (rank 1: allreduce ring, bcast pipeline)" "$np" \
            "$DEFAULT_TIMEOUT" algmismatch AMCTEST_WRAPPED="$REL_BIN" AMCTEST_ODD_RANK=1 \
            "AMCTEST_ODD_ENV=AMC_ALLREDUCE_ALG=ring AMC_BCAST_ALG=pipeline AMC_BCAST_SEGMENT=1024" \
            "AMCTEST_OTHER_ENV=AMC_ALLREDUCE_ALG=recursive_doubling AMC_BCAST_ALG=binomial"
        BIN=$REL_BIN
        run_one "root-only argument errors N=$np" "$np" "$DEFAULT_TIMEOUT" rootarg
    done
    for np in $REL_NPROCS; do
        for try in 1 2 3; do
            run_one "finalize with an ibarrier and an iallreduce pending N=$np (run $try)" \
                "$np" "$DEFAULT_TIMEOUT" finalize
        done
    done
    for np in $REL_FLOOD_NPROCS; do
        run_one "flood of 10000 ibcasts N=$np" "$np" "$DEFAULT_TIMEOUT" flood
        run_one "flood of 10000 ibcasts N=$np AMC_EARLY_MAX=64" "$np" "$DEFAULT_TIMEOUT" flood \
            AMC_EARLY_MAX=64
    done
    BIN=$SAVED_BIN
fi

# ---------------------------------------------------------------- GOAL
# GOAL schedules: tests/integration/test_goal_mpi builds an
# allreduce and an alltoall through the C interface and checks their data
# over 4 restarts; amc_goal run executes the Schedgen-style files of
# tests/goal/ (each at its num_ranks); an 8-rank allreduce exported from the
# built-in runs with --timeline, whose JSON must parse and whose events pair
# up (every B with an E, every message's start with its end).
# Knobs:
#   AMCTEST_GOAL_NPROCS  rank counts of the data test (default: 2 to 8)
GOAL_NPROCS=${AMCTEST_GOAL_NPROCS-"2 3 4 5 6 7 8"}
GOAL_BIN=$(locate_program test_goal_mpi "${AMCTEST_GOAL_BIN:-}")
GOAL_TOOL=""
for cand in ./amc_goal "$srcdir/amc_goal"; do
    if [ -x "$cand" ]; then GOAL_TOOL=$cand; break; fi
done
goal_fail() {
    echo "FAIL: $1"
    failed=$((failed + 1))
    failed_list="$failed_list\n  $1"
}
if [ -z "$GOAL_BIN" ] || [ ! -x "$GOAL_BIN" ] || [ -z "$GOAL_TOOL" ]; then
    goal_fail "GOAL: test_goal_mpi or amc_goal not built"
else
    SAVED_BIN=$BIN
    BIN=$GOAL_BIN
    for np in $GOAL_NPROCS; do
        run_one "GOAL allreduce and alltoall with data N=$np" "$np" "$DEFAULT_TIMEOUT" data
    done
    BIN=$SAVED_BIN
    for f in "$srcdir"/tests/goal/*.goal; do
        np=$(awk '$1 == "num_ranks" { print $2; exit }' "$f")
        desc="GOAL file $(basename "$f") N=$np"
        if env AMC_TIMEOUT="$DEFAULT_TIMEOUT" timeout -k 10 "$RUN_LIMIT" "$MPIRUN" \
               "${MPIRUN_ARGS[@]}" -x AMC_TIMEOUT -np "$np" "$GOAL_TOOL" run --iters 3 "$f" \
               </dev/null >"$WORK/goal.log" 2>&1 && grep -q '^total: ' "$WORK/goal.log" &&
           [ "$(grep -c '^rank [0-9]*: ' "$WORK/goal.log")" = "$np" ]; then
            echo "PASS: $desc ($(grep '^total: ' "$WORK/goal.log" | cut -d' ' -f2-3))"
            passed=$((passed + 1))
        else
            goal_fail "$desc"
            sed 's/^/    | /' "$WORK/goal.log" | tail -n 20
        fi
    done
    desc="AMC_TIMELINE of built-in and GOAL collectives N=2 (rank files merged, JSON valid)"
    : >"$WORK/shm"
    # AMC_FAST_MAX=64: the built-in allreduce (148 B) on the engine, whose
    # acts the timeline records (at N=2 the barrier's rounds would carry it)
    if env AMC_TIMEOUT="$DEFAULT_TIMEOUT" AMC_TIMELINE="$WORK/at" AMC_FAST_MAX=64 \
           timeout -k 10 "$RUN_LIMIT" "$MPIRUN" "${MPIRUN_ARGS[@]}" -x AMC_TIMEOUT \
           -x AMC_TIMELINE -x AMC_FAST_MAX -np 2 "$GOAL_BIN" data \
           "$WORK/shm" </dev/null >"$WORK/goal.log" 2>&1 &&
       "$GOAL_TOOL" timeline "$WORK/atl" "$WORK/at.0.tl" "$WORK/at.1.tl" >>"$WORK/goal.log" 2>&1 &&
       python3 -c '
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
colls = {e["args"]["coll"] for e in ev if e["ph"] == "B"}
assert {"goal", "allreduce"} <= colls, colls
assert {e["pid"] for e in ev} == {0, 1}
' "$WORK/atl.json"; then
        echo "PASS: $desc"
        passed=$((passed + 1))
    else
        goal_fail "$desc"
        sed 's/^/    | /' "$WORK/goal.log" | tail -n 20
    fi
    desc="GOAL timeline of an 8-rank allreduce (JSON valid, events paired)"
    if "$GOAL_TOOL" export allreduce auto 8 4096 >"$WORK/ar8.goal" &&
       env AMC_TIMEOUT="$DEFAULT_TIMEOUT" timeout -k 10 "$RUN_LIMIT" "$MPIRUN" \
           "${MPIRUN_ARGS[@]}" -x AMC_TIMEOUT -np 8 "$GOAL_TOOL" run --timeline "$WORK/tl" \
           "$WORK/ar8.goal" </dev/null >"$WORK/goal.log" 2>&1 &&
       python3 -m json.tool "$WORK/tl.json" >/dev/null &&
       python3 - "$WORK/tl.json" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
opened = {}
for e in ev:
    if e["ph"] in ("B", "E"):
        k = (e["pid"], e["tid"], e["name"])
        opened[k] = opened.get(k, 0) + (1 if e["ph"] == "B" else -1)
        assert opened[k] >= 0, "E before its B: %r" % (k,)
assert all(v == 0 for v in opened.values()), "unpaired B/E"
starts = {e["id"] for e in ev if e["ph"] == "s"}
ends = {e["id"] for e in ev if e["ph"] == "f"}
assert starts and starts == ends, "message arrows unpaired"
ranks = {e["pid"] for e in ev}
assert ranks == set(range(8)), "ranks %r" % ranks
nb = sum(1 for e in ev if e["ph"] == "B")
assert all(e["args"]["released_by"] for e in ev if e["ph"] == "B")
print("timeline: %d acts, %d messages, 8 ranks" % (nb, len(starts)))
PY
    then
        echo "PASS: $desc"
        passed=$((passed + 1))
    else
        goal_fail "$desc"
        sed 's/^/    | /' "$WORK/goal.log" | tail -n 20
    fi
fi

# ---------------------------------------------------------------- N=2 exchanges within the call
# tests/integration/test_pair_mpi: blocking barriers and small exchanges at
# N=2 that read the peer's message straight from its mailbox: results (in
# place and not, signed zeros alike on both ranks), the path taken (most
# calls with mailboxes, none without: AMC_SHM=0 runs), a late peer (the early
# rank goes on the machine, the late one ends within its call), another
# communicator's message first and a non-blocking call outstanding, counts
# and collectives that differ (errors on both ranks, the communicator usable
# after). Knob: AMCTEST_PAIR_BIN program (default:
# ./tests/integration/test_pair_mpi).
PAIR_BIN=$(locate_program test_pair_mpi "${AMCTEST_PAIR_BIN:-}")
if [ -z "$PAIR_BIN" ] || [ ! -x "$PAIR_BIN" ]; then
    echo "FAIL: N=2 exchange test program not found (looked for" \
         "./tests/integration/test_pair_mpi; build it with" \
         "'make tests/integration/test_pair_mpi' or set AMCTEST_PAIR_BIN)"
    failed=$((failed + 1))
    failed_list="$failed_list\n  test_pair_mpi not found"
else
    SAVED_BIN=$BIN
    BIN=$PAIR_BIN
    run_one "exchanges within the call N=2" 2 "$DEFAULT_TIMEOUT" pair
    BIN=$SAVED_BIN
fi

# ---------------------------------------------------------------- every N within the call
# tests/integration/test_within_mpi: blocking barriers and small collectives
# on the barrier's rounds that run within their call at every N
# (am_coll/barrier/rounds_now.c), with the algorithms of a node with a core
# per rank (AMC_OVERSUB_LINEAR_MAX_RANKS=0): every form's results against
# their values, the engine's and the machine's, bit for bit, at N = 1..8;
# the path taken (barriers, allreduces and allgathers at every N, Bruck's off
# powers of two, alltoalls where AMC_ALLTOALL_ALG=bruck, reduce_scatter_blocks
# where AMC_REDUCE_SCATTER_BLOCK_ALG=recursive_halving, the rooted ones and
# scans past N=2 as trees; none with AMC_SHM=0); a late rank (its partner
# goes on on the machine, it ends within its call); another communicator's
# message first and a non-blocking call outstanding; counts and collectives
# that differ (the same error on every rank; a tree's where a result needs
# what differs). Knob: AMCTEST_WITHIN_BIN program (default:
# ./tests/integration/test_within_mpi).
WITHIN_BIN=$(locate_program test_within_mpi "${AMCTEST_WITHIN_BIN:-}")
if [ -z "$WITHIN_BIN" ] || [ ! -x "$WITHIN_BIN" ]; then
    echo "FAIL: within-the-call test program not found (looked for" \
         "./tests/integration/test_within_mpi; build it with" \
         "'make tests/integration/test_within_mpi' or set AMCTEST_WITHIN_BIN)"
    failed=$((failed + 1))
    failed_list="$failed_list\n  test_within_mpi not found"
else
    SAVED_BIN=$BIN
    BIN=$WITHIN_BIN
    for np in 1 2 3 4 5 6 7 8; do
        run_one "within the call N=$np" "$np" "$DEFAULT_TIMEOUT" within \
            AMC_OVERSUB_LINEAR_MAX_RANKS=0
    done
    for np in 2 5; do
        run_one "within the call N=$np AMC_SHM=0 (none)" "$np" "$DEFAULT_TIMEOUT" within \
            AMC_OVERSUB_LINEAR_MAX_RANKS=0 AMC_SHM=0
    done
    for np in 3 4 6; do
        run_one "within the call N=$np AMC_ALLTOALL_ALG=bruck, rsb recursive_halving" "$np" \
            "$DEFAULT_TIMEOUT" within AMC_OVERSUB_LINEAR_MAX_RANKS=0 AMC_ALLTOALL_ALG=bruck \
            AMC_REDUCE_SCATTER_BLOCK_ALG=recursive_halving
    done
    BIN=$SAVED_BIN
fi

# ---------------------------------------------------------------- a call that repeats the last
# tests/integration/test_memo_mpi: a blocking call that repeats its
# communicator's last one on the barrier's rounds skips its checks
# (am_coll/api/api_memo.h): loops of the ten collectives it keeps (results
# right; at N=2 all but each loop's first two calls from the memo), the
# same buffers with the count, datatype, op, AMC_IN_PLACE or root changed
# call by call, an op that does not apply after the memo holds the call,
# a freed communicator's handle and a call after amc_finalize. Knob:
# AMCTEST_MEMO_BIN program (default: ./tests/integration/test_memo_mpi).
MEMO_BIN=$(locate_program test_memo_mpi "${AMCTEST_MEMO_BIN:-}")
if [ -z "$MEMO_BIN" ] || [ ! -x "$MEMO_BIN" ]; then
    echo "FAIL: memo test program not found (looked for" \
         "./tests/integration/test_memo_mpi; build it with" \
         "'make tests/integration/test_memo_mpi' or set AMCTEST_MEMO_BIN)"
    failed=$((failed + 1))
    failed_list="$failed_list\n  test_memo_mpi not found"
else
    SAVED_BIN=$BIN
    BIN=$MEMO_BIN
    run_one "a call that repeats the last N=2" 2 "$DEFAULT_TIMEOUT" memo
    run_one "a call that repeats the last N=3" 3 "$DEFAULT_TIMEOUT" memo
    BIN=$SAVED_BIN
fi

# ---------------------------------------------------------------- dead peers
# tests/integration/test_peer_mpi: the last rank
# dies (SIGKILL, or abort()) in a loop of barriers or allreduces, under
# mpirun --mca orte_enable_recovery 1 (the job survives it) and without
# AMC_TIMEOUT. Each survivor must get AMC_ERR_PEER within 2 s of the death
# (the loop, and a non-blocking collective outstanding on a dup), then at once
# from every later call on communicators with the dead rank, keep working on
# the half of the world without it, and return from amc_finalize within 10 s;
# "finalize": the survivors finalize with collectives pending right after the
# death. mpirun's exit status reports the dead rank, so the survivors' result
# files are checked instead, one per rank. "sleeper": the victim is killed
# asleep on its doorbell in a barrier, whose message it had sent, at N=2;
# rank 0's next barriers ring the dead rank's bell, and it must get
# AMC_ERR_PEER, not die of SIGPIPE (the bell was a pipe whose only reader
# was the victim). Run 20 times (0.8 s each): each run is one chance.
# Knobs:
#   AMCTEST_PEER_BIN     program (default: ./tests/integration/test_peer_mpi)
#   AMCTEST_PEER_NPROCS  rank counts (default: 2 4)
#   AMCTEST_SLEEPER_RUNS runs of "sleeper" (default 20; not with AMC_SHM=0,
#                        which has no doorbells)
PEER_NPROCS=${AMCTEST_PEER_NPROCS-"2 4"}
SLEEPER_RUNS=${AMCTEST_SLEEPER_RUNS:-20}
PEER_BIN=$(locate_program test_peer_mpi "${AMCTEST_PEER_BIN:-}")

# run_peer DESC NPROCS SUBTEST DEATH OP
run_peer() {
    local desc=$1 np=$2 sub=$3 death=$4 op=$5
    local dir log="$WORK/peer.log" rc t0 t1 secs r bad="" notes=""

    dir=$(mktemp -d "$WORK/peer.XXXXXX") || return
    t0=$(date +%s.%N)
    env -u AMC_TIMEOUT AMCTEST_DEATH="$death" AMCTEST_OP="$op" \
        timeout -k 10 "$PEER_RUN_LIMIT" "$MPIRUN" "${MPIRUN_ARGS[@]}" \
        --mca orte_enable_recovery 1 -x AMCTEST_DEATH -x AMCTEST_OP \
        -np "$np" "$PEER_BIN" "$sub" "$dir" </dev/null >"$log" 2>&1
    rc=$?
    t1=$(date +%s.%N)
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
    # a launcher killed on a hang may leave its ranks behind: this run's own
    # (the result directory in their arguments is unique to it)
    pgrep -f -- "$PEER_BIN $sub $dir" | xargs -r kill -9 2>/dev/null
    for ((r = 0; r < np - 1; r++)); do
        if [ ! -f "$dir/rank.$r" ] || ! head -n 1 "$dir/rank.$r" | grep -q '^ok '; then
            bad="$bad $r"
        else
            notes="$notes; rank $r: $(tail -n 1 "$dir/rank.$r")"
        fi
    done
    if [ -z "$bad" ]; then
        echo "PASS: $desc (${secs} s)"
        echo "    ${notes#; }"
        passed=$((passed + 1))
    else
        echo "FAIL: $desc (survivors without a result:$bad; mpirun status $rc" \
             "$([ "$rc" = 124 ] || [ "$rc" = 137 ] && echo "(killed after $PEER_RUN_LIMIT s: hang)"), ${secs} s)"
        for r in $bad; do
            [ -f "$dir/rank.$r" ] && sed "s/^/    | rank $r: /" "$dir/rank.$r"
        done
        tail -n 30 "$log" | sed 's/^/    | /'
        failed=$((failed + 1))
        failed_list="$failed_list\n  $desc"
    fi
    rm -rf "$dir"
}

if [ -z "$PEER_BIN" ] || [ ! -x "$PEER_BIN" ]; then
    echo "FAIL: dead-peer test program not found (looked for ./tests/integration/test_peer_mpi;" \
         "build it with 'make tests/integration/test_peer_mpi' or set AMCTEST_PEER_BIN)"
    failed=$((failed + 1))
    failed_list="$failed_list\n  test_peer_mpi not found"
else
    PEER_RUN_LIMIT=60
    peer_start=$(date +%s)
    for np in $PEER_NPROCS; do
        run_peer "dead peer N=$np: SIGKILL in a barrier loop" "$np" loop sigkill barrier
        run_peer "dead peer N=$np: abort() in an allreduce loop" "$np" loop abort allreduce
        if [ "$np" -ge 4 ]; then
            run_peer "dead peer N=$np: SIGKILL in an allreduce loop" "$np" loop sigkill allreduce
            run_peer "dead peer N=$np: abort() in a barrier loop" "$np" loop abort barrier
        fi
        # 1 MiB bcasts: the death falls inside pulls, either side of one
        run_peer "dead peer N=$np: SIGKILL in a 1 MiB bcast loop" "$np" loop sigkill bcast
        run_peer "finalize after a SIGKILL, collectives pending N=$np" "$np" finalize sigkill barrier
    done
    if [ "${AMC_SHM:-1}" = 0 ]; then
        echo "integration: a peer killed asleep: not run (the caller set AMC_SHM=0: no doorbells)"
    else
        for ((run = 1; run <= SLEEPER_RUNS; run++)); do
            run_peer "dead peer N=2: SIGKILL asleep in a barrier, rank 0 rings its bell (run $run)" \
                2 sleeper sigkill barrier
        done
    fi
    echo "integration: dead peers took $(($(date +%s) - peer_start)) s"
fi

# ------------------------------------------------- revoke, agree, shrink
# tests/integration/test_shrink_mpi: a rank SIGKILLed at a random iteration
# of a loop of 300 allreduces (an iterative sum, each result checked), under
# mpirun --mca orte_enable_recovery 1 without AMC_TIMEOUT. Every survivor
# must get an error within 1 s of the death, revoke, shrink, go on from the
# iteration all reached, with right sums on the shrunk communicator, and end
# on N minus the dead; "shrink victim": a second rank dies 0-1 ms into the
# first shrink (in or out of it on every rank alike; it does not go on). Each configuration
# runs AMCTEST_SHRINK_RUNS times (default 5; each run a new death point).
#   AMCTEST_SHRINK_BIN     program (default: ./tests/integration/test_shrink_mpi)
#   AMCTEST_SHRINK_NPROCS  rank counts (default: 3 5)
SHRINK_NPROCS=${AMCTEST_SHRINK_NPROCS-"3 5"}
SHRINK_RUNS=${AMCTEST_SHRINK_RUNS:-5}
SHRINK_BIN=$(locate_program test_shrink_mpi "${AMCTEST_SHRINK_BIN:-}")

# run_shrink DESC NPROCS MODE [VAR=VALUE ...]: the survivors' files decide
run_shrink() {
    local desc=$1 np=$2 mode=$3 dir log="$WORK/shrink.log" rc bad="" notes="" f n=0 xs=()
    local want=$((np - 1))
    shift 3
    for f in "$@"; do
        xs+=(-x "$f")
        case $f in AMCTEST_SHRINK_VICTIM=*) want=$((np - 2)) ;; esac
    done
    dir=$(mktemp -d "$WORK/shrink.XXXXXX") || return
    env -u AMC_TIMEOUT "$@" timeout -k 10 60 "$MPIRUN" "${MPIRUN_ARGS[@]}" \
        --mca orte_enable_recovery 1 "${xs[@]}" -np "$np" "$SHRINK_BIN" "$mode" "$dir" \
        </dev/null >"$log" 2>&1
    rc=$?
    pgrep -f -- "$SHRINK_BIN $mode $dir" | xargs -r kill -9 2>/dev/null
    for f in "$dir"/rank.*; do
        [ -f "$f" ] || continue
        n=$((n + 1))
        if head -n 1 "$f" | grep -q '^ok '; then
            notes="$notes; ${f##*/}: $(head -n 1 "$f" | cut -c4-)"
        else
            bad="$bad ${f##*/}"
        fi
    done
    if [ -z "$bad" ] && [ "$n" = "$want" ] && [ "$rc" != 124 ] && [ "$rc" != 137 ]; then
        echo "PASS: $desc"
        echo "    ${notes#; }"
        passed=$((passed + 1))
    else
        echo "FAIL: $desc (results from $n ranks of $want, failed:$bad; mpirun status $rc" \
             "$([ "$rc" = 124 ] || [ "$rc" = 137 ] && echo "(killed after 60 s: hang)"))"
        for f in "$dir"/rank.*; do
            [ -f "$f" ] && sed "s/^/    | ${f##*/}: /" "$f"
        done
        tail -n 30 "$log" | sed 's/^/    | /'
        failed=$((failed + 1))
        failed_list="$failed_list\n  $desc"
    fi
    rm -rf "$dir"
}

if [ -z "$SHRINK_BIN" ] || [ ! -x "$SHRINK_BIN" ]; then
    echo "FAIL: test_shrink_mpi not found (build it with 'make tests/integration/test_shrink_mpi')"
    failed=$((failed + 1))
    failed_list="$failed_list\n  test_shrink_mpi not found"
else
    shrink_start=$(date +%s)
    for np in $SHRINK_NPROCS; do
        for ((run = 1; run <= SHRINK_RUNS; run++)); do
            run_shrink "shrink N=$np: SIGKILL in an allreduce loop (run $run)" "$np" loop
            [ "$np" -ge 3 ] && run_shrink "shrink N=$np: SIGKILL in the loop, rank 1 killed in the shrink (run $run)" \
                "$np" loop AMCTEST_SHRINK_VICTIM=1
        done
    done
    run_shrink_revoke() {
        local dir rc bad="" n=0 f
        dir=$(mktemp -d "$WORK/revoke.XXXXXX") || return
        env -u AMC_TIMEOUT timeout -k 10 60 "$MPIRUN" "${MPIRUN_ARGS[@]}" -np 4 "$SHRINK_BIN" \
            revoke "$dir" </dev/null >"$WORK/revoke.log" 2>&1
        rc=$?
        for f in "$dir"/rank.*; do
            [ -f "$f" ] || continue
            n=$((n + 1))
            head -n 1 "$f" | grep -q '^ok .*size=4 ' || bad="$bad ${f##*/}"
        done
        if [ "$rc" = 0 ] && [ "$n" = 4 ] && [ -z "$bad" ]; then
            echo "PASS: revoke N=4 without a failure: every rank's call ends, the shrink keeps all"
            echo "    $(head -n 1 "$dir/rank.0" | cut -c4-)"
            passed=$((passed + 1))
        else
            echo "FAIL: revoke N=4 without a failure (mpirun status $rc, $n results, bad:$bad)"
            cat "$dir"/rank.* "$WORK/revoke.log" 2>/dev/null | tail -n 20 | sed 's/^/    | /'
            failed=$((failed + 1))
            failed_list="$failed_list\n  revoke N=4"
        fi
        rm -rf "$dir"
    }
    run_shrink_revoke
    run_shrink "shrink N=2: the other rank killed, one goes on alone" 2 loop
    run_shrink "shrink N=4: rank 0 (the agreement's leader) killed in the loop" 4 loop AMCTEST_VICTIM=0
    run_shrink "shrink N=4: rank 0 killed, then rank 1 (the next leader) in the shrink" 4 loop \
        AMCTEST_VICTIM=0 AMCTEST_SHRINK_VICTIM=1
    # the README's example: the last rank dies half way, the rest end on N-1
    if [ -x ./bench/ft_sum ]; then
        out=$(env -u AMC_TIMEOUT timeout -k 10 60 "$MPIRUN" "${MPIRUN_ARGS[@]}" \
              --mca orte_enable_recovery 1 -np 4 ./bench/ft_sum 400 </dev/null 2>&1)
        if echo "$out" | grep -q "^ft_sum: 400 iterations, 3 ranks left after 1 recoveries, 0 wrong sums"; then
            echo "PASS: bench/ft_sum N=4: a rank killed half way, 3 go on"
            passed=$((passed + 1))
        else
            echo "FAIL: bench/ft_sum N=4"
            echo "$out" | tail -n 12 | sed 's/^/    | /'
            failed=$((failed + 1))
            failed_list="$failed_list\n  bench/ft_sum N=4"
        fi
    fi
    echo "integration: shrink took $(($(date +%s) - shrink_start)) s"
fi

end=$(date +%s)
if [ "$failed" -gt 0 ]; then
    printf "failed runs:%b\n" "$failed_list"
fi
echo "integration: total time $((end - start)) s"
echo "integration: $passed passed, $failed failed"
[ "$failed" = 0 ] && [ "$passed" -gt 0 ]
