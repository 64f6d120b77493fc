/* SPDX-License-Identifier: BSD-3-Clause */
/* Reduce along a k-nomial tree, and Rabenseifner's reduce (a reduce-scatter
 * by recursive halving, then a gather of the blocks to the root).
 *
 * k-nomial (radix AMC_BCAST_KNOMIAL_RADIX, the bcast's tree run backwards):
 * relative rank vr adds the subtrees of its children vr + d k^j, level j
 * from 0 up and digit d from 1 up, each on the right of what it holds,
 * then sends to its parent vr less its lowest nonzero base-k digit. A
 * subtree covers the consecutive ranks [vr + d k^j, vr + (d + 1) k^j), so
 * with the tree rooted at rank 0 the result is x0 op x1 op ... op x(N-1) for
 * any op; rank 0 then forwards it to the root. A commutative op needs no
 * such order: the tree is rooted at the root itself, one hop less.
 * ceil(log_k N) levels against ceil(log2 N) for binomial, with up to k - 1
 * messages a level into each parent.
 *
 * Rabenseifner (commutative ops only): the fold, the halving and the
 * blocks of am_coll/alg/alg_allreduce_rsag.c; the root takes part whatever its
 * rank (it is the one kept of its pair), and the blocks gather to it in a
 * binomial tree over the places, relative by exclusive or so that every
 * window stays one range of consecutive blocks. Each rank sends at most
 * the vector once in the halving and once in the gather: for large vectors,
 * where binomial sends the whole of it log2 N times along a path. */
#include "am_coll/alg/alg.h"

#include <stdint.h>

void amc_alg_knomial_up(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size,
                        int top, int acc, int mine)
{
    const int64_t k     = AMC_BCAST_KNOMIAL_RADIX;
    size_t        bytes = a->count * a->dt_size;
    int64_t       vr    = amc_alg_rel(rank, top, size), m, d;
    int           have  = (acc == mine), parent = -1, child;

    amc_sb_round(b);
    for (m = 1; m < size; m *= k) {
        d = (vr / m) % k;
        if (d != 0) {
            parent = amc_alg_abs((int)(vr - d * m), top, size);
            break;
        }
        for (d = 1; (d < k) && (vr + d * m < size); d++) {
            child = amc_alg_abs((int)(vr + d * m), top, size);
            amc_sb_round(b);
            if (have) {
                amc_sb_recv_reduce(b, child, acc, 0, bytes, 1);
            } else {
                /* the first child straight into the accumulator, this rank's
                 * own vector reduced in from the left: no copy of it */
                amc_sb_recv(b, child, acc, 0, bytes);
                amc_sb_round(b);
                amc_sb_reduce(b, acc, 0, mine, 0, bytes, 0);
                have = 1;
            }
        }
    }
    if (parent >= 0) {
        amc_sb_round(b);
        amc_sb_send(b, parent, have ? acc : mine, 0, bytes);
    } else if (!have) {
        amc_sb_copy(b, acc, 0, mine, 0, bytes); /* a single rank */
    }
}

int amc_alg_reduce_knomial(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank, int size)
{
    size_t bytes = a->count * a->dt_size;
    int    top   = a->commutative ? a->root : 0;
    int    mine  = (a->in_place && (rank == a->root)) ? AMC_BUF_RECV : AMC_BUF_SEND;
    int    acc   = ((rank == top) && (top == a->root)) ? AMC_BUF_RECV : AMC_BUF_TMP;

    if (acc == AMC_BUF_TMP) {
        amc_sb_tmp(b, bytes);
    }
    amc_alg_knomial_up(b, a, rank, size, top, acc, mine);
    if (top != a->root) {
        amc_sb_round(b);
        if (rank == top) {
            amc_sb_send(b, a->root, acc, 0, bytes);
        } else if (rank == a->root) {
            amc_sb_recv(b, top, AMC_BUF_RECV, 0, bytes);
        }
    }
    return AMC_SUCCESS;
}

/* The binomial gather of the blocks to the root's place: a place whose
 * distance (exclusive or) from the root's has bit mask set sends its
 * window, the mask blocks of the mask-aligned range around its own, to the
 * place across that bit; before that it received the windows of the lower
 * bits, all at once (they are disjoint, and the send waits for them). */
static void amc_rsag_gather(amc_sched_builder_t *b, const amc_rsag_t *r, int root_place)
{
    int    vr = r->place ^ root_place, mask, peer, lo;
    size_t off;

    amc_sb_round(b);
    for (mask = 1; mask < r->pof2; mask *= 2) {
        peer = r->place ^ mask;
        if (vr & mask) {
            lo  = r->place & ~(mask - 1);
            off = amc_rsag_off(r, lo);
            amc_sb_round(b);
            amc_rsag_send(b, amc_rsag_rank(r, peer), r->work, off,
                          amc_rsag_off(r, lo + mask) - off);
            return;
        }
        lo  = peer & ~(mask - 1);
        off = amc_rsag_off(r, lo);
        amc_rsag_recv(b, amc_rsag_rank(r, peer), r->work, off, amc_rsag_off(r, lo + mask) - off);
    }
}

int amc_alg_reduce_rabenseifner(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank,
                                int size)
{
    size_t     bytes = a->count * a->dt_size;
    int        mine  = (a->in_place && (rank == a->root)) ? AMC_BUF_RECV : AMC_BUF_SEND;
    int        work  = (rank == a->root) ? AMC_BUF_RECV : AMC_BUF_TMP;
    amc_rsag_t r, root;

    if (size == 1) {
        amc_sb_round(b);
        amc_sb_copy(b, AMC_BUF_RECV, 0, mine, 0, bytes);
        return AMC_SUCCESS;
    }
    amc_rsag_init(&r, a, rank, size, a->root, work, mine);
    amc_rsag_init(&root, a, a->root, size, a->root, work, mine);
    if ((work == AMC_BUF_TMP) && (r.place >= 0)) {
        amc_sb_tmp(b, bytes);
    }
    amc_rsag_fold(b, &r);
    amc_rsag_halve(b, &r);
    if (r.place >= 0) {
        amc_rsag_gather(b, &r, root.place);
    }
    return AMC_SUCCESS;
}
