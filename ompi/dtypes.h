/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mca_coll_amcoll: which datatypes Open MPI made inside itself, for the
 * shared core (mpi/dtype.h, amcm_dt_set_opaque): MPI_Type_get_envelope
 * fails on them through the error handler.
 */
#ifndef AMCOMP_DTYPES_H
#define AMCOMP_DTYPES_H

#include <mpi.h>

int amcomp_dt_opaque(MPI_Datatype dt, int *dense);

#endif /* AMCOMP_DTYPES_H */
