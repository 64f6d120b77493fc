/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libamcoll_mpi: MPI_Op_create and MPI_Op_free, so that reductions with a
 * user's op can run on amcoll (dtype.c binds the function per type).
 */
#include "mpi/dtype.h"

int MPI_Op_create(MPI_User_function *fn, int commute, MPI_Op *op)
{
    int rc = PMPI_Op_create(fn, commute, op);

    if ((rc != MPI_SUCCESS) || (fn == NULL)) {
        return rc;
    }
    /* every rank remembers its op, or the call fails: a rank that did not
     * would later let its reductions fall through where the others route */
    rc = amcm_op_remember(*op, fn, commute);
    if (rc != MPI_SUCCESS) {
        PMPI_Op_free(op);
    }
    return rc;
}

int MPI_Op_free(MPI_Op *op)
{
    if (op != NULL) {
        amcm_op_forget(*op);
    }
    return PMPI_Op_free(op);
}
