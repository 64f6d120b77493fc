/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * amcoll under MPI: the preparation of a call (prep.h).
 */
#include "mpi/prep.h"

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define AMCM_IN   1   /* pack before the call */
#define AMCM_OUT  2   /* unpack after it */

/* Which path a call takes, amcoll's or MPI's: from what every rank of the
 * call has alike (routing agreed at MPI_Init, AMCOLL_MPI_COLLS, the
 * communicator's mapping agreed at its creation), never from this rank's
 * own state (free resources, requests outstanding), or ranks would run
 * different collectives under one sequence number. */
int amcm_decide(amcm_req_t *r, int coll, int mode, MPI_Comm comm)
{
    /* all of the header: the jobs are set when counted */
    amcm_req_head(r, offsetof(amcm_req_t, pack), coll, mode, comm, NULL);
    if (!amcm_g.on) {
        return AMCM_WHY_OFF;
    }
    if (!(amcm_g.colls & (1u << coll))) {
        return AMCM_WHY_FILTER;
    }
    r->ce = amcm_comm_find(comm);
    return (r->ce != NULL) ? AMCM_ROUTE : AMCM_WHY_COMM;
}

static void *amcm_tmp(amcm_req_t *r, size_t bytes)
{
    void *p;

    if (r->nmem == (int)(sizeof(r->mem) / sizeof(r->mem[0]))) {
        return NULL;
    }
    p = malloc(bytes ? bytes : 1);
    if (p != NULL) {
        r->mem[r->nmem++] = p;
    }
    return p;
}

/* A block's datatype must outlive a non-blocking or persistent call, which
 * the user may free before it completes. */
static void amcm_own(amcm_req_t *r, amcm_blk_t *b, const amcm_dt_t *ti)
{
    MPI_Datatype d;

    if ((r->mode != AMCM_BLOCKING) && !ti->named && (b->bytes > 0) &&
        (PMPI_Type_dup(b->dt, &d) == MPI_SUCCESS)) {
        b->dt    = d;
        b->owned = 1;
    }
}

static void amcm_job_one(amcm_req_t *r, amcm_job_t *j, char *tmp, void *ubuf, long count,
                         MPI_Datatype dt, const amcm_dt_t *ti)
{
    j->tmp        = tmp;
    j->ubuf       = ubuf;
    j->n          = 1;
    j->b          = &j->one;
    j->one.count  = (int)count;
    j->one.dt     = dt;
    j->one.uoff   = 0;
    j->one.toff   = 0;
    j->one.bytes  = (size_t)count * (size_t)ti->size;
    j->one.owned  = 0;
    amcm_own(r, &j->one, ti);
}

/* count elements of dt at buf as contiguous bytes: buf itself, or a
 * temporary packed before the call (IN) and unpacked, ucount elements, after
 * it (OUT). */
static int amcm_view(amcm_req_t *r, int dir, void *buf, long count, long ucount, MPI_Datatype dt,
                     const amcm_dt_t *ti, void **out)
{
    size_t bytes;
    char  *tmp;

    if ((count < 0) || (ucount < 0)) {
        return AMC_ERR_ARG;
    }
    bytes = (size_t)count * (size_t)ti->size;
    if (ti->dense || (bytes == 0)) {
        *out = buf;
        return AMC_SUCCESS;
    }
    if ((count > INT_MAX) || (bytes > INT_MAX)) {
        return AMC_ERR_UNSUPPORTED; /* MPI_Pack counts are int */
    }
    if ((tmp = amcm_tmp(r, bytes)) == NULL) {
        return AMC_ERR_NO_MEMORY;
    }
    if (dir & AMCM_IN) {
        amcm_job_one(r, &r->pack[r->npack++], tmp, buf, count, dt, ti);
    }
    if (dir & AMCM_OUT) {
        amcm_job_one(r, &r->unpack, tmp, buf, ucount, dt, ti);
        r->nunpack = 1;
    }
    *out = tmp;
    return AMC_SUCCESS;
}

/* n blocks (counts[i] elements of dts[i], or of dt, at ubuf + displs[i]
 * extents, or + bdispls[i] bytes) as amcoll byte counts and displacements:
 * in place when every non-empty block is dense at a non-negative offset,
 * else in a packed temporary. pack_only >= 0: only that block is packed. */
