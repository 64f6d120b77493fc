/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Integration test for amcoll's data collectives: real UCX, bootstrapped by
 * PMIx under mpirun (or a singleton when started without a launcher).
 *
 *   test_coll_mpi <subtest> [shared-file]
 *
 * Every input element is a function of (case seed, rank, index), so each rank
 * computes every other rank's input, and with it the expected output of any
 * collective, without communication.  Reductions fold the inputs in rank order
 * (x0 op x1 op ... op xN-1) with the same element arithmetic as the types have
 * (wraparound for the integers); the inputs are chosen so that the floating
 * point results are exact in any order (small integers, quarters, powers of 2).
 * Buffers are checked whole: the expected image of a receive buffer is the
 * sentinel pattern it was filled with, overwritten where data must land, and
 * 64 guard bytes behind every buffer must stay untouched; send buffers (and
 * receive buffers that do not matter on a rank, e.g. a reduce's at a non-root)
 * must come back unchanged.
 *
 * Collectives are rows of one table (prepare / start / check), so that a new
 * one is one row and three small functions.  The table holds bcast, reduce,
 * allreduce, gather, scatter, allgather, alltoall and (CT_HAVE_EXTRA, on by
 * default; -DCT_HAVE_EXTRA=0 builds against a library without them) gatherv,
 * scatterv, allgatherv, alltoallv, reduce_scatter_block, reduce_scatter, scan
 * and exscan.  The vector forms use per-rank counts around the base count
 * (base/2, base, 3 base/2 + 1) and displacements in reverse rank order with
 * gaps, which must keep their sentinel.  Communicators are world, dups of it
 * and (CT_HAVE_SPLIT) a split of world into odd and even ranks with the rank
 * order reversed by the key.
 *
 *   full      the cross product on world, a dup and the split: collective x datatype x
 *             op (MPI's rules, plus a non-commutative and a commutative user
 *             op) x root (every rank) x count {0, 1, 7, 1000, 1 MiB / N bytes
 *             in elements} x in place or not, the 1 MiB count on eight
 *             datatypes (every element size, signed and unsigned, both
 *             floats, both forms of the non-commutative op) and the first
 *             and last root (ct_full_big); the call form cycles through
 *             blocking / i-form + amc_wait / i-form + amc_test loop, and every
 *             other count-0 (and every other insignificant) buffer is NULL
 *   sample    for larger N: per communicator, every collective with every count
 *             once (random datatype/op/root/in place/form), every collective
 *             with every datatype once at count 7, and the non-commutative op
 *             on every reduction at counts 7 and 1000
 *   nb        many non-blocking collectives of different kinds outstanding at
 *             once, on one communicator and across three (posted in a
 *             rank-dependent interleaving), completed in reverse order by
 *             amc_wait and by amc_test loops, and by amc_testall / amc_waitall;
 *             blocking collectives issued while others are outstanding; many of
 *             the same kind outstanding
 *   stress    a long seeded random sequence (the same on every rank) of mixed
 *             collectives, blocking and non-blocking on three communicators,
 *             with windows of outstanding requests completed in an order each
 *             rank chooses for itself, and dups freed and recreated
 *   badarg    pairs of datatype and op that MPI's rules forbid, unknown and
 *             freed ops, unknown datatypes and roots out of range return
 *             AMC_ERR_ARG on every rank (blocking and i-forms) and start no
 *             communication: then (and after extra bad calls that only some
 *             ranks make) checked collectives and a barrier still work
 *
 * Rank 0 prints "ok <subtest> N=<n>" on success.  Failures print lines
 * "FAIL <subtest> rank r/N: ..." naming collective, communicator, N, root,
 * count, datatype, op, in place, form and the first wrong element (expected vs
 * got); the exit status is then non-zero.  A collective that returns an error
 * ends the rank at once (mpirun then ends the job).
 *
 * Environment (none of it starts with AMC_, which the library reserves):
 *   AMCTEST_SEED          seed of every input and of the random choices (default 20240611)
 *   AMCTEST_STRESS_STEPS  length of the stress sequence (default chosen by N)
 *   AMCTEST_BIG_BYTES     the "1 MiB" of the largest count (default 1048576)
 */
#define _POSIX_C_SOURCE 200809L

#include <amcoll.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <malloc.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Whether amcoll.h declares the vector / reduce_scatter / scan collectives (api.md). */
#ifndef CT_HAVE_EXTRA
#define CT_HAVE_EXTRA 1
#endif
/* Whether amcoll.h declares amc_comm_split. */
#ifndef CT_HAVE_SPLIT
#define CT_HAVE_SPLIT 1
#endif

#define CT_GUARD              64      /* bytes behind every buffer that must stay untouched */
#define CT_LOOP_LIMIT_S       90.0    /* longest amc_test / amc_testall loop */
#define CT_MAX_FAIL_LINES     20
#define CT_MAX_PENDING        16      /* outstanding requests in the stress window */

/* ------------------------------------------------------------------ state */

static const char *g_subtest = "?";
static int         g_rank    = -1;
static int         g_size    = -1;
static int         g_failures;
static atomic_int *g_shm_failures;
static uint64_t    g_seed      = 20240611u;
static size_t      g_big_bytes = 1048576u;
static long        g_cases;             /* cases run by this rank */

/* ------------------------------------------------------------------ reporting */

static double ct_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static const char *ct_code_name(int rc)
{
    static const char *names[] = {
        "AMC_SUCCESS", "AMC_ERR_ARG", "AMC_ERR_COMM", "AMC_ERR_NO_MEMORY",
        "AMC_ERR_TRUNCATE", "AMC_ERR_PROTOCOL", "AMC_ERR_PEER", "AMC_ERR_TIMEOUT",
        "AMC_ERR_TRANSPORT", "AMC_ERR_NOT_INITIALIZED", "AMC_ERR_UNSUPPORTED",
        "AMC_ERR_REVOKED"
    };
    _Static_assert(sizeof(names) / sizeof(names[0]) == AMC_ERR_LAST,
                   "code name table out of date with amcoll.h");
    if ((rc >= 0) && (rc < AMC_ERR_LAST)) {
        return names[rc];
    }
    return "(unknown code)";
}

static void ct_vreport(const char *kind, const char *fmt, va_list ap)
{
    char msg[2048];

    vsnprintf(msg, sizeof(msg), fmt, ap);
    fprintf(stderr, "%s %s rank %d/%d: %s\n", kind, g_subtest, g_rank, g_size, msg);
    fflush(stderr);
}

__attribute__((format(printf, 1, 2)))
static void ct_fail(const char *fmt, ...)
{
    va_list ap;

    if (++g_failures <= CT_MAX_FAIL_LINES) {
        va_start(ap, fmt);
        ct_vreport("FAIL", fmt, ap);
        va_end(ap);
    } else if (g_failures == CT_MAX_FAIL_LINES + 1) {
        fprintf(stderr, "FAIL %s rank %d/%d: (further failure lines suppressed)\n",
                g_subtest, g_rank, g_size);
    }
}

__attribute__((format(printf, 1, 2), noreturn))
static void ct_fatal(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    ct_vreport("FAIL", fmt, ap);
    va_end(ap);
    fprintf(stderr, "FAIL %s rank %d/%d: aborting this rank (%d earlier failure(s))\n",
            g_subtest, g_rank, g_size, g_failures);
    fflush(stdout);
    fflush(stderr);
    exit(1);
}

static void ct_must(int rc, const char *what)
{
    if (rc != AMC_SUCCESS) {
        ct_fatal("%s returned %s (%d), expected AMC_SUCCESS", what, ct_code_name(rc), rc);
    }
}

static void *ct_malloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (p == NULL) {
        ct_fatal("test bug: out of memory (%zu bytes)", n);
    }
    return p;
}

/* ------------------------------------------------------------------ random numbers */

static inline uint64_t ct_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Input element idx of rank `rank` in the case seeded `seed` is
 * ct_hash(ct_base(seed, rank), idx): a splitmix64 stream per rank. */
static inline uint64_t ct_base(uint64_t seed, int rank)
{
    return ct_mix(seed ^ ((uint64_t)(unsigned)rank * 0xd1b54a32d192ed03ull));
}

static inline uint64_t ct_hash(uint64_t base, uint64_t idx)
{
    /* one multiply: the expected values of every rank are computed on every rank */
    uint64_t x = base + idx * 0x9e3779b97f4a7c15ull;

    x ^= x >> 32;
    x *= 0xd6e8feb86659fd93ull;
    return x ^ (x >> 32);
}

typedef struct { uint64_t s; } ct_rng_t;

static uint64_t ct_rand(ct_rng_t *g)
{
    g->s += 0x9e3779b97f4a7c15ull;
    return ct_mix(g->s);
}

static unsigned ct_below(ct_rng_t *g, unsigned n)
{
    return (n == 0) ? 0 : (unsigned)(ct_rand(g) % n);
}

/* A value below m from 32 random bits (no division). */
static inline uint64_t ct_pick(uint64_t bits32, uint64_t m)
{
    return ((bits32 & 0xffffffffu) * m) >> 32;
}

static inline uint64_t ct_rotr(uint64_t x, int k)
{
    return (x >> k) | (x << (64 - k));
}

/* ------------------------------------------------------------------ datatypes */

enum { CLS_RAW, CLS_SINT, CLS_UINT, CLS_FLOAT };

typedef struct {
    amc_datatype_t dt;
    const char    *name;
    size_t         size;
    int            cls;
} ct_dt_t;

static const ct_dt_t g_dts[] = {
    { AMC_BYTE,   "AMC_BYTE",   1,                 CLS_RAW },
    { AMC_CHAR,   "AMC_CHAR",   sizeof(char),      CLS_RAW },
    { AMC_INT8,   "AMC_INT8",   sizeof(int8_t),    CLS_SINT },
    { AMC_INT16,  "AMC_INT16",  sizeof(int16_t),   CLS_SINT },
    { AMC_INT32,  "AMC_INT32",  sizeof(int32_t),   CLS_SINT },
    { AMC_INT64,  "AMC_INT64",  sizeof(int64_t),   CLS_SINT },
    { AMC_UINT8,  "AMC_UINT8",  sizeof(uint8_t),   CLS_UINT },
    { AMC_UINT16, "AMC_UINT16", sizeof(uint16_t),  CLS_UINT },
    { AMC_UINT32, "AMC_UINT32", sizeof(uint32_t),  CLS_UINT },
    { AMC_UINT64, "AMC_UINT64", sizeof(uint64_t),  CLS_UINT },
    { AMC_INT,    "AMC_INT",    sizeof(int),       CLS_SINT },
    { AMC_LONG,   "AMC_LONG",   sizeof(long),      CLS_SINT },
    { AMC_FLOAT,  "AMC_FLOAT",  sizeof(float),     CLS_FLOAT },
    { AMC_DOUBLE, "AMC_DOUBLE", sizeof(double),    CLS_FLOAT },
};
#define CT_NDT ((int)(sizeof(g_dts) / sizeof(g_dts[0])))

/* ------------------------------------------------------------------ ops */

enum {
    K_SUM, K_PROD, K_MIN, K_MAX, K_LAND, K_LOR, K_LXOR, K_BAND, K_BOR, K_BXOR,
    K_UNC,  /* user, non-commutative: AMC_UINT32 affine maps, AMC_UINT64 2x2 matrices */
    K_UC,   /* user, commutative: wrapping sum of AMC_INT64 */
    CT_NOP
};

typedef struct {
    const char *name;
    amc_op_t    op;  /* set in main for the user ops */
} ct_op_t;

static ct_op_t g_ops[CT_NOP] = {
    { "AMC_SUM", AMC_SUM },   { "AMC_PROD", AMC_PROD }, { "AMC_MIN", AMC_MIN },
    { "AMC_MAX", AMC_MAX },   { "AMC_LAND", AMC_LAND }, { "AMC_LOR", AMC_LOR },
    { "AMC_LXOR", AMC_LXOR }, { "AMC_BAND", AMC_BAND }, { "AMC_BOR", AMC_BOR },
    { "AMC_BXOR", AMC_BXOR }, { "user-noncommutative", -1 }, { "user-commutative", -1 },
};

