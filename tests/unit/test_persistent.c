/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Persistent collectives: created once, started 1000 times with new buffer
 * contents, results checked every time; the handle survives completion; an
 * active persistent request cannot be freed or started again. Also
 * amc_waitany and amc_request_free (a freed running request finishes
 * unobserved and the others still complete).
 */
#include "tests/unit/harness.h"

#include <string.h>

#define N     5
#define COUNT 4

/* Starts every rank's request and drives them until all report done. */
static void start_and_drive(amc_test_world_t *w, amc_request_t *reqs, amc_test_rng_t *rng)
{
    int    rank, flag, left = w->n, done[N] = { 0 }, guard;
    size_t count;

    for (rank = 0; rank < w->n; rank++) {
        CHECK(amc_start(&reqs[rank]) == AMC_SUCCESS, "start rank %d", rank);
    }
    for (guard = 0; (left > 0) && (guard < 100000); guard++) {
        for (rank = 0; rank < w->n; rank++) {
            if (done[rank]) {
                continue;
            }
            CHECK(amc_test(&reqs[rank], &flag) == AMC_SUCCESS, "test");
            if (flag) {
                CHECK(reqs[rank] != AMC_REQUEST_NULL, "a persistent request stays allocated");
                done[rank] = 1;
                left--;
            }
        }
        count = amc_fake_deliverable(w->fabric);
        if (count > 0) {
            amc_fake_deliver(w->fabric, amc_test_rng_below(rng, count));
        }
    }
    CHECK(left == 0, "%d persistent requests never completed", left);
}

/* n ranks; at n=2 with sends that complete at once the bcast's root and
 * the allreduce send from their entry (am_coll/barrier/ctrl_send_now.c),
 * a start that ends within amc_start. */
static void test_restart_many(int n, amc_fake_completion_t completion)
{
    amc_test_world_t w;
    amc_test_rng_t   rng;
    amc_request_t    ar[N], bc[N], ba[N];
    int              in[N][COUNT], out[N][COUNT], bbuf[N][COUNT], rank, it, i, flag;
    int              expect[COUNT], root = (n > 2) ? 2 : 1;

    CHECK(amc_test_world_create(&w, n, completion, NULL) == AMC_SUCCESS, "w");
    amc_test_rng_seed(&rng, 42);
    for (rank = 0; rank < n; rank++) {
        amc_comm_t c = amc_test_world_comm(&w, rank);

        CHECK(amc_allreduce_init(in[rank], out[rank], COUNT, AMC_INT, AMC_SUM, c, &ar[rank]) ==
              AMC_SUCCESS, "allreduce_init");
        CHECK(amc_bcast_init(bbuf[rank], COUNT, AMC_INT, root, c, &bc[rank]) == AMC_SUCCESS,
              "bcast_init");
        CHECK(amc_barrier_init(c, &ba[rank]) == AMC_SUCCESS, "barrier_init");
        /* inactive: test and wait return at once */
        CHECK((amc_test(&ar[rank], &flag) == AMC_SUCCESS) && flag && (ar[rank] != NULL),
              "an inactive persistent request tests as done");
        CHECK(amc_wait(&ba[rank]) == AMC_SUCCESS, "wait on an inactive one");
    }
    for (it = 0; it < 1000; it++) {
        memset(expect, 0, sizeof(expect));
        for (rank = 0; rank < n; rank++) {
            for (i = 0; i < COUNT; i++) {
                in[rank][i]  = it * 7 + rank * 3 + i;
                out[rank][i] = -1;
                bbuf[rank][i] = (rank == root) ? it * 100 + i : -1;
                expect[i]    += in[rank][i];
            }
        }
        start_and_drive(&w, ar, &rng);
        start_and_drive(&w, bc, &rng);
        if (it % 10 == 0) {
            start_and_drive(&w, ba, &rng);
        }
        for (rank = 0; rank < n; rank++) {
            CHECK(memcmp(out[rank], expect, sizeof(expect)) == 0,
                  "iteration %d: allreduce wrong at rank %d", it, rank);
            for (i = 0; i < COUNT; i++) {
                CHECK(bbuf[rank][i] == it * 100 + i, "iteration %d: bcast wrong at rank %d", it,
                      rank);
            }
        }
    }

    /* active: neither freed nor started again */
    for (rank = 0; rank < n; rank++) {
        CHECK(amc_start(&ar[rank]) == AMC_SUCCESS, "start");
    }
    CHECK(amc_request_free(&ar[0]) == AMC_ERR_ARG, "freeing an active persistent request");
    CHECK(ar[0] != AMC_REQUEST_NULL, "a refused free leaves the handle");
    CHECK(amc_start(&ar[0]) == AMC_ERR_ARG, "starting an active request again");
    for (rank = 0; rank < n; rank++) {
        CHECK(amc_test(&ar[rank], &flag) == AMC_SUCCESS, "test");
    }
    while (amc_fake_deliverable(w.fabric) > 0) {
        amc_fake_deliver(w.fabric, 0);
    }
    for (rank = 0; rank < n; rank++) {
        CHECK((amc_test(&ar[rank], &flag) == AMC_SUCCESS) && flag, "completes");
        CHECK((amc_request_free(&ar[rank]) == AMC_SUCCESS) && (ar[rank] == AMC_REQUEST_NULL),
              "an inactive persistent request is freed");
        CHECK(amc_request_free(&bc[rank]) == AMC_SUCCESS, "free bcast");
        CHECK(amc_request_free(&ba[rank]) == AMC_SUCCESS, "free barrier");
    }
    amc_test_world_destroy(&w);
}

