/* SPDX-License-Identifier: BSD-3-Clause */
/* The schedule cache of a communicator and the instances that run its
 * schedules: what a repeated call of the same shape reuses. */
#include "am_coll/coll/coll.h"
#include "am_coll/alg/alg.h"
#include "am_coll/context/comm.h"
#include "am_coll/context/request.h"
#include "base/status.h"

#include <stdlib.h>
#include <string.h>

#define AMC_SCHED_CACHE_MAX 16

static int amc_sched_key_equal(const amc_sched_key_t *a, const amc_sched_key_t *b)
{
    return (a->coll == b->coll) && (a->alg == b->alg) && (a->in_place == b->in_place) &&
           (a->commutative == b->commutative) && (a->root == b->root) &&
           (a->count == b->count) && (a->dt == b->dt);
}

/* A vector form's schedule also depends on the count and displacement
 * arrays; which of them the builder reads depends on the collective and on
 * whether this rank is the root (MPI leaves the others' undefined, so they
 * are never read). The parts are listed in a fixed order: comparing them
 * against a cached schedule's copy walks the caller's arrays in place. */
#define AMC_VSIG_PARTS 4

typedef struct amc_vsig_part {
    const size_t *vals;
    size_t        n;
} amc_vsig_part_t;

static unsigned amc_coll_vsig_parts(const amc_coll_args_t *a, int rank, int size,
                                    amc_vsig_part_t *p)
{
    unsigned n = 0;

#define AMC_VSIG_ADD(_vals, _n) do { p[n].vals = (_vals); p[n].n = (size_t)(_n); n++; } while (0)
    switch (a->coll) {
    case AMC_COLL_GATHERV:
        AMC_VSIG_ADD(&a->scount, 1);
        if (rank == a->root) {
            AMC_VSIG_ADD(a->rcounts, size);
            AMC_VSIG_ADD(a->rdispls, size);
        }
        break;
    case AMC_COLL_SCATTERV:
        AMC_VSIG_ADD(&a->rcount, 1);
        if (rank == a->root) {
            AMC_VSIG_ADD(a->scounts, size);
            AMC_VSIG_ADD(a->sdispls, size);
        }
        break;
    case AMC_COLL_ALLGATHERV:
        AMC_VSIG_ADD(a->rcounts, size);
        AMC_VSIG_ADD(a->rdispls, size);
        break;
    case AMC_COLL_ALLTOALLV:
        AMC_VSIG_ADD(a->rcounts, size);
        AMC_VSIG_ADD(a->rdispls, size);
        if (!a->in_place) {
            AMC_VSIG_ADD(a->scounts, size);
            AMC_VSIG_ADD(a->sdispls, size);
        }
        break;
    case AMC_COLL_REDUCE_SCATTER:
        AMC_VSIG_ADD(a->rcounts, size);
        break;
    default:
        break;
    }
#undef AMC_VSIG_ADD
    return n;
}

static int amc_coll_vsig_equal(const amc_sched_t *sched, const amc_vsig_part_t *p, unsigned n)
{
    size_t   off = 0;
    unsigned i;

    for (i = 0; i < n; i++) {
        if ((off + p[i].n > sched->nvsig) ||
            (memcmp(sched->vsig + off, p[i].vals, p[i].n * sizeof(size_t)) != 0)) {
            return 0;
        }
        off += p[i].n;
    }
    return off == sched->nvsig;
}

static int amc_coll_vsig_store(amc_sched_t *sched, const amc_vsig_part_t *p, unsigned n)
{
    size_t   total = 0;
    unsigned i;

    for (i = 0; i < n; i++) {
        total += p[i].n;
    }
    sched->vsig = malloc((total > 0 ? total : 1) * sizeof(size_t));
    if (sched->vsig == NULL) {
        return AMC_ERR_NO_MEMORY;
    }
    sched->nvsig = 0;
    for (i = 0; i < n; i++) {
        memcpy(sched->vsig + sched->nvsig, p[i].vals, p[i].n * sizeof(size_t));
        sched->nvsig += p[i].n;
    }
    return AMC_SUCCESS;
}

