/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Mixed non-blocking collectives through amcoll's own API, in the shape of
 * MPICH's coll/nonblocking3.c: real UCX, ranks started by mpirun (PMIx), or a
 * singleton without a launcher. No MPI calls.
 *
 *   test_mixed_nb_mpi [mixed [SHARED_FILE]] [ITER]
 *
 * Why: an MPI program of that shape found ranks losing step (a collective
 * matched with another, or waiting for ever) when many collectives of every
 * kind are outstanding on several communicators at once and each rank
 * completes them at its own moments. This program does the same through
 * amc_* calls, so that a failure points at amcoll rather than at a layer
 * above it.
 *
 * The idle hook (amc_set_idle_hook) first: AMC_ERR_NOT_INITIALIZED before
 * amc_init and after amc_finalize; with a counting hook set, a rank whose
 * amc_barrier (then amc_wait on an ibarrier, then amc_waitany on an
 * iallreduce) must wait while rank 0 sleeps 50 ms before entering sees the
 * hook called (with its argument) at least once (N >= 2); after
 * amc_set_idle_hook(NULL, NULL) the count does not move across the same waits.
 *
 * Then the mixed phase, on 4 communicators: two dups of the world, a split of
 * the world with the ranks in reverse order, and a split into odd and even
 * world ranks (keys reversed, so sizes and ranks differ from the world's).
 * Every rank draws the same sequence from one seeded generator; each step is
 * either a start or a completion call:
 *   start: which communicator, which collective (barrier, bcast, reduce,
 *     allreduce, gather(v), scatter(v), allgather(v), alltoall(v),
 *     reduce_scatter(_block), scan, exscan), form (non-blocking; blocking,
 *     checked at once; persistent: one of 4 requests per communicator made
 *     by amc_X_init before the phase, started again and again with new data,
 *     freed after it), datatype, count (mostly small, 0 included; some KiB;
 *     a few above AMC_RNDV_THRESH's default 16 KiB, so rendezvous runs), root,
 *     op (predefined, or a user op from amc_op_create, commutative or not,
 *     freed with amc_op_free right after the start; the persistent requests
 *     use two long-lived user ops), AMC_IN_PLACE where MPI allows it.
 *     Each communicator has a window of at most 20 outstanding requests; a
 *     rank whose window is full (windows differ, see below) first waits for
 *     its oldest request; a persistent request still active on this rank is
 *     waited for before it is started again.
 *   completion (one communicator's window, or all windows in one array):
 *     amc_wait on an index, amc_test on an index, amc_waitall, amc_testall,
 *     amc_waitany, amc_request_free of a running request (its buffers are
 *     checked at the end, after every other request was waited for and a
 *     barrier on every communicator, while progress runs, within a deadline).
 * The call is drawn alike on every rank, but what a test finds done differs
 * per rank, so windows and the moments of the starts drift apart; rarely
 * (a rank-dependent draw) a rank sleeps a few ms, so that ranks drift more.
 * Every rank follows the same order of starts on each communicator, so the
 * program never deadlocks if the library keeps every started collective
 * progressing.
 *
 * Every input element is a function of (seed of the start, rank in the
 * communicator, index), so each rank computes the expected result of every
 * collective without communication; reductions fold in rank order with the
 * datatype's arithmetic (inputs chosen so that float results are exact).
 * Receive buffers are filled with a position-dependent pattern beforehand,
 * and must hold exactly the expected image (gaps between v-form blocks keep
 * the pattern), plus 32 guard bytes behind every buffer untouched; send
 * buffers must come back unchanged.
 *
 * A wrong element, an error return (AMC_TIMEOUT turns a lost step into
 * AMC_ERR_TIMEOUT) or a buffer still wrong at the end prints
 *   FAIL mixed rank R/N: op #I <collective> on <comm> ...: <what> element E:
 *   expected X got Y
 * and ends the rank with exit status 1 (mpirun then ends the job). Rank 0
 * prints "ok mixed N=<n>" when everything passed.
 *
 * Environment (none of it starts with AMC_, which the library reserves):
 *   AMCTEST_SEED         seed of the draws and the data (default 20240611)
 *   AMCTEST_MIXED_ITERS  collectives to start (default 2000; ITER overrides)
 *   AMCTEST_MIXED_HOOK   1: a counting idle hook stays set through the mixed
 *                        phase (as a layer above with progress of its own
 *                        keeps it), so waits sleep at most 1 ms at a time
 * SHARED_FILE is accepted for run_integration.sh's calling convention and not
 * used: a failing rank ends the job itself.
 */
#define _POSIX_C_SOURCE 200809L

#include <amcoll.h>

#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MX_NCOMM       4
#define MX_WINDOW      20      /* outstanding requests per communicator */
#define MX_PERSIST     4       /* persistent requests per communicator */
#define MX_GUARD       32      /* bytes behind every buffer that must stay untouched */
#define MX_FREED_TRIES 2000    /* allreduces + 1 ms sleeps a freed request may take to settle */
#define MX_HOOK_SLEEP  50000   /* usec rank 0 sleeps before entering in the hook checks */

/* ------------------------------------------------------------------ reporting */

static int      g_rank = -1, g_size = -1;
static uint64_t g_seed = 20240611u;

static double mx_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void mx_usleep(long usec)
{
    struct timespec ts = { usec / 1000000, (usec % 1000000) * 1000 };

    while (nanosleep(&ts, &ts) != 0) {
    }
}

__attribute__((format(printf, 1, 2), noreturn))
static void mx_fatal(const char *fmt, ...)
{
    char    msg[2048];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    fprintf(stderr, "FAIL mixed rank %d/%d: %s (seed %" PRIu64 ")\n", g_rank, g_size, msg,
            g_seed);
    fflush(stdout);
    fflush(stderr);
    exit(1);
}

static void mx_must(int rc, const char *what)
{
    if (rc != AMC_SUCCESS) {
        mx_fatal("%s returned %s (%d)", what, amc_strerror(rc), rc);
    }
}

static void *mx_malloc(size_t n)
{
    void *p = malloc(n ? n : 1);

    if (p == NULL) {
        mx_fatal("test bug: out of memory (%zu bytes)", n);
    }
    return p;
}

/* ------------------------------------------------------------------ random numbers */

static uint64_t mx_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

typedef struct { uint64_t s; } mx_rng_t;

static uint64_t mx_rand(mx_rng_t *g)
{
    g->s += 0x9e3779b97f4a7c15ull;
    return mx_mix(g->s);
}

static unsigned mx_below(mx_rng_t *g, unsigned n)
{
    return (n == 0) ? 0 : (unsigned)(mx_rand(g) % n);
}

/* ------------------------------------------------------------------ datatypes and ops */

enum { CLS_RAW, CLS_SINT, CLS_UINT, CLS_FLOAT };

static const struct {
    amc_datatype_t dt;
    const char    *name;
    size_t         size;
    int            cls;
} g_dts[] = {
    { AMC_BYTE,   "AMC_BYTE",   1,                CLS_RAW },
    { AMC_CHAR,   "AMC_CHAR",   sizeof(char),     CLS_RAW },
    { AMC_INT8,   "AMC_INT8",   sizeof(int8_t),   CLS_SINT },
    { AMC_INT16,  "AMC_INT16",  sizeof(int16_t),  CLS_SINT },
    { AMC_INT32,  "AMC_INT32",  sizeof(int32_t),  CLS_SINT },
    { AMC_INT64,  "AMC_INT64",  sizeof(int64_t),  CLS_SINT },
    { AMC_UINT8,  "AMC_UINT8",  sizeof(uint8_t),  CLS_UINT },
    { AMC_UINT16, "AMC_UINT16", sizeof(uint16_t), CLS_UINT },
    { AMC_UINT32, "AMC_UINT32", sizeof(uint32_t), CLS_UINT },
    { AMC_UINT64, "AMC_UINT64", sizeof(uint64_t), CLS_UINT },
    { AMC_INT,    "AMC_INT",    sizeof(int),      CLS_SINT },
    { AMC_LONG,   "AMC_LONG",   sizeof(long),     CLS_SINT },
    { AMC_FLOAT,  "AMC_FLOAT",  sizeof(float),    CLS_FLOAT },
    { AMC_DOUBLE, "AMC_DOUBLE", sizeof(double),   CLS_FLOAT },
};
#define MX_NDT ((int)(sizeof(g_dts) / sizeof(g_dts[0])))

enum {
    K_SUM, K_PROD, K_MIN, K_MAX, K_LAND, K_LOR, K_LXOR, K_BAND, K_BOR, K_BXOR,
    K_UNC, /* user, non-commutative: affine maps on AMC_UINT32 / AMC_UINT64 */
    K_UC,  /* user, commutative: wrapping sum on AMC_INT64 / AMC_UINT64 */
    MX_NOP
};
static const char *g_op_names[MX_NOP] = {
    "AMC_SUM", "AMC_PROD", "AMC_MIN", "AMC_MAX", "AMC_LAND", "AMC_LOR", "AMC_LXOR",
    "AMC_BAND", "AMC_BOR", "AMC_BXOR", "user-noncommutative", "user-commutative"
};
static const amc_op_t g_predef[K_UNC] = {
    AMC_SUM, AMC_PROD, AMC_MIN, AMC_MAX, AMC_LAND, AMC_LOR, AMC_LXOR, AMC_BAND, AMC_BOR, AMC_BXOR
};
static amc_op_t g_long_unc, g_long_uc; /* the persistent requests' user ops */

static int mx_op_valid(int opk, int dti)
{
    int cls = g_dts[dti].cls;

    switch (opk) {
    case K_SUM: case K_PROD: case K_MIN: case K_MAX:
        return cls != CLS_RAW;
    case K_LAND: case K_LOR: case K_LXOR: case K_BAND: case K_BOR: case K_BXOR:
        return (cls == CLS_SINT) || (cls == CLS_UINT);
    case K_UNC:
        return (g_dts[dti].dt == AMC_UINT32) || (g_dts[dti].dt == AMC_UINT64);
    case K_UC:
        return (g_dts[dti].dt == AMC_INT64) || (g_dts[dti].dt == AMC_UINT64);
    }
    return 0;
}

/* x op y, x the left operand: (a, b) is t -> a t + b with a odd, x op y = x o y. */
static uint32_t mx_unc32(uint32_t x, uint32_t y)
{
    uint32_t ax = x >> 16, bx = x & 0xffff, ay = y >> 16, by = y & 0xffff;

    return ((ax * ay) & 0xffff) << 16 | ((ax * by + bx) & 0xffff);
}

static uint64_t mx_unc64(uint64_t x, uint64_t y)
{
    uint64_t ax = x >> 32, bx = x & 0xffffffffu, ay = y >> 32, by = y & 0xffffffffu;

    return ((ax * ay) & 0xffffffffu) << 32 | ((ax * by + bx) & 0xffffffffu);
}

/* inout[i] = in[i] op inout[i]; unaligned access tolerated */
static void mx_user_unc(const void *in, void *inout, size_t count, amc_datatype_t dt)
{
    const unsigned char *s = in;
    unsigned char       *d = inout;
    size_t               i;

    if (dt == AMC_UINT32) {
        uint32_t x, y;
        for (i = 0; i < count; ++i) {
            memcpy(&x, s + 4 * i, 4);
            memcpy(&y, d + 4 * i, 4);
            y = mx_unc32(x, y);
            memcpy(d + 4 * i, &y, 4);
        }
    } else if (dt == AMC_UINT64) {
        uint64_t x, y;
        for (i = 0; i < count; ++i) {
            memcpy(&x, s + 8 * i, 8);
            memcpy(&y, d + 8 * i, 8);
            y = mx_unc64(x, y);
            memcpy(d + 8 * i, &y, 8);
        }
    } else {
        mx_fatal("the non-commutative user op was called with datatype %d", (int)dt);
    }
}

static void mx_user_uc(const void *in, void *inout, size_t count, amc_datatype_t dt)
{
    const unsigned char *s = in;
    unsigned char       *d = inout;
    uint64_t             x, y;
    size_t               i;

    if ((dt != AMC_INT64) && (dt != AMC_UINT64)) {
        mx_fatal("the commutative user op was called with datatype %d", (int)dt);
    }
    for (i = 0; i < count; ++i) {
        memcpy(&x, s + 8 * i, 8);
        memcpy(&y, d + 8 * i, 8);
        y += x;
        memcpy(d + 8 * i, &y, 8);
    }
}

/* ------------------------------------------------------------------ element values */

/* An element: integers in u (truncated to the width, sign-extended), floats in d. */
typedef struct { uint64_t u; double d; } mx_val_t;

static uint64_t mx_norm(int dti, uint64_t u)
{
    int sgn = (g_dts[dti].cls == CLS_SINT);

    switch (g_dts[dti].size) {
    case 1: return sgn ? (uint64_t)(int64_t)(int8_t)u : (uint8_t)u;
    case 2: return sgn ? (uint64_t)(int64_t)(int16_t)u : (uint16_t)u;
    case 4: return sgn ? (uint64_t)(int64_t)(int32_t)u : (uint32_t)u;
    default: return u;
    }
}

static uint64_t mx_base(uint64_t seed, int rank)
{
    return mx_mix(seed ^ ((uint64_t)(unsigned)rank * 0xd1b54a32d192ed03ull));
}

/* Element idx of the rank whose stream is base, for op opk (-1: raw data). Chosen
 * so that results are exact and not trivial: float sums of small integers,
 * products of +-1/+-2, odd integer factors, LAND/LOR inputs whose result can be
 * either value, sparse zero (BAND) or one (BOR) bits, invertible affine maps. */
static mx_val_t mx_input(int opk, int dti, uint64_t base, uint64_t idx, int n_ranks)
{
    uint64_t h = mx_mix(base + idx * 0x9e3779b97f4a7c15ull), m2n = 2u * (uint64_t)n_ranks;
    mx_val_t v = { h, 0.0 };

    if (opk < 0) {
        return v;
    }
    if (g_dts[dti].cls == CLS_FLOAT) {
        if (opk == K_SUM) {
            v.d = (double)((int)(h % 33) - 16);
        } else if (opk == K_PROD) {
            v.d = ((h >> 3) & 1) ? 2.0 : 1.0;
            v.d = ((h >> 4) & 1) ? -v.d : v.d;
        } else {
            v.d = (double)((int)(h % 2001) - 1000) / 4.0;
        }
        return v;
    }
    switch (opk) {
    case K_PROD:
        v.u = (h % 7) * 2 + 1;
        v.u = ((h >> 40) & 1) ? (uint64_t)0 - v.u : v.u;
        break;
    case K_LAND:
        v.u = ((h % m2n) == 0) ? 0 : ((h >> 32) % 100) + 1;
        break;
    case K_LOR:
        v.u = ((h % m2n) == 0) ? ((h >> 32) % 100) + 1 : 0;
        break;
    case K_LXOR:
        v.u = ((h >> 5) & 1) ? ((h >> 32) % 100) + 1 : 0;
        break;
    case K_BAND:
        v.u = ~(h & mx_mix(h) & mx_mix(h + 1));
        break;
    case K_BOR:
        v.u = h & mx_mix(h) & mx_mix(h + 1);
        break;
    case K_UNC:
        if (g_dts[dti].dt == AMC_UINT32) {
            v.u = ((h & 0xffff) | 1) << 16 | ((h >> 16) & 0xffff);
        } else {
            v.u = ((h & 0xffffffffu) | 1) << 32 | (h >> 32);
        }
        break;
    default: /* SUM, MIN, MAX, BXOR, UC: the full range */
        break;
    }
    v.u = mx_norm(dti, v.u);
    return v;
}

/* a = a op b, a the left operand (the lower ranks) */
static mx_val_t mx_combine(int opk, int dti, mx_val_t a, mx_val_t b)
{
    int sgn = (g_dts[dti].cls == CLS_SINT);

    if (g_dts[dti].cls == CLS_FLOAT) {
        switch (opk) {
        case K_SUM:  a.d += b.d; break;
        case K_PROD: a.d *= b.d; break;
        case K_MIN:  a.d = (b.d < a.d) ? b.d : a.d; break;
        default:     a.d = (b.d > a.d) ? b.d : a.d; break;
        }
        return a;
    }
    switch (opk) {
    case K_SUM: case K_UC: a.u += b.u; break;
    case K_PROD: a.u *= b.u; break;
    case K_MIN:
        a.u = sgn ? (((int64_t)b.u < (int64_t)a.u) ? b.u : a.u) : ((b.u < a.u) ? b.u : a.u);
        break;
    case K_MAX:
        a.u = sgn ? (((int64_t)b.u > (int64_t)a.u) ? b.u : a.u) : ((b.u > a.u) ? b.u : a.u);
        break;
    case K_LAND: a.u = (uint64_t)((a.u != 0) && (b.u != 0)); break;
    case K_LOR:  a.u = (uint64_t)((a.u != 0) || (b.u != 0)); break;
    case K_LXOR: a.u = (uint64_t)((a.u != 0) != (b.u != 0)); break;
    case K_BAND: a.u &= b.u; break;
    case K_BOR:  a.u |= b.u; break;
    case K_BXOR: a.u ^= b.u; break;
    case K_UNC:
        a.u = (g_dts[dti].dt == AMC_UINT32) ? mx_unc32((uint32_t)a.u, (uint32_t)b.u)
                                            : mx_unc64(a.u, b.u);
        break;
    default:
        mx_fatal("test bug: op %d", opk);
    }
    a.u = mx_norm(dti, a.u);
    return a;
}

static void mx_store(int opk, int dti, mx_val_t v, unsigned char *p)
{
    if ((opk >= 0) && (g_dts[dti].dt == AMC_FLOAT)) {
        float f = (float)v.d;
        memcpy(p, &f, 4);
    } else if ((opk >= 0) && (g_dts[dti].dt == AMC_DOUBLE)) {
        memcpy(p, &v.d, 8);
    } else {
        memcpy(p, &v.u, g_dts[dti].size); /* little-endian: the low bytes */
    }
}

/* ------------------------------------------------------------------ cases */

enum {
    C_BARRIER, C_BCAST, C_REDUCE, C_ALLREDUCE, C_GATHER, C_GATHERV, C_SCATTER, C_SCATTERV,
    C_ALLGATHER, C_ALLGATHERV, C_ALLTOALL, C_ALLTOALLV, C_RSB, C_RS, C_SCAN, C_EXSCAN, MX_NCOLL
};
enum { F_ROOT = 1, F_OP = 2, F_INPLACE = 4 };
static const struct { const char *name; unsigned flags; } g_colls[MX_NCOLL] = {
    { "barrier", 0 },
    { "bcast", F_ROOT },
    { "reduce", F_ROOT | F_OP | F_INPLACE },
    { "allreduce", F_OP | F_INPLACE },
    { "gather", F_ROOT | F_INPLACE },
    { "gatherv", F_ROOT | F_INPLACE },
    { "scatter", F_ROOT | F_INPLACE },
    { "scatterv", F_ROOT | F_INPLACE },
    { "allgather", F_INPLACE },
    { "allgatherv", F_INPLACE },
    { "alltoall", F_INPLACE },
    { "alltoallv", F_INPLACE },
    { "reduce_scatter_block", F_OP | F_INPLACE },
    { "reduce_scatter", F_OP | F_INPLACE },
    { "scan", F_OP | F_INPLACE },
    { "exscan", F_OP | F_INPLACE },
};

enum { M_NB, M_BLOCK, M_PERSIST };
static const char *g_mode_names[] = { "non-blocking", "blocking", "persistent" };
enum { FORM_BLOCK, FORM_NB, FORM_INIT };

typedef struct {
    amc_comm_t  comm;
    const char *name;
    int         n, r;
} mx_comm_t;

typedef struct mx_case {
    int              coll, ci, n, r, dti, opk, root, in_place, mode;
    size_t           count, esz;
    long             id;            /* the start's index in the sequence */
    uint64_t         seed;
    const mx_comm_t *cm;
    amc_op_t         op;            /* the handle the call got (freed since, unless persistent) */
    unsigned char   *sbuf, *rbuf, *scopy;
    size_t           sn, rn;        /* elements of sbuf / rbuf (each has MX_GUARD bytes more) */
    const void      *sarg;
    void            *rarg;
    size_t          *v1, *v2, *v3, *v4, own;
    amc_request_t    req;
    int              active;        /* persistent: started and not completed on this rank */
    const char      *how;           /* the completion call */
} mx_case_t;

static void mx_case_desc(const mx_case_t *c, char *buf, size_t len)
{
    char root[16] = "-";

    if (c->root >= 0) {
        snprintf(root, sizeof(root), "%d", c->root);
    }
    snprintf(buf, len,
             "op #%ld %s on %s (rank %d of %d there) %s completed by %s: dt=%s count=%zu "
             "op=%s root=%s in_place=%d",
             c->id, g_colls[c->coll].name, c->cm->name, c->r, c->n, g_mode_names[c->mode],
             c->how ? c->how : "(not yet)", g_dts[c->dti].name, c->count,
             (c->opk >= 0) ? g_op_names[c->opk] : "-", root, c->in_place);
}

/* Byte k of every unwritten region (position-dependent, so moved data shows). */
static unsigned char mx_sentinel(size_t k)
{
    return (unsigned char)(0xa5u ^ (k * 7u) ^ (k >> 8));
}

static void mx_fill_sentinel(unsigned char *p, size_t bytes)
{
    size_t k;

    for (k = 0; k < bytes; ++k) {
        p[k] = mx_sentinel(k);
    }
}

/* n elements at element offset off of img: rank's inputs idx0, idx0 + 1, ... */
static void mx_gen(const mx_case_t *c, unsigned char *img, size_t off, size_t n, int rank,
                   uint64_t idx0)
{
    uint64_t base = mx_base(c->seed, rank);
    size_t   k;

    for (k = 0; k < n; ++k) {
        mx_store(c->opk, c->dti, mx_input(c->opk, c->dti, base, idx0 + k, c->n),
                 img + (off + k) * c->esz);
    }
}

/* n elements at off: inputs idx0.. of ranks lo..hi folded in rank order */
static void mx_fold(const mx_case_t *c, unsigned char *img, size_t off, size_t n, uint64_t idx0,
                    int lo, int hi)
{
    uint64_t base[64], *bp = (hi - lo + 1 <= 64) ? base : mx_malloc((size_t)(hi - lo + 1) * 8);
    size_t   k;
    int      j;

    for (j = lo; j <= hi; ++j) {
        bp[j - lo] = mx_base(c->seed, j);
    }
    for (k = 0; k < n; ++k) {
        mx_val_t a = mx_input(c->opk, c->dti, bp[0], idx0 + k, c->n);
        for (j = lo + 1; j <= hi; ++j) {
            a = mx_combine(c->opk, c->dti, a, mx_input(c->opk, c->dti, bp[j - lo], idx0 + k, c->n));
        }
        mx_store(c->opk, c->dti, a, img + (off + k) * c->esz);
    }
    if (bp != base) {
        free(bp);
    }
}

/* Per-rank counts around the base count (a mean of about base) */
static size_t mx_vcnt(size_t base, unsigned j)
{
    switch (j % 3) {
    case 0:  return base / 2;
    case 1:  return base;
    default: return base + base / 2 + (base > 0);
    }
}

/* Blocks in reverse rank order, a one-element gap after odd ranks; returns the extent. */
static size_t mx_layout(int n, const size_t *counts, size_t *displs)
{
    size_t pos = 0;
    int    j;

    for (j = n - 1; j >= 0; --j) {
        displs[j] = pos;
        pos      += counts[j] + (size_t)(j & 1);
    }
    return pos;
}

/* alltoallv: elements from s to d; symmetric when in place (as MPI requires) */
static size_t mx_a2av_cnt(const mx_case_t *c, int s, int d)
{
    return c->in_place ? mx_vcnt(c->count, (unsigned)(s + d))
                       : mx_vcnt(c->count, (unsigned)(s * 5 + d * 3 + 1));
}

/* rank's send side (counts to d = 0..n-1) or receive side (from s = 0..n-1) */
static size_t mx_a2av_side(const mx_case_t *c, int rank, int send_side, size_t *counts,
                           size_t *displs)
{
    int j;

    for (j = 0; j < c->n; ++j) {
        counts[j] = send_side ? mx_a2av_cnt(c, rank, j) : mx_a2av_cnt(c, j, rank);
    }
    return mx_layout(c->n, counts, displs);
}

static size_t *mx_sizes(int n)
{
    size_t *p = calloc((size_t)n + 1, sizeof(size_t));

    if (p == NULL) {
        mx_fatal("test bug: out of memory (%d counts)", n);
    }
    return p;
}

/* Decides the shape of the buffers (which side is AMC_IN_PLACE, element counts,
 * v-form counts and displacements) and allocates them. */
static void mx_case_layout(mx_case_t *c)
{
    int    root = (c->r == c->root), j, sin = 0, rin = 0; /* send / receive side in place */
    size_t total;

    c->esz = g_dts[c->dti].size;
    switch (c->coll) {
    case C_BARRIER:
        break;
    case C_BCAST:
        c->rn = c->count;
        break;
    case C_REDUCE:
        sin   = c->in_place && root;
        c->sn = c->count;
        c->rn = root ? c->count : 0; /* insignificant at the others: a guard only */
        break;
    case C_ALLREDUCE: case C_SCAN: case C_EXSCAN:
        sin   = c->in_place;
        c->sn = c->rn = c->count;
        break;
    case C_GATHER:
        sin   = c->in_place && root;
        c->sn = c->count;
        c->rn = root ? (size_t)c->n * c->count : 0;
        break;
    case C_GATHERV:
        c->v1 = mx_sizes(c->n);
        c->v2 = mx_sizes(c->n);
        for (j = 0; j < c->n; ++j) {
            c->v1[j] = mx_vcnt(c->count, (unsigned)j);
        }
        total  = mx_layout(c->n, c->v1, c->v2);
        c->own = c->v1[c->r];
        sin    = c->in_place && root;
        c->sn  = c->own;
        c->rn  = root ? total : 0;
        break;
    case C_SCATTER:
        rin   = c->in_place && root;
        c->sn = root ? (size_t)c->n * c->count : 0;
        c->rn = c->count;
        break;
    case C_SCATTERV:
        c->v1 = mx_sizes(c->n);
        c->v2 = mx_sizes(c->n);
        for (j = 0; j < c->n; ++j) {
            c->v1[j] = mx_vcnt(c->count, (unsigned)j + 1);
        }
        total  = mx_layout(c->n, c->v1, c->v2);
        c->own = c->v1[c->r];
        rin    = c->in_place && root;
        c->sn  = root ? total : 0;
        c->rn  = c->own;
        break;
    case C_ALLGATHER:
        sin   = c->in_place;
        c->sn = c->count;
        c->rn = (size_t)c->n * c->count;
        break;
    case C_ALLGATHERV:
        c->v1 = mx_sizes(c->n);
        c->v2 = mx_sizes(c->n);
        for (j = 0; j < c->n; ++j) {
            c->v1[j] = mx_vcnt(c->count, (unsigned)j + 2);
        }
        total  = mx_layout(c->n, c->v1, c->v2);
        c->own = c->v1[c->r];
        sin    = c->in_place;
        c->sn  = c->own;
        c->rn  = total;
        break;
    case C_ALLTOALL:
        sin   = c->in_place;
        c->sn = c->rn = (size_t)c->n * c->count;
        break;
    case C_ALLTOALLV:
        c->v1 = mx_sizes(c->n); /* sendcounts, sdispls, recvcounts, rdispls */
        c->v2 = mx_sizes(c->n);
        c->v3 = mx_sizes(c->n);
        c->v4 = mx_sizes(c->n);
        sin   = c->in_place;
        c->sn = mx_a2av_side(c, c->r, 1, c->v1, c->v2);
        c->rn = mx_a2av_side(c, c->r, 0, c->v3, c->v4);
        break;
    case C_RSB:
        sin   = c->in_place;
        c->sn = (size_t)c->n * c->count;
        c->rn = c->in_place ? c->sn : c->count;
        break;
    case C_RS:
        c->v1 = mx_sizes(c->n); /* recvcounts, and (v2) each block's offset */
        c->v2 = mx_sizes(c->n);
        for (total = 0, j = 0; j < c->n; ++j) {
            c->v1[j] = mx_vcnt(c->count, (unsigned)j);
            c->v2[j] = total;
            total   += c->v1[j];
        }
        c->own = c->v1[c->r];
        sin    = c->in_place;
        c->sn  = total;
        c->rn  = c->in_place ? total : c->own;
        break;
    }
    if (c->coll == C_BARRIER) {
        return;
    }
    if (sin) {
        c->sn   = 0;
        c->sarg = AMC_IN_PLACE;
    } else if (c->coll != C_BCAST) {
        c->sbuf  = mx_malloc(c->sn * c->esz + MX_GUARD);
        c->scopy = mx_malloc(c->sn * c->esz + MX_GUARD);
        c->sarg  = c->sbuf;
    }
    if (rin) {
        c->rn   = 0;
        c->rarg = AMC_IN_PLACE;
    } else {
        c->rbuf = mx_malloc(c->rn * c->esz + MX_GUARD);
        c->rarg = c->rbuf;
    }
}

/* Writes this start's data (c->seed) into the buffers. */
static void mx_case_fill(mx_case_t *c)
{
    int root = (c->r == c->root);

    if (c->coll == C_BARRIER) {
        return;
    }
    if (c->sbuf != NULL) {
        mx_fill_sentinel(c->sbuf, c->sn * c->esz + MX_GUARD);
        mx_gen(c, c->sbuf, 0, c->sn, c->r, 0);
        memcpy(c->scopy, c->sbuf, c->sn * c->esz + MX_GUARD);
    }
    if (c->rbuf == NULL) {
        return;
    }
    mx_fill_sentinel(c->rbuf, c->rn * c->esz + MX_GUARD);
    switch (c->coll) {
    case C_BCAST:
        if (root) {
            mx_gen(c, c->rbuf, 0, c->count, c->r, 0);
        }
        break;
    case C_GATHER: case C_ALLGATHER:
        if (c->sarg == AMC_IN_PLACE) {
            mx_gen(c, c->rbuf, (size_t)c->r * c->count, c->count, c->r, 0);
        }
        break;
    case C_GATHERV: case C_ALLGATHERV:
        if (c->sarg == AMC_IN_PLACE) {
            mx_gen(c, c->rbuf, c->v2[c->r], c->own, c->r, 0);
        }
        break;
    default: /* reduce, allreduce, scan, exscan, alltoall(v), reduce_scatter(_block) */
        if (c->sarg == AMC_IN_PLACE) {
            mx_gen(c, c->rbuf, 0, c->rn, c->r, 0);
        }
        break;
    }
}

/* The receive buffer as it must be after the call (rn elements and the guard). */
static unsigned char *mx_case_expect(const mx_case_t *c)
{
    size_t         bytes = c->rn * c->esz + MX_GUARD, *cnt, *dsp;
    unsigned char *img   = mx_malloc(bytes);
    int            j;

    mx_fill_sentinel(img, bytes);
    switch (c->coll) {
    case C_BCAST:
        mx_gen(c, img, 0, c->count, c->root, 0);
        break;
    case C_REDUCE:
        if (c->r == c->root) {
            mx_fold(c, img, 0, c->count, 0, 0, c->n - 1);
        }
        break;
    case C_ALLREDUCE:
        mx_fold(c, img, 0, c->count, 0, 0, c->n - 1);
        break;
    case C_GATHER: case C_ALLGATHER:
        if (c->rn > 0) {
            for (j = 0; j < c->n; ++j) {
                mx_gen(c, img, (size_t)j * c->count, c->count, j, 0);
            }
        }
        break;
    case C_GATHERV: case C_ALLGATHERV:
        if (c->rn > 0) {
            for (j = 0; j < c->n; ++j) {
                mx_gen(c, img, c->v2[j], c->v1[j], j, 0);
            }
        }
        break;
    case C_SCATTER:
        mx_gen(c, img, 0, c->rn, c->root, (uint64_t)c->r * c->count);
        break;
    case C_SCATTERV:
        mx_gen(c, img, 0, c->rn, c->root, c->v2[c->r]);
        break;
    case C_ALLTOALL:
        for (j = 0; j < c->n; ++j) {
            mx_gen(c, img, (size_t)j * c->count, c->count, j, (uint64_t)c->r * c->count);
        }
        break;
    case C_ALLTOALLV:
        cnt = mx_sizes(c->n);
        dsp = mx_sizes(c->n);
        if (c->in_place) { /* the gaps keep what this rank put there */
            mx_gen(c, img, 0, c->rn, c->r, 0);
        }
        for (j = 0; j < c->n; ++j) {
            /* where rank j kept what it sent here: its send side, or (in place) its receive side */
            mx_a2av_side(c, j, !c->in_place, cnt, dsp);
            mx_gen(c, img, c->v4[j], c->v3[j], j, dsp[c->r]);
        }
        free(cnt);
        free(dsp);
        break;
    case C_RSB:
        mx_fold(c, img, 0, c->count, (uint64_t)c->r * c->count, 0, c->n - 1);
        if (c->rn > c->count) { /* in place: the rest is undefined */
            memcpy(img + c->count * c->esz, c->rbuf + c->count * c->esz,
                   (c->rn - c->count) * c->esz);
        }
        break;
    case C_RS:
        mx_fold(c, img, 0, c->own, c->v2[c->r], 0, c->n - 1);
        if (c->rn > c->own) {
            memcpy(img + c->own * c->esz, c->rbuf + c->own * c->esz, (c->rn - c->own) * c->esz);
        }
        break;
    case C_SCAN:
        mx_fold(c, img, 0, c->count, 0, 0, c->r);
        break;
    case C_EXSCAN:
        if (c->r == 0) { /* undefined at rank 0 */
            memcpy(img, c->rbuf, c->count * c->esz);
        } else {
            mx_fold(c, img, 0, c->count, 0, 0, c->r - 1);
        }
        break;
    }
    return img;
}

static void mx_hex(const unsigned char *p, size_t n, char *out, size_t len)
{
    size_t k, o = 0;

    out[0] = '\0';
    for (k = n; (k-- > 0) && (o + 3 < len);) { /* little-endian: most significant first */
        o += (size_t)snprintf(out + o, len - o, "%02x", p[k]);
    }
}

/* 0 if buf matches img over nelem elements and the guard; else describes the
 * first difference in why (when why is not NULL). */
static int mx_compare(const mx_case_t *c, const char *what, const unsigned char *buf,
                      const unsigned char *img, size_t nelem, char *why, size_t len)
{
    size_t bytes = nelem * c->esz, k, first = SIZE_MAX, bad = 0;
    char   eh[40], gh[40];

    if (memcmp(buf, img, bytes + MX_GUARD) == 0) {
        return 0;
    }
    if (why == NULL) {
        return 1;
    }
    for (k = 0; k < nelem; ++k) {
        if (memcmp(buf + k * c->esz, img + k * c->esz, c->esz) != 0) {
            first = (first == SIZE_MAX) ? k : first;
            ++bad;
        }
    }
    if (first != SIZE_MAX) {
        mx_hex(img + first * c->esz, c->esz, eh, sizeof(eh));
        mx_hex(buf + first * c->esz, c->esz, gh, sizeof(gh));
        snprintf(why, len, "%s element %zu: expected 0x%s got 0x%s (%zu of %zu elements wrong)",
                 what, first, eh, gh, bad, nelem);
    } else {
        for (k = 0; (k < MX_GUARD) && (buf[bytes + k] == img[bytes + k]); ++k) {
        }
        snprintf(why, len, "%s: guard byte %zu behind its %zu elements overwritten "
                 "(0x%02x, expected 0x%02x)", what, k, nelem, buf[bytes + k], img[bytes + k]);
    }
    return 1;
}

/* Checks a completed collective's buffers: 0 if right; else fatal (report) or 1. */
static int mx_case_check(mx_case_t *c, int report)
{
    char           why[512], desc[512];
    unsigned char *img;
    int            bad = 0;

    if (c->coll == C_BARRIER) {
        return 0;
    }
    why[0] = '\0';
    if (c->rbuf != NULL) {
        img = mx_case_expect(c);
        bad = mx_compare(c, (c->r == c->root) ? "receive buffer (root)" : "receive buffer",
                         c->rbuf, img, c->rn, report ? why : NULL, sizeof(why));
        free(img);
    }
    if (!bad && (c->sbuf != NULL)) {
        bad = mx_compare(c, "send buffer (must not change)", c->sbuf, c->scopy, c->sn,
                         report ? why : NULL, sizeof(why));
    }
    if (bad && report) {
        mx_case_desc(c, desc, sizeof(desc));
        mx_fatal("%s: %s", desc, why);
    }
    return bad;
}

static void mx_case_free(mx_case_t *c)
{
    free(c->sbuf);
    free(c->scopy);
    free(c->rbuf);
    free(c->v1);
    free(c->v2);
    free(c->v3);
    free(c->v4);
    free(c);
}

/* The call itself, in one of three forms. */
static int mx_call(mx_case_t *c, int form, amc_request_t *req)
{
    const void *s = c->sarg;
    void       *r = c->rarg;
    amc_comm_t  m = c->cm->comm;

#define MX_FORMS(blocking, nb, init) \
    ((form == FORM_BLOCK) ? (blocking) : (form == FORM_NB) ? (nb) : (init))
    switch (c->coll) {
    case C_BARRIER:
        return MX_FORMS(amc_barrier(m), amc_ibarrier(m, req), amc_barrier_init(m, req));
    case C_BCAST:
        return MX_FORMS(amc_bcast(r, c->count, g_dts[c->dti].dt, c->root, m),
                        amc_ibcast(r, c->count, g_dts[c->dti].dt, c->root, m, req),
                        amc_bcast_init(r, c->count, g_dts[c->dti].dt, c->root, m, req));
    case C_REDUCE:
        return MX_FORMS(amc_reduce(s, r, c->count, g_dts[c->dti].dt, c->op, c->root, m),
                        amc_ireduce(s, r, c->count, g_dts[c->dti].dt, c->op, c->root, m, req),
                        amc_reduce_init(s, r, c->count, g_dts[c->dti].dt, c->op, c->root, m,
                                        req));
    case C_ALLREDUCE:
        return MX_FORMS(amc_allreduce(s, r, c->count, g_dts[c->dti].dt, c->op, m),
                        amc_iallreduce(s, r, c->count, g_dts[c->dti].dt, c->op, m, req),
                        amc_allreduce_init(s, r, c->count, g_dts[c->dti].dt, c->op, m, req));
    case C_GATHER:
        return MX_FORMS(amc_gather(s, r, c->count, g_dts[c->dti].dt, c->root, m),
                        amc_igather(s, r, c->count, g_dts[c->dti].dt, c->root, m, req),
                        amc_gather_init(s, r, c->count, g_dts[c->dti].dt, c->root, m, req));
    case C_GATHERV:
        return MX_FORMS(
            amc_gatherv(s, c->own, r, c->v1, c->v2, g_dts[c->dti].dt, c->root, m),
            amc_igatherv(s, c->own, r, c->v1, c->v2, g_dts[c->dti].dt, c->root, m, req),
            amc_gatherv_init(s, c->own, r, c->v1, c->v2, g_dts[c->dti].dt, c->root, m, req));
    case C_SCATTER:
        return MX_FORMS(amc_scatter(s, r, c->count, g_dts[c->dti].dt, c->root, m),
                        amc_iscatter(s, r, c->count, g_dts[c->dti].dt, c->root, m, req),
                        amc_scatter_init(s, r, c->count, g_dts[c->dti].dt, c->root, m, req));
    case C_SCATTERV:
        return MX_FORMS(
            amc_scatterv(s, c->v1, c->v2, r, c->own, g_dts[c->dti].dt, c->root, m),
            amc_iscatterv(s, c->v1, c->v2, r, c->own, g_dts[c->dti].dt, c->root, m, req),
            amc_scatterv_init(s, c->v1, c->v2, r, c->own, g_dts[c->dti].dt, c->root, m, req));
    case C_ALLGATHER:
        return MX_FORMS(amc_allgather(s, r, c->count, g_dts[c->dti].dt, m),
                        amc_iallgather(s, r, c->count, g_dts[c->dti].dt, m, req),
                        amc_allgather_init(s, r, c->count, g_dts[c->dti].dt, m, req));
    case C_ALLGATHERV:
        return MX_FORMS(amc_allgatherv(s, c->own, r, c->v1, c->v2, g_dts[c->dti].dt, m),
                        amc_iallgatherv(s, c->own, r, c->v1, c->v2, g_dts[c->dti].dt, m, req),
                        amc_allgatherv_init(s, c->own, r, c->v1, c->v2, g_dts[c->dti].dt, m,
                                            req));
    case C_ALLTOALL:
        return MX_FORMS(amc_alltoall(s, r, c->count, g_dts[c->dti].dt, m),
                        amc_ialltoall(s, r, c->count, g_dts[c->dti].dt, m, req),
                        amc_alltoall_init(s, r, c->count, g_dts[c->dti].dt, m, req));
    case C_ALLTOALLV:
        return MX_FORMS(
            amc_alltoallv(s, c->v1, c->v2, r, c->v3, c->v4, g_dts[c->dti].dt, m),
            amc_ialltoallv(s, c->v1, c->v2, r, c->v3, c->v4, g_dts[c->dti].dt, m, req),
            amc_alltoallv_init(s, c->v1, c->v2, r, c->v3, c->v4, g_dts[c->dti].dt, m, req));
    case C_RSB:
        return MX_FORMS(
            amc_reduce_scatter_block(s, r, c->count, g_dts[c->dti].dt, c->op, m),
            amc_ireduce_scatter_block(s, r, c->count, g_dts[c->dti].dt, c->op, m, req),
            amc_reduce_scatter_block_init(s, r, c->count, g_dts[c->dti].dt, c->op, m, req));
    case C_RS:
        return MX_FORMS(amc_reduce_scatter(s, r, c->v1, g_dts[c->dti].dt, c->op, m),
                        amc_ireduce_scatter(s, r, c->v1, g_dts[c->dti].dt, c->op, m, req),
                        amc_reduce_scatter_init(s, r, c->v1, g_dts[c->dti].dt, c->op, m, req));
    case C_SCAN:
        return MX_FORMS(amc_scan(s, r, c->count, g_dts[c->dti].dt, c->op, m),
                        amc_iscan(s, r, c->count, g_dts[c->dti].dt, c->op, m, req),
                        amc_scan_init(s, r, c->count, g_dts[c->dti].dt, c->op, m, req));
    case C_EXSCAN:
        return MX_FORMS(amc_exscan(s, r, c->count, g_dts[c->dti].dt, c->op, m),
                        amc_iexscan(s, r, c->count, g_dts[c->dti].dt, c->op, m, req),
                        amc_exscan_init(s, r, c->count, g_dts[c->dti].dt, c->op, m, req));
    }
#undef MX_FORMS
    return AMC_ERR_ARG;
}

/* ------------------------------------------------------------------ drawing a case */

/* Elements of the datatype: mostly small (0 included), some KiB, a few above 16 KiB. */
static size_t mx_draw_count(mx_rng_t *g, size_t esz)
{
    unsigned p = mx_below(g, 100);

    if (p < 10) {
        return 0;
    }
    if (p < 55) {
        return 1 + mx_below(g, 16);
    }
    if (p < 80) {
        return 17 + mx_below(g, 284);
    }
    if (p < 94) {
        return (1024 + mx_below(g, 7 * 1024)) / esz;
    }
    return (16 * 1024 + 1 + mx_below(g, 8 * 1024)) / esz + 1;
}

/* Draws everything about a start from the shared generator (the same on every
 * rank); only what depends on this rank's place in the communicator differs. */
static mx_case_t *mx_draw(mx_rng_t *g, const mx_comm_t *cm, int ci, int mode, long id)
{
    mx_case_t *c = calloc(1, sizeof(*c));
    unsigned   flags;
    int        k, nvalid, valid[MX_NOP], user;

    if (c == NULL) {
        mx_fatal("test bug: out of memory");
    }
    c->cm       = cm;
    c->ci       = ci;
    c->n        = cm->n;
    c->r        = cm->r;
    c->mode     = mode;
    c->id       = id;
    c->coll     = (int)mx_below(g, MX_NCOLL);
    flags       = g_colls[c->coll].flags;
    c->dti      = (int)mx_below(g, MX_NDT);
    c->root     = (int)(mx_rand(g) % 1024u); /* below every size, then reduced per communicator */
    c->in_place = (int)mx_below(g, 3) == 0;
    user        = (int)mx_below(g, 4) == 0;
    k           = (int)mx_below(g, 1024);
    c->count    = 0;
    c->opk      = -1;
    c->op       = -1;
    c->root     = (flags & F_ROOT) ? c->root % c->n : -1;
    c->in_place = (flags & F_INPLACE) ? c->in_place : 0;
    if (flags & F_OP) {
        if (user) { /* one of the user ops, on a datatype it takes */
            static const amc_datatype_t udt[] = { AMC_UINT32, AMC_UINT64, AMC_INT64 };
            amc_datatype_t dt = udt[k % 3];
            for (c->dti = 0; g_dts[c->dti].dt != dt; ++c->dti) {
            }
            c->opk = (dt == AMC_UINT32) ? K_UNC : (dt == AMC_INT64) ? K_UC
                                                : ((k / 3) & 1) ? K_UNC : K_UC;
        } else {
            if (g_dts[c->dti].cls == CLS_RAW) {
                c->dti += 2 + k % (MX_NDT - 2); /* wraps below */
                c->dti %= MX_NDT;
                c->dti  = (g_dts[c->dti].cls == CLS_RAW) ? 4 : c->dti;
            }
            for (nvalid = 0, k = 0; k < K_UNC; ++k) {
                if (mx_op_valid(k, c->dti)) {
                    valid[nvalid++] = k;
                }
            }
            c->opk = valid[mx_below(g, (unsigned)nvalid)];
        }
    }
    c->count = (c->coll == C_BARRIER) ? 0 : mx_draw_count(g, g_dts[c->dti].size);
    return c;
}

/* The op handle for a start: predefined, a user op made for this start (the
 * caller frees it right after the start), or (persistent) a long-lived one. */
static int mx_case_op(mx_case_t *c)
{
    int temp = 0;

    if (c->opk < 0) {
        return 0;
    }
    if (c->opk < K_UNC) {
        c->op = g_predef[c->opk];
    } else if (c->mode == M_PERSIST) {
        c->op = (c->opk == K_UNC) ? g_long_unc : g_long_uc;
    } else {
        mx_must(amc_op_create((c->opk == K_UNC) ? mx_user_unc : mx_user_uc, c->opk == K_UC,
                              &c->op), "amc_op_create");
        temp = 1;
    }
    return temp;
}

static void mx_start_failed(mx_case_t *c, int rc, const char *call)
{
    char desc[512];

    mx_case_desc(c, desc, sizeof(desc));
    mx_fatal("%s: %s returned %s (%d)", desc, call, amc_strerror(rc), rc);
}

/* ------------------------------------------------------------------ idle hook */

static volatile long g_hook_calls;
static volatile int  g_hook_bad_arg;

static void mx_hook(void *arg)
{
    if (arg != (void *)&g_hook_calls) {
        g_hook_bad_arg = 1;
    }
    g_hook_calls++;
}

/* Rank 0 sleeps, then every rank completes a collective of kind `how` on world:
 * the others must wait for rank 0 there. */
static void mx_late_root_wait(amc_comm_t world, int how)
{
    amc_request_t req = AMC_REQUEST_NULL;
    long          in = 1, out = 0;
    int           idx;

    if (g_rank == 0) {
        mx_usleep(MX_HOOK_SLEEP);
    }
    switch (how) {
    case 0:
        mx_must(amc_barrier(world), "amc_barrier (idle hook check)");
        break;
    case 1:
        mx_must(amc_ibarrier(world, &req), "amc_ibarrier (idle hook check)");
        mx_must(amc_wait(&req), "amc_wait on an ibarrier (idle hook check)");
        break;
    default:
        mx_must(amc_iallreduce(&in, &out, 1, AMC_LONG, AMC_SUM, world, &req),
                "amc_iallreduce (idle hook check)");
        mx_must(amc_waitany(1, &req, &idx), "amc_waitany on an iallreduce (idle hook check)");
        if ((idx != 0) || (out != g_size)) {
            mx_fatal("idle hook check: amc_waitany gave index %d, sum %ld (expected 0, %d)",
                     idx, out, g_size);
        }
        break;
    }
}

static void mx_hook_checks(amc_comm_t world)
{
    static const char *hows[] = { "amc_barrier", "amc_wait (ibarrier)",
                                  "amc_waitany (iallreduce)" };
    long               before;
    int                how;

    mx_must(amc_set_idle_hook(mx_hook, (void *)&g_hook_calls), "amc_set_idle_hook(hook)");
    if (g_size >= 2) {
        for (how = 0; how < 3; ++how) {
            mx_must(amc_barrier(world), "amc_barrier (idle hook check)");
            before = g_hook_calls;
            mx_late_root_wait(world, how);
            if ((g_rank != 0) && (g_hook_calls == before)) {
                mx_fatal("idle hook: not called while %s waited %d ms for rank 0", hows[how],
                         MX_HOOK_SLEEP / 1000);
            }
        }
        if (g_hook_bad_arg) {
            mx_fatal("idle hook: called with another argument than it was set with");
        }
    }
    mx_must(amc_set_idle_hook(NULL, NULL), "amc_set_idle_hook(NULL, NULL)");
    if (g_size >= 2) {
        before = g_hook_calls;
        for (how = 0; how < 3; ++how) {
            mx_must(amc_barrier(world), "amc_barrier (idle hook check)");
            mx_late_root_wait(world, how);
        }
        if (g_hook_calls != before) {
            mx_fatal("idle hook: called %ld times after amc_set_idle_hook(NULL, NULL)",
                     g_hook_calls - before);
        }
    }
    if (g_rank == 0) {
        printf("idle hook: %ld calls on rank 0 while it was set (N=%d)\n", g_hook_calls, g_size);
    }
}

/* ------------------------------------------------------------------ the mixed phase */

enum {
    A_WAIT, A_TEST, A_WAITALL, A_TESTALL, A_WAITANY, A_FREE, A_XTESTALL, A_XWAITANY, A_XWAITALL,
    MX_NACT
};
static const char *g_act_names[MX_NACT] = {
    "amc_wait", "amc_test", "amc_waitall", "amc_testall", "amc_waitany", "amc_request_free",
    "amc_testall (all windows)", "amc_waitany (all windows)", "amc_waitall (all windows)"
};
static const unsigned g_act_weight[MX_NACT] = { 12, 14, 4, 8, 8, 3, 3, 3, 1 };

typedef struct {
    mx_comm_t  comms[MX_NCOMM];
    mx_case_t *win[MX_NCOMM][MX_WINDOW];
    int        nwin[MX_NCOMM];
    mx_case_t *persist[MX_NCOMM][MX_PERSIST];
    mx_case_t **freed;
    int        nfreed, freed_cap;
    long       starts[3], acts[MX_NACT], completed, local_waits, sleeps;
} mx_state_t;

/* A request of the window completed (its handle released, or a persistent one
 * made inactive): check it and drop it from the window. */
static void mx_done(mx_state_t *st, int ci, int slot, const char *how)
{
    mx_case_t *c = st->win[ci][slot];

    c->how = how;
    mx_case_check(c, 1);
    memmove(&st->win[ci][slot], &st->win[ci][slot + 1],
            (size_t)(st->nwin[ci] - slot - 1) * sizeof(mx_case_t *));
    st->nwin[ci]--;
    st->completed++;
    if (c->mode == M_PERSIST) {
        c->active = 0;
    } else {
        mx_case_free(c);
    }
}

static void mx_complete_status(mx_case_t *c, int rc, const char *how)
{
    char desc[512];

    if (rc != AMC_SUCCESS) {
        c->how = how;
        mx_case_desc(c, desc, sizeof(desc));
        mx_fatal("%s: %s returned %s (%d)", desc, how, amc_strerror(rc), rc);
    }
}

static void mx_wait_slot(mx_state_t *st, int ci, int slot, const char *how)
{
    mx_complete_status(st->win[ci][slot], amc_wait(&st->win[ci][slot]->req), how);
    mx_done(st, ci, slot, how);
}

/* An array call over the windows of comms lo..hi, in window order. */
static void mx_array(mx_state_t *st, int lo, int hi, int act)
{
    amc_request_t reqs[MX_NCOMM * MX_WINDOW];
    int           at_ci[MX_NCOMM * MX_WINDOW], at_k[MX_NCOMM * MX_WINDOW];
    int           n = 0, ci, k, rc, flag = 0, idx = -1;

    for (ci = lo; ci <= hi; ++ci) {
        for (k = 0; k < st->nwin[ci]; ++k) {
            at_ci[n]  = ci;
            at_k[n]   = k;
            reqs[n++] = st->win[ci][k]->req;
        }
    }
    if (n == 0) {
        return;
    }
    switch (act) {
    case A_WAITALL: case A_XWAITALL:
        rc   = amc_waitall(n, reqs);
        flag = 1;
        break;
    case A_TESTALL: case A_XTESTALL:
        rc = amc_testall(n, reqs, &flag);
        break;
    default:
        rc = amc_waitany(n, reqs, &idx);
        if ((rc == AMC_SUCCESS) && ((idx < 0) || (idx >= n))) {
            mx_fatal("%s over %d active requests returned index %d", g_act_names[act], n, idx);
        }
        break;
    }
    if (rc != AMC_SUCCESS) {
        /* the first request of the array names the place; the error is the call's */
        mx_complete_status(st->win[at_ci[0]][at_k[0]], rc, g_act_names[act]);
    }
    for (k = 0; k < n; ++k) {
        mx_case_t *c    = st->win[at_ci[k]][at_k[k]];
        int        done = flag || (k == idx);

        if (!done && (reqs[k] != c->req)) {
            mx_fatal("%s changed request %d of %d, which it did not complete", g_act_names[act],
                     k, n);
        }
        if (done && (c->mode != M_PERSIST) && (reqs[k] != AMC_REQUEST_NULL)) {
            mx_fatal("%s: a completed request's handle (%d of %d) is not AMC_REQUEST_NULL",
                     g_act_names[act], k, n);
        }
        if (done && (c->mode == M_PERSIST) && (reqs[k] != c->req)) {
            mx_fatal("%s: a completed persistent request's handle (%d of %d) changed",
                     g_act_names[act], k, n);
        }
        c->req = reqs[k];
    }
    for (k = n - 1; k >= 0; --k) { /* from the back, so that window positions hold */
        if (flag || (k == idx)) {
            mx_done(st, at_ci[k], at_k[k], g_act_names[act]);
        }
    }
}

static void mx_act(mx_state_t *st, int act, int ci, unsigned pick)
{
    int        slot, flag = 0, rc;
    mx_case_t *c;

    st->acts[act]++;
    if (act >= A_XTESTALL) {
        mx_array(st, 0, MX_NCOMM - 1, act);
        return;
    }
    if ((act == A_WAITALL) || (act == A_TESTALL) || (act == A_WAITANY)) {
        mx_array(st, ci, ci, act);
        return;
    }
    if (st->nwin[ci] == 0) {
        return;
    }
    slot = (int)(pick % (unsigned)st->nwin[ci]);
    c    = st->win[ci][slot];
    switch (act) {
    case A_WAIT:
        mx_wait_slot(st, ci, slot, "amc_wait");
        break;
    case A_TEST:
        rc = amc_test(&c->req, &flag);
        mx_complete_status(c, rc, "amc_test");
        if (flag) {
            mx_done(st, ci, slot, "amc_test");
        }
        break;
    default: /* A_FREE: of a running non-persistent request (persistent: a wait instead) */
        if (c->mode == M_PERSIST) {
            mx_wait_slot(st, ci, slot, "amc_wait (a free was drawn for a persistent request)");
            break;
        }
        c->how = "amc_request_free, checked at the end";
        mx_complete_status(c, amc_request_free(&c->req), "amc_request_free");
        if (c->req != AMC_REQUEST_NULL) {
            mx_fatal("amc_request_free left the handle set");
        }
        if (st->nfreed == st->freed_cap) {
            st->freed_cap = st->freed_cap ? 2 * st->freed_cap : 64;
            st->freed     = realloc(st->freed, (size_t)st->freed_cap * sizeof(*st->freed));
            if (st->freed == NULL) {
                mx_fatal("test bug: out of memory");
            }
        }
        st->freed[st->nfreed++] = c;
        memmove(&st->win[ci][slot], &st->win[ci][slot + 1],
                (size_t)(st->nwin[ci] - slot - 1) * sizeof(mx_case_t *));
        st->nwin[ci]--;
        break;
    }
}

static void mx_start(mx_state_t *st, mx_rng_t *g, long id)
{
    int        ci = (int)mx_below(g, MX_NCOMM), mode, temp, rc, p = (int)mx_below(g, MX_PERSIST);
    unsigned   m  = mx_below(g, 10);
    mx_case_t *c;

    mode = (m < 6) ? M_NB : (m < 8) ? M_BLOCK : M_PERSIST;
    st->starts[mode]++;
    if (mode == M_PERSIST) {
        c = st->persist[ci][p];
        if (c->active) { /* still running here: wait for it before it starts again */
            int slot;
            for (slot = 0; st->win[ci][slot] != c; ++slot) {
            }
            st->local_waits++;
            mx_wait_slot(st, ci, slot, "amc_wait (before a restart)");
        }
        if (st->nwin[ci] == MX_WINDOW) {
            st->local_waits++;
            mx_wait_slot(st, ci, 0, "amc_wait (window full)");
        }
        c->id   = id;
        c->seed = mx_mix(g_seed ^ ((uint64_t)id << 8) ^ 0x5eed);
        c->how  = NULL;
        mx_case_fill(c);
        rc = amc_start(&c->req);
        if (rc != AMC_SUCCESS) {
            mx_start_failed(c, rc, "amc_start");
        }
        c->active                    = 1;
        st->win[ci][st->nwin[ci]++] = c;
        return;
    }
    c       = mx_draw(g, &st->comms[ci], ci, mode, id);
    c->seed = mx_mix(g_seed ^ ((uint64_t)id << 8) ^ 0x5eed);
    mx_case_layout(c);
    mx_case_fill(c);
    if ((mode == M_NB) && (st->nwin[ci] == MX_WINDOW)) {
        st->local_waits++;
        mx_wait_slot(st, ci, 0, "amc_wait (window full)");
    }
    temp   = mx_case_op(c);
    c->req = AMC_REQUEST_NULL;
    c->how = (mode == M_BLOCK) ? "(blocking)" : NULL;
    rc     = mx_call(c, (mode == M_BLOCK) ? FORM_BLOCK : FORM_NB, &c->req);
    if (temp) {
        mx_must(amc_op_free(&c->op), "amc_op_free right after the start");
    }
    if (rc != AMC_SUCCESS) {
        mx_start_failed(c, rc, (mode == M_BLOCK) ? "the blocking call" : "the i-form");
    }
    if (mode == M_BLOCK) {
        mx_case_check(c, 1);
        mx_case_free(c);
        st->completed++;
        return;
    }
    st->win[ci][st->nwin[ci]++] = c;
}

static void mx_comm_open(mx_comm_t *cm, amc_comm_t comm, const char *name)
{
    cm->comm = comm;
    cm->name = name;
    mx_must(amc_comm_size(comm, &cm->n), "amc_comm_size");
    mx_must(amc_comm_rank(comm, &cm->r), "amc_comm_rank");
}

static void mx_mixed(amc_comm_t world, long iters)
{
    static mx_state_t st;
    mx_rng_t          g  = { g_seed }, lg = { mx_mix(g_seed) ^ (uint64_t)(g_rank + 1) * 977 };
    amc_comm_t        c[MX_NCOMM];
    unsigned          total_w = 0, w, a;
    long              id, step = 0;
    int               ci, p, rc, k, bad, any_bad = 0, tries;
    double            t0 = mx_now();

    mx_must(amc_comm_dup(world, &c[0]), "amc_comm_dup");
    mx_must(amc_comm_dup(world, &c[1]), "amc_comm_dup");
    mx_must(amc_comm_split(world, 0, g_size - 1 - g_rank, &c[2]), "amc_comm_split (reversed)");
    mx_must(amc_comm_split(world, g_rank % 2, g_size - g_rank, &c[3]),
            "amc_comm_split (odd/even, reversed)");
    mx_comm_open(&st.comms[0], c[0], "dup-a");
    mx_comm_open(&st.comms[1], c[1], "dup-b");
    mx_comm_open(&st.comms[2], c[2], "split-reversed");
    mx_comm_open(&st.comms[3], c[3], "split-odd-even");
    if (st.comms[2].r != g_size - 1 - g_rank) {
        mx_fatal("the reversed split gave rank %d to world rank %d (N=%d)", st.comms[2].r,
                 g_rank, g_size);
    }
    mx_must(amc_op_create(mx_user_unc, 0, &g_long_unc), "amc_op_create (non-commutative)");
    mx_must(amc_op_create(mx_user_uc, 1, &g_long_uc), "amc_op_create (commutative)");

    /* the persistent requests, made once */
    for (ci = 0; ci < MX_NCOMM; ++ci) {
        for (p = 0; p < MX_PERSIST; ++p) {
            mx_case_t *pc = mx_draw(&g, &st.comms[ci], ci, M_PERSIST, -1);
            mx_case_layout(pc);
            mx_case_op(pc);
            rc = mx_call(pc, FORM_INIT, &pc->req);
            if (rc != AMC_SUCCESS) {
                mx_start_failed(pc, rc, "amc_X_init");
            }
            st.persist[ci][p] = pc;
        }
    }

    for (a = 0; a < MX_NACT; ++a) {
        total_w += g_act_weight[a];
    }
    for (id = 0; id < iters; ++step) {
        /* rarely, and differently on each rank, a few ms asleep */
        if (mx_below(&lg, 300) == 0) {
            mx_usleep(1000 + mx_below(&lg, 4000));
            st.sleeps++;
        }
        if (mx_below(&g, 100) < 52) {
            mx_start(&st, &g, id++);
            continue;
        }
        w  = mx_below(&g, total_w);
        ci = (int)mx_below(&g, MX_NCOMM);
        k  = (int)(mx_rand(&g) & 0xffff);
        for (a = 0; w >= g_act_weight[a]; ++a) {
            w -= g_act_weight[a];
        }
        mx_act(&st, (int)a, ci, (unsigned)k);
    }

    /* everything else waited for, then a barrier on every communicator */
    for (ci = 0; ci < MX_NCOMM; ++ci) {
        while (st.nwin[ci] > 0) {
            mx_wait_slot(&st, ci, 0, "amc_wait (at the end)");
        }
    }
    for (ci = 0; ci < MX_NCOMM; ++ci) {
        mx_must(amc_barrier(c[ci]), "amc_barrier at the end");
    }
    mx_must(amc_barrier(world), "amc_barrier(world) at the end");

    /* the freed requests complete unobserved: their buffers must get right
     * while progress runs, within a bound; every rank takes part in the same
     * allreduces (of whether a rank still finds a wrong buffer) */
    for (tries = 0;; ++tries) {
        for (bad = 0, k = 0; (k < st.nfreed) && !bad; ++k) {
            bad = mx_case_check(st.freed[k], 0);
        }
        mx_must(amc_allreduce(&bad, &any_bad, 1, AMC_INT, AMC_MAX, world),
                "amc_allreduce (waiting for freed requests)");
        if (!any_bad || (tries == MX_FREED_TRIES)) {
            break;
        }
        mx_usleep(1000);
    }
    for (k = 0; k < st.nfreed; ++k) {
        mx_case_check(st.freed[k], 1); /* reports the first still wrong */
        mx_case_free(st.freed[k]);
    }
    free(st.freed);

    for (ci = 0; ci < MX_NCOMM; ++ci) {
        for (p = 0; p < MX_PERSIST; ++p) {
            mx_must(amc_request_free(&st.persist[ci][p]->req), "amc_request_free (persistent)");
            mx_case_free(st.persist[ci][p]);
        }
    }
    mx_must(amc_op_free(&g_long_unc), "amc_op_free");
    mx_must(amc_op_free(&g_long_uc), "amc_op_free");
    for (ci = 0; ci < MX_NCOMM; ++ci) {
        mx_must(amc_comm_free(&c[ci]), "amc_comm_free");
    }
    if (g_rank == 0) {
        printf("mixed: N=%d, %ld collectives (%ld non-blocking, %ld blocking, %ld persistent "
               "starts), %ld steps, %.2f s on rank 0\n", g_size, iters, st.starts[M_NB],
               st.starts[M_BLOCK], st.starts[M_PERSIST], step, mx_now() - t0);
        printf("mixed: rank 0 completions:");
        for (a = 0; a < MX_NACT; ++a) {
            printf(" %s %ld;", g_act_names[a], st.acts[a]);
        }
        printf(" waits of its own %ld, freed running %d (settled after %d allreduces), "
               "sleeps %ld\n", st.local_waits, st.nfreed, tries, st.sleeps);
    }
}

/* ------------------------------------------------------------------ main */

static int mx_all_digits(const char *s)
{
    if (*s == '\0') {
        return 0;
    }
    for (; *s; ++s) {
        if ((*s < '0') || (*s > '9')) {
            return 0;
        }
    }
    return 1;
}

int main(int argc, char **argv)
{
    amc_comm_t  world;
    const char *s;
    long        iters = 2000;
    int         i, rc, hook_during;

    setvbuf(stdout, NULL, _IOLBF, 0);
    if (((s = getenv("AMCTEST_SEED")) != NULL) && (*s != '\0')) {
        g_seed = strtoull(s, NULL, 0);
    }
    if (((s = getenv("AMCTEST_MIXED_ITERS")) != NULL) && (*s != '\0')) {
        iters = strtol(s, NULL, 0);
    }
    hook_during = ((s = getenv("AMCTEST_MIXED_HOOK")) != NULL) && (strcmp(s, "1") == 0);
    for (i = 1; i < argc; ++i) {
        if (mx_all_digits(argv[i])) {
            iters = strtol(argv[i], NULL, 10);
        } else if ((i == 1) && (strcmp(argv[i], "mixed") != 0)) {
            fprintf(stderr, "usage: %s [mixed [SHARED_FILE]] [ITER]\n", argv[0]);
            return 2;
        }
    }

    rc = amc_set_idle_hook(mx_hook, (void *)&g_hook_calls);
    if (rc != AMC_ERR_NOT_INITIALIZED) {
        mx_fatal("amc_set_idle_hook before amc_init returned %s (%d), expected "
                 "AMC_ERR_NOT_INITIALIZED", amc_strerror(rc), rc);
    }
    rc = amc_init(&argc, &argv);
    if (rc != AMC_SUCCESS) {
        mx_fatal("amc_init returned %s (%d)", amc_strerror(rc), rc);
    }
    world = AMC_COMM_WORLD;
    mx_must(amc_comm_rank(world, &g_rank), "amc_comm_rank(world)");
    mx_must(amc_comm_size(world, &g_size), "amc_comm_size(world)");
    mx_must(amc_barrier(world), "amc_barrier(world) at the start");

    mx_hook_checks(world);
    if (hook_during) {
        g_hook_calls = 0;
        mx_must(amc_set_idle_hook(mx_hook, (void *)&g_hook_calls), "amc_set_idle_hook(hook)");
    }
    mx_mixed(world, iters);
    if (hook_during) {
        mx_must(amc_set_idle_hook(NULL, NULL), "amc_set_idle_hook(NULL, NULL)");
        if (g_rank == 0) {
            printf("mixed: idle hook set throughout, %ld calls on rank 0\n", g_hook_calls);
        }
        if (g_hook_bad_arg) {
            mx_fatal("idle hook: called with another argument than it was set with");
        }
    }
    mx_must(amc_barrier(world), "amc_barrier(world) before amc_finalize");

    mx_must(amc_finalize(), "amc_finalize");
    rc = amc_set_idle_hook(mx_hook, (void *)&g_hook_calls);
    if (rc != AMC_ERR_NOT_INITIALIZED) {
        mx_fatal("amc_set_idle_hook after amc_finalize returned %s (%d), expected "
                 "AMC_ERR_NOT_INITIALIZED", amc_strerror(rc), rc);
    }
    if (g_rank == 0) {
        printf("ok mixed N=%d\n", g_size);
    }
    return 0;
}
