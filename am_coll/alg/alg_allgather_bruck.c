/* SPDX-License-Identifier: BSD-3-Clause */
/* Bruck allgather for small blocks: ceil(log2 N) steps for any N. Scratch
 * holds the blocks rotated so that slot i is the block of rank+i; in the step
 * of distance d a rank sends its first min(d, N-d) slots to rank-d and
 * receives as many into slots d.. from rank+d (the two ranges never overlap).
 * A last local pass rotates the slots into place. */
#include "am_coll/alg/alg.h"

int amc_alg_allgather_bruck(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size)
{
    size_t bytes = a->count * a->dt_size;
    int    mine  = a->in_place ? AMC_BUF_RECV : AMC_BUF_SEND;
    int    dist, cnt, i;

    amc_sb_tmp(b, (size_t)size * bytes);
    amc_sb_round(b);
    amc_sb_copy(b, AMC_BUF_TMP, 0, mine, a->in_place ? (size_t)rank * bytes : 0, bytes);
    for (dist = 1; dist < size; dist *= 2) {
        if (dist > 1) {
            amc_sb_round(b);
        }
        cnt = (dist < size - dist) ? dist : size - dist;
        amc_sb_send(b, (rank - dist + size) % size, AMC_BUF_TMP, 0, (size_t)cnt * bytes);
        amc_sb_recv(b, (rank + dist) % size, AMC_BUF_TMP, (size_t)dist * bytes,
                    (size_t)cnt * bytes);
    }
    amc_sb_round(b);
    for (i = 0; i < size; i++) {
        amc_sb_copy(b, AMC_BUF_RECV, (size_t)((rank + i) % size) * bytes, AMC_BUF_TMP,
                    (size_t)i * bytes, bytes);
    }
    return AMC_SUCCESS;
}
