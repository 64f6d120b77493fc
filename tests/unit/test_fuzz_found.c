/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the fuzz target (tests/fuzz/fuzz_coll.c) found, replayed as
 * deterministic tests over the fake transport, so each stays fixed without
 * clang or libFuzzer.
 *
 *   forwarded_barrier  a rank forwards a bcast whose data came before its
 *                      call, then calls a barrier there (the ranks' calls
 *                      differ). The barrier released the slot but left the
 *                      forwarding instance behind: it leaked (LeakSanitizer
 *                      under run_all's ASan step) and kept a pointer to the
 *                      freed slot, which the next instance reuses. Now the
 *                      barrier call fails it as a data call would
 *                      (AMC_ERR_PROTOCOL, the peers told), and the next
 *                      collectives work.
 */
#include "tests/unit/harness.h"

#include <stdio.h>
#include <string.h>

#define N 4

static const amc_fake_completion_t completions[] = {
    AMC_FAKE_COMPLETE_ON_DELIVERY, AMC_FAKE_COMPLETE_ON_SEND, AMC_FAKE_COMPLETE_LATER
};

/* Delivers what is deliverable, in send order, testing the requests
 * between; returns once every request finished or nothing moves. */
static void drive(amc_test_world_t *w, amc_request_t *reqs, int *status)
{
    int rank, flag, left, rc;

    for (;;) {
        left = 0;
        for (rank = 0; rank < w->n; rank++) {
            if (reqs[rank] == AMC_REQUEST_NULL) {
                continue;
            }
            flag = 0;
            rc   = amc_test(&reqs[rank], &flag);
            if (flag || (rc != AMC_SUCCESS)) {
                status[rank] = rc;
                reqs[rank]   = AMC_REQUEST_NULL;
            } else {
                left++;
            }
        }
        if ((left == 0) || (amc_fake_deliverable(w->fabric) == 0)) {
            return;
        }
        amc_fake_deliver(w->fabric, 0);
    }
}

/* An allreduce and a bcast on every rank: the communicator still works. */
static void works_after(amc_test_world_t *w, const char *what)
{
    amc_request_t reqs[N];
    int           status[N], in[N], out[N], b[N][3], rank;

    for (rank = 0; rank < N; rank++) {
        in[rank]     = rank + 1;
        out[rank]    = -1;
        status[rank] = -1;
        CHECK(amc_iallreduce(&in[rank], &out[rank], 1, AMC_INT, AMC_SUM,
                             amc_test_world_comm(w, rank), &reqs[rank]) == AMC_SUCCESS,
              "%s: iallreduce on rank %d", what, rank);
    }
    drive(w, reqs, status);
    for (rank = 0; rank < N; rank++) {
        CHECK((status[rank] == AMC_SUCCESS) && (out[rank] == N * (N + 1) / 2),
              "%s: allreduce after on rank %d: status %d value %d", what, rank, status[rank],
              out[rank]);
    }
    for (rank = 0; rank < N; rank++) {
        b[rank][0] = b[rank][1] = b[rank][2] = (rank == 1) ? 77 : 0;
        status[rank] = -1;
        CHECK(amc_ibcast(b[rank], 3, AMC_INT, 1, amc_test_world_comm(w, rank), &reqs[rank]) ==
              AMC_SUCCESS, "%s: ibcast on rank %d", what, rank);
    }
    drive(w, reqs, status);
    for (rank = 0; rank < N; rank++) {
        CHECK((status[rank] == AMC_SUCCESS) && (b[rank][2] == 77),
              "%s: bcast after on rank %d: status %d value %d", what, rank, status[rank],
              b[rank][2]);
    }
}

/* Rank 2 (inner in the binomial tree from root 0: 0->1, 0->2, 2->3) gets the
 * bcast's data before its call, forwards it, then calls a barrier. deliver:
 * how many of the events queued at rank 2's call are delivered first (its
 * forward to rank 3 and the completions still in flight, or not). */
static void test_forwarded_barrier(amc_fake_completion_t completion, int deliver)
{
    amc_test_world_t w;
    amc_request_t    reqs[N];
    int              status[N], buf[N][3], rank, i, rc;
    char             what[64];

    snprintf(what, sizeof(what), "completion %d, deliver %d", (int)completion, deliver);
    CHECK(amc_test_world_create(&w, N, completion, NULL) == AMC_SUCCESS, "%s: world", what);
    for (rank = 0; rank < N; rank++) {
        buf[rank][0] = buf[rank][1] = buf[rank][2] = (rank == 0) ? 5 : 0;
        reqs[rank]   = AMC_REQUEST_NULL;
        status[rank] = -1;
    }
    /* only rank 2 hears anything until its barrier call */
    amc_fake_hold(w.fabric, 1, 1);
    amc_fake_hold(w.fabric, 3, 1);
    CHECK(amc_ibcast(buf[0], 3, AMC_INT, 0, amc_test_world_comm(&w, 0), &reqs[0]) ==
          AMC_SUCCESS, "%s: root's ibcast", what);
    for (i = 0; (i < 8) && (amc_fake_deliverable(w.fabric) > 0); i++) {
        amc_fake_deliver(w.fabric, 0); /* the data reaches rank 2, which forwards it */
    }
    for (i = 0; (i < deliver) && (amc_fake_deliverable(w.fabric) > 0); i++) {
        amc_fake_deliver(w.fabric, 0);
    }
    rc = amc_ibarrier(amc_test_world_comm(&w, 2), &reqs[2]);
    CHECK((rc == AMC_SUCCESS) || (rc == AMC_ERR_PROTOCOL), "%s: rank 2's ibarrier: %d", what,
          rc);
    if (rc != AMC_SUCCESS) {
        status[2] = rc;
        reqs[2]   = AMC_REQUEST_NULL;
    }
    amc_fake_hold(w.fabric, 1, 0);
    amc_fake_hold(w.fabric, 3, 0);
    for (rank = 1; rank < N; rank += 2) {
        CHECK(amc_ibcast(buf[rank], 3, AMC_INT, 0, amc_test_world_comm(&w, rank),
                         &reqs[rank]) == AMC_SUCCESS, "%s: ibcast on rank %d", what, rank);
    }
    drive(&w, reqs, status);
    CHECK(status[2] == AMC_ERR_PROTOCOL, "%s: rank 2's barrier ends with %d, not "
          "AMC_ERR_PROTOCOL", what, status[2]);
    for (rank = 0; rank < N; rank++) {
        CHECK(reqs[rank] == AMC_REQUEST_NULL, "%s: rank %d's call finished", what, rank);
        CHECK((status[rank] == AMC_SUCCESS) || (status[rank] == AMC_ERR_PROTOCOL),
              "%s: rank %d: %d", what, rank, status[rank]);
    }
    works_after(&w, what);
    CHECK(amc_fake_rndv_pending(w.fabric) == 0, "%s: descriptors given back", what);
    CHECK(amc_fake_header_violations(w.fabric) == 0, "%s: headers kept", what);
    amc_test_world_destroy(&w);
}

int main(void)
{
    size_t c;
    int    deliver;

    for (c = 0; c < sizeof(completions) / sizeof(completions[0]); c++) {
        for (deliver = 0; deliver < 4; deliver++) {
            test_forwarded_barrier(completions[c], deliver);
        }
    }
    return amc_test_summary("test_fuzz_found");
}
