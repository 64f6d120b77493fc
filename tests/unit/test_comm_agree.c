/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A communicator creation that fails on one rank fails on every rank, with
 * the same code: otherwise the ranks that succeeded start
 * collectives on a communicator the others do not have, and hang.
 *
 * One thread per rank over the threaded fake fabric. Failures are injected
 * on one rank at a time through the context's test hooks: an allocation
 * that fails (ctx->fail_allocs, as malloc returning NULL would) and context
 * ids used up (ctx->cid_next = ctx->cid_limit). For each victim, in dup and
 * in split (colours mixed, the victim in either group), on the world and on
 * a nested communicator, N = 1, 2, 3, 4, 8:
 * - every rank's call returns AMC_ERR_NO_MEMORY and sets the handle to
 *   AMC_COMM_NULL, also the ranks whose colour is AMC_UNDEFINED;
 * - then every rank's next split and an allreduce on its result (and on the
 *   parent) succeed: nobody was left a step behind or ahead.
 * A rank whose colour is AMC_UNDEFINED reserves nothing and allocates
 * nothing, so it cannot fail; in a dup only the leader (rank 0) spends an
 * id number, so id exhaustion elsewhere does not fail a dup.
 */
#include "tests/unit/harness.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_N 8

enum {
    INJECT_ALLOC,   /* the new communicator's memory cannot be had */
    INJECT_NO_IDS   /* the rank's context ids are used up */
};

typedef struct {
    amc_test_world_t *w;
    int               rank;
    int               n;
} job_t;

static const char *inject_name(int inject)
{
    return (inject == INJECT_ALLOC) ? "allocation failure" : "no context id left";
}

static void inject(amc_context_t *ctx, int what)
{
    if (what == INJECT_ALLOC) {
        ctx->fail_allocs = 1;
    } else {
        ctx->cid_next = ctx->cid_limit;
    }
}

static void uninject(amc_context_t *ctx, int what, uint64_t saved_next)
{
    ctx->fail_allocs = 0;
    if (what == INJECT_NO_IDS) {
        ctx->cid_next = saved_next;
    }
}

/* After a failed creation: the parent and a fresh split of it still work on
 * every rank (sum of world ranks over my half). */
static int still_in_step(job_t *job, amc_comm_t parent, const char *what)
{
    amc_comm_t half = AMC_COMM_NULL;
    int32_t    me = job->rank, sum = -1, expect = 0, psize = 0;
    int        rc, r, prank = -1, ok;

    amc_comm_rank(parent, &prank);
    amc_comm_size(parent, &psize);
    rc = amc_allreduce(&me, &sum, 1, AMC_INT32, AMC_SUM, parent);
    CHECK(rc == AMC_SUCCESS, "%s N=%d rank %d: allreduce on the parent afterwards: %s", what,
          job->n, job->rank, amc_strerror(rc));
    rc = amc_comm_split(parent, prank % 2, 0, &half);
    CHECK((rc == AMC_SUCCESS) && (half != AMC_COMM_NULL),
          "%s N=%d rank %d: the next split: %s", what, job->n, job->rank, amc_strerror(rc));
    if ((rc != AMC_SUCCESS) || (half == AMC_COMM_NULL)) {
        return 0;
    }
    /* the world ranks of my half: the parent's members of my parity; with a
     * parent that is the world, those are the world ranks of my parity */
    for (r = 0; r < job->n; r++) {
        expect += ((r % 2) == (job->rank % 2)) ? r : 0;
    }
    rc = amc_allreduce(&me, &sum, 1, AMC_INT32, AMC_SUM, half);
    ok = (rc == AMC_SUCCESS) && ((psize != job->n) || (sum == expect));
    CHECK(ok, "%s N=%d rank %d: allreduce on the next split: %s, sum %d, expected %d", what,
          job->n, job->rank, amc_strerror(rc), sum, expect);
    CHECK(amc_comm_free(&half) == AMC_SUCCESS, "free");
    return ok;
}

