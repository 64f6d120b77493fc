/*
 * The handlers that run scheduled collectives. The header handler finds the
 * instance by sequence number and either consumes the message in the current
 * round (copying or reducing the data straight into its place) or keeps a
 * copy for a later round; whenever a round completes, the next one starts
 * from inside the handler, so a collective advances without its caller.
 */
#include "am_coll/coll.h"
#include "am_coll/comm.h"
#include "am_coll/op.h"
#include "am_coll/request.h"
#include "am_coll/status.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void amc_coll_set_status(amc_coll_inst_t *inst, int status)
{
    if (inst->status == AMC_SUCCESS) {
        inst->status = status;
    }
}

/* dst = dst (op) src when right, else dst = src (op) dst; n bytes. The op
 * writes into its right operand, so dst (op) src for an order-sensitive op
 * needs a copy of src to write into. A user function may treat its pointers
 * as typed arrays, so a message payload that is not aligned for the type is
 * staged as well; the built-in loops cope with any alignment. */
static void amc_coll_reduce(amc_coll_inst_t *inst, void *dst, const void *src, size_t n,
                            int right)
{
    int   order = right && !inst->op.commute;
    int   stage = (inst->op.user_fn != NULL) &&
                  (((uintptr_t)src % inst->dt_size) || ((uintptr_t)dst % inst->dt_size));
    void *scratch;

    if (n == 0) {
        return;
    }
    if (!order && !stage) {
        amc_op_bound_reduce(&inst->op, src, dst, n / inst->dt_size);
        return;
    }
    scratch = malloc(n);
    if (scratch == NULL) {
        amc_coll_set_status(inst, AMC_ERR_NO_MEMORY);
        return;
    }
    memcpy(scratch, src, n);
    if (order) {
        amc_op_bound_reduce(&inst->op, dst, scratch, n / inst->dt_size);
        memcpy(dst, scratch, n);
    } else {
        amc_op_bound_reduce(&inst->op, scratch, dst, n / inst->dt_size);
    }
    free(scratch);
}

static void amc_coll_run_locals(amc_coll_inst_t *inst, const amc_sched_round_t *round)
{
    const amc_sched_act_t *act;
    uint32_t               i;

    for (i = round->first; i < round->first + round->nlocal; i++) {
        act = &inst->sched->acts[i];
        switch (act->type) {
        case AMC_ACT_COPY:
            memmove(inst->buf[act->buf] + act->off, inst->buf[act->buf2] + act->off2,
                    act->bytes);
            break;
        case AMC_ACT_REDUCE:
        case AMC_ACT_REDUCE_R:
            amc_coll_reduce(inst, inst->buf[act->buf] + act->off,
                            inst->buf[act->buf2] + act->off2, act->bytes,
                            act->type == AMC_ACT_REDUCE_R);
            break;
        default:
            break;
        }
    }
}

/* The receive a message is for: from src, the tag-th message of src to us. */
static int amc_coll_find_recv(const amc_coll_inst_t *inst, const amc_wire_hdr_t *hdr)
{
    return amc_sched_find_recv(inst->sched, (int)hdr->src, hdr->round);
}

/* Ranks run different collectives here: nothing this instance waits for
 * will come. Its request fails now; the instance lingers only until its
 * sends in flight complete (their headers live in it). */
static void amc_coll_abort(amc_coll_inst_t *inst, int status)
{
    amc_coll_set_status(inst, status);
    if (inst->slot->req != NULL) {
        amc_request_complete(inst->slot->req, inst->status);
        inst->slot->req = NULL;
    }
    inst->aborted = 1;
    amc_early_list_free(&inst->slot->early, inst->comm->ctrl.drop_early,
                        inst->comm->ctrl.drop_arg);
}


