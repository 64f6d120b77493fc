/* SPDX-License-Identifier: BSD-3-Clause */
/* More allgather algorithms: recursive doubling (log2 steps, any N through
 * a fold) and neighbour exchange (N / 2 steps of two blocks; odd N runs
 * ring steps). Both move blocks within the receive buffer, where block i
 * lies at i x the block's bytes: the range a step sends and the range it
 * receives never overlap. */
#include "am_coll/alg/alg.h"

/* ----------------------------------------------------- recursive doubling */

/* With N not a power of two, rem = N - 2^k: each even rank below 2 rem
 * gives its block to its odd neighbour and waits; the 2^k others (new rank
 * r / 2 for the odd ones below 2 rem, r - rem from there) run recursive
 * doubling, where new rank j stands for the blocks of the ranks it took
 * (2j and 2j + 1, or j + rem): consecutive in the buffer, because the map
 * keeps rank order, so in the step of distance m a rank exchanges its
 * window of m new ranks with j ^ m in one message each way. At the end
 * each odd rank of the fold sends the whole buffer to its even neighbour:
 * two steps more than a power of two, against the ring's N - 1. */
static int amc_alg_agr_rank(int newrank, int rem)
{
    return (newrank < rem) ? 2 * newrank + 1 : newrank + rem;
}

/* Where the blocks of new rank j start, in bytes (j = 2^k: the end). */
static size_t amc_alg_agr_off(int j, int rem, size_t bytes)
{
    return (size_t)((j < rem) ? 2 * j : j + rem) * bytes;
}

int amc_alg_allgather_recdbl(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank,
                             int size)
{
    size_t bytes = a->count * a->dt_size, mine = (size_t)rank * bytes;
    int    pof2  = 1, rem, newrank, mask, lo, plo;

    while (pof2 * 2 <= size) {
        pof2 *= 2;
    }
    rem = size - pof2;

    amc_sb_round(b);
    if ((rank < 2 * rem) && ((rank % 2) == 0)) {
        /* folded away: the whole buffer comes back, own block included, so
         * the send buffer need not be copied */
        amc_sb_send(b, rank + 1, amc_alg_src_buf(a), a->in_place ? mine : 0, bytes);
        amc_sb_round(b);
        amc_sb_recv(b, rank + 1, AMC_BUF_RECV, 0, (size_t)size * bytes);
        return AMC_SUCCESS;
    }
    if (!a->in_place) {
        amc_sb_copy(b, AMC_BUF_RECV, mine, AMC_BUF_SEND, 0, bytes);
    }
    if (rank < 2 * rem) {
        amc_sb_recv(b, rank - 1, AMC_BUF_RECV, mine - bytes, bytes);
        newrank = rank / 2;
    } else {
        newrank = rank - rem;
    }

    /* the window this rank holds: new ranks [lo, lo + mask) */
    lo = newrank;
    for (mask = 1; mask < pof2; mask *= 2) {
        plo = lo ^ mask;
        amc_sb_round(b);
        amc_sb_send(b, amc_alg_agr_rank(newrank ^ mask, rem), AMC_BUF_RECV,
                    amc_alg_agr_off(lo, rem, bytes),
                    amc_alg_agr_off(lo + mask, rem, bytes) - amc_alg_agr_off(lo, rem, bytes));
        amc_sb_recv(b, amc_alg_agr_rank(newrank ^ mask, rem), AMC_BUF_RECV,
                    amc_alg_agr_off(plo, rem, bytes),
                    amc_alg_agr_off(plo + mask, rem, bytes) - amc_alg_agr_off(plo, rem, bytes));
        lo &= ~mask;
    }

    if (rank < 2 * rem) {
        amc_sb_round(b);
        amc_sb_send(b, rank - 1, AMC_BUF_RECV, 0, (size_t)size * bytes);
    }
    return AMC_SUCCESS;
}

/* ------------------------------------------------------ neighbor exchange */

/* Neighbour exchange (even N): pair p is the blocks of ranks 2p and 2p + 1,
 * adjacent in the buffer. In step 0 the two ranks of a pair swap their
 * blocks; in step i >= 1 a rank swaps the pair it got in the step before
 * (its own in step 1) with a neighbour, left and right in turn: rank 2p
 * takes pair p - (i + 1) / 2 from 2p - 1 in odd steps and p + i / 2 from
 * 2p + 1 in even ones, rank 2p + 1 the mirror (p + (i + 1) / 2 from 2p + 2,
 * p - i / 2 from 2p). After N / 2 steps every pair has reached every rank:
 * half the ring's steps, each moving two blocks. Odd N has no pairs: the
 * ring's N - 1 steps of one block run instead (amc_alg_allgather_ring), so
 * any N is served; the table's id and name stay this algorithm's. */
int amc_alg_allgather_neighbor(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank,
                               int size)
{
    size_t bytes = a->count * a->dt_size, pair = 2 * bytes;
    int    npairs = size / 2, i, peer, got, prev;

    if (size % 2) {
        return amc_alg_allgather_ring(b, a, rank, size);
    }
    amc_sb_round(b);
    if (!a->in_place) {
        amc_sb_copy(b, AMC_BUF_RECV, (size_t)rank * bytes, AMC_BUF_SEND, 0, bytes);
    }
    peer = rank ^ 1;
    amc_sb_send(b, peer, AMC_BUF_RECV, (size_t)rank * bytes, bytes);
    amc_sb_recv(b, peer, AMC_BUF_RECV, (size_t)peer * bytes, bytes);

    prev = rank / 2;
    for (i = 1; i < npairs; i++) {
        got = amc_alg_nx_step(rank, size, i, &peer);
        amc_sb_round(b);
        amc_sb_send(b, peer, AMC_BUF_RECV, (size_t)prev * pair, pair);
        amc_sb_recv(b, peer, AMC_BUF_RECV, (size_t)got * pair, pair);
        prev = got;
    }
    return AMC_SUCCESS;
}
