/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * For the mailbox tests (test_shm, test_shm_pull): one "rank" of the
 * process is made, opens another's inbox as a peer does, through
 * /proc/self/fd, and its parts go at the end.
 */
#ifndef AMC_TEST_SHM_CONNECT_H
#define AMC_TEST_SHM_CONNECT_H

#include "tests/unit/harness.h"
#include "transport/shm.h"

/* A rank of size in one process: its transport's fields, log, dead set
 * and inbox (a ring for each other rank). */
static inline void amc_test_shm_rank(amc_transport_t *tp, amc_log_t *log, amc_shm_t **shm,
                                     int rank, int size, amc_recv_cb_t cb, void *arg)
{
    *log         = (amc_log_t){ .level = AMC_LOG_ERROR, .rank = rank };
    tp->rank     = rank;
    tp->size     = size;
    tp->recv_cb  = cb;
    tp->recv_arg = arg;
    CHECK(amc_peer_set_init(&tp->dead, size) == AMC_SUCCESS, "dead set");
    CHECK(amc_shm_create(tp, (unsigned)(size - 1), (unsigned)rank, "test", log, shm) ==
          AMC_SUCCESS, "inbox of rank %d", rank);
}

/* Each of two ranks learns what the other published, as at start-up. */
static inline void amc_test_shm_meet(amc_shm_t *a, int a_rank, amc_shm_t *b, int b_rank)
{
    amc_shm_addr_t addr;

    if (!amc_shm_knows(a, b_rank)) {
        amc_shm_addr(b, &addr);
        CHECK(amc_shm_peer_add(a, b_rank, &addr) == AMC_SUCCESS, "rank %d learns rank %d's "
              "address", a_rank, b_rank);
    }
    if (!amc_shm_knows(b, a_rank)) {
        amc_shm_addr(a, &addr);
        CHECK(amc_shm_peer_add(b, a_rank, &addr) == AMC_SUCCESS, "rank %d learns rank %d's "
              "address", b_rank, a_rank);
    }
}

static inline amc_shm_out_t *amc_test_shm_connect(amc_shm_t *from, int from_rank, amc_shm_t *to,
                                                  int to_rank)
{
    amc_shm_out_t *out = NULL;

    amc_test_shm_meet(from, from_rank, to, to_rank);
    CHECK(amc_shm_connect(from, to_rank, &out) == AMC_SUCCESS,
          "rank %d opens rank %d's inbox", from_rank, to_rank);
    return out;
}

/* The inbox and the dead set of a test's rank. */
static inline void amc_test_shm_free(amc_shm_t *shm, amc_transport_t *tp)
{
    amc_shm_destroy(shm);
    amc_peer_set_cleanup(&tp->dead);
}

#endif
