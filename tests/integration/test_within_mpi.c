/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Blocking calls on the barrier's rounds that run within their call at
 * every N (am_coll/barrier/rounds_now.c), with real UCX and mailboxes,
 * ranks started by mpirun:
 *
 *   test_within_mpi within       (N = 1 .. 8, powers of two and not)
 *
 *   - results: barrier, allreduce (sum of doubles and of ints, max of
 *     doubles), allgather, alltoall and reduce_scatter_block, blocks of 1
 *     element up to what a round carries (AMC_FAST_MAX, 1 KiB), in place and
 *     not, and one more element (the engine), each element checked against
 *     its value, against the same call on the engine (the same elements at the head of a call too large for
 *     the rounds) and against the non-blocking call (the barrier's
 *     machine), bit for bit; signed zeros come out alike on every rank;
 *   - the path: with mailboxes, the barriers and the allreduces end
 *     within their call at every N ("within_done" grows; off powers of two
 *     the allreduce goes Bruck's way); with AMC_SHM=0 nothing does;
 *   - a late peer: the last rank enters an allreduce 30 ms late; on a power
 *     of two it finds every round's message there and ends within its
 *     call, while its first partner waited past the yield and went on on
 *     the machine ("within_left"); off powers of two its right neighbour,
 *     which waits for it first, goes on on the machine; a barrier the same
 *     way;
 *   - another communicator's message first in the mailboxes (an ibarrier
 *     on a dup, posted by every rank before the call) and a non-blocking
 *     allreduce outstanding on the same communicator (the blocking one
 *     then never begins within its call): results right, requests
 *     complete;
 *   - counts that differ (the last rank 3 doubles, the others 2) fail on
 *     every rank with the same error, a barrier against an allreduce too;
 *     the communicator works after each;
 *   - the rooted ones and the scans (bcast, reduce, gather, scatter, scan,
 *     exscan): past N=2 blocking calls run as trees on the barrier's
 *     partners within the call, every root, in place and not, 1 element to
 *     what the rounds carry and one more, each element against its value
 *     and the non-blocking call's (the engine), bit for bit; loops of
 *     each end within the call (the non-blocking ones never); a late rank's
 *     right neighbour goes on on the machine once; behind another
 *     communicator's message and an outstanding ibcast; roots and counts that
 *     differ fail where a result needs what differs (a gather's root), no
 *     rank with another error.
 *
 * Prints "ok within N=n" from rank 0 when every rank passed.
 */
#include "amcoll.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TW_MAXN  8
#define TW_PAD   300 /* elements: a call this large (1,200 B or more) runs on the engine */
#define TW_ROUND 1024 /* bytes a round carries (AMC_FAST_MAX) */

static int g_rank, g_size, g_fail;

#define ITEST_NAME "within"
#include "tests/integration/itest.h"

static int tw_pow2(int n)
{
    return (n > 1) && ((n & (n - 1)) == 0);
}

/* Element k of the block rank r gives rank d in call i (d: the
 * destination of an alltoall's or reduce_scatter_block's block, else 0):
 * whole numbers and quarters, whose sums are exact in any order. */
static double tw_val(int i, int r, int d, int k)
{
    return (double)((i % 97) * 64 + d * 8 + k) + 0.25 * (r + 1);
}

typedef enum {
    TW_ALLREDUCE_SUM,
    TW_ALLREDUCE_INT,
    TW_ALLREDUCE_MAX,
    TW_ALLGATHER,
    TW_ALLTOALL,
    TW_RSB,
    TW_NKINDS
} tw_kind_t;

static const char *const tw_names[TW_NKINDS] = {
    "allreduce sum", "allreduce int", "allreduce max", "allgather", "alltoall",
    "reduce_scatter_block"
};

/* Blocks of how many elements the rounds of kind carry at this N (on a
 * power of two the whole call for an allreduce, the last round's N/2
 * blocks for the rest; off powers of two Bruck's N blocks in twice a
 * round; 8-byte elements, the ints' blocks as long). */
static int tw_max_count(tw_kind_t kind)
{
    int per = TW_ROUND;

    if ((g_size > 1) && !tw_pow2(g_size)) {
        per = 2 * TW_ROUND / g_size;
    } else if ((kind != TW_ALLREDUCE_SUM) && (kind != TW_ALLREDUCE_INT) &&
               (kind != TW_ALLREDUCE_MAX) && (g_size > 1)) {
        per /= g_size / 2;
    }
    return per / 8;
}

/* The send buffer of call i: n elements a block, a block per rank (nb). */
static void tw_fill(tw_kind_t kind, int i, int n, int stride, double *d, int *x)
{
    int dst, k, nb = ((kind == TW_ALLTOALL) || (kind == TW_RSB)) ? g_size : 1;

    for (dst = 0; dst < nb; dst++) {
        for (k = 0; k < n; k++) {
            double v = tw_val(i, g_rank, dst, k);

            if (kind == TW_ALLREDUCE_MAX) {
                v = (k == 0) ? ((g_rank % 2) ? 0.0 : -0.0) : v * ((g_rank % 3) - 1);
            }
            d[dst * stride + k] = v;
            x[dst * stride + k] = (int)(v * 4) * ((k % 2) ? -1 : 1);
        }
    }
}

/* One call of kind: n elements a block; blocks stride elements apart in
 * both buffers (stride > n: the engine's call, of which the first n of
 * each block are compared). in_place: the input in the receive buffer. */
static int tw_call(tw_kind_t kind, int nb, int n, int stride, int in_place, const void *s,
                   void *r, int nonblocking, amc_comm_t comm)
{
    amc_request_t  req;
    size_t         c   = (size_t)stride;
    const void    *in  = in_place ? AMC_IN_PLACE : s;
    amc_datatype_t dt  = (kind == TW_ALLREDUCE_INT) ? AMC_INT : AMC_DOUBLE;
    int            rc;

    (void)nb;
    (void)n;
    switch (kind) {
    case TW_ALLREDUCE_SUM:
    case TW_ALLREDUCE_INT:
    case TW_ALLREDUCE_MAX: {
        amc_op_t op = (kind == TW_ALLREDUCE_MAX) ? AMC_MAX : AMC_SUM;

        if (!nonblocking) {
            return amc_allreduce(in, r, c, dt, op, comm);
        }
        rc = amc_iallreduce(in, r, c, dt, op, comm, &req);
        break;
    }
    case TW_ALLGATHER:
        if (!nonblocking) {
            return amc_allgather(in, r, c, dt, comm);
        }
        rc = amc_iallgather(in, r, c, dt, comm, &req);
        break;
    case TW_ALLTOALL:
        if (!nonblocking) {
            return amc_alltoall(in, r, c, dt, comm);
        }
        rc = amc_ialltoall(in, r, c, dt, comm, &req);
        break;
    default:
        if (!nonblocking) {
            return amc_reduce_scatter_block(in, r, c, dt, AMC_SUM, comm);
        }
        rc = amc_ireduce_scatter_block(in, r, c, dt, AMC_SUM, comm, &req);
        break;
    }
    return (rc == AMC_SUCCESS) ? amc_wait(&req) : rc;
}

/* Element k of block b of the result, as its definition makes it. */
static double tw_expect(tw_kind_t kind, int i, int b, int k)
{
    double v = 0.0;
    int    r;

    switch (kind) {
    case TW_ALLGATHER:
        return tw_val(i, b, 0, k);
    case TW_ALLTOALL: /* block b: from rank b, its block for this rank */
        return tw_val(i, b, g_rank, k);
    case TW_RSB:
        for (r = 0; r < g_size; r++) {
            v += tw_val(i, r, g_rank, k);
        }
        return v;
    default: /* the sums (the max is checked against the engine and across ranks) */
        for (r = 0; r < g_size; r++) {
            v += tw_val(i, r, 0, k);
        }
        return v;
    }
}

/* Call i of kind with blocks of n: within the call, on the engine and on
 * the machine, compared. */
static void tw_case(amc_comm_t comm, tw_kind_t kind, int i, int n, int in_place)
{
    static double sd[3][TW_MAXN * TW_PAD], rd[3][TW_MAXN * TW_PAD];
    static int    si[3][TW_MAXN * TW_PAD], ri[3][TW_MAXN * TW_PAD];
    int  in_blocks  = ((kind == TW_ALLTOALL) || (kind == TW_RSB)) ? g_size : 1;
    int  out_blocks = ((kind == TW_ALLTOALL) || (kind == TW_ALLGATHER)) ? g_size : 1;
    int  isint = (kind == TW_ALLREDUCE_INT), path, b, k, rc;
    int  strides[3] = { n, TW_PAD, n };
    const char *pname[3] = { "within", "engine", "machine" };

    for (path = 0; path < 3; path++) {
        int    st = strides[path];
        double *s = sd[path], *r = rd[path];
        int    *x = si[path], *y = ri[path];

        tw_fill(kind, i, n, st, s, x);
        for (k = 0; k < TW_MAXN * st && k < TW_MAXN * TW_PAD; k++) {
            r[k] = -1.0;
            y[k] = -1;
        }
        if (in_place) {
            if (kind == TW_ALLGATHER) { /* its block in its place */
                memcpy(r + g_rank * st, s, (size_t)st * sizeof(double));
                memcpy(y + g_rank * st, x, (size_t)st * sizeof(int));
            } else {
                memcpy(r, s, (size_t)in_blocks * st * sizeof(double));
                memcpy(y, x, (size_t)in_blocks * st * sizeof(int));
            }
        }
        rc = tw_call(kind, in_blocks, n, st, in_place, isint ? (void *)x : (void *)s,
                     isint ? (void *)y : (void *)r, path == 2, comm);
        ITEST_CHECK(rc == AMC_SUCCESS, "%s %d (n=%d%s) %s: %s", tw_names[kind], i, n,
                 in_place ? ", in place" : "", pname[path], amc_strerror(rc));
    }
    for (b = 0; b < out_blocks; b++) {
        for (k = 0; k < n; k++) {
            for (path = 1; path < 3; path++) {
                int at = b * n + k, pat = b * strides[path] + k;

                if ((kind == TW_ALLREDUCE_MAX) && (k == 0) && (path == 1)) {
                    continue; /* which zero a max of -0.0 and +0.0 keeps is the order's */
                }

                if (isint) {
                    ITEST_CHECK(ri[0][at] == ri[path][pat], "%s %d (n=%d%s) [%d][%d]: within %d, "
                             "%s %d", tw_names[kind], i, n, in_place ? ", in place" : "", b, k,
                             ri[0][at], pname[path], ri[path][pat]);
                } else {
                    ITEST_CHECK(!memcmp(&rd[0][at], &rd[path][pat], sizeof(double)),
                             "%s %d (n=%d%s) [%d][%d]: within %g, %s %g", tw_names[kind], i, n,
                             in_place ? ", in place" : "", b, k, rd[0][at], pname[path],
                             rd[path][pat]);
                }
            }
            if ((kind != TW_ALLREDUCE_MAX) && !isint) {
                double want = tw_expect(kind, i, b, k);

                ITEST_CHECK(rd[0][b * n + k] == want, "%s %d (n=%d%s) [%d][%d]: %g, expected %g",
                         tw_names[kind], i, n, in_place ? ", in place" : "", b, k,
                         rd[0][b * n + k], want);
            }
        }
    }
    if (kind == TW_ALLREDUCE_MAX) {
        /* every rank the same bits, the signed zeros of element 0 included */
        static double all[TW_MAXN * TW_PAD];

        itest_must(amc_allgather(rd[0], all, (size_t)n, AMC_DOUBLE, comm), "allgather of maxima");
        for (b = 0; b < g_size; b++) {
            ITEST_CHECK(!memcmp(&all[b * n], rd[0], (size_t)n * sizeof(double)),
                     "allreduce max %d (n=%d): rank %d's result differs from this rank's", i, n,
                     b);
        }
    }
}

static void tw_results(amc_comm_t comm)
{
    int kind, n, in_place, i = 0;

    for (kind = 0; kind < TW_NKINDS; kind++) {
        int max = tw_max_count((tw_kind_t)kind);

        /* 1 to 8 elements, the most a round carries and one more (the engine) */
        for (n = 1; n <= max + 1; n = ((n == 8) && (max > 9)) ? max : n + 1) {
            for (in_place = 0; in_place < 2; in_place++) {
                tw_case(comm, (tw_kind_t)kind, i++, n, in_place);
            }
        }
    }
}

/* Loops of barriers and of 8 B allreduces: which path they took. */
static void tw_paths(amc_comm_t comm, int shm)
{
    unsigned long long done, left, d_done, d_left;
    double             s = 1.0, r;
    int                i, calls = 200;

    done = itest_stat("within_done");
    left = itest_stat("within_left");
    for (i = 0; i < calls; i++) {
        itest_must(amc_barrier(comm), "barrier");
    }
    d_done = itest_stat("within_done") - done;
    d_left = itest_stat("within_left") - left;
    if ((g_rank == 0) && shm) {
        printf("within N=%d: barriers %llu of %d ended within the call on rank 0\n", g_size,
               d_done, calls);
    }
    if (!shm || (g_size == 1)) {
        ITEST_CHECK((d_done == 0) && (d_left == 0), "barriers: %llu within, %llu left, expected "
                 "none (%s)", d_done, d_left, shm ? "one rank" : "AMC_SHM=0");
    } else {
        ITEST_CHECK((d_done > 0) && (d_done + d_left <= (unsigned long long)calls),
                 "barriers: %llu of %d within, %llu left", d_done, calls, d_left);
    }
    done = itest_stat("within_done");
    left = itest_stat("within_left");
    for (i = 0; i < calls; i++) {
        itest_must(amc_allreduce(&s, &r, 1, AMC_DOUBLE, AMC_SUM, comm), "allreduce");
        ITEST_CHECK(r == (double)g_size, "allreduce loop %d: %g", i, r);
    }
    d_done = itest_stat("within_done") - done;
    d_left = itest_stat("within_left") - left;
    if (shm && (g_size > 1)) {
        ITEST_CHECK((d_done > 0) && (d_done + d_left <= (unsigned long long)calls),
                 "allreduces: %llu of %d within, %llu left", d_done, calls, d_left);
    } else {
        ITEST_CHECK((d_done == 0) && (d_left == 0), "allreduces: %llu within, %llu left, expected "
                 "none (%s)", d_done, d_left, !shm ? "AMC_SHM=0" : "one rank");
    }
    if ((g_rank == 0) && shm) {
        printf("within N=%d: allreduces %llu of %d ended within the call on rank 0\n",
               g_size, d_done, calls);
    }
}

/* Loops of 8 B allgathers, alltoalls and reduce_scatter_blocks: within the
 * call wherever their algorithm runs on the rounds (allgather's default,
 * Bruck, at every N; alltoall's at N > 2 only where AMC_ALLTOALL_ALG=bruck,
 * reduce_scatter_block's where AMC_REDUCE_SCATTER_BLOCK_ALG=recursive_halving,
 * off powers of two as Bruck's alltoall). */
static void tw_exchange_paths(amc_comm_t comm, int shm)
{
    const char        *alg = getenv("AMC_ALLTOALL_ALG");
    const char        *rsb = getenv("AMC_REDUCE_SCATTER_BLOCK_ALG");
    const char        *names[3] = { "allgather", "alltoall", "reduce_scatter_block" };
    unsigned long long done;
    double             s[TW_MAXN], r[TW_MAXN];
    int                i, k, calls = 100, kind;

    for (kind = 0; kind < 3; kind++) {
        int want = shm && (g_size > 1) &&
                   ((kind == 0) || (g_size == 2) ||
                    ((kind == 1) && (alg != NULL) && !strcmp(alg, "bruck")) ||
                    ((kind == 2) && (rsb != NULL) && !strcmp(rsb, "recursive_halving")));

        done = itest_stat("within_done");
        for (i = 0; i < calls; i++) {
            for (k = 0; k < g_size; k++) {
                s[k] = g_rank * 16 + k + i;
            }
            itest_must((kind == 0)   ? amc_allgather(s, r, 1, AMC_DOUBLE, comm)
                       : (kind == 1) ? amc_alltoall(s, r, 1, AMC_DOUBLE, comm)
                                     : amc_reduce_scatter_block(s, r, 1, AMC_DOUBLE, AMC_SUM,
                                                                comm),
                       names[kind]);
            for (k = 0; k < ((kind == 2) ? 1 : g_size); k++) {
                /* a reduce_scatter_block's: the sum of every rank's block g_rank */
                double v = (kind == 0)   ? k * 16 + i
                           : (kind == 1) ? k * 16 + g_rank + i
                                         : 16.0 * g_size * (g_size - 1) / 2 + g_size * (g_rank + i);

                ITEST_CHECK(r[k] == v, "%s loop %d [%d]: %g, expected %g", names[kind], i, k,
                            r[k], v);
            }
        }
        done = itest_stat("within_done") - done;
        ITEST_CHECK(want ? (done > 0) : (done == 0), "%ss: %llu of %d within the call, "
                 "expected %s", names[kind], done, calls, want ? "some" : "none");
        if ((g_rank == 0) && shm) {
            printf("within N=%d: %ss %llu of %d ended within the call on rank 0\n", g_size,
                   names[kind], done, calls);
        }
    }
}

/* The last rank 30 ms late. */
static void tw_late(amc_comm_t comm)
{
    unsigned long long done, left;
    double             s = 2.0, r = 0.0;
    int                late = g_size - 1, rc;

    itest_must(amc_barrier(comm), "barrier before the late allreduce");
    done = itest_stat("within_done");
    left = itest_stat("within_left");
    if (g_rank == late) {
        itest_sleep_ms(30);
    }
    rc = amc_allreduce(&s, &r, 1, AMC_DOUBLE, AMC_SUM, comm);
    ITEST_CHECK((rc == AMC_SUCCESS) && (r == 2.0 * g_size), "late allreduce: %s %g",
             amc_strerror(rc), r);
    if (tw_pow2(g_size)) {
        if (g_rank == late) {
            ITEST_CHECK((itest_stat("within_done") == done + 1) && (itest_stat("within_left") == left),
                     "late allreduce: the late rank ended within %llu, left %llu (expected "
                     "1, 0)", itest_stat("within_done") - done, itest_stat("within_left") - left);
        } else if (g_rank == (late ^ 1)) {
            ITEST_CHECK(itest_stat("within_left") == left + 1, "late allreduce: its partner left "
                     "%llu times, expected once", itest_stat("within_left") - left);
        }
    } else if ((g_size > 1) && (g_rank == (late + 1) % g_size)) {
        /* Bruck's: its round 0 comes from the late rank */
        ITEST_CHECK(itest_stat("within_left") == left + 1, "late allreduce: the late rank's right "
                 "neighbour left %llu times, expected once", itest_stat("within_left") - left);
    }
    itest_must(amc_barrier(comm), "barrier before the late barrier");
    left = itest_stat("within_left");
    if (g_rank == late) {
        itest_sleep_ms(30);
    }
    itest_must(amc_barrier(comm), "late barrier");
    if ((g_size > 1) && (g_rank == (late + 1) % g_size)) {
        ITEST_CHECK(itest_stat("within_left") == left + 1, "late barrier: the late rank's right "
                 "neighbour left %llu times, expected once", itest_stat("within_left") - left);
    }
}

/* Another communicator's message first, and a non-blocking call on this one. */
static void tw_others(amc_comm_t comm)
{
    amc_comm_t         dup;
    amc_request_t      req;
    unsigned long long done;
    double             s = 3.0, r = 0.0, s2 = 5.0, r2 = 0.0;
    int                rc;

    itest_must(amc_comm_dup(comm, &dup), "dup");
    itest_must(amc_ibarrier(dup, &req), "ibarrier on the dup");
    itest_must(amc_barrier(comm), "barrier after the dup's ibarrier");
    rc = amc_allreduce(&s, &r, 1, AMC_DOUBLE, AMC_SUM, comm);
    ITEST_CHECK((rc == AMC_SUCCESS) && (r == 3.0 * g_size), "allreduce behind another "
             "communicator's message: %s %g", amc_strerror(rc), r);
    itest_must(amc_wait(&req), "the dup's ibarrier");

    itest_must(amc_iallreduce(&s2, &r2, 1, AMC_DOUBLE, AMC_SUM, comm, &req), "iallreduce");
    done = itest_stat("within_done");
    rc   = amc_allreduce(&s, &r, 1, AMC_DOUBLE, AMC_SUM, comm);
    ITEST_CHECK(itest_stat("within_done") == done, "an allreduce behind an outstanding iallreduce "
             "ended within its call");
    ITEST_CHECK((rc == AMC_SUCCESS) && (r == 3.0 * g_size), "allreduce behind an iallreduce: %s %g",
             amc_strerror(rc), r);
    itest_must(amc_wait(&req), "iallreduce");
    ITEST_CHECK(r2 == 5.0 * g_size, "iallreduce: %g", r2);
    itest_must(amc_comm_free(&dup), "free the dup");
}

/* Every rank's status of a call that differs on one rank, gathered after. */
static void tw_same_error(amc_comm_t comm, int rc, int want, const char *what)
{
    int all[TW_MAXN], i;

    itest_must(amc_allgather(&rc, all, 1, AMC_INT, comm), "allgather of the statuses");
    for (i = 0; i < g_size; i++) {
        ITEST_CHECK(all[i] == want, "%s: rank %d got %s, expected %s", what, i,
                 amc_strerror(all[i]), amc_strerror(want));
    }
}

/* A rooted call that differs on one rank: a rank whose result needs what
 * differs fails with want (at least one does), the others may finish
 * (a gather's non-root has no result; an error found after round 0 reaches
 * only the ranks the later rounds reach), none with another error. */
static void tw_some_error(amc_comm_t comm, int rc, int want, const char *what)
{
    int all[TW_MAXN], i, failed = 0;

    itest_must(amc_allgather(&rc, all, 1, AMC_INT, comm), "allgather of the statuses");
    for (i = 0; i < g_size; i++) {
        ITEST_CHECK((all[i] == want) || (all[i] == AMC_SUCCESS), "%s: rank %d got %s, expected "
                    "%s or success", what, i, amc_strerror(all[i]), amc_strerror(want));
        failed += (all[i] == want);
    }
    ITEST_CHECK(failed > 0, "%s: every rank succeeded", what);
}

static void tw_mismatch(amc_comm_t comm)
{
    double s[3] = { 1.0, 2.0, 3.0 }, r[3];
    int    rc, last = (g_rank == g_size - 1);

    if (g_size < 2) {
        return;
    }
    itest_must(amc_barrier(comm), "barrier before the counts that differ");
    rc = amc_allreduce(s, r, last ? 3 : 2, AMC_DOUBLE, AMC_SUM, comm);
    tw_same_error(comm, rc, AMC_ERR_TRUNCATE, "counts that differ");
    rc = amc_allreduce(s, r, 2, AMC_DOUBLE, AMC_SUM, comm);
    ITEST_CHECK((rc == AMC_SUCCESS) && (r[1] == 2.0 * g_size), "allreduce after counts that "
             "differ: %s", amc_strerror(rc));

    rc = last ? amc_barrier(comm) : amc_allreduce(s, r, 1, AMC_DOUBLE, AMC_SUM, comm);
    tw_same_error(comm, rc, AMC_ERR_PROTOCOL, "a barrier against an allreduce");
    itest_must(amc_barrier(comm), "barrier after the collectives that differ");
    rc = amc_allreduce(s, r, 2, AMC_DOUBLE, AMC_SUM, comm);
    ITEST_CHECK((rc == AMC_SUCCESS) && (r[0] == 1.0 * g_size), "allreduce after the collectives "
             "that differ: %s", amc_strerror(rc));
}

/* The rooted ones and the scans: past N=2 blocking calls run as trees on
 * the barrier's partners (am_coll/barrier/ctrl_tree.h), within the call;
 * the non-blocking call takes the engine. */
typedef enum {
    TT_BCAST,
    TT_REDUCE,
    TT_GATHER,
    TT_SCATTER,
    TT_SCAN,
    TT_EXSCAN,
    TT_NKINDS
} tt_kind_t;

static const char *const tt_names[TT_NKINDS] = { "bcast", "reduce", "gather", "scatter", "scan",
                                                 "exscan" };

/* The most elements of 8 bytes a tree's rounds carry at this N. */
static int tt_max_count(tt_kind_t kind)
{
    if ((kind == TT_REDUCE) || (kind == TT_GATHER) || (kind == TT_SCATTER)) {
        return 2 * TW_ROUND / (8 * g_size);
    }
    return TW_ROUND / 8;
}

static int tt_call(tt_kind_t kind, int root, int n, int in_place, const double *s, double *r,
                   int nonblocking, amc_comm_t comm)
{
    amc_request_t req;
    const void   *in  = (in_place && ((g_rank == root) || (kind >= TT_SCAN))) ? AMC_IN_PLACE : s;
    int           rc;

    switch (kind) {
    case TT_BCAST:
        rc = nonblocking ? amc_ibcast(r, (size_t)n, AMC_DOUBLE, root, comm, &req)
                         : amc_bcast(r, (size_t)n, AMC_DOUBLE, root, comm);
        break;
    case TT_REDUCE:
        rc = nonblocking ? amc_ireduce(in, r, (size_t)n, AMC_DOUBLE, AMC_SUM, root, comm, &req)
                         : amc_reduce(in, r, (size_t)n, AMC_DOUBLE, AMC_SUM, root, comm);
        break;
    case TT_GATHER:
        rc = nonblocking ? amc_igather(in, r, (size_t)n, AMC_DOUBLE, root, comm, &req)
                         : amc_gather(in, r, (size_t)n, AMC_DOUBLE, root, comm);
        break;
    case TT_SCATTER: {
        void *out = (in_place && (g_rank == root)) ? AMC_IN_PLACE : (void *)r;

        rc = nonblocking ? amc_iscatter(s, out, (size_t)n, AMC_DOUBLE, root, comm, &req)
                         : amc_scatter(s, out, (size_t)n, AMC_DOUBLE, root, comm);
        break;
    }
    case TT_SCAN:
        rc = nonblocking ? amc_iscan(in, r, (size_t)n, AMC_DOUBLE, AMC_SUM, comm, &req)
                         : amc_scan(in, r, (size_t)n, AMC_DOUBLE, AMC_SUM, comm);
        break;
    default:
        rc = nonblocking ? amc_iexscan(in, r, (size_t)n, AMC_DOUBLE, AMC_SUM, comm, &req)
                         : amc_exscan(in, r, (size_t)n, AMC_DOUBLE, AMC_SUM, comm);
        break;
    }
    return (nonblocking && (rc == AMC_SUCCESS)) ? amc_wait(&req) : rc;
}

/* Element k of block b of this rank's buffer after call i, or -1.0 where
 * the call leaves it alone. */
static double tt_expect(tt_kind_t kind, int i, int root, int b, int k)
{
    double v = 0.0;
    int    q;

    switch (kind) {
    case TT_BCAST:
        return (b == 0) ? tw_val(i, root, 0, k) : -1.0;
    case TT_GATHER:
        return (g_rank == root) ? tw_val(i, b, 0, k) : -1.0;
    case TT_SCATTER:
        return (b == 0) ? tw_val(i, root, g_rank, k) : -1.0;
    case TT_REDUCE:
        if ((g_rank != root) || (b != 0)) {
            return -1.0;
        }
        for (q = 0; q < g_size; q++) {
            v += tw_val(i, q, 0, k);
        }
        return v;
    default: /* the scans: exscan's rank 0 keeps its input */
        if (b != 0) {
            return -1.0;
        }
        for (q = 0; q <= g_rank - (kind == TT_EXSCAN); q++) {
            v += tw_val(i, q, 0, k);
        }
        return ((kind == TT_EXSCAN) && (g_rank == 0)) ? -2.0 : v;
    }
}

/* Call i of kind from root with n elements: blocking (within the call, or
 * the machine) and non-blocking (the engine), each element against its
 * value, the two bit for bit. */
static void tt_case(amc_comm_t comm, tt_kind_t kind, int i, int root, int n, int in_place)
{
    static double sd[TW_MAXN * TW_PAD], rd[2][TW_MAXN * TW_PAD];
    int           path, b, k, rc;

    for (path = 0; path < 2; path++) {
        double *r = rd[path];

        for (b = 0; b < g_size; b++) {
            for (k = 0; k < n; k++) {
                sd[b * n + k] = tw_val(i, g_rank, b, k); /* a scatter root's block b: rank b's */
                r[b * n + k]  = -1.0;
            }
        }
        if ((kind == TT_BCAST) && (g_rank == root)) {
            memcpy(r, sd, (size_t)n * sizeof(double));
        } else if (in_place && (kind == TT_GATHER) && (g_rank == root)) {
            memcpy(r + root * n, sd, (size_t)n * sizeof(double));
        } else if (in_place && (kind == TT_SCATTER) && (g_rank == root)) {
            /* its block stays in sendbuf: nothing of recvbuf is written */
        } else if (in_place && ((kind == TT_REDUCE && g_rank == root) || (kind >= TT_SCAN))) {
            memcpy(r, sd, (size_t)n * sizeof(double));
        }
        if ((kind == TT_EXSCAN) && (g_rank == 0)) {
            for (k = 0; k < n; k++) {
                r[k] = in_place ? sd[k] : -2.0;
            }
        }
        rc = tt_call(kind, root, n, in_place, sd, r, path, comm);
        ITEST_CHECK(rc == AMC_SUCCESS, "%s %d root %d (n=%d%s) %s: %s", tt_names[kind], i, root,
                    n, in_place ? ", in place" : "", path ? "non-blocking" : "blocking",
                    amc_strerror(rc));
    }
    for (b = 0; b < g_size; b++) {
        for (k = 0; k < n; k++) {
            double want = tt_expect(kind, i, root, b, k);

            if ((kind == TT_EXSCAN) && (g_rank == 0) && in_place && (b == 0)) {
                want = tw_val(i, 0, 0, k); /* its input, untouched */
            } else if ((kind == TT_SCATTER) && in_place && (g_rank == root)) {
                want = -1.0;
            } else if ((kind == TT_REDUCE) && in_place && (g_rank == root) && (b != 0)) {
                want = -1.0;
            } else if ((kind == TT_GATHER) && (g_rank != root)) {
                want = -1.0;
            }
            ITEST_CHECK(!memcmp(&rd[0][b * n + k], &rd[1][b * n + k], sizeof(double)),
                        "%s %d root %d (n=%d%s) [%d][%d]: blocking %g, non-blocking %g",
                        tt_names[kind], i, root, n, in_place ? ", in place" : "", b, k,
                        rd[0][b * n + k], rd[1][b * n + k]);
            ITEST_CHECK(rd[0][b * n + k] == want, "%s %d root %d (n=%d%s) [%d][%d]: %g, "
                        "expected %g", tt_names[kind], i, root, n,
                        in_place ? ", in place" : "", b, k, rd[0][b * n + k], want);
        }
    }
}

static void tt_results(amc_comm_t comm)
{
    int kind, n, root, in_place, i = 0;

    for (kind = 0; kind < TT_NKINDS; kind++) {
        int max = tt_max_count((tt_kind_t)kind);

        /* 1 to 3 elements, the most the rounds carry and one more (the engine) */
        for (n = 1; n <= max + 1; n = (n == 3) ? max : n + 1) {
            for (root = 0; root < g_size; root++) {
                for (in_place = 0; in_place < 2; in_place++) {
                    tt_case(comm, (tt_kind_t)kind, i++, root, n, in_place);
                }
                if (kind >= TT_SCAN) {
                    break; /* no root */
                }
            }
        }
    }
}

/* Loops of each at 8 B: within the call past N=2 (blocking), never the
 * non-blocking ones; a late rank's right neighbour goes on on the machine
 * once; roots and counts that differ fail where a result needs them. */
static void tt_paths(amc_comm_t comm, int shm)
{
    unsigned long long done, left;
    double             s[TW_MAXN], r[TW_MAXN];
    int                kind, i, calls = 60, rc, late = g_size - 1;

    for (kind = 0; kind < TT_NKINDS; kind++) {
        for (i = 0; i < 2; i++) {
            int nb = (i == 1), k;

            done = itest_stat("within_done");
            for (k = 0; k < calls; k++) {
                s[0] = s[1] = g_rank + k;
                r[0] = -1.0;
                rc = tt_call((tt_kind_t)kind, k % g_size, 1, 0, s, r, nb, comm);
                ITEST_CHECK(rc == AMC_SUCCESS, "%s loop %d: %s", tt_names[kind], k,
                            amc_strerror(rc));
            }
            done = itest_stat("within_done") - done;
            if (g_size > 2) {
                int want = shm && !nb;

                ITEST_CHECK(want ? (done > 0) : (done == 0), "%s%ss: %llu of %d within the call, "
                            "expected %s", nb ? "non-blocking " : "", tt_names[kind], done, calls,
                            want ? "some" : "none");
                if ((g_rank == 0) && want) {
                    printf("within N=%d: %ss %llu of %d ended within the call on rank 0\n",
                           g_size, tt_names[kind], done, calls);
                }
            }
        }
    }
    if (shm && (g_size > 2)) {
        itest_must(amc_barrier(comm), "barrier before the late bcast");
        left = itest_stat("within_left");
        r[0] = (g_rank == 0) ? 42.0 : -1.0;
        if (g_rank == late) {
            itest_sleep_ms(30);
        }
        rc = amc_bcast(r, 1, AMC_DOUBLE, 0, comm);
        ITEST_CHECK((rc == AMC_SUCCESS) && (r[0] == 42.0), "late bcast: %s %g", amc_strerror(rc),
                    r[0]);
        if (g_rank == (late + 1) % g_size) {
            ITEST_CHECK(itest_stat("within_left") == left + 1, "late bcast: the late rank's "
                        "right neighbour left %llu times, expected once",
                        itest_stat("within_left") - left);
        }
    }
    if (g_size > 2) {
        /* another communicator's message first, then an ibcast outstanding:
         * the blocking bcast behind it never begins within its call */
        amc_comm_t    dup;
        amc_request_t req;
        double        v[2] = { -1.0, -1.0 };
        int           flag;

        itest_must(amc_comm_dup(comm, &dup), "dup");
        itest_must(amc_ibarrier(dup, &req), "ibarrier on the dup");
        itest_must(amc_barrier(comm), "barrier after the dup's ibarrier");
        r[0] = (g_rank == 1) ? 7.0 : -1.0;
        rc   = amc_bcast(r, 1, AMC_DOUBLE, 1, comm);
        ITEST_CHECK((rc == AMC_SUCCESS) && (r[0] == 7.0), "bcast behind another communicator's "
                    "message: %s %g", amc_strerror(rc), r[0]);
        itest_must(amc_wait(&req), "the dup's ibarrier");
        v[0] = (g_rank == 2) ? 9.0 : -1.0;
        itest_must(amc_ibcast(&v[0], 1, AMC_DOUBLE, 2, comm, &req), "ibcast");
        itest_must(amc_test(&req, &flag), "test the ibcast"); /* its root may be done */
        done = itest_stat("within_done");
        s[0] = 1.0 + g_rank;
        rc   = amc_scan(s, &v[1], 1, AMC_DOUBLE, AMC_SUM, comm);
        ITEST_CHECK(flag || (itest_stat("within_done") == done), "a scan behind an outstanding "
                    "ibcast ended within its call");
        ITEST_CHECK((rc == AMC_SUCCESS) && (v[1] == (g_rank + 1) * (g_rank + 2) / 2.0),
                    "scan behind an ibcast: %s %g", amc_strerror(rc), v[1]);
        if (!flag) {
            itest_must(amc_wait(&req), "ibcast");
        }
        ITEST_CHECK(v[0] == 9.0, "ibcast: %g", v[0]);
        itest_must(amc_comm_free(&dup), "free the dup");

        itest_must(amc_barrier(comm), "barrier before the roots that differ");
        r[0] = 1.0;
        rc   = amc_bcast(r, 1, AMC_DOUBLE, (g_rank == late) ? 1 : 0, comm);
        tw_some_error(comm, rc, AMC_ERR_PROTOCOL, "bcast roots that differ");
        itest_must(amc_barrier(comm), "barrier before the counts that differ");
        s[0] = s[1] = 1.0;
        rc = amc_gather(s, r, (g_rank == late) ? 2 : 1, AMC_DOUBLE, 0, comm);
        tw_some_error(comm, rc, AMC_ERR_TRUNCATE, "gather counts that differ");
        ITEST_CHECK((g_rank != 0) || (rc == AMC_ERR_TRUNCATE), "gather counts that differ: the "
                    "root got %s", amc_strerror(rc));
        s[0] = 2.0;
        rc = amc_scan(s, r, 1, AMC_DOUBLE, AMC_SUM, comm);
        ITEST_CHECK((rc == AMC_SUCCESS) && (r[0] == 2.0 * (g_rank + 1)), "scan after the "
                    "errors: %s %g", amc_strerror(rc), r[0]);
    }
}

int main(int argc, char **argv)
{
    const char *shm_env = getenv("AMC_SHM");
    int         shm     = (shm_env == NULL) || strcmp(shm_env, "0");
    int         failed  = 0;

    if ((argc < 2) || strcmp(argv[1], "within")) {
        fprintf(stderr, "usage: test_within_mpi within\n");
        return 2;
    }
    itest_must(amc_init(&argc, &argv), "amc_init");
    itest_must(amc_comm_rank(AMC_COMM_WORLD, &g_rank), "rank");
    itest_must(amc_comm_size(AMC_COMM_WORLD, &g_size), "size");
    if (g_size > TW_MAXN) {
        fprintf(stderr, "test_within_mpi: at most %d ranks\n", TW_MAXN);
        amc_finalize();
        return 2;
    }
    tw_results(AMC_COMM_WORLD);
    tw_paths(AMC_COMM_WORLD, shm);
    tw_exchange_paths(AMC_COMM_WORLD, shm);
    if (shm) {
        tw_late(AMC_COMM_WORLD);
    }
    tw_others(AMC_COMM_WORLD);
    tw_mismatch(AMC_COMM_WORLD);
    tt_results(AMC_COMM_WORLD);
    tt_paths(AMC_COMM_WORLD, shm);
    tw_results(AMC_COMM_WORLD); /* and after all that */
    itest_must(amc_allreduce(&g_fail, &failed, 1, AMC_INT, AMC_SUM, AMC_COMM_WORLD), "the verdict");
    if ((g_rank == 0) && (failed == 0)) {
        printf("ok within N=%d\n", g_size);
    }
    itest_must(amc_finalize(), "amc_finalize");
    return (g_fail == 0) ? 0 : 1;
}
