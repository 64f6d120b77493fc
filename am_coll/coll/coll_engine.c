/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The handlers that run scheduled collectives. The header handler finds the
 * instance by sequence number and the receive by (sender, tag); a ready
 * receive takes the message at once (copying or reducing the data straight
 * into its place), one that is not ready yet keeps a copy. Whatever an act's
 * completion makes ready runs from inside the handler, so a collective
 * advances without its caller.
 */
#include "am_coll/coll/coll.h"
#include "am_coll/alg/alg_rounds.h"
#include "am_coll/context/topo.h"
#include "am_coll/alg/alg.h"
#include "am_coll/context/comm.h"
#include "am_coll/context/datatype.h"
#include "am_coll/context/op.h"
#include "am_coll/context/request.h"
#include "base/status.h"
#include "am_coll/context/comm_life.h"

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
static int amc_coll_reduce_unaligned(const amc_coll_inst_t *inst, const void *dst,
                                     const void *src)
{
    return (inst->op.kernel == NULL) &&
           (((uintptr_t)src % inst->dt_size) || ((uintptr_t)dst % inst->dt_size));
}

static void amc_coll_reduce(amc_coll_inst_t *inst, void *dst, const void *src, size_t n,
                            int right)
{
    int   order = right && !inst->op.commute;
    int   stage = amc_coll_reduce_unaligned(inst, dst, src);
    void *scratch;

    if (n == 0) {
        return;
    }
    if (!order && !stage) {
        amc_op_bound_reduce(&inst->op, src, dst, amc_datatype_elems(n, inst->dt_size));
        return;
    }
    /* the schedule sized the instance's scratch for its largest reduction;
     * reductions of one instance run one at a time (under its lock) */
    scratch = (unsigned char *)inst->tmp + amc_sched_reduce_off(inst->sched);
    memcpy(scratch, src, n);
    if (order) {
        amc_op_bound_reduce(&inst->op, dst, scratch, amc_datatype_elems(n, inst->dt_size));
        memcpy(dst, scratch, n);
    } else {
        amc_op_bound_reduce(&inst->op, scratch, dst, amc_datatype_elems(n, inst->dt_size));
    }
}

/* Local work of n bytes is big enough to run outside the control lock: a
 * smaller one runs at once, since releasing and retaking the lock would
 * cost more. Asked first, so that no address is formed for count 0 (the
 * buffers may be NULL). */
static inline int amc_coll_big_work(const amc_coll_inst_t *inst, size_t n)
{
    return (n > 0) && (n >= inst->comm->ctx->cfg.defer_bytes);
}

/* A reduction that may run outside the lock: straight from src into dst,
 * not through the instance's one scratch (an order-sensitive op, a user
 * function's unaligned operands), which serializes an instance's
 * reductions under its lock. */
static int amc_coll_reduce_direct(const amc_coll_inst_t *inst, int right, const void *dst,
                                  const void *src)
{
    return !(right && !inst->op.commute) && !amc_coll_reduce_unaligned(inst, dst, src);
}

static inline int amc_coll_is_recv_reduce(const amc_sched_act_t *act)
{
    return (act->type == AMC_ACT_RECV_REDUCE) || (act->type == AMC_ACT_RECV_REDUCE_R);
}

/* A receive-and-reduce whose data is at src (a pull's staging area, an
 * early copy, the handler's message) is reduced outside the lock. */
static int amc_coll_recv_reduce_outside(const amc_coll_inst_t *inst, const amc_sched_act_t *act,
                                        const void *src)
{
    return amc_coll_big_work(inst, act->bytes) &&
           amc_coll_reduce_direct(inst, act->type == AMC_ACT_RECV_REDUCE_R,
                                  inst->buf[act->buf] + act->off, src);
}

/* Whether an eager message for a ready receive-and-reduce is reduced
 * outside the lock (in the handler, amc_coll_reduce_msg_unlocked, or from
 * its early copy by amc_coll_issue_sends): one amc_coll_deliver would take
 * without complaint, big enough, straight into place. */
static int amc_coll_reduce_msg_outside(const amc_coll_inst_t *inst, int index,
                                       const amc_wire_hdr_t *hdr, const void *data, size_t len)
{
    const amc_sched_act_t *act = &inst->sched->acts[index];

    return amc_coll_is_recv_reduce(act) && (len == act->bytes) &&
           (!(hdr->flags & AMC_WIRE_FLAG_LAST) == !act->last) &&
           amc_coll_recv_reduce_outside(inst, act, data);
}

static void amc_coll_act_done(amc_coll_inst_t *inst, uint32_t index);

static void amc_coll_run_local(amc_coll_inst_t *inst, const amc_sched_act_t *act)
{
    switch (act->type) {
    case AMC_ACT_COPY:
        memmove(inst->buf[act->buf] + act->off, inst->buf[act->buf2] + act->off2, act->bytes);
        break;
    case AMC_ACT_REDUCE:
    case AMC_ACT_REDUCE_R:
        amc_coll_reduce(inst, inst->buf[act->buf] + act->off, inst->buf[act->buf2] + act->off2,
                        act->bytes, act->type == AMC_ACT_REDUCE_R);
        break;
    case AMC_ACT_STAMP: {
        uint64_t value = act->off2;

        memcpy(inst->buf[act->buf] + act->off, &value, AMC_SCHED_STAMP_BYTES);
        break;
    }
    default:
        break; /* a join, or a check (amc_coll_stamp_ok) */
    }
}

/* A block that travelled through other ranks says what its sender's counts
 * made of it (AMC_ACT_STAMP); this rank's own counts expect act->off2. */
static void amc_coll_stamp_describe(uint64_t value, char *buf, size_t len)
{
    if (value == AMC_SCHED_STAMP_ELSEWHERE) {
        snprintf(buf, len, "a block too large for the steps (sent straight)");
    } else {
        snprintf(buf, len, "%llu bytes", (unsigned long long)value);
    }
}

static int amc_coll_stamp_ok(amc_coll_inst_t *inst, const amc_sched_act_t *act)
{
    uint64_t said;
    char     sent[64], expected[64];

    memcpy(&said, inst->buf[act->buf] + act->off, sizeof(said));
    if (said == (uint64_t)act->off2) {
        return 1;
    }
    amc_coll_stamp_describe(said, sent, sizeof(sent));
    amc_coll_stamp_describe(act->off2, expected, sizeof(expected));
    amc_error(&inst->comm->ctx->log,
              "%s seq %llu on communicator 0x%llx: rank %d sent %s where this rank expects %s "
              "(count or datatype differ)", amc_coll_name(inst->coll),
              (unsigned long long)inst->slot->seq, (unsigned long long)inst->comm->cid,
              act->peer, sent, expected);
    return 0;
}

/* The receive a message is for: from src, the tag-th message of src to us. */
static int amc_coll_find_recv(const amc_coll_inst_t *inst, const amc_wire_hdr_t *hdr)
{
    return amc_sched_find_recv(inst->sched, (int)hdr->src, hdr->round);
}

/* A message kept for later: its descriptor or its sender's token goes back. */
static void amc_coll_drop_msg(amc_comm_t comm, amc_early_msg_t *msg)
{
    amc_comm_drop_early(comm, msg);
    free(msg);
}

/* Whether a pull in flight may still write: one from a live sender. A dead
 * sender's never completes with data (UCX fails it, or never ends it, with
 * the sender gone), so the request need not wait for it; the instance stays
 * until its completion, which may still come. Off the common path. */
static int amc_coll_pulls_live(const amc_coll_inst_t *inst)
{
    const amc_peer_set_t *dead = &inst->comm->ctx->tp->dead;
    uint32_t              i;

    for (i = 0; i < inst->sched->nacts; i++) {
        if ((inst->state[i] & AMC_ACT_PULL) &&
            !amc_peer_set_test(dead, amc_comm_peer(inst->comm, inst->sched->acts[i].peer))) {
            return 1;
        }
    }
    return 0;
}

