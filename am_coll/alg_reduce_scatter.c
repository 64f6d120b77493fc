/* Reduce-scatter as a reduce of the whole vector to rank 0 followed by a
 * linear scatter of its blocks, in one schedule. The reduce is the binomial
 * tree of alg_reduce.c: rank r accumulates ranks [r, r + 2^k) with the
 * child's block on the right, so the order is MPI's for any op. It runs in
 * scratch, so with AMC_IN_PLACE the input in the receive buffer is read once
 * (round 0) before a block is received over it. Rank 0 sends block i from
 * scratch; its own lands at the start of its receive buffer. */
#include "am_coll/alg.h"

static size_t amc_alg_rs_block(const amc_coll_args_t *a, int i)
{
    return ((a->coll == AMC_COLL_REDUCE_SCATTER) ? a->rcounts[i] : a->count) * a->dt_size;
}

int amc_alg_reduce_scatter_reduce_linear(amc_sched_builder_t *b, const amc_coll_args_t *a,
                                         int rank, int size)
{
    size_t total = 0, off;
    int    mask, i;

    for (i = 0; i < size; i++) {
        total += amc_alg_rs_block(a, i);
    }
    amc_sb_tmp(b, total);
    amc_sb_round(b);
    amc_sb_copy(b, AMC_BUF_TMP, 0, amc_alg_src_buf(a), 0, total);

    for (mask = 1; mask < size; mask <<= 1) {
        if (rank & mask) {
            amc_sb_round(b);
            amc_sb_send(b, rank & ~mask, AMC_BUF_TMP, 0, total);
            break;
        }
        if ((rank | mask) < size) {
            amc_sb_round(b);
            amc_sb_recv_reduce(b, rank | mask, AMC_BUF_TMP, 0, total, 1);
        }
    }

    amc_sb_round(b);
    if (rank != 0) {
        amc_sb_recv(b, 0, AMC_BUF_RECV, 0, amc_alg_rs_block(a, rank));
        return AMC_SUCCESS;
    }
    amc_sb_copy(b, AMC_BUF_RECV, 0, AMC_BUF_TMP, 0, amc_alg_rs_block(a, 0));
    off = amc_alg_rs_block(a, 0);
    for (i = 1; i < size; i++) {
        amc_sb_send(b, i, AMC_BUF_TMP, off, amc_alg_rs_block(a, i));
        off += amc_alg_rs_block(a, i);
    }
    return AMC_SUCCESS;
}
