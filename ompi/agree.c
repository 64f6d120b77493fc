/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mca_coll_amcoll: the members' agreement while a communicator is made
 * (agree.h).
 */
#include "ompi/agree.h"

#include "ompi/request/request.h"
#include "opal/runtime/opal_progress.h"

#include <sched.h>

int amcomp_agree(const amcomp_agree_t *a, void *buf, int count, struct ompi_datatype_t *dt,
                 struct ompi_op_t *op)
{
    ompi_request_t *req = MPI_REQUEST_NULL;
    int             rc;

    rc = a->fn(MPI_IN_PLACE, buf, count, dt, op, a->comm, &req, a->module);
    if (rc != OMPI_SUCCESS) {
        return rc;
    }
    while (!REQUEST_COMPLETE(req)) {
        opal_progress();
        sched_yield(); /* ranks may share cores */
    }
    rc = req->req_status.MPI_ERROR;
    ompi_request_free(&req);
    return rc;
}
