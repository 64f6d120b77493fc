/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libamcoll_mpi: every MPI collective, blocking, non-blocking and
 * persistent. Each call is prepared once (amcm_prep_*: the routing decision,
 * then amcoll's arguments and the temporaries of a non-contiguous layout)
 * and run in its mode; a call that is not routed goes to its PMPI_ form.
 *
 * The decision (amcm_decide, and amcm_op_map for reductions) uses only what
 * is the same on every rank of the call: routing on, the collective, the
 * communicator's mapping (agreed when it was created), the op, and for
 * reductions the datatype's signature. Data movement (bcast, gather(v),
 * scatter(v), allgather(v), alltoall(v,w)) runs as bytes whatever the
 * datatypes: ranks may pass different datatypes of one signature, and a rank
 * whose layout is not contiguous packs into a temporary buffer (MPI_Pack)
 * instead of choosing differently from the others. What a rank alone finds
 * wrong after the decision (a negative count, no memory) is reported through
 * the communicator's error handler, as MPI reports a local argument error.
 */
#include "mpi/prep.h"
#include "mpi/requests.h"

#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define AMCM_IN   1   /* pack before the call */
#define AMCM_OUT  2   /* unpack after it */


/* ------------------------------------------------------------------ run */

static int amcm_run_blocking(amcm_req_t *r, int prep)
{
    int rc = (prep >= AMCM_FAIL) ? prep - AMCM_FAIL : AMC_SUCCESS;

    if (amcm_g.detached != NULL) {
        amcm_detached_poll(0);
    }
    if (rc == AMC_SUCCESS) {
        rc = amcm_req_run_jobs(r, 0);
    }
    if (rc == AMC_SUCCESS) {
        rc = amcm_issue_retry(r, 0);
    }
    if (rc == AMC_SUCCESS) {
        rc = amcm_req_run_jobs(r, 1);
    }
    amcm_req_release(r);
    amcm_bump(&amcm_g.routed[r->coll][AMCM_BLOCKING]);
    return (rc == AMC_SUCCESS) ? MPI_SUCCESS : amcm_raise(r->comm, rc);
}

/* A non-blocking or persistent call started (rc: amcoll's answer): its
 * request handed out, or released and the error reported. */
static inline __attribute__((always_inline)) int amcm_started(amcm_req_t *r, int rc,
                                                              MPI_Request *request)
{
    MPI_Comm comm = r->comm;

    if (rc != AMC_SUCCESS) {
        amcm_req_free(r);
        if (request != NULL) {
            *request = MPI_REQUEST_NULL;
        }
        return amcm_raise(comm, rc);
    }
    r->active = (r->mode == AMCM_NONBLOCKING);
    amcm_bump(&amcm_g.routed[r->coll][r->mode]);
    return amcm_req_register(r, request);
}

static int amcm_run_started(amcm_req_t *r, int prep, MPI_Request *request)
{
    int rc = (prep >= AMCM_FAIL) ? prep - AMCM_FAIL : AMC_SUCCESS;

    if (amcm_g.detached != NULL) {
        amcm_detached_poll(0);
    }
    if (request == NULL) {
        rc = AMC_ERR_ARG;
    }
    if ((rc == AMC_SUCCESS) && (r->mode == AMCM_NONBLOCKING)) {
        rc = amcm_req_run_jobs(r, 0);
    }
    if (rc == AMC_SUCCESS) {
        rc = amcm_issue_retry(r, 0);
    }
    return amcm_started(r, rc, request);
}

/* ------------------------------------------------------------------ fast paths */

/* A call on predefined datatypes (and for reductions a predefined op the
 * type takes) whose general preparation would make no temporary: its
 * request gets amcoll's arguments straight from the call's, without the
 * datatype analysis, the views and the layouts. Each amcm_fast_X sets
 * exactly what amcm_prep_X sets for such a call, from the same facts
 * (routing on, the collective not filtered, the communicator mapped, the
 * named types, the op), so a rank on the general path (a derived type of
 * the same signature) still decides alike; it returns 0 (nothing decided)
 * for anything else, which the general path then routes, reports or lets
 * fall through, and also while a detached request needs the general
 * path's upkeep. A blocking call's request is on the stack and holds only
 * what amcm_issue_as reads; a non-blocking or persistent one outlives the
 * call and gets the header amcm_decide would give it. All inline in each
 * wrapper, so that a blocking call's request stays in registers. */
#define AMCM_FAST static inline __attribute__((always_inline))

AMCM_FAST amcm_comm_t *amcm_fast_comm(int coll, MPI_Comm comm)
{
    if (!amcm_g.on || !(amcm_g.colls & (1u << coll)) || (amcm_g.detached != NULL)) {
        return NULL;
    }
    return amcm_comm_find(comm);
}

AMCM_FAST void amcm_fast_head(amcm_req_t *r, int coll, int mode, MPI_Comm comm,
                              amcm_comm_t *ce)
{
    amcm_req_head(r, (mode != AMCM_BLOCKING) ? offsetof(amcm_req_t, sbuf) : 0, coll, mode, comm,
                  ce);
    r->adt = AMC_BYTE;
}

/* The communicator, the type and the op of a reduction: its request's
 * header, type, op and element count; NULL where the general path decides. */
AMCM_FAST amcm_comm_t *amcm_fast_red(amcm_req_t *r, int coll, int mode, MPI_Comm comm,
                                     int count, MPI_Datatype dt, MPI_Op op)
{
    amcm_comm_t        *ce = amcm_fast_comm(coll, comm);
    const amcm_named_t *nm;
    amc_op_t            aop;

    if ((ce == NULL) || (count < 0) || ((nm = amcm_named_find(dt)) == NULL) ||
        !amcm_op_fast(op, nm, &aop)) {
        return NULL;
    }
    amcm_fast_head(r, coll, mode, comm, ce);
    r->adt   = (amc_datatype_t)nm->atype;
    r->op    = aop;
    r->count = (size_t)count;
    r->root  = 0;
    return ce;
}

/* n int counts (and displacements) of unit bytes as amcoll's, in c (and
 * d): what amcm_vlayout makes of a dense layout; 0 where it would pack (a
 * negative displacement) or report (a negative count, a block over
 * INT_MAX bytes), or the communicator is beyond the request's room. */
