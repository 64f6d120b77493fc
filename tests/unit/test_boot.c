/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Starting without PMIx (transport/user_boot.c, amc_init_boot):
 *   - ranks on threads with a fake exchange (shared memory and a barrier):
 *     values of different lengths published and read back, the local one
 *     only by ranks of its node; the ranks on a node; the node map; the
 *     teardown barrier, also given up when progress says so and at a
 *     deadline;
 *   - a rank that tells another size, or sits at another place, fails the
 *     start on every rank alike; a failing allgather and missing callbacks
 *     are clear errors;
 *   - real processes (fork, an exchange through a shared mapping, real UCX
 *     and mailboxes): amc_init_boot, an allreduce, a bcast of 1 MiB (pulled),
 *     amc_finalize, on every rank.
 */
#define _GNU_SOURCE
#include "tests/unit/harness.h"
#include "transport/user_boot.h"
#include "base/clock.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define NR 4

/* The fake exchange: a buffer and a barrier the ranks share (threads, or
 * processes through a shared mapping). */
typedef struct exchange {
    pthread_barrier_t bar;
    int               fail_gather; /* the allgather fails on every rank */
    uint8_t           buf[NR * 4096];
} exchange_t;

typedef struct rank_arg {
    exchange_t *x;
    int         rank;
} rank_arg_t;

static int fake_allgather(void *arg, const void *mine, void *all, size_t len)
{
    rank_arg_t *a = arg;

    if (a->x->fail_gather || (len > 4096)) {
        return -1;
    }
    memcpy(a->x->buf + (size_t)a->rank * len, mine, len);
    pthread_barrier_wait(&a->x->bar);
    memcpy(all, a->x->buf, (size_t)NR * len);
    pthread_barrier_wait(&a->x->bar);
    return 0;
}

static int stuck; /* the barrier never completes: only progress ends it */

static int fake_barrier(void *arg, int (*progress)(void *ctx), void *ctx)
{
    rank_arg_t *a = arg;

    if (stuck) {
        while (!progress(ctx)) {
            usleep(100);
        }
        return -1;
    }
    (void)progress(ctx);
    pthread_barrier_wait(&a->x->bar);
    return 0;
}

static int give_up_after(void *arg)
{
    int *n = arg;

    return ++*n > 10;
}

typedef struct result {
    int status;
    int bad;     /* checks that failed on the rank's thread */
} result_t;

static exchange_t x;
static result_t   res[NR];
static int        lie_size = -1; /* a rank that tells another size */