/* An aborted instance's request completes once no pull is in flight and
 * no copy or reduction runs outside the lock: they write into the caller's
 * buffers, which are the caller's again as soon as the call returns. Sends
 * in flight may still be read by their receivers (a rendezvous send from
 * the caller's buffer), never written. */
static void amc_coll_abort_complete(amc_coll_inst_t *inst)
{
    if ((inst->slot->req != NULL) && (inst->local_busy == 0) &&
        ((inst->fetch_busy == 0) || !amc_coll_pulls_live(inst))) {
        amc_request_complete(inst->slot->req, inst->status);
        inst->slot->req = NULL;
    }
}

/* Nothing this instance waits for will come (the ranks run different
 * collectives, a peer gave up, the call timed out). Its request fails as
 * soon as no pull writes into its buffers; late messages for it are
 * dropped; the instance lingers only until its sends and pulls in flight
 * complete (they use its memory). notify: this rank found the cause
 * itself, so it tells the others, some of whom would otherwise wait for
 * its part for ever (am_coll/coll/coll_notice.c). */
static void amc_coll_abort(amc_coll_inst_t *inst, int status, int notify)
{
    uint32_t i;

    if (inst->aborted) {
        return;
    }
    amc_coll_set_status(inst, status);
    amc_coll_ctrl_note_aborted(&inst->comm->ctrl, inst->slot->seq);
    if (notify) {
        amc_coll_notify_abort(inst->comm, inst->slot->seq, inst->coll, inst->root, status);
    }
    amc_coll_abort_complete(inst);
    inst->aborted    = 1;
    inst->nready     = 0;
    inst->sendq_head = inst->sendq_tail; /* never posted */
    amc_early_list_free(&inst->slot->early, inst->comm->ctrl.drop_early,
                        inst->comm->ctrl.drop_arg);
    for (i = 0; i < inst->sched->nacts; i++) {
        if ((inst->early[i] != NULL) && !(inst->state[i] & AMC_ACT_OUT)) {
            /* (one being reduced outside the lock goes when that ends) */
            amc_coll_drop_msg(inst->comm, inst->early[i]);
            inst->early[i] = NULL;
        }
    }
}

/* A message of another length than act expects (the caller logged it):
 * the instance is aborted and the others are told, so that every rank
 * whose result depends on it fails too instead of returning what this
 * rank's data made of it (an allreduce at N=3 whose last rank sent 3
 * elements to the others' 2: rank 0 got the fold's result with success).
 * Returns 1 (aborted). */
static int amc_coll_wrong_length(amc_coll_inst_t *inst, const amc_sched_act_t *act)
{
    (void)act;
    amc_coll_abort(inst, AMC_ERR_TRUNCATE, 1);
    return 1;
}

/* Why a rank that sent an abort notice with status gave up. */
static const char *amc_coll_notice_reason(int status)
{
    switch (status) {
    case AMC_ERR_PROTOCOL:
        return "it found that the ranks' calls differ";
    case AMC_ERR_TRUNCATE:
        return "its counts or datatypes disagree (its own checks, or the data it got)";
    case AMC_ERR_ARG:
        return "its call failed its argument checks";
    case AMC_ERR_TIMEOUT:
        return "its call timed out (AMC_TIMEOUT)";
    case AMC_ERR_PEER:
        return "it lost a peer";
    default:
        return "its call failed";
    }
}

/* A message that does not belong to this instance as this rank runs it:
 * a peer's abort notice, another collective or root, another algorithm.
 * The instance is aborted; returns 0. */
static int amc_coll_mismatch(amc_coll_inst_t *inst, const amc_wire_hdr_t *hdr)
{
    amc_log_t *log = &inst->comm->ctx->log;

    if ((hdr->flags & AMC_WIRE_FLAG_ABORT) && (hdr->src == (uint32_t)inst->comm->rank)) {
        /* left by amc_coll_keep_failure: reported when it happened */
        amc_coll_abort(inst, amc_coll_notice_status(hdr), 0);
        return 0;
    }
    if (hdr->flags & AMC_WIRE_FLAG_ABORT) {
        amc_error(log, "%s seq %llu on communicator 0x%llx: rank %u gave up this collective "
                  "(%s; its log says why), so this rank's call fails with %s",
                  amc_coll_name(inst->coll), (unsigned long long)hdr->seq,
                  (unsigned long long)inst->comm->cid, (unsigned)hdr->src,
                  amc_coll_notice_reason(amc_coll_notice_status(hdr)),
                  amc_strerror(amc_coll_notice_status(hdr)));
        amc_coll_abort(inst, amc_coll_notice_status(hdr), 0); /* it told everyone */
        return 0;
    }
    if ((hdr->coll == inst->coll) && (hdr->root == inst->root)) {
        /* the same call, another algorithm: each side's messages are
         * meaningless to the other, and some ranks would wait for ever */
        amc_error(log, "algorithm mismatch on communicator 0x%llx seq %llu: rank %u runs %s "
                  "with algorithm %s, this rank %s: %s (or the ranks' AMC_TUNING_FILE rules)",
                  (unsigned long long)inst->comm->cid, (unsigned long long)hdr->seq,
                  (unsigned)hdr->src, amc_coll_name(inst->coll),
                  amc_alg_name(inst->coll, hdr->alg), amc_alg_name(inst->coll, inst->alg),
                  amc_alg_config_hint(inst->coll));
    } else {
        amc_error(log, "collective mismatch on communicator 0x%llx seq %llu: rank %u runs %s "
                  "(root %d), this rank %s (root %d)",
                  (unsigned long long)inst->comm->cid, (unsigned long long)hdr->seq,
                  (unsigned)hdr->src, amc_coll_name(hdr->coll), (int)hdr->root,
                  amc_coll_name(inst->coll), (int)inst->root);
    }
    amc_coll_abort(inst, AMC_ERR_PROTOCOL, 1);
    return 0;
}

static inline int amc_coll_matches(amc_coll_inst_t *inst, const amc_wire_hdr_t *hdr)
{
    if ((hdr->coll == inst->coll) && (hdr->root == inst->root) && (hdr->alg == inst->alg) &&
        !(hdr->flags & AMC_WIRE_FLAG_ABORT)) {
        return 1;
    }
    return amc_coll_mismatch(inst, hdr);
}

/* The data of a receive is in place (or in scratch, reduced now). */
static void amc_coll_fetch_done(amc_coll_inst_t *inst, int index, int status)
{
    const amc_sched_act_t *act  = &inst->sched->acts[index];
    amc_coll_xfer_t       *xfer = &inst->xfers[index];

    if (status != AMC_SUCCESS) {
        amc_coll_set_status(inst, AMC_ERR_TRANSPORT);
    } else if ((xfer->scratch != NULL) && !inst->aborted) {
        if (amc_coll_recv_reduce_outside(inst, act, xfer->scratch)) {
            /* reduced by amc_coll_issue_sends once the lock is released */
            inst->sendq[inst->sendq_tail++] = (uint32_t)index;
            return;
        }
        amc_coll_reduce(inst, inst->buf[act->buf] + act->off, xfer->scratch, act->bytes,
                        act->type == AMC_ACT_RECV_REDUCE_R);
    }
    xfer->scratch = NULL; /* inside the instance's scratch: nothing to free */
    if (!inst->aborted) {
        amc_coll_act_done(inst, (uint32_t)index);
    }
}

/* The end of a completion handler: runs what became ready, unlocks, posts
 * the sends it queued, and makes what was deferred under the lock. */
static void amc_coll_advance_unlock(amc_coll_inst_t *inst, amc_comm_t comm)
{
    int sends = amc_coll_advance(inst); /* inst may be gone: not read after */

    amc_spin_unlock(&comm->ctrl.lock);
    if (sends) {
        amc_coll_issue_sends(inst);
    }
    amc_context_flush(comm->ctx);
}

static void amc_coll_on_fetch_complete(amc_completion_t *comp, int status)
{
    amc_coll_xfer_t *xfer = amc_container_of(comp, amc_coll_xfer_t, comp);
    amc_coll_inst_t *inst = xfer->inst;
    amc_comm_t       comm = inst->comm;

    amc_spin_lock(&comm->ctrl.lock);
    inst->fetch_busy--;
    inst->state[xfer - inst->xfers] &= (uint8_t)~AMC_ACT_PULL;
    amc_coll_fetch_done(inst, (int)(xfer - inst->xfers), status);
    amc_coll_advance_unlock(inst, comm);
}

