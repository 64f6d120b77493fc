/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mca_coll_amcoll: the module's collectives. Each call is prepared by the
 * shared core (mpi/prep.h: the routing decision from what every rank of the
 * call has alike, then amcoll's arguments and the temporaries of a
 * non-contiguous layout) and run on amcoll, or handed to the previous
 * module when the core says not to route it: a datatype or op amcoll has
 * not, a communicator not mapped, an argument MPI reports.
 */
#include "ompi/colls.h"
#include "ompi/late.h"
#include "ompi/prev.h"
#include "ompi/request.h"
#include "mpi/prep.h"

/* A blocking call prepared (prep): run, its result as an MPI code. */
static int amcomp_run_blocking(amcm_req_t *r, int prep)
{
    int rc = (prep >= AMCM_FAIL) ? prep - AMCM_FAIL : AMC_SUCCESS;

    if (rc == AMC_SUCCESS) {
        rc = amcm_req_run_jobs(r, 0);
    }
    if (rc == AMC_SUCCESS) {
        rc = amcomp_issue(r);
    }
    if (rc == AMC_SUCCESS) {
        rc = amcm_req_run_jobs(r, 1);
    }
    amcm_req_release(r);
    amcm_bump(&amcm_g.routed[r->coll][AMCM_BLOCKING]);
    return amcomp_code(r->comm, rc);
}

#define AMCOMP_B(coll, prep, prev)                                                             \
    do {                                                                                       \
        amcomp_module_t *m = (amcomp_module_t *)module;                                        \
        amcm_req_t       r_s, *r_ = &r_s;                                                      \
        int              w_;                                                                   \
        amcomp_ready();                                                                        \
        w_ = (prep);                                                                           \
        if ((w_ != AMCM_ROUTE) && (w_ < AMCM_FAIL)) {                                          \
            amcm_bump(&amcm_g.fell[coll][w_]);                                                 \
            return (prev);                                                                     \
        }                                                                                      \
        return amcomp_run_blocking(r_, w_);                                                    \
    } while (0)

#define AMCOMP_NB(coll, prep, prev) AMCOMP_REQ(coll, prep, prev, amcomp_request_start)
#define AMCOMP_P(coll, prep, prev)  AMCOMP_REQ(coll, prep, prev, amcomp_request_persist)

/* A non-blocking or persistent call: its request made by start. */
#define AMCOMP_REQ(coll, prep, prev, start)                                                    \
    do {                                                                                       \
        amcomp_module_t  *m = (amcomp_module_t *)module;                                       \
        amcomp_request_t *q_;                                                                  \
        amcm_req_t       *r_;                                                                  \
        int               w_;                                                                  \
        amcomp_ready();                                                                        \
        if ((q_ = amcomp_request_get()) == NULL) {                                             \
            return amcomp_code(comm, AMC_ERR_NO_MEMORY); /* this rank alone: not MPI's */ \
        }                                                                                      \
        r_ = &q_->r;                                                                           \
        w_ = (prep);                                                                           \
        if ((w_ != AMCM_ROUTE) && (w_ < AMCM_FAIL)) {                                          \
            amcomp_request_put(q_);                                                            \
            amcm_bump(&amcm_g.fell[coll][w_]);                                                 \
            return (prev);                                                                     \
        }                                                                                      \
        return start(q_, w_, comm, request);                                                   \
    } while (0)

static int amcomp_barrier(struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    AMCOMP_B(AMCM_BARRIER, amcm_prep_barrier(r_, AMCM_BLOCKING, comm),
             m->prev.barrier(comm, m->prev.barrier_module));
}

static int amcomp_ibarrier(struct ompi_communicator_t *comm, ompi_request_t **request,
                           mca_coll_base_module_t *module)
{
    AMCOMP_NB(AMCM_BARRIER, amcm_prep_barrier(r_, AMCM_NONBLOCKING, comm),
              m->prev.ibarrier(comm, request, m->prev.ibarrier_module));
}

static int amcomp_bcast(void *buf, int count, struct ompi_datatype_t *dt, int root,
                        struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    AMCOMP_B(AMCM_BCAST, amcm_prep_bcast(r_, AMCM_BLOCKING, buf, count, dt, root, comm),
             m->prev.bcast(buf, count, dt, root, comm, m->prev.bcast_module));
}

static int amcomp_ibcast(void *buf, int count, struct ompi_datatype_t *dt, int root,
                         struct ompi_communicator_t *comm, ompi_request_t **request,
                         mca_coll_base_module_t *module)
{
    AMCOMP_NB(AMCM_BCAST, amcm_prep_bcast(r_, AMCM_NONBLOCKING, buf, count, dt, root, comm),
              m->prev.ibcast(buf, count, dt, root, comm, request, m->prev.ibcast_module));
}

static int amcomp_reduce(const void *sb, void *rb, int count, struct ompi_datatype_t *dt,
                         struct ompi_op_t *op, int root, struct ompi_communicator_t *comm,
                         mca_coll_base_module_t *module)
{
    AMCOMP_B(
        AMCM_REDUCE,
        amcm_prep_reduce_any(r_, AMCM_BLOCKING, AMCM_REDUCE, sb, rb, count, dt, op, root, comm),
        m->prev.reduce(sb, rb, count, dt, op, root, comm, m->prev.reduce_module));
}

