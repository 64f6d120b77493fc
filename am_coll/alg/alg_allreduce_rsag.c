/* SPDX-License-Identifier: BSD-3-Clause */
/* Allreduce as a reduce-scatter and an allgather (Rabenseifner), and as a
 * k-nomial reduce followed by a k-nomial bcast.
 *
 * Rabenseifner (commutative ops only: blocks meet in the order of the
 * halving, not of the ranks). With N not a power of two, the first 2 * rem
 * ranks fold in pairs: one rank of each pair sends its whole vector to the
 * other, which combines it and takes part; the pof2 = N - rem that remain
 * are numbered 0 .. pof2 - 1 (their place). The vector is cut into pof2
 * blocks of whole elements (the first count % pof2 one element longer, so a
 * count below pof2 leaves some empty). Recursive halving: at distance
 * pof2 / 2 down to 1, a rank keeps the half of its window of blocks on its
 * side of the partner, sends the other half and reduces the partner's copy
 * of its half in, so that place p ends with block p complete, having sent
 * (pof2 - 1) / pof2 of the vector. Recursive doubling then swaps windows of
 * 1, 2, 4 ... blocks until every place has the whole vector, and the folded
 * ranks get it from their pair. Each block is reduced at one place and
 * copied everywhere else, so every rank ends with the same bits.
 *
 * The pieces (am_coll/alg/alg_rsag.c) are shared with the Rabenseifner
 * reduce (am_coll/alg/alg_reduce_large.c), which gathers the blocks to the
 * root instead of to everyone. */
#include "am_coll/alg/alg.h"

/* Recursive doubling over the places: after the exchange at distance mask
 * a place holds the 2 * mask blocks of its aligned window. */
static void amc_rsag_double(amc_sched_builder_t *b, const amc_rsag_t *r)
{
    int    mask, peer, lo, plo;
    size_t off, poff;

    if (r->place < 0) {
        return;
    }
    for (mask = 1; mask < r->pof2; mask *= 2) {
        peer = r->place ^ mask;
        lo   = r->place & ~(mask - 1);
        plo  = peer & ~(mask - 1);
        off  = amc_rsag_off(r, lo);
        poff = amc_rsag_off(r, plo);
        amc_sb_round(b);
        amc_rsag_send(b, amc_rsag_rank(r, peer), r->work, off, amc_rsag_off(r, lo + mask) - off);
        amc_rsag_recv(b, amc_rsag_rank(r, peer), r->work, poff,
                      amc_rsag_off(r, plo + mask) - poff);
    }
}

int amc_alg_allreduce_rabenseifner(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank,
                                   int size)
{
    size_t     bytes = a->count * a->dt_size;
    amc_rsag_t r;

    if (size == 1) {
        amc_sb_round(b);
        if (!a->in_place) {
            amc_sb_copy(b, AMC_BUF_RECV, 0, AMC_BUF_SEND, 0, bytes);
        }
        return AMC_SUCCESS;
    }
    amc_rsag_init(&r, a, rank, size, -1, AMC_BUF_RECV, amc_alg_src_buf(a));
    amc_rsag_fold(b, &r);
    amc_rsag_halve(b, &r);
    amc_rsag_double(b, &r);
    if (r.pair >= 0) {
        amc_sb_round(b);
        if (r.place < 0) {
            amc_rsag_recv(b, r.pair, AMC_BUF_RECV, 0, bytes);
        } else {
            amc_rsag_send(b, r.pair, AMC_BUF_RECV, 0, bytes);
        }
    }
    return AMC_SUCCESS;
}

/* k-nomial allreduce: the rank-order k-nomial reduce to rank 0, accumulating
 * in the receive buffer (every rank has one of the vector's size, so no
 * scratch), then the k-nomial bcast of rank 0's result back: any op, and
 * every rank ends with rank 0's bits. 2 ceil(log_k N) steps along a path
 * against log2 N for recursive doubling, but k - 1 messages a step and no
 * exchange of whole vectors in both directions. */
int amc_alg_allreduce_knomial(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank,
                              int size)
{
    amc_coll_args_t down = *a;

    amc_alg_knomial_up(b, a, rank, size, 0, AMC_BUF_RECV, amc_alg_src_buf(a));
    down.root = 0;
    return amc_alg_bcast_knomial(b, &down, rank, size);
}
