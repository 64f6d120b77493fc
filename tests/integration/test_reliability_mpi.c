/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Integration tests of the API's promise under misuse: a clear
 * error, never a crash, a hang or a silent wrong answer. Real UCX, ranks
 * started by mpirun (PMIx).
 *
 *   test_reliability_mpi algmismatch   run under tests/integration/rank_env.sh,
 *                               which gives one rank AMC_ALLREDUCE_ALG=ring
 *                               and AMC_BCAST_ALG=pipeline, the others
 *                               recursive_doubling and binomial: the
 *                               allreduce fails with AMC_ERR_PROTOCOL on every
 *                               rank, so does the bcast that rank roots on
 *                               every other rank (none waits for AMC_TIMEOUT),
 *                               and barriers and an allgather work afterwards
 *   test_reliability_mpi rootarg  a scatterv whose root passes overflowing
 *                               counts, or a NULL send buffer, fails with
 *                               AMC_ERR_ARG on every rank (it hung the
 *                               others); a gatherv whose root has no receive
 *                               buffer, and a scatterv (64 KiB blocks, by
 *                               rendezvous) where rank 1 has none, fail on the
 *                               rank with the bad argument and end on every
 *                               other rank (AMC_ERR_ARG, or success if its part
 *                               was done); the communicator works after each
 *   test_reliability_mpi flood  every rank starts 10,000 ibcasts of one int
 *                               from rank 0 (AMCTEST_FLOOD_CALLS) without
 *                               waiting, the last rank pausing now and then;
 *                               a start refused with AMC_ERR_NO_MEMORY (the
 *                               bound on outstanding collectives) waits for
 *                               the oldest request and is made again. Every
 *                               ibcast delivers its value, and collectives
 *                               work afterwards
 *   test_reliability_mpi finalize  every rank starts an ibarrier and an
 *                               iallreduce and finalizes without waiting for
 *                               them: even ranks at once, odd ranks after a
 *                               pause (AMCTEST_FINALIZE_PAUSE_MS, default 100),
 *                               so messages of the pending collectives reach
 *                               ranks that are tearing down. Finalize returns
 *                               AMC_SUCCESS and the process exits 0 (it
 *                               crashed: a late message made the barrier send
 *                               its next round on a closed endpoint)
 *
 * Rank 0 prints "ok <subtest> N=<n>"; failures print "FAIL ..." and the exit
 * status is non-zero.
 */
#define _POSIX_C_SOURCE 200809L

#include "amcoll.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int tr_rank, tr_size;
static int tr_failures;

#define TR_CHECK(_cond, ...)                                                    \
    do {                                                                        \
        if (!(_cond)) {                                                         \
            fprintf(stderr, "FAIL rank %d/%d %s:%d: ", tr_rank, tr_size,        \
                    __FILE__, __LINE__);                                        \
            fprintf(stderr, __VA_ARGS__);                                       \
            fputc('\n', stderr);                                                \
            tr_failures++;                                                      \
        }                                                                       \
    } while (0)