static int amcomp_ireduce(const void *sb, void *rb, int count, struct ompi_datatype_t *dt,
                          struct ompi_op_t *op, int root, struct ompi_communicator_t *comm,
                          ompi_request_t **request, mca_coll_base_module_t *module)
{
    AMCOMP_NB(
        AMCM_REDUCE,
        amcm_prep_reduce_any(r_, AMCM_NONBLOCKING, AMCM_REDUCE, sb, rb, count, dt, op, root, comm),
        m->prev.ireduce(sb, rb, count, dt, op, root, comm, request, m->prev.ireduce_module));
}

static int amcomp_allreduce(const void *sb, void *rb, int count, struct ompi_datatype_t *dt,
                            struct ompi_op_t *op, struct ompi_communicator_t *comm,
                            mca_coll_base_module_t *module)
{
    AMCOMP_B(
        AMCM_ALLREDUCE,
        amcm_prep_reduce_any(r_, AMCM_BLOCKING, AMCM_ALLREDUCE, sb, rb, count, dt, op, 0, comm),
        m->prev.allreduce(sb, rb, count, dt, op, comm, m->prev.allreduce_module));
}

static int amcomp_iallreduce(const void *sb, void *rb, int count, struct ompi_datatype_t *dt,
                             struct ompi_op_t *op, struct ompi_communicator_t *comm,
                             ompi_request_t **request, mca_coll_base_module_t *module)
{
    AMCOMP_NB(
        AMCM_ALLREDUCE,
        amcm_prep_reduce_any(r_, AMCM_NONBLOCKING, AMCM_ALLREDUCE, sb, rb, count, dt, op, 0, comm),
        m->prev.iallreduce(sb, rb, count, dt, op, comm, request, m->prev.iallreduce_module));
}

static int amcomp_scan(const void *sb, void *rb, int count, struct ompi_datatype_t *dt,
                       struct ompi_op_t *op, struct ompi_communicator_t *comm,
                       mca_coll_base_module_t *module)
{
    AMCOMP_B(AMCM_SCAN,
             amcm_prep_reduce_any(r_, AMCM_BLOCKING, AMCM_SCAN, sb, rb, count, dt, op, 0, comm),
             m->prev.scan(sb, rb, count, dt, op, comm, m->prev.scan_module));
}

static int amcomp_iscan(const void *sb, void *rb, int count, struct ompi_datatype_t *dt,
                        struct ompi_op_t *op, struct ompi_communicator_t *comm,
                        ompi_request_t **request, mca_coll_base_module_t *module)
{
    AMCOMP_NB(
        AMCM_SCAN,
        amcm_prep_reduce_any(r_, AMCM_NONBLOCKING, AMCM_SCAN, sb, rb, count, dt, op, 0, comm),
        m->prev.iscan(sb, rb, count, dt, op, comm, request, m->prev.iscan_module));
}

static int amcomp_exscan(const void *sb, void *rb, int count, struct ompi_datatype_t *dt,
                         struct ompi_op_t *op, struct ompi_communicator_t *comm,
                         mca_coll_base_module_t *module)
{
    AMCOMP_B(AMCM_EXSCAN,
             amcm_prep_reduce_any(r_, AMCM_BLOCKING, AMCM_EXSCAN, sb, rb, count, dt, op, 0, comm),
             m->prev.exscan(sb, rb, count, dt, op, comm, m->prev.exscan_module));
}

static int amcomp_iexscan(const void *sb, void *rb, int count, struct ompi_datatype_t *dt,
                          struct ompi_op_t *op, struct ompi_communicator_t *comm,
                          ompi_request_t **request, mca_coll_base_module_t *module)
{
    AMCOMP_NB(
        AMCM_EXSCAN,
        amcm_prep_reduce_any(r_, AMCM_NONBLOCKING, AMCM_EXSCAN, sb, rb, count, dt, op, 0, comm),
        m->prev.iexscan(sb, rb, count, dt, op, comm, request, m->prev.iexscan_module));
}

static int amcomp_reduce_scatter_block(const void *sb, void *rb, int rc,
                                       struct ompi_datatype_t *dt, struct ompi_op_t *op,
                                       struct ompi_communicator_t *comm,
                                       mca_coll_base_module_t *module)
{
    AMCOMP_B(AMCM_REDUCE_SCATTER_BLOCK,
             amcm_prep_reduce_scatter(r_, AMCM_BLOCKING, AMCM_REDUCE_SCATTER_BLOCK, sb, rb, rc,
                                      NULL, dt, op, comm),
             m->prev.reduce_scatter_block(sb, rb, rc, dt, op, comm,
                                          m->prev.reduce_scatter_block_module));
}

static int amcomp_ireduce_scatter_block(const void *sb, void *rb, int rc,
                                        struct ompi_datatype_t *dt, struct ompi_op_t *op,
                                        struct ompi_communicator_t *comm, ompi_request_t **request,
                                        mca_coll_base_module_t *module)
{
    AMCOMP_NB(AMCM_REDUCE_SCATTER_BLOCK,
              amcm_prep_reduce_scatter(r_, AMCM_NONBLOCKING, AMCM_REDUCE_SCATTER_BLOCK, sb, rb, rc,
                                       NULL, dt, op, comm),
              m->prev.ireduce_scatter_block(sb, rb, rc, dt, op, comm, request,
                                            m->prev.ireduce_scatter_block_module));
}

