/*
 * The small allreduce on the barrier's rounds. Round r exchanges partial
 * results with rank XOR 2^r: out[0] is the caller's data, out[r+1] combines
 * out[r] with in[r] (what the partner sent in round r), and the result
 * combines the last round's two. The lower group's operand is always on
 * the left, MPI's order, and every rank combines the same pairs, so all get
 * the same bits. The barrier's state machine sends round r once cur_val
 * reaches r, exactly when out[r] can be computed.
 *
 * A message whose length differs from this rank's call (the ranks' counts
 * or datatypes differ) is not reduced: the instance's status becomes
 * AMC_ERR_TRUNCATE, and its later messages carry that status, so every rank
 * whose result depends on it (all of them, by the last round) fails too,
 * instead of waiting for a round that never comes or returning a wrong sum.
 */
#include "am_coll/allreduce_ctrl.h"
#include "am_coll/barrier.h"
#include "am_coll/comm.h"
#include "base/status.h"

#include <string.h>

int amc_allreduce_ctrl_ok(const struct amc_comm *comm, const amc_coll_args_t *args,
                          const amc_alg_t *alg)
{
    size_t bytes = args->count * args->dt_size;
    size_t max   = comm->ctx->cfg.allreduce_fast_max;

    if (max > AMC_CTRL_PAY_MAX) {
        max = AMC_CTRL_PAY_MAX;
    }
    return (alg->flags & AMC_ALG_FLAG_CTRL) && (comm->ctrl.pay != 0) && (bytes != 0) &&
           (bytes <= max) && (amc_op_kernel(args->op, args->dt) != NULL);
}

int amc_allreduce_ctrl_start(struct amc_comm *comm, const amc_coll_args_t *args,
                             struct amc_request *req)
{
    return amc_barrier_enter(comm, req, args);
}

void amc_allreduce_ctrl_load(struct amc_comm *comm, amc_coll_slot_t *slot,
                             const amc_coll_args_t *args)
{
    amc_barrier_slot_t *b  = &slot->barrier;
    const void         *in = (args->sendbuf != NULL) ? args->sendbuf : args->recvbuf;

    b->bytes   = (uint16_t)(args->count * args->dt_size);
    b->count   = args->count;
    b->kernel  = amc_op_kernel(args->op, args->dt);
    b->recvbuf = args->recvbuf;
    memcpy(amc_coll_slot_out(&comm->ctrl, slot, 0), in, b->bytes);
}

/* into = the partial result after round r: out[r] and in[r], the lower
 * rank's group on the left. A length that differs fails the instance. */
static void amc_allreduce_ctrl_combine(struct amc_comm *comm, amc_coll_slot_t *slot, int round,
                                       void *into)
{
    amc_barrier_slot_t *b       = &slot->barrier;
    const uint8_t      *mine    = amc_coll_slot_out(&comm->ctrl, slot, round);
    const uint8_t      *theirs  = amc_coll_slot_in(&comm->ctrl, slot, round);
    int                 partner = comm->rank ^ (1 << round);

    if (b->in_len[round] != b->bytes) {
        if (slot->status == AMC_SUCCESS) {
            amc_error(&comm->ctx->log,
                      "allreduce seq %llu on communicator 0x%llx: rank %d sent %u bytes in "
                      "round %d, this rank's call has %u (count or datatype differ)",
                      (unsigned long long)slot->seq, (unsigned long long)comm->cid, partner,
                      (unsigned)b->in_len[round], round, (unsigned)b->bytes);
            slot->status = AMC_ERR_TRUNCATE;
        }
        memmove(into, mine, b->bytes);
        return;
    }
    if (partner < comm->rank) {
        memmove(into, mine, b->bytes);
        b->kernel(theirs, into, b->count);
    } else {
        memcpy(into, theirs, b->bytes);
        b->kernel(mine, into, b->count);
    }
}

void amc_allreduce_ctrl_step(struct amc_comm *comm, amc_coll_slot_t *slot, int round)
{
    amc_allreduce_ctrl_combine(comm, slot, round - 1,
                               amc_coll_slot_out(&comm->ctrl, slot, round));
}

void amc_allreduce_ctrl_finish(struct amc_comm *comm, amc_coll_slot_t *slot)
{
    amc_barrier_slot_t *b = &slot->barrier;

    b->reduced = 1;
    /* a request that timed out or was freed gave its buffer back; a failed
     * instance's buffer holds nothing of use either way */
    if ((slot->req != NULL) && (slot->status == AMC_SUCCESS)) {
        amc_allreduce_ctrl_combine(comm, slot, comm->nrounds - 1, b->recvbuf);
    }
}
