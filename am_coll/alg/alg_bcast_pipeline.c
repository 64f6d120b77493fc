/* SPDX-License-Identifier: BSD-3-Clause */
/* Segmented binomial bcast for large messages: the same tree as the binomial
 * bcast, but the message moves in segments, and an inner rank forwards each
 * segment to its children as soon as that segment has landed (a requires
 * edge per segment, not a round per segment: a late segment from one child's
 * send does not hold up the next one). Every receive is ready from the start,
 * so segments land in place whenever they come. The depth of the tree is
 * paid once per message, not once per byte. */
#include "am_coll/alg/alg.h"

int amc_alg_bcast_pipeline(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size)
{
    size_t bytes = a->count * a->dt_size;
    size_t seg   = amc_alg_segment(a), nseg, j, off, len;
    int    vr    = amc_alg_rel(rank, a->root, size);
    int    mask  = 1, parent = -1, m;

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

    amc_sb_stage(b);
    for (j = 0; j < nseg; j++) {
        int recv = -1;

        off = j * seg;
        len = amc_alg_segment_len(bytes, off, seg);
        if (parent >= 0) {
            amc_sb_recv(b, parent, AMC_BUF_RECV, off, len);
            recv = amc_sb_last(b);
        }
        for (m = mask >> 1; m > 0; m >>= 1) {
            if (vr + m < size) {
                amc_sb_send(b, amc_alg_abs(vr + m, a->root, size), AMC_BUF_RECV, off, len);
                if (recv >= 0) {
                    amc_sb_requires(b, amc_sb_last(b), recv);
                }
            }
        }
    }
    return AMC_SUCCESS;
}