static void test_request_calls(void)
{
    amc_test_world_t w;
    amc_request_t    reqs[N], two[3];
    int              rank, index = 0, flag, done;

    CHECK(amc_test_world_create(&w, N, AMC_FAKE_COMPLETE_ON_DELIVERY, NULL) == AMC_SUCCESS, "w");
    two[0] = two[1] = two[2] = AMC_REQUEST_NULL;
    CHECK((amc_waitany(3, two, &index) == AMC_SUCCESS) && (index == AMC_UNDEFINED),
          "waitany over nulls");
    CHECK(amc_waitany(3, two, NULL) == AMC_ERR_ARG, "waitany without index");
    CHECK(amc_request_free(NULL) == AMC_ERR_ARG, "request_free(NULL)");
    CHECK(amc_request_free(&two[0]) == AMC_ERR_ARG, "request_free of REQUEST_NULL");
    CHECK(amc_start(&two[0]) == AMC_ERR_ARG, "start of REQUEST_NULL");

    for (rank = 0; rank < N; rank++) {
        CHECK(amc_ibarrier(amc_test_world_comm(&w, rank), &reqs[rank]) == AMC_SUCCESS, "ib");
    }
    CHECK(amc_start(&reqs[0]) == AMC_ERR_ARG, "start of a non-persistent request");
    /* rank 0 drops its running barrier: it finishes unobserved */
    CHECK((amc_request_free(&reqs[0]) == AMC_SUCCESS) && (reqs[0] == AMC_REQUEST_NULL),
          "free of a running request");
    while (amc_fake_deliverable(w.fabric) > 0) {
        amc_fake_deliver(w.fabric, 0);
    }
    for (rank = 1; rank < N; rank++) {
        two[1] = reqs[rank];
        CHECK((amc_waitany(3, two, &index) == AMC_SUCCESS) && (index == 1),
              "waitany finds the finished one");
        CHECK(two[1] == AMC_REQUEST_NULL, "and releases it");
    }
    /* the freed instance finished too: the next barrier works on every rank */
    for (rank = 0; rank < N; rank++) {
        CHECK(amc_ibarrier(amc_test_world_comm(&w, rank), &reqs[rank]) == AMC_SUCCESS, "ib");
    }
    while (amc_fake_deliverable(w.fabric) > 0) {
        amc_fake_deliver(w.fabric, 0);
    }
    for (done = 0, rank = 0; rank < N; rank++) {
        CHECK(amc_test(&reqs[rank], &flag) == AMC_SUCCESS, "test");
        done += flag;
    }
    CHECK(done == N, "barrier after a freed one: %d of %d done", done, N);
    amc_test_world_destroy(&w);
}

int main(void)
{
    test_restart_many(N, AMC_FAKE_COMPLETE_ON_DELIVERY);
    test_restart_many(2, AMC_FAKE_COMPLETE_ON_SEND);
    test_request_calls();
    return amc_test_summary("test_persistent");
}
