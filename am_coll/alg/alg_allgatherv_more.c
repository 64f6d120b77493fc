/* SPDX-License-Identifier: BSD-3-Clause */
/* More allgatherv algorithms: the vector forms of recursive doubling, Bruck
 * and neighbour exchange (am_coll/alg/alg_allgather_more.c,
 * am_coll/alg/alg_allgather_bruck.c). Every block has its own size and, on each
 * rank, its own place, so the consecutive blocks that the fixed forms move
 * as one range are scattered in the receive buffer. Recursive doubling and
 * neighbour exchange send each block as a message of its own, straight
 * between receive buffers (no scratch and no copies, at the price of more
 * messages per step); Bruck, whose rotation needs scratch anyway, packs its
 * slots there and moves one range per step. As in am_coll/alg/alg_vector.c, an
 * empty block is still sent (a zero-length message at offset 0), so that
 * ranks that disagree on the counts learn it. */
#include "am_coll/alg/alg.h"

/* Bytes of block i, and its place in this rank's receive buffer (0 when
 * empty: the buffer may be NULL). */
static size_t amc_agv_bytes(const amc_coll_args_t *a, int i)
{
    return a->rcounts[i] * a->dt_size;
}

static size_t amc_agv_off(const amc_coll_args_t *a, int i)
{
    return (a->rcounts[i] > 0) ? a->rdispls[i] * a->dt_size : 0;
}

/* The caller's own block into its place; in place it is there already. */
static void amc_agv_own(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank)
{
    if (!a->in_place && (a->rcounts[rank] > 0)) {
        amc_sb_copy(b, AMC_BUF_RECV, amc_agv_off(a, rank), AMC_BUF_SEND, 0,
                    amc_agv_bytes(a, rank));
    }
}

/* Blocks [from, to) of the receive buffer to or from peer, one message
 * each, in block order on both ends so that the k-th messages pair. */
static void amc_agv_send_blocks(amc_sched_builder_t *b, const amc_coll_args_t *a, int peer,
                                int from, int to)
{
    int i;

    for (i = from; i < to; i++) {
        amc_sb_send(b, peer, AMC_BUF_RECV, amc_agv_off(a, i), amc_agv_bytes(a, i));
    }
}

static void amc_agv_recv_blocks(amc_sched_builder_t *b, const amc_coll_args_t *a, int peer,
                                int from, int to)
{
    int i;

    for (i = from; i < to; i++) {
        amc_sb_recv(b, peer, AMC_BUF_RECV, amc_agv_off(a, i), amc_agv_bytes(a, i));
    }
}

/* ----------------------------------------------------- recursive doubling */

/* The fold of amc_alg_allgather_recdbl: with rem = N - 2^k, the even ranks
 * below 2 rem hand their block to their odd neighbour and wait; new rank j
 * of the 2^k others stands for the ranks from amc_agv_first(j) to
 * amc_agv_first(j + 1), consecutive since the map keeps rank order. So a
 * window of new ranks is a range of blocks, sent block by block. */
static int amc_agv_rank(int newrank, int rem)
{
    return (newrank < rem) ? 2 * newrank + 1 : newrank + rem;
}

static int amc_agv_first(int newrank, int rem)
{
    return (newrank < rem) ? 2 * newrank : newrank + rem;
}

int amc_alg_allgatherv_recdbl(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank,
                              int size)
{
    int pof2 = 1, rem, newrank, mask, lo, plo, peer;

    while (pof2 * 2 <= size) {
        pof2 *= 2;
    }
    rem = size - pof2;

    amc_sb_round(b);
    amc_agv_own(b, a, rank);
    if ((rank < 2 * rem) && ((rank % 2) == 0)) {
        /* folded away: its block goes out as the caller gave it, every
         * other block comes back at the end */
        amc_sb_send(b, rank + 1, amc_alg_src_buf(a), a->in_place ? amc_agv_off(a, rank) : 0,
                    amc_agv_bytes(a, rank));
        amc_sb_round(b);
        amc_agv_recv_blocks(b, a, rank + 1, 0, rank);
        amc_agv_recv_blocks(b, a, rank + 1, rank + 1, size);
        return AMC_SUCCESS;
    }
    if (rank < 2 * rem) {
        amc_agv_recv_blocks(b, a, rank - 1, rank - 1, rank);
        newrank = rank / 2;
    } else {
        newrank = rank - rem;
    }

    /* the window this rank holds: new ranks [lo, lo + mask) */
    lo = newrank;
    for (mask = 1; mask < pof2; mask *= 2) {
        plo  = lo ^ mask;
        peer = amc_agv_rank(newrank ^ mask, rem);
        amc_sb_round(b);
        amc_agv_send_blocks(b, a, peer, amc_agv_first(lo, rem), amc_agv_first(lo + mask, rem));
        amc_agv_recv_blocks(b, a, peer, amc_agv_first(plo, rem), amc_agv_first(plo + mask, rem));
        lo &= ~mask;
    }

    if (rank < 2 * rem) {
        /* everything but the folded neighbour's own block, in its order */
        amc_sb_round(b);
        amc_agv_send_blocks(b, a, rank - 1, 0, rank - 1);
        amc_agv_send_blocks(b, a, rank - 1, rank, size);
    }
    return AMC_SUCCESS;
}

