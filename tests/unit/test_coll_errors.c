/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Ranks that disagree: different collectives, different roots, different
 * counts. Nothing may hang, nothing may be written past a buffer (guard
 * bytes), a rank that receives what it did not expect reports
 * AMC_ERR_PROTOCOL or AMC_ERR_TRUNCATE, and the communicator works again
 * afterwards. Also: bad arguments to the data collectives.
 */
#include "am_coll/api/config_read.h"
#include "tests/unit/harness.h"

#include <string.h>

#define N     5
#define MAX_N 8
#define GUARD 0x5a

/* Drives every rank's request to completion in a seeded random order. */
static void drive(amc_test_world_t *w, amc_request_t *reqs, int *status, uint64_t seed)
{
    amc_test_rng_t rng;
    int            rank, flag, left = w->n, idle = 0;
    size_t         count;

    amc_test_rng_seed(&rng, seed);
    for (rank = 0; rank < w->n; rank++) {
        status[rank] = -1;
    }
    while ((left > 0) && (idle < 1000)) {
        int activity = 0;

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
    CHECK(left == 0, "seed %llu: %d ranks never completed", (unsigned long long)seed, left);
}

/* An allreduce on every rank right after the failed call: it must succeed
 * on every rank at the first try, whatever of the failed call is still on
 * its way (an error of a mismatched call never lands on a later, correct
 * one). */
static void expect_recovery(amc_test_world_t *w, uint64_t seed, const char *what)
{
    amc_request_t reqs[MAX_N];
    int           status[MAX_N], in[MAX_N], out[MAX_N], rank, n = w->n;

    for (rank = 0; rank < n; rank++) {
        in[rank]  = rank + 1;
        out[rank] = -1;
        CHECK(amc_iallreduce(&in[rank], &out[rank], 1, AMC_INT, AMC_SUM,
                             amc_test_world_comm(w, rank), &reqs[rank]) == AMC_SUCCESS,
              "allreduce after %s", what);
    }
    drive(w, reqs, status, seed);
    for (rank = 0; rank < n; rank++) {
        CHECK((status[rank] == AMC_SUCCESS) && (out[rank] == n * (n + 1) / 2),
              "seed %llu: the allreduce after %s: rank %d got %s, value %d",
              (unsigned long long)seed, what, rank, amc_strerror(status[rank]), out[rank]);
    }
}

static void test_mismatch(uint64_t seed)
{
    amc_test_world_t w;
    amc_request_t    reqs[N];
    int              status[N], buf[N][4 + 4], rank, i;

    CHECK(amc_test_world_create(&w, N, AMC_FAKE_COMPLETE_ON_DELIVERY, NULL) == AMC_SUCCESS, "w");
    for (rank = 0; rank < N; rank++) {
        memset(buf[rank], GUARD, sizeof(buf[rank]));
        for (i = 0; i < 4; i++) {
            buf[rank][i] = rank * 10 + i;
        }
        /* rank 0 broadcasts, the others reduce to rank 0 */
        if (rank == 0) {
            CHECK(amc_ibcast(buf[rank], 4, AMC_INT, 0, amc_test_world_comm(&w, rank),
                             &reqs[rank]) == AMC_SUCCESS, "ibcast");
        } else {
            CHECK(amc_ireduce(buf[rank], NULL, 4, AMC_INT, AMC_SUM, 0,
                              amc_test_world_comm(&w, rank), &reqs[rank]) == AMC_SUCCESS,
                  "ireduce");
        }
    }
    drive(&w, reqs, status, seed);
    for (rank = 0; rank < N; rank++) {
        CHECK((status[rank] == AMC_SUCCESS) || (status[rank] == AMC_ERR_PROTOCOL),
              "mismatch: rank %d got %s", rank, amc_strerror(status[rank]));
        for (i = 4; i < 8; i++) {
            CHECK(((unsigned char *)&buf[rank][i])[0] == GUARD, "guard overwritten");
        }
    }
    /* the foreign messages still on their way arrive now: a rank whose part
     * was done when one came logs it, and its next call is not affected */
    while (amc_fake_deliverable(w.fabric) > 0) {
        amc_fake_deliver(w.fabric, 0);
    }
    expect_recovery(&w, seed, "a mismatch");
    CHECK(amc_fake_rndv_pending(w.fabric) == 0, "descriptors left unreleased");
    amc_test_world_destroy(&w);
}

static void test_root_disagreement(uint64_t seed)
{
    amc_test_world_t w;
    amc_request_t    reqs[N];
    int              status[N], buf[N][4], rank, errors = 0;

    CHECK(amc_test_world_create(&w, N, AMC_FAKE_COMPLETE_ON_DELIVERY, NULL) == AMC_SUCCESS, "w");
    for (rank = 0; rank < N; rank++) {
        memset(buf[rank], 0, sizeof(buf[rank]));
        CHECK(amc_ibcast(buf[rank], 4, AMC_INT, (rank == 3) ? 1 : 0,
                         amc_test_world_comm(&w, rank), &reqs[rank]) == AMC_SUCCESS, "ibcast");
    }
    drive(&w, reqs, status, seed);
    for (rank = 0; rank < N; rank++) {
        errors += (status[rank] == AMC_ERR_PROTOCOL);
    }
    CHECK(errors >= 1, "root disagreement went unnoticed");
    expect_recovery(&w, seed, "a root disagreement");
    amc_test_world_destroy(&w);
}

/* The root broadcasts 8 elements, the others expect 4. */
static void test_truncation(uint64_t seed, int rndv)
{
    amc_test_world_t w;
    amc_config_t     cfg;
    amc_request_t    reqs[N];
    int              status[N], buf[N][8 + 4], rank, truncated = 0, i;

    CHECK(amc_test_config_from_env(&cfg) == AMC_SUCCESS, "config");
    cfg.log_level   = -1;
    cfg.rndv_thresh = rndv ? 1 : 1u << 30;
    CHECK(amc_test_world_create(&w, N, AMC_FAKE_COMPLETE_ON_DELIVERY, &cfg) == AMC_SUCCESS, "w");
    for (rank = 0; rank < N; rank++) {
        memset(buf[rank], GUARD, sizeof(buf[rank]));
        for (i = 0; i < 8; i++) {
            buf[rank][i] = (rank == 0) ? 100 + i : -1;
        }
        CHECK(amc_ibcast(buf[rank], (rank == 0) ? 8 : 4, AMC_INT, 0,
                         amc_test_world_comm(&w, rank), &reqs[rank]) == AMC_SUCCESS, "ibcast");
    }
    drive(&w, reqs, status, seed);
    for (rank = 1; rank < N; rank++) {
        CHECK((status[rank] == AMC_SUCCESS) || (status[rank] == AMC_ERR_TRUNCATE),
              "truncation: rank %d got %s", rank, amc_strerror(status[rank]));
        truncated += (status[rank] == AMC_ERR_TRUNCATE);
        for (i = 4; i < 12; i++) {
            CHECK(((i < 8) ? buf[rank][i] == -1 : ((unsigned char *)&buf[rank][i])[0] == GUARD),
                  "rank %d: written past its 4 elements (index %d)", rank, i);
        }
    }
    CHECK(truncated >= 1, "nobody noticed more data than its buffer holds");
    expect_recovery(&w, seed, "a truncation");
    CHECK(amc_fake_rndv_pending(w.fabric) == 0, "descriptors left unreleased");
    amc_test_world_destroy(&w);
}

/* alltoallv bruck (blocks of up to 2 ints in its steps, larger ones
 * straight): rank 2 sends rank 0 a block of another size than rank 0
 * expects. Rank 0 is 3 ranks on from rank 2, so no step's message goes
 * from 2 to 0. kind 0: both sizes go in steps (the stamp differs); 1: rank
 * 2's goes straight, rank 0 looks for it in the steps; 2: rank 0 waits for
 * it straight, rank 2 sends it in the steps, and only the stamp can tell
 * rank 0 not to wait. Rank 0 must fail, nobody may hang or write outside
 * its blocks, and the communicator works afterwards. */
static void test_alltoallv_bruck_disagreement(uint64_t seed, int kind, int rndv)
{
    static const size_t sent[3] = { 1, 4, 1 }, expected[3] = { 2, 2, 4 };
    amc_test_world_t    w;
    amc_config_t        cfg;
    amc_request_t       reqs[N];
    size_t              sc[N][N], rc[N][N], displ[N];
    int                 status[N], sbuf[N][N * 8], rbuf[N][N * 8], rank, j, i;

    CHECK(amc_test_config_from_env(&cfg) == AMC_SUCCESS, "config");
    cfg.log_level             = -1;
    cfg.rndv_thresh           = rndv ? 1 : 1u << 30;
    cfg.alltoallv_bruck_block = 2 * sizeof(int);
    snprintf(cfg.alg[AMC_COLL_ALLTOALLV], sizeof(cfg.alg[0]), "bruck");
    CHECK(amc_test_world_create(&w, N, AMC_FAKE_COMPLETE_ON_DELIVERY, &cfg) == AMC_SUCCESS, "w");
    for (j = 0; j < N; j++) {
        displ[j] = (size_t)j * 8;
    }
    for (rank = 0; rank < N; rank++) {
        memset(rbuf[rank], GUARD, sizeof(rbuf[rank]));
        for (j = 0; j < N; j++) {
            /* blocks of 1..4 ints: both ways in every run */
            sc[rank][j] = 1 + (size_t)((rank + 2 * j) % 4);
            rc[j][rank] = sc[rank][j];
        }
        for (i = 0; i < N * 8; i++) {
            sbuf[rank][i] = rank * 1000 + i;
        }
    }
    sc[2][0] = sent[kind];
    rc[0][2] = expected[kind];
    for (rank = 0; rank < N; rank++) {
        CHECK(amc_ialltoallv(sbuf[rank], sc[rank], displ, rbuf[rank], rc[rank], displ, AMC_INT,
                             amc_test_world_comm(&w, rank), &reqs[rank]) == AMC_SUCCESS,
              "ialltoallv");
    }
    drive(&w, reqs, status, seed);
    for (rank = 0; rank < N; rank++) {
        CHECK((status[rank] == AMC_SUCCESS) || (status[rank] == AMC_ERR_TRUNCATE),
              "seed %llu kind %d: rank %d got %s", (unsigned long long)seed, kind, rank,
              amc_strerror(status[rank]));
        for (j = 0; j < N; j++) {
            for (i = (int)rc[rank][j]; i < 8; i++) {
                CHECK(((unsigned char *)&rbuf[rank][j * 8 + i])[0] == GUARD,
                      "seed %llu kind %d: rank %d written past its block from %d",
                      (unsigned long long)seed, kind, rank, j);
            }
        }
    }
    CHECK(status[0] == AMC_ERR_TRUNCATE, "seed %llu kind %d: rank 0 got %s, not a truncation",
          (unsigned long long)seed, kind, amc_strerror(status[0]));
    while (amc_fake_deliverable(w.fabric) > 0) {
        amc_fake_deliver(w.fabric, 0);
    }
    expect_recovery(&w, seed, "an alltoallv disagreement");
    CHECK(amc_fake_rndv_pending(w.fabric) == 0, "descriptors left unreleased");
    amc_test_world_destroy(&w);
}

/* The patent's third example: rank 4 is an inner node of the binomial tree
 * (children 5 and 6, grandchild 7) and calls bcast last. Its children must
 * finish without it: it forwards the data when it arrives. That needs the
 * data to come eagerly along the binomial tree, so protocol, layout and
 * algorithm are pinned here, whatever AMC_RNDV_THRESH, AMC_EAGER_TOKENS,
 * AMC_NODE_SIZE or AMC_BCAST_ALG say (by rendezvous the data waits at the
 * root for the late rank's call: test_reliability). */
static void test_bcast_stalled_inner_rank(uint64_t seed)
{
    amc_test_world_t w;
    amc_config_t     cfg, defaults;
    amc_test_rng_t   rng;
    amc_request_t    reqs[8];
    int              buf[8][6], rank, flag, i, late = 4, done[8] = { 0 }, guard;
    size_t           count;

    CHECK(amc_test_config_from_env(&cfg) == AMC_SUCCESS, "config");
    amc_config_defaults(&defaults);
    cfg.log_level    = -1;
    cfg.rndv_thresh  = defaults.rndv_thresh;
    cfg.eager_tokens = defaults.eager_tokens;
    cfg.node_size    = defaults.node_size; /* one node: the binomial tree */
    memcpy(cfg.alg[AMC_COLL_BCAST], defaults.alg[AMC_COLL_BCAST], sizeof(cfg.alg[0]));
    CHECK(amc_test_world_create(&w, 8, AMC_FAKE_COMPLETE_ON_DELIVERY, &cfg) == AMC_SUCCESS, "w");
    amc_test_rng_seed(&rng, seed);
    for (rank = 0; rank < 8; rank++) {
        for (i = 0; i < 6; i++) {
            buf[rank][i] = (rank == 0) ? 1000 + i : -1;
        }
        if (rank != late) {
            CHECK(amc_ibcast(buf[rank], 6, AMC_INT, 0, amc_test_world_comm(&w, rank),
                             &reqs[rank]) == AMC_SUCCESS, "ibcast");
        }
    }
    for (guard = 0; guard < 10000; guard++) {
        for (rank = 0; rank < 8; rank++) {
            if ((rank != late) && !done[rank]) {
                CHECK(amc_test(&reqs[rank], &flag) == AMC_SUCCESS, "test");
                done[rank] = flag;
            }
        }
        count = amc_fake_deliverable(w.fabric);
        if (count == 0) {
            break;
        }
        amc_fake_deliver(w.fabric, amc_test_rng_below(&rng, count));
    }
    for (rank = 0; rank < 8; rank++) {
        if (rank != late) {
            CHECK(amc_test(&reqs[rank], &flag) == AMC_SUCCESS, "test");
            CHECK(flag || done[rank], "seed %llu: rank %d waits for the late inner rank 4",
                  (unsigned long long)seed, rank);
            CHECK(memcmp(buf[rank], buf[0], sizeof(buf[0])) == 0, "rank %d data", rank);
        }
    }
    CHECK(buf[late][0] == -1, "the late rank's buffer is untouched before its call");

    /* the late rank's call finds the data already here */
    CHECK(amc_ibcast(buf[late], 6, AMC_INT, 0, amc_test_world_comm(&w, late), &reqs[late]) ==
          AMC_SUCCESS, "late ibcast");
    CHECK((amc_test(&reqs[late], &flag) == AMC_SUCCESS) && flag,
          "the late rank completes at once");
    CHECK(memcmp(buf[late], buf[0], sizeof(buf[0])) == 0, "late rank's data");
    expect_recovery(&w, seed, "forwarding");
    amc_test_world_destroy(&w);
}

/* The root's K ibcasts (reqs[0 .. K-1]) and the late rank's (reqs[K ..
 * 2K-1]), posted: tests them and delivers in random order until all are
 * done, then checks the late rank's data (buf1 against buf0), that no
 * descriptor is left, and that all T tokens came back (credit messages
 * still on their way arrive now). Destroys the world. */
static void late_bcasts_finish(amc_test_world_t *w, amc_test_rng_t *rng, uint64_t seed, int K,
                               amc_request_t *reqs, int *done, int left, const void *buf0,
                               const void *buf1, size_t bytes, unsigned T)
{
    int    guard, i, flag;
    size_t count;

    for (guard = 0; (left > 0) && (guard < 100000); guard++) {
        for (i = 0; i < 2 * K; i++) {
            if (!done[i]) {
                CHECK(amc_test(&reqs[i], &flag) == AMC_SUCCESS, "test");
                if (flag) {
                    done[i] = 1;
                    left--;
                }
            }
        }
        count = amc_fake_deliverable(w->fabric);
        if (count > 0) {
            amc_fake_deliver(w->fabric, amc_test_rng_below(rng, count));
        }
    }
    CHECK(left == 0, "seed %llu: %d bcasts never completed", (unsigned long long)seed, left);
    CHECK(memcmp(buf0, buf1, bytes) == 0, "late rank's data");
    CHECK(amc_fake_rndv_pending(w->fabric) == 0, "descriptors left unreleased");
    while (amc_fake_deliverable(w->fabric) > 0) {
        amc_fake_deliver(w->fabric, 0);
    }
    CHECK(amc_flow_tokens(&w->ctx[0]->flow, 1) + amc_flow_owed(&w->ctx[1]->flow, 0) == T,
          "tokens conserved: %u at the root + %u owed", amc_flow_tokens(&w->ctx[0]->flow, 1),
          amc_flow_owed(&w->ctx[1]->flow, 0));
    amc_test_world_destroy(w);
}

/* Tokens: a bcast root runs K calls ahead of a late rank. With T tokens the
 * late rank receives at most T eager messages before it calls (the memory it
 * must hold); the rest wait at the root, and everything completes once it
 * calls. E ints a call: 2 (8 bytes) runs on the control structure at N=2,
 * whose messages live in the receiver's slot, and there the bound is that
 * the root finishes at most T calls before the late rank's: the others
 * asked for an answer. 264 (1,056 bytes, past AMC_CTRL_PAY_MAX) runs on
 * the engine. */
static void test_tokens_bound_early_memory(uint64_t seed, int ctrl)
{
    enum { K = 20, T = 4, EMAX = 264 };
    amc_test_world_t w;
    amc_config_t     cfg, defaults;
    amc_test_rng_t   rng;
    amc_request_t    reqs[2][K];
    int              buf[2][K][EMAX], k, i, flag, left = 2 * K, done[2][K];
    int              e = ctrl ? 2 : EMAX, early_done = 0;
    size_t           count;

    CHECK(amc_test_config_from_env(&cfg) == AMC_SUCCESS, "config");
    amc_config_defaults(&defaults);
    cfg.log_level    = -1;
    cfg.eager_tokens = T;
    cfg.rndv_thresh  = defaults.rndv_thresh; /* small data eager while a token lasts */
    CHECK(amc_test_world_create(&w, 2, AMC_FAKE_COMPLETE_ON_DELIVERY, &cfg) == AMC_SUCCESS, "w");
    amc_test_rng_seed(&rng, seed);
    memset(done, 0, sizeof(done));
    memset(buf, 0, sizeof(buf));
    for (k = 0; k < K; k++) {
        for (i = 0; i < e; i++) {
            buf[0][k][i] = k * 100 - i;
            buf[1][k][i] = 7777;
        }
        CHECK(amc_ibcast(buf[0][k], (size_t)e, AMC_INT, 0, amc_test_world_comm(&w, 0),
                         &reqs[0][k]) == AMC_SUCCESS, "root ibcast %d", k);
    }
    while ((count = amc_fake_deliverable(w.fabric)) > 0) {
        amc_fake_deliver(w.fabric, amc_test_rng_below(&rng, count));
    }
    if (ctrl) {
        for (k = 0; k < K; k++) {
            CHECK(amc_test(&reqs[0][k], &flag) == AMC_SUCCESS, "test");
            done[0][k] = flag;
            early_done += flag;
            left -= flag;
        }
        CHECK((early_done <= T) && (early_done > 0),
              "the root finished %d calls before the late rank's with %d tokens", early_done, T);
    } else {
        CHECK(amc_fake_eager_data(w.fabric, 1) <= T,
              "the late rank received %lu eager messages with %d tokens",
              amc_fake_eager_data(w.fabric, 1), T);
        CHECK(amc_fake_eager_data(w.fabric, 1) > 0, "small data still goes eagerly first");
    }

    for (k = 0; k < K; k++) {
        CHECK(amc_ibcast(buf[1][k], (size_t)e, AMC_INT, 0, amc_test_world_comm(&w, 1),
                         &reqs[1][k]) == AMC_SUCCESS, "late ibcast %d", k);
    }
    late_bcasts_finish(&w, &rng, seed, K, &reqs[0][0], &done[0][0], left, buf[0], buf[1],
                       sizeof(buf[0]), T);
}

/* Tokens by bytes: an eager message takes one per AMC_RNDV_THRESH bytes
 * begun, so the late rank's early memory keeps its bound of T x
 * AMC_RNDV_THRESH bytes when messages past AMC_RNDV_THRESH (16 KiB) go
 * eagerly to a rank of the node (AMC_RNDV_THRESH_NODE 40 KiB). A bcast
 * root runs K calls of 36,000 bytes (3 tokens each) ahead of a late rank
 * with T = 8: two go eagerly, the rest wait at the root. The same on two
 * nodes (AMC_NODE_SIZE=1), or with AMC_RNDV_THRESH_NODE at its default:
 * every one by rendezvous. AMC_RNDV_THRESH 64 KiB with 16 KiB for the node:
 * none eagerly on one node, one a token (all K) on two. Either way all
 * complete, with the data, and every token comes back. */
static void test_tokens_by_bytes(uint64_t seed, unsigned thresh, unsigned node, int apart,
                                 unsigned long want)
{
    enum { K = 6, T = 8, E = 9000 };
    static int       buf[2][K][E];
    amc_test_world_t w;
    amc_config_t     cfg;
    amc_test_rng_t   rng;
    amc_request_t    reqs[2][K];
    int              k, i, left = 2 * K, done[2][K];
    unsigned long    eager;
    size_t           count;

    CHECK(amc_test_config_from_env(&cfg) == AMC_SUCCESS, "config");
    cfg.log_level        = -1;
    cfg.eager_tokens     = T;
    cfg.rndv_thresh      = thresh;
    cfg.rndv_thresh_node = node;
    cfg.node_size        = apart ? 1 : 0;
    CHECK(amc_test_world_create(&w, 2, AMC_FAKE_COMPLETE_ON_DELIVERY, &cfg) == AMC_SUCCESS, "w");
    amc_test_rng_seed(&rng, seed);
    memset(done, 0, sizeof(done));
    for (k = 0; k < K; k++) {
        for (i = 0; i < E; i++) {
            buf[0][k][i] = k * 100000 + i;
            buf[1][k][i] = -1;
        }
        CHECK(amc_ibcast(buf[0][k], E, AMC_INT, 0, amc_test_world_comm(&w, 0), &reqs[0][k]) ==
              AMC_SUCCESS, "root ibcast %d", k);
    }
    while ((count = amc_fake_deliverable(w.fabric)) > 0) {
        amc_fake_deliver(w.fabric, amc_test_rng_below(&rng, count));
    }
    eager = amc_fake_eager_data(w.fabric, 1);
    CHECK(eager == want,
          "seed %llu thresh %u node %u apart %d: the late rank received %lu eager messages of "
          "36 KB with %d tokens, not %lu", (unsigned long long)seed, thresh, node, apart, eager,
          T, want);
    for (k = 0; k < K; k++) {
        CHECK(amc_ibcast(buf[1][k], E, AMC_INT, 0, amc_test_world_comm(&w, 1), &reqs[1][k]) ==
              AMC_SUCCESS, "late ibcast %d", k);
    }
    late_bcasts_finish(&w, &rng, seed, K, &reqs[0][0], &done[0][0], left, buf[0], buf[1],
                       sizeof(buf[0]), T);
}

static void test_bad_arguments(void)
{
    amc_test_world_t w;
    amc_comm_t       c;
    amc_request_t    req = AMC_REQUEST_NULL;
    int              x[4] = { 0 }, y[4 * N];
    double           d = 0;

    CHECK(amc_test_world_create(&w, N, AMC_FAKE_COMPLETE_ON_DELIVERY, NULL) == AMC_SUCCESS, "w");
    c = amc_test_world_comm(&w, 1);
    /* what every rank's call carries alike: every rank finds it, and the
     * call leaves no trace */
    CHECK(amc_ibcast(x, 4, AMC_INT, N, c, &req) == AMC_ERR_ARG, "bcast root out of range");
    CHECK(amc_ibcast(x, 4, AMC_INT, -1, c, &req) == AMC_ERR_ARG, "bcast negative root");
    CHECK(amc_ibcast(x, 4, (amc_datatype_t)99, 0, c, &req) == AMC_ERR_ARG, "unknown datatype");
    CHECK(amc_iallreduce(x, y, 4, AMC_BYTE, AMC_SUM, c, &req) == AMC_ERR_ARG, "SUM on BYTE");
    CHECK(amc_iallreduce(&d, y, 1, AMC_DOUBLE, AMC_BAND, c, &req) == AMC_ERR_ARG, "BAND on DOUBLE");
    CHECK(amc_iallreduce(x, y, 4, AMC_INT, 12345, c, &req) == AMC_ERR_ARG, "unknown op");
    CHECK(amc_iallreduce(x, y, (size_t)-1 / 2, AMC_INT, AMC_SUM, c, &req) == AMC_ERR_ARG,
          "count overflow");
    CHECK(req == AMC_REQUEST_NULL, "no request was created");
    CHECK(amc_fake_deliverable(w.fabric) == 0, "rejected calls sent nothing");

    /* this rank's own arguments, which the others cannot check: refused,
     * and each call tells the other ranks (their matching calls would wait
     * for its part), so it takes its place in the communicator's order */
    CHECK(amc_ibcast(NULL, 4, AMC_INT, 0, c, &req) == AMC_ERR_ARG, "bcast NULL buffer");
    CHECK(amc_ibcast(x, 4, AMC_INT, 0, c, NULL) == AMC_ERR_ARG, "NULL request");
    CHECK(amc_iallreduce(x, AMC_IN_PLACE, 4, AMC_INT, AMC_SUM, c, &req) == AMC_ERR_ARG,
          "IN_PLACE as recvbuf of allreduce");
    CHECK(amc_ireduce(AMC_IN_PLACE, y, 4, AMC_INT, AMC_SUM, 0, c, &req) == AMC_ERR_ARG,
          "IN_PLACE at a non-root of reduce");
    CHECK(amc_igather(x, NULL, 4, AMC_INT, 1, c, &req) == AMC_ERR_ARG, "gather root without buffer");
    CHECK(amc_ialltoall(x, y, (size_t)-1 / 8, AMC_INT, c, &req) == AMC_ERR_ARG,
          "alltoall count overflow");
    CHECK(req == AMC_REQUEST_NULL, "no request was created");
    CHECK(amc_fake_deliverable(w.fabric) == 6 * (N - 1), "each bad call told the %d others: "
          "%zu messages", N - 1, amc_fake_deliverable(w.fabric));
    amc_test_world_destroy(&w);
}

int main(void)
{
    uint64_t seed;
    int      kind;

    for (seed = 1; seed <= 40; seed++) {
        test_mismatch(seed);
        test_root_disagreement(seed);
        test_truncation(seed, 0);
        test_truncation(seed, 1);
        for (kind = 0; kind < 3; kind++) {
            test_alltoallv_bruck_disagreement(seed, kind, 0);
            test_alltoallv_bruck_disagreement(seed, kind, 1);
        }
        test_bcast_stalled_inner_rank(seed);
        test_tokens_bound_early_memory(seed, 0);
        test_tokens_bound_early_memory(seed, 1);
        if (seed <= 10) {
            test_tokens_by_bytes(seed, 16384, 40960, 0, 2);
            test_tokens_by_bytes(seed, 16384, 40960, 1, 0);
            test_tokens_by_bytes(seed, 16384, 0, 0, 0);
            test_tokens_by_bytes(seed, 65536, 16384, 0, 0);
            test_tokens_by_bytes(seed, 65536, 16384, 1, 6);
        }
    }
    test_bad_arguments();
    return amc_test_summary("test_coll_errors");
}
