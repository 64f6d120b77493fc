/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Mixed non-blocking, persistent and blocking collectives in the shape of
 * MPICH's coll/nonblocking3.c, through amcoll's own API on the fake
 * transport. That test found ranks losing step (in the MPI shim): every
 * rank keeps up to 20 collectives outstanding on each of 4 communicators,
 * picks each next one by a random number all ranks draw alike, uses a user
 * op and frees it right after the start, and completes them in random
 * order; the completion call is drawn alike on every rank, but what a test
 * finds done is rank-local, so ranks post their next collectives at
 * different moments.
 *
 * Each run (N = 1..8 ranks, many seeds) draws one program, alike for all
 * ranks, from its seed:
 *  - a stream of operations: which communicator (the world, two dups, a
 *    split that reverses the rank order), which collective (all 16: barrier
 *    to exscan), mode (non-blocking; persistent: a few templates, each
 *    initialized once, started many times with new inputs, freed at the
 *    end; blocking), datatype (all 14), counts (mostly small, 0 included,
 *    some KiB, some above AMC_RNDV_THRESH), root, op (predefined, or a user
 *    op, commutative or not, created before the start and freed right after
 *    it: a collective binds its op when it starts), AMC_IN_PLACE where
 *    amcoll allows it, NULL buffers where nothing is significant (a
 *    persistent template's user op lives until its request is freed: each
 *    amc_start binds it again);
 *  - a stream of calls: start the next operation (if this rank's window,
 *    1..20 requests, has room), test or wait on one outstanding request,
 *    testall, waitall, waitany, test each, or amc_request_free a running one.
 * Each rank advances through both streams on its own. The unthreaded world
 * cannot block: a wait or a blocking collective (its non-blocking form
 * then) puts the rank in a blocked state in which its turns only poll
 * (progress and look, or amc_test / amc_testall) until the real call would
 * return at once, and then it is made (amc_wait, amc_waitall, amc_waitany).
 * A scheduler gives ranks their turns in a seeded random order and delivers
 * messages between turns in a seeded random order, under each fake
 * completion mode. A hang (nothing deliverable, no rank able to move) fails
 * the run with where every rank stands.
 *
 * Every result is checked element by element, the whole receive buffer
 * (untouched gaps of the v-forms included), against values computed from
 * the inputs, which are a function of the operation, the rank and the
 * element; send buffers must come back unchanged. The non-commutative user
 * op composes affine maps packed in one element, so the result shows MPI's
 * rank order; the commutative one adds one per combination, so a
 * contribution counted twice or missed shows. Exscan's rank 0 buffer must
 * stay untouched. Freed (detached) operations are checked after the world
 * settled, once every rank's collectives all ended (no slot left taken):
 * a freed request finishes unobserved, so its receive buffer holds the
 * whole result, whichever path ran it (the engine's schedules, the small
 * collectives on the barrier's rounds, a bcast forwarded before the call).
 * At the end
 * every persistent request, user op and communicator is freed and the world
 * must settle with no refused message.
 *
 * A second, smaller pass runs the same programs on a threaded world (one
 * thread per rank, with and without the progress thread) with the real
 * blocking collectives and real waits; there, AMC_TIMEOUT (10 s unless set)
 * turns a rank that lost step into a failure instead of a hang, and freed
 * requests are drawn only without the progress thread (a rank's own
 * progress ends them, and then it checks them).
 *
 * It found a bcast this rank had forwarded before its call, whose request
 * was then freed, never ending: its slot stayed taken for good
 * (coll_engine.c took "no request" for "no call yet"); and freed requests
 * whose results were written or not by the path they took.
 *
 * A failure names N and the seed; AMCTEST_MIXED_SEED=s (with
 * AMCTEST_MIXED_N=n) runs that one alone.
 */
#include "tests/unit/harness.h"
#include "am_coll/context/context.h"
#include "am_coll/context/datatype.h"
#include "am_coll/context/request.h"
#include "am_coll/context/context_progress.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_N    8
#define NCOMM    4
#define MAX_OPS  96
#define MAX_WIN  20
#define NTMPL    3
#define STRIDE   ((size_t)1 << 24) /* input index of block j: j * STRIDE + i */
#define SENTINEL 0xa5
#define HUGE_DISPL ((size_t)1 << 40)

enum {
    C_BARRIER, C_BCAST, C_REDUCE, C_ALLREDUCE, C_GATHER, C_GATHERV, C_SCATTER, C_SCATTERV,
    C_ALLGATHER, C_ALLGATHERV, C_ALLTOALL, C_ALLTOALLV, C_REDUCE_SCATTER,
    C_REDUCE_SCATTER_BLOCK, C_SCAN, C_EXSCAN, C_COUNT
};

static const char *const coll_names[C_COUNT] = {
    "barrier", "bcast", "reduce", "allreduce", "gather", "gatherv", "scatter", "scatterv",
    "allgather", "allgatherv", "alltoall", "alltoallv", "reduce_scatter",
    "reduce_scatter_block", "scan", "exscan"
};

enum { M_NB, M_PERSIST, M_BLOCK };
static const char *const mode_names[] = { "non-blocking", "persistent", "blocking" };

enum { OP_NONE, OP_PRE, OP_USER_COMM, OP_USER_NONCOMM };

/* calls of the call stream */
enum { K_START, K_TEST, K_WAIT, K_TESTALL, K_WAITALL, K_WAITANY, K_TESTEACH, K_FREE };

/* what a blocked rank waits for */
enum { B_NONE, B_WAIT, B_WAITALL, B_WAITANY, B_COLL };

/* an operation's state on one rank */
enum { S_IDLE, S_RUN, S_DONE, S_DETACHED };

typedef struct {
    int            coll, mode, comm, root, in_place, opkind, tmpl, null_empty;
    amc_datatype_t dt;
    size_t         es;    /* element size */
    amc_op_t       pop;   /* OP_PRE: the predefined op */
    size_t         count; /* per block (v-forms: the largest block) */
    size_t         slot;  /* v-forms: elements per block's slot */
    /* v-forms: vc[i][j] elements from comm rank i to j (alltoallv), else
     * vc[0][j] is rank j's block; vct the transpose; sd/rd[r][j] rank r's
     * displacement of block j in its send/receive buffer */
    size_t         vc[MAX_N][MAX_N], vct[MAX_N][MAX_N], sd[MAX_N][MAX_N], rd[MAX_N][MAX_N];
    uint64_t       key;   /* the inputs' seed: one per operation (per start) */
} desc_t;

typedef struct {
    unsigned char *send, *recv; /* a persistent start's: the template's */
    size_t         slen, rlen;  /* elements */
    int            state;
} rop_t;

typedef struct {
    int            next_op;
    long           next_call;
    amc_request_t  req[MAX_WIN];
    int            slot_op[MAX_WIN];
    int            live;
    int            blocked, bslot, bpoll;
    amc_request_t  breq;
    int            bop;
    amc_request_t  preq[NTMPL];
    int            pinit[NTMPL], pslot[NTMPL];
    amc_op_t       puop[NTMPL];
    unsigned char *psend[NTMPL], *precv[NTMPL];
    amc_comm_t     comm[NCOMM];
    int            crank[NCOMM];
    int            finished;
} rank_t;

typedef struct {
    int              n, nops, win, threaded, pt;
    uint64_t         seed;
    desc_t           tmpl[NTMPL];
    desc_t           ops[MAX_OPS];
    rop_t            rop[MAX_OPS][MAX_N];
    rank_t           rk[MAX_N];
    amc_test_world_t w;
    unsigned long    events;  /* starts and completions: what a stall lacks */
    int              ended;   /* threaded: ranks whose collectives all ended */
} run_t;

static unsigned long fail_base;
/* freed while running: how many ended with their results */
static unsigned long detached_written;

/* ---------------------------------------------------------------- values */

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static int is_reduction(int coll)
{
    return (coll == C_REDUCE) || (coll == C_ALLREDUCE) || (coll == C_REDUCE_SCATTER) ||
           (coll == C_REDUCE_SCATTER_BLOCK) || (coll == C_SCAN) || (coll == C_EXSCAN);
}

/* Element idx of comm rank r's input, stored at buf[pos]. Ranges keep
 * float arithmetic exact in any order: sums below 2^24, products of 1..3. */
static void put_input(const desc_t *d, void *buf, size_t pos, int r, size_t idx)
{
    uint64_t       v = mix(d->key ^ mix(((uint64_t)r << 48) ^ idx));
    unsigned char *p = (unsigned char *)buf + pos * d->es;

    if (is_reduction(d->coll) && (d->opkind == OP_PRE)) {
        if (d->pop == AMC_PROD) {
            v = 1 + v % 3;
        } else if ((d->pop == AMC_LAND) || (d->pop == AMC_LOR) || (d->pop == AMC_LXOR)) {
            v %= 3;
        }
    }
    if (d->dt == AMC_FLOAT) {
        float f = (float)(v % 1000);

        memcpy(p, &f, sizeof(f));
    } else if (d->dt == AMC_DOUBLE) {
        double f = (double)(v % 100000);

        memcpy(p, &f, sizeof(f));
    } else if (d->es == 1) {
        uint8_t u = (uint8_t)v;

        memcpy(p, &u, 1);
    } else if (d->es == 2) {
        uint16_t u = (uint16_t)v;

        memcpy(p, &u, 2);
    } else if (d->es == 4) {
        uint32_t u = (uint32_t)v;

        memcpy(p, &u, 4);
    } else {
        memcpy(p, &v, 8);
    }
}

/* ---------------------------------------------------------------- ops */

/* Commutative: inout = in + inout + 1, so a reduction of n values is their
 * sum plus n - 1 (a contribution counted twice or missed shows). */
#define UOP_ADD1(_T, _W) \
    do { \
        _T x, y; \
        memcpy(&x, a + i * sizeof(_T), sizeof(_T)); \
        memcpy(&y, b + i * sizeof(_T), sizeof(_T)); \
        y = (_T)((_W)x + (_W)y + (_W)1); \
        memcpy(b + i * sizeof(_T), &y, sizeof(_T)); \
    } while (0)

static void uop_comm(const void *in, void *inout, size_t count, amc_datatype_t dt)
{
    const unsigned char *a = in;
    unsigned char       *b = inout;
    size_t               i;

    for (i = 0; i < count; i++) {
        switch (dt) {
        case AMC_BYTE: case AMC_CHAR: case AMC_INT8: case AMC_UINT8:
            UOP_ADD1(uint8_t, unsigned);
            break;
        case AMC_INT16: case AMC_UINT16:
            UOP_ADD1(uint16_t, unsigned);
            break;
        case AMC_INT32: case AMC_UINT32:
            UOP_ADD1(uint32_t, uint32_t);
            break;
        case AMC_INT:
            UOP_ADD1(unsigned, unsigned);
            break;
        case AMC_LONG:
            UOP_ADD1(unsigned long, unsigned long);
            break;
        case AMC_INT64: case AMC_UINT64:
            UOP_ADD1(uint64_t, uint64_t);
            break;
        case AMC_FLOAT:
            UOP_ADD1(float, float);
            break;
        case AMC_DOUBLE:
            UOP_ADD1(double, double);
            break;
        }
    }
}

/* Not commutative, but associative: an element is an affine map
 * x -> a x + b (a in the high half, b in the low half, arithmetic modulo
 * the half's width) and in (op) inout is their composition in(inout(x)),
 * so a reduction over ranks 0..n-1 is map_0 o map_1 o ... o map_{n-1}. */
static void uop_affine(const void *in, void *inout, size_t count, amc_datatype_t dt)
{
    const unsigned char *a = in;
    unsigned char       *b = inout;
    size_t               i;

    for (i = 0; i < count; i++) {
        if ((dt == AMC_INT64) || (dt == AMC_UINT64) || (dt == AMC_LONG)) {
            uint64_t x, y;
            uint32_t a1, b1, a2, b2;

            memcpy(&x, a + i * 8, 8);
            memcpy(&y, b + i * 8, 8);
            a1 = (uint32_t)(x >> 32);
            b1 = (uint32_t)x;
            a2 = (uint32_t)(y >> 32);
            b2 = (uint32_t)y;
            y  = ((uint64_t)(uint32_t)(a1 * a2) << 32) | (uint32_t)(a1 * b2 + b1);
            memcpy(b + i * 8, &y, 8);
        } else {
            uint32_t x, y;
            uint16_t a1, b1, a2, b2;

            memcpy(&x, a + i * 4, 4);
            memcpy(&y, b + i * 4, 4);
            a1 = (uint16_t)(x >> 16);
            b1 = (uint16_t)x;
            a2 = (uint16_t)(y >> 16);
            b2 = (uint16_t)y;
            y  = ((uint32_t)(uint16_t)((unsigned)a1 * a2) << 16) |
                 (uint16_t)((unsigned)a1 * b2 + b1);
            memcpy(b + i * 4, &y, 4);
        }
    }
}

/* The predefined ops, written here again (not the library's kernels):
 * integers wrap as unsigned, logical ops give 0 or 1. */
#define REF_INT(_T, _W) \
    do { \
        _T x, y; \
        memcpy(&x, in, sizeof(_T)); \
        memcpy(&y, inout, sizeof(_T)); \
        switch (op) { \
        case AMC_SUM:  y = (_T)((_W)x + (_W)y); break; \
        case AMC_PROD: y = (_T)((_W)x * (_W)y); break; \
        case AMC_MIN:  y = (x < y) ? x : y; break; \
        case AMC_MAX:  y = (x > y) ? x : y; break; \
        case AMC_LAND: y = (_T)((x != 0) && (y != 0)); break; \
        case AMC_LOR:  y = (_T)((x != 0) || (y != 0)); break; \
        case AMC_LXOR: y = (_T)((x != 0) != (y != 0)); break; \
        case AMC_BAND: y = (_T)(x & y); break; \
        case AMC_BOR:  y = (_T)(x | y); break; \
        default:       y = (_T)(x ^ y); break; \
        } \
        memcpy(inout, &y, sizeof(_T)); \
    } while (0)

#define REF_FLOAT(_T) \
    do { \
        _T x, y; \
        memcpy(&x, in, sizeof(_T)); \
        memcpy(&y, inout, sizeof(_T)); \
        switch (op) { \
        case AMC_SUM:  y = x + y; break; \
        case AMC_PROD: y = x * y; break; \
        case AMC_MIN:  y = (x < y) ? x : y; break; \
        default:       y = (x > y) ? x : y; break; \
        } \
        memcpy(inout, &y, sizeof(_T)); \
    } while (0)

static void ref_pre(amc_op_t op, amc_datatype_t dt, const void *in, void *inout)
{
    switch (dt) {
    case AMC_INT8:   REF_INT(int8_t, unsigned); break;
    case AMC_INT16:  REF_INT(int16_t, unsigned); break;
    case AMC_INT32:  REF_INT(int32_t, uint32_t); break;
    case AMC_INT64:  REF_INT(int64_t, uint64_t); break;
    case AMC_UINT8:  REF_INT(uint8_t, unsigned); break;
    case AMC_UINT16: REF_INT(uint16_t, unsigned); break;
    case AMC_UINT32: REF_INT(uint32_t, uint32_t); break;
    case AMC_UINT64: REF_INT(uint64_t, uint64_t); break;
    case AMC_INT:    REF_INT(int, unsigned); break;
    case AMC_LONG:   REF_INT(long, unsigned long); break;
    case AMC_FLOAT:  REF_FLOAT(float); break;
    case AMC_DOUBLE: REF_FLOAT(double); break;
    default:         break;
    }
}

/* out = input_from (op) ... (op) input_to at element idx, in rank order */
static void fold_elem(const desc_t *d, int from, int to, size_t idx, void *out)
{
    unsigned char acc[8], x[8];
    int           j;

    put_input(d, acc, 0, from, idx);
    for (j = from + 1; j <= to; j++) {
        put_input(d, x, 0, j, idx);
        /* x = acc (op) x: acc is the left operand, the lower ranks */
        if (d->opkind == OP_USER_COMM) {
            uop_comm(acc, x, 1, d->dt);
        } else if (d->opkind == OP_USER_NONCOMM) {
            uop_affine(acc, x, 1, d->dt);
        } else {
            ref_pre(d->pop, d->dt, acc, x);
        }
        memcpy(acc, x, d->es);
    }
    memcpy(out, acc, d->es);
}

/* ---------------------------------------------------------------- the program */

static const amc_datatype_t all_dts[] = {
    AMC_BYTE, AMC_CHAR, AMC_INT8, AMC_INT16, AMC_INT32, AMC_INT64, AMC_UINT8, AMC_UINT16,
    AMC_UINT32, AMC_UINT64, AMC_INT, AMC_LONG, AMC_FLOAT, AMC_DOUBLE
};
static const amc_datatype_t wide_dts[] = {
    AMC_INT32, AMC_UINT32, AMC_INT, AMC_INT64, AMC_UINT64, AMC_LONG
};

#define NELEM(_a) (sizeof(_a) / sizeof((_a)[0]))

static int is_vform(int coll)
{
    return (coll == C_GATHERV) || (coll == C_SCATTERV) || (coll == C_ALLGATHERV) ||
           (coll == C_ALLTOALLV) || (coll == C_REDUCE_SCATTER);
}

static size_t draw(amc_test_rng_t *g, size_t bound)
{
    return amc_test_rng_below(g, bound);
}

static void shuffle(int *perm, int n, amc_test_rng_t *g)
{
    int i, j, t;

    for (i = 0; i < n; i++) {
        perm[i] = i;
    }
    for (i = n - 1; i > 0; i--) {
        j       = (int)draw(g, (size_t)i + 1);
        t       = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
}

static void gen_desc(desc_t *d, int n, amc_test_rng_t *g)
{
    size_t x, bytes, vmax;
    int    i, j, perm[MAX_N], sym;

    memset(d, 0, sizeof(*d));
    d->coll = (int)draw(g, C_COUNT);
    d->comm = (int)draw(g, NCOMM);
    d->root = (int)draw(g, (size_t)n);
    d->tmpl = -1;
    d->pop  = -1;
    if (is_reduction(d->coll)) {
        x = draw(g, 100);
        if (x < 20) {
            d->opkind = OP_USER_COMM;
            d->dt     = all_dts[draw(g, NELEM(all_dts))];
        } else if (x < 40) {
            d->opkind = OP_USER_NONCOMM;
            d->dt     = wide_dts[draw(g, NELEM(wide_dts))];
        } else {
            d->opkind = OP_PRE;
            d->pop    = (amc_op_t)draw(g, 10);
            /* no reduction on BYTE and CHAR; only SUM..MAX on floats */
            d->dt     = all_dts[2 + draw(g, (d->pop <= AMC_MAX) ? 12 : 10)];
        }
    } else {
        d->opkind = OP_NONE;
        d->dt     = all_dts[draw(g, NELEM(all_dts))];
    }
    (void)amc_datatype_size(d->dt, &d->es);

    /* sizes: mostly small, some KiB, some above the rendezvous threshold */
    x = draw(g, 100);
    if (x < 10) {
        d->count = 0;
    } else if (x < 55) {
        d->count = 1 + draw(g, 8);
    } else if (x < 80) {
        d->count = 9 + draw(g, 56);
    } else if (x < 93) {
        bytes    = 1024 + draw(g, 5121);
        d->count = bytes / d->es;
    } else {
        bytes    = 16384 + draw(g, 8193);
        d->count = (bytes + d->es - 1) / d->es;
    }
    if (d->coll == C_BARRIER) {
        d->count = 0;
    }
    d->in_place = (d->coll != C_BARRIER) && (d->coll != C_BCAST) && (draw(g, 3) == 0);
    d->null_empty = (int)draw(g, 2);

    if (is_vform(d->coll)) {
        vmax    = d->count;
        sym     = (d->coll == C_ALLTOALLV) && d->in_place;
        d->slot = vmax + 3;
        for (i = 0; i < n; i++) {
            for (j = 0; j < n; j++) {
                if (vmax == 0) {
                    d->vc[i][j] = 0;
                } else if (sym && (j < i)) {
                    d->vc[i][j] = d->vc[j][i]; /* MPI's in-place alltoallv */
                } else {
                    d->vc[i][j] = (draw(g, 4) == 0) ? 0 : 1 + draw(g, vmax);
                }
            }
        }
        for (i = 0; i < n; i++) {
            for (j = 0; j < n; j++) {
                d->vct[i][j] = d->vc[j][i];
            }
        }
        /* blocks in slots of a random order, at a random offset in the
         * slot; an empty block often gets an absurd displacement */
        for (i = 0; i < n; i++) {
            shuffle(perm, n, g);
            for (j = 0; j < n; j++) {
                d->rd[i][j] = (size_t)perm[j] * d->slot + draw(g, 3);
                if ((((d->coll == C_ALLTOALLV) ? d->vc[j][i] : d->vc[0][j]) == 0) &&
                    draw(g, 2)) {
                    d->rd[i][j] = HUGE_DISPL;
                }
            }
            shuffle(perm, n, g);
            for (j = 0; j < n; j++) {
                d->sd[i][j] = (size_t)perm[j] * d->slot + draw(g, 3);
                if ((((d->coll == C_ALLTOALLV) ? d->vc[i][j] : d->vc[0][j]) == 0) &&
                    draw(g, 2)) {
                    d->sd[i][j] = HUGE_DISPL;
                }
            }
        }
    }
}

/* Total elements of reduce_scatter's vector and rank r's offset in it. */
static size_t rs_total(const desc_t *d, int n, int r, size_t *off)
{
    size_t total = 0, o = 0;
    int    j;

    for (j = 0; j < n; j++) {
        size_t b = (d->coll == C_REDUCE_SCATTER) ? d->vc[0][j] : d->count;

        if (j == r) {
            o = total;
        }
        total += b;
    }
    if (off != NULL) {
        *off = o;
    }
    return total;
}

static size_t send_len(const desc_t *d, int n, int r)
{
    size_t c = d->count, N = (size_t)n;

    switch (d->coll) {
    case C_REDUCE: case C_ALLREDUCE: case C_SCAN: case C_EXSCAN: case C_GATHER:
    case C_ALLGATHER:
        return c;
    case C_GATHERV: case C_ALLGATHERV:
        return d->vc[0][r];
    case C_SCATTER:
        return (r == d->root) ? N * c : 0;
    case C_SCATTERV:
        return (r == d->root) ? N * d->slot : 0;
    case C_ALLTOALL: case C_REDUCE_SCATTER_BLOCK:
        return N * c;
    case C_ALLTOALLV:
        return N * d->slot;
    case C_REDUCE_SCATTER:
        return rs_total(d, n, r, NULL);
    default:
        return 0;
    }
}

static size_t recv_len(const desc_t *d, int n, int r)
{
    size_t c = d->count, N = (size_t)n;
    int    root = (r == d->root);

    switch (d->coll) {
    case C_BCAST: case C_ALLREDUCE: case C_SCAN: case C_EXSCAN:
        return c;
    case C_REDUCE:
        return root ? c : 0;
    case C_GATHER:
        return root ? N * c : 0;
    case C_GATHERV:
        return root ? N * d->slot : 0;
    case C_SCATTER:
        return (root && d->in_place) ? 0 : c;
    case C_SCATTERV:
        return (root && d->in_place) ? 0 : d->vc[0][r];
    case C_ALLGATHER: case C_ALLTOALL:
        return N * c;
    case C_ALLGATHERV: case C_ALLTOALLV:
        return N * d->slot;
    case C_REDUCE_SCATTER_BLOCK:
        return d->in_place ? N * c : c;
    case C_REDUCE_SCATTER:
        return d->in_place ? rs_total(d, n, r, NULL) : d->vc[0][r];
    default:
        return 0;
    }
}

/* Whether rank r's send buffer is read (and must come back unchanged). */
static int send_used(const desc_t *d, int r)
{
    switch (d->coll) {
    case C_BARRIER: case C_BCAST:
        return 0;
    case C_SCATTER: case C_SCATTERV:
        return r == d->root;
    case C_REDUCE: case C_GATHER: case C_GATHERV:
        return !(d->in_place && (r == d->root));
    default:
        return !d->in_place;
    }
}

/* A block's n elements of input (r, base + i) at buf[pos + i] */
static void put_block(const desc_t *d, void *buf, size_t pos, int r, size_t base, size_t cnt)
{
    size_t i;

    for (i = 0; i < cnt; i++) {
        put_input(d, buf, pos + i, r, base + i);
    }
}

/* What rank r's send buffer holds before the start. */
static void fill_send(const desc_t *d, int n, int r, unsigned char *sb)
{
    size_t c = d->count, i;
    int    j;

    if (send_len(d, n, r) == 0) {
        return; /* the scatters' non-roots */
    }
    switch (d->coll) {
    case C_REDUCE: case C_ALLREDUCE: case C_SCAN: case C_EXSCAN: case C_GATHER:
    case C_ALLGATHER:
        put_block(d, sb, 0, r, 0, c);
        break;
    case C_GATHERV: case C_ALLGATHERV:
        put_block(d, sb, 0, r, 0, d->vc[0][r]);
        break;
    case C_SCATTER: case C_ALLTOALL:
        for (j = 0; j < n; j++) {
            put_block(d, sb, (size_t)j * c, r, (size_t)j * STRIDE, c);
        }
        break;
    case C_SCATTERV:
        memset(sb, SENTINEL, (size_t)n * d->slot * d->es);
        for (j = 0; j < n; j++) {
            if (d->vc[0][j] > 0) {
                put_block(d, sb, d->sd[r][j], r, (size_t)j * STRIDE, d->vc[0][j]);
            }
        }
        break;
    case C_ALLTOALLV:
        memset(sb, SENTINEL, (size_t)n * d->slot * d->es);
        for (j = 0; j < n; j++) {
            if (d->vc[r][j] > 0) {
                put_block(d, sb, d->sd[r][j], r, (size_t)j * STRIDE, d->vc[r][j]);
            }
        }
        break;
    case C_REDUCE_SCATTER: case C_REDUCE_SCATTER_BLOCK:
        for (i = rs_total(d, n, r, NULL); i-- > 0;) {
            put_input(d, sb, i, r, i);
        }
        break;
    default:
        break;
    }
}

/* What rank r's receive buffer holds before the start: the sentinel, and
 * its own contribution where the call is in place. */
static void fill_recv(const desc_t *d, int n, int r, unsigned char *rb, size_t rlen)
{
    size_t c = d->count;
    int    j, root = (r == d->root);

    memset(rb, SENTINEL, rlen * d->es);
    if ((d->coll == C_BCAST) && root) {
        put_block(d, rb, 0, r, 0, c);
    }
    if (!d->in_place) {
        return;
    }
    switch (d->coll) {
    case C_REDUCE:
        if (root) {
            put_block(d, rb, 0, r, 0, c);
        }
        break;
    case C_ALLREDUCE: case C_SCAN: case C_EXSCAN:
        put_block(d, rb, 0, r, 0, c);
        break;
    case C_GATHER:
        if (root) {
            put_block(d, rb, (size_t)r * c, r, 0, c);
        }
        break;
    case C_ALLGATHER:
        put_block(d, rb, (size_t)r * c, r, 0, c);
        break;
    case C_GATHERV:
        if (root && (d->vc[0][r] > 0)) {
            put_block(d, rb, d->rd[r][r], r, 0, d->vc[0][r]);
        }
        break;
    case C_ALLGATHERV:
        if (d->vc[0][r] > 0) {
            put_block(d, rb, d->rd[r][r], r, 0, d->vc[0][r]);
        }
        break;
    case C_ALLTOALL:
        for (j = 0; j < n; j++) {
            put_block(d, rb, (size_t)j * c, r, (size_t)j * STRIDE, c);
        }
        break;
    case C_ALLTOALLV:
        /* the block for j lies where j's block will land (counts symmetric) */
        for (j = 0; j < n; j++) {
            if (d->vc[r][j] > 0) {
                put_block(d, rb, d->rd[r][j], r, (size_t)j * STRIDE, d->vc[r][j]);
            }
        }
        break;
    case C_REDUCE_SCATTER: case C_REDUCE_SCATTER_BLOCK:
        fill_send(d, n, r, rb);
        break;
    default:
        break;
    }
}

/* What rank r's receive buffer must hold afterwards; *cmp: how many
 * elements of it are defined (in-place reduce_scatter: its block only). */
static void fill_expect(const desc_t *d, int n, int r, unsigned char *ex, size_t rlen,
                        size_t *cmp)
{
    size_t c = d->count, i, off;
    int    j;

    fill_recv(d, n, r, ex, rlen);
    *cmp = rlen;
    switch (d->coll) {
    case C_BCAST:
        put_block(d, ex, 0, d->root, 0, c);
        break;
    case C_REDUCE: case C_ALLREDUCE:
        for (i = 0; (i < c) && (rlen > 0); i++) {
            fold_elem(d, 0, n - 1, i, ex + i * d->es);
        }
        break;
    case C_SCAN:
        for (i = 0; i < c; i++) {
            fold_elem(d, 0, r, i, ex + i * d->es);
        }
        break;
    case C_EXSCAN:
        for (i = 0; (i < c) && (r > 0); i++) {
            fold_elem(d, 0, r - 1, i, ex + i * d->es);
        }
        break;
    case C_GATHER: case C_ALLGATHER:
        for (j = 0; (j < n) && (rlen > 0); j++) {
            put_block(d, ex, (size_t)j * c, j, 0, c);
        }
        break;
    case C_GATHERV: case C_ALLGATHERV:
        for (j = 0; (j < n) && (rlen > 0); j++) {
            if (d->vc[0][j] > 0) {
                put_block(d, ex, d->rd[r][j], j, 0, d->vc[0][j]);
            }
        }
        break;
    case C_SCATTER:
        if (rlen > 0) {
            put_block(d, ex, 0, d->root, (size_t)r * STRIDE, c);
        }
        break;
    case C_SCATTERV:
        if (rlen > 0) {
            put_block(d, ex, 0, d->root, (size_t)r * STRIDE, d->vc[0][r]);
        }
        break;
    case C_ALLTOALL:
        for (j = 0; j < n; j++) {
            put_block(d, ex, (size_t)j * c, j, (size_t)r * STRIDE, c);
        }
        break;
    case C_ALLTOALLV:
        for (j = 0; j < n; j++) {
            if (d->vc[j][r] > 0) {
                put_block(d, ex, d->rd[r][j], j, (size_t)r * STRIDE, d->vc[j][r]);
            }
        }
        break;
    case C_REDUCE_SCATTER: case C_REDUCE_SCATTER_BLOCK:
        (void)rs_total(d, n, r, &off);
        c = (d->coll == C_REDUCE_SCATTER) ? d->vc[0][r] : d->count;
        for (i = 0; i < c; i++) {
            fold_elem(d, 0, n - 1, off + i, ex + i * d->es);
        }
        if (d->in_place) {
            *cmp = c; /* the rest of the vector is not defined afterwards */
        }
        break;
    default:
        break;
    }
}

/* ---------------------------------------------------------------- calls */

/* One call of the operation in the given mode (M_PERSIST: its init). */
#define CALL3(_name, ...) \
    ((mode == M_NB) ? amc_i##_name(__VA_ARGS__, req) \
                    : (mode == M_PERSIST) ? amc_##_name##_init(__VA_ARGS__, req) \
                                          : amc_##_name(__VA_ARGS__))

static int issue(const desc_t *d, rop_t *o, int n, int r, amc_comm_t comm, amc_op_t op,
                 int mode, amc_request_t *req)
{
    const void    *sb = o->send;
    void          *rb = o->recv;
    int            root = (r == d->root);
    size_t         c = d->count;
    amc_datatype_t dt = d->dt;

    (void)n;
    if (d->null_empty && (o->slen == 0)) {
        sb = NULL;
    }
    if (d->null_empty && (o->rlen == 0)) {
        rb = NULL;
    }
    switch (d->coll) {
    case C_BARRIER:
        return (mode == M_NB) ? amc_ibarrier(comm, req)
                              : (mode == M_PERSIST) ? amc_barrier_init(comm, req)
                                                    : amc_barrier(comm);
    case C_BCAST:
        return CALL3(bcast, rb, c, dt, d->root, comm);
    case C_REDUCE:
        if (d->in_place && root) {
            sb = AMC_IN_PLACE;
        }
        return CALL3(reduce, sb, root ? rb : NULL, c, dt, op, d->root, comm);
    case C_ALLREDUCE:
        return CALL3(allreduce, d->in_place ? AMC_IN_PLACE : sb, rb, c, dt, op, comm);
    case C_GATHER:
        if (d->in_place && root) {
            sb = AMC_IN_PLACE;
        }
        return CALL3(gather, sb, root ? rb : NULL, c, dt, d->root, comm);
    case C_GATHERV:
        if (d->in_place && root) {
            sb = AMC_IN_PLACE;
        }
        return CALL3(gatherv, sb, d->vc[0][r], root ? rb : NULL, root ? d->vc[0] : NULL,
                     root ? d->rd[r] : NULL, dt, d->root, comm);
    case C_SCATTER:
        return CALL3(scatter, root ? sb : NULL, (d->in_place && root) ? AMC_IN_PLACE : rb, c, dt,
                     d->root, comm);
    case C_SCATTERV:
        return CALL3(scatterv, root ? sb : NULL, root ? d->vc[0] : NULL, root ? d->sd[r] : NULL,
                     (d->in_place && root) ? AMC_IN_PLACE : rb, d->vc[0][r], dt, d->root, comm);
    case C_ALLGATHER:
        return CALL3(allgather, d->in_place ? AMC_IN_PLACE : sb, rb, c, dt, comm);
    case C_ALLGATHERV:
        return CALL3(allgatherv, d->in_place ? AMC_IN_PLACE : sb, d->vc[0][r], rb, d->vc[0],
                     d->rd[r], dt, comm);
    case C_ALLTOALL:
        return CALL3(alltoall, d->in_place ? AMC_IN_PLACE : sb, rb, c, dt, comm);
    case C_ALLTOALLV:
        return CALL3(alltoallv, d->in_place ? AMC_IN_PLACE : sb, d->in_place ? NULL : d->vc[r],
                     d->in_place ? NULL : d->sd[r], rb, d->vct[r], d->rd[r], dt, comm);
    case C_REDUCE_SCATTER:
        return CALL3(reduce_scatter, d->in_place ? AMC_IN_PLACE : sb, rb, d->vc[0], dt, op, comm);
    case C_REDUCE_SCATTER_BLOCK:
        return CALL3(reduce_scatter_block, d->in_place ? AMC_IN_PLACE : sb, rb, c, dt, op, comm);
    case C_SCAN:
        return CALL3(scan, d->in_place ? AMC_IN_PLACE : sb, rb, c, dt, op, comm);
    default:
        return CALL3(exscan, d->in_place ? AMC_IN_PLACE : sb, rb, c, dt, op, comm);
    }
}

static void describe(const run_t *R, int k, char *buf, size_t len)
{
    const desc_t *d = &R->ops[k];
    char          op[32];

    if (d->opkind == OP_PRE) {
        snprintf(op, sizeof(op), "op %d", d->pop);
    } else {
        snprintf(op, sizeof(op), "%s",
                 (d->opkind == OP_USER_COMM) ? "user op" :
                 (d->opkind == OP_USER_NONCOMM) ? "non-commutative user op" : "no op");
    }
    snprintf(buf, len, "%s n=%d seed=%llu op #%d: %s %s on comm %d (dt %d, count %zu, root %d, "
             "%s%s%s)", R->threaded ? "threaded" : "fake", R->n,
             (unsigned long long)R->seed, k, mode_names[d->mode], coll_names[d->coll], d->comm,
             (int)d->dt, d->count, d->root, op, d->in_place ? ", in place" : "",
             (d->tmpl >= 0) ? ", template" : "");
}

/* Checks rank r's results of operation k (r is its world rank). */
static void check_op(run_t *R, int k, int r)
{
    const desc_t  *d = &R->ops[k];
    rop_t         *o = &R->rop[k][r];
    int            cr = R->rk[r].crank[d->comm];
    unsigned char *ex;
    size_t         cmp, i, bad = 0, first = 0;
    char           what[256];

    ex = malloc((o->rlen > o->slen ? o->rlen : o->slen) * d->es + 8);
    CHECK(ex != NULL, "memory");
    if (ex == NULL) {
        return;
    }
    fill_expect(d, R->n, cr, ex, o->rlen, &cmp);
    for (i = 0; i < cmp; i++) {
        if (memcmp(o->recv + i * d->es, ex + i * d->es, d->es) != 0) {
            first = bad++ ? first : i;
        }
    }
    if ((o->state == S_DETACHED) && (bad == 0)) {
        __atomic_add_fetch(&detached_written, 1, __ATOMIC_RELAXED);
    }
    if (bad > 0) {
        char got[20], want[20];

        for (i = 0; i < d->es; i++) {
            snprintf(got + 2 * i, 3, "%02x", o->recv[first * d->es + i]);
            snprintf(want + 2 * i, 3, "%02x", ex[first * d->es + i]);
        }
        describe(R, k, what, sizeof(what));
        CHECK(0, "%s: rank %d (comm rank %d%s): %zu of %zu elements wrong, the first at %zu "
              "(bytes %s, expected %s)", what, r, cr,
              (o->state == S_DETACHED) ? ", freed while running" : "", bad, cmp, first, got,
              want);
    } else {
        CHECK(1, "results");
    }
    if (send_used(d, cr) && (o->slen > 0)) {
        fill_send(d, R->n, cr, ex);
        if (memcmp(o->send, ex, o->slen * d->es) != 0) {
            describe(R, k, what, sizeof(what));
            CHECK(0, "%s: rank %d changed its send buffer", what, r);
        }
    }
    free(ex);
}

static unsigned char *alloc_elems(size_t n, size_t es)
{
    unsigned char *p = malloc((n + 1) * es);

    if (p == NULL) {
        fprintf(stderr, "test_mixed_nb: out of memory\n");
        abort();
    }
    return p;
}

/* Buffers and inputs of rank r's operation k (not for a persistent start). */
static void prepare(run_t *R, int k, int r)
{
    const desc_t *d  = &R->ops[k];
    rop_t        *o  = &R->rop[k][r];
    int           cr = R->rk[r].crank[d->comm];

    o->slen = send_len(d, R->n, cr);
    o->rlen = recv_len(d, R->n, cr);
    if (d->tmpl < 0) {
        o->send = alloc_elems(o->slen, d->es);
        o->recv = alloc_elems(o->rlen, d->es);
    }
    fill_send(d, R->n, cr, o->send);
    fill_recv(d, R->n, cr, o->recv, o->rlen);
}

static void release_bufs(run_t *R, int k, int r)
{
    rop_t *o = &R->rop[k][r];

    if (R->ops[k].tmpl < 0) {
        free(o->send);
        free(o->recv);
    }
    o->send = NULL;
    o->recv = NULL;
}

static amc_op_t make_uop(const desc_t *d)
{
    amc_op_t op = -1;
    int      rc;

    if (d->opkind == OP_PRE) {
        return d->pop;
    }
    if (d->opkind == OP_NONE) {
        return -1;
    }
    rc = amc_op_create((d->opkind == OP_USER_COMM) ? uop_comm : uop_affine,
                       d->opkind == OP_USER_COMM, &op);
    CHECK(rc == AMC_SUCCESS, "amc_op_create: %s", amc_strerror(rc));
    return op;
}

static void drop_uop(const desc_t *d, amc_op_t *op)
{
    int rc;

    if ((d->opkind == OP_USER_COMM) || (d->opkind == OP_USER_NONCOMM)) {
        rc = amc_op_free(op);
        CHECK(rc == AMC_SUCCESS, "amc_op_free: %s", amc_strerror(rc));
    }
}

/* ---------------------------------------------------------------- one rank's steps */

static void op_done(run_t *R, int k, int r)
{
    R->rop[k][r].state = S_DONE;
    check_op(R, k, r);
    release_bufs(R, k, r);
    __atomic_add_fetch(&R->events, 1, __ATOMIC_RELAXED);
}

/* Slot s of rank r completed (its request released, or made inactive). */
static void slot_done(run_t *R, int r, int s, int status)
{
    rank_t *rk = &R->rk[r];
    int     k  = rk->slot_op[s];
    char    what[256];

    if (status != AMC_SUCCESS) {
        describe(R, k, what, sizeof(what));
        CHECK(0, "%s: rank %d completed with %s", what, r, amc_strerror(status));
    }
    if (R->ops[k].tmpl >= 0) {
        CHECK(rk->req[s] == rk->preq[R->ops[k].tmpl], "a persistent request stays allocated");
        rk->pslot[R->ops[k].tmpl] = -1;
    } else {
        CHECK(rk->req[s] == AMC_REQUEST_NULL, "a completed request is released");
    }
    rk->req[s]     = AMC_REQUEST_NULL;
    rk->slot_op[s] = -1;
    rk->live--;
    op_done(R, k, r);
}

static int free_slot(const rank_t *rk)
{
    int s;

    for (s = 0; s < MAX_WIN; s++) {
        if (rk->slot_op[s] < 0) {
            return s;
        }
    }
    return -1;
}

/* The pick-th live slot, counting round; -1 if none. */
static int pick_slot(const run_t *R, const rank_t *rk, uint64_t pick, int nonpersistent)
{
    int s, count = 0, want;

    for (s = 0; s < R->win; s++) {
        count += (rk->slot_op[s] >= 0) &&
                 (!nonpersistent || (R->ops[rk->slot_op[s]].tmpl < 0));
    }
    if (count == 0) {
        return -1;
    }
    want = (int)(pick % (uint64_t)count);
    for (s = 0; s < R->win; s++) {
        if ((rk->slot_op[s] >= 0) && (!nonpersistent || (R->ops[rk->slot_op[s]].tmpl < 0)) &&
            (want-- == 0)) {
            return s;
        }
    }
    return -1;
}

static int report(run_t *R, int r, int k, const char *call, int rc)
{
    char what[256];

    if (rc != AMC_SUCCESS) {
        describe(R, k, what, sizeof(what));
        CHECK(0, "%s: rank %d: %s: %s", what, r, call, amc_strerror(rc));
    }
    return rc;
}

/* Blocked rank r: one poll; the real call once it would return at once
 * (threaded: the real call now). Returns 1 once unblocked. */
static int poll_blocked(run_t *R, int r)
{
    rank_t *rk = &R->rk[r];
    int     s, flag = 0, idx = AMC_UNDEFINED, rc, ready;

    if (!R->threaded) {
        amc_context_progress(R->w.ctx[r]);
    }
    switch (rk->blocked) {
    case B_WAIT:
        s = rk->bslot;
        if (rk->bpoll && !R->threaded) {
            rc = amc_test(&rk->req[s], &flag);
            report(R, r, rk->slot_op[s], "amc_test", rc);
            if (!flag && (rc == AMC_SUCCESS)) {
                return 0;
            }
        } else {
            if (!R->threaded && !amc_request_is_complete(rk->req[s])) {
                return 0;
            }
            rc = amc_wait(&rk->req[s]);
        }
        slot_done(R, r, s, rc);
        break;
    case B_WAITALL:
        if (rk->bpoll && !R->threaded) {
            rc = amc_testall(R->win, rk->req, &flag);
            CHECK(rc == AMC_SUCCESS, "n=%d seed=%llu rank %d: amc_testall: %s", R->n,
                  (unsigned long long)R->seed, r, amc_strerror(rc));
            if (!flag && (rc == AMC_SUCCESS)) {
                return 0;
            }
        } else {
            for (s = 0, ready = 1; (s < R->win) && !R->threaded; s++) {
                ready &= (rk->slot_op[s] < 0) || amc_request_is_complete(rk->req[s]);
            }
            if (!ready) {
                return 0;
            }
            rc = amc_waitall(R->win, rk->req);
            CHECK(rc == AMC_SUCCESS, "n=%d seed=%llu rank %d: amc_waitall: %s", R->n,
                  (unsigned long long)R->seed, r, amc_strerror(rc));
        }
        for (s = 0; s < R->win; s++) {
            if (rk->slot_op[s] >= 0) {
                slot_done(R, r, s, AMC_SUCCESS);
            }
        }
        break;
    case B_WAITANY:
        for (s = 0, ready = R->threaded; (s < R->win) && !ready; s++) {
            ready = (rk->slot_op[s] >= 0) && amc_request_is_complete(rk->req[s]);
        }
        if (!ready) {
            return 0;
        }
        rc = amc_waitany(R->win, rk->req, &idx);
        CHECK((idx >= 0) && (idx < R->win) && (rk->slot_op[idx] >= 0),
              "n=%d seed=%llu rank %d: amc_waitany gave index %d", R->n,
              (unsigned long long)R->seed, r, idx);
        if ((idx >= 0) && (idx < R->win) && (rk->slot_op[idx] >= 0)) {
            slot_done(R, r, idx, rc);
        }
        break;
    case B_COLL:
        if (!R->threaded && !amc_request_is_complete(rk->breq)) {
            return 0;
        }
        rc = amc_wait(&rk->breq);
        report(R, r, rk->bop, "amc_wait (a blocking call)", rc);
        CHECK(rk->breq == AMC_REQUEST_NULL, "released");
        op_done(R, rk->bop, r);
        break;
    default:
        break;
    }
    rk->blocked = B_NONE;
    return 1;
}

static void block(run_t *R, int r, int what, int slot, int poll)
{
    rank_t *rk = &R->rk[r];

    rk->blocked = what;
    rk->bslot   = slot;
    rk->bpoll   = poll;
    (void)poll_blocked(R, r); /* it may return at once */
}

/* Rank r starts its next operation, if it can; 1 if it did. */
static int start_next(run_t *R, int r)
{
    rank_t  *rk = &R->rk[r];
    int      k  = rk->next_op, s, rc, t;
    desc_t  *d  = &R->ops[k];
    rop_t   *o  = &R->rop[k][r];
    amc_comm_t comm = rk->comm[d->comm];
    amc_op_t op;

    if (d->mode == M_PERSIST) {
        t = d->tmpl;
        if (rk->pslot[t] >= 0) {
            /* its last start first: MPI forbids starting an active request */
            block(R, r, B_WAIT, rk->pslot[t], 0);
            return 0;
        }
        if (!rk->pinit[t]) {
            rop_t proto;

            memset(&proto, 0, sizeof(proto));
            proto.slen     = send_len(d, R->n, rk->crank[d->comm]);
            proto.rlen     = recv_len(d, R->n, rk->crank[d->comm]);
            rk->psend[t]   = alloc_elems(proto.slen, d->es);
            rk->precv[t]   = alloc_elems(proto.rlen, d->es);
            proto.send     = rk->psend[t];
            proto.recv     = rk->precv[t];
            rk->puop[t]    = make_uop(d);
            rc = issue(d, &proto, R->n, rk->crank[d->comm], comm, rk->puop[t], M_PERSIST,
                       &rk->preq[t]);
            report(R, r, k, "init", rc);
            rk->pinit[t] = 1;
        }
        o->send = rk->psend[t];
        o->recv = rk->precv[t];
        prepare(R, k, r);
        s  = free_slot(rk);
        rc = amc_start(&rk->preq[t]);
        report(R, r, k, "amc_start", rc);
        rk->req[s]     = rk->preq[t];
        rk->slot_op[s] = k;
        rk->pslot[t]   = s;
        rk->live++;
    } else {
        prepare(R, k, r);
        op = make_uop(d);
        if (d->mode == M_NB) {
            s  = free_slot(rk);
            rc = issue(d, o, R->n, rk->crank[d->comm], comm, op, M_NB, &rk->req[s]);
            report(R, r, k, "start", rc);
            rk->slot_op[s] = k;
            rk->live++;
        } else if ((R->n == 1) || R->threaded) {
            /* the real blocking call: it returns when done */
            rc = issue(d, o, R->n, rk->crank[d->comm], comm, op, M_BLOCK, NULL);
            report(R, r, k, "blocking call", rc);
            o->state = S_RUN;
            drop_uop(d, &op);
            rk->next_op++;
            op_done(R, k, r);
            return 1;
        } else {
            rc = issue(d, o, R->n, rk->crank[d->comm], comm, op, M_NB, &rk->breq);
            report(R, r, k, "start (of a blocking call)", rc);
            rk->bop = k;
        }
        /* freed right after the start: the collective bound it */
        drop_uop(d, &op);
    }
    o->state = S_RUN;
    rk->next_op++;
    __atomic_add_fetch(&R->events, 1, __ATOMIC_RELAXED);
    if (d->mode == M_BLOCK) {
        block(R, r, B_COLL, -1, 0);
    }
    return 1;
}

/* The j-th call of the call stream, alike on every rank. */
static int call_kind(const run_t *R, long j, uint64_t *param)
{
    uint64_t h = mix(R->seed * 0x100000001b3ull + (uint64_t)j);
    unsigned x = (unsigned)(h % 100);

    *param = h >> 8;
    if (x < 40) {
        return K_START;
    } else if (x < 52) {
        return K_TEST;
    } else if (x < 62) {
        return K_WAIT;
    } else if (x < 70) {
        return K_TESTALL;
    } else if (x < 75) {
        return K_WAITALL;
    } else if (x < 84) {
        return K_WAITANY;
    } else if (x < 89) {
        return K_TESTEACH;
    }
    return K_FREE;
}

/* One turn of rank r; returns 1 if it started or completed something. */
static int turn(run_t *R, int r)
{
    rank_t  *rk = &R->rk[r];
    uint64_t param;
    int      kind, s, rc, flag, did = 0;
    long     before = (long)R->events;

    if (rk->blocked != B_NONE) {
        return poll_blocked(R, r);
    }
    if ((rk->next_op == R->nops) && (rk->live == 0)) {
        if (!R->threaded) {
            amc_context_progress(R->w.ctx[r]);
        }
        rk->finished = 1;
        return 0;
    }
    kind = call_kind(R, rk->next_call++, &param);
    if ((kind != K_START) && (rk->live == 0)) {
        return 0; /* nothing to complete */
    }
    switch (kind) {
    case K_START:
        if ((rk->next_op < R->nops) && (rk->live < R->win)) {
            did = start_next(R, r);
        }
        break;
    case K_TEST:
        s  = pick_slot(R, rk, param, 0);
        rc = amc_test(&rk->req[s], &flag);
        report(R, r, rk->slot_op[s], "amc_test", rc);
        if (flag || (rc != AMC_SUCCESS)) {
            slot_done(R, r, s, rc);
        }
        break;
    case K_WAIT:
        block(R, r, B_WAIT, pick_slot(R, rk, param, 0), (int)(param >> 40) & 1);
        break;
    case K_TESTALL:
        rc = amc_testall(R->win, rk->req, &flag);
        CHECK(rc == AMC_SUCCESS, "n=%d seed=%llu rank %d: amc_testall: %s", R->n,
              (unsigned long long)R->seed, r, amc_strerror(rc));
        for (s = 0; (s < R->win) && flag; s++) {
            if (rk->slot_op[s] >= 0) {
                slot_done(R, r, s, AMC_SUCCESS);
            }
        }
        break;
    case K_WAITALL:
        block(R, r, B_WAITALL, -1, (int)(param >> 40) & 1);
        break;
    case K_WAITANY:
        block(R, r, B_WAITANY, -1, 0);
        break;
    case K_TESTEACH:
        for (s = 0; s < R->win; s++) {
            if (rk->slot_op[s] >= 0) {
                rc = amc_test(&rk->req[s], &flag);
                report(R, r, rk->slot_op[s], "amc_test", rc);
                if (flag || (rc != AMC_SUCCESS)) {
                    slot_done(R, r, s, rc);
                }
            }
        }
        break;
    default:
        /* amc_request_free of a running (or finished) non-persistent one */
        s = pick_slot(R, rk, param, 1);
        if ((s >= 0) && (!R->threaded || !R->pt)) {
            int k = rk->slot_op[s];

            rc = amc_request_free(&rk->req[s]);
            report(R, r, k, "amc_request_free", rc);
            CHECK(rk->req[s] == AMC_REQUEST_NULL, "amc_request_free clears the handle");
            rk->slot_op[s] = -1;
            rk->live--;
            R->rop[k][r].state = S_DETACHED;
            did                = 1;
        }
        break;
    }
    return did || ((long)R->events != before);
}

/* ---------------------------------------------------------------- a run */

static void gen_program(run_t *R, amc_test_rng_t *g)
{
    int k, t;

    for (t = 0; t < NTMPL; t++) {
        gen_desc(&R->tmpl[t], R->n, g);
        R->tmpl[t].mode = M_PERSIST;
        R->tmpl[t].tmpl = t;
    }
    R->nops = 24 + (int)draw(g, MAX_OPS - 23);
    /* the window: as nonblocking3's 20 half the time, else smaller */
    R->win = draw(g, 2) ? MAX_WIN : 1 + (int)draw(g, MAX_WIN);
    for (k = 0; k < R->nops; k++) {
        size_t x = draw(g, 100);

        if (x < 20) {
            t          = (int)draw(g, NTMPL);
            R->ops[k]  = R->tmpl[t];
        } else {
            gen_desc(&R->ops[k], R->n, g);
            R->ops[k].mode = (x < 80) ? M_NB : M_BLOCK;
        }
        R->ops[k].key = mix(R->seed * 1000003u + (uint64_t)k);
    }
}

static void init_ranks(run_t *R)
{
    int r, s, t, c;

    for (r = 0; r < R->n; r++) {
        rank_t *rk = &R->rk[r];

        for (s = 0; s < MAX_WIN; s++) {
            rk->req[s]     = AMC_REQUEST_NULL;
            rk->slot_op[s] = -1;
        }
        for (t = 0; t < NTMPL; t++) {
            rk->pslot[t] = -1;
            rk->preq[t]  = AMC_REQUEST_NULL;
        }
        rk->breq = AMC_REQUEST_NULL;
        for (c = 0; c < NCOMM; c++) {
            rk->crank[c] = (c == NCOMM - 1) ? R->n - 1 - r : r; /* the split reverses */
        }
    }
}

/* The end of a run on one rank: persistent requests and their ops. */
static void free_persistent(run_t *R, int r)
{
    rank_t *rk = &R->rk[r];
    int     t, rc;

    for (t = 0; t < NTMPL; t++) {
        if (!rk->pinit[t]) {
            continue;
        }
        rc = amc_request_free(&rk->preq[t]);
        CHECK((rc == AMC_SUCCESS) && (rk->preq[t] == AMC_REQUEST_NULL),
              "n=%d seed=%llu rank %d: freeing persistent request %d: %s", R->n,
              (unsigned long long)R->seed, r, t, amc_strerror(rc));
        drop_uop(&R->tmpl[t], &rk->puop[t]);
        free(rk->psend[t]);
        free(rk->precv[t]);
    }
}

/* Checks rank r's detached operations, once they ended. */
static void check_detached(run_t *R, int r)
{
    int k;

    for (k = 0; k < R->nops; k++) {
        if (R->rop[k][r].state == S_DETACHED) {
            check_op(R, k, r);
            release_bufs(R, k, r);
            R->rop[k][r].state = S_DONE;
        }
    }
}

/* Collectives still in rank r's slots on any of its communicators (a
 * freed request's included): none once everything ended. */
static unsigned slots_taken(const run_t *R, int r)
{
    unsigned taken = 0;
    int      c;

    for (c = 0; c < NCOMM; c++) {
        taken += __atomic_load_n(&R->rk[r].comm[c]->ctrl.active, __ATOMIC_RELAXED);
    }
    return taken;
}

static void dump_hang(run_t *R)
{
    int r;

    fprintf(stderr, "n=%d seed=%llu: hang; %zu deliverable\n", R->n,
            (unsigned long long)R->seed, amc_fake_deliverable(R->w.fabric));
    for (r = 0; r < R->n; r++) {
        const rank_t *rk = &R->rk[r];
        int           s;

        fprintf(stderr, "  rank %d: next op %d of %d, call %ld, blocked %d (slot %d, op %d), "
                "outstanding:", r, rk->next_op, R->nops, rk->next_call, rk->blocked, rk->bslot,
                (rk->blocked == B_COLL) ? rk->bop
                                        : (rk->bslot >= 0 ? rk->slot_op[rk->bslot] : -1));
        for (s = 0; s < R->win; s++) {
            if (rk->slot_op[s] >= 0) {
                fprintf(stderr, " %d%s", rk->slot_op[s],
                        amc_request_is_complete(rk->req[s]) ? "(done)" : "");
            }
        }
        fputc('\n', stderr);
    }
}

static void run_fake(int n, uint64_t seed, amc_fake_completion_t completion)
{
    run_t         *R = calloc(1, sizeof(*R));
    amc_test_rng_t g, sched;
    amc_comm_t     out[MAX_N];
    int            r, c, order[MAX_N], i, all, rc, stall = 0, key[MAX_N], color[MAX_N];
    unsigned long  rounds;
    size_t         cnt;

    CHECK(R != NULL, "memory");
    if (R == NULL) {
        return;
    }
    R->n    = n;
    R->seed = seed;
    amc_test_rng_seed(&g, seed);
    amc_test_rng_seed(&sched, seed ^ 0x5eedull);
    gen_program(R, &g);
    init_ranks(R);

    rc = amc_test_world_create(&R->w, n, completion, NULL);
    CHECK(rc == AMC_SUCCESS, "world: %s", amc_strerror(rc));
    if (rc != AMC_SUCCESS) {
        free(R);
        return;
    }
    for (r = 0; r < n; r++) {
        R->rk[r].comm[0] = amc_test_world_comm(&R->w, r);
        color[r]         = 0;
        key[r]           = n - 1 - r;
    }
    for (c = 1; c < NCOMM; c++) {
        rc = amc_test_world_create_comms(&R->w, NULL, c == NCOMM - 1, color, key, out);
        CHECK(rc == AMC_SUCCESS, "n=%d seed=%llu: comm %d: %s", n, (unsigned long long)seed, c,
              amc_strerror(rc));
        for (r = 0; r < n; r++) {
            R->rk[r].comm[c] = out[r];
        }
    }
    for (r = 0; r < n; r++) {
        for (c = 0; c < NCOMM; c++) {
            int cr = -1;

            (void)amc_comm_rank(R->rk[r].comm[c], &cr);
            CHECK(cr == R->rk[r].crank[c], "comm %d rank %d is %d", c, r, cr);
        }
    }

    for (rounds = 0, all = 0; !all && (stall < 200); rounds++) {
        unsigned long ev = R->events;
        int           moved = 0;

        shuffle(order, n, &sched);
        for (i = 0, all = 1; i < n; i++) {
            r = order[i];
            moved |= turn(R, r);
            all &= R->rk[r].finished && (R->rk[r].blocked == B_NONE);
            /* between turns: 0..2 deliveries in a random order */
            for (c = (int)amc_test_rng_below(&sched, 3); c > 0; c--) {
                cnt = amc_fake_deliverable(R->w.fabric);
                if (cnt > 0) {
                    moved |= amc_fake_deliver(R->w.fabric, amc_test_rng_below(&sched, cnt));
                }
            }
        }
        cnt = amc_fake_deliverable(R->w.fabric);
        if (!moved && (cnt > 0)) {
            moved = amc_fake_deliver(R->w.fabric, amc_test_rng_below(&sched, cnt));
        }
        stall = (moved || (R->events != ev)) ? 0 : stall + 1;
    }
    CHECK(all, "n=%d seed=%llu: ranks stuck after %lu rounds", n, (unsigned long long)seed,
          rounds);
    if (!all) {
        dump_hang(R);
    } else {
        /* detached operations finish unobserved: deliver everything */
        for (i = 0; i < 1000000; i++) {
            int moved = 0;

            for (r = 0; r < n; r++) {
                moved |= amc_context_progress(R->w.ctx[r]);
            }
            cnt = amc_fake_deliverable(R->w.fabric);
            if (cnt > 0) {
                moved |= amc_fake_deliver(R->w.fabric, amc_test_rng_below(&sched, cnt));
            }
            if (!moved && (cnt == 0)) {
                break;
            }
        }
        amc_test_world_settle(&R->w, "after the program");
        for (r = 0; r < n; r++) {
            CHECK(slots_taken(R, r) == 0, "n=%d seed=%llu rank %d: %u collectives never ended",
                  n, (unsigned long long)seed, r, slots_taken(R, r));
            check_detached(R, r);
            free_persistent(R, r);
            for (c = 1; c < NCOMM; c++) {
                rc = amc_comm_free(&R->rk[r].comm[c]);
                CHECK(rc == AMC_SUCCESS, "comm_free: %s", amc_strerror(rc));
            }
        }
        amc_test_world_settle(&R->w, "after the frees");
        CHECK(amc_fake_header_violations(R->w.fabric) == 0, "n=%d seed=%llu: header reused", n,
              (unsigned long long)seed);
    }
    amc_test_world_destroy(&R->w);
    for (i = 0; i < R->nops; i++) {
        for (r = 0; r < n; r++) {
            if (R->rop[i][r].state != S_DONE) {
                release_bufs(R, i, r);
            }
        }
    }
    if (amc_test_failures() > fail_base) {
        fprintf(stderr, "  (failed: n=%d seed=%llu; AMCTEST_MIXED_N=%d AMCTEST_MIXED_SEED=%llu "
                "runs it alone)\n", n, (unsigned long long)seed, n, (unsigned long long)seed);
        fail_base = amc_test_failures();
    }
    free(R);
}

/* ---------------------------------------------------------------- threaded */

typedef struct {
    run_t *R;
    int    rank;
} thr_arg_t;

static double now_sec(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void *rank_thread(void *arg)
{
    thr_arg_t *a  = arg;
    run_t     *R  = a->R;
    int        r  = a->rank, c, rc;
    rank_t    *rk = &R->rk[r];
    double     t0;

    rk->comm[0] = amc_test_world_comm(&R->w, r);
    for (c = 1; c < NCOMM; c++) {
        rc = (c == NCOMM - 1) ? amc_comm_split(rk->comm[0], 0, R->n - 1 - r, &rk->comm[c])
                              : amc_comm_dup(rk->comm[0], &rk->comm[c]);
        CHECK(rc == AMC_SUCCESS, "threaded: comm %d: %s", c, amc_strerror(rc));
    }
    /* after a failure (a wait that timed out included) every rank stops:
     * the program cannot go on in step */
    while ((!rk->finished || (rk->blocked != B_NONE)) && (amc_test_failures() == fail_base)) {
        (void)turn(R, r);
    }
    if (amc_test_failures() != fail_base) {
        return NULL;
    }
    /* freed requests: progress until every rank's collectives all ended
     * (this rank's progress delivers its messages) */
    t0 = now_sec();
    while ((slots_taken(R, r) > 0) && (now_sec() - t0 < 10.0)) {
        amc_context_progress(R->w.ctx[r]);
    }
    CHECK(slots_taken(R, r) == 0, "threaded n=%d seed=%llu rank %d: %u collectives never ended",
          R->n, (unsigned long long)R->seed, r, slots_taken(R, r));
    check_detached(R, r);
    __atomic_add_fetch(&R->ended, 1, __ATOMIC_ACQ_REL);
    while ((__atomic_load_n(&R->ended, __ATOMIC_ACQUIRE) < R->n) &&
           (now_sec() - t0 < 10.0)) {
        amc_context_progress(R->w.ctx[r]);
    }
    for (c = 0; (c < NCOMM) && (amc_test_failures() == fail_base); c++) {
        rc = amc_barrier(rk->comm[c]);
        CHECK(rc == AMC_SUCCESS, "threaded: the last barrier: %s", amc_strerror(rc));
    }
    free_persistent(R, r);
    for (c = 1; c < NCOMM; c++) {
        rc = amc_comm_free(&rk->comm[c]);
        CHECK(rc == AMC_SUCCESS, "comm_free: %s", amc_strerror(rc));
    }
    return NULL;
}

static void run_threaded(int n, uint64_t seed, int pt)
{
    run_t         *R = calloc(1, sizeof(*R));
    amc_test_rng_t g;
    pthread_t      th[MAX_N];
    thr_arg_t      args[MAX_N];
    int            r, k, rc;

    CHECK(R != NULL, "memory");
    if (R == NULL) {
        return;
    }
    R->n        = n;
    R->seed     = seed;
    R->threaded = 1;
    R->pt       = pt;
    amc_test_rng_seed(&g, seed);
    gen_program(R, &g);
    init_ranks(R);
    rc = amc_test_world_create_threaded(&R->w, n, pt, 0);
    CHECK(rc == AMC_SUCCESS, "threaded world: %s", amc_strerror(rc));
    if (rc != AMC_SUCCESS) {
        free(R);
        return;
    }
    for (r = 0; r < n; r++) {
        args[r].R    = R;
        args[r].rank = r;
        CHECK(pthread_create(&th[r], NULL, rank_thread, &args[r]) == 0, "pthread_create");
    }
    for (r = 0; r < n; r++) {
        pthread_join(th[r], NULL);
    }
    amc_test_world_destroy(&R->w);
    for (k = 0; k < R->nops; k++) {
        for (r = 0; r < n; r++) {
            if (R->rop[k][r].state != S_DONE) {
                release_bufs(R, k, r);
            }
        }
    }
    if (amc_test_failures() > fail_base) {
        fprintf(stderr, "  (failed: threaded n=%d seed=%llu progress thread %d)\n", n,
                (unsigned long long)seed, pt);
        fail_base = amc_test_failures();
    }
    free(R);
}

int main(void)
{
    static const amc_fake_completion_t modes[] = {
        AMC_FAKE_COMPLETE_ON_DELIVERY, AMC_FAKE_COMPLETE_ON_SEND, AMC_FAKE_COMPLETE_LATER
    };
    static const int tsizes[] = { 2, 3, 5, 8 };
    const char      *one_seed = getenv("AMCTEST_MIXED_SEED");
    const char      *one_n    = getenv("AMCTEST_MIXED_N");
    const char      *more     = getenv("AMCTEST_MIXED_SEEDS");
    uint64_t         s, nseeds = amc_test_quick() ? 48 : 128, seed;
    int              n;
    unsigned         i;
    double           t0 = now_sec();

    if (more != NULL) {
        nseeds = strtoull(more, NULL, 10);
    }
    if (one_seed != NULL) {
        seed = strtoull(one_seed, NULL, 10);
        n    = (one_n != NULL) ? atoi(one_n) : 4;
        run_fake(n, seed, modes[seed % 3]);
        return amc_test_summary("test_mixed_nb");
    }
    for (n = 1; n <= MAX_N; n++) {
        for (s = 1; s <= nseeds; s++) {
            seed = s * 7919 + (uint64_t)n;
            run_fake(n, seed, modes[seed % 3]);
        }
        printf("fake world, N=%d: %llu programs (%.1f s)\n", n, (unsigned long long)nseeds,
               now_sec() - t0);
        fflush(stdout);
    }
    /* a rank of the threaded world that lost step would wait for ever in
     * a real wait: fail it instead */
    setenv("AMC_TIMEOUT", "10", 0);
    for (i = 0; i < NELEM(tsizes); i++) {
        for (s = 1; s <= (amc_test_quick() ? 1u : 2u); s++) {
            run_threaded(tsizes[i], s * 104729 + (uint64_t)tsizes[i], (int)(s & 1));
        }
        printf("threaded world, N=%d: done (%.1f s)\n", tsizes[i], now_sec() - t0);
        fflush(stdout);
    }
    printf("requests freed while running: %lu ended with their results\n", detached_written);
    return amc_test_summary("test_mixed_nb");
}
