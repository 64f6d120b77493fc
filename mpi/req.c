/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * amcoll under MPI: a routed call's amcoll call and its temporaries.
 */
#include "mpi/req.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ temporaries */

static int amcm_job_run(amcm_job_t *j, int unpack, MPI_Comm comm)
{
    int i, pos, rc;

    for (i = 0; i < j->n; i++) {
        amcm_blk_t *b = &j->b[i];
        if (b->bytes == 0) {
            continue;
        }
        pos = 0;
        if (unpack) {
            rc = PMPI_Unpack(j->tmp + b->toff, (int)b->bytes, &pos, j->ubuf + b->uoff, b->count,
                             b->dt, comm);
        } else {
            rc = PMPI_Pack(j->ubuf + b->uoff, b->count, b->dt, j->tmp + b->toff, (int)b->bytes,
                           &pos, comm);
        }
        if ((rc != MPI_SUCCESS) || ((size_t)pos != b->bytes)) {
            return AMC_ERR_UNSUPPORTED; /* a packed form that is not the bare data */
        }
    }
    return AMC_SUCCESS;
}

int amcm_req_run_jobs(amcm_req_t *r, int unpack)
{
    int i, rc = AMC_SUCCESS;

    if (unpack) {
        return r->nunpack ? amcm_job_run(&r->unpack, 1, r->comm) : AMC_SUCCESS;
    }
    for (i = 0; (i < r->npack) && (rc == AMC_SUCCESS); i++) {
        rc = amcm_job_run(&r->pack[i], 0, r->comm);
    }
    return rc;
}

static void amcm_job_free_types(amcm_job_t *j)
{
    int i;

    for (i = 0; i < j->n; i++) {
        if (j->b[i].owned) {
            PMPI_Type_free(&j->b[i].dt);
            j->b[i].owned = 0;
        }
    }
}

void amcm_req_release(amcm_req_t *r)
{
    int i;

    for (i = 0; i < r->npack; i++) {
        amcm_job_free_types(&r->pack[i]);
    }
    if (r->nunpack) {
        amcm_job_free_types(&r->unpack);
    }
    for (i = 0; i < r->nmem; i++) {
        free(r->mem[i]);
    }
    r->nmem = 0;
    if (r->ubind != NULL) {
        amcm_ubind_put(r->ubind);
        r->ubind = NULL;
    }
    if ((r->mode == AMCM_PERSISTENT) && (r->pac != AMC_COMM_NULL)) {
        /* the request before its communicator (freed while in use, a
         * communicator goes once its collectives have) */
        if (r->areq != AMC_REQUEST_NULL) {
            amc_request_free(&r->areq);
        }
        amc_comm_free(&r->pac);
    }
}

int amcm_issue(amcm_req_t *r)
{
    return amcm_issue_as(r, r->coll, r->mode);
}
