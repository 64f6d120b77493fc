/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * AMC_THREAD_MULTIPLE and the progress thread over the threaded fake fabric:
 * every rank runs on threads of its own, its progress delivers its messages
 * and a per-rank recursive lock stands for UCX's worker lock.
 *
 * - 4 application threads per rank, each on its own dup'd communicator,
 *   run blocking and non-blocking collectives (eager and rendezvous sizes)
 *   concurrently, with and without the progress thread, N = 2, 4, 8; the
 *   64 KiB allreduce's copies and reductions run outside the control lock
 *   (AMC_DEFER_BYTES) while the progress thread delivers its messages;
 * - with the progress thread, an ibarrier nobody tests completes while every
 *   application thread only sleeps, and amc_test then reports it at once;
 * - the progress thread does not burn a core while a request waits for a
 *   late peer.
 * Built with -fsanitize=thread in CI (tests/run_all.sh).
 */
#include "tests/unit/harness.h"
#include "am_coll/context/request.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define AMC_TT_THREADS  4
#define AMC_TT_ITERS    12
#define AMC_TT_BIG      (64 * 1024) /* above AMC_RNDV_THRESH: pulled by the receiver */

typedef struct {
    amc_comm_t comm;
    int        rank;
    int        size;
    int        thread;
    amc_request_t req;
} amc_tt_job_t;

static void amc_tt_allreduce(amc_tt_job_t *job, int iter)
{
    int32_t in[4], out[4], i, expect;

    for (i = 0; i < 4; i++) {
        in[i] = (job->rank + 1) * (iter + job->thread + i);
    }
    CHECK(amc_allreduce(in, out, 4, AMC_INT32, AMC_SUM, job->comm) == AMC_SUCCESS,
          "allreduce");
    for (i = 0; i < 4; i++) {
        expect = (iter + job->thread + i) * job->size * (job->size + 1) / 2;
        CHECK(out[i] == expect, "allreduce[%d] rank %d thread %d: %d, expected %d", i,
              job->rank, job->thread, out[i], expect);
    }
}

static void amc_tt_bcast_big(amc_tt_job_t *job, int iter, unsigned char *buf)
{
    int    root = iter % job->size;
    size_t i, bad = 0;

    for (i = 0; i < AMC_TT_BIG; i++) {
        buf[i] = (job->rank == root) ? (unsigned char)(i * 7 + iter + job->thread) : 0;
    }
    CHECK(amc_bcast(buf, AMC_TT_BIG, AMC_BYTE, root, job->comm) == AMC_SUCCESS, "bcast");
    for (i = 0; i < AMC_TT_BIG; i++) {
        bad += (buf[i] != (unsigned char)(i * 7 + iter + job->thread));
    }
    CHECK(bad == 0, "bcast of 64 KiB: %zu bytes wrong on rank %d thread %d", bad, job->rank,
          job->thread);
}

static void amc_tt_allreduce_big(amc_tt_job_t *job, int iter)
{
    size_t   n = AMC_TT_BIG / sizeof(int32_t), i, bad = 0;
    int32_t *in = malloc(AMC_TT_BIG), *out = malloc(AMC_TT_BIG), expect;

    CHECK((in != NULL) && (out != NULL), "memory");
    if ((in == NULL) || (out == NULL)) {
        free(in);
        free(out);
        return;
    }
    for (i = 0; i < n; i++) {
        in[i] = (job->rank + 1) * (int32_t)((i + (size_t)iter + (size_t)job->thread) % 1000);
    }
    CHECK(amc_allreduce(in, out, n, AMC_INT32, AMC_SUM, job->comm) == AMC_SUCCESS,
          "allreduce of 64 KiB");
    for (i = 0; i < n; i++) {
        expect = (int32_t)((i + (size_t)iter + (size_t)job->thread) % 1000) * job->size *
                 (job->size + 1) / 2;
        bad += (out[i] != expect);
    }
    CHECK(bad == 0, "allreduce of 64 KiB: %zu elements wrong on rank %d thread %d", bad,
          job->rank, job->thread);
    free(in);
    free(out);
}

