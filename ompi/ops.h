/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mca_coll_amcoll: a user's op read from Open MPI's op object, for the
 * shared core (mpi/dtype.h, amcm_op_set_resolver): the component cannot
 * see MPI_Op_create as the PMPI library does.
 */
#ifndef AMCOMP_OPS_H
#define AMCOMP_OPS_H

#include <mpi.h>

int amcomp_op_resolve(MPI_Op op, MPI_User_function **fn, int *commute);

#endif /* AMCOMP_OPS_H */