AMCM_FAST int amcm_fast_conv(size_t *c, size_t *d, int n, const int counts[],
                             const int displs[], size_t unit)
{
    int i;

    if ((n > AMCM_FAST_VMAX) || (counts == NULL) || ((d != NULL) && (displs == NULL))) {
        return 0;
    }
    for (i = 0; i < n; i++) {
        if ((counts[i] < 0) || ((size_t)counts[i] * unit > INT_MAX)) {
            return 0;
        }
        c[i] = (size_t)counts[i] * unit;
        if (d != NULL) {
            if ((counts[i] > 0) && (displs[i] < 0)) {
                return 0;
            }
            d[i] = (counts[i] > 0) ? (size_t)displs[i] * unit : 0;
        }
    }
    return 1;
}

/* One side of a v-form: counts and displacements in r->vbuf[k], k + 1. */
AMCM_FAST int amcm_fast_vside(amcm_req_t *r, int k, int n, const int counts[],
                              const int displs[], MPI_Datatype dt, size_t **c, size_t **d)
{
    const amcm_named_t *nm = amcm_named_find(dt);

    if ((nm == NULL) || !amcm_fast_conv(r->vbuf[k], r->vbuf[k + 1], n, counts, displs,
                                        (size_t)nm->size)) {
        return 0;
    }
    *c = r->vbuf[k];
    *d = r->vbuf[k + 1];
    return 1;
}

/* count elements of a predefined dt in bytes into *bytes; 0 if not one */
AMCM_FAST int amcm_fast_bytes(int count, MPI_Datatype dt, size_t *bytes)
{
    const amcm_named_t *nm;

    if ((count < 0) || ((nm = amcm_named_find(dt)) == NULL)) {
        return 0;
    }
    *bytes = (size_t)count * (size_t)nm->size;
    return 1;
}

AMCM_FAST int amcm_fast_barrier(amcm_req_t *r, int mode, MPI_Comm comm)
{
    amcm_comm_t *ce = amcm_fast_comm(AMCM_BARRIER, comm);

    if (ce == NULL) {
        return 0;
    }
    amcm_fast_head(r, AMCM_BARRIER, mode, comm, ce);
    return 1;
}

AMCM_FAST int amcm_fast_bcast(amcm_req_t *r, int mode, void *buf, int count, MPI_Datatype dt,
                              int root, MPI_Comm comm)
{
    amcm_comm_t *ce = amcm_fast_comm(AMCM_BCAST, comm);
    size_t       bytes;

    if ((ce == NULL) || ((unsigned)root >= (unsigned)ce->size) ||
        !amcm_fast_bytes(count, dt, &bytes)) {
        return 0;
    }
    amcm_fast_head(r, AMCM_BCAST, mode, comm, ce);
    r->rbuf  = buf;
    r->count = bytes;
    r->root  = root;
    return 1;
}

/* reduce, allreduce, scan, exscan, reduce_scatter_block */
AMCM_FAST int amcm_fast_reduce(amcm_req_t *r, int mode, int coll, const void *sb, void *rb,
                               int count, MPI_Datatype dt, MPI_Op op, int root,
                               MPI_Comm comm)
{
    amcm_comm_t *ce = amcm_fast_red(r, coll, mode, comm, count, dt, op);
    int          at_root;

    if ((ce == NULL) || ((coll == AMCM_REDUCE) && ((unsigned)root >= (unsigned)ce->size))) {
        return 0;
    }
    at_root = (coll != AMCM_REDUCE) || (ce->rank == root);
    r->root = root;
    r->sbuf = (at_root && (sb == MPI_IN_PLACE)) ? AMC_IN_PLACE : sb;
    r->rbuf = at_root ? rb : NULL;
    return 1;
}

AMCM_FAST int amcm_fast_reduce_scatter(amcm_req_t *r, int mode, const void *sb, void *rb,
                                       const int rcs[], MPI_Datatype dt, MPI_Op op,
                                       MPI_Comm comm)
{
    amcm_comm_t *ce = amcm_fast_red(r, AMCM_REDUCE_SCATTER, mode, comm, 0, dt, op);

    if ((ce == NULL) || !amcm_fast_conv(r->vbuf[0], NULL, ce->size, rcs, NULL, 1)) {
        return 0;
    }
    r->rc_  = r->vbuf[0];
    r->sbuf = (sb == MPI_IN_PLACE) ? AMC_IN_PLACE : sb;
    r->rbuf = rb;
    return 1;
}

/* gather, scatter, allgather, alltoall: per-rank bytes, as amcm_prep_rooted */
AMCM_FAST int amcm_fast_rooted(amcm_req_t *r, int mode, int coll, const void *sb, int sc,
                               MPI_Datatype st, void *rb, int rc, MPI_Datatype rt, int root,
                               MPI_Comm comm)
{
    amcm_comm_t *ce     = amcm_fast_comm(coll, comm);
    int          rooted = (coll == AMCM_GATHER) || (coll == AMCM_SCATTER), at_root;
    size_t       sbytes = 0, rbytes = 0;

    if ((ce == NULL) || (rooted && ((unsigned)root >= (unsigned)ce->size))) {
        return 0;
    }
    at_root = !rooted || (ce->rank == root);
    /* the sides this rank uses: the root's receive side of a scatter is
     * unused in place, a gather's send side in place, a leaf's other side */
    if ((coll == AMCM_SCATTER) ? ((at_root && !amcm_fast_bytes(sc, st, &sbytes)) ||
                                  ((!at_root || (rb != MPI_IN_PLACE)) &&
                                   !amcm_fast_bytes(rc, rt, &rbytes)))
                               : ((at_root && !amcm_fast_bytes(rc, rt, &rbytes)) ||
                                  ((!at_root || (sb != MPI_IN_PLACE)) &&
                                   !amcm_fast_bytes(sc, st, &sbytes)))) {
        return 0;
    }
    amcm_fast_head(r, coll, mode, comm, ce);
    r->root = root;
    if (coll == AMCM_SCATTER) {
        r->count = at_root ? sbytes : rbytes;
        r->sbuf  = at_root ? sb : NULL;
        r->rbuf  = (at_root && (rb == MPI_IN_PLACE)) ? AMC_IN_PLACE : rb;
    } else {
        r->count = at_root ? rbytes : sbytes;
        r->sbuf  = (at_root && (sb == MPI_IN_PLACE)) ? AMC_IN_PLACE : sb;
        r->rbuf  = at_root ? rb : NULL;
    }
    return 1;
}

