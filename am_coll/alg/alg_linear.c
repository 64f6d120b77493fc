/* SPDX-License-Identifier: BSD-3-Clause */
/* Linear gather, scatter and bcast: the root talks to every rank in one
 * round, and each block travels once, straight between the user buffers. */
#include "am_coll/alg/alg.h"

int amc_alg_gather_linear(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size)
{
    size_t bytes = a->count * a->dt_size;
    int    late  = amc_alg_pulled(a, bytes);
    int    i;

    amc_sb_round(b);
    if (rank != a->root) {
        amc_sb_send(b, a->root, AMC_BUF_SEND, 0, bytes);
        return AMC_SUCCESS;
    }
    if (!a->in_place && !late) {
        amc_sb_copy(b, AMC_BUF_RECV, (size_t)rank * bytes, AMC_BUF_SEND, 0, bytes);
    }
    for (i = 0; i < size; i++) {
        if (i != rank) {
            amc_sb_recv(b, i, AMC_BUF_RECV, (size_t)i * bytes, bytes);
        }
    }
    amc_alg_own_block_late(b, a, late, AMC_BUF_RECV, (size_t)rank * bytes, AMC_BUF_SEND, 0, bytes);
    return AMC_SUCCESS;
}

/* The root sends block i (stride bytes apart; 0: the same block) to rank i,
 * every other rank receives its block into place. */
static void amc_alg_fan_out(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size,
                            int buf, size_t stride)
{
    size_t bytes = a->count * a->dt_size;
    int    i, peer;

    amc_sb_round(b);
    if (rank != a->root) {
        amc_sb_recv(b, a->root, AMC_BUF_RECV, 0, bytes);
        return;
    }
    if ((stride > 0) && !a->in_place) {
        amc_sb_copy(b, AMC_BUF_RECV, 0, buf, (size_t)rank * stride, bytes);
    }
    for (i = 1; i < size; i++) {
        peer = (rank + i) % size;
        amc_sb_send(b, peer, buf, (size_t)peer * stride, bytes);
    }
}

int amc_alg_scatter_linear(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size)
{
    amc_alg_fan_out(b, a, rank, size, AMC_BUF_SEND, a->count * a->dt_size);
    return AMC_SUCCESS;
}

/* Linear broadcast: each rank is scheduled once, where a tree's inner ranks
 * must be scheduled to forward. */
int amc_alg_bcast_linear(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size)
{
    amc_alg_fan_out(b, a, rank, size, AMC_BUF_RECV, 0);
    return AMC_SUCCESS;
}
