/* SPDX-License-Identifier: BSD-3-Clause */
/* Binomial-tree reduce in rank order: rank r accumulates the ranks
 * [r, r + 2^k) by adding the block of child r + 2^k on the right, so the
 * result is x0 op x1 op ... op x(N-1) for any op, commutative or not. The tree
 * is rooted at rank 0, which forwards the result to the root if that is
 * another rank. A root 0 accumulates in its receive buffer. No rank copies
 * its own vector: a leaf sends it as it is, and a parent receives its first
 * child's block straight into the accumulator and reduces its own vector
 * in from the left (one pass over the data less than copy, receive into
 * scratch, reduce). */
#include "am_coll/alg/alg.h"

int amc_alg_reduce_binomial(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size)
{
    size_t bytes = a->count * a->dt_size;
    int    mine  = (a->in_place && (rank == a->root)) ? AMC_BUF_RECV : AMC_BUF_SEND;
    int    acc   = ((rank == 0) && (a->root == 0)) ? AMC_BUF_RECV : AMC_BUF_TMP;
    int    have  = 0, mask;

    if (acc == AMC_BUF_TMP) {
        amc_sb_tmp(b, bytes);
    }
    amc_sb_round(b);
    if (acc == mine) {
        have = 1; /* root 0 in place: its vector is the accumulator already */
    }

    for (mask = 1; mask < size; mask <<= 1) {
        if (rank & mask) {
            amc_sb_round(b);
            amc_sb_send(b, rank & ~mask, have ? acc : mine, 0, bytes);
            break;
        }
        if ((rank | mask) >= size) {
            continue;
        }
        amc_sb_round(b);
        if (have) {
            amc_sb_recv_reduce(b, rank | mask, acc, 0, bytes, 1);
        } else {
            amc_sb_recv(b, rank | mask, acc, 0, bytes);
            amc_sb_round(b);
            amc_sb_reduce(b, acc, 0, mine, 0, bytes, 0);
            have = 1;
        }
    }

    if (rank == 0) {
        if (!have) {
            amc_sb_copy(b, acc, 0, mine, 0, bytes); /* a single rank */
        }
        if (a->root != 0) {
            amc_sb_round(b);
            amc_sb_send(b, a->root, acc, 0, bytes);
        }
    } else if (rank == a->root) {
        amc_sb_round(b);
        amc_sb_recv(b, 0, AMC_BUF_RECV, 0, bytes);
    }
    return AMC_SUCCESS;
}

/* Linear reduce: every rank sends its vector straight to the root, which
 * reduces them in MPI's order as they allow (amc_alg_reduce_chain). One
 * scheduling step per rank: for few ranks, or ranks sharing cores, where a
 * tree's inner ranks must each be scheduled to forward. */
int amc_alg_reduce_linear(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size)
{
    size_t bytes = a->count * a->dt_size;
    int    src   = amc_alg_src_buf(a), prev = -1, from = 1;

    amc_sb_round(b);
    if (rank != a->root) {
        amc_sb_send(b, a->root, src, 0, bytes);
        return AMC_SUCCESS;
    }
    if (!a->in_place && a->commutative && (size > 1) && amc_alg_pulled(a, bytes)) {
        /* a pulled first vector straight into the result, the root's own
         * reduced into it after: no copy of its own first, which the pull
         * (and its sender) would wait behind. An eager one is reduced from
         * where it lands, the copy done before it came. */
        amc_sb_recv(b, (rank + size - 1) % size, AMC_BUF_RECV, 0, bytes);
        amc_sb_round(b);
        amc_sb_reduce(b, AMC_BUF_RECV, 0, src, 0, bytes, 0);
        prev = amc_sb_last(b);
        from = 2;
    } else if (!a->in_place) {
        amc_sb_copy(b, AMC_BUF_RECV, 0, src, 0, bytes);
        prev = amc_sb_last(b);
    }
    if (size > from) {
        amc_sb_stage(b);
        amc_alg_reduce_chain(b, a, rank, size, from, AMC_BUF_RECV, bytes, prev);
    }
    return AMC_SUCCESS;
}
