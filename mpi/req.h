/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * amcoll under MPI: one routed call (its amcoll arguments, the temporaries
 * of a non-contiguous layout, its state), its amcoll call, and the packing
 * and unpacking of its temporaries.
 */
#ifndef AMCM_REQ_H
#define AMCM_REQ_H

#include "mpi/comms.h"
#include "mpi/dtype.h"

#include <string.h>

#pragma GCC visibility push(hidden)

/* One block of a user buffer that must be packed into / unpacked from a
 * contiguous temporary. */
typedef struct {
    int          count;
    MPI_Datatype dt;
    MPI_Aint     uoff; /* bytes from the user buffer */
    size_t       toff; /* bytes from the temporary */
    size_t       bytes;
    int          owned; /* dt is our dup (non-blocking / persistent): freed with the request */
} amcm_blk_t;

typedef struct {
    char       *tmp;
    char       *ubuf;
    int         n;
    amcm_blk_t *b;
    amcm_blk_t  one;
} amcm_job_t;

/* Communicators up to this size run the v-forms' fast path (their counts
 * converted in the request); larger ones take the general path. */
#define AMCM_FAST_VMAX 32

/* One routed call: its amcoll arguments, the temporaries, and for the
 * non-blocking and persistent forms the MPI request that stands for it (a
 * generalized request, so the handle is a real one of the MPI library). */
typedef struct amcm_req {
    int           coll;  /* AMCM_* */
    int           mode;
    MPI_Comm      comm;
    amcm_comm_t  *ce;
    amc_request_t areq;
    int           active, done, rc, detached;
    int           npack, nunpack, nmem;
    struct amcm_req *next_detached;
    amcm_ubind_t  *ubind; /* the user op it started with, held until released */
    /* a persistent call's own amcoll communicator, a dup of ce->ac made at
     * its init (amcm_issue_as): MPI-4 matches persistent collectives at
     * their init, so their starts may come in any order on each rank and
     * never match the communicator's blocking and non-blocking calls,
     * where amcoll matches the starts on one communicator by their order */
    amc_comm_t     pac;
    /* amcoll call (from here to pack: cleared by amcm_decide; a fast path
     * sets what its collective's call reads, and clears only what is above) */
    const void    *sbuf;
    void          *rbuf;
    size_t         count, scount;
    amc_datatype_t adt;
    amc_op_t       op;
    int            root;
    size_t        *sc, *sd, *rc_, *rd;
    /* temporaries: set up only when used (amcm_decide clears what is above) */
    amcm_job_t     pack[2];
    amcm_job_t     unpack;
    void          *mem[12]; /* freed with the request */
    /* MPI_Comm_idup: MPI's request, where MPI writes the new handle, and
     * amcoll's communicator once its agreement completes */
    MPI_Request    inner;
    MPI_Comm      *newcomm;
    amc_comm_t     newac;
    int            mpirc;
    /* a fast path's v-form counts and displacements (amcoll's size_t) */
    size_t         vbuf[4][AMCM_FAST_VMAX];
    /* the MPI handle: kept from one use of the request to the next (the
     * pool, requests.c), so it is outside what amcm_decide clears */
    MPI_Request    mreq;
    int            live; /* handed to the user, not yet completed or freed */
} amcm_req_t;

/* A request's header for a call: cleared up to clear bytes (the state a
 * request outliving the call needs, and for the general path the amcoll
 * call too: offsetof sbuf or pack), then what every call has. */
static inline void amcm_req_head(amcm_req_t *r, size_t clear, int coll, int mode, MPI_Comm comm,
                                 amcm_comm_t *ce)
{
    if (clear > 0) {
        memset(r, 0, clear);
    }
    r->coll = coll;
    r->mode = mode;
    r->comm = comm;
    r->ce   = ce;
}

/* ------------------------------------------------------------------ issue */

