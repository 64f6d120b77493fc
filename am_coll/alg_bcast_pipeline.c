/* Segmented binomial bcast for large messages: the same tree as the binomial
 * bcast, but the message moves in segments, and in round j an inner rank
 * receives segment j while it forwards segment j-1 to its children. The
 * depth of the tree is paid once per message, not once per byte. */
#include "am_coll/alg.h"

int amc_alg_bcast_pipeline(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size)
{
    size_t bytes = a->count * a->dt_size;
    size_t seg   = a->segment, nseg, j, off, len;
    int    vr    = amc_alg_rel(rank, a->root, size);
    int    mask  = 1, parent = -1, m;

    seg -= seg % a->dt_size;
    if (seg == 0) {
        seg = a->dt_size;
    }
    nseg = (bytes + seg - 1) / seg;
    if (nseg == 0) {
        return amc_alg_bcast_binomial(b, a, rank, size);
    }
    while ((mask < size) && !(vr & mask)) {
        mask <<= 1;
    }
    if (vr != 0) {
        parent = amc_alg_abs(vr - mask, a->root, size);
    }

    /* round j: receive segment j (j < nseg), forward segment j-1 (j > 0) */
    for (j = 0; j <= nseg; j++) {
        amc_sb_round(b);
        if ((parent >= 0) && (j < nseg)) {
            off = j * seg;
            len = (bytes - off < seg) ? bytes - off : seg;
            amc_sb_recv(b, parent, AMC_BUF_RECV, off, len);
        }
        if (j > 0) {
            off = (j - 1) * seg;
            len = (bytes - off < seg) ? bytes - off : seg;
            for (m = mask >> 1; m > 0; m >>= 1) {
                if (vr + m < size) {
                    amc_sb_send(b, amc_alg_abs(vr + m, a->root, size), AMC_BUF_RECV, off, len);
                }
            }
        }
    }
    return AMC_SUCCESS;
}