/* ------------------------------------------------------------------ bruck */

/* Bruck as in am_coll/alg/alg_allgather_bruck.c: scratch slot i holds the block
 * of rank + i, packed without gaps, so the first slots a step sends and the
 * slots the peer receives them into are each one range (the peer's slots
 * from dist on are the blocks of this rank onwards, in the same order).
 * Where slots start differs between ranks; amc_agv_slots gives it. */
static size_t amc_agv_slots(const amc_coll_args_t *a, int rank, int size, int from, int to)
{
    size_t bytes = 0;
    int    i;

    for (i = from; i < to; i++) {
        bytes += amc_agv_bytes(a, (rank + i) % size);
    }
    return bytes;
}

int amc_alg_allgatherv_bruck(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank,
                             int size)
{
    size_t off;
    int    dist, cnt, i, blk;

    amc_sb_tmp(b, amc_agv_slots(a, rank, size, 0, size));
    amc_sb_round(b);
    amc_agv_own(b, a, rank);
    if (a->rcounts[rank] > 0) {
        amc_sb_copy(b, AMC_BUF_TMP, 0, amc_alg_src_buf(a), a->in_place ? amc_agv_off(a, rank) : 0,
                    amc_agv_bytes(a, rank));
    }
    for (dist = 1; dist < size; dist *= 2) {
        if (dist > 1) {
            amc_sb_round(b);
        }
        cnt = (dist < size - dist) ? dist : size - dist;
        amc_sb_send(b, (rank - dist + size) % size, AMC_BUF_TMP, 0,
                    amc_agv_slots(a, rank, size, 0, cnt));
        amc_sb_recv(b, (rank + dist) % size, AMC_BUF_TMP, amc_agv_slots(a, rank, size, 0, dist),
                    amc_agv_slots(a, rank, size, dist, dist + cnt));
    }

    /* slot 0 is this rank's own block, in place already */
    amc_sb_round(b);
    off = amc_agv_bytes(a, rank);
    for (i = 1; i < size; i++) {
        blk = (rank + i) % size;
        if (a->rcounts[blk] > 0) {
            amc_sb_copy(b, AMC_BUF_RECV, amc_agv_off(a, blk), AMC_BUF_TMP, off,
                        amc_agv_bytes(a, blk));
        }
        off += amc_agv_bytes(a, blk);
    }
    return AMC_SUCCESS;
}

/* ------------------------------------------------------ neighbor exchange */

/* The pairs and steps of amc_alg_allgather_neighbor (even N): pair p is the
 * blocks of ranks 2p and 2p + 1, sent as two messages since they need not
 * be adjacent. Odd N runs the vector ring's N - 1 steps instead. */
int amc_alg_allgatherv_neighbor(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank,
                                int size)
{
    int npairs = size / 2, i, peer, got, prev;

    if (size % 2) {
        return amc_alg_allgatherv_ring(b, a, rank, size);
    }
    amc_sb_round(b);
    amc_agv_own(b, a, rank);
    peer = rank ^ 1;
    amc_agv_send_blocks(b, a, peer, rank, rank + 1);
    amc_agv_recv_blocks(b, a, peer, peer, peer + 1);

    prev = rank / 2;
    for (i = 1; i < npairs; i++) {
        got = amc_alg_nx_step(rank, size, i, &peer);
        amc_sb_round(b);
        amc_agv_send_blocks(b, a, peer, 2 * prev, 2 * prev + 2);
        amc_agv_recv_blocks(b, a, peer, 2 * got, 2 * got + 2);
        prev = got;
    }
    return AMC_SUCCESS;
}