static int amcm_vlayout(amcm_req_t *r, int dir, int pack_only, void *ubuf, int n,
                        const int counts[], const int displs[], const int bdispls[],
                        MPI_Datatype dt, const MPI_Datatype dts[], void **abuf, size_t **acounts,
                        size_t **adispls)
{
    size_t     *ac = amcm_tmp(r, (size_t)n * sizeof(size_t));
    size_t     *ad = amcm_tmp(r, (size_t)n * sizeof(size_t));
    amcm_blk_t *b  = amcm_tmp(r, (size_t)n * sizeof(amcm_blk_t));
    amcm_dt_t   ti, tb;
    size_t      total = 0;
    int         i, dense = 1;
    char       *tmp;

    if (!ac || !ad || !b) {
        return AMC_ERR_NO_MEMORY;
    }
    if ((counts == NULL) || ((displs == NULL) && (bdispls == NULL))) {
        return AMC_ERR_ARG;
    }
    if ((dts == NULL) && (amcm_dt_info(dt, &ti) != MPI_SUCCESS)) {
        return AMC_ERR_ARG;
    }
    for (i = 0; i < n; i++) {
        const amcm_dt_t *t = &ti;
        if (counts[i] < 0) {
            return AMC_ERR_ARG;
        }
        if (dts != NULL) {
            if (amcm_dt_info(dts[i], &tb) != MPI_SUCCESS) {
                if (counts[i] > 0) {
                    return AMC_ERR_ARG;
                }
                memset(&tb, 0, sizeof(tb));
                tb.dense = tb.named = 1;
            }
            t = &tb;
        }
        b[i].count = counts[i];
        b[i].dt    = (dts != NULL) ? dts[i] : dt;
        b[i].uoff  = (bdispls != NULL) ? (MPI_Aint)bdispls[i] : (MPI_Aint)displs[i] * t->extent;
        b[i].bytes = (size_t)counts[i] * (size_t)t->size;
        b[i].toff  = total;
        b[i].owned = 0;
        total += b[i].bytes;
        ac[i] = b[i].bytes;
        if ((b[i].bytes > 0) && (!t->dense || (b[i].uoff < 0))) {
            dense = 0;
        }
        if (b[i].bytes > INT_MAX) {
            return AMC_ERR_UNSUPPORTED;
        }
    }
    if (dense) {
        for (i = 0; i < n; i++) {
            ad[i] = (b[i].bytes > 0) ? (size_t)b[i].uoff : 0;
        }
        *abuf = ubuf;
    } else {
        if ((tmp = amcm_tmp(r, total)) == NULL) {
            return AMC_ERR_NO_MEMORY;
        }
        for (i = 0; i < n; i++) {
            ad[i] = b[i].toff;
            if (dts != NULL) {
                if (amcm_dt_info(dts[i], &tb) == MPI_SUCCESS) {
                    amcm_own(r, &b[i], &tb);
                }
            } else {
                amcm_own(r, &b[i], &ti);
            }
        }
        if (dir & AMCM_OUT) {
            r->unpack.tmp  = tmp;
            r->unpack.ubuf = ubuf;
            r->unpack.n    = n;
            r->unpack.b    = b;
            r->nunpack     = 1;
        }
        if (dir & AMCM_IN) {
            amcm_job_t *j = &r->pack[r->npack++];
            j->tmp        = tmp;
            j->ubuf       = ubuf;
            if (pack_only >= 0) {
                j->n        = 1;
                j->one      = b[pack_only];
                j->one.owned = 0; /* the block in b owns its type */
                j->b        = &j->one;
            } else {
                j->n = n;
                j->b = b;
            }
        }
        *abuf = tmp;
    }
    *acounts = ac;
    *adispls = ad;
    return AMC_SUCCESS;
}

#define AMCM_TRY(expr)                                                                         \
    do {                                                                                       \
        int t_ = (expr);                                                                       \
        if (t_ != AMC_SUCCESS) {                                                               \
            return AMCM_FAIL + t_;                                                             \
        }                                                                                      \
    } while (0)
#define AMCM_INFO(dt, ti)                                                                      \
    do {                                                                                       \
        if (amcm_dt_info((dt), (ti)) != MPI_SUCCESS) {                                         \
            return AMCM_FAIL + AMC_ERR_ARG;                                                    \
        }                                                                                      \
    } while (0)
#define AMCM_DECIDE(coll)                                                                      \
    do {                                                                                       \
        int w_ = amcm_decide(r, (coll), mode, comm);                                           \
        if (w_ != AMCM_ROUTE) {                                                                \
            return w_;                                                                         \
        }                                                                                      \
    } while (0)
#define ME   (r->ce->rank)
#define SIZE (r->ce->size)
#define UNCONST(p) ((void *)(uintptr_t)(p))

/* ------------------------------------------------------------------ preps */

int amcm_prep_barrier(amcm_req_t *r, int mode, MPI_Comm comm)
{
    AMCM_DECIDE(AMCM_BARRIER);
    return AMCM_ROUTE;
}

