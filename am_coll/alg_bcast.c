/* Binomial-tree broadcast: the root's relative rank is 0; every other rank
 * receives from the rank that differs in its lowest set bit, then sends to the
 * ranks below that bit. ceil(log2 N) steps along any path. */
#include "am_coll/alg.h"

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
