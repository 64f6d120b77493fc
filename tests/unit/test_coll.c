/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Data collectives on the fake transport: each run gives every rank a random
 * sequence of collectives (kind, root, count, in place or not, op), posted
 * non-blocking with random lateness, while the fabric delivers in a seeded
 * random order. Results are checked against values computed here. A
 * non-commutative user op (2x2 matrix product) checks MPI's rank order.
 * The vector forms get random per-rank counts (zeros included) and
 * displacements (blocks in random order with gaps); the whole receive
 * buffer is compared, so writes outside the blocks show too.
 */
#include "tests/unit/harness.h"
#include "am_coll/sched/sched.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_N    17
#define MAX_OPS  6
#define MAX_CNT  12   /* elements per rank (multiple of 4 for the matrix op) */
#define MAX_VCNT 8    /* v-forms: elements per block, placed in a MAX_CNT slot */
#define BUF_ELEM (MAX_N * MAX_CNT)

static amc_op_t matmul_op = -1;

/* 2x2 uint32 matrices, row-major in groups of 4: inout = in x inout. */
static void matmul(const void *in_v, void *inout_v, size_t count, amc_datatype_t dt)
{
    const uint32_t *a = in_v;
    uint32_t       *b = inout_v, r[4];
    size_t          i;

    (void)dt;
    for (i = 0; i + 4 <= count; i += 4) {
        r[0] = a[i] * b[i] + a[i + 1] * b[i + 2];
        r[1] = a[i] * b[i + 1] + a[i + 1] * b[i + 3];
        r[2] = a[i + 2] * b[i] + a[i + 3] * b[i + 2];
        r[3] = a[i + 2] * b[i + 1] + a[i + 3] * b[i + 3];
        memcpy(&b[i], r, sizeof(r));
    }
}

typedef struct {
    int      coll, root, in_place;
    size_t   count;
    amc_op_t op;
} op_desc_t;

typedef struct {
    uint32_t      send[MAX_N][BUF_ELEM];
    uint32_t      recv[MAX_N][BUF_ELEM];
    uint32_t      expect[MAX_N][BUF_ELEM];
    int           check[MAX_N];        /* whether rank's recv is defined */
    size_t        cmp[MAX_N];          /* elements of recv compared */
    /* v-forms: vc[i][j] elements from rank i to rank j (alltoallv), else
     * vc[0][j] is rank j's block; vct the transpose; sd/rd[r][j] rank r's
     * displacement of block j in its send/receive buffer. empty: all
     * counts 0 and NULL buffers. */
    size_t        vc[MAX_N][MAX_N], vct[MAX_N][MAX_N], sd[MAX_N][MAX_N], rd[MAX_N][MAX_N];
    int           empty;
    amc_request_t req[MAX_N];
    int           posted[MAX_N], done[MAX_N];
} op_state_t;

static uint32_t value(uint64_t seed, int op, int rank, size_t i)
{
    uint64_t x = seed * 1000003u + (uint64_t)op * 7919u + (uint64_t)rank * 104729u + i * 31u;

    x ^= x >> 13;
    x *= 0x9e3779b97f4a7c15ull;
    return (uint32_t)(x >> 40) % 1000u;
}

/* acc = acc (op) x in MPI's order */
static void fold(amc_op_t op, uint32_t *acc, const uint32_t *x, size_t count)
{
    uint32_t tmp[BUF_ELEM];
    size_t   i;

    if (op == AMC_SUM) {
        for (i = 0; i < count; i++) {
            acc[i] += x[i];
        }
        return;
    }
    memcpy(tmp, x, count * sizeof(uint32_t));
    matmul(acc, tmp, count, AMC_UINT32);
    memcpy(acc, tmp, count * sizeof(uint32_t));
}

/* dst[doff..] = src[soff..], n elements; an empty block's displacement is
 * arbitrary, so it is not even added then. */
static void copy_blk(uint32_t *dst, size_t doff, const uint32_t *src, size_t soff, size_t n)
{
    if (n > 0) {
        memcpy(dst + doff, src + soff, n * 4);
    }
}

