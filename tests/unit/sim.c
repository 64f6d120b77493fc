/* SPDX-License-Identifier: BSD-3-Clause */
#include "tests/unit/sim.h"
#include "am_coll/alg/alg.h"
#include "am_coll/barrier/barrier.h"
#include "am_coll/context/context.h"
#include "am_coll/context/topo.h"

#include <stdlib.h>
#include <string.h>

typedef struct amc_sim {
    const amc_sim_params_t *p;
    amc_test_world_t        world;
    amc_test_rng_t          rng;
    int                    *posted;     /* per rank: barriers entered */
    int                    *finished;   /* per rank: barriers completed */
    char                   *done;       /* [rank][k] */
    amc_request_t          *reqs;       /* [rank][k] */
} amc_sim_t;

#define SIM_AT(_sim, _rank, _k) ((size_t)(_rank) * (size_t)(_sim)->p->nbarriers + (size_t)(_k))

static int amc_sim_enter(amc_sim_t *sim)
{
    const amc_sim_params_t *p = sim->p;
    int                     rank, k, rc, entered = 0;

    for (rank = 0; rank < p->n; rank++) {
        k = sim->posted[rank];
        if ((k >= p->nbarriers) || (k - sim->finished[rank] >= p->max_outstanding)) {
            continue;
        }
        if (p->skew && (amc_test_rng_below(&sim->rng, 3) != 0)) {
            continue;
        }
        rc = amc_ibarrier(amc_test_world_comm(&sim->world, rank), &sim->reqs[SIM_AT(sim, rank, k)]);
        CHECK(rc == AMC_SUCCESS, "n=%d seed=%llu rank %d ibarrier %d: %s", p->n,
              (unsigned long long)p->seed, rank, k, amc_strerror(rc));
        sim->posted[rank]++;
        entered++;
    }
    return entered;
}

/* Tests each rank's outstanding requests, newest first. */
static int amc_sim_test(amc_sim_t *sim)
{
    const amc_sim_params_t *p = sim->p;
    int                     rank, k, j, rc, flag, completed = 0;

    for (rank = 0; rank < p->n; rank++) {
        for (k = sim->posted[rank] - 1; k >= 0; k--) {
            if (sim->done[SIM_AT(sim, rank, k)]) {
                continue;
            }
            rc = amc_test(&sim->reqs[SIM_AT(sim, rank, k)], &flag);
            CHECK(rc == AMC_SUCCESS, "n=%d seed=%llu rank %d test %d: %s", p->n,
                  (unsigned long long)p->seed, rank, k, amc_strerror(rc));
            if (!flag) {
                continue;
            }
            CHECK(sim->reqs[SIM_AT(sim, rank, k)] == AMC_REQUEST_NULL, "request not cleared");
            sim->done[SIM_AT(sim, rank, k)] = 1;
            sim->finished[rank]++;
            completed++;
            for (j = 0; j < p->n; j++) {
                CHECK(sim->posted[j] > k,
                      "n=%d seed=%llu order=%d: rank %d left barrier %d before rank %d entered it",
                      p->n, (unsigned long long)p->seed, (int)p->order, rank, k, j);
            }
        }
    }
    return completed;
}

static int amc_sim_deliver(amc_sim_t *sim)
{
    size_t count = amc_fake_deliverable(sim->world.fabric);
    size_t index;

    if (count == 0) {
        return 0;
    }
    switch (sim->p->order) {
    case AMC_SIM_FIFO:    index = 0; break;
    case AMC_SIM_REVERSE: index = count - 1; break;
    default:              index = amc_test_rng_below(&sim->rng, count); break;
    }
    return amc_fake_deliver(sim->world.fabric, index);
}

static int amc_sim_all_finished(const amc_sim_t *sim)
{
    int rank;

    for (rank = 0; rank < sim->p->n; rank++) {
        if (sim->finished[rank] < sim->p->nbarriers) {
            return 0;
        }
    }
    return 1;
}

/* Messages one barrier sends in all: N ceil(log2 N) for the dissemination
 * barrier (the fast path, or its schedule); a barrier algorithm forced on
 * the engine (AMC_BARRIER_ALG=knomial, linear, ...) sends what its
 * schedules send, counted by building every rank's as the engine does. */