static int amcomp_reduce_scatter(const void *sb, void *rb, const int *rcs,
                                 struct ompi_datatype_t *dt, struct ompi_op_t *op,
                                 struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    AMCOMP_B(AMCM_REDUCE_SCATTER,
             amcm_prep_reduce_scatter(r_, AMCM_BLOCKING, AMCM_REDUCE_SCATTER, sb, rb, 0, rcs, dt,
                                      op, comm),
             m->prev.reduce_scatter(sb, rb, rcs, dt, op, comm, m->prev.reduce_scatter_module));
}

static int amcomp_ireduce_scatter(const void *sb, void *rb, const int *rcs,
                                  struct ompi_datatype_t *dt, struct ompi_op_t *op,
                                  struct ompi_communicator_t *comm, ompi_request_t **request,
                                  mca_coll_base_module_t *module)
{
    AMCOMP_NB(AMCM_REDUCE_SCATTER,
              amcm_prep_reduce_scatter(r_, AMCM_NONBLOCKING, AMCM_REDUCE_SCATTER, sb, rb, 0, rcs,
                                       dt, op, comm),
              m->prev.ireduce_scatter(sb, rb, rcs, dt, op, comm, request,
                                      m->prev.ireduce_scatter_module));
}

static int amcomp_gather(const void *sb, int sc, struct ompi_datatype_t *st, void *rb, int rc,
                         struct ompi_datatype_t *rt, int root, struct ompi_communicator_t *comm,
                         mca_coll_base_module_t *module)
{
    AMCOMP_B(AMCM_GATHER,
             amcm_prep_rooted(r_, AMCM_BLOCKING, AMCM_GATHER, sb, sc, st, rb, rc, rt, root, comm),
             m->prev.gather(sb, sc, st, rb, rc, rt, root, comm, m->prev.gather_module));
}

static int amcomp_igather(const void *sb, int sc, struct ompi_datatype_t *st, void *rb, int rc,
                          struct ompi_datatype_t *rt, int root, struct ompi_communicator_t *comm,
                          ompi_request_t **request, mca_coll_base_module_t *module)
{
    AMCOMP_NB(
        AMCM_GATHER,
        amcm_prep_rooted(r_, AMCM_NONBLOCKING, AMCM_GATHER, sb, sc, st, rb, rc, rt, root, comm),
        m->prev.igather(sb, sc, st, rb, rc, rt, root, comm, request, m->prev.igather_module));
}

static int amcomp_scatter(const void *sb, int sc, struct ompi_datatype_t *st, void *rb, int rc,
                          struct ompi_datatype_t *rt, int root, struct ompi_communicator_t *comm,
                          mca_coll_base_module_t *module)
{
    AMCOMP_B(AMCM_SCATTER,
             amcm_prep_rooted(r_, AMCM_BLOCKING, AMCM_SCATTER, sb, sc, st, rb, rc, rt, root, comm),
             m->prev.scatter(sb, sc, st, rb, rc, rt, root, comm, m->prev.scatter_module));
}

static int amcomp_iscatter(const void *sb, int sc, struct ompi_datatype_t *st, void *rb, int rc,
                           struct ompi_datatype_t *rt, int root, struct ompi_communicator_t *comm,
                           ompi_request_t **request, mca_coll_base_module_t *module)
{
    AMCOMP_NB(
        AMCM_SCATTER,
        amcm_prep_rooted(r_, AMCM_NONBLOCKING, AMCM_SCATTER, sb, sc, st, rb, rc, rt, root, comm),
        m->prev.iscatter(sb, sc, st, rb, rc, rt, root, comm, request, m->prev.iscatter_module));
}

static int amcomp_allgather(const void *sb, int sc, struct ompi_datatype_t *st, void *rb, int rc,
                            struct ompi_datatype_t *rt, struct ompi_communicator_t *comm,
                            mca_coll_base_module_t *module)
{
    AMCOMP_B(AMCM_ALLGATHER,
             amcm_prep_rooted(r_, AMCM_BLOCKING, AMCM_ALLGATHER, sb, sc, st, rb, rc, rt, 0, comm),
             m->prev.allgather(sb, sc, st, rb, rc, rt, comm, m->prev.allgather_module));
}

static int amcomp_iallgather(const void *sb, int sc, struct ompi_datatype_t *st, void *rb, int rc,
                             struct ompi_datatype_t *rt, struct ompi_communicator_t *comm,
                             ompi_request_t **request, mca_coll_base_module_t *module)
{
    AMCOMP_NB(
        AMCM_ALLGATHER,
        amcm_prep_rooted(r_, AMCM_NONBLOCKING, AMCM_ALLGATHER, sb, sc, st, rb, rc, rt, 0, comm),
        m->prev.iallgather(sb, sc, st, rb, rc, rt, comm, request, m->prev.iallgather_module));
}

static int amcomp_alltoall(const void *sb, int sc, struct ompi_datatype_t *st, void *rb, int rc,
                           struct ompi_datatype_t *rt, struct ompi_communicator_t *comm,
                           mca_coll_base_module_t *module)
{
    AMCOMP_B(AMCM_ALLTOALL,
             amcm_prep_rooted(r_, AMCM_BLOCKING, AMCM_ALLTOALL, sb, sc, st, rb, rc, rt, 0, comm),
             m->prev.alltoall(sb, sc, st, rb, rc, rt, comm, m->prev.alltoall_module));
}

