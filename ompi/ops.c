/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mca_coll_amcoll: a user's op read from Open MPI's op object (ops.h).
 * Only a C function is taken: a Fortran, C++ or Java op is called by Open
 * MPI with its own conventions, so its reductions stay with the previous
 * module. The flags are the op's, the same on every rank.
 */
#include "ompi_config.h"
#include "ompi/ops.h"

#include "ompi/op/op.h"

int amcomp_op_resolve(MPI_Op op, MPI_User_function **fn, int *commute)
{
    const uint32_t other = OMPI_OP_FLAGS_INTRINSIC | OMPI_OP_FLAGS_FORTRAN_FUNC |
                           OMPI_OP_FLAGS_CXX_FUNC | OMPI_OP_FLAGS_JAVA_FUNC;

    if ((op == NULL) || (op->o_flags & other) || (op->o_func.c_fn == NULL)) {
        return 0;
    }
    *fn      = (MPI_User_function *)op->o_func.c_fn;
    *commute = ompi_op_is_commute(op) ? 1 : 0;
    return 1;
}