static int amc_coll_matches(amc_coll_inst_t *inst, const amc_wire_hdr_t *hdr)
{
    if ((hdr->coll == inst->coll) && (hdr->root == inst->root)) {
        return 1;
    }
    amc_error(&inst->comm->ctx->log,
              "collective mismatch on communicator 0x%llx seq %llu: rank %u runs %s "
              "(root %d), this rank %s (root %d)",
              (unsigned long long)inst->comm->cid, (unsigned long long)hdr->seq,
              (unsigned)hdr->src, amc_coll_name(hdr->coll), (int)hdr->root,
              amc_coll_name(inst->coll), (int)inst->root);
    amc_coll_abort(inst, AMC_ERR_PROTOCOL);
    return 0;
}

/* The data of a receive is in place (or in scratch, reduced now). */
static void amc_coll_fetch_done(amc_coll_inst_t *inst, int index, int status)
{
    const amc_sched_act_t *act  = &inst->sched->acts[index];
    amc_coll_xfer_t       *xfer = &inst->xfers[index];

    if (status != AMC_SUCCESS) {
        amc_coll_set_status(inst, AMC_ERR_TRANSPORT);
    } else if (xfer->scratch != NULL) {
        amc_coll_reduce(inst, inst->buf[act->buf] + act->off, xfer->scratch, act->bytes,
                        act->type == AMC_ACT_RECV_REDUCE_R);
    }
    xfer->scratch = NULL; /* inside the instance's scratch: nothing to free */
    inst->recv_left--;
}

static void amc_coll_on_fetch_complete(amc_completion_t *comp, int status)
{
    amc_coll_xfer_t *xfer = amc_container_of(comp, amc_coll_xfer_t, comp);
    amc_coll_inst_t *inst = xfer->inst;
    amc_comm_t       comm = inst->comm;
    int              next;

    amc_spin_lock(&comm->ctrl.lock);
    inst->fetch_busy--;
    amc_coll_fetch_done(inst, (int)(xfer - inst->xfers), status);
    next = amc_coll_advance(inst);
    amc_spin_unlock(&comm->ctrl.lock);
    if (next >= 0) {
        amc_coll_issue_sends(inst, next);
    }
    amc_context_flush(comm->ctx);
}

/* Data left at the sender: pulled straight into its place, or into scratch
 * when it is to be reduced. The pull is queued and made once the control
 * structure's lock is released (am_coll/defer.h). */
static void amc_coll_fetch(amc_coll_inst_t *inst, int index, void *desc, size_t len)
{
    const amc_sched_act_t *act  = &inst->sched->acts[index];
    amc_coll_xfer_t       *xfer = &inst->xfers[index];
    void                  *target;

    inst->recv_seen[index] = 1;
    if (len != act->bytes) {
        amc_error(&inst->comm->ctx->log,
                  "%s: %zu bytes announced where this rank expects %zu (count or datatype "
                  "differ)", amc_coll_name(inst->coll), len, act->bytes);
        amc_coll_set_status(inst, AMC_ERR_TRUNCATE);
        amc_context_release_desc(inst->comm->ctx, desc);
        inst->recv_left--;
        return;
    }
    xfer->scratch = NULL;
    target        = (len > 0) ? inst->buf[act->buf] + act->off : NULL;
    if ((act->type != AMC_ACT_RECV) && (len > 0)) {
        /* its own range of the staging area after the scratch */
        xfer->scratch = (unsigned char *)inst->tmp + inst->sched->tmp_bytes + act->off2;
        target        = xfer->scratch;
    }
    xfer->comp.fn = amc_coll_on_fetch_complete;
    xfer->inst    = inst;
    inst->fetch_busy++;
    if (amc_defer_fetch(&inst->comm->ctx->defer, &xfer->fetch, desc, target, len,
                        &xfer->comp) != AMC_SUCCESS) {
        inst->fetch_busy--; /* finalizing: the data is gone with the transport */
        amc_coll_fetch_done(inst, index, AMC_ERR_TRANSPORT);
    }
}

/* A message for a receive of the current round: into its place. Never writes
 * past the posted length; a length that disagrees is the instance's error. */