static int amcomp_ialltoall(const void *sb, int sc, struct ompi_datatype_t *st, void *rb, int rc,
                            struct ompi_datatype_t *rt, struct ompi_communicator_t *comm,
                            ompi_request_t **request, mca_coll_base_module_t *module)
{
    AMCOMP_NB(
        AMCM_ALLTOALL,
        amcm_prep_rooted(r_, AMCM_NONBLOCKING, AMCM_ALLTOALL, sb, sc, st, rb, rc, rt, 0, comm),
        m->prev.ialltoall(sb, sc, st, rb, rc, rt, comm, request, m->prev.ialltoall_module));
}

static int amcomp_gatherv(const void *sb, int sc, struct ompi_datatype_t *st, void *rb,
                          const int *rcs, const int *displs, struct ompi_datatype_t *rt, int root,
                          struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    AMCOMP_B(AMCM_GATHERV,
             amcm_prep_gatherv(r_, AMCM_BLOCKING, sb, sc, st, rb, rcs, displs, rt, root, comm),
             m->prev.gatherv(sb, sc, st, rb, rcs, displs, rt, root, comm, m->prev.gatherv_module));
}

static int amcomp_igatherv(const void *sb, int sc, struct ompi_datatype_t *st, void *rb,
                           const int *rcs, const int *displs, struct ompi_datatype_t *rt, int root,
                           struct ompi_communicator_t *comm, ompi_request_t **request,
                           mca_coll_base_module_t *module)
{
    AMCOMP_NB(AMCM_GATHERV,
              amcm_prep_gatherv(r_, AMCM_NONBLOCKING, sb, sc, st, rb, rcs, displs, rt, root, comm),
              m->prev.igatherv(sb, sc, st, rb, rcs, displs, rt, root, comm, request,
                               m->prev.igatherv_module));
}

static int amcomp_scatterv(const void *sb, const int *scs, const int *displs,
                           struct ompi_datatype_t *st, void *rb, int rc,
                           struct ompi_datatype_t *rt, int root, struct ompi_communicator_t *comm,
                           mca_coll_base_module_t *module)
{
    AMCOMP_B(
        AMCM_SCATTERV,
        amcm_prep_scatterv(r_, AMCM_BLOCKING, sb, scs, displs, st, rb, rc, rt, root, comm),
        m->prev.scatterv(sb, scs, displs, st, rb, rc, rt, root, comm, m->prev.scatterv_module));
}

static int amcomp_iscatterv(const void *sb, const int *scs, const int *displs,
                            struct ompi_datatype_t *st, void *rb, int rc,
                            struct ompi_datatype_t *rt, int root, struct ompi_communicator_t *comm,
                            ompi_request_t **request, mca_coll_base_module_t *module)
{
    AMCOMP_NB(
        AMCM_SCATTERV,
        amcm_prep_scatterv(r_, AMCM_NONBLOCKING, sb, scs, displs, st, rb, rc, rt, root, comm),
        m->prev.iscatterv(sb, scs, displs, st, rb, rc, rt, root, comm, request,
                          m->prev.iscatterv_module));
}

static int amcomp_allgatherv(const void *sb, int sc, struct ompi_datatype_t *st, void *rb,
                             const int *rcs, const int *displs, struct ompi_datatype_t *rt,
                             struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    AMCOMP_B(AMCM_ALLGATHERV,
             amcm_prep_allgatherv(r_, AMCM_BLOCKING, sb, sc, st, rb, rcs, displs, rt, comm),
             m->prev.allgatherv(sb, sc, st, rb, rcs, displs, rt, comm, m->prev.allgatherv_module));
}

static int amcomp_iallgatherv(const void *sb, int sc, struct ompi_datatype_t *st, void *rb,
                              const int *rcs, const int *displs, struct ompi_datatype_t *rt,
                              struct ompi_communicator_t *comm, ompi_request_t **request,
                              mca_coll_base_module_t *module)
{
    AMCOMP_NB(AMCM_ALLGATHERV,
              amcm_prep_allgatherv(r_, AMCM_NONBLOCKING, sb, sc, st, rb, rcs, displs, rt, comm),
              m->prev.iallgatherv(sb, sc, st, rb, rcs, displs, rt, comm, request,
                                  m->prev.iallgatherv_module));
}

static int amcomp_alltoallv(const void *sb, const int *scs, const int *sds,
                            struct ompi_datatype_t *st, void *rb, const int *rcs, const int *rds,
                            struct ompi_datatype_t *rt, struct ompi_communicator_t *comm,
                            mca_coll_base_module_t *module)
{
    AMCOMP_B(
        AMCM_ALLTOALLV,
        amcm_prep_alltoallvw(r_, AMCM_BLOCKING, AMCM_ALLTOALLV, sb, scs, sds, st, NULL, rb, rcs,
                             rds, rt, NULL, comm),
        m->prev.alltoallv(sb, scs, sds, st, rb, rcs, rds, rt, comm, m->prev.alltoallv_module));
}

