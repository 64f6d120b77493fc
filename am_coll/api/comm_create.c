/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Communicators made from others: a dup or split agrees on the new
 * communicator's id and members with one collective of the library's own
 * on the parent (doc/design.md, "Context ids"), so it sits above the
 * engines that run it.
 */
#include "am_coll/api/comm_create.h"
#include "am_coll/api/coll_start.h"
#include "am_coll/context/comm_life.h"
#include "am_coll/context/comm_table.h"
#include "am_coll/context/wait.h"
#include "base/status.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Starts the creation's agreement: one collective of the library's own on
 * the parent, into op->req, as a user's non-blocking one would be. */
static int amc_comm_exchange_start(amc_comm_create_t *op, uint8_t coll, const void *sendbuf,
                                   void *recvbuf, size_t count, amc_datatype_t dt,
                                   size_t dt_size, amc_op_t red)
{
    amc_coll_args_t args;
    int             status;

    memset(&args, 0, sizeof(args));
    args.coll        = coll;
    args.root        = -1;
    args.count       = count;
    args.dt          = dt;
    args.dt_size     = dt_size;
    args.op          = red;
    args.commutative = (red != -1);
    args.sendbuf     = sendbuf;
    args.recvbuf     = recvbuf;
    amc_request_init(&op->req, op->parent, 0);
    if (!op->nb) {
        return amc_coll_start(op->parent, &args, &op->req);
    }
    amc_request_begin_nb(&op->req); /* a progress thread runs it too */
    status = amc_coll_start(op->parent, &args, &op->req);
    amc_request_end_start(&op->req, status);
    return status;
}

/* What begin allocated and the agreement did not turn into a communicator. */
static void amc_comm_create_cleanup(amc_comm_create_t *op)
{
    if (op->newcomm != NULL) {
        amc_comm_unalloc(op->newcomm, 0);
        op->newcomm = NULL;
    }
    free(op->xbuf);
    op->xbuf = NULL;
}

static int amc_comm_create_start(amc_comm_create_t *op, amc_comm_t parent, int split, int color,
                                 int key, int nb)
{
    amc_context_t *ctx = parent->ctx;
    int            status;

    memset(op, 0, sizeof(*op));
    op->nb     = nb;
    op->parent = parent;
    op->split  = split;
    op->color  = color;
    /* on the heap, not in op: a failed wait leaves the collective running,
     * and it may still write here (amc_comm_create_end) */
    op->xbuf = calloc(1, split ? ((size_t)parent->size + 1) * sizeof(amc_comm_split_rec_t)
                               : 4 * sizeof(uint64_t));
    if (op->xbuf == NULL) {
        /* without room for the answer this rank cannot take part at all */
        amc_error(&ctx->log, "%s: out of memory for the agreement of %d ranks",
                  split ? "amc_comm_split" : "amc_comm_dup", parent->size);
        return AMC_ERR_NO_MEMORY;
    }
    if (split) {
        op->rec        = op->xbuf;
        op->recs       = op->rec + 1;
        op->rec->color = color;
        op->rec->key   = key;
        if (color != AMC_UNDEFINED) {
            op->failed = amc_comm_alloc(ctx, parent->size, &op->newcomm);
            if (op->failed == AMC_SUCCESS) {
                op->failed = amc_context_cid_reserve(ctx, &op->rec->num);
            }
        }
        op->rec->status = op->failed;
        status          = amc_comm_exchange_start(op, AMC_COLL_ALLGATHER, op->rec, op->recs,
                                                  sizeof(*op->rec), AMC_BYTE, 1, -1);
    } else {
        op->mine   = op->xbuf;
        op->agreed = op->mine + 2;
        /* no member array: the dup shares its parent's */
        op->failed = amc_comm_alloc(ctx, 0, &op->newcomm);
        if ((op->failed == AMC_SUCCESS) && (parent->rank == 0)) {
            op->failed = amc_context_cid_reserve(ctx, &op->mine[0]);
        }
        op->mine[1] = (uint64_t)op->failed;
        status      = amc_comm_exchange_start(op, AMC_COLL_ALLREDUCE, op->mine, op->agreed, 2,
                                              AMC_UINT64, sizeof(uint64_t), AMC_MAX);
    }
    if (status != AMC_SUCCESS) {
        /* the members cannot know: this rank alone fails (doc/design.md) */
        amc_error(&ctx->log, "%s of 0x%llx: cannot start the agreement: %s",
                  split ? "amc_comm_split" : "amc_comm_dup", (unsigned long long)parent->cid,
                  amc_strerror(status));
        amc_comm_create_cleanup(op);
    }
    return status;
}

int amc_comm_create_begin(amc_comm_create_t *op, amc_comm_t parent, int split, int color,
                          int key)
{
    return amc_comm_create_start(op, parent, split, color, key, 0);
}