/* Finds or builds the schedule. */
int amc_coll_sched_get(amc_comm_t comm, const amc_alg_t *alg,
                              const amc_coll_args_t *args, amc_sched_t **sched_p)
{
    amc_sched_builder_t b;
    amc_sched_key_t     key;
    amc_sched_t        *sched, **link, **victim = NULL;
    amc_vsig_part_t     parts[AMC_VSIG_PARTS];
    unsigned            cached = 0, nparts;
    int                 status;

    memset(&key, 0, sizeof(key));
    key.coll        = args->coll;
    key.alg         = alg->id;
    key.in_place    = (uint8_t)args->in_place;
    key.commutative = (uint8_t)args->commutative;
    key.root        = args->root;
    key.count       = args->count;
    key.dt          = args->dt;
    nparts          = amc_coll_vsig_parts(args, comm->rank, comm->size, parts);

    for (link = &comm->sched_cache; (sched = *link) != NULL; link = &sched->next) {
        if (amc_sched_key_equal(&sched->key, &key) &&
            ((nparts == 0) || amc_coll_vsig_equal(sched, parts, nparts))) {
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

    status = amc_sb_init(&b);
    if (status == AMC_SUCCESS) {
        status = alg->build(&b, args, comm->rank, comm->size);
        if ((status != AMC_SUCCESS) && (b.status == AMC_SUCCESS)) {
            b.status = status;
        }
        status = amc_sb_finish(&b, &sched); /* frees all on an error */
    }
    if ((status == AMC_SUCCESS) && (nparts > 0)) {
        status = amc_coll_vsig_store(sched, parts, nparts);
        if (status != AMC_SUCCESS) {
            amc_sched_free(sched);
        }
    }
    if (status != AMC_SUCCESS) {
        amc_error(&comm->ctx->log, "building the %s schedule (%s) failed: %s",
                  amc_coll_name(args->coll), alg->name, amc_strerror(status));
        return status;
    }
    sched->key = key;

    if ((cached >= AMC_SCHED_CACHE_MAX) && (victim != NULL)) {
        amc_sched_t *old = *victim;

        *victim = old->next;
        amc_coll_sched_release(old);
    }
    sched->cached     = 1;
    sched->next       = comm->sched_cache;
    comm->sched_cache = sched;
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

size_t amc_coll_inst_size(const amc_sched_t *sched)
{
    return sizeof(amc_coll_inst_t) +
           (size_t)sched->nacts * (sizeof(amc_coll_xfer_t) + sizeof(amc_early_msg_t *) +
                                   3 * sizeof(uint32_t) + 1);
}

/* The per-call part of an instance; a spare keeps its scratch and its bound
 * op. */
static void amc_coll_inst_reset(amc_coll_inst_t *inst, amc_comm_t comm,
                                const amc_coll_args_t *args, const amc_alg_t *alg,
                                amc_sched_t *sched)
{
    uint32_t n = sched->nacts, k;

    inst->sched             = sched;
    inst->comm              = comm;
    inst->slot              = NULL;
    inst->buf[AMC_BUF_SEND] = (unsigned char *)(uintptr_t)args->sendbuf;
    inst->buf[AMC_BUF_RECV] = args->recvbuf;
    inst->buf[AMC_BUF_TMP]  = inst->tmp;
    for (k = AMC_BUF_EXTRA; k < sched->nbufs; k++) {
        inst->buf[k] = (unsigned char *)inst->tmp + sched->buf_off[k];
    }
    inst->dt                = args->dt;
    inst->dt_size           = args->dt_size;
    inst->coll              = args->coll;
    inst->root              = args->root;
    inst->left              = n;
    inst->nready            = 0;
    inst->sendq_head        = 0;
    inst->sendq_tail        = 0;
    inst->send_busy         = 0;
    inst->local_busy        = 0;
    inst->pins              = 0;
    inst->started           = 0;
    inst->status            = AMC_SUCCESS;
    inst->aborted           = 0;
    inst->finished          = 0;
    inst->fetch_busy        = 0;
    inst->alg               = alg->id;
    inst->forwarding        = 0;
    inst->fwd_token_peer    = -1;
    inst->fwd_buf           = NULL;
    inst->fwd_done          = 0;
    inst->adopted           = 0;
    inst->user_buf          = NULL;
    inst->user_bytes        = 0;
    inst->xfers             = (amc_coll_xfer_t *)(inst + 1);
    inst->early             = (amc_early_msg_t **)(inst->xfers + n);
    inst->pending           = (uint32_t *)(inst->early + n);
    inst->ready             = inst->pending + n;
    inst->sendq             = inst->ready + n;
    inst->state             = (uint8_t *)(inst->sendq + n);
    /* early[] is all NULL: calloc'd, and a finished instance leaves none */
    memcpy(inst->pending, sched->ndeps, (size_t)n * sizeof(*inst->pending));
    memset(inst->state, 0, n);
}

int amc_coll_inst_new(amc_comm_t comm, const amc_coll_args_t *args, const amc_alg_t *alg,
                             amc_sched_t *sched, amc_coll_inst_t **inst_p)
{
    amc_coll_inst_t *inst;
    size_t           size;

    inst = amc_live_xchg_ptr(&sched->spare, NULL, comm->ctrl.lock.live);
    if (inst == NULL) {
        size = amc_coll_inst_size(sched);
        inst = calloc(1, size);
        if (inst == NULL) {
            return AMC_ERR_NO_MEMORY;
        }
        inst->op.op = -1;
        if (amc_sched_scratch_bytes(sched) > 0) {
            inst->tmp = malloc(amc_sched_scratch_bytes(sched));
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

void amc_coll_inst_discard(amc_coll_inst_t *inst)
{
    uint32_t i;

    /* what came early dies with the transport (its descriptors too) */
    for (i = 0; i < inst->sched->nacts; i++) {
        free(inst->early[i]);
        inst->early[i] = NULL;
    }
    amc_coll_inst_free(inst);
}