#define TR_OK(_call) \
    do { int _rc = (_call); TR_CHECK(_rc == AMC_SUCCESS, "%s: %s", #_call, amc_strerror(_rc)); } while (0)

/* An allgather of ranks, checked: the communicator works. */
static void tr_check_works(amc_comm_t comm, const char *after)
{
    int32_t mine = 1000 + tr_rank, *all = calloc((size_t)tr_size, sizeof(*all));
    int     i;

    TR_CHECK(all != NULL, "calloc");
    if (all == NULL) {
        return;
    }
    TR_OK(amc_barrier(comm));
    TR_OK(amc_allgather(&mine, all, 1, AMC_INT32, comm));
    for (i = 0; i < tr_size; i++) {
        TR_CHECK(all[i] == 1000 + i, "allgather after %s: [%d] = %d", after, i, (int)all[i]);
    }
    TR_OK(amc_barrier(comm));
    free(all);
}

/* ---------------------------------------------------------------- algmismatch */

static void tr_algmismatch(void)
{
    const char *odd_env = getenv("AMCTEST_ODD_RANK");
    int         odd     = (odd_env != NULL) ? atoi(odd_env) : 1;
    int32_t     in[64], out[64], buf[1024];
    int         i, rc;

    TR_CHECK(tr_size >= 2, "algmismatch needs at least 2 ranks");
    if (tr_size < 2) {
        return;
    }
    for (i = 0; i < 64; i++) {
        in[i] = tr_rank + i;
    }
    rc = amc_allreduce(in, out, 64, AMC_INT32, AMC_SUM, amc_comm_world());
    TR_CHECK(rc == AMC_ERR_PROTOCOL, "allreduce, rank %d with another AMC_ALLREDUCE_ALG: %s",
             odd, amc_strerror(rc));
    tr_check_works(amc_comm_world(), "the allreduce mismatch");

    /* the odd rank roots it: nobody else can finish without its data */
    for (i = 0; i < 1024; i++) {
        buf[i] = (tr_rank == odd) ? 7 * i : -1;
    }
    rc = amc_bcast(buf, 1024, AMC_INT32, odd, amc_comm_world());
    if (tr_rank == odd) {
        TR_CHECK((rc == AMC_SUCCESS) || (rc == AMC_ERR_PROTOCOL), "bcast root: %s",
                 amc_strerror(rc));
    } else {
        TR_CHECK(rc == AMC_ERR_PROTOCOL, "bcast from rank %d with another AMC_BCAST_ALG: %s",
                 odd, amc_strerror(rc));
    }
    tr_check_works(amc_comm_world(), "the bcast mismatch");
}

/* ---------------------------------------------------------------- rootarg */

#define TR_BLOCK (64 * 1024 / 4) /* int32 per rank: 64 KiB, sent by rendezvous */

static void tr_rootarg(void)
{
    size_t  *counts = calloc((size_t)tr_size, sizeof(*counts));
    size_t  *bad    = calloc((size_t)tr_size, sizeof(*bad));
    size_t  *displs = calloc((size_t)tr_size, sizeof(*displs));
    int32_t *sbuf   = calloc((size_t)tr_size * TR_BLOCK, sizeof(*sbuf));
    int32_t *rbuf   = calloc((size_t)tr_size * TR_BLOCK, sizeof(*rbuf));
    int      i, rc, root = 0, leaf = 1;

    TR_CHECK((counts != NULL) && (bad != NULL) && (displs != NULL) && (sbuf != NULL) &&
             (rbuf != NULL), "calloc");
    TR_CHECK(tr_size >= 2, "rootarg needs at least 2 ranks");
    if ((tr_size < 2) || (rbuf == NULL)) {
        goto out;
    }
    for (i = 0; i < tr_size; i++) {
        counts[i] = 4;
        displs[i] = 4 * (size_t)i;
        bad[i]    = (i == tr_size - 1) ? SIZE_MAX / 2 : 4;
    }
    for (i = 0; i < tr_size * TR_BLOCK; i++) {
        sbuf[i] = i;
    }

    /* only the root's counts overflow: nobody can check them but the root */
    rc = amc_scatterv(sbuf, (tr_rank == root) ? bad : counts, displs, rbuf, 4, AMC_INT32, root,
                      amc_comm_world());
    TR_CHECK(rc == AMC_ERR_ARG, "scatterv with the root's counts overflowing: %s",
             amc_strerror(rc));
    tr_check_works(amc_comm_world(), "a scatterv with bad root counts");

    rc = amc_scatterv((tr_rank == root) ? NULL : sbuf, counts, displs, rbuf, 4, AMC_INT32, root,
                      amc_comm_world());
    TR_CHECK(rc == AMC_ERR_ARG, "scatterv with the root's sendbuf NULL: %s", amc_strerror(rc));
    tr_check_works(amc_comm_world(), "a scatterv with a NULL root buffer");

    rc = amc_gatherv(sbuf, 4, (tr_rank == root) ? NULL : rbuf, counts, displs, AMC_INT32, root,
                     amc_comm_world());
    TR_CHECK((rc == AMC_ERR_ARG) || ((rc == AMC_SUCCESS) && (tr_rank != root)),
             "gatherv with the root's recvbuf NULL: %s", amc_strerror(rc));
    tr_check_works(amc_comm_world(), "a gatherv with a NULL root buffer");

    for (i = 0; i < tr_size; i++) {
        counts[i] = TR_BLOCK;
        displs[i] = (size_t)TR_BLOCK * (size_t)i;
    }
    rc = amc_scatterv(sbuf, counts, displs, (tr_rank == leaf) ? NULL : rbuf, TR_BLOCK, AMC_INT32,
                      root, amc_comm_world());
    TR_CHECK((rc == AMC_ERR_ARG) || ((rc == AMC_SUCCESS) && (tr_rank != leaf)),
             "scatterv with rank %d's recvbuf NULL: %s", leaf, amc_strerror(rc));
    if ((rc == AMC_SUCCESS) && (tr_rank != root)) {
        TR_CHECK(rbuf[TR_BLOCK - 1] == tr_rank * TR_BLOCK + TR_BLOCK - 1, "scatterv data");
    }
    tr_check_works(amc_comm_world(), "a scatterv with a NULL buffer on rank 1");
out:
    free(counts);
    free(bad);
    free(displs);
    free(sbuf);
    free(rbuf);
}

/* ---------------------------------------------------------------- flood */

static void tr_flood(void)
{
    const char    *env   = getenv("AMCTEST_FLOOD_CALLS");
    int            calls = (env != NULL) ? atoi(env) : 10000;
    amc_request_t *reqs  = calloc((size_t)calls, sizeof(*reqs));
    int32_t       *vals  = calloc((size_t)calls, sizeof(*vals));
    int            next = 0, head = 0, refused = 0, first_refused = -1, rc, wrong = 0, total;
    struct timespec pause = { 0, 2000000 };

    TR_CHECK((reqs != NULL) && (vals != NULL), "calloc");
    if ((reqs == NULL) || (vals == NULL)) {
        goto out;
    }
    while (next < calls) {
        vals[next] = (tr_rank == 0) ? 3 * next + 1 : -1;
        rc = amc_ibcast(&vals[next], 1, AMC_INT32, 0, amc_comm_world(), &reqs[next]);
        if (rc == AMC_ERR_NO_MEMORY) {
            /* back-pressure: nothing started; the same call once there is room */
            if (first_refused < 0) {
                first_refused = next;
            }
            refused++;
            TR_CHECK(head < next, "start %d refused with nothing outstanding", next);
            if (head >= next) {
                break;
            }
            rc = amc_wait(&reqs[head]);
            TR_CHECK(rc == AMC_SUCCESS, "ibcast %d: %s", head, amc_strerror(rc));
            wrong += (vals[head] != 3 * head + 1);
            head++;
            continue;
        }
        TR_CHECK(rc == AMC_SUCCESS, "ibcast %d: %s", next, amc_strerror(rc));
        if (rc != AMC_SUCCESS) {
            break;
        }
        next++;
        if ((tr_rank == tr_size - 1) && (tr_size > 1) && (next % 1000 == 0)) {
            nanosleep(&pause, NULL); /* the others run ahead of this rank */
        }
    }
    for (; head < next; head++) {
        rc = amc_wait(&reqs[head]);
        TR_CHECK(rc == AMC_SUCCESS, "ibcast %d: %s", head, amc_strerror(rc));
        wrong += (vals[head] != 3 * head + 1);
    }
    TR_CHECK(wrong == 0, "%d of %d ibcasts delivered a wrong value", wrong, calls);
    TR_OK(amc_allreduce(&refused, &total, 1, AMC_INT32, AMC_SUM, amc_comm_world()));
    if (tr_rank == 0) {
        printf("flood: %d ibcasts per rank, %d starts refused and made again (rank 0: %d, "
               "first at %d)\n", calls, total, refused, first_refused);
    }
    tr_check_works(amc_comm_world(), "the flood");
out:
    free(reqs);
    free(vals);
}

/* ---------------------------------------------------------------- finalize */

static int tr_finalize(void)
{
    const char     *env   = getenv("AMCTEST_FINALIZE_PAUSE_MS");
    long            ms    = (env != NULL) ? atol(env) : 100;
    struct timespec pause = { ms / 1000, (ms % 1000) * 1000000L };
    amc_request_t   reqs[2];
    int32_t         one = 1, sum = 0;
    int             rc;

    TR_OK(amc_ibarrier(amc_comm_world(), &reqs[0]));
    TR_OK(amc_iallreduce(&one, &sum, 1, AMC_INT32, AMC_SUM, amc_comm_world(), &reqs[1]));
    if (tr_rank % 2 == 1) {
        nanosleep(&pause, NULL);
    }
    rc = amc_finalize();
    TR_CHECK(rc == AMC_SUCCESS, "amc_finalize with collectives pending: %s", amc_strerror(rc));
    if ((tr_rank == 0) && (tr_failures == 0)) {
        printf("ok finalize N=%d\n", tr_size);
    }
    return tr_failures ? 1 : 0;
}

int main(int argc, char **argv)
{
    const char *sub = (argc > 1) ? argv[1] : "?";

    TR_OK(amc_init(&argc, &argv));
    amc_comm_rank(amc_comm_world(), &tr_rank);
    amc_comm_size(amc_comm_world(), &tr_size);

    if (strcmp(sub, "finalize") == 0) {
        return tr_finalize(); /* it finalizes itself */
    }
    if (strcmp(sub, "algmismatch") == 0) {
        tr_algmismatch();
    } else if (strcmp(sub, "rootarg") == 0) {
        tr_rootarg();
    } else if (strcmp(sub, "flood") == 0) {
        tr_flood();
    } else {
        TR_CHECK(0, "unknown subtest %s", sub);
    }
    TR_OK(amc_barrier(amc_comm_world()));
    if ((tr_rank == 0) && (tr_failures == 0)) {
        printf("ok %s N=%d\n", sub, tr_size);
    }
    amc_finalize();
    return tr_failures ? 1 : 0;
}
