/* SPDX-License-Identifier: BSD-3-Clause */
/* The blocks' moves on the barrier's rounds (am_coll/barrier/ctrl_blocks.h). */
#include "am_coll/barrier/ctrl_blocks.h"

#include <string.h>

/* The positions k of work's N blocks whose bit `bit` is `want`, in
 * order, out of work into msg (in 0) or from msg into work (in 1). */
static void amc_ctrl_blocks_pick(int size, size_t bytes, int bit, int want, uint8_t *work,
                                 void *msg, int in)
{
    uint8_t *m = msg;
    int      k;

    for (k = 0; k < size; k++) {
        if ((k & bit) == want) {
            if (in) {
                memcpy(work + (size_t)k * bytes, m, bytes);
            } else {
                memcpy(m, work + (size_t)k * bytes, bytes);
            }
            m += bytes;
        }
    }
}

void amc_ctrl_blocks_move(int rank, int size, size_t bytes, int round, uint8_t *work,
                          void *msg, int in)
{
    int bit = 1 << round;

    amc_ctrl_blocks_pick(size, bytes, bit, ~rank & bit, work, msg, in);
}

void amc_ctrl_blocks_bruck_load(unsigned coll, int rank, int size, size_t bytes,
                                const uint8_t *in, uint8_t *work)
{
    int j, from;

    if (!amc_ctrl_blocks_bruck_moves(coll)) {
        memcpy(work, in, bytes);
        return;
    }
    for (j = 0; j < size; j++) {
        from = amc_ctrl_blocks_wrap(rank + j, size);
        memcpy(work + (size_t)j * bytes, in + (size_t)from * bytes, bytes);
    }
}

void amc_ctrl_blocks_bruck(int size, size_t bytes, int round, uint8_t *work, void *msg,
                           int in)
{
    int bit = 1 << round;

    amc_ctrl_blocks_pick(size, bytes, bit, bit, work, msg, in);
}

void amc_ctrl_blocks_bruck_result(unsigned coll, int rank, int size, size_t bytes,
                                  const uint8_t *work, uint8_t *recv, amc_ctrl_kernel_t kernel,
                                  size_t count)
{
    int j, q;

    if ((coll != AMC_COLL_ALLREDUCE) && (coll != AMC_COLL_REDUCE_SCATTER_BLOCK)) {
        /* position j: rank - j's block */
        for (j = 0; j < size; j++) {
            q = amc_ctrl_blocks_wrap(rank - j, size);
            memcpy(recv + (size_t)q * bytes, work + (size_t)j * bytes, bytes);
        }
        return;
    }
    /* rank N-1's operand, then each lower one on the left: every rank
     * combines the same operands in the same order, so all get the same bits */
    memcpy(recv, work + (size_t)amc_ctrl_blocks_wrap(rank - (size - 1), size) * bytes, bytes);
    for (q = size - 2; q >= 0; q--) {
        j = amc_ctrl_blocks_wrap(rank - q, size);
        kernel(work + (size_t)j * bytes, recv, count);
    }
}

void amc_ctrl_blocks_halve(int rank, int size, size_t bytes, int round, uint8_t *work,
                           void *msg, int in, amc_ctrl_kernel_t kernel, size_t count)
{
    uint8_t *m = msg;
    uint8_t  tmp[AMC_CTRL_PAY_MAX];
    int      k, bit = 1 << round, lower = (rank ^ bit) < rank;

    for (k = 0; k < size; k++) {
        int differs = ((k ^ rank) & bit) != 0;

        if (((k ^ rank) & (bit - 1)) || (differs == in)) {
            continue; /* not live, or not this direction's */
        }
        if (!in) {
            memcpy(m, work + (size_t)k * bytes, bytes);
        } else if (lower) {
            kernel(m, work + (size_t)k * bytes, count);
        } else {
            memcpy(tmp, m, bytes);
            kernel(work + (size_t)k * bytes, tmp, count);
            memcpy(work + (size_t)k * bytes, tmp, bytes);
        }
        m += bytes;
    }
}
