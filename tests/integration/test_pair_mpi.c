/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The blocking exchanges at N=2 that run within their call and read the
 * peer's message straight from its mailbox (am_coll/barrier/rounds_now.c, the one-round case),
 * with real UCX and mailboxes, two ranks started by mpirun:
 *
 *   test_pair_mpi pair [SHARED_FILE]
 *
 *   - results: barrier, allreduce (sum and max of doubles, the max of -0.0
 *     and +0.0 included, which must come out alike on both ranks; sum of
 *     ints), allgather, alltoall and reduce_scatter_block, 1 to 8 elements,
 *     in place and not, each checked against its value; and the path taken:
 *     with a mailbox to the peer most calls end there (the counter
 *     "within_done" grows), with AMC_SHM=0 none does (both counters stay 0);
 *   - every form with blocks of 17 to 256 ints (68 B to 1 KiB) and of 257
 *     and 512: results right; the former end within the call (with
 *     mailboxes), the latter never do (they run on the engine);
 *   - a late peer: rank 1 enters 30 ms after rank 0, whose call sends,
 *     stops looking and finishes on the barrier's machine ("within_left"
 *     grows by one) while rank 1 finds rank 0's message there and ends
 *     within its call ("within_done" by one);
 *   - another communicator's message first in the mailbox (an ibarrier on a
 *     dup), and a non-blocking allreduce outstanding on the same
 *     communicator: results right, requests complete;
 *   - counts that differ (2 against 3 doubles) fail with AMC_ERR_TRUNCATE
 *     on both ranks, a barrier against an allreduce with AMC_ERR_PROTOCOL on
 *     both; the communicator keeps working after each.
 *
 * Prints "ok pair N=2" from rank 0 when every rank passed.
 */
#include "amcoll.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_rank, g_fail;

#define ITEST_NAME "pair"
#include "tests/integration/itest.h"

/* rank r's element k of call i */
static double tp_val(int i, int r, int k)
{
    return (double)(i * 16 + k) + 0.25 * (r + 1);
}

static void tp_allreduce(amc_comm_t comm, int i, int n, int in_place)
{
    double s[8], r[8];
    int    k, rc;

    for (k = 0; k < n; k++) {
        s[k] = tp_val(i, g_rank, k);
        r[k] = in_place ? s[k] : -1.0;
    }
    rc = amc_allreduce(in_place ? AMC_IN_PLACE : s, r, (size_t)n, AMC_DOUBLE, AMC_SUM, comm);
    ITEST_CHECK(rc == AMC_SUCCESS, "allreduce %d: %s", i, amc_strerror(rc));
    for (k = 0; k < n; k++) {
        ITEST_CHECK(r[k] == tp_val(i, 0, k) + tp_val(i, 1, k), "allreduce %d [%d]: %g", i, k, r[k]);
    }
}

static void tp_allreduce_int(amc_comm_t comm, int i, int n)
{
    int s[8], r[8], k, rc;

    for (k = 0; k < n; k++) {
        s[k] = i * 7 + k * (g_rank ? 3 : -5);
    }
    rc = amc_allreduce(s, r, (size_t)n, AMC_INT, AMC_SUM, comm);
    ITEST_CHECK(rc == AMC_SUCCESS, "allreduce int %d: %s", i, amc_strerror(rc));
    for (k = 0; k < n; k++) {
        ITEST_CHECK(r[k] == 2 * i * 7 + k * -2, "allreduce int %d [%d]: %d", i, k, r[k]);
    }
}

/* max(-0.0, +0.0) is either zero: what matters is that both ranks get the
 * same bits, which the lower rank's operand on the left makes sure of */
