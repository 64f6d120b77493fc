/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Collective latency sweep in the style of the OSU micro-benchmarks: for each
 * collective and each message size, amcoll against Open MPI in the same job.
 *
 *   mpirun -np N bench/coll_bench [-s sizes] [-c collectives] [-m methods] ...
 *
 * Per (collective, size) cell:
 *   1. one checked call per method on known data: a wrong result or an error
 *      is reported as such and the cell is not timed, so a broken collective
 *      can never show up as a fast one;
 *   2. warm-up as OSU does it (200 untimed calls up to 8 KiB, 10 above, cut
 *      short after a second), then calibration: the op count doubles until the
 *      slowest rank spends AMC_BENCH_CALIB_SEC on it, then it is scaled to
 *      about target_ms per timed block;
 *   3. reps timed blocks per method, the methods interleaved and their order
 *      rotated rep by rep, each block fenced by the library's own barrier.
 * One sample = (this rank's block time / ops); the latency reported is the
 * median over reps of the maximum over ranks, as the slowest rank decides
 * when a collective is over.
 *
 * Bytes are per rank: the bcast/reduce/allreduce/scan/exscan message, and the
 * block each rank contributes to or receives from gather/scatter/allgather/
 * alltoall/reduce_scatter(_block) and the v-forms. The v-forms and
 * reduce_scatter give every rank the same count (as OSU does). Reductions sum
 * doubles (AMC_DOUBLE / MPI_DOUBLE); sizes below 8 bytes are skipped for
 * them. The rest move AMC_BYTE / MPI_BYTE. Rooted calls use root 0.
 *
 * Output on rank 0: "RESULT N=.. coll=.. bytes=.. method=.. status=.." lines
 * (read by bench/run_coll.sh) and one human-readable line per cell.
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

#define CB_DEF_REPS       15
#define CB_MIN_REPS       7
#define CB_DEF_TARGET_MS  3.0    /* one timed block */
#define CB_DEF_CELL_MS    3000.0 /* timed part of one (cell, method) before reps shrink */
#define CB_DEF_MAX_MIB    32     /* per-rank N * block cap for the N-block collectives */
#define CB_DEF_WATCHDOG   120
#define CB_MAX_ITERS      1000000L
#define CB_CALIB_SEC      0.002
/* OSU's warm-up ("skip"): 200 untimed calls up to 8 KiB, 10 above. The first
 * few dozen eager messages to a peer over UCX shared memory are slow (each
 * new receive-descriptor segment of the peer is mapped on first use), so a
 * cell whose first call is slow would otherwise calibrate to a handful of
 * ops per block and time that wire-up instead of the collective. */
#define CB_WARMUP_SMALL   200
#define CB_WARMUP_LARGE   10
#define CB_WARMUP_BYTES   8192
#define CB_WARMUP_MAX_SEC 1.0
#define CB_MAX_SIZES      64
#define CB_ALIGN          4096

enum {
    CB_BCAST,
    CB_REDUCE,
    CB_ALLREDUCE,
    CB_GATHER,
    CB_SCATTER,
    CB_ALLGATHER,
    CB_ALLTOALL,
    CB_REDUCE_SCATTER_BLOCK,
    CB_REDUCE_SCATTER,
    CB_SCAN,
    CB_EXSCAN,
    CB_GATHERV,
    CB_SCATTERV,
    CB_ALLGATHERV,
    CB_ALLTOALLV,
    CB_NCOLLS
};

static const char *const cb_coll_names[CB_NCOLLS] = {
    "bcast", "reduce", "allreduce", "gather", "scatter", "allgather", "alltoall",
    "reduce_scatter_block", "reduce_scatter", "scan", "exscan",
    "gatherv", "scatterv", "allgatherv", "alltoallv"
};

enum { CB_AMCOLL, CB_OPENMPI, CB_NMETHODS };

static const char *const cb_method_names[CB_NMETHODS] = { "amcoll", "openmpi" };

static const size_t cb_default_sizes[] = {
    1, 8, 64, 512, 4096, 32768, 262144, 1048576
};

typedef struct cb_opts {
    size_t   sizes[CB_MAX_SIZES];
    int      nsizes;
    unsigned colls;      /* bit per collective */
    unsigned methods;    /* bit per method */
    int      reps;
    long     iters;      /* > 0: fixed op count per block; 0: calibrated */
    double   target_ms;
    double   cell_ms;
    long     max_mib;
    unsigned watchdog_s;
    int      osu;        /* OSU's method: each call timed alone, barrier between, mean over ranks */
} cb_opts_t;

typedef struct cb {
    int            rank, size;
    unsigned char *sbuf, *rbuf; /* sized for the largest cell */
    size_t         cap;         /* bytes in each */
    /* v-forms and reduce_scatter: every rank the same count (as OSU does),
     * set per cell; amcoll takes size_t, MPI int */
    size_t        *counts, *displs;
    int           *icounts, *idispls;
} cb_t;

/* ------------------------------------------------------------------ watchdog */

/* A hung collective would hold mpirun until the outer timeout with no hint of
 * where; the alarm names the rank, cell and phase. */
static void cb_phase(const char *phase, int coll, size_t bytes, int method)
{
    bu_watchdog_arm("%s%s%s%s%s (%zu B)", phase, (coll >= 0) ? " of " : "",
                    (coll >= 0) ? cb_coll_names[coll] : "", (method >= 0) ? " / " : "",
                    (method >= 0) ? cb_method_names[method] : "", bytes);
}

/* ------------------------------------------------------------------ helpers */

static int cb_barrier(int method)
{
    if (method == CB_AMCOLL) {
        return (amc_barrier(AMC_COMM_WORLD) == AMC_SUCCESS) ? 0 : -1;
    }
#ifdef HAVE_MPI
    return (MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS) ? 0 : -1;
#else
    return -1;
#endif
}

/* ------------------------------------------------------------------ options */

static void cb_usage(FILE *f)
{
    if (bu_opt_quiet) {
        return;
    }
    fprintf(f,
        "usage: mpirun -np N coll_bench [-s sizes] [-c colls] [-m methods] [-r reps]\n"
        "                               [-t target_ms] [-T cell_ms] [-i iters] [-M max_mib]\n"
        "                               [-W watchdog_s]\n"
        "  -s  bytes per rank, comma list, K/M suffixes (default 1,8,64,512,4K,32K,256K,1M)\n"
        "                                                    env AMC_BENCH_SIZES\n"
        "  -c  collectives (default all): bcast,reduce,allreduce,gather,scatter,\n"
        "      allgather,alltoall,reduce_scatter_block,reduce_scatter,scan,exscan,\n"
        "      gatherv,scatterv,allgatherv,alltoallv         env AMC_BENCH_COLLS\n"
        "  -m  methods: amcoll,openmpi (default both)        env AMC_BENCH_METHODS\n"
        "  -r  timed blocks per method and cell; the median is reported (default %d)\n"
        "                                                    env AMC_BENCH_REPS\n"
        "  -t  wanted duration of one timed block, ms (default %.0f)\n"
        "                                                    env AMC_BENCH_TARGET_MS\n"
        "  -T  timed ms per (cell, method) past which reps shrink, down to %d (default %.0f)\n"
        "                                                    env AMC_BENCH_CELL_MS\n"
        "  -i  fixed ops per timed block (default: calibrated) env AMC_BENCH_ITERS\n"
        "  -M  skip cells of the N-block collectives (gather, scatter, allgather,\n"
        "      alltoall, reduce_scatter and the v-forms) whose N * bytes exceeds\n"
        "      this many MiB per rank (default %d)            env AMC_BENCH_MAX_MIB\n"
        "  -W  abort a rank stuck this long in one phase, 0 = never (default %d)\n"
        "                                                    env AMC_BENCH_WATCHDOG\n"
        "  -O  OSU's method: each call timed alone with the library's barrier between\n"
        "      calls, latency = mean over ranks (default: back-to-back blocks, slowest\n"
        "      rank)                                         env AMC_BENCH_OSU=1\n",
        CB_DEF_REPS, CB_DEF_TARGET_MS, CB_MIN_REPS, CB_DEF_CELL_MS, CB_DEF_MAX_MIB,
        CB_DEF_WATCHDOG);
}

/* One option from a flag or its environment variable. */
static int cb_apply(void *opts, int c, const char *what, const char *val)
{
    cb_opts_t *o = opts;
    long       v;

    switch (c) {
    case 's':
        return bu_parse_sizes(what, val, o->sizes, CB_MAX_SIZES, &o->nsizes);
    case 'c':
        return bu_parse_list(what, val, cb_coll_names, CB_NCOLLS, &o->colls);
    case 'm':
        return bu_parse_list(what, val, cb_method_names, CB_NMETHODS, &o->methods);
    case 'r':
        if (bu_parse_long(what, val, 1, 10000, &v) != 0) {
            return -1;
        }
        o->reps = (int)v;
        return 0;
    case 't':
        if (bu_parse_long(what, val, 1, 600000, &v) != 0) {
            return -1;
        }
        o->target_ms = (double)v;
        return 0;
    case 'T':
        if (bu_parse_long(what, val, 1, 3600000, &v) != 0) {
            return -1;
        }
        o->cell_ms = (double)v;
        return 0;
    case 'i':
        if (bu_parse_long(what, val, 1, CB_MAX_ITERS, &v) != 0) {
            return -1;
        }
        o->iters = v;
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
    case 'O':
        if (what[0] == '-') { /* the flag takes no value */
            o->osu = 1;
            return 0;
        }
        if (bu_parse_long(what, val, 0, 1, &v) != 0) {
            return -1;
        }
        o->osu = (int)v;
        return 0;
    default:
        return -1;
    }
}

/* Flags win over the environment, which wins over the defaults.
 * Returns 0 to run, 1 after -h, -1 on a bad argument. */
static int cb_parse_opts(int argc, char **argv, cb_opts_t *o)
{
    static const bu_env_opt_t envs[] = {
        { 's', "AMC_BENCH_SIZES" },     { 'c', "AMC_BENCH_COLLS" },
        { 'm', "AMC_BENCH_METHODS" },   { 'r', "AMC_BENCH_REPS" },
        { 't', "AMC_BENCH_TARGET_MS" }, { 'T', "AMC_BENCH_CELL_MS" },
        { 'i', "AMC_BENCH_ITERS" },     { 'M', "AMC_BENCH_MAX_MIB" },
        { 'W', "AMC_BENCH_WATCHDOG" },  { 'O', "AMC_BENCH_OSU" },
    };
    int rc;

    memset(o, 0, sizeof(*o));
    o->nsizes = (int)(sizeof(cb_default_sizes) / sizeof(cb_default_sizes[0]));
    memcpy(o->sizes, cb_default_sizes, sizeof(cb_default_sizes));
    o->colls      = (1u << CB_NCOLLS) - 1;
    o->methods    = (1u << CB_NMETHODS) - 1;
    o->reps       = CB_DEF_REPS;
    o->target_ms  = CB_DEF_TARGET_MS;
    o->cell_ms    = CB_DEF_CELL_MS;
    o->max_mib    = CB_DEF_MAX_MIB;
    o->watchdog_s = CB_DEF_WATCHDOG;

    rc = bu_parse_opts(argc, argv, "s:c:m:r:t:T:i:M:W:Oh", envs, sizeof(envs) / sizeof(envs[0]),
                       cb_apply, o, cb_usage);
    if (rc != 0) {
        return rc;
    }
#ifndef HAVE_MPI
    o->methods &= ~(1u << CB_OPENMPI);
    if (o->methods == 0) {
        bu_opt_error("built without MPI: only amcoll can be measured");
        return -1;
    }
#endif
    return 0;
}

/* ------------------------------------------------------------------ cells */

static int cb_is_reduction(int coll)
{
    switch (coll) {
    case CB_REDUCE:
    case CB_ALLREDUCE:
    case CB_REDUCE_SCATTER_BLOCK:
    case CB_REDUCE_SCATTER:
    case CB_SCAN:
    case CB_EXSCAN:
        return 1;
    default:
        return 0;
    }
}

/* The v-forms move the same data as their plain forms here. */
static int cb_shape(int coll)
{
    switch (coll) {
    case CB_GATHERV:
        return CB_GATHER;
    case CB_SCATTERV:
        return CB_SCATTER;
    case CB_ALLGATHERV:
        return CB_ALLGATHER;
    case CB_ALLTOALLV:
        return CB_ALLTOALL;
    case CB_REDUCE_SCATTER:
        return CB_REDUCE_SCATTER_BLOCK;
    default:
        return coll;
    }
}

/* Bytes of the send and receive buffers one rank needs for a cell. */
static void cb_footprint(int coll, size_t bytes, int n, size_t *send, size_t *recv)
{
    size_t all = bytes * (size_t)n;

    switch (cb_shape(coll)) {
    case CB_BCAST:
        *send = 0;
        *recv = bytes;
        break;
    case CB_GATHER:
    case CB_ALLGATHER:
        *send = bytes;
        *recv = all;
        break;
    case CB_SCATTER:
    case CB_REDUCE_SCATTER_BLOCK:
        *send = all;
        *recv = bytes;
        break;
    case CB_ALLTOALL:
        *send = all;
        *recv = all;
        break;
    default:
        *send = bytes;
        *recv = bytes;
        break;
    }
}

/* Why a cell is not run, or NULL. */
static const char *cb_skip_reason(const cb_t *b, const cb_opts_t *o, int coll, size_t bytes)
{
    size_t s, r;

    if (cb_is_reduction(coll) && (bytes < sizeof(double))) {
        return "below_one_double";
    }
    cb_footprint(coll, bytes, b->size, &s, &r);
    if (((s > bytes) || (r > bytes)) && ((s > r ? s : r) > ((size_t)o->max_mib << 20))) {
        return "over_max_mib";
    }
    return NULL;
}

/* The element count handed to the library: doubles for reductions. */
static size_t cb_count(int coll, size_t bytes)
{
    return cb_is_reduction(coll) ? bytes / sizeof(double) : bytes;
}

/* One call of the collective. Returns 0 or the library's error code. */
static int cb_call(const cb_t *b, int coll, int method, size_t bytes)
{
    size_t count = cb_count(coll, bytes);
    void  *s = b->sbuf, *r = b->rbuf;

    if (method == CB_AMCOLL) {
        switch (coll) {
        case CB_BCAST:
            return amc_bcast(r, count, AMC_BYTE, 0, AMC_COMM_WORLD);
        case CB_REDUCE:
            return amc_reduce(s, r, count, AMC_DOUBLE, AMC_SUM, 0, AMC_COMM_WORLD);
        case CB_ALLREDUCE:
            return amc_allreduce(s, r, count, AMC_DOUBLE, AMC_SUM, AMC_COMM_WORLD);
        case CB_GATHER:
            return amc_gather(s, r, count, AMC_BYTE, 0, AMC_COMM_WORLD);
        case CB_SCATTER:
            return amc_scatter(s, r, count, AMC_BYTE, 0, AMC_COMM_WORLD);
        case CB_ALLGATHER:
            return amc_allgather(s, r, count, AMC_BYTE, AMC_COMM_WORLD);
        case CB_ALLTOALL:
            return amc_alltoall(s, r, count, AMC_BYTE, AMC_COMM_WORLD);
        case CB_REDUCE_SCATTER_BLOCK:
            return amc_reduce_scatter_block(s, r, count, AMC_DOUBLE, AMC_SUM, AMC_COMM_WORLD);
        case CB_REDUCE_SCATTER:
            return amc_reduce_scatter(s, r, b->counts, AMC_DOUBLE, AMC_SUM, AMC_COMM_WORLD);
        case CB_SCAN:
            return amc_scan(s, r, count, AMC_DOUBLE, AMC_SUM, AMC_COMM_WORLD);
        case CB_EXSCAN:
            return amc_exscan(s, r, count, AMC_DOUBLE, AMC_SUM, AMC_COMM_WORLD);
        case CB_GATHERV:
            return amc_gatherv(s, count, r, b->counts, b->displs, AMC_BYTE, 0, AMC_COMM_WORLD);
        case CB_SCATTERV:
            return amc_scatterv(s, b->counts, b->displs, r, count, AMC_BYTE, 0, AMC_COMM_WORLD);
        case CB_ALLGATHERV:
            return amc_allgatherv(s, count, r, b->counts, b->displs, AMC_BYTE, AMC_COMM_WORLD);
        case CB_ALLTOALLV:
            return amc_alltoallv(s, b->counts, b->displs, r, b->counts, b->displs, AMC_BYTE,
                                 AMC_COMM_WORLD);
        default:
            return AMC_ERR_ARG;
        }
    }
#ifdef HAVE_MPI
    {
        int c = (int)count; /* bytes <= 1 GiB: fits */

        switch (coll) {
        case CB_BCAST:
            return MPI_Bcast(r, c, MPI_BYTE, 0, MPI_COMM_WORLD);
        case CB_REDUCE:
            return MPI_Reduce(s, r, c, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        case CB_ALLREDUCE:
            return MPI_Allreduce(s, r, c, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        case CB_GATHER:
            return MPI_Gather(s, c, MPI_BYTE, r, c, MPI_BYTE, 0, MPI_COMM_WORLD);
        case CB_SCATTER:
            return MPI_Scatter(s, c, MPI_BYTE, r, c, MPI_BYTE, 0, MPI_COMM_WORLD);
        case CB_ALLGATHER:
            return MPI_Allgather(s, c, MPI_BYTE, r, c, MPI_BYTE, MPI_COMM_WORLD);
        case CB_ALLTOALL:
            return MPI_Alltoall(s, c, MPI_BYTE, r, c, MPI_BYTE, MPI_COMM_WORLD);
        case CB_REDUCE_SCATTER_BLOCK:
            return MPI_Reduce_scatter_block(s, r, c, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        case CB_REDUCE_SCATTER:
            return MPI_Reduce_scatter(s, r, b->icounts, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        case CB_SCAN:
            return MPI_Scan(s, r, c, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        case CB_EXSCAN:
            return MPI_Exscan(s, r, c, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        case CB_GATHERV:
            return MPI_Gatherv(s, c, MPI_BYTE, r, b->icounts, b->idispls, MPI_BYTE, 0,
                               MPI_COMM_WORLD);
        case CB_SCATTERV:
            return MPI_Scatterv(s, b->icounts, b->idispls, MPI_BYTE, r, c, MPI_BYTE, 0,
                                MPI_COMM_WORLD);
        case CB_ALLGATHERV:
            return MPI_Allgatherv(s, c, MPI_BYTE, r, b->icounts, b->idispls, MPI_BYTE,
                                  MPI_COMM_WORLD);
        case CB_ALLTOALLV:
            return MPI_Alltoallv(s, b->icounts, b->idispls, MPI_BYTE, r, b->icounts, b->idispls,
                                 MPI_BYTE, MPI_COMM_WORLD);
        default:
            return MPI_ERR_ARG;
        }
    }
#else
    (void)s;
    return -1;
#endif
}

static void cb_report_call_error(const cb_t *b, int coll, int method, size_t bytes, long i,
                                 int rc)
{
    if (method == CB_AMCOLL) {
        fprintf(stderr, "coll_bench: rank %d: amc_%s(%zu B) #%ld: %s\n", b->rank,
                cb_coll_names[coll], bytes, i, amc_strerror(rc));
    } else {
        fprintf(stderr, "coll_bench: rank %d: MPI_%s(%zu B) #%ld failed (%d)\n", b->rank,
                cb_coll_names[coll], bytes, i, rc);
    }
}

/* Known data: byte j of the block that rank src sends to rank dst. */
static unsigned char cb_pat(int src, int dst, size_t j)
{
    return (unsigned char)((unsigned)src * 53u + (unsigned)dst * 7u + (unsigned)j * 13u + 5u +
                           (unsigned)(j >> 8));
}

/* Double i of rank r's reduction input: small integers, so every sum is exact. */
static double cb_val(int r, size_t i)
{
    return (double)(r + 1) * (double)((i % 7) + 1);
}

/* Fills the inputs with known data and the outputs with poison; sets the
 * per-rank counts and displacements of the v-forms and reduce_scatter. */
static void cb_fill(const cb_t *b, int coll, size_t bytes)
{
    size_t s, r, j, count = cb_count(coll, bytes);
    int    d, shape = cb_shape(coll);

    for (d = 0; d < b->size; d++) {
        b->counts[d]  = count;
        b->displs[d]  = (size_t)d * count;
        b->icounts[d] = (int)count;                /* N * bytes <= 1 GiB: fits */
        b->idispls[d] = (int)((size_t)d * count);
    }
    cb_footprint(coll, bytes, b->size, &s, &r);
    memset(b->rbuf, 0xA5, r);
    if (cb_is_reduction(coll)) {
        /* element i of this rank's input (reduce_scatter: N blocks of count) */
        size_t n_in = (shape == CB_REDUCE_SCATTER_BLOCK) ? count * (size_t)b->size : count;

        for (j = 0; j < n_in; j++) {
            ((double *)(void *)b->sbuf)[j] = cb_val(b->rank, j);
        }
        return;
    }
    switch (shape) {
    case CB_BCAST:
        if (b->rank == 0) {
            for (j = 0; j < bytes; j++) {
                b->rbuf[j] = cb_pat(0, 0, j);
            }
        }
        break;
    case CB_GATHER:
    case CB_ALLGATHER:
        for (j = 0; j < bytes; j++) {
            b->sbuf[j] = cb_pat(b->rank, 0, j);
        }
        break;
    case CB_SCATTER:
    case CB_ALLTOALL:
        /* scatter: only the root's blocks matter, each rank fills all the same */
        for (d = 0; d < b->size; d++) {
            for (j = 0; j < bytes; j++) {
                b->sbuf[(size_t)d * bytes + j] =
                    cb_pat((shape == CB_SCATTER) ? 0 : b->rank, d, j);
            }
        }
        break;
    default:
        break;
    }
}

/* 0 when this rank's output is what the collective must produce. */
static int cb_verify(const cb_t *b, int coll, size_t bytes, char *why, size_t whylen)
{
    size_t count = cb_count(coll, bytes), j;
    int    src, shape = cb_shape(coll);

    if (cb_is_reduction(coll)) {
        double n = (double)b->size, me = (double)b->rank, ranks_sum;
        size_t base = 0;

        /* sum of (r + 1) over the ranks that contribute; cb_val's factor */
        switch (shape) {
        case CB_REDUCE:
            if (b->rank != 0) {
                return 0;
            }
            ranks_sum = n * (n + 1) / 2;
            break;
        case CB_SCAN:
            ranks_sum = (me + 1) * (me + 2) / 2;
            break;
        case CB_EXSCAN:
            if (b->rank == 0) {
                return 0; /* undefined at rank 0, as in MPI */
            }
            ranks_sum = me * (me + 1) / 2;
            break;
        case CB_REDUCE_SCATTER_BLOCK:
            base      = (size_t)b->rank * count; /* this rank's block of the inputs */
            ranks_sum = n * (n + 1) / 2;
            break;
        default:
            ranks_sum = n * (n + 1) / 2;
            break;
        }
        for (j = 0; j < count; j++) {
            double want = ranks_sum * (double)(((base + j) % 7) + 1);
            double got  = ((const double *)(const void *)b->rbuf)[j];

            if (got != want) {
                snprintf(why, whylen, "double %zu is %g, want %g", j, got, want);
                return -1;
            }
        }
        return 0;
    }

    switch (shape) {
    case CB_BCAST:
        for (j = 0; j < bytes; j++) {
            if (b->rbuf[j] != cb_pat(0, 0, j)) {
                snprintf(why, whylen, "byte %zu is 0x%02x, want 0x%02x", j, b->rbuf[j],
                         cb_pat(0, 0, j));
                return -1;
            }
        }
        return 0;
    case CB_GATHER:
    case CB_ALLGATHER:
        if ((shape == CB_GATHER) && (b->rank != 0)) {
            return 0;
        }
        for (src = 0; src < b->size; src++) {
            for (j = 0; j < bytes; j++) {
                unsigned char got = b->rbuf[(size_t)src * bytes + j];

                if (got != cb_pat(src, 0, j)) {
                    snprintf(why, whylen, "block of rank %d, byte %zu is 0x%02x, want 0x%02x",
                             src, j, got, cb_pat(src, 0, j));
                    return -1;
                }
            }
        }
        return 0;
    case CB_SCATTER:
        for (j = 0; j < bytes; j++) {
            if (b->rbuf[j] != cb_pat(0, b->rank, j)) {
                snprintf(why, whylen, "byte %zu is 0x%02x, want 0x%02x", j, b->rbuf[j],
                         cb_pat(0, b->rank, j));
                return -1;
            }
        }
        return 0;
    case CB_ALLTOALL:
        for (src = 0; src < b->size; src++) {
            for (j = 0; j < bytes; j++) {
                unsigned char got = b->rbuf[(size_t)src * bytes + j];

                if (got != cb_pat(src, b->rank, j)) {
                    snprintf(why, whylen, "block from rank %d, byte %zu is 0x%02x, want 0x%02x",
                             src, j, got, cb_pat(src, b->rank, j));
                    return -1;
                }
            }
        }
        return 0;
    default:
        return -1;
    }
}

/* Status of one checked call, agreed by all ranks (the worst wins): 0 ok,
 * 1 amcoll says unsupported, 2 the call returned an error, 3 wrong data. */
static int cb_check(const cb_t *b, int coll, int method, size_t bytes, double *first_s)
{
    char   why[160] = "";
    double st[2], t0;
    int    rc;

    cb_fill(b, coll, bytes);
    if (cb_barrier(method) != 0) {
        fprintf(stderr, "coll_bench: rank %d: %s barrier failed\n", b->rank,
                cb_method_names[method]);
        bu_abort(1);
    }
    t0 = bu_now();
    rc = cb_call(b, coll, method, bytes);
    st[1] = bu_now() - t0;
    if ((rc == AMC_ERR_UNSUPPORTED) && (method == CB_AMCOLL)) {
        st[0] = 1; /* quietly: the table says n/a */
    } else if (rc != 0) {
        cb_report_call_error(b, coll, method, bytes, 0, rc);
        st[0] = 2;
    } else if (cb_verify(b, coll, bytes, why, sizeof(why)) != 0) {
        fprintf(stderr, "coll_bench: rank %d: WRONG RESULT from %s %s (%zu B, N=%d): %s\n",
                b->rank, cb_method_names[method], cb_coll_names[coll], bytes, b->size, why);
        st[0] = 3;
    } else {
        st[0] = 0;
    }
    if ((cb_barrier(method) != 0) || (bu_allmax(st, 2) != 0)) {
        fprintf(stderr, "coll_bench: rank %d: agreeing on the check failed\n", b->rank);
        bu_abort(1);
    }
    *first_s = st[1];
    return (int)st[0];
}

static int cb_osu; /* -O: each call timed alone, the library's barrier between calls */

/* iters calls, timed on this rank: back to back, or (OSU) each call alone
 * after a barrier of the same library, summed. */
static void cb_block(const cb_t *b, int coll, int method, size_t bytes, long iters,
                     double *elapsed)
{
    double t0, sum = 0;
    long   i;
    int    rc;

    if (cb_barrier(method) != 0) {
        fprintf(stderr, "coll_bench: rank %d: %s barrier failed\n", b->rank,
                cb_method_names[method]);
        bu_abort(1);
    }
    t0 = bu_now();
    for (i = 0; i < iters; i++) {
        if (cb_osu) {
            if (cb_barrier(method) != 0) {
                bu_abort(1);
            }
            t0 = bu_now();
        }
        rc = cb_call(b, coll, method, bytes);
        if (rc != 0) {
            /* Peers are inside the same call and would wait for us forever. */
            cb_report_call_error(b, coll, method, bytes, i, rc);
            bu_abort(1);
        }
        if (cb_osu) {
            sum += bu_now() - t0;
        }
    }
    *elapsed = cb_osu ? sum : bu_now() - t0;
    /* Every rank is done with this library before the other one runs: on
     * shared cores, a rank waiting in one library does not progress the other. */
    if (cb_barrier(method) != 0) {
        fprintf(stderr, "coll_bench: rank %d: %s barrier failed\n", b->rank,
                cb_method_names[method]);
        bu_abort(1);
    }
}

/* Untimed calls before calibration; first_s (the checked call's time, agreed
 * by every rank) caps the count so a slow cell does not warm up for minutes. */
static void cb_warmup(const cb_t *b, int coll, int method, size_t bytes, double first_s)
{
    long   k = (bytes <= CB_WARMUP_BYTES) ? CB_WARMUP_SMALL : CB_WARMUP_LARGE;
    double el;

    if ((first_s > 0) && ((double)k * first_s > CB_WARMUP_MAX_SEC)) {
        k = (long)(CB_WARMUP_MAX_SEC / first_s);
        if (k < 1) {
            k = 1;
        }
    }
    cb_phase("warm-up", coll, bytes, method);
    cb_block(b, coll, method, bytes, k, &el);
}

/* Seconds per call on the slowest rank, from doubling op counts; the last
 * count is a warm-up as well. */
static double cb_calibrate(const cb_t *b, int coll, int method, size_t bytes)
{
    long   k = 1;
    double el;

    cb_phase("calibration", coll, bytes, method);
    for (;;) {
        cb_block(b, coll, method, bytes, k, &el);
        if (bu_allmax(&el, 1) != 0) {
            fprintf(stderr, "coll_bench: rank %d: max over ranks failed\n", b->rank);
            bu_abort(1);
        }
        if ((el >= CB_CALIB_SEC) || (k >= CB_MAX_ITERS)) {
            return el / (double)k;
        }
        k *= 2;
    }
}

/* ------------------------------------------------------------------ driver */

static void cb_result_skip(const cb_t *b, int coll, size_t bytes, int method, const char *status,
                           const char *reason)
{
    if (b->rank == 0) {
        printf("RESULT N=%d coll=%s bytes=%zu method=%s status=%s reason=%s\n", b->size,
               cb_coll_names[coll], bytes, cb_method_names[method], status, reason);
    }
}

static void cb_cell(const cb_t *b, const cb_opts_t *o, int coll, size_t bytes)
{
    int         ms[CB_NMETHODS], nm = 0, live[CB_NMETHODS] = {0}, j, m, rep, reps, k;
    long        iters[CB_NMETHODS] = {0};
    double      per_op[CB_NMETHODS] = {0}, first[CB_NMETHODS] = {0}, slowest = 0;
    double     *t = NULL, med[CB_NMETHODS] = {0};
    const char *skip = cb_skip_reason(b, o, coll, bytes);

    for (m = 0; m < CB_NMETHODS; m++) {
        if (o->methods & (1u << m)) {
            ms[nm++] = m;
        }
    }
    if (skip != NULL) {
        for (j = 0; j < nm; j++) {
            cb_result_skip(b, coll, bytes, ms[j], "skipped", skip);
        }
        return;
    }

    /* 1. correctness, once per method and cell; the first call also carries
     *    the first-contact cost (wire-up), kept out of the samples */
    for (j = 0; j < nm; j++) {
        int st;

        m = ms[j];
        cb_phase("checked call", coll, bytes, m);
        st = cb_check(b, coll, m, bytes, &first[m]);
        if (st == 0) {
            live[m] = 1;
        } else {
            static const char *const status[] = { "ok", "unsupported", "error", "wrong" };
            static const char *const reason[] = { "", "AMC_ERR_UNSUPPORTED",
                                                  "call_returned_error", "result_check_failed" };

            cb_result_skip(b, coll, bytes, m, status[st], reason[st]);
        }
    }

    /* 2. warm-up and calibration */
    for (j = 0; j < nm; j++) {
        m = ms[j];
        if (!live[m]) {
            continue;
        }
        cb_warmup(b, coll, m, bytes, first[m]);
        per_op[m] = cb_calibrate(b, coll, m, bytes);
        if (o->iters > 0) {
            iters[m] = o->iters;
        } else {
            iters[m] = (long)(o->target_ms * 1e-3 / per_op[m]);
            if (iters[m] < 1) {
                iters[m] = 1;
            }
            if (iters[m] > CB_MAX_ITERS) {
                iters[m] = CB_MAX_ITERS;
            }
        }
        if (per_op[m] * (double)iters[m] > slowest) {
            slowest = per_op[m] * (double)iters[m];
        }
    }
    /* Slow cells (big messages at large N) get fewer reps, never under
     * CB_MIN_REPS; every rank computes the same count from agreed numbers. */
    reps = o->reps;
    if ((slowest > 0) && (slowest * (double)reps > o->cell_ms * 1e-3)) {
        reps = (int)(o->cell_ms * 1e-3 / slowest);
        if (reps < CB_MIN_REPS) {
            reps = CB_MIN_REPS;
        }
        if (reps > o->reps) {
            reps = o->reps;
        }
    }

    /* 3. timed blocks, methods interleaved, order rotated per rep */
    t = calloc((size_t)reps * CB_NMETHODS, sizeof(*t));
    if (t == NULL) {
        fprintf(stderr, "coll_bench: rank %d: out of memory\n", b->rank);
        bu_abort(1);
    }
    for (rep = 0; rep < reps; rep++) {
        for (j = 0; j < nm; j++) {
            double el;

            m = ms[(rep + j) % nm];
            if (!live[m]) {
                continue;
            }
            cb_phase("timing", coll, bytes, m);
            cb_block(b, coll, m, bytes, iters[m], &el);
            t[rep * CB_NMETHODS + m] = el / (double)iters[m];
        }
    }
    cb_phase("max over ranks", coll, bytes, -1);
    if ((cb_osu ? bu_allmean(t, reps * CB_NMETHODS) : bu_allmax(t, reps * CB_NMETHODS)) != 0) {
        fprintf(stderr, "coll_bench: rank %d: max over ranks failed\n", b->rank);
        bu_abort(1);
    }

    if (b->rank == 0) {
        double     v[reps];
        bu_stats_t s;

        for (j = 0; j < nm; j++) {
            m = ms[j];
            if (!live[m]) {
                continue;
            }
            for (k = 0; k < reps; k++) {
                v[k] = t[k * CB_NMETHODS + m];
            }
            bu_stats(v, reps, &s);
            med[m] = s.median;
            printf("RESULT N=%d coll=%s bytes=%zu method=%s status=ok median_us=%.3f "
                   "q1_us=%.3f q3_us=%.3f min_us=%.3f max_us=%.3f iters=%ld reps=%d "
                   "first_us=%.1f\n",
                   b->size, cb_coll_names[coll], bytes, cb_method_names[m], med[m] * 1e6,
                   s.q1 * 1e6, s.q3 * 1e6, s.min * 1e6, s.max * 1e6, iters[m], reps,
                   first[m] * 1e6);
        }
        printf("  N=%-3d %-9s %8zu B", b->size, cb_coll_names[coll], bytes);
        for (j = 0; j < nm; j++) {
            m = ms[j];
            if (live[m]) {
                printf("  %s %11.2f us (%ld x %d)", cb_method_names[m], med[m] * 1e6, iters[m],
                       reps);
            } else {
                printf("  %s %14s", cb_method_names[m], "FAILED");
            }
        }
        if (live[CB_AMCOLL] && live[CB_OPENMPI] && (med[CB_OPENMPI] > 0)) {
            printf("  ratio %.3f", med[CB_AMCOLL] / med[CB_OPENMPI]);
        }
        printf("\n");
        fflush(stdout);
    }
    free(t);
}

static int cb_main(cb_t *b, const cb_opts_t *o)
{
    size_t need = 0, s, r;
    int    c, i;
    double t0 = bu_now();

    /* One pair of buffers, sized for the largest cell that runs, touched
     * once so page faults stay out of every measurement. */
    for (c = 0; c < CB_NCOLLS; c++) {
        if (!(o->colls & (1u << c))) {
            continue;
        }
        for (i = 0; i < o->nsizes; i++) {
            if (cb_skip_reason(b, o, c, o->sizes[i]) != NULL) {
                continue;
            }
            cb_footprint(c, o->sizes[i], b->size, &s, &r);
            need = (s > need) ? s : need;
            need = (r > need) ? r : need;
        }
    }
    b->cap = (need == 0) ? CB_ALIGN : need;
    if ((posix_memalign((void **)&b->sbuf, CB_ALIGN, b->cap) != 0) ||
        (posix_memalign((void **)&b->rbuf, CB_ALIGN, b->cap) != 0)) {
        fprintf(stderr, "coll_bench: rank %d: cannot allocate 2 x %zu bytes\n", b->rank, b->cap);
        return -1;
    }
    memset(b->sbuf, 0, b->cap);
    memset(b->rbuf, 0, b->cap);
    b->counts  = calloc((size_t)b->size, sizeof(*b->counts));
    b->displs  = calloc((size_t)b->size, sizeof(*b->displs));
    b->icounts = calloc((size_t)b->size, sizeof(*b->icounts));
    b->idispls = calloc((size_t)b->size, sizeof(*b->idispls));
    if ((b->counts == NULL) || (b->displs == NULL) || (b->icounts == NULL) ||
        (b->idispls == NULL)) {
        fprintf(stderr, "coll_bench: rank %d: out of memory\n", b->rank);
        return -1;
    }

    if (b->rank == 0) {
        amc_wait_policy_t pol;

        memset(&pol, 0, sizeof(pol));
        (void)amc_wait_policy_current(&pol);
        printf("# coll_bench N=%d timing=%s reps=%d target_ms=%.0f cell_ms=%.0f max_mib=%ld mpi=%s "
               "buffers=2x%zu wait_policy(spin=%u yield_us=%u sleep_ms=%u)\n",
               b->size, o->osu ? "osu(each call alone, mean over ranks)" : "blocks(slowest rank)",
               o->reps, o->target_ms, o->cell_ms, o->max_mib,
#ifdef HAVE_MPI
               "yes",
#else
               "no",
#endif
               b->cap, pol.spin_count, pol.yield_usec, pol.sleep_msec);
        fflush(stdout);
    }

    for (c = 0; c < CB_NCOLLS; c++) {
        if (!(o->colls & (1u << c))) {
            continue;
        }
        for (i = 0; i < o->nsizes; i++) {
            cb_cell(b, o, c, o->sizes[i]);
        }
    }
    if (b->rank == 0) {
        printf("# coll_bench N=%d done in %.1f s\n", b->size, bu_now() - t0);
        fflush(stdout);
    }
    free(b->sbuf);
    free(b->rbuf);
    b->sbuf = b->rbuf = NULL;
    free(b->counts);
    free(b->displs);
    free(b->icounts);
    free(b->idispls);
    b->counts = b->displs = NULL;
    b->icounts = b->idispls = NULL;
    return 0;
}

int main(int argc, char **argv)
{
    cb_opts_t opts;
    cb_t      b;
    int       rc;

    bu_prog = "coll_bench";
    memset(&b, 0, sizeof(b));
    rc = cb_parse_opts(argc, argv, &opts);
    if (rc != 0) {
        return (rc > 0) ? 0 : 2;
    }
    if (bu_watchdog_install(opts.watchdog_s) != 0) {
        return 1;
    }
    cb_osu = opts.osu;
    cb_phase("startup", -1, 0, -1);
    bu_init(&argc, &argv, &b.rank, &b.size);

    if (cb_main(&b, &opts) != 0) {
        bu_abort(1);
    }

    cb_phase("teardown", -1, 0, -1);
    bu_finalize();
    return 0;
}