/* gatherv, scatterv: the root's v-side (vc, vd, vt: receive for a gather,
 * send for a scatter) into *c, *d (NULL elsewhere), every rank's single
 * side (oc, ot at obuf) in *bytes unless in place at the root. */
AMCM_FAST int amcm_fast_rootedv(amcm_req_t *r, int mode, int coll, const int vc[],
                                const int vd[], MPI_Datatype vt, int oc, MPI_Datatype ot,
                                const void *obuf, int root, MPI_Comm comm, size_t **c,
                                size_t **d, size_t *bytes, int *in_place)
{
    amcm_comm_t *ce = amcm_fast_comm(coll, comm);
    int          at_root;

    if ((ce == NULL) || ((unsigned)root >= (unsigned)ce->size)) {
        return 0;
    }
    at_root   = (ce->rank == root);
    *in_place = at_root && (obuf == MPI_IN_PLACE);
    *c        = NULL;
    *d        = NULL;
    *bytes    = 0;
    if ((at_root && !amcm_fast_vside(r, 0, ce->size, vc, vd, vt, c, d)) ||
        (!*in_place && !amcm_fast_bytes(oc, ot, bytes))) {
        return 0;
    }
    amcm_fast_head(r, coll, mode, comm, ce);
    r->root = root;
    return 1;
}

AMCM_FAST int amcm_fast_gatherv(amcm_req_t *r, int mode, const void *sb, int sc,
                                MPI_Datatype st, void *rb, const int rcs[],
                                const int displs[], MPI_Datatype rt, int root, MPI_Comm comm)
{
    size_t *c, *d, bytes;
    int     in_place;

    if (!amcm_fast_rootedv(r, mode, AMCM_GATHERV, rcs, displs, rt, sc, st, sb, root, comm, &c,
                           &d, &bytes, &in_place)) {
        return 0;
    }
    r->rc_    = c;
    r->rd     = d;
    r->rbuf   = (c != NULL) ? rb : NULL;
    r->sbuf   = in_place ? AMC_IN_PLACE : sb;
    r->scount = in_place ? c[root] : bytes;
    return 1;
}

AMCM_FAST int amcm_fast_scatterv(amcm_req_t *r, int mode, const void *sb, const int scs[],
                                 const int displs[], MPI_Datatype st, void *rb, int rc,
                                 MPI_Datatype rt, int root, MPI_Comm comm)
{
    size_t *c, *d, bytes;
    int     in_place;

    if (!amcm_fast_rootedv(r, mode, AMCM_SCATTERV, scs, displs, st, rc, rt, rb, root, comm, &c,
                           &d, &bytes, &in_place)) {
        return 0;
    }
    r->sc    = c;
    r->sd    = d;
    r->sbuf  = (c != NULL) ? sb : NULL;
    r->rbuf  = in_place ? AMC_IN_PLACE : rb;
    r->count = in_place ? c[root] : bytes;
    return 1;
}

AMCM_FAST int amcm_fast_allgatherv(amcm_req_t *r, int mode, const void *sb, int sc,
                                   MPI_Datatype st, void *rb, const int rcs[],
                                   const int displs[], MPI_Datatype rt, MPI_Comm comm)
{
    amcm_comm_t *ce       = amcm_fast_comm(AMCM_ALLGATHERV, comm);
    int          in_place = (sb == MPI_IN_PLACE);
    size_t       sbytes   = 0, *c, *d;

    if ((ce == NULL) || !amcm_fast_vside(r, 0, ce->size, rcs, displs, rt, &c, &d) ||
        (!in_place && !amcm_fast_bytes(sc, st, &sbytes))) {
        return 0;
    }
    amcm_fast_head(r, AMCM_ALLGATHERV, mode, comm, ce);
    r->rc_    = c;
    r->rd     = d;
    r->rbuf   = rb;
    r->sbuf   = in_place ? AMC_IN_PLACE : sb;
    r->scount = in_place ? c[ce->rank] : sbytes;
    return 1;
}

AMCM_FAST int amcm_fast_alltoallv(amcm_req_t *r, int mode, const void *sb, const int scs[],
                                  const int sds[], MPI_Datatype st, void *rb,
                                  const int rcs[], const int rds[], MPI_Datatype rt,
                                  MPI_Comm comm)
{
    amcm_comm_t *ce       = amcm_fast_comm(AMCM_ALLTOALLV, comm);
    int          in_place = (sb == MPI_IN_PLACE);
    size_t      *c = NULL, *d = NULL, *rc, *rd;

    if ((ce == NULL) || !amcm_fast_vside(r, 0, ce->size, rcs, rds, rt, &rc, &rd) ||
        (!in_place && !amcm_fast_vside(r, 2, ce->size, scs, sds, st, &c, &d))) {
        return 0;
    }
    amcm_fast_head(r, AMCM_ALLTOALLV, mode, comm, ce);
    r->sc   = c;
    r->sd   = d;
    r->rc_  = rc;
    r->rd   = rd;
    r->rbuf = rb;
    r->sbuf = in_place ? AMC_IN_PLACE : sb;
    return 1;
}

/* 1 when the blocking call is done (rc reported): else amcoll refused the
 * start for back-pressure, nothing started, and the general path retries. */
AMCM_FAST int amcm_fast_done(int coll, MPI_Comm comm, int rc, int *ret)
{
    if ((rc == AMC_ERR_NO_MEMORY) && ((amcm_g.nactive != 0) || (amcm_g.detached != NULL))) {
        return 0;
    }
    amcm_bump(&amcm_g.routed[coll][AMCM_BLOCKING]);
    amcm_bump(&amcm_g.routed_fast[coll]);
    *ret = (rc == AMC_SUCCESS) ? MPI_SUCCESS : amcm_raise(comm, rc);
    return 1;
}

/* ------------------------------------------------------------------ wrappers */

/* A call in each mode: its fast path (fast, on r_), else the general
 * preparation (prep) and run, else MPI's own (pmpi). */