static void tp_signed_zero(amc_comm_t comm)
{
    double   s = g_rank ? 0.0 : -0.0, r = 1.0, both[2];
    uint64_t a, b;
    int      rc = amc_allreduce(&s, &r, 1, AMC_DOUBLE, AMC_MAX, comm);

    ITEST_CHECK((rc == AMC_SUCCESS) && (r == 0.0), "max of signed zeros: %s %g",
             amc_strerror(rc), r);
    itest_must(amc_allgather(&r, both, 1, AMC_DOUBLE, comm), "allgather of the results");
    memcpy(&a, &both[0], 8);
    memcpy(&b, &both[1], 8);
    ITEST_CHECK(a == b, "max of signed zeros: rank 0 got 0x%llx, rank 1 0x%llx",
             (unsigned long long)a, (unsigned long long)b);
}

static void tp_allgather(amc_comm_t comm, int i, int n, int in_place)
{
    int s[8], r[16], k, src, rc;

    for (k = 0; k < 2 * n; k++) {
        r[k] = -1;
    }
    for (k = 0; k < n; k++) {
        s[k] = 1000 * i + 100 * g_rank + k;
        if (in_place) {
            r[g_rank * n + k] = s[k];
        }
    }
    rc = amc_allgather(in_place ? AMC_IN_PLACE : s, r, (size_t)n, AMC_INT, comm);
    ITEST_CHECK(rc == AMC_SUCCESS, "allgather %d: %s", i, amc_strerror(rc));
    for (src = 0; src < 2; src++) {
        for (k = 0; k < n; k++) {
            ITEST_CHECK(r[src * n + k] == 1000 * i + 100 * src + k, "allgather %d [%d][%d]: %d", i,
                     src, k, r[src * n + k]);
        }
    }
}

static void tp_alltoall(amc_comm_t comm, int i, int n, int in_place)
{
    int s[16], r[16], k, d, rc;

    for (d = 0; d < 2; d++) {
        for (k = 0; k < n; k++) {
            s[d * n + k] = 1000 * i + 100 * g_rank + 10 * d + k; /* to d */
            r[d * n + k] = in_place ? s[d * n + k] : -1;
        }
    }
    rc = amc_alltoall(in_place ? AMC_IN_PLACE : s, r, (size_t)n, AMC_INT, comm);
    ITEST_CHECK(rc == AMC_SUCCESS, "alltoall %d: %s", i, amc_strerror(rc));
    for (d = 0; d < 2; d++) { /* from d */
        for (k = 0; k < n; k++) {
            ITEST_CHECK(r[d * n + k] == 1000 * i + 100 * d + 10 * g_rank + k,
                     "alltoall %d [%d][%d]: %d", i, d, k, r[d * n + k]);
        }
    }
}

static void tp_rsb(amc_comm_t comm, int i, int n, int in_place)
{
    int s[16], r[16], k, rc;

    for (k = 0; k < 2 * n; k++) {
        s[k] = 100 * i + k * (g_rank ? 3 : 1);
        r[k] = in_place ? s[k] : -1;
    }
    rc = amc_reduce_scatter_block(in_place ? AMC_IN_PLACE : s, r, (size_t)n, AMC_INT, AMC_SUM,
                                  comm);
    ITEST_CHECK(rc == AMC_SUCCESS, "reduce_scatter_block %d: %s", i, amc_strerror(rc));
    for (k = 0; k < n; k++) {
        int at = g_rank * n + k;

        ITEST_CHECK(r[k] == 200 * i + 4 * at, "reduce_scatter_block %d [%d]: %d", i, k, r[k]);
    }
}

/* The rooted ones (the receiver ends within its call) and the v-forms;
 * blocks of n and m elements, the root i % 2, in place at the root every
 * other time where MPI allows it. */
