/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a collective call asks for (amc_coll_args_t) and what an algorithm
 * is (amc_alg_t: a builder that turns the call into one rank's schedule):
 * the algorithms' and the tuning rules' words, below the engine that runs
 * the schedules (am_coll/coll/coll.h).
 */
#ifndef AMC_COLL_ARGS_H
#define AMC_COLL_ARGS_H

#include "am_coll/sched/sched.h"
#include "amcoll.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct amc_topo;

typedef struct amc_coll_args {
    uint8_t        coll;       /* amc_coll_type_t */
    int            root;       /* rooted collectives; else -1 */
    size_t         count;      /* per-rank element count (non-v forms) */
    amc_datatype_t dt;
    size_t         dt_size;
    amc_op_t       op;         /* reductions; else -1 */
    int            commutative;
    int            in_place;   /* sendbuf was AMC_IN_PLACE */
    size_t         segment;    /* pipelined algorithms: bytes per segment (AMC_BCAST_SEGMENT) */
    size_t         bruck_block; /* alltoallv bruck: the largest block that takes Bruck's
                                 * steps (AMC_ALLTOALLV_BRUCK_BLOCK) */
    size_t         pull_bytes; /* a block of this many bytes or more may be pulled by
                                * its receiver (rendezvous: the smaller of AMC_RNDV_THRESH
                                * and AMC_RNDV_THRESH_NODE), its sender waiting for that */
    const struct amc_topo *topo; /* node-aware algorithms: the communicator's nodes
                                  * (am_coll/context/topo.h); NULL reads as one node */
    const void    *sendbuf;
    void          *recvbuf;
    /* vector forms, in elements as in MPI */
    size_t         scount;
    size_t         rcount;
    const size_t  *scounts;
    const size_t  *sdispls;
    const size_t  *rcounts;
    const size_t  *rdispls;
} amc_coll_args_t;

/* A barrier's arguments: no data, no root, no op. */
static inline void amc_coll_args_barrier(amc_coll_args_t *args)
{
    memset(args, 0, sizeof(*args));
    args->coll    = AMC_COLL_BARRIER;
    args->root    = -1;
    args->dt      = AMC_BYTE;
    args->dt_size = 1;
    args->op      = -1;
}

/* Fills a schedule for (rank, size); AMC_SUCCESS or an error code. */
typedef int (*amc_alg_build_fn_t)(amc_sched_builder_t *b, const amc_coll_args_t *a, int rank,
                                  int size);

/* amc_alg_t.flags */
enum {
    AMC_ALG_FLAG_COMMUTATIVE = 1, /* combines in an order of its own: commutative ops only */
    AMC_ALG_FLAG_NODES       = 2, /* node-aware: reads amc_coll_args_t.topo */
    AMC_ALG_FLAG_CTRL        = 4, /* small calls may run on the barrier's rounds instead
                                   * (am_coll/barrier/ctrl_coll.h) */
    AMC_ALG_FLAG_CTRL_AT_2   = 8  /* the same, on 2 ranks only (where it is the same
                                   * single exchange) */
};

typedef struct amc_alg {
    uint8_t            coll;
    uint8_t            id;       /* distinct within its collective, part of the cache key */
    const char        *name;
    amc_alg_build_fn_t build;
    unsigned           flags;    /* AMC_ALG_FLAG_* */
} amc_alg_t;

#endif
