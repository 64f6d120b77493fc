/* Binomial-tree reduce in rank order: rank r accumulates the ranks
 * [r, r + 2^k) by adding the block of child r + 2^k on the right, so the
 * result is x0 op x1 op ... op x(N-1) for any op, commutative or not. The tree
 * is rooted at rank 0, which forwards the result to the root if that is
 * another rank. A root 0 accumulates in its receive buffer: no extra copy. */
#include "am_coll/alg.h"

int amc_alg_reduce_binomial(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size)
{
    size_t bytes = a->count * a->dt_size;
    int    mine  = (a->in_place && (rank == a->root)) ? AMC_BUF_RECV : AMC_BUF_SEND;
    int    acc   = ((rank == 0) && (a->root == 0)) ? AMC_BUF_RECV : AMC_BUF_TMP;
    int    mask;

    if (acc == AMC_BUF_TMP) {
        amc_sb_tmp(b, bytes);
    }
    amc_sb_round(b);
    amc_sb_copy(b, acc, 0, mine, 0, bytes);

    for (mask = 1; mask < size; mask <<= 1) {
        if (rank & mask) {
            amc_sb_round(b);
            amc_sb_send(b, rank & ~mask, acc, 0, bytes);
            break;
        }
        if ((rank | mask) < size) {
            amc_sb_round(b);
            amc_sb_recv_reduce(b, rank | mask, acc, 0, bytes, 1);
        }
    }

    if (rank == 0) {
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