static void tp_rooted(amc_comm_t comm, int i)
{
    int    n = 1 + i % 8, m = 1 + (i + 3) % 8, root = i % 2, in_place = (i / 2) % 2, rc, k;
    int    me = g_rank, peer = g_rank ^ 1, s[16], r[24];
    size_t cnt[2], dsp[2], scnt[2], sdsp[2];

#define TP_RC(_what) ITEST_CHECK(rc == AMC_SUCCESS, "%s %d: %s", _what, i, amc_strerror(rc))
    for (k = 0; k < n; k++) {
        s[k] = (me == root) ? 50 * i + k : -1;
    }
    rc = amc_bcast(s, (size_t)n, AMC_INT, root, comm);
    TP_RC("bcast");
    for (k = 0; k < n; k++) {
        ITEST_CHECK(s[k] == 50 * i + k, "bcast %d [%d]: %d", i, k, s[k]);
    }

    for (k = 0; k < n; k++) {
        s[k] = 10 * i + k + 100 * me;
        r[k] = s[k];
    }
    rc = amc_reduce((in_place && (me == root)) ? AMC_IN_PLACE : s, r, (size_t)n, AMC_INT,
                    AMC_SUM, root, comm);
    TP_RC("reduce");
    for (k = 0; (me == root) && (k < n); k++) {
        ITEST_CHECK(r[k] == 20 * i + 2 * k + 100, "reduce %d [%d]: %d", i, k, r[k]);
    }

    for (k = 0; k < n; k++) {
        s[k] = 1000 * i + 100 * me + k;
        r[me * n + k] = s[k];
        r[peer * n + k] = -1;
    }
    rc = amc_gather((in_place && (me == root)) ? AMC_IN_PLACE : s, r, (size_t)n, AMC_INT, root,
                    comm);
    TP_RC("gather");
    for (k = 0; (me == root) && (k < 2 * n); k++) {
        ITEST_CHECK(r[k] == 1000 * i + 100 * (k / n) + k % n, "gather %d [%d]: %d", i, k, r[k]);
    }

    for (k = 0; k < 2 * n; k++) {
        s[k] = 1000 * i + 10 * (k / n) + k % n;
    }
    rc = amc_scatter(s, r, (size_t)n, AMC_INT, root, comm);
    TP_RC("scatter");
    for (k = 0; k < n; k++) {
        ITEST_CHECK(r[k] == 1000 * i + 10 * me + k, "scatter %d [%d]: %d", i, k, r[k]);
    }

    for (k = 0; k < n; k++) {
        s[k] = i + k + 5 * me;
    }
    rc = amc_scan(s, r, (size_t)n, AMC_INT, AMC_SUM, comm);
    TP_RC("scan");
    for (k = 0; k < n; k++) {
        ITEST_CHECK(r[k] == (me ? 2 * (i + k) + 5 : i + k), "scan %d [%d]: %d", i, k, r[k]);
    }
    rc = amc_exscan(s, r, (size_t)n, AMC_INT, AMC_SUM, comm);
    TP_RC("exscan");
    for (k = 0; me && (k < n); k++) {
        ITEST_CHECK(r[k] == i + k, "exscan %d [%d]: %d", i, k, r[k]);
    }

    /* v-forms: rank 0's block n elements, rank 1's m, a gap of 2 between */
    cnt[0] = (size_t)n;
    cnt[1] = (size_t)m;
    dsp[0] = 1;
    dsp[1] = (size_t)n + 3;
    for (k = 0; k < 24; k++) {
        r[k] = -1;
    }
    for (k = 0; k < (int)cnt[me]; k++) {
        s[k] = 700 * i + 100 * me + k;
    }
    rc = amc_gatherv(s, cnt[me], r, cnt, dsp, AMC_INT, root, comm);
    TP_RC("gatherv");
    for (k = 0; (me == root) && (k < (int)cnt[peer]); k++) {
        ITEST_CHECK((r[dsp[peer] + k] == 700 * i + 100 * peer + k) &&
                 (r[dsp[me]] == 700 * i + 100 * me), "gatherv %d [%d]: %d", i, k,
                 r[dsp[peer] + k]);
    }
    rc = amc_allgatherv(s, cnt[me], r, cnt, dsp, AMC_INT, comm);
    TP_RC("allgatherv");
    for (k = 0; k < (int)cnt[peer]; k++) {
        ITEST_CHECK(r[dsp[peer] + k] == 700 * i + 100 * peer + k, "allgatherv %d [%d]: %d", i, k,
                 r[dsp[peer] + k]);
    }
    for (k = 0; k < n + m; k++) {
        s[k] = 300 * i + k;
    }
    sdsp[0] = 0;
    sdsp[1] = (size_t)n;
    rc = amc_scatterv(s, cnt, sdsp, r, cnt[me], AMC_INT, root, comm);
    TP_RC("scatterv");
    for (k = 0; k < (int)cnt[me]; k++) {
        ITEST_CHECK(r[k] == 300 * i + (int)sdsp[me] + k, "scatterv %d [%d]: %d", i, k, r[k]);
    }

    /* alltoallv: rank a sends 1 + (i + 2a + b) % 4 elements to b */
    for (k = 0; k < 2; k++) {
        scnt[k] = (size_t)(1 + (i + 2 * me + k) % 4);
        cnt[k]  = (size_t)(1 + (i + 2 * k + me) % 4);
    }
    sdsp[0] = 0;
    sdsp[1] = scnt[0];
    dsp[0]  = 2;
    dsp[1]  = cnt[0] + 4;
    for (k = 0; k < (int)(scnt[0] + scnt[1]); k++) {
        s[k] = 100 * me + k;
    }
    rc = amc_alltoallv(s, scnt, sdsp, r, cnt, dsp, AMC_INT, comm);
    TP_RC("alltoallv");
    for (k = 0; k < (int)cnt[peer]; k++) {
        int at = me ? 1 + (i + 2 * peer) % 4 : 0; /* the peer's sdispls[me] */

        ITEST_CHECK(r[dsp[peer] + k] == 100 * peer + at + k, "alltoallv %d [%d]: %d", i, k,
                 r[dsp[peer] + k]);
    }

    /* reduce_scatter: blocks of n and m */
    cnt[0] = (size_t)n;
    cnt[1] = (size_t)m;
    for (k = 0; k < n + m; k++) {
        s[k] = i + k * (me + 1);
    }
    rc = amc_reduce_scatter(s, r, cnt, AMC_INT, AMC_SUM, comm);
    TP_RC("reduce_scatter");
    for (k = 0; k < (int)cnt[me]; k++) {
        ITEST_CHECK(r[k] == 2 * i + 3 * ((me ? n : 0) + k), "reduce_scatter %d [%d]: %d", i, k,
                 r[k]);
    }
#undef TP_RC
}

