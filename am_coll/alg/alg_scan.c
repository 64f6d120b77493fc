/* SPDX-License-Identifier: BSD-3-Clause */
/* Recursive-doubling scan and exscan (MPICH's): before step k rank r holds
 * in P the reduction of its aligned block of 2^k ranks and in the receive
 * buffer the prefix of that block up to r (exscan: before r). It exchanges P
 * with r ^ 2^k, which holds the adjacent block: a lower block goes on the
 * left of both P and the prefix, a higher one on the right of P only. Every
 * value covers contiguous ranks with the lower ones on the left, so the order
 * is MPI's for any op. ceil(log2 N) exchanges. The partner's P lands in Q
 * and is combined at the start of the next round, when P is no longer in
 * flight. Exscan leaves rank 0's receive buffer untouched. */
#include "am_coll/alg/alg.h"

enum { AMC_SCAN_NONE, AMC_SCAN_LOWER, AMC_SCAN_HIGHER };

/* Combines the partner's P (in Q) of the previous step. */
static void amc_alg_scan_combine(amc_sched_builder_t *b, int from, int update_p, int *first,
                                 size_t bytes)
{
    if (from == AMC_SCAN_LOWER) {
        if (update_p) {
            amc_sb_reduce(b, AMC_BUF_TMP, 0, AMC_BUF_TMP, bytes, bytes, 0);
        }
        if (*first) {
            amc_sb_copy(b, AMC_BUF_RECV, 0, AMC_BUF_TMP, bytes, bytes);
            *first = 0;
        } else {
            amc_sb_reduce(b, AMC_BUF_RECV, 0, AMC_BUF_TMP, bytes, bytes, 0);
        }
    } else if ((from == AMC_SCAN_HIGHER) && update_p) {
        amc_sb_reduce(b, AMC_BUF_TMP, 0, AMC_BUF_TMP, bytes, bytes, 1);
    }
}

static int amc_alg_scan_any(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank,
                            int size, int exclusive)
{
    size_t bytes = a->count * a->dt_size;
    int    first = exclusive, from = AMC_SCAN_NONE, mask, dst;

    amc_sb_round(b);
    if (!exclusive && !a->in_place) {
        amc_sb_copy(b, AMC_BUF_RECV, 0, AMC_BUF_SEND, 0, bytes);
    }
    if (size == 1) {
        return AMC_SUCCESS;
    }
    amc_sb_tmp(b, 2 * bytes);
    amc_sb_copy(b, AMC_BUF_TMP, 0, amc_alg_src_buf(a), 0, bytes);

    for (mask = 1; mask < size; mask <<= 1) {
        dst = rank ^ mask;
        if (dst >= size) {
            continue;
        }
        amc_sb_round(b);
        amc_alg_scan_combine(b, from, 1, &first, bytes);
        amc_sb_send(b, dst, AMC_BUF_TMP, 0, bytes);
        amc_sb_recv(b, dst, AMC_BUF_TMP, bytes, bytes);
        from = (dst < rank) ? AMC_SCAN_LOWER : AMC_SCAN_HIGHER;
    }
    amc_sb_round(b);
    amc_alg_scan_combine(b, from, 0, &first, bytes);
    return AMC_SUCCESS;
}

int amc_alg_scan_recdbl(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size)
{
    return amc_alg_scan_any(b, a, rank, size, 0);
}

int amc_alg_exscan_recdbl(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size)
{
    return amc_alg_scan_any(b, a, rank, size, 1);
}
