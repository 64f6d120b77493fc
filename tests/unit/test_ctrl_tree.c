/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The trees past N=2 on the barrier's partners (am_coll/barrier/ctrl_tree.h)
 * as pure functions: N ranks' rounds played out message by message (round
 * r from rank to rank + 2^r), every length the sender sends checked
 * against the one its receiver takes, every message within a round's
 * bytes, every result against one made directly: bcast, scatter, gather,
 * reduce, scan and exscan, N = 3 .. 17, every root, in place and not,
 * every size that fits (amc_alg_rounds_tree_fits) at N = 3, 5, 8, 13. A
 * reduce of doubles whose sum depends on its order gives the same bits
 * from every root.
 */
#include "am_coll/barrier/ctrl_tree.h"
#include "am_coll/context/op.h"
#include "tests/unit/harness.h"

#include <stdio.h>
#include <string.h>

/* A check whose failure also stops the call's result from being checked. */
#define CHECK_OK(_cond, ...)                                                   \
    do {                                                                       \
        int held_ = !!(_cond);                                                 \
        CHECK(held_, __VA_ARGS__);                                             \
        ok &= held_;                                                           \
    } while (0)

#define MAX_N    17
#define MAX_WORK (2 * AMC_CTRL_PAY_MAX)

typedef union {
    uint8_t     b[MAX_WORK];
    long double align;
} buf_t;

static const unsigned colls[] = { AMC_COLL_BCAST, AMC_COLL_SCATTER, AMC_COLL_GATHER,
                                  AMC_COLL_REDUCE, AMC_COLL_SCAN, AMC_COLL_EXSCAN };

static buf_t in[MAX_N], out[MAX_N], want[MAX_N], work[MAX_N], msg[MAX_N], box[MAX_N];

static int ceil_log2(int n)
{
    int r = 0;

    while ((1 << r) < n) {
        r++;
    }
    return r;
}

/* What each rank's buffers hold after the call, made directly. */
static void make_want(unsigned coll, int n, int root, size_t count, int in_place)
{
    size_t bytes = count * 4;
    int    r, q;
    size_t i;

    for (r = 0; r < n; r++) {
        memcpy(want[r].b, out[r].b, MAX_WORK);
    }
    for (r = 0; r < n; r++) {
        int32_t *w = (int32_t *)want[r].b;

        switch (coll) {
        case AMC_COLL_BCAST:
            memcpy(w, out[root].b, bytes);
            break;
        case AMC_COLL_SCATTER:
            if (!(in_place && (r == root))) {
                memcpy(w, in[root].b + (size_t)r * bytes, bytes);
            }
            break;
        case AMC_COLL_GATHER:
            if (r == root) {
                for (q = 0; q < n; q++) {
                    memcpy(want[r].b + (size_t)q * bytes,
                           (in_place && (q == root)) ? out[root].b + (size_t)root * bytes
                                                      : in[q].b, bytes);
                }
            }
            break;
        default: /* reduce, scan, exscan: sums of int32 */
            if (((coll == AMC_COLL_REDUCE) && (r != root)) ||
                ((coll == AMC_COLL_EXSCAN) && (r == 0))) {
                break;
            }
            for (i = 0; i < count; i++) {
                int32_t sum = 0;
                int     upto = (coll == AMC_COLL_REDUCE) ? n - 1
                               : (coll == AMC_COLL_SCAN) ? r : r - 1;

                for (q = 0; q <= upto; q++) {
                    const int32_t *v = (const int32_t *)((in_place && (((coll == AMC_COLL_REDUCE) &&
                                                                         (q == root)) ||
                                                                        (coll != AMC_COLL_REDUCE)))
                                                              ? out[q].b : in[q].b);
                    sum += v[i];
                }
                w[i] = sum;
            }
            break;
        }
    }
}

/* One call on n ranks; 0 where a check failed. */
static int play(unsigned coll, int n, int root, size_t count, amc_datatype_t dt, size_t dt_size,
                int in_place, unsigned long *cases)
{
    amc_ctrl_tree_t   t[MAX_N];
    amc_coll_args_t   a;
    amc_op_kernel_t   kernel = amc_op_kernel(AMC_SUM, dt);
    int               r, round, rounds = ceil_log2(n), ok = 1;
    size_t            bytes = count * dt_size;

    for (r = 0; r < n; r++) {
        t[r].coll  = (uint8_t)coll;
        t[r].rank  = r;
        t[r].size  = n;
        t[r].root  = ((coll == AMC_COLL_SCAN) || (coll == AMC_COLL_EXSCAN)) ? -1 : root;
        t[r].bytes = bytes;
        CHECK_OK(amc_ctrl_tree_work_len(&t[r]) <= MAX_WORK, "work");
        memset(&a, 0, sizeof(a));
        a.coll    = (uint8_t)coll;
        a.root    = t[r].root;
        a.count   = count;
        a.dt      = dt;
        a.dt_size = dt_size;
        a.sendbuf = in[r].b;
        a.recvbuf = out[r].b;
        if (in_place && (r == root) && (coll == AMC_COLL_SCATTER)) {
            a.recvbuf = NULL;
        } else if (in_place && ((r == root) || (coll == AMC_COLL_SCAN) ||
                                (coll == AMC_COLL_EXSCAN)) && (coll != AMC_COLL_BCAST)) {
            a.sendbuf = NULL;
        }
        memset(work[r].b, 0x5a, MAX_WORK);
        amc_ctrl_tree_load(&t[r], &a, work[r].b);
    }
    for (round = 0; round < rounds; round++) {
        int d = 1 << round;

        for (r = 0; r < n; r++) {
            int            to  = (r + d) % n;
            size_t         len = amc_ctrl_tree_len(&t[r], round, 1);
            const uint8_t *m   = amc_ctrl_tree_out(&t[r], round, work[r].b, msg[r].b);

            CHECK_OK(len <= AMC_CTRL_PAY_MAX, "%u N=%d root %d %zu B: rank %d round %d sends "
                     "%zu bytes", coll, n, root, bytes, r, round, len);
            CHECK_OK(len == amc_ctrl_tree_len(&t[to], round, 0),
                     "%u N=%d root %d %zu B round %d: rank %d sends %zu bytes, rank %d takes "
                     "%zu", coll, n, root, bytes, round, r, len, to,
                     amc_ctrl_tree_len(&t[to], round, 0));
            memcpy(box[to].b, m, len);
        }
        for (r = 0; r < n; r++) {
            amc_ctrl_tree_in(&t[r], round, work[r].b, box[r].b, kernel, count);
        }
    }
    for (r = 0; r < n; r++) {
        amc_ctrl_tree_result(&t[r], work[r].b,
                             (in_place && (r == root) && (coll == AMC_COLL_SCATTER)) ? NULL
                                                                                      : out[r].b,
                             kernel, count);
    }
    (*cases)++;
    return ok;
}