#define AMCM_B(coll, fast, prep, pmpi)                                                         \
    do {                                                                                       \
        int w_;                                                                                \
        {   /* its own request: one whose address no call takes stays in registers */          \
            amcm_req_t r_;                                                                     \
            if ((fast) && amcm_fast_done(coll, comm, amcm_issue_as(&r_, coll, B), &w_)) {      \
                return w_;                                                                     \
            }                                                                                  \
        }                                                                                      \
        amcm_req_t r_;                                                                         \
        w_ = prep;                                                                             \
        if ((w_ != AMCM_ROUTE) && (w_ < AMCM_FAIL)) {                                          \
            amcm_bump(&amcm_g.fell[coll][w_]);                                                 \
            return pmpi;                                                                       \
        }                                                                                      \
        return amcm_run_blocking(&r_, w_);                                                     \
    } while (0)

/* The fast path's start is inlined with its mode (NB or P); a start that
 * amcoll refuses for back-pressure (nothing started), or a NULL request
 * pointer, goes to the general run, which retries or reports it. */
#define AMCM_NB(coll, mode, fast, prep, pmpi, request)                                         \
    do {                                                                                       \
        amcm_req_t *r_ = amcm_g.on ? amcm_req_get() : NULL;                                    \
        int         w_;                                                                        \
        if (r_ == NULL) {                                                                      \
            amcm_bump(&amcm_g.fell[coll][AMCM_WHY_OFF]);                                       \
            if (amcm_g.on) {                                                                   \
                return amcm_raise(comm, AMC_ERR_NO_MEMORY);                                    \
            }                                                                                  \
            return pmpi;                                                                       \
        }                                                                                      \
        if (fast) {                                                                            \
            amcm_bump(&amcm_g.routed_fast[coll]);                                              \
            w_ = (request != NULL) ? amcm_issue_as(r_, coll, mode) : AMC_ERR_NO_MEMORY;        \
            return (w_ != AMC_ERR_NO_MEMORY) ? amcm_started(r_, w_, request)                   \
                                             : amcm_run_started(r_, AMCM_ROUTE, request);      \
        }                                                                                      \
        w_ = prep;                                                                             \
        if ((w_ != AMCM_ROUTE) && (w_ < AMCM_FAIL)) {                                          \
            amcm_req_free(r_);                                                                 \
            amcm_bump(&amcm_g.fell[coll][w_]);                                                 \
            return pmpi;                                                                       \
        }                                                                                      \
        return amcm_run_started(r_, w_, request);                                              \
    } while (0)

#define B  AMCM_BLOCKING
#define NB AMCM_NONBLOCKING
#define P  AMCM_PERSISTENT

/* ------------------------------------------------------------------ collectives */