static void amc_coll_deliver(amc_coll_inst_t *inst, int index, const amc_wire_hdr_t *hdr,
                             const void *data, size_t len, void *desc)
{
    const amc_sched_act_t *act = &inst->sched->acts[index];
    unsigned char         *target;
    size_t                 n = len;

    if (desc != NULL) {
        amc_coll_fetch(inst, index, desc, len);
        return;
    }
    if (len != act->bytes) {
        amc_error(&inst->comm->ctx->log,
                  "%s seq %llu: rank %u sent %zu bytes where this rank expects %zu "
                  "(count or datatype differ)", amc_coll_name(inst->coll),
                  (unsigned long long)hdr->seq, (unsigned)hdr->src, len, act->bytes);
        amc_coll_set_status(inst, AMC_ERR_TRUNCATE);
        n = (len < act->bytes) ? len : act->bytes;
        n -= n % inst->dt_size;
    }
    if (n == 0) {
        /* nothing to place (count 0): buffers may be NULL */
    } else if (act->type == AMC_ACT_RECV) {
        target = inst->buf[act->buf] + act->off;
        memcpy(target, data, n);
    } else {
        target = inst->buf[act->buf] + act->off;
        /* the patent's point: reduce straight from the message */
        amc_coll_reduce(inst, target, data, n, act->type == AMC_ACT_RECV_REDUCE_R);
    }
    inst->recv_seen[index] = 1;
    inst->recv_left--;
}

/* Early messages whose receive belongs to the round that just started. */
static void amc_coll_consume_early(amc_coll_inst_t *inst)
{
    amc_early_msg_t **link = &inst->slot->early, *msg;
    int               index;

    while ((msg = *link) != NULL) {
        if (!amc_coll_matches(inst, &msg->hdr)) {
            return; /* aborted: the early list is gone */
        }
        index = amc_coll_find_recv(inst, &msg->hdr);
        if ((index >= 0) && (inst->sched->acts[index].round != (uint32_t)inst->round)) {
            link = &msg->next; /* for a later round */
            continue;
        }
        *link = msg->next;
        if (index < 0) {
            amc_coll_set_status(inst, AMC_ERR_PROTOCOL);
        } else if (inst->recv_seen[index]) {
            amc_coll_set_status(inst, AMC_ERR_PROTOCOL);
        } else {
            amc_coll_deliver(inst, index, &msg->hdr, msg->data, msg->len, msg->desc);
            msg->desc = NULL;
        }
        amc_comm_drop_early(inst->comm, msg); /* its descriptor or its sender's token */
        free(msg);
    }
}

static void amc_coll_finish(amc_coll_inst_t *inst)
{
    amc_coll_slot_t *slot = inst->slot;
    amc_comm_t       comm = inst->comm;

    if (inst->forwarding && !inst->aborted) {
        if (slot->req == NULL) {
            inst->fwd_done = 1; /* forwarded; the data waits for this rank's call */
            return;
        }
        if (inst->user_bytes > 0) {
            memcpy(inst->user_buf, inst->fwd_buf, inst->user_bytes);
        }
    }
    if (inst->fwd_token_peer >= 0) {
        /* the forwarded data held its sender's token until now */
        amc_flow_release(&comm->ctx->flow, inst->fwd_token_peer);
        inst->fwd_token_peer = -1;
    }

    if (slot->req != NULL) {
        amc_request_complete(slot->req, inst->status);
    }
    slot->inst = NULL;
    amc_coll_inst_free(inst);
    amc_coll_ctrl_release(&comm->ctrl, slot);
}

static void amc_coll_on_send_complete(amc_completion_t *comp, int status);

static void amc_coll_prepare_sends(amc_coll_inst_t *inst, const amc_sched_round_t *round)
{
    const amc_sched_act_t *act;
    amc_coll_xfer_t       *send;
    uint32_t               i;

    for (i = round->first + round->nlocal; i < round->first + round->nlocal + round->nsend; i++) {
        act                = &inst->sched->acts[i];
        send               = &inst->xfers[i];
        send->comp.fn      = amc_coll_on_send_complete;
        send->inst         = inst;
        send->hdr.magic    = AMC_WIRE_MAGIC;
        send->hdr.version  = AMC_WIRE_VERSION;
        send->hdr.kind     = AMC_WIRE_COLL;
        send->hdr.coll     = inst->coll;
        send->hdr.src      = (uint32_t)inst->comm->rank;
        send->hdr.cid      = inst->comm->cid;
        send->hdr.seq      = inst->slot->seq;
        send->hdr.round    = act->tag;
        send->hdr.root     = inst->root;
        send->hdr.alg      = inst->alg;
    }
}