int amcm_prep_bcast(amcm_req_t *r, int mode, void *buf, int count, MPI_Datatype dt,
                           int root, MPI_Comm comm)
{
    amcm_dt_t ti;

    AMCM_DECIDE(AMCM_BCAST);
    if ((root < 0) || (root >= SIZE)) {
        return AMCM_WHY_ARG; /* the same on every rank: MPI reports it */
    }
    AMCM_INFO(dt, &ti);
    r->root  = root;
    r->adt   = AMC_BYTE;
    r->count = (size_t)(count > 0 ? count : 0) * (size_t)ti.size;
    AMCM_TRY(amcm_view(r, (ME == root) ? AMCM_IN : AMCM_OUT, buf, count, count, dt, &ti,
                       &r->rbuf));
    return AMCM_ROUTE;
}

/* reduce, allreduce, scan, exscan */
int amcm_prep_reduce_any(amcm_req_t *r, int mode, int coll, const void *sb, void *rb,
                                int count, MPI_Datatype dt, MPI_Op op, int root, MPI_Comm comm)
{
    amcm_dt_t ti;
    void     *p;
    int       why, at_root;

    AMCM_DECIDE(coll);
    if ((coll == AMCM_REDUCE) && ((root < 0) || (root >= SIZE))) {
        return AMCM_WHY_ARG;
    }
    if (amcm_dt_info(dt, &ti) != MPI_SUCCESS) {
        return AMCM_WHY_ARG;
    }
    if ((why = amcm_op_map(op, &ti, &r->op, &r->ubind)) != AMCM_ROUTE) {
        return why;
    }
    r->root  = root;
    r->adt   = (amc_datatype_t)ti.atype;
    r->count = (size_t)(count > 0 ? count : 0) * (size_t)ti.n;
    at_root  = (coll != AMCM_REDUCE) || (ME == root);
    if (at_root && (sb == MPI_IN_PLACE)) {
        r->sbuf = AMC_IN_PLACE;
        AMCM_TRY(amcm_view(r, AMCM_IN | AMCM_OUT, rb, count, count, dt, &ti, &r->rbuf));
    } else {
        AMCM_TRY(amcm_view(r, AMCM_IN, UNCONST(sb), count, count, dt, &ti, &p));
        r->sbuf = p;
        if (at_root) {
            AMCM_TRY(amcm_view(r, AMCM_OUT, rb, count, count, dt, &ti, &r->rbuf));
        }
    }
    if ((coll == AMCM_EXSCAN) && (ME == 0) && r->nunpack) {
        /* rank 0's result is undefined: its buffer is left alone (amcoll
         * writes into the temporary only), and the type its unpack owned
         * goes now, as the release frees only a counted job's (MPICH's
         * finalize counted these as leaked) */
        if (r->unpack.one.owned) {
            PMPI_Type_free(&r->unpack.one.dt);
            r->unpack.one.owned = 0;
        }
        r->nunpack = 0;
    }
    return AMCM_ROUTE;
}

/* gather, scatter, allgather, alltoall: per-rank bytes, one block per rank */
int amcm_prep_rooted(amcm_req_t *r, int mode, int coll, const void *sb, int sc,
                            MPI_Datatype st, void *rb, int rc, MPI_Datatype rt, int root,
                            MPI_Comm comm)
{
    amcm_dt_t si, ri;
    void     *p;
    int       rooted = (coll == AMCM_GATHER) || (coll == AMCM_SCATTER);
    int       at_root;

    AMCM_DECIDE(coll);
    if (rooted && ((root < 0) || (root >= SIZE))) {
        return AMCM_WHY_ARG;
    }
    at_root = !rooted || (ME == root);
    r->root = root;
    r->adt  = AMC_BYTE;
    if (coll == AMCM_SCATTER) {
        if (at_root) {
            AMCM_INFO(st, &si);
            r->count = (size_t)(sc > 0 ? sc : 0) * (size_t)si.size;
            AMCM_TRY(amcm_view(r, AMCM_IN, UNCONST(sb), (long)SIZE * sc, 0, st, &si, &p));
            r->sbuf = p;
            if (rb == MPI_IN_PLACE) {
                r->rbuf = AMC_IN_PLACE;
                return AMCM_ROUTE;
            }
        }
        AMCM_INFO(rt, &ri);
        if (!at_root) {
            r->count = (size_t)(rc > 0 ? rc : 0) * (size_t)ri.size;
        }
        AMCM_TRY(amcm_view(r, AMCM_OUT, rb, rc, rc, rt, &ri, &r->rbuf));
        return AMCM_ROUTE;
    }
    /* gather, allgather, alltoall */
    if (!at_root) { /* a gather leaf */
        AMCM_INFO(st, &si);
        r->count = (size_t)(sc > 0 ? sc : 0) * (size_t)si.size;
        AMCM_TRY(amcm_view(r, AMCM_IN, UNCONST(sb), sc, sc, st, &si, &p));
        r->sbuf = p;
        return AMCM_ROUTE;
    }
    AMCM_INFO(rt, &ri);
    r->count = (size_t)(rc > 0 ? rc : 0) * (size_t)ri.size;
    if (sb == MPI_IN_PLACE) {
        r->sbuf = AMC_IN_PLACE;
        AMCM_TRY(amcm_view(r, AMCM_IN | AMCM_OUT, rb, (long)SIZE * rc, (long)SIZE * rc, rt, &ri,
                           &r->rbuf));
        return AMCM_ROUTE;
    }
    AMCM_INFO(st, &si);
    AMCM_TRY(amcm_view(r, AMCM_IN, UNCONST(sb), (coll == AMCM_ALLTOALL) ? (long)SIZE * sc : sc, 0,
                       st, &si, &p));
    r->sbuf = p;
    AMCM_TRY(amcm_view(r, AMCM_OUT, rb, (long)SIZE * rc, (long)SIZE * rc, rt, &ri, &r->rbuf));
    return AMCM_ROUTE;
}

