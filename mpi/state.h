/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * amcoll under MPI (libamcoll_mpi, libamcoll_mpich, mca_coll_amcoll): the
 * state they share (routing on, the collectives taken, the counters), the
 * locks, the error codes, the statistics. The bottom of mpi/ but for
 * impl.h, what differs between the MPI libraries.
 */
#ifndef AMCM_STATE_H
#define AMCM_STATE_H

#include "mpi/impl.h"

#include <pthread.h>
#include <sched.h>

#include "amcoll.h"

#pragma GCC visibility push(hidden)

/* Collectives, for AMCOLL_MPI_COLLS and the statistics. */
enum {
    AMCM_BARRIER, AMCM_BCAST, AMCM_REDUCE, AMCM_ALLREDUCE, AMCM_GATHER, AMCM_GATHERV,
    AMCM_SCATTER, AMCM_SCATTERV, AMCM_ALLGATHER, AMCM_ALLGATHERV, AMCM_ALLTOALL,
    AMCM_ALLTOALLV, AMCM_ALLTOALLW, AMCM_REDUCE_SCATTER, AMCM_REDUCE_SCATTER_BLOCK,
    AMCM_SCAN, AMCM_EXSCAN, AMCM_NCOLL
};

/* r->coll of an MPI_Comm_idup's request: no collective, never counted. */
#define AMCM_IDUP AMCM_NCOLL

/* Why a call fell through (AMCM_ROUTE: it did not). */
enum {
    AMCM_ROUTE = 0,
    AMCM_WHY_OFF,    /* AMCOLL_MPI=0, or amcoll could not start */
    AMCM_WHY_FILTER, /* not in AMCOLL_MPI_COLLS */
    AMCM_WHY_COMM,   /* communicator not mapped (intercommunicator, topology, ...) */
    AMCM_WHY_TYPE,   /* reduction on a datatype amcoll has no type for */
    AMCM_WHY_OP,     /* op amcoll cannot run (MINLOC, REPLACE, ...) or not valid for the type */
    AMCM_WHY_ARG,    /* invalid argument: MPI reports it */
    AMCM_NWHY
};

/* A prep result AMCM_FAIL + amcoll code: the call is routed (decided
 * alike on every rank), then failed on this rank. */
#define AMCM_FAIL 100

/* Modes of one call. */
enum { AMCM_BLOCKING, AMCM_NONBLOCKING, AMCM_PERSISTENT };

/* Requests kept for reuse with their generalized requests (requests.c). */
#define AMCM_POOL_MAX 32

typedef struct {
    int             on;          /* routing on (AMCOLL_MPI, amcoll started, ranks agree) */
    int             inited;      /* amc_init done by us */
    unsigned        colls;       /* bit per AMCM_* */
    int             stats;
    int             mt;          /* MPI_THREAD_MULTIPLE: lock the tables */
    int             world_rank;
    int             oversub;     /* more ranks on the node than cores: yield in test loops */
    pthread_mutex_t lock;
    struct amcm_comm *world, *self;
    MPI_Comm        poke_comm;   /* ours alone: amcoll's waits run MPI's progress on it */
    struct amcm_comm *last;        /* the last communicator looked up (not with mt) */
    int             ecode[AMC_ERR_LAST]; /* MPI error code per amcoll code */
    long            nactive;     /* routed requests live (handed out, not completed) */
    struct amcm_req  *detached;
    struct amcm_req  *pool[AMCM_POOL_MAX]; /* requests kept for reuse (requests.c) */
    int             npool;
    struct amcm_req  *last_req;    /* the last registered (not with mt) */
    unsigned long   routed[AMCM_NCOLL][3];
    unsigned long   fell[AMCM_NCOLL][AMCM_NWHY];
    unsigned long   routed_fast[AMCM_NCOLL]; /* of the routed, those that took a fast path */
} amcm_global_t;

extern amcm_global_t amcm_g;

static inline void amcm_lock(void)
{
    if (amcm_g.mt) {
        pthread_mutex_lock(&amcm_g.lock);
    }
}
static inline void amcm_unlock(void)
{
    if (amcm_g.mt) {
        pthread_mutex_unlock(&amcm_g.lock);
    }
}

/* A test that found nothing done: give the core away when ranks share
 * cores, as MPI libraries do when oversubscribed (the caller loops). */
static inline void amcm_test_idle(void)
{
    if (amcm_g.oversub) {
        sched_yield();
    }
}

static inline void amcm_bump(unsigned long *c)
{
    if (amcm_g.mt) {
        __atomic_fetch_add(c, 1, __ATOMIC_RELAXED);
    } else {
        (*c)++;
    }
}

/* errors: one MPI code per amcoll code, with amcoll's message */
int  amcm_raise(MPI_Comm comm, int amc_rc);      /* calls the errhandler; returns the MPI code */
int  amcm_mpi_code(int amc_rc);
void amcm_errors_init(void);

/* stats: "who" names the library in the line */
void amcm_stats_print(const char *who);
extern const char *const amcm_coll_names[AMCM_NCOLL];
/* AMCOLL_MPI_COLLS's syntax: names, "all"; unknown ones reported by world rank 0 */
unsigned amcm_parse_colls(const char *s);
/* amcoll's thread level for the level MPI grants */
int      amcm_thread_level(int mpi_level);

#pragma GCC visibility pop

#endif /* AMCM_STATE_H */
