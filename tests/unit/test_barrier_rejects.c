/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Messages a correct peer never sends: an older sequence number, an unknown
 * or freed context id, a round out of range, the wrong sender, a duplicate,
 * a truncated header, garbage. Each must surface as AMC_ERR_PROTOCOL from the
 * victim's next test, and a barrier on every rank afterwards must succeed.
 */
#include "am_coll/api/config_read.h"
#include "tests/unit/harness.h"
#include "handlers/wire.h"
#include "am_coll/context/comm_table.h"

#include <string.h>

#define N 4

/* Drives every rank's request to completion; returns each rank's status. */
static void drive(amc_test_world_t *w, amc_request_t *reqs, int *status)
{
    int rank, flag, pending, guard = 0;

    for (rank = 0; rank < w->n; rank++) {
        status[rank] = -1;
    }
    do {
        pending = 0;
        for (rank = 0; rank < w->n; rank++) {
            if (status[rank] != -1) {
                continue;
            }
            flag         = 0;
            status[rank] = amc_test(&reqs[rank], &flag);
            if ((status[rank] == AMC_SUCCESS) && !flag) {
                status[rank] = -1;
                pending++;
            }
        }
        if (pending) {
            (void)amc_fake_deliver(w->fabric, 0);
        }
    } while (pending && (++guard < 100000));
    CHECK(guard < 100000, "barrier did not finish");
}

static void barrier_all(amc_test_world_t *w, amc_comm_t *comms, int *status)
{
    amc_request_t reqs[N];
    int           rank, rc;

    for (rank = 0; rank < w->n; rank++) {
        rc = amc_ibarrier(comms[rank], &reqs[rank]);
        CHECK(rc == AMC_SUCCESS, "ibarrier: %s", amc_strerror(rc));
    }
    drive(w, reqs, status);
}

static void world_comms(amc_test_world_t *w, amc_comm_t *comms)
{
    int rank;

    for (rank = 0; rank < w->n; rank++) {
        comms[rank] = amc_test_world_comm(w, rank);
    }
}

/* A barrier message as a peer would pack it. */
typedef struct {
    amc_wire_packed_t p;
    size_t            len;
} wire_t;

static wire_t make_hdr(uint64_t cid, uint64_t seq, unsigned round, unsigned src)
{
    amc_wire_hdr_t hdr;
    wire_t         wire;

    memset(&hdr, 0, sizeof(hdr));
    hdr.kind  = AMC_WIRE_BARRIER;
    hdr.round = (uint32_t)round;
    hdr.root  = -1;
    hdr.src   = src;
    hdr.cid   = cid;
    hdr.seq   = seq;
    memset(&wire, 0, sizeof(wire));
    wire.len = amc_wire_pack(&hdr, &wire.p);
    return wire;
}

/* Injects bytes at rank 1, runs a barrier everywhere: rank 1 must report
 * AMC_ERR_PROTOCOL (the others succeed); then a clean barrier must work. */
static void expect_rejected(const char *what, const void *bytes, size_t len)
{
    amc_test_world_t w;
    amc_comm_t       comms[N];
    int              status[N], rank, rc;

    rc = amc_test_world_create(&w, N, AMC_FAKE_COMPLETE_ON_DELIVERY, NULL);
    CHECK(rc == AMC_SUCCESS, "world");
    world_comms(&w, comms);

    barrier_all(&w, comms, status); /* seq 0 done everywhere */
    for (rank = 0; rank < N; rank++) {
        CHECK(status[rank] == AMC_SUCCESS, "%s: warm-up barrier on rank %d: %s", what, rank,
              amc_strerror(status[rank]));
    }

    rc = amc_fake_inject(w.fabric, 0, 1, bytes, len);
    CHECK(rc == AMC_SUCCESS, "inject");
    barrier_all(&w, comms, status);
    CHECK(status[1] == AMC_ERR_PROTOCOL, "%s: rank 1 got '%s', expected a protocol error", what,
          amc_strerror(status[1]));
    for (rank = 0; rank < N; rank++) {
        if (rank != 1) {
            CHECK(status[rank] == AMC_SUCCESS, "%s: bystander rank %d got %s", what, rank,
                  amc_strerror(status[rank]));
        }
    }

    /* the state is still usable: the failed instance ran on in the background */
    barrier_all(&w, comms, status);
    for (rank = 0; rank < N; rank++) {
        CHECK(status[rank] == AMC_SUCCESS, "%s: barrier after the error on rank %d: %s", what,
              rank, amc_strerror(status[rank]));
    }
    CHECK(amc_fake_deliverable(w.fabric) == 0, "%s: messages left over", what);
    amc_test_world_destroy(&w);
}