/* int32 data, one pass of a collective, root and size; the results checked. */
static void check_one(unsigned coll, int n, int root, size_t count, int in_place,
                      unsigned long *cases)
{
    int    r;
    size_t i;

    for (r = 0; r < n; r++) {
        for (i = 0; i < MAX_WORK / 4; i++) {
            ((int32_t *)in[r].b)[i]  = (int32_t)(r * 1000 + (int)i + 1);
            ((int32_t *)out[r].b)[i] = (coll == AMC_COLL_BCAST && r == root)
                                           ? (int32_t)(7000 + (int)i) : (int32_t)(-1 - r);
        }
        if (in_place) {
            /* the operand, or the root's own block, where in place keeps it */
            if ((coll == AMC_COLL_GATHER) && (r == root)) {
                memcpy(out[r].b + (size_t)r * count * 4, in[r].b, count * 4);
            } else if ((coll != AMC_COLL_BCAST) && (coll != AMC_COLL_SCATTER) &&
                       (coll != AMC_COLL_GATHER)) {
                memcpy(out[r].b, in[r].b, count * 4);
            }
        }
    }
    make_want(coll, n, root, count, in_place);
    if (!play(coll, n, root, count, AMC_INT32, 4, in_place, cases)) {
        return;
    }
    for (r = 0; r < n; r++) {
        CHECK(memcmp(out[r].b, want[r].b, MAX_WORK) == 0,
              "%u N=%d root %d count %zu in place %d: rank %d's buffer", coll, n, root, count,
              in_place, r);
    }
}

/* Doubles whose sum depends on the order: the same bits from every root. */
static void check_reduce_order(int n, unsigned long *cases)
{
    double first = 0, *v;
    int    root, r;

    for (root = 0; root < n; root++) {
        for (r = 0; r < n; r++) {
            v    = (double *)in[r].b;
            v[0] = (r % 3 == 0) ? 1e16 : (r % 3 == 1) ? -1e16 : 1.0 + r;
            memset(out[r].b, 0, sizeof(double));
        }
        if (!play(AMC_COLL_REDUCE, n, root, 1, AMC_DOUBLE, 8, 0, cases)) {
            return;
        }
        if (root == 0) {
            memcpy(&first, out[0].b, 8);
        }
        CHECK(memcmp(&first, out[root].b, 8) == 0, "N=%d: reduce at root %d has other bits than "
              "at root 0 (%.17g, %.17g)", n, root, *(double *)out[root].b, first);
    }
}

int main(void)
{
    unsigned long cases = 0;
    size_t        counts[] = { 1, 2, 3, 8 };
    size_t        c, k, count;
    int           n, root, ip;

    for (n = 3; n <= MAX_N; n++) {
        for (k = 0; k < sizeof(colls) / sizeof(colls[0]); k++) {
            for (root = 0; root < n; root++) {
                for (c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
                    for (ip = 0; ip < 2; ip++) {
                        check_one(colls[k], n, root, counts[c], ip, &cases);
                    }
                }
                if ((colls[k] == AMC_COLL_SCAN) || (colls[k] == AMC_COLL_EXSCAN)) {
                    break; /* no root */
                }
            }
        }
        check_reduce_order(n, &cases);
    }
    /* every size that fits, at a few N: the largest messages */
    for (n = 3; n <= 13; n += (n < 5) ? 2 : (n < 8) ? 3 : 5) {
        for (k = 0; k < sizeof(colls) / sizeof(colls[0]); k++) {
            for (count = 1; amc_alg_rounds_tree_fits(colls[k], count * 4, n, AMC_CTRL_PAY_MAX);
                 count += (count < 16) ? 1 : 29) {
                check_one(colls[k], n, n - 1, count, 0, &cases);
            }
            CHECK(!amc_alg_rounds_tree_fits(colls[k], 2 * AMC_CTRL_PAY_MAX + 4, n,
                                            AMC_CTRL_PAY_MAX), "a call past the bound fits");
        }
    }
    CHECK(!amc_alg_rounds_tree_fits(AMC_COLL_BCAST, 8, 2, AMC_CTRL_PAY_MAX),
          "N=2 is not a tree's");
    CHECK(!amc_alg_rounds_tree_fits(AMC_COLL_GATHERV, 8, 4, AMC_CTRL_PAY_MAX),
          "a v-form is not a tree's");
    printf("# %lu calls played\n", cases);
    return amc_test_summary("test_ctrl_tree");
}
