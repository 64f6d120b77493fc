/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The API's promise under misuse and stress: a clear
 * error, never a crash, a hang or a silent wrong answer.
 *
 *   duplicates  the same request twice in waitall / testall / waitany is
 *               AMC_ERR_ARG, and nothing in the array is completed or freed
 *   algorithms  ranks whose AMC_<COLL>_ALG differ fail with AMC_ERR_PROTOCOL
 *               (none waits for ever), the log names the variable, and the
 *               communicator works afterwards; the bcast a late inner rank
 *               forwards is checked against the algorithm of its own call
 *   own args    a call whose own arguments are bad (the root's counts or
 *               buffer in scatterv / gatherv, a non-root's buffer) returns
 *               AMC_ERR_ARG and tells the others, whose calls fail with
 *               AMC_ERR_ARG instead of waiting for ever (or succeed, if their
 *               part was done); the communicator works afterwards
 *   flood       ranks post far more ibcasts than AMC_EARLY_MAX allows, one
 *               rank slow: a start beyond the bound returns AMC_ERR_NO_MEMORY
 *               and takes no sequence number; retried after the oldest
 *               request completes, every ibcast completes with the right
 *               value on every rank, and later collectives work. Messages of
 *               peers far ahead are held, not dropped; beyond what any peer
 *               can be ahead they are a protocol error
 */
#include "am_coll/api/config_read.h"
#include "am_coll/api/context_open.h"
#include "tests/unit/harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_N 8

/* Delivers everything queued, in send order. */
static void deliver_all(amc_test_world_t *w)
{
    while (amc_fake_deliverable(w->fabric) > 0) {
        amc_fake_deliver(w->fabric, 0);
    }
}

/* A world whose ranks have configurations of their own. */
static int world_create_configs(amc_test_world_t *w, int n, const amc_config_t *cfgs)
{
    amc_transport_t *tp;
    int              rank, status;

    w->n        = n;
    w->threaded = amc_test_threaded_locks();
    w->ctx      = calloc((size_t)n, sizeof(*w->ctx));
    if (w->ctx == NULL) {
        return AMC_ERR_NO_MEMORY;
    }
    status = amc_fake_fabric_create(n, AMC_FAKE_COMPLETE_ON_DELIVERY, &w->fabric);
    for (rank = 0; (rank < n) && (status == AMC_SUCCESS); rank++) {
        status = amc_fake_transport_create(w->fabric, rank, &tp);
        if (status == AMC_SUCCESS) {
            status = amc_context_create(&cfgs[rank], tp, w->threaded, &w->ctx[rank]);
        }
    }
    return status;
}

/* The defaults (AMC_* of the environment ignored), logging errors. */
static void config_quiet_defaults(amc_config_t *cfg)
{
    amc_config_defaults(cfg);
    cfg->log_level       = AMC_LOG_ERROR;
    cfg->progress_thread = 0;
}

/* What the library logs to stderr in between, for checks on its messages. */
static int  capture_saved = -1;
static FILE *capture_file;

static void capture_begin(void)
{
    fflush(stderr);
    capture_file  = tmpfile();
    capture_saved = dup(2);
    if ((capture_file != NULL) && (capture_saved >= 0)) {
        dup2(fileno(capture_file), 2);
    }
}

/* The captured text (static storage, cut at its size); echoed when verbose. */
static const char *capture_end(void)
{
    static char text[65536];
    size_t      len = 0;

    fflush(stderr);
    if (capture_saved >= 0) {
        dup2(capture_saved, 2);
        close(capture_saved);
        capture_saved = -1;
    }
    text[0] = '\0';
    if (capture_file != NULL) {
        rewind(capture_file);
        len = fread(text, 1, sizeof(text) - 1, capture_file);
        text[len] = '\0';
        fclose(capture_file);
        capture_file = NULL;
    }
    if (getenv("AMCTEST_VERBOSE") != NULL) {
        fputs(text, stderr);
    }
    return text;
}

/* Each rank's request tested, one random deliverable message delivered,
 * until every request completed or nothing moves any more. */
static void drive_all(amc_test_world_t *w, amc_request_t *reqs, int *status, uint64_t seed)
{
    amc_test_rng_t rng;
    int            rank, flag, left = 0, idle = 0, activity;
    size_t         count;

    amc_test_rng_seed(&rng, seed);
    for (rank = 0; rank < w->n; rank++) {
        status[rank] = (reqs[rank] == AMC_REQUEST_NULL) ? AMC_SUCCESS : -1;
        left += (status[rank] == -1);
    }
    while ((left > 0) && (idle < 1000)) {
        activity = 0;
        for (rank = 0; rank < w->n; rank++) {
            if (status[rank] != -1) {
                continue;
            }
            status[rank] = amc_test(&reqs[rank], &flag);
            if ((status[rank] == AMC_SUCCESS) && !flag) {
                status[rank] = -1;
                continue;
            }
            left--;
            activity++;
        }
        count = amc_fake_deliverable(w->fabric);
        if (count > 0) {
            activity += amc_fake_deliver(w->fabric, amc_test_rng_below(&rng, count));
        }
        idle = activity ? 0 : idle + 1;
    }
}

/* Checked collectives on every rank (an allgather, and an allreduce and a
 * bcast unless skip names them: those whose configuration the ranks do not
 * share): the communicator still works. */
static int works_after(amc_test_world_t *w, uint64_t seed, int skip)
{
    amc_request_t reqs[MAX_N];
    int           status[MAX_N], in[MAX_N], out[MAX_N], b[MAX_N][3], all[MAX_N][MAX_N];
    int           rank, ok = 1, n = w->n, i;

    if (skip != AMC_COLL_ALLREDUCE) {
        for (rank = 0; rank < n; rank++) {
            in[rank]  = rank + 1;
            out[rank] = -1;
            reqs[rank] = AMC_REQUEST_NULL;
            ok &= (amc_iallreduce(&in[rank], &out[rank], 1, AMC_INT, AMC_SUM,
                                  amc_test_world_comm(w, rank), &reqs[rank]) == AMC_SUCCESS);
        }
        drive_all(w, reqs, status, seed);
        for (rank = 0; rank < n; rank++) {
            ok &= (status[rank] == AMC_SUCCESS) && (out[rank] == n * (n + 1) / 2);
        }
    }
    if (skip != AMC_COLL_BCAST) {
        for (rank = 0; rank < n; rank++) {
            b[rank][0] = b[rank][1] = b[rank][2] = (rank == n - 1) ? 4242 : 0;
            reqs[rank] = AMC_REQUEST_NULL;
            ok &= (amc_ibcast(b[rank], 3, AMC_INT, n - 1, amc_test_world_comm(w, rank),
                              &reqs[rank]) == AMC_SUCCESS);
        }
        drive_all(w, reqs, status, seed + 1);
        for (rank = 0; rank < n; rank++) {
            ok &= (status[rank] == AMC_SUCCESS) && (b[rank][2] == 4242);
        }
    }
    for (rank = 0; rank < n; rank++) {
        in[rank] = 100 + rank;
        reqs[rank] = AMC_REQUEST_NULL;
        ok &= (amc_iallgather(&in[rank], all[rank], 1, AMC_INT, amc_test_world_comm(w, rank),
                              &reqs[rank]) == AMC_SUCCESS);
    }
    drive_all(w, reqs, status, seed + 2);
    for (rank = 0; rank < n; rank++) {
        ok &= (status[rank] == AMC_SUCCESS);
        for (i = 0; i < n; i++) {
            ok &= (all[rank][i] == 100 + i);
        }
    }
    return ok;
}

/* ---------------------------------------------------------------- duplicates */

static void test_duplicate_requests(void)
{
    enum { BIG = 40 };
    amc_test_world_t w;
    amc_request_t    r[2], a[3], big[BIG], keep, other, p = AMC_REQUEST_NULL;
    int              rank, flag = -1, index = -1, i;

    CHECK(amc_test_world_create(&w, 2, AMC_FAKE_COMPLETE_ON_DELIVERY, NULL) == AMC_SUCCESS, "w");
    for (rank = 0; rank < 2; rank++) {
        CHECK(amc_ibarrier(amc_test_world_comm(&w, rank), &r[rank]) == AMC_SUCCESS, "ibarrier");
    }
    deliver_all(&w); /* both complete: a wait would release at once */
    keep = r[0];

    a[0] = a[1] = r[0];
    CHECK(amc_waitall(2, a) == AMC_ERR_ARG, "waitall with the same request twice");
    CHECK((a[0] == keep) && (a[1] == keep), "a refused waitall leaves the handles");
    a[0] = r[0];
    a[1] = AMC_REQUEST_NULL;
    a[2] = r[0];
    CHECK(amc_testall(3, a, &flag) == AMC_ERR_ARG, "testall with a repeat behind a null");
    CHECK((a[0] == keep) && (a[2] == keep), "a refused testall leaves the handles");
    a[0] = a[1] = r[0];
    CHECK(amc_waitany(2, a, &index) == AMC_ERR_ARG, "waitany with the same request twice");
    CHECK((a[0] == keep) && (a[1] == keep), "a refused waitany leaves the handles");

    /* a long array is checked another way: a repeat far apart */
    for (i = 0; i < BIG; i++) {
        big[i] = AMC_REQUEST_NULL;
    }
    big[3]       = r[0];
    big[BIG - 1] = r[0];
    CHECK(amc_waitall(BIG, big) == AMC_ERR_ARG, "waitall of %d with a repeat", BIG);
    big[BIG - 1] = r[1];
    CHECK(amc_testall(BIG, big, &flag) == AMC_SUCCESS && flag == 1, "the same array, no repeat");
    CHECK((big[3] == AMC_REQUEST_NULL) && (big[BIG - 1] == AMC_REQUEST_NULL), "both released");

    /* the refused calls freed nothing: two new requests are two */
    CHECK(amc_ibarrier(amc_test_world_comm(&w, 0), &r[0]) == AMC_SUCCESS, "ibarrier");
    CHECK(amc_ibarrier(amc_test_world_comm(&w, 0), &other) == AMC_SUCCESS, "ibarrier");
    CHECK(r[0] != other, "the request free list was not corrupted");
    for (i = 0; i < 2; i++) {
        CHECK(amc_ibarrier(amc_test_world_comm(&w, 1), &r[1]) == AMC_SUCCESS, "ibarrier");
        deliver_all(&w);
        CHECK(amc_wait(&r[1]) == AMC_SUCCESS, "rank 1 barrier %d", i);
    }
    a[0] = r[0];
    a[1] = other;
    CHECK(amc_waitall(2, a) == AMC_SUCCESS, "rank 0's two barriers");

    /* a persistent request repeated is refused as well, active or not */
    CHECK(amc_barrier_init(amc_test_world_comm(&w, 0), &p) == AMC_SUCCESS, "barrier_init");
    a[0] = a[1] = p;
    CHECK(amc_waitall(2, a) == AMC_ERR_ARG, "waitall with an inactive persistent one twice");
    CHECK(amc_request_free(&p) == AMC_SUCCESS, "request_free");
    amc_test_world_destroy(&w);
}

/* ---------------------------------------------------------------- algorithms */

/* N=4, allreduce: rank odd_rank forces ring, the others recursive doubling.
 * Ranks 0 and 3 never hear from the odd rank in their own algorithm: they
 * must learn of the mismatch from the ranks that saw it. */
static void test_alg_mismatch_allreduce(uint64_t seed, int odd_rank)
{
    enum { N = 4, COUNT = 8 };
    amc_test_world_t w;
    amc_config_t     cfgs[N];
    amc_request_t    reqs[N];
    int              status[N], in[N][COUNT], out[N][COUNT], rank, i;
    const char      *log;

    for (rank = 0; rank < N; rank++) {
        config_quiet_defaults(&cfgs[rank]);
        strcpy(cfgs[rank].alg[AMC_COLL_ALLREDUCE], (rank == odd_rank) ? "ring" : "recursive_doubling");
    }
    CHECK(world_create_configs(&w, N, cfgs) == AMC_SUCCESS, "world");
    capture_begin();
    for (rank = 0; rank < N; rank++) {
        for (i = 0; i < COUNT; i++) {
            in[rank][i]  = rank + i;
            out[rank][i] = -1;
        }
        CHECK(amc_iallreduce(in[rank], out[rank], COUNT, AMC_INT, AMC_SUM,
                             amc_test_world_comm(&w, rank), &reqs[rank]) == AMC_SUCCESS, "iallreduce");
    }
    drive_all(&w, reqs, status, seed);
    deliver_all(&w); /* notices still on their way */
    log = capture_end();
    for (rank = 0; rank < N; rank++) {
        CHECK(status[rank] == AMC_ERR_PROTOCOL, "seed %llu: rank %d of allreduce ring/recursive "
              "doubling got %s", (unsigned long long)seed, rank,
              (status[rank] == -1) ? "nothing (it waits for ever)" : amc_strerror(status[rank]));
    }
    CHECK(strstr(log, "AMC_ALLREDUCE_ALG") != NULL, "the log names AMC_ALLREDUCE_ALG:\n%s", log);
    CHECK(strstr(log, "ring") != NULL && strstr(log, "recursive_doubling") != NULL,
          "the log names both algorithms:\n%s", log);
    deliver_all(&w);
    /* the ranks agree on everything else: those collectives still work */
    CHECK(works_after(&w, seed, AMC_COLL_ALLREDUCE),
          "seed %llu: the communicator works after the mismatch", (unsigned long long)seed);
    CHECK(amc_fake_rndv_pending(w.fabric) == 0, "descriptors left unreleased");
    amc_test_world_destroy(&w);
}

/* N=5, alltoallv bruck: rank odd_rank's AMC_ALLTOALLV_BRUCK_BLOCK differs
 * (16 bytes against 8), so its slots, and which blocks it sends straight,
 * differ from the others'. Blocks of 1..4 ints, with values (0xff bytes)
 * that a stamp meaning "sent straight" is made of, should a check read a
 * misplaced slot. No rank may wait for ever; those that fail say the
 * counts disagree; the communicator works afterwards. */
static void test_vbruck_block_mismatch(uint64_t seed, int odd_rank)
{
    enum { N = 5 };
    amc_test_world_t w;
    amc_config_t     cfgs[N];
    amc_request_t    reqs[N];
    size_t           sc[N][N], rc[N][N], displ[N];
    int              status[N], sbuf[N][N * 4], rbuf[N][N * 4], rank, j, failed = 0;

    for (rank = 0; rank < N; rank++) {
        config_quiet_defaults(&cfgs[rank]);
        cfgs[rank].log_level             = -1;
        cfgs[rank].alltoallv_bruck_block = (rank == odd_rank) ? 16 : 8;
        strcpy(cfgs[rank].alg[AMC_COLL_ALLTOALLV], "bruck");
    }
    CHECK(world_create_configs(&w, N, cfgs) == AMC_SUCCESS, "world");
    for (j = 0; j < N; j++) {
        displ[j] = (size_t)j * 4;
    }
    for (rank = 0; rank < N; rank++) {
        for (j = 0; j < N; j++) {
            sc[rank][j] = 1 + (size_t)((rank + 3 * j + (int)seed) % 4);
            rc[j][rank] = sc[rank][j];
        }
        memset(sbuf[rank], 0xff, sizeof(sbuf[rank]));
    }
    for (rank = 0; rank < N; rank++) {
        CHECK(amc_ialltoallv(sbuf[rank], sc[rank], displ, rbuf[rank], rc[rank], displ, AMC_INT,
                             amc_test_world_comm(&w, rank), &reqs[rank]) == AMC_SUCCESS,
              "ialltoallv");
    }
    drive_all(&w, reqs, status, seed);
    deliver_all(&w);
    for (rank = 0; rank < N; rank++) {
        CHECK((status[rank] == AMC_SUCCESS) || (status[rank] == AMC_ERR_TRUNCATE),
              "seed %llu: rank %d of alltoallv bruck with another block got %s",
              (unsigned long long)seed, rank,
              (status[rank] == -1) ? "nothing (it waits for ever)" : amc_strerror(status[rank]));
        failed += (status[rank] == AMC_ERR_TRUNCATE);
    }
    CHECK(failed > 0, "seed %llu: slots of different sizes went unnoticed",
          (unsigned long long)seed);
    CHECK(works_after(&w, seed, -1), "seed %llu: the communicator works after the mismatch",
          (unsigned long long)seed);
    CHECK(amc_fake_rndv_pending(w.fabric) == 0, "descriptors left unreleased");
    amc_test_world_destroy(&w);
}

/* N=5, bcast from root 0: the root pipelines in segments, the others expect
 * a binomial bcast. No non-root may wait for ever. */
static void test_alg_mismatch_bcast(uint64_t seed)
{
    enum { N = 5, COUNT = 64 };
    amc_test_world_t w;
    amc_config_t     cfgs[N];
    amc_request_t    reqs[N];
    int              status[N], buf[N][COUNT], rank, i;
    const char      *log;

    for (rank = 0; rank < N; rank++) {
        config_quiet_defaults(&cfgs[rank]);
        cfgs[rank].bcast_segment = 64;
        strcpy(cfgs[rank].alg[AMC_COLL_BCAST], (rank == 0) ? "pipeline" : "binomial");
    }
    CHECK(world_create_configs(&w, N, cfgs) == AMC_SUCCESS, "world");
    capture_begin();
    for (rank = 0; rank < N; rank++) {
        for (i = 0; i < COUNT; i++) {
            buf[rank][i] = (rank == 0) ? i : -1;
        }
        CHECK(amc_ibcast(buf[rank], COUNT, AMC_INT, 0, amc_test_world_comm(&w, rank),
                         &reqs[rank]) == AMC_SUCCESS, "ibcast");
    }
    drive_all(&w, reqs, status, seed);
    deliver_all(&w); /* notices still on their way */
    log = capture_end();
    /* the root only sends: it may be done before it hears of the mismatch */
    CHECK((status[0] == AMC_SUCCESS) || (status[0] == AMC_ERR_PROTOCOL), "seed %llu: root got %s",
          (unsigned long long)seed, (status[0] == -1) ? "nothing" : amc_strerror(status[0]));
    for (rank = 1; rank < N; rank++) {
        CHECK(status[rank] == AMC_ERR_PROTOCOL, "seed %llu: rank %d of bcast pipeline/binomial "
              "got %s", (unsigned long long)seed, rank,
              (status[rank] == -1) ? "nothing (it waits for ever)" : amc_strerror(status[rank]));
    }
    CHECK(strstr(log, "AMC_BCAST_ALG") != NULL, "the log names AMC_BCAST_ALG:\n%s", log);
    deliver_all(&w);
    CHECK(works_after(&w, seed, AMC_COLL_BCAST),
          "seed %llu: the communicator works after the mismatch", (unsigned long long)seed);
    amc_test_world_destroy(&w);
}

/* N=8, binomial bcast from 0: rank 4 is an inner rank (children 5 and 6,
 * grandchild 7) and calls last, so it forwards the data before its call.
 * Agreeing ranks: everyone gets the data. Rank 4 configured for the
 * pipeline: its children still get the data it forwarded, and its own call
 * fails with AMC_ERR_PROTOCOL instead of silently taking binomial data. */
static void test_alg_forwarding(uint64_t seed, int late_disagrees)
{
    enum { N = 8, COUNT = 6, LATE = 4 };
    amc_test_world_t w;
    amc_config_t     cfgs[N];
    amc_request_t    reqs[N];
    int              status[N], buf[N][COUNT], rank, i, flag, st;
    const char      *log;

    for (rank = 0; rank < N; rank++) {
        config_quiet_defaults(&cfgs[rank]);
        strcpy(cfgs[rank].alg[AMC_COLL_BCAST],
               ((rank == LATE) && late_disagrees) ? "pipeline" : "binomial");
    }
    CHECK(world_create_configs(&w, N, cfgs) == AMC_SUCCESS, "world");
    capture_begin();
    for (rank = 0; rank < N; rank++) {
        for (i = 0; i < COUNT; i++) {
            buf[rank][i] = (rank == 0) ? 1000 + i : -1;
        }
        reqs[rank] = AMC_REQUEST_NULL;
        if (rank != LATE) {
            CHECK(amc_ibcast(buf[rank], COUNT, AMC_INT, 0, amc_test_world_comm(&w, rank),
                             &reqs[rank]) == AMC_SUCCESS, "ibcast");
        }
    }
    drive_all(&w, reqs, status, seed);
    for (rank = 0; rank < N; rank++) {
        if (rank != LATE) {
            CHECK(status[rank] == AMC_SUCCESS, "seed %llu: rank %d without the late rank: %s",
                  (unsigned long long)seed, rank,
                  (status[rank] == -1) ? "waits" : amc_strerror(status[rank]));
            CHECK(memcmp(buf[rank], buf[0], sizeof(buf[0])) == 0, "rank %d data", rank);
        }
    }
    CHECK(amc_ibcast(buf[LATE], COUNT, AMC_INT, 0, amc_test_world_comm(&w, LATE), &reqs[LATE]) ==
          AMC_SUCCESS, "late ibcast");
    st = amc_test(&reqs[LATE], &flag);
    deliver_all(&w);
    log = capture_end();
    CHECK(flag, "the late rank's call completes at once");
    if (late_disagrees) {
        CHECK(st == AMC_ERR_PROTOCOL, "seed %llu: the late rank adopted a binomial bcast as its "
              "pipeline: %s", (unsigned long long)seed, amc_strerror(st));
        CHECK(strstr(log, "AMC_BCAST_ALG") != NULL, "the log names AMC_BCAST_ALG:\n%s", log);
    } else {
        CHECK(st == AMC_SUCCESS, "late rank: %s", amc_strerror(st));
        CHECK(memcmp(buf[LATE], buf[0], sizeof(buf[0])) == 0, "late rank's data");
    }
    deliver_all(&w);
    CHECK(works_after(&w, seed, late_disagrees ? AMC_COLL_BCAST : AMC_COLL_NONE),
          "seed %llu: the communicator works afterwards", (unsigned long long)seed);
    amc_test_world_destroy(&w);
}

/* N=4: rank 1 runs the barrier on the engine (AMC_BARRIER_ALG=dissemination),
 * the others on the fast path. Every rank fails, none waits for ever. */
static void test_alg_mismatch_barrier(uint64_t seed)
{
    enum { N = 4 };
    amc_test_world_t w;
    amc_config_t     cfgs[N];
    amc_request_t    reqs[N];
    int              status[N], rank;
    const char      *log;

    for (rank = 0; rank < N; rank++) {
        config_quiet_defaults(&cfgs[rank]);
        strcpy(cfgs[rank].alg[AMC_COLL_BARRIER], (rank == 1) ? "dissemination" : "auto");
    }
    CHECK(world_create_configs(&w, N, cfgs) == AMC_SUCCESS, "world");
    capture_begin();
    for (rank = 0; rank < N; rank++) {
        CHECK(amc_ibarrier(amc_test_world_comm(&w, rank), &reqs[rank]) == AMC_SUCCESS, "ibarrier");
    }
    drive_all(&w, reqs, status, seed);
    deliver_all(&w); /* notices still on their way */
    log = capture_end();
    for (rank = 0; rank < N; rank++) {
        CHECK(status[rank] == AMC_ERR_PROTOCOL, "seed %llu: rank %d of a barrier fast path/"
              "engine got %s", (unsigned long long)seed, rank,
              (status[rank] == -1) ? "nothing (it waits for ever)" : amc_strerror(status[rank]));
    }
    CHECK(strstr(log, "AMC_BARRIER_ALG") != NULL, "the log names AMC_BARRIER_ALG:\n%s", log);
    deliver_all(&w);
    CHECK(works_after(&w, seed, AMC_COLL_NONE), "seed %llu: the communicator works afterwards",
          (unsigned long long)seed);
    /* and keeps working: the abandoned barrier does not pin the window
     * (W + AMC_EARLY_MAX instances from the oldest unfinished one) */
    for (rank = 0; rank < 12; rank++) {
        CHECK(works_after(&w, seed + (uint64_t)rank, AMC_COLL_NONE),
              "seed %llu: round %d after the mismatch", (unsigned long long)seed, rank);
    }
    amc_test_world_destroy(&w);
}

/* ---------------------------------------------------------------- counts and roots */

/* N=5, pipelined bcast from root 0 in 32-byte segments: the root's count is
 * root_count, the others' count. Every segment has the size its receiver
 * expects; only their number differs. The root's children learn it from
 * the last-message flag, stop forwarding and tell everyone: every non-root
 * fails with AMC_ERR_TRUNCATE (none waits for segments that never come,
 * none returns a prefix as success), and the next call works at once. */
static void test_pipeline_count_mismatch(uint64_t seed, int root_count, int count, int rndv)
{
    enum { N = 5, MAXC = 64 };
    amc_test_world_t w;
    amc_config_t     cfgs[N];
    amc_request_t    reqs[N];
    int              status[N], buf[N][MAXC + 4], rank, i;
    const char      *log;

    for (rank = 0; rank < N; rank++) {
        config_quiet_defaults(&cfgs[rank]);
        cfgs[rank].bcast_segment = 32;
        cfgs[rank].rndv_thresh   = rndv ? 1 : (1u << 30);
        strcpy(cfgs[rank].alg[AMC_COLL_BCAST], "pipeline");
    }
    CHECK(world_create_configs(&w, N, cfgs) == AMC_SUCCESS, "world");
    capture_begin();
    for (rank = 0; rank < N; rank++) {
        for (i = 0; i < MAXC + 4; i++) {
            buf[rank][i] = (rank == 0) ? i : -1;
        }
        CHECK(amc_ibcast(buf[rank], (size_t)((rank == 0) ? root_count : count), AMC_INT, 0,
                         amc_test_world_comm(&w, rank), &reqs[rank]) == AMC_SUCCESS, "ibcast");
    }
    drive_all(&w, reqs, status, seed);
    deliver_all(&w);
    log = capture_end();
    /* the root only sends: told before its sends completed, it fails too */
    CHECK((status[0] == AMC_SUCCESS) || (status[0] == AMC_ERR_TRUNCATE),
          "seed %llu: the root got %s", (unsigned long long)seed,
          (status[0] == -1) ? "nothing" : amc_strerror(status[0]));
    for (rank = 1; rank < N; rank++) {
        CHECK(status[rank] == AMC_ERR_TRUNCATE, "seed %llu: root count %d, rank %d count %d: %s",
              (unsigned long long)seed, root_count, rank, count,
              (status[rank] == -1) ? "never completes" : amc_strerror(status[rank]));
        for (i = count; i < MAXC + 4; i++) {
            CHECK(buf[rank][i] == -1, "rank %d: written past its %d elements", rank, count);
        }
    }
    CHECK(strstr(log, "messages than this rank expects") != NULL, "the log says why:\n%s", log);
    CHECK(amc_fake_rndv_pending(w.fabric) == 0, "descriptors left unreleased");
    CHECK(works_after(&w, seed, -1), "seed %llu: the next calls work at once",
          (unsigned long long)seed);
    amc_test_world_destroy(&w);
}

/* N=4: rank 0 bcasts as root 0, the others as root 1. Bcast roots only
 * send, so a rank may be done before the foreign message comes: then its
 * call has returned, and the message is logged and dropped. Each rank's
 * call either fails with AMC_ERR_PROTOCOL or returns; the mismatch is seen
 * (a failed call or the log); and it never fails a later, correct call. */
static void test_root_mismatch(uint64_t seed)
{
    enum { N = 4, COUNT = 16 };
    amc_test_world_t w;
    amc_config_t     cfgs[N];
    amc_request_t    reqs[N];
    int              status[N], buf[N][COUNT], rank, i, failed = 0;
    const char      *log;

    for (rank = 0; rank < N; rank++) {
        config_quiet_defaults(&cfgs[rank]);
    }
    CHECK(world_create_configs(&w, N, cfgs) == AMC_SUCCESS, "world");
    capture_begin();
    for (rank = 0; rank < N; rank++) {
        for (i = 0; i < COUNT; i++) {
            buf[rank][i] = (rank <= 1) ? rank * 100 + i : -1;
        }
        CHECK(amc_ibcast(buf[rank], COUNT, AMC_INT, (rank == 0) ? 0 : 1,
                         amc_test_world_comm(&w, rank), &reqs[rank]) == AMC_SUCCESS, "ibcast");
    }
    drive_all(&w, reqs, status, seed);
    deliver_all(&w);
    log = capture_end();
    for (rank = 0; rank < N; rank++) {
        CHECK((status[rank] == AMC_SUCCESS) || (status[rank] == AMC_ERR_PROTOCOL),
              "seed %llu: rank %d got %s", (unsigned long long)seed, rank,
              (status[rank] == -1) ? "nothing" : amc_strerror(status[rank]));
        failed += (status[rank] == AMC_ERR_PROTOCOL);
        if ((rank >= 2) && (status[rank] == AMC_SUCCESS)) {
            CHECK(buf[rank][COUNT - 1] == 100 + COUNT - 1, "rank %d: success with data not of "
                  "the root it named", rank);
        }
    }
    CHECK((failed > 0) || (strstr(log, "after this rank's call") != NULL),
          "seed %llu: nobody saw the root mismatch:\n%s", (unsigned long long)seed, log);
    CHECK(works_after(&w, seed, -1), "seed %llu: a later call failed for the mismatch",
          (unsigned long long)seed);
    amc_test_world_destroy(&w);
}

/* ---------------------------------------------------------------- own arguments */

enum {
    BAD_ROOT_COUNT,      /* scatterv: the root's sendcounts overflow */
    BAD_ROOT_BUFFER,     /* scatterv: the root's sendbuf is NULL, counts not 0 */
    BAD_GATHERV_ROOT,    /* gatherv: the root's recvbuf is NULL */
    BAD_LEAF_BUFFER,     /* scatterv: rank 2's recvbuf is NULL, its count not 0 */
    BAD_REDUCE_ROOT,     /* reduce: the root's recvbuf is NULL */
    BAD_ROOT_REQUEST,    /* scatterv: the root passes no request pointer */
    BAD_BARRIER_REQUEST, /* ibarrier: the root passes no request pointer */
    BAD_KINDS
};

static const char *bad_name[BAD_KINDS] = {
    "scatterv, root's count overflows", "scatterv, root's sendbuf NULL",
    "gatherv, root's recvbuf NULL", "scatterv, rank 2's recvbuf NULL",
    "reduce, root's recvbuf NULL", "scatterv, root's request pointer NULL",
    "ibarrier, rank 1's request pointer NULL"
};

/* N=4, root 1. rndv: every message by rendezvous (the sender's part is done
 * only once the receiver pulls or drops it). */
static void test_own_arguments(uint64_t seed, int kind, int rndv)
{
    enum { N = 4, ROOT = 1, BAD_LEAF = 2 };
    amc_test_world_t w;
    amc_config_t     cfg;
    amc_request_t    reqs[N];
    size_t           counts[N], displs[N], bad_counts[N];
    int              status[N], start[N], sbuf[4 * N], rbuf[N][4 * N], rank, i, bad_rank;
    const char      *log;

    config_quiet_defaults(&cfg);
    cfg.rndv_thresh = rndv ? 1 : 1u << 30;
    CHECK(amc_test_world_create(&w, N, AMC_FAKE_COMPLETE_ON_DELIVERY, &cfg) == AMC_SUCCESS, "w");
    for (i = 0; i < N; i++) {
        counts[i]     = 2;
        displs[i]     = 2 * (size_t)i;
        bad_counts[i] = (i == N - 1) ? (size_t)-1 / 2 : 2;
    }
    for (i = 0; i < 4 * N; i++) {
        sbuf[i] = 100 + i;
    }
    bad_rank = (kind == BAD_LEAF_BUFFER) ? BAD_LEAF : ROOT;
    capture_begin();
    for (rank = 0; rank < N; rank++) {
        amc_comm_t c   = amc_test_world_comm(&w, rank);
        int        bad = (rank == bad_rank);

        memset(rbuf[rank], 0, sizeof(rbuf[rank]));
        reqs[rank] = AMC_REQUEST_NULL;
        switch (kind) {
        case BAD_ROOT_COUNT:
        case BAD_ROOT_BUFFER:
        case BAD_LEAF_BUFFER:
        case BAD_ROOT_REQUEST:
            start[rank] = amc_iscatterv((bad && (kind == BAD_ROOT_BUFFER)) ? NULL : sbuf,
                                        (bad && (kind == BAD_ROOT_COUNT)) ? bad_counts : counts,
                                        displs,
                                        (bad && (kind == BAD_LEAF_BUFFER)) ? NULL : rbuf[rank], 2,
                                        AMC_INT, ROOT, c,
                                        (bad && (kind == BAD_ROOT_REQUEST)) ? NULL : &reqs[rank]);
            break;
        case BAD_BARRIER_REQUEST:
            start[rank] = amc_ibarrier(c, bad ? NULL : &reqs[rank]);
            break;
        case BAD_GATHERV_ROOT:
            start[rank] = amc_igatherv(&sbuf[rank], 1, bad ? NULL : rbuf[rank], counts, displs,
                                       AMC_INT, ROOT, c, &reqs[rank]);
            break;
        default:
            start[rank] = amc_ireduce(&sbuf[rank], bad ? NULL : rbuf[rank], 1, AMC_INT, AMC_SUM,
                                      ROOT, c, &reqs[rank]);
            break;
        }
        CHECK(start[rank] == (bad ? AMC_ERR_ARG : AMC_SUCCESS), "%s: rank %d's call: %s",
              bad_name[kind], rank, amc_strerror(start[rank]));
    }
    drive_all(&w, reqs, status, seed);
    deliver_all(&w);
    log = capture_end();
    for (rank = 0; rank < N; rank++) {
        if (rank == bad_rank) {
            continue;
        }
        /* nobody finishes a scatterv without the root; elsewhere a rank
         * may be done before the notice comes */
        CHECK((status[rank] == AMC_ERR_ARG) ||
              ((status[rank] == AMC_SUCCESS) && (bad_rank != ROOT ||
                                                 (kind >= BAD_GATHERV_ROOT &&
                                                  kind != BAD_ROOT_REQUEST))),
              "seed %llu rndv %d, %s: rank %d got %s", (unsigned long long)seed, rndv,
              bad_name[kind], rank,
              (status[rank] == -1) ? "nothing (it waits for ever)" : amc_strerror(status[rank]));
    }
    CHECK(strstr(log, "argument") != NULL, "the log says why:\n%s", log);
    CHECK(works_after(&w, seed, AMC_COLL_NONE), "seed %llu, %s: the communicator works "
          "afterwards", (unsigned long long)seed, bad_name[kind]);
    CHECK(amc_fake_rndv_pending(w.fabric) == 0, "descriptors left unreleased");
    amc_test_world_destroy(&w);
}

/* N=8: rank 4, an inner rank of the binomial tree, is late, and its call
 * passes a NULL buffer. Eager (rndv 0): it forwarded the bcast before its
 * own call, so its children have their data before it calls; its call fails
 * with AMC_ERR_ARG. By rendezvous (rndv 1) the data stays at the root until
 * a receiver pulls it into its buffer, so the root and the late rank's
 * subtree (5, 6, 7) wait for its call, as MPI allows; once its bad call
 * comes, none waits any longer: each ends with its data or AMC_ERR_ARG. The
 * communicator works afterwards either way. Its own configuration: the
 * premise is the protocol, which AMC_RNDV_THRESH in the environment would
 * change. */
static void test_own_arguments_forwarded(uint64_t seed, int rndv)
{
    enum { N = 8, COUNT = 6, LATE = 4 };
    amc_test_world_t w;
    amc_config_t     cfg;
    amc_request_t    reqs[N];
    int              status[N], buf[N][COUNT], rank, i, subtree;

    config_quiet_defaults(&cfg);
    cfg.log_level   = -1; /* the bad call and, by rendezvous, the peers told of it */
    cfg.rndv_thresh = rndv ? 1 : 1u << 30;
    CHECK(amc_test_world_create(&w, N, AMC_FAKE_COMPLETE_ON_DELIVERY, &cfg) == AMC_SUCCESS, "w");
    for (rank = 0; rank < N; rank++) {
        for (i = 0; i < COUNT; i++) {
            buf[rank][i] = (rank == 0) ? 1000 + i : -1;
        }
        reqs[rank] = AMC_REQUEST_NULL;
        if (rank != LATE) {
            CHECK(amc_ibcast(buf[rank], COUNT, AMC_INT, 0, amc_test_world_comm(&w, rank),
                             &reqs[rank]) == AMC_SUCCESS, "ibcast");
        }
    }
    drive_all(&w, reqs, status, seed);
    for (rank = 0; rank < N; rank++) {
        subtree = (rank == 0) || (rank > LATE);
        if (rndv && subtree) {
            CHECK(status[rank] == -1, "seed %llu rndv: rank %d finished (%s) before the late "
                  "rank let its data through", (unsigned long long)seed, rank,
                  amc_strerror(status[rank]));
        } else {
            CHECK((rank == LATE) || (status[rank] == AMC_SUCCESS), "seed %llu rndv %d: rank %d: "
                  "%s", (unsigned long long)seed, rndv, rank,
                  (status[rank] == -1) ? "waits" : amc_strerror(status[rank]));
        }
    }
    CHECK(amc_ibcast(NULL, COUNT, AMC_INT, 0, amc_test_world_comm(&w, LATE), &reqs[LATE]) ==
          AMC_ERR_ARG, "the late rank's bad call");
    deliver_all(&w);
    if (rndv) {
        drive_all(&w, reqs, status, seed);
        for (rank = 0; rank < N; rank++) {
            CHECK((rank == LATE) || (status[rank] == AMC_SUCCESS) ||
                  (status[rank] == AMC_ERR_ARG), "seed %llu rndv: after the late rank's bad "
                  "call, rank %d %s", (unsigned long long)seed, rank,
                  (status[rank] == -1) ? "still waits" : amc_strerror(status[rank]));
            for (i = 0; (rank != LATE) && (status[rank] == AMC_SUCCESS) && (i < COUNT); i++) {
                CHECK(buf[rank][i] == 1000 + i, "rank %d finished with wrong data", rank);
            }
        }
    }
    CHECK(works_after(&w, seed, AMC_COLL_NONE), "seed %llu rndv %d: the communicator works "
          "afterwards", (unsigned long long)seed, rndv);
    CHECK(amc_fake_rndv_pending(w.fabric) == 0, "descriptors left unreleased");
    amc_test_world_destroy(&w);
}

/* ---------------------------------------------------------------- flood */

/* N=4, bcast from rank 0, K calls per rank, AMC_EARLY_MAX = 16 (so at most
 * 8 + 16 = 24 outstanding per rank). Each rank posts while it may; on
 * AMC_ERR_NO_MEMORY it retries the same call later, after progress. Rank 3
 * is slow: it tries to post only every 7th step, so the others and their
 * messages run far ahead of it. */
static void test_flood(uint64_t seed, unsigned tokens)
{
    enum { N = 4, K = 600, EARLY = 16, SLOW = 3 };
    static amc_request_t reqs[N][K];
    static int           vals[N][K];
    amc_test_world_t     w;
    amc_config_t         cfg;
    amc_test_rng_t       rng;
    int                  next[N] = { 0 }, head[N] = { 0 }, refused[N] = { 0 }, other[N] = { 0 };
    int                  rank, k, rc, flag, idle = 0, step, activity, wrong = 0, done;
    size_t               count;

    config_quiet_defaults(&cfg);
    cfg.log_level    = getenv("AMCTEST_VERBOSE") ? AMC_LOG_ERROR : -1;
    cfg.early_max    = EARLY;
    cfg.eager_tokens = tokens;
    CHECK(amc_test_world_create(&w, N, AMC_FAKE_COMPLETE_ON_DELIVERY, &cfg) == AMC_SUCCESS, "w");
    amc_test_rng_seed(&rng, seed);
    for (step = 0; idle < 2000; step++) {
        activity = 0;
        for (rank = 0; rank < N; rank++) {
            for (k = 0; (k < 8) && (next[rank] < K) && ((rank != SLOW) || (step % 7 == 0)); k++) {
                vals[rank][next[rank]] = (rank == 0) ? 7 * next[rank] + 1 : -1;
                rc = amc_ibcast(&vals[rank][next[rank]], 1, AMC_INT, 0,
                                amc_test_world_comm(&w, rank), &reqs[rank][next[rank]]);
                if (rc == AMC_ERR_NO_MEMORY) {
                    refused[rank]++; /* nothing started: the same call again later */
                    break;
                }
                other[rank] += (rc != AMC_SUCCESS);
                next[rank]++;
                activity++;
            }
            while (head[rank] < next[rank]) {
                rc = amc_test(&reqs[rank][head[rank]], &flag);
                if ((rc == AMC_SUCCESS) && !flag) {
                    break;
                }
                if ((rc != AMC_SUCCESS) && (other[rank]++ == 0)) {
                    fprintf(stderr, "seed %llu tokens %u: rank %d's ibcast %d: %s\n",
                            (unsigned long long)seed, tokens, rank, head[rank],
                            amc_strerror(rc));
                }
                wrong += (rc == AMC_SUCCESS) && (vals[rank][head[rank]] != 7 * head[rank] + 1);
                head[rank]++;
                activity++;
            }
        }
        for (k = 0; k < 6; k++) {
            count = amc_fake_deliverable(w.fabric);
            if (count > 0) {
                activity += amc_fake_deliver(w.fabric, amc_test_rng_below(&rng, count));
            }
        }
        done = 1;
        for (rank = 0; rank < N; rank++) {
            done &= (head[rank] == K);
        }
        if (done) {
            break;
        }
        idle = activity ? 0 : idle + 1;
    }
    for (rank = 0; rank < N; rank++) {
        CHECK(head[rank] == K, "seed %llu tokens %u: rank %d completed %d of %d ibcasts (%d "
              "posted)", (unsigned long long)seed, tokens, rank, head[rank], K, next[rank]);
        CHECK(other[rank] == 0, "rank %d: %d starts or tests failed otherwise", rank,
              other[rank]);
    }
    CHECK(wrong == 0, "seed %llu: %d ibcasts delivered a wrong value", (unsigned long long)seed,
          wrong);
    CHECK(refused[0] + refused[1] + refused[2] > 0, "the fast ranks never met the bound");
    deliver_all(&w);
    CHECK(works_after(&w, seed, AMC_COLL_NONE), "seed %llu tokens %u: collectives after the "
          "flood", (unsigned long long)seed, tokens);
    /* the bound on what peers send ahead rests on the tokens: none is
     * created (a rendezvous message pulled in place gave one back) */
    deliver_all(&w);
    for (rank = 0; rank < N; rank++) {
        for (k = 0; k < N; k++) {
            CHECK((k == rank) ||
                  (amc_flow_tokens(&w.ctx[rank]->flow, k) + amc_flow_owed(&w.ctx[k]->flow, rank) == tokens),
                  "seed %llu: tokens from rank %d to %d: %u + %u owed, of %u",
                  (unsigned long long)seed, rank, k, amc_flow_tokens(&w.ctx[rank]->flow, k),
                  amc_flow_owed(&w.ctx[k]->flow, rank), tokens);
        }
    }
    CHECK(amc_fake_rndv_pending(w.fabric) == 0, "descriptors left unreleased");
    amc_test_world_destroy(&w);
}

/* The bound on starts counts this rank's own instances only: with its store
 * full of a peer's early messages a rank still starts up to the bound.
 * A message further ahead than any peer can be is refused. */
static void test_arrival_bound(void)
{
    enum { N = 2, EARLY = 4, AHEAD = 12 };
    amc_test_world_t  w;
    amc_config_t      cfg;
    amc_request_t     reqs[N][AHEAD];
    amc_wire_hdr_t    hdr;
    amc_wire_packed_t wire;
    size_t            len;
    amc_comm_t        c1;
    int               k, flag, rc, posted = 0;

    config_quiet_defaults(&cfg);
    cfg.log_level = -1;
    cfg.early_max = EARLY;
    CHECK(amc_test_world_create(&w, N, AMC_FAKE_COMPLETE_ON_SEND, &cfg) == AMC_SUCCESS, "w");
    c1 = amc_test_world_comm(&w, 1);
    /* rank 0 runs AHEAD = 8 + 4 ibarriers ahead; rank 1 takes their messages */
    for (k = 0; k < AHEAD; k++) {
        CHECK(amc_ibarrier(amc_test_world_comm(&w, 0), &reqs[0][k]) == AMC_SUCCESS, "ibarrier %d",
              k);
    }
    deliver_all(&w);
    CHECK(amc_comm_take_error(c1) == AMC_SUCCESS, "rank 1 held what rank 0 sent ahead");
    for (k = 0; k < AHEAD; k++) {
        rc = amc_ibarrier(c1, &reqs[1][k]);
        CHECK(rc == AMC_SUCCESS, "rank 1's ibarrier %d: %s", k, amc_strerror(rc));
        posted += (rc == AMC_SUCCESS);
    }
    deliver_all(&w);
    for (k = 0; k < posted; k++) {
        CHECK((amc_test(&reqs[0][k], &flag) == AMC_SUCCESS) && flag, "rank 0 barrier %d", k);
        CHECK((amc_test(&reqs[1][k], &flag) == AMC_SUCCESS) && flag, "rank 1 barrier %d", k);
    }
    /* far beyond anything a peer could have entered: garbage */
    memset(&hdr, 0, sizeof(hdr));
    hdr.kind  = AMC_WIRE_BARRIER;
    hdr.src   = 0;
    hdr.cid   = c1->cid;
    hdr.seq   = c1->ctrl.seq_base + 1000000;
    hdr.round = 0;
    hdr.root  = -1;
    len       = amc_wire_pack(&hdr, &wire);
    CHECK(amc_fake_inject(w.fabric, 0, 1, &wire, len) == AMC_SUCCESS, "inject");
    deliver_all(&w);
    CHECK(amc_comm_take_error(c1) == AMC_ERR_PROTOCOL, "a message a million instances ahead");
    amc_test_world_destroy(&w);
}

/* N=8: rank 4 forwarded the bcast before its call; then rank 5, its child,
 * calls with a NULL buffer and tells everyone. Rank 4's forwarding is
 * abandoned before rank 4 called: its call must fail with AMC_ERR_ARG when
 * it comes, and its later calls must work (the abandoned instance must not
 * take the slot of a call this rank has not made yet). Eager messages in
 * its own configuration: by rendezvous nothing is forwarded before the call
 * (test_own_arguments_forwarded). */
static void test_forwarded_then_told(uint64_t seed)
{
    enum { N = 8, COUNT = 6, LATE = 4, BAD = 5 };
    amc_test_world_t w;
    amc_config_t     cfg;
    amc_request_t    reqs[N];
    int              status[N], buf[N][COUNT], rank, i, flag, st;

    config_quiet_defaults(&cfg);
    cfg.log_level   = -1; /* the bad call, logged where it is made */
    cfg.rndv_thresh = 1u << 30;
    CHECK(amc_test_world_create(&w, N, AMC_FAKE_COMPLETE_ON_DELIVERY, &cfg) == AMC_SUCCESS, "w");
    for (rank = 0; rank < N; rank++) {
        for (i = 0; i < COUNT; i++) {
            buf[rank][i] = (rank == 0) ? 1000 + i : -1;
        }
        reqs[rank] = AMC_REQUEST_NULL;
        if ((rank != LATE) && (rank != BAD)) {
            CHECK(amc_ibcast(buf[rank], COUNT, AMC_INT, 0, amc_test_world_comm(&w, rank),
                             &reqs[rank]) == AMC_SUCCESS, "ibcast");
        }
    }
    drive_all(&w, reqs, status, seed);
    CHECK(amc_ibcast(NULL, COUNT, AMC_INT, 0, amc_test_world_comm(&w, BAD), &reqs[BAD]) ==
          AMC_ERR_ARG, "rank 5's bad call");
    deliver_all(&w);
    CHECK(amc_ibcast(buf[LATE], COUNT, AMC_INT, 0, amc_test_world_comm(&w, LATE), &reqs[LATE]) ==
          AMC_SUCCESS, "the late rank's call");
    st = amc_test(&reqs[LATE], &flag);
    CHECK(flag && (st == AMC_ERR_ARG), "seed %llu: the late rank's call ends at once with "
          "AMC_ERR_ARG: %s", (unsigned long long)seed, flag ? amc_strerror(st) : "running");
    if (!flag) {
        amc_request_free(&reqs[LATE]);
    }
    deliver_all(&w);
    CHECK(works_after(&w, seed, AMC_COLL_NONE), "seed %llu: the communicator works afterwards",
          (unsigned long long)seed);
    amc_test_world_destroy(&w);
}

int main(void)
{
    uint64_t seed;
    int      kind;

    test_duplicate_requests();
    test_arrival_bound();
    for (seed = 1; seed <= 20; seed++) {
        test_alg_mismatch_allreduce(seed, 1);
        test_alg_mismatch_allreduce(seed, 3);
        test_alg_mismatch_bcast(seed);
        test_vbruck_block_mismatch(seed, 0);
        test_vbruck_block_mismatch(seed, 3);
        test_alg_forwarding(seed, 0);
        test_alg_forwarding(seed, 1);
        test_alg_mismatch_barrier(seed);
        for (kind = 0; kind < BAD_KINDS; kind++) {
            test_own_arguments(seed, kind, 0);
            test_own_arguments(seed, kind, 1);
        }
        test_own_arguments_forwarded(seed, 0);
        test_own_arguments_forwarded(seed, 1);
        test_forwarded_then_told(seed);
        test_root_mismatch(seed);
        test_pipeline_count_mismatch(seed, 64, 32, (int)(seed & 1));
        test_pipeline_count_mismatch(seed, 32, 64, (int)(seed & 1));
        if (seed <= 8) {
            test_flood(seed, 64);
            test_flood(seed, 2);
        }
    }
    return amc_test_summary("test_reliability");
}