/* MPI's rules (api.md), and which datatypes the test's user functions handle. */
static int ct_op_valid(int opk, int dti)
{
    int cls = g_dts[dti].cls;

    switch (opk) {
    case K_SUM: case K_PROD: case K_MIN: case K_MAX:
        return (cls == CLS_SINT) || (cls == CLS_UINT) || (cls == CLS_FLOAT);
    case K_LAND: case K_LOR: case K_LXOR: case K_BAND: case K_BOR: case K_BXOR:
        return (cls == CLS_SINT) || (cls == CLS_UINT);
    case K_UNC:
        return (g_dts[dti].dt == AMC_UINT32) || (g_dts[dti].dt == AMC_UINT64);
    case K_UC:
        return g_dts[dti].dt == AMC_INT64;
    }
    return 0;
}

/* The non-commutative user op: x op y with x the left operand. */
static uint32_t ct_unc32(uint32_t x, uint32_t y)
{
    /* (a, b) is the map t -> a t + b (mod 2^16) with a odd; x op y = x o y. */
    uint32_t ax = x >> 16, bx = x & 0xffff, ay = y >> 16, by = y & 0xffff;

    return ((ax * ay) & 0xffff) << 16 | ((ax * by + bx) & 0xffff);
}

static uint64_t ct_unc64(uint64_t x, uint64_t y)
{
    /* 2x2 matrices of 16-bit entries (row-major, low bits first); x op y = x * y mod 2^16. */
    uint64_t a[4], b[4], r[4];
    int      i;

    for (i = 0; i < 4; ++i) {
        a[i] = (x >> (16 * i)) & 0xffff;
        b[i] = (y >> (16 * i)) & 0xffff;
    }
    r[0] = (a[0] * b[0] + a[1] * b[2]) & 0xffff;
    r[1] = (a[0] * b[1] + a[1] * b[3]) & 0xffff;
    r[2] = (a[2] * b[0] + a[3] * b[2]) & 0xffff;
    r[3] = (a[2] * b[1] + a[3] * b[3]) & 0xffff;
    return r[0] | (r[1] << 16) | (r[2] << 32) | (r[3] << 48);
}

/* The user functions: inout[i] = in[i] op inout[i] (api.md). Elementwise, so that
 * the library may split a buffer anywhere; unaligned access is tolerated. */
static void ct_user_unc(const void *in, void *inout, size_t count, amc_datatype_t dt)
{
    const unsigned char *s = in;
    unsigned char       *d = inout;
    size_t               i;

    if (dt == AMC_UINT32) {
        uint32_t x, y;
        for (i = 0; i < count; ++i) {
            memcpy(&x, s + 4 * i, 4);
            memcpy(&y, d + 4 * i, 4);
            y = ct_unc32(x, y);
            memcpy(d + 4 * i, &y, 4);
        }
    } else if (dt == AMC_UINT64) {
        uint64_t x, y;
        for (i = 0; i < count; ++i) {
            memcpy(&x, s + 8 * i, 8);
            memcpy(&y, d + 8 * i, 8);
            y = ct_unc64(x, y);
            memcpy(d + 8 * i, &y, 8);
        }
    } else {
        ct_fatal("user-noncommutative op called with datatype %d", (int)dt);
    }
}

static void ct_user_uc(const void *in, void *inout, size_t count, amc_datatype_t dt)
{
    const unsigned char *s = in;
    unsigned char       *d = inout;
    uint64_t             x, y;
    size_t               i;

    if (dt != AMC_INT64) {
        ct_fatal("user-commutative op called with datatype %d", (int)dt);
    }
    for (i = 0; i < count; ++i) {
        memcpy(&x, s + 8 * i, 8);
        memcpy(&y, d + 8 * i, 8);
        y += x;
        memcpy(d + 8 * i, &y, 8);
    }
}

/* Element arithmetic, a chunk at a time (so that the loops are tight): integers
 * in uint64_t, sign- or zero-extended from their width; floats in double (every
 * value the test produces, and every result, is exact in float). */
#define CT_CHUNK 256

/* Truncates integers to their width and extends them again. */
static void ct_norm_chunk(int dti, uint64_t *u, size_t n)
{
    size_t k;

    switch (g_dts[dti].size * 2 + (g_dts[dti].cls == CLS_SINT)) {
    case 2: for (k = 0; k < n; ++k) { u[k] = (uint8_t)u[k]; } break;
    case 3: for (k = 0; k < n; ++k) { u[k] = (uint64_t)(int64_t)(int8_t)u[k]; } break;
    case 4: for (k = 0; k < n; ++k) { u[k] = (uint16_t)u[k]; } break;
    case 5: for (k = 0; k < n; ++k) { u[k] = (uint64_t)(int64_t)(int16_t)u[k]; } break;
    case 8: for (k = 0; k < n; ++k) { u[k] = (uint32_t)u[k]; } break;
    case 9: for (k = 0; k < n; ++k) { u[k] = (uint64_t)(int64_t)(int32_t)u[k]; } break;
    default: break;
    }
}

/* Inputs idx0..idx0+n-1 (n <= CT_CHUNK) of the rank whose stream is `base`, for op
 * opk on n_ranks ranks.  Chosen so that the results are exact and not trivial:
 * float sums of small integers, float products of +-1/+-2 (at most 2^32 in
 * magnitude), odd integer factors (a product mod 2^k never collapses to 0), LAND
 * inputs zero with probability 1/(2N) and LOR inputs non-zero with that
 * probability (so either result occurs), sparse zero bits for BAND and sparse one
 * bits for BOR, invertible elements for the non-commutative user op. */
static void ct_input_chunk(int opk, int dti, uint64_t base, uint64_t idx0, size_t n, int n_ranks,
                           uint64_t *u, double *d)
{
    uint64_t m2n = 2u * (uint64_t)n_ranks, h, g, v;
    size_t   k;

    for (k = 0; k < n; ++k) {
        u[k] = ct_hash(base, idx0 + k);
    }
    if (g_dts[dti].cls == CLS_FLOAT) {
        switch (opk) {
        case K_SUM:
            for (k = 0; k < n; ++k) {
                d[k] = (double)((int)ct_pick(u[k], 33) - 16);
            }
            break;
        case K_PROD:
            for (k = 0; k < n; ++k) {
                double x = 1.0 + (double)((u[k] >> 3) & 1);
                d[k] = ((u[k] >> 4) & 1) ? -x : x;
            }
            break;
        case K_MIN: case K_MAX:
            for (k = 0; k < n; ++k) {
                d[k] = (double)((int)ct_pick(u[k], 2001) - 1000) / 4.0;
            }
            break;
        default:
            ct_fatal("test bug: op %d on %s", opk, g_dts[dti].name);
        }
        return;
    }
    switch (opk) {
    case K_SUM: case K_MIN: case K_MAX: case K_BXOR: case K_UC:
        break; /* the full range */
    case K_PROD:
        for (k = 0; k < n; ++k) {
            v    = ct_pick(u[k], 7) * 2 + 1;
            u[k] = ((u[k] >> 40) & 1) ? (uint64_t)0 - v : v;
        }
        break;
    case K_LAND:
        for (k = 0; k < n; ++k) {
            u[k] = (ct_pick(u[k], m2n) == 0) ? 0 : (ct_pick(u[k] >> 32, 100) + 1);
        }
        break;
    case K_LOR:
        for (k = 0; k < n; ++k) {
            u[k] = (ct_pick(u[k], m2n) == 0) ? (ct_pick(u[k] >> 32, 100) + 1) : 0;
        }
        break;
    case K_LXOR:
        for (k = 0; k < n; ++k) {
            u[k] = ((u[k] >> 5) & 1) ? (ct_pick(u[k] >> 32, 100) + 1) : 0;
        }
        break;
    case K_BAND:
        for (k = 0; k < n; ++k) {
            h    = u[k];
            g    = ct_mix(h);
            u[k] = ~(h & g & ct_rotr(h, 7) & ct_rotr(g, 11));
        }
        break;
    case K_BOR:
        for (k = 0; k < n; ++k) {
            h    = u[k];
            g    = ct_mix(h);
            u[k] = h & g & ct_rotr(h, 7) & ct_rotr(g, 11);
        }
        break;
    case K_UNC:
        if (g_dts[dti].dt == AMC_UINT32) {
            for (k = 0; k < n; ++k) {
                h    = u[k];
                u[k] = ((h & 0xffff) | 1) << 16 | ((h >> 16) & 0xffff);
            }
        } else {
            /* odd diagonal, even upper-right: odd determinant, invertible mod 2^16 */
            for (k = 0; k < n; ++k) {
                h    = u[k];
                u[k] = ((h & 0xffff) | 1) | (((h >> 16) & 0xfffe) << 16) |
                       (((h >> 32) & 0xffff) << 32) | ((((h >> 48) & 0xffff) | 1) << 48);
            }
        }
        break;
    default:
        ct_fatal("test bug: op %d", opk);
    }
    ct_norm_chunk(dti, u, n);
}

/* acc = acc op in, elementwise; acc holds the lower ranks (the left operand).
 * Integer results are normalized by the caller (ct_norm_chunk) at the end. */
static void ct_combine_chunk(int opk, int dti, uint64_t *au, double *ad, const uint64_t *bu,
                             const double *bd, size_t n)
{
    int    sgn = (g_dts[dti].cls == CLS_SINT);
    size_t k;

    if (g_dts[dti].cls == CLS_FLOAT) {
        switch (opk) {
        case K_SUM:  for (k = 0; k < n; ++k) { ad[k] += bd[k]; } break;
        case K_PROD: for (k = 0; k < n; ++k) { ad[k] *= bd[k]; } break;
        case K_MIN:  for (k = 0; k < n; ++k) { ad[k] = (bd[k] < ad[k]) ? bd[k] : ad[k]; } break;
        case K_MAX:  for (k = 0; k < n; ++k) { ad[k] = (bd[k] > ad[k]) ? bd[k] : ad[k]; } break;
        default:     ct_fatal("test bug: op %d on %s", opk, g_dts[dti].name);
        }
        return;
    }
    switch (opk) {
    case K_SUM: case K_UC:
        for (k = 0; k < n; ++k) { au[k] += bu[k]; }
        break;
    case K_PROD:
        for (k = 0; k < n; ++k) { au[k] *= bu[k]; }
        break;
    case K_MIN:
        if (sgn) {
            for (k = 0; k < n; ++k) { au[k] = ((int64_t)bu[k] < (int64_t)au[k]) ? bu[k] : au[k]; }
        } else {
            for (k = 0; k < n; ++k) { au[k] = (bu[k] < au[k]) ? bu[k] : au[k]; }
        }
        break;
    case K_MAX:
        if (sgn) {
            for (k = 0; k < n; ++k) { au[k] = ((int64_t)bu[k] > (int64_t)au[k]) ? bu[k] : au[k]; }
        } else {
            for (k = 0; k < n; ++k) { au[k] = (bu[k] > au[k]) ? bu[k] : au[k]; }
        }
        break;
    case K_LAND: for (k = 0; k < n; ++k) { au[k] = (uint64_t)((au[k] != 0) & (bu[k] != 0)); } break;
    case K_LOR:  for (k = 0; k < n; ++k) { au[k] = (uint64_t)((au[k] != 0) | (bu[k] != 0)); } break;
    case K_LXOR: for (k = 0; k < n; ++k) { au[k] = (uint64_t)((au[k] != 0) ^ (bu[k] != 0)); } break;
    case K_BAND: for (k = 0; k < n; ++k) { au[k] &= bu[k]; } break;
    case K_BOR:  for (k = 0; k < n; ++k) { au[k] |= bu[k]; } break;
    case K_BXOR: for (k = 0; k < n; ++k) { au[k] ^= bu[k]; } break;
    case K_UNC:
        if (g_dts[dti].dt == AMC_UINT32) {
            for (k = 0; k < n; ++k) { au[k] = ct_unc32((uint32_t)au[k], (uint32_t)bu[k]); }
        } else {
            for (k = 0; k < n; ++k) { au[k] = ct_unc64(au[k], bu[k]); }
        }
        break;
    default:
        ct_fatal("test bug: op %d", opk);
    }
}

