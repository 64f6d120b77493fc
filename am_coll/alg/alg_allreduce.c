/* SPDX-License-Identifier: BSD-3-Clause */
/* Recursive-doubling allreduce for small counts. With N not a power of two,
 * the first 2*rem ranks fold in pairs (the odd one keeps x(2i) op x(2i+1)),
 * the remaining power of two exchange and combine log2 steps, and the odd
 * ranks hand the result back. Every partial result covers a contiguous block
 * of ranks and the lower block is always the left operand, so the order is
 * MPI's for non-commutative ops too. The partner's block lands in scratch,
 * not in the accumulator, because the accumulator is being sent in the same
 * round. (Reducing straight from the message with an edge "receive requires
 * the send" deadlocks once the sends go by rendezvous: each send completes
 * only when the peer's receive pulls it, and that receive waits for the
 * peer's own send.) */
#include "am_coll/alg/alg.h"

int amc_alg_allreduce_recdbl(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank,
                             int size)
{
    size_t bytes = a->count * a->dt_size;
    int    pof2  = 1, rem, newrank, newdst, dst, mask, have;

    while (pof2 * 2 <= size) {
        pof2 *= 2;
    }
    rem = size - pof2;

    /* have: the receive buffer holds this rank's partial result. Without
     * it, the first exchange sends the send buffer itself and lands the
     * partner's block in the receive buffer, which the reduction then
     * combines with the send buffer: no copy of this rank's vector. Only an
     * odd rank of the fold, which reduces into its own vector, and a single
     * rank copy it. */
    have = a->in_place;
    amc_sb_tmp(b, bytes);
    amc_sb_round(b);
    if (!have && ((size == 1) || ((rank < 2 * rem) && (rank % 2)))) {
        amc_sb_copy(b, AMC_BUF_RECV, 0, AMC_BUF_SEND, 0, bytes);
        have = 1;
    }

    if (rank < 2 * rem) {
        amc_sb_round(b);
        if ((rank % 2) == 0) {
            amc_sb_send(b, rank + 1, have ? AMC_BUF_RECV : AMC_BUF_SEND, 0, bytes);
            newrank = -1;
        } else {
            amc_sb_recv_reduce(b, rank - 1, AMC_BUF_RECV, 0, bytes, 0);
            newrank = rank / 2;
        }
    } else {
        newrank = rank - rem;
    }

    if (newrank >= 0) {
        for (mask = 1; mask < pof2; mask <<= 1) {
            newdst = newrank ^ mask;
            dst    = (newdst < rem) ? newdst * 2 + 1 : newdst + rem;
            amc_sb_round(b);
            if (have) {
                amc_sb_send(b, dst, AMC_BUF_RECV, 0, bytes);
                amc_sb_recv(b, dst, AMC_BUF_TMP, 0, bytes);
                amc_sb_round(b);
                amc_sb_reduce(b, AMC_BUF_RECV, 0, AMC_BUF_TMP, 0, bytes, dst > rank);
            } else {
                /* the lower block stays the left operand */
                amc_sb_send(b, dst, AMC_BUF_SEND, 0, bytes);
                amc_sb_recv(b, dst, AMC_BUF_RECV, 0, bytes);
                amc_sb_round(b);
                amc_sb_reduce(b, AMC_BUF_RECV, 0, AMC_BUF_SEND, 0, bytes, dst < rank);
                have = 1;
            }
        }
    }

    if (rank < 2 * rem) {
        amc_sb_round(b);
        if ((rank % 2) == 0) {
            amc_sb_recv(b, rank + 1, AMC_BUF_RECV, 0, bytes);
        } else {
            amc_sb_send(b, rank - 1, AMC_BUF_RECV, 0, bytes);
        }
    }
    return AMC_SUCCESS;
}