static unsigned long amc_sim_barrier_messages(amc_sim_t *sim)
{
    amc_comm_t           comm0 = amc_test_world_comm(&sim->world, 0);
    const amc_alg_t     *alg = NULL;
    amc_coll_args_t      args;
    amc_sched_builder_t  b;
    amc_sched_t         *sched;
    unsigned long        sends = 0;
    uint32_t             i;
    int                  rank, rounds = 0, rc, engine = 0;

    /* the algorithm amc_barrier_start runs (AMC_NODE_SIZE, say, can put
     * it on the engine), or the fast path's dissemination */
    rc = amc_barrier_on_engine(comm0, &engine);
    CHECK(rc == AMC_SUCCESS, "n=%d: the barrier's path: %s", sim->p->n, amc_strerror(rc));
    if (engine) {
        amc_coll_args_barrier(&args);
        args.topo = amc_comm_topo(comm0);
        alg       = amc_alg_select(comm0, &args);
    }
    if (alg == NULL) {
        while ((1 << rounds) < sim->p->n) {
            rounds++;
        }
        return (unsigned long)sim->p->n * (unsigned long)rounds;
    }
    for (rank = 0; rank < sim->p->n; rank++) {
        amc_coll_args_barrier(&args);
        args.topo = amc_comm_topo(amc_test_world_comm(&sim->world, rank));
        rc = amc_sb_init(&b);
        if (rc == AMC_SUCCESS) {
            rc = alg->build(&b, &args, rank, sim->p->n);
            if ((rc != AMC_SUCCESS) && (b.status == AMC_SUCCESS)) {
                b.status = rc;
            }
            rc = amc_sb_finish(&b, &sched); /* frees all on an error */
        }
        CHECK(rc == AMC_SUCCESS, "n=%d: the %s barrier's schedule of rank %d: %s", sim->p->n,
              alg->name, rank, amc_strerror(rc));
        if (rc != AMC_SUCCESS) {
            continue;
        }
        for (i = 0; i < sched->nacts; i++) {
            sends += (sched->acts[i].type == AMC_ACT_SEND);
        }
        amc_sched_free(sched);
    }
    return sends;
}

int amc_sim_run(const amc_sim_params_t *p)
{
    unsigned long failures = amc_test_failures();
    amc_sim_t     sim;
    size_t        cells = (size_t)p->n * (size_t)p->nbarriers;
    int           idle = 0, rc;
    unsigned long expected;

    sim.p        = p;
    sim.posted   = calloc((size_t)p->n, sizeof(int));
    sim.finished = calloc((size_t)p->n, sizeof(int));
    sim.done     = calloc(cells, 1);
    sim.reqs     = calloc(cells, sizeof(amc_request_t));
    amc_test_rng_seed(&sim.rng, p->seed);
    rc = amc_test_world_create(&sim.world, p->n, p->completion, NULL);
    CHECK(rc == AMC_SUCCESS, "world of %d: %s", p->n, amc_strerror(rc));
    if (rc != AMC_SUCCESS) {
        goto out;
    }

    while (!amc_sim_all_finished(&sim)) {
        int activity = amc_sim_enter(&sim);

        activity += amc_sim_test(&sim);
        activity += amc_sim_deliver(&sim);
        /* with skew a quiet step is normal; a long quiet stretch is a hang */
        idle = activity ? 0 : idle + 1;
        if (idle > 1000) {
            CHECK(0, "n=%d seed=%llu order=%d: stuck with %zu messages queued", p->n,
                  (unsigned long long)p->seed, (int)p->order,
                  amc_fake_deliverable(sim.world.fabric));
            break;
        }
    }

    expected = amc_sim_barrier_messages(&sim) * (unsigned long)p->nbarriers;
    CHECK(amc_fake_deliverable(sim.world.fabric) == 0, "messages left over");
    CHECK(amc_fake_delivered(sim.world.fabric) == expected,
          "n=%d: %lu messages delivered, the barrier needs %lu", p->n,
          amc_fake_delivered(sim.world.fabric), expected);
    CHECK(amc_fake_header_violations(sim.world.fabric) == 0,
          "n=%d: header storage reused before its send completed", p->n);
    amc_test_world_destroy(&sim.world);
out:
    free(sim.reqs);
    free(sim.done);
    free(sim.finished);
    free(sim.posted);
    return amc_test_failures() != failures;
}
