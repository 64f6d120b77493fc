/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The scale simulator (tests/unit/loggp_sim.h) at moderate N:
 * - every algorithm of every collective the simulator drives (all but the
 *   v-forms) gives right results on every rank, flat and node-aware, at
 *   N = 7 and 64 (8 ranks per node), and the automatic choices up to 1000;
 * - with G = 0 the dissemination barrier and the recursive-doubling
 *   allreduce at N = 2^k take exactly k (L + 2o): each round a rank sends
 *   (o), its partner's message arrives L after that partner's o, and is
 *   received (o); the schedules' own sends overlap the wait;
 * - at 64 nodes of 32 ranks with cheap shared memory the node-aware barrier
 *   is predicted faster than dissemination, and the automatic choice across
 *   nodes is the node-aware one (the same time to the ps);
 * - a shared-buffer run (timing only) predicts what a private one does.
 */
#include "tests/unit/harness.h"
#include "tests/unit/loggp_sim.h"
#include "am_coll/alg/alg.h"
#include "am_coll/sched/sched.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const amc_fake_loggp_t amc_t_intra = AMC_LSIM_INTRA_DEFAULT;
static const amc_fake_loggp_t amc_t_inter = AMC_LSIM_INTER_DEFAULT;

static uint64_t run(const char *coll, const char *alg, int n, size_t bytes, int node_size,
                    amc_lsim_data_t data, const amc_fake_loggp_t *flat)
{
    amc_lsim_params_t p;
    amc_lsim_result_t r;
    int               status;

    memset(&p, 0, sizeof(p));
    p.coll      = coll;
    p.alg       = alg;
    p.n         = n;
    p.bytes     = bytes;
    p.node_size = node_size;
    p.intra     = (flat != NULL) ? *flat : amc_t_intra;
    p.inter     = (flat != NULL) ? *flat : amc_t_inter;
    p.data      = data;
    status      = amc_lsim_run(&p, &r);
    CHECK(status == AMC_SUCCESS, "%s %s N=%d: %s", coll, alg, n, amc_strerror(status));
    CHECK(r.correct, "%s %s N=%d %zu B node_size %d: wrong", coll, alg, n, bytes, node_size);
    CHECK(r.checked == (data != AMC_LSIM_DATA_SHARED), "%s %s N=%d: checked %d", coll, alg, n,
          r.checked);
    CHECK(r.events > 0 || n == 1, "%s %s N=%d: no message", coll, alg, n);
    return r.time_ps;
}

static void test_every_algorithm(void)
{
    static const int sizes[] = { 7, 64 };
    const amc_alg_t *alg;
    const char      *coll;
    size_t           i, k;

    for (i = 0; i < amc_alg_count(); i++) {
        alg  = amc_alg_at(i);
        coll = amc_coll_name(alg->coll);
        if (amc_lsim_coll_id(coll) == AMC_COLL_NONE) {
            continue; /* the v-forms: counts per rank, not driven here */
        }
        for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
            run(coll, alg->name, sizes[k], 24, 8, AMC_LSIM_DATA_PRIVATE, NULL);
        }
    }
}

static void test_closed_form(void)
{
    static const amc_fake_loggp_t p = { 1000000, 100000, 50000, 0 };
    uint64_t                      round = p.L + 2 * p.o, t;
    int                           k;

    for (k = 1; k <= 10; k += 3) {
        t = run("barrier", "dissemination", 1 << k, 0, 0, AMC_LSIM_DATA_PRIVATE, &p);
        CHECK(t == (uint64_t)k * round, "dissemination N=%d: %llu ps, want %llu", 1 << k,
              (unsigned long long)t, (unsigned long long)(k * round));
        t = run("allreduce", "recursive_doubling", 1 << k, 8, 0, AMC_LSIM_DATA_PRIVATE, &p);
        CHECK(t == (uint64_t)k * round, "recursive doubling N=%d: %llu ps, want %llu", 1 << k,
              (unsigned long long)t, (unsigned long long)(k * round));
    }
}

