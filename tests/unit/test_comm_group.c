/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * amc_comm_id_reserve and amc_comm_create_group (the Open MPI component's
 * way to make a communicator from its members alone), on the fake fabric:
 * a communicator of world ranks {3, 1, 4} out of 5, in that order, made
 * from an id rank 3 reserved, has the right ranks and size, and two
 * collectives on it whose results depend on the exact membership and
 * order (an allgather of world ranks, an allreduce of 1 << world rank)
 * are right; ids are distinct from each other and from a dup's; a
 * non-member, a made-up id and an id already in use are refused.
 */
#include "tests/unit/harness.h"

#include <stdio.h>
#include <string.h>

#define N 5

int main(void)
{
    static const int members[3] = {3, 1, 4};
    amc_test_world_t world;
    amc_comm_t       c[N], dup[N], again = AMC_COMM_NULL;
    amc_request_t    reqs[N];
    int              status[N], rank, i, rc, r = -1, s = -1;
    uint64_t         id = 0, id2 = 0;
    int              mine[N], all[N][3];
    uint64_t         bits[N], orv[N];

    CHECK(amc_test_world_create(&world, N, AMC_FAKE_COMPLETE_ON_DELIVERY, NULL) == AMC_SUCCESS,
          "world of %d", N);
    memset(c, 0, sizeof(c));
    CHECK(amc_comm_id_reserve(amc_test_world_comm(&world, 3), &id) == AMC_SUCCESS, "reserve");
    CHECK(amc_comm_id_reserve(amc_test_world_comm(&world, 1), &id2) == AMC_SUCCESS, "reserve 2");
    CHECK(id != id2, "two leaders' ids differ: %llx %llx", (unsigned long long)id,
          (unsigned long long)id2);
    for (i = 0; i < 3; i++) {
        rank = members[i];
        rc   = amc_comm_create_group(amc_test_world_comm(&world, rank), members, 3, id, &c[rank]);
        CHECK(rc == AMC_SUCCESS, "create_group on world rank %d: %d", rank, rc);
        amc_comm_rank(c[rank], &r);
        amc_comm_size(c[rank], &s);
        CHECK((r == i) && (s == 3), "world rank %d is %d of %d, want %d of 3", rank, r, s, i);
    }
    /* refused: a non-member, an id that is no id, an id in use on this rank */
    CHECK(amc_comm_create_group(amc_test_world_comm(&world, 0), members, 3, id, &again) ==
              AMC_ERR_ARG, "non-member refused");
    CHECK(amc_comm_create_group(amc_test_world_comm(&world, 1), members, 3, 0, &again) ==
              AMC_ERR_ARG, "id 0 refused");
    CHECK(amc_comm_create_group(amc_test_world_comm(&world, 1), members, 3, id, &again) ==
              AMC_ERR_COMM, "id in use refused");
    CHECK(again == AMC_COMM_NULL, "no handle from a refused creation");

    /* membership and order, through two collectives */
    for (rank = 0; rank < N; rank++) {
        reqs[rank] = AMC_REQUEST_NULL;
        mine[rank] = rank;
        bits[rank] = 1ull << rank;
        if (c[rank] != AMC_COMM_NULL) {
            CHECK(amc_iallgather(&mine[rank], all[rank], 1, AMC_INT32, c[rank], &reqs[rank]) ==
                      AMC_SUCCESS, "iallgather start on %d", rank);
        }
    }
    CHECK(amc_test_world_drive(&world, reqs, status), "allgather completes");
    for (i = 0; i < 3; i++) {
        rank = members[i];
        CHECK(status[rank] == AMC_SUCCESS, "allgather on %d: %d", rank, status[rank]);
        CHECK(memcmp(all[rank], members, sizeof(members)) == 0,
              "world rank %d gathered %d %d %d", rank, all[rank][0], all[rank][1], all[rank][2]);
    }
    for (rank = 0; rank < N; rank++) {
        reqs[rank] = AMC_REQUEST_NULL;
        if (c[rank] != AMC_COMM_NULL) {
            CHECK(amc_iallreduce(&bits[rank], &orv[rank], 1, AMC_UINT64, AMC_BOR, c[rank],
                                 &reqs[rank]) == AMC_SUCCESS, "iallreduce start on %d", rank);
        }
    }
    CHECK(amc_test_world_drive(&world, reqs, status), "allreduce completes");
    for (i = 0; i < 3; i++) {
        rank = members[i];
        CHECK((status[rank] == AMC_SUCCESS) && (orv[rank] == ((1u << 3) | (1u << 1) | (1u << 4))),
              "allreduce on %d: %d, %llx", rank, status[rank], (unsigned long long)orv[rank]);
    }
    /* a dup after it takes another id: both work side by side */
    CHECK(amc_test_world_create_comms(&world, NULL, 0, NULL, NULL, dup) == AMC_SUCCESS, "dup");
    for (rank = 0; rank < N; rank++) {
        CHECK(dup[rank]->cid != id, "dup's id differs from the group's on %d", rank);
    }
    for (rank = 0; rank < N; rank++) {
        amc_comm_free(&dup[rank]);
        if (c[rank] != AMC_COMM_NULL) {
            CHECK(amc_comm_free(&c[rank]) == AMC_SUCCESS, "free on %d", rank);
        }
    }
    amc_test_world_settle(&world, "after the group's collectives");
    amc_test_world_destroy(&world);
    return amc_test_summary("test_comm_group");
}
