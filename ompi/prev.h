/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mca_coll_amcoll: a module's data: the communicator it serves, whether
 * amcoll's side is made, and for each collective it replaces the function
 * and module it replaced (the previous module's), where the calls amcoll
 * does not run go. Shared by the module's life cycle (module.c) and its
 * collectives (colls.c).
 */
#ifndef AMCOMP_PREV_H
#define AMCOMP_PREV_H

#include "ompi_config.h"
#include "ompi/mca/coll/coll.h"

#include "ompi/agree.h"

/* Every collective the module may take: X(name, AMCM_ index). */
#define AMCOMP_COLLS(X)                                                                        \
    X(barrier, AMCM_BARRIER) X(bcast, AMCM_BCAST) X(reduce, AMCM_REDUCE)                       \
    X(allreduce, AMCM_ALLREDUCE) X(gather, AMCM_GATHER) X(gatherv, AMCM_GATHERV)               \
    X(scatter, AMCM_SCATTER) X(scatterv, AMCM_SCATTERV) X(allgather, AMCM_ALLGATHER)           \
    X(allgatherv, AMCM_ALLGATHERV) X(alltoall, AMCM_ALLTOALL) X(alltoallv, AMCM_ALLTOALLV)     \
    X(alltoallw, AMCM_ALLTOALLW) X(reduce_scatter, AMCM_REDUCE_SCATTER)                        \
    X(reduce_scatter_block, AMCM_REDUCE_SCATTER_BLOCK) X(scan, AMCM_SCAN)                      \
    X(exscan, AMCM_EXSCAN)

/* The previous module's function and module of one form (fn: bcast,
 * ibcast, bcast_init), and of the three forms of one collective. */
#define AMCOMP_PREV_ONE(fn)                                                                    \
    mca_coll_base_module_##fn##_fn_t fn;                                                       \
    mca_coll_base_module_t          *fn##_module;
#define AMCOMP_PREV_FIELD(name, idx)                                                           \
    AMCOMP_PREV_ONE(name) AMCOMP_PREV_ONE(i##name) AMCOMP_PREV_ONE(name##_init)

typedef struct {
    mca_coll_base_module_t super;
    struct ompi_communicator_t *comm;
    int                         mapped; /* in amcoll's table (mpi/comms.h) */
    amcomp_agree_t              agree; /* the members agree with it on what each could do */
    struct {
        AMCOMP_COLLS(AMCOMP_PREV_FIELD)
    } prev;
} amcomp_module_t;

OBJ_CLASS_DECLARATION(amcomp_module_t);

#endif /* AMCOMP_PREV_H */
