/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Dead peers over the fake transport: the state machine
 * of am_coll/context/peer_watch.c, driven by amc_fake_kill, which marks a rank dead
 * in every other rank's transport as the UCX transport's detectors do.
 *
 * N = 4 (and 2, 3), the last rank dies while the others have collectives
 * outstanding that need it (an ibarrier on the world, an iallreduce on a
 * dup; it never joined them):
 * - both complete with AMC_ERR_PEER on every survivor, at the first test;
 * - every later start on a communicator containing it fails at once with
 *   AMC_ERR_PEER (non-blocking, persistent start, dup, split), and leaves no
 *   message behind;
 * - the half of the world without it keeps working (collectives with the
 *   right values);
 * - a communicator created (agreed) before the death was heard of is broken
 *   from its creation on.
 */
#include "tests/unit/harness.h"

#include <stdio.h>

#define MAX_N 8

static void deliver_all(amc_test_world_t *w)
{
    while (amc_fake_deliverable(w->fabric) > 0) {
        amc_fake_deliver(w->fabric, 0);
    }
}

static int test_done(amc_request_t *req)
{
    int flag = 0, rc = amc_test(req, &flag);

    return flag ? rc : AMC_INPROGRESS;
}

/* An allreduce and a barrier over comms[r] for the ranks in [lo, hi). */
static void check_works(amc_test_world_t *w, amc_comm_t *comms, int lo, int hi, const char *what)
{
    amc_request_t reqs[MAX_N][2];
    int32_t       in[MAX_N], out[MAX_N];
    int           r, rc;

    for (r = lo; r < hi; r++) {
        in[r]  = r + 1;
        out[r] = -1;
        rc = amc_iallreduce(&in[r], &out[r], 1, AMC_INT32, AMC_SUM, comms[r], &reqs[r][0]);
        CHECK(rc == AMC_SUCCESS, "%s: iallreduce start on rank %d: %s", what, r,
              amc_strerror(rc));
        rc = amc_ibarrier(comms[r], &reqs[r][1]);
        CHECK(rc == AMC_SUCCESS, "%s: ibarrier start on rank %d: %s", what, r, amc_strerror(rc));
    }
    deliver_all(w);
    for (r = lo; r < hi; r++) {
        rc = test_done(&reqs[r][0]);
        CHECK(rc == AMC_SUCCESS, "%s: iallreduce on rank %d: %s", what, r, amc_strerror(rc));
        CHECK(out[r] == (lo + 1 + hi) * (hi - lo) / 2, "%s: rank %d got %d", what, r,
              (int)out[r]);
        rc = test_done(&reqs[r][1]);
        CHECK(rc == AMC_SUCCESS, "%s: ibarrier on rank %d: %s", what, r, amc_strerror(rc));
    }
}

