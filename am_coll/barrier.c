/*
 * The dissemination barrier on its own fast path, as in the patent: entry
 * (post), the header handler that records an arrival in the instance's bit
 * vector and advances cur_val, the completion step that sends the rounds the
 * new synchronization point releases, and the send completion handler that
 * counts send_complete. The instance finishes when cur_val passed the last
 * round and every send it posted completed.
 */
#include "am_coll/barrier.h"
#include "am_coll/alg.h"
#include "am_coll/topo.h"
#include "am_coll/comm.h"
#include "am_coll/request.h"
#include "am_coll/coll.h"
#include "am_coll/tuning.h"
#include "base/status.h"

#include <stdio.h>
#include <string.h>

/* Why a message was rejected; logged after the lock is released. */
typedef enum {
    AMC_BARRIER_OK,
    AMC_BARRIER_OLDER,
    AMC_BARRIER_DUPLICATE,
    AMC_BARRIER_NO_ROOM,
    AMC_BARRIER_NO_MEMORY,
    AMC_BARRIER_MISMATCH
} amc_barrier_verdict_t;

static const char *amc_barrier_verdict_str(amc_barrier_verdict_t verdict)
{
    switch (verdict) {
    case AMC_BARRIER_OLDER:     return "sequence number of a barrier that already finished here";
    case AMC_BARRIER_DUPLICATE: return "duplicate message for this round";
    case AMC_BARRIER_NO_ROOM:   return "further ahead of this rank than any peer can be";
    case AMC_BARRIER_NO_MEMORY: return "out of memory for an early arrival";
    case AMC_BARRIER_MISMATCH:  return "a barrier where this rank runs a data collective "
                                       "(or the barrier on the engine: AMC_BARRIER_ALG or "
                                       "AMC_NODE_SIZE differs between ranks)";
    default:                    return "accepted";
    }
}