/* Stores n values as datatype dti at p (unaligned). */
static void ct_store_chunk(int dti, const uint64_t *u, const double *d, size_t n,
                           unsigned char *p)
{
    size_t k;

    if (g_dts[dti].dt == AMC_FLOAT) {
        for (k = 0; k < n; ++k) {
            float f = (float)d[k];
            memcpy(p + 4 * k, &f, 4);
        }
        return;
    }
    if (g_dts[dti].dt == AMC_DOUBLE) {
        memcpy(p, d, 8 * n);
        return;
    }
    switch (g_dts[dti].size) {
    case 1:
        for (k = 0; k < n; ++k) { p[k] = (uint8_t)u[k]; }
        break;
    case 2:
        for (k = 0; k < n; ++k) { uint16_t x = (uint16_t)u[k]; memcpy(p + 2 * k, &x, 2); }
        break;
    case 4:
        for (k = 0; k < n; ++k) { uint32_t x = (uint32_t)u[k]; memcpy(p + 4 * k, &x, 4); }
        break;
    default:
        memcpy(p, u, 8 * n);
        break;
    }
}

/* Raw data (no op): the low esz bytes of each hash. */
static void ct_raw_chunk(uint64_t base, uint64_t idx0, size_t n, size_t esz, unsigned char *p)
{
    size_t k;

    switch (esz) {
    case 1:
        for (k = 0; k < n; ++k) { p[k] = (uint8_t)ct_hash(base, idx0 + k); }
        break;
    case 2:
        for (k = 0; k < n; ++k) { uint16_t x = (uint16_t)ct_hash(base, idx0 + k); memcpy(p + 2 * k, &x, 2); }
        break;
    case 4:
        for (k = 0; k < n; ++k) { uint32_t x = (uint32_t)ct_hash(base, idx0 + k); memcpy(p + 4 * k, &x, 4); }
        break;
    default:
        for (k = 0; k < n; ++k) { uint64_t x = ct_hash(base, idx0 + k); memcpy(p + 8 * k, &x, 8); }
        break;
    }
}

/* ------------------------------------------------------------------ cases */

typedef struct ct_case ct_case_t;

enum { F_ROOT = 1, F_OP = 2, F_INPLACE = 4 };
enum { M_BLOCK, M_IWAIT, M_ITEST, CT_NMODES };
static const char *g_mode_names[] = { "blocking", "i-form+amc_wait", "i-form+amc_test" };

typedef struct {
    const char *name;
    unsigned    flags;
    void (*prepare)(ct_case_t *c);
    int  (*start)(ct_case_t *c, amc_request_t *req); /* req NULL: the blocking form */
    void (*check)(ct_case_t *c);
} ct_coll_t;

struct ct_case {
    const ct_coll_t *cd;
    amc_comm_t       comm;
    const char      *comm_name;
    int              n, r;         /* communicator size and this rank's rank in it */
    int              dti, opk;     /* opk -1: no op */
    int              root;         /* -1: unrooted */
    size_t           count;
    int              in_place, mode, nullbufs;
    long             id;
    uint64_t         seed;
    size_t           esz;
    amc_datatype_t   dt;
    amc_op_t         op;
    unsigned char   *sbuf, *rbuf;  /* allocated (sn / rn elements + CT_GUARD bytes), or NULL */
    unsigned char   *scopy;        /* sbuf as prepared: it must come back unchanged */
    size_t           sn, rn;
    const void      *sarg;         /* what the call gets: a buffer, NULL or AMC_IN_PLACE */
    void            *rarg;
    size_t          *v1, *v2, *v3, *v4; /* vector forms: counts and displacements */
    size_t           own;          /* vector forms: this rank's own count */
    amc_request_t    req;
};

static void ct_case_desc(const ct_case_t *c, char *buf, size_t len)
{
    char root[24];

    if (c->root >= 0) {
        snprintf(root, sizeof(root), "%d", c->root);
    } else {
        snprintf(root, sizeof(root), "-");
    }
    snprintf(buf, len,
             "%s comm=%s N=%d root=%s count=%zu dt=%s op=%s in_place=%d form=%s%s case=%ld",
             c->cd->name, c->comm_name, c->n, root, c->count, g_dts[c->dti].name,
             (c->opk >= 0) ? g_ops[c->opk].name : "-", c->in_place, g_mode_names[c->mode],
             c->nullbufs ? " nullbufs" : "", c->id);
}

/* The sentinel pattern unwritten bytes keep (position-dependent, so that data
 * moved within a buffer shows), kept ready to copy. */
static unsigned char *g_sent;
static size_t         g_sent_len;

static const unsigned char *ct_sentinel(size_t bytes)
{
    size_t k;

    if (bytes > g_sent_len) {
        free(g_sent);
        g_sent_len = bytes + bytes / 2 + 4096;
        g_sent     = ct_malloc(g_sent_len);
        for (k = 0; k < g_sent_len; ++k) {
            g_sent[k] = (uint8_t)(0xa5u ^ (k * 7u) ^ (k >> 8));
        }
    }
    return g_sent;
}

/* A buffer (or expected image) of nelem elements plus the guard, sentinel-filled. */
static unsigned char *ct_img(const ct_case_t *c, size_t nelem)
{
    size_t         bytes = nelem * c->esz + CT_GUARD;
    unsigned char *p     = ct_malloc(bytes);

    memcpy(p, ct_sentinel(bytes), bytes);
    return p;
}

/* A buffer the call gets: NULL where allowed and this case passes NULL buffers. */
static unsigned char *ct_buf(const ct_case_t *c, size_t nelem, int significant)
{
    if (c->nullbufs && ((nelem == 0) || !significant)) {
        return NULL;
    }
    return ct_img(c, nelem);
}

/* n elements at element offset off: rank `rank`'s inputs idx0, idx0+1, ... */
static void ct_img_gen(const ct_case_t *c, unsigned char *img, size_t off, size_t n, int rank,
                       uint64_t idx0)
{
    unsigned char *p    = img + off * c->esz;
    uint64_t       base = ct_base(c->seed, rank), u[CT_CHUNK];
    double         d[CT_CHUNK];
    size_t         done, m;

    for (done = 0; done < n; done += m) {
        m = (n - done < CT_CHUNK) ? (n - done) : CT_CHUNK;
        if (c->opk < 0) {
            ct_raw_chunk(base, idx0 + done, m, c->esz, p + done * c->esz);
        } else {
            ct_input_chunk(c->opk, c->dti, base, idx0 + done, m, c->n, u, d);
            ct_store_chunk(c->dti, u, d, m, p + done * c->esz);
        }
    }
}

/* n elements at off: inputs idx0.. of ranks lo..hi folded in rank order. */
static void ct_img_fold(const ct_case_t *c, unsigned char *img, size_t off, size_t n,
                        uint64_t idx0, int lo, int hi)
{
    unsigned char *p    = img + off * c->esz;
    uint64_t      *base = ct_malloc((size_t)(hi - lo + 1) * sizeof(uint64_t));
    uint64_t       au[CT_CHUNK], bu[CT_CHUNK];
    double         ad[CT_CHUNK], bd[CT_CHUNK];
    size_t         done, m;
    int            j;

    for (j = lo; j <= hi; ++j) {
        base[j - lo] = ct_base(c->seed, j);
    }
    for (done = 0; done < n; done += m) {
        m = (n - done < CT_CHUNK) ? (n - done) : CT_CHUNK;
        ct_input_chunk(c->opk, c->dti, base[0], idx0 + done, m, c->n, au, ad);
        for (j = lo + 1; j <= hi; ++j) {
            ct_input_chunk(c->opk, c->dti, base[j - lo], idx0 + done, m, c->n, bu, bd);
            ct_combine_chunk(c->opk, c->dti, au, ad, bu, bd, m);
        }
        if (g_dts[c->dti].cls != CLS_FLOAT) {
            ct_norm_chunk(c->dti, au, m);
        }
        ct_store_chunk(c->dti, au, ad, m, p + done * c->esz);
    }
    free(base);
}

/* A region whose content is undefined after the call: take what is there. */
__attribute__((unused))
static void ct_img_any(const ct_case_t *c, unsigned char *img, const unsigned char *buf,
                       size_t off, size_t n)
{
    memcpy(img + off * c->esz, buf + off * c->esz, n * c->esz);
}

static void ct_hex(const unsigned char *p, size_t n, char *out, size_t len)
{
    size_t k, o = 0;

    out[0] = '\0';
    for (k = n; k-- > 0 && o + 3 < len;) { /* little-endian: most significant first */
        o += (size_t)snprintf(out + o, len - o, "%02x", p[k]);
    }
}

static void ct_val(const ct_case_t *c, const unsigned char *p, char *out, size_t len)
{
    const ct_dt_t *t = &g_dts[c->dti];
    int64_t        s = 0;
    uint64_t       u = 0;

    if (t->dt == AMC_FLOAT) {
        float f;
        memcpy(&f, p, 4);
        snprintf(out, len, "%g", (double)f);
    } else if (t->dt == AMC_DOUBLE) {
        double d;
        memcpy(&d, p, 8);
        snprintf(out, len, "%g", d);
    } else {
        memcpy(&u, p, t->size);
        if ((t->size < 8) && (t->cls == CLS_SINT) && ((u >> (t->size * 8 - 1)) & 1)) {
            u |= ~((UINT64_C(1) << (t->size * 8)) - 1);
        }
        s = (int64_t)u;
        if (t->cls == CLS_SINT) {
            snprintf(out, len, "%" PRId64, s);
        } else {
            snprintf(out, len, "%" PRIu64, u);
        }
    }
}

/* Compares buffer and expected image (nelem elements and the guard); frees the image. */
static void ct_check(ct_case_t *c, const char *what, const unsigned char *buf,
                     unsigned char *img, size_t nelem)
{
    size_t bytes = nelem * c->esz;
    size_t k, first = SIZE_MAX, last = 0, bad = 0;
    char   desc[512], eh[40], gh[40], ev[40], gv[40];

    if (memcmp(buf, img, bytes + CT_GUARD) == 0) {
        free(img);
        return;
    }
    ct_case_desc(c, desc, sizeof(desc));
    for (k = 0; k < nelem; ++k) {
        if (memcmp(buf + k * c->esz, img + k * c->esz, c->esz) != 0) {
            if (first == SIZE_MAX) {
                first = k;
            }
            last = k;
            ++bad;
        }
    }
    if (first != SIZE_MAX) {
        ct_hex(img + first * c->esz, c->esz, eh, sizeof(eh));
        ct_hex(buf + first * c->esz, c->esz, gh, sizeof(gh));
        ct_val(c, img + first * c->esz, ev, sizeof(ev));
        ct_val(c, buf + first * c->esz, gv, sizeof(gv));
        ct_fail("%s: %s element %zu: expected %s (0x%s) got %s (0x%s); %zu of %zu elements "
                "wrong, last at %zu", desc, what, first, ev, eh, gv, gh, bad, nelem, last);
    }
    for (k = 0; k < CT_GUARD; ++k) {
        if (buf[bytes + k] != img[bytes + k]) {
            ct_fail("%s: %s: guard byte %zu behind the %zu-element buffer overwritten "
                    "(0x%02x, expected 0x%02x)", desc, what, k, nelem, buf[bytes + k],
                    img[bytes + k]);
            break;
        }
    }
    free(img);
}

/* ------------------------------------------------------------------ the collectives */

/* The send side of a case: n elements, this rank's inputs where significant
 * (elsewhere the sentinel, which must come back unchanged). */
static void ct_send_input(ct_case_t *c, size_t n, int significant)
{
    c->sn   = n;
    c->sbuf = ct_buf(c, n, significant);
    if (c->sbuf && significant) {
        ct_img_gen(c, c->sbuf, 0, n, c->r, 0);
    }
    c->sarg = c->sbuf;
}

/* The receive side of a case: n elements of sentinel; where own (in place, or
 * a bcast's root) this rank's inputs 0 .. cnt-1 at element off. */