static void test_results(void)
{
    static const int sizes[] = { 2, 7, 64, 1000 };
    size_t           i;

    for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        int n = sizes[i];

        run("barrier", "auto", n, 0, 0, AMC_LSIM_DATA_PRIVATE, NULL);
        run("barrier", "hierarchical", n, 0, 8, AMC_LSIM_DATA_PRIVATE, NULL);
        run("bcast", "binomial", n, 100, 0, AMC_LSIM_DATA_PRIVATE, NULL);
        run("bcast", "hierarchical", n, 100, 8, AMC_LSIM_DATA_PRIVATE, NULL);
        run("reduce", "binomial", n, 24, 0, AMC_LSIM_DATA_PRIVATE, NULL);
        run("reduce", "hierarchical", n, 24, 8, AMC_LSIM_DATA_PRIVATE, NULL);
        run("allreduce", "recursive_doubling", n, 8, 0, AMC_LSIM_DATA_PRIVATE, NULL);
        run("allreduce", "hierarchical", n, 8, 8, AMC_LSIM_DATA_PRIVATE, NULL);
        run("barrier", "multi_lane", n, 0, 8, AMC_LSIM_DATA_PRIVATE, NULL);
        run("allreduce", "multi_lane", n, 8, 8, AMC_LSIM_DATA_PRIVATE, NULL);
        run("allreduce", "multi_lane", n, 24, 3, AMC_LSIM_DATA_PRIVATE, NULL);
        run("scan", "auto", n, 16, 8, AMC_LSIM_DATA_PRIVATE, NULL);
        run("exscan", "auto", n, 16, 8, AMC_LSIM_DATA_PRIVATE, NULL);
        if (n <= 64) {
            run("bcast", "pipeline", n, 1 << 20, 8, AMC_LSIM_DATA_PRIVATE, NULL);
            run("allreduce", "ring", n, 1 << 16, 8, AMC_LSIM_DATA_PRIVATE, NULL);
            run("gather", "auto", n, 16, 8, AMC_LSIM_DATA_PRIVATE, NULL);
            run("scatter", "auto", n, 16, 8, AMC_LSIM_DATA_PRIVATE, NULL);
            run("allgather", "auto", n, 16, 8, AMC_LSIM_DATA_PRIVATE, NULL);
            run("alltoall", "auto", n, 16, 8, AMC_LSIM_DATA_PRIVATE, NULL);
            run("reduce_scatter_block", "auto", n, 16, 8, AMC_LSIM_DATA_PRIVATE, NULL);
        }
    }
}

/* 64 nodes of 32 ranks, with this machine's shared memory and with a
 * current node's (AMC_LSIM_INTRA_FAST): the multi-lane barrier and 8 B
 * allreduce are predicted faster than the flat ones and than the leaders'
 * two-level ones, and the automatic choice across nodes is multi-lane, the
 * same time to the picosecond (doc/design.md, "Node-aware collectives"). */
static void test_node_aware(void)
{
    static const amc_fake_loggp_t fast = AMC_LSIM_INTRA_FAST;
    static const char *const      colls[2] = { "barrier", "allreduce" };
    static const char *const      algs[2][4] = {
        { "dissemination", "hierarchical", "multi_lane", "auto" },
        { "recursive_doubling", "hierarchical", "multi_lane", "auto" }
    };
    amc_lsim_params_t             p;
    amc_lsim_result_t             r;
    uint64_t                      t[4];
    int                           c, i, f;

    for (f = 0; f < 2; f++) {
        for (c = 0; c < 2; c++) {
            memset(&p, 0, sizeof(p));
            p.coll      = colls[c];
            p.n         = 64 * 32;
            p.bytes     = c ? 8 : 0;
            p.node_size = 32;
            p.intra     = f ? fast : amc_t_intra;
            p.inter     = amc_t_inter;
            for (i = 0; i < 4; i++) {
                p.alg = algs[c][i];
                CHECK((amc_lsim_run(&p, &r) == AMC_SUCCESS) && r.correct, "64x32 %s %s",
                      colls[c], algs[c][i]);
                t[i] = r.time_ps;
            }
            CHECK((t[2] < t[0]) && (t[2] < t[1]), "64x32 %s, %s shared memory: multi-lane %llu "
                  "ps, flat %llu ps, leaders %llu ps", colls[c], f ? "fast" : "this machine's",
                  (unsigned long long)t[2], (unsigned long long)t[0], (unsigned long long)t[1]);
            CHECK(t[3] == t[2], "64x32 %s: auto %llu ps, multi-lane %llu ps", colls[c],
                  (unsigned long long)t[3], (unsigned long long)t[2]);
        }
    }
}

static void test_shared(void)
{
    uint64_t priv, shared;

    priv   = run("bcast", "pipeline", 256, 1 << 18, 16, AMC_LSIM_DATA_PRIVATE, NULL);
    shared = run("bcast", "pipeline", 256, 1 << 18, 16, AMC_LSIM_DATA_SHARED, NULL);
    CHECK(priv == shared, "bcast 256 KiB: private %llu ps, shared %llu ps",
          (unsigned long long)priv, (unsigned long long)shared);
}

/* The simulator reads AMC_* as the library does (amc_sim's users simulate
 * their settings with them); the predictions checked here are for the
 * defaults, which a setting in the environment (AMC_EAGER_TOKENS=1, say)
 * would change rather than test. */
extern char **environ;

static void clear_amc_settings(void)
{
    char name[128];
    int  found;

    do {
        char **env;

        found = 0;
        for (env = environ; (env != NULL) && (*env != NULL); env++) {
            const char *eq = strchr(*env, '=');

            if ((strncmp(*env, "AMC_", 4) == 0) && (eq != NULL) &&
                ((size_t)(eq - *env) < sizeof(name)) &&
                (strncmp(*env, "AMC_LOG_LEVEL=", 14) != 0)) {
                memcpy(name, *env, (size_t)(eq - *env));
                name[eq - *env] = '\0';
                unsetenv(name); /* environ changes: look again from the start */
                found = 1;
                break;
            }
        }
    } while (found);
}

int main(void)
{
    clear_amc_settings();
    test_closed_form();
    test_every_algorithm();
    test_results();
    test_node_aware();
    test_shared();
    return amc_test_summary("test_loggp_sim");
}
