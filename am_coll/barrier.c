#include "am_coll/barrier.h"
#include "am_coll/comm.h"
#include "am_coll/request.h"
#include "am_coll/coll.h"
#include "handlers/barrier_handler.h"

#include <stdio.h>
#include <string.h>

int amc_barrier_post(amc_comm_t comm, struct amc_request *req)
{
    amc_coll_ctrl_t *ctrl = &comm->ctrl;
    amc_coll_slot_t *slot;
    int              first, count, status;

    status = amc_comm_enter(comm, req, "barrier", &slot);
    if (status != AMC_SUCCESS) {
        return status;
    }
    if (slot->kind == AMC_WIRE_COLL) {
        /* peers run a data collective where this rank calls a barrier */
        amc_request_complete(req, AMC_ERR_PROTOCOL);
        slot->bitvec |= 1;
        amc_early_list_free(&slot->early, ctrl->drop_early, ctrl->drop_arg);
        amc_coll_ctrl_release(ctrl, slot);
        amc_spin_unlock(&ctrl->lock);
        amc_context_flush(comm->ctx); /* the early messages' descriptors */
        amc_error(&comm->ctx->log, "barrier on communicator 0x%llx: peers run a data collective",
                  (unsigned long long)comm->cid);
        return AMC_SUCCESS;
    }
    slot->kind = AMC_WIRE_BARRIER;
    /* bit 0: the local rank reached the barrier, the first synchronization point */
    amc_coll_slot_set_bit(slot, 0);
    amc_barrier_advance(comm, slot, &first, &count);
    amc_spin_unlock(&ctrl->lock);

    if (count > 0) {
        amc_barrier_send_rounds(comm, slot, first, count);
    }
    return AMC_SUCCESS;
}

void amc_barrier_describe(amc_comm_t comm, const amc_coll_slot_t *slot, char *buf, size_t len)
{
    size_t used;
    int    round, peer, missing = 0;

    used = (size_t)snprintf(buf, len,
                            "barrier seq %llu on communicator 0x%llx (rank %d of %d): cur_val=%d "
                            "of %d, bitvec=0x%llx, sends completed %u of %u; not heard from:",
                            (unsigned long long)slot->seq, (unsigned long long)comm->cid,
                            comm->rank, comm->size, slot->cur_val, comm->nrounds,
                            (unsigned long long)slot->bitvec, slot->send_complete,
                            slot->send_posted);
    for (round = 0; (round < comm->nrounds) && (used < len); round++) {
        if (slot->bitvec & ((uint64_t)1 << (round + 1))) {
            continue;
        }
        peer = (int)(((int64_t)comm->rank - ((int64_t)1 << round) + comm->size) % comm->size);
        used += (size_t)snprintf(buf + used, len - used, " rank %d (round %d)", peer, round);
        missing++;
    }
    if ((missing == 0) && (used < len)) {
        snprintf(buf + used, len - used, " nobody (waiting for local send completion)");
    }
}

/* The fast path, or the engine when AMC_BARRIER_ALG asks for it. */
int amc_barrier_start(amc_comm_t comm, struct amc_request *req)
{
    amc_coll_args_t args;

    if (comm->ctx->alg_forced[AMC_COLL_BARRIER] == NULL) {
        return amc_barrier_post(comm, req);
    }
    memset(&args, 0, sizeof(args));
    args.coll    = AMC_COLL_BARRIER;
    args.root    = -1;
    args.dt      = AMC_BYTE;
    args.dt_size = 1;
    args.op      = -1;
    return amc_coll_start(comm, &args, req);
}