static void ct_recv_buf(ct_case_t *c, size_t n, int significant, int own, size_t off,
                        size_t cnt)
{
    c->rn   = n;
    c->rbuf = ct_buf(c, n, significant);
    if (c->rbuf && own) {
        ct_img_gen(c, c->rbuf, off, cnt, c->r, 0);
    }
    c->rarg = c->rbuf;
}

/* --- bcast */
static void p_bcast(ct_case_t *c)
{
    ct_recv_buf(c, c->count, 1, c->r == c->root, 0, c->count);
}

static int s_bcast(ct_case_t *c, amc_request_t *req)
{
    return req ? amc_ibcast(c->rarg, c->count, c->dt, c->root, c->comm, req)
               : amc_bcast(c->rarg, c->count, c->dt, c->root, c->comm);
}

static void k_bcast(ct_case_t *c)
{
    unsigned char *img;

    if (c->rbuf != NULL) {
        img = ct_img(c, c->count);
        ct_img_gen(c, img, 0, c->count, c->root, 0);
        ct_check(c, "buffer", c->rbuf, img, c->count);
    }
}

/* --- reduce */
static void p_reduce(ct_case_t *c)
{
    int is_root = (c->r == c->root);

    if (c->in_place && is_root) {
        c->sarg = AMC_IN_PLACE;
    } else {
        ct_send_input(c, c->count, 1);
    }
    ct_recv_buf(c, c->count, is_root, c->in_place && is_root, 0, c->count);
}

static int s_reduce(ct_case_t *c, amc_request_t *req)
{
    return req ? amc_ireduce(c->sarg, c->rarg, c->count, c->dt, c->op, c->root, c->comm, req)
               : amc_reduce(c->sarg, c->rarg, c->count, c->dt, c->op, c->root, c->comm);
}

static void k_reduce(ct_case_t *c)
{
    unsigned char *img;

    if (c->rbuf != NULL) {
        img = ct_img(c, c->count);
        if (c->r == c->root) {
            ct_img_fold(c, img, 0, c->count, 0, 0, c->n - 1);
            ct_check(c, "result at the root", c->rbuf, img, c->count);
        } else {
            ct_check(c, "receive buffer at a non-root (must not change)", c->rbuf, img,
                     c->count);
        }
    }
}

/* --- allreduce */
static void p_allreduce(ct_case_t *c)
{
    if (c->in_place) {
        c->sarg = AMC_IN_PLACE;
    } else {
        ct_send_input(c, c->count, 1);
    }
    ct_recv_buf(c, c->count, 1, c->in_place, 0, c->count);
}

static int s_allreduce(ct_case_t *c, amc_request_t *req)
{
    return req ? amc_iallreduce(c->sarg, c->rarg, c->count, c->dt, c->op, c->comm, req)
               : amc_allreduce(c->sarg, c->rarg, c->count, c->dt, c->op, c->comm);
}

static void k_allreduce(ct_case_t *c)
{
    unsigned char *img;

    if (c->rbuf != NULL) {
        img = ct_img(c, c->count);
        ct_img_fold(c, img, 0, c->count, 0, 0, c->n - 1);
        ct_check(c, "result", c->rbuf, img, c->count);
    }
}

/* --- gather */
static void p_gather(ct_case_t *c)
{
    int    is_root = (c->r == c->root);
    size_t total   = (size_t)c->n * c->count;

    if (c->in_place && is_root) {
        c->sarg = AMC_IN_PLACE;
    } else {
        ct_send_input(c, c->count, 1);
    }
    ct_recv_buf(c, total, is_root, c->in_place && is_root, (size_t)c->r * c->count, c->count);
}

static int s_gather(ct_case_t *c, amc_request_t *req)
{
    return req ? amc_igather(c->sarg, c->rarg, c->count, c->dt, c->root, c->comm, req)
               : amc_gather(c->sarg, c->rarg, c->count, c->dt, c->root, c->comm);
}

static void k_gather(ct_case_t *c)
{
    unsigned char *img;
    int            j;

    if (c->rbuf != NULL) {
        img = ct_img(c, c->rn);
        if (c->r == c->root) {
            for (j = 0; j < c->n; ++j) {
                ct_img_gen(c, img, (size_t)j * c->count, c->count, j, 0);
            }
            ct_check(c, "result at the root", c->rbuf, img, c->rn);
        } else {
            ct_check(c, "receive buffer at a non-root (must not change)", c->rbuf, img, c->rn);
        }
    }
}

/* --- scatter: the root's element i (of n * count) is its input i */
static void p_scatter(ct_case_t *c)
{
    int    is_root = (c->r == c->root);
    size_t total   = (size_t)c->n * c->count;

    ct_send_input(c, total, is_root);
    if (c->in_place && is_root) {
        c->rarg = AMC_IN_PLACE;
    } else {
        ct_recv_buf(c, c->count, 1, 0, 0, 0);
    }
}

static int s_scatter(ct_case_t *c, amc_request_t *req)
{
    return req ? amc_iscatter(c->sarg, c->rarg, c->count, c->dt, c->root, c->comm, req)
               : amc_scatter(c->sarg, c->rarg, c->count, c->dt, c->root, c->comm);
}

static void k_scatter(ct_case_t *c)
{
    unsigned char *img;

    if (c->rbuf != NULL) {
        img = ct_img(c, c->count);
        ct_img_gen(c, img, 0, c->count, c->root, (uint64_t)c->r * c->count);
        ct_check(c, "result", c->rbuf, img, c->count);
    }
}

/* --- allgather */
static void p_allgather(ct_case_t *c)
{
    size_t total = (size_t)c->n * c->count;

    if (c->in_place) {
        c->sarg = AMC_IN_PLACE;
    } else {
        ct_send_input(c, c->count, 1);
    }
    ct_recv_buf(c, total, 1, c->in_place, (size_t)c->r * c->count, c->count);
}

static int s_allgather(ct_case_t *c, amc_request_t *req)
{
    return req ? amc_iallgather(c->sarg, c->rarg, c->count, c->dt, c->comm, req)
               : amc_allgather(c->sarg, c->rarg, c->count, c->dt, c->comm);
}

static void k_allgather(ct_case_t *c)
{
    unsigned char *img;
    int            j;

    if (c->rbuf != NULL) {
        img = ct_img(c, c->rn);
        for (j = 0; j < c->n; ++j) {
            ct_img_gen(c, img, (size_t)j * c->count, c->count, j, 0);
        }
        ct_check(c, "result", c->rbuf, img, c->rn);
    }
}

/* --- alltoall: rank s's element d * count + i goes to rank d */
static void p_alltoall(ct_case_t *c)
{
    size_t total = (size_t)c->n * c->count;

    if (c->in_place) {
        c->sarg = AMC_IN_PLACE;
    } else {
        ct_send_input(c, total, 1);
    }
    ct_recv_buf(c, total, 1, c->in_place, 0, total);
}

static int s_alltoall(ct_case_t *c, amc_request_t *req)
{
    return req ? amc_ialltoall(c->sarg, c->rarg, c->count, c->dt, c->comm, req)
               : amc_alltoall(c->sarg, c->rarg, c->count, c->dt, c->comm);
}

static void k_alltoall(ct_case_t *c)
{
    unsigned char *img;
    int            j;

    if (c->rbuf != NULL) {
        img = ct_img(c, c->rn);
        for (j = 0; j < c->n; ++j) {
            ct_img_gen(c, img, (size_t)j * c->count, c->count, j, (uint64_t)c->r * c->count);
        }
        ct_check(c, "result", c->rbuf, img, c->rn);
    }
}

#if CT_HAVE_EXTRA
/* ------------------------------------------------------------------ vector forms etc. */

/* Per-rank counts around the base count (0, 1, 2 for base 1; mean about base). */
static size_t ct_vcnt(size_t base, unsigned j)
{
    switch (j % 3) {
    case 0:  return base / 2;
    case 1:  return base;
    default: return base + base / 2 + (base > 0);
    }
}

/* Blocks in reverse rank order, with a one-element gap after odd ranks; returns the extent. */
static size_t ct_layout(int n, const size_t *counts, size_t *displs)
{
    size_t pos = 0;
    int    j;

    for (j = n - 1; j >= 0; --j) {
        displs[j] = pos;
        pos      += counts[j] + (size_t)(j & 1);
    }
    return pos;
}

static size_t *ct_sizes(int n)
{
    size_t *p = calloc((size_t)n + 1, sizeof(size_t));

    if (p == NULL) {
        ct_fatal("test bug: out of memory (%d counts)", n);
    }
    return p;
}

/* --- gatherv: rank j sends vcnt(count, j) elements, placed at displs[j] at the root */
static void p_gatherv(ct_case_t *c)
{
    int    is_root = (c->r == c->root), j;
    size_t total;

    c->v1 = ct_sizes(c->n);
    c->v2 = ct_sizes(c->n);
    for (j = 0; j < c->n; ++j) {
        c->v1[j] = ct_vcnt(c->count, (unsigned)j);
    }
    total  = ct_layout(c->n, c->v1, c->v2);
    c->own = c->v1[c->r];
    if (c->in_place && is_root) {
        c->sarg = AMC_IN_PLACE;
    } else {
        ct_send_input(c, c->own, 1);
    }
    ct_recv_buf(c, total, is_root, c->in_place && is_root, c->v2[c->r], c->own);
}

static int s_gatherv(ct_case_t *c, amc_request_t *req)
{
    return req ? amc_igatherv(c->sarg, c->own, c->rarg, c->v1, c->v2, c->dt, c->root, c->comm,
                              req)
               : amc_gatherv(c->sarg, c->own, c->rarg, c->v1, c->v2, c->dt, c->root, c->comm);
}

static void k_gatherv(ct_case_t *c)
{
    unsigned char *img;
    int            j;

    if (c->rbuf != NULL) {
        img = ct_img(c, c->rn);
        if (c->r == c->root) {
            for (j = 0; j < c->n; ++j) {
                ct_img_gen(c, img, c->v2[j], c->v1[j], j, 0);
            }
            ct_check(c, "result at the root", c->rbuf, img, c->rn);
        } else {
            ct_check(c, "receive buffer at a non-root (must not change)", c->rbuf, img, c->rn);
        }
    }
}

/* --- scatterv: the root's buffer holds its inputs by position; rank j gets the block at displs[j] */
static void p_scatterv(ct_case_t *c)
{
    int    is_root = (c->r == c->root), j;
    size_t total;

    c->v1 = ct_sizes(c->n);
    c->v2 = ct_sizes(c->n);
    for (j = 0; j < c->n; ++j) {
        c->v1[j] = ct_vcnt(c->count, (unsigned)j + 1);
    }
    total   = ct_layout(c->n, c->v1, c->v2);
    c->own  = c->v1[c->r];
    ct_send_input(c, total, is_root);
    if (c->in_place && is_root) {
        c->rarg = AMC_IN_PLACE;
    } else {
        ct_recv_buf(c, c->own, 1, 0, 0, 0);
    }
}

static int s_scatterv(ct_case_t *c, amc_request_t *req)
{
    return req ? amc_iscatterv(c->sarg, c->v1, c->v2, c->rarg, c->own, c->dt, c->root, c->comm,
                               req)
               : amc_scatterv(c->sarg, c->v1, c->v2, c->rarg, c->own, c->dt, c->root, c->comm);
}

static void k_scatterv(ct_case_t *c)
{
    unsigned char *img;

    if (c->rbuf != NULL) {
        img = ct_img(c, c->own);
        ct_img_gen(c, img, 0, c->own, c->root, c->v2[c->r]);
        ct_check(c, "result", c->rbuf, img, c->own);
    }
}

/* --- allgatherv */
static void p_allgatherv(ct_case_t *c)
{
    int    j;
    size_t total;

    c->v1 = ct_sizes(c->n);
    c->v2 = ct_sizes(c->n);
    for (j = 0; j < c->n; ++j) {
        c->v1[j] = ct_vcnt(c->count, (unsigned)j + 2);
    }
    total  = ct_layout(c->n, c->v1, c->v2);
    c->own = c->v1[c->r];
    if (c->in_place) {
        c->sarg = AMC_IN_PLACE;
    } else {
        ct_send_input(c, c->own, 1);
    }
    ct_recv_buf(c, total, 1, c->in_place, c->v2[c->r], c->own);
}