/* Every form a few hundred times; returns the blocking exchanges made. */
static unsigned tp_results(amc_comm_t comm)
{
    unsigned calls = 0;
    int      i;

    for (i = 0; i < 300; i++) {
        int n = 1 + i % 8, in_place = (i / 8) % 2;

        itest_must(amc_barrier(comm), "barrier");
        tp_allreduce(comm, i, n, in_place);
        tp_allreduce_int(comm, i, n);
        tp_allgather(comm, i, n, in_place);
        tp_alltoall(comm, i, n, in_place);
        tp_rsb(comm, i, n, in_place);
        tp_rooted(comm, i);
        calls += 6 + 11;
    }
    tp_signed_zero(comm);
    return calls + 2;
}

/* Messages of 68 B to 1 KiB (17 to 256 ints a block) run within the call
 * too (AMC_CTRL_PAY_MAX), one int more takes the engine: every form's
 * results, and the path taken where the mailboxes are on. */
#define TP_KIB_MAX 512

static void tp_kib_call(amc_comm_t comm, int n, int root)
{
    static int s[2 * TP_KIB_MAX + 16], r[2 * TP_KIB_MAX + 16];
    int        me = g_rank, peer = g_rank ^ 1, k, rc;
    /* the v-forms' second block shorter on the rounds, longer past them
     * (a rank decides from the blocks it sends and takes) */
    size_t     cnt[2] = { (size_t)n, (size_t)(n > 256 ? n + 5 : n - 5) };
    size_t     dsp[2] = { 3, (size_t)n + 4 };

#define TP_KRC(_what) ITEST_CHECK(rc == AMC_SUCCESS, "%s %d ints: %s", _what, n, amc_strerror(rc))
    for (k = 0; k < 2 * n + 16; k++) {
        s[k] = k * (me + 1) + n;
    }
    rc = amc_allreduce(s, r, (size_t)n, AMC_INT, AMC_SUM, comm);
    TP_KRC("allreduce");
    for (k = 0; k < n; k++) {
        ITEST_CHECK(r[k] == 3 * k + 2 * n, "allreduce %d ints [%d]: %d", n, k, r[k]);
    }
    rc = amc_reduce_scatter_block(s, r, (size_t)n, AMC_INT, AMC_SUM, comm);
    TP_KRC("reduce_scatter_block");
    for (k = 0; k < n; k++) {
        ITEST_CHECK(r[k] == 3 * (me * n + k) + 2 * n, "reduce_scatter_block %d ints [%d]: %d", n,
                 k, r[k]);
    }
    rc = amc_allgather(s, r, (size_t)n, AMC_INT, comm);
    TP_KRC("allgather");
    for (k = 0; k < 2 * n; k++) {
        ITEST_CHECK(r[k] == (k % n) * (k / n + 1) + n, "allgather %d ints [%d]: %d", n, k, r[k]);
    }
    rc = amc_alltoall(s, r, (size_t)n, AMC_INT, comm);
    TP_KRC("alltoall");
    for (k = 0; k < 2 * n; k++) { /* block k / n from rank k / n: its block me */
        ITEST_CHECK(r[k] == (me * n + k % n) * (k / n + 1) + n, "alltoall %d ints [%d]: %d", n, k,
                 r[k]);
    }
    for (k = 0; k < n; k++) {
        r[k] = (me == root) ? 9 * k - n : -1;
    }
    rc = amc_bcast(r, (size_t)n, AMC_INT, root, comm);
    TP_KRC("bcast");
    for (k = 0; k < n; k++) {
        ITEST_CHECK(r[k] == 9 * k - n, "bcast %d ints [%d]: %d", n, k, r[k]);
    }
    rc = amc_reduce(s, r, (size_t)n, AMC_INT, AMC_SUM, root, comm);
    TP_KRC("reduce");
    for (k = 0; (me == root) && (k < n); k++) {
        ITEST_CHECK(r[k] == 3 * k + 2 * n, "reduce %d ints [%d]: %d", n, k, r[k]);
    }
    rc = amc_gather(s, r, (size_t)n, AMC_INT, root, comm);
    TP_KRC("gather");
    for (k = 0; (me == root) && (k < 2 * n); k++) {
        ITEST_CHECK(r[k] == (k % n) * (k / n + 1) + n, "gather %d ints [%d]: %d", n, k, r[k]);
    }
    rc = amc_scatter(s, r, (size_t)n, AMC_INT, root, comm);
    TP_KRC("scatter");
    for (k = 0; k < n; k++) {
        ITEST_CHECK(r[k] == (me * n + k) * (root + 1) + n, "scatter %d ints [%d]: %d", n, k, r[k]);
    }
    rc = amc_scan(s, r, (size_t)n, AMC_INT, AMC_SUM, comm);
    TP_KRC("scan");
    for (k = 0; k < n; k++) {
        ITEST_CHECK(r[k] == (me ? 3 * k + 2 * n : k + n), "scan %d ints [%d]: %d", n, k, r[k]);
    }
    rc = amc_exscan(s, r, (size_t)n, AMC_INT, AMC_SUM, comm);
    TP_KRC("exscan");
    for (k = 0; me && (k < n); k++) {
        ITEST_CHECK(r[k] == k + n, "exscan %d ints [%d]: %d", n, k, r[k]);
    }
    /* v-forms: rank 0's block n ints, rank 1's cnt[1], gaps before and between */
    rc = amc_allgatherv(s, cnt[me], r, cnt, dsp, AMC_INT, comm);
    TP_KRC("allgatherv");
    for (k = 0; k < (int)cnt[peer]; k++) {
        ITEST_CHECK(r[dsp[peer] + k] == k * (peer + 1) + n, "allgatherv %d ints [%d]: %d", n, k,
                 r[dsp[peer] + k]);
    }
    rc = amc_gatherv(s, cnt[me], r, cnt, dsp, AMC_INT, root, comm);
    TP_KRC("gatherv");
    for (k = 0; (me == root) && (k < (int)cnt[peer]); k++) {
        ITEST_CHECK(r[dsp[peer] + k] == k * (peer + 1) + n, "gatherv %d ints [%d]: %d", n, k,
                 r[dsp[peer] + k]);
    }
    rc = amc_reduce_scatter(s, r, cnt, AMC_INT, AMC_SUM, comm);
    TP_KRC("reduce_scatter");
    for (k = 0; k < (int)cnt[me]; k++) {
        ITEST_CHECK(r[k] == 3 * (me * n + k) + 2 * n, "reduce_scatter %d ints [%d]: %d", n, k,
                 r[k]);
    }
#undef TP_KRC
}

