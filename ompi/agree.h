/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mca_coll_amcoll: what the members of a communicator agree on while it is
 * being made (amcoll started, an id, each member's failure), by the module
 * below ours.
 */
#ifndef AMCOMP_AGREE_H
#define AMCOMP_AGREE_H

#include "ompi_config.h"
#include "ompi/mca/coll/coll.h"

/* The non-blocking allreduce below ours on a communicator, whatever
 * coll_amcoll_colls says. */
typedef struct {
    struct ompi_communicator_t          *comm;
    mca_coll_base_module_iallreduce_fn_t fn;
    mca_coll_base_module_t              *module; /* retained by the holder */
} amcomp_agree_t;

/* An allreduce in place by a->fn. Not the blocking form: a communicator is
 * enabled inside Open MPI's own wait for its creation, where under
 * MPI_THREAD_MULTIPLE a nested blocking wait never gets the progress
 * (ompi_sync_wait_mt); this one runs opal_progress itself. MPI code. */
int amcomp_agree(const amcomp_agree_t *a, void *buf, int count, struct ompi_datatype_t *dt,
                 struct ompi_op_t *op);

#endif /* AMCOMP_AGREE_H */
