/* SPDX-License-Identifier: BSD-3-Clause */
/* More reduce-scatter algorithms, each for reduce_scatter_block (every
 * block a->count elements) and reduce_scatter (a->rcounts[i] elements for
 * rank i, zeros allowed); block i of the input vector starts at the sum of
 * the blocks before it, in bytes.
 *
 * - recursive halving: log2 steps, each exchanging half of what is left;
 *   a non-power-of-two N folds its extra ranks in first.
 * - ring: N - 1 steps, each passing one partially reduced block to the
 *   right neighbour.
 * - pairwise: N - 1 steps, in step k a rank sends the block of r + k to it
 *   and reduces its own block from r - k; MPI's order for any op.
 *
 * Halving and ring combine contributions in an order of their own, so the
 * table flags them commutative-only. */
#include "am_coll/alg/alg.h"

#include <stdlib.h>

static size_t amc_alg_rsm_block(const amc_coll_args_t *a, int i)
{
    return ((a->coll == AMC_COLL_REDUCE_SCATTER) ? a->rcounts[i] : a->count) * a->dt_size;
}

/* offs[i]: where block i starts in the vector, offs[size] its length; NULL
 * when out of memory. Free with free(). */
static size_t *amc_alg_rsm_offsets(const amc_coll_args_t *a, int size)
{
    size_t *offs = malloc(((size_t)size + 1) * sizeof(*offs));
    int     i;

    if (offs == NULL) {
        return NULL;
    }
    offs[0] = 0;
    for (i = 0; i < size; i++) {
        offs[i + 1] = offs[i] + amc_alg_rsm_block(a, i);
    }
    return offs;
}

/* A single rank: its whole vector is its block. In place it already lies
 * at the start of the receive buffer. */
static void amc_alg_rsm_single(amc_sched_builder_t *b, const amc_coll_args_t *a)
{
    amc_sb_round(b);
    if (!a->in_place) {
        amc_sb_copy(b, AMC_BUF_RECV, 0, AMC_BUF_SEND, 0, amc_alg_rsm_block(a, 0));
    }
}

/* ------------------------------------------------------ recursive halving */

/* The fold maps ranks to the 2^k ranks of the halving: with rem = N - 2^k,
 * the odd ranks below 2 rem take their even neighbour's vector and stand
 * for both (new rank r / 2), the ranks from 2 rem on become r - rem. A new
 * rank's blocks are those of the ranks it stands for, consecutive in the
 * vector because the map keeps rank order. */
static int amc_alg_rsh_rank(int newrank, int rem)
{
    return (newrank < rem) ? 2 * newrank + 1 : newrank + rem;
}

/* Where the blocks of new rank j start (j = 2^k: the vector's end). */
static size_t amc_alg_rsh_off(const size_t *offs, int j, int rem)
{
    return offs[(j < rem) ? 2 * j : j + rem];
}

/* What every builder here starts with: one rank copies its own block (0),
 * else the blocks' byte offsets (1), or -1 without memory. */
static int amc_alg_rsm_begin(amc_sched_builder_t *b, const amc_coll_args_t *a, int size,
                             size_t **offs)
{
    if (size == 1) {
        amc_alg_rsm_single(b, a);
        return 0;
    }
    *offs = amc_alg_rsm_offsets(a, size);
    return (*offs != NULL) ? 1 : -1;
}

/* The vector is reduced in scratch: each step a rank sends the half of
 * its window its partner keeps and reduces the half it keeps with the one
 * the partner sends (straight from the message: the two halves never
 * overlap, and no receive waits for a send of its own rank, so rendezvous
 * cannot close a cycle). The window halves from the top bit down, so the
 * one left is the rank's own blocks. An odd rank of the fold then hands
 * its even neighbour that rank's block. */
int amc_alg_reduce_scatter_halving(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank,
                                   int size)
{
    size_t *offs;
    size_t  total;
    int     src = amc_alg_src_buf(a), pof2 = 1, rem, newrank, mask, lo, partner, klo, slo;

    if (amc_alg_rsm_begin(b, a, size, &offs) <= 0) {
        return (size == 1) ? AMC_SUCCESS : AMC_ERR_NO_MEMORY;
    }
    total = offs[size];
    while (pof2 * 2 <= size) {
        pof2 *= 2;
    }
    rem = size - pof2;

    if ((rank < 2 * rem) && ((rank % 2) == 0)) {
        /* folded away: its vector goes to the odd neighbour, which sends
         * back this rank's block once it is reduced */
        amc_sb_round(b);
        amc_sb_send(b, rank + 1, src, 0, total);
        amc_sb_round(b);
        amc_sb_recv(b, rank + 1, AMC_BUF_RECV, 0, offs[rank + 1] - offs[rank]);
        free(offs);
        return AMC_SUCCESS;
    }

    amc_sb_tmp(b, total);
    amc_sb_round(b);
    amc_sb_copy(b, AMC_BUF_TMP, 0, src, 0, total);
    if (rank < 2 * rem) {
        /* the even neighbour is the lower rank: its vector on the left */
        amc_sb_round(b);
        amc_sb_recv_reduce(b, rank - 1, AMC_BUF_TMP, 0, total, 0);
        newrank = rank / 2;
    } else {
        newrank = rank - rem;
    }

    lo = 0; /* the window: new ranks [lo, lo + 2 mask) */
    for (mask = pof2 / 2; mask > 0; mask /= 2) {
        partner = amc_alg_rsh_rank(newrank ^ mask, rem);
        klo     = (newrank & mask) ? lo + mask : lo; /* the half this rank keeps */
        slo     = (newrank & mask) ? lo : lo + mask; /* the partner's */
        amc_sb_round(b);
        amc_sb_send(b, partner, AMC_BUF_TMP, amc_alg_rsh_off(offs, slo, rem),
                    amc_alg_rsh_off(offs, slo + mask, rem) - amc_alg_rsh_off(offs, slo, rem));
        amc_sb_recv_reduce(b, partner, AMC_BUF_TMP, amc_alg_rsh_off(offs, klo, rem),
                           amc_alg_rsh_off(offs, klo + mask, rem) -
                               amc_alg_rsh_off(offs, klo, rem),
                           partner > rank);
        lo = klo;
    }

    amc_sb_round(b);
    amc_sb_copy(b, AMC_BUF_RECV, 0, AMC_BUF_TMP, offs[rank], offs[rank + 1] - offs[rank]);
    if (rank < 2 * rem) {
        amc_sb_send(b, rank - 1, AMC_BUF_TMP, offs[rank - 1], offs[rank] - offs[rank - 1]);
    }
    free(offs);
    return AMC_SUCCESS;
}

