/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Every interleaving, exhaustively: for N = 3 every order of the ranks'
 * entries and of the message deliveries; for N = 4 every order of the
 * deliveries. After each step each rank's request is tested and a completed
 * barrier must have seen every rank enter. Each interleaving is replayed
 * from scratch (the state machine is deterministic), depth-first.
 */
#include "tests/unit/harness.h"

#include <stdio.h>
#include <string.h>

#define PERM_MAX_N     4
#define PERM_MAX_DEPTH 16

typedef struct perm_run {
    int                   n;
    int                   entries_are_steps;  /* else every rank enters up front */
    amc_fake_completion_t completion;
    unsigned long         leaves;
} perm_run_t;

typedef struct perm_state {
    amc_test_world_t world;
    int              posted[PERM_MAX_N];
    int              finished[PERM_MAX_N];
    amc_request_t    req[PERM_MAX_N];
} perm_state_t;

static void perm_enter(perm_state_t *st, int rank)
{
    int rc = amc_ibarrier(amc_test_world_comm(&st->world, rank), &st->req[rank]);

    CHECK(rc == AMC_SUCCESS, "ibarrier: %s", amc_strerror(rc));
    st->posted[rank] = 1;
}

static void perm_test_all(perm_state_t *st, int n)
{
    int rank, j, flag, rc;

    for (rank = 0; rank < n; rank++) {
        if (!st->posted[rank] || st->finished[rank]) {
            continue;
        }
        rc = amc_test(&st->req[rank], &flag);
        CHECK(rc == AMC_SUCCESS, "test: %s", amc_strerror(rc));
        if (!flag) {
            continue;
        }
        st->finished[rank] = 1;
        for (j = 0; j < n; j++) {
            CHECK(st->posted[j], "rank %d left the barrier before rank %d entered", rank, j);
        }
    }
}

/* Replays path[0..depth) and returns how many steps are possible next. */
static int perm_replay(perm_run_t *run, const int *path, int depth)
{
    perm_state_t st;
    int          i, rank, choice, waiting, steps = 0, rc;

    memset(&st, 0, sizeof(st));
    rc = amc_test_world_create(&st.world, run->n, run->completion, NULL);
    CHECK(rc == AMC_SUCCESS, "world: %s", amc_strerror(rc));
    if (rc != AMC_SUCCESS) {
        return 0;
    }
    if (!run->entries_are_steps) {
        for (rank = 0; rank < run->n; rank++) {
            perm_enter(&st, rank);
        }
        perm_test_all(&st, run->n);
    }

    for (i = 0; i <= depth; i++) {
        waiting = 0;
        for (rank = 0; rank < run->n; rank++) {
            waiting += !st.posted[rank];
        }
        steps = waiting + (int)amc_fake_deliverable(st.world.fabric);
        if (i == depth) {
            break;
        }
        choice = path[i];
        if (choice < waiting) {
            for (rank = 0; rank < run->n; rank++) {
                if (!st.posted[rank] && (choice-- == 0)) {
                    perm_enter(&st, rank);
                    break;
                }
            }
        } else {
            amc_fake_deliver(st.world.fabric, (size_t)(choice - waiting));
        }
        perm_test_all(&st, run->n);
    }

    if (steps == 0) {
        for (rank = 0; rank < run->n; rank++) {
            CHECK(st.finished[rank], "n=%d depth %d: rank %d never completed", run->n, depth,
                  rank);
        }
        CHECK(amc_fake_header_violations(st.world.fabric) == 0, "header reused");
        run->leaves++;
    }
    amc_test_world_destroy(&st.world);
    return steps;
}

static void perm_explore(perm_run_t *run, int *path, int depth)
{
    int steps = perm_replay(run, path, depth);
    int choice;

    CHECK(depth < PERM_MAX_DEPTH, "interleaving deeper than expected");
    if ((steps == 0) || (depth >= PERM_MAX_DEPTH)) {
        return;
    }
    for (choice = 0; choice < steps; choice++) {
        path[depth] = choice;
        perm_explore(run, path, depth + 1);
    }
}

static void perm_case(int n, int entries_are_steps, amc_fake_completion_t completion,
                      unsigned long min_leaves)
{
    perm_run_t run = { n, entries_are_steps, completion, 0 };
    int        path[PERM_MAX_DEPTH];

    perm_explore(&run, path, 0);
    printf("n=%d entries-as-steps=%d completion=%d: %lu interleavings\n", n, entries_are_steps,
           (int)completion, run.leaves);
    CHECK(run.leaves >= min_leaves, "n=%d: only %lu interleavings explored", n, run.leaves);
}

int main(void)
{
    /* lower bounds: N=4 has 8 messages, the 4 of round 0 in any of 4! orders at least */
    perm_case(3, 1, AMC_FAKE_COMPLETE_ON_DELIVERY, 3 * 2 * 1);
    perm_case(3, 1, AMC_FAKE_COMPLETE_ON_SEND, 3 * 2 * 1);
    perm_case(4, 0, AMC_FAKE_COMPLETE_ON_DELIVERY, 4 * 3 * 2 * 1);
    /* 300,000 interleavings, 95 % of the run: the plain pass only */
    if (!amc_test_quick()) {
        perm_case(4, 1, AMC_FAKE_COMPLETE_ON_DELIVERY, 4 * 3 * 2 * 1);
    }
    return amc_test_summary("test_barrier_perms");
}