static void *rank_main(void *p)
{
    int              rank = (int)(intptr_t)p, n, *peers, k;
    rank_arg_t       a    = { &x, rank };
    amc_boot_t       u    = { rank, NR, rank / 2, &a, fake_allgather, fake_barrier };
    amc_log_t        log  = { .level = AMC_LOG_ERROR - 1, .rank = rank };
    amc_bootstrap_t *bs;
    amc_node_map_t   map  = { 0 };
    char             g[64], l[8];
    void            *val;
    size_t           len;
    int              bad = 0, r, tries = 0;

    if (rank == lie_size) {
        u.size = NR + 1;
    }
    res[rank].status = amc_user_bootstrap(&u, &log, &bs);
    if (res[rank].status != AMC_SUCCESS) {
        return NULL;
    }
    /* values of lengths that differ by rank */
    memset(g, 'a' + rank, sizeof(g));
    memset(l, 'A' + rank, sizeof(l));
    bad += bs->ops->publish(bs, "g", g, 10 + (size_t)rank * 10, "l", l, 1 + (size_t)rank) !=
           AMC_SUCCESS;
    for (r = 0; r < NR; r++) {
        val = NULL;
        bad += (bs->ops->get(bs, r, "g", &val, &len) != AMC_SUCCESS) ||
               (len != 10 + (size_t)r * 10) || (((char *)val)[len - 1] != 'a' + r);
        free(val);
        val = NULL;
        k   = bs->ops->get(bs, r, "l", &val, &len);
        if (r / 2 == rank / 2) {
            bad += (k != AMC_SUCCESS) || (len != 1 + (size_t)r) || (((char *)val)[0] != 'A' + r);
        } else {
            bad += (k == AMC_SUCCESS); /* a local value, for its node's ranks only */
        }
        free(val);
    }
    bad += bs->ops->local_peers(bs, &peers, &n) != AMC_SUCCESS;
    bad += (n != 2) || (peers[0] != (rank / 2) * 2) || (peers[1] != (rank / 2) * 2 + 1) ||
           (bs->local_size != 2) || (bs->size != NR) || (bs->rank != rank) || bs->singleton;
    free(peers);
    bs->ops->node_map(bs, &map);
    for (r = 0; r < NR; r++) {
        bad += amc_node_map_node(&map, r) != r / 2;
    }
    amc_node_map_free(&map);
    bad += bs->ops->fence(bs, NULL, NULL, 0.0) != AMC_SUCCESS;
    res[rank].bad = bad;
    pthread_barrier_wait(&x.bar);
    if (rank == 0) {
        /* one rank's barrier that nobody else joins: progress gives it up,
         * or its deadline passes */
        stuck = 1;
        res[rank].bad += bs->ops->fence(bs, give_up_after, &tries, 0.0) != AMC_ERR_PEER;
        res[rank].bad += bs->ops->fence(bs, NULL, NULL, amc_clock_sec() + 0.05) !=
                         AMC_ERR_TIMEOUT;
        stuck = 0;
    }
    bs->ops->finalize(bs);
    return NULL;
}

static void run_ranks(void)
{
    pthread_t th[NR];
    int       r;

    memset(res, 0, sizeof(res));
    for (r = 0; r < NR; r++) {
        CHECK(pthread_create(&th[r], NULL, rank_main, (void *)(intptr_t)r) == 0, "thread");
    }
    for (r = 0; r < NR; r++) {
        pthread_join(th[r], NULL);
    }
}

static void test_threads(void)
{
    int r;

    CHECK(pthread_barrier_init(&x.bar, NULL, NR) == 0, "barrier");
    run_ranks();
    for (r = 0; r < NR; r++) {
        CHECK(res[r].status == AMC_SUCCESS && res[r].bad == 0, "rank %d: started, every value "
              "and node right, barriers as they should (status %d, %d wrong)", r, res[r].status,
              res[r].bad);
    }
    /* a rank that tells another size: every rank fails alike */
    lie_size = 2;
    run_ranks();
    lie_size = -1;
    for (r = 0; r < NR; r++) {
        CHECK(res[r].status == AMC_ERR_ARG, "rank %d: a rank that disagrees fails every start "
              "(status %d)", r, res[r].status);
    }
    /* the caller's allgather fails */
    x.fail_gather = 1;
    run_ranks();
    x.fail_gather = 0;
    for (r = 0; r < NR; r++) {
        CHECK(res[r].status == AMC_ERR_TRANSPORT, "rank %d: a failing allgather is an error "
              "(status %d)", r, res[r].status);
    }
    pthread_barrier_destroy(&x.bar);
}

static void test_bad_args(void)
{
    amc_log_t        log = { .level = AMC_LOG_ERROR - 1 };
    amc_bootstrap_t *bs;
    rank_arg_t       a   = { &x, 0 };
    amc_boot_t       ok  = { 0, 2, 0, &a, fake_allgather, fake_barrier }, u;
    int              provided;

    u = ok, u.rank = 2;
    CHECK(amc_user_bootstrap(&u, &log, &bs) == AMC_ERR_ARG, "a rank beyond the size");
    u = ok, u.node = -1;
    CHECK(amc_user_bootstrap(&u, &log, &bs) == AMC_ERR_ARG, "a negative node");
    u = ok, u.allgather = NULL;
    CHECK(amc_user_bootstrap(&u, &log, &bs) == AMC_ERR_ARG, "no allgather");
    u = ok, u.barrier = NULL;
    CHECK(amc_user_bootstrap(&u, &log, &bs) == AMC_ERR_ARG, "no barrier");
    CHECK(amc_init_boot(NULL, NULL, AMC_THREAD_SINGLE, &provided, NULL) == AMC_ERR_ARG,
          "amc_init_boot without a boot");
}

