/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Small allreduce, allgather, alltoall and reduce_scatter_block on the
 * barrier's control structure (the patent's cur_val carrying data):
 * exchanges with rank XOR 2^r on a power-of-two communicator (off powers
 * of two allgather, alltoall, allreduce and reduce_scatter_block go
 * Bruck's way (the last as Bruck's alltoall, then a reduction), round r to
 * rank + 2^r, the barrier's own partners), each round's
 * message holding the sender's partial result (allreduce), the blocks its
 * half of the group gathered so far (allgather), the N/2 blocks bound for
 * the partner's half (alltoall, the hypercube exchange), or the partial
 * sums of the blocks the partner's half keeps (reduce_scatter_block,
 * recursive halving); the rooted ones and the scans, at N=2 one message
 * each way it is needed (the data one way, on a token, or asking for an
 * answer without one), past it trees on the barrier's partners
 * (ctrl_tree.h, blocking calls); at N=2 the vector forms (gatherv and scatterv
 * one way as gather and scatter, allgatherv, alltoallv and reduce_scatter
 * both ways, each direction its own length). The barrier's state machine (am_coll/barrier/barrier.c)
 * runs them; this module decides when they apply, enters them, and does
 * what their rounds need of the data. No schedule, no instance, no
 * allocation: everything lives in the slot.
 */
#ifndef AMC_CTRL_COLL_H
#define AMC_CTRL_COLL_H

#include "am_coll/alg/alg_rounds.h"
#include "am_coll/barrier/ctrl_blocks.h"
#include "am_coll/barrier/ctrl_tree.h"
#include "am_coll/coll/coll.h"
#include "ctrl/coll_ctrl.h"

struct amc_comm;
struct amc_request;

/* A tree's call (amc_alg_rounds_tree) as this rank sees it. */
static inline amc_ctrl_tree_t amc_ctrl_coll_tree(const amc_barrier_slot_t *b, int rank, int size)
{
    amc_ctrl_tree_t t = { b->coll, rank, size, b->root, b->bytes };

    return t;
}

/* Bytes of round r's message that rank sends on a communicator of size
 * ranks: the call's bytes for an allreduce, 2^r blocks for an allgather,
 * N/2 for an alltoall, N/2^(r+1) for a reduce_scatter_block; Bruck's
 * counts off powers of two; a tree's (ctrl_tree.h) what its rank passes
 * on. */
static inline size_t amc_ctrl_coll_len(const amc_barrier_slot_t *b, int rank, int size,
                                       int round)
{
    if (b->oneway == AMC_CTRL_HEARS) {
        return 0; /* its only message is an answer */
    }
    if (amc_alg_rounds_tree(b->coll, size)) {
        amc_ctrl_tree_t t = amc_ctrl_coll_tree(b, rank, size);

        return amc_ctrl_tree_len(&t, round, 1);
    }
    if (amc_alg_rounds_bruck(size)) {
        return (size_t)b->bytes * (amc_ctrl_blocks_bruck_moves(b->coll)
                                       ? amc_ctrl_blocks_bruck_count(size, round)
                                       : amc_ctrl_blocks_bruck_gathered(size, round));
    }
    switch (b->coll) {
    case AMC_COLL_ALLGATHER:            return (size_t)b->bytes << round;
    case AMC_COLL_ALLTOALL:             return (size_t)b->bytes * b->half;
    case AMC_COLL_REDUCE_SCATTER_BLOCK: return (size_t)b->bytes * (size_t)(b->half >> round);
    default:                            return b->bytes;
    }
}

/* Whether a call runs here: the algorithm chosen for it says so
 * (AMC_ALG_FLAG_CTRL), an allreduce with a predefined op of 1 ..
 * AMC_FAST_MAX bytes, or an allgather or alltoall whose rounds carry at
 * most that (N/2 blocks), a rooted one or a scan (past N=2 a tree's
 * algorithm, amc_alg_rounds_tree_fits; blocking calls only, which the
 * caller decides), or at N=2 a v-form each of whose messages does.
 * Every rank decides alike from the same call and configuration (a
 * v-form's ranks from their own counts, which agree in a correct
 * program). */
int amc_ctrl_coll_ok(const struct amc_comm *comm, const amc_coll_args_t *args,
                     const amc_alg_t *alg);

/* A v-form's two message lengths at N=2, in bytes: what this rank sends
 * the other and what its call takes from it (0 where its part has none: a
 * rooted one's receiver sends nothing, its sender hears nothing). Only what
 * MPI makes significant at this rank is read (a non-root's counts are not). */
void amc_ctrl_coll_vlens(const struct amc_comm *comm, const amc_coll_args_t *args,
                         size_t *sbytes, size_t *rbytes);

/* A rooted call's sender at N=2 (amc_alg_rounds_sends): the block it gives
 * itself goes to its place (a scatter's or scatterv's root, rank 0's
 * scan); returns where its message's data is, *bytes long. */
const uint8_t *amc_ctrl_coll_rooted_out(const amc_coll_args_t *args, size_t *bytes);

/* With ctrl->lock held, at the entry: the caller's data is round 0's
 * message; what the rounds need of the call is kept in the slot. */
void amc_ctrl_coll_load(struct amc_comm *comm, amc_coll_slot_t *slot,
                        const amc_coll_args_t *args);

/* With ctrl->lock held, at an entry that a call within it handed on
 * (am_coll/barrier/rounds_now.c) after round > 0's message was made: that
 * message into out[round] and an alltoall's or reduce_scatter_block's
 * blocks into work, as the machine's rounds would have left them. */
void amc_ctrl_coll_resume(struct amc_comm *comm, amc_coll_slot_t *slot, int round,
                          const void *out, size_t out_len, const void *work, size_t work_len);

/* With ctrl->lock held, before round r > 0 is sent: out[r] = what the
 * rounds before it gathered (out[r-1] with in[r-1], in rank order). */
void amc_ctrl_coll_step(struct amc_comm *comm, amc_coll_slot_t *slot, int round);

/* With ctrl->lock held, once every round arrived: the result into the
 * caller's buffer (unless the request is gone or the instance failed). */
void amc_ctrl_coll_finish(struct amc_comm *comm, amc_coll_slot_t *slot);

#endif
