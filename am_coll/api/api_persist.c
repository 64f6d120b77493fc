/* SPDX-License-Identifier: BSD-3-Clause */
/* Persistent requests (MPI-4 style) and the request calls that only they
 * need: amc_X_init checks the call once and keeps it; amc_start runs it
 * again, on the communicator's cached schedule; amc_request_free ends it. */
#include "am_coll/api/api.h"
#include "am_coll/barrier/barrier_entry.h"
#include "am_coll/coll/coll.h"
#include "am_coll/context/comm.h"
#include "am_coll/context/request.h"
#include "am_coll/api/coll_start.h"
#include "am_coll/api/comm_create.h"
#include "am_coll/context/wait.h"

#include <stdlib.h>
#include <string.h>

int amc_request_persistent_new(amc_comm_t comm, const amc_coll_args_t *args,
                               struct amc_request **req_p)
{
    struct amc_request *req = malloc(sizeof(*req));

    if (req == NULL) {
        return AMC_ERR_NO_MEMORY;
    }
    amc_request_init(req, comm, 1);
    req->persistent = 1;
    req->comm_gen   = comm->gen;
    req->complete   = 1; /* inactive: test and wait return at once */
    if (args != NULL) {
        req->args = malloc(sizeof(*req->args));
        if (req->args == NULL) {
            free(req);
            return AMC_ERR_NO_MEMORY;
        }
        *req->args = *args;
    }
    *req_p = req;
    return AMC_SUCCESS;
}

int amc_barrier_init(amc_comm_t comm, amc_request_t *req_p)
{
    int status = amc_api_check_comm(comm);

    if (status != AMC_SUCCESS) {
        return status;
    }
    if (req_p == NULL) {
        return AMC_ERR_ARG;
    }
    return amc_request_persistent_new(comm, NULL, req_p);
}

int amc_start(amc_request_t *req_p)
{
    amc_request_t req;
    int           status;

    if (amc_api_check_live() != AMC_SUCCESS) {
        return AMC_ERR_NOT_INITIALIZED;
    }
    if ((req_p == NULL) || ((req = *req_p) == NULL) || (req->magic != AMC_REQUEST_MAGIC) ||
        !req->persistent) {
        return AMC_ERR_ARG;
    }
    if (req->active) {
        amc_error(&req->comm->ctx->log, "amc_start: the request is already active");
        return AMC_ERR_ARG;
    }
    if ((amc_comm_check(req->comm) != AMC_SUCCESS) || (req->comm->gen != req->comm_gen)) {
        /* its communicator was freed meanwhile; its memory may even serve
         * another communicator by now (a tombstone reused: context.h) */
        return AMC_ERR_COMM;
    }
    req->complete = 0;
    req->status   = AMC_SUCCESS;
    req->slot     = NULL;
    req->deadline = 0.0;
    req->active   = 1;
    if ((req->args == NULL) && (req->comm->size == 1)) {
        amc_request_complete(req, AMC_SUCCESS);
        return AMC_SUCCESS;
    }
    amc_request_begin_nb(req);
    status = (req->args == NULL) ? amc_barrier_start(req->comm, req)
                                 : amc_coll_start(req->comm, req->args, req);
    amc_request_end_start(req, status);
    if (status != AMC_SUCCESS) {
        req->active   = 0;
        req->complete = 1;
    }
    return status;
}

int amc_request_free(amc_request_t *req_p)
{
    amc_request_t req;

    if (amc_api_check_live() != AMC_SUCCESS) {
        return AMC_ERR_NOT_INITIALIZED;
    }
    if ((req_p == NULL) || ((req = *req_p) == NULL) || (req->magic != AMC_REQUEST_MAGIC)) {
        return AMC_ERR_ARG;
    }
    if (req->persistent && req->active) {
        amc_error(&req->comm->ctx->log,
                  "amc_request_free: the persistent request is active; wait for it first");
        return AMC_ERR_ARG;
    }
    if (req->create != NULL) {
        amc_comm_idup_abandon(req);
        *req_p = AMC_REQUEST_NULL;
        return AMC_SUCCESS;
    }
    /* a running non-blocking call completes on its own, unobserved (as MPI) */
    amc_request_detach(req);
    req->magic = 0;
    free(req->args);
    free(req);
    *req_p = AMC_REQUEST_NULL;
    return AMC_SUCCESS;
}
