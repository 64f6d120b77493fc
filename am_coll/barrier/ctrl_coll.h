/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Small allreduce, allgather, alltoall and reduce_scatter_block on the
 * barrier's control structure (the patent's cur_val carrying data):
 * exchanges with rank XOR 2^r on a power-of-two communicator (off powers
 * of two allgather, alltoall and allreduce go Bruck's way, round r to
 * rank + 2^r, the barrier's own partners), each round's
 * message holding the sender's partial result (allreduce), the blocks its
 * half of the group gathered so far (allgather), the N/2 blocks bound for
 * the partner's half (alltoall, the hypercube exchange), or the partial
 * sums of the blocks the partner's half keeps (reduce_scatter_block,
 * recursive halving); at N=2 also the rooted ones and the scans, one
 * message each way it is needed (the data one way, on a token, or asking
 * for an answer without one), and the vector forms (gatherv and scatterv
 * one way as gather and scatter, allgatherv, alltoallv and reduce_scatter
 * both ways, each direction its own length). The barrier's state machine (am_coll/barrier/barrier.c)
 * runs them; this module decides when they apply, enters them, and does
 * what their rounds need of the data. No schedule, no instance, no
 * allocation: everything lives in the slot.
 */
#ifndef AMC_CTRL_COLL_H
#define AMC_CTRL_COLL_H

#include "am_coll/alg/alg_rounds.h"
#include "am_coll/coll/coll.h"
#include "ctrl/coll_ctrl.h"

struct amc_comm;
struct amc_request;

/* Bruck's rounds (amc_alg_rounds_bruck): the blocks an allgather's round
 * r carries (and a non-power-of-two allreduce's, whose operands travel as
 * an allgather's blocks): the 2^r gathered so far, the last round only the
 * N - 2^r the partner lacks. */
static inline size_t amc_ctrl_coll_bruck_gathered(int size, int round)
{
    int d = 1 << round;

    return (size_t)((d < size - d) ? d : size - d);
}

/* Bruck's alltoall: round r carries the blocks at the positions 0 .. N-1
 * whose bit r is set. */
static inline size_t amc_ctrl_coll_bruck_count(int size, int round)
{
    size_t per = (size_t)1 << round, period = per << 1, rest = (size_t)size % period;

    return (size_t)size / period * per + ((rest > per) ? rest - per : 0);
}

/* Bytes of round r's message on a communicator of size ranks: the call's
 * bytes for an allreduce, 2^r blocks for an allgather, N/2 for an alltoall,
 * N/2^(r+1) for a reduce_scatter_block; Bruck's counts off powers of two. */
static inline size_t amc_ctrl_coll_len(const amc_barrier_slot_t *b, int size, int round)
{
    if (b->oneway == AMC_CTRL_HEARS) {
        return 0; /* its only message is an answer */
    }
    if (amc_alg_rounds_bruck(size)) {
        return (size_t)b->bytes * ((b->coll == AMC_COLL_ALLTOALL)
                                       ? amc_ctrl_coll_bruck_count(size, round)
                                       : amc_ctrl_coll_bruck_gathered(size, round));
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
 * most that (N/2 blocks), or at N=2 a v-form each of whose messages does.
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

/* An alltoall's round r (the hypercube exchange): the blocks of work's N
 * whose position's bit r differs from rank's, in position order, out of
 * work into msg (in 0) or from msg into work (in 1): after the last round
 * work holds the blocks by source, the receive buffer's order. */
void amc_ctrl_coll_move_blocks(int rank, int size, size_t bytes, int round, uint8_t *work,
                               void *msg, int in);

/* A reduce_scatter_block's round r (recursive halving): its live blocks
 * are those whose low r bits are rank's. Out (in 0): the live ones whose
 * bit r differs, the partner's half, into msg; in (1): msg reduced into
 * the others, the lower rank's operand on the left. */
void amc_ctrl_coll_halve_blocks(int rank, int size, size_t bytes, int round, uint8_t *work,
                                void *msg, int in, amc_ctrl_kernel_t kernel, size_t count);

/* Bruck's rounds keep an exchange's N blocks in work (at most
 * 2 AMC_CTRL_PAY_MAX bytes). Allgather and allreduce: position j holds
 * rank - j's block (its operand), position 0 this rank's own from the
 * start, round r's arrival the 2^r after those gathered, round r's message
 * the first amc_ctrl_coll_bruck_gathered. Alltoall: position j holds the
 * block bound for rank + j at the start, and from rank - j at the end;
 * round r moves the positions whose bit r is set to rank + 2^r. */
void amc_ctrl_coll_bruck_load(unsigned coll, int rank, int size, size_t bytes,
                              const uint8_t *in, uint8_t *work);

/* An alltoall's round r, Bruck's way: the blocks at the positions whose bit
 * r is set, out of work into msg (in 0) or from msg into work (in 1). */
void amc_ctrl_coll_bruck_blocks(int size, size_t bytes, int round, uint8_t *work, void *msg,
                                int in);

/* After Bruck's last round: the result from work into recv (an
 * allgather's and an alltoall's blocks into their places, an allreduce's N
 * operands reduced in rank order, the same on every rank). */
void amc_ctrl_coll_bruck_result(unsigned coll, int rank, int size, size_t bytes,
                                const uint8_t *work, uint8_t *recv, amc_ctrl_kernel_t kernel,
                                size_t count);

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