static void test_death(int n)
{
    amc_test_world_t w;
    amc_comm_t       world[MAX_N], dup[MAX_N], half[MAX_N], other;
    amc_request_t    bar[MAX_N], red[MAX_N], req, pers;
    int              color[MAX_N], key[MAX_N], r, rc, victim = n - 1, lo_half = n / 2;
    int32_t          one = 1, sum[MAX_N];
    unsigned long    delivered;

    if (amc_test_world_create(&w, n, AMC_FAKE_COMPLETE_ON_DELIVERY, NULL) != AMC_SUCCESS) {
        CHECK(0, "world of %d", n);
        return;
    }
    for (r = 0; r < n; r++) {
        world[r] = amc_test_world_comm(&w, r);
        color[r] = (r < lo_half) ? 0 : 1;
        key[r]   = r;
    }
    CHECK(amc_test_world_create_comms(&w, NULL, 0, NULL, NULL, dup) == AMC_SUCCESS, "dup");
    CHECK(amc_test_world_create_comms(&w, NULL, 1, color, key, half) == AMC_SUCCESS, "split");

    /* outstanding on the survivors, waiting for the victim */
    for (r = 0; r < n; r++) {
        if (r == victim) {
            continue;
        }
        CHECK(amc_ibarrier(world[r], &bar[r]) == AMC_SUCCESS, "ibarrier %d", r);
        CHECK(amc_iallreduce(&one, &sum[r], 1, AMC_INT32, AMC_SUM, dup[r], &red[r]) ==
              AMC_SUCCESS, "iallreduce %d", r);
    }
    deliver_all(&w);
    for (r = 0; r < n; r++) {
        if (r != victim) {
            CHECK(test_done(&bar[r]) == AMC_INPROGRESS, "N=%d rank %d: ibarrier done without "
                  "the victim", n, r);
        }
    }

    amc_fake_kill(w.fabric, victim);
    for (r = 0; r < n; r++) {
        if (r == victim) {
            continue;
        }
        rc = test_done(&bar[r]);
        CHECK(rc == AMC_ERR_PEER, "N=%d rank %d: the outstanding ibarrier: %s", n, r,
              amc_strerror(rc));
        rc = test_done(&red[r]);
        CHECK(rc == AMC_ERR_PEER, "N=%d rank %d: the outstanding iallreduce: %s", n, r,
              amc_strerror(rc));
    }

    /* later calls fail at once and send nothing */
    deliver_all(&w);
    delivered = amc_fake_delivered(w.fabric);
    for (r = 0; r < n; r++) {
        if (r == victim) {
            continue;
        }
        req = AMC_REQUEST_NULL;
        rc  = amc_ibarrier(world[r], &req);
        CHECK((rc == AMC_ERR_PEER) && (req == AMC_REQUEST_NULL), "N=%d rank %d: ibarrier on "
              "the world after the death: %s", n, r, amc_strerror(rc));
        rc = amc_ibcast(&one, 1, AMC_INT32, 0, dup[r], &req);
        CHECK(rc == AMC_ERR_PEER, "N=%d rank %d: ibcast on the dup: %s", n, r, amc_strerror(rc));
        CHECK(amc_barrier_init(dup[r], &pers) == AMC_SUCCESS, "barrier_init");
        rc = amc_start(&pers);
        CHECK(rc == AMC_ERR_PEER, "N=%d rank %d: persistent start: %s", n, r, amc_strerror(rc));
        amc_request_free(&pers);
        other = AMC_COMM_NULL;
        rc    = amc_comm_dup(world[r], &other);
        CHECK((rc == AMC_ERR_PEER) && (other == AMC_COMM_NULL), "N=%d rank %d: dup: %s", n, r,
              amc_strerror(rc));
        rc = amc_comm_split(dup[r], 0, 0, &other);
        CHECK((rc == AMC_ERR_PEER) && (other == AMC_COMM_NULL), "N=%d rank %d: split: %s", n,
              r, amc_strerror(rc));
        if (color[r] == color[victim]) {
            rc = amc_ibarrier(half[r], &req);
            CHECK(rc == AMC_ERR_PEER, "N=%d rank %d: the victim's half: %s", n, r,
                  amc_strerror(rc));
        }
    }
    CHECK(amc_fake_deliverable(w.fabric) == 0, "N=%d: refused calls sent %zu messages", n,
          amc_fake_deliverable(w.fabric));
    CHECK(amc_fake_delivered(w.fabric) == delivered, "N=%d: messages delivered", n);

    /* the other half keeps working */
    if (lo_half > 0) {
        check_works(&w, half, 0, lo_half, "the live half");
    }
    amc_test_world_destroy(&w);
}

/* Dup agreed on before the survivors heard of the death: broken at birth. */
static void test_created_after(int n)
{
    amc_test_world_t  w;
    amc_comm_create_t ops[MAX_N];
    amc_comm_t        newc[MAX_N];
    amc_request_t     req;
    int               r, rc, victim = n - 1;

    if (amc_test_world_create(&w, n, AMC_FAKE_COMPLETE_ON_DELIVERY, NULL) != AMC_SUCCESS) {
        CHECK(0, "world of %d", n);
        return;
    }
    CHECK(amc_test_world_create_begin(&w, NULL, 0, NULL, NULL, ops) == AMC_SUCCESS, "begin");
    while (!amc_test_world_create_drive(&w, ops)) {
    }
    amc_fake_kill(w.fabric, victim);
    for (r = 0; r < n; r++) {
        rc = amc_comm_create_end(&ops[r], AMC_SUCCESS, &newc[r]);
        CHECK(rc == AMC_SUCCESS, "N=%d rank %d: the agreed dup: %s", n, r, amc_strerror(rc));
        if ((rc != AMC_SUCCESS) || (r == victim)) {
            continue;
        }
        rc = amc_ibarrier(newc[r], &req);
        CHECK(rc == AMC_ERR_PEER, "N=%d rank %d: ibarrier on a dup made after the death: %s",
              n, r, amc_strerror(rc));
    }
    amc_test_world_destroy(&w);
}

int main(void)
{
    int n;

    for (n = 2; n <= 4; n++) {
        test_death(n);
        test_created_after(n);
    }
    test_death(MAX_N);
    return amc_test_summary("test_peer");
}