static int amcomp_ialltoallv(const void *sb, const int *scs, const int *sds,
                             struct ompi_datatype_t *st, void *rb, const int *rcs, const int *rds,
                             struct ompi_datatype_t *rt, struct ompi_communicator_t *comm,
                             ompi_request_t **request, mca_coll_base_module_t *module)
{
    AMCOMP_NB(AMCM_ALLTOALLV,
              amcm_prep_alltoallvw(r_, AMCM_NONBLOCKING, AMCM_ALLTOALLV, sb, scs, sds, st, NULL,
                                   rb, rcs, rds, rt, NULL, comm),
              m->prev.ialltoallv(sb, scs, sds, st, rb, rcs, rds, rt, comm, request,
                                 m->prev.ialltoallv_module));
}

static int amcomp_alltoallw(const void *sb, const int *scs, const int *sds,
                            struct ompi_datatype_t *const *sts, void *rb, const int *rcs,
                            const int *rds, struct ompi_datatype_t *const *rts,
                            struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    AMCOMP_B(
        AMCM_ALLTOALLW,
        amcm_prep_alltoallvw(r_, AMCM_BLOCKING, AMCM_ALLTOALLW, sb, scs, sds, MPI_DATATYPE_NULL,
                             sts, rb, rcs, rds, MPI_DATATYPE_NULL, rts, comm),
        m->prev.alltoallw(sb, scs, sds, sts, rb, rcs, rds, rts, comm, m->prev.alltoallw_module));
}

static int amcomp_ialltoallw(const void *sb, const int *scs, const int *sds,
                             struct ompi_datatype_t *const *sts, void *rb, const int *rcs,
                             const int *rds, struct ompi_datatype_t *const *rts,
                             struct ompi_communicator_t *comm, ompi_request_t **request,
                             mca_coll_base_module_t *module)
{
    AMCOMP_NB(AMCM_ALLTOALLW,
              amcm_prep_alltoallvw(r_, AMCM_NONBLOCKING, AMCM_ALLTOALLW, sb, scs, sds,
                                   MPI_DATATYPE_NULL, sts, rb, rcs, rds, MPI_DATATYPE_NULL, rts,
                                   comm),
              m->prev.ialltoallw(sb, scs, sds, sts, rb, rcs, rds, rts, comm, request,
                                 m->prev.ialltoallw_module));
}

static int amcomp_barrier_init(struct ompi_communicator_t *comm, struct ompi_info_t *info,
                               ompi_request_t **request, mca_coll_base_module_t *module)
{
    AMCOMP_P(AMCM_BARRIER, amcm_prep_barrier(r_, AMCM_PERSISTENT, comm),
             m->prev.barrier_init(comm, info, request, m->prev.barrier_init_module));
}

static int amcomp_bcast_init(void *buf, int count, struct ompi_datatype_t *dt, int root,
                             struct ompi_communicator_t *comm, struct ompi_info_t *info,
                             ompi_request_t **request, mca_coll_base_module_t *module)
{
    AMCOMP_P(
        AMCM_BCAST, amcm_prep_bcast(r_, AMCM_PERSISTENT, buf, count, dt, root, comm),
        m->prev.bcast_init(buf, count, dt, root, comm, info, request, m->prev.bcast_init_module));
}

static int amcomp_reduce_init(const void *sb, void *rb, int count, struct ompi_datatype_t *dt,
                              struct ompi_op_t *op, int root, struct ompi_communicator_t *comm,
                              struct ompi_info_t *info, ompi_request_t **request,
                              mca_coll_base_module_t *module)
{
    AMCOMP_P(
        AMCM_REDUCE,
        amcm_prep_reduce_any(r_, AMCM_PERSISTENT, AMCM_REDUCE, sb, rb, count, dt, op, root, comm),
        m->prev.reduce_init(sb, rb, count, dt, op, root, comm, info, request,
                            m->prev.reduce_init_module));
}

static int amcomp_allreduce_init(const void *sb, void *rb, int count, struct ompi_datatype_t *dt,
                                 struct ompi_op_t *op, struct ompi_communicator_t *comm,
                                 struct ompi_info_t *info, ompi_request_t **request,
                                 mca_coll_base_module_t *module)
{
    AMCOMP_P(
        AMCM_ALLREDUCE,
        amcm_prep_reduce_any(r_, AMCM_PERSISTENT, AMCM_ALLREDUCE, sb, rb, count, dt, op, 0, comm),
        m->prev.allreduce_init(sb, rb, count, dt, op, comm, info, request,
                               m->prev.allreduce_init_module));
}

static int amcomp_scan_init(const void *sb, void *rb, int count, struct ompi_datatype_t *dt,
                            struct ompi_op_t *op, struct ompi_communicator_t *comm,
                            struct ompi_info_t *info, ompi_request_t **request,
                            mca_coll_base_module_t *module)
{
    AMCOMP_P(
        AMCM_SCAN,
        amcm_prep_reduce_any(r_, AMCM_PERSISTENT, AMCM_SCAN, sb, rb, count, dt, op, 0, comm),
        m->prev.scan_init(sb, rb, count, dt, op, comm, info, request, m->prev.scan_init_module));
}