/* ------------------------------------------------------------------- ring */

/* The vector is copied to scratch; in step k rank r sends its partial of
 * block r - k - 1 to r + 1 and reduces the partial of block r - k - 2 from
 * r - 1 into its own, the block it sends in step k + 1. After N - 1 steps
 * the partial it got last is its own block, every rank's contribution in.
 * The block sent and the block reduced in a step differ, so the reduction
 * reads the message directly. */
int amc_alg_reduce_scatter_ring(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank,
                                int size)
{
    size_t *offs;
    int     right = (rank + 1) % size, left = (rank - 1 + size) % size, k, sb, rb;

    if (amc_alg_rsm_begin(b, a, size, &offs) <= 0) {
        return (size == 1) ? AMC_SUCCESS : AMC_ERR_NO_MEMORY;
    }
    amc_sb_tmp(b, offs[size]);
    amc_sb_round(b);
    amc_sb_copy(b, AMC_BUF_TMP, 0, amc_alg_src_buf(a), 0, offs[size]);
    for (k = 0; k < size - 1; k++) {
        sb = (rank - k - 1 + 2 * size) % size;
        rb = (rank - k - 2 + 2 * size) % size;
        amc_sb_round(b);
        amc_sb_send(b, right, AMC_BUF_TMP, offs[sb], offs[sb + 1] - offs[sb]);
        /* the partial comes from the left: it is the left operand */
        amc_sb_recv_reduce(b, left, AMC_BUF_TMP, offs[rb], offs[rb + 1] - offs[rb], 0);
    }
    amc_sb_round(b);
    amc_sb_copy(b, AMC_BUF_RECV, 0, AMC_BUF_TMP, offs[rank], offs[rank + 1] - offs[rank]);
    free(offs);
    return AMC_SUCCESS;
}

/* --------------------------------------------------------------- pairwise */

/* In step k = 1 .. N - 1 rank r sends block r + k of its input to rank
 * r + k and receives its own block from r - k, one exchange a step (the
 * step's send completes before the next starts, bounding what is in
 * flight). The peers come in the order r - 1, r - 2, ..., 0, N - 1, ...,
 * r + 1: the lower ones each go on the left of the accumulator, which
 * keeps MPI's order; the higher ones arrive from the top down, so for an
 * order-sensitive op they build a second accumulator (each on its left,
 * N - 1 first) that joins the first on the right at the end. A commutative
 * op needs only the one. In place the input is the receive buffer, whose
 * start is still being sent from: the accumulator is then scratch, copied
 * over once every send is done. */
int amc_alg_reduce_scatter_pairwise(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank,
                                    int size)
{
    size_t *offs;
    size_t  mine, hi_off;
    int     src = amc_alg_src_buf(a), acc, hi = AMC_BUF_TMP, k, to, from, split;

    if (amc_alg_rsm_begin(b, a, size, &offs) <= 0) {
        return (size == 1) ? AMC_SUCCESS : AMC_ERR_NO_MEMORY;
    }
    mine   = offs[rank + 1] - offs[rank];
    acc    = a->in_place ? AMC_BUF_TMP : AMC_BUF_RECV;
    hi_off = a->in_place ? mine : 0;
    /* the second accumulator: order-sensitive ops with higher ranks only */
    split  = !a->commutative && (rank < size - 1);
    amc_sb_tmp(b, (a->in_place ? mine : 0) + (split ? mine : 0));

    amc_sb_round(b);
    amc_sb_copy(b, acc, 0, src, offs[rank], mine);
    for (k = 1; k < size; k++) {
        to   = (rank + k) % size;
        from = (rank - k + size) % size;
        amc_sb_round(b);
        amc_sb_send(b, to, src, offs[to], offs[to + 1] - offs[to]);
        if (!split || (from < rank)) {
            /* a lower rank's block on the left; a commutative op takes the
             * higher ones on the right */
            amc_sb_recv_reduce(b, from, acc, 0, mine, from > rank);
        } else if (from == size - 1) {
            amc_sb_recv(b, from, hi, hi_off, mine);
        } else {
            amc_sb_recv_reduce(b, from, hi, hi_off, mine, 0);
        }
    }
    amc_sb_round(b);
    if (split) {
        amc_sb_reduce(b, acc, 0, hi, hi_off, mine, 1);
    }
    if (a->in_place) {
        amc_sb_copy(b, AMC_BUF_RECV, 0, AMC_BUF_TMP, 0, mine);
    }
    free(offs);
    return AMC_SUCCESS;
}
