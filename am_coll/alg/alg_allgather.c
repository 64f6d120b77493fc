/* SPDX-License-Identifier: BSD-3-Clause */
/* Ring allgather: in step k every rank passes the block it received in step
 * k-1 to its right neighbour. N-1 steps, each block sent N-1 times, any N.
 * The block sent and the block received in a step never overlap.
 *
 * The first step is a stage whose send reads the caller's own block where it
 * is: its copy into the receive buffer does not delay the send, and the
 * engine runs it once the send is posted, while the peer pulls (at N = 2 the
 * copy and the transfer overlap). */
#include "am_coll/alg/alg.h"

int amc_alg_allgather_ring(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size)
{
    size_t bytes = a->count * a->dt_size;
    int    right = (rank + 1) % size, left = (rank - 1 + size) % size, k;

    amc_sb_stage(b);
    if (!a->in_place) {
        amc_sb_copy(b, AMC_BUF_RECV, (size_t)rank * bytes, AMC_BUF_SEND, 0, bytes);
    }
    for (k = 0; k < size - 1; k++) {
        if (k > 0) {
            amc_sb_round(b);
        }
        if ((k == 0) && !a->in_place) {
            amc_sb_send(b, right, AMC_BUF_SEND, 0, bytes);
        } else {
            amc_sb_send(b, right, AMC_BUF_RECV, (size_t)((rank - k + size) % size) * bytes,
                        bytes);
        }
        amc_sb_recv(b, left, AMC_BUF_RECV, (size_t)((rank - k - 1 + 2 * size) % size) * bytes,
                    bytes);
    }
    return AMC_SUCCESS;
}

/* Linear allgather: every rank sends its block to every other rank at once,
 * one step (each block still sent N-1 times): for small blocks and ranks
 * sharing cores, where the ring's N-1 steps each need every rank scheduled. */
int amc_alg_allgather_linear(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank,
                             int size)
{
    size_t bytes = a->count * a->dt_size;
    int    k, peer;

    amc_sb_stage(b); /* as the ring's first step */
    if (!a->in_place) {
        amc_sb_copy(b, AMC_BUF_RECV, (size_t)rank * bytes, AMC_BUF_SEND, 0, bytes);
    }
    for (k = 1; k < size; k++) {
        amc_sb_send(b, (rank + k) % size, a->in_place ? AMC_BUF_RECV : AMC_BUF_SEND,
                    a->in_place ? (size_t)rank * bytes : 0, bytes);
    }
    for (k = 1; k < size; k++) {
        peer = (rank - k + size) % size;
        amc_sb_recv(b, peer, AMC_BUF_RECV, (size_t)peer * bytes, bytes);
    }
    return AMC_SUCCESS;
}
