/* SPDX-License-Identifier: BSD-3-Clause */
#include "tests/unit/harness.h"
#include "am_coll/api/context_open.h"
#include "am_coll/api/config_read.h"
#include "am_coll/alg/alg.h"
#include "am_coll/context/topo.h"
#include "am_coll/api/comm_create.h"
#include "am_coll/context/wait.h"
#include "am_coll/context/context_progress.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static unsigned long amc_test_passed_count;
static unsigned long amc_test_failed_count;

void amc_test_check(int ok, const char *file, int line, const char *expr, const char *fmt, ...)
{
    va_list ap;

    /* atomic: threaded tests check from many threads */
    if (ok) {
        __atomic_add_fetch(&amc_test_passed_count, 1, __ATOMIC_RELAXED);
        return;
    }
    /* the first failures tell the story; thousands of repeats do not */
    if (__atomic_add_fetch(&amc_test_failed_count, 1, __ATOMIC_RELAXED) > 50) {
        return;
    }
    fprintf(stderr, "FAIL %s:%d: %s: ", file, line, expr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

unsigned long amc_test_failures(void)
{
    return __atomic_load_n(&amc_test_failed_count, __ATOMIC_RELAXED);
}

int amc_test_summary(const char *name)
{
    printf("%s: %lu checks passed, %lu failed\n", name, amc_test_passed_count,
           amc_test_failed_count);
    return (amc_test_failed_count == 0) ? 0 : 1;
}

/* AMCTEST_LOCKS=1 runs the fake worlds with the control-structure locks on,
 * so the locked paths are exercised by the same tests. */
/* An AMCTEST_* switch: set and starting with 1. */
static int amc_test_env_on(const char *name)
{
    const char *env = getenv(name);

    return (env != NULL) && (env[0] == '1');
}

int amc_test_threaded_locks(void)
{
    return amc_test_env_on("AMCTEST_LOCKS");
}

int amc_test_quick(void)
{
    return amc_test_env_on("AMCTEST_QUICK");
}

int amc_test_config_from_env(amc_config_t *cfg)
{
    amc_log_t quiet = { AMC_LOG_ERROR, -1 };

    if (amc_config_read(cfg, &quiet) != AMC_SUCCESS) {
        return AMC_ERR_ARG;
    }
    cfg->log_level       = getenv("AMC_LOG_LEVEL") ? cfg->log_level : -1;
    cfg->progress_thread = 0; /* a test that wants one asks for it */
    return AMC_SUCCESS;
}

static int amc_test_world_populate(amc_test_world_t *world, const amc_config_t *cfg);

int amc_test_world_create(amc_test_world_t *world, int n, amc_fake_completion_t completion,
                          const amc_config_t *cfg)
{
    amc_config_t defaults;
    int          status;

    if (cfg == NULL) {
        if (amc_test_config_from_env(&defaults) != AMC_SUCCESS) {
            return AMC_ERR_ARG;
        }
        cfg = &defaults;
    }
    world->n        = n;
    world->threaded = amc_test_threaded_locks();
    world->ctx = calloc((size_t)n, sizeof(*world->ctx));
    if (world->ctx == NULL) {
        return AMC_ERR_NO_MEMORY;
    }
    status = amc_fake_fabric_create(n, completion, &world->fabric);
    if (status != AMC_SUCCESS) {
        free(world->ctx);
        return status;
    }
    return amc_test_world_populate(world, cfg);
}

int amc_test_world_create_threaded(amc_test_world_t *world, int n, int progress_thread,
                                   int multiple)
{
    amc_config_t cfg;
    int          status;

    if (amc_test_config_from_env(&cfg) != AMC_SUCCESS) {
        return AMC_ERR_ARG;
    }
    cfg.progress_thread = (unsigned)progress_thread;
    world->n        = n;
    world->threaded = multiple;
    world->ctx      = calloc((size_t)n, sizeof(*world->ctx));
    if (world->ctx == NULL) {
        return AMC_ERR_NO_MEMORY;
    }
    status = amc_fake_fabric_create_threaded(n, &world->fabric);
    if (status != AMC_SUCCESS) {
        free(world->ctx);
        return status;
    }
    return amc_test_world_populate(world, &cfg);
}

static int amc_test_world_populate(amc_test_world_t *world, const amc_config_t *cfg)
{
    amc_transport_t *tp;
    int              rank, status;

    for (rank = 0; rank < world->n; rank++) {
        status = amc_fake_transport_create(world->fabric, rank, &tp);
        if (status == AMC_SUCCESS) {
            status = amc_context_create(cfg, tp, world->threaded, &world->ctx[rank]);
        }
        if (status != AMC_SUCCESS) {
            world->n = rank;
            amc_test_world_destroy(world);
            return status;
        }
    }
    return AMC_SUCCESS;
}

void amc_test_world_destroy(amc_test_world_t *world)
{
    int rank;

    for (rank = 0; rank < world->n; rank++) {
        if (world->ctx[rank] != NULL) {
            amc_context_destroy(world->ctx[rank]);
        }
    }
    amc_fake_fabric_destroy(world->fabric);
    free(world->ctx);
}

amc_comm_t amc_test_world_comm(amc_test_world_t *world, int rank)
{
    return amc_context_world(world->ctx[rank]);
}

int amc_test_world_create_begin(amc_test_world_t *world, const amc_comm_t *parents, int split,
                                const int *color, const int *key, amc_comm_create_t *ops)
{
    amc_comm_t parent;
    int        rank, status;

    for (rank = 0; rank < world->n; rank++) {
        parent = (parents != NULL) ? parents[rank] : amc_test_world_comm(world, rank);
        status = amc_comm_create_begin(&ops[rank], parent, split, split ? color[rank] : 0,
                                       split ? key[rank] : 0);
        if (status != AMC_SUCCESS) {
            return status; /* the earlier ranks' agreements cannot finish now */
        }
    }
    return AMC_SUCCESS;
}

void amc_test_world_settle(amc_test_world_t *world, const char *what)
{
    int    rank, err;
    size_t i;

    for (i = 0; (i < 1000) && (amc_fake_deliverable(world->fabric) > 0); i++) {
        (void)amc_fake_deliver(world->fabric, 0);
    }
    CHECK(amc_fake_deliverable(world->fabric) == 0, "%s: %zu events left queued", what,
          amc_fake_deliverable(world->fabric));
    for (rank = 0; rank < world->n; rank++) {
        err = amc_test_world_comm(world, rank)->ctrl.pending_err;
        CHECK(err == AMC_SUCCESS, "%s: rank %d refused a message after the last call: %s",
              what, rank, amc_strerror(err));
    }
}

int amc_test_world_drive(amc_test_world_t *world, amc_request_t *reqs, int *status)
{
    int rank, flag, pending, guard = 0;

    for (rank = 0; rank < world->n; rank++) {
        status[rank] = -1;
    }
    do {
        pending = 0;
        (void)amc_fake_deliver(world->fabric, 0);
        for (rank = 0; rank < world->n; rank++) {
            if (status[rank] == -1) {
                flag         = 0;
                status[rank] = amc_test(&reqs[rank], &flag);
                if ((status[rank] == AMC_SUCCESS) && !flag) {
                    status[rank] = -1;
                    pending++;
                }
            }
        }
    } while (pending && (++guard < 100000));
    return !pending;
}

int amc_test_world_create_drive(amc_test_world_t *world, amc_comm_create_t *ops)
{
    long guard;
    int  rank, pending = 1;

    for (guard = 0; pending && (guard < 1000000); guard++) {
        pending = 0;
        for (rank = 0; rank < world->n; rank++) {
            amc_context_progress(world->ctx[rank]);
            pending |= !amc_request_is_complete(&ops[rank].req);
        }
        if (amc_fake_deliverable(world->fabric) > 0) {
            amc_fake_deliver(world->fabric, 0);
        }
    }
    return !pending;
}

int amc_test_world_create_comms(amc_test_world_t *world, const amc_comm_t *parents, int split,
                                const int *color, const int *key, amc_comm_t *out)
{
    amc_comm_create_t *ops = calloc((size_t)world->n, sizeof(*ops));
    int                rank, status, first = AMC_SUCCESS;

    if (ops == NULL) {
        return AMC_ERR_NO_MEMORY;
    }
    status = amc_test_world_create_begin(world, parents, split, color, key, ops);
    if ((status == AMC_SUCCESS) && !amc_test_world_create_drive(world, ops)) {
        status = AMC_ERR_TIMEOUT;
    }
    if (status != AMC_SUCCESS) {
        return status; /* ops stay: agreements may still run on them (a failed test) */
    }
    for (rank = 0; rank < world->n; rank++) {
        status = amc_comm_create_end(&ops[rank], amc_request_poll(&ops[rank].req), &out[rank]);
        first  = (first == AMC_SUCCESS) ? status : first;
    }
    free(ops);
    return first;
}

void amc_test_rng_seed(amc_test_rng_t *rng, uint64_t seed)
{
    rng->state = seed * 0x9e3779b97f4a7c15ull + 1;
}

uint64_t amc_test_rng_next(amc_test_rng_t *rng)
{
    /* xorshift64* */
    uint64_t x = rng->state;

    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rng->state = x;
    return x * 0x2545f4914f6cdd1dull;
}

size_t amc_test_rng_below(amc_test_rng_t *rng, size_t bound)
{
    return (bound == 0) ? 0 : (size_t)(amc_test_rng_next(rng) % bound);
}

void amc_test_capture_stderr(void (*fn)(void *), void *arg, char *buf, size_t len)
{
    FILE  *tmp   = tmpfile();
    int    saved = dup(STDERR_FILENO);
    size_t got;

    fflush(stderr);
    dup2(fileno(tmp), STDERR_FILENO);
    fn(arg);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    rewind(tmp);
    got      = fread(buf, 1, len - 1, tmp);
    buf[got] = '\0';
    fclose(tmp);
}

const char *amc_test_selected(amc_comm_t comm, int coll, size_t count, int commutative)
{
    amc_coll_args_t  args;
    const amc_alg_t *alg;

    memset(&args, 0, sizeof(args));
    args.coll        = (uint8_t)coll;
    args.root        = (coll == AMC_COLL_ALLREDUCE || coll == AMC_COLL_BARRIER ||
                        coll == AMC_COLL_ALLTOALL) ? -1 : 0;
    args.count       = count;
    args.dt          = AMC_INT32;
    args.dt_size     = 4;
    args.op          = AMC_SUM;
    args.commutative = commutative;
    args.topo        = amc_comm_topo(comm);
    if (args.topo == NULL) {
        return "none";
    }
    alg = amc_alg_select(comm, &args);
    return (alg != NULL) ? alg->name : "none";
}
