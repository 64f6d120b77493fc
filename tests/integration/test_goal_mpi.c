/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * GOAL schedules built through the C interface, run over real UCX under
 * mpirun: an allreduce and an alltoall with real data, every rank's result
 * checked, each started several times (persistent restart) with new input,
 * beside built-in collectives on the same communicator.
 *
 *   test_goal_mpi data [shm-file]     prints "ok data N=<size>"
 */
#include "amcoll.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COUNT 37   /* int32 elements per rank (allreduce) and per block (alltoall) */
#define RUNS  4

static int failures;

#define EXPECT(_c, ...)                                            \
    do {                                                           \
        if (!(_c)) {                                               \
            failures++;                                            \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);   \
            fprintf(stderr, __VA_ARGS__);                          \
            fprintf(stderr, "\n");                                 \
        }                                                          \
    } while (0)

/* Every rank sends its vector to every other; each received copy is
 * reduced into the result as soon as it is there (the reductions of a
 * rank run one at a time in the engine, in any order: sum is commutative). */
static int goal_allreduce(int n, amc_goal_t *gp)
{
    const size_t bytes = COUNT * sizeof(int32_t);
    amc_goal_t   g;
    int          r, p, k, copy, send, recv, red, status;

    status = amc_goal_create(n, &g);
    for (r = 0; (r < n) && (status == AMC_SUCCESS); r++) {
        status = amc_goal_copy(g, r, AMC_GOAL_BUF_RECV, 0, AMC_GOAL_BUF_SEND, 0, bytes, &copy);
        for (p = 0, k = 0; (p < n) && (status == AMC_SUCCESS); p++) {
            if (p == r) {
                continue;
            }
            status = amc_goal_send(g, r, p, 0, bytes, AMC_GOAL_BUF_SEND, 0, &send);
            if (status == AMC_SUCCESS) {
                /* any start is fine: it may go while the copy starts */
                status = amc_goal_irequires(g, r, send, copy);
            }
            if (status == AMC_SUCCESS) {
                status = amc_goal_recv(g, r, p, 0, bytes, AMC_GOAL_BUF_TMP, (size_t)k * bytes,
                                       &recv);
            }
            if (status == AMC_SUCCESS) {
                status = amc_goal_reduce(g, r, AMC_GOAL_BUF_RECV, 0, AMC_GOAL_BUF_TMP,
                                         (size_t)k * bytes, bytes, AMC_INT32, AMC_SUM, 0, &red);
            }
            if (status == AMC_SUCCESS) {
                status = amc_goal_requires(g, r, red, recv);
            }
            if (status == AMC_SUCCESS) {
                status = amc_goal_requires(g, r, red, copy);
            }
            k++;
        }
    }
    if (status == AMC_SUCCESS) {
        status = amc_goal_compile(g);
        if (status != AMC_SUCCESS) {
            fprintf(stderr, "allreduce: %s\n", amc_goal_error(g));
        }
    }
    *gp = g;
    return status;
}

/* Pairwise: in step i rank r sends block (r + i) % n and receives from
 * (r - i) % n; its own block is a copy. Data of step i waits for nothing. */
static int goal_alltoall(int n, amc_goal_t *gp)
{
    const size_t bytes = COUNT * sizeof(int32_t);
    amc_goal_t   g;
    int          r, i, status, a;

    status = amc_goal_create(n, &g);
    for (r = 0; (r < n) && (status == AMC_SUCCESS); r++) {
        status = amc_goal_copy(g, r, AMC_GOAL_BUF_RECV, (size_t)r * bytes, AMC_GOAL_BUF_SEND,
                               (size_t)r * bytes, bytes, &a);
        for (i = 1; (i < n) && (status == AMC_SUCCESS); i++) {
            int to = (r + i) % n, from = (r - i + n) % n;

            status = amc_goal_send(g, r, to, 7, bytes, AMC_GOAL_BUF_SEND, (size_t)to * bytes,
                                   &a);
            if (status == AMC_SUCCESS) {
                status = amc_goal_recv(g, r, from, 7, bytes, AMC_GOAL_BUF_RECV,
                                       (size_t)from * bytes, &a);
            }
        }
    }
    if (status == AMC_SUCCESS) {
        status = amc_goal_compile(g);
        if (status != AMC_SUCCESS) {
            fprintf(stderr, "alltoall: %s\n", amc_goal_error(g));
        }
    }
    *gp = g;
    return status;
}