/* Joins an agreed new communicator to the context; its peers are set. */
static int amc_comm_publish(amc_comm_create_t *op, amc_comm_t *newcomm_p)
{
    amc_comm_t newcomm = op->newcomm;
    int        status;

    op->newcomm = NULL;
    status      = amc_comm_insert(newcomm);
    if (status != AMC_SUCCESS) {
        /* ids are distinct by construction: this is a bug, not a race */
        amc_comm_unalloc(newcomm, 1);
        return status;
    }
    *newcomm_p = newcomm;
    return AMC_SUCCESS;
}

static int amc_comm_split_rec_cmp(const void *pa, const void *pb)
{
    const amc_comm_split_rec_t *a = pa, *b = pb;

    if (a->key != b->key) {
        return (a->key < b->key) ? -1 : 1;
    }
    return (a->rank > b->rank) - (a->rank < b->rank);
}

/* The split's outcome from every rank's record: the same on all members. */
static int amc_comm_split_end(amc_comm_create_t *op, amc_comm_t *newcomm_p)
{
    amc_comm_t            parent = op->parent, newcomm = op->newcomm;
    amc_comm_split_rec_t *recs   = op->recs;
    int                   i, n = 0, my_index = -1, failed_rank = -1;
    amc_comm_group_t     *group;
    int32_t               agreed = AMC_SUCCESS;
    uint64_t              cid;

    /* the agreement: the largest code any rank reported, the same on all */
    for (i = 0; i < parent->size; i++) {
        if (recs[i].status > agreed) {
            agreed      = recs[i].status;
            failed_rank = i;
        }
    }
    if (agreed != AMC_SUCCESS) {
        if (op->failed == AMC_SUCCESS) {
            amc_error(&parent->ctx->log, "amc_comm_split of 0x%llx: rank %d failed: %s",
                      (unsigned long long)parent->cid, failed_rank, amc_strerror(agreed));
        }
        return agreed;
    }
    if (op->color == AMC_UNDEFINED) {
        return AMC_SUCCESS;
    }

    /* my color's members, in parent order: the first is the leader */
    for (i = 0; i < parent->size; i++) {
        if (recs[i].color == op->color) {
            recs[n]      = recs[i];
            recs[n].rank = i;
            n++;
        }
    }
    cid = amc_context_cid_make(parent->ctx, recs[0].num, amc_comm_peer(parent, recs[0].rank));
    qsort(recs, (size_t)n, sizeof(*recs), amc_comm_split_rec_cmp);
    for (i = 0; i < n; i++) {
        if (recs[i].rank == parent->rank) {
            my_index = i;
        }
        newcomm->group->ranks[i] = amc_comm_peer(parent, recs[i].rank);
    }
    /* sized for the whole parent before the agreement; a failed shrink
     * leaves the larger block, which is just as good */
    newcomm->group->size = n;
    group = realloc(newcomm->group, sizeof(*group) + (size_t)n * sizeof(int));
    if (group != NULL) {
        newcomm->group = group;
    }
    amc_comm_setup(newcomm, my_index, n, cid);
    return amc_comm_publish(op, newcomm_p);
}

static int amc_comm_dup_end(amc_comm_create_t *op, amc_comm_t *newcomm_p)
{
    amc_comm_t parent = op->parent, newcomm = op->newcomm;
    int        agreed = (int)op->agreed[1];

    if (agreed != AMC_SUCCESS) {
        if (op->failed == AMC_SUCCESS) {
            amc_error(&parent->ctx->log, "amc_comm_dup of 0x%llx: another rank failed: %s",
                      (unsigned long long)parent->cid, amc_strerror(agreed));
        }
        return agreed;
    }
    /* the same members: the parent's array (or the identity), shared; set
     * before the setup, which looks for dead members */
    newcomm->group = parent->group;
    if (newcomm->group != NULL) {
        __atomic_add_fetch(&newcomm->group->refs, 1, __ATOMIC_ACQ_REL);
    }
    amc_comm_setup(newcomm, parent->rank, parent->size,
                   amc_context_cid_make(parent->ctx, op->agreed[0], amc_comm_peer(parent, 0)));
    return amc_comm_publish(op, newcomm_p);
}

int amc_comm_create_end(amc_comm_create_t *op, int status, amc_comm_t *newcomm_p)
{
    *newcomm_p = AMC_COMM_NULL; /* also on failure: never a half-made handle */
    if (status != AMC_SUCCESS) {
        /* the members cannot know: this rank alone fails (doc/design.md) */
        amc_error(&op->parent->ctx->log, "%s of 0x%llx: the agreement failed: %s",
                  op->split ? "amc_comm_split" : "amc_comm_dup",
                  (unsigned long long)op->parent->cid, amc_strerror(status));
        /* a failed wait leaves the collective running, detached: late peers
         * may still complete it into these buffers, so they are left to it
         * (a few bytes per failed agreement) */
        op->xbuf = NULL;
    } else {
        status = op->split ? amc_comm_split_end(op, newcomm_p) : amc_comm_dup_end(op, newcomm_p);
    }
    amc_comm_create_cleanup(op);
    return status;
}