/* Data left at the sender: pulled straight into its place, or into scratch
 * when it is to be reduced. The pull is queued and made once the control
 * structure's lock is released (am_coll/context/defer.h). */
static void amc_coll_fetch(amc_coll_inst_t *inst, int index, void *desc, size_t len)
{
    const amc_sched_act_t *act  = &inst->sched->acts[index];
    amc_coll_xfer_t       *xfer = &inst->xfers[index];
    void                  *target;

    if (len != act->bytes) {
        amc_error(&inst->comm->ctx->log,
                  "%s: %zu bytes announced where this rank expects %zu (count or datatype "
                  "differ)", amc_coll_name(inst->coll), len, act->bytes);
        amc_context_release_desc(inst->comm->ctx, desc);
        if (!amc_coll_wrong_length(inst, act)) {
            amc_coll_act_done(inst, (uint32_t)index);
        }
        return;
    }
    xfer->scratch = NULL;
    target        = (len > 0) ? inst->buf[act->buf] + act->off : NULL;
    if ((act->type != AMC_ACT_RECV) && (len > 0)) {
        /* its own range of the staging area after the scratch */
        xfer->scratch = (unsigned char *)inst->tmp + inst->sched->stage_off + act->off2;
        target        = xfer->scratch;
    }
    xfer->comp.fn = amc_coll_on_fetch_complete;
    xfer->inst    = inst;
    inst->fetch_busy++;
    inst->state[index] |= AMC_ACT_PULL;
    if (amc_defer_fetch(&inst->comm->ctx->defer, &xfer->fetch, desc, target, len,
                        &xfer->comp) != AMC_SUCCESS) {
        inst->fetch_busy--; /* finalizing: the data is gone with the transport */
        inst->state[index] &= (uint8_t)~AMC_ACT_PULL;
        amc_coll_fetch_done(inst, index, AMC_ERR_TRANSPORT);
    }
}

/* The sender's message stream to this rank ends before or after this
 * rank's: their counts differ (messages of the expected size, more or
 * fewer of them: a pipelined bcast). Waiting would hang for the missing
 * ones or leave the extra ones to a later call: the instance is aborted,
 * and the others are told. */
static void amc_coll_count_mismatch(amc_coll_inst_t *inst, const amc_wire_hdr_t *hdr,
                                    void *desc)
{
    amc_error(&inst->comm->ctx->log,
              "%s seq %llu on communicator 0x%llx: rank %u sends %s messages than this rank "
              "expects (count or datatype differ)", amc_coll_name(inst->coll),
              (unsigned long long)hdr->seq, (unsigned long long)inst->comm->cid,
              (unsigned)hdr->src, (hdr->flags & AMC_WIRE_FLAG_LAST) ? "fewer" : "more");
    if (desc != NULL) {
        amc_context_release_desc(inst->comm->ctx, desc);
    }
    amc_coll_abort(inst, AMC_ERR_TRUNCATE, 1);
}

/* A message for a ready receive: into its place. Never writes past the
 * posted length; a length that disagrees is the instance's error. */
