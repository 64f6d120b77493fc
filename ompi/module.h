/*
 * mca_coll_amcoll: the module, one per intracommunicator it takes: the
 * functions it replaces and, for each, the one it replaced (the previous
 * module's), where the calls amcoll does not run go.
 */
#ifndef AMCOMP_MODULE_H
#define AMCOMP_MODULE_H

#include "ompi_config.h"
#include "ompi/mca/coll/coll.h"

/* Every collective the module may take: X(name, AMCM_ index). */
#define AMCOMP_COLLS(X)                                                                        \
    X(barrier, AMCM_BARRIER) X(bcast, AMCM_BCAST) X(reduce, AMCM_REDUCE)                       \
    X(allreduce, AMCM_ALLREDUCE) X(gather, AMCM_GATHER) X(gatherv, AMCM_GATHERV)               \
    X(scatter, AMCM_SCATTER) X(scatterv, AMCM_SCATTERV) X(allgather, AMCM_ALLGATHER)           \
    X(allgatherv, AMCM_ALLGATHERV) X(alltoall, AMCM_ALLTOALL) X(alltoallv, AMCM_ALLTOALLV)     \
    X(alltoallw, AMCM_ALLTOALLW) X(reduce_scatter, AMCM_REDUCE_SCATTER)                        \
    X(reduce_scatter_block, AMCM_REDUCE_SCATTER_BLOCK) X(scan, AMCM_SCAN)                      \
    X(exscan, AMCM_EXSCAN)

/* The previous module's function and module of one collective. */
#define AMCOMP_PREV_FIELD(name, idx)                                                           \
    mca_coll_base_module_##name##_fn_t name;                                                   \
    mca_coll_base_module_t            *name##_module;                                          \
    mca_coll_base_module_i##name##_fn_t i##name;                                               \
    mca_coll_base_module_t            *i##name##_module;

typedef struct {
    mca_coll_base_module_t super;
    struct ompi_communicator_t *comm;
    int                         mapped; /* in amcoll's table (mpi/comms.h) */
    /* the non-blocking allreduce below ours, whatever coll_amcoll_colls
     * says: the members agree with it on what each could do (amcomp_agree) */
    mca_coll_base_module_iallreduce_fn_t iagree;
    mca_coll_base_module_t              *iagree_module;
    struct {
        AMCOMP_COLLS(AMCOMP_PREV_FIELD)
    } prev;
} amcomp_module_t;

OBJ_CLASS_DECLARATION(amcomp_module_t);

/* An allreduce in place over m's communicator by the module below, while
 * the communicator is being made. Not its blocking form: a communicator
 * is enabled inside Open MPI's own wait for its creation, where under
 * MPI_THREAD_MULTIPLE a nested blocking wait never gets the progress
 * (ompi_sync_wait_mt); this one runs opal_progress itself. */
int amcomp_agree(amcomp_module_t *m, void *buf, int count, struct ompi_datatype_t *dt,
                 struct ompi_op_t *op);

/* A module for comm with the functions coll_amcoll_colls names. */
amcomp_module_t *amcomp_module_new(struct ompi_communicator_t *comm);

#endif /* AMCOMP_MODULE_H */
