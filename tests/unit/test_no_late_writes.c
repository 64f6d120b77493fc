/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Once a call has returned, amcoll never writes into its buffers again,
 * also when it returned an error: a timeout while a peer is late, or an
 * error a handler left on the communicator. The instance is cancelled (its
 * late messages are dropped, the other ranks are told), and a pull already
 * in flight into the caller's buffer is waited for before the request
 * completes.
 */
#include "am_coll/api/config_read.h"
#include "tests/unit/harness.h"
#include "base/status.h"
#include "am_coll/context/context_progress.h"

#include <string.h>
#include <time.h>

/* ints a call: past the 1 KiB the barrier's rounds carry at N=2, so the
 * calls run on the engine's data messages (eager or rendezvous) */
#define COUNT   320
#define PATTERN 0x77

static void nap_ms(long ms)
{
    struct timespec ts = { 0, ms * 1000000L };

    nanosleep(&ts, NULL);
}

static void world_create(amc_test_world_t *w, int n, amc_fake_completion_t completion,
                         int rndv, double timeout)
{
    amc_config_t cfg;

    amc_config_defaults(&cfg);
    cfg.log_level       = -1;
    cfg.progress_thread = 0;
    cfg.rndv_thresh     = rndv ? 1 : (1u << 30);
    cfg.timeout_sec     = timeout;
    CHECK(amc_test_world_create(w, n, completion, &cfg) == AMC_SUCCESS, "world");
}

static int all_bytes(const void *buf, size_t len, unsigned char value)
{
    const unsigned char *p = buf;
    size_t               i;

    for (i = 0; i < len; i++) {
        if (p[i] != value) {
            return 0;
        }
    }
    return 1;
}

/* Tests req until it completes, delivering one event per pass: its status. */
static int finish(amc_test_world_t *w, amc_request_t *req)
{
    int status = AMC_SUCCESS, flag = 0, pass;

    for (pass = 0; (pass < 100000) && !flag; pass++) {
        status = amc_test(req, &flag);
        if (!flag && (amc_fake_deliverable(w->fabric) > 0)) {
            amc_fake_deliver(w->fabric, 0);
        }
    }
    CHECK(flag, "the request never completed");
    return flag ? status : -1;
}

/* An allreduce on both ranks: the communicator is usable afterwards. */
static void works_after(amc_test_world_t *w)
{
    amc_request_t reqs[2];
    int           in[2] = { 1, 2 }, out[2] = { 0, 0 }, rank;

    for (rank = 0; rank < 2; rank++) {
        CHECK(amc_iallreduce(&in[rank], &out[rank], 1, AMC_INT, AMC_SUM,
                             amc_test_world_comm(w, rank), &reqs[rank]) == AMC_SUCCESS, "ar");
    }
    for (rank = 0; rank < 2; rank++) {
        CHECK((finish(w, &reqs[rank]) == AMC_SUCCESS) && (out[rank] == 3),
              "rank %d: the allreduce after the failure", rank);
    }
}

/* N=2: rank 0 calls bcast (root 1) or allreduce while rank 1 is late; with
 * AMC_TIMEOUT its call fails with AMC_ERR_TIMEOUT. Rank 0 fills its buffer
 * with a pattern (reused, as a program would), then rank 1 calls: its data
 * reaches rank 0, and must not land in the buffer. Rank 1 is told of the
 * timeout and fails too, or (a root whose sends were done) succeeds. */
