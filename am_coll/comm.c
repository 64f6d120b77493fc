#include "am_coll/comm.h"
#include "am_coll/request.h"
#include "am_coll/coll.h"

#include <stdlib.h>
#include <string.h>

static int amc_comm_rounds(int size)
{
    int rounds = 0;

    while (((int64_t)1 << rounds) < size) {
        rounds++;
    }
    return rounds;
}

static int amc_comm_alloc(amc_context_t *ctx, int rank, int size, uint64_t cid,
                          amc_comm_t *comm_p)
{
    amc_comm_t comm;

    comm = calloc(1, sizeof(*comm));
    if (comm == NULL) {
        goto err;
    }
    comm->peers = malloc((size_t)size * sizeof(*comm->peers));
    if (comm->peers == NULL) {
        goto err_free_comm;
    }
    comm->magic   = AMC_COMM_MAGIC_ALIVE;
    comm->rank    = rank;
    comm->size    = size;
    comm->nrounds = amc_comm_rounds(size);
    comm->cid     = cid;
    comm->ctx     = ctx;
    amc_coll_ctrl_init(&comm->ctrl, ctx->cfg.early_max, ctx->threaded);
    *comm_p = comm;
    return AMC_SUCCESS;

err_free_comm:
    free(comm);
err:
    amc_error(&ctx->log, "out of memory creating a communicator of %d ranks", size);
    return AMC_ERR_NO_MEMORY;
}

/* Teardown with an instance still in its slot. */
static void amc_comm_drop_slot(amc_coll_slot_t *slot)
{
    if (slot->req != NULL) {
        amc_request_drop(slot->req);
        slot->req = NULL;
    }
    if (slot->inst != NULL) {
        amc_coll_inst_free(slot->inst);
        slot->inst = NULL;
    }
}

static void amc_comm_free_schedules(amc_comm_t comm)
{
    amc_sched_t *sched, *next;

    for (sched = comm->sched_cache; sched != NULL; sched = next) {
        next = sched->next;
        amc_sched_free(sched);
    }
    comm->sched_cache = NULL;
}

static void amc_comm_free_struct(amc_comm_t comm)
{
    amc_coll_ctrl_cleanup(&comm->ctrl, NULL);
    free(comm->peers);
    free(comm);
}

int amc_comm_create_world(amc_context_t *ctx, amc_comm_t *comm_p)
{
    amc_comm_t comm;
    int        status, i;

    status = amc_comm_alloc(ctx, ctx->tp->rank, ctx->tp->size, AMC_CID_WORLD, &comm);
    if (status != AMC_SUCCESS) {
        return status;
    }
    for (i = 0; i < comm->size; i++) {
        comm->peers[i] = i;
    }
    status = amc_context_insert(ctx, comm);
    if (status != AMC_SUCCESS) {
        amc_comm_free_struct(comm);
        return status;
    }
    *comm_p = comm;
    return AMC_SUCCESS;
}

int amc_comm_check(amc_comm_t comm)
{
    if ((comm == NULL) || (comm->magic != AMC_COMM_MAGIC_ALIVE)) {
        return AMC_ERR_COMM;
    }
    return AMC_SUCCESS;
}

int amc_comm_take_error(amc_comm_t comm)
{
    int status;

    if (__atomic_load_n(&comm->ctrl.pending_err, __ATOMIC_ACQUIRE) != AMC_SUCCESS) {
        status = __atomic_exchange_n(&comm->ctrl.pending_err, AMC_SUCCESS, __ATOMIC_ACQ_REL);
        if (status != AMC_SUCCESS) {
            return status;
        }
    }
    return amc_context_take_error(comm->ctx);
}

/* splitmix64's finaliser: consecutive inputs give unrelated outputs */
static uint64_t amc_comm_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x  = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x  = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

uint64_t amc_comm_child_cid(uint64_t parent_cid, uint64_t n)
{
    uint64_t cid = amc_comm_mix(parent_cid ^ amc_comm_mix(n));

    /* 0 is never valid and 1 is the world's */
    return (cid <= AMC_CID_WORLD) ? cid + 2 : cid;
}

void amc_comm_destroy(amc_comm_t comm)
{
    amc_context_t *ctx = comm->ctx;

    amc_context_remove(ctx, comm);
    amc_coll_ctrl_cleanup(&comm->ctrl, amc_comm_drop_slot);
    amc_comm_free_schedules(comm);
    free(comm->peers);
    comm->peers = NULL;
    comm->magic = AMC_COMM_MAGIC_DEAD;
    /* the small struct stays, so a stale handle reads as freed, not as garbage */
    comm->list_next = ctx->graveyard;
    ctx->graveyard  = comm;
}

int amc_comm_dup_internal(amc_comm_t comm, amc_comm_t *newcomm_p)
{
    amc_comm_t newcomm;
    int        status;

    status = amc_comm_alloc(comm->ctx, comm->rank, comm->size,
                            amc_comm_child_cid(comm->cid, comm->dup_count++), &newcomm);
    if (status != AMC_SUCCESS) {
        return status;
    }
    memcpy(newcomm->peers, comm->peers, (size_t)comm->size * sizeof(*comm->peers));
    status = amc_context_insert(comm->ctx, newcomm);
    if (status != AMC_SUCCESS) {
        amc_comm_free_struct(newcomm);
        return status;
    }
    *newcomm_p = newcomm;
    return AMC_SUCCESS;
}

int amc_comm_free_internal(amc_comm_t comm)
{
    unsigned active;

    comm->magic = AMC_COMM_MAGIC_DEAD;
    amc_spin_lock(&comm->ctrl.lock);
    active = comm->ctrl.active;
    amc_spin_unlock(&comm->ctrl.lock);
    if (active > 0) {
        amc_context_add_zombie(comm->ctx, comm);
    } else {
        amc_comm_destroy(comm);
    }
    return AMC_SUCCESS;
}
