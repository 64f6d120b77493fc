/* SPDX-License-Identifier: BSD-3-Clause */
#include "tests/unit/loggp_sim.h"
#include "am_coll/api/config_read.h"

#include "tests/unit/harness.h"
#include "am_coll/sched/sched.h"
#include "am_coll/api/comm_create.h"
#include "am_coll/context/context_progress.h"
#include "am_coll/context/request.h"
#include "am_coll/context/wait.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The collectives and their buffers, in blocks of the per-rank count:
 * send_blocks and recv_blocks per rank (N: the communicator's size). */
enum { AMC_LSIM_ONE = 1, AMC_LSIM_N = -1 };

static const struct {
    const char *name;
    int         id;
    int         send_blocks, recv_blocks;
} amc_lsim_colls[] = {
    { "barrier", AMC_COLL_BARRIER, 0, 0 },
    { "bcast", AMC_COLL_BCAST, 0, AMC_LSIM_ONE },
    { "reduce", AMC_COLL_REDUCE, AMC_LSIM_ONE, AMC_LSIM_ONE },
    { "allreduce", AMC_COLL_ALLREDUCE, AMC_LSIM_ONE, AMC_LSIM_ONE },
    { "gather", AMC_COLL_GATHER, AMC_LSIM_ONE, AMC_LSIM_N },
    { "scatter", AMC_COLL_SCATTER, AMC_LSIM_N, AMC_LSIM_ONE },
    { "allgather", AMC_COLL_ALLGATHER, AMC_LSIM_ONE, AMC_LSIM_N },
    { "alltoall", AMC_COLL_ALLTOALL, AMC_LSIM_N, AMC_LSIM_N },
    { "reduce_scatter_block", AMC_COLL_REDUCE_SCATTER_BLOCK, AMC_LSIM_N, AMC_LSIM_ONE },
    { "scan", AMC_COLL_SCAN, AMC_LSIM_ONE, AMC_LSIM_ONE },
    { "exscan", AMC_COLL_EXSCAN, AMC_LSIM_ONE, AMC_LSIM_ONE },
};

static size_t amc_lsim_blocks(int coll, int n, int recv)
{
    size_t i;
    int    k = 0;

    for (i = 0; i < sizeof(amc_lsim_colls) / sizeof(amc_lsim_colls[0]); i++) {
        if (amc_lsim_colls[i].id == coll) {
            k = recv ? amc_lsim_colls[i].recv_blocks : amc_lsim_colls[i].send_blocks;
        }
    }
    return (k == AMC_LSIM_N) ? (size_t)n : (size_t)k;
}

int amc_lsim_coll_id(const char *name)
{
    size_t i;

    for (i = 0; i < sizeof(amc_lsim_colls) / sizeof(amc_lsim_colls[0]); i++) {
        if (strcmp(amc_lsim_colls[i].name, name) == 0) {
            return amc_lsim_colls[i].id;
        }
    }
    return AMC_COLL_NONE;
}

static size_t amc_lsim_heap(void)
{
    return mallinfo2().uordblks;
}

static long amc_lsim_peak_rss_kib(void)
{
    char  line[256];
    long  kib = -1;
    FILE *f   = fopen("/proc/self/status", "r");

    while ((f != NULL) && (fgets(line, sizeof(line), f) != NULL)) {
        if (sscanf(line, "VmHWM: %ld kB", &kib) == 1) {
            break;
        }
    }
    if (f != NULL) {
        fclose(f);
    }
    return kib;
}

static double amc_lsim_wall(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The buffers: rank r's at base + r * stride; strides 0 when shared. */
typedef struct {
    unsigned char *send, *recv;
    size_t         sstride, rstride;
    size_t         block;  /* bytes per block: the count's */
    size_t         count;  /* int64 elements per block (bcast: bytes) */
    int            n;
} amc_lsim_bufs_t;

static int amc_lsim_bufs_alloc(amc_lsim_bufs_t *b, int coll, int n, size_t block, int shared)
{
    size_t ranks = shared ? 1 : (size_t)n;
    size_t slen  = amc_lsim_blocks(coll, n, 0) * block, rlen = amc_lsim_blocks(coll, n, 1) * block;

    b->n       = n;
    b->block   = block;
    b->count   = (coll == AMC_COLL_BCAST) ? block : block / sizeof(int64_t);
    b->sstride = shared ? 0 : slen;
    b->rstride = shared ? 0 : rlen;
    b->send    = calloc(ranks, slen ? slen : 1);
    b->recv    = calloc(ranks, rlen ? rlen : 1);
    return ((b->send != NULL) && (b->recv != NULL)) ? AMC_SUCCESS : AMC_ERR_NO_MEMORY;
}

static void amc_lsim_bufs_free(amc_lsim_bufs_t *b)
{
    free(b->send);
    free(b->recv);
}

/* Values that differ by rank and position, summed exactly in 64 bits. */
static int64_t amc_lsim_value(int r, size_t i)
{
    return (int64_t)r * 3 + (int64_t)i;
}

/* Sum over ranks lo..hi-1 of amc_lsim_value(k, i). */
static int64_t amc_lsim_sum(int lo, int hi, size_t i)
{
    int64_t m = hi - lo;

    return 3 * (((int64_t)hi * (hi - 1) - (int64_t)lo * (lo - 1)) / 2) + m * (int64_t)i;
}

static void amc_lsim_fill(int coll, amc_lsim_bufs_t *b, int r)
{
    int64_t *s = (int64_t *)(void *)(b->send + (size_t)r * b->sstride);
    size_t   i, count = amc_lsim_blocks(coll, b->n, 0) * b->count;

    if ((coll == AMC_COLL_BCAST) && (r == 0)) {
        for (i = 0; i < b->block; i++) {
            b->recv[i] = (unsigned char)(i * 7 + 1); /* the root sends from its recv buffer */
        }
        return;
    }
    for (i = 0; i < count; i++) {
        s[i] = amc_lsim_value(r, i);
    }
}

/* What rank r's receive buffer holds at element i (block k, offset j) when
 * right; -1 where nothing is defined. */
static int64_t amc_lsim_want(int coll, const amc_lsim_bufs_t *b, int r, size_t i)
{
    size_t c = b->count, k = i / c, j = i % c;
    int    n = b->n;

    switch (coll) {
    case AMC_COLL_REDUCE:
    case AMC_COLL_ALLREDUCE:
        return ((coll == AMC_COLL_REDUCE) && (r != 0)) ? -1 : amc_lsim_sum(0, n, i);
    case AMC_COLL_GATHER:
        return (r != 0) ? -1 : amc_lsim_value((int)k, j);
    case AMC_COLL_ALLGATHER:
        return amc_lsim_value((int)k, j);
    case AMC_COLL_SCATTER:
        return amc_lsim_value(0, (size_t)r * c + i);
    case AMC_COLL_ALLTOALL:
        return amc_lsim_value((int)k, (size_t)r * c + j);
    case AMC_COLL_REDUCE_SCATTER_BLOCK:
        return amc_lsim_sum(0, n, (size_t)r * c + i);
    case AMC_COLL_SCAN:
        return amc_lsim_sum(0, r + 1, i);
    case AMC_COLL_EXSCAN:
        return (r == 0) ? -1 : amc_lsim_sum(0, r, i);
    default:
        return -1;
    }
}

static int amc_lsim_check(int coll, const amc_lsim_bufs_t *b, int r)
{
    const unsigned char *out = b->recv + (size_t)r * b->rstride;
    const int64_t       *v   = (const int64_t *)(const void *)out;
    size_t               i, count = amc_lsim_blocks(coll, b->n, 1) * b->count;
    int64_t              want;

    if (coll == AMC_COLL_BCAST) {
        for (i = 0; i < b->block; i++) {
            if (out[i] != (unsigned char)(i * 7 + 1)) {
                return 0;
            }
        }
        return 1;
    }
    for (i = 0; i < count; i++) {
        want = amc_lsim_want(coll, b, r, i);
        if ((want >= 0) && (v[i] != want)) {
            return 0;
        }
    }
    return 1;
}

static int amc_lsim_start(int coll, amc_lsim_bufs_t *b, amc_comm_t comm, int r,
                          amc_request_t *req)
{
    unsigned char *s = b->send + (size_t)r * b->sstride, *d = b->recv + (size_t)r * b->rstride;
    size_t         c = b->count;

    switch (coll) {
    case AMC_COLL_BARRIER:
        return amc_ibarrier(comm, req);
    case AMC_COLL_BCAST:
        return amc_ibcast(d, c, AMC_BYTE, 0, comm, req);
    case AMC_COLL_REDUCE:
        return amc_ireduce(s, d, c, AMC_INT64, AMC_SUM, 0, comm, req);
    case AMC_COLL_GATHER:
        return amc_igather(s, d, c, AMC_INT64, 0, comm, req);
    case AMC_COLL_SCATTER:
        return amc_iscatter(s, d, c, AMC_INT64, 0, comm, req);
    case AMC_COLL_ALLGATHER:
        return amc_iallgather(s, d, c, AMC_INT64, comm, req);
    case AMC_COLL_ALLTOALL:
        return amc_ialltoall(s, d, c, AMC_INT64, comm, req);
    case AMC_COLL_REDUCE_SCATTER_BLOCK:
        return amc_ireduce_scatter_block(s, d, c, AMC_INT64, AMC_SUM, comm, req);
    case AMC_COLL_SCAN:
        return amc_iscan(s, d, c, AMC_INT64, AMC_SUM, comm, req);
    case AMC_COLL_EXSCAN:
        return amc_iexscan(s, d, c, AMC_INT64, AMC_SUM, comm, req);
    default:
        return amc_iallreduce(s, d, c, AMC_INT64, AMC_SUM, comm, req);
    }
}

static int amc_lsim_config(const amc_lsim_params_t *p, int coll, amc_config_t *cfg)
{
    amc_log_t quiet = { AMC_LOG_ERROR, -1 };

    if (amc_config_read(cfg, &quiet) != AMC_SUCCESS) {
        return AMC_ERR_ARG;
    }
    cfg->log_level       = getenv("AMC_LOG_LEVEL") ? cfg->log_level : -1;
    cfg->progress_thread = 0;
    cfg->node_size       = (unsigned)p->node_size;
    if (strlen(p->alg) >= sizeof(cfg->alg[coll])) {
        return AMC_ERR_ARG;
    }
    strcpy(cfg->alg[coll], p->alg);
    return AMC_SUCCESS;
}

/* Delivers in time order until nothing is queued, then lets every rank
 * progress once, until nothing moves: the harness's drive progresses every
 * rank per message, which is quadratic at this scale. */
static void amc_lsim_drain(amc_test_world_t *w)
{
    int r, moved;

    do {
        moved = 0;
        while (amc_fake_deliverable(w->fabric) > 0) {
            moved |= amc_fake_deliver(w->fabric, 0);
        }
        for (r = 0; r < w->n; r++) {
            moved |= amc_context_progress(w->ctx[r]);
        }
    } while (moved);
}

/* Every rank's creation of a dup of world. */
static int amc_lsim_dup(amc_test_world_t *w, amc_comm_t *dup)
{
    amc_comm_create_t *ops = calloc((size_t)w->n, sizeof(*ops));
    int                r, status, first;

    if (ops == NULL) {
        return AMC_ERR_NO_MEMORY;
    }
    first = amc_test_world_create_begin(w, NULL, 0, NULL, NULL, ops);
    if (first != AMC_SUCCESS) {
        return first; /* ops stay: agreements may still run on them */
    }
    amc_lsim_drain(w);
    for (r = 0; r < w->n; r++) {
        if (!amc_request_is_complete(&ops[r].req)) {
            return AMC_ERR_TIMEOUT;
        }
        status = amc_comm_create_end(&ops[r], amc_request_poll(&ops[r].req), &dup[r]);
        first  = (first == AMC_SUCCESS) ? status : first;
    }
    free(ops);
    return first;
}

int amc_lsim_run(const amc_lsim_params_t *p, amc_lsim_result_t *res)
{
    amc_test_world_t w;
    amc_config_t     cfg;
    amc_lsim_bufs_t  bufs = { NULL, NULL, 0, 0, 0, 0, 0 };
    amc_comm_t      *dup  = NULL, *comm = NULL;
    amc_request_t   *req  = NULL;
    size_t           heap0, heap1, heap2, heap3, heap4, len = p->bytes;
    double           t0   = amc_lsim_wall();
    int              coll = amc_lsim_coll_id(p->coll), shared, r, flag, rc, status;
    unsigned long    delivered;

    memset(res, 0, sizeof(*res));
    if ((coll == AMC_COLL_NONE) || (p->n < 1)) {
        fprintf(stderr, "amc_sim: unknown collective %s or N %d\n", p->coll, p->n);
        return AMC_ERR_ARG;
    }
    if (amc_lsim_config(p, coll, &cfg) != AMC_SUCCESS) {
        fprintf(stderr, "amc_sim: bad configuration (AMC_* or algorithm %s)\n", p->alg);
        return AMC_ERR_ARG;
    }
    if (coll != AMC_COLL_BCAST) { /* whole int64 elements, at least one */
        len = (len + sizeof(int64_t) - 1) / sizeof(int64_t) * sizeof(int64_t);
        len = len ? len : sizeof(int64_t);
    }
    len    = (coll == AMC_COLL_BARRIER) ? 0 : len;
    shared = (p->data == AMC_LSIM_DATA_SHARED) ||
             ((p->data == AMC_LSIM_DATA_AUTO) &&
              ((amc_lsim_blocks(coll, p->n, 0) + amc_lsim_blocks(coll, p->n, 1)) * len >
               AMC_LSIM_DATA_MAX / (size_t)p->n));

    dup  = calloc((size_t)p->n, sizeof(*dup));
    comm = calloc((size_t)p->n, sizeof(*comm));
    req  = calloc((size_t)p->n, sizeof(*req));
    if ((dup == NULL) || (comm == NULL) || (req == NULL)) {
        free(dup);
        free(comm);
        free(req);
        return AMC_ERR_NO_MEMORY;
    }
    heap0  = amc_lsim_heap();
    status = amc_test_world_create(&w, p->n, AMC_FAKE_COMPLETE_ON_SEND, &cfg);
    if (status != AMC_SUCCESS) {
        fprintf(stderr, "amc_sim: world of %d: %s\n", p->n, amc_strerror(status));
        goto out_arrays;
    }
    status = amc_fake_set_loggp(w.fabric, &p->intra, &p->inter, p->node_size);
    if (status != AMC_SUCCESS) {
        goto out_world;
    }
    if (p->dup > 1) {
        status = amc_lsim_dup(&w, dup);
        for (r = 0; r < p->n; r++) {
            if (dup[r] != NULL) {
                (void)amc_comm_free(&dup[r]);
            }
        }
        amc_lsim_drain(&w);
        if (status != AMC_SUCCESS) {
            fprintf(stderr, "amc_sim: dup: %s\n", amc_strerror(status));
            goto out_world;
        }
    }
    heap1 = amc_lsim_heap();
    if (p->dup > 0) {
        status = amc_lsim_dup(&w, dup);
        if (status != AMC_SUCCESS) {
            fprintf(stderr, "amc_sim: dup: %s\n", amc_strerror(status));
            goto out_world;
        }
    } else {
        for (r = 0; r < p->n; r++) {
            comm[r] = amc_test_world_comm(&w, r);
        }
    }
    heap2  = amc_lsim_heap();
    status = amc_lsim_bufs_alloc(&bufs, coll, p->n, len, shared);
    if (status != AMC_SUCCESS) {
        fprintf(stderr, "amc_sim: no memory for %zu bytes of buffers per rank\n", len);
        goto out_comms;
    }
    for (r = 0; r < p->n; r++) {
        amc_lsim_fill(coll, &bufs, r);
    }
    heap3 = amc_lsim_heap();

    /* every rank enters at time 0 */
    res->setup_s = amc_lsim_wall() - t0;
    amc_fake_clock_reset(w.fabric);
    delivered = amc_fake_delivered(w.fabric);
    for (r = 0; (r < p->n) && (status == AMC_SUCCESS); r++) {
        status = amc_lsim_start(coll, &bufs, (p->dup > 0) ? dup[r] : comm[r], r, &req[r]);
    }
    if (status != AMC_SUCCESS) {
        fprintf(stderr, "amc_sim: start on rank %d: %s\n", r - 1, amc_strerror(status));
        goto out_comms; /* the started ones are torn down with their contexts */
    }
    amc_lsim_drain(&w);
    res->coll_s  = amc_lsim_wall() - t0 - res->setup_s;
    res->events  = amc_fake_delivered(w.fabric) - delivered;
    res->correct = 1;
    res->checked = !shared;
    for (r = 0; r < p->n; r++) {
        uint64_t t = amc_fake_rank_time(w.fabric, r);

        res->time_ps = (t > res->time_ps) ? t : res->time_ps;
        flag         = 0;
        rc           = amc_test(&req[r], &flag);
        if (!flag || (rc != AMC_SUCCESS)) {
            if (res->correct) {
                fprintf(stderr, "amc_sim: rank %d: %s\n", r,
                        flag ? amc_strerror(rc) : "not complete once every message arrived");
            }
            res->correct = 0;
        } else if (res->checked && !amc_lsim_check(coll, &bufs, r)) {
            if (res->correct) {
                fprintf(stderr, "amc_sim: rank %d: wrong result\n", r);
            }
            res->correct = 0;
        }
    }
    heap4               = amc_lsim_heap();
    res->setup_per_rank = (heap1 - heap0) / (size_t)p->n;
    res->comm_per_rank  = (p->dup > 0) ? (heap2 - heap1) / (size_t)p->n : 0;
    res->coll_per_rank  = (heap4 > heap3) ? (heap4 - heap3) / (size_t)p->n : 0;
    res->fake_per_rank  = amc_fake_bytes_per_rank(w.fabric);

out_comms:
    for (r = 0; r < p->n; r++) {
        if (dup[r] != NULL) {
            (void)amc_comm_free(&dup[r]);
        }
    }
out_world:
    amc_test_world_destroy(&w);
    amc_lsim_bufs_free(&bufs);
out_arrays:
    free(req);
    free(comm);
    free(dup);
    res->wall_s       = amc_lsim_wall() - t0;
    res->peak_rss_kib = amc_lsim_peak_rss_kib();
    return status;
}