#define AMCM_ISS(name, ...)                                                                    \
    ((m == AMCM_BLOCKING)      ? amc_##name(__VA_ARGS__)                                       \
     : (m == AMCM_NONBLOCKING) ? amc_i##name(__VA_ARGS__, &r->areq)                            \
                               : amc_##name##_init(__VA_ARGS__, &r->areq))

/* The amcoll call of a prepared request, in mode m. Inlined where coll and
 * m are constants (the fast paths): only that call remains. */
static inline __attribute__((always_inline)) int amcm_issue_as(amcm_req_t *r, int coll, int m)
{
    amc_comm_t ac = r->ce->ac;

    if (m == AMCM_PERSISTENT) {
        /* the init's place in the communicator's order: every rank makes
         * the dup here, in its inits' order, the same on all of them; kept
         * where the init itself is refused for back-pressure and retried */
        if (r->pac == AMC_COMM_NULL) {
            int rc = amc_comm_dup(ac, &r->pac);
            if (rc != AMC_SUCCESS) {
                r->pac = AMC_COMM_NULL;
                return rc;
            }
        }
        ac = r->pac;
    }
    switch (coll) {
    case AMCM_BARRIER:
        return (m == AMCM_BLOCKING)      ? amc_barrier(ac)
               : (m == AMCM_NONBLOCKING) ? amc_ibarrier(ac, &r->areq)
                                         : amc_barrier_init(ac, &r->areq);
    case AMCM_BCAST:
        return AMCM_ISS(bcast, r->rbuf, r->count, r->adt, r->root, ac);
    case AMCM_REDUCE:
        return AMCM_ISS(reduce, r->sbuf, r->rbuf, r->count, r->adt, r->op, r->root, ac);
    case AMCM_ALLREDUCE:
        return AMCM_ISS(allreduce, r->sbuf, r->rbuf, r->count, r->adt, r->op, ac);
    case AMCM_SCAN:
        return AMCM_ISS(scan, r->sbuf, r->rbuf, r->count, r->adt, r->op, ac);
    case AMCM_EXSCAN:
        return AMCM_ISS(exscan, r->sbuf, r->rbuf, r->count, r->adt, r->op, ac);
    case AMCM_GATHER:
        return AMCM_ISS(gather, r->sbuf, r->rbuf, r->count, r->adt, r->root, ac);
    case AMCM_SCATTER:
        return AMCM_ISS(scatter, r->sbuf, r->rbuf, r->count, r->adt, r->root, ac);
    case AMCM_ALLGATHER:
        return AMCM_ISS(allgather, r->sbuf, r->rbuf, r->count, r->adt, ac);
    case AMCM_ALLTOALL:
        return AMCM_ISS(alltoall, r->sbuf, r->rbuf, r->count, r->adt, ac);
    case AMCM_REDUCE_SCATTER_BLOCK:
        return AMCM_ISS(reduce_scatter_block, r->sbuf, r->rbuf, r->count, r->adt, r->op, ac);
    case AMCM_REDUCE_SCATTER:
        return AMCM_ISS(reduce_scatter, r->sbuf, r->rbuf, r->rc_, r->adt, r->op, ac);
    case AMCM_GATHERV:
        return AMCM_ISS(gatherv, r->sbuf, r->scount, r->rbuf, r->rc_, r->rd, r->adt, r->root, ac);
    case AMCM_SCATTERV:
        return AMCM_ISS(scatterv, r->sbuf, r->sc, r->sd, r->rbuf, r->count, r->adt, r->root, ac);
    case AMCM_ALLGATHERV:
        return AMCM_ISS(allgatherv, r->sbuf, r->scount, r->rbuf, r->rc_, r->rd, r->adt, ac);
    case AMCM_ALLTOALLV:
    case AMCM_ALLTOALLW:
        return AMCM_ISS(alltoallv, r->sbuf, r->sc, r->sd, r->rbuf, r->rc_, r->rd, r->adt, ac);
    case AMCM_IDUP:
        return amc_comm_idup(ac, &r->newac, &r->areq);
    default:
        return AMC_ERR_ARG;
    }
}

/* r's amcoll call in its mode */
int  amcm_issue(amcm_req_t *r);
/* pack (unpack 0) or unpack (1) r's temporaries: amcoll code */
int  amcm_req_run_jobs(amcm_req_t *r, int unpack);
/* r's temporaries, owned types and op binding released, and a persistent
 * call's amcoll request and communicator; r itself kept */
void amcm_req_release(amcm_req_t *r);

#pragma GCC visibility pop

#endif /* AMCM_REQ_H */