static void tp_kib(amc_comm_t comm, int pair)
{
    static const int sizes[] = { 17, 64, 200, 256, 257, TP_KIB_MAX };
    unsigned long long done, sent;
    unsigned           i;
    int                rep;

    for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        itest_must(amc_barrier(comm), "barrier before the 1 KiB calls");
        done = itest_stat("within_done");
        sent = itest_stat("within_left");
        for (rep = 0; rep < 20; rep++) {
            tp_kib_call(comm, sizes[i], rep % 2);
        }
        done = itest_stat("within_done") - done;
        sent = itest_stat("within_left") - sent;
        if (sizes[i] > 256) {
            ITEST_CHECK((done == 0) && (sent == 0), "%d ints: past 1 KiB, yet %llu calls ended "
                     "within the call and %llu sent there", sizes[i], done, sent);
        } else if (pair) {
            ITEST_CHECK(done > 0, "%d ints: no call ended within the call (%llu sent there)",
                     sizes[i], sent);
        }
    }
}

static void tp_late_peer(amc_comm_t comm, int pair)
{
    unsigned long long done, sent;

    itest_must(amc_barrier(comm), "barrier before the late peer");
    done = itest_stat("within_done");
    sent = itest_stat("within_left");
    if (g_rank == 1) {
        itest_sleep_ms(30);
    }
    tp_allreduce(comm, 7, 3, 0);
    if (!pair) {
        return;
    }
    if (g_rank == 0) {
        ITEST_CHECK(itest_stat("within_left") == sent + 1, "late peer: rank 0 sent %llu times, "
                 "expected once", itest_stat("within_left") - sent);
    } else {
        ITEST_CHECK(itest_stat("within_done") == done + 1, "late peer: rank 1 ended within %llu calls, "
                 "expected one", itest_stat("within_done") - done);
    }
}

