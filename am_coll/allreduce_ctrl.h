/*
 * The small allreduce on the barrier's control structure (the patent's
 * cur_val carrying data): recursive doubling on a power-of-two
 * communicator, each round's message holding the sender's partial result.
 * The barrier's state machine (am_coll/barrier.c) runs it; this module
 * decides when it applies, enters it, and does the reductions its rounds
 * need. No schedule, no instance, no allocation: everything lives in the
 * slot.
 */
#ifndef AMC_ALLREDUCE_CTRL_H
#define AMC_ALLREDUCE_CTRL_H

#include "am_coll/coll.h"
#include "ctrl/coll_ctrl.h"

struct amc_comm;
struct amc_request;

/* Whether a communicator of size ranks can run it (its slots then carry
 * the round data). */
static inline int amc_allreduce_ctrl_size_ok(int size)
{
    return (size > 1) && ((size & (size - 1)) == 0) && (size <= (1 << 30));
}

/* Whether a call runs here: the algorithm chosen for it says so
 * (AMC_ALG_FLAG_CTRL), a predefined op, 1 .. AMC_ALLREDUCE_FAST_MAX bytes.
 * Every rank decides alike from the same call and configuration. */
int amc_allreduce_ctrl_ok(const struct amc_comm *comm, const amc_coll_args_t *args,
                          const amc_alg_t *alg);

/* Starts it; req completes when this rank has the result in recvbuf. */
int amc_allreduce_ctrl_start(struct amc_comm *comm, const amc_coll_args_t *args,
                             struct amc_request *req);

/* With ctrl->lock held, at the entry: the caller's data is round 0's
 * message; what the rounds need of the call is kept in the slot. */
void amc_allreduce_ctrl_load(struct amc_comm *comm, amc_coll_slot_t *slot,
                             const amc_coll_args_t *args);

/* With ctrl->lock held, before round r > 0 is sent: out[r] = the partial
 * result of the rounds before it (out[r-1] with in[r-1], in rank order). */
void amc_allreduce_ctrl_step(struct amc_comm *comm, amc_coll_slot_t *slot, int round);

/* With ctrl->lock held, once every round arrived: the result into the
 * caller's buffer (unless the request is gone or the instance failed). */
void amc_allreduce_ctrl_finish(struct amc_comm *comm, amc_coll_slot_t *slot);

#endif
