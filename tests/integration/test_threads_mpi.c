/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Integration test for AMC_THREAD_MULTIPLE and the progress thread: real UCX,
 * ranks started by mpirun (PMIx).
 *
 *   test_threads_mpi threads    4 application threads, each on its own dup of
 *                               world, run blocking, non-blocking and
 *                               persistent collectives at once (eager and
 *                               rendezvous sizes); every result checked
 *   test_threads_mpi untested   (AMC_PROGRESS_THREAD=1) an ibarrier that no
 *                               thread tests while all sleep in usleep is
 *                               complete on the first amc_test afterwards;
 *                               then rank 0 waits 500 ms for late peers and
 *                               its process may use little CPU meanwhile;
 *                               then rank 0 only sleeps while it receives a
 *                               rendezvous bcast, and the peers' waits must
 *                               end long before it wakes (its thread pulled)
 *
 * AMCTEST_THREAD_LEVEL=single runs untested at AMC_THREAD_SINGLE (one
 * application thread: the locks are then taken only while the progress
 * thread works); =funneled asks for level 1 (MPI's FUNNELED, not in api.md)
 * and must be given SERIALIZED; the default asks for AMC_THREAD_MULTIPLE.
 *
 * Rank 0 prints "ok <subtest> N=<n>"; failures print "FAIL ..." and the exit
 * status is non-zero.
 */
#include "amcoll.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TT_THREADS 4
#define TT_ITERS   40
#define TT_BIG     (64 * 1024)

static int tt_rank, tt_size;
static int tt_failures;

#define TT_CHECK(_cond, ...)                                                    \
    do {                                                                        \
        if (!(_cond)) {                                                         \
            fprintf(stderr, "FAIL rank %d/%d %s:%d: ", tt_rank, tt_size,        \
                    __FILE__, __LINE__);                                        \
            fprintf(stderr, __VA_ARGS__);                                       \
            fputc('\n', stderr);                                                \
            __atomic_add_fetch(&tt_failures, 1, __ATOMIC_RELAXED);              \
        }                                                                       \
    } while (0)

#define TT_OK(_call) \
    do { int _rc = (_call); TT_CHECK(_rc == AMC_SUCCESS, "%s: %s", #_call, amc_strerror(_rc)); } while (0)

typedef struct {
    amc_comm_t comm;
    int        id;
} tt_job_t;

static void tt_round(tt_job_t *job, int iter, unsigned char *big, amc_request_t persist,
                     int32_t *persist_in, int32_t *persist_out)
{
    int32_t       in[4], out[4], a2a_in[64], a2a_out[64], one = 1, ones = 0;
    amc_request_t reqs[2];
    int           i, root = (iter + job->id) % tt_size, flag = 0, rc = AMC_SUCCESS;
    size_t        bad = 0;

    for (i = 0; i < 4; i++) {
        in[i] = (tt_rank + 1) * (iter + job->id + i);
    }
    TT_OK(amc_allreduce(in, out, 4, AMC_INT32, AMC_SUM, job->comm));
    for (i = 0; i < 4; i++) {
        TT_CHECK(out[i] == (iter + job->id + i) * tt_size * (tt_size + 1) / 2,
                 "allreduce thread %d iter %d: %d", job->id, iter, out[i]);
    }

    for (i = 0; i < TT_BIG; i++) {
        big[i] = (tt_rank == root) ? (unsigned char)(i * 13 + iter + job->id) : 0;
    }
    TT_OK(amc_bcast(big, TT_BIG, AMC_BYTE, root, job->comm));
    for (i = 0; i < TT_BIG; i++) {
        bad += (big[i] != (unsigned char)(i * 13 + iter + job->id));
    }
    TT_CHECK(bad == 0, "bcast 64 KiB thread %d iter %d root %d: %zu bytes wrong", job->id,
             iter, root, bad);

    for (i = 0; i < tt_size; i++) {
        a2a_in[i] = tt_rank * 1000 + i + iter * 7 + job->id;
    }
    TT_OK(amc_ialltoall(a2a_in, a2a_out, 1, AMC_INT32, job->comm, &reqs[0]));
    while (!flag && (rc == AMC_SUCCESS)) {
        rc = amc_test(&reqs[0], &flag);
    }
    TT_CHECK(rc == AMC_SUCCESS, "test: %s", amc_strerror(rc));
    for (i = 0; i < tt_size; i++) {
        TT_CHECK(a2a_out[i] == i * 1000 + tt_rank + iter * 7 + job->id,
                 "ialltoall thread %d from %d: %d", job->id, i, a2a_out[i]);
    }

    TT_OK(amc_barrier(job->comm));
    TT_OK(amc_ibarrier(job->comm, &reqs[0]));
    TT_OK(amc_iallreduce(&one, &ones, 1, AMC_INT32, AMC_SUM, job->comm, &reqs[1]));
    TT_OK(amc_waitall(2, reqs));
    TT_CHECK(ones == tt_size, "iallreduce of ones: %d", ones);

    *persist_in = tt_rank + iter * job->id;
    TT_OK(amc_start(&persist));
    TT_OK(amc_wait(&persist));
    TT_CHECK(*persist_out == tt_size * (tt_size - 1) / 2 + tt_size * iter * job->id,
             "persistent allreduce thread %d iter %d: %d", job->id, iter, *persist_out);
}

static void *tt_thread(void *arg)
{
    tt_job_t     *job = arg;
    unsigned char *big = malloc(TT_BIG);
    int32_t        pin = 0, pout = 0;
    amc_request_t  persist = AMC_REQUEST_NULL;
    int            iter;

    TT_CHECK(big != NULL, "memory");
    TT_OK(amc_allreduce_init(&pin, &pout, 1, AMC_INT32, AMC_SUM, job->comm, &persist));
    for (iter = 0; (iter < TT_ITERS) && (big != NULL) && (persist != AMC_REQUEST_NULL); iter++) {
        tt_round(job, iter, big, persist, &pin, &pout);
    }
    if (persist != AMC_REQUEST_NULL) {
        TT_OK(amc_request_free(&persist));
    }
    free(big);
    return NULL;
}

static void tt_threads(void)
{
    pthread_t threads[TT_THREADS];
    tt_job_t  jobs[TT_THREADS];
    int       t;

    /* dup is collective over world: one thread creates them, in order */
    for (t = 0; t < TT_THREADS; t++) {
        jobs[t].id = t;
        TT_OK(amc_comm_dup(amc_comm_world(), &jobs[t].comm));
    }
    for (t = 0; t < TT_THREADS; t++) {
        TT_CHECK(pthread_create(&threads[t], NULL, tt_thread, &jobs[t]) == 0, "pthread_create");
    }
    for (t = 0; t < TT_THREADS; t++) {
        pthread_join(threads[t], NULL);
    }
    for (t = 0; t < TT_THREADS; t++) {
        TT_OK(amc_comm_free(&jobs[t].comm));
    }
}

static double tt_clock_sec(clockid_t clock)
{
    struct timespec ts;

    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A check whose outcome depends on rank 0's progress thread: amc_test runs a
 * progress pass before it reports, so the ibarrier of tt_untested looks complete
 * even if the thread never ran. Here rank 0 receives a rendezvous-sized bcast
 * from rank 1 and only sleeps; the sender's side completes only once rank 0
 * has pulled the data, so the peers' waits end early only if rank 0's thread
 * ran the pull while rank 0 slept. */
#define TT_PULL_BYTES   (32 * 1024) /* rendezvous, below the bcast pipeline */
#define TT_PULL_SLEEP_MS 1000
#define TT_PULL_LIMIT_S  0.5

static void tt_untested_pull(void)
{
    amc_comm_t     world = amc_comm_world();
    amc_request_t  req;
    unsigned char *buf = malloc(TT_PULL_BYTES);
    double         t0, waited;
    size_t         i, bad = 0;
    int            flag = 0;

    TT_CHECK(buf != NULL, "memory");
    if ((buf == NULL) || (tt_size < 2)) {
        free(buf);
        return;
    }
    for (i = 0; i < TT_PULL_BYTES; i++) {
        buf[i] = (tt_rank == 1) ? (unsigned char)(i * 11 + 3) : 0;
    }
    TT_OK(amc_barrier(world));
    if (tt_rank == 0) {
        TT_OK(amc_ibcast(buf, TT_PULL_BYTES, AMC_BYTE, 1, world, &req));
        for (i = 0; i < TT_PULL_SLEEP_MS; i++) {
            usleep(1000);
        }
        TT_OK(amc_test(&req, &flag));
        TT_CHECK(flag == 1, "a bcast received while rank 0 slept is not complete");
        if (!flag) {
            TT_OK(amc_wait(&req));
        }
    } else {
        usleep(50000); /* rank 0's thread is asleep on the wakeup fd by now */
        TT_OK(amc_ibcast(buf, TT_PULL_BYTES, AMC_BYTE, 1, world, &req));
        t0 = tt_clock_sec(CLOCK_MONOTONIC);
        TT_OK(amc_wait(&req));
        waited = tt_clock_sec(CLOCK_MONOTONIC) - t0;
        TT_CHECK(waited < TT_PULL_LIMIT_S, "bcast waited %.0f ms for rank 0, which only slept: "
                 "its progress thread did not pull the data", waited * 1e3);
    }
    for (i = 0; i < TT_PULL_BYTES; i++) {
        bad += (buf[i] != (unsigned char)(i * 11 + 3));
    }
    TT_CHECK(bad == 0, "bcast: %zu bytes wrong", bad);
    free(buf);
}

static void tt_untested(void)
{
    amc_comm_t    world = amc_comm_world();
    amc_request_t req;
    double        cpu;
    int           i, flag = 0;

    TT_OK(amc_barrier(world));
    /* The peers come 50 ms late, so rank 0's thread is asleep on the wakeup
     * fd when their messages arrive. amc_test's own progress pass could still
     * finish this one-round barrier: tt_untested_pull is the check that
     * fails when the thread is not woken. */
    if (tt_rank != 0) {
        usleep(50000);
    }
    TT_OK(amc_ibarrier(world, &req));
    for (i = 0; i < 300; i++) {
        usleep(1000); /* computing, as far as the library can tell */
    }
    TT_OK(amc_test(&req, &flag));
    TT_CHECK(flag == 1, "an ibarrier never tested for 300 ms of usleep is not complete on "
             "the first amc_test: the progress thread did not run it");
    if (!flag) {
        TT_OK(amc_wait(&req));
    }

    /* rank 0 waits alone: its progress thread must sleep, not spin */
    TT_OK(amc_barrier(world));
    if (tt_rank == 0) {
        TT_OK(amc_ibarrier(world, &req));
        cpu = tt_clock_sec(CLOCK_PROCESS_CPUTIME_ID);
        usleep(500000);
        cpu = tt_clock_sec(CLOCK_PROCESS_CPUTIME_ID) - cpu;
        TT_CHECK(cpu < 0.1, "%.0f ms of CPU in 500 ms while the progress thread waited for "
                 "late peers", cpu * 1e3);
        TT_OK(amc_wait(&req));
    } else {
        usleep(500000);
        TT_OK(amc_barrier(world));
    }
    tt_untested_pull();
}

int main(int argc, char **argv)
{
    const char *sub   = (argc > 1) ? argv[1] : "threads";
    const char *level = getenv("AMCTEST_THREAD_LEVEL");
    int         want = AMC_THREAD_MULTIPLE, expect, provided = -1;

    if ((level != NULL) && (strcmp(level, "single") == 0)) {
        want = AMC_THREAD_SINGLE;
    } else if ((level != NULL) && (strcmp(level, "funneled") == 0)) {
        want = AMC_THREAD_SINGLE + 1;
    }
    expect = (want == AMC_THREAD_SINGLE + 1) ? AMC_THREAD_SERIALIZED : want;
    TT_OK(amc_init_thread(&argc, &argv, want, &provided));
    TT_CHECK(provided == expect, "provided %d, asked for %d, expected %d", provided, want,
             expect);
    TT_CHECK((want == AMC_THREAD_MULTIPLE) || (strcmp(sub, "threads") != 0),
             "the threads subtest needs AMC_THREAD_MULTIPLE");
    amc_comm_rank(amc_comm_world(), &tt_rank);
    amc_comm_size(amc_comm_world(), &tt_size);

    if (strcmp(sub, "threads") == 0) {
        tt_threads();
    } else if (strcmp(sub, "untested") == 0) {
        tt_untested();
    } else {
        TT_CHECK(0, "unknown subtest %s", sub);
    }
    TT_OK(amc_barrier(amc_comm_world()));
    if ((tt_rank == 0) && (tt_failures == 0)) {
        printf("ok %s N=%d\n", sub, tt_size);
    }
    amc_finalize();
    return tt_failures ? 1 : 0;
}