static void tp_others_first(amc_comm_t comm, amc_comm_t dup)
{
    amc_request_t req;
    double        s = 1.0 + g_rank, r = 0.0;
    int           i, rc;

    for (i = 0; i < 50; i++) {
        itest_must(amc_ibarrier(dup, &req), "ibarrier on the dup");
        if ((g_rank == 1) && (i % 5 == 0)) {
            itest_sleep_ms(1);
        }
        tp_allreduce(comm, i, 1 + i % 8, i % 2);
        itest_must(amc_wait(&req), "wait for the dup's ibarrier");

        itest_must(amc_iallreduce(&s, &r, 1, AMC_DOUBLE, AMC_SUM, comm, &req), "iallreduce");
        tp_allreduce(comm, i + 1, 1 + i % 8, 0);
        rc = amc_wait(&req);
        ITEST_CHECK((rc == AMC_SUCCESS) && (r == 3.0), "iallreduce under a blocking one: %s %g",
                 amc_strerror(rc), r);
    }
}

static void tp_mismatch(amc_comm_t comm)
{
    double s[3] = { 1, 2, 3 }, r[3];
    int    rc;

    rc = amc_allreduce(s, r, g_rank ? 3 : 2, AMC_DOUBLE, AMC_SUM, comm);
    ITEST_CHECK(rc == AMC_ERR_TRUNCATE, "counts 2 and 3: %s, expected AMC_ERR_TRUNCATE",
             amc_strerror(rc));
    tp_allreduce(comm, 11, 2, 0);

    rc = g_rank ? amc_allreduce(s, r, 1, AMC_DOUBLE, AMC_SUM, comm) : amc_barrier(comm);
    ITEST_CHECK(rc == AMC_ERR_PROTOCOL, "a barrier against an allreduce: %s, expected "
             "AMC_ERR_PROTOCOL", amc_strerror(rc));
    itest_must(amc_barrier(comm), "barrier after the mismatches");
    tp_allreduce(comm, 12, 4, 1);
}

