/* SPDX-License-Identifier: BSD-3-Clause */
/* Binomial-tree broadcast: the root's relative rank is 0; every other rank
 * receives from the rank that differs in its lowest set bit, then sends to the
 * ranks below that bit. ceil(log2 N) steps along any path. */
#include "am_coll/alg/alg.h"

#include <stdint.h>

int amc_alg_bcast_binomial(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size)
{
    size_t bytes = a->count * a->dt_size;
    int    vr    = amc_alg_rel(rank, a->root, size);
    int    mask  = 1;

    while ((mask < size) && !(vr & mask)) {
        mask <<= 1;
    }
    if (vr != 0) {
        amc_sb_round(b);
        amc_sb_recv(b, amc_alg_abs(vr - mask, a->root, size), AMC_BUF_RECV, 0, bytes);
    }
    amc_sb_round(b);
    for (mask >>= 1; mask > 0; mask >>= 1) {
        if (vr + mask < size) {
            amc_sb_send(b, amc_alg_abs(vr + mask, a->root, size), AMC_BUF_RECV, 0, bytes);
        }
    }
    return AMC_SUCCESS;
}

/* k-nomial broadcast (radix AMC_BCAST_KNOMIAL_RADIX): relative rank vr
 * receives from vr less its lowest nonzero base-k digit, then sends to
 * vr + d k^j for every lower position j and digit d = 1..k-1, the largest
 * subtrees first. ceil(log_k N) steps along any path, k - 1 sends per step:
 * fewer steps than binomial where a rank can post several sends in the time
 * of one hop. */
int amc_alg_bcast_knomial(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size)
{
    const int64_t k     = AMC_BCAST_KNOMIAL_RADIX;
    size_t        bytes = a->count * a->dt_size;
    int64_t       vr    = amc_alg_rel(rank, a->root, size), m = 1, d, digit;

    while (m < size) {
        digit = (vr / m) % k;
        if (digit != 0) {
            amc_sb_round(b);
            amc_sb_recv(b, amc_alg_abs((int)(vr - digit * m), a->root, size), AMC_BUF_RECV, 0,
                        bytes);
            break;
        }
        m *= k;
    }
    amc_sb_round(b);
    for (m /= k; m > 0; m /= k) {
        for (d = k - 1; d >= 1; d--) {
            if (vr + d * m < size) {
                amc_sb_send(b, amc_alg_abs((int)(vr + d * m), a->root, size), AMC_BUF_RECV, 0,
                            bytes);
            }
        }
    }
    return AMC_SUCCESS;
}
