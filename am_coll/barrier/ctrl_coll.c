/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Small collectives on the barrier's rounds. Round r exchanges with rank
 * XOR 2^r, and the barrier's state machine sends round r once cur_val
 * reaches r: the rounds before it arrived and the local rank entered,
 * exactly when round r's message can be made.
 *
 * Allreduce and allgather: out[0] is the caller's data, out[r+1] joins
 * out[r] with in[r] (what the partner sent in round r), and the result joins
 * the last round's two. An allreduce joins by reducing, the lower group's
 * operand on the left (MPI's order); an allgather by placing the lower
 * group's blocks first, so after round r a rank holds the 2^(r+1) blocks of
 * its group in rank order. Every rank joins the same pairs, so all get the
 * same bits.
 *
 * Alltoall and reduce_scatter_block keep their N blocks in the slot (work)
 * as they move. An alltoall sends in round r the N/2 it holds at the
 * positions whose bit r differs from its rank's (blocks bound for the
 * partner's half) and puts the partner's N/2 into those positions, in the
 * same order: after round r position k holds the block from the source
 * whose low r+1 bits are k's, bound for a destination whose low r+1 bits
 * are this rank's; after the last, from source k to this rank, the receive
 * buffer's order. A reduce_scatter_block does the same with partial sums
 * (recursive halving): its live blocks after round r are those whose low
 * r+1 bits are its rank's; it sends the live ones whose bit r differs and
 * reduces the partner's into the others, the lower group's on the left.
 *
 * Off a power of two rank XOR 2^r may be no rank: allgather, allreduce,
 * alltoall and reduce_scatter_block go Bruck's way on the barrier's own
 * partners (round r to rank + 2^r, from rank - 2^r), the N blocks in work
 * (amc_ctrl_blocks_bruck_load): each round's message the blocks gathered
 * so far (an allreduce gathers its operands and reduces them at the end,
 * in rank order on every rank) or an alltoall's blocks at the positions
 * whose bit r is set (a reduce_scatter_block moves its blocks so, then
 * reduces the N bound for its rank in rank order). They fit
 * where N blocks take at most twice a round's bytes.
 *
 * Past N=2 the rooted ones and the scans are trees on the barrier's own
 * partners (ctrl_tree.h): every rank sends every round, a message of no
 * bytes where it has nothing to pass, so the barrier's rounds and run-ahead
 * carry them unchanged; the messages name the root, and one for another
 * root fails the call (AMC_ERR_PROTOCOL).
 *
 * At N=2 the rooted ones and the scans are one message (the root's to the
 * other for bcast and scatter, the other's to the root for reduce and
 * gather, rank 0's to rank 1 for scan and exscan), flow-controlled as the
 * engine's data messages are: with an eager token the sender's round 0
 * needs no arrival (its bit is set at the entry), so its call ends once the
 * message is out, as on the engine, and the receiver gives the token back
 * once it consumed the message; without one the message asks for an
 * answer, which the sender's call waits for, so a sender that runs ahead
 * makes its peer hold at most AMC_EAGER_TOKENS of them (doc/design.md,
 * "Back-pressure"). The receiver sends nothing else. The message names the
 * root; a receiver whose call names another fails with AMC_ERR_PROTOCOL.
 *
 * The vector forms at N=2 run here too when each of their messages holds
 * 1 to 1024 bytes (AMC_FAST_MAX, AMC_CTRL_PAY_MAX): gatherv and scatterv as gather and scatter
 * (one message, on a token or asking for an answer), allgatherv and
 * alltoallv as one exchange, and reduce_scatter (with a predefined op) as
 * one too: each rank sends the other its block of the input and reduces
 * the other's partial sum into its own, the lower rank's operand on the
 * left. Their two directions may carry different
 * lengths, so the slot keeps what this rank sends (bytes) apart from what
 * its call takes from the other (rbytes). The block a rank gives itself
 * goes to its place at the entry, the other's where its displacement says
 * once it arrived. A rank decides from its own counts (a gatherv root from
 * recvcounts[peer], the other from its sendcount): in a correct program
 * they give both ranks the same lengths and so the same path; counts that
 * differ may part the ranks, one here and one on the engine, and then each
 * meets the other's messages and fails as the non-v forms' do when their
 * counts differ. A block of no bytes takes the engine (a round carries 1 to
 * 1024 bytes, a rooted one's empty message is its answer).
 *
 * A message whose length differs from what this rank's call takes (the
 * ranks' counts or datatypes differ) is not used: the instance's status becomes
 * AMC_ERR_TRUNCATE, and its later messages carry that status, so every rank
 * whose result depends on it (all of them, by the last round) fails too,
 * instead of waiting for a round that never comes or returning a wrong
 * result.
 */
#include "am_coll/barrier/ctrl_coll.h"
#include "am_coll/context/comm.h"
#include "am_coll/context/context.h"
#include "am_coll/context/flow.h"
#include "am_coll/context/topo.h"
#include "base/status.h"

#include <string.h>

void amc_ctrl_coll_vlens(const struct amc_comm *comm, const amc_coll_args_t *args,
                         size_t *sbytes, size_t *rbytes)
{
    int peer = comm->rank ^ 1, root = (comm->rank == args->root);

    *sbytes = 0;
    *rbytes = 0;
    switch (args->coll) {
    case AMC_COLL_GATHERV:
        if (root) {
            *rbytes = args->rcounts[peer];
        } else {
            *sbytes = args->scount;
        }
        break;
    case AMC_COLL_SCATTERV:
        if (root) {
            *sbytes = args->scounts[peer];
        } else {
            *rbytes = args->rcount;
        }
        break;
    case AMC_COLL_ALLGATHERV:
        /* in place: its own block, from its place (the API made sure that
         * sendcount is recvcounts[rank] otherwise) */
        *sbytes = args->in_place ? args->rcounts[comm->rank] : args->scount;
        *rbytes = args->rcounts[peer];
        break;
    case AMC_COLL_ALLTOALLV: /* in place: the receive blocks are the ones to send (MPI) */
        *sbytes = args->in_place ? args->rcounts[peer] : args->scounts[peer];
        *rbytes = args->rcounts[peer];
        break;
    default: /* reduce_scatter: the other's block of the input, the partial sum of its own */
        *sbytes = args->rcounts[peer];
        *rbytes = args->rcounts[comm->rank];
        break;
    }
    *sbytes *= args->dt_size;
    *rbytes *= args->dt_size;
}

/* A v-form runs here at N=2 when each message of it carries 1 .. max
 * bytes. A rank decides from its own counts, which in a correct program
 * give the same lengths on both ranks (the gatherv root's recvcounts[peer]
 * is the other's sendcount; alltoallv's two directions are each other's
 * swapped); counts that differ may decide apart, and then this rank's
 * messages on the rounds meet the other's on the engine, and both fail
 * (amc_barrier_on_arrival, amc_barrier_refuse and their engine twins), as
 * the non-v forms do whose counts differ. A zero-length block takes the
 * engine: the rounds carry 1 .. 1024 bytes (a rooted one's empty message is
 * its answer). */
static int amc_ctrl_coll_vector_ok(const struct amc_comm *comm, const amc_coll_args_t *args,
                                   size_t max)
{
    size_t sbytes, rbytes;

    if (comm->size != 2) {
        return 0;
    }
    amc_ctrl_coll_vlens(comm, args, &sbytes, &rbytes);
    if (amc_alg_rounds_rooted(args->coll)) {
        return (sbytes + rbytes >= 1) && (sbytes + rbytes <= max); /* one of them is 0 */
    }
    return (sbytes >= 1) && (sbytes <= max) && (rbytes >= 1) && (rbytes <= max) &&
           ((args->coll != AMC_COLL_REDUCE_SCATTER) ||
            (amc_op_kernel(args->op, args->dt) != NULL));
}

int amc_ctrl_coll_ok(const struct amc_comm *comm, const amc_coll_args_t *args,
                     const amc_alg_t *alg)
{
    size_t bytes = args->count * args->dt_size;
    size_t max   = comm->ctx->cfg.fast_max;

    if (!(alg->flags & AMC_ALG_FLAG_CTRL) || (comm->ctrl.pay == 0)) {
        return 0;
    }
    if (max > comm->ctrl.pay_max) {
        max = comm->ctrl.pay_max;
    }
    if (amc_alg_rounds_vector(args->coll)) {
        return amc_ctrl_coll_vector_ok(comm, args, max);
    }
    if (bytes == 0) {
        return 0;
    }
    if (amc_alg_rounds_rooted(args->coll)) {
        if (amc_alg_rounds_reduces(args->coll) && (amc_op_kernel(args->op, args->dt) == NULL)) {
            return 0;
        }
        if (comm->size == 2) {
            return bytes <= max; /* one message of the call's bytes (one block) */
        }
        /* past N=2 the binomial trees and Hillis and Steele's (ctrl_tree.h):
         * the algorithms of that shape only, and not where the ranks share
         * cores (AMC_OVERSUB_LINEAR_MAX_RANKS, as the linear ones): a tree's
         * call waits for every rank, each scheduled in turn there (N = 4 on
         * 2 cores: 4.2-4.5 us a call against the engine's 1.4-3.9) */
        return !(alg->flags & AMC_ALG_FLAG_CTRL_AT_2) &&
               (amc_topo_apart(args->topo) ||
                (comm->size > (int)comm->ctx->cfg.oversub_linear_max_ranks)) &&
               amc_alg_rounds_tree_fits(args->coll, bytes, comm->size, max);
    }
    if (amc_alg_rounds_bruck(comm->size)) {
        /* Bruck's: the N blocks in the slot's work, at most N/2 a round */
        return (bytes * (size_t)comm->size <= 2 * max) &&
               ((args->coll == AMC_COLL_ALLGATHER) ||
                ((args->coll == AMC_COLL_ALLTOALL) && !(alg->flags & AMC_ALG_FLAG_CTRL_AT_2)) ||
                ((args->coll == AMC_COLL_REDUCE_SCATTER_BLOCK) &&
                 !(alg->flags & AMC_ALG_FLAG_CTRL_AT_2) &&
                 (amc_op_kernel(args->op, args->dt) != NULL)) ||
                ((args->coll == AMC_COLL_ALLREDUCE) &&
                 (amc_op_kernel(args->op, args->dt) != NULL)));
    }
    if ((args->coll == AMC_COLL_ALLTOALL) || (args->coll == AMC_COLL_REDUCE_SCATTER_BLOCK)) {
        /* N/2 blocks in every round (in the first of a reduce_scatter_block) */
        return (!(alg->flags & AMC_ALG_FLAG_CTRL_AT_2) || (comm->size == 2)) &&
               (bytes <= max / (size_t)(comm->size / 2)) &&
               ((args->coll == AMC_COLL_ALLTOALL) || (amc_op_kernel(args->op, args->dt) != NULL));
    }
    if (args->coll == AMC_COLL_ALLGATHER) {
        return bytes <= max / (size_t)(comm->size / 2); /* the last round's N/2 blocks */
    }
    return (bytes <= max) && (amc_op_kernel(args->op, args->dt) != NULL);
}

/* An alltoall's round r on the slot: amc_ctrl_blocks_move between work
 * and out[r] (in: in[r]). */
static void amc_ctrl_coll_move(struct amc_comm *comm, amc_coll_slot_t *slot, int round, int in)
{
    amc_ctrl_blocks_move(comm->rank, comm->size, slot->barrier.bytes, round,
                         amc_coll_slot_work(&comm->ctrl, slot),
                         in ? amc_coll_slot_in(&comm->ctrl, slot, round)
                            : amc_coll_slot_out(&comm->ctrl, slot, round), in);
}

/* A reduce_scatter_block's round r on the slot (amc_ctrl_blocks_halve). */
static void amc_ctrl_coll_halve(struct amc_comm *comm, amc_coll_slot_t *slot, int round, int in)
{
    const amc_coll_small_t *sm = amc_coll_slot_small(&comm->ctrl, slot);

    amc_ctrl_blocks_halve(comm->rank, comm->size, slot->barrier.bytes, round,
                          amc_coll_slot_work(&comm->ctrl, slot),
                          in ? amc_coll_slot_in(&comm->ctrl, slot, round)
                             : amc_coll_slot_out(&comm->ctrl, slot, round), in,
                          sm->kernel, sm->count);
}

/* A rooted one's sender: on an eager token its call ends once the message
 * is out; without one the message asks for an answer, which its call
 * waits for. */
static uint8_t amc_ctrl_coll_sender(struct amc_comm *comm)
{
    return amc_flow_take(&comm->ctx->flow, amc_comm_peer(comm, comm->rank ^ 1)) ? AMC_CTRL_SENDS
                                                                                : AMC_CTRL_ASKS;
}

/* A block a rank gives itself (none where bytes is 0: its buffers may
 * then be NULL). */
static inline void amc_ctrl_coll_own(uint8_t *to, const uint8_t *from, size_t bytes)
{
    if (bytes > 0) {
        memcpy(to, from, bytes);
    }
}

const uint8_t *amc_ctrl_coll_rooted_out(const amc_coll_args_t *args, size_t *bytes)
{
    size_t         dt   = args->dt_size;
    int            root = amc_alg_rounds_root(args->root);
    uint8_t       *recv = args->recvbuf;
    const uint8_t *send = args->sendbuf;

    *bytes = args->count * dt;
    switch (args->coll) {
    case AMC_COLL_BCAST:
        return recv; /* the one buffer */
    case AMC_COLL_SCATTER:
        if (recv != NULL) { /* else in place: its block stays in sendbuf */
            memcpy(recv, send + (size_t)root * *bytes, *bytes);
        }
        return send + (size_t)(root ^ 1) * *bytes;
    case AMC_COLL_SCAN:
        if (send == NULL) {
            return recv; /* in place */
        }
        memcpy(recv, send, *bytes); /* rank 0's result is its own */
        return send;
    case AMC_COLL_GATHERV: /* not the root, so not in place */
        *bytes = args->scount * dt;
        return send;
    case AMC_COLL_SCATTERV:
        if (!args->in_place) { /* else its block stays in sendbuf */
            amc_ctrl_coll_own(recv, send + args->sdispls[root] * dt, args->scounts[root] * dt);
        }
        *bytes = args->scounts[root ^ 1] * dt;
        return send + args->sdispls[root ^ 1] * dt;
    default: /* reduce and gather (not the root), exscan (rank 0): the input */
        return (send != NULL) ? send : recv;
    }
}

/* A v-form's entry at N=2: the block this rank gives itself goes to its
 * place at once (the result's other block does not depend on it), this
 * rank's message into out[0], and where the other's block goes is kept
 * for when it arrives (a reduce_scatter keeps its own block in work, to
 * reduce with it). gatherv and scatterv are one message, flow-controlled
 * as gather's and scatter's; allgatherv, alltoallv and reduce_scatter one
 * exchange, whose directions may carry different lengths (bytes out,
 * rbytes in). amc_ctrl_coll_vector_ok made sure each is 1 .. 1024 bytes. */
static void amc_ctrl_coll_load_vector(struct amc_comm *comm, amc_coll_slot_t *slot,
                                      const amc_coll_args_t *args)
{
    amc_barrier_slot_t *b    = &slot->barrier;
    const uint8_t      *send = args->sendbuf;
    uint8_t            *recv = args->recvbuf;
    size_t              dt   = args->dt_size, sbytes, rbytes;
    int                 me   = comm->rank, peer = me ^ 1;

    amc_ctrl_coll_vlens(comm, args, &sbytes, &rbytes);
    switch (args->coll) {
    case AMC_COLL_GATHERV:
        if (me == args->root) {
            if (!args->in_place) {
                amc_ctrl_coll_own(recv + args->rdispls[me] * dt, send, args->scount * dt);
            }
            recv += args->rdispls[peer] * dt;
        }
        break;
    case AMC_COLL_SCATTERV:
        if (me == args->root) {
            send = amc_ctrl_coll_rooted_out(args, &sbytes);
        }
        break;
    case AMC_COLL_ALLGATHERV:
        if (args->in_place) {
            send = recv + args->rdispls[me] * dt;
        } else {
            amc_ctrl_coll_own(recv + args->rdispls[me] * dt, send, sbytes);
        }
        recv += args->rdispls[peer] * dt;
        break;
    case AMC_COLL_REDUCE_SCATTER: {
        /* the input vector (in place: in recvbuf, where the result goes, so
         * this rank's block is kept in the slot until the other's partial
         * sum arrives); the blocks in rank order */
        const uint8_t *vec = args->in_place ? recv : send;
        size_t         at0 = args->rcounts[0] * dt;

        memcpy(amc_coll_slot_work(&comm->ctrl, slot), vec + (me ? at0 : 0), rbytes);
        send = vec + (peer ? at0 : 0);
        amc_coll_slot_small(&comm->ctrl, slot)->count = args->rcounts[me];
        break;
    }
    default: /* alltoallv */
        recv += args->rdispls[peer] * dt;
        if (args->in_place) {
            send = recv; /* copied out below, before the other's block lands there */
        } else {
            amc_ctrl_coll_own(args->recvbuf + args->rdispls[me] * dt,
                              send + args->sdispls[me] * dt, args->scounts[me] * dt);
            send += args->sdispls[peer] * dt;
        }
        break;
    }
    b->bytes  = (uint16_t)sbytes;
    b->rbytes = (uint16_t)rbytes;
    amc_coll_slot_small(&comm->ctrl, slot)->recvbuf = recv;
    if (sbytes > 0) {
        memcpy(amc_coll_slot_out(&comm->ctrl, slot, 0), send, sbytes);
    }
    if (amc_alg_rounds_rooted(args->coll)) {
        b->root   = args->root;
        b->oneway = (sbytes > 0) ? amc_ctrl_coll_sender(comm) : AMC_CTRL_HEARS;
    }
}

/* A rooted one's entry: the sender's message into out[0] (and whether it
 * goes on a token); what a rank's own data gives its result at once (the
 * root's own block of a gather or a scatter, rank 0's scan); what the
 * receiver's result needs later. */
static void amc_ctrl_coll_load_rooted(struct amc_comm *comm, amc_coll_slot_t *slot,
                                      const amc_coll_args_t *args)
{
    amc_barrier_slot_t *b    = &slot->barrier;
    amc_coll_small_t   *sm   = amc_coll_slot_small(&comm->ctrl, slot);
    int                 root = amc_alg_rounds_root(args->root);
    const uint8_t      *out;
    size_t              bytes;

    b->root = root;
    sm->own = (args->sendbuf != NULL) ? args->sendbuf : args->recvbuf;
    if (!amc_alg_rounds_sends(args->coll, comm->rank, root)) {
        b->oneway = AMC_CTRL_HEARS;
        return;
    }
    out = amc_ctrl_coll_rooted_out(args, &bytes);
    memcpy(amc_coll_slot_out(&comm->ctrl, slot, 0), out, bytes);
    b->oneway = amc_ctrl_coll_sender(comm);
}

/* A rooted one's receiver, once the message arrived: its result. */
static void amc_ctrl_coll_finish_rooted(struct amc_comm *comm, amc_coll_slot_t *slot)
{
    amc_barrier_slot_t *b       = &slot->barrier;
    amc_coll_small_t   *sm      = amc_coll_slot_small(&comm->ctrl, slot);
    const uint8_t      *theirs  = amc_coll_slot_in(&comm->ctrl, slot, 0);
    uint8_t            *recv    = sm->recvbuf;
    uint8_t             tmp[AMC_CTRL_PAY_MAX];
    int                 partner = comm->rank ^ 1;

    if ((sm->in_len[0] != b->rbytes) || (sm->in_root != b->root) ||
        (sm->in_alg == AMC_CTRL_MSG_ANSWER)) {
        if (slot->status == AMC_SUCCESS) {
            amc_error(&comm->ctx->log,
                      "%s seq %llu on communicator 0x%llx: rank %d sent %u bytes for root %d, "
                      "this rank's call takes %u from it for root %d (count%s, datatype or root "
                      "differ)", amc_coll_name(b->coll), (unsigned long long)slot->seq,
                      (unsigned long long)comm->cid, partner, (unsigned)sm->in_len[0],
                      (int)sm->in_root, (unsigned)b->rbytes, (int)b->root,
                      amc_alg_rounds_vector(b->coll) ? "s" : "");
            slot->status = (sm->in_len[0] != b->rbytes) ? AMC_ERR_TRUNCATE : AMC_ERR_PROTOCOL;
        }
        return;
    }
    switch (b->coll) {
    case AMC_COLL_GATHER:
        if ((const void *)recv != sm->own) { /* else in place: its block is there */
            memcpy(recv + (size_t)comm->rank * b->bytes, sm->own, b->bytes);
        }
        memcpy(recv + (size_t)partner * b->bytes, theirs, b->bytes);
        break;
    case AMC_COLL_REDUCE:
    case AMC_COLL_SCAN:
        /* MPI's order: the lower rank's operand on the left */
        if (partner < comm->rank) {
            if ((const void *)recv != sm->own) {
                memcpy(recv, sm->own, b->bytes);
            }
            sm->kernel(theirs, recv, sm->count);
        } else {
            memcpy(tmp, theirs, b->bytes);
            sm->kernel(sm->own, tmp, sm->count);
            memcpy(recv, tmp, b->bytes);
        }
        break;
    default: /* bcast, scatter, exscan: the sender's data is the result; gatherv and
              * scatterv: the other's block, recv its place */
        memcpy(recv, theirs, b->rbytes);
        break;
    }
}

/* A tree's entry past N=2 (ctrl_tree.h): the call's data into work,
 * round 0's message out of it. */
static void amc_ctrl_coll_load_tree(struct amc_comm *comm, amc_coll_slot_t *slot,
                                    const amc_coll_args_t *args)
{
    amc_barrier_slot_t *b    = &slot->barrier;
    uint8_t            *work = amc_coll_slot_work(&comm->ctrl, slot);
    uint8_t            *msg  = amc_coll_slot_out(&comm->ctrl, slot, 0);
    amc_ctrl_tree_t     t;
    const uint8_t      *out;

    b->root = args->root; /* -1 for the scans */
    t       = amc_ctrl_coll_tree(b, comm->rank, comm->size);
    amc_ctrl_tree_load(&t, args, work);
    out = amc_ctrl_tree_out(&t, 0, work, msg);
    if (out != msg) {
        memcpy(msg, out, amc_ctrl_tree_len(&t, 0, 1));
    }
}

/* A tree's round r arrived (its length checked): into is out[r+1], or
 * the caller's buffer after the last round. */
static void amc_ctrl_coll_join_tree(struct amc_comm *comm, amc_coll_slot_t *slot, int round,
                                    void *into)
{
    amc_barrier_slot_t *b    = &slot->barrier;
    amc_coll_small_t   *sm   = amc_coll_slot_small(&comm->ctrl, slot);
    uint8_t            *work = amc_coll_slot_work(&comm->ctrl, slot);
    amc_ctrl_tree_t     t    = amc_ctrl_coll_tree(b, comm->rank, comm->size);
    const uint8_t      *out;

    amc_ctrl_tree_in(&t, round, work, amc_coll_slot_in(&comm->ctrl, slot, round), sm->kernel,
                     sm->count);
    if (round + 1 == comm->nrounds) {
        amc_ctrl_tree_result(&t, work, into, sm->kernel, sm->count);
        return;
    }
    out = amc_ctrl_tree_out(&t, round + 1, work, into);
    if (out != into) {
        memcpy(into, out, amc_ctrl_tree_len(&t, round + 1, 1));
    }
}

void amc_ctrl_coll_load(struct amc_comm *comm, amc_coll_slot_t *slot,
                        const amc_coll_args_t *args)
{
    amc_barrier_slot_t *b     = &slot->barrier;
    amc_coll_small_t   *sm    = amc_coll_slot_small(&comm->ctrl, slot);
    size_t              bytes = args->count * args->dt_size;
    const uint8_t      *in    = args->sendbuf;

    if (in == NULL) { /* AMC_IN_PLACE: the caller's data is in its place in recvbuf */
        in = (const uint8_t *)args->recvbuf +
             ((args->coll == AMC_COLL_ALLGATHER) ? (size_t)comm->rank * bytes : 0);
    }
    b->bytes   = (uint16_t)bytes;
    b->rbytes  = (uint16_t)bytes;
    b->half    = (uint8_t)(comm->size / 2);
    b->oneway  = AMC_CTRL_BOTH;
    sm->count   = args->count;
    sm->kernel  = amc_alg_rounds_reduces(args->coll) ? amc_op_kernel(args->op, args->dt) : NULL;
    sm->recvbuf = args->recvbuf;
    if (amc_alg_rounds_vector(args->coll)) {
        amc_ctrl_coll_load_vector(comm, slot, args);
        return;
    }
    if (amc_alg_rounds_tree(args->coll, comm->size)) {
        amc_ctrl_coll_load_tree(comm, slot, args);
        return;
    }
    if (amc_alg_rounds_rooted(args->coll)) {
        amc_ctrl_coll_load_rooted(comm, slot, args);
        return;
    }
    if (amc_alg_rounds_bruck(comm->size)) {
        uint8_t *work = amc_coll_slot_work(&comm->ctrl, slot);

        amc_ctrl_blocks_bruck_load(args->coll, comm->rank, comm->size, bytes, in, work);
        if (amc_ctrl_blocks_bruck_moves(args->coll)) {
            amc_ctrl_blocks_bruck(comm->size, bytes, 0, work,
                                  amc_coll_slot_out(&comm->ctrl, slot, 0), 0);
        } else {
            memcpy(amc_coll_slot_out(&comm->ctrl, slot, 0), work, bytes);
        }
        return;
    }
    if (args->coll == AMC_COLL_ALLTOALL) {
        memcpy(amc_coll_slot_work(&comm->ctrl, slot), in, (size_t)comm->size * bytes);
        amc_ctrl_coll_move(comm, slot, 0, 0);
        return;
    }
    if (args->coll == AMC_COLL_REDUCE_SCATTER_BLOCK) {
        memcpy(amc_coll_slot_work(&comm->ctrl, slot), in, (size_t)comm->size * bytes);
        amc_ctrl_coll_halve(comm, slot, 0, 0);
        return;
    }
    memcpy(amc_coll_slot_out(&comm->ctrl, slot, 0), in, bytes);
}

/* A reduce_scatter's result at N=2: into = this rank's block (work) and
 * the other's partial sum of it (in[round]), reduced in MPI's order. */
static void amc_ctrl_coll_reduce_own(struct amc_comm *comm, amc_coll_slot_t *slot, int round,
                                     void *into)
{
    const amc_coll_small_t *sm     = amc_coll_slot_small(&comm->ctrl, slot);
    const uint8_t          *mine   = amc_coll_slot_work(&comm->ctrl, slot);
    const uint8_t          *theirs = amc_coll_slot_in(&comm->ctrl, slot, round);

    if ((comm->rank ^ 1) < comm->rank) {
        memcpy(into, mine, slot->barrier.rbytes);
        sm->kernel(theirs, into, sm->count);
    } else {
        memcpy(into, theirs, slot->barrier.rbytes);
        sm->kernel(mine, into, sm->count);
    }
}

/* into = what out[r] and in[r] make together, the lower rank's group
 * first (a v-form's: the other's block, into its place). A length that
 * differs fails the instance. */
static void amc_ctrl_coll_join(struct amc_comm *comm, amc_coll_slot_t *slot, int round,
                               void *into)
{
    amc_barrier_slot_t *b       = &slot->barrier;
    amc_coll_small_t   *sm      = amc_coll_slot_small(&comm->ctrl, slot);
    const uint8_t      *mine    = amc_coll_slot_out(&comm->ctrl, slot, round);
    const uint8_t      *theirs  = amc_coll_slot_in(&comm->ctrl, slot, round);
    amc_ctrl_tree_t     t       = amc_ctrl_coll_tree(b, comm->rank, comm->size);
    size_t              len     = amc_ctrl_coll_len(b, comm->rank, comm->size, round);
    int                 vector  = amc_alg_rounds_vector(b->coll);
    int                 tree    = amc_alg_rounds_tree(b->coll, comm->size);
    /* what this rank takes: a v-form's two directions may differ, and a
     * tree's takes are not its sends */
    size_t              want    = vector ? b->rbytes : tree ? amc_ctrl_tree_len(&t, round, 0) : len;
    int                 bruck   = amc_alg_rounds_bruck(comm->size);
    int                 partner = amc_alg_rounds_passes(b->coll, comm->size)
                                      ? amc_ctrl_blocks_wrap(comm->rank - (1 << round), comm->size)
                                      : comm->rank ^ (1 << round);

    if ((sm->in_len[round] != want) || (tree && (sm->in_root != b->root))) {
        if (slot->status == AMC_SUCCESS) {
            amc_error(&comm->ctx->log,
                      "%s seq %llu on communicator 0x%llx: rank %d sent %u bytes%s in round %d, "
                      "this rank's call takes %zu (count%s%s differ)",
                      amc_coll_name(b->coll), (unsigned long long)slot->seq,
                      (unsigned long long)comm->cid, partner, (unsigned)sm->in_len[round],
                      (sm->in_root != b->root) ? " for another root" : "", round, want,
                      vector ? "s" : "", tree ? ", datatype or root" : " or datatype");
            /* another root is the cause where both differ */
            slot->status = (sm->in_root != b->root) ? AMC_ERR_PROTOCOL : AMC_ERR_TRUNCATE;
        }
        return;
    }
    if (tree) {
        amc_ctrl_coll_join_tree(comm, slot, round, into);
    } else if (bruck) {
        /* the partner's blocks into work; into is out[r+1] (sent next) or
         * recvbuf (after the last round) */
        uint8_t *work = amc_coll_slot_work(&comm->ctrl, slot);

        if (amc_ctrl_blocks_bruck_moves(b->coll)) {
            amc_ctrl_blocks_bruck(comm->size, b->bytes, round, work, (void *)theirs, 1);
        } else {
            memcpy(work + ((size_t)b->bytes << round), theirs, len);
        }
        if (round + 1 == comm->nrounds) {
            amc_ctrl_blocks_bruck_result(b->coll, comm->rank, comm->size, b->bytes, work, into,
                                         sm->kernel, sm->count);
        } else if (amc_ctrl_blocks_bruck_moves(b->coll)) {
            amc_ctrl_blocks_bruck(comm->size, b->bytes, round + 1, work, into, 0);
        } else {
            memcpy(into, work, amc_ctrl_blocks_bruck_gathered(comm->size, round + 1) * b->bytes);
        }
    } else if (b->coll == AMC_COLL_REDUCE_SCATTER) {
        /* this rank's block of its input (kept in work) with the other's
         * partial sum of it, the lower rank's operand on the left */
        amc_ctrl_coll_reduce_own(comm, slot, round, into);
    } else if (vector) {
        /* this rank's own block went to its place at the entry */
        memcpy(into, theirs, want);
    } else if (b->coll == AMC_COLL_REDUCE_SCATTER_BLOCK) {
        amc_ctrl_coll_halve(comm, slot, round, 1);
        if (round + 1 < comm->nrounds) {
            amc_ctrl_coll_halve(comm, slot, round + 1, 0);
        } else {
            memcpy(into, amc_coll_slot_work(&comm->ctrl, slot) + (size_t)comm->rank * b->bytes,
                   b->bytes);
        }
    } else if (b->coll == AMC_COLL_ALLTOALL) {
        /* the partner's blocks into their places; into is out[r+1] (sent
         * next) or recvbuf (the last round: all of them) */
        amc_ctrl_coll_move(comm, slot, round, 1);
        if (round + 1 < comm->nrounds) {
            amc_ctrl_coll_move(comm, slot, round + 1, 0);
        } else {
            memcpy(into, amc_coll_slot_work(&comm->ctrl, slot), (size_t)comm->size * b->bytes);
        }
    } else if (b->coll == AMC_COLL_ALLGATHER) {
        /* the two halves side by side */
        memcpy((uint8_t *)into + ((partner < comm->rank) ? len : 0), mine, len);
        memcpy((uint8_t *)into + ((partner < comm->rank) ? 0 : len), theirs, len);
    } else if (partner < comm->rank) {
        memcpy(into, mine, len);
        sm->kernel(theirs, into, sm->count);
    } else {
        memcpy(into, theirs, len);
        sm->kernel(mine, into, sm->count);
    }
}

void amc_ctrl_coll_step(struct amc_comm *comm, amc_coll_slot_t *slot, int round)
{
    amc_ctrl_coll_join(comm, slot, round - 1, amc_coll_slot_out(&comm->ctrl, slot, round));
}

void amc_ctrl_coll_finish(struct amc_comm *comm, amc_coll_slot_t *slot)
{
    amc_barrier_slot_t *b = &slot->barrier;

    b->reduced = 1;
    if ((b->oneway == AMC_CTRL_ASKS) && (slot->status == AMC_SUCCESS) &&
        (amc_coll_slot_small(&comm->ctrl, slot)->in_alg != AMC_CTRL_MSG_ANSWER)) {
        amc_error(&comm->ctx->log, "%s seq %llu on communicator 0x%llx: rank %d sent this rank "
                  "data where this rank's call sends (roots differ)", amc_coll_name(b->coll),
                  (unsigned long long)slot->seq, (unsigned long long)comm->cid, comm->rank ^ 1);
        slot->status = AMC_ERR_PROTOCOL;
    }
    if ((b->oneway == AMC_CTRL_HEARS) && (amc_coll_slot_small(&comm->ctrl, slot)->in_alg ==
                                          AMC_CTRL_MSG_EAGER)) {
        /* consumed (or dropped with a failed instance): the sender's token back */
        amc_flow_release(&comm->ctx->flow, amc_comm_peer(comm, comm->rank ^ 1));
    }
    /* a request that timed out gave its buffer back; one freed while it ran
     * finishes unobserved, writing its result as the schedules' do (and as
     * MPI's freed point-to-point requests); a failed instance's buffer holds
     * nothing of use either way */
    if (((slot->req == NULL) && !slot->freed) || (slot->status != AMC_SUCCESS)) {
        return;
    }
    if (b->oneway == AMC_CTRL_HEARS) {
        amc_ctrl_coll_finish_rooted(comm, slot);
    } else if (b->oneway == AMC_CTRL_BOTH) {
        amc_ctrl_coll_join(comm, slot, comm->nrounds - 1,
                           amc_coll_slot_small(&comm->ctrl, slot)->recvbuf);
    }
}

void amc_ctrl_coll_resume(struct amc_comm *comm, amc_coll_slot_t *slot, int round,
                          const void *out, size_t out_len, const void *work, size_t work_len)
{
    memcpy(amc_coll_slot_out(&comm->ctrl, slot, round), out, out_len);
    if (work_len > 0) {
        memcpy(amc_coll_slot_work(&comm->ctrl, slot), work, work_len);
    }
}
