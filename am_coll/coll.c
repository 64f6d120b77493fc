#include "am_coll/coll.h"
#include "am_coll/alg.h"
#include "am_coll/comm.h"
#include "am_coll/request.h"
#include "am_coll/status.h"

#include <stdlib.h>
#include <string.h>

#define AMC_SCHED_CACHE_MAX 16

static int amc_sched_key_equal(const amc_sched_key_t *a, const amc_sched_key_t *b)
{
    return (a->coll == b->coll) && (a->alg == b->alg) && (a->in_place == b->in_place) &&
           (a->commutative == b->commutative) && (a->root == b->root) &&
           (a->count == b->count) && (a->dt == b->dt);
}

static int amc_coll_is_vector(int coll)
{
    return (coll == AMC_COLL_GATHERV) || (coll == AMC_COLL_SCATTERV) ||
           (coll == AMC_COLL_ALLGATHERV) || (coll == AMC_COLL_ALLTOALLV) ||
           (coll == AMC_COLL_REDUCE_SCATTER);
}

/* Finds or builds the schedule; vector forms depend on their count arrays
 * and are built per call. */
static int amc_coll_sched_get(amc_comm_t comm, const amc_alg_t *alg,
                              const amc_coll_args_t *args, amc_sched_t **sched_p)
{
    amc_sched_builder_t b;
    amc_sched_key_t     key;
    amc_sched_t        *sched, **link, **victim = NULL;
    unsigned            cached = 0;
    int                 status;

    memset(&key, 0, sizeof(key));
    key.coll        = args->coll;
    key.alg         = alg->id;
    key.in_place    = (uint8_t)args->in_place;
    key.commutative = (uint8_t)args->commutative;
    key.root        = args->root;
    key.count       = args->count;
    key.dt          = args->dt;

    if (!amc_coll_is_vector(args->coll)) {
        for (link = &comm->sched_cache; (sched = *link) != NULL; link = &sched->next) {
            if (amc_sched_key_equal(&sched->key, &key)) {
                /* most recently used first */
                *link       = sched->next;
                sched->next = comm->sched_cache;
                comm->sched_cache = sched;
                *sched_p    = sched;
                return AMC_SUCCESS;
            }
            cached++;
            if (sched->users == 0) {
                victim = link;
            }
        }
    }

    status = amc_sb_init(&b);
    if (status == AMC_SUCCESS) {
        status = alg->build(&b, args, comm->rank, comm->size);
        if (status != AMC_SUCCESS) {
            amc_sched_free(b.sched);
        } else {
            status = amc_sb_finish(&b, &sched);
        }
    }
    if (status != AMC_SUCCESS) {
        amc_error(&comm->ctx->log, "building the %s schedule (%s) failed: %s",
                  amc_coll_name(args->coll), alg->name, amc_strerror(status));
        return status;
    }
    sched->key = key;

    if (!amc_coll_is_vector(args->coll)) {
        if ((cached >= AMC_SCHED_CACHE_MAX) && (victim != NULL)) {
            amc_sched_t *old = *victim;

            *victim = old->next;
            amc_coll_sched_release(old);
        }
        sched->cached     = 1;
        sched->next       = comm->sched_cache;
        comm->sched_cache = sched;
    }
    *sched_p = sched;
    return AMC_SUCCESS;
}

static void amc_coll_inst_destroy(amc_coll_inst_t *inst)
{
    free(inst->tmp);
    free(inst->fwd_buf);
    free(inst);
}

void amc_coll_sched_release(amc_sched_t *sched)
{
    amc_coll_inst_t *spare = sched->spare; /* teardown or eviction: nobody else has it */

    sched->spare = NULL;

    if (spare != NULL) {
        amc_coll_inst_destroy(spare);
    }
    amc_sched_free(sched);
}

void amc_coll_inst_free(amc_coll_inst_t *inst)
{
    amc_sched_t     *sched = inst->sched;
    amc_coll_inst_t *old;

    free(inst->fwd_buf);
    inst->fwd_buf = NULL;
    if (sched->cached && !inst->forwarding) {
        /* the next call of this shape starts without malloc, page faults on
         * fresh scratch, or a schedule build */
        old = amc_live_xchg_ptr(&sched->spare, inst, inst->comm->ctrl.lock.live);
        sched->users--;
        if (old != NULL) {
            amc_coll_inst_destroy(old);
        }
        return;
    }
    /* teardown frees the communicator's cached schedules after its instances */
    if ((--sched->users == 0) && !sched->cached) {
        amc_coll_sched_release(sched);
    }
    amc_coll_inst_destroy(inst);
}

/* The per-call part of an instance; a spare keeps its scratch, its bound op
 * and the constant fields of its send headers (amc_coll_prepare_sends). */