static void shuffle(int *perm, int n, amc_test_rng_t *rng)
{
    int i, j, t;

    for (i = 0; i < n; i++) {
        perm[i] = i;
    }
    for (i = n - 1; i > 0; i--) {
        j       = (int)amc_test_rng_below(rng, (size_t)i + 1);
        t       = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
}

/* Counts and displacements of the v-forms: blocks of 0..MAX_VCNT elements
 * (multiples of 4 for reduce_scatter's matrices; symmetric for in-place
 * alltoallv, as MPI requires), each in its own MAX_CNT slot, slots in a
 * random order; an empty block often gets an absurd displacement. */
static void layout(const op_desc_t *d, op_state_t *st, int n, amc_test_rng_t *rng)
{
    int    perm[MAX_N], i, j, r, v = (d->coll == AMC_COLL_ALLTOALLV);
    size_t step = (d->coll == AMC_COLL_REDUCE_SCATTER) ? 4 : 1;

    st->empty = (d->count == 0);
    for (i = 0; i < n; i++) {
        for (j = 0; j < n; j++) {
            if (st->empty) {
                st->vc[i][j] = 0;
            } else if (v && d->in_place && (j < i)) {
                st->vc[i][j] = st->vc[j][i];
            } else {
                st->vc[i][j] = (amc_test_rng_below(rng, 3) == 0) ? 0 :
                               step * (1 + amc_test_rng_below(rng, MAX_VCNT / step));
            }
        }
    }
    for (i = 0; i < n; i++) {
        for (j = 0; j < n; j++) {
            st->vct[i][j] = st->vc[j][i];
        }
    }
    for (r = 0; r < n; r++) {
        shuffle(perm, n, rng);
        for (j = 0; j < n; j++) {
            st->rd[r][j] = (size_t)perm[j] * MAX_CNT +
                           amc_test_rng_below(rng, MAX_CNT - MAX_VCNT + 1);
            if (((v ? st->vc[j][r] : st->vc[0][j]) == 0) && amc_test_rng_below(rng, 2)) {
                st->rd[r][j] = (size_t)1 << 40;
            }
        }
        shuffle(perm, n, rng);
        for (j = 0; j < n; j++) {
            st->sd[r][j] = (size_t)perm[j] * MAX_CNT +
                           amc_test_rng_below(rng, MAX_CNT - MAX_VCNT + 1);
            if (((v ? st->vc[r][j] : st->vc[0][j]) == 0) && amc_test_rng_below(rng, 2)) {
                st->sd[r][j] = (size_t)1 << 40;
            }
        }
    }
}

static void prepare(const op_desc_t *d, op_state_t *st, int n, uint64_t seed, int opi,
                    amc_test_rng_t *rng)
{
    uint32_t acc[BUF_ELEM];
    size_t   c = d->count, i, off, total;
    int      r, j;

    memset(st, 0, sizeof(*st));
    for (r = 0; r < n; r++) {
        for (i = 0; i < BUF_ELEM; i++) {
            st->send[r][i]   = value(seed, opi, r, i);
            st->recv[r][i]   = 0xdeadbeefu;
            st->expect[r][i] = 0xdeadbeefu;
        }
        st->cmp[r] = BUF_ELEM;
    }
    layout(d, st, n, rng);
    switch (d->coll) {
    case AMC_COLL_BCAST:
        for (r = 0; r < n; r++) {
            if (r == d->root) {
                memcpy(st->recv[r], st->send[r], c * 4);
            }
            memcpy(st->expect[r], st->send[d->root], c * 4);
            st->check[r] = 1;
        }
        break;
    case AMC_COLL_REDUCE:
    case AMC_COLL_ALLREDUCE:
        memcpy(acc, st->send[0], c * 4);
        for (r = 1; r < n; r++) {
            fold(d->op, acc, st->send[r], c);
        }
        for (r = 0; r < n; r++) {
            st->check[r] = (d->coll == AMC_COLL_ALLREDUCE) || (r == d->root);
            memcpy(st->expect[r], acc, c * 4);
            if (d->in_place && st->check[r]) {
                memcpy(st->recv[r], st->send[r], c * 4);
            }
        }
        break;
    case AMC_COLL_GATHER:
    case AMC_COLL_ALLGATHER:
        for (r = 0; r < n; r++) {
            st->check[r] = (d->coll == AMC_COLL_ALLGATHER) || (r == d->root);
            for (j = 0; j < n; j++) {
                memcpy(&st->expect[r][(size_t)j * c], st->send[j], c * 4);
            }
            if (d->in_place && st->check[r]) {
                memcpy(&st->recv[r][(size_t)r * c], st->send[r], c * 4);
            }
        }
        break;
    case AMC_COLL_SCATTER:
        for (r = 0; r < n; r++) {
            st->check[r] = !(d->in_place && (r == d->root));
            memcpy(st->expect[r], &st->send[d->root][(size_t)r * c], c * 4);
        }
        break;
    case AMC_COLL_ALLTOALL:
        for (r = 0; r < n; r++) {
            st->check[r] = 1;
            for (j = 0; j < n; j++) {
                memcpy(&st->expect[r][(size_t)j * c], &st->send[j][(size_t)r * c], c * 4);
            }
            if (d->in_place) {
                memcpy(st->recv[r], st->send[r], (size_t)n * c * 4);
            }
        }
        break;
    case AMC_COLL_GATHERV:
        r            = d->root;
        st->check[r] = 1;
        for (j = 0; j < n; j++) {
            copy_blk(st->expect[r], st->rd[r][j], st->send[j], 0, st->vc[0][j]);
        }
        if (d->in_place) {
            copy_blk(st->recv[r], st->rd[r][r], st->send[r], 0, st->vc[0][r]);
        }
        break;
    case AMC_COLL_SCATTERV:
        for (r = 0; r < n; r++) {
            st->check[r] = !(d->in_place && (r == d->root));
            copy_blk(st->expect[r], 0, st->send[d->root], st->sd[d->root][r], st->vc[0][r]);
        }
        break;
    case AMC_COLL_ALLGATHERV:
        for (r = 0; r < n; r++) {
            st->check[r] = 1;
            for (j = 0; j < n; j++) {
                copy_blk(st->expect[r], st->rd[r][j], st->send[j], 0, st->vc[0][j]);
            }
            if (d->in_place) {
                copy_blk(st->recv[r], st->rd[r][r], st->send[r], 0, st->vc[0][r]);
            }
        }
        break;
    case AMC_COLL_ALLTOALLV:
        for (r = 0; r < n; r++) {
            st->check[r] = 1;
            for (j = 0; j < n; j++) {
                copy_blk(st->expect[r], st->rd[r][j], st->send[j], st->sd[j][r], st->vc[j][r]);
                if (d->in_place) {
                    /* the block for j is where j's block will land */
                    copy_blk(st->recv[r], st->rd[r][j], st->send[r], st->sd[r][j],
                             st->vc[r][j]);
                }
            }
        }
        break;
    case AMC_COLL_REDUCE_SCATTER_BLOCK:
    case AMC_COLL_REDUCE_SCATTER:
        total = 0;
        for (j = 0; j < n; j++) {
            if (d->coll == AMC_COLL_REDUCE_SCATTER_BLOCK) {
                st->vc[0][j] = c;
            }
            total += st->vc[0][j];
        }
        memcpy(acc, st->send[0], total * 4);
        for (r = 1; r < n; r++) {
            fold(d->op, acc, st->send[r], total);
        }
        for (r = 0, off = 0; r < n; off += st->vc[0][r], r++) {
            st->check[r] = 1;
            copy_blk(st->expect[r], 0, acc, off, st->vc[0][r]);
            if (d->in_place) {
                /* the rest of the input vector is not defined afterwards */
                memcpy(st->recv[r], st->send[r], total * 4);
                st->cmp[r] = st->vc[0][r];
            }
        }
        break;
    case AMC_COLL_SCAN:
    case AMC_COLL_EXSCAN:
        memcpy(acc, st->send[0], c * 4);
        for (r = 0; r < n; r++) {
            st->check[r] = 1;
            if (d->in_place) {
                memcpy(st->recv[r], st->send[r], c * 4);
            }
            if (d->coll == AMC_COLL_SCAN) {
                if (r > 0) {
                    fold(d->op, acc, st->send[r], c);
                }
                memcpy(st->expect[r], acc, c * 4);
            } else if (r == 0) {
                /* undefined in MPI; left alone here. Often not even given. */
                memcpy(st->expect[0], st->recv[0], sizeof(st->recv[0]));
                st->check[0] = d->in_place || !(d->root & 1);
            } else {
                memcpy(st->expect[r], acc, c * 4);
                fold(d->op, acc, st->send[r], c);
            }
        }
        break;
    }
}

/* The collectives added with the v-forms: no buffers where there is no data,
 * no count arrays where they are not significant. */
static int post_new(const op_desc_t *d, op_state_t *st, amc_comm_t comm, int r)
{
    const void *sb = d->in_place ? AMC_IN_PLACE : (const void *)st->send[r];
    void       *rb = st->recv[r];
    int         root = (r == d->root);

    if (st->empty && !d->in_place) {
        sb = NULL;
    }
    switch (d->coll) {
    case AMC_COLL_GATHERV:
        if (d->in_place && !root) {
            sb = st->empty ? NULL : st->send[r];
        }
        return amc_igatherv(sb, st->vc[0][r], (root && !st->empty) ? rb : NULL,
                            root ? st->vc[0] : NULL, root ? st->rd[r] : NULL, AMC_UINT32,
                            d->root, comm, &st->req[r]);
    case AMC_COLL_SCATTERV:
        return amc_iscatterv((root && !st->empty) ? st->send[r] : NULL, root ? st->vc[0] : NULL,
                             root ? st->sd[r] : NULL,
                             (d->in_place && root) ? AMC_IN_PLACE : (st->empty ? NULL : rb),
                             st->vc[0][r], AMC_UINT32, d->root, comm, &st->req[r]);
    case AMC_COLL_ALLGATHERV:
        return amc_iallgatherv(sb, st->vc[0][r], st->empty ? NULL : rb, st->vc[0], st->rd[r],
                               AMC_UINT32, comm, &st->req[r]);
    case AMC_COLL_ALLTOALLV:
        return amc_ialltoallv(sb, d->in_place ? NULL : st->vc[r], d->in_place ? NULL : st->sd[r],
                              st->empty ? NULL : rb, st->vct[r], st->rd[r], AMC_UINT32, comm,
                              &st->req[r]);
    case AMC_COLL_REDUCE_SCATTER:
        return amc_ireduce_scatter(sb, st->empty ? NULL : rb, st->vc[0], AMC_UINT32, d->op, comm,
                                   &st->req[r]);
    case AMC_COLL_REDUCE_SCATTER_BLOCK:
        return amc_ireduce_scatter_block(sb, st->empty ? NULL : rb, d->count, AMC_UINT32, d->op,
                                         comm, &st->req[r]);
    case AMC_COLL_SCAN:
        return amc_iscan(sb, st->empty ? NULL : rb, d->count, AMC_UINT32, d->op, comm,
                         &st->req[r]);
    default:
        if ((r == 0) && !st->check[0]) {
            rb = NULL;
        }
        return amc_iexscan(sb, st->empty ? NULL : rb, d->count, AMC_UINT32, d->op, comm,
                           &st->req[r]);
    }
}

static int post(const op_desc_t *d, op_state_t *st, amc_comm_t comm, int r)
{
    const void *sb = d->in_place ? AMC_IN_PLACE : (const void *)st->send[r];
    void       *rb = st->recv[r];
    switch (d->coll) {
    case AMC_COLL_BCAST:
        return amc_ibcast(rb, d->count, AMC_UINT32, d->root, comm, &st->req[r]);
    case AMC_COLL_REDUCE:
        if (d->in_place && (r != d->root)) {
            sb = st->send[r];
        }
        return amc_ireduce(sb, rb, d->count, AMC_UINT32, d->op, d->root, comm, &st->req[r]);
    case AMC_COLL_ALLREDUCE:
        return amc_iallreduce(sb, rb, d->count, AMC_UINT32, d->op, comm, &st->req[r]);
    case AMC_COLL_GATHER:
        if (d->in_place && (r != d->root)) {
            sb = st->send[r];
        }
        return amc_igather(sb, rb, d->count, AMC_UINT32, d->root, comm, &st->req[r]);
    case AMC_COLL_SCATTER:
        return amc_iscatter(st->send[r], (d->in_place && (r == d->root)) ? AMC_IN_PLACE : rb,
                            d->count, AMC_UINT32, d->root, comm, &st->req[r]);
    case AMC_COLL_ALLGATHER:
        return amc_iallgather(sb, rb, d->count, AMC_UINT32, comm, &st->req[r]);
    case AMC_COLL_ALLTOALL:
        return amc_ialltoall(sb, rb, d->count, AMC_UINT32, comm, &st->req[r]);
    default:
        return post_new(d, st, comm, r);
    }
}

static void run(int n, uint64_t seed, amc_fake_completion_t completion)
{
    static const int colls[] = { AMC_COLL_BCAST, AMC_COLL_REDUCE, AMC_COLL_ALLREDUCE,
                                 AMC_COLL_GATHER, AMC_COLL_SCATTER, AMC_COLL_ALLGATHER,
                                 AMC_COLL_ALLTOALL, AMC_COLL_GATHERV, AMC_COLL_SCATTERV,
                                 AMC_COLL_ALLGATHERV, AMC_COLL_ALLTOALLV,
                                 AMC_COLL_REDUCE_SCATTER_BLOCK, AMC_COLL_REDUCE_SCATTER,
                                 AMC_COLL_SCAN, AMC_COLL_EXSCAN };
    static const size_t counts[] = { 0, 4, 8, 12 };
    static op_state_t   st[MAX_OPS];
    amc_test_world_t    w;
    amc_test_rng_t      rng;
    op_desc_t           d[MAX_OPS];
    int                 nops, k, r, rc, flag, left, idle = 0, next[MAX_N] = { 0 };
    size_t              cnt;

    amc_test_rng_seed(&rng, seed);
    nops = 1 + (int)amc_test_rng_below(&rng, MAX_OPS);
    for (k = 0; k < nops; k++) {
        d[k].coll     = colls[amc_test_rng_below(&rng, sizeof(colls) / sizeof(colls[0]))];
        /* every fourth run repeats one collective with other counts, roots and
         * layouts: a cached schedule must serve only calls of its own shape
         * (the v-forms' count and displacement arrays included) */
        if (((seed % 4) == 0) && (k > 0)) {
            d[k].coll = d[0].coll;
        }
        d[k].root     = (int)amc_test_rng_below(&rng, (size_t)n);
        d[k].count    = counts[amc_test_rng_below(&rng, 4)];
        d[k].in_place = (int)amc_test_rng_below(&rng, 3) == 0;
        d[k].op       = amc_test_rng_below(&rng, 2) ? AMC_SUM : matmul_op;
        if ((d[k].coll != AMC_COLL_REDUCE) && (d[k].coll != AMC_COLL_ALLREDUCE) &&
            (d[k].coll != AMC_COLL_REDUCE_SCATTER_BLOCK) &&
            (d[k].coll != AMC_COLL_REDUCE_SCATTER) && (d[k].coll != AMC_COLL_SCAN) &&
            (d[k].coll != AMC_COLL_EXSCAN)) {
            d[k].op = -1;
        }
        if (d[k].coll == AMC_COLL_BCAST) {
            d[k].in_place = 0;
        }
        prepare(&d[k], &st[k], n, seed, k, &rng);
    }

    rc = amc_test_world_create(&w, n, completion, NULL);
    CHECK(rc == AMC_SUCCESS, "world");
    left = n * nops;
    while ((left > 0) && (idle < 2000)) {
        int activity = 0;

        for (r = 0; r < n; r++) {
            k = next[r];
            if ((k < nops) && (amc_test_rng_below(&rng, 3) == 0)) {
                rc = post(&d[k], &st[k], amc_test_world_comm(&w, r), r);
                CHECK(rc == AMC_SUCCESS, "n=%d seed=%llu: post %s: %s", n,
                      (unsigned long long)seed, amc_coll_name(d[k].coll), amc_strerror(rc));
                st[k].posted[r] = 1;
                next[r]++;
                activity++;
            }
            for (k = 0; k < next[r]; k++) {
                if (st[k].done[r]) {
                    continue;
                }
                rc = amc_test(&st[k].req[r], &flag);
                CHECK(rc == AMC_SUCCESS, "n=%d seed=%llu rank %d: %s(root %d count %zu "
                      "in_place %d): %s", n, (unsigned long long)seed, r,
                      amc_coll_name(d[k].coll), d[k].root, d[k].count, d[k].in_place,
                      amc_strerror(rc));
                if (flag || (rc != AMC_SUCCESS)) {
                    st[k].done[r] = 1;
                    left--;
                    activity++;
                }
            }
        }
        cnt = amc_fake_deliverable(w.fabric);
        if (cnt > 0) {
            activity += amc_fake_deliver(w.fabric, amc_test_rng_below(&rng, cnt));
        }
        idle = activity ? 0 : idle + 1;
    }
    CHECK(left == 0, "n=%d seed=%llu: %d operations never completed", n,
          (unsigned long long)seed, left);
    CHECK(amc_fake_header_violations(w.fabric) == 0, "header reused");

    for (k = 0; k < nops; k++) {
        for (r = 0; r < n; r++) {
            if (st[k].check[r]) {
                CHECK(memcmp(st[k].recv[r], st[k].expect[r], st[k].cmp[r] * 4) == 0,
                      "n=%d seed=%llu op %d: %s(root %d count %zu in_place %d %s) wrong at rank %d",
                      n, (unsigned long long)seed, k, amc_coll_name(d[k].coll), d[k].root,
                      d[k].count, d[k].in_place, (d[k].op == AMC_SUM) ? "sum" : "matmul", r);
            }
        }
    }
    amc_test_world_destroy(&w);
}

/* Argument checks of the v-forms, reduce_scatter and scans: each call is
 * refused before it starts anything. */
static void arg_checks(void)
{
    static const size_t zero[3] = { 0, 0, 0 }, one[3] = { 1, 1, 1 };
    const size_t        huge[3] = { SIZE_MAX / 8, SIZE_MAX / 8, SIZE_MAX / 8 };
    const size_t        far[3]  = { 0, SIZE_MAX - 1, 0 };
    uint32_t            sb[8] = { 0 }, rb[8];
    amc_test_world_t    w;
    amc_request_t       req;
    amc_comm_t          c0, c1;
    int                 rc;

    rc = amc_test_world_create(&w, 3, AMC_FAKE_COMPLETE_ON_SEND, NULL);
    CHECK(rc == AMC_SUCCESS, "world");
    c0 = amc_test_world_comm(&w, 0);
    c1 = amc_test_world_comm(&w, 1);

#define ARG(_call, _code) \
    do { \
        int arg_rc = (_call); \
        CHECK(arg_rc == (_code), "%s: %s", #_call, amc_strerror(arg_rc)); \
    } while (0)
    /* gatherv: arrays and recvbuf at the root only */
    ARG(amc_igatherv(sb, 1, rb, NULL, zero, AMC_INT32, 0, c0, &req), AMC_ERR_ARG);
    ARG(amc_igatherv(sb, 1, rb, one, NULL, AMC_INT32, 0, c0, &req), AMC_ERR_ARG);
    ARG(amc_igatherv(sb, 1, NULL, one, zero, AMC_INT32, 0, c0, &req), AMC_ERR_ARG);
    ARG(amc_igatherv(NULL, 1, rb, one, zero, AMC_INT32, 1, c0, &req), AMC_ERR_ARG);
    ARG(amc_igatherv(sb, 1, rb, one, zero, AMC_INT32, 3, c0, &req), AMC_ERR_ARG);
    ARG(amc_igatherv(sb, 1, rb, one, zero, AMC_INT32, -1, c0, &req), AMC_ERR_ARG);
    ARG(amc_igatherv(AMC_IN_PLACE, 1, rb, one, zero, AMC_INT32, 0, c1, &req), AMC_ERR_ARG);
    ARG(amc_igatherv(sb, 1, AMC_IN_PLACE, one, zero, AMC_INT32, 0, c0, &req), AMC_ERR_ARG);
    ARG(amc_igatherv(sb, 2, rb, one, zero, AMC_INT32, 0, c0, &req), AMC_ERR_TRUNCATE);
    ARG(amc_igatherv(sb, 1, rb, huge, zero, AMC_INT32, 0, c0, &req), AMC_ERR_ARG);
    ARG(amc_igatherv(sb, 1, rb, one, far, AMC_INT32, 0, c0, &req), AMC_ERR_ARG);
    ARG(amc_igatherv(sb, SIZE_MAX / 2, rb, one, zero, AMC_INT32, 1, c0, &req), AMC_ERR_ARG);
    ARG(amc_igatherv(sb, 1, rb, one, zero, (amc_datatype_t)99, 0, c0, &req), AMC_ERR_ARG);
    ARG(amc_igatherv(sb, 1, rb, one, zero, AMC_INT32, 0, c0, NULL), AMC_ERR_ARG);
    ARG(amc_igatherv(sb, 1, rb, one, zero, AMC_INT32, 0, AMC_COMM_NULL, &req),
        AMC_ERR_NOT_INITIALIZED);
    /* scatterv */
    ARG(amc_iscatterv(sb, NULL, zero, rb, 1, AMC_INT32, 0, c0, &req), AMC_ERR_ARG);
    ARG(amc_iscatterv(sb, one, NULL, rb, 1, AMC_INT32, 0, c0, &req), AMC_ERR_ARG);
    ARG(amc_iscatterv(NULL, one, zero, rb, 1, AMC_INT32, 0, c0, &req), AMC_ERR_ARG);
    ARG(amc_iscatterv(sb, one, zero, NULL, 1, AMC_INT32, 0, c1, &req), AMC_ERR_ARG);
    ARG(amc_iscatterv(sb, one, zero, AMC_IN_PLACE, 1, AMC_INT32, 0, c1, &req), AMC_ERR_ARG);
    ARG(amc_iscatterv(AMC_IN_PLACE, one, zero, rb, 1, AMC_INT32, 0, c0, &req), AMC_ERR_ARG);
    ARG(amc_iscatterv(sb, one, zero, rb, 0, AMC_INT32, 0, c0, &req), AMC_ERR_TRUNCATE);
    ARG(amc_iscatterv(sb, one, zero, rb, 1, AMC_INT32, 5, c0, &req), AMC_ERR_ARG);
    /* allgatherv */
    ARG(amc_iallgatherv(sb, 1, rb, NULL, zero, AMC_INT32, c0, &req), AMC_ERR_ARG);
    ARG(amc_iallgatherv(sb, 1, rb, one, NULL, AMC_INT32, c0, &req), AMC_ERR_ARG);
    ARG(amc_iallgatherv(sb, 1, NULL, one, zero, AMC_INT32, c0, &req), AMC_ERR_ARG);
    ARG(amc_iallgatherv(NULL, 1, rb, one, zero, AMC_INT32, c0, &req), AMC_ERR_ARG);
    ARG(amc_iallgatherv(sb, 1, AMC_IN_PLACE, one, zero, AMC_INT32, c0, &req), AMC_ERR_ARG);
    ARG(amc_iallgatherv(sb, 1, rb, far, far, AMC_INT32, c0, &req), AMC_ERR_ARG);
    ARG(amc_iallgatherv(sb, 0, rb, one, zero, AMC_INT32, c1, &req), AMC_ERR_TRUNCATE);
    /* alltoallv: the send side is ignored in place */
    ARG(amc_ialltoallv(sb, NULL, zero, rb, one, zero, AMC_INT32, c0, &req), AMC_ERR_ARG);
    ARG(amc_ialltoallv(sb, one, NULL, rb, one, zero, AMC_INT32, c0, &req), AMC_ERR_ARG);
    ARG(amc_ialltoallv(sb, one, zero, rb, NULL, zero, AMC_INT32, c0, &req), AMC_ERR_ARG);
    ARG(amc_ialltoallv(sb, one, zero, rb, one, NULL, AMC_INT32, c0, &req), AMC_ERR_ARG);
    ARG(amc_ialltoallv(AMC_IN_PLACE, NULL, NULL, rb, NULL, zero, AMC_INT32, c0, &req),
        AMC_ERR_ARG);
    ARG(amc_ialltoallv(sb, one, zero, NULL, one, zero, AMC_INT32, c0, &req), AMC_ERR_ARG);
    ARG(amc_ialltoallv(NULL, one, zero, rb, one, zero, AMC_INT32, c0, &req), AMC_ERR_ARG);
    ARG(amc_ialltoallv(sb, one, zero, AMC_IN_PLACE, one, zero, AMC_INT32, c0, &req),
        AMC_ERR_ARG);
    ARG(amc_ialltoallv(sb, zero, zero, rb, one, zero, AMC_INT32, c0, &req), AMC_ERR_TRUNCATE);
    ARG(amc_ialltoallv(sb, huge, zero, rb, one, zero, AMC_INT32, c0, &req), AMC_ERR_ARG);
    /* reduce_scatter: in place, recvbuf holds the whole vector */
    ARG(amc_ireduce_scatter(sb, rb, NULL, AMC_INT32, AMC_SUM, c0, &req), AMC_ERR_ARG);
    ARG(amc_ireduce_scatter(NULL, rb, one, AMC_INT32, AMC_SUM, c0, &req), AMC_ERR_ARG);
    ARG(amc_ireduce_scatter(sb, NULL, one, AMC_INT32, AMC_SUM, c0, &req), AMC_ERR_ARG);
    ARG(amc_ireduce_scatter(AMC_IN_PLACE, NULL, one, AMC_INT32, AMC_SUM, c0, &req), AMC_ERR_ARG);
    ARG(amc_ireduce_scatter(sb, AMC_IN_PLACE, one, AMC_INT32, AMC_SUM, c0, &req), AMC_ERR_ARG);
    ARG(amc_ireduce_scatter(sb, rb, huge, AMC_INT32, AMC_SUM, c0, &req), AMC_ERR_ARG);
    ARG(amc_ireduce_scatter(sb, rb, one, AMC_FLOAT, AMC_BAND, c0, &req), AMC_ERR_ARG);
    ARG(amc_ireduce_scatter(sb, rb, one, AMC_INT32, -1, c0, &req), AMC_ERR_ARG);
    ARG(amc_ireduce_scatter(sb, rb, one, AMC_INT32, AMC_SUM, c0, NULL), AMC_ERR_ARG);
    /* reduce_scatter_block: size x count elements in */
    ARG(amc_ireduce_scatter_block(NULL, rb, 1, AMC_INT32, AMC_SUM, c0, &req), AMC_ERR_ARG);
    ARG(amc_ireduce_scatter_block(sb, NULL, 1, AMC_INT32, AMC_SUM, c0, &req), AMC_ERR_ARG);
    ARG(amc_ireduce_scatter_block(sb, rb, SIZE_MAX / 8, AMC_INT32, AMC_SUM, c0, &req),
        AMC_ERR_ARG);
    ARG(amc_ireduce_scatter_block(sb, AMC_IN_PLACE, 1, AMC_INT32, AMC_SUM, c0, &req),
        AMC_ERR_ARG);
    ARG(amc_ireduce_scatter_block(sb, rb, 1, AMC_CHAR, AMC_SUM, c0, &req), AMC_ERR_ARG);
    /* scan, exscan: rank 0's exscan recvbuf is not significant unless in place */
    ARG(amc_iscan(sb, NULL, 1, AMC_INT32, AMC_SUM, c0, &req), AMC_ERR_ARG);
    ARG(amc_iscan(NULL, rb, 1, AMC_INT32, AMC_SUM, c0, &req), AMC_ERR_ARG);
    ARG(amc_iscan(AMC_IN_PLACE, NULL, 1, AMC_INT32, AMC_SUM, c0, &req), AMC_ERR_ARG);
    ARG(amc_iscan(sb, AMC_IN_PLACE, 1, AMC_INT32, AMC_SUM, c0, &req), AMC_ERR_ARG);
    ARG(amc_iscan(sb, rb, SIZE_MAX / 2, AMC_INT32, AMC_SUM, c0, &req), AMC_ERR_ARG);
    ARG(amc_iscan(sb, rb, 1, AMC_INT32, 12345, c0, &req), AMC_ERR_ARG);
    ARG(amc_iscan(sb, rb, 1, AMC_INT32, AMC_SUM, c0, NULL), AMC_ERR_ARG);
    ARG(amc_iexscan(sb, NULL, 1, AMC_INT32, AMC_SUM, c1, &req), AMC_ERR_ARG);
    ARG(amc_iexscan(AMC_IN_PLACE, NULL, 1, AMC_INT32, AMC_SUM, c0, &req), AMC_ERR_ARG);
    ARG(amc_iexscan(NULL, rb, 1, AMC_INT32, AMC_SUM, c0, &req), AMC_ERR_ARG);
    ARG(amc_iexscan(sb, rb, 1, AMC_DOUBLE, AMC_BXOR, c0, &req), AMC_ERR_ARG);
#undef ARG
    amc_test_world_destroy(&w);
}

int main(void)
{
    static const int sizes[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 16, 17 };
    size_t           i;
    uint64_t         seed, nseeds;
    int              rc;

    rc = amc_op_create(matmul, 0, &matmul_op);
    CHECK(rc == AMC_SUCCESS, "op_create");
    arg_checks();
    /* AMCTEST_QUICK=1 (the sanitizer pass, which runs it once per line of
     * run_coll_algs.sh): 40 orders per size instead of 150 */
    nseeds = amc_test_quick() ? 40 : 150;
    for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        for (seed = 1; seed <= nseeds; seed++) {
            run(sizes[i], seed * 131 + (uint64_t)sizes[i],
                (seed & 1) ? AMC_FAKE_COMPLETE_ON_DELIVERY : AMC_FAKE_COMPLETE_ON_SEND);
        }
    }
    amc_op_free(&matmul_op);
    return amc_test_summary("test_coll");
}