static void test_timeout_then_late_peer(int allreduce, int rndv)
{
    amc_test_world_t w;
    amc_request_t    req0, req1;
    int              buf0[COUNT], buf1[COUNT], in0[COUNT], i, status, flag = 0, waited;

    world_create(&w, 2, AMC_FAKE_COMPLETE_ON_DELIVERY, rndv, 0.05);
    for (i = 0; i < COUNT; i++) {
        in0[i]  = i;
        buf0[i] = -1;
        buf1[i] = 1000 + i;
    }
    if (allreduce) {
        CHECK(amc_iallreduce(in0, buf0, COUNT, AMC_INT, AMC_SUM, amc_test_world_comm(&w, 0),
                             &req0) == AMC_SUCCESS, "iallreduce");
    } else {
        CHECK(amc_ibcast(buf0, COUNT, AMC_INT, 1, amc_test_world_comm(&w, 0), &req0) ==
              AMC_SUCCESS, "ibcast");
    }
    status = AMC_SUCCESS;
    for (waited = 0; (waited < 2000) && !flag; waited += 5) {
        status = amc_test(&req0, &flag);
        if (!flag) {
            nap_ms(5);
        }
    }
    CHECK(flag && (status == AMC_ERR_TIMEOUT), "rank 0 times out (got %s)",
          flag ? amc_strerror(status) : "nothing");

    memset(buf0, PATTERN, sizeof(buf0));
    if (allreduce) {
        CHECK(amc_iallreduce(AMC_IN_PLACE, buf1, COUNT, AMC_INT, AMC_SUM,
                             amc_test_world_comm(&w, 1), &req1) == AMC_SUCCESS, "late ar");
    } else {
        CHECK(amc_ibcast(buf1, COUNT, AMC_INT, 1, amc_test_world_comm(&w, 1), &req1) ==
              AMC_SUCCESS, "late bcast");
    }
    status = finish(&w, &req1);
    CHECK((status == AMC_ERR_TIMEOUT) || (!allreduce && (status == AMC_SUCCESS)),
          "the late rank got %s", amc_strerror(status));
    while (amc_fake_deliverable(w.fabric) > 0) {
        amc_fake_deliver(w.fabric, 0);
    }
    (void)amc_context_progress(w.ctx[0]);
    CHECK(all_bytes(buf0, sizeof(buf0), PATTERN),
          "%s%s: rank 0's buffer was written after its call returned",
          allreduce ? "allreduce" : "bcast", rndv ? " (rendezvous)" : "");
    CHECK(amc_fake_rndv_pending(w.fabric) == 0, "descriptors left unreleased");
    works_after(&w);
    amc_test_world_destroy(&w);
}

/* N=2, rendezvous, completions as events of their own: rank 0's pull of
 * the root's data is queued when an error is left on its communicator (as a
 * handler does for a garbage message). Its request must not complete before
 * that pull is done, and nothing writes into the buffer afterwards. */
static void test_error_with_pull_in_flight(void)
{
    amc_test_world_t w;
    amc_fake_event_t ev;
    amc_request_t    req0, req1;
    int              buf0[COUNT], buf1[COUNT], i, status, flag = 0, pulls = 0, guard;
    size_t           k;

    world_create(&w, 2, AMC_FAKE_COMPLETE_LATER, 1, 0.0);
    for (i = 0; i < COUNT; i++) {
        buf0[i] = -1;
        buf1[i] = 1000 + i;
    }
    CHECK(amc_ibcast(buf0, COUNT, AMC_INT, 1, amc_test_world_comm(&w, 0), &req0) == AMC_SUCCESS,
          "ibcast 0");
    CHECK(amc_ibcast(buf1, COUNT, AMC_INT, 1, amc_test_world_comm(&w, 1), &req1) == AMC_SUCCESS,
          "ibcast 1");
    /* deliver until rank 0's pull is queued, and not the pull */
    for (guard = 0; (guard < 100) && (pulls == 0); guard++) {
        (void)amc_test(&req0, &flag);
        for (k = 0; k < amc_fake_deliverable(w.fabric); k++) {
            CHECK(amc_fake_event(w.fabric, k, &ev), "event");
            pulls += (ev.kind == AMC_FAKE_EV_PULL) && (ev.rank == 0);
        }
        if ((pulls == 0) && (amc_fake_deliverable(w.fabric) > 0)) {
            amc_fake_deliver(w.fabric, 0);
        }
    }
    CHECK(pulls == 1, "rank 0 pulls the root's data");
    CHECK(!flag, "rank 0 is not done before its pull");

    amc_context_set_error(w.ctx[0], AMC_ERR_PROTOCOL);
    status = amc_test(&req0, &flag);
    CHECK((status == AMC_SUCCESS) && !flag,
          "the failed request waits for its pull in flight (flag %d, %s)", flag,
          amc_strerror(status));
    /* the pull, then its completion: the request completes with the error */
    status = finish(&w, &req0);
    CHECK(status == AMC_ERR_PROTOCOL, "rank 0 got %s", amc_strerror(status));
    memset(buf0, PATTERN, sizeof(buf0));
    status = finish(&w, &req1);
    CHECK((status == AMC_SUCCESS) || (status == AMC_ERR_PROTOCOL), "the root got %s",
          amc_strerror(status));
    while (amc_fake_deliverable(w.fabric) > 0) {
        amc_fake_deliver(w.fabric, 0);
    }
    CHECK(all_bytes(buf0, sizeof(buf0), PATTERN),
          "rank 0's buffer was written after its call returned");
    CHECK(amc_fake_rndv_pending(w.fabric) == 0, "descriptors left unreleased");
    works_after(&w);
    amc_test_world_destroy(&w);
}

int main(void)
{
    int allreduce, rndv;

    for (allreduce = 0; allreduce < 2; allreduce++) {
        for (rndv = 0; rndv < 2; rndv++) {
            test_timeout_then_late_peer(allreduce, rndv);
        }
    }
    test_error_with_pull_in_flight();
    return amc_test_summary("test_no_late_writes");
}