int amcm_prep_gatherv(amcm_req_t *r, int mode, const void *sb, int sc, MPI_Datatype st,
                             void *rb, const int rcs[], const int displs[], MPI_Datatype rt,
                             int root, MPI_Comm comm)
{
    amcm_dt_t si;
    void     *p;
    int       in_place;

    AMCM_DECIDE(AMCM_GATHERV);
    if ((root < 0) || (root >= SIZE)) {
        return AMCM_WHY_ARG;
    }
    r->root  = root;
    r->adt   = AMC_BYTE;
    in_place = (ME == root) && (sb == MPI_IN_PLACE);
    if (ME == root) {
        AMCM_TRY(amcm_vlayout(r, AMCM_OUT | (in_place ? AMCM_IN : 0), in_place ? root : -1, rb,
                              SIZE, rcs, displs, NULL, rt, NULL, &r->rbuf, &r->rc_, &r->rd));
    }
    if (in_place) {
        r->sbuf   = AMC_IN_PLACE;
        r->scount = r->rc_[root];
        return AMCM_ROUTE;
    }
    AMCM_INFO(st, &si);
    r->scount = (size_t)(sc > 0 ? sc : 0) * (size_t)si.size;
    AMCM_TRY(amcm_view(r, AMCM_IN, UNCONST(sb), sc, sc, st, &si, &p));
    r->sbuf = p;
    return AMCM_ROUTE;
}

int amcm_prep_scatterv(amcm_req_t *r, int mode, const void *sb, const int scs[],
                              const int displs[], MPI_Datatype st, void *rb, int rc,
                              MPI_Datatype rt, int root, MPI_Comm comm)
{
    amcm_dt_t ri;
    void     *p;

    AMCM_DECIDE(AMCM_SCATTERV);
    if ((root < 0) || (root >= SIZE)) {
        return AMCM_WHY_ARG;
    }
    r->root = root;
    r->adt  = AMC_BYTE;
    if (ME == root) {
        AMCM_TRY(amcm_vlayout(r, AMCM_IN, -1, UNCONST(sb), SIZE, scs, displs, NULL, st, NULL, &p,
                              &r->sc, &r->sd));
        r->sbuf = p;
        if (rb == MPI_IN_PLACE) {
            r->rbuf  = AMC_IN_PLACE;
            r->count = r->sc[root];
            return AMCM_ROUTE;
        }
    }
    AMCM_INFO(rt, &ri);
    r->count = (size_t)(rc > 0 ? rc : 0) * (size_t)ri.size;
    AMCM_TRY(amcm_view(r, AMCM_OUT, rb, rc, rc, rt, &ri, &r->rbuf));
    return AMCM_ROUTE;
}