/* One creation with one rank failing; returns 1 if every check passed. */
static int one_case(job_t *job, amc_comm_t parent, int is_split, int what, int victim,
                    const char *where)
{
    amc_context_t *ctx = job->w->ctx[job->rank];
    amc_comm_t     made;
    uint64_t       saved = ctx->cid_next;
    int            rc, prank = -1, psize = 0, color, expect_fail;
    char           name[160];

    amc_comm_rank(parent, &prank);
    amc_comm_size(parent, &psize);
    /* split: the victim's half of the parent gets colour 0, the rest 1; the
     * rank after the victim stays out (AMC_UNDEFINED) and must fail too */
    color = (prank == (victim + 1) % psize) && (psize > 2) ? AMC_UNDEFINED
            : (prank % 2 == victim % 2)                    ? 0
                                                           : 1;
    /* a dup spends only the leader's (rank 0's) id number */
    expect_fail = !(is_split == 0 && what == INJECT_NO_IDS && victim != 0);
    snprintf(name, sizeof(name), "%s: %s on rank %d of %s (%d ranks)",
             is_split ? "split" : "dup", inject_name(what), victim, where, psize);

    if (prank == victim) {
        inject(ctx, what);
    }
    made = (amc_comm_t)&made; /* must be overwritten */
    rc   = is_split ? amc_comm_split(parent, color, prank, &made) : amc_comm_dup(parent, &made);
    if (prank == victim) {
        uninject(ctx, what, saved);
    }
    if (expect_fail) {
        CHECK(rc == AMC_ERR_NO_MEMORY, "%s N=%d: rank %d (colour %d) returned %s, expected the "
              "victim's AMC_ERR_NO_MEMORY", name, job->n, job->rank, color, amc_strerror(rc));
        CHECK(made == AMC_COMM_NULL, "%s N=%d: rank %d: the handle is not AMC_COMM_NULL", name,
              job->n, job->rank);
        if ((rc == AMC_SUCCESS) && (made != AMC_COMM_NULL) && (made != (amc_comm_t)&made)) {
            amc_comm_free(&made); /* only this rank has it: using it would hang */
        }
    } else {
        CHECK(rc == AMC_SUCCESS, "%s N=%d: rank %d: %s, expected success (not the leader)",
              name, job->n, job->rank, amc_strerror(rc));
        if (rc == AMC_SUCCESS) {
            CHECK(amc_barrier(made) == AMC_SUCCESS, "barrier on the dup");
            CHECK(amc_comm_free(&made) == AMC_SUCCESS, "free");
        }
    }
    return still_in_step(job, parent, name) && (amc_test_failures() == 0);
}

static void *rank_thread(void *arg)
{
    job_t     *job   = arg;
    amc_comm_t world = amc_test_world_comm(job->w, job->rank), nested = AMC_COMM_NULL;
    int        victim, what, is_split, ok = 1, rc, nsize = 0;

    /* nested: the world ranks but 0, in reverse order, split off a dup */
    rc = amc_comm_dup(world, &nested);
    CHECK(rc == AMC_SUCCESS, "dup: %s", amc_strerror(rc));
    if (rc == AMC_SUCCESS) {
        amc_comm_t d = nested;

        rc = amc_comm_split(d, ((job->rank == 0) && (job->n > 1)) ? AMC_UNDEFINED : 5,
                            -job->rank, &nested);
        CHECK(rc == AMC_SUCCESS, "split: %s", amc_strerror(rc));
        CHECK(amc_comm_free(&d) == AMC_SUCCESS, "free");
    }
    for (is_split = 0; ok && (is_split <= 1); is_split++) {
        for (what = INJECT_ALLOC; ok && (what <= INJECT_NO_IDS); what++) {
            for (victim = 0; ok && (victim < job->n); victim++) {
                ok = one_case(job, world, is_split, what, victim, "the world");
            }
            nsize = 0;
            if (nested != AMC_COMM_NULL) {
                amc_comm_size(nested, &nsize);
            }
            for (victim = 0; ok && (victim < nsize); victim++) {
                ok = one_case(job, nested, is_split, what, victim, "a nested split");
            }
        }
    }
    if (nested != AMC_COMM_NULL) {
        CHECK(amc_comm_free(&nested) == AMC_SUCCESS, "free");
    }
    return NULL;
}

int main(void)
{
    static const int sizes[] = { 1, 2, 3, 4, 8 };
    amc_test_world_t w;
    pthread_t        threads[MAX_N];
    job_t            jobs[MAX_N];
    unsigned         i;
    int              r, rc, n;

    /* a rank left behind must not hang the others for ever */
    setenv("AMC_TIMEOUT", "10", 0);
    /* up to 8 ranks share 2 cores: spinning only keeps the awaited rank off */
    setenv("AMC_SPIN_COUNT", "0", 0);

    for (i = 0; (i < sizeof(sizes) / sizeof(sizes[0])) && (amc_test_failures() == 0); i++) {
        n  = sizes[i];
        rc = amc_test_world_create_threaded(&w, n, 0, 0);
        CHECK(rc == AMC_SUCCESS, "world: %s", amc_strerror(rc));
        if (rc != AMC_SUCCESS) {
            break;
        }
        for (r = 0; r < n; r++) {
            jobs[r].w    = &w;
            jobs[r].rank = r;
            jobs[r].n    = n;
            CHECK(pthread_create(&threads[r], NULL, rank_thread, &jobs[r]) == 0,
                  "pthread_create");
        }
        for (r = 0; r < n; r++) {
            pthread_join(threads[r], NULL);
        }
        amc_test_world_destroy(&w);
        printf("N=%d: done\n", n);
        fflush(stdout);
    }
    return amc_test_summary("test_comm_agree");
}