static void amc_coll_inst_reset(amc_coll_inst_t *inst, amc_comm_t comm,
                                const amc_coll_args_t *args, const amc_alg_t *alg,
                                amc_sched_t *sched)
{
    inst->sched             = sched;
    inst->comm              = comm;
    inst->slot              = NULL;
    inst->buf[AMC_BUF_SEND] = (unsigned char *)(uintptr_t)args->sendbuf;
    inst->buf[AMC_BUF_RECV] = args->recvbuf;
    inst->buf[AMC_BUF_TMP]  = inst->tmp;
    inst->dt                = args->dt;
    inst->dt_size           = args->dt_size;
    inst->coll              = args->coll;
    inst->root              = args->root;
    inst->round             = -1;
    inst->recv_left         = 0;
    inst->send_left         = 0;
    inst->status            = AMC_SUCCESS;
    inst->aborted           = 0;
    inst->fetch_busy        = 0;
    inst->alg               = alg->id;
    inst->forwarding        = 0;
    inst->fwd_token_peer    = -1;
    inst->fwd_buf           = NULL;
    inst->fwd_done          = 0;
    inst->user_buf          = NULL;
    inst->user_bytes        = 0;
    inst->xfers             = (amc_coll_xfer_t *)(inst + 1);
    inst->recv_seen         = (uint8_t *)(inst->xfers + sched->nacts);
    memset(inst->recv_seen, 0, sched->nacts);
}

static int amc_coll_inst_new(amc_comm_t comm, const amc_coll_args_t *args, const amc_alg_t *alg,
                             amc_sched_t *sched, amc_coll_inst_t **inst_p)
{
    amc_coll_inst_t *inst;
    size_t           size;

    inst = amc_live_xchg_ptr(&sched->spare, NULL, comm->ctrl.lock.live);
    if (inst == NULL) {
        size = sizeof(*inst) + (size_t)sched->nacts * (sizeof(amc_coll_xfer_t) + 1);
        inst = calloc(1, size);
        if (inst == NULL) {
            return AMC_ERR_NO_MEMORY;
        }
        inst->op.op = -1;
        if (sched->tmp_bytes + sched->stage_bytes > 0) {
            inst->tmp = malloc(sched->tmp_bytes + sched->stage_bytes);
            if (inst->tmp == NULL) {
                free(inst);
                return AMC_ERR_NO_MEMORY;
            }
        }
    }
    amc_coll_inst_reset(inst, comm, args, alg, sched);
    /* a predefined op stays bound; a user op may have been freed and its
     * handle reused, so it is bound again */
    if ((args->op >= 0) &&
        ((inst->op.kernel == NULL) || (inst->op.op != args->op) || (inst->op.dt != args->dt)) &&
        (amc_op_bind(args->op, args->dt, &inst->op) != AMC_SUCCESS)) {
        free(inst->tmp);
        free(inst);
        return AMC_ERR_ARG; /* checked by the caller; freed meanwhile */
    }
    sched->users++;
    *inst_p = inst;
    return AMC_SUCCESS;
}

int amc_coll_start(amc_comm_t comm, const amc_coll_args_t *call, struct amc_request *req)
{
    amc_coll_args_t   args_copy = *call, *args = &args_copy;
    amc_coll_ctrl_t  *ctrl = &comm->ctrl;
    const amc_alg_t  *alg;
    amc_sched_t      *sched;
    amc_coll_inst_t  *inst;
    amc_coll_slot_t  *slot;
    int               status, next = -1;

    args->segment = comm->ctx->cfg.bcast_segment;
    alg           = amc_alg_select(comm, args);
    if (alg == NULL) {
        amc_error(&comm->ctx->log, "no algorithm for %s", amc_coll_name(args->coll));
        return AMC_ERR_UNSUPPORTED;
    }
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
        amc_error(&comm->ctx->log, "%s on communicator 0x%llx seq %llu: peers run a barrier",
                  amc_coll_name(args->coll), (unsigned long long)comm->cid,
                  (unsigned long long)slot->seq);
        amc_spin_lock(&ctrl->lock);
        amc_request_complete(req, AMC_ERR_PROTOCOL);
        amc_coll_inst_free(inst);
        slot->bitvec |= 1; /* entered, so the slot can be released */
        amc_coll_ctrl_release(ctrl, slot);
        amc_spin_unlock(&ctrl->lock);
        amc_context_flush(comm->ctx);
        return AMC_SUCCESS;
    }
    if (slot->inst != NULL) {
        /* this rank already forwarded the bcast's data to its children */
        amc_coll_inst_t *fwd = slot->inst;

        amc_coll_adopt(fwd, req, args);
        next = amc_coll_advance(fwd); /* finishes it if it is done */
        amc_coll_inst_free(inst);
        amc_spin_unlock(&ctrl->lock);
        if (next >= 0) {
            amc_coll_issue_sends(fwd, next);
        }
        amc_context_flush(comm->ctx);
        return AMC_SUCCESS;
    }
    slot->kind = AMC_WIRE_COLL;
    slot->inst = inst;
    next       = amc_coll_advance(inst);
    amc_spin_unlock(&ctrl->lock);

    if (next >= 0) {
        amc_coll_issue_sends(inst, next);
    }
    amc_context_flush(comm->ctx);
    return AMC_SUCCESS;
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
        (hdr->root == comm->rank)) {
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