static int amcomp_exscan_init(const void *sb, void *rb, int count, struct ompi_datatype_t *dt,
                              struct ompi_op_t *op, struct ompi_communicator_t *comm,
                              struct ompi_info_t *info, ompi_request_t **request,
                              mca_coll_base_module_t *module)
{
    AMCOMP_P(
        AMCM_EXSCAN,
        amcm_prep_reduce_any(r_, AMCM_PERSISTENT, AMCM_EXSCAN, sb, rb, count, dt, op, 0, comm),
        m->prev.exscan_init(sb, rb, count, dt, op, comm, info, request,
                            m->prev.exscan_init_module));
}

static int amcomp_reduce_scatter_block_init(const void *sb, void *rb, int rc,
                                            struct ompi_datatype_t *dt, struct ompi_op_t *op,
                                            struct ompi_communicator_t *comm,
                                            struct ompi_info_t *info, ompi_request_t **request,
                                            mca_coll_base_module_t *module)
{
    AMCOMP_P(AMCM_REDUCE_SCATTER_BLOCK,
             amcm_prep_reduce_scatter(r_, AMCM_PERSISTENT, AMCM_REDUCE_SCATTER_BLOCK, sb, rb, rc,
                                      NULL, dt, op, comm),
             m->prev.reduce_scatter_block_init(sb, rb, rc, dt, op, comm, info, request,
                                               m->prev.reduce_scatter_block_init_module));
}

static int amcomp_reduce_scatter_init(const void *sb, void *rb, const int *rcs,
                                      struct ompi_datatype_t *dt, struct ompi_op_t *op,
                                      struct ompi_communicator_t *comm, struct ompi_info_t *info,
                                      ompi_request_t **request, mca_coll_base_module_t *module)
{
    AMCOMP_P(AMCM_REDUCE_SCATTER,
             amcm_prep_reduce_scatter(r_, AMCM_PERSISTENT, AMCM_REDUCE_SCATTER, sb, rb, 0, rcs, dt,
                                      op, comm),
             m->prev.reduce_scatter_init(sb, rb, rcs, dt, op, comm, info, request,
                                         m->prev.reduce_scatter_init_module));
}

static int amcomp_gather_init(const void *sb, int sc, struct ompi_datatype_t *st, void *rb, int rc,
                              struct ompi_datatype_t *rt, int root,
                              struct ompi_communicator_t *comm, struct ompi_info_t *info,
                              ompi_request_t **request, mca_coll_base_module_t *module)
{
    AMCOMP_P(
        AMCM_GATHER,
        amcm_prep_rooted(r_, AMCM_PERSISTENT, AMCM_GATHER, sb, sc, st, rb, rc, rt, root, comm),
        m->prev.gather_init(sb, sc, st, rb, rc, rt, root, comm, info, request,
                            m->prev.gather_init_module));
}

static int amcomp_scatter_init(const void *sb, int sc, struct ompi_datatype_t *st, void *rb,
                               int rc, struct ompi_datatype_t *rt, int root,
                               struct ompi_communicator_t *comm, struct ompi_info_t *info,
                               ompi_request_t **request, mca_coll_base_module_t *module)
{
    AMCOMP_P(
        AMCM_SCATTER,
        amcm_prep_rooted(r_, AMCM_PERSISTENT, AMCM_SCATTER, sb, sc, st, rb, rc, rt, root, comm),
        m->prev.scatter_init(sb, sc, st, rb, rc, rt, root, comm, info, request,
                             m->prev.scatter_init_module));
}

static int amcomp_allgather_init(const void *sb, int sc, struct ompi_datatype_t *st, void *rb,
                                 int rc, struct ompi_datatype_t *rt,
                                 struct ompi_communicator_t *comm, struct ompi_info_t *info,
                                 ompi_request_t **request, mca_coll_base_module_t *module)
{
    AMCOMP_P(
        AMCM_ALLGATHER,
        amcm_prep_rooted(r_, AMCM_PERSISTENT, AMCM_ALLGATHER, sb, sc, st, rb, rc, rt, 0, comm),
        m->prev.allgather_init(sb, sc, st, rb, rc, rt, comm, info, request,
                               m->prev.allgather_init_module));
}

static int amcomp_alltoall_init(const void *sb, int sc, struct ompi_datatype_t *st, void *rb,
                                int rc, struct ompi_datatype_t *rt,
                                struct ompi_communicator_t *comm, struct ompi_info_t *info,
                                ompi_request_t **request, mca_coll_base_module_t *module)
{
    AMCOMP_P(AMCM_ALLTOALL,
             amcm_prep_rooted(r_, AMCM_PERSISTENT, AMCM_ALLTOALL, sb, sc, st, rb, rc, rt, 0, comm),
             m->prev.alltoall_init(sb, sc, st, rb, rc, rt, comm, info, request,
                                   m->prev.alltoall_init_module));
}

static int amcomp_gatherv_init(const void *sb, int sc, struct ompi_datatype_t *st, void *rb,
                               const int *rcs, const int *displs, struct ompi_datatype_t *rt,
                               int root, struct ompi_communicator_t *comm,
                               struct ompi_info_t *info, ompi_request_t **request,
                               mca_coll_base_module_t *module)
{
    AMCOMP_P(AMCM_GATHERV,
             amcm_prep_gatherv(r_, AMCM_PERSISTENT, sb, sc, st, rb, rcs, displs, rt, root, comm),
             m->prev.gatherv_init(sb, sc, st, rb, rcs, displs, rt, root, comm, info, request,
                                  m->prev.gatherv_init_module));
}

