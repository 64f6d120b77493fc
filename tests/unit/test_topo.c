/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Which ranks share a node, and what the node-aware algorithms make of it:
 *  - the transport's node map (runs of ranks) answers every rank;
 *  - a topology numbers nodes in the order of their lowest member, whatever
 *    the node ids, so every member derives the same one;
 *  - a communicator's topology follows AMC_NODE_SIZE through its member
 *    order (world, and a split that reverses the ranks), and the selection
 *    picks the node-aware algorithms when it spans nodes, the flat ones
 *    otherwise, for order-sensitive ops, or when AMC_<COLL>_ALG says so;
 *  - the node-aware barrier on the fake fabric, for N up to 16 and nodes of
 *    2, 3 and 4: in random delivery orders with ranks entering late, no
 *    rank leaves before the last one entered, all leave, and the messages
 *    are those of the two-level algorithm (node fan-in and release, the
 *    leaders' dissemination), not the flat barrier's N x ceil(log2 N).
 * The data collectives' results against the flat ones: test_coll under
 * AMC_NODE_SIZE (run_coll_algs.sh); their schedules: test_sched_check.
 */
#include "am_coll/api/config_read.h"
#include "tests/unit/harness.h"
#include "am_coll/alg/alg.h"
#include "am_coll/context/comm.h"
#include "am_coll/context/topo.h"
#include "am_coll/context/progress.h"
#include "transport/node_map.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static void node_map_checks(void)
{
    amc_node_map_t map;
    static const int node_of[10] = { 5, 5, 5, 5, 2, 2, 2, 5, 9, 9 };
    int              r;

    memset(&map, 0, sizeof(map));
    for (r = 0; r < 10; r++) {
        CHECK(amc_node_map_node(&map, r) == 0, "an empty map is one node");
    }
    for (r = 0; r < 10; r++) {
        CHECK(amc_node_map_add(&map, r, node_of[r]) == AMC_SUCCESS, "add %d", r);
    }
    CHECK(map.nruns == 4, "runs of equal nodes kept as one: %d runs", map.nruns);
    for (r = 0; r < 10; r++) {
        CHECK(amc_node_map_node(&map, r) == node_of[r], "rank %d: node %d, expected %d", r,
              amc_node_map_node(&map, r), node_of[r]);
    }
    amc_node_map_free(&map);
    CHECK((map.nruns == 0) && (map.runs == NULL), "freed");
}

static int key_div(void *arg, int r)
{
    return r / *(int *)arg;
}

static int key_mod(void *arg, int r)
{
    return r % *(int *)arg;
}

static int key_desc(void *arg, int r)
{
    return 100 - r / *(int *)arg; /* node ids that fall as ranks rise */
}

/* The multi-lane radices and the barrier's cost estimate at the shapes of
 * the scale simulator (doc/design.md, "Node-aware collectives"). */
static void lanes_checks(void)
{
    amc_config_t cfg;
    amc_topo_t  *t;
    int          k[32];

    CHECK((amc_topo_radices(1024, 65, k, 32) == 2) && (k[0] == 32) && (k[1] == 32),
          "1024 nodes of 64: 32 x 32");
    CHECK((amc_topo_radices(512, 33, k, 32) == 2) && (k[0] == 32) && (k[1] == 16),
          "512 nodes of 32: 32 x 16");
    CHECK((amc_topo_radices(8, 2, k, 32) == 3) && (k[0] == 2), "8 nodes of 1: 2 x 2 x 2");
    CHECK(amc_topo_radices(22, 2, k, 32) == 0, "22 nodes of 1: none");
    CHECK(amc_topo_radices(61, 33, k, 32) == 0, "61 nodes of 32: none");
    amc_config_defaults(&cfg);
    CHECK(amc_topo_create_block(65536, 64, &t) == AMC_SUCCESS, "1024 x 64");
    CHECK((t->min_node == 64) && (t->lane_rounds == 2) && (t->lane_radix == 32) &&
          amc_alg_barrier_lanes_pay(&cfg, t), "1024 x 64: multi-lane barrier, radix 32");
    cfg.lanes_barrier = 0;
    CHECK(!amc_alg_barrier_lanes_pay(&cfg, t), "AMC_LANES_BARRIER=0");
    amc_topo_free(t);
    amc_config_defaults(&cfg);
    CHECK(amc_topo_create_block(2048, 32, &t) == AMC_SUCCESS, "64 x 32");
    CHECK(amc_alg_barrier_lanes_pay(&cfg, t), "64 x 32: multi-lane barrier");
    amc_topo_free(t);
    CHECK(amc_topo_create_block(64, 32, &t) == AMC_SUCCESS, "2 x 32");
    CHECK(!amc_alg_barrier_lanes_pay(&cfg, t), "2 x 32: flat barrier");
    amc_topo_free(t);
}

static void topo_checks(void)
{
    static const int32_t div3[8]  = { 0, 0, 0, 1, 1, 1, 2, 2 };
    static const int32_t mod3[7]  = { 0, 1, 2, 0, 1, 2, 0 };
    static const int32_t desc2[5] = { 0, 0, 1, 1, 2 };
    amc_topo_t          *t;
    int                  k, r;

    k = 3;
    CHECK(amc_topo_create(8, key_div, &k, &t) == AMC_SUCCESS, "create");
    CHECK((t->nnodes == 3) && amc_topo_spans(t), "nodes of 3 at N=8: %d nodes", t->nnodes);
    CHECK(t->min_node == 2, "nodes of 3 at N=8: smallest %d", t->min_node);
    for (r = 0; r < 8; r++) {
        CHECK(amc_topo_node(t, r) == div3[r], "r/3: rank %d on node %d", r, amc_topo_node(t, r));
    }
    amc_topo_free(t);
    CHECK(amc_topo_create(7, key_mod, &k, &t) == AMC_SUCCESS, "create");
    CHECK(t->min_node == 2, "r%%3 at N=7: smallest node %d", t->min_node);
    for (r = 0; r < 7; r++) {
        CHECK(amc_topo_node(t, r) == mod3[r], "r%%3: rank %d on node %d", r, amc_topo_node(t, r));
    }
    amc_topo_free(t);
    k = 2;
    CHECK(amc_topo_create(5, key_desc, &k, &t) == AMC_SUCCESS, "create");
    for (r = 0; r < 5; r++) {
        CHECK(amc_topo_node(t, r) == desc2[r], "nodes by leader, not by id: rank %d on %d", r,
              amc_topo_node(t, r));
    }
    amc_topo_free(t);
    k = 8;
    CHECK(amc_topo_create(8, key_div, &k, &t) == AMC_SUCCESS, "create");
    CHECK((t->nnodes == 1) && (t->node == NULL) && !amc_topo_spans(t), "one node");
    CHECK(t->min_node == 8, "one node: smallest %d", t->min_node);
    amc_topo_free(t);
    k = 1;
    CHECK(amc_topo_create(4, key_div, &k, &t) == AMC_SUCCESS, "create");
    CHECK((t->nnodes == 4) && !amc_topo_spans(t), "a node per rank: nothing to gain");
    amc_topo_free(t);
}


#define EXPECT_ALG(_comm, _coll, _count, _comm_op, _name) \
    do { \
        const char *got_ = amc_test_selected(_comm, _coll, _count, _comm_op); \
        CHECK(strcmp(got_, _name) == 0, "k=%u %s count %zu commutative %d: %s, expected %s", \
              cfg.node_size, amc_coll_name(_coll), (size_t)(_count), _comm_op, got_, _name); \
    } while (0)

static void comm_checks(void)
{
    amc_test_world_t w;
    amc_config_t     cfg;
    amc_comm_t       split[8];
    int              color[8], key[8], r, i, k;
    const amc_topo_t *t;

    for (k = 2; k <= 8; k++) {
        amc_config_defaults(&cfg);
        cfg.node_size = (unsigned)k;
        CHECK(amc_test_world_create(&w, 8, AMC_FAKE_COMPLETE_ON_SEND, &cfg) == AMC_SUCCESS,
              "world");
        for (r = 0; r < 8; r++) {
            t = amc_comm_topo(amc_test_world_comm(&w, r));
            CHECK((t != NULL) && (t->nnodes == (8 + k - 1) / k), "k=%d: %d nodes", k,
                  (t != NULL) ? t->nnodes : -1);
            for (i = 0; (t != NULL) && (i < 8); i++) {
                CHECK(amc_topo_node(t, i) == i / k, "k=%d rank %d: member %d on node %d", k, r,
                      i, amc_topo_node(t, i));
            }
            CHECK(t == amc_comm_topo(amc_test_world_comm(&w, r)), "made once");
        }
        if (k < 8) {
            /* multi-lane where the cost estimate of alg_select.c says so:
             * at N = 8 the barrier with nodes of 2 only (else the flat fast
             * path, which selection reports as dissemination), the
             * allreduce with nodes of 2 and 3 (a member's share of the
             * other nodes at least 2) */
            int lanes = (8 % k) ? 8 % k : k;

            CHECK(t->min_node == lanes, "k=%d: smallest node %d", k, t->min_node);
            EXPECT_ALG(amc_test_world_comm(&w, 0), AMC_COLL_BARRIER, 0, 0,
                       (k == 2) ? "multi_lane" : "dissemination");
            EXPECT_ALG(amc_test_world_comm(&w, 0), AMC_COLL_BCAST, 4, 0, "hierarchical");
            EXPECT_ALG(amc_test_world_comm(&w, 0), AMC_COLL_BCAST, 1 << 20, 0, "pipeline");
            EXPECT_ALG(amc_test_world_comm(&w, 0), AMC_COLL_REDUCE, 4, 1, "hierarchical");
            EXPECT_ALG(amc_test_world_comm(&w, 0), AMC_COLL_ALLREDUCE, 2, 1,
                       (k <= 3) ? "multi_lane" : "recursive_doubling");
            EXPECT_ALG(amc_test_world_comm(&w, 0), AMC_COLL_ALLREDUCE, 1 << 16, 1, "ring");
        } else {
            EXPECT_ALG(amc_test_world_comm(&w, 0), AMC_COLL_BCAST, 4, 0, "binomial");
            EXPECT_ALG(amc_test_world_comm(&w, 0), AMC_COLL_REDUCE, 4, 1, "binomial");
            EXPECT_ALG(amc_test_world_comm(&w, 0), AMC_COLL_ALLREDUCE, 2, 1,
                       "recursive_doubling");
        }
        /* order-sensitive ops stay flat */
        EXPECT_ALG(amc_test_world_comm(&w, 0), AMC_COLL_REDUCE, 4, 0, "binomial");
        EXPECT_ALG(amc_test_world_comm(&w, 0), AMC_COLL_ALLREDUCE, 2, 0, "recursive_doubling");

        /* one communicator of all ranks in reverse order: member i is world
         * rank 7 - i, its nodes numbered by their lowest member here */
        for (r = 0; r < 8; r++) {
            color[r] = 0;
            key[r]   = 8 - r;
        }
        CHECK(amc_test_world_create_comms(&w, NULL, 1, color, key, split) == AMC_SUCCESS,
              "split");
        for (r = 0; r < 8; r++) {
            t = amc_comm_topo(split[r]);
            for (i = 0; (t != NULL) && (i < 8); i++) {
                int first = (7 / k) - (7 - i) / k; /* node of world rank 7 - i, renumbered */

                CHECK(amc_topo_node(t, i) == first, "k=%d reversed, rank %d: member %d on node "
                      "%d, expected %d", k, r, i, amc_topo_node(t, i), first);
            }
            CHECK(amc_comm_free(&split[r]) == AMC_SUCCESS, "free");
        }
        amc_test_world_destroy(&w);
    }

    /* AMC_<COLL>_ALG forces the flat algorithms across nodes */
    amc_config_defaults(&cfg);
    cfg.node_size = 2;
    snprintf(cfg.alg[AMC_COLL_BCAST], sizeof(cfg.alg[0]), "binomial");
    snprintf(cfg.alg[AMC_COLL_ALLREDUCE], sizeof(cfg.alg[0]), "recursive_doubling");
    CHECK(amc_test_world_create(&w, 8, AMC_FAKE_COMPLETE_ON_SEND, &cfg) == AMC_SUCCESS, "world");
    EXPECT_ALG(amc_test_world_comm(&w, 3), AMC_COLL_BCAST, 4, 0, "binomial");
    EXPECT_ALG(amc_test_world_comm(&w, 3), AMC_COLL_ALLREDUCE, 2, 1, "recursive_doubling");
    EXPECT_ALG(amc_test_world_comm(&w, 3), AMC_COLL_REDUCE, 4, 1, "hierarchical");
    amc_test_world_destroy(&w);

    /* AMC_LINEAR_MAX_RANKS: linear up to AMC_LINEAR_MAX_BYTES per rank; the
     * allgather only up to 8 ranks or beyond Bruck's range */
    for (k = 8; k <= 9; k++) {
        amc_config_defaults(&cfg);
        cfg.linear_max_ranks = 9;
        CHECK(amc_test_world_create(&w, k, AMC_FAKE_COMPLETE_ON_SEND, &cfg) == AMC_SUCCESS,
              "world");
        EXPECT_ALG(amc_test_world_comm(&w, 1), AMC_COLL_BCAST, 4, 0, "linear");
        EXPECT_ALG(amc_test_world_comm(&w, 1), AMC_COLL_REDUCE, 4, 0, "linear");
        EXPECT_ALG(amc_test_world_comm(&w, 1), AMC_COLL_ALLREDUCE, 4, 0, "linear");
        EXPECT_ALG(amc_test_world_comm(&w, 1), AMC_COLL_ALLGATHER, 4, 0,
                   (k <= 8) ? "linear" : "bruck");
        EXPECT_ALG(amc_test_world_comm(&w, 1), AMC_COLL_ALLGATHER, 1 << 13, 0, "linear");
        EXPECT_ALG(amc_test_world_comm(&w, 1), AMC_COLL_ALLGATHER, 256, 0,
                   (k <= 8) ? "recursive_doubling" : "bruck");
        EXPECT_ALG(amc_test_world_comm(&w, 1), AMC_COLL_BCAST, 1 << 20, 0,
                   (k <= 8) ? "linear" : "pipeline");
        EXPECT_ALG(amc_test_world_comm(&w, 1), AMC_COLL_ALLGATHER, 1 << 18, 0,
                   (k <= 8) ? "linear" : "ring");
        EXPECT_ALG(amc_test_world_comm(&w, 1), AMC_COLL_REDUCE, 1 << 20, 1, "binomial");
        /* scan and exscan: a chain for large vectors up to 8 ranks */
        EXPECT_ALG(amc_test_world_comm(&w, 1), AMC_COLL_SCAN, 1 << 14, 0,
                   (k <= 8) ? "linear" : "hillis_steele");
        EXPECT_ALG(amc_test_world_comm(&w, 1), AMC_COLL_EXSCAN, 1 << 18, 0,
                   (k <= 8) ? "linear" : "hillis_steele");
        EXPECT_ALG(amc_test_world_comm(&w, 1), AMC_COLL_SCAN, (1 << 14) - 1, 0, "hillis_steele");
        /* the barrier: linear on the engine */
        CHECK(amc_alg_barrier_linear_pays(&cfg, k, amc_comm_topo(amc_test_world_comm(&w, 1))),
              "k=%d: the linear barrier", k);
        EXPECT_ALG(amc_test_world_comm(&w, 1), AMC_COLL_BARRIER, 0, 0, "linear");
        /* allreduce past the linear bound: k-nomial to 256 KiB, then
         * Rabenseifner (commutative), up to 8 ranks */
        EXPECT_ALG(amc_test_world_comm(&w, 1), AMC_COLL_ALLREDUCE, 1 << 16, 1,
                   (k <= 8) ? "knomial" : "ring");
        EXPECT_ALG(amc_test_world_comm(&w, 1), AMC_COLL_ALLREDUCE, 1 << 18, 1,
                   (k <= 8) ? "rabenseifner" : "ring");
        EXPECT_ALG(amc_test_world_comm(&w, 1), AMC_COLL_ALLREDUCE, 1 << 18, 0,
                   "recursive_doubling");
        amc_test_world_destroy(&w);
    }
    /* the node's own rule: the fake transport runs one rank per node, so
     * the oversubscribed default never applies here */
    CHECK(!amc_node_oversubscribed(1) && amc_node_oversubscribed(1 << 20), "oversubscribed");
    amc_config_defaults(&cfg);
    CHECK(cfg.oversub_linear_max_ranks > 0, "on by default");
    CHECK(amc_test_world_create(&w, 4, AMC_FAKE_COMPLETE_ON_SEND, &cfg) == AMC_SUCCESS, "world");
    EXPECT_ALG(amc_test_world_comm(&w, 1), AMC_COLL_BCAST, 4, 0, "binomial");
    EXPECT_ALG(amc_test_world_comm(&w, 1), AMC_COLL_SCAN, 1 << 20, 0, "hillis_steele");
    CHECK(!amc_alg_barrier_linear_pays(&w.ctx[1]->cfg, 4, amc_comm_topo(amc_test_world_comm(&w, 1))),
          "the fast path barrier where ranks have cores");
    amc_test_world_destroy(&w);
}

static int ceil_log2(int n)
{
    int l = 0;

    while ((1 << l) < n) {
        l++;
    }
    return l;
}

static void barrier_run(int n, int k, uint64_t seed)
{
    amc_test_world_t w;
    amc_config_t     cfg;
    amc_test_rng_t   rng;
    amc_request_t    req[16];
    int              posted[16] = { 0 }, done[16] = { 0 }, nposted = 0, ndone = 0;
    int              r, flag, nn = (n + k - 1) / k, idle = 0;
    unsigned long    expected;
    size_t           cnt;

    amc_config_defaults(&cfg);
    cfg.node_size = (unsigned)k;
    /* the multi-lane barrier (the cost estimate picks it only for some of
     * these layouts; the flat fast path has its own order tests) */
    snprintf(cfg.alg[AMC_COLL_BARRIER], sizeof(cfg.alg[0]), "multi_lane");
    amc_test_rng_seed(&rng, seed);
    CHECK(amc_test_world_create(&w, n, (seed & 1) ? AMC_FAKE_COMPLETE_ON_DELIVERY
                                                  : AMC_FAKE_COMPLETE_ON_SEND, &cfg) ==
          AMC_SUCCESS, "world");
    while ((ndone < n) && (idle < 1000)) {
        int activity = 0;

        r = (int)amc_test_rng_below(&rng, (size_t)n);
        if (!posted[r] && (amc_test_rng_below(&rng, 4) == 0)) {
            CHECK(amc_ibarrier(amc_test_world_comm(&w, r), &req[r]) == AMC_SUCCESS, "post");
            posted[r] = 1;
            nposted++;
            activity++;
        }
        for (r = 0; r < n; r++) {
            if (posted[r] && !done[r]) {
                CHECK(amc_test(&req[r], &flag) == AMC_SUCCESS, "test");
                if (flag) {
                    CHECK(nposted == n, "n=%d k=%d seed=%llu: rank %d left the barrier with "
                          "%d of %d ranks in", n, k, (unsigned long long)seed, r, nposted, n);
                    done[r] = 1;
                    ndone++;
                    activity++;
                }
            }
        }
        cnt = amc_fake_deliverable(w.fabric);
        if (cnt > 0) {
            activity += amc_fake_deliver(w.fabric, amc_test_rng_below(&rng, cnt));
        }
        idle = activity ? 0 : idle + 1;
    }
    CHECK(ndone == n, "n=%d k=%d seed=%llu: %d of %d ranks left the barrier", n, k,
          (unsigned long long)seed, ndone, n);
    /* the multi-lane barrier: a dissemination barrier inside each node
     * twice, and a message from every node to every other (in one step while
     * a member of the smallest node serves at most AMC_LANES_ONE_STEP_MAX
     * nodes, always so here) */
    if ((nn > 1) && (nn < n)) {
        int last = n - (nn - 1) * k, lanes = (last < k) ? last : k;

        CHECK((nn + lanes - 1) / lanes <= AMC_LANES_ONE_STEP_MAX, "n=%d k=%d: one step", n, k);
        expected = 2ul * (unsigned long)(nn - 1) * (unsigned long)k *
                       (unsigned long)ceil_log2(k) +
                   2ul * (unsigned long)last * (unsigned long)ceil_log2(last) +
                   (unsigned long)nn * (unsigned long)(nn - 1);
        CHECK(amc_fake_delivered(w.fabric) == expected, "n=%d k=%d: %lu messages, the "
              "node-aware barrier sends %lu", n, k, amc_fake_delivered(w.fabric), expected);
    }
    amc_test_world_destroy(&w);
}

int main(void)
{
    int      n, k;
    uint64_t seed;

    node_map_checks();
    lanes_checks();
    topo_checks();
    comm_checks();
    for (n = 2; n <= 16; n++) {
        for (k = 2; k <= 4; k++) {
            for (seed = 1; seed <= 20; seed++) {
                barrier_run(n, k, seed * 1009 + (uint64_t)(n * 10 + k));
            }
        }
    }
    return amc_test_summary("test_topo");
}