static int s_allgatherv(ct_case_t *c, amc_request_t *req)
{
    return req ? amc_iallgatherv(c->sarg, c->own, c->rarg, c->v1, c->v2, c->dt, c->comm, req)
               : amc_allgatherv(c->sarg, c->own, c->rarg, c->v1, c->v2, c->dt, c->comm);
}

static void k_allgatherv(ct_case_t *c)
{
    unsigned char *img;
    int            j;

    if (c->rbuf != NULL) {
        img = ct_img(c, c->rn);
        for (j = 0; j < c->n; ++j) {
            ct_img_gen(c, img, c->v2[j], c->v1[j], j, 0);
        }
        ct_check(c, "result", c->rbuf, img, c->rn);
    }
}

/* --- alltoallv: counts from s to d; symmetric when in place (MPI requires it then) */
static size_t ct_a2av_cnt(const ct_case_t *c, int s, int d)
{
    return c->in_place ? ct_vcnt(c->count, (unsigned)(s + d))
                       : ct_vcnt(c->count, (unsigned)(s * 5 + d * 3 + 1));
}

/* displs of rank s's send side (to d = 0..n-1) or receive side (from s = 0..n-1) */
static size_t ct_a2av_layout(const ct_case_t *c, int rank, int send_side, size_t *counts,
                             size_t *displs)
{
    int j;

    for (j = 0; j < c->n; ++j) {
        counts[j] = send_side ? ct_a2av_cnt(c, rank, j) : ct_a2av_cnt(c, j, rank);
    }
    return ct_layout(c->n, counts, displs);
}

static void p_alltoallv(ct_case_t *c)
{
    size_t stotal, rtotal;

    c->v1  = ct_sizes(c->n);   /* sendcounts */
    c->v2  = ct_sizes(c->n);   /* sdispls */
    c->v3  = ct_sizes(c->n);   /* recvcounts */
    c->v4  = ct_sizes(c->n);   /* rdispls */
    stotal = ct_a2av_layout(c, c->r, 1, c->v1, c->v2);
    rtotal = ct_a2av_layout(c, c->r, 0, c->v3, c->v4);
    if (c->in_place) {
        c->sarg = AMC_IN_PLACE;
    } else {
        ct_send_input(c, stotal, 1);
    }
    ct_recv_buf(c, rtotal, 1, c->in_place, 0, rtotal);
}

static int s_alltoallv(ct_case_t *c, amc_request_t *req)
{
    return req ? amc_ialltoallv(c->sarg, c->v1, c->v2, c->rarg, c->v3, c->v4, c->dt, c->comm, req)
               : amc_alltoallv(c->sarg, c->v1, c->v2, c->rarg, c->v3, c->v4, c->dt, c->comm);
}

static void k_alltoallv(ct_case_t *c)
{
    unsigned char *img;
    size_t        *cnt = ct_sizes(c->n), *dsp = ct_sizes(c->n);
    int            j;

    if (c->rbuf != NULL) {
        img = ct_img(c, c->rn);
        if (c->in_place) { /* the gaps keep what this rank put there */
            ct_img_gen(c, img, 0, c->rn, c->r, 0);
        }
        for (j = 0; j < c->n; ++j) {
            /* where rank j kept what it sent here: its send side, or (in place) its receive side */
            ct_a2av_layout(c, j, !c->in_place, cnt, dsp);
            ct_img_gen(c, img, c->v4[j], c->v3[j], j, dsp[c->r]);
        }
        ct_check(c, "result", c->rbuf, img, c->rn);
    }
    free(cnt);
    free(dsp);
}

/* --- reduce_scatter_block: n * count inputs; rank r gets the fold of block r */
static void p_rsb(ct_case_t *c)
{
    size_t total = (size_t)c->n * c->count;

    if (c->in_place) {
        c->sarg = AMC_IN_PLACE;
        ct_recv_buf(c, total, 1, 1, 0, total);
    } else {
        ct_send_input(c, total, 1);
        ct_recv_buf(c, c->count, 1, 0, 0, 0);
    }
}

static int s_rsb(ct_case_t *c, amc_request_t *req)
{
    return req ? amc_ireduce_scatter_block(c->sarg, c->rarg, c->count, c->dt, c->op, c->comm, req)
               : amc_reduce_scatter_block(c->sarg, c->rarg, c->count, c->dt, c->op, c->comm);
}

static void k_rsb(ct_case_t *c)
{
    unsigned char *img;

    if (c->rbuf != NULL) {
        img = ct_img(c, c->rn);
        ct_img_fold(c, img, 0, c->count, (uint64_t)c->r * c->count, 0, c->n - 1);
        if (c->rn > c->count) { /* in place: the rest of the buffer is undefined */
            ct_img_any(c, img, c->rbuf, c->count, c->rn - c->count);
        }
        ct_check(c, "result", c->rbuf, img, c->rn);
    }
}

/* --- reduce_scatter: recvcounts vcnt(count, j), blocks contiguous in rank order */
static void p_rs(ct_case_t *c)
{
    size_t total = 0;
    int    j;

    c->v1 = ct_sizes(c->n);
    c->v2 = ct_sizes(c->n); /* offsets */
    for (j = 0; j < c->n; ++j) {
        c->v1[j] = ct_vcnt(c->count, (unsigned)j);
        c->v2[j] = total;
        total   += c->v1[j];
    }
    c->own = c->v1[c->r];
    if (c->in_place) {
        c->sarg = AMC_IN_PLACE;
        ct_recv_buf(c, total, 1, 1, 0, total);
    } else {
        ct_send_input(c, total, 1);
        ct_recv_buf(c, c->own, 1, 0, 0, 0);
    }
}

static int s_rs(ct_case_t *c, amc_request_t *req)
{
    return req ? amc_ireduce_scatter(c->sarg, c->rarg, c->v1, c->dt, c->op, c->comm, req)
               : amc_reduce_scatter(c->sarg, c->rarg, c->v1, c->dt, c->op, c->comm);
}

static void k_rs(ct_case_t *c)
{
    unsigned char *img;

    if (c->rbuf != NULL) {
        img = ct_img(c, c->rn);
        ct_img_fold(c, img, 0, c->own, c->v2[c->r], 0, c->n - 1);
        if (c->rn > c->own) {
            ct_img_any(c, img, c->rbuf, c->own, c->rn - c->own);
        }
        ct_check(c, "result", c->rbuf, img, c->rn);
    }
}

/* --- scan / exscan: buffers as allreduce */
static int s_scan(ct_case_t *c, amc_request_t *req)
{
    return req ? amc_iscan(c->sarg, c->rarg, c->count, c->dt, c->op, c->comm, req)
               : amc_scan(c->sarg, c->rarg, c->count, c->dt, c->op, c->comm);
}

static void k_scan(ct_case_t *c)
{
    unsigned char *img;

    if (c->rbuf != NULL) {
        img = ct_img(c, c->count);
        ct_img_fold(c, img, 0, c->count, 0, 0, c->r);
        ct_check(c, "result", c->rbuf, img, c->count);
    }
}

static int s_exscan(ct_case_t *c, amc_request_t *req)
{
    return req ? amc_iexscan(c->sarg, c->rarg, c->count, c->dt, c->op, c->comm, req)
               : amc_exscan(c->sarg, c->rarg, c->count, c->dt, c->op, c->comm);
}

static void k_exscan(ct_case_t *c)
{
    unsigned char *img;

    if (c->rbuf != NULL) {
        img = ct_img(c, c->count);
        if (c->r == 0) { /* undefined at rank 0 (MPI) */
            ct_img_any(c, img, c->rbuf, 0, c->count);
        } else {
            ct_img_fold(c, img, 0, c->count, 0, 0, c->r - 1);
        }
        ct_check(c, "result", c->rbuf, img, c->count);
    }
}
#endif /* CT_HAVE_EXTRA */

static const ct_coll_t g_colls[] = {
    { "bcast",     F_ROOT,                  p_bcast,     s_bcast,     k_bcast },
    { "reduce",    F_ROOT | F_OP | F_INPLACE, p_reduce,  s_reduce,    k_reduce },
    { "allreduce", F_OP | F_INPLACE,        p_allreduce, s_allreduce, k_allreduce },
    { "gather",    F_ROOT | F_INPLACE,      p_gather,    s_gather,    k_gather },
    { "scatter",   F_ROOT | F_INPLACE,      p_scatter,   s_scatter,   k_scatter },
    { "allgather", F_INPLACE,               p_allgather, s_allgather, k_allgather },
    { "alltoall",  F_INPLACE,               p_alltoall,  s_alltoall,  k_alltoall },
#if CT_HAVE_EXTRA
    { "gatherv",   F_ROOT | F_INPLACE,      p_gatherv,   s_gatherv,   k_gatherv },
    { "scatterv",  F_ROOT | F_INPLACE,      p_scatterv,  s_scatterv,  k_scatterv },
    { "allgatherv", F_INPLACE,              p_allgatherv, s_allgatherv, k_allgatherv },
    { "alltoallv", F_INPLACE,               p_alltoallv, s_alltoallv, k_alltoallv },
    { "reduce_scatter_block", F_OP | F_INPLACE, p_rsb,   s_rsb,       k_rsb },
    { "reduce_scatter", F_OP | F_INPLACE,   p_rs,        s_rs,        k_rs },
    { "scan",      F_OP | F_INPLACE,        p_allreduce, s_scan,      k_scan },
    { "exscan",    F_OP | F_INPLACE,        p_allreduce, s_exscan,    k_exscan },
#endif
};
#define CT_NCOLL ((int)(sizeof(g_colls) / sizeof(g_colls[0])))

/* ------------------------------------------------------------------ running cases */

typedef struct {
    amc_comm_t  comm;
    const char *name;
    int         n, r;
} ct_comm_t;

static ct_comm_t ct_comm_of(amc_comm_t comm, const char *name)
{
    ct_comm_t c;

    c.comm = comm;
    c.name = name;
    ct_must(amc_comm_size(comm, &c.n), "amc_comm_size");
    ct_must(amc_comm_rank(comm, &c.r), "amc_comm_rank");
    return c;
}

/* The five counts of the issue for datatype dti on n ranks: the last is 1 MiB / n bytes. */
static size_t ct_count(int which, int dti, int n)
{
    static const size_t fixed[] = { 0, 1, 7, 1000 };

    if (which < 4) {
        return fixed[which];
    }
    return (g_big_bytes / (size_t)n) / g_dts[dti].size;
}
#define CT_NCOUNTS 5

static void ct_case_init(ct_case_t *c, const ct_coll_t *cd, const ct_comm_t *cm, int dti,
                         int opk, int root, size_t count, int in_place, int mode, long id)
{
    memset(c, 0, sizeof(*c));
    c->cd        = cd;
    c->comm      = cm->comm;
    c->comm_name = cm->name;
    c->n         = cm->n;
    c->r         = cm->r;
    c->dti       = dti;
    c->opk       = (cd->flags & F_OP) ? opk : -1;
    c->root      = (cd->flags & F_ROOT) ? root : -1;
    c->count     = count;
    c->in_place  = (cd->flags & F_INPLACE) ? in_place : 0;
    c->mode      = mode;
    c->id        = id;
    c->nullbufs  = (int)((ct_mix((uint64_t)id ^ g_seed) >> 17) & 1);
    c->seed      = ct_mix(g_seed * 1000003u + (uint64_t)id);
    c->esz       = g_dts[dti].size;
    c->dt        = g_dts[dti].dt;
    c->op        = (c->opk >= 0) ? g_ops[c->opk].op : -1;
    c->req       = AMC_REQUEST_NULL;
}

static void ct_case_prepare(ct_case_t *c)
{
    size_t bytes;

    c->cd->prepare(c);
    if (c->sbuf != NULL) {
        bytes    = c->sn * c->esz + CT_GUARD;
        c->scopy = ct_malloc(bytes);
        memcpy(c->scopy, c->sbuf, bytes);
    }
}

