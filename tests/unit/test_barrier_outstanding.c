/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Several outstanding ibarriers per rank, completed out of order; traffic for
 * a duplicated communicator that arrives before the receiver duplicated it;
 * freeing a communicator while its barrier still runs; the bound on
 * instances beyond the control window.
 */
#include "am_coll/api/config_read.h"
#include "tests/unit/harness.h"
#include "am_coll/context/comm_table.h"
#include "am_coll/context/context_progress.h"
#include "am_coll/context/wait.h"

#include <stdlib.h>

#define N  5
#define K  12   /* more than AMC_CTRL_WINDOW */

/* Every rank posts K ibarriers on comm up front; requests are tested newest
 * first, messages delivered in a seeded random order. */
static void test_out_of_order(uint64_t seed)
{
    amc_test_world_t w;
    amc_test_rng_t   rng;
    amc_request_t    reqs[N][K];
    int              done[N][K] = { { 0 } }, rank, k, rc, flag, left = N * K, guard = 0;
    size_t           count;

    amc_test_rng_seed(&rng, seed);
    rc = amc_test_world_create(&w, N, AMC_FAKE_COMPLETE_ON_DELIVERY, NULL);
    CHECK(rc == AMC_SUCCESS, "world");
    for (rank = 0; rank < N; rank++) {
        for (k = 0; k < K; k++) {
            rc = amc_ibarrier(amc_test_world_comm(&w, rank), &reqs[rank][k]);
            CHECK(rc == AMC_SUCCESS, "ibarrier %d: %s", k, amc_strerror(rc));
        }
    }
    while ((left > 0) && (++guard < 1000000)) {
        for (rank = 0; rank < N; rank++) {
            for (k = K - 1; k >= 0; k--) {
                if (done[rank][k]) {
                    continue;
                }
                rc = amc_test(&reqs[rank][k], &flag);
                CHECK(rc == AMC_SUCCESS, "test: %s", amc_strerror(rc));
                if (flag) {
                    done[rank][k] = 1;
                    left--;
                }
            }
        }
        count = amc_fake_deliverable(w.fabric);
        if (count > 0) {
            amc_fake_deliver(w.fabric, amc_test_rng_below(&rng, count));
        }
    }
    CHECK(left == 0, "seed %llu: %d requests never completed", (unsigned long long)seed, left);
    CHECK(amc_fake_header_violations(w.fabric) == 0, "header reused");
    amc_test_world_destroy(&w);
}

/* testall over a mix of finished and running requests. */
static void test_testall(void)
{
    amc_test_world_t w;
    amc_request_t    reqs[N][3];
    int              rank, rc, flag, all = 0, guard = 0;

    rc = amc_test_world_create(&w, N, AMC_FAKE_COMPLETE_ON_SEND, NULL);
    CHECK(rc == AMC_SUCCESS, "world");
    for (rank = 0; rank < N; rank++) {
        amc_ibarrier(amc_test_world_comm(&w, rank), &reqs[rank][0]);
        amc_ibarrier(amc_test_world_comm(&w, rank), &reqs[rank][1]);
        reqs[rank][2] = AMC_REQUEST_NULL;
    }
    rc = amc_testall(3, reqs[0], &flag);
    CHECK((rc == AMC_SUCCESS) && !flag, "nothing delivered yet: testall says done");
    CHECK(reqs[0][0] != AMC_REQUEST_NULL, "an unfinished testall leaves the requests alone");
    while ((all < N) && (++guard < 100000)) {
        amc_fake_deliver(w.fabric, 0);
        for (all = 0, rank = 0; rank < N; rank++) {
            rc = amc_testall(3, reqs[rank], &flag);
            CHECK(rc == AMC_SUCCESS, "testall: %s", amc_strerror(rc));
            all += flag;
        }
    }
    CHECK(all == N, "testall never finished");
    for (rank = 0; rank < N; rank++) {
        CHECK((reqs[rank][0] == AMC_REQUEST_NULL) && (reqs[rank][1] == AMC_REQUEST_NULL),
              "finished requests are released");
    }
    amc_test_world_destroy(&w);
}

/* Rank 0 duplicates and enters a barrier on the new communicator before the
 * others have made it (the dup's agreement is over everywhere, but their
 * calls have not returned): its messages are held and replayed at their dup. */