static void amc_barrier_fail(struct amc_comm *comm, int status)
{
    int expected = AMC_SUCCESS;

    __atomic_compare_exchange_n(&comm->ctrl.pending_err, &expected, status, 0,
                                __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

static void amc_barrier_reject(struct amc_comm *comm, const amc_wire_hdr_t *hdr,
                               const char *why)
{
    amc_error(&comm->ctx->log,
              "barrier message rejected on communicator 0x%llx (seq=%llu round=%u "
              "src=%u, local seq_base=%llu): %s",
              (unsigned long long)comm->cid, (unsigned long long)hdr->seq,
              (unsigned)hdr->round, (unsigned)hdr->src,
              (unsigned long long)comm->ctrl.seq_base, why);
    amc_barrier_fail(comm, AMC_ERR_PROTOCOL);
}

static void amc_barrier_fill_header(struct amc_comm *comm, amc_coll_slot_t *slot, int round)
{
    amc_wire_hdr_t hdr;

    hdr.kind  = AMC_WIRE_BARRIER;
    hdr.coll  = 0;
    hdr.alg   = 0;
    hdr.flags = 0;
    hdr.round = (uint32_t)round;
    hdr.root  = -1;
    hdr.src   = (uint32_t)comm->rank;
    hdr.cid   = comm->cid;
    hdr.seq   = slot->seq;
    (void)amc_wire_pack(&hdr, &slot->hdr[round]); /* its length: amc_wire_len */
}

void amc_barrier_advance(struct amc_comm *comm, amc_coll_slot_t *slot,
                         int *first, int *count)
{
    amc_barrier_slot_t *b = &slot->barrier;
    int                 upto, round;

    *first = b->rounds_sent;
    *count = 0;
    if (b->cur_val < 0) {
        return; /* the local rank has not entered: arrivals are only recorded */
    }

    /* synchronization point s reached: rounds 0..s may be sent */
    upto = (b->cur_val + 1 < comm->nrounds) ? b->cur_val + 1 : comm->nrounds;
    for (round = b->rounds_sent; round < upto; round++) {
        amc_barrier_fill_header(comm, slot, round);
    }
    *count = upto - b->rounds_sent;
    b->send_comp.fn = amc_barrier_on_send_complete;
    b->send_posted += (uint32_t)*count;
    b->rounds_sent  = upto;

    if ((b->cur_val == comm->nrounds) && (b->send_complete == b->send_posted)) {
        if (slot->req != NULL) {
            amc_request_complete(slot->req, slot->status);
        }
        amc_coll_ctrl_release(&comm->ctrl, slot);
    }
}

void amc_barrier_on_arrival(struct amc_comm *comm, const amc_wire_hdr_t *hdr)
{
    amc_coll_ctrl_t      *ctrl = &comm->ctrl;
    amc_barrier_verdict_t verdict = AMC_BARRIER_OK;
    amc_coll_slot_t      *slot;
    int                   bit, first = 0, count = 0;
    uint32_t              expected_src;

    if (hdr->round >= (uint32_t)comm->nrounds) {
        amc_barrier_reject(comm, hdr, "round out of range for the communicator size");
        return;
    }
    expected_src = (uint32_t)(((int64_t)comm->rank - ((int64_t)1 << hdr->round) + comm->size) %
                              comm->size);
    if (hdr->src != expected_src) {
        amc_barrier_reject(comm, hdr, "sender is not this round's partner");
        return;
    }
    bit = hdr->round + 1;

    amc_spin_lock(&ctrl->lock);
    switch (amc_coll_ctrl_slot(ctrl, hdr->seq, comm, &slot)) {
    case AMC_CTRL_FOUND:
        if (slot->kind == AMC_WIRE_COLL) {
            if (amc_coll_ctrl_was_aborted(ctrl, hdr->seq)) {
                break; /* reported, and the others told: the rest is dropped */
            }
            /* this rank's part never reaches the sender's barrier, nor the
             * ranks it passes it on to: tell them all */
            verdict = AMC_BARRIER_MISMATCH;
            amc_coll_ctrl_note_aborted(ctrl, hdr->seq);
            amc_coll_notify_abort(comm, hdr->seq, AMC_COLL_BARRIER, -1, AMC_ERR_PROTOCOL);
            break;
        }
        slot->kind = AMC_WIRE_BARRIER;
        if (slot->barrier.bitvec & ((uint64_t)1 << bit)) {
            verdict = AMC_BARRIER_DUPLICATE;
            break;
        }
        amc_coll_slot_set_bit(slot, bit);
        amc_barrier_advance(comm, slot, &first, &count);
        break;
    case AMC_CTRL_OLDER:
        if (!amc_coll_ctrl_was_aborted(ctrl, hdr->seq)) {
            verdict = AMC_BARRIER_OLDER; /* else the rest of an abandoned instance */
        }
        break;
    case AMC_CTRL_NO_ROOM:
        verdict = AMC_BARRIER_NO_ROOM;
        break;
    default:
        verdict = AMC_BARRIER_NO_MEMORY;
        break;
    }
    amc_spin_unlock(&ctrl->lock);

    if (verdict != AMC_BARRIER_OK) {
        amc_barrier_reject(comm, hdr, amc_barrier_verdict_str(verdict));
        return;
    }
    /* the completion step: the new synchronization point releases rounds */
    if (count > 0) {
        amc_barrier_send_rounds(comm, slot, first, count);
    }
}

void amc_barrier_send_rounds(struct amc_comm *comm, amc_coll_slot_t *slot,
                             int first, int count);

static void amc_barrier_sends_done(struct amc_comm *comm, amc_coll_slot_t *slot,
                                   uint32_t completed, int status)
{
    int first, count;

    amc_spin_lock(&comm->ctrl.lock);
    slot->barrier.send_complete += completed;
    if ((status != AMC_SUCCESS) && (slot->status == AMC_SUCCESS)) {
        slot->status = status;
    }
    amc_barrier_advance(comm, slot, &first, &count);
    amc_spin_unlock(&comm->ctrl.lock);
    /* every bit setter claims its rounds at once, so this is zero; sending
     * anyway keeps the invariant local */
    if (count > 0) {
        amc_barrier_send_rounds(comm, slot, first, count);
    }
}

void amc_barrier_on_send_complete(amc_completion_t *comp, int status)
{
    amc_coll_slot_t *slot = amc_container_of(comp, amc_coll_slot_t, barrier.send_comp);

    if (status != AMC_SUCCESS) {
        amc_error(&slot->comm->ctx->log, "barrier send of seq %llu failed: %s",
                  (unsigned long long)slot->seq, amc_strerror(status));
    }
    amc_barrier_sends_done(slot->comm, slot, 1, status);
}

void amc_barrier_send_rounds(struct amc_comm *comm, amc_coll_slot_t *slot,
                             int first, int count)
{
    amc_transport_t *tp = comm->ctx->tp;
    uint32_t         completed = 0;
    int              round, dest, status, failure = AMC_SUCCESS;

    for (round = first; round < first + count; round++) {
        dest   = amc_comm_peer(comm, ((int64_t)comm->rank + ((int64_t)1 << round)) % comm->size);
        status = tp->ops->send(tp, dest, &slot->hdr[round], amc_wire_len(&slot->hdr[round]),
                               NULL, 0, AMC_SEND_EAGER, &slot->barrier.send_comp);
        if (status == AMC_INPROGRESS) {
            continue;
        }
        if (status != AMC_SUCCESS) {
            amc_error(&comm->ctx->log, "barrier send to rank %d (seq %llu round %d) failed: %s",
                      dest, (unsigned long long)slot->seq, round, amc_strerror(status));
            failure = AMC_ERR_TRANSPORT;
        }
        completed++;
    }
    /* the slot cannot finish before these are counted, so it is still ours */
    if (completed > 0) {
        amc_barrier_sends_done(comm, slot, completed, failure);
    }
}

int amc_barrier_post(amc_comm_t comm, struct amc_request *req)
{
    amc_coll_ctrl_t *ctrl = &comm->ctrl;
    amc_coll_slot_t *slot;
    int              first, count, status;

    status = amc_comm_enter(comm, req, "barrier", &slot);
    if (status != AMC_SUCCESS) {
        return status;
    }
    if ((slot->kind == AMC_WIRE_COLL) && (slot->inst != NULL)) {
        /* a bcast this rank forwarded before this call: the instance may
         * still have sends in flight, so releasing the slot here left it
         * behind, pointing at a slot the next instance reuses. The engine
         * fails it as it fails a data call that differs (the peers told),
         * and frees it and the slot once its sends are done. */
        amc_coll_inst_t *fwd = slot->inst;
        amc_coll_args_t  args;
        int              sends;

        memset(&args, 0, sizeof(args));
        args.coll = AMC_COLL_BARRIER;
        args.root = -1;
        amc_coll_adopt(fwd, req, &args, NULL); /* a mismatch: no algorithm is looked at */
        sends = amc_coll_advance(fwd);
        amc_spin_unlock(&ctrl->lock);
        if (sends) {
            amc_coll_issue_sends(fwd);
        }
        amc_context_flush(comm->ctx);
        return AMC_SUCCESS;
    }
    if (slot->kind == AMC_WIRE_COLL) {
        /* peers run a data collective where this rank calls a barrier */
        const amc_early_msg_t *msg;
        int                    engine = 0, told = 1;

        for (msg = slot->early; msg != NULL; msg = msg->next) {
            engine |= (msg->hdr.coll == AMC_COLL_BARRIER);
            told   &= !!(msg->hdr.flags & AMC_WIRE_FLAG_ABORT);
        }
        if (!told && !amc_coll_ctrl_was_aborted(ctrl, slot->seq)) {
            /* the peers wait for this rank's part: tell them */
            amc_coll_ctrl_note_aborted(ctrl, slot->seq);
            amc_coll_notify_abort(comm, slot->seq, AMC_COLL_BARRIER, -1, AMC_ERR_PROTOCOL);
        }
        amc_request_complete(req, AMC_ERR_PROTOCOL);
        slot->barrier.bitvec |= 1;
        amc_early_list_free(&slot->early, ctrl->drop_early, ctrl->drop_arg);
        amc_coll_ctrl_release(ctrl, slot);
        amc_spin_unlock(&ctrl->lock);
        amc_context_flush(comm->ctx); /* the early messages' descriptors */
        amc_error(&comm->ctx->log, "barrier on communicator 0x%llx: peers run %s",
                  (unsigned long long)comm->cid,
                  engine ? "the barrier on the engine, this rank on the fast path: "
                           "AMC_BARRIER_ALG or AMC_NODE_SIZE differs between ranks"
                         : "a data collective");
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
    const amc_barrier_slot_t *b = &slot->barrier;
    size_t                    used;
    int                       round, peer, missing = 0;

    used = (size_t)snprintf(buf, len,
                            "barrier seq %llu on communicator 0x%llx (rank %d of %d): cur_val=%d "
                            "of %d, bitvec=0x%llx, sends completed %u of %u; not heard from:",
                            (unsigned long long)slot->seq, (unsigned long long)comm->cid,
                            comm->rank, comm->size, b->cur_val, comm->nrounds,
                            (unsigned long long)b->bitvec, b->send_complete, b->send_posted);
    for (round = 0; (round < comm->nrounds) && (used < len); round++) {
        if (b->bitvec & ((uint64_t)1 << (round + 1))) {
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

/* The fast path, or the engine when AMC_BARRIER_ALG or a rule of
 * AMC_TUNING_FILE asks for it, the communicator spans nodes in a layout
 * where the multi-lane barrier pays, or its ranks share too few cores for
 * the dissemination's rounds (the linear barrier; both are schedules). */
int amc_barrier_start(amc_comm_t comm, struct amc_request *req)
{
    amc_coll_args_t   args;
    const amc_topo_t *topo;

    /* a rule of AMC_TUNING_FILE for this size names an engine algorithm
     * (the fast path has no name); without barrier rules: one count test */
    if ((comm->ctx->alg_forced[AMC_COLL_BARRIER] == NULL) &&
        ((comm->ctx->tuning.n[AMC_COLL_BARRIER] == 0) ||
         (amc_tuning_match(&comm->ctx->tuning, AMC_COLL_BARRIER, comm->size, 0) == NULL))) {
        topo = amc_comm_topo(comm);
        if (topo == NULL) {
            return AMC_ERR_NO_MEMORY; /* logged */
        }
        if (!amc_alg_barrier_lanes_pay(&comm->ctx->cfg, topo) &&
            !amc_alg_barrier_linear_pays(&comm->ctx->cfg, comm->size, topo)) {
            return amc_barrier_post(comm, req);
        }
    }
    amc_coll_args_barrier(&args);
    return amc_coll_start(comm, &args, req);
}