/* Starts the case (i-form unless blocking); a blocking one is complete on return. */
static void ct_case_start(ct_case_t *c)
{
    char desc[512];
    int  rc;

    ++g_cases;
    if (c->mode == M_BLOCK) {
        rc = c->cd->start(c, NULL);
    } else {
        c->req = AMC_REQUEST_NULL;
        rc     = c->cd->start(c, &c->req);
    }
    if (rc != AMC_SUCCESS) {
        ct_case_desc(c, desc, sizeof(desc));
        ct_fatal("%s: %s returned %s (%d)", desc, (c->mode == M_BLOCK) ? "the call" : "the i-form",
                 ct_code_name(rc), rc);
    }
    if ((c->mode != M_BLOCK) && (c->req == AMC_REQUEST_NULL)) {
        ct_case_desc(c, desc, sizeof(desc));
        ct_fatal("%s: the i-form returned AMC_SUCCESS but no request", desc);
    }
}

static void ct_case_check_free(ct_case_t *c)
{
    if (c->sbuf != NULL) {
        ct_check(c, "send buffer (must not change)", c->sbuf, c->scopy, c->sn); /* frees scopy */
        c->scopy = NULL;
    }
    c->cd->check(c);
    free(c->sbuf);
    free(c->rbuf);
    free(c->v1);
    free(c->v2);
    free(c->v3);
    free(c->v4);
    c->sbuf = c->rbuf = NULL;
    c->v1 = c->v2 = c->v3 = c->v4 = NULL;
}

static void ct_wait(ct_case_t *c)
{
    char desc[512];
    int  rc = amc_wait(&c->req);

    if (rc != AMC_SUCCESS) {
        ct_case_desc(c, desc, sizeof(desc));
        ct_fatal("%s: amc_wait returned %s (%d)", desc, ct_code_name(rc), rc);
    }
    if (c->req != AMC_REQUEST_NULL) {
        ct_case_desc(c, desc, sizeof(desc));
        ct_fail("%s: amc_wait returned AMC_SUCCESS but left the request non-NULL", desc);
        c->req = AMC_REQUEST_NULL;
    }
}

/* One amc_test; returns whether the case completed. */
static int ct_test_once(ct_case_t *c)
{
    char desc[512];
    int  flag = -1, rc;

    rc = amc_test(&c->req, &flag);
    if (rc != AMC_SUCCESS) {
        ct_case_desc(c, desc, sizeof(desc));
        ct_fatal("%s: amc_test returned %s (%d)", desc, ct_code_name(rc), rc);
    }
    if ((flag != 0) && (flag != 1)) {
        ct_case_desc(c, desc, sizeof(desc));
        ct_fail("%s: amc_test set flag to %d", desc, flag);
    }
    if (flag == 1) {
        if (c->req != AMC_REQUEST_NULL) {
            ct_case_desc(c, desc, sizeof(desc));
            ct_fail("%s: amc_test returned flag=1 but left the request non-NULL", desc);
            c->req = AMC_REQUEST_NULL;
        }
        return 1;
    }
    if (c->req == AMC_REQUEST_NULL) {
        ct_case_desc(c, desc, sizeof(desc));
        ct_fatal("%s: amc_test returned flag=0 but set the request to AMC_REQUEST_NULL", desc);
    }
    return 0;
}

static void ct_test_loop(ct_case_t *c)
{
    double t0 = ct_now();
    char   desc[512];

    while (!ct_test_once(c)) {
        if (ct_now() - t0 > CT_LOOP_LIMIT_S) {
            ct_case_desc(c, desc, sizeof(desc));
            ct_fatal("%s: amc_test did not complete within %.0f s", desc, CT_LOOP_LIMIT_S);
        }
        sched_yield(); /* up to 32 ranks share 2 cores */
    }
}

/* Completes a started case by its own mode. */
static void ct_case_complete(ct_case_t *c)
{
    if (c->mode == M_IWAIT) {
        ct_wait(c);
    } else if (c->mode == M_ITEST) {
        ct_test_loop(c);
    }
}

static void ct_case_run(ct_case_t *c)
{
    ct_case_prepare(c);
    ct_case_start(c);
    ct_case_complete(c);
    ct_case_check_free(c);
}

/* A random case of collective cd (random if NULL): datatype/op valid, root, in place.
 * count_sel: 0..4 one of the counts, -1 random. */
static void ct_case_random(ct_case_t *c, ct_rng_t *g, const ct_coll_t *cd, const ct_comm_t *cm,
                           int count_sel, int dti, long id)
{
    int    opk = -1, root, ip, mode;
    size_t count;

    if (cd == NULL) {
        cd = &g_colls[ct_below(g, (unsigned)CT_NCOLL)];
    }
    if (cd->flags & F_OP) {
        do {
            if (dti < 0) {
                dti = (int)ct_below(g, CT_NDT);
            }
            opk = (int)ct_below(g, CT_NOP);
            if (!ct_op_valid(opk, dti)) {
                /* find a valid op for this datatype, or another datatype */
                int k, found = -1;
                for (k = 0; k < CT_NOP; ++k) {
                    int o = (opk + k) % CT_NOP;
                    if (ct_op_valid(o, dti)) {
                        found = o;
                        break;
                    }
                }
                opk = found;
                if (found < 0) {
                    dti = -1; /* BYTE/CHAR: no op; choose again */
                }
            }
        } while (opk < 0);
    } else if (dti < 0) {
        dti = (int)ct_below(g, CT_NDT);
    }
    root = (int)ct_below(g, (unsigned)cm->n);
    ip   = (int)ct_below(g, 3) == 0;
    mode = (int)ct_below(g, CT_NMODES);
    if (count_sel >= 0) {
        count = ct_count(count_sel, dti, cm->n);
    } else {
        unsigned p = ct_below(g, 100);
        if (p < 5) {
            count = 0;
        } else if (p < 20) {
            count = 1;
        } else if (p < 45) {
            count = 7;
        } else if (p < 75) {
            count = 2 + ct_below(g, 300);
        } else if (p < 97) {
            count = 1000;
        } else {
            count = ct_count(4, dti, cm->n);
        }
    }
    ct_case_init(c, cd, cm, dti, opk, root, count, ip, mode, id);
}

/* ------------------------------------------------------------------ completion of batches */

enum { B_REV_WAIT, B_REV_TEST, B_TESTALL, B_WAITALL, B_RANDOM_TEST, CT_NBATCH };
static const char *g_batch_names[] = {
    "amc_wait in reverse order", "amc_test loops in reverse order", "amc_testall loop",
    "amc_waitall", "amc_test in random order"
};

/* Completes cases[0..n) (all started non-blocking) by method `how`; g picks the random order. */
static void ct_batch_complete(ct_case_t **cases, int n, int how, ct_rng_t *g)
{
    amc_request_t *reqs;
    double         t0 = ct_now();
    int            i, flag, rc, left;
    char           what[96];

    if (n == 0) {
        return;
    }
    switch (how) {
    case B_REV_WAIT:
        for (i = n - 1; i >= 0; --i) {
            ct_wait(cases[i]);
        }
        break;
    case B_REV_TEST:
        for (i = n - 1; i >= 0; --i) {
            ct_test_loop(cases[i]);
        }
        break;
    case B_RANDOM_TEST:
        left = n;
        while (left > 0) {
            i = (int)ct_below(g, (unsigned)n);
            if ((cases[i]->req != AMC_REQUEST_NULL) && ct_test_once(cases[i])) {
                --left;
            }
            if (ct_now() - t0 > CT_LOOP_LIMIT_S) {
                ct_fatal("%d of %d outstanding collectives did not complete within %.0f s "
                         "(amc_test in random order)", left, n, CT_LOOP_LIMIT_S);
            }
            sched_yield();
        }
        break;
    case B_TESTALL:
    case B_WAITALL:
        reqs = ct_malloc((size_t)n * sizeof(*reqs));
        for (i = 0; i < n; ++i) {
            reqs[i] = cases[i]->req;
        }
        snprintf(what, sizeof(what), "%s over %d collectives", g_batch_names[how], n);
        if (how == B_WAITALL) {
            rc = amc_waitall(n, reqs);
            if (rc != AMC_SUCCESS) {
                ct_fatal("%s returned %s (%d)", what, ct_code_name(rc), rc);
            }
        } else {
            for (;;) {
                flag = -1;
                rc   = amc_testall(n, reqs, &flag);
                if (rc != AMC_SUCCESS) {
                    ct_fatal("%s returned %s (%d)", what, ct_code_name(rc), rc);
                }
                if (flag == 1) {
                    break;
                }
                if (flag != 0) {
                    ct_fail("%s set flag to %d", what, flag);
                }
                if (ct_now() - t0 > CT_LOOP_LIMIT_S) {
                    ct_fatal("%s did not complete within %.0f s", what, CT_LOOP_LIMIT_S);
                }
                sched_yield();
            }
        }
        for (i = 0; i < n; ++i) {
            if (reqs[i] != AMC_REQUEST_NULL) {
                ct_fail("%s: request %d left non-NULL after completion", what, i);
            }
            cases[i]->req = AMC_REQUEST_NULL;
        }
        free(reqs);
        break;
    }
}

/* ------------------------------------------------------------------ sub-tests */

static void ct_dup(amc_comm_t parent, amc_comm_t *out, const char *name)
{
    char what[64];

    snprintf(what, sizeof(what), "amc_comm_dup (%s)", name);
    ct_must(amc_comm_dup(parent, out), what);
    if (*out == AMC_COMM_NULL) {
        ct_fatal("%s returned AMC_SUCCESS but AMC_COMM_NULL", what);
    }
}

static void ct_free(amc_comm_t *c, const char *name)
{
    char what[64];

    snprintf(what, sizeof(what), "amc_comm_free (%s)", name);
    ct_must(amc_comm_free(c), what);
}

/* The communicators the cross product runs on: world, a dup, and a split if there is one. */
typedef struct {
    ct_comm_t  list[3];
    amc_comm_t owned[3];
    int        n, nowned;
} ct_commset_t;

static void ct_commset_open(ct_commset_t *s, amc_comm_t world)
{
    memset(s, 0, sizeof(*s));
    s->list[s->n++] = ct_comm_of(world, "world");
    ct_dup(world, &s->owned[s->nowned], "dup");
    s->list[s->n++] = ct_comm_of(s->owned[s->nowned++], "dup");
#if CT_HAVE_SPLIT
    if (g_size > 1) {
        /* two halves (odd/even world ranks), reversed rank order within each */
        ct_must(amc_comm_split(world, g_rank % 2, g_size - g_rank, &s->owned[s->nowned]),
                "amc_comm_split");
        s->list[s->n++] = ct_comm_of(s->owned[s->nowned++], "split(rank%2,reversed)");
    }
#endif
}

static void ct_commset_close(ct_commset_t *s)
{
    while (s->nowned > 0) {
        ct_free(&s->owned[--s->nowned], "owned");
    }
}

/* The 1 MiB count in full: the protocols it reaches (rendezvous, segments,
 * the algorithms chosen by size) depend on the bytes, the element size and
 * where the root sits, not on which datatype of a size the elements are, and
 * building its expected images was 95 % of the run. Raw bytes, signed 1-, 2-
 * and 8-byte integers, UINT32 and UINT64 (the non-commutative op's two
 * forms, and unsigned 4 and 8 bytes) and both floats; roots 0 and N - 1.
 * Counts 7 and 1000 still run on every datatype, past the reduction
 * kernels' 64-byte blocks. */
static int ct_full_big(int dti, int root, int n)
{
    amc_datatype_t dt = g_dts[dti].dt;

    if ((root > 0) && (root < n - 1)) {
        return 0;
    }
    return (dt == AMC_BYTE) || (dt == AMC_INT8) || (dt == AMC_INT16) || (dt == AMC_UINT32) ||
           (dt == AMC_UINT64) || (dt == AMC_INT64) || (dt == AMC_FLOAT) || (dt == AMC_DOUBLE);
}