/* --- real processes ----------------------------------------------------- */

typedef struct proc_exchange {
    pthread_barrier_t bar;
    uint8_t           buf[NR * 4096];
} proc_exchange_t;

static proc_exchange_t *px;
static int              prank;

static int proc_allgather(void *arg, const void *mine, void *all, size_t len)
{
    (void)arg;
    if (len > 4096) {
        return -1;
    }
    memcpy(px->buf + (size_t)prank * len, mine, len);
    pthread_barrier_wait(&px->bar);
    memcpy(all, px->buf, (size_t)NR * len);
    pthread_barrier_wait(&px->bar);
    return 0;
}

/* The teardown's barrier lets amcoll progress while the others come. */
static int proc_barrier(void *arg, int (*progress)(void *ctx), void *ctx)
{
    (void)arg;
    (void)progress(ctx);
    pthread_barrier_wait(&px->bar);
    return 0;
}

static int proc_rank(int rank)
{
    amc_boot_t u = { rank, NR, 0, NULL, proc_allgather, proc_barrier };
    size_t     n = (1u << 20) / sizeof(double), i;
    double    *v = malloc(n * sizeof(double));
    int        provided, in = rank + 1, sum = 0, fails = 0, r;

    prank = rank;
    if (amc_init_boot(NULL, NULL, AMC_THREAD_SINGLE, &provided, &u) != AMC_SUCCESS) {
        return 10;
    }
    amc_comm_rank(AMC_COMM_WORLD, &r);
    fails += (r != rank);
    amc_comm_size(AMC_COMM_WORLD, &r);
    fails += (r != NR);
    fails += amc_allreduce(&in, &sum, 1, AMC_INT32, AMC_SUM, AMC_COMM_WORLD) != AMC_SUCCESS;
    fails += (sum != NR * (NR + 1) / 2);
    for (i = 0; i < n; i++) {
        v[i] = (rank == 1) ? (double)i * 0.5 : -1.0;
    }
    fails += amc_bcast(v, n, AMC_DOUBLE, 1, AMC_COMM_WORLD) != AMC_SUCCESS;
    for (i = 0; i < n; i++) {
        fails += (v[i] != (double)i * 0.5);
    }
    fails += amc_barrier(AMC_COMM_WORLD) != AMC_SUCCESS;
    fails += amc_finalize() != AMC_SUCCESS;
    free(v);
    return fails ? 20 : 0;
}

static void test_processes(void)
{
    pthread_barrierattr_t attr;
    pid_t                 pid[NR];
    int                   r, status;

    px = mmap(NULL, sizeof(*px), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(px != MAP_FAILED, "a shared mapping");
    pthread_barrierattr_init(&attr);
    pthread_barrierattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
    CHECK(pthread_barrier_init(&px->bar, &attr, NR) == 0, "a barrier between processes");
    for (r = 0; r < NR; r++) {
        pid[r] = fork();
        if (pid[r] == 0) {
            _exit(proc_rank(r));
        }
    }
    for (r = 0; r < NR; r++) {
        waitpid(pid[r], &status, 0);
        CHECK(WIFEXITED(status) && (WEXITSTATUS(status) == 0), "process rank %d: started by "
              "the caller's exchange, allreduce and a 1 MiB bcast right, finalized (status "
              "0x%x)", r, status);
    }
    munmap(px, sizeof(*px));
}

int main(void)
{
    test_threads();
    test_bad_args();
    test_processes();
    return amc_test_summary("test_boot");
}
