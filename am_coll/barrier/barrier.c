/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The dissemination barrier on its own fast path, as in the patent: entry
 * (post), the header handler that records an arrival in the instance's bit
 * vector and advances cur_val, the completion step that sends the rounds the
 * new synchronization point releases, and the send completion handler that
 * counts send_complete. The instance finishes when cur_val passed the last
 * round and every send it posted completed.
 *
 * The small collectives (am_coll/barrier/ctrl_coll.c) run on the same
 * machine: on a power of two the exchanges' rounds go with rank XOR 2^r
 * instead of passing on to rank + 2^r (Bruck's and the trees' pass on as the
 * barrier's), and each message carries the sender's partial result or
 * blocks. A round may be sent
 * once the rounds before it arrived, which is cur_val's rule unchanged.
 */
#include "am_coll/barrier/barrier.h"
#include "am_coll/barrier/ctrl_coll.h"
#include "am_coll/barrier/round_hdr.h"
#include "am_coll/alg/alg.h"
#include "am_coll/context/topo.h"
#include "am_coll/context/comm.h"
#include "am_coll/context/request.h"
#include "am_coll/coll/coll.h"
#include "am_coll/context/tuning_rules.h"
#include "base/compiler.h"
#include "base/status.h"
#include "am_coll/context/comm_life.h"

#include <stdio.h>
#include <string.h>

/* Why a message was rejected; logged after the lock is released. */
typedef enum {
    AMC_BARRIER_OK,
    AMC_BARRIER_OLDER,
    AMC_BARRIER_DUPLICATE,
    AMC_BARRIER_NO_ROOM,
    AMC_BARRIER_NO_MEMORY,
    AMC_BARRIER_MISMATCH,
    AMC_BARRIER_OTHER
} amc_barrier_verdict_t;

static const char *amc_barrier_verdict_str(amc_barrier_verdict_t verdict, const amc_wire_hdr_t *hdr)
{
    switch (verdict) {
    case AMC_BARRIER_OLDER:     return "sequence number of a barrier that already finished here";
    case AMC_BARRIER_DUPLICATE: return "duplicate message for this round";
    case AMC_BARRIER_NO_ROOM:   return "further ahead of this rank than any peer can be";
    case AMC_BARRIER_NO_MEMORY: return "out of memory for an early arrival";
    case AMC_BARRIER_MISMATCH:
        return (hdr->coll != 0)
                   ? "a small collective on the barrier's rounds where this rank runs a "
                     "schedule (ranks differ in collective, count, datatype or op, or in "
                     "AMC_FAST_MAX / AMC_<COLL>_ALG)"
                   : "a barrier where this rank runs a data collective "
                     "(or the barrier on the engine: AMC_BARRIER_ALG or "
                     "AMC_NODE_SIZE differs between ranks)";
    case AMC_BARRIER_OTHER:
        return (hdr->coll != 0) ? "a small collective on the barrier's rounds where this rank "
                                  "runs a barrier or another one"
                                : "a barrier where this rank runs a small collective on its "
                                  "rounds";
    default:                    return "accepted";
    }
}

/* The partners of round r: the barrier hears from rank - 2^r and passes on
 * to rank + 2^r, and so do the exchanges off a power of two (Bruck's) and
 * the trees; on a power of two the exchanges go with rank XOR 2^r
 * (amc_alg_rounds_passes). */
static inline int amc_barrier_from(const struct amc_comm *comm, int coll, uint32_t round)
{
    if (!amc_alg_rounds_passes((unsigned)coll, comm->size)) {
        return comm->rank ^ (int)(1u << round);
    }
    return amc_ctrl_blocks_wrap(comm->rank - (int)(1u << round), comm->size);
}

static inline int amc_barrier_to(const struct amc_comm *comm, int coll, int round)
{
    if (!amc_alg_rounds_passes((unsigned)coll, comm->size)) {
        return comm->rank ^ (1 << round);
    }
    return amc_ctrl_blocks_wrap(comm->rank + (1 << round), comm->size);
}

static void amc_barrier_fail(struct amc_comm *comm, int status)
{
    int expected = AMC_SUCCESS;

    __atomic_compare_exchange_n(&comm->ctrl.pending_err, &expected, status, 0,
                                __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

/* fail: no instance of this rank takes the error, so its next wait does
 * (else the instance's own call fails, and once is enough). */
static void amc_barrier_reject(struct amc_comm *comm, const amc_wire_hdr_t *hdr,
                               const char *why, int fail)
{
    amc_error(&comm->ctx->log,
              "%s message rejected on communicator 0x%llx (seq=%llu round=%u "
              "src=%u, local seq_base=%llu): %s",
              (hdr->coll != 0) ? amc_coll_name(hdr->coll) : "barrier",
              (unsigned long long)comm->cid, (unsigned long long)hdr->seq,
              (unsigned)hdr->round, (unsigned)hdr->src,
              (unsigned long long)comm->ctrl.seq_base, why);
    if (fail) {
        amc_barrier_fail(comm, AMC_ERR_PROTOCOL);
    }
}

static void amc_barrier_fill_header(struct amc_comm *comm, amc_coll_slot_t *slot, int round)
{
    /* its length: amc_wire_len */
    (void)amc_round_hdr_pack(comm, slot->barrier.coll, slot->barrier.oneway, slot->barrier.root,
                              slot->seq, slot->status, round, &slot->hdr[round]);
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
        if ((b->coll != 0) && (round > 0)) {
            amc_ctrl_coll_step(comm, slot, round);
        }
        amc_barrier_fill_header(comm, slot, round);
    }
    *count = upto - b->rounds_sent;
    b->send_comp.fn = amc_barrier_on_send_complete;
    b->send_posted += (uint32_t)*count;
    b->rounds_sent  = upto;

    if ((b->cur_val == comm->nrounds) && (b->coll != 0) && !b->reduced) {
        amc_ctrl_coll_finish(comm, slot);
        if ((b->oneway == AMC_CTRL_HEARS) &&
            (amc_coll_slot_small(&comm->ctrl, slot)->in_alg == AMC_CTRL_MSG_ASK)) {
            /* consumed a message that came without a token: its sender's
             * call waits for this answer */
            amc_barrier_fill_header(comm, slot, 0);
            *first = 0;
            *count = 1;
            b->send_posted++;
        }
    }
    if ((b->cur_val == comm->nrounds) && (b->send_complete == b->send_posted)) {
        if (slot->req != NULL) {
            amc_request_complete(slot->req, slot->status);
        }
        amc_coll_ctrl_release(&comm->ctrl, slot);
    }
}

/* What a message must be before its slot is looked at; NULL if it is. */
static const char *amc_barrier_check_msg(const struct amc_comm *comm, const amc_wire_hdr_t *hdr,
                                         size_t len)
{
    if (hdr->round >= (uint32_t)comm->nrounds) {
        return "round out of range for the communicator size";
    }
    if (hdr->coll == 0) {
        if (len != 0) {
            return "a barrier message carries no data";
        }
    } else if (!amc_alg_rounds_is(hdr->coll) || (comm->ctrl.pay == 0) ||
               (amc_alg_rounds_at_2(hdr->coll) && (comm->size != 2))) {
        return "not a collective that runs on the barrier's rounds of this communicator";
    } else if (amc_alg_rounds_tree(hdr->coll, comm->size)) {
        if ((hdr->alg != 0) || (len > comm->ctrl.pay_max)) {
            return "a tree's round message on the barrier's rounds carries 0 to 1024 bytes";
        }
    } else if (amc_alg_rounds_rooted(hdr->coll)) {
        if (hdr->alg > AMC_CTRL_MSG_ANSWER) {
            return "unknown message of a rooted collective on the barrier's rounds";
        }
        if (((hdr->alg == AMC_CTRL_MSG_ANSWER) != (len == 0)) || (len > comm->ctrl.pay_max)) {
            return "a rooted collective's message on the barrier's rounds carries 1 to 1024 "
                   "bytes, its answer none";
        }
    } else if ((len == 0) || (len > comm->ctrl.pay_max)) {
        return "a round message of a small collective carries 1 to 1024 bytes";
    }
    if (hdr->src != (uint32_t)amc_barrier_from(comm, hdr->coll, hdr->round)) {
        return "sender is not this round's partner";
    }
    return NULL;
}

/* Whether a peer's notice gave the instance up before this rank entered
 * it: every rank was told, and what else comes for it is dropped. */
static int amc_barrier_slot_told(const amc_coll_slot_t *slot)
{
    const amc_early_msg_t *msg;

    for (msg = slot->early; msg != NULL; msg = msg->next) {
        if (msg->hdr.flags & AMC_WIRE_FLAG_ABORT) {
            return 1;
        }
    }
    return 0;
}

/* With the lock held: a barrier's message where this rank runs the small
 * allreduce, or the reverse. Neither's rounds reach the other: this rank's
 * call fails, and the others are told. */
static amc_barrier_verdict_t amc_barrier_other(struct amc_comm *comm, amc_coll_slot_t *slot,
                                               const amc_wire_hdr_t *hdr)
{
    if (amc_coll_ctrl_was_aborted(&comm->ctrl, hdr->seq)) {
        return AMC_BARRIER_OK; /* reported, and the others told: the rest is dropped */
    }
    amc_coll_ctrl_note_aborted(&comm->ctrl, hdr->seq);
    amc_coll_notify_abort(comm, hdr->seq, slot->barrier.coll ? slot->barrier.coll
                                                             : AMC_COLL_BARRIER,
                          -1, AMC_ERR_PROTOCOL);
    if (slot->req != NULL) {
        amc_request_complete(slot->req, AMC_ERR_PROTOCOL);
        slot->req = NULL;
    } else if (!(slot->barrier.bitvec & 1)) {
        slot->barrier.told = AMC_ERR_PROTOCOL; /* its call, when it comes, fails */
    }
    return AMC_BARRIER_OTHER;
}

void amc_barrier_on_arrival(struct amc_comm *comm, const amc_wire_hdr_t *hdr, const void *data,
                            size_t len)
{
    amc_coll_ctrl_t      *ctrl = &comm->ctrl;
    amc_barrier_verdict_t verdict = AMC_BARRIER_OK;
    amc_coll_slot_t      *slot;
    const char           *why = amc_barrier_check_msg(comm, hdr, len);
    int                   bit, first = 0, count = 0, fail = 1;
    char                  msg[320];

    if (why != NULL) {
        amc_barrier_reject(comm, hdr, why, 1);
        return;
    }
    bit = hdr->round + 1;

    amc_spin_lock(&ctrl->lock);
    switch (amc_coll_ctrl_slot(ctrl, hdr->seq, comm, &slot)) {
    case AMC_CTRL_FOUND:
        if (slot->kind == AMC_WIRE_COLL) {
            if (amc_coll_ctrl_was_aborted(ctrl, hdr->seq) || amc_barrier_slot_told(slot)) {
                break; /* reported, and the others told: the rest is dropped */
            }
            /* this rank's part never reaches the sender's barrier, nor the
             * ranks it passes it on to: tell them all */
            verdict = AMC_BARRIER_MISMATCH;
            fail    = 0;
            if ((slot->inst != NULL) && (hdr->coll == slot->inst->coll)) {
                snprintf(msg, sizeof(msg), "algorithm mismatch: rank %u runs %s with algorithm "
                         "%s on the barrier's rounds (up to AMC_FAST_MAX bytes), this rank %s "
                         "on the engine: %s, or count, datatype or op differ",
                         (unsigned)hdr->src, amc_coll_name(hdr->coll),
                         amc_alg_rounds_name(hdr->coll), amc_alg_name(slot->inst->coll, slot->inst->alg),
                         amc_alg_config_hint(hdr->coll));
                why = msg;
            }
            if (slot->inst != NULL) {
                /* the call running it fails now, its instance aborted and
                 * the others told: left as the communicator's pending
                 * error, it went to this rank's next call whenever another
                 * rank's notice ended this one first (alg mismatch N=8) */
                amc_coll_cancel(slot->inst, AMC_ERR_PROTOCOL);
                break;
            }
            /* this rank's call, when it comes, fails */
            amc_coll_ctrl_note_aborted(ctrl, hdr->seq);
            amc_coll_notify_abort(comm, hdr->seq, hdr->coll ? hdr->coll : AMC_COLL_BARRIER, -1,
                                  AMC_ERR_PROTOCOL);
            break;
        }
        if ((slot->kind == AMC_WIRE_BARRIER) && (slot->barrier.coll != hdr->coll)) {
            verdict = amc_barrier_other(comm, slot, hdr);
            fail    = 0; /* its call failed, or will */
            break;
        }
        if (slot->kind != AMC_WIRE_BARRIER) {
            /* written once: senders read it without the lock */
            slot->kind         = AMC_WIRE_BARRIER;
            slot->barrier.coll = hdr->coll;
        }
        if (slot->barrier.bitvec & ((uint64_t)1 << bit)) {
            verdict = AMC_BARRIER_DUPLICATE;
            break;
        }
        if (hdr->coll != 0) {
            /* kept until the round is reduced: the message is the
             * transport's only until this handler returns */
            if (len > 0) { /* a rooted one's answer carries nothing */
                memcpy(amc_coll_slot_in(ctrl, slot, (int)hdr->round), data, len);
            }
            amc_coll_slot_small(ctrl, slot)->in_len[hdr->round] = (uint16_t)len;
            /* a tree's rounds come from several ranks: one that names
             * another root than an earlier one's is remembered as such */
            amc_coll_slot_small(ctrl, slot)->in_root =
                (((slot->barrier.bitvec >> 1) == 0) ||
                 (amc_coll_slot_small(ctrl, slot)->in_root == hdr->root))
                    ? hdr->root : AMC_CTRL_ROOTS_DIFFER;
            amc_coll_slot_small(ctrl, slot)->in_alg             = hdr->alg;
            if ((hdr->flags & AMC_WIRE_FLAG_ABORT) && (slot->status == AMC_SUCCESS)) {
                slot->status = amc_coll_notice_status(hdr);
            }
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
        amc_barrier_reject(comm, hdr, (why != NULL) ? why : amc_barrier_verdict_str(verdict, hdr),
                           fail);
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
    if ((slot->barrier.cur_val != comm->nrounds) ||
        (slot->barrier.send_complete != slot->barrier.send_posted)) {
        /* the common case, a send that completed at once: the rounds still
         * to come (or sends still out) finish the slot, not this */
        amc_spin_unlock(&comm->ctrl.lock);
        return;
    }
    if ((slot->barrier.rounds_sent == comm->nrounds) &&
        ((slot->barrier.coll == 0) || slot->barrier.reduced)) {
        /* every round sent and the result made: what amc_barrier_advance
         * would find, without its pass (the usual last send) */
        if (slot->req != NULL) {
            amc_request_complete(slot->req, slot->status);
        }
        amc_coll_ctrl_release(&comm->ctrl, slot);
        amc_spin_unlock(&comm->ctrl.lock);
        return;
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
    int              coll = slot->barrier.coll;
    size_t           len;
    int              round, dest, status, failure = AMC_SUCCESS;

    for (round = first; round < first + count; round++) {
        dest   = amc_comm_peer(comm, amc_barrier_to(comm, coll, round));
        len    = (coll != 0) ? amc_ctrl_coll_len(&slot->barrier, comm->rank, comm->size, round) : 0;
        status = tp->ops->send(tp, dest, &slot->hdr[round], amc_wire_len(&slot->hdr[round]),
                               (len != 0) ? amc_coll_slot_out(&comm->ctrl, slot, round) : NULL,
                               len, AMC_SEND_EAGER, &slot->barrier.send_comp);
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

/* With the lock held, which this unlocks: this rank's call meets peers
 * that run something else in its instance (their early messages of another
 * collective or of the engine, or the barrier where this rank runs the
 * small collectives, or the reverse). The call fails, the peers are told
 * unless they told this rank, and the slot is given up: what they send for
 * it later is dropped as the rest of an aborted instance. */
static void amc_barrier_refuse(amc_comm_t comm, amc_coll_slot_t *slot, struct amc_request *req,
                               uint8_t coll)
{
    amc_coll_ctrl_t       *ctrl   = &comm->ctrl;
    const amc_early_msg_t *msg;
    const char            *what;
    uint8_t                engine_coll = coll ? coll : AMC_COLL_BARRIER;
    int                    engine = 0, told = (slot->kind == AMC_WIRE_COLL);
    int                    status = AMC_ERR_PROTOCOL;

    if (slot->kind == AMC_WIRE_COLL) {
        for (msg = slot->early; msg != NULL; msg = msg->next) {
            engine |= (msg->hdr.coll == engine_coll);
            told   &= !!(msg->hdr.flags & AMC_WIRE_FLAG_ABORT);
        }
        if (told && (slot->early != NULL)) {
            status = amc_coll_notice_status(&slot->early->hdr);
        }
        what = !engine     ? "a data collective"
               : coll != 0 ? "it on the engine, this rank on the barrier's rounds: count, "
                             "datatype, op, AMC_FAST_MAX or AMC_<COLL>_ALG differ between "
                             "ranks"
                           : "the barrier on the engine, this rank on the fast path: "
                             "AMC_BARRIER_ALG or AMC_NODE_SIZE differs between ranks";
    } else if (slot->barrier.told != 0) {
        told   = 1;
        status = slot->barrier.told;
        what   = "another collective, or failed it (the call fails as they told)";
    } else {
        what = (coll != 0) ? "a barrier or another collective on its rounds"
                           : "a small collective on the barrier's rounds";
    }
    if (!told && !amc_coll_ctrl_was_aborted(ctrl, slot->seq)) {
        /* the peers wait for this rank's part: tell them */
        amc_coll_notify_abort(comm, slot->seq, engine_coll, -1, AMC_ERR_PROTOCOL);
    }
    /* what the peers sent before they learned of it: dropped quietly */
    amc_coll_ctrl_note_aborted(ctrl, slot->seq);
    amc_request_complete(req, status);
    slot->kind            = AMC_WIRE_COLL; /* their later rounds: dropped, not recorded */
    slot->barrier.bitvec |= 1;
    amc_early_list_free(&slot->early, ctrl->drop_early, ctrl->drop_arg);
    amc_coll_ctrl_release(ctrl, slot);
    amc_spin_unlock(&ctrl->lock);
    amc_context_flush(comm->ctx); /* the early messages' descriptors, the notices */
    amc_error(&comm->ctx->log, "%s on communicator 0x%llx: peers run %s",
              (coll != 0) ? amc_coll_name(coll) : "barrier", (unsigned long long)comm->cid, what);
}

/* With ctrl->lock held, at the entry on 2 ranks (one round): round 0 may
 * go at once, and where the transport sends it now (no thread may take the
 * lock meanwhile, so the transport may be called under it) it goes before
 * the machine's advance, with nothing left to complete: the peer, whose
 * call waits for it, waits that much less. The advance then finds it
 * sent. */
static void amc_barrier_send_now(struct amc_comm *comm, amc_coll_slot_t *slot)
{
    amc_barrier_slot_t *b = &slot->barrier;
    size_t              len;

    if ((comm->nrounds != 1) || (b->rounds_sent != 0) || (b->cur_val < 0) ||
        !amc_round_may_send_now(comm)) {
        return;
    }
    len = (b->coll != 0) ? amc_ctrl_coll_len(b, comm->rank, comm->size, 0) : 0;
    if (amc_round_send_now(comm, b->coll, b->oneway, b->root, slot->seq, slot->status,
                           amc_barrier_to(comm, b->coll, 0),
                           (len != 0) ? amc_coll_slot_out(&comm->ctrl, slot, 0) : NULL,
                           len) == AMC_SUCCESS) {
        b->rounds_sent   = 1;
        b->send_posted   = 1;
        b->send_complete = 1;
    }
}

/* With ctrl->lock held: the slot as a call within it left the instance
 * (am_coll/barrier/rounds_now.c): rounds 0 .. k-1 arrived (taken), round
 * k's message made, and sent, complete, or claimed here (*claim). */
static void amc_barrier_take_left(struct amc_comm *comm, amc_coll_slot_t *slot,
                                  const amc_now_left_t *left, int *claim)
{
    amc_barrier_slot_t *b = &slot->barrier;
    int                 k = left->round, round;

    *claim = 0;
    if ((b->coll != 0) && ((b->bitvec >> 1) == 0)) {
        /* the rounds taken within the call named this call's root (their
         * headers were compared whole): what later arrivals compare with */
        amc_coll_slot_small(&comm->ctrl, slot)->in_root = b->root;
    }
    for (round = 0; round < k; round++) {
        amc_coll_slot_set_bit(slot, round + 1);
    }
    if ((k > 0) && (b->coll != 0)) {
        amc_ctrl_coll_resume(comm, slot, k, left->out, left->out_len, left->work,
                             left->work_len);
    }
    b->rounds_sent   = k;
    b->send_posted   = (uint32_t)k;
    b->send_complete = (uint32_t)k;
    if (left->sent) {
        b->rounds_sent++;
        b->send_posted++;
        b->send_complete++;
    } else {
        /* made, not sent: sent from the slot as the advance sends */
        amc_barrier_fill_header(comm, slot, k);
        b->rounds_sent++;
        b->send_posted++;
        *claim = 1;
    }
}

int amc_barrier_enter_left(amc_comm_t comm, struct amc_request *req,
                           const amc_coll_args_t *red, const amc_now_left_t *left)
{
    amc_coll_ctrl_t *ctrl = &comm->ctrl;
    amc_coll_slot_t *slot;
    uint8_t          coll = (red != NULL) ? red->coll : 0;
    int              first, count, claim = 0, status;

    status = amc_comm_enter(comm, req, (red != NULL) ? amc_coll_name(coll) : "barrier", &slot);
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

        if (red != NULL) {
            args = *red;
        } else {
            amc_coll_args_barrier(&args);
        }
        amc_coll_adopt(fwd, req, &args, NULL); /* a mismatch: no algorithm is looked at */
        sends = amc_coll_advance(fwd);
        amc_spin_unlock(&ctrl->lock);
        if (sends) {
            amc_coll_issue_sends(fwd);
        }
        amc_context_flush(comm->ctx);
        return AMC_SUCCESS;
    }
    if ((slot->kind == AMC_WIRE_COLL) ||
        ((slot->kind == AMC_WIRE_BARRIER) &&
         ((slot->barrier.coll != coll) || (slot->barrier.told != 0)))) {
        amc_barrier_refuse(comm, slot, req, coll); /* unlocks */
        return AMC_SUCCESS;
    }
    slot->kind         = AMC_WIRE_BARRIER;
    slot->barrier.coll = coll;
    if (red != NULL) {
        amc_ctrl_coll_load(comm, slot, red);
        if (slot->barrier.oneway == AMC_CTRL_SENDS) {
            /* on a token nothing comes back: round 0 needs no arrival.
             * Something that came is a peer whose call sends too */
            if ((slot->barrier.bitvec & 2) && (slot->status == AMC_SUCCESS)) {
                amc_error(&comm->ctx->log, "%s seq %llu on communicator 0x%llx: rank %d sent "
                          "this rank data where this rank's call sends (roots differ)",
                          amc_coll_name(coll), (unsigned long long)slot->seq,
                          (unsigned long long)comm->cid, comm->rank ^ 1);
                slot->status = AMC_ERR_PROTOCOL;
            }
            amc_coll_slot_set_bit(slot, 1);
        } else if (slot->barrier.oneway == AMC_CTRL_HEARS) {
            slot->barrier.rounds_sent = comm->nrounds; /* nothing to send but an answer */
        }
    }
    /* bit 0: the local rank reached the barrier, the first synchronization point */
    amc_coll_slot_set_bit(slot, 0);
    if (left != NULL) {
        amc_barrier_take_left(comm, slot, left, &claim);
    } else {
        amc_barrier_send_now(comm, slot);
    }
    amc_barrier_advance(comm, slot, &first, &count);
    amc_spin_unlock(&ctrl->lock);

    /* the slot cannot finish before the claimed round's send is counted */
    if (claim) {
        amc_barrier_send_rounds(comm, slot, left->round, 1);
    }
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
                            "%s seq %llu on communicator 0x%llx (rank %d of %d): cur_val=%d "
                            "of %d, bitvec=0x%llx, sends completed %u of %u; not heard from:",
                            (b->coll != 0) ? amc_coll_name(b->coll) : "barrier",
                            (unsigned long long)slot->seq, (unsigned long long)comm->cid,
                            comm->rank, comm->size, b->cur_val, comm->nrounds,
                            (unsigned long long)b->bitvec, b->send_complete, b->send_posted);
    for (round = 0; (round < comm->nrounds) && (used < len); round++) {
        if (b->bitvec & ((uint64_t)1 << (round + 1))) {
            continue;
        }
        peer = amc_barrier_from(comm, b->coll, (uint32_t)round);
        used += (size_t)snprintf(buf + used, len - used, " rank %d (round %d)", peer, round);
        missing++;
    }
    if ((missing == 0) && (used < len)) {
        snprintf(buf + used, len - used, " nobody (waiting for local send completion)");
    }
}

int amc_barrier_on_engine(amc_comm_t comm, int *engine)
{
    const amc_topo_t *topo;
    int               path = __atomic_load_n(&comm->barrier_path, __ATOMIC_RELAXED);

    /* everything below is fixed for the communicator's life: asked once */
    if (path != 0) {
        *engine = (path == 2);
        return AMC_SUCCESS;
    }
    *engine = 1;
    /* a rule of AMC_TUNING_FILE for this size names an engine algorithm
     * (the fast path has no name); without barrier rules: one count test */
    if ((comm->ctx->alg_forced[AMC_COLL_BARRIER] == NULL) &&
        ((comm->ctx->tuning.n[AMC_COLL_BARRIER] == 0) ||
         (amc_tuning_match(&comm->ctx->tuning, AMC_COLL_BARRIER, comm->size, 0) == NULL))) {
        topo = amc_comm_topo(comm);
        if (topo == NULL) {
            return AMC_ERR_NO_MEMORY; /* logged */
        }
        *engine = amc_alg_barrier_lanes_pay(&comm->ctx->cfg, topo) ||
                  amc_alg_barrier_linear_pays(&comm->ctx->cfg, comm->size, topo);
    }
    __atomic_store_n(&comm->barrier_path, *engine ? 2 : 1, __ATOMIC_RELAXED);
    return AMC_SUCCESS;
}
