/* SPDX-License-Identifier: BSD-3-Clause */
/* Alltoall, pairwise or linear. Pairwise exchange: in step k rank r sends
 * its block for r+k and receives the block from r-k, so every step pairs each
 * rank with exactly one sender and one receiver (bounded traffic for large
 * blocks). Linear: the same messages in one step, all in flight at once, so a
 * rank is scheduled about once instead of N-1 times (small blocks, and ranks
 * sharing cores). In place, a block received in step k would be overwritten
 * before step N-k sends it: the blocks are staged in scratch, by the round's
 * copies, which run before its sends and receives. */
#include "am_coll/alg/alg.h"

static int amc_alg_alltoall_steps(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank,
                                  int size, int pairwise)
{
    size_t bytes = a->count * a->dt_size;
    int    from  = AMC_BUF_SEND, k, dst, src;

    amc_sb_round(b);
    if (a->in_place) {
        amc_sb_tmp(b, (size_t)size * bytes);
        amc_sb_copy(b, AMC_BUF_TMP, 0, AMC_BUF_RECV, 0, (size_t)size * bytes);
        from = AMC_BUF_TMP;
    } else {
        amc_sb_copy(b, AMC_BUF_RECV, (size_t)rank * bytes, AMC_BUF_SEND, (size_t)rank * bytes,
                    bytes);
    }
    for (k = 1; k < size; k++) {
        dst = (rank + k) % size;
        src = (rank - k + size) % size;
        if (pairwise && (k > 1)) {
            amc_sb_round(b);
        }
        amc_sb_send(b, dst, from, (size_t)dst * bytes, bytes);
        amc_sb_recv(b, src, AMC_BUF_RECV, (size_t)src * bytes, bytes);
    }
    return AMC_SUCCESS;
}

int amc_alg_alltoall_pairwise(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank,
                              int size)
{
    return amc_alg_alltoall_steps(b, a, rank, size, 1);
}

int amc_alg_alltoall_linear(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size)
{
    return amc_alg_alltoall_steps(b, a, rank, size, 0);
}