static void amc_tt_ialltoall(amc_tt_job_t *job, int iter)
{
    int32_t       in[16], out[16];
    amc_request_t req;
    int           i, flag = 0, bad = 0, rc = AMC_SUCCESS;

    for (i = 0; i < job->size; i++) {
        in[i] = job->rank * 1000 + i + iter;
    }
    CHECK(amc_ialltoall(in, out, 1, AMC_INT32, job->comm, &req) == AMC_SUCCESS, "ialltoall");
    while (!flag && (rc == AMC_SUCCESS)) {
        rc = amc_test(&req, &flag);
    }
    CHECK(rc == AMC_SUCCESS, "test: %s", amc_strerror(rc));
    for (i = 0; i < job->size; i++) {
        bad += (out[i] != i * 1000 + job->rank + iter);
    }
    CHECK(bad == 0, "ialltoall: %d wrong on rank %d", bad, job->rank);
}

static void *amc_tt_app_thread(void *arg)
{
    amc_tt_job_t  *job = arg;
    unsigned char *big = malloc(AMC_TT_BIG);
    amc_request_t  reqs[2];
    int32_t        one = 1, sum = 0;
    int            iter;

    CHECK(big != NULL, "memory");
    for (iter = 0; (iter < AMC_TT_ITERS) && (big != NULL); iter++) {
        amc_tt_allreduce(job, iter);
        amc_tt_bcast_big(job, iter, big);
        amc_tt_allreduce_big(job, iter);
        amc_tt_ialltoall(job, iter);
        CHECK(amc_barrier(job->comm) == AMC_SUCCESS, "barrier");
        CHECK(amc_ibarrier(job->comm, &reqs[0]) == AMC_SUCCESS, "ibarrier");
        CHECK(amc_iallreduce(&one, &sum, 1, AMC_INT32, AMC_SUM, job->comm, &reqs[1]) ==
                  AMC_SUCCESS, "iallreduce");
        CHECK(amc_waitall(2, reqs) == AMC_SUCCESS, "waitall");
        CHECK(sum == job->size, "iallreduce of ones: %d", sum);
    }
    free(big);
    return NULL;
}

static void amc_tt_run_threads(amc_tt_job_t *jobs, int count, void *(*fn)(void *))
{
    pthread_t *threads = calloc((size_t)count, sizeof(*threads));
    int        i;

    CHECK(threads != NULL, "memory");
    if (threads == NULL) {
        return;
    }
    for (i = 0; i < count; i++) {
        CHECK(pthread_create(&threads[i], NULL, fn, &jobs[i]) == 0, "pthread_create");
    }
    for (i = 0; i < count; i++) {
        pthread_join(threads[i], NULL);
    }
    free(threads);
}

/* A rank's dups of the world, one per application thread: a dup agrees on
 * the new context id with the other ranks, so each rank dups on a thread
 * of its own, all at once. */
typedef struct {
    amc_tt_job_t *jobs;
    int           count;
} amc_tt_dups_t;

static void *amc_tt_dup_thread(void *arg)
{
    amc_tt_dups_t *d = arg;
    int            t;

    for (t = 0; t < d->count; t++) {
        CHECK(amc_comm_dup(d->jobs[t].comm, &d->jobs[t].comm) == AMC_SUCCESS, "dup");
    }
    return NULL;
}

/* threads application threads per rank, each on its own communicator, all
 * at once. */
static void amc_tt_concurrent(amc_test_world_t *w, int threads)
{
    amc_tt_job_t  jobs[8 * AMC_TT_THREADS];
    amc_tt_dups_t dups[8];
    pthread_t     dupers[8];
    int           r, t, n = w->n;

    for (r = 0; r < n; r++) {
        for (t = 0; t < threads; t++) {
            amc_tt_job_t *job = &jobs[r * threads + t];

            job->rank   = r;
            job->size   = n;
            job->thread = t;
            job->comm   = amc_test_world_comm(w, r); /* the parent, until the dup */
        }
        dups[r].jobs  = &jobs[r * threads];
        dups[r].count = threads;
        CHECK(pthread_create(&dupers[r], NULL, amc_tt_dup_thread, &dups[r]) == 0,
              "pthread_create");
    }
    for (r = 0; r < n; r++) {
        pthread_join(dupers[r], NULL);
    }
    amc_tt_run_threads(jobs, n * threads, amc_tt_app_thread);
    for (r = 0; r < n * threads; r++) {
        CHECK(amc_comm_free(&jobs[r].comm) == AMC_SUCCESS, "free");
    }
}

