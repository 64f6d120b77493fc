/*
 * The API's promise under misuse and stress (project issue 14): a clear
 * error, never a crash, a hang or a silent wrong answer.
 *
 *   duplicates  the same request twice in waitall / testall / waitany is
 *               AMC_ERR_ARG, and nothing in the array is completed or freed
 */
#include "tests/unit/harness.h"

#include <stdlib.h>
#include <string.h>

#define MAX_N 8

/* Delivers everything queued, in send order. */
static void deliver_all(amc_test_world_t *w)
{
    while (amc_fake_deliverable(w->fabric) > 0) {
        amc_fake_deliver(w->fabric, 0);
    }
}

/* ---------------------------------------------------------------- duplicates */

static void test_duplicate_requests(void)
{
    enum { BIG = 40 };
    amc_test_world_t w;
    amc_request_t    r[2], a[3], big[BIG], keep, other, p = AMC_REQUEST_NULL;
    int              rank, flag = -1, index = -1, i;

    CHECK(amc_test_world_create(&w, 2, AMC_FAKE_COMPLETE_ON_DELIVERY, NULL) == AMC_SUCCESS, "w");
    for (rank = 0; rank < 2; rank++) {
        CHECK(amc_ibarrier(amc_test_world_comm(&w, rank), &r[rank]) == AMC_SUCCESS, "ibarrier");
    }
    deliver_all(&w); /* both complete: a wait would release at once */
    keep = r[0];

    a[0] = a[1] = r[0];
    CHECK(amc_waitall(2, a) == AMC_ERR_ARG, "waitall with the same request twice");
    CHECK((a[0] == keep) && (a[1] == keep), "a refused waitall leaves the handles");
    a[0] = r[0];
    a[1] = AMC_REQUEST_NULL;
    a[2] = r[0];
    CHECK(amc_testall(3, a, &flag) == AMC_ERR_ARG, "testall with a repeat behind a null");
    CHECK((a[0] == keep) && (a[2] == keep), "a refused testall leaves the handles");
    a[0] = a[1] = r[0];
    CHECK(amc_waitany(2, a, &index) == AMC_ERR_ARG, "waitany with the same request twice");
    CHECK((a[0] == keep) && (a[1] == keep), "a refused waitany leaves the handles");

    /* a long array is checked another way: a repeat far apart */
    for (i = 0; i < BIG; i++) {
        big[i] = AMC_REQUEST_NULL;
    }
    big[3]       = r[0];
    big[BIG - 1] = r[0];
    CHECK(amc_waitall(BIG, big) == AMC_ERR_ARG, "waitall of %d with a repeat", BIG);
    big[BIG - 1] = r[1];
    CHECK(amc_testall(BIG, big, &flag) == AMC_SUCCESS && flag == 1, "the same array, no repeat");
    CHECK((big[3] == AMC_REQUEST_NULL) && (big[BIG - 1] == AMC_REQUEST_NULL), "both released");

    /* the refused calls freed nothing: two new requests are two */
    CHECK(amc_ibarrier(amc_test_world_comm(&w, 0), &r[0]) == AMC_SUCCESS, "ibarrier");
    CHECK(amc_ibarrier(amc_test_world_comm(&w, 0), &other) == AMC_SUCCESS, "ibarrier");
    CHECK(r[0] != other, "the request free list was not corrupted");
    for (i = 0; i < 2; i++) {
        CHECK(amc_ibarrier(amc_test_world_comm(&w, 1), &r[1]) == AMC_SUCCESS, "ibarrier");
        deliver_all(&w);
        CHECK(amc_wait(&r[1]) == AMC_SUCCESS, "rank 1 barrier %d", i);
    }
    a[0] = r[0];
    a[1] = other;
    CHECK(amc_waitall(2, a) == AMC_SUCCESS, "rank 0's two barriers");

    /* a persistent request repeated is refused as well, active or not */
    CHECK(amc_barrier_init(amc_test_world_comm(&w, 0), &p) == AMC_SUCCESS, "barrier_init");
    a[0] = a[1] = p;
    CHECK(amc_waitall(2, a) == AMC_ERR_ARG, "waitall with an inactive persistent one twice");
    CHECK(amc_request_free(&p) == AMC_SUCCESS, "request_free");
    amc_test_world_destroy(&w);
}

int main(void)
{
    test_duplicate_requests();
    return amc_test_summary("test_reliability");
}