/* full: the whole cross product (for N up to about 5). */
static void ct_sub_full(amc_comm_t world)
{
    ct_commset_t set;
    ct_case_t    c;
    long         id = 0;
    int          ci, k, dti, opk, root, cnt, ip;

    ct_commset_open(&set, world);
    for (ci = 0; ci < set.n; ++ci) {
        const ct_comm_t *cm = &set.list[ci];
        for (k = 0; k < CT_NCOLL; ++k) {
            const ct_coll_t *cd = &g_colls[k];
            for (dti = 0; dti < CT_NDT; ++dti) {
                for (opk = (cd->flags & F_OP) ? 0 : -1; opk < ((cd->flags & F_OP) ? CT_NOP : 0);
                     ++opk) {
                    if ((opk >= 0) && !ct_op_valid(opk, dti)) {
                        continue;
                    }
                    for (root = (cd->flags & F_ROOT) ? 0 : -1;
                         root < ((cd->flags & F_ROOT) ? cm->n : 0); ++root) {
                        for (cnt = 0; cnt < CT_NCOUNTS; ++cnt) {
                            if ((cnt == CT_NCOUNTS - 1) && !ct_full_big(dti, root, cm->n)) {
                                continue;
                            }
                            for (ip = 0; ip < ((cd->flags & F_INPLACE) ? 2 : 1); ++ip) {
                                ct_case_init(&c, cd, cm, dti, opk, root,
                                             ct_count(cnt, dti, cm->n), ip,
                                             (int)(id % CT_NMODES), id);
                                ++id;
                                ct_case_run(&c);
                            }
                        }
                    }
                }
            }
        }
    }
    ct_commset_close(&set);
}

/* sample: a covering subset for larger N. */
static void ct_sample_op(const ct_coll_t *cd, const ct_comm_t *cm, ct_rng_t *g, int dti,
                         int opk, size_t count, long id)
{
    ct_case_t c;

    ct_case_init(&c, cd, cm, dti, opk, (int)ct_below(g, (unsigned)cm->n), count,
                 (int)ct_below(g, 2), (int)ct_below(g, CT_NMODES), id);
    ct_case_run(&c);
}

static void ct_sub_sample(amc_comm_t world)
{
    ct_commset_t set;
    ct_case_t    c;
    ct_rng_t     g  = { g_seed ^ 0x5a3e1e };
    long         id = 0;
    int          ci, k, cnt, dti, opk;

    ct_commset_open(&set, world);
    for (ci = 0; ci < set.n; ++ci) {
        const ct_comm_t *cm = &set.list[ci];
        for (k = 0; k < CT_NCOLL; ++k) {
            const ct_coll_t *cd = &g_colls[k];
            /* every count once */
            for (cnt = 0; cnt < CT_NCOUNTS; ++cnt) {
                ct_case_random(&c, &g, cd, cm, cnt, -1, id++);
                ct_case_run(&c);
            }
            /* every datatype once (count 7) */
            for (dti = 0; dti < CT_NDT; ++dti) {
                if ((cd->flags & F_OP) && (g_dts[dti].cls == CLS_RAW)) {
                    continue;
                }
                ct_case_random(&c, &g, cd, cm, 2, dti, id++);
                ct_case_run(&c);
            }
            if (cd->flags & F_OP) {
                /* every op once, with a datatype it applies to (count 7) */
                for (opk = 0; opk < CT_NOP; ++opk) {
                    do {
                        dti = (int)ct_below(&g, CT_NDT);
                    } while (!ct_op_valid(opk, dti));
                    ct_sample_op(cd, cm, &g, dti, opk, 7, id++);
                }
                /* rank order: the non-commutative op on both of its types */
                for (dti = 0; dti < CT_NDT; ++dti) {
                    if (ct_op_valid(K_UNC, dti)) {
                        ct_sample_op(cd, cm, &g, dti, K_UNC, 7, id++);
                        ct_sample_op(cd, cm, &g, dti, K_UNC, 1000, id++);
                    }
                }
            }
        }
    }
    ct_commset_close(&set);
}

/* Posts cases[0..n) in order, all non-blocking. */
static void ct_post_all(ct_case_t **cases, int n)
{
    int i;

    for (i = 0; i < n; ++i) {
        ct_case_prepare(cases[i]);
        ct_case_start(cases[i]);
    }
}

static void ct_check_all(ct_case_t **cases, int n)
{
    int i;

    for (i = 0; i < n; ++i) {
        ct_case_check_free(cases[i]);
    }
}

/* nb: many outstanding non-blocking collectives. */
static void ct_sub_nb(amc_comm_t world)
{
    enum { PER = 2 * CT_NCOLL, MAXC = 3 * PER + 8 };
    ct_comm_t  cms[3];
    amc_comm_t d1, d2;
    ct_case_t  store[MAXC];
    ct_case_t *cases[MAXC], *order[MAXC];
    ct_rng_t   g     = { g_seed ^ 0x6e62 };                              /* same on all ranks */
    ct_rng_t   local = { g_seed ^ 0x10ca1 ^ ((uint64_t)g_rank << 32) };  /* this rank's own */
    long       id    = 0;
    int        how, i, k, n, round, pos[3], per[3];

    ct_dup(world, &d1, "d1");
    ct_dup(world, &d2, "d2");
    cms[0] = ct_comm_of(world, "world");
    cms[1] = ct_comm_of(d1, "d1");
    cms[2] = ct_comm_of(d2, "d2");

    /* 1. every kind twice outstanding on one communicator, each completion method */
    for (how = 0; how < CT_NBATCH; ++how) {
        const ct_comm_t *cm = &cms[how % 3];
        n = 0;
        for (k = 0; k < PER; ++k) {
            cases[n] = &store[n];
            ct_case_random(cases[n], &g, &g_colls[k % CT_NCOLL], cm, (int)ct_below(&g, 4), -1,
                           id++);
            cases[n]->mode = M_IWAIT;
            ++n;
        }
        ct_post_all(cases, n);
        ct_batch_complete(cases, n, how, &local);
        ct_check_all(cases, n);
    }

    /* 2. across three communicators: each communicator's sequence in the same order
     * everywhere, interleaved differently on every rank, completed in reverse order of
     * posting (and by the other methods in later rounds) */
    for (round = 0; round < CT_NBATCH; ++round) {
        n = 0;
        for (i = 0; i < 3; ++i) {
            per[i] = 0;
            for (k = 0; k < PER; ++k) {
                int sel = (k == PER - 1) ? 4 : (int)ct_below(&g, 4); /* one big each */
                cases[n] = &store[n];
                ct_case_random(cases[n], &g, &g_colls[(k + i) % CT_NCOLL], &cms[i], sel, -1,
                               id++);
                cases[n]->mode = M_IWAIT;
                ++n;
                ++per[i];
            }
            pos[i] = 0;
        }
        /* rank-dependent interleaving that keeps each communicator's order */
        for (k = 0; k < n; ++k) {
            int c3;
            do {
                c3 = (int)ct_below(&local, 3);
            } while (pos[c3] >= per[c3]);
            order[k] = cases[c3 * PER + pos[c3]++];
        }
        ct_post_all(order, n);
        ct_batch_complete(order, n, round, &local);
        ct_check_all(order, n);
    }

    /* 3. blocking collectives while non-blocking ones are outstanding on the same
     * communicators */
    n = 0;
    for (k = 0; k < 6; ++k) {
        cases[n] = &store[n];
        ct_case_random(cases[n], &g, NULL, &cms[k % 3], (int)ct_below(&g, 5), -1, id++);
        cases[n]->mode = M_IWAIT;
        ++n;
    }
    ct_post_all(cases, n);
    for (k = 0; k < 6; ++k) {
        ct_case_t b;
        ct_case_random(&b, &g, NULL, &cms[(k + 1) % 3], (int)ct_below(&g, 4), -1, id++);
        b.mode = M_BLOCK;
        ct_case_run(&b);
    }
    ct_batch_complete(cases, n, B_REV_WAIT, &local);
    ct_check_all(cases, n);

    /* 4. many of the same kind outstanding on one communicator */
    for (k = 0; k < CT_NCOLL; ++k) {
        n = 0;
        for (i = 0; i < 8; ++i) {
            cases[n] = &store[n];
            ct_case_random(cases[n], &g, &g_colls[k], &cms[k % 3], (i == 7) ? 4 : (int)(i % 4),
                           -1, id++);
            cases[n]->mode = M_IWAIT;
            ++n;
        }
        ct_post_all(cases, n);
        ct_batch_complete(cases, n, (k % 2) ? B_REV_TEST : B_REV_WAIT, &local);
        ct_check_all(cases, n);
    }

    ct_free(&d2, "d2");
    ct_free(&d1, "d1");
}

/* stress: a long random sequence. */
static void ct_sub_stress(amc_comm_t world, long steps)
{
    ct_comm_t  cms[3];
    amc_comm_t dups[2];
    static const char *names[2] = { "s1", "s2" };
    ct_case_t *pending[CT_MAX_PENDING];
    int        npend = 0, i, how;
    ct_rng_t   g     = { g_seed ^ 0x57e55 };
    ct_rng_t   local = { g_seed ^ 0x57e55 ^ ((uint64_t)(g_rank + 1) << 40) };
    long       step, generations = 0;

    ct_dup(world, &dups[0], names[0]);
    ct_dup(world, &dups[1], names[1]);
    cms[0] = ct_comm_of(world, "world");
    cms[1] = ct_comm_of(dups[0], names[0]);
    cms[2] = ct_comm_of(dups[1], names[1]);

    for (step = 0; step < steps; ++step) {
        unsigned p = ct_below(&g, 1000);

        if (p < 8) {
            /* recreate one dup: everything outstanding completes first */
            int which = (int)ct_below(&g, 2);
            ct_batch_complete(pending, npend, (int)ct_below(&local, CT_NBATCH), &local);
            ct_check_all(pending, npend);
            for (i = 0; i < npend; ++i) {
                free(pending[i]);
            }
            npend = 0;
            ct_free(&dups[which], names[which]);
            ct_dup((ct_below(&g, 2) == 0) ? world : dups[1 - which], &dups[which], names[which]);
            cms[1 + which] = ct_comm_of(dups[which], names[which]);
            ++generations;
            continue;
        }
        {
            ct_case_t *c = ct_malloc(sizeof(*c));
            ct_case_random(c, &g, NULL, &cms[ct_below(&g, 3)], -1, -1, step);
            if (ct_below(&g, 100) < 35) {
                c->mode = M_BLOCK;
                ct_case_run(c);
                free(c);
            } else {
                c->mode = M_IWAIT;
                ct_case_prepare(c);
                ct_case_start(c);
                pending[npend++] = c;
            }
        }
        /* flush when full, now and then, and at the end */
        if ((npend == CT_MAX_PENDING) || ((npend > 0) && (ct_below(&g, 100) < 12)) ||
            (step == steps - 1)) {
            how = (int)ct_below(&local, CT_NBATCH);
            ct_batch_complete(pending, npend, how, &local);
            ct_check_all(pending, npend);
            for (i = 0; i < npend; ++i) {
                free(pending[i]);
            }
            npend = 0;
        }
    }
    ct_batch_complete(pending, npend, B_WAITALL, &local);
    ct_check_all(pending, npend);
    for (i = 0; i < npend; ++i) {
        free(pending[i]);
    }
    ct_free(&dups[1], names[1]);
    ct_free(&dups[0], names[0]);
    if (g_rank == 0) {
        printf("stress: %ld steps, %ld communicator generations\n", steps, generations);
    }
}

/* badarg: the documented AMC_ERR_ARG cases start no communication. */