static void amc_coll_deliver(amc_coll_inst_t *inst, int index, const amc_wire_hdr_t *hdr,
                             const void *data, size_t len, void *desc)
{
    const amc_sched_act_t *act = &inst->sched->acts[index];
    unsigned char         *target;
    size_t                 n = len;

    if (!(hdr->flags & AMC_WIRE_FLAG_LAST) != !act->last) {
        amc_coll_count_mismatch(inst, hdr, desc);
        return;
    }
    if (desc != NULL) {
        amc_coll_fetch(inst, index, desc, len);
        return;
    }
    if (len != act->bytes) {
        amc_error(&inst->comm->ctx->log,
                  "%s seq %llu: rank %u sent %zu bytes where this rank expects %zu "
                  "(count or datatype differ)", amc_coll_name(inst->coll),
                  (unsigned long long)hdr->seq, (unsigned)hdr->src, len, act->bytes);
        if (amc_coll_wrong_length(inst, act)) {
            return;
        }
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
    amc_coll_act_done(inst, (uint32_t)index);
}

/* Messages that came before the instance existed: each to its receive
 * (delivered when that receive is ready). */
static void amc_coll_take_early(amc_coll_inst_t *inst)
{
    amc_early_msg_t *msg;
    int              index;

    while ((msg = inst->slot->early) != NULL) {
        if (!amc_coll_matches(inst, &msg->hdr)) {
            return; /* aborted: the early list is gone */
        }
        inst->slot->early = msg->next;
        msg->next         = NULL;
        index             = amc_coll_find_recv(inst, &msg->hdr);
        if ((index < 0) || (inst->state[index] & AMC_ACT_SEEN)) {
            amc_coll_set_status(inst, AMC_ERR_PROTOCOL);
            amc_coll_drop_msg(inst->comm, msg);
            continue;
        }
        inst->state[index] |= AMC_ACT_SEEN;
        inst->early[index]  = msg;
    }
}

/* A receive that became ready takes the message that came early. */
static void amc_coll_recv_ready(amc_coll_inst_t *inst, uint32_t index)
{
    amc_early_msg_t *msg = inst->early[index];

    if (msg == NULL) {
        return;
    }
    if ((msg->desc == NULL) &&
        amc_coll_reduce_msg_outside(inst, (int)index, &msg->hdr, msg->data, msg->len)) {
        /* reduced from its copy by amc_coll_issue_sends once the lock is
         * released; the copy stays in early[] until then */
        inst->xfers[index].scratch      = msg->data;
        inst->sendq[inst->sendq_tail++] = index;
        return;
    }
    inst->early[index] = NULL;
    amc_coll_deliver(inst, (int)index, &msg->hdr, msg->data, msg->len, msg->desc);
    msg->desc = NULL; /* the fetch owns it now */
    amc_coll_drop_msg(inst->comm, msg);
}

/* The test hook (am_coll/context/context.h); NULL outside tests. */
static inline void amc_coll_trace(const amc_coll_inst_t *inst, uint32_t index, int event)
{
    const amc_context_t *ctx = inst->comm->ctx;

    if (ctx->act_trace != NULL) {
        ctx->act_trace(ctx->act_trace_arg, inst, index, event);
    }
}

static void amc_coll_act_done(amc_coll_inst_t *inst, uint32_t index)
{
    const amc_sched_act_t *act = &inst->sched->acts[index];
    const uint32_t        *succ = &inst->sched->succ[act->succ];
    uint32_t               i;

    amc_coll_trace(inst, index, AMC_ACT_TRACE_DONE);
    inst->state[index] |= AMC_ACT_DONE;
    inst->left--;
    /* pushed last first: the ready stack runs them in schedule order, which
     * is the order the builders chose (a bcast's biggest subtree first) */
    for (i = act->nsucc; i-- > 0;) {
        if (--inst->pending[succ[i]] == 0) {
            inst->ready[inst->nready++] = succ[i];
        }
    }
}

/* The header fields every message of the instance shares. */
static inline void amc_coll_hdr_of(const amc_coll_inst_t *inst, amc_wire_hdr_t *hdr)
{
    hdr->magic   = AMC_WIRE_MAGIC;
    hdr->version = AMC_WIRE_VERSION;
    hdr->kind    = AMC_WIRE_COLL;
    hdr->coll    = inst->coll;
    hdr->src     = (uint32_t)inst->comm->rank;
    hdr->cid     = inst->comm->cid;
    hdr->seq     = inst->slot->seq;
    hdr->round   = 0;
    hdr->root    = inst->root;
    hdr->alg     = inst->alg;
    hdr->flags   = 0;
    hdr->status  = 0;
    hdr->credits = 0;
}

/* An instance abandoned before this rank entered it leaves its failure in
 * its slot, as a notice of its own among the early messages: the call
 * takes it (amc_coll_take_early) and fails with the same error. Releasing
 * the slot instead would move the window past a sequence number this rank
 * has not used yet, and every later start on the communicator would find
 * its own instance "already finished". 0 without memory. */
static int amc_coll_keep_failure(amc_coll_inst_t *inst)
{
    amc_wire_hdr_t   hdr;
    amc_early_msg_t *msg;

    amc_coll_hdr_of(inst, &hdr);
    hdr.flags  = AMC_WIRE_FLAG_ABORT;
    hdr.status = (uint8_t)((inst->status != AMC_SUCCESS) ? inst->status : AMC_ERR_PROTOCOL);
    msg = amc_early_msg_new(&hdr, NULL, 0, NULL);
    if (msg == NULL) {
        return 0;
    }
    amc_early_list_append(&inst->slot->early, msg);
    return 1;
}

static void amc_coll_finish(amc_coll_inst_t *inst)
{
    amc_coll_slot_t *slot = inst->slot;
    amc_comm_t       comm = inst->comm;

    if (inst->forwarding && !inst->aborted) {
        /* not slot->req == NULL: a call whose request was freed while it
         * ran (amc_request_free) has none either, and its instance then
         * never finished: the slot stayed taken for good (the
         * communicator a zombie once freed) */
        if (!inst->adopted) {
            inst->fwd_done = 1; /* forwarded; the data waits for this rank's call */
            return;
        }
        /* a request freed while it ran still gets its data, unobserved, as
         * on the barrier's rounds (amc_ctrl_coll_finish) */
        if (inst->user_bytes > 0) {
            memcpy(inst->user_buf, inst->fwd_buf, inst->user_bytes);
        }
    }
    if (inst->fwd_token_peer >= 0) {
        /* the forwarded data held its sender's token until now */
        amc_flow_release_n(&comm->ctx->flow, inst->fwd_token_peer, inst->fwd_tokens);
        inst->fwd_token_peer = -1;
    }
    if (inst->aborted && (slot->seq >= comm->ctrl.seq_next) && amc_coll_keep_failure(inst)) {
        /* abandoned before this rank's call (a bcast it forwarded that a
         * peer gave up): the slot stays for that call, which fails then */
        slot->inst     = NULL;
        inst->finished = 1;
        if (inst->pins == 0) {
            amc_coll_inst_free(inst);
        }
        return;
    }

    if (slot->req != NULL) {
        amc_request_complete(slot->req, inst->status);
    }
    slot->inst     = NULL;
    inst->finished = 1;
    amc_coll_ctrl_release(&comm->ctrl, slot);
    if (inst->pins == 0) {
        amc_coll_inst_free(inst);
    } /* else the last amc_coll_issue_sends holding a pin frees it */
}

static void amc_coll_on_send_complete(amc_completion_t *comp, int status);

static void amc_coll_prepare_send(amc_coll_inst_t *inst, uint32_t index)
{
    const amc_sched_act_t *act  = &inst->sched->acts[index];
    amc_coll_xfer_t       *send = &inst->xfers[index];
    amc_wire_hdr_t         hdr;

    amc_coll_hdr_of(inst, &hdr);
    hdr.round      = act->tag;
    hdr.flags      = act->last ? AMC_WIRE_FLAG_LAST : 0;
    send->comp.fn  = amc_coll_on_send_complete;
    send->inst     = inst;
    send->wire_len = (uint32_t)amc_wire_pack(&hdr, &send->wire);
    inst->sendq[inst->sendq_tail++] = index;
}

/* A copy or reduction of at least AMC_DEFER_BYTES is work outside the
 * control lock: it joins the send queue, and amc_coll_issue_sends runs it
 * once the lock is released, after posting the sends of the same batch (a
 * rendezvous peer pulls, or UCX copies, while this rank does its own work:
 * an allgather's own block, a scan's own vector, a reduction of a pulled
 * vector), so arrivals and other threads are not held up behind it. What
 * it reads and writes no other act that can run meanwhile touches: the
 * schedule orders every conflicting pair (test_sched_check). A reduction
 * that goes through the instance's scratch (an order-sensitive op, or a
 * user function's unaligned operands) stays under the lock, where the
 * instance's reductions run one at a time. A smaller one runs at once: the
 * lock's release and retake would cost more. */
static inline int amc_coll_is_big_local(const amc_coll_inst_t *inst, const amc_sched_act_t *act)
{
    if ((act->type < AMC_ACT_COPY) || (act->type > AMC_ACT_REDUCE_R) ||
        !amc_coll_big_work(inst, act->bytes)) {
        return 0;
    }
    return (act->type == AMC_ACT_COPY) ||
           amc_coll_reduce_direct(inst, act->type == AMC_ACT_REDUCE_R,
                                  inst->buf[act->buf] + act->off,
                                  inst->buf[act->buf2] + act->off2);
}

/* Under the lock again after amc_coll_run_outside: an early copy it
 * reduced from goes. */
static inline void amc_coll_local_ended(amc_coll_inst_t *inst, uint32_t index)
{
    inst->state[index] &= (uint8_t)~AMC_ACT_OUT;
    if (inst->early[index] != NULL) {
        amc_coll_drop_msg(inst->comm, inst->early[index]);
        inst->early[index] = NULL;
    }
}

/* What amc_coll_issue_sends runs outside the lock besides sends: a big
 * local act, or the reduction of a big received message from where
 * xfer->scratch points: a pull's staging area (amc_coll_fetch_done) or an
 * early arrival's copy (amc_coll_recv_ready). */
static void amc_coll_run_outside(amc_coll_inst_t *inst, uint32_t index)
{
    const amc_sched_act_t *act  = &inst->sched->acts[index];
    amc_coll_xfer_t       *xfer = &inst->xfers[index];

    if (!amc_coll_is_recv_reduce(act)) {
        amc_coll_run_local(inst, act);
        return;
    }
    amc_coll_reduce(inst, inst->buf[act->buf] + act->off, xfer->scratch, act->bytes,
                    act->type == AMC_ACT_RECV_REDUCE_R);
    xfer->scratch = NULL;
}

/* Runs what is ready; 1 if sends or big local work wait in the queue. May
 * finish the instance (freed unless pinned). */
static int amc_coll_run(amc_coll_inst_t *inst)
{
    const amc_sched_act_t *act;
    uint32_t               index, i;

    if (!inst->started && !inst->aborted) {
        inst->started = 1;
        for (i = inst->sched->nroots; i-- > 0;) { /* schedule order, as above */
            inst->ready[inst->nready++] = inst->sched->roots[i];
        }
        if (inst->slot->early != NULL) {
            amc_coll_take_early(inst);
        }
    }
    while ((inst->nready > 0) && !inst->aborted) {
        index = inst->ready[--inst->nready];
        act   = &inst->sched->acts[index];
        inst->state[index] |= AMC_ACT_READY;
        amc_coll_trace(inst, index, AMC_ACT_TRACE_READY);
        if (act->type == AMC_ACT_SEND) {
            amc_coll_prepare_send(inst, index);
        } else if ((act->type >= AMC_ACT_RECV) && (act->type <= AMC_ACT_RECV_REDUCE_R)) {
            amc_coll_recv_ready(inst, index);
        } else if ((act->type == AMC_ACT_CHECK) && !amc_coll_stamp_ok(inst, act)) {
            /* a message this rank waits for may never come: give up, and
             * tell the others */
            amc_coll_abort(inst, AMC_ERR_TRUNCATE, 1);
        } else if (amc_coll_is_big_local(inst, act)) {
            inst->sendq[inst->sendq_tail++] = index; /* run by amc_coll_issue_sends */
        } else {
            amc_coll_run_local(inst, act);
            amc_coll_act_done(inst, index);
        }
    }
    if (inst->aborted) {
        amc_coll_abort_complete(inst);
        if ((inst->send_busy == 0) && (inst->fetch_busy == 0) && !inst->finished) {
            amc_coll_finish(inst);
        }
        return 0;
    }
    if ((inst->left == 0) && !inst->finished) {
        amc_coll_finish(inst);
        return 0;
    }
    return inst->sendq_head != inst->sendq_tail;
}

int amc_coll_advance(amc_coll_inst_t *inst)
{
    if (!amc_coll_run(inst)) {
        return 0;
    }
    /* the caller posts the queued sends once it has unlocked: until then
     * nothing may free the instance (a mismatch aborts it and drops the
     * queue, say) */
    inst->pins++;
    return 1;
}

/* Whether bytes to dest go by rendezvous: from AMC_RNDV_THRESH, or from
 * AMC_RNDV_THRESH_NODE (where set) to a rank of this node, a node as the
 * node-aware algorithms see it (AMC_NODE_SIZE's, where set: what the
 * simulator models). Not set by default: UCX's eager copies there beat its
 * rendezvous at 16 and 32 KiB in most runs here and lose 2-3x in the others
 * (doc/performance.md). */
static int amc_coll_rndv(const amc_context_t *ctx, int dest, size_t bytes)
{
    size_t thresh = ctx->cfg.rndv_thresh, node = ctx->cfg.rndv_thresh_node;

    if ((node == 0) || (node == thresh)) {
        return bytes >= thresh;
    }
    if (bytes < ((node < thresh) ? node : thresh)) {
        return 0;
    }
    if (bytes >= ((node > thresh) ? node : thresh)) {
        return 1;
    }
    /* between the two: which applies */
    return bytes >= ((amc_context_node_of(ctx, dest) == amc_context_node_of(ctx, ctx->tp->rank))
                         ? node : thresh);
}

/* Posts one send; AMC_INPROGRESS, or done (AMC_SUCCESS or an error). */
static int amc_coll_post(amc_coll_inst_t *inst, uint32_t index)
{
    amc_comm_t             comm = inst->comm;
    amc_context_t         *ctx  = comm->ctx;
    amc_transport_t       *tp   = ctx->tp;
    const amc_sched_act_t *act  = &inst->sched->acts[index];
    amc_coll_xfer_t       *send = &inst->xfers[index];
    int                    dest = amc_comm_peer(comm, act->peer);
    unsigned               mode = AMC_SEND_EAGER;
    size_t                 len;

    /* data below the threshold goes eagerly while its tokens allow */
    if ((act->bytes > 0) &&
        (amc_coll_rndv(ctx, dest, act->bytes) ||
         !amc_flow_take_n(&ctx->flow, dest, amc_flow_cost(&ctx->flow, act->bytes)))) {
        mode = AMC_SEND_RNDV;
    }
    len = amc_wire_add_credits(&send->wire, send->wire_len,
                               amc_flow_piggyback(&comm->ctx->flow, dest));
    return tp->ops->send(tp, dest, &send->wire, len,
                         (act->bytes > 0) ? inst->buf[act->buf] + act->off : NULL, act->bytes,
                         mode, &send->comp);
}

/* Sends of sendq[first, last) to the front, big local work behind them;
 * returns where the local work starts. */
static uint32_t amc_coll_sends_first(amc_coll_inst_t *inst, uint32_t first, uint32_t last)
{
    uint32_t i, nsend = first, t;

    for (i = first; i < last; i++) {
        if (inst->sched->acts[inst->sendq[i]].type == AMC_ACT_SEND) {
            t                    = inst->sendq[nsend];
            inst->sendq[nsend++] = inst->sendq[i];
            inst->sendq[i]       = t;
        }
    }
    return nsend;
}

void amc_coll_issue_sends(amc_coll_inst_t *inst)
{
    amc_comm_t comm = inst->comm;
    uint32_t   first, last, locals, i, done;
    int        status, failure;

    /* the caller's amc_coll_advance pinned the instance for us */
    amc_spin_lock(&comm->ctrl.lock);
    while (!inst->finished && (inst->sendq_head != inst->sendq_tail)) {
        /* the queue's entries [first, last) are ours to post or run; while
         * they are out, send_busy keeps an aborted instance from finishing
         * and local_busy its request from completing (nothing may write
         * into a buffer its caller got back) */
        first             = inst->sendq_head;
        last              = inst->sendq_tail;
        inst->sendq_head  = last;
        locals            = amc_coll_sends_first(inst, first, last);
        inst->send_busy  += last - first;
        inst->local_busy += last - locals;
        for (i = locals; i < last; i++) {
            inst->state[inst->sendq[i]] |= AMC_ACT_OUT;
        }
        amc_spin_unlock(&comm->ctrl.lock);

        done    = 0;
        failure = AMC_SUCCESS;
        for (i = first; i < locals; i++) {
            status = amc_coll_post(inst, inst->sendq[i]);
            if (status == AMC_INPROGRESS) {
                continue;
            }
            if (status != AMC_SUCCESS) {
                failure = AMC_ERR_TRANSPORT;
            }
            inst->sendq[first + done++] = inst->sendq[i]; /* completed here */
        }
        for (i = locals; i < last; i++) {
            amc_coll_run_outside(inst, inst->sendq[i]);
            inst->sendq[first + done++] = inst->sendq[i];
        }

        amc_spin_lock(&comm->ctrl.lock);
        inst->send_busy  -= done;
        inst->local_busy -= last - locals;
        for (i = first + done - (last - locals); i < first + done; i++) {
            amc_coll_local_ended(inst, inst->sendq[i]); /* the locals came last */
        }
        if (failure != AMC_SUCCESS) {
            amc_coll_set_status(inst, failure);
        }
        for (i = first; (i < first + done) && !inst->aborted; i++) {
            amc_coll_act_done(inst, inst->sendq[i]);
        }
        (void)amc_coll_run(inst); /* may finish it: our pin keeps it */
    }
    if ((--inst->pins == 0) && inst->finished) {
        amc_coll_inst_free(inst); /* finished while we posted */
    }
    amc_spin_unlock(&comm->ctrl.lock);
}

static void amc_coll_on_send_complete(amc_completion_t *comp, int status)
{
    amc_coll_xfer_t *send = amc_container_of(comp, amc_coll_xfer_t, comp);
    amc_coll_inst_t *inst = send->inst;
    amc_comm_t       comm = inst->comm;

    amc_spin_lock(&comm->ctrl.lock);
    inst->send_busy--;
    if (status != AMC_SUCCESS) {
        amc_coll_set_status(inst, status);
    }
    if (!inst->aborted) {
        amc_coll_act_done(inst, (uint32_t)(send - inst->xfers));
    }
    amc_coll_advance_unlock(inst, comm);
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

/* With ctrl->lock held: a data message for an instance this rank runs as a
 * fast-path barrier. The barrier waits for what the sender will not send,
 * and so do the ranks it would have passed it on to: its request fails, and
 * the first such message (not a peer's notice) makes this rank tell them
 * all. The message is dropped; the barrier's slot stays (its rounds never
 * come). */
static void amc_coll_barrier_mismatch(amc_comm_t comm, amc_coll_slot_t *slot,
                                      const amc_wire_hdr_t *hdr, void *desc)
{
    int notice = !!(hdr->flags & AMC_WIRE_FLAG_ABORT);
    int status = notice ? amc_coll_notice_status(hdr) : AMC_ERR_PROTOCOL;

    if (desc != NULL) {
        amc_context_release_desc(comm->ctx, desc);
    }
    if (slot->req != NULL) {
        amc_request_complete(slot->req, status);
        slot->req = NULL;
    } else if (!(slot->barrier.bitvec & 1)) {
        /* this rank has not entered: its call, when it comes, fails so,
         * instead of waiting for rounds the peers no longer send */
        slot->barrier.told = (uint8_t)status;
    }
    if (notice || amc_coll_ctrl_was_aborted(&comm->ctrl, hdr->seq)) {
        return; /* told, or already told the others */
    }
    if ((slot->barrier.coll != 0) && (hdr->coll == slot->barrier.coll)) {
        amc_error(&comm->ctx->log, "algorithm mismatch on communicator 0x%llx seq %llu: rank %u "
                  "runs %s with algorithm %s on the engine, this rank %s on the barrier's "
                  "rounds (up to AMC_FAST_MAX bytes): %s, or count, datatype or op differ",
                  (unsigned long long)comm->cid, (unsigned long long)hdr->seq,
                  (unsigned)hdr->src, amc_coll_name(hdr->coll),
                  amc_alg_name(hdr->coll, hdr->alg), amc_alg_rounds_name(hdr->coll),
                  amc_alg_config_hint(hdr->coll));
    } else {
        amc_error(&comm->ctx->log, "%s message on communicator 0x%llx seq %llu from rank %u: %s",
                  amc_coll_name(hdr->coll), (unsigned long long)comm->cid,
                  (unsigned long long)hdr->seq, (unsigned)hdr->src,
                  (hdr->coll == AMC_COLL_BARRIER)
                      ? "it runs the barrier on the engine, this rank on the fast path: "
                        "AMC_BARRIER_ALG or AMC_NODE_SIZE differs between ranks"
                  : (slot->barrier.coll != 0)
                      ? "it runs another collective where this rank runs a small one on "
                        "the barrier's rounds"
                      : "it runs a data collective where this rank runs a barrier");
    }
    amc_coll_ctrl_note_aborted(&comm->ctrl, hdr->seq);
    amc_coll_notify_abort(comm, hdr->seq, hdr->coll, hdr->root, AMC_ERR_PROTOCOL);
}

/* A message for an instance that already finished here. An abort notice
 * that came after this rank's part was done, or the rest of an instance
 * abandoned here, is no news. Anything else means the ranks' calls
 * differed (another root, more data than this rank took) although this
 * rank's call found nothing wrong and returned: that call cannot fail any
 * more, and a later, correct one must not fail for it. So it is logged,
 * once per instance (noted as abandoned, so the rest is quiet), and
 * dropped. Its descriptor goes back (the token at out). */
static void amc_coll_late(amc_comm_t comm, const amc_wire_hdr_t *hdr, void *desc)
{
    if (!(hdr->flags & AMC_WIRE_FLAG_ABORT) &&
        !amc_coll_ctrl_was_aborted(&comm->ctrl, hdr->seq)) {
        amc_error(&comm->ctx->log,
                  "%s message on communicator 0x%llx (seq=%llu round=%u src=%u, root %d) "
                  "after this rank's call of that instance returned: the ranks' calls "
                  "differed (collective, root or count), and this rank could not see it in "
                  "time; dropped", amc_coll_name(hdr->coll), (unsigned long long)comm->cid,
                  (unsigned long long)hdr->seq, (unsigned)hdr->round, (unsigned)hdr->src,
                  (int)hdr->root);
        amc_coll_ctrl_note_aborted(&comm->ctrl, hdr->seq);
    }
    if (desc != NULL) {
        amc_context_release_desc(comm->ctx, desc);
    }
}

/* The handler's message is the transport's only until the handler returns,
 * so its reduction runs here, with the lock released around it (entered and
 * left locked): other arrivals and threads of the communicator go on
 * meanwhile. send_busy keeps an instance aborted meanwhile from finishing
 * (nothing may write into a buffer its caller got back), the pin from
 * being freed; the schedule orders every act that touches the same bytes
 * after this one (test_sched_check), as for big local work. */
static void amc_coll_reduce_msg_unlocked(amc_coll_inst_t *inst, int index, const void *data)
{
    const amc_sched_act_t *act  = &inst->sched->acts[index];
    amc_spinlock_t        *lock = &inst->comm->ctrl.lock;

    inst->send_busy++;
    inst->local_busy++;
    inst->pins++;
    amc_spin_unlock(lock);
    amc_coll_reduce(inst, inst->buf[act->buf] + act->off, data, act->bytes,
                    act->type == AMC_ACT_RECV_REDUCE_R);
    amc_spin_lock(lock);
    inst->pins--;
    inst->local_busy--;
    inst->send_busy--;
    if (!inst->aborted) {
        amc_coll_act_done(inst, (uint32_t)index);
    }
}

void amc_coll_on_arrival(amc_comm_t comm, const amc_wire_hdr_t *hdr, const void *data,
                         size_t len, void *desc)
{
    amc_coll_ctrl_t *ctrl = &comm->ctrl;
    amc_coll_slot_t *slot = NULL;
    amc_coll_inst_t *inst = NULL;
    amc_early_msg_t *msg;
    const char      *why  = NULL;
    int              sends = 0, index, held = 0, eager = (desc == NULL);

    if ((hdr->src >= (uint32_t)comm->size) || (hdr->coll == AMC_COLL_NONE) ||
        (hdr->coll >= AMC_COLL_LAST)) {
        amc_coll_reject(comm, hdr, "bad sender or collective type", desc);
        return;
    }
    amc_flow_give(&comm->ctx->flow, amc_comm_peer(comm, hdr->src), hdr->credits);

    amc_spin_lock(&ctrl->lock);
    switch (amc_coll_ctrl_slot(ctrl, hdr->seq, comm, &slot)) {
    case AMC_CTRL_FOUND:
        break;
    case AMC_CTRL_OLDER:
        amc_coll_late(comm, hdr, desc);
        goto out;
    case AMC_CTRL_NO_ROOM:
        why = "further ahead of this rank than any peer can be (2 (8 + AMC_EARLY_MAX) + "
              "(N - 1) AMC_EAGER_TOKENS instances)";
        goto out;
    default:
        why = "out of memory";
        goto out;
    }
    if (slot->kind == AMC_WIRE_BARRIER) {
        amc_coll_barrier_mismatch(comm, slot, hdr, desc);
        goto out;
    }
    if (slot->done) {
        amc_coll_late(comm, hdr, desc);
        goto out;
    }
    slot->kind = AMC_WIRE_COLL;
    inst       = slot->inst;
    index      = -1;
    if ((inst == NULL) && (hdr->coll == AMC_COLL_BCAST) && (desc == NULL)) {
        if (amc_coll_forward_start(comm, slot, hdr, len, &inst) == AMC_SUCCESS) {
            /* the receive from the parent becomes ready for this message */
            (void)amc_coll_run(inst); /* nothing to send yet: it waits for this message */
            if (slot->inst != inst) {
                /* early messages of another collective aborted it, and it
                 * is gone (the mismatch is reported): drop this one too */
                inst = NULL;
                goto out;
            }
            if (len > 0) {
                inst->fwd_token_peer = amc_comm_peer(comm, hdr->src);
                inst->fwd_tokens     = amc_flow_cost(&comm->ctx->flow, len);
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
            sends = amc_coll_advance(inst); /* frees it if no send is in flight */
            goto out;
        }
        index = amc_coll_find_recv(inst, hdr);
        if (index < 0) {
            /* the same collective, root and algorithm, and a message this
             * rank does not expect: the sender's count makes more of them */
            amc_coll_count_mismatch(inst, hdr, desc);
            desc  = NULL;
            sends = amc_coll_advance(inst); /* frees it if nothing is in flight */
            goto out;
        }
        if (inst->state[index] & AMC_ACT_SEEN) {
            amc_coll_set_status(inst, AMC_ERR_PROTOCOL);
            why = "duplicate message";
            goto out;
        }
        inst->state[index] |= AMC_ACT_SEEN;
    }
    if ((inst == NULL) || !(inst->state[index] & AMC_ACT_READY)) {
        /* ahead of this rank: keep a copy for when its receive is ready */
        msg = amc_early_msg_new(hdr, data, len, desc);
        if (msg == NULL) {
            if (inst != NULL) {
                inst->state[index] &= (uint8_t)~AMC_ACT_SEEN;
            }
            why = "out of memory for an early arrival";
            goto out;
        }
        if (inst != NULL) {
            inst->early[index] = msg;
        } else {
            amc_early_list_append(&slot->early, msg);
        }
        held = 1;
        goto out;
    }
    if ((desc == NULL) && amc_coll_reduce_msg_outside(inst, index, hdr, data, len)) {
        amc_coll_reduce_msg_unlocked(inst, index, data);
    } else {
        amc_coll_deliver(inst, index, hdr, data, len, desc);
        desc = NULL;
    }
    sends = amc_coll_advance(inst);

out:
    if (!held && eager && (len > 0)) {
        /* copied into place or dropped: the sender's token goes back (a
         * rendezvous message took none, also when it was pulled in place) */
        amc_flow_release_len(&comm->ctx->flow, amc_comm_peer(comm, hdr->src), len);
    }
    amc_spin_unlock(&ctrl->lock);
    if (why != NULL) {
        amc_coll_reject(comm, hdr, why, desc);
    } else if (sends) {
        amc_coll_issue_sends(inst);
    }
    amc_context_flush(comm->ctx);
}

static int amc_coll_launch(amc_comm_t comm, const amc_coll_args_t *args, const amc_alg_t *alg,
                           amc_coll_inst_t *inst,
                           struct amc_request *req);

/* The fewest bytes amc_coll_rndv sends by rendezvous to any rank. */
static size_t amc_coll_pull_bytes(const amc_config_t *cfg)
{
    size_t thresh = cfg->rndv_thresh, node = cfg->rndv_thresh_node;

    return ((node != 0) && (node < thresh)) ? node : thresh;
}

int amc_coll_args_fill(amc_comm_t comm, const amc_coll_args_t *call, amc_coll_args_t *args)
{
    *args             = *call;
    args->segment     = comm->ctx->cfg.bcast_segment;
    args->bruck_block = comm->ctx->cfg.alltoallv_bruck_block;
    args->pull_bytes  = amc_coll_pull_bytes(&comm->ctx->cfg);
    args->topo        = amc_comm_topo(comm);
    return (args->topo != NULL) ? AMC_SUCCESS : AMC_ERR_NO_MEMORY; /* logged */
}

int amc_coll_select(amc_comm_t comm, const amc_coll_args_t *call, amc_coll_args_t *args,
                    const amc_alg_t **alg_p)
{
    int status = amc_coll_args_fill(comm, call, args);

    if (status != AMC_SUCCESS) {
        return status;
    }
    *alg_p = amc_alg_select(comm, args);
    if (*alg_p == NULL) {
        amc_error(&comm->ctx->log, "no algorithm for %s", amc_coll_name(args->coll));
        return AMC_ERR_UNSUPPORTED;
    }
    return AMC_SUCCESS;
}

int amc_coll_start_alg(amc_comm_t comm, const amc_coll_args_t *args, const amc_alg_t *alg,
                       struct amc_request *req)
{
    amc_coll_ctrl_t *ctrl = &comm->ctrl;
    amc_sched_t     *sched;
    amc_coll_inst_t *inst;
    int              status;

    /* the schedule cache and its users count are shared with handlers that
     * forward a bcast (amc_coll_forward_start): both under the lock */
    amc_spin_lock(&ctrl->lock);
    status = amc_coll_sched_get(comm, alg, args, &sched);
    if (status == AMC_SUCCESS) {
        status = amc_coll_inst_new(comm, args, alg, sched, &inst);
        if ((status != AMC_SUCCESS) && !sched->cached) {
            amc_sched_free(sched);
        }
    }
    amc_spin_unlock(&ctrl->lock);
    if (status != AMC_SUCCESS) {
        return status;
    }
    return amc_coll_launch(comm, args, alg, inst, req);
}

int amc_coll_start_engine(amc_comm_t comm, const amc_coll_args_t *call, struct amc_request *req)
{
    amc_coll_args_t  args;
    const amc_alg_t *alg;
    int              status = amc_coll_select(comm, call, &args, &alg);

    return (status != AMC_SUCCESS) ? status : amc_coll_start_alg(comm, &args, alg, req);
}

/* no table entry: its id is in no other algorithm's headers, so no rank
 * mistakes its messages for a bcast to forward */
static const amc_alg_t amc_coll_given = { AMC_COLL_NONE, UINT8_MAX, "given", NULL, 0 };

int amc_coll_start_sched(amc_comm_t comm, const amc_coll_args_t *args, amc_sched_t *sched,
                         struct amc_request *req)
{
    amc_coll_inst_t *inst;
    int              status;

    sched->cached = 0; /* freed with its last instance */
    amc_spin_lock(&comm->ctrl.lock);
    status = amc_coll_inst_new(comm, args, &amc_coll_given, sched, &inst);
    amc_spin_unlock(&comm->ctrl.lock);
    if (status != AMC_SUCCESS) {
        amc_sched_free(sched);
        return status;
    }
    return amc_coll_launch(comm, args, &amc_coll_given, inst, req);
}

int amc_coll_start_kept(amc_comm_t comm, const amc_coll_args_t *args, amc_sched_t *sched,
                        struct amc_request *req)
{
    amc_coll_inst_t *inst;
    int              status;

    amc_spin_lock(&comm->ctrl.lock);
    sched->cached = 1; /* the caller's: its finished instance stays as the spare */
    status        = amc_coll_inst_new(comm, args, &amc_coll_given, sched, &inst);
    amc_spin_unlock(&comm->ctrl.lock);
    if (status != AMC_SUCCESS) {
        return status;
    }
    return amc_coll_launch(comm, args, &amc_coll_given, inst, req);
}

/* Enters the instance's slot and runs what is ready. */
static int amc_coll_launch(amc_comm_t comm, const amc_coll_args_t *args, const amc_alg_t *alg,
                           amc_coll_inst_t *inst,
                           struct amc_request *req)
{
    amc_coll_ctrl_t *ctrl = &comm->ctrl;
    amc_coll_slot_t *slot;
    int              status, sends;

    status = amc_comm_enter(comm, req, amc_coll_name(args->coll), &slot);
    if (status != AMC_SUCCESS) {
        amc_spin_lock(&ctrl->lock);
        amc_coll_inst_free(inst);
        amc_spin_unlock(&ctrl->lock);
        return status;
    }
    inst->slot = slot;
    if (slot->kind == AMC_WIRE_BARRIER) {
        /* peers entered a barrier where this rank calls a data collective */
        amc_spin_unlock(&ctrl->lock);
        amc_error(&comm->ctx->log, "%s on communicator 0x%llx seq %llu: peers run a barrier%s",
                  amc_coll_name(args->coll), (unsigned long long)comm->cid,
                  (unsigned long long)slot->seq,
                  (args->coll == AMC_COLL_BARRIER)
                      ? " on the fast path, this rank on the engine: AMC_BARRIER_ALG differs "
                        "between ranks" : "");
        amc_spin_lock(&ctrl->lock);
        amc_request_complete(req, AMC_ERR_PROTOCOL);
        if (!amc_coll_ctrl_was_aborted(ctrl, slot->seq)) {
            /* the peers' barrier waits for this rank's rounds */
            amc_coll_ctrl_note_aborted(ctrl, slot->seq);
            amc_coll_notify_abort(comm, slot->seq, args->coll, args->root, AMC_ERR_PROTOCOL);
        }
        amc_coll_inst_free(inst);
        slot->barrier.bitvec |= 1; /* entered, so the slot can be released */
        amc_coll_ctrl_release(ctrl, slot);
        amc_spin_unlock(&ctrl->lock);
        amc_context_flush(comm->ctx);
        return AMC_SUCCESS;
    }
    if (slot->inst != NULL) {
        /* this rank already forwarded the bcast's data to its children */
        amc_coll_inst_t *fwd = slot->inst;

        amc_coll_adopt(fwd, req, args, alg);
        sends = amc_coll_advance(fwd); /* finishes it if it is done */
        amc_coll_inst_free(inst);
        amc_spin_unlock(&ctrl->lock);
        if (sends) {
            amc_coll_issue_sends(fwd);
        }
        amc_context_flush(comm->ctx);
        return AMC_SUCCESS;
    }
    slot->kind = AMC_WIRE_COLL;
    slot->inst = inst;
    sends      = amc_coll_advance(inst);
    amc_spin_unlock(&ctrl->lock);

    if (sends) {
        amc_coll_issue_sends(inst);
    }
    amc_context_flush(comm->ctx);
    return AMC_SUCCESS;
}

void amc_coll_start_failed(amc_comm_t comm, const amc_coll_args_t *args, int status)
{
    amc_coll_ctrl_t   *ctrl = &comm->ctrl;
    struct amc_request req;
    amc_coll_slot_t   *slot;
    amc_coll_inst_t   *fwd;
    uint64_t           seq;

    amc_request_init(&req, comm, 0);
    if (amc_comm_enter(comm, &req, amc_coll_name(args->coll), &slot) != AMC_SUCCESS) {
        return; /* logged: the others are not told, and may wait until AMC_TIMEOUT */
    }
    /* nobody waits for it: the caller returns status now */
    seq       = slot->seq;
    slot->req = NULL;
    req.slot  = NULL;
    fwd       = slot->inst;
    if (fwd != NULL) {
        /* a bcast this rank forwarded before its call: what it sent stands */
        amc_coll_abort(fwd, status, 1);
        (void)amc_coll_advance(fwd); /* finishes it once its sends are done */
    } else {
        /* a slot of peers' early messages, or of their fast-path barrier
         * (which then keeps it: its rounds never come) */
        if (slot->kind != AMC_WIRE_BARRIER) {
            slot->kind = AMC_WIRE_COLL;
            amc_early_list_free(&slot->early, ctrl->drop_early, ctrl->drop_arg);
            amc_coll_ctrl_release(ctrl, slot);
        }
        amc_coll_ctrl_note_aborted(ctrl, seq);
        amc_coll_notify_abort(comm, seq, args->coll, args->root, status);
    }
    amc_spin_unlock(&ctrl->lock);
    amc_error(&comm->ctx->log, "%s on communicator 0x%llx seq %llu: this rank's arguments are "
              "invalid (%s); the other ranks are told, and their call fails too",
              amc_coll_name(args->coll), (unsigned long long)comm->cid,
              (unsigned long long)seq, amc_strerror(status));
    amc_context_flush(comm->ctx);
}

int amc_coll_forward_start(amc_comm_t comm, amc_coll_slot_t *slot, const amc_wire_hdr_t *hdr,
                           size_t len, amc_coll_inst_t **inst_p)
{
    const amc_alg_t *alg = amc_alg_bcast_forwarding();
    amc_coll_args_t  args;
    amc_sched_t     *sched;
    amc_coll_inst_t *inst;
    unsigned char   *buf = NULL;
    int              status;

    /* the root never receives its own bcast: such a message is left for the
     * checks of the call */
    if ((hdr->alg != alg->id) || (hdr->root < 0) || (hdr->root >= comm->size) ||
        (hdr->root == comm->rank) || (hdr->flags & AMC_WIRE_FLAG_ABORT)) {
        return AMC_ERR_UNSUPPORTED;
    }
    memset(&args, 0, sizeof(args));
    args.coll    = AMC_COLL_BCAST;
    args.root    = hdr->root;
    args.count   = len;        /* bytes: the datatype is the call's business */
    args.dt      = AMC_BYTE;
    args.dt_size = 1;
    args.op      = -1;
    if (len > 0) {
        buf = malloc(len);
        if (buf == NULL) {
            return AMC_ERR_NO_MEMORY;
        }
    }
    args.recvbuf = buf;
    status       = amc_coll_sched_get(comm, alg, &args, &sched);
    if (status == AMC_SUCCESS) {
        status = amc_coll_inst_new(comm, &args, alg, sched, &inst);
        if ((status != AMC_SUCCESS) && !sched->cached) {
            amc_sched_free(sched);
        }
    }
    if (status != AMC_SUCCESS) {
        free(buf);
        return status;
    }
    inst->forwarding = 1;
    inst->fwd_buf    = buf;
    inst->slot       = slot;
    slot->kind       = AMC_WIRE_COLL;
    slot->inst       = inst;
    *inst_p          = inst;
    return AMC_SUCCESS;
}

void amc_coll_adopt(amc_coll_inst_t *fwd, struct amc_request *req, const amc_coll_args_t *args,
                    const amc_alg_t *alg)
{
    size_t forwarded = fwd->sched->key.count; /* bytes */
    size_t bytes     = args->count * args->dt_size;

    req->slot      = fwd->slot;
    fwd->slot->req = req;
    fwd->adopted   = 1;
    if ((args->coll != AMC_COLL_BCAST) || (args->root != fwd->root)) {
        amc_error(&fwd->comm->ctx->log,
                  "%s (root %d) on communicator 0x%llx seq %llu: this rank already forwarded "
                  "a bcast from root %d", amc_coll_name(args->coll), args->root,
                  (unsigned long long)fwd->comm->cid, (unsigned long long)fwd->slot->seq,
                  (int)fwd->root);
        amc_coll_abort(fwd, AMC_ERR_PROTOCOL, 1);
        return;
    }

    if (bytes != forwarded) {
        amc_error(&fwd->comm->ctx->log,
                  "bcast seq %llu: %zu bytes arrived where this rank's call expects %zu",
                  (unsigned long long)fwd->slot->seq, forwarded, bytes);
        amc_coll_set_status(fwd, AMC_ERR_TRUNCATE);
    } else if (alg->id != fwd->alg) {
        /* the data is right, but for the same call this rank would have
         * run another tree than its peers: their configurations differ */
        amc_error(&fwd->comm->ctx->log,
                  "algorithm mismatch on communicator 0x%llx seq %llu: this rank forwarded a "
                  "bcast with algorithm %s before its call, which chose %s: %s (or the ranks' "
                  "AMC_TUNING_FILE rules)",
                  (unsigned long long)fwd->comm->cid, (unsigned long long)fwd->slot->seq,
                  amc_alg_name(AMC_COLL_BCAST, fwd->alg), alg->name,
                  amc_alg_config_hint(AMC_COLL_BCAST));
        amc_coll_abort(fwd, AMC_ERR_PROTOCOL, 1);
        return;
    }
    fwd->user_buf   = args->recvbuf;
    fwd->user_bytes = (bytes < forwarded) ? bytes : forwarded;
}

void amc_coll_cancel(amc_coll_inst_t *inst, int status)
{
    amc_coll_abort(inst, status, 1);
    (void)amc_coll_advance(inst); /* aborted: posts nothing; finishes it if nothing is in flight */
}

void amc_coll_describe(const amc_coll_inst_t *inst, char *buf, size_t len)
{
    const amc_sched_act_t *act;
    size_t                 used;
    uint32_t               i;

    used = (size_t)snprintf(buf, len,
                            "%s seq %llu on communicator 0x%llx (rank %d of %d, root %d): "
                            "%u of %u acts outstanding, %u sends in flight; waiting for:",
                            amc_coll_name(inst->coll), (unsigned long long)inst->slot->seq,
                            (unsigned long long)inst->comm->cid, inst->comm->rank,
                            inst->comm->size, (int)inst->root, inst->left, inst->sched->nacts,
                            inst->send_busy);
    for (i = 0; (i < inst->sched->nacts) && (used < len); i++) {
        act = &inst->sched->acts[i];
        if ((act->type >= AMC_ACT_RECV) && (act->type <= AMC_ACT_RECV_REDUCE_R) &&
            (inst->state[i] & AMC_ACT_READY) && !(inst->state[i] & AMC_ACT_SEEN)) {
            used += (size_t)snprintf(buf + used, len - used, " rank %d", act->peer);
        }
    }
}

int amc_coll_fail_request(amc_coll_inst_t *inst, struct amc_request *req, int status,
                          int timed_out, char *why, size_t len)
{
    if (inst->aborted) {
        return 0; /* cancelled already: waits for its pulls */
    }
    if (timed_out && (inst->coll == AMC_COLL_BARRIER)) {
        /* a barrier on the engine times out as the fast path's does: the
         * caller gets the error, the instance runs on detached (it touches
         * no user memory), so a late peer's barrier still completes and the
         * sequence numbers stay in step */
        amc_coll_describe(inst, why, len);
        req->slot->req = NULL;
        amc_request_complete(req, status);
        return 0;
    }
    if (timed_out) {
        amc_coll_describe(inst, why, len);
    }
    amc_coll_cancel(inst, status);
    return 1; /* the abort notices */
}
