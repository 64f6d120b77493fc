/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * amc_comm_free gives the memory back (every
 * dup + free cycle leaked ~234 bytes, the freed communicators kept until
 * finalize), and stale handles still fail cleanly.
 *
 * - 100,000 dup + free cycles at N = 1, and 20,000 at N = 2 (one thread per
 *   rank; half of them freed with an ibarrier still running, so they pass
 *   through the zombie list): the bytes malloc holds (mallinfo2, or the
 *   sanitizer allocator's count under ASan) and the RSS do not grow;
 * - a freed handle gives AMC_ERR_COMM from every call that takes it, and
 *   keeps doing so while fewer than AMC_TOMBSTONES communicators were freed
 *   after it;
 * - a persistent request whose communicator was freed gives AMC_ERR_COMM
 *   from amc_start, also once that communicator's memory serves a new
 *   communicator (which is checked to happen: memory is reused), and the
 *   new communicator is not disturbed.
 */
#include "tests/unit/harness.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define AMC_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define AMC_TEST_ASAN 1
#endif
#endif

#ifdef AMC_TEST_ASAN
/* the ASan runtime's (sanitizer/allocator_interface.h, not always installed) */
size_t __sanitizer_get_current_allocated_bytes(void);

/* ASan keeps freed blocks in quarantine (RSS grows) but counts live ones */
static size_t heap_bytes(void)
{
    return __sanitizer_get_current_allocated_bytes();
}
#else
#include <malloc.h>

static size_t heap_bytes(void)
{
    struct mallinfo2 mi = mallinfo2();

    return mi.uordblks + mi.hblkhd;
}
#endif

#define MAX_GROWTH     (64 * 1024)        /* bytes; the leak was ~234 per cycle */
#define MAX_RSS_GROWTH (4 * 1024 * 1024)

static size_t rss_bytes(void)
{
    FILE         *f = fopen("/proc/self/statm", "r");
    unsigned long size = 0, resident = 0;

    if (f != NULL) {
        if (fscanf(f, "%lu %lu", &size, &resident) != 2) {
            resident = 0;
        }
        fclose(f);
    }
    return resident * (size_t)sysconf(_SC_PAGESIZE);
}

typedef struct {
    amc_test_world_t *w;
    int               rank;
    long              cycles;
    int               failed;
} cycle_job_t;

/* dup + free, every other one with an ibarrier running on it at the free */
static void *cycle_thread(void *arg)
{
    cycle_job_t  *job    = arg;
    amc_comm_t    parent = amc_test_world_comm(job->w, job->rank), comm;
    amc_request_t req;
    long          i;
    int           rc;

    for (i = 0; (i < job->cycles) && !job->failed; i++) {
        rc = amc_comm_dup(parent, &comm);
        if (rc != AMC_SUCCESS) {
            CHECK(0, "rank %d cycle %ld: dup: %s", job->rank, i, amc_strerror(rc));
            job->failed = 1;
            break;
        }
        req = AMC_REQUEST_NULL;
        if ((i % 2) == 1) {
            rc = amc_ibarrier(comm, &req);
            CHECK(rc == AMC_SUCCESS, "ibarrier: %s", amc_strerror(rc));
        }
        rc = amc_comm_free(&comm);
        CHECK(rc == AMC_SUCCESS, "free: %s", amc_strerror(rc));
        if (req != AMC_REQUEST_NULL) {
            rc = amc_wait(&req);
            CHECK(rc == AMC_SUCCESS, "wait for the ibarrier on the freed comm: %s",
                  amc_strerror(rc));
        }
        job->failed |= (rc != AMC_SUCCESS);
    }
    return NULL;
}

static void run_cycles(amc_test_world_t *w, long cycles)
{
    pthread_t   threads[2];
    cycle_job_t jobs[2];
    int         r;

    for (r = 0; r < w->n; r++) {
        jobs[r].w      = w;
        jobs[r].rank   = r;
        jobs[r].cycles = cycles;
        jobs[r].failed = 0;
    }
    if (w->n == 1) {
        cycle_thread(&jobs[0]); /* a job of one needs no peer */
        return;
    }
    for (r = 0; r < w->n; r++) {
        CHECK(pthread_create(&threads[r], NULL, cycle_thread, &jobs[r]) == 0, "pthread_create");
    }
    for (r = 0; r < w->n; r++) {
        pthread_join(threads[r], NULL);
    }
}

static void test_memory_flat(int n, long cycles)
{
    amc_test_world_t w;
    size_t           heap0, heap1, rss0, rss1;
    int              rc;

    rc = (n == 1) ? amc_test_world_create(&w, 1, AMC_FAKE_COMPLETE_ON_SEND, NULL)
                  : amc_test_world_create_threaded(&w, n, 0, 0);
    CHECK(rc == AMC_SUCCESS, "world: %s", amc_strerror(rc));
    if (rc != AMC_SUCCESS) {
        return;
    }
    /* warm-up: caches, slot free lists and the tombstone FIFO fill up */
    run_cycles(&w, 1000);
    heap0 = heap_bytes();
    rss0  = rss_bytes();
    run_cycles(&w, cycles);
    heap1 = heap_bytes();
    rss1  = rss_bytes();
    printf("N=%d: %ld dup+free cycles: heap %zu -> %zu bytes (%+ld), RSS %zu -> %zu kB\n", n,
           cycles, heap0, heap1, (long)heap1 - (long)heap0, rss0 / 1024, rss1 / 1024);
    CHECK(heap1 <= heap0 + MAX_GROWTH, "N=%d: %ld dup+free cycles grew the heap by %ld bytes "
          "(%.1f per cycle)", n, cycles, (long)heap1 - (long)heap0,
          (double)((long)heap1 - (long)heap0) / (double)cycles);
#ifndef AMC_TEST_ASAN
    CHECK(rss1 <= rss0 + MAX_RSS_GROWTH, "N=%d: %ld dup+free cycles grew the RSS by %zu kB", n,
          cycles, (rss1 - rss0) / 1024);
#endif
    amc_test_world_destroy(&w);
}

/* Every call that takes a communicator says the freed one is invalid. */
static void expect_stale(amc_comm_t stale, const char *when)
{
    amc_comm_t    copy = stale, out = AMC_COMM_NULL;
    amc_request_t req  = AMC_REQUEST_NULL;
    int32_t       x = 1, y = 0;
    int           v = -1;

    CHECK(amc_comm_size(stale, &v) == AMC_ERR_COMM, "%s: amc_comm_size", when);
    CHECK(amc_comm_rank(stale, &v) == AMC_ERR_COMM, "%s: amc_comm_rank", when);
    CHECK(amc_barrier(stale) == AMC_ERR_COMM, "%s: amc_barrier", when);
    CHECK(amc_ibarrier(stale, &req) == AMC_ERR_COMM, "%s: amc_ibarrier", when);
    CHECK(amc_allreduce(&x, &y, 1, AMC_INT32, AMC_SUM, stale) == AMC_ERR_COMM,
          "%s: amc_allreduce", when);
    CHECK(amc_comm_dup(stale, &out) == AMC_ERR_COMM, "%s: amc_comm_dup", when);
    CHECK(amc_comm_split(stale, 0, 0, &out) == AMC_ERR_COMM, "%s: amc_comm_split", when);
    CHECK(amc_comm_free(&copy) == AMC_ERR_COMM, "%s: amc_comm_free a second time", when);
}

static void test_stale_handles(void)
{
    amc_test_world_t w;
    amc_comm_t       world, comm, stale, other, reused = AMC_COMM_NULL;
    amc_request_t    barrier_req, sum_req;
    int32_t          in = 3, out = 0;
    int              i, rc;

    rc = amc_test_world_create(&w, 1, AMC_FAKE_COMPLETE_ON_SEND, NULL);
    CHECK(rc == AMC_SUCCESS, "world: %s", amc_strerror(rc));
    if (rc != AMC_SUCCESS) {
        return;
    }
    world = amc_test_world_comm(&w, 0);

    CHECK(amc_comm_dup(world, &comm) == AMC_SUCCESS, "dup");
    stale = comm;
    CHECK(amc_barrier_init(comm, &barrier_req) == AMC_SUCCESS, "barrier_init");
    CHECK(amc_allreduce_init(&in, &out, 1, AMC_INT32, AMC_SUM, comm, &sum_req) == AMC_SUCCESS,
          "allreduce_init");
    CHECK(amc_comm_free(&comm) == AMC_SUCCESS && comm == AMC_COMM_NULL, "free");
    expect_stale(stale, "freed just now");

    /* the guaranteed window: fewer than AMC_TOMBSTONES frees after it */
    for (i = 0; i < AMC_TOMBSTONES - 1; i++) {
        CHECK(amc_comm_dup(world, &other) == AMC_SUCCESS, "dup");
        CHECK(amc_comm_free(&other) == AMC_SUCCESS, "free");
    }
    expect_stale(stale, "after AMC_TOMBSTONES - 1 more frees");
    CHECK(amc_start(&barrier_req) == AMC_ERR_COMM, "amc_start of a barrier on a freed comm");

    /* creations and frees until its memory serves a new communicator */
    for (i = 0; (i < 2 * AMC_TOMBSTONES) && (reused == AMC_COMM_NULL); i++) {
        CHECK(amc_comm_dup(world, &other) == AMC_SUCCESS, "dup");
        if (other == stale) {
            reused = other;
        } else {
            CHECK(amc_comm_free(&other) == AMC_SUCCESS, "free");
        }
    }
    CHECK(reused != AMC_COMM_NULL, "the memory of a freed communicator was not reused after %d "
          "more creations: freed communicators are never given back", i);
    if (reused != AMC_COMM_NULL) {
        /* a stale raw handle now names the new communicator (as in MPI, an
         * erroneous program); a persistent request knows better */
        CHECK(amc_start(&barrier_req) == AMC_ERR_COMM,
              "amc_start of a barrier whose comm was freed and its memory reused");
        CHECK(amc_start(&sum_req) == AMC_ERR_COMM,
              "amc_start of an allreduce whose comm was freed and its memory reused");
        out = 0;
        CHECK(amc_allreduce(&in, &out, 1, AMC_INT32, AMC_SUM, reused) == AMC_SUCCESS &&
                  out == 3, "the communicator in the reused memory works");
        CHECK(amc_comm_free(&reused) == AMC_SUCCESS, "free");
    }
    CHECK(amc_request_free(&barrier_req) == AMC_SUCCESS && barrier_req == AMC_REQUEST_NULL,
          "request_free");
    CHECK(amc_request_free(&sum_req) == AMC_SUCCESS, "request_free");
    amc_test_world_destroy(&w);
}

int main(void)
{
    setenv("AMC_SPIN_COUNT", "0", 0); /* two ranks' threads may share a core */

    test_stale_handles();
    test_memory_flat(1, 100000);
    test_memory_flat(2, 20000);
    return amc_test_summary("test_comm_free");
}
