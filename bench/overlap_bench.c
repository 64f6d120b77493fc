/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Overlap of non-blocking collectives with computation (NBCBench / osu_i*
 * style): amcoll (amc_iX + amc_wait) against Open MPI (MPI_IX + MPI_Wait,
 * libnbc) in the same job.
 *
 *   mpirun -np N bench/overlap_bench [-s sizes] [-c colls] [-k tests] ...
 *
 * Per (collective, size) cell and method, every sample preceded by the
 * method's own barrier:
 *   1. one checked call on known data (start, a few tests, wait): a wrong
 *      result or an error is reported and the cell is not timed;
 *   2. warm-up, then t estimated from a few start+wait samples; the busy loop
 *      gets t x (this rank's iterations per µs of CPU) iterations;
 *   3. reps rounds, the methods interleaved and rotated, each: pure (start;
 *      wait), comp (the loop alone), seq (the loop, then start; wait) and,
 *      per k in the test list, overlapped (start; the loop split by k evenly
 *      spaced amc_test/MPI_Test; wait);
 *   4. the overlapped call checked once more, with the real compute length.
 * A sample is this rank's time; the value of a rep is the maximum over ranks
 * (the slowest rank decides when a collective is over). t, comp, seq and
 * total are medians over reps; overhead = total - comp (OSU's definition:
 * what the loop did not hide, whether or not the calibration hit t exactly);
 * overlap % = 100 (1 - overhead / t) clipped to [0, 100]. The loop is a fixed
 * amount of work (t µs of one core's time), so a progress thread that takes
 * CPU from it counts as overhead; comp shows how well the calibration hit t
 * (with the thread t is noisier, and the loop that a few samples sized can
 * miss it by a quarter even after the one recalibration). With more
 * ranks than cores the ranks' loops cannot all run at once and total grows by
 * about (N / cores - 1) t for any library: saved % = 100 (seq - total) / t,
 * the time overlapping saved against computing first, still compares there.
 *
 * Blocking mode (-C, -S): amc_X against amc_iX + amc_wait (and MPI_X against
 * MPI_IX + MPI_Wait), back-to-back calls in blocks fenced by barriers, as in
 * coll_bench; reports both per-call medians and their ratio.
 *
 * Bytes are per rank (alltoall/allgather: the block per peer). Reductions sum
 * doubles; rooted calls use root 0; ibarrier runs once, as bytes=0.
 *
 * Output on rank 0: "RESULT mode=overlap|blocking N=.. coll=.. bytes=..
 * method=.. [k=..] status=.." lines (read by bench/run_overlap.sh) and one
 * human-readable line per cell and method.
 */
#include "config.h"

#include <amcoll.h>
#include "am_coll/context/progress.h"
#include "bench/bench_util.h"

#ifdef HAVE_MPI
#include <mpi.h>
#endif

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OB_DEF_REPS      61
#define OB_MIN_REPS      11
#define OB_DEF_CELL_MS   2000.0 /* timed part of one cell before reps shrink */
#define OB_DEF_BLOCK_MS  4.0    /* one timed block of the blocking mode */
#define OB_DEF_MAX_MIB   32
#define OB_DEF_WATCHDOG  120
#define OB_MAX_SIZES     32
#define OB_MAX_TESTS     8
#define OB_WARMUP        3
#define OB_EST_SAMPLES   15
#define OB_RECAL         1    /* reruns of a cell whose t moved from the estimate */
#define OB_CAL_TOL       0.25 /* by more than this fraction */
#define OB_CHECK_TESTS   4
#define OB_MAX_ITERS     1000000L
#define OB_CALIB_SEC     0.002
#define OB_ALIGN         4096

enum { OB_ALLREDUCE, OB_BCAST, OB_ALLTOALL, OB_ALLGATHER, OB_REDUCE, OB_BARRIER, OB_NCOLLS };

static const char *const ob_icoll_names[OB_NCOLLS] = {
    "iallreduce", "ibcast", "ialltoall", "iallgather", "ireduce", "ibarrier"
};
static const char *const ob_coll_names[OB_NCOLLS] = {
    "allreduce", "bcast", "alltoall", "allgather", "reduce", "barrier"
};

enum { OB_AMCOLL, OB_OPENMPI, OB_NMETHODS };

static const char *const ob_method_names[OB_NMETHODS] = { "amcoll", "openmpi" };

static const size_t ob_default_sizes[]  = { 8, 1024, 16384, 65536, 262144 };
static const size_t ob_default_bsizes[] = { 8, 65536 };

/* What one sample runs: start + wait; the busy loop alone; the loop, then
 * start + wait (no overlap at all); start, the loop with tests, wait. */
enum { OB_PURE, OB_COMP, OB_SEQ, OB_OVL };

typedef struct ob_opts {
    size_t   sizes[OB_MAX_SIZES];
    int      nsizes;
    size_t   bsizes[OB_MAX_SIZES]; /* blocking mode */
    int      nbsizes;
    unsigned colls, bcolls, methods;
    int      tests[OB_MAX_TESTS];
    int      ntests;
    int      reps;
    double   cell_ms;
    double   block_ms;
    long     max_mib;
    unsigned watchdog_s;
} ob_opts_t;

typedef struct ob {
    int            rank, size;
    unsigned char *sbuf, *rbuf;
    size_t         cap;
    double         rate; /* busy-loop iterations per µs of this rank's CPU */
} ob_t;

typedef struct ob_req {
    amc_request_t amc;
#ifdef HAVE_MPI
    MPI_Request mpi;
#endif
    int done;
} ob_req_t;

/* ------------------------------------------------------------------ small helpers */

static void ob_phase(const char *phase, const char *coll, size_t bytes, int method)
{
    bu_watchdog_arm("%s%s%s%s%s (%zu B)", phase, coll ? " of " : "", coll ? coll : "",
                    (method >= 0) ? " / " : "", (method >= 0) ? ob_method_names[method] : "",
                    bytes);
}

static void ob_barrier(int method)
{
    int ok;

#ifdef HAVE_MPI
    ok = (method == OB_AMCOLL) ? (amc_barrier(AMC_COMM_WORLD) == AMC_SUCCESS)
                               : (MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS);
#else
    ok = (method == OB_AMCOLL) && (amc_barrier(AMC_COMM_WORLD) == AMC_SUCCESS);
#endif
    if (!ok) {
        fprintf(stderr, "overlap_bench: rank %d: %s barrier failed\n", bu_rank,
                ob_method_names[method]);
        bu_abort(1);
    }
}

static void ob_allmax(double *v, int n)
{
    if (bu_allmax(v, n) != 0) {
        fprintf(stderr, "overlap_bench: rank %d: max over ranks failed\n", bu_rank);
        bu_abort(1);
    }
}

static double *ob_alloc(size_t n)
{
    double *p = calloc(n, sizeof(*p));

    if (p == NULL) {
        fprintf(stderr, "overlap_bench: rank %d: out of memory\n", bu_rank);
        bu_abort(1);
    }
    return p;
}

/* ------------------------------------------------------------------ the computation */

/* A dependent chain through a volatile: the compiler can neither drop nor
 * vectorise it, and it touches no memory the collective uses. */
static volatile double ob_sink;

static void ob_spin(long iters)
{
    volatile double x = 1.0;
    long            i;

    for (i = 0; i < iters; i++) {
        x = x * 0.9999999 + 1e-7;
    }
    ob_sink = x;
}

/* Iterations per µs of CPU: the fastest of many short chunks, so that a
 * chunk the scheduler cut (several ranks per core) does not count. Every rank
 * runs it at once, as the ranks compute at once during the measurement. */
static double ob_calibrate_rate(void)
{
    long   n = 256;
    double best = 1e30, el, t0;
    int    i;

    for (;;) {
        t0 = bu_now();
        ob_spin(n);
        el = bu_now() - t0;
        if ((el >= 50e-6) || (n >= (1L << 30))) {
            break;
        }
        n *= 2;
    }
    for (i = 0; i < 200; i++) {
        t0 = bu_now();
        ob_spin(n);
        el = bu_now() - t0;
        best = (el < best) ? el : best;
    }
    return (double)n / (best * 1e6);
}

/* ------------------------------------------------------------------ the collectives */

static int ob_is_reduction(int coll)
{
    return (coll == OB_ALLREDUCE) || (coll == OB_REDUCE);
}

static size_t ob_count(int coll, size_t bytes)
{
    return ob_is_reduction(coll) ? bytes / sizeof(double) : bytes;
}

static void ob_footprint(int coll, size_t bytes, int n, size_t *send, size_t *recv)
{
    size_t all = bytes * (size_t)n;

    *send = *recv = 0;
    switch (coll) {
    case OB_ALLREDUCE:
    case OB_REDUCE:
        *send = *recv = bytes;
        break;
    case OB_BCAST:
        *recv = bytes;
        break;
    case OB_ALLTOALL:
        *send = *recv = all;
        break;
    case OB_ALLGATHER:
        *send = bytes;
        *recv = all;
        break;
    default:
        break;
    }
}

static const char *ob_skip_reason(const ob_t *b, const ob_opts_t *o, int coll, size_t bytes)
{
    size_t s, r;

    if (ob_is_reduction(coll) && (bytes < sizeof(double))) {
        return "below_one_double";
    }
    ob_footprint(coll, bytes, b->size, &s, &r);
    if ((s > r ? s : r) > ((size_t)o->max_mib << 20)) {
        return "over_max_mib";
    }
    return NULL;
}

static int ob_start(const ob_t *b, int coll, int method, size_t bytes, ob_req_t *r)
{
    size_t count = ob_count(coll, bytes);
    void  *s = b->sbuf, *d = b->rbuf;

    r->done = 0;
    if (method == OB_AMCOLL) {
        amc_comm_t w = AMC_COMM_WORLD;

        r->amc = AMC_REQUEST_NULL;
        switch (coll) {
        case OB_ALLREDUCE:
            return amc_iallreduce(s, d, count, AMC_DOUBLE, AMC_SUM, w, &r->amc);
        case OB_BCAST:
            return amc_ibcast(d, count, AMC_BYTE, 0, w, &r->amc);
        case OB_ALLTOALL:
            return amc_ialltoall(s, d, count, AMC_BYTE, w, &r->amc);
        case OB_ALLGATHER:
            return amc_iallgather(s, d, count, AMC_BYTE, w, &r->amc);
        case OB_REDUCE:
            return amc_ireduce(s, d, count, AMC_DOUBLE, AMC_SUM, 0, w, &r->amc);
        case OB_BARRIER:
            return amc_ibarrier(w, &r->amc);
        default:
            return AMC_ERR_ARG;
        }
    }
#ifdef HAVE_MPI
    {
        MPI_Comm w = MPI_COMM_WORLD;
        int      c = (int)count; /* bytes <= 1 GiB */

        r->mpi = MPI_REQUEST_NULL;
        switch (coll) {
        case OB_ALLREDUCE:
            return MPI_Iallreduce(s, d, c, MPI_DOUBLE, MPI_SUM, w, &r->mpi);
        case OB_BCAST:
            return MPI_Ibcast(d, c, MPI_BYTE, 0, w, &r->mpi);
        case OB_ALLTOALL:
            return MPI_Ialltoall(s, c, MPI_BYTE, d, c, MPI_BYTE, w, &r->mpi);
        case OB_ALLGATHER:
            return MPI_Iallgather(s, c, MPI_BYTE, d, c, MPI_BYTE, w, &r->mpi);
        case OB_REDUCE:
            return MPI_Ireduce(s, d, c, MPI_DOUBLE, MPI_SUM, 0, w, &r->mpi);
        case OB_BARRIER:
            return MPI_Ibarrier(w, &r->mpi);
        default:
            return MPI_ERR_ARG;
        }
    }
#else
    return -1;
#endif
}

static int ob_test(ob_req_t *r, int method)
{
    int flag = 0, rc;

#ifdef HAVE_MPI
    rc = (method == OB_AMCOLL) ? amc_test(&r->amc, &flag)
                               : MPI_Test(&r->mpi, &flag, MPI_STATUS_IGNORE);
#else
    (void)method;
    rc = amc_test(&r->amc, &flag);
#endif
    if ((rc == 0) && flag) {
        r->done = 1;
    }
    return rc;
}

static int ob_wait(ob_req_t *r, int method)
{
    if (r->done) {
        return 0;
    }
    r->done = 1;
#ifdef HAVE_MPI
    if (method != OB_AMCOLL) {
        return MPI_Wait(&r->mpi, MPI_STATUS_IGNORE);
    }
#else
    (void)method;
#endif
    return amc_wait(&r->amc);
}

static int ob_blocking(const ob_t *b, int coll, int method, size_t bytes)
{
    size_t count = ob_count(coll, bytes);
    void  *s = b->sbuf, *d = b->rbuf;

    if (method == OB_AMCOLL) {
        amc_comm_t w = AMC_COMM_WORLD;

        switch (coll) {
        case OB_ALLREDUCE:
            return amc_allreduce(s, d, count, AMC_DOUBLE, AMC_SUM, w);
        case OB_BCAST:
            return amc_bcast(d, count, AMC_BYTE, 0, w);
        case OB_ALLTOALL:
            return amc_alltoall(s, d, count, AMC_BYTE, w);
        case OB_ALLGATHER:
            return amc_allgather(s, d, count, AMC_BYTE, w);
        case OB_REDUCE:
            return amc_reduce(s, d, count, AMC_DOUBLE, AMC_SUM, 0, w);
        case OB_BARRIER:
            return amc_barrier(w);
        default:
            return AMC_ERR_ARG;
        }
    }
#ifdef HAVE_MPI
    {
        MPI_Comm w = MPI_COMM_WORLD;
        int      c = (int)count;

        switch (coll) {
        case OB_ALLREDUCE:
            return MPI_Allreduce(s, d, c, MPI_DOUBLE, MPI_SUM, w);
        case OB_BCAST:
            return MPI_Bcast(d, c, MPI_BYTE, 0, w);
        case OB_ALLTOALL:
            return MPI_Alltoall(s, c, MPI_BYTE, d, c, MPI_BYTE, w);
        case OB_ALLGATHER:
            return MPI_Allgather(s, c, MPI_BYTE, d, c, MPI_BYTE, w);
        case OB_REDUCE:
            return MPI_Reduce(s, d, c, MPI_DOUBLE, MPI_SUM, 0, w);
        case OB_BARRIER:
            return MPI_Barrier(w);
        default:
            return MPI_ERR_ARG;
        }
    }
#else
    return -1;
#endif
}

/* start + wait, the non-blocking path of the blocking mode. */
static int ob_start_wait(const ob_t *b, int coll, int method, size_t bytes)
{
    ob_req_t r;
    int      rc = ob_start(b, coll, method, bytes, &r);

    return (rc != 0) ? rc : ob_wait(&r, method);
}

static void ob_call_error(const char *coll, int method, size_t bytes, const char *where, int rc)
{
    if (method == OB_AMCOLL) {
        fprintf(stderr, "overlap_bench: rank %d: amc_%s(%zu B) %s: %s\n", bu_rank, coll, bytes,
                where, amc_strerror(rc));
    } else {
        fprintf(stderr, "overlap_bench: rank %d: MPI_%s(%zu B) %s failed (%d)\n", bu_rank, coll,
                bytes, where, rc);
    }
}

/* The busy loop in k + 1 equal pieces with a test after each of the first k;
 * no more tests once the request is done. */
static int ob_compute(long iters, int k, ob_req_t *r, int method)
{
    long piece = iters / (k + 1);
    int  i, rc;

    for (i = 0; i < k; i++) {
        ob_spin(piece);
        if (!r->done && ((rc = ob_test(r, method)) != 0)) {
            return rc;
        }
    }
    ob_spin(iters - piece * k);
    return 0;
}

/* ------------------------------------------------------------------ known data */

static unsigned char ob_pat(int src, int dst, size_t j)
{
    return (unsigned char)((unsigned)src * 53u + (unsigned)dst * 7u + (unsigned)j * 13u + 5u +
                           (unsigned)(j >> 8));
}

/* Small integers: every sum is exact. */
static double ob_val(int r, size_t i)
{
    return (double)(r + 1) * (double)((i % 7) + 1);
}

static void ob_fill(const ob_t *b, int coll, size_t bytes)
{
    size_t s, r, j, count = ob_count(coll, bytes);
    int    d;

    ob_footprint(coll, bytes, b->size, &s, &r);
    memset(b->rbuf, 0xA5, r);
    switch (coll) {
    case OB_ALLREDUCE:
    case OB_REDUCE:
        for (j = 0; j < count; j++) {
            ((double *)(void *)b->sbuf)[j] = ob_val(b->rank, j);
        }
        break;
    case OB_BCAST:
        if (b->rank == 0) {
            for (j = 0; j < bytes; j++) {
                b->rbuf[j] = ob_pat(0, 0, j);
            }
        }
        break;
    case OB_ALLTOALL:
        for (d = 0; d < b->size; d++) {
            for (j = 0; j < bytes; j++) {
                b->sbuf[(size_t)d * bytes + j] = ob_pat(b->rank, d, j);
            }
        }
        break;
    case OB_ALLGATHER:
        for (j = 0; j < bytes; j++) {
            b->sbuf[j] = ob_pat(b->rank, 0, j);
        }
        break;
    default:
        break;
    }
}

/* 0 when this rank's output is what the collective must produce. */
static int ob_verify(const ob_t *b, int coll, size_t bytes, char *why, size_t whylen)
{
    size_t count = ob_count(coll, bytes), j;
    double n     = (double)b->size;
    int    src;

    switch (coll) {
    case OB_REDUCE:
        if (b->rank != 0) {
            return 0;
        }
        /* fall through */
    case OB_ALLREDUCE:
        for (j = 0; j < count; j++) {
            double want = n * (n + 1) / 2 * (double)((j % 7) + 1);
            double got  = ((const double *)(const void *)b->rbuf)[j];

            if (got != want) {
                snprintf(why, whylen, "double %zu is %g, want %g", j, got, want);
                return -1;
            }
        }
        return 0;
    case OB_BCAST:
        for (j = 0; j < bytes; j++) {
            if (b->rbuf[j] != ob_pat(0, 0, j)) {
                snprintf(why, whylen, "byte %zu is 0x%02x, want 0x%02x", j, b->rbuf[j],
                         ob_pat(0, 0, j));
                return -1;
            }
        }
        return 0;
    case OB_ALLTOALL:
    case OB_ALLGATHER:
        for (src = 0; src < b->size; src++) {
            int dst = (coll == OB_ALLTOALL) ? b->rank : 0;

            for (j = 0; j < bytes; j++) {
                unsigned char got = b->rbuf[(size_t)src * bytes + j];

                if (got != ob_pat(src, dst, j)) {
                    snprintf(why, whylen, "block of rank %d, byte %zu is 0x%02x, want 0x%02x",
                             src, j, got, ob_pat(src, dst, j));
                    return -1;
                }
            }
        }
        return 0;
    default:
        return 0;
    }
}

/* ------------------------------------------------------------------ checked calls */

enum { OB_OK, OB_UNSUPPORTED, OB_ERROR, OB_WRONG };

static const char *const ob_status_names[] = { "ok", "unsupported", "error", "wrong" };
static const char *const ob_status_reasons[] = { "", "AMC_ERR_UNSUPPORTED", "call_returned_error",
                                                 "result_check_failed" };

/* How a checked call runs: the blocking call; start + wait; start, the busy
 * loop split by k tests, wait. */
enum { OB_CHK_BLOCKING, OB_CHK_START_WAIT, OB_CHK_OVERLAP };

/* One call on known data, verified; the status agreed by all ranks (the
 * worst wins). */
static int ob_check(const ob_t *b, int coll, int method, size_t bytes, int how, long iters, int k)
{
    const char *name = (how == OB_CHK_BLOCKING) ? ob_coll_names[coll] : ob_icoll_names[coll];
    char        why[160] = "";
    double      st;
    ob_req_t    r;
    int         rc;

    ob_fill(b, coll, bytes);
    ob_barrier(method);
    if (how == OB_CHK_BLOCKING) {
        rc = ob_blocking(b, coll, method, bytes);
    } else {
        rc = ob_start(b, coll, method, bytes, &r);
        if ((rc == 0) && (how == OB_CHK_OVERLAP)) {
            rc = ob_compute(iters, k, &r, method);
        }
        if (rc == 0) {
            rc = ob_wait(&r, method);
        }
    }
    if ((rc == AMC_ERR_UNSUPPORTED) && (method == OB_AMCOLL)) {
        st = OB_UNSUPPORTED;
    } else if (rc != 0) {
        ob_call_error(name, method, bytes, "checked call", rc);
        st = OB_ERROR;
    } else if (ob_verify(b, coll, bytes, why, sizeof(why)) != 0) {
        fprintf(stderr, "overlap_bench: rank %d: WRONG RESULT from %s %s (%zu B, N=%d): %s\n",
                b->rank, ob_method_names[method], name, bytes, b->size, why);
        st = OB_WRONG;
    } else {
        st = OB_OK;
    }
    ob_barrier(method);
    ob_allmax(&st, 1);
    return (int)st;
}

/* ------------------------------------------------------------------ overlap mode */

/* One sample on this rank, in seconds, after the method's barrier. */
static double ob_sample(const ob_t *b, int coll, int method, size_t bytes, int kind, long iters,
                        int k)
{
    ob_req_t r;
    double   t0, el;
    int      rc = 0;

    ob_barrier(method);
    t0 = bu_now();
    if ((kind == OB_COMP) || (kind == OB_SEQ)) {
        ob_spin(iters);
    }
    if (kind != OB_COMP) {
        rc = ob_start(b, coll, method, bytes, &r);
        if ((rc == 0) && (kind == OB_OVL)) {
            rc = ob_compute(iters, k, &r, method);
        }
        if (rc == 0) {
            rc = ob_wait(&r, method);
        }
    }
    el = bu_now() - t0;
    if (rc != 0) {
        /* Peers are inside the same collective and would wait for us forever. */
        ob_call_error(ob_icoll_names[coll], method, bytes, "timed call", rc);
        bu_abort(1);
    }
    return el;
}

static void ob_result_skip(const ob_t *b, const ob_opts_t *o, int coll, size_t bytes, int method,
                           const char *status, const char *reason)
{
    int j;

    if (b->rank != 0) {
        return;
    }
    for (j = 0; j < o->ntests; j++) {
        printf("RESULT mode=overlap N=%d coll=%s bytes=%zu method=%s k=%d status=%s reason=%s\n",
               b->size, ob_icoll_names[coll], bytes, ob_method_names[method], o->tests[j], status,
               reason);
    }
}

/* Samples of one cell: [rep][method][quantity], quantity OB_PURE, OB_COMP,
 * OB_SEQ, then OB_OVL + j = overlapped with tests[j]. */
#define OB_NQ(o)             (OB_OVL + (o)->ntests)
#define OB_IDX(o, rep, m, q) \
    (((size_t)(rep) * OB_NMETHODS + (size_t)(m)) * (size_t)OB_NQ(o) + (size_t)(q))

/* Median, quartiles and extremes of quantity q of method m, in µs. */
typedef bu_stats_t ob_sum_t;

static ob_sum_t ob_summary(const ob_opts_t *o, const double *t, int reps, int m, int q, double *v)
{
    ob_sum_t s;
    int      r;

    for (r = 0; r < reps; r++) {
        v[r] = t[OB_IDX(o, r, m, q)] * 1e6;
    }
    bu_stats(v, reps, &s);
    return s;
}

static void ob_report(const ob_t *b, const ob_opts_t *o, int coll, size_t bytes, int m,
                      const double *t, int reps, long iters)
{
    double  *v = ob_alloc((size_t)reps), pct[OB_MAX_TESTS];
    ob_sum_t pure = ob_summary(o, t, reps, m, OB_PURE, v);
    ob_sum_t comp = ob_summary(o, t, reps, m, OB_COMP, v);
    ob_sum_t seq  = ob_summary(o, t, reps, m, OB_SEQ, v);
    ob_sum_t tot[OB_MAX_TESTS];
    double   tm = pure.median, cm = comp.median;
    int      j;

    for (j = 0; j < o->ntests; j++) {
        tot[j] = ob_summary(o, t, reps, m, OB_OVL + j, v);
        pct[j] = (tm > 0) ? 100.0 * (1.0 - (tot[j].median - cm) / tm) : 0.0;
        pct[j] = (pct[j] < 0) ? 0 : ((pct[j] > 100) ? 100 : pct[j]);
    }
    free(v);

    printf("  N=%-3d %-10s %7zu B %-7s t %9.2f  comp %9.2f  seq %9.2f us", b->size,
           ob_icoll_names[coll], bytes, ob_method_names[m], tm, comp.median, seq.median);
    for (j = 0; j < o->ntests; j++) {
        printf("  | k=%d total %9.2f ovh %9.2f (%3.0f%%)", o->tests[j], tot[j].median,
               tot[j].median - cm, pct[j]);
    }
    printf("\n");
    /* overhead = total - comp: its spread is that of total, shifted by the median comp */
    for (j = 0; j < o->ntests; j++) {
        printf("RESULT mode=overlap N=%d coll=%s bytes=%zu method=%s k=%d status=ok "
               "t_us=%.3f t_q1_us=%.3f t_q3_us=%.3f t_min_us=%.3f t_max_us=%.3f "
               "comp_us=%.3f comp_q1_us=%.3f comp_q3_us=%.3f seq_us=%.3f "
               "total_us=%.3f total_q1_us=%.3f total_q3_us=%.3f total_min_us=%.3f "
               "total_max_us=%.3f ovh_us=%.3f ovh_q1_us=%.3f ovh_q3_us=%.3f ovh_min_us=%.3f "
               "ovh_max_us=%.3f overlap_pct=%.1f saved_pct=%.1f iters=%ld reps=%d\n",
               b->size, ob_icoll_names[coll], bytes, ob_method_names[m], o->tests[j], tm,
               pure.q1, pure.q3, pure.min, pure.max, comp.median, comp.q1, comp.q3, seq.median,
               tot[j].median, tot[j].q1, tot[j].q3, tot[j].min, tot[j].max, tot[j].median - cm,
               tot[j].q1 - cm, tot[j].q3 - cm, tot[j].min - cm, tot[j].max - cm, pct[j],
               (tm > 0) ? 100.0 * (seq.median - tot[j].median) / tm : 0.0, iters, reps);
    }
}

/* The timed reps of one cell, methods interleaved and rotated; returns how
 * many ran. Slow cells get fewer, never under OB_MIN_REPS: the first rep's
 * duration, agreed by all ranks, decides (with more ranks than cores it is
 * several times what t alone predicts). */
static int ob_reps(const ob_t *b, const ob_opts_t *o, int coll, size_t bytes, const int *ms,
                   int nm, const int *live, const long *iters, double *t)
{
    int reps = o->reps, rep, j, m, q;

    for (rep = 0; rep < reps; rep++) {
        double t0 = bu_now(), el;

        for (j = 0; j < nm; j++) {
            m = ms[(rep + j) % nm];
            if (!live[m]) {
                continue;
            }
            ob_phase("timing", ob_icoll_names[coll], bytes, m);
            for (q = OB_PURE; q < OB_OVL; q++) {
                t[OB_IDX(o, rep, m, q)] = ob_sample(b, coll, m, bytes, q, iters[m], 0);
            }
            for (q = 0; q < o->ntests; q++) {
                t[OB_IDX(o, rep, m, OB_OVL + q)] =
                    ob_sample(b, coll, m, bytes, OB_OVL, iters[m], o->tests[q]);
            }
        }
        if (rep == 0) {
            el = bu_now() - t0;
            ob_allmax(&el, 1);
            if (el * reps > o->cell_ms * 1e-3) {
                reps = (int)(o->cell_ms * 1e-3 / el);
                reps = (reps < OB_MIN_REPS) ? OB_MIN_REPS : ((reps > o->reps) ? o->reps : reps);
            }
        }
    }
    return reps;
}

static void ob_cell(const ob_t *b, const ob_opts_t *o, int coll, size_t bytes)
{
    const char *name = ob_icoll_names[coll];
    const char *skip = ob_skip_reason(b, o, coll, bytes);
    int         ms[OB_NMETHODS], nm = 0, live[OB_NMETHODS] = { 0 }, kmax = 0;
    int         j, m, rep, reps, i, nq = OB_NQ(o);
    long        iters[OB_NMETHODS] = { 0 };
    double      est[OB_EST_SAMPLES * OB_NMETHODS] = { 0 }, t_est[OB_NMETHODS] = { 0 };
    double     *t;

    for (m = 0; m < OB_NMETHODS; m++) {
        if (o->methods & (1u << m)) {
            ms[nm++] = m;
        }
    }
    for (j = 0; j < o->ntests; j++) {
        kmax = (o->tests[j] > kmax) ? o->tests[j] : kmax;
    }
    if (skip != NULL) {
        for (j = 0; j < nm; j++) {
            ob_result_skip(b, o, coll, bytes, ms[j], "skipped", skip);
        }
        return;
    }

    /* 1. correctness first; the first call also carries the first-contact
     *    cost (wire-up), which stays out of the samples */
    for (j = 0; j < nm; j++) {
        int st;

        m = ms[j];
        ob_phase("checked call", name, bytes, m);
        st = ob_check(b, coll, m, bytes, OB_CHK_OVERLAP, 0, OB_CHECK_TESTS);
        if (st == OB_OK) {
            live[m] = 1;
        } else {
            ob_result_skip(b, o, coll, bytes, m, ob_status_names[st], ob_status_reasons[st]);
        }
    }

    /* 2. warm-up and an estimate of t that sizes the busy loop */
    for (i = 0; i < OB_WARMUP + OB_EST_SAMPLES; i++) {
        for (j = 0; j < nm; j++) {
            m = ms[(i + j) % nm];
            if (!live[m]) {
                continue;
            }
            ob_phase("warm-up", name, bytes, m);
            est[(i < OB_WARMUP ? 0 : i - OB_WARMUP) * OB_NMETHODS + m] =
                ob_sample(b, coll, m, bytes, OB_PURE, 0, 0);
        }
    }
    ob_phase("max over ranks", name, bytes, -1);
    ob_allmax(est, OB_EST_SAMPLES * OB_NMETHODS);
    for (m = 0; m < OB_NMETHODS; m++) {
        double v[OB_EST_SAMPLES];

        if (!live[m]) {
            continue;
        }
        for (i = 0; i < OB_EST_SAMPLES; i++) {
            v[i] = est[i * OB_NMETHODS + m];
        }
        t_est[m] = bu_median(v, OB_EST_SAMPLES);
        iters[m] = (long)(t_est[m] * 1e6 * b->rate + 0.5);
    }
    /* 3. the timed reps; once more with a new loop length when the t they
     *    measure is far from the estimate that sized the loop (the estimate
     *    came from few samples, on a machine others share) */
    t = ob_alloc((size_t)o->reps * OB_NMETHODS * (size_t)nq);
    for (i = 0;; i++) {
        int redo = 0;

        reps = ob_reps(b, o, coll, bytes, ms, nm, live, iters, t);
        ob_phase("max over ranks", name, bytes, -1);
        ob_allmax(t, reps * OB_NMETHODS * nq);
        for (m = 0; (m < OB_NMETHODS) && (i < OB_RECAL); m++) {
            double *v = ob_alloc((size_t)reps), tp;

            if (live[m]) {
                for (rep = 0; rep < reps; rep++) {
                    v[rep] = t[OB_IDX(o, rep, m, OB_PURE)];
                }
                tp = bu_median(v, reps);
                if ((tp > 0) && ((tp > t_est[m] * (1 + OB_CAL_TOL)) ||
                                 (tp < t_est[m] * (1 - OB_CAL_TOL)))) {
                    t_est[m] = tp;
                    iters[m] = (long)(tp * 1e6 * b->rate + 0.5);
                    redo     = 1;
                }
            }
            free(v);
        }
        if (!redo) {
            break;
        }
    }

    /* 4. the overlapped call once more, checked, with the real compute length */
    for (j = 0; j < nm; j++) {
        int st;

        m = ms[j];
        if (!live[m]) {
            continue;
        }
        ob_phase("second checked call", name, bytes, m);
        st = ob_check(b, coll, m, bytes, OB_CHK_OVERLAP, iters[m], kmax);
        if (st != OB_OK) {
            live[m] = 0;
            ob_result_skip(b, o, coll, bytes, m, ob_status_names[st], ob_status_reasons[st]);
        }
    }

    if (b->rank == 0) {
        for (j = 0; j < nm; j++) {
            m = ms[j];
            if (live[m]) {
                ob_report(b, o, coll, bytes, m, t, reps, iters[m]);
            }
        }
        fflush(stdout);
    }
    free(t);
}

/* ------------------------------------------------------------------ blocking mode */

/* iters calls fenced by barriers, timed on this rank; variant 0 = blocking,
 * 1 = start + wait. */
static double ob_block(const ob_t *b, int coll, int method, int variant, size_t bytes, long iters)
{
    double t0, el;
    long   i;
    int    rc;

    ob_barrier(method);
    t0 = bu_now();
    for (i = 0; i < iters; i++) {
        rc = variant ? ob_start_wait(b, coll, method, bytes) : ob_blocking(b, coll, method, bytes);
        if (rc != 0) {
            ob_call_error(variant ? ob_icoll_names[coll] : ob_coll_names[coll], method, bytes,
                          "timed call", rc);
            bu_abort(1);
        }
    }
    el = bu_now() - t0;
    /* every rank is done with this library before the other one runs */
    ob_barrier(method);
    return el;
}

/* Seconds per call on the slowest rank, from doubling counts (a warm-up too). */
static double ob_block_calibrate(const ob_t *b, int coll, int method, int variant, size_t bytes)
{
    long   k = 1;
    double el;

    for (;;) {
        el = ob_block(b, coll, method, variant, bytes, k);
        ob_allmax(&el, 1);
        if ((el >= OB_CALIB_SEC) || (k >= OB_MAX_ITERS)) {
            return el / (double)k;
        }
        k *= 2;
    }
}

static void ob_bcell(const ob_t *b, const ob_opts_t *o, int coll, size_t bytes)
{
    enum { NV = 2 * OB_NMETHODS }; /* variant v: method v / 2, start+wait if v odd */
    const char *skip = ob_skip_reason(b, o, coll, bytes);
    int         vs[NV], nv = 0, live[NV] = { 0 }, v, j, rep, reps;
    long        iters[NV] = { 0 };
    double      slowest = 0, *t;

    for (v = 0; v < NV; v++) {
        if (o->methods & (1u << (v / 2))) {
            vs[nv++] = v;
        }
    }
    if (skip != NULL) {
        if (b->rank == 0) {
            for (j = 0; j < nv; j += 2) {
                printf("RESULT mode=blocking N=%d coll=%s bytes=%zu method=%s status=skipped "
                       "reason=%s\n", b->size, ob_coll_names[coll], bytes,
                       ob_method_names[vs[j] / 2], skip);
            }
        }
        return;
    }
    for (j = 0; j < nv; j++) {
        int st;

        v = vs[j];
        ob_phase(v % 2 ? "checked call (start+wait)" : "checked call (blocking)",
                 ob_coll_names[coll], bytes, v / 2);
        st = ob_check(b, coll, v / 2, bytes, (v % 2) ? OB_CHK_START_WAIT : OB_CHK_BLOCKING, 0, 0);
        live[v] = (st == OB_OK);
        if ((st != OB_OK) && (b->rank == 0)) {
            printf("RESULT mode=blocking N=%d coll=%s bytes=%zu method=%s status=%s "
                   "reason=%s variant=%s\n", b->size, ob_coll_names[coll], bytes,
                   ob_method_names[v / 2], ob_status_names[st], ob_status_reasons[st],
                   (v % 2) ? "start_wait" : "blocking");
        }
    }
    for (j = 0; j < nv; j++) {
        double per_op;

        v = vs[j];
        if (!live[v]) {
            continue;
        }
        ob_phase("calibration", ob_coll_names[coll], bytes, v / 2);
        per_op   = ob_block_calibrate(b, coll, v / 2, v % 2, bytes);
        iters[v] = (long)(o->block_ms * 1e-3 / per_op);
        iters[v] = (iters[v] < 1) ? 1 : ((iters[v] > OB_MAX_ITERS) ? OB_MAX_ITERS : iters[v]);
        slowest += per_op * (double)iters[v];
    }
    reps = o->reps;
    if ((slowest > 0) && (slowest * reps > o->cell_ms * 1e-3)) {
        reps = (int)(o->cell_ms * 1e-3 / slowest);
        reps = (reps < OB_MIN_REPS) ? OB_MIN_REPS : ((reps > o->reps) ? o->reps : reps);
    }
    t = ob_alloc((size_t)reps * NV);
    for (rep = 0; rep < reps; rep++) {
        for (j = 0; j < nv; j++) {
            v = vs[(rep + j) % nv];
            if (!live[v]) {
                continue;
            }
            ob_phase("timing", ob_coll_names[coll], bytes, v / 2);
            t[rep * NV + v] = ob_block(b, coll, v / 2, v % 2, bytes, iters[v]) / (double)iters[v];
        }
    }
    ob_phase("max over ranks", ob_coll_names[coll], bytes, -1);
    ob_allmax(t, reps * NV);

    if (b->rank == 0) {
        double    *x = ob_alloc((size_t)reps);
        bu_stats_t st[NV];
        int        r;

        for (j = 0; j < nv; j++) {
            v = vs[j];
            if (!live[v]) {
                continue;
            }
            for (r = 0; r < reps; r++) {
                x[r] = t[r * NV + v] * 1e6;
            }
            bu_stats(x, reps, &st[v]);
        }
        for (j = 0; j < nv; j += 2) {
            int bl = vs[j], nb = vs[j] + 1;

            if (!live[bl] || !live[nb]) {
                continue;
            }
            printf("  N=%-3d %-10s %7zu B %-7s blocking %9.3f us  start+wait %9.3f us  "
                   "ratio %.3f\n", b->size, ob_coll_names[coll], bytes, ob_method_names[bl / 2],
                   st[bl].median, st[nb].median, st[nb].median / st[bl].median);
            /* ratio_q1: of the lower quartiles, which a busy machine disturbs least */
            printf("RESULT mode=blocking N=%d coll=%s bytes=%zu method=%s status=ok "
                   "blk_us=%.3f blk_q1_us=%.3f blk_q3_us=%.3f nbw_us=%.3f nbw_q1_us=%.3f "
                   "nbw_q3_us=%.3f ratio=%.4f ratio_q1=%.4f blk_iters=%ld nbw_iters=%ld "
                   "reps=%d\n",
                   b->size, ob_coll_names[coll], bytes, ob_method_names[bl / 2], st[bl].median,
                   st[bl].q1, st[bl].q3, st[nb].median, st[nb].q1, st[nb].q3,
                   st[nb].median / st[bl].median, st[nb].q1 / st[bl].q1, iters[bl], iters[nb],
                   reps);
        }
        fflush(stdout);
        free(x);
    }
    free(t);
}

/* ------------------------------------------------------------------ options */

static void ob_usage(FILE *f)
{
    if (bu_opt_quiet) {
        return;
    }
    fprintf(f,
        "usage: mpirun -np N overlap_bench [-s sizes] [-c colls] [-m methods] [-k tests]\n"
        "                                  [-r reps] [-T cell_ms] [-S sizes] [-C colls]\n"
        "                                  [-t block_ms] [-M max_mib] [-W watchdog_s]\n"
        "  -s  bytes per rank, comma list, K/M suffixes (default 8,1K,16K,64K,256K)\n"
        "                                                    env AMC_BENCH_SIZES\n"
        "  -c  non-blocking collectives to overlap, or none (default all):\n"
        "      iallreduce,ibcast,ialltoall,iallgather,ireduce,ibarrier\n"
        "                                                    env AMC_BENCH_COLLS\n"
        "  -m  methods: amcoll,openmpi (default both)        env AMC_BENCH_METHODS\n"
        "  -k  test calls spread over the computation, comma list, at most %d values\n"
        "      in [0, 64] (default 0,4)                      env AMC_BENCH_TESTS\n"
        "  -r  reps per cell; medians are reported (default %d)\n"
        "                                                    env AMC_BENCH_REPS\n"
        "  -T  timed ms per cell past which reps shrink, down to %d (default %.0f)\n"
        "                                                    env AMC_BENCH_CELL_MS\n"
        "  -S  sizes of the blocking-vs-start+wait mode (default 8,64K)\n"
        "                                                    env AMC_BENCH_BLOCKING_SIZES\n"
        "  -C  its collectives, or none (default allreduce,bcast,alltoall,barrier;\n"
        "      also allgather, reduce)                       env AMC_BENCH_BLOCKING_COLLS\n"
        "  -t  wanted duration of one timed block of that mode, ms (default %.0f)\n"
        "                                                    env AMC_BENCH_TARGET_MS\n"
        "  -M  skip alltoall/allgather cells whose N * bytes exceeds this many MiB\n"
        "      per rank (default %d)                          env AMC_BENCH_MAX_MIB\n"
        "  -W  abort a rank stuck this long in one phase, 0 = never (default %d)\n"
        "                                                    env AMC_BENCH_WATCHDOG\n",
        OB_MAX_TESTS, OB_DEF_REPS, OB_MIN_REPS, OB_DEF_CELL_MS, OB_DEF_BLOCK_MS, OB_DEF_MAX_MIB,
        OB_DEF_WATCHDOG);
}

static int ob_parse_colls(const char *what, const char *val, const char *const *names,
                          unsigned *mask)
{
    if (strcmp(val, "none") == 0) {
        *mask = 0;
        return 0;
    }
    return bu_parse_list(what, val, names, OB_NCOLLS, mask);
}

static int ob_parse_tests(const char *what, const char *val, ob_opts_t *o)
{
    char *copy = strdup(val), *tok, *save = NULL;
    long  v;
    int   rc = 0;

    if (copy == NULL) {
        bu_opt_error("out of memory");
        return -1;
    }
    o->ntests = 0;
    for (tok = strtok_r(copy, ", \t", &save); (tok != NULL) && (rc == 0);
         tok = strtok_r(NULL, ", \t", &save)) {
        if (o->ntests == OB_MAX_TESTS) {
            bu_opt_error("%s: more than %d values", what, OB_MAX_TESTS);
            rc = -1;
        } else if ((rc = bu_parse_long(what, tok, 0, 64, &v)) == 0) {
            o->tests[o->ntests++] = (int)v;
        }
    }
    free(copy);
    if ((rc == 0) && (o->ntests == 0)) {
        bu_opt_error("%s: empty list", what);
        rc = -1;
    }
    return rc;
}

static int ob_apply(void *opts, int c, const char *what, const char *val)
{
    ob_opts_t *o = opts;
    long       v;

    switch (c) {
    case 's':
        return bu_parse_sizes(what, val, o->sizes, OB_MAX_SIZES, &o->nsizes);
    case 'S':
        return bu_parse_sizes(what, val, o->bsizes, OB_MAX_SIZES, &o->nbsizes);
    case 'c':
        return ob_parse_colls(what, val, ob_icoll_names, &o->colls);
    case 'C':
        return ob_parse_colls(what, val, ob_coll_names, &o->bcolls);
    case 'm':
        return bu_parse_list(what, val, ob_method_names, OB_NMETHODS, &o->methods);
    case 'k':
        return ob_parse_tests(what, val, o);
    case 'r':
        if (bu_parse_long(what, val, 1, 10000, &v) != 0) {
            return -1;
        }
        o->reps = (int)v;
        return 0;
    case 'T':
        if (bu_parse_long(what, val, 1, 3600000, &v) != 0) {
            return -1;
        }
        o->cell_ms = (double)v;
        return 0;
    case 't':
        if (bu_parse_long(what, val, 1, 600000, &v) != 0) {
            return -1;
        }
        o->block_ms = (double)v;
        return 0;
    case 'M':
        if (bu_parse_long(what, val, 1, 1 << 20, &v) != 0) {
            return -1;
        }
        o->max_mib = v;
        return 0;
    case 'W':
        if (bu_parse_long(what, val, 0, 86400, &v) != 0) {
            return -1;
        }
        o->watchdog_s = (unsigned)v;
        return 0;
    default:
        return -1;
    }
}

static int ob_parse_opts(int argc, char **argv, ob_opts_t *o)
{
    static const bu_env_opt_t envs[] = {
        { 's', "AMC_BENCH_SIZES" },          { 'c', "AMC_BENCH_COLLS" },
        { 'm', "AMC_BENCH_METHODS" },        { 'k', "AMC_BENCH_TESTS" },
        { 'r', "AMC_BENCH_REPS" },           { 'T', "AMC_BENCH_CELL_MS" },
        { 'S', "AMC_BENCH_BLOCKING_SIZES" }, { 'C', "AMC_BENCH_BLOCKING_COLLS" },
        { 't', "AMC_BENCH_TARGET_MS" },      { 'M', "AMC_BENCH_MAX_MIB" },
        { 'W', "AMC_BENCH_WATCHDOG" },
    };
    int rc;

    memset(o, 0, sizeof(*o));
    o->nsizes = (int)(sizeof(ob_default_sizes) / sizeof(ob_default_sizes[0]));
    memcpy(o->sizes, ob_default_sizes, sizeof(ob_default_sizes));
    o->nbsizes = (int)(sizeof(ob_default_bsizes) / sizeof(ob_default_bsizes[0]));
    memcpy(o->bsizes, ob_default_bsizes, sizeof(ob_default_bsizes));
    o->colls      = (1u << OB_NCOLLS) - 1;
    o->bcolls     = (1u << OB_ALLREDUCE) | (1u << OB_BCAST) | (1u << OB_ALLTOALL) |
                    (1u << OB_BARRIER);
    o->methods    = (1u << OB_NMETHODS) - 1;
    o->tests[0]   = 0;
    o->tests[1]   = 4;
    o->ntests     = 2;
    o->reps       = OB_DEF_REPS;
    o->cell_ms    = OB_DEF_CELL_MS;
    o->block_ms   = OB_DEF_BLOCK_MS;
    o->max_mib    = OB_DEF_MAX_MIB;
    o->watchdog_s = OB_DEF_WATCHDOG;

    rc = bu_parse_opts(argc, argv, "s:c:m:k:r:T:S:C:t:M:W:h", envs,
                       sizeof(envs) / sizeof(envs[0]), ob_apply, o, ob_usage);
    if (rc != 0) {
        return rc;
    }
#ifndef HAVE_MPI
    o->methods &= ~(1u << OB_OPENMPI);
    if (o->methods == 0) {
        bu_opt_error("built without MPI: only amcoll can be measured");
        return -1;
    }
#endif
    return 0;
}

/* ------------------------------------------------------------------ driver */

/* Sizes a run uses: ibarrier/barrier once, as 0 bytes. */
static int ob_sizes_of(const ob_opts_t *o, int coll, int blocking, const size_t **sizes)
{
    static const size_t zero = 0;

    if (coll == OB_BARRIER) {
        *sizes = &zero;
        return 1;
    }
    *sizes = blocking ? o->bsizes : o->sizes;
    return blocking ? o->nbsizes : o->nsizes;
}

static int ob_main(ob_t *b, const ob_opts_t *o)
{
    size_t        need = OB_ALIGN, s, r;
    const size_t *sz;
    double        rates[2], t0 = bu_now();
    int           c, i, n, blocking;

    /* One pair of buffers for the largest cell, touched once so page
     * faults stay out of the measurements. */
    for (blocking = 0; blocking < 2; blocking++) {
        for (c = 0; c < OB_NCOLLS; c++) {
            if (!((blocking ? o->bcolls : o->colls) & (1u << c))) {
                continue;
            }
            n = ob_sizes_of(o, c, blocking, &sz);
            for (i = 0; i < n; i++) {
                if (ob_skip_reason(b, o, c, sz[i]) == NULL) {
                    ob_footprint(c, sz[i], b->size, &s, &r);
                    need = (s > need) ? s : need;
                    need = (r > need) ? r : need;
                }
            }
        }
    }
    b->cap = need;
    if ((posix_memalign((void **)&b->sbuf, OB_ALIGN, b->cap) != 0) ||
        (posix_memalign((void **)&b->rbuf, OB_ALIGN, b->cap) != 0)) {
        fprintf(stderr, "overlap_bench: rank %d: cannot allocate 2 x %zu bytes\n", b->rank,
                b->cap);
        return -1;
    }
    memset(b->sbuf, 0, b->cap);
    memset(b->rbuf, 0, b->cap);

    bu_watchdog_arm("busy-loop calibration");
    ob_barrier(OB_AMCOLL);
    b->rate  = ob_calibrate_rate();
    rates[0] = b->rate;
    rates[1] = -b->rate;
    ob_allmax(rates, 2);

    if (b->rank == 0) {
        amc_wait_policy_t pol;
        const char       *pt = getenv("AMC_PROGRESS_THREAD");
        char              tests[8 * OB_MAX_TESTS] = "";

        for (i = 0; i < o->ntests; i++) {
            snprintf(tests + strlen(tests), sizeof(tests) - strlen(tests), "%s%d",
                     i ? "," : "", o->tests[i]);
        }
        memset(&pol, 0, sizeof(pol));
        (void)amc_wait_policy_current(&pol);
        printf("# overlap_bench N=%d reps=%d tests=%s cell_ms=%.0f block_ms=%.0f max_mib=%ld "
               "mpi=%s buffers=2x%zu loop=%.1f..%.1f iters/us "
               "wait_policy(spin=%u yield_us=%u sleep_ms=%u) AMC_PROGRESS_THREAD=%s\n",
               b->size, o->reps, tests, o->cell_ms, o->block_ms, o->max_mib,
#ifdef HAVE_MPI
               "yes",
#else
               "no",
#endif
               b->cap, -rates[1], rates[0], pol.spin_count, pol.yield_usec, pol.sleep_msec,
               pt ? pt : "(unset)");
        fflush(stdout);
    }

    for (c = 0; c < OB_NCOLLS; c++) {
        if (o->colls & (1u << c)) {
            n = ob_sizes_of(o, c, 0, &sz);
            for (i = 0; i < n; i++) {
                ob_cell(b, o, c, sz[i]);
            }
        }
    }
    for (c = 0; c < OB_NCOLLS; c++) {
        if (o->bcolls & (1u << c)) {
            n = ob_sizes_of(o, c, 1, &sz);
            for (i = 0; i < n; i++) {
                ob_bcell(b, o, c, sz[i]);
            }
        }
    }
    if (b->rank == 0) {
        printf("# overlap_bench N=%d done in %.1f s\n", b->size, bu_now() - t0);
        fflush(stdout);
    }
    free(b->sbuf);
    free(b->rbuf);
    b->sbuf = b->rbuf = NULL;
    return 0;
}

int main(int argc, char **argv)
{
    ob_opts_t opts;
    ob_t      b;
    int       rc;

    bu_prog = "overlap_bench";
    memset(&b, 0, sizeof(b));
    rc = ob_parse_opts(argc, argv, &opts);
    if (rc != 0) {
        return (rc > 0) ? 0 : 2;
    }
    if (bu_watchdog_install(opts.watchdog_s) != 0) {
        return 1;
    }
    bu_watchdog_arm("startup");
    bu_init(&argc, &argv, &b.rank, &b.size);

    if (ob_main(&b, &opts) != 0) {
        bu_abort(1);
    }

    bu_watchdog_arm("teardown");
    bu_finalize();
    return 0;
}
