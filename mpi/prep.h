/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * amcoll under MPI: each collective's preparation, shared by libamcoll_mpi
 * and mca_coll_amcoll: the routing decision, then amcoll's arguments and the
 * temporaries of a non-contiguous layout. AMCM_ROUTE, a reason not to route
 * (AMCM_WHY_*: the call goes to MPI's own), or AMCM_FAIL + an amcoll code.
 *
 * The routing rule: every rank of a call must make the same
 * choice, so the choice depends only on what MPI makes identical on all
 * ranks of the call: the collective, the communicator (mapped or not, agreed
 * when it was created), the op, and for reductions the datatype's signature
 * (MPI requires the same datatype on every rank of a reduction). Data
 * movement never looks at the datatypes: it runs as bytes, and a rank whose
 * layout is not contiguous packs into (or unpacks from) a temporary buffer.
 */
#ifndef AMCM_PREP_H
#define AMCM_PREP_H

#include "mpi/req.h"

#pragma GCC visibility push(hidden)

int amcm_decide(amcm_req_t *r, int coll, int mode, MPI_Comm comm);
int amcm_prep_barrier(amcm_req_t *r, int mode, MPI_Comm comm);
int amcm_prep_bcast(amcm_req_t *r, int mode, void *buf, int count, MPI_Datatype dt,
    int root, MPI_Comm comm);
int amcm_prep_reduce_any(amcm_req_t *r, int mode, int coll, const void *sb, void *rb,
    int count, MPI_Datatype dt, MPI_Op op, int root, MPI_Comm comm);
int amcm_prep_rooted(amcm_req_t *r, int mode, int coll, const void *sb, int sc,
    MPI_Datatype st, void *rb, int rc, MPI_Datatype rt, int root,
    MPI_Comm comm);
int amcm_prep_gatherv(amcm_req_t *r, int mode, const void *sb, int sc, MPI_Datatype st,
    void *rb, const int rcs[], const int displs[], MPI_Datatype rt,
    int root, MPI_Comm comm);
int amcm_prep_scatterv(amcm_req_t *r, int mode, const void *sb, const int scs[],
    const int displs[], MPI_Datatype st, void *rb, int rc,
    MPI_Datatype rt, int root, MPI_Comm comm);
int amcm_prep_allgatherv(amcm_req_t *r, int mode, const void *sb, int sc, MPI_Datatype st,
    void *rb, const int rcs[], const int displs[], MPI_Datatype rt,
    MPI_Comm comm);
int amcm_prep_alltoallvw(amcm_req_t *r, int mode, int coll, const void *sb,
    const int scs[], const int sds[], MPI_Datatype st,
    const MPI_Datatype sts[], void *rb, const int rcs[],
    const int rds[], MPI_Datatype rt, const MPI_Datatype rts[],
    MPI_Comm comm);
int amcm_prep_reduce_scatter(amcm_req_t *r, int mode, int coll, const void *sb, void *rb,
    int rcount, const int rcs[], MPI_Datatype dt, MPI_Op op,
    MPI_Comm comm);

#pragma GCC visibility pop

#endif /* AMCM_PREP_H */
