/* SPDX-License-Identifier: BSD-3-Clause */
/* Public communicator and barrier calls: argument checks over the internals. */
#include "am_coll/api/api.h"
#include "am_coll/barrier/barrier_entry.h"
#include "am_coll/coll/coll.h"
#include "am_coll/context/comm.h"
#include "am_coll/context/request.h"
#include "am_coll/api/comm_create.h"
#include "am_coll/context/wait.h"

#include <stdlib.h>
#include <string.h>

int amc_comm_rank(amc_comm_t comm, int *rank)
{
    int status = amc_api_check_comm(comm);

    if (status != AMC_SUCCESS) {
        return status;
    }
    if (rank == NULL) {
        return AMC_ERR_ARG;
    }
    *rank = comm->rank;
    return AMC_SUCCESS;
}

int amc_comm_size(amc_comm_t comm, int *size)
{
    int status = amc_api_check_comm(comm);

    if (status != AMC_SUCCESS) {
        return status;
    }
    if (size == NULL) {
        return AMC_ERR_ARG;
    }
    *size = comm->size;
    return AMC_SUCCESS;
}

int amc_comm_dup(amc_comm_t comm, amc_comm_t *newcomm)
{
    int status = amc_api_check_comm(comm);

    if (status != AMC_SUCCESS) {
        return status;
    }
    if (newcomm == NULL) {
        return AMC_ERR_ARG;
    }
    return amc_comm_dup_internal(comm, newcomm);
}

int amc_comm_idup(amc_comm_t comm, amc_comm_t *newcomm, amc_request_t *req)
{
    int status = amc_api_check_comm(comm);

    if (status != AMC_SUCCESS) {
        return status;
    }
    if ((newcomm == NULL) || (req == NULL)) {
        return AMC_ERR_ARG;
    }
    return amc_comm_idup_internal(comm, newcomm, req);
}

int amc_comm_split(amc_comm_t comm, int color, int key, amc_comm_t *newcomm)
{
    int status = amc_api_check_comm(comm);

    if (status != AMC_SUCCESS) {
        return status;
    }
    if ((newcomm == NULL) || ((color < 0) && (color != AMC_UNDEFINED))) {
        amc_error(&comm->ctx->log, "amc_comm_split: color %d is neither >= 0 nor AMC_UNDEFINED",
                  color);
        return AMC_ERR_ARG;
    }
    return amc_comm_split_internal(comm, color, key, newcomm);
}

int amc_comm_id_reserve(amc_comm_t comm, uint64_t *id)
{
    int status = amc_api_check_comm(comm);

    if (status != AMC_SUCCESS) {
        return status;
    }
    return (id == NULL) ? AMC_ERR_ARG : amc_comm_id_reserve_internal(comm, id);
}

int amc_comm_create_group(amc_comm_t comm, const int ranks[], int n, uint64_t id,
                          amc_comm_t *newcomm)
{
    int status = amc_api_check_comm(comm);

    if (status != AMC_SUCCESS) {
        return status;
    }
    if ((ranks == NULL) || (n <= 0) || (n > comm->size) || (newcomm == NULL)) {
        return AMC_ERR_ARG;
    }
    return amc_comm_create_group_internal(comm, ranks, n, id, newcomm);
}

int amc_comm_free(amc_comm_t *comm)
{
    int status;

    if (comm == NULL) {
        return (amc_api_check_live() != AMC_SUCCESS) ? AMC_ERR_NOT_INITIALIZED : AMC_ERR_ARG;
    }
    status = amc_api_check_comm(*comm);
    if (status != AMC_SUCCESS) {
        return status;
    }
    if ((*comm)->cid == AMC_CID_WORLD) {
        amc_error(&(*comm)->ctx->log, "amc_comm_free: the world communicator cannot be freed");
        return AMC_ERR_COMM;
    }
    status = amc_comm_free_internal(*comm);
    *comm  = AMC_COMM_NULL;
    return status;
}

int amc_barrier(amc_comm_t comm)
{
    struct amc_request req;
    int                status = amc_api_check_comm(comm);

    if (status != AMC_SUCCESS) {
        return status;
    }
    if (comm->size == 1) {
        return AMC_SUCCESS; /* nobody to wait for, nothing on the wire */
    }
    /* blocking = start + wait, with the request on the stack */
    amc_request_init(&req, comm, 0);
    status = amc_barrier_start(comm, &req);
    if (status != AMC_SUCCESS) {
        return status;
    }
    return amc_request_wait_one(&req);
}

int amc_ibarrier(amc_comm_t comm, amc_request_t *req_p)
{
    struct amc_request *req;
    int                 status = amc_api_check_comm(comm);

    if (status != AMC_SUCCESS) {
        return status;
    }
    if (req_p == NULL) {
        /* only this rank's call carries its handle: the others are told,
         * and their barrier fails instead of waiting for this rank */
        amc_coll_args_t args;

        memset(&args, 0, sizeof(args));
        args.coll = AMC_COLL_BARRIER;
        args.root = -1;
        amc_error(&comm->ctx->log, "amc_ibarrier: NULL request pointer");
        if (comm->size > 1) {
            amc_coll_start_failed(comm, &args, AMC_ERR_ARG);
        }
        return AMC_ERR_ARG;
    }
    req = amc_request_alloc(comm);
    if (req == NULL) {
        return AMC_ERR_NO_MEMORY;
    }
    amc_request_begin_nb(req);
    status = amc_barrier_start(comm, req);
    amc_request_end_start(req, status);
    if (status != AMC_SUCCESS) {
        amc_request_release(req);
        return status;
    }
    *req_p = req;
    return AMC_SUCCESS;
}
