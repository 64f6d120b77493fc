/* SPDX-License-Identifier: BSD-3-Clause */
#include "am_coll/context/request.h"
#include "am_coll/context/comm.h"
#include "am_coll/context/peer_watch.h"
#include "am_coll/context/progress_thread.h"
#include "base/status.h"

#include <stdlib.h>

void amc_request_init(struct amc_request *req, struct amc_comm *comm, int heap)
{
    req->magic      = AMC_REQUEST_MAGIC;
    req->persistent = 0;
    req->active     = 0;
    req->args       = NULL;
    req->complete = 0;
    req->status   = AMC_SUCCESS;
    req->heap     = heap;
    req->comm     = comm;
    req->slot     = NULL;
    req->deadline = 0.0;
    req->tracked  = 0;
    req->create     = NULL;
    req->create_out = NULL;
}

void amc_request_untrack(struct amc_request *req)
{
    amc_progress_thread_t *pt;

    /* at finalize the thread is gone before the last requests are dropped */
    if (__atomic_load_n(&req->tracked, __ATOMIC_ACQUIRE) &&
        __atomic_exchange_n(&req->tracked, 0, __ATOMIC_ACQ_REL) &&
        ((pt = req->comm->ctx->pt) != NULL)) {
        amc_progress_thread_end(pt);
    }
}

/* Requests the free list keeps; beyond, they go back to malloc. */
#define AMC_REQUEST_FREE_MAX 64u

struct amc_request *amc_request_alloc(struct amc_comm *comm)
{
    amc_context_t      *ctx = comm->ctx;
    struct amc_request *req;

    amc_spin_lock(&ctx->lock);
    req = ctx->req_free;
    if (req != NULL) {
        ctx->req_free = (struct amc_request *)(void *)req->args; /* the list's link */
        ctx->req_free_count--;
    }
    amc_spin_unlock(&ctx->lock);
    if ((req == NULL) && ((req = malloc(sizeof(*req))) == NULL)) {
        return NULL;
    }
    amc_request_init(req, comm, 1);
    return req;
}

void amc_request_release(struct amc_request *req)
{
    amc_context_t *ctx = req->comm->ctx;

    req->magic = 0;
    free(req->args);
    amc_spin_lock(&ctx->lock);
    if (ctx->req_free_count < AMC_REQUEST_FREE_MAX) {
        req->args     = (struct amc_coll_args *)(void *)ctx->req_free;
        ctx->req_free = req;
        ctx->req_free_count++;
        req = NULL;
    }
    amc_spin_unlock(&ctx->lock);
    free(req);
}

void amc_request_free_list(amc_context_t *ctx)
{
    struct amc_request *req;

    while ((req = ctx->req_free) != NULL) {
        ctx->req_free = (struct amc_request *)(void *)req->args;
        free(req);
    }
    ctx->req_free_count = 0;
}

void amc_request_begin_nb(struct amc_request *req)
{
    amc_progress_thread_t *pt = req->comm->ctx->pt;

    if (pt != NULL) {
        __atomic_store_n(&req->tracked, 1, __ATOMIC_RELEASE);
        amc_progress_thread_begin(pt);
    }
}

void amc_request_complete(struct amc_request *req, int status)
{
    if (status == AMC_ERR_TRANSPORT) {
        /* what a dead peer's absence looks like to UCX (a pull from a
         * process that is gone): told as what it is */
        status = amc_peer_watch_transport_error(req->comm);
    }
    req->status = status;
    req->slot   = NULL;
    amc_request_untrack(req);
    __atomic_store_n(&req->complete, 1, __ATOMIC_RELEASE);
}

void amc_request_detach(struct amc_request *req)
{
    amc_coll_ctrl_t *ctrl = &req->comm->ctrl;

    amc_request_untrack(req); /* nobody waits for it any more */

    amc_spin_lock(&ctrl->lock);
    if (!req->complete && (req->slot != NULL)) {
        req->slot->req   = NULL;
        req->slot->freed = 1;
        req->slot        = NULL;
    }
    amc_spin_unlock(&ctrl->lock);
}

void amc_request_drop(struct amc_request *req)
{
    amc_request_untrack(req);
    if (req->heap) {
        amc_request_release(req);
    } else {
        amc_request_complete(req, AMC_ERR_COMM);
    }
}

int amc_request_is_complete(const struct amc_request *req)
{
    return __atomic_load_n(&req->complete, __ATOMIC_ACQUIRE);
}