int main(int argc, char **argv)
{
    amc_comm_t         world = AMC_COMM_WORLD, dup;
    unsigned long long done0, sent0, done, sent;
    unsigned           calls;
    int                size, pair, bad = 0;

    if ((argc < 2) || (strcmp(argv[1], "pair") != 0)) {
        fprintf(stderr, "usage: %s pair [SHARED_FILE]\n", argv[0]);
        return 2;
    }
    itest_must(amc_init(&argc, &argv), "amc_init");
    world = AMC_COMM_WORLD;
    itest_must(amc_comm_rank(world, &g_rank), "amc_comm_rank");
    itest_must(amc_comm_size(world, &size), "amc_comm_size");
    if (size != 2) {
        fprintf(stderr, "FAIL pair: runs on 2 ranks, not %d\n", size);
        return 1;
    }
    itest_must(amc_barrier(world), "first barrier");
    /* the mailbox to the peer is made by the first message */
    pair  = (itest_stat("mailboxes_out") > 0);
    done0 = itest_stat("within_done");
    sent0 = itest_stat("within_left");

    calls = tp_results(world);
    done  = itest_stat("within_done") - done0;
    sent  = itest_stat("within_left") - sent0;
    if (pair) {
        ITEST_CHECK((done > 0) && (done + sent <= calls), "mailboxes: %llu of %u calls ended "
                 "within the call, %llu went on the machine", done, calls, sent);
    } else {
        ITEST_CHECK((done == 0) && (sent == 0), "no mailbox, yet %llu calls ended within the "
                 "call and %llu sent there", done, sent);
    }
    tp_kib(world, pair);
    tp_late_peer(world, pair);
    itest_must(amc_comm_dup(world, &dup), "amc_comm_dup");
    tp_others_first(world, dup);
    tp_mismatch(world);
    itest_must(amc_comm_free(&dup), "amc_comm_free");

    itest_must(amc_allreduce(&g_fail, &bad, 1, AMC_INT, AMC_SUM, world), "failure count");
    if ((g_rank == 0) && (bad == 0)) {
        printf("mailboxes %s: %llu of %u calls ended within the call, %llu went on\n",
               pair ? "on" : "off", done, calls, sent);
        printf("ok pair N=%d\n", size);
    }
    itest_must(amc_finalize(), "amc_finalize");
    return (g_fail > 0) ? 1 : 0;
}