static void test_dup_race(void)
{
    amc_test_world_t  w;
    amc_comm_create_t ops[N];
    amc_comm_t        dups[N];
    amc_request_t     reqs[N];
    int               rank, rc, flag, finished = 0, guard = 0;
    int               status[N] = { 0 }, got[N] = { 0 };

    rc = amc_test_world_create(&w, N, AMC_FAKE_COMPLETE_ON_DELIVERY, NULL);
    CHECK(rc == AMC_SUCCESS, "world");
    rc = amc_test_world_create_begin(&w, NULL, 0, NULL, NULL, ops);
    CHECK(rc == AMC_SUCCESS, "dup begins: %s", amc_strerror(rc));
    CHECK(amc_test_world_create_drive(&w, ops), "the dup's agreement completes");
    rc = amc_comm_create_end(&ops[0], amc_request_poll(&ops[0].req), &dups[0]);
    CHECK(rc == AMC_SUCCESS, "dup");
    rc = amc_ibarrier(dups[0], &reqs[0]);
    CHECK(rc == AMC_SUCCESS, "ibarrier");
    while (amc_fake_deliverable(w.fabric) > 0) {
        amc_fake_deliver(w.fabric, 0);
    }
    CHECK(amc_context_orphans(w.ctx[1]) == 1, "rank 1 holds rank 0's message, has %u",
          amc_context_orphans(w.ctx[1]));

    for (rank = 1; rank < N; rank++) {
        rc = amc_comm_create_end(&ops[rank], amc_request_poll(&ops[rank].req), &dups[rank]);
        CHECK(rc == AMC_SUCCESS, "dup");
        CHECK(dups[rank]->cid == dups[0]->cid, "every rank agrees on the context id");
        CHECK(amc_context_orphans(w.ctx[rank]) == 0, "held messages are replayed at dup");
        rc = amc_ibarrier(dups[rank], &reqs[rank]);
        CHECK(rc == AMC_SUCCESS, "ibarrier");
    }
    while ((finished < N) && (++guard < 100000)) {
        for (rank = 0; rank < N; rank++) {
            if (!got[rank]) {
                status[rank] = amc_test(&reqs[rank], &flag);
                if (flag) {
                    got[rank] = 1;
                    finished++;
                }
            }
        }
        amc_fake_deliver(w.fabric, 0);
    }
    for (rank = 0; rank < N; rank++) {
        CHECK(got[rank] && (status[rank] == AMC_SUCCESS), "rank %d: %s", rank,
              amc_strerror(status[rank]));
    }
    for (rank = 0; rank < N; rank++) {
        amc_comm_free(&dups[rank]);
    }
    amc_test_world_destroy(&w);
}

/* Freeing a communicator whose barrier still runs: the handle dies at once,
 * the barrier still completes, and the communicator goes when it is done. */
static void test_free_while_active(void)
{
    amc_test_world_t w;
    amc_comm_t       dups[N], stale;
    amc_request_t    reqs[N];
    int              rank, rc, flag, finished = 0, guard = 0, size;

    rc = amc_test_world_create(&w, N, AMC_FAKE_COMPLETE_ON_DELIVERY, NULL);
    CHECK(rc == AMC_SUCCESS, "world");
    rc = amc_test_world_create_comms(&w, NULL, 0, NULL, NULL, dups);
    CHECK(rc == AMC_SUCCESS, "dup: %s", amc_strerror(rc));
    for (rank = 0; rank < N; rank++) {
        amc_ibarrier(dups[rank], &reqs[rank]);
    }
    stale = dups[0];
    for (rank = 0; rank < N; rank++) {
        rc = amc_comm_free(&dups[rank]);
        CHECK((rc == AMC_SUCCESS) && (dups[rank] == AMC_COMM_NULL), "free while active");
    }
    CHECK(amc_comm_size(stale, &size) == AMC_ERR_COMM, "a freed handle is invalid at once");
    CHECK(w.ctx[0]->zombies != NULL, "the communicator lives on while its barrier runs");
    while ((finished < N) && (++guard < 100000)) {
        amc_fake_deliver(w.fabric, 0);
        for (finished = 0, rank = 0; rank < N; rank++) {
            rc = amc_test(&reqs[rank], &flag);
            CHECK(rc == AMC_SUCCESS, "test: %s", amc_strerror(rc));
            finished += (reqs[rank] == AMC_REQUEST_NULL);
        }
    }
    CHECK(finished == N, "barriers on the freed communicator finished");
    amc_context_progress(w.ctx[0]);
    CHECK(w.ctx[0]->zombies == NULL, "and the communicator went with them");
    amc_test_world_destroy(&w);
}

/* AMC_EARLY_MAX bounds instances beyond the window: posting more fails
 * cleanly, and the ones already posted still complete. */
static void test_early_bound(void)
{
    amc_test_world_t w;
    amc_config_t     cfg;
    amc_request_t    reqs[2][AMC_CTRL_WINDOW + 3];
    int              rank, k, rc, flag, guard;
    const int        allowed = AMC_CTRL_WINDOW + 2;

    amc_config_defaults(&cfg);
    cfg.log_level = -1;
    cfg.early_max = 2;
    rc = amc_test_world_create(&w, 2, AMC_FAKE_COMPLETE_ON_SEND, &cfg);
    CHECK(rc == AMC_SUCCESS, "world");
    for (rank = 0; rank < 2; rank++) {
        for (k = 0; k < allowed; k++) {
            rc = amc_ibarrier(amc_test_world_comm(&w, rank), &reqs[rank][k]);
            CHECK(rc == AMC_SUCCESS, "ibarrier %d within the bound: %s", k, amc_strerror(rc));
        }
        rc = amc_ibarrier(amc_test_world_comm(&w, rank), &reqs[rank][allowed]);
        CHECK(rc == AMC_ERR_NO_MEMORY, "beyond AMC_EARLY_MAX: %s", amc_strerror(rc));
    }
    for (guard = 0; (amc_fake_deliverable(w.fabric) > 0) && (guard < 10000); guard++) {
        amc_fake_deliver(w.fabric, 0);
    }
    for (rank = 0; rank < 2; rank++) {
        for (k = 0; k < allowed; k++) {
            rc = amc_test(&reqs[rank][k], &flag);
            CHECK((rc == AMC_SUCCESS) && flag, "posted instance %d completes", k);
        }
    }
    amc_test_world_destroy(&w);
}

int main(void)
{
    uint64_t seed;

    for (seed = 1; seed <= 50; seed++) {
        test_out_of_order(seed);
    }
    test_testall();
    test_dup_race();
    test_free_while_active();
    test_early_bound();
    return amc_test_summary("test_barrier_outstanding");
}
