/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Where a small collective's blocks go as the barrier's rounds move them:
 * the hypercube exchange's and recursive halving's picks on a power of two,
 * Bruck's layout off one (and the trees', am_coll/barrier/ctrl_tree.h, at
 * the root). Pure functions of the data; the machine (ctrl_coll.c) and the
 * call within it (rounds_now.c) both use them, so either leaves the blocks
 * as the other would.
 */
#ifndef AMC_CTRL_BLOCKS_H
#define AMC_CTRL_BLOCKS_H

#include "am_coll/coll/coll.h"
#include "ctrl/coll_ctrl.h"

#include <stddef.h>
#include <stdint.h>

/* Whether coll moves its blocks off a power of two as Bruck's alltoall
 * does: the alltoall, and the reduce_scatter_block, which then reduces the
 * N blocks bound for its rank in rank order (amc_ctrl_blocks_bruck_result). */
static inline int amc_ctrl_blocks_bruck_moves(unsigned coll)
{
    return (coll == AMC_COLL_ALLTOALL) || (coll == AMC_COLL_REDUCE_SCATTER_BLOCK);
}

/* x mod size for -size <= x < 2 size (a round's distance is below size):
 * a compare, where a division stalls tens of cycles on the path of every
 * round. */
static inline int amc_ctrl_blocks_wrap(int x, int size)
{
    return (x < 0) ? x + size : (x >= size) ? x - size : x;
}

/* Bruck's rounds (amc_alg_rounds_bruck): the blocks an allgather's round
 * r carries (and a non-power-of-two allreduce's, whose operands travel as
 * an allgather's blocks): the 2^r gathered so far, the last round only the
 * N - 2^r the partner lacks. */
static inline size_t amc_ctrl_blocks_bruck_gathered(int size, int round)
{
    int d = 1 << round;

    return (size_t)((d < size - d) ? d : size - d);
}

/* Bruck's alltoall: round r carries the blocks at the positions 0 .. N-1
 * whose bit r is set. */
static inline size_t amc_ctrl_blocks_bruck_count(int size, int round)
{
    size_t per = (size_t)1 << round, period = per << 1, rest = (size_t)size % period;

    return (size_t)size / period * per + ((rest > per) ? rest - per : 0);
}

/* An alltoall's round r (the hypercube exchange): the blocks of work's N
 * whose position's bit r differs from rank's, in position order, out of
 * work into msg (in 0) or from msg into work (in 1): after the last round
 * work holds the blocks by source, the receive buffer's order. */
void amc_ctrl_blocks_move(int rank, int size, size_t bytes, int round, uint8_t *work,
                          void *msg, int in);

/* A reduce_scatter_block's round r (recursive halving): its live blocks
 * are those whose low r bits are rank's. Out (in 0): the live ones whose
 * bit r differs, the partner's half, into msg; in (1): msg reduced into
 * the others, the lower rank's operand on the left. */
void amc_ctrl_blocks_halve(int rank, int size, size_t bytes, int round, uint8_t *work,
                           void *msg, int in, amc_ctrl_kernel_t kernel, size_t count);

/* Bruck's rounds keep an exchange's N blocks in work (at most
 * 2 AMC_CTRL_PAY_MAX bytes). Allgather and allreduce: position j holds
 * rank - j's block (its operand), position 0 this rank's own from the
 * start, round r's arrival the 2^r after those gathered, round r's message
 * the first amc_ctrl_blocks_bruck_gathered. Alltoall: position j holds the
 * block bound for rank + j at the start, and from rank - j at the end;
 * round r moves the positions whose bit r is set to rank + 2^r. */
void amc_ctrl_blocks_bruck_load(unsigned coll, int rank, int size, size_t bytes,
                                const uint8_t *in, uint8_t *work);

/* An alltoall's round r, Bruck's way: the blocks at the positions whose bit
 * r is set, out of work into msg (in 0) or from msg into work (in 1). */
void amc_ctrl_blocks_bruck(int size, size_t bytes, int round, uint8_t *work, void *msg,
                           int in);

/* After Bruck's last round: the result from work into recv (an
 * allgather's and an alltoall's blocks into their places, an allreduce's N
 * operands reduced in rank order, the same on every rank). */
void amc_ctrl_blocks_bruck_result(unsigned coll, int rank, int size, size_t bytes,
                                  const uint8_t *work, uint8_t *recv, amc_ctrl_kernel_t kernel,
                                  size_t count);

#endif
