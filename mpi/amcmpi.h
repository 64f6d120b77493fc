/*
 * libamcoll_mpi: an MPI profiling-interface (PMPI) library that runs an
 * unmodified MPI program's collectives on amcoll. Internal header.
 *
 * The routing rule (issue 16): every rank of a call must make the same
 * choice, so the choice depends only on what MPI makes identical on all
 * ranks of the call: the collective, the communicator (mapped or not, agreed
 * when it was created), the op, and for reductions the datatype's signature
 * (MPI requires the same datatype on every rank of a reduction). Data
 * movement never looks at the datatypes: it runs as bytes, and a rank whose
 * layout is not contiguous packs into (or unpacks from) a temporary buffer.
 */
#ifndef AMCMPI_H
#define AMCMPI_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <pthread.h>
#include <sched.h>

#include "amcoll.h"

/* The library's own names are internal: calls and amcm_g go direct, not
 * through the PLT and the GOT; only the MPI_ functions (declared above, in
 * mpi.h) are exported. */
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

/* A user op bound for one named type (dtype.c): counted, see there. */
typedef struct amcm_ubind amcm_ubind_t;
void amcm_ubind_put(amcm_ubind_t *b);

/* Modes of one call. */
enum { AMCM_BLOCKING, AMCM_NONBLOCKING, AMCM_PERSISTENT };

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

typedef struct amcm_comm {
    MPI_Comm   comm;
    amc_comm_t ac;
    int        rank, size;
} amcm_comm_t;

/* Requests kept for reuse with their generalized requests (requests.c). */
#define AMCM_POOL_MAX 32

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

