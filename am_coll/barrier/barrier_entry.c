/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Which path a barrier or a small collective on the barrier's rounds takes,
 * in one place: a blocking call first tries to run within its call (a
 * rooted one's sender at N=2 by amc_ctrl_coll_send_now, every other one by
 * amc_rounds_now, at every N), and what cannot, or stops there, runs on the
 * barrier's machine (amc_barrier_enter_left); a barrier that AMC_BARRIER_ALG,
 * a tuning rule or the layout gives the engine runs on the schedule engine
 * (doc/design.md, "Which path a call takes").
 */
#include "am_coll/barrier/barrier_entry.h"
#include "am_coll/barrier/barrier.h"
#include "am_coll/barrier/ctrl_send_now.h"
#include "am_coll/barrier/rounds_now.h"
#include "am_coll/alg/alg_rounds.h"
#include "am_coll/coll/coll.h"
#include "am_coll/context/comm.h"
#include "base/compiler.h"
#include "base/status.h"

/* The calls that end within it first (a rooted sender's at N=2, the
 * rounds' within the call), without the machine's frame, inlined into its
 * callers. */
AMC_INLINE_ACROSS int amc_barrier_enter(amc_comm_t comm, struct amc_request *req,
                                        const amc_coll_args_t *red)
{
    int status;

    /* a rooted one's sender at N=2 (its receiver skips the call: ~35
     * instructions of its gatherv's) */
    if ((red != NULL) && amc_alg_rounds_rooted(red->coll) && (comm->size == 2) &&
        amc_alg_rounds_sends(red->coll, comm->rank, amc_alg_rounds_root(red->root)) &&
        amc_ctrl_coll_send_now(comm, req, red)) {
        return AMC_SUCCESS;
    }
    if (amc_rounds_now(comm, req, red, &status)) {
        return status;
    }
    return amc_barrier_enter_left(comm, req, red, NULL);
}

int amc_barrier_post(amc_comm_t comm, struct amc_request *req)
{
    return amc_barrier_enter(comm, req, NULL);
}

/* The fast path, or the engine when AMC_BARRIER_ALG or a rule of
 * AMC_TUNING_FILE asks for it, the communicator spans nodes in a layout
 * where the multi-lane barrier pays, or its ranks share too few cores for
 * the dissemination's rounds (the linear barrier; both are schedules). */
int amc_barrier_start(amc_comm_t comm, struct amc_request *req)
{
    amc_coll_args_t args;
    int             engine, status;

    /* the usual call, the path known: no frame for the engine's arguments */
    if (__atomic_load_n(&comm->barrier_path, __ATOMIC_RELAXED) == 1) {
        return amc_barrier_post(comm, req);
    }
    status = amc_barrier_on_engine(comm, &engine);
    if (status != AMC_SUCCESS) {
        return status;
    }
    if (!engine) {
        return amc_barrier_post(comm, req);
    }
    amc_coll_args_barrier(&args);
    return amc_coll_start_engine(comm, &args, req);
}