static int amcomp_scatterv_init(const void *sb, const int *scs, const int *displs,
                                struct ompi_datatype_t *st, void *rb, int rc,
                                struct ompi_datatype_t *rt, int root,
                                struct ompi_communicator_t *comm, struct ompi_info_t *info,
                                ompi_request_t **request, mca_coll_base_module_t *module)
{
    AMCOMP_P(AMCM_SCATTERV,
             amcm_prep_scatterv(r_, AMCM_PERSISTENT, sb, scs, displs, st, rb, rc, rt, root, comm),
             m->prev.scatterv_init(sb, scs, displs, st, rb, rc, rt, root, comm, info, request,
                                   m->prev.scatterv_init_module));
}

static int amcomp_allgatherv_init(const void *sb, int sc, struct ompi_datatype_t *st, void *rb,
                                  const int *rcs, const int *displs, struct ompi_datatype_t *rt,
                                  struct ompi_communicator_t *comm, struct ompi_info_t *info,
                                  ompi_request_t **request, mca_coll_base_module_t *module)
{
    AMCOMP_P(AMCM_ALLGATHERV,
             amcm_prep_allgatherv(r_, AMCM_PERSISTENT, sb, sc, st, rb, rcs, displs, rt, comm),
             m->prev.allgatherv_init(sb, sc, st, rb, rcs, displs, rt, comm, info, request,
                                     m->prev.allgatherv_init_module));
}

static int amcomp_alltoallv_init(const void *sb, const int *scs, const int *sds,
                                 struct ompi_datatype_t *st, void *rb, const int *rcs,
                                 const int *rds, struct ompi_datatype_t *rt,
                                 struct ompi_communicator_t *comm, struct ompi_info_t *info,
                                 ompi_request_t **request, mca_coll_base_module_t *module)
{
    AMCOMP_P(AMCM_ALLTOALLV,
             amcm_prep_alltoallvw(r_, AMCM_PERSISTENT, AMCM_ALLTOALLV, sb, scs, sds, st, NULL, rb,
                                  rcs, rds, rt, NULL, comm),
             m->prev.alltoallv_init(sb, scs, sds, st, rb, rcs, rds, rt, comm, info, request,
                                    m->prev.alltoallv_init_module));
}

static int amcomp_alltoallw_init(const void *sb, const int *scs, const int *sds,
                                 struct ompi_datatype_t *const *sts, void *rb, const int *rcs,
                                 const int *rds, struct ompi_datatype_t *const *rts,
                                 struct ompi_communicator_t *comm, struct ompi_info_t *info,
                                 ompi_request_t **request, mca_coll_base_module_t *module)
{
    AMCOMP_P(AMCM_ALLTOALLW,
             amcm_prep_alltoallvw(r_, AMCM_PERSISTENT, AMCM_ALLTOALLW, sb, scs, sds,
                                  MPI_DATATYPE_NULL, sts, rb, rcs, rds, MPI_DATATYPE_NULL, rts,
                                  comm),
             m->prev.alltoallw_init(sb, scs, sds, sts, rb, rcs, rds, rts, comm, info, request,
                                    m->prev.alltoallw_init_module));
}

