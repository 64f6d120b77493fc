/* SPDX-License-Identifier: BSD-3-Clause */
/* Linear scan and exscan: a chain along the ranks. Rank r receives the
 * prefix of ranks 0..r-1 from r - 1, combines it with its own value, the
 * prefix on the left (MPI's order, so any op), and passes the result to
 * r + 1. N - 1 steps, but one message per rank and no data sent twice: for
 * small N, or where ranks reach the call at staggered times (rank r waits
 * only for the ranks below it).
 *
 * Exscan: the received prefix is rank r's result as it is; what goes on is
 * prefix (op) own, computed in scratch, where the own value is copied
 * before the prefix lands (in place it lands on it). Rank 0 only sends its
 * value and leaves its receive buffer untouched (MPI defines nothing
 * there). */
#include "am_coll/alg/alg.h"

int amc_alg_scan_linear(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size)
{
    size_t bytes = a->count * a->dt_size;

    if (rank == 0) {
        /* its prefix is its own value: sent where it is, in a stage beside
         * the copy, which the engine runs once the send is posted */
        amc_sb_stage(b);
        if (!a->in_place) {
            amc_sb_copy(b, AMC_BUF_RECV, 0, AMC_BUF_SEND, 0, bytes);
        }
        if (size > 1) {
            amc_sb_send(b, 1, amc_alg_src_buf(a), 0, bytes);
        }
        return AMC_SUCCESS;
    }
    amc_sb_round(b);
    if (!a->in_place && a->commutative && amc_alg_pulled(a, bytes)) {
        /* a pulled prefix straight into place, the own value reduced into
         * it after: no copy of it first, which the pull (and its sender)
         * would wait behind; either order for a commutative op. An eager
         * one is reduced from where it lands, the copy done before. */
        amc_sb_recv(b, rank - 1, AMC_BUF_RECV, 0, bytes);
        amc_sb_round(b);
        amc_sb_reduce(b, AMC_BUF_RECV, 0, AMC_BUF_SEND, 0, bytes, 0);
    } else {
        if (!a->in_place) {
            amc_sb_copy(b, AMC_BUF_RECV, 0, AMC_BUF_SEND, 0, bytes);
        }
        /* the message is the left operand: prefix (op) own */
        amc_sb_recv_reduce(b, rank - 1, AMC_BUF_RECV, 0, bytes, 0);
    }
    if (rank + 1 < size) {
        amc_sb_round(b);
        amc_sb_send(b, rank + 1, AMC_BUF_RECV, 0, bytes);
    }
    return AMC_SUCCESS;
}

int amc_alg_exscan_linear(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size)
{
    size_t bytes = a->count * a->dt_size;
    int    next  = (rank + 1 < size);

    if (size == 1) {
        return AMC_SUCCESS;
    }
    amc_sb_round(b);
    if (rank == 0) {
        amc_sb_send(b, 1, amc_alg_src_buf(a), 0, bytes);
        return AMC_SUCCESS;
    }
    if (next) {
        amc_sb_tmp(b, bytes);
        amc_sb_copy(b, AMC_BUF_TMP, 0, amc_alg_src_buf(a), 0, bytes);
    }
    amc_sb_recv(b, rank - 1, AMC_BUF_RECV, 0, bytes);
    if (next) {
        amc_sb_round(b);
        /* scratch = prefix (op) own */
        amc_sb_reduce(b, AMC_BUF_TMP, 0, AMC_BUF_RECV, 0, bytes, 0);
        amc_sb_send(b, rank + 1, AMC_BUF_TMP, 0, bytes);
    }
    return AMC_SUCCESS;
}