int MPI_Barrier(MPI_Comm comm)
{
    AMCM_B(AMCM_BARRIER, amcm_fast_barrier(&r_, B, comm), amcm_prep_barrier(&r_, B, comm),
           PMPI_Barrier(comm));
}
int MPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
    AMCM_NB(AMCM_BARRIER, NB, amcm_fast_barrier(r_, NB, comm), amcm_prep_barrier(r_, NB, comm),
            PMPI_Ibarrier(comm, request), request);
}
int MPI_Bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm)
{
    AMCM_B(AMCM_BCAST, amcm_fast_bcast(&r_, B, buf, count, dt, root, comm),
           amcm_prep_bcast(&r_, B, buf, count, dt, root, comm),
           PMPI_Bcast(buf, count, dt, root, comm));
}
int MPI_Ibcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm,
               MPI_Request *request)
{
    AMCM_NB(AMCM_BCAST, NB, amcm_fast_bcast(r_, NB, buf, count, dt, root, comm),
            amcm_prep_bcast(r_, NB, buf, count, dt, root, comm),
            PMPI_Ibcast(buf, count, dt, root, comm, request), request);
}
int MPI_Reduce(const void *sb, void *rb, int count, MPI_Datatype dt, MPI_Op op, int root,
               MPI_Comm comm)
{
    AMCM_B(AMCM_REDUCE, amcm_fast_reduce(&r_, B, AMCM_REDUCE, sb, rb, count, dt, op, root, comm),
           amcm_prep_reduce_any(&r_, B, AMCM_REDUCE, sb, rb, count, dt, op, root, comm),
           PMPI_Reduce(sb, rb, count, dt, op, root, comm));
}
int MPI_Ireduce(const void *sb, void *rb, int count, MPI_Datatype dt, MPI_Op op, int root,
                MPI_Comm comm, MPI_Request *request)
{
    AMCM_NB(AMCM_REDUCE, NB,
            amcm_fast_reduce(r_, NB, AMCM_REDUCE, sb, rb, count, dt, op, root, comm),
            amcm_prep_reduce_any(r_, NB, AMCM_REDUCE, sb, rb, count, dt, op, root, comm),
            PMPI_Ireduce(sb, rb, count, dt, op, root, comm, request), request);
}
int MPI_Allreduce(const void *sb, void *rb, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
    AMCM_B(AMCM_ALLREDUCE,
           amcm_fast_reduce(&r_, B, AMCM_ALLREDUCE, sb, rb, count, dt, op, 0, comm),
           amcm_prep_reduce_any(&r_, B, AMCM_ALLREDUCE, sb, rb, count, dt, op, 0, comm),
           PMPI_Allreduce(sb, rb, count, dt, op, comm));
}
int MPI_Iallreduce(const void *sb, void *rb, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
                   MPI_Request *request)
{
    AMCM_NB(AMCM_ALLREDUCE, NB,
            amcm_fast_reduce(r_, NB, AMCM_ALLREDUCE, sb, rb, count, dt, op, 0, comm),
            amcm_prep_reduce_any(r_, NB, AMCM_ALLREDUCE, sb, rb, count, dt, op, 0, comm),
            PMPI_Iallreduce(sb, rb, count, dt, op, comm, request), request);
}
int MPI_Scan(const void *sb, void *rb, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
    AMCM_B(AMCM_SCAN, amcm_fast_reduce(&r_, B, AMCM_SCAN, sb, rb, count, dt, op, 0, comm),
           amcm_prep_reduce_any(&r_, B, AMCM_SCAN, sb, rb, count, dt, op, 0, comm),
           PMPI_Scan(sb, rb, count, dt, op, comm));
}
int MPI_Iscan(const void *sb, void *rb, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
              MPI_Request *request)
{
    AMCM_NB(AMCM_SCAN, NB, amcm_fast_reduce(r_, NB, AMCM_SCAN, sb, rb, count, dt, op, 0, comm),
            amcm_prep_reduce_any(r_, NB, AMCM_SCAN, sb, rb, count, dt, op, 0, comm),
            PMPI_Iscan(sb, rb, count, dt, op, comm, request), request);
}
int MPI_Exscan(const void *sb, void *rb, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
    AMCM_B(AMCM_EXSCAN, amcm_fast_reduce(&r_, B, AMCM_EXSCAN, sb, rb, count, dt, op, 0, comm),
           amcm_prep_reduce_any(&r_, B, AMCM_EXSCAN, sb, rb, count, dt, op, 0, comm),
           PMPI_Exscan(sb, rb, count, dt, op, comm));
}
int MPI_Iexscan(const void *sb, void *rb, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
                MPI_Request *request)
{
    AMCM_NB(AMCM_EXSCAN, NB, amcm_fast_reduce(r_, NB, AMCM_EXSCAN, sb, rb, count, dt, op, 0, comm),
            amcm_prep_reduce_any(r_, NB, AMCM_EXSCAN, sb, rb, count, dt, op, 0, comm),
            PMPI_Iexscan(sb, rb, count, dt, op, comm, request), request);
}
int MPI_Reduce_scatter_block(const void *sb, void *rb, int rc, MPI_Datatype dt, MPI_Op op,
                             MPI_Comm comm)
{
    AMCM_B(AMCM_REDUCE_SCATTER_BLOCK,
           amcm_fast_reduce(&r_, B, AMCM_REDUCE_SCATTER_BLOCK, sb, rb, rc, dt, op, 0, comm),
           amcm_prep_reduce_scatter(&r_, B, AMCM_REDUCE_SCATTER_BLOCK, sb, rb, rc, NULL, dt, op,
                                    comm),
           PMPI_Reduce_scatter_block(sb, rb, rc, dt, op, comm));
}
int MPI_Ireduce_scatter_block(const void *sb, void *rb, int rc, MPI_Datatype dt, MPI_Op op,
                              MPI_Comm comm, MPI_Request *request)
{
    AMCM_NB(AMCM_REDUCE_SCATTER_BLOCK, NB,
            amcm_fast_reduce(r_, NB, AMCM_REDUCE_SCATTER_BLOCK, sb, rb, rc, dt, op, 0, comm),
            amcm_prep_reduce_scatter(r_, NB, AMCM_REDUCE_SCATTER_BLOCK, sb, rb, rc, NULL, dt, op,
                                     comm),
            PMPI_Ireduce_scatter_block(sb, rb, rc, dt, op, comm, request), request);
}
int MPI_Reduce_scatter(const void *sb, void *rb, const int rcs[], MPI_Datatype dt, MPI_Op op,
                       MPI_Comm comm)
{
    AMCM_B(AMCM_REDUCE_SCATTER, amcm_fast_reduce_scatter(&r_, B, sb, rb, rcs, dt, op, comm),
           amcm_prep_reduce_scatter(&r_, B, AMCM_REDUCE_SCATTER, sb, rb, 0, rcs, dt, op, comm),
           PMPI_Reduce_scatter(sb, rb, rcs, dt, op, comm));
}
int MPI_Ireduce_scatter(const void *sb, void *rb, const int rcs[], MPI_Datatype dt, MPI_Op op,
                        MPI_Comm comm, MPI_Request *request)
{
    AMCM_NB(AMCM_REDUCE_SCATTER, NB, amcm_fast_reduce_scatter(r_, NB, sb, rb, rcs, dt, op, comm),
            amcm_prep_reduce_scatter(r_, NB, AMCM_REDUCE_SCATTER, sb, rb, 0, rcs, dt, op, comm),
            PMPI_Ireduce_scatter(sb, rb, rcs, dt, op, comm, request), request);
}
int MPI_Gather(const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt,
               int root, MPI_Comm comm)
{
    AMCM_B(AMCM_GATHER, amcm_fast_rooted(&r_, B, AMCM_GATHER, sb, sc, st, rb, rc, rt, root, comm),
           amcm_prep_rooted(&r_, B, AMCM_GATHER, sb, sc, st, rb, rc, rt, root, comm),
           PMPI_Gather(sb, sc, st, rb, rc, rt, root, comm));
}
int MPI_Igather(const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt,
                int root, MPI_Comm comm, MPI_Request *request)
{
    AMCM_NB(AMCM_GATHER, NB,
            amcm_fast_rooted(r_, NB, AMCM_GATHER, sb, sc, st, rb, rc, rt, root, comm),
            amcm_prep_rooted(r_, NB, AMCM_GATHER, sb, sc, st, rb, rc, rt, root, comm),
            PMPI_Igather(sb, sc, st, rb, rc, rt, root, comm, request), request);
}
int MPI_Scatter(const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt,
                int root, MPI_Comm comm)
{
    AMCM_B(AMCM_SCATTER,
           amcm_fast_rooted(&r_, B, AMCM_SCATTER, sb, sc, st, rb, rc, rt, root, comm),
           amcm_prep_rooted(&r_, B, AMCM_SCATTER, sb, sc, st, rb, rc, rt, root, comm),
           PMPI_Scatter(sb, sc, st, rb, rc, rt, root, comm));
}
int MPI_Iscatter(const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt,
                 int root, MPI_Comm comm, MPI_Request *request)
{
    AMCM_NB(AMCM_SCATTER, NB,
            amcm_fast_rooted(r_, NB, AMCM_SCATTER, sb, sc, st, rb, rc, rt, root, comm),
            amcm_prep_rooted(r_, NB, AMCM_SCATTER, sb, sc, st, rb, rc, rt, root, comm),
            PMPI_Iscatter(sb, sc, st, rb, rc, rt, root, comm, request), request);
}
int MPI_Allgather(const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt,
                  MPI_Comm comm)
{
    AMCM_B(AMCM_ALLGATHER,
           amcm_fast_rooted(&r_, B, AMCM_ALLGATHER, sb, sc, st, rb, rc, rt, 0, comm),
           amcm_prep_rooted(&r_, B, AMCM_ALLGATHER, sb, sc, st, rb, rc, rt, 0, comm),
           PMPI_Allgather(sb, sc, st, rb, rc, rt, comm));
}
int MPI_Iallgather(const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt,
                   MPI_Comm comm, MPI_Request *request)
{
    AMCM_NB(AMCM_ALLGATHER, NB,
            amcm_fast_rooted(r_, NB, AMCM_ALLGATHER, sb, sc, st, rb, rc, rt, 0, comm),
            amcm_prep_rooted(r_, NB, AMCM_ALLGATHER, sb, sc, st, rb, rc, rt, 0, comm),
            PMPI_Iallgather(sb, sc, st, rb, rc, rt, comm, request), request);
}
int MPI_Alltoall(const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt,
                 MPI_Comm comm)
{
    AMCM_B(AMCM_ALLTOALL, amcm_fast_rooted(&r_, B, AMCM_ALLTOALL, sb, sc, st, rb, rc, rt, 0, comm),
           amcm_prep_rooted(&r_, B, AMCM_ALLTOALL, sb, sc, st, rb, rc, rt, 0, comm),
           PMPI_Alltoall(sb, sc, st, rb, rc, rt, comm));
}
int MPI_Ialltoall(const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt,
                  MPI_Comm comm, MPI_Request *request)
{
    AMCM_NB(AMCM_ALLTOALL, NB,
            amcm_fast_rooted(r_, NB, AMCM_ALLTOALL, sb, sc, st, rb, rc, rt, 0, comm),
            amcm_prep_rooted(r_, NB, AMCM_ALLTOALL, sb, sc, st, rb, rc, rt, 0, comm),
            PMPI_Ialltoall(sb, sc, st, rb, rc, rt, comm, request), request);
}
int MPI_Gatherv(const void *sb, int sc, MPI_Datatype st, void *rb, const int rcs[],
                const int displs[], MPI_Datatype rt, int root, MPI_Comm comm)
{
    AMCM_B(AMCM_GATHERV, amcm_fast_gatherv(&r_, B, sb, sc, st, rb, rcs, displs, rt, root, comm),
           amcm_prep_gatherv(&r_, B, sb, sc, st, rb, rcs, displs, rt, root, comm),
           PMPI_Gatherv(sb, sc, st, rb, rcs, displs, rt, root, comm));
}
int MPI_Igatherv(const void *sb, int sc, MPI_Datatype st, void *rb, const int rcs[],
                 const int displs[], MPI_Datatype rt, int root, MPI_Comm comm,
                 MPI_Request *request)
{
    AMCM_NB(AMCM_GATHERV, NB,
            amcm_fast_gatherv(r_, NB, sb, sc, st, rb, rcs, displs, rt, root, comm),
            amcm_prep_gatherv(r_, NB, sb, sc, st, rb, rcs, displs, rt, root, comm),
            PMPI_Igatherv(sb, sc, st, rb, rcs, displs, rt, root, comm, request), request);
}
int MPI_Scatterv(const void *sb, const int scs[], const int displs[], MPI_Datatype st, void *rb,
                 int rc, MPI_Datatype rt, int root, MPI_Comm comm)
{
    AMCM_B(AMCM_SCATTERV, amcm_fast_scatterv(&r_, B, sb, scs, displs, st, rb, rc, rt, root, comm),
           amcm_prep_scatterv(&r_, B, sb, scs, displs, st, rb, rc, rt, root, comm),
           PMPI_Scatterv(sb, scs, displs, st, rb, rc, rt, root, comm));
}
int MPI_Iscatterv(const void *sb, const int scs[], const int displs[], MPI_Datatype st, void *rb,
                  int rc, MPI_Datatype rt, int root, MPI_Comm comm, MPI_Request *request)
{
    AMCM_NB(AMCM_SCATTERV, NB,
            amcm_fast_scatterv(r_, NB, sb, scs, displs, st, rb, rc, rt, root, comm),
            amcm_prep_scatterv(r_, NB, sb, scs, displs, st, rb, rc, rt, root, comm),
            PMPI_Iscatterv(sb, scs, displs, st, rb, rc, rt, root, comm, request), request);
}
int MPI_Allgatherv(const void *sb, int sc, MPI_Datatype st, void *rb, const int rcs[],
                   const int displs[], MPI_Datatype rt, MPI_Comm comm)
{
    AMCM_B(AMCM_ALLGATHERV, amcm_fast_allgatherv(&r_, B, sb, sc, st, rb, rcs, displs, rt, comm),
           amcm_prep_allgatherv(&r_, B, sb, sc, st, rb, rcs, displs, rt, comm),
           PMPI_Allgatherv(sb, sc, st, rb, rcs, displs, rt, comm));
}
int MPI_Iallgatherv(const void *sb, int sc, MPI_Datatype st, void *rb, const int rcs[],
                    const int displs[], MPI_Datatype rt, MPI_Comm comm, MPI_Request *request)
{
    AMCM_NB(AMCM_ALLGATHERV, NB,
            amcm_fast_allgatherv(r_, NB, sb, sc, st, rb, rcs, displs, rt, comm),
            amcm_prep_allgatherv(r_, NB, sb, sc, st, rb, rcs, displs, rt, comm),
            PMPI_Iallgatherv(sb, sc, st, rb, rcs, displs, rt, comm, request), request);
}
int MPI_Alltoallv(const void *sb, const int scs[], const int sds[], MPI_Datatype st, void *rb,
                  const int rcs[], const int rds[], MPI_Datatype rt, MPI_Comm comm)
{
    AMCM_B(AMCM_ALLTOALLV, amcm_fast_alltoallv(&r_, B, sb, scs, sds, st, rb, rcs, rds, rt, comm),
           amcm_prep_alltoallvw(&r_, B, AMCM_ALLTOALLV, sb, scs, sds, st, NULL, rb, rcs, rds, rt,
                                NULL, comm),
           PMPI_Alltoallv(sb, scs, sds, st, rb, rcs, rds, rt, comm));
}
int MPI_Ialltoallv(const void *sb, const int scs[], const int sds[], MPI_Datatype st, void *rb,
                   const int rcs[], const int rds[], MPI_Datatype rt, MPI_Comm comm,
                   MPI_Request *request)
{
    AMCM_NB(AMCM_ALLTOALLV, NB,
            amcm_fast_alltoallv(r_, NB, sb, scs, sds, st, rb, rcs, rds, rt, comm),
            amcm_prep_alltoallvw(r_, NB, AMCM_ALLTOALLV, sb, scs, sds, st, NULL, rb, rcs, rds, rt,
                                 NULL, comm),
            PMPI_Ialltoallv(sb, scs, sds, st, rb, rcs, rds, rt, comm, request), request);
}
int MPI_Alltoallw(const void *sb, const int scs[], const int sds[], const MPI_Datatype sts[],
                  void *rb, const int rcs[], const int rds[], const MPI_Datatype rts[],
                  MPI_Comm comm)
{
    AMCM_B(AMCM_ALLTOALLW, 0,
           amcm_prep_alltoallvw(&r_, B, AMCM_ALLTOALLW, sb, scs, sds, MPI_DATATYPE_NULL, sts, rb,
                                rcs, rds, MPI_DATATYPE_NULL, rts, comm),
           PMPI_Alltoallw(sb, scs, sds, sts, rb, rcs, rds, rts, comm));
}
int MPI_Ialltoallw(const void *sb, const int scs[], const int sds[], const MPI_Datatype sts[],
                   void *rb, const int rcs[], const int rds[], const MPI_Datatype rts[],
                   MPI_Comm comm, MPI_Request *request)
{
    AMCM_NB(AMCM_ALLTOALLW, NB, 0,
            amcm_prep_alltoallvw(r_, NB, AMCM_ALLTOALLW, sb, scs, sds, MPI_DATATYPE_NULL, sts, rb,
                                 rcs, rds, MPI_DATATYPE_NULL, rts, comm),
            PMPI_Ialltoallw(sb, scs, sds, sts, rb, rcs, rds, rts, comm, request), request);
}