static void test_header_cases(void)
{
    wire_t        hdr;
    unsigned char garbage[AMC_WIRE_CORE_BYTES];

    /* rank 1's round-0 partner is rank 0 */
    hdr = make_hdr(AMC_CID_WORLD, 0, 0, 0);
    expect_rejected("older sequence number", &hdr.p, hdr.len);

    hdr = make_hdr(AMC_CID_WORLD, 1, 2, 0); /* N=4 has rounds 0 and 1 */
    expect_rejected("round out of range", &hdr.p, hdr.len);

    hdr = make_hdr(AMC_CID_WORLD, 1, 0, 3); /* round 0 comes from rank 0, not 3 */
    expect_rejected("wrong sender for the round", &hdr.p, hdr.len);

    hdr = make_hdr(AMC_CID_WORLD, 1, 0, 0);
    expect_rejected("duplicate", &hdr.p, hdr.len);

    hdr = make_hdr(AMC_CID_WORLD, 1, 0, 0);
    expect_rejected("truncated header", &hdr.p, hdr.len - 5);

    hdr = make_hdr(AMC_CID_WORLD, 1, 0, 0); /* a word the flags do not announce */
    expect_rejected("oversized header", &hdr.p, hdr.len + 4);

    hdr = make_hdr(AMC_CID_WORLD, 1, 0, 0);
    expect_rejected("length not whole words", &hdr.p, hdr.len + 2);

    hdr = make_hdr(AMC_CID_WORLD, 1, 0, 0); /* announces a root that is not there */
    hdr.p.w[0] |= AMC_WIRE_X_ROOT << 24;
    expect_rejected("announced word missing", &hdr.p, hdr.len);

    hdr = make_hdr(AMC_CID_WORLD, 1, 0, 0);
    hdr.p.w[0] |= 0x80u << 24;
    expect_rejected("unknown header flag", &hdr.p, hdr.len);

    hdr = make_hdr(AMC_CID_WORLD, 1, 0, 0);
    hdr.p.w[0] = (hdr.p.w[0] & ~0xffu) | 0x11u;
    expect_rejected("bad magic", &hdr.p, hdr.len);

    hdr = make_hdr(AMC_CID_WORLD, 1, 0, 0);
    hdr.p.w[0] = (hdr.p.w[0] & ~0xff00u) | (99u << 8);
    expect_rejected("unknown wire version", &hdr.p, hdr.len);

    hdr = make_hdr(AMC_CID_WORLD, 1, 0, 0);
    hdr.p.w[0] = (hdr.p.w[0] & ~0xff0000u) | (77u << 16);
    expect_rejected("unknown message kind", &hdr.p, hdr.len);

    memset(garbage, 0xff, sizeof(garbage));
    expect_rejected("garbage", garbage, sizeof(garbage));
}

/* An unknown context id is held (a peer may be ahead of us in creating the
 * communicator) up to AMC_ORPHAN_MAX messages; beyond that it is an error. */
static void test_unknown_cid(void)
{
    amc_test_world_t w;
    amc_config_t     cfg;
    amc_comm_t       comms[N];
    wire_t           hdr = make_hdr(0x5eed5eed5eedull, 0, 0, 0); /* a 64-bit id */
    int              status[N], rank, rc;

    amc_config_defaults(&cfg);
    cfg.log_level  = -1;
    cfg.orphan_max = 1;
    rc = amc_test_world_create(&w, N, AMC_FAKE_COMPLETE_ON_DELIVERY, &cfg);
    CHECK(rc == AMC_SUCCESS, "world");
    world_comms(&w, comms);

    amc_fake_inject(w.fabric, 0, 1, &hdr.p, hdr.len);
    barrier_all(&w, comms, status);
    for (rank = 0; rank < N; rank++) {
        CHECK(status[rank] == AMC_SUCCESS, "one unknown-cid message is held, not an error");
    }
    CHECK(amc_context_orphans(w.ctx[1]) == 1, "the message is held");

    hdr = make_hdr(0x5eed5eed5eedull, 1, 0, 0);
    amc_fake_inject(w.fabric, 0, 1, &hdr.p, hdr.len);
    barrier_all(&w, comms, status);
    CHECK(status[1] == AMC_ERR_PROTOCOL, "beyond AMC_ORPHAN_MAX: got %s",
          amc_strerror(status[1]));
    CHECK(amc_context_orphans(w.ctx[1]) == 1, "the store stays bounded");

    barrier_all(&w, comms, status);
    for (rank = 0; rank < N; rank++) {
        CHECK(status[rank] == AMC_SUCCESS, "usable after the error: rank %d %s", rank,
              amc_strerror(status[rank]));
    }
    amc_test_world_destroy(&w);
}

/* A message for a communicator that this rank already freed. */
static void test_freed_cid(void)
{
    amc_test_world_t w;
    amc_comm_t       comms[N], dups[N];
    wire_t           hdr;
    int              status[N], rank, rc;

    rc = amc_test_world_create(&w, N, AMC_FAKE_COMPLETE_ON_DELIVERY, NULL);
    CHECK(rc == AMC_SUCCESS, "world");
    world_comms(&w, comms);
    rc = amc_test_world_create_comms(&w, comms, 0, NULL, NULL, dups);
    CHECK(rc == AMC_SUCCESS, "dup: %s", amc_strerror(rc));
    barrier_all(&w, dups, status);
    hdr = make_hdr(dups[1]->cid, 1, 0, 0);
    for (rank = 0; rank < N; rank++) {
        CHECK(status[rank] == AMC_SUCCESS, "barrier on the dup");
        rc = amc_comm_free(&dups[rank]);
        CHECK((rc == AMC_SUCCESS) && (dups[rank] == AMC_COMM_NULL), "free");
    }
    amc_fake_inject(w.fabric, 0, 1, &hdr.p, hdr.len);
    barrier_all(&w, comms, status);
    CHECK(status[1] == AMC_ERR_PROTOCOL, "freed cid: got %s", amc_strerror(status[1]));
    barrier_all(&w, comms, status);
    CHECK(status[1] == AMC_SUCCESS, "usable after the error");
    amc_test_world_destroy(&w);
}

int main(void)
{
    test_header_cases();
    test_unknown_cid();
    test_freed_cid();
    return amc_test_summary("test_barrier_rejects");
}
