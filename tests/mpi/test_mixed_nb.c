/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Mixed non-blocking collectives, an ordinary MPI program (run by
 * tests/mpi/run_mixed_nb.sh with and without LD_PRELOAD=libamcoll_mpi.so).
 *
 * The shape of the established test that found ranks losing step under
 * the library (MPICH's coll/nonblocking3), written again as ours and
 * widened: every rank keeps a window of up to WINDOW operations outstanding
 * on the world and NCOMM other communicators (dups and a split in reverse
 * order); every next operation is drawn from one generator that all ranks
 * run alike: every non-blocking collective, user ops (commutative and not)
 * and duplicated or strided datatypes freed right after the start, MPI_IN_PLACE,
 * an isend/irecv pair, blocking collectives, persistent collectives
 * started again and again, and a blocking point-to-point handshake made
 * while the window is full (rank 0 blocks in MPI_Recv while the others
 * first complete everything: their collectives need rank 0's progress).
 * Completions are drawn alike too (MPI_Wait, Test, Waitall, Testall,
 * Waitany, Testany, Waitsome, Testsome), but what a rank finds done is its
 * own, so ranks post their next operations at different moments, and now
 * and then a rank sleeps. Every result is checked element by element as
 * soon as its operation completes.
 *
 *     test_mixed_nb [OPS [SEED]]       prints "ok mixed N=.. ops=.." on rank 0
 *
 * AMCTEST_PERSISTENT_AS_NB=1 leaves the persistent collectives out (a slot
 * drawn for one takes its drawn operation, non-blocking): for a run on an
 * MPI library whose own fail (MPICH 4.0.2: MPI_Testall over an array with
 * a completed persistent collective returns MPI_ERR_IN_STATUS, its
 * MPIR_Request_get_error knowing no such kind).
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpi_pcoll.h"

#define WINDOW   20
#define NCOMM    5  /* the world, 3 dups, a split in reverse order */
#define SENTINEL (-77777)
#define PCOUNT   6  /* persistent ones: elements */
#define NPERSIST 2  /* per communicator: an allreduce and a bcast */

enum {
    C_BCAST, C_BCAST_CHAR, C_BARRIER, C_REDUCE, C_REDUCE_UOP, C_REDUCE_NC, C_ALLREDUCE,
    C_ALLREDUCE_DBL, C_ALLREDUCE_UOP, C_ALLREDUCE_INPLACE, C_ALLTOALLV, C_GATHER, C_GATHER_DUP,
    C_SCATTER, C_SCATTERV, C_REDUCE_SCATTER, C_REDUCE_SCATTER_BLOCK, C_GATHERV, C_ALLTOALL,
    C_ALLGATHER, C_ALLGATHERV, C_SCAN, C_EXSCAN, C_ALLTOALLW, C_BCAST_VECTOR, C_P2P,
    C_NCASES
};
static const char *const case_names[C_NCASES] = {
    "bcast", "bcast_char", "barrier", "reduce", "reduce_uop", "reduce_noncommutative",
    "allreduce", "allreduce_double", "allreduce_uop", "allreduce_in_place", "alltoallv",
    "gather", "gather_dup_type", "scatter", "scatterv", "reduce_scatter", "reduce_scatter_block",
    "gatherv", "alltoall", "allgather", "allgatherv", "scan", "exscan", "alltoallw",
    "bcast_vector", "isend_irecv"};

/* What an operation leaves to be checked when it completes. */
typedef struct {
    int     kind;      /* C_*, or -1: the slot is free */
    long    k;         /* the operation's number in the stream */
    int     ci;        /* communicator index */
    int     count, root, blocking;
    int    *sbuf, *rbuf;
    double *dsbuf, *drbuf;
    int    *scnt, *sdis, *rcnt, *rdis;
    MPI_Datatype *stypes, *rtypes;
    int     persist;   /* 1 + pool index of a persistent start, else 0 */
} op_t;

typedef struct {
    MPI_Request req;
    int         in, out[PCOUNT], slot; /* slot: window index while active, else -1 */
    int         sb[PCOUNT];
} persist_t;

static int       rank, size, errs;
static MPI_Comm  comms[NCOMM];
static int       crank[NCOMM], csize[NCOMM];
static persist_t pers[NCOMM][NPERSIST];
static int       p_off; /* AMCTEST_PERSISTENT_AS_NB */

/* ------------------------------------------------------------------ values */

static uint64_t rng_next(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}
static unsigned rng_below(uint64_t *s, unsigned n)
{
    return (unsigned)(rng_next(s) % n);
}

/* element i of rank r's contribution to operation k */
static int val(long k, int r, int i)
{
    return (int)(((uint32_t)k * 2654435761u + (uint32_t)r * 40503u + (uint32_t)i * 97u) % 2001u) -
           1000;
}

#define FAIL_IF(cond, o, ...)                                                                   \
    do {                                                                                        \
        if (cond) {                                                                             \
            if (++errs <= 10) {                                                                 \
                fprintf(stderr, "rank %d: op %ld %s (comm %d, count %d, root %d%s): ", rank,     \
                        (o)->k, case_names[(o)->kind], (o)->ci, (o)->count, (o)->root,          \
                        (o)->blocking ? ", blocking" : (o)->persist ? ", persistent" : "");     \
                fprintf(stderr, __VA_ARGS__);                                                   \
                fputc('\n', stderr);                                                            \
            }                                                                                   \
        }                                                                                       \
    } while (0)

static void sum_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    int *a = in, *b = inout, i;
    (void)dt;
    for (i = 0; i < *len; i++) {
        b[i] += a[i];
    }
}

/* left projection: associative, not commutative; the reduction of ranks
 * 0..n-1 in MPI's order is rank 0's contribution */
static void left_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    int *a = in, *b = inout, i;
    (void)dt;
    for (i = 0; i < *len; i++) {
        b[i] = a[i];
    }
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (p == NULL) {
        fprintf(stderr, "rank %d: out of memory\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return p;
}

static int *ibuf(size_t n)
{
    int   *p = xmalloc(n * sizeof(int));
    size_t i;
    for (i = 0; i < n; i++) {
        p[i] = SENTINEL;
    }
    return p;
}

static void op_clear(op_t *o)
{
    free(o->sbuf);
    free(o->rbuf);
    free(o->dsbuf);
    free(o->drbuf);
    free(o->scnt);
    free(o->sdis);
    free(o->rcnt);
    free(o->rdis);
    free(o->stypes);
    free(o->rtypes);
    memset(o, 0, sizeof(*o));
    o->kind = -1;
}

/* v-form counts: rank r's block of operation k (some zero) */
static int vcount(long k, int c, int r)
{
    return (int)((k + 3 * r) % 4) * (c / 2 + 1) / 2;
}
/* alltoallv: from s to d */
static int acount(long k, int c, int s, int d)
{
    return (int)((k + s + 2 * d) % 3) * ((c + 1) / 2);
}

/* ------------------------------------------------------------------ start */

#define CALL(blocking, bform, iform)                                                            \
    do {                                                                                        \
        int rc_ = (blocking) ? (bform) : (iform);                                               \
        if (rc_ != MPI_SUCCESS) {                                                               \
            FAIL_IF(1, o, "call returned %d", rc_);                                             \
        }                                                                                       \
    } while (0)

static void start_op(op_t *o, MPI_Request *req)
{
    MPI_Comm comm = comms[o->ci];
    int      me = crank[o->ci], n = csize[o->ci], c = o->count, root = o->root;
    long     k = o->k;
    int      i, j, b = o->blocking, tot;
    MPI_Op   uop;
    MPI_Datatype t;

    *req = MPI_REQUEST_NULL;
    switch (o->kind) {
    case C_BCAST:
        o->rbuf = ibuf((size_t)c);
        for (i = 0; (me == root) && (i < c); i++) {
            o->rbuf[i] = val(k, root, i);
        }
        CALL(b, MPI_Bcast(o->rbuf, c, MPI_INT, root, comm),
             MPI_Ibcast(o->rbuf, c, MPI_INT, root, comm, req));
        break;
    case C_BCAST_CHAR: {
        signed char *p = xmalloc(64);
        memset(p, 0x5b, 64);
        for (i = 0; (me == root) && (i < 17); i++) {
            p[i] = (signed char)(val(k, root, i) % 100);
        }
        o->rbuf = (int *)(void *)p;
        CALL(b, MPI_Bcast(p, 17, MPI_SIGNED_CHAR, root, comm),
             MPI_Ibcast(p, 17, MPI_SIGNED_CHAR, root, comm, req));
        break;
    }
    case C_BARRIER:
        CALL(b, MPI_Barrier(comm), MPI_Ibarrier(comm, req));
        break;
    case C_REDUCE:
    case C_REDUCE_UOP:
    case C_REDUCE_NC:
        o->sbuf = ibuf((size_t)c);
        o->rbuf = ibuf((size_t)c);
        for (i = 0; i < c; i++) {
            o->sbuf[i] = val(k, me, i);
        }
        uop = MPI_SUM;
        if (o->kind != C_REDUCE) {
            MPI_Op_create((o->kind == C_REDUCE_NC) ? left_fn : sum_fn, o->kind != C_REDUCE_NC,
                          &uop);
        }
        CALL(b, MPI_Reduce(o->sbuf, o->rbuf, c, MPI_INT, uop, root, comm),
             MPI_Ireduce(o->sbuf, o->rbuf, c, MPI_INT, uop, root, comm, req));
        if (uop != MPI_SUM) {
            MPI_Op_free(&uop); /* before the wait: MPI allows it */
        }
        break;
    case C_ALLREDUCE:
    case C_ALLREDUCE_UOP:
    case C_ALLREDUCE_INPLACE:
        o->sbuf = ibuf((size_t)c);
        o->rbuf = ibuf((size_t)c);
        for (i = 0; i < c; i++) {
            o->sbuf[i] = val(k, me, i);
            if (o->kind == C_ALLREDUCE_INPLACE) {
                o->rbuf[i] = val(k, me, i);
            }
        }
        uop = (o->kind == C_ALLREDUCE) ? MPI_MAX : MPI_SUM;
        if (o->kind == C_ALLREDUCE_UOP) {
            MPI_Op_create(sum_fn, 1, &uop);
        }
        {
            const void *sb = (o->kind == C_ALLREDUCE_INPLACE) ? MPI_IN_PLACE : o->sbuf;
            CALL(b, MPI_Allreduce(sb, o->rbuf, c, MPI_INT, uop, comm),
                 MPI_Iallreduce(sb, o->rbuf, c, MPI_INT, uop, comm, req));
        }
        if (o->kind == C_ALLREDUCE_UOP) {
            MPI_Op_free(&uop);
        }
        break;
    case C_ALLREDUCE_DBL:
        o->dsbuf = xmalloc((size_t)c * sizeof(double));
        o->drbuf = xmalloc((size_t)c * sizeof(double));
        for (i = 0; i < c; i++) {
            o->dsbuf[i] = val(k, me, i);
            o->drbuf[i] = -1.5;
        }
        CALL(b, MPI_Allreduce(o->dsbuf, o->drbuf, c, MPI_DOUBLE, MPI_SUM, comm),
             MPI_Iallreduce(o->dsbuf, o->drbuf, c, MPI_DOUBLE, MPI_SUM, comm, req));
        break;
    case C_ALLTOALLV:
    case C_ALLTOALLW:
        o->scnt = xmalloc((size_t)n * sizeof(int));
        o->sdis = xmalloc((size_t)n * sizeof(int));
        o->rcnt = xmalloc((size_t)n * sizeof(int));
        o->rdis = xmalloc((size_t)n * sizeof(int));
        for (tot = 0, j = 0; j < n; j++) {
            o->scnt[j] = acount(k, c, me, j);
            o->sdis[j] = tot;
            tot += o->scnt[j] + 1;
        }
        o->sbuf = ibuf((size_t)tot);
        for (j = 0; j < n; j++) {
            for (i = 0; i < o->scnt[j]; i++) {
                o->sbuf[o->sdis[j] + i] = val(k, me * n + j, i);
            }
        }
        for (tot = 0, j = 0; j < n; j++) {
            o->rcnt[j] = acount(k, c, j, me);
            o->rdis[j] = tot;
            tot += o->rcnt[j] + 2;
        }
        o->rbuf = ibuf((size_t)tot);
        if (o->kind == C_ALLTOALLV) {
            CALL(b, MPI_Alltoallv(o->sbuf, o->scnt, o->sdis, MPI_INT, o->rbuf, o->rcnt, o->rdis,
                                  MPI_INT, comm),
                 MPI_Ialltoallv(o->sbuf, o->scnt, o->sdis, MPI_INT, o->rbuf, o->rcnt, o->rdis,
                                MPI_INT, comm, req));
        } else {
            int *sd = xmalloc((size_t)n * sizeof(int)), *rd = xmalloc((size_t)n * sizeof(int));
            o->stypes = xmalloc((size_t)n * sizeof(MPI_Datatype));
            o->rtypes = xmalloc((size_t)n * sizeof(MPI_Datatype));
            for (j = 0; j < n; j++) {
                sd[j]         = o->sdis[j] * (int)sizeof(int);
                rd[j]         = o->rdis[j] * (int)sizeof(int);
                o->stypes[j]  = MPI_INT;
                o->rtypes[j]  = MPI_INT;
            }
            CALL(b, MPI_Alltoallw(o->sbuf, o->scnt, sd, o->stypes, o->rbuf, o->rcnt, rd,
                                  o->rtypes, comm),
                 MPI_Ialltoallw(o->sbuf, o->scnt, sd, o->stypes, o->rbuf, o->rcnt, rd,
                                o->rtypes, comm, req));
            /* the byte displacements are MPI's to keep: kept in rdis/sdis' place */
            free(o->sdis);
            free(o->rdis);
            o->sdis = sd;
            o->rdis = rd;
        }
        break;
    case C_GATHER:
    case C_GATHER_DUP:
        o->sbuf = ibuf((size_t)c);
        o->rbuf = ibuf((size_t)c * (size_t)n);
        for (i = 0; i < c; i++) {
            o->sbuf[i] = val(k, me, i);
        }
        t = MPI_INT;
        if (o->kind == C_GATHER_DUP) {
            MPI_Type_dup(MPI_INT, &t);
        }
        CALL(b, MPI_Gather(o->sbuf, c, MPI_INT, o->rbuf, c, t, root, comm),
             MPI_Igather(o->sbuf, c, MPI_INT, o->rbuf, c, t, root, comm, req));
        if (t != MPI_INT) {
            MPI_Type_free(&t); /* before the wait */
        }
        break;
    case C_SCATTER:
        o->sbuf = ibuf((size_t)c * (size_t)n);
        o->rbuf = ibuf((size_t)c + 1);
        for (j = 0; (me == root) && (j < n); j++) {
            for (i = 0; i < c; i++) {
                o->sbuf[j * c + i] = val(k, j, i);
            }
        }
        CALL(b, MPI_Scatter(o->sbuf, c, MPI_INT, o->rbuf, c, MPI_INT, root, comm),
             MPI_Iscatter(o->sbuf, c, MPI_INT, o->rbuf, c, MPI_INT, root, comm, req));
        break;
    case C_SCATTERV:
    case C_GATHERV:
    case C_ALLGATHERV:
        o->scnt = xmalloc((size_t)n * sizeof(int));
        o->sdis = xmalloc((size_t)n * sizeof(int));
        for (tot = 0, j = 0; j < n; j++) {
            o->scnt[j] = vcount(k, c, j);
            o->sdis[j] = tot + 1; /* a gap before each block */
            tot += o->scnt[j] + 1;
        }
        o->rbuf = ibuf((size_t)tot + 2);
        o->sbuf = ibuf((size_t)tot + 2);
        if (o->kind == C_SCATTERV) {
            for (j = 0; (me == root) && (j < n); j++) {
                for (i = 0; i < o->scnt[j]; i++) {
                    o->sbuf[o->sdis[j] + i] = val(k, j, i);
                }
            }
            CALL(b, MPI_Scatterv(o->sbuf, o->scnt, o->sdis, MPI_INT, o->rbuf, vcount(k, c, me),
                                 MPI_INT, root, comm),
                 MPI_Iscatterv(o->sbuf, o->scnt, o->sdis, MPI_INT, o->rbuf, vcount(k, c, me),
                               MPI_INT, root, comm, req));
            break;
        }
        for (i = 0; i < vcount(k, c, me); i++) {
            o->sbuf[i] = val(k, me, i);
        }
        if (o->kind == C_GATHERV) {
            CALL(b, MPI_Gatherv(o->sbuf, vcount(k, c, me), MPI_INT, o->rbuf, o->scnt, o->sdis,
                                MPI_INT, root, comm),
                 MPI_Igatherv(o->sbuf, vcount(k, c, me), MPI_INT, o->rbuf, o->scnt, o->sdis,
                              MPI_INT, root, comm, req));
        } else {
            CALL(b, MPI_Allgatherv(o->sbuf, vcount(k, c, me), MPI_INT, o->rbuf, o->scnt,
                                   o->sdis, MPI_INT, comm),
                 MPI_Iallgatherv(o->sbuf, vcount(k, c, me), MPI_INT, o->rbuf, o->scnt, o->sdis,
                                 MPI_INT, comm, req));
        }
        break;
    case C_REDUCE_SCATTER:
    case C_REDUCE_SCATTER_BLOCK:
        o->rcnt = xmalloc((size_t)n * sizeof(int));
        for (tot = 0, j = 0; j < n; j++) {
            o->rcnt[j] = (o->kind == C_REDUCE_SCATTER) ? vcount(k, c, j) : c;
            tot += o->rcnt[j];
        }
        o->sbuf = ibuf((size_t)tot);
        o->rbuf = ibuf((size_t)o->rcnt[me] + 1);
        for (i = 0; i < tot; i++) {
            o->sbuf[i] = val(k, me, i);
        }
        if (o->kind == C_REDUCE_SCATTER) {
            CALL(b, MPI_Reduce_scatter(o->sbuf, o->rbuf, o->rcnt, MPI_INT, MPI_SUM, comm),
                 MPI_Ireduce_scatter(o->sbuf, o->rbuf, o->rcnt, MPI_INT, MPI_SUM, comm, req));
        } else {
            CALL(b, MPI_Reduce_scatter_block(o->sbuf, o->rbuf, c, MPI_INT, MPI_SUM, comm),
                 MPI_Ireduce_scatter_block(o->sbuf, o->rbuf, c, MPI_INT, MPI_SUM, comm, req));
        }
        break;
    case C_ALLTOALL:
        o->sbuf = ibuf((size_t)c * (size_t)n);
        o->rbuf = ibuf((size_t)c * (size_t)n);
        for (j = 0; j < n; j++) {
            for (i = 0; i < c; i++) {
                o->sbuf[j * c + i] = val(k, me * n + j, i);
            }
        }
        CALL(b, MPI_Alltoall(o->sbuf, c, MPI_INT, o->rbuf, c, MPI_INT, comm),
             MPI_Ialltoall(o->sbuf, c, MPI_INT, o->rbuf, c, MPI_INT, comm, req));
        break;
    case C_ALLGATHER:
        o->sbuf = ibuf((size_t)c);
        o->rbuf = ibuf((size_t)c * (size_t)n);
        for (i = 0; i < c; i++) {
            o->sbuf[i] = val(k, me, i);
        }
        CALL(b, MPI_Allgather(o->sbuf, c, MPI_INT, o->rbuf, c, MPI_INT, comm),
             MPI_Iallgather(o->sbuf, c, MPI_INT, o->rbuf, c, MPI_INT, comm, req));
        break;
    case C_SCAN:
    case C_EXSCAN:
        o->sbuf = ibuf((size_t)c);
        o->rbuf = ibuf((size_t)c);
        for (i = 0; i < c; i++) {
            o->sbuf[i] = val(k, me, i);
        }
        if (o->kind == C_SCAN) {
            CALL(b, MPI_Scan(o->sbuf, o->rbuf, c, MPI_INT, MPI_SUM, comm),
                 MPI_Iscan(o->sbuf, o->rbuf, c, MPI_INT, MPI_SUM, comm, req));
        } else {
            CALL(b, MPI_Exscan(o->sbuf, o->rbuf, c, MPI_INT, MPI_SUM, comm),
                 MPI_Iexscan(o->sbuf, o->rbuf, c, MPI_INT, MPI_SUM, comm, req));
        }
        break;
    case C_BCAST_VECTOR:
        /* every other int: a strided type, freed before the wait */
        o->rbuf = ibuf(2 * (size_t)c + 1);
        for (i = 0; (me == root) && (i < c); i++) {
            o->rbuf[2 * i] = val(k, root, i);
        }
        MPI_Type_vector(c > 0 ? c : 1, 1, 2, MPI_INT, &t);
        MPI_Type_commit(&t);
        CALL(b, MPI_Bcast(o->rbuf, c > 0 ? 1 : 0, t, root, comm),
             MPI_Ibcast(o->rbuf, c > 0 ? 1 : 0, t, root, comm, req));
        MPI_Type_free(&t);
        break;
    case C_P2P:
        /* pairs (0,1), (2,3), ...; an odd last rank sits out */
        o->rbuf = ibuf((size_t)c);
        o->sbuf = ibuf((size_t)c);
        if ((me ^ 1) < n) {
            for (i = 0; i < c; i++) {
                o->sbuf[i] = val(k, me, i);
            }
            if (me % 2 == 0) {
                MPI_Isend(o->sbuf, c, MPI_INT, me + 1, 7, comm, req);
            } else {
                MPI_Irecv(o->rbuf, c, MPI_INT, me - 1, 7, comm, req);
            }
        }
        break;
    }
}

/* ------------------------------------------------------------------ check */

static void check_op(op_t *o)
{
    int  me = crank[o->ci], n = csize[o->ci], c = o->count, root = o->root;
    long k = o->k;
    int  i, j, r, e, bad = -1, got = 0, want = 0;

#define EXPECT(idx, g, w)                                                                       \
    do {                                                                                        \
        if ((bad < 0) && ((g) != (w))) {                                                        \
            bad = (idx), got = (int)(g), want = (int)(w);                                       \
        }                                                                                       \
    } while (0)

    switch (o->kind) {
    case C_BCAST:
        for (i = 0; i < c; i++) {
            EXPECT(i, o->rbuf[i], val(k, root, i));
        }
        break;
    case C_BCAST_CHAR: {
        signed char *p = (signed char *)(void *)o->rbuf;
        for (i = 0; i < 64; i++) {
            EXPECT(i, p[i], (i < 17) ? (signed char)(val(k, root, i) % 100) : 0x5b);
        }
        break;
    }
    case C_BARRIER:
        break;
    case C_REDUCE:
    case C_REDUCE_UOP:
    case C_REDUCE_NC:
        for (i = 0; i < c; i++) {
            for (e = 0, r = 0; r < n; r++) {
                e += val(k, r, i);
            }
            if (o->kind == C_REDUCE_NC) {
                e = val(k, 0, i);
            }
            EXPECT(i, o->rbuf[i], (me == root) ? e : SENTINEL);
        }
        break;
    case C_ALLREDUCE:
    case C_ALLREDUCE_UOP:
    case C_ALLREDUCE_INPLACE:
        for (i = 0; i < c; i++) {
            for (e = (o->kind == C_ALLREDUCE) ? val(k, 0, i) : 0, r = 0; r < n; r++) {
                if (o->kind == C_ALLREDUCE) {
                    e = (val(k, r, i) > e) ? val(k, r, i) : e;
                } else {
                    e += val(k, r, i);
                }
            }
            EXPECT(i, o->rbuf[i], e);
        }
        break;
    case C_ALLREDUCE_DBL:
        for (i = 0; i < c; i++) {
            for (e = 0, r = 0; r < n; r++) {
                e += val(k, r, i);
            }
            EXPECT(i, o->drbuf[i], (double)e);
        }
        break;
    case C_ALLTOALLV:
    case C_ALLTOALLW: {
        int pos = 0;
        for (j = 0; j < n; j++) {
            for (i = 0; i < acount(k, c, j, me); i++) {
                EXPECT(pos + i, o->rbuf[pos + i], val(k, j * n + me, i));
            }
            pos += acount(k, c, j, me);
            EXPECT(pos, o->rbuf[pos], SENTINEL);
            EXPECT(pos + 1, o->rbuf[pos + 1], SENTINEL);
            pos += 2;
        }
        break;
    }
    case C_GATHER:
    case C_GATHER_DUP:
    case C_ALLGATHER:
        for (j = 0; j < n; j++) {
            for (i = 0; i < c; i++) {
                EXPECT(j * c + i, o->rbuf[j * c + i],
                       ((o->kind == C_ALLGATHER) || (me == root)) ? val(k, j, i) : SENTINEL);
            }
        }
        break;
    case C_SCATTER:
    case C_SCATTERV: {
        int mine = (o->kind == C_SCATTER) ? c : vcount(k, c, me);
        for (i = 0; i < mine; i++) {
            EXPECT(i, o->rbuf[i], val(k, me, i));
        }
        EXPECT(mine, o->rbuf[mine], SENTINEL);
        break;
    }
    case C_GATHERV:
    case C_ALLGATHERV:
        for (j = 0; j < n; j++) {
            int at_out = (o->kind == C_ALLGATHERV) || (me == root);
            EXPECT(o->sdis[j] - 1, o->rbuf[o->sdis[j] - 1], SENTINEL);
            for (i = 0; i < o->scnt[j]; i++) {
                EXPECT(o->sdis[j] + i, o->rbuf[o->sdis[j] + i], at_out ? val(k, j, i) : SENTINEL);
            }
        }
        break;
    case C_REDUCE_SCATTER:
    case C_REDUCE_SCATTER_BLOCK: {
        int off = 0;
        for (j = 0; j < me; j++) {
            off += o->rcnt[j];
        }
        for (i = 0; i < o->rcnt[me]; i++) {
            for (e = 0, r = 0; r < n; r++) {
                e += val(k, r, off + i);
            }
            EXPECT(i, o->rbuf[i], e);
        }
        EXPECT(o->rcnt[me], o->rbuf[o->rcnt[me]], SENTINEL);
        break;
    }
    case C_ALLTOALL:
        for (j = 0; j < n; j++) {
            for (i = 0; i < c; i++) {
                EXPECT(j * c + i, o->rbuf[j * c + i], val(k, j * n + me, i));
            }
        }
        break;
    case C_SCAN:
    case C_EXSCAN:
        for (i = 0; i < c; i++) {
            int upto = (o->kind == C_SCAN) ? me : me - 1;
            for (e = 0, r = 0; r <= upto; r++) {
                e += val(k, r, i);
            }
            EXPECT(i, o->rbuf[i], ((o->kind == C_EXSCAN) && (me == 0)) ? SENTINEL : e);
        }
        break;
    case C_BCAST_VECTOR:
        for (i = 0; i < 2 * c + 1; i++) {
            EXPECT(i, o->rbuf[i], ((i % 2 == 0) && (i < 2 * c)) ? val(k, root, i / 2) : SENTINEL);
        }
        break;
    case C_P2P:
        for (i = 0; i < c; i++) {
            EXPECT(i, o->rbuf[i], ((me % 2 == 1) ? val(k, me - 1, i) : SENTINEL));
        }
        break;
    }
    FAIL_IF(bad >= 0, o, "element %d is %d, expected %d", bad, got, want);
#undef EXPECT
}

/* ------------------------------------------------------------------ persistent */

#if HAVE_P
static void persist_create(void)
{
    int ci, p;

    for (ci = 0; ci < NCOMM; ci++) {
        for (p = 0; p < NPERSIST; p++) {
            persist_t *q = &pers[ci][p];
            q->slot = -1;
            if (p == 0) {
                P_(Allreduce_init)(q->sb, q->out, PCOUNT, MPI_INT, MPI_SUM, comms[ci],
                                   MPI_INFO_NULL, &q->req);
            } else {
                P_(Bcast_init)(q->out, PCOUNT, MPI_INT, 0, comms[ci], MPI_INFO_NULL, &q->req);
            }
        }
    }
}

static void persist_free(void)
{
    int ci, p;

    for (ci = 0; ci < NCOMM; ci++) {
        for (p = 0; p < NPERSIST; p++) {
            MPI_Request_free(&pers[ci][p].req);
        }
    }
}

static void persist_check(op_t *o)
{
    persist_t *q = &pers[o->ci][o->persist - 1];
    int        n = csize[o->ci], i, r, e;

    for (i = 0; i < PCOUNT; i++) {
        if (o->persist == 1) {
            for (e = 0, r = 0; r < n; r++) {
                e += val(o->k, r, i);
            }
        } else {
            e = val(o->k, 0, i);
        }
        FAIL_IF(q->out[i] != e, o, "element %d is %d, expected %d", i, q->out[i], e);
    }
    q->slot = -1;
}
#endif

/* ------------------------------------------------------------------ the window */

static op_t        win[WINDOW];
static MPI_Request reqs[WINDOW];
static long        completed;

static void complete_slot(int idx)
{
    op_t *o = &win[idx];

    if (o->kind < 0) {
        return;
    }
#if HAVE_P
    if (o->persist) {
        persist_check(o);
        reqs[idx] = MPI_REQUEST_NULL; /* the handle stays in the pool */
        op_clear(o);
        completed++;
        return;
    }
#endif
    FAIL_IF(reqs[idx] != MPI_REQUEST_NULL, o, "completed request not set to MPI_REQUEST_NULL");
    check_op(o);
    op_clear(o);
    completed++;
}

/* Completion drawn alike on every rank; what it finds done is the rank's. */
static void complete_some(uint64_t *cs)
{
    int idx, flag, out = 0, i, indices[WINDOW];

    switch (rng_below(cs, 8)) {
    case 0:
        MPI_Waitall(WINDOW, reqs, MPI_STATUSES_IGNORE);
        for (i = 0; i < WINDOW; i++) {
            complete_slot(i);
        }
        break;
    case 1:
        MPI_Testall(WINDOW, reqs, &flag, MPI_STATUSES_IGNORE);
        for (i = 0; flag && (i < WINDOW); i++) {
            complete_slot(i);
        }
        break;
    case 2:
    case 3:
        if (rng_below(cs, 2)) {
            MPI_Waitsome(WINDOW, reqs, &out, indices, MPI_STATUSES_IGNORE);
        } else {
            MPI_Testsome(WINDOW, reqs, &out, indices, MPI_STATUSES_IGNORE);
        }
        for (i = 0; (out != MPI_UNDEFINED) && (i < out); i++) {
            complete_slot(indices[i]);
        }
        break;
    case 4:
        MPI_Waitany(WINDOW, reqs, &idx, MPI_STATUS_IGNORE);
        if (idx != MPI_UNDEFINED) {
            complete_slot(idx);
        }
        break;
    case 5:
        MPI_Testany(WINDOW, reqs, &idx, &flag, MPI_STATUS_IGNORE);
        if (flag && (idx != MPI_UNDEFINED)) {
            complete_slot(idx);
        }
        break;
    case 6:
        idx = (int)rng_below(cs, WINDOW);
        MPI_Wait(&reqs[idx], MPI_STATUS_IGNORE);
        complete_slot(idx);
        break;
    default:
        idx = (int)rng_below(cs, WINDOW);
        MPI_Test(&reqs[idx], &flag, MPI_STATUS_IGNORE);
        if (flag) {
            complete_slot(idx);
        }
        break;
    }
}

/* Blocking point-to-point while the window is full: rank 0 receives from
 * every other rank of the world, which first completes its whole window;
 * their collectives need rank 0's progress while it blocks in MPI_Recv. */
static void handshake(long k)
{
    int i, v;

    if (rank == 0) {
        for (i = 1; i < size; i++) {
            MPI_Recv(&v, 1, MPI_INT, i, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (v != val(k, i, 0) && ++errs <= 10) {
                fprintf(stderr, "rank 0: handshake %ld from %d: %d, expected %d\n", k, i, v,
                        val(k, i, 0));
            }
        }
    } else {
        MPI_Waitall(WINDOW, reqs, MPI_STATUSES_IGNORE);
        for (i = 0; i < WINDOW; i++) {
            complete_slot(i);
        }
        v = val(k, rank, 0);
        MPI_Send(&v, 1, MPI_INT, 0, 99, MPI_COMM_WORLD);
    }
}

/* Posts operation k (drawn from ps) into a free slot; blocking ones run at once. */
static void post_next(uint64_t *ps, long k, int idx)
{
    op_t *o    = &win[idx];
    int   what = (int)rng_below(ps, 100), c;

    memset(o, 0, sizeof(*o));
    o->k    = k;
    o->ci   = (int)rng_below(ps, NCOMM);
    o->kind = (int)rng_below(ps, C_NCASES);
    c       = (int)rng_below(ps, 100);
    /* mostly small, some empty, a few above the rendezvous threshold */
    o->count = (c < 8)    ? 0
               : (c < 85) ? 1 + (int)rng_below(ps, 24)
               : (c < 97) ? 200 + (int)rng_below(ps, 800)
                          : 4500 + (int)rng_below(ps, 1000);
    o->root  = (int)rng_below(ps, (unsigned)csize[o->ci]);
    if ((what < 3) && (size > 1)) {
        o->kind = -1;
        handshake(k);
        return;
    }
#if HAVE_P
    if ((what < 13) && !p_off) {
        persist_t *q = &pers[o->ci][what % NPERSIST];
        int        i, me = crank[o->ci];
        if (q->slot >= 0) {
            /* still running here: complete it first (a local wait) */
            MPI_Wait(&reqs[q->slot], MPI_STATUS_IGNORE);
            complete_slot(q->slot);
        }
        for (i = 0; i < PCOUNT; i++) {
            q->sb[i]  = val(k, me, i);
            q->out[i] = (what % NPERSIST == 1 && me == 0) ? val(k, 0, i) : SENTINEL;
        }
        o->kind    = (what % NPERSIST == 0) ? C_ALLREDUCE : C_BCAST;
        o->count   = PCOUNT;
        o->root    = 0;
        o->persist = 1 + what % NPERSIST;
        if (MPI_Start(&q->req) != MPI_SUCCESS) {
            FAIL_IF(1, o, "MPI_Start failed");
        }
        reqs[idx] = q->req;
        q->slot   = idx;
        return;
    }
#endif
    o->blocking = (what >= 88) && (o->kind != C_P2P); /* the pair is non-blocking only */
    start_op(o, &reqs[idx]);
    if (o->blocking) {
        check_op(o);
        op_clear(o);
        completed++;
    }
}

int main(int argc, char **argv)
{
    long     ops = (argc > 1) ? atol(argv[1]) : 3000, k = 0;
    uint64_t seed = (argc > 2) ? strtoull(argv[2], NULL, 0) : 0x10bc;
    uint64_t ps, cs, js;
    int      i, all_errs = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    comms[0] = MPI_COMM_WORLD;
    for (i = 1; i < NCOMM - 1; i++) {
        MPI_Comm_dup(MPI_COMM_WORLD, &comms[i]);
    }
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &comms[NCOMM - 1]);
    for (i = 0; i < NCOMM; i++) {
        MPI_Comm_rank(comms[i], &crank[i]);
        MPI_Comm_size(comms[i], &csize[i]);
    }
    p_off = (getenv("AMCTEST_PERSISTENT_AS_NB") != NULL);
#if HAVE_P
    if (!p_off) {
        persist_create();
    }
#endif
    ps = seed * 0x9e3779b97f4a7c15ULL + 1;
    cs = ps ^ 0xabcdef12345ULL;
    js = ps + 0x1234567ULL * (uint64_t)(rank + 1);
    for (i = 0; i < WINDOW; i++) {
        reqs[i]     = MPI_REQUEST_NULL;
        win[i].kind = -1;
    }
    while ((k < ops) || (completed < k)) {
        /* every free slot gets the next operation, in the stream's order */
        for (i = 0; (i < WINDOW) && (k < ops); i++) {
            if (win[i].kind < 0) {
                post_next(&ps, k++, i);
            }
        }
        complete_some(&cs);
        if (rng_below(&js, 400) == 0) {
            usleep(1000 + rng_below(&js, 3000)); /* a late rank */
        }
        /* the handshake and the blocking ones leave slots free without
         * counting as posted-and-pending: completed catches up with k */
        if (k >= ops) {
            int live = 0;
            for (i = 0; i < WINDOW; i++) {
                live += (win[i].kind >= 0);
            }
            if (live == 0) {
                break;
            }
        }
    }
#if HAVE_P
    if (!p_off) {
        persist_free();
    }
#endif
    for (i = 1; i < NCOMM; i++) {
        MPI_Comm_free(&comms[i]);
    }
    MPI_Allreduce(&errs, &all_errs, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        if (all_errs == 0) {
            printf("ok mixed N=%d ops=%ld\n", size, ops);
        } else {
            printf("FAILED mixed N=%d: %d errors\n", size, all_errs);
        }
    }
    MPI_Finalize();
    return all_errs != 0;
}