int amc_coll_advance(amc_coll_inst_t *inst)
{
    const amc_sched_round_t *round;

    for (;;) {
        if (inst->aborted) {
            if ((inst->send_left == 0) && (inst->fetch_busy == 0)) {
                amc_coll_finish(inst);
            }
            return -1;
        }
        if ((inst->round >= 0) && ((inst->recv_left > 0) || (inst->send_left > 0))) {
            return -1;
        }
        if ((uint32_t)(inst->round + 1) >= inst->sched->nrounds) {
            amc_coll_finish(inst);
            return -1;
        }
        round           = &inst->sched->rounds[++inst->round];
        inst->recv_left = round->nrecv;
        inst->send_left = round->nsend;
        amc_coll_run_locals(inst, round);
        amc_coll_prepare_sends(inst, round);
        if (inst->slot->early != NULL) {
            amc_coll_consume_early(inst);
            if (inst->aborted) {
                inst->send_left = 0; /* this round's sends were never issued */
                continue;
            }
        }
        if (round->nsend > 0) {
            return inst->round;
        }
    }
}

void amc_coll_issue_sends(amc_coll_inst_t *inst, int round_index)
{
    amc_comm_t               comm = inst->comm;
    amc_transport_t         *tp   = comm->ctx->tp;
    const amc_sched_round_t *round;
    const amc_sched_act_t   *act;
    uint32_t                 i, first, last, done;
    unsigned                 mode;
    int                      status, failure, dest;

    while (round_index >= 0) {
        round   = &inst->sched->rounds[round_index];
        first   = round->first + round->nlocal;
        last    = first + round->nsend;
        done    = 0;
        failure = AMC_SUCCESS;
        /* Once the last send is posted with none done here, all may complete
         * on another thread and free the instance (and an uncached schedule):
         * after that send nothing of either may be read. */
        for (i = first; i < last; i++) {
            act  = &inst->sched->acts[i];
            dest = comm->peers[act->peer];
            /* data below the threshold goes eagerly while a token allows */
            mode = AMC_SEND_EAGER;
            if ((act->bytes > 0) && ((act->bytes >= comm->ctx->cfg.rndv_thresh) ||
                                     !amc_flow_take(&comm->ctx->flow, dest))) {
                mode = AMC_SEND_RNDV;
            }
            inst->xfers[i].hdr.credits = amc_flow_piggyback(&comm->ctx->flow, dest);
            status = tp->ops->send(tp, dest, &inst->xfers[i].hdr, sizeof(inst->xfers[i].hdr),
                                   (act->bytes > 0) ? inst->buf[act->buf] + act->off : NULL,
                                   act->bytes, mode, &inst->xfers[i].comp);
            if (status == AMC_INPROGRESS) {
                if ((i + 1 == last) && (done == 0)) {
                    return; /* the completions own the instance now */
                }
                continue;
            }
            if (status != AMC_SUCCESS) {
                failure = AMC_ERR_TRANSPORT;
            }
            done++;
        }
        /* the round cannot complete before these are counted: inst is ours */
        if (done == 0) {
            return;
        }
        amc_spin_lock(&comm->ctrl.lock);
        inst->send_left -= done;
        if (failure != AMC_SUCCESS) {
            amc_coll_set_status(inst, failure);
        }
        round_index = amc_coll_advance(inst);
        amc_spin_unlock(&comm->ctrl.lock);
    }
}