void amcomp_colls_set(mca_coll_base_module_t *mod, unsigned colls_b, unsigned colls_nb)
{
    if (colls_b & (1u << AMCM_BARRIER)) {
        mod->coll_barrier = amcomp_barrier;
    }
    if (colls_nb & (1u << AMCM_BARRIER)) {
        mod->coll_ibarrier = amcomp_ibarrier;
    }
    if (colls_b & (1u << AMCM_BCAST)) {
        mod->coll_bcast = amcomp_bcast;
    }
    if (colls_nb & (1u << AMCM_BCAST)) {
        mod->coll_ibcast = amcomp_ibcast;
    }
    if (colls_b & (1u << AMCM_REDUCE)) {
        mod->coll_reduce = amcomp_reduce;
    }
    if (colls_nb & (1u << AMCM_REDUCE)) {
        mod->coll_ireduce = amcomp_ireduce;
    }
    if (colls_b & (1u << AMCM_ALLREDUCE)) {
        mod->coll_allreduce = amcomp_allreduce;
    }
    if (colls_nb & (1u << AMCM_ALLREDUCE)) {
        mod->coll_iallreduce = amcomp_iallreduce;
    }
    if (colls_b & (1u << AMCM_SCAN)) {
        mod->coll_scan = amcomp_scan;
    }
    if (colls_nb & (1u << AMCM_SCAN)) {
        mod->coll_iscan = amcomp_iscan;
    }
    if (colls_b & (1u << AMCM_EXSCAN)) {
        mod->coll_exscan = amcomp_exscan;
    }
    if (colls_nb & (1u << AMCM_EXSCAN)) {
        mod->coll_iexscan = amcomp_iexscan;
    }
    if (colls_b & (1u << AMCM_REDUCE_SCATTER_BLOCK)) {
        mod->coll_reduce_scatter_block = amcomp_reduce_scatter_block;
    }
    if (colls_nb & (1u << AMCM_REDUCE_SCATTER_BLOCK)) {
        mod->coll_ireduce_scatter_block = amcomp_ireduce_scatter_block;
    }
    if (colls_b & (1u << AMCM_REDUCE_SCATTER)) {
        mod->coll_reduce_scatter = amcomp_reduce_scatter;
    }
    if (colls_nb & (1u << AMCM_REDUCE_SCATTER)) {
        mod->coll_ireduce_scatter = amcomp_ireduce_scatter;
    }
    if (colls_b & (1u << AMCM_GATHER)) {
        mod->coll_gather = amcomp_gather;
    }
    if (colls_nb & (1u << AMCM_GATHER)) {
        mod->coll_igather = amcomp_igather;
    }
    if (colls_b & (1u << AMCM_SCATTER)) {
        mod->coll_scatter = amcomp_scatter;
    }
    if (colls_nb & (1u << AMCM_SCATTER)) {
        mod->coll_iscatter = amcomp_iscatter;
    }
    if (colls_b & (1u << AMCM_ALLGATHER)) {
        mod->coll_allgather = amcomp_allgather;
    }
    if (colls_nb & (1u << AMCM_ALLGATHER)) {
        mod->coll_iallgather = amcomp_iallgather;
    }
    if (colls_b & (1u << AMCM_ALLTOALL)) {
        mod->coll_alltoall = amcomp_alltoall;
    }
    if (colls_nb & (1u << AMCM_ALLTOALL)) {
        mod->coll_ialltoall = amcomp_ialltoall;
    }
    if (colls_b & (1u << AMCM_GATHERV)) {
        mod->coll_gatherv = amcomp_gatherv;
    }
    if (colls_nb & (1u << AMCM_GATHERV)) {
        mod->coll_igatherv = amcomp_igatherv;
    }
    if (colls_b & (1u << AMCM_SCATTERV)) {
        mod->coll_scatterv = amcomp_scatterv;
    }
    if (colls_nb & (1u << AMCM_SCATTERV)) {
        mod->coll_iscatterv = amcomp_iscatterv;
    }
    if (colls_b & (1u << AMCM_ALLGATHERV)) {
        mod->coll_allgatherv = amcomp_allgatherv;
    }
    if (colls_nb & (1u << AMCM_ALLGATHERV)) {
        mod->coll_iallgatherv = amcomp_iallgatherv;
    }
    if (colls_b & (1u << AMCM_ALLTOALLV)) {
        mod->coll_alltoallv = amcomp_alltoallv;
    }
    if (colls_nb & (1u << AMCM_ALLTOALLV)) {
        mod->coll_ialltoallv = amcomp_ialltoallv;
    }
    if (colls_b & (1u << AMCM_ALLTOALLW)) {
        mod->coll_alltoallw = amcomp_alltoallw;
    }
    if (colls_nb & (1u << AMCM_ALLTOALLW)) {
        mod->coll_ialltoallw = amcomp_ialltoallw;
    }
    if (colls_nb & (1u << AMCM_BARRIER)) {
        mod->coll_barrier_init = amcomp_barrier_init;
    }
    if (colls_nb & (1u << AMCM_BCAST)) {
        mod->coll_bcast_init = amcomp_bcast_init;
    }
    if (colls_nb & (1u << AMCM_REDUCE)) {
        mod->coll_reduce_init = amcomp_reduce_init;
    }
    if (colls_nb & (1u << AMCM_ALLREDUCE)) {
        mod->coll_allreduce_init = amcomp_allreduce_init;
    }
    if (colls_nb & (1u << AMCM_SCAN)) {
        mod->coll_scan_init = amcomp_scan_init;
    }
    if (colls_nb & (1u << AMCM_EXSCAN)) {
        mod->coll_exscan_init = amcomp_exscan_init;
    }
    if (colls_nb & (1u << AMCM_REDUCE_SCATTER_BLOCK)) {
        mod->coll_reduce_scatter_block_init = amcomp_reduce_scatter_block_init;
    }
    if (colls_nb & (1u << AMCM_REDUCE_SCATTER)) {
        mod->coll_reduce_scatter_init = amcomp_reduce_scatter_init;
    }
    if (colls_nb & (1u << AMCM_GATHER)) {
        mod->coll_gather_init = amcomp_gather_init;
    }
    if (colls_nb & (1u << AMCM_SCATTER)) {
        mod->coll_scatter_init = amcomp_scatter_init;
    }
    if (colls_nb & (1u << AMCM_ALLGATHER)) {
        mod->coll_allgather_init = amcomp_allgather_init;
    }
    if (colls_nb & (1u << AMCM_ALLTOALL)) {
        mod->coll_alltoall_init = amcomp_alltoall_init;
    }
    if (colls_nb & (1u << AMCM_GATHERV)) {
        mod->coll_gatherv_init = amcomp_gatherv_init;
    }
    if (colls_nb & (1u << AMCM_SCATTERV)) {
        mod->coll_scatterv_init = amcomp_scatterv_init;
    }
    if (colls_nb & (1u << AMCM_ALLGATHERV)) {
        mod->coll_allgatherv_init = amcomp_allgatherv_init;
    }
    if (colls_nb & (1u << AMCM_ALLTOALLV)) {
        mod->coll_alltoallv_init = amcomp_alltoallv_init;
    }
    if (colls_nb & (1u << AMCM_ALLTOALLW)) {
        mod->coll_alltoallw_init = amcomp_alltoallw_init;
    }
}
