/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mca_coll_amcoll: a datatype without recorded constructor arguments
 * (dtypes.h). Open MPI records them in MPI_Type_* alone; a type its own
 * code builds with ompi_datatype_create_* (coll/inter's allgatherv, which
 * MPI_Intercomm_merge runs, hands the local group's bcast an indexed one)
 * has none, and MPI_Type_get_envelope on it returns MPI_ERR_INTERN through
 * MPI_COMM_WORLD's handler. Its layout is read from the object instead;
 * the answer depends on the type's kind and layout alone, the same on
 * every rank that makes it.
 */
#include "ompi_config.h"
#include "ompi/dtypes.h"

#include "ompi/datatype/ompi_datatype.h"

int amcomp_dt_opaque(MPI_Datatype dt, int *dense)
{
    if (ompi_datatype_is_predefined(dt) || (dt->args != NULL)) {
        return 0; /* the envelope reads it: NAMED, or what MPI_Type_* recorded */
    }
    /* contiguous with no gaps between elements: count of them are dense
     * (lb, extent and true extent are checked by the caller) */
    *dense = ompi_datatype_is_contiguous_memory_layout(dt, 2) ? 1 : 0;
    return 1;
}