/* Started, never tested: only the progress thread can finish it. */
static void *amc_tt_untested_ibarrier(void *arg)
{
    amc_tt_job_t *job = arg;
    amc_request_t req;
    int           slept, flag = 0;

    CHECK(amc_ibarrier(job->comm, &req) == AMC_SUCCESS, "ibarrier");
    for (slept = 0; (slept < 10000) && !amc_request_is_complete(req); slept++) {
        usleep(1000);
    }
    CHECK(amc_request_is_complete(req), "rank %d: the ibarrier did not complete in 10 s of "
          "usleep with the progress thread on", job->rank);
    CHECK(amc_test(&req, &flag) == AMC_SUCCESS && flag == 1,
          "rank %d: the first amc_test reports it complete", job->rank);
    return NULL;
}

static void amc_tt_untested(amc_test_world_t *w)
{
    amc_tt_job_t jobs[8];
    int          r;

    for (r = 0; r < w->n; r++) {
        jobs[r].comm = amc_test_world_comm(w, r);
        jobs[r].rank = r;
        jobs[r].size = w->n;
    }
    amc_tt_run_threads(jobs, w->n, amc_tt_untested_ibarrier);
}

static double amc_tt_cpu_sec(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void *amc_tt_late_barrier(void *arg)
{
    amc_tt_job_t *job = arg;

    if (job->req != AMC_REQUEST_NULL) {
        CHECK(amc_wait(&job->req) == AMC_SUCCESS, "wait for the early ibarrier");
    } else {
        CHECK(amc_barrier(job->comm) == AMC_SUCCESS, "late barrier");
    }
    return NULL;
}

/* Rank 0 waits for peers that come 300 ms late: its progress thread must
 * sleep, not spin, meanwhile. */
static void amc_tt_idle(amc_test_world_t *w)
{
    amc_tt_job_t jobs[8];
    double       cpu;
    int          r;

    for (r = 0; r < w->n; r++) {
        jobs[r].comm = amc_test_world_comm(w, r);
        jobs[r].rank = r;
        jobs[r].req  = AMC_REQUEST_NULL;
    }
    CHECK(amc_ibarrier(jobs[0].comm, &jobs[0].req) == AMC_SUCCESS, "ibarrier");
    cpu = amc_tt_cpu_sec();
    usleep(300000);
    cpu = amc_tt_cpu_sec() - cpu;
    CHECK(cpu < 0.06, "the process used %.0f ms of CPU in 300 ms while its progress thread "
          "waited for late peers", cpu * 1e3);
    amc_tt_run_threads(jobs, w->n, amc_tt_late_barrier);
}

int main(void)
{
    static const int sizes[] = { 2, 4, 8 };
    amc_test_world_t w;
    unsigned         i;
    int              pt;

    for (pt = 0; pt <= 1; pt++) {
        for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
            CHECK(amc_test_world_create_threaded(&w, sizes[i], pt, 1) == AMC_SUCCESS, "world");
            amc_tt_concurrent(&w, AMC_TT_THREADS);
            if (pt) {
                amc_tt_untested(&w);
                amc_tt_idle(&w);
            }
            amc_test_world_destroy(&w);
            printf("N=%d MULTIPLE, progress thread %s: done\n", sizes[i], pt ? "on" : "off");
            fflush(stdout);
        }
    }
    /* one application thread per rank and the progress thread: the locks
     * are taken only while that thread is not parked */
    for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        CHECK(amc_test_world_create_threaded(&w, sizes[i], 1, 0) == AMC_SUCCESS, "world");
        amc_tt_concurrent(&w, 1);
        amc_tt_untested(&w);
        amc_tt_idle(&w);
        {
            /* finalized with a request the thread still counts: the thread
             * goes first, the request is dropped after it */
            amc_request_t left;

            CHECK(amc_ibarrier(amc_test_world_comm(&w, 0), &left) == AMC_SUCCESS, "ibarrier");
        }
        amc_test_world_destroy(&w);
        printf("N=%d SERIALIZED, progress thread on: done\n", sizes[i]);
        fflush(stdout);
    }
    return amc_test_summary("test_threads");
}