static int32_t val(int rank, int run, int i)
{
    return (int32_t)(rank * 1000 + run * 100000 + i);
}

int main(int argc, char **argv)
{
    amc_goal_t    ar = NULL, a2a = NULL;
    amc_request_t req;
    int32_t      *in, *out;
    int           rank, n, run, i, p, status;
    size_t        need;

    if ((argc < 2) || strcmp(argv[1], "data")) {
        fprintf(stderr, "usage: %s data [shm-file]\n", argv[0]);
        return 2;
    }
    if (amc_init(&argc, &argv) != AMC_SUCCESS) {
        fprintf(stderr, "amc_init failed\n");
        return 1;
    }
    amc_comm_rank(AMC_COMM_WORLD, &rank);
    amc_comm_size(AMC_COMM_WORLD, &n);
    in  = malloc((size_t)n * COUNT * sizeof(*in));
    out = malloc((size_t)(n + 1) * COUNT * sizeof(*out));
    EXPECT(goal_allreduce(n, &ar) == AMC_SUCCESS, "allreduce schedule");
    EXPECT(goal_alltoall(n, &a2a) == AMC_SUCCESS, "alltoall schedule");
    EXPECT(amc_goal_buffer_bytes(a2a, rank, AMC_GOAL_BUF_RECV, &need) == AMC_SUCCESS &&
           need == (size_t)n * COUNT * sizeof(int32_t), "alltoall needs %zu bytes", need);
    for (run = 0; (run < RUNS) && (failures == 0); run++) {
        /* allreduce */
        for (i = 0; i < COUNT; i++) {
            in[i] = val(rank, run, i);
        }
        memset(out, 0xff, (size_t)n * COUNT * sizeof(*out));
        status = amc_goal_start(ar, in, out, AMC_COMM_WORLD, &req);
        EXPECT(status == AMC_SUCCESS, "allreduce start: %s", amc_strerror(status));
        status = amc_wait(&req);
        EXPECT(status == AMC_SUCCESS, "allreduce wait: %s", amc_strerror(status));
        for (i = 0; i < COUNT; i++) {
            int64_t want = 0;

            for (p = 0; p < n; p++) {
                want += val(p, run, i);
            }
            EXPECT(out[i] == (int32_t)want, "run %d rank %d allreduce[%d] = %d, expected %lld",
                   run, rank, i, out[i], (long long)want);
        }
        /* built-ins between: the GOAL instances take their place in order,
         * and the built-in allreduce agrees */
        EXPECT((amc_allreduce(in, out + COUNT, COUNT, AMC_INT32, AMC_SUM, AMC_COMM_WORLD) ==
                AMC_SUCCESS) && !memcmp(out, out + COUNT, COUNT * sizeof(*out)),
               "built-in allreduce differs");
        EXPECT(amc_barrier(AMC_COMM_WORLD) == AMC_SUCCESS, "barrier");

        /* alltoall: block p of rank r holds (r, p, i) */
        for (p = 0; p < n; p++) {
            for (i = 0; i < COUNT; i++) {
                in[p * COUNT + i] = val(rank, run, p * COUNT + i);
            }
        }
        memset(out, 0xff, (size_t)n * COUNT * sizeof(*out));
        status = amc_goal_start(a2a, in, out, AMC_COMM_WORLD, &req);
        EXPECT(status == AMC_SUCCESS, "alltoall start: %s", amc_strerror(status));
        status = amc_wait(&req);
        EXPECT(status == AMC_SUCCESS, "alltoall wait: %s", amc_strerror(status));
        for (p = 0; p < n; p++) {
            for (i = 0; i < COUNT; i++) {
                int32_t want = val(p, run, rank * COUNT + i);

                if (out[p * COUNT + i] != want) {
                    EXPECT(0, "run %d rank %d alltoall block %d [%d] = %d, expected %d", run,
                           rank, p, i, out[p * COUNT + i], want);
                    break;
                }
            }
        }
    }
    amc_goal_free(&ar);
    amc_goal_free(&a2a);
    free(in);
    free(out);
    status = amc_finalize();
    EXPECT(status == AMC_SUCCESS, "finalize");
    if (failures == 0) {
        printf("ok data N=%d\n", n);
    }
    return failures ? 1 : 0;
}