/* One bad call of collective k with datatype/op/root as given; returns the status. */
static int ct_bad_call(int k, const ct_comm_t *cm, amc_datatype_t dt, amc_op_t op, int root,
                       int nb, amc_request_t *req)
{
    static unsigned char buf_s[4096], buf_r[4096];
    const ct_coll_t     *cd  = &g_colls[k];
    amc_request_t       *rq  = nb ? req : NULL;
    ct_case_t            c;

    /* a case only to carry the arguments; the buffers hold far more than needed */
    memset(&c, 0, sizeof(c));
    c.cd    = cd;
    c.comm  = cm->comm;
    c.n     = cm->n;
    c.r     = cm->r;
    c.count = 2;
    c.dt    = dt;
    c.op    = op;
    c.root  = root;
    c.esz   = 8;
    c.sarg  = buf_s;
    c.rarg  = buf_r;
#if CT_HAVE_EXTRA
    {
        static size_t cnts[64], dsps[64];
        int           j;
        for (j = 0; j < 64; ++j) {
            cnts[j] = (j < cm->n) ? 1 : 0;
            dsps[j] = (size_t)j;
        }
        c.v1 = c.v3 = cnts;
        c.v2 = c.v4 = dsps;
        c.own = 1;
        if (cm->n > 64) {
            ct_fatal("test bug: badarg needs N <= 64");
        }
    }
#endif
    if (((size_t)cm->n * 2 * 8) > sizeof(buf_s)) {
        ct_fatal("test bug: badarg buffers too small for N=%d", cm->n);
    }
    return cd->start(&c, rq);
}

static void ct_expect_arg(int rc, amc_request_t req, const char *what)
{
    if (rc != AMC_ERR_ARG) {
        ct_fail("%s returned %s (%d), expected AMC_ERR_ARG", what, ct_code_name(rc), rc);
    }
    (void)req;
}

/* A checked allreduce and bcast and a barrier: traffic left behind by a bad call shows here. */
static void ct_after_bad(const ct_comm_t *cm, long *id, ct_rng_t *g)
{
    ct_case_t c;
    int       dti;

    for (dti = 0; dti < CT_NDT; ++dti) {
        if (g_dts[dti].dt == AMC_INT64) {
            break;
        }
    }
    ct_case_init(&c, &g_colls[2], cm, dti, K_SUM, -1, 7, 0, M_BLOCK, (*id)++);
    ct_case_run(&c);
    ct_case_init(&c, &g_colls[0], cm, dti, -1, (int)ct_below(g, (unsigned)cm->n), 1000, 0,
                 M_IWAIT, (*id)++);
    ct_case_run(&c);
    ct_must(amc_barrier(cm->comm), "amc_barrier after bad calls");
}

static void ct_sub_badarg(amc_comm_t world)
{
    ct_commset_t  set;
    ct_rng_t      g  = { g_seed ^ 0xbad };
    long          id = 0;
    int           ci, k, dti, opk, nb, rc, calls = 0;
    amc_request_t req;
    amc_op_t      freed;
    char          what[256];

    ct_must(amc_op_create(ct_user_uc, 1, &freed), "amc_op_create");
    ct_must(amc_op_free(&freed), "amc_op_free");
    ct_commset_open(&set, world);
    for (ci = 0; ci < set.n; ++ci) {
        const ct_comm_t *cm = &set.list[ci];
        for (k = 0; k < CT_NCOLL; ++k) {
            const ct_coll_t *cd = &g_colls[k];
            int              root = (cd->flags & F_ROOT) ? 0 : -1;
            for (nb = 0; nb < 2; ++nb) {
                const char *form = nb ? "i-form" : "blocking";
                if (cd->flags & F_OP) {
                    /* every forbidden pair of datatype and predefined op */
                    for (dti = 0; dti < CT_NDT; ++dti) {
                        for (opk = 0; opk <= K_BXOR; ++opk) {
                            if (ct_op_valid(opk, dti)) {
                                continue;
                            }
                            req = AMC_REQUEST_NULL;
                            rc  = ct_bad_call(k, cm, g_dts[dti].dt, g_ops[opk].op, root, nb, &req);
                            snprintf(what, sizeof(what), "%s %s on %s with %s and %s", form,
                                     cd->name, cm->name, g_dts[dti].name, g_ops[opk].name);
                            ct_expect_arg(rc, req, what);
                            ++calls;
                        }
                    }
                    /* unknown and freed ops */
                    req = AMC_REQUEST_NULL;
                    rc  = ct_bad_call(k, cm, AMC_INT32, 12345, root, nb, &req);
                    snprintf(what, sizeof(what), "%s %s on %s with op 12345", form, cd->name,
                             cm->name);
                    ct_expect_arg(rc, req, what);
                    req = AMC_REQUEST_NULL;
                    rc  = ct_bad_call(k, cm, AMC_INT64, freed, root, nb, &req);
                    snprintf(what, sizeof(what), "%s %s on %s with a freed user op", form,
                             cd->name, cm->name);
                    ct_expect_arg(rc, req, what);
                    calls += 2;
                }
                /* unknown datatype */
                req = AMC_REQUEST_NULL;
                rc  = ct_bad_call(k, cm, (amc_datatype_t)99, AMC_SUM, root, nb, &req);
                snprintf(what, sizeof(what), "%s %s on %s with datatype 99", form, cd->name,
                         cm->name);
                ct_expect_arg(rc, req, what);
                ++calls;
                /* roots out of range */
                if (cd->flags & F_ROOT) {
                    int bad[2] = { -1, cm->n }, b;
                    for (b = 0; b < 2; ++b) {
                        req = AMC_REQUEST_NULL;
                        rc  = ct_bad_call(k, cm, AMC_INT32, AMC_SUM, bad[b], nb, &req);
                        snprintf(what, sizeof(what), "%s %s on %s with root %d (N=%d)", form,
                                 cd->name, cm->name, bad[b], cm->n);
                        ct_expect_arg(rc, req, what);
                        ++calls;
                    }
                }
            }
            ct_after_bad(cm, &id, &g);
        }
        /* Bad calls made by some ranks only: an erroneous call must leave no trace (no
         * message, no sequence number used), so the next collectives still match. */
        for (k = 0; k < CT_NCOLL; ++k) {
            int extra = cm->r % 3, e;
            for (e = 0; e < extra; ++e) {
                req = AMC_REQUEST_NULL;
                rc  = ct_bad_call(k, cm, (g_colls[k].flags & F_OP) ? AMC_DOUBLE : (amc_datatype_t)99,
                                  (g_colls[k].flags & F_OP) ? AMC_BXOR : AMC_SUM,
                                  (g_colls[k].flags & F_ROOT) ? 0 : -1, e & 1, &req);
                snprintf(what, sizeof(what), "%s (bad call on this rank only, #%d) on %s",
                         g_colls[k].name, e, cm->name);
                ct_expect_arg(rc, req, what);
                ++calls;
            }
            {
                ct_case_t c;
                ct_case_random(&c, &g, &g_colls[k], cm, 2, -1, id++);
                ct_case_run(&c);
            }
        }
        ct_after_bad(cm, &id, &g);
    }
    ct_commset_close(&set);
    if (g_rank == 0) {
        printf("badarg: %d rejected calls on rank 0\n", calls);
    }
}

/* ------------------------------------------------------------------ main */

static void ct_shm_map(const char *path)
{
    void *p;
    int   fd = open(path, O_RDWR);

    if (fd < 0) {
        ct_fatal("cannot open shared file '%s': %s", path, strerror(errno));
    }
    if (ftruncate(fd, 4096) != 0) {
        ct_fatal("ftruncate('%s'): %s", path, strerror(errno));
    }
    p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        ct_fatal("mmap('%s'): %s", path, strerror(errno));
    }
    close(fd);
    g_shm_failures = p;
}

static long ct_env_long(const char *name, long dflt)
{
    const char *s = getenv(name);
    char       *end;
    long        v;

    if ((s == NULL) || (*s == '\0')) {
        return dflt;
    }
    v = strtol(s, &end, 0);
    if ((*end != '\0') || (v < 0)) {
        fprintf(stderr, "bad %s='%s'\n", name, s);
        exit(2);
    }
    return v;
}

static void ct_usage(const char *prog)
{
    fprintf(stderr,
            "usage: %s SUBTEST [SHARED_FILE]\n"
            "  SUBTEST: full | sample | nb | stress | badarg\n"
            "  SHARED_FILE: a fresh file all ranks map to add up failures (optional)\n",
            prog);
}

int main(int argc, char **argv)
{
    static const char *subtests[] = { "full", "sample", "nb", "stress", "badarg", NULL };
    amc_comm_t         world;
    double             t0;
    long               steps;
    int                i, rc, known = 0, total = 0;
    amc_op_t           unc, uc;

    setvbuf(stdout, NULL, _IOLBF, 0);
    /* keep freed megabyte buffers in the heap: a fresh mapping per case costs page faults */
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    if ((argc != 2) && (argc != 3)) {
        ct_usage(argv[0]);
        return 2;
    }
    for (i = 0; subtests[i] != NULL; ++i) {
        known |= (strcmp(argv[1], subtests[i]) == 0);
    }
    if (!known) {
        fprintf(stderr, "unknown sub-test '%s'\n", argv[1]);
        ct_usage(argv[0]);
        return 2;
    }
    g_subtest   = argv[1];
    g_seed      = (uint64_t)ct_env_long("AMCTEST_SEED", (long)g_seed);
    g_big_bytes = (size_t)ct_env_long("AMCTEST_BIG_BYTES", (long)g_big_bytes);

    rc = amc_init(&argc, &argv);
    if (rc != AMC_SUCCESS) {
        ct_fatal("amc_init returned %s (%d)", ct_code_name(rc), rc);
    }
    world = AMC_COMM_WORLD;
    if (world == AMC_COMM_NULL) {
        ct_fatal("AMC_COMM_WORLD is AMC_COMM_NULL after amc_init");
    }
    ct_must(amc_comm_rank(world, &g_rank), "amc_comm_rank(world)");
    ct_must(amc_comm_size(world, &g_size), "amc_comm_size(world)");
    if (argc == 3) {
        ct_shm_map(argv[2]);
    }
    ct_must(amc_op_create(ct_user_unc, 0, &unc), "amc_op_create(non-commutative)");
    ct_must(amc_op_create(ct_user_uc, 1, &uc), "amc_op_create(commutative)");
    g_ops[K_UNC].op = unc;
    g_ops[K_UC].op  = uc;

    ct_must(amc_barrier(world), "amc_barrier(world) at the start");
    t0 = ct_now();
    if (strcmp(g_subtest, "full") == 0) {
        ct_sub_full(world);
    } else if (strcmp(g_subtest, "sample") == 0) {
        ct_sub_sample(world);
    } else if (strcmp(g_subtest, "nb") == 0) {
        ct_sub_nb(world);
    } else if (strcmp(g_subtest, "stress") == 0) {
        steps = (g_size <= 5) ? 10000 : (g_size <= 8) ? 6000 : (g_size <= 16) ? 5000 : 3000;
        steps = ct_env_long("AMCTEST_STRESS_STEPS", steps);
        ct_sub_stress(world, steps);
    } else {
        ct_sub_badarg(world);
    }

    ct_must(amc_op_free(&unc), "amc_op_free(non-commutative)");
    ct_must(amc_op_free(&uc), "amc_op_free(commutative)");

    /* Publish this rank's failure count; the last barrier orders it before rank 0 reads. */
    if (g_shm_failures != NULL) {
        atomic_fetch_add(g_shm_failures, g_failures);
    }
    ct_must(amc_barrier(world), "amc_barrier(world) at the end");
    if (g_rank == 0) {
        printf("%s: %ld cases on rank 0 in %.2f s\n", g_subtest, g_cases, ct_now() - t0);
    }
    total = (g_shm_failures != NULL) ? atomic_load(g_shm_failures) : g_failures;

    rc = amc_finalize();
    if (rc != AMC_SUCCESS) {
        ct_fail("amc_finalize returned %s (%d), expected AMC_SUCCESS", ct_code_name(rc), rc);
    }
    if (g_failures > 0) {
        fprintf(stderr, "FAIL %s rank %d/%d: %d failure(s) on this rank\n", g_subtest, g_rank,
                g_size, g_failures);
    } else if ((g_rank == 0) && (total == 0)) {
        printf("ok %s N=%d\n", g_subtest, g_size);
    }
    fflush(stdout);
    fflush(stderr);
    return (g_failures > 0) ? 1 : 0;
}