int amcm_prep_allgatherv(amcm_req_t *r, int mode, const void *sb, int sc, MPI_Datatype st,
                                void *rb, const int rcs[], const int displs[], MPI_Datatype rt,
                                MPI_Comm comm)
{
    amcm_dt_t si;
    void     *p;
    int       in_place = (sb == MPI_IN_PLACE);

    AMCM_DECIDE(AMCM_ALLGATHERV);
    r->adt = AMC_BYTE;
    AMCM_TRY(amcm_vlayout(r, AMCM_OUT | (in_place ? AMCM_IN : 0), in_place ? ME : -1, rb, SIZE,
                          rcs, displs, NULL, rt, NULL, &r->rbuf, &r->rc_, &r->rd));
    if (in_place) {
        r->sbuf   = AMC_IN_PLACE;
        r->scount = r->rc_[ME];
        return AMCM_ROUTE;
    }
    AMCM_INFO(st, &si);
    r->scount = (size_t)(sc > 0 ? sc : 0) * (size_t)si.size;
    AMCM_TRY(amcm_view(r, AMCM_IN, UNCONST(sb), sc, sc, st, &si, &p));
    r->sbuf = p;
    return AMCM_ROUTE;
}

/* alltoallv (one type per side, displacements in extents) and alltoallw
 * (a type per block, displacements in bytes) */
int amcm_prep_alltoallvw(amcm_req_t *r, int mode, int coll, const void *sb,
                                const int scs[], const int sds[], MPI_Datatype st,
                                const MPI_Datatype sts[], void *rb, const int rcs[],
                                const int rds[], MPI_Datatype rt, const MPI_Datatype rts[],
                                MPI_Comm comm)
{
    int  w = (coll == AMCM_ALLTOALLW);
    void *p;

    AMCM_DECIDE(coll);
    r->adt = AMC_BYTE;
    if (sb == MPI_IN_PLACE) {
        r->sbuf = AMC_IN_PLACE;
        AMCM_TRY(amcm_vlayout(r, AMCM_IN | AMCM_OUT, -1, rb, SIZE, rcs, w ? NULL : rds,
                              w ? rds : NULL, rt, rts, &r->rbuf, &r->rc_, &r->rd));
        return AMCM_ROUTE;
    }
    AMCM_TRY(amcm_vlayout(r, AMCM_IN, -1, UNCONST(sb), SIZE, scs, w ? NULL : sds, w ? sds : NULL,
                          st, sts, &p, &r->sc, &r->sd));
    r->sbuf = p;
    AMCM_TRY(amcm_vlayout(r, AMCM_OUT, -1, rb, SIZE, rcs, w ? NULL : rds, w ? rds : NULL, rt, rts,
                          &r->rbuf, &r->rc_, &r->rd));
    return AMCM_ROUTE;
}

int amcm_prep_reduce_scatter(amcm_req_t *r, int mode, int coll, const void *sb, void *rb,
                                    int rcount, const int rcs[], MPI_Datatype dt, MPI_Op op,
                                    MPI_Comm comm)
{
    amcm_dt_t ti;
    long      total = 0, mine;
    void     *p;
    int       why, i;

    AMCM_DECIDE(coll);
    if (amcm_dt_info(dt, &ti) != MPI_SUCCESS) {
        return AMCM_WHY_ARG;
    }
    if ((why = amcm_op_map(op, &ti, &r->op, &r->ubind)) != AMCM_ROUTE) {
        return why;
    }
    r->adt = (amc_datatype_t)ti.atype;
    if (coll == AMCM_REDUCE_SCATTER_BLOCK) {
        if (rcount < 0) {
            return AMCM_FAIL + AMC_ERR_ARG;
        }
        r->count = (size_t)rcount * (size_t)ti.n;
        total    = (long)SIZE * rcount;
        mine     = rcount;
    } else {
        if (rcs == NULL) {
            return AMCM_FAIL + AMC_ERR_ARG;
        }
        r->rc_ = amcm_tmp(r, (size_t)SIZE * sizeof(size_t));
        if (r->rc_ == NULL) {
            return AMCM_FAIL + AMC_ERR_NO_MEMORY;
        }
        for (i = 0; i < SIZE; i++) {
            if (rcs[i] < 0) {
                return AMCM_FAIL + AMC_ERR_ARG;
            }
            r->rc_[i] = (size_t)rcs[i] * (size_t)ti.n;
            total += rcs[i];
        }
        mine = rcs[ME];
    }
    if (sb == MPI_IN_PLACE) {
        r->sbuf = AMC_IN_PLACE;
        AMCM_TRY(amcm_view(r, AMCM_IN | AMCM_OUT, rb, total, mine, dt, &ti, &r->rbuf));
        return AMCM_ROUTE;
    }
    AMCM_TRY(amcm_view(r, AMCM_IN, UNCONST(sb), total, 0, dt, &ti, &p));
    r->sbuf = p;
    AMCM_TRY(amcm_view(r, AMCM_OUT, rb, mine, mine, dt, &ti, &r->rbuf));
    return AMCM_ROUTE;
}