typedef struct {
    int             on;          /* routing on (AMCOLL_MPI, amcoll started, ranks agree) */
    int             inited;      /* amc_init done by us */
    unsigned        colls;       /* bit per AMCM_* */
    int             stats;
    int             mt;          /* MPI_THREAD_MULTIPLE: lock the tables */
    int             world_rank;
    int             oversub;     /* more ranks on the node than cores: yield in test loops */
    pthread_mutex_t lock;
    amcm_comm_t    *world, *self;
    MPI_Comm        poke_comm;   /* ours alone: amcoll's waits run MPI's progress on it */
    amcm_comm_t    *last;        /* the last communicator looked up (not with mt) */
    int             ecode[AMC_ERR_LAST]; /* MPI error code per amcoll code */
    long            nactive;     /* routed requests live (handed out, not completed) */
    amcm_req_t     *detached;
    amcm_req_t     *pool[AMCM_POOL_MAX]; /* requests kept for reuse (requests.c) */
    int             npool;
    amcm_req_t     *last_req;    /* the last registered (not with mt) */
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

/* tables.c: handle -> pointer maps */
typedef struct {
    uint64_t *keys;
    void    **vals;
    size_t    cap, n;
} amcm_map_t;
int   amcm_map_put(amcm_map_t *m, uint64_t key, void *val);
void *amcm_map_get(const amcm_map_t *m, uint64_t key);
void *amcm_map_del(amcm_map_t *m, uint64_t key);
void  amcm_map_clear(amcm_map_t *m);
static inline uint64_t amcm_key(const void *handle, size_t size)
{
    uint64_t k = 0;
    uint32_t k32;
    const unsigned char *p = handle;
    size_t i;
    /* handles are pointers (Open MPI) or ints (MPICH): one load, not a loop */
    if (size == sizeof(k)) {
        memcpy(&k, handle, sizeof(k));
        return k;
    }
    if (size == sizeof(k32)) {
        memcpy(&k32, handle, sizeof(k32));
        return k32;
    }
    for (i = 0; (i < size) && (i < sizeof(k)); i++) {
        k |= (uint64_t)p[i] << (8 * i);
    }
    return k;
}
#define AMCM_KEY(h) amcm_key(&(h), sizeof(h))

/* comm_map.c */
amcm_comm_t *amcm_comm_lookup(MPI_Comm comm);
/* The world, or the communicator of the previous call, without a lookup. */
static inline amcm_comm_t *amcm_comm_find(MPI_Comm comm)
{
    amcm_comm_t *e = amcm_g.last;

    if (comm == MPI_COMM_WORLD) {
        return amcm_g.world;
    }
    return ((e != NULL) && (e->comm == comm)) ? e : amcm_comm_lookup(comm);
}
int          amcm_comm_add(MPI_Comm comm, amc_comm_t ac);
void         amcm_comm_forget_all(void);

/* dtype.c */
typedef struct {
    int          size;     /* MPI_Type_size */
    MPI_Aint     extent;
    int          dense;    /* count elements are count * size contiguous bytes at buf */
    int          atype;    /* amcoll type of the signature's basic element, -1 if none */
    long         n;        /* basic elements per datatype element */
    MPI_Datatype basic;    /* the named MPI type of those elements */
    int          named;    /* predefined: needs no dup to outlive the call */
} amcm_dt_t;
/* A predefined type: its amcoll type (-1: data only), what ops it takes, its size. */
typedef struct {
    MPI_Datatype dt;
    int          atype, cls, size;
} amcm_named_t;
#define AMCM_NAMED_HASH 64 /* power of two */
extern const amcm_named_t *amcm_named_tab[AMCM_NAMED_HASH]; /* direct-mapped, by handle */
const amcm_named_t *amcm_named_search(MPI_Datatype dt); /* past the table: a search */
static inline unsigned amcm_named_slot(MPI_Datatype dt)
{
    return (unsigned)((AMCM_KEY(dt) * 0x9e3779b97f4a7c15ULL) >> 58) & (AMCM_NAMED_HASH - 1);
}
/* NULL: not one of them. Inline: every fast path asks it once or twice. */
static inline const amcm_named_t *amcm_named_find(MPI_Datatype dt)
{
    const amcm_named_t *e = amcm_named_tab[amcm_named_slot(dt)];

    return ((e != NULL) && (e->dt == dt)) ? e : amcm_named_search(dt);
}
int  amcm_op_fast(MPI_Op op, const amcm_named_t *nm, amc_op_t *aop); /* 1: a predefined op on nm */
int  amcm_dt_info(MPI_Datatype dt, amcm_dt_t *info); /* MPI error code */
/* AMCM_ROUTE (*ref: a user op's binding, held for the request), a reason not
 * to route, or AMCM_FAIL + an amcoll code */
int  amcm_op_map(MPI_Op op, const amcm_dt_t *dt, amc_op_t *aop, amcm_ubind_t **ref);
void amcm_op_forget(MPI_Op op);
void amcm_dtype_init(void);

/* errors.c */
int  amcm_raise(MPI_Comm comm, int amc_rc);      /* calls the errhandler; returns the MPI code */
int  amcm_mpi_code(int amc_rc);
void amcm_errors_init(void);

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

/* colls.c / requests.c */
amcm_req_t *amcm_req_get_slow(void);
void        amcm_req_free_slow(amcm_req_t *r);
int         amcm_req_register_slow(amcm_req_t *r, MPI_Request *request);
amcm_req_t *amcm_req_lookup(MPI_Request req);
void        amcm_req_pool_drain(void);

/* A request for a call: mreq is kept from its last use or MPI_REQUEST_NULL,
 * the rest is for the caller to set up. Single-threaded, the common cases
 * of these four are inline (a routed non-blocking call and its wait are a
 * few hundred instructions in all): one from the pool, one without
 * temporaries back to it, one whose handle was made by an earlier use, the
 * last one registered. */
static inline amcm_req_t *amcm_req_get(void)
{
    if (!amcm_g.mt && (amcm_g.npool > 0)) {
        return amcm_g.pool[--amcm_g.npool];
    }
    return amcm_req_get_slow();
}

/* Releases r's temporaries and keeps r (with its handle) or frees it. */
static inline void amcm_req_free(amcm_req_t *r)
{
    if (!amcm_g.mt && ((r->npack | r->nunpack | r->nmem) == 0) && (r->ubind == NULL) &&
        amcm_g.inited &&
        (amcm_g.npool < AMCM_POOL_MAX)) {
        amcm_g.pool[amcm_g.npool++] = r;
        return;
    }
    amcm_req_free_slow(r);
}

/* r started: hands its handle out (it is live until completed or freed). */
static inline int amcm_req_register(amcm_req_t *r, MPI_Request *request)
{
    if (!amcm_g.mt && (r->mreq != MPI_REQUEST_NULL)) {
        r->live = 1;
        amcm_g.nactive++;
        amcm_g.last_req = r;
        *request        = r->mreq;
        return MPI_SUCCESS;
    }
    return amcm_req_register_slow(r, request);
}

/* The live routed request of a handle, or NULL (MPI's own). */
static inline amcm_req_t *amcm_req_find(MPI_Request req)
{
    amcm_req_t *r = amcm_g.last_req;

    if (amcm_g.nactive == 0) {
        return NULL;
    }
    if ((r != NULL) && (r->mreq == req) && r->live) {
        return r;
    }
    return amcm_req_lookup(req);
}

/* Routed requests are live on this rank: a wait for MPI's own requests must
 * run amcoll's progress too (requests.c, "MPI's own requests"). */
static inline int amcm_routed_live(void)
{
    return (amcm_g.nactive != 0) || (amcm_g.detached != NULL);
}
/* MPI_Wait / MPI_Waitall on MPI's own requests, amcoll progressing meanwhile */
int  amcm_native_wait(MPI_Request *request, MPI_Status *status);
int  amcm_native_waitall(int count, MPI_Request reqs[], MPI_Status sts[]);
/* a pass of such a wait that found nothing: amcoll's progress, then the core away */
void amcm_native_idle(void);

void amcm_req_release(amcm_req_t *r);
int  amcm_issue_retry(amcm_req_t *r, int start);
int  amcm_req_run_jobs(amcm_req_t *r, int unpack);
void amcm_progress_all(void);
void amcm_detached_poll(int wait);
int  amcm_issue(amcm_req_t *r);

/* stats */
void amcm_stats_print(void);
extern const char *const amcm_coll_names[AMCM_NCOLL];

#pragma GCC visibility pop

#endif /* AMCMPI_H */
