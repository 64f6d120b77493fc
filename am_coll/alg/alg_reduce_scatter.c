/* SPDX-License-Identifier: BSD-3-Clause */
/* Reduce-scatter as a reduce of the whole vector to rank 0 followed by a
 * linear scatter of its blocks, in one schedule. The reduce is the binomial
 * tree of alg_reduce.c: rank r accumulates ranks [r, r + 2^k) with the
 * child's block on the right, so the order is MPI's for any op. It runs in
 * scratch, so with AMC_IN_PLACE the input in the receive buffer is read once
 * (round 0) before a block is received over it. Rank 0 sends block i from
 * scratch; its own lands at the start of its receive buffer. */
#include "am_coll/alg/alg.h"

#include <stdlib.h>

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

/* Direct reduce-scatter: every rank sends block j of its vector straight to
 * rank j and reduces the N - 1 blocks it gets into its own, so the data
 * crosses one hop and each rank moves (N - 1) / N of the vector, the least a
 * reduce-scatter can. The blocks are combined one at a time, in a chain of
 * requires edges: those of lower ranks as the left operand from r - 1 down to
 * 0, then those of higher ranks as the right operand from r + 1 up, which
 * keeps MPI's order for any op; with a commutative op the chain follows the
 * order the peers send in (r - 1, r - 2, ... around the ring), so blocks
 * usually arrive in the order they are combined. In place the input is the
 * receive buffer, whose start the result overwrites: the sum is then built
 * in scratch and copied once every send is done. */
/* Every other rank's block reduced into acc, one after the other, each
 * requiring the one before (and prev, the act that put this rank's own value
 * there, if any): lower ranks from rank-1 down on the left, then higher ranks
 * from rank+1 up on the right, which is MPI's order for any op; a commutative
 * op takes peers in the order they are likely to send. In the current stage. */
void amc_alg_reduce_chain(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size,
                          int from, int acc, size_t bytes, int prev)
{
    int i, peer;

    for (i = from; i < size; i++) {
        if (a->commutative) {
            peer = (rank - i + size) % size;
        } else {
            peer = (i <= rank) ? rank - i : i;
        }
        amc_sb_recv_reduce(b, peer, acc, 0, bytes, peer > rank);
        if (prev >= 0) { /* no copy of an empty block */
            amc_sb_requires(b, amc_sb_last(b), prev);
        }
        prev = amc_sb_last(b);
    }
}

int amc_alg_reduce_scatter_direct(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank,
                                  int size)
{
    size_t  mine = amc_alg_rs_block(a, rank), *offs;
    int     acc  = a->in_place ? AMC_BUF_TMP : AMC_BUF_RECV;
    int     src  = amc_alg_src_buf(a), prev = -1, i, peer;

    offs = malloc(((size_t)size + 1) * sizeof(*offs));
    if (offs == NULL) {
        return AMC_ERR_NO_MEMORY;
    }
    offs[0] = 0;
    for (i = 0; i < size; i++) {
        offs[i + 1] = offs[i] + amc_alg_rs_block(a, i);
    }

    amc_sb_round(b);
    if (a->in_place && (size > 1)) {
        amc_sb_tmp(b, mine);
    }
    if (!a->in_place || (size > 1)) {
        amc_sb_copy(b, acc, 0, src, offs[rank], mine);
        prev = amc_sb_last(b);
    }
    if (size > 1) {
        amc_sb_stage(b);
        for (i = 1; i < size; i++) {
            peer = (rank + i) % size;
            amc_sb_send(b, peer, src, offs[peer], offs[peer + 1] - offs[peer]);
        }
        amc_alg_reduce_chain(b, a, rank, size, 1, acc, mine, prev);
        if (a->in_place) {
            amc_sb_round(b);
            amc_sb_copy(b, AMC_BUF_RECV, 0, AMC_BUF_TMP, 0, mine);
        }
    }
    free(offs);
    return AMC_SUCCESS;
}