static int amc_comm_create(amc_comm_t comm, int split, int color, int key,
                           amc_comm_t *newcomm_p)
{
    amc_comm_create_t op;
    int               status;

    *newcomm_p = AMC_COMM_NULL;
    status     = amc_comm_create_begin(&op, comm, split, color, key);
    if (status != AMC_SUCCESS) {
        return status;
    }
    return amc_comm_create_end(&op, amc_request_wait_one(&op.req), newcomm_p);
}

int amc_comm_dup_internal(amc_comm_t comm, amc_comm_t *newcomm_p)
{
    return amc_comm_create(comm, 0, 0, 0, newcomm_p);
}

int amc_comm_split_internal(amc_comm_t comm, int color, int key, amc_comm_t *newcomm_p)
{
    return amc_comm_create(comm, 1, color, key, newcomm_p);
}

int amc_comm_id_reserve_internal(amc_comm_t comm, uint64_t *id_p)
{
    uint64_t num;
    int      status = amc_context_cid_reserve(comm->ctx, &num);

    if (status == AMC_SUCCESS) {
        /* this rank is the leader: ids stay distinct from every split's and
         * dup's, which make theirs the same way */
        *id_p = amc_context_cid_make(comm->ctx, num, amc_comm_peer(comm, comm->rank));
    }
    return status;
}

int amc_comm_create_group_internal(amc_comm_t parent, const int ranks[], int n, uint64_t id,
                                   amc_comm_t *newcomm_p)
{
    amc_comm_t newcomm;
    int        i, me = -1, status;

    *newcomm_p = AMC_COMM_NULL;
    for (i = 0; i < n; i++) {
        if ((ranks[i] < 0) || (ranks[i] >= parent->size)) {
            amc_error(&parent->ctx->log, "amc_comm_create_group: rank %d of %d is not in 0x%llx",
                      ranks[i], i, (unsigned long long)parent->cid);
            return AMC_ERR_ARG;
        }
        if (ranks[i] == parent->rank) {
            me = i;
        }
    }
    if ((me < 0) || (id <= AMC_CID_WORLD)) {
        amc_error(&parent->ctx->log, "amc_comm_create_group: %s",
                  (me < 0) ? "this rank is not a member" : "not an id from amc_comm_id_reserve");
        return AMC_ERR_ARG;
    }
    status = amc_comm_alloc(parent->ctx, n, &newcomm);
    if (status != AMC_SUCCESS) {
        return status;
    }
    for (i = 0; i < n; i++) {
        newcomm->group->ranks[i] = amc_comm_peer(parent, ranks[i]);
    }
    amc_comm_setup(newcomm, me, n, id);
    status = amc_comm_insert(newcomm);
    if (status != AMC_SUCCESS) {
        /* the caller's agreement gave an id already in use: its bug */
        amc_comm_unalloc(newcomm, 1);
        return status;
    }
    *newcomm_p = newcomm;
    return AMC_SUCCESS;
}

/* The creation on the heap, its agreement's request the caller's handle:
 * test and wait see an ordinary collective on comm, and end the creation
 * when it completes (amc_comm_idup_end). */
int amc_comm_idup_internal(amc_comm_t comm, amc_comm_t *newcomm_p, struct amc_request **req_p)
{
    amc_comm_create_t *op = malloc(sizeof(*op));
    int                status;

    if (op == NULL) {
        amc_error(&comm->ctx->log, "amc_comm_idup of 0x%llx: out of memory",
                  (unsigned long long)comm->cid);
        return AMC_ERR_NO_MEMORY;
    }
    status = amc_comm_create_start(op, comm, 0, 0, 0, 1);
    if (status != AMC_SUCCESS) {
        free(op);
        return status;
    }
    op->req.create     = op;
    op->req.create_out = newcomm_p;
    *req_p             = &op->req;
    return AMC_SUCCESS;
}

int amc_comm_idup_end(struct amc_request *req, int status)
{
    amc_comm_create_t *op = req->create;

    status     = amc_comm_create_end(op, status, req->create_out);
    req->magic = 0;
    free(op);
    return status;
}

void amc_comm_idup_abandon(struct amc_request *req)
{
    amc_comm_create_t *op = req->create;
    amc_comm_t         made = AMC_COMM_NULL;

    if (amc_request_is_complete(req)) {
        if (amc_comm_create_end(op, req->status, &made) == AMC_SUCCESS) {
            amc_comm_free_internal(made); /* nobody will ever see it */
        }
    } else {
        amc_request_detach(req);
        /* the agreement runs on into its buffers: they are left to it */
        op->xbuf = NULL;
        amc_comm_create_cleanup(op);
    }
    req->magic = 0;
    free(op);
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