/* ------------------------------------------------------------------ persistent */

/* MPIX_*_init (Open MPI 4.1) or MPI_*_init (MPI-4): mpi/impl.h */
#ifdef AMCM_PERSISTENT_API
int AMCM_PN(Barrier_init)(MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    AMCM_NB(AMCM_BARRIER, P, amcm_fast_barrier(r_, P, comm), amcm_prep_barrier(r_, P, comm),
            AMCM_PPN(Barrier_init)(comm, info, request), request);
}
int AMCM_PN(Bcast_init)(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm,
                        MPI_Info info, MPI_Request *request)
{
    AMCM_NB(AMCM_BCAST, P, amcm_fast_bcast(r_, P, buf, count, dt, root, comm),
            amcm_prep_bcast(r_, P, buf, count, dt, root, comm),
            AMCM_PPN(Bcast_init)(buf, count, dt, root, comm, info, request), request);
}
int AMCM_PN(Reduce_init)(const void *sb, void *rb, int count, MPI_Datatype dt, MPI_Op op, int root,
                         MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    AMCM_NB(AMCM_REDUCE, P, amcm_fast_reduce(r_, P, AMCM_REDUCE, sb, rb, count, dt, op, root, comm),
            amcm_prep_reduce_any(r_, P, AMCM_REDUCE, sb, rb, count, dt, op, root, comm),
            AMCM_PPN(Reduce_init)(sb, rb, count, dt, op, root, comm, info, request), request);
}
int AMCM_PN(Allreduce_init)(const void *sb, void *rb, int count, MPI_Datatype dt, MPI_Op op,
                            MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    AMCM_NB(AMCM_ALLREDUCE, P,
            amcm_fast_reduce(r_, P, AMCM_ALLREDUCE, sb, rb, count, dt, op, 0, comm),
            amcm_prep_reduce_any(r_, P, AMCM_ALLREDUCE, sb, rb, count, dt, op, 0, comm),
            AMCM_PPN(Allreduce_init)(sb, rb, count, dt, op, comm, info, request), request);
}
int AMCM_PN(Scan_init)(const void *sb, void *rb, int count, MPI_Datatype dt, MPI_Op op,
                       MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    AMCM_NB(AMCM_SCAN, P, amcm_fast_reduce(r_, P, AMCM_SCAN, sb, rb, count, dt, op, 0, comm),
            amcm_prep_reduce_any(r_, P, AMCM_SCAN, sb, rb, count, dt, op, 0, comm),
            AMCM_PPN(Scan_init)(sb, rb, count, dt, op, comm, info, request), request);
}
int AMCM_PN(Exscan_init)(const void *sb, void *rb, int count, MPI_Datatype dt, MPI_Op op,
                         MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    AMCM_NB(AMCM_EXSCAN, P, amcm_fast_reduce(r_, P, AMCM_EXSCAN, sb, rb, count, dt, op, 0, comm),
            amcm_prep_reduce_any(r_, P, AMCM_EXSCAN, sb, rb, count, dt, op, 0, comm),
            AMCM_PPN(Exscan_init)(sb, rb, count, dt, op, comm, info, request), request);
}
int AMCM_PN(Reduce_scatter_block_init)(const void *sb, void *rb, int rc, MPI_Datatype dt,
                                       MPI_Op op, MPI_Comm comm, MPI_Info info,
                                       MPI_Request *request)
{
    AMCM_NB(AMCM_REDUCE_SCATTER_BLOCK, P,
            amcm_fast_reduce(r_, P, AMCM_REDUCE_SCATTER_BLOCK, sb, rb, rc, dt, op, 0, comm),
            amcm_prep_reduce_scatter(r_, P, AMCM_REDUCE_SCATTER_BLOCK, sb, rb, rc, NULL, dt, op,
                                     comm),
            AMCM_PPN(Reduce_scatter_block_init)(sb, rb, rc, dt, op, comm, info, request), request);
}
int AMCM_PN(Reduce_scatter_init)(const void *sb, void *rb, const int rcs[], MPI_Datatype dt,
                                 MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    AMCM_NB(AMCM_REDUCE_SCATTER, P, amcm_fast_reduce_scatter(r_, P, sb, rb, rcs, dt, op, comm),
            amcm_prep_reduce_scatter(r_, P, AMCM_REDUCE_SCATTER, sb, rb, 0, rcs, dt, op, comm),
            AMCM_PPN(Reduce_scatter_init)(sb, rb, rcs, dt, op, comm, info, request), request);
}
int AMCM_PN(Gather_init)(const void *sb, int sc, MPI_Datatype st, void *rb, int rc,
                         MPI_Datatype rt, int root, MPI_Comm comm, MPI_Info info,
                         MPI_Request *request)
{
    AMCM_NB(AMCM_GATHER, P,
            amcm_fast_rooted(r_, P, AMCM_GATHER, sb, sc, st, rb, rc, rt, root, comm),
            amcm_prep_rooted(r_, P, AMCM_GATHER, sb, sc, st, rb, rc, rt, root, comm),
            AMCM_PPN(Gather_init)(sb, sc, st, rb, rc, rt, root, comm, info, request), request);
}
int AMCM_PN(Scatter_init)(const void *sb, int sc, MPI_Datatype st, void *rb, int rc,
                          MPI_Datatype rt, int root, MPI_Comm comm, MPI_Info info,
                          MPI_Request *request)
{
    AMCM_NB(AMCM_SCATTER, P,
            amcm_fast_rooted(r_, P, AMCM_SCATTER, sb, sc, st, rb, rc, rt, root, comm),
            amcm_prep_rooted(r_, P, AMCM_SCATTER, sb, sc, st, rb, rc, rt, root, comm),
            AMCM_PPN(Scatter_init)(sb, sc, st, rb, rc, rt, root, comm, info, request), request);
}
int AMCM_PN(Allgather_init)(const void *sb, int sc, MPI_Datatype st, void *rb, int rc,
                            MPI_Datatype rt, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    AMCM_NB(AMCM_ALLGATHER, P,
            amcm_fast_rooted(r_, P, AMCM_ALLGATHER, sb, sc, st, rb, rc, rt, 0, comm),
            amcm_prep_rooted(r_, P, AMCM_ALLGATHER, sb, sc, st, rb, rc, rt, 0, comm),
            AMCM_PPN(Allgather_init)(sb, sc, st, rb, rc, rt, comm, info, request), request);
}
int AMCM_PN(Alltoall_init)(const void *sb, int sc, MPI_Datatype st, void *rb, int rc,
                           MPI_Datatype rt, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    AMCM_NB(AMCM_ALLTOALL, P,
            amcm_fast_rooted(r_, P, AMCM_ALLTOALL, sb, sc, st, rb, rc, rt, 0, comm),
            amcm_prep_rooted(r_, P, AMCM_ALLTOALL, sb, sc, st, rb, rc, rt, 0, comm),
            AMCM_PPN(Alltoall_init)(sb, sc, st, rb, rc, rt, comm, info, request), request);
}
int AMCM_PN(Gatherv_init)(const void *sb, int sc, MPI_Datatype st, void *rb, const int rcs[],
                          const int displs[], MPI_Datatype rt, int root, MPI_Comm comm,
                          MPI_Info info, MPI_Request *request)
{
    AMCM_NB(AMCM_GATHERV, P, amcm_fast_gatherv(r_, P, sb, sc, st, rb, rcs, displs, rt, root, comm),
            amcm_prep_gatherv(r_, P, sb, sc, st, rb, rcs, displs, rt, root, comm),
            AMCM_PPN(Gatherv_init)(sb, sc, st, rb, rcs, displs, rt, root, comm, info, request),
            request);
}
int AMCM_PN(Scatterv_init)(const void *sb, const int scs[], const int displs[], MPI_Datatype st,
                           void *rb, int rc, MPI_Datatype rt, int root, MPI_Comm comm,
                           MPI_Info info, MPI_Request *request)
{
    AMCM_NB(AMCM_SCATTERV, P,
            amcm_fast_scatterv(r_, P, sb, scs, displs, st, rb, rc, rt, root, comm),
            amcm_prep_scatterv(r_, P, sb, scs, displs, st, rb, rc, rt, root, comm),
            AMCM_PPN(Scatterv_init)(sb, scs, displs, st, rb, rc, rt, root, comm, info, request),
            request);
}
int AMCM_PN(Allgatherv_init)(const void *sb, int sc, MPI_Datatype st, void *rb, const int rcs[],
                             const int displs[], MPI_Datatype rt, MPI_Comm comm, MPI_Info info,
                             MPI_Request *request)
{
    AMCM_NB(AMCM_ALLGATHERV, P, amcm_fast_allgatherv(r_, P, sb, sc, st, rb, rcs, displs, rt, comm),
            amcm_prep_allgatherv(r_, P, sb, sc, st, rb, rcs, displs, rt, comm),
            AMCM_PPN(Allgatherv_init)(sb, sc, st, rb, rcs, displs, rt, comm, info, request),
            request);
}
int AMCM_PN(Alltoallv_init)(const void *sb, const int scs[], const int sds[], MPI_Datatype st,
                            void *rb, const int rcs[], const int rds[], MPI_Datatype rt,
                            MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    AMCM_NB(AMCM_ALLTOALLV, P, amcm_fast_alltoallv(r_, P, sb, scs, sds, st, rb, rcs, rds, rt, comm),
            amcm_prep_alltoallvw(r_, P, AMCM_ALLTOALLV, sb, scs, sds, st, NULL, rb, rcs, rds, rt,
                                 NULL, comm),
            AMCM_PPN(Alltoallv_init)(sb, scs, sds, st, rb, rcs, rds, rt, comm, info, request),
            request);
}
int AMCM_PN(Alltoallw_init)(const void *sb, const int scs[], const int sds[],
                            const MPI_Datatype sts[], void *rb, const int rcs[], const int rds[],
                            const MPI_Datatype rts[], MPI_Comm comm, MPI_Info info,
                            MPI_Request *request)
{
    AMCM_NB(AMCM_ALLTOALLW, P, 0,
            amcm_prep_alltoallvw(r_, P, AMCM_ALLTOALLW, sb, scs, sds, MPI_DATATYPE_NULL, sts, rb,
                                 rcs, rds, MPI_DATATYPE_NULL, rts, comm),
            AMCM_PPN(Alltoallw_init)(sb, scs, sds, sts, rb, rcs, rds, rts, comm, info, request),
            request);
}
#endif