static void amc_coll_on_send_complete(amc_completion_t *comp, int status)
{
    amc_coll_xfer_t *send = amc_container_of(comp, amc_coll_xfer_t, comp);
    amc_coll_inst_t *inst = send->inst;
    amc_comm_t       comm = inst->comm;
    int              next;

    amc_spin_lock(&comm->ctrl.lock);
    inst->send_left--;
    if (status != AMC_SUCCESS) {
        amc_coll_set_status(inst, status);
    }
    next = amc_coll_advance(inst);
    amc_spin_unlock(&comm->ctrl.lock);
    if (next >= 0) {
        amc_coll_issue_sends(inst, next);
    }
    amc_context_flush(comm->ctx);
}

static void amc_coll_reject(amc_comm_t comm, const amc_wire_hdr_t *hdr, const char *why,
                            void *desc)
{
    int expected = AMC_SUCCESS;

    if (desc != NULL) {
        amc_context_release_desc(comm->ctx, desc); /* the sender must not wait for ever */
    }
    amc_error(&comm->ctx->log,
              "%s message rejected on communicator 0x%llx (seq=%llu round=%u src=%u): %s",
              amc_coll_name(hdr->coll), (unsigned long long)comm->cid,
              (unsigned long long)hdr->seq, (unsigned)hdr->round, (unsigned)hdr->src, why);
    __atomic_compare_exchange_n(&comm->ctrl.pending_err, &expected, AMC_ERR_PROTOCOL, 0,
                                __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

void amc_coll_on_arrival(amc_comm_t comm, const amc_wire_hdr_t *hdr, const void *data,
                         size_t len, void *desc)
{
    amc_coll_ctrl_t *ctrl = &comm->ctrl;
    amc_coll_slot_t *slot = NULL;
    amc_coll_inst_t *inst = NULL;
    amc_early_msg_t *msg;
    const char      *why  = NULL;
    int              next = -1, index, held = 0;

    if ((hdr->src >= (uint32_t)comm->size) || (hdr->coll == AMC_COLL_NONE) ||
        (hdr->coll >= AMC_COLL_LAST)) {
        amc_coll_reject(comm, hdr, "bad sender or collective type", desc);
        return;
    }
    amc_flow_give(&comm->ctx->flow, comm->peers[hdr->src], hdr->credits);

    amc_spin_lock(&ctrl->lock);
    switch (amc_coll_ctrl_slot(ctrl, hdr->seq, comm, &slot)) {
    case AMC_CTRL_FOUND:
        break;
    case AMC_CTRL_OLDER:
        why = "sequence number of a collective that already finished here";
        goto out;
    case AMC_CTRL_NO_ROOM:
        why = "too many instances ahead of this rank (AMC_EARLY_MAX)";
        goto out;
    default:
        why = "out of memory";
        goto out;
    }
    if (slot->kind == AMC_WIRE_BARRIER) {
        why = "a data collective where this rank runs a barrier";
        goto out;
    }
    if (slot->done) {
        why = "message for a collective that already finished here";
        goto out;
    }
    slot->kind = AMC_WIRE_COLL;
    inst       = slot->inst;
    index      = -1;
    if ((inst == NULL) && (hdr->coll == AMC_COLL_BCAST) && (desc == NULL)) {
        if (amc_coll_forward_start(comm, slot, hdr, len, &inst) == AMC_SUCCESS) {
            (void)amc_coll_advance(inst); /* into round 0: waits for this message */
            if (len > 0) {
                inst->fwd_token_peer = comm->peers[hdr->src];
                held                 = 1; /* its buffer holds the data until the call */
            }
        } else {
            inst = NULL; /* not a binomial bcast (or no memory): keep it as early data */
        }
    }
    if ((inst != NULL) && inst->aborted) {
        if (desc != NULL) {
            amc_context_release_desc(comm->ctx, desc);
        }
        goto out; /* the rest of a mismatched collective: already reported */
    }
    if (inst != NULL) {
        if (!amc_coll_matches(inst, hdr)) {
            if (desc != NULL) {
                amc_context_release_desc(comm->ctx, desc);
            }
            next = amc_coll_advance(inst); /* frees it if no send is in flight */
            goto out;
        }
        index = amc_coll_find_recv(inst, hdr);
        if (index < 0) {
            amc_coll_set_status(inst, AMC_ERR_PROTOCOL);
            why = "no such message in this rank's schedule";
            goto out;
        }
        if (inst->recv_seen[index]) {
            amc_coll_set_status(inst, AMC_ERR_PROTOCOL);
            why = "duplicate message";
            goto out;
        }
    }
    if ((inst == NULL) || (inst->sched->acts[index].round > (uint32_t)inst->round)) {
        /* ahead of this rank: keep a copy for when it gets there */
        msg = amc_early_msg_new(hdr, data, len, desc);
        if (msg == NULL) {
            why = "out of memory for an early arrival";
            goto out;
        }
        amc_early_list_append(&slot->early, msg);
        held = 1;
        goto out;
    }
    amc_coll_deliver(inst, index, hdr, data, len, desc);
    desc = NULL;
    next = amc_coll_advance(inst);

out:
    if (!held && (desc == NULL) && (len > 0)) {
        /* copied into place or dropped: the sender's token goes back */
        amc_flow_release(&comm->ctx->flow, comm->peers[hdr->src]);
    }
    amc_spin_unlock(&ctrl->lock);
    if (why != NULL) {
        amc_coll_reject(comm, hdr, why, desc);
    } else if (next >= 0) {
        amc_coll_issue_sends(inst, next);
    }
    amc_context_flush(comm->ctx);
}

void amc_coll_adopt(amc_coll_inst_t *fwd, struct amc_request *req, const amc_coll_args_t *args)
{
    size_t forwarded = fwd->sched->key.count; /* bytes */
    size_t bytes     = args->count * args->dt_size;

    req->slot      = fwd->slot;
    fwd->slot->req = req;
    if ((args->coll != AMC_COLL_BCAST) || (args->root != fwd->root)) {
        amc_error(&fwd->comm->ctx->log,
                  "%s (root %d) on communicator 0x%llx seq %llu: this rank already forwarded "
                  "a bcast from root %d", amc_coll_name(args->coll), args->root,
                  (unsigned long long)fwd->comm->cid, (unsigned long long)fwd->slot->seq,
                  (int)fwd->root);
        amc_coll_abort(fwd, AMC_ERR_PROTOCOL);
        return;
    }
    if (bytes != forwarded) {
        amc_error(&fwd->comm->ctx->log,
                  "bcast seq %llu: %zu bytes arrived where this rank's call expects %zu",
                  (unsigned long long)fwd->slot->seq, forwarded, bytes);
        amc_coll_set_status(fwd, AMC_ERR_TRUNCATE);
    }
    fwd->user_buf   = args->recvbuf;
    fwd->user_bytes = (bytes < forwarded) ? bytes : forwarded;
}

void amc_coll_describe(const amc_coll_inst_t *inst, char *buf, size_t len)
{
    const amc_sched_round_t *round;
    const amc_sched_act_t   *act;
    size_t                   used;
    uint32_t                 i;

    used = (size_t)snprintf(buf, len,
                            "%s seq %llu on communicator 0x%llx (rank %d of %d, root %d): "
                            "round %d of %u, %u receives and %u sends outstanding; waiting for:",
                            amc_coll_name(inst->coll), (unsigned long long)inst->slot->seq,
                            (unsigned long long)inst->comm->cid, inst->comm->rank,
                            inst->comm->size, (int)inst->root, (int)inst->round,
                            inst->sched->nrounds, inst->recv_left, inst->send_left);
    if ((inst->round < 0) || ((uint32_t)inst->round >= inst->sched->nrounds)) {
        return;
    }
    round = &inst->sched->rounds[inst->round];
    for (i = round->first + round->nlocal + round->nsend;
         (i < round->first + round->count) && (used < len); i++) {
        act = &inst->sched->acts[i];
        if (!inst->recv_seen[i]) {
            used += (size_t)snprintf(buf + used, len - used, " rank %d", act->peer);
        }
    }
}
