/* SPDX-License-Identifier: BSD-3-Clause */
/* Allreduce for large counts and for small communicators.
 *
 * Ring (commutative ops only: the ring adds contributions in ring order):
 * the vector is cut into N chunks; in N-1 reduce-scatter steps each rank
 * passes a chunk to its right neighbour, which reduces it straight from the
 * message into its own copy (the chunk received never overlaps the chunk
 * sent in the same step), so rank r ends with chunk r+1 complete; N-1
 * allgather steps then circulate the complete chunks. Each rank sends
 * 2(N-1)/N of the vector, against log2 N whole vectors for recursive doubling.
 *
 * Linear: every rank sends its vector to rank 0 and receives the result:
 * two scheduling steps per rank, which matters when ranks share cores. Rank
 * 0 combines the vectors in rank order, so any op is correct. */
#include "am_coll/alg/alg.h"

static void amc_ring_chunk(size_t count, int size, int i, size_t *first, size_t *n)
{
    size_t base = count / (size_t)size, rem = count % (size_t)size, k = (size_t)i;

    *first = k * base + ((k < rem) ? k : rem);
    *n     = base + ((k < rem) ? 1 : 0);
}

int amc_alg_allreduce_ring(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size)
{
    size_t dt    = a->dt_size, first, n;
    int    right = (rank + 1) % size, left = (rank - 1 + size) % size, k, c;

    amc_sb_round(b);
    if (!a->in_place) {
        amc_sb_copy(b, AMC_BUF_RECV, 0, AMC_BUF_SEND, 0, a->count * dt);
    }
    for (k = 0; k < size - 1; k++) {
        if (k > 0) {
            amc_sb_round(b);
        }
        c = (rank - k + size) % size;
        amc_ring_chunk(a->count, size, c, &first, &n);
        amc_sb_send(b, right, AMC_BUF_RECV, first * dt, n * dt);
        c = (rank - k - 1 + size) % size;
        amc_ring_chunk(a->count, size, c, &first, &n);
        amc_sb_recv_reduce(b, left, AMC_BUF_RECV, first * dt, n * dt, 0);
    }
    for (k = 0; k < size - 1; k++) {
        amc_sb_round(b);
        c = (rank + 1 - k + size) % size;
        amc_ring_chunk(a->count, size, c, &first, &n);
        amc_sb_send(b, right, AMC_BUF_RECV, first * dt, n * dt);
        c = (rank - k + size) % size;
        amc_ring_chunk(a->count, size, c, &first, &n);
        amc_sb_recv(b, left, AMC_BUF_RECV, first * dt, n * dt);
    }
    return AMC_SUCCESS;
}

int amc_alg_allreduce_linear(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank,
                             int size)
{
    size_t bytes = a->count * a->dt_size;
    int    i;

    amc_sb_round(b);
    if (!a->in_place) {
        amc_sb_copy(b, AMC_BUF_RECV, 0, AMC_BUF_SEND, 0, bytes);
    }
    if (rank != 0) {
        amc_sb_send(b, 0, AMC_BUF_RECV, 0, bytes);
        amc_sb_round(b);
        amc_sb_recv(b, 0, AMC_BUF_RECV, 0, bytes);
        return AMC_SUCCESS;
    }
    /* vectors land in scratch in any order; combining waits for all of them */
    amc_sb_tmp(b, (size_t)(size - 1) * bytes);
    for (i = 1; i < size; i++) {
        amc_sb_recv(b, i, AMC_BUF_TMP, (size_t)(i - 1) * bytes, bytes);
    }
    amc_sb_round(b);
    for (i = 1; i < size; i++) {
        amc_sb_reduce(b, AMC_BUF_RECV, 0, AMC_BUF_TMP, (size_t)(i - 1) * bytes, bytes, 1);
    }
    amc_sb_round(b);
    for (i = 1; i < size; i++) {
        amc_sb_send(b, i, AMC_BUF_RECV, 0, bytes);
    }
    return AMC_SUCCESS;
}
