#include "am_coll/comm.h"
#include "am_coll/request.h"
#include "am_coll/coll.h"

#include <stdint.h>
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

void amc_comm_drop_early(void *arg, amc_early_msg_t *msg)
{
    amc_comm_t comm = arg;

    if (msg->desc != NULL) {
        amc_context_release_desc(comm->ctx, msg->desc);
        msg->desc = NULL;
    }
    if (msg->eager && (msg->len > 0) && (msg->hdr.src < (uint32_t)comm->size)) {
        amc_flow_release(&comm->ctx->flow, comm->peers[msg->hdr.src]);
    }
    msg->eager = 0;
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
    amc_coll_ctrl_init(&comm->ctrl, ctx->cfg.early_max, ctx->lock_live_p, amc_comm_drop_early,
                       comm);
    comm->ctrl.ahead_max = amc_coll_ctrl_ahead_max(ctx->cfg.early_max, size,
                                                   ctx->cfg.eager_tokens);
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
        amc_coll_sched_release(sched);
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

int amc_comm_enter(amc_comm_t comm, struct amc_request *req, const char *what,
                   amc_coll_slot_t **slot_p)
{
    amc_coll_ctrl_t  *ctrl = &comm->ctrl;
    amc_coll_lookup_t found = AMC_CTRL_NO_ROOM;
    amc_coll_slot_t  *slot;
    uint64_t          seq, base;
    int               logged;

    amc_spin_lock(&ctrl->lock);
    /* back-pressure: refused before the sequence number is taken, so the
     * next start is this one again and the ranks stay in step */
    if (amc_coll_ctrl_may_start(ctrl)) {
        found = amc_coll_ctrl_slot(ctrl, ctrl->seq_next, comm, &slot);
    }
    if (found != AMC_CTRL_FOUND) {
        seq    = ctrl->seq_next;
        base   = ctrl->seq_base;
        logged = ctrl->full_logged;
        ctrl->full_logged = (found == AMC_CTRL_NO_ROOM);
        amc_spin_unlock(&ctrl->lock);
        if (found != AMC_CTRL_NO_ROOM) {
            amc_error(&comm->ctx->log, "cannot start %s %llu on communicator 0x%llx: out of "
                      "memory", what, (unsigned long long)seq, (unsigned long long)comm->cid);
        } else if (!logged) {
            /* once until a start succeeds again: a caller that retries
             * after completing requests would repeat it many times */
            amc_error(&comm->ctx->log, "cannot start %s %llu on communicator 0x%llx: %llu "
                      "instances from the oldest one not finished here (%llu), at most %u "
                      "(8 + AMC_EARLY_MAX); nothing started: complete outstanding requests "
                      "and make this call again", what, (unsigned long long)seq,
                      (unsigned long long)comm->cid, (unsigned long long)(seq - base),
                      (unsigned long long)base, AMC_CTRL_WINDOW + ctrl->early_max);
        }
        return AMC_ERR_NO_MEMORY;
    }
    ctrl->full_logged = 0;
    ctrl->seq_next++;
    req->slot = slot;
    slot->req = req;
    *slot_p   = slot;
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
    amc_spin_lock(&ctx->lock);
    comm->list_next = ctx->graveyard;
    ctx->graveyard  = comm;
    amc_spin_unlock(&ctx->lock);
    amc_context_flush(ctx); /* descriptors its early store gave back */
}

int amc_comm_dup_internal(amc_comm_t comm, amc_comm_t *newcomm_p)
{
    amc_comm_t newcomm;
    int        status;

    status = amc_comm_alloc(comm->ctx, comm->rank, comm->size,
                            amc_comm_child_cid(comm->cid, comm->children++), &newcomm);
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

typedef struct amc_comm_member {
    int color;
    int key;
    int rank;   /* in the parent */
} amc_comm_member_t;

static int amc_comm_member_cmp(const void *pa, const void *pb)
{
    const amc_comm_member_t *a = pa, *b = pb;

    if (a->key != b->key) {
        return (a->key < b->key) ? -1 : 1;
    }
    return (a->rank > b->rank) - (a->rank < b->rank);
}

int amc_comm_split_internal(amc_comm_t comm, int color, int key, amc_comm_t *newcomm_p)
{
    struct amc_request  req;
    amc_coll_args_t     args;
    amc_comm_member_t  *members = NULL;
    amc_comm_t          newcomm;
    int32_t             mine[2] = { color, key }, *all;
    uint64_t            child = comm->children++;
    int                 status, i, n = 0, my_index = -1;

    all = malloc((size_t)comm->size * sizeof(mine));
    if (all == NULL) {
        return AMC_ERR_NO_MEMORY;
    }
    memset(&args, 0, sizeof(args));
    args.coll    = AMC_COLL_ALLGATHER;
    args.root    = -1;
    args.count   = 2;
    args.dt      = AMC_INT32;
    args.dt_size = sizeof(int32_t);
    args.op      = -1;
    args.sendbuf = mine;
    args.recvbuf = all;
    amc_request_init(&req, comm, 0);
    status = amc_coll_start(comm, &args, &req);
    if (status == AMC_SUCCESS) {
        status = amc_request_wait_one(&req);
    }
    if (status != AMC_SUCCESS) {
        goto out;
    }

    *newcomm_p = AMC_COMM_NULL;
    if (color == AMC_UNDEFINED) {
        goto out;
    }
    members = malloc((size_t)comm->size * sizeof(*members));
    if (members == NULL) {
        status = AMC_ERR_NO_MEMORY;
        goto out;
    }
    for (i = 0; i < comm->size; i++) {
        if (all[2 * i] == color) {
            members[n].color = all[2 * i];
            members[n].key   = all[2 * i + 1];
            members[n].rank  = i;
            n++;
        }
    }
    qsort(members, (size_t)n, sizeof(*members), amc_comm_member_cmp);
    for (i = 0; i < n; i++) {
        if (members[i].rank == comm->rank) {
            my_index = i;
        }
    }

    status = amc_comm_alloc(comm->ctx, my_index, n,
                            amc_comm_child_cid(comm->cid ^ amc_comm_mix((uint64_t)(uint32_t)color),
                                               child),
                            &newcomm);
    if (status != AMC_SUCCESS) {
        goto out;
    }
    for (i = 0; i < n; i++) {
        newcomm->peers[i] = comm->peers[members[i].rank];
    }
    status = amc_context_insert(comm->ctx, newcomm);
    if (status != AMC_SUCCESS) {
        amc_comm_free_struct(newcomm);
        goto out;
    }
    *newcomm_p = newcomm;

out:
    free(members);
    free(all);
    return status;
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
